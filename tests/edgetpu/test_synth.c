/* The synthetic Dense model read by an independent reader: Python's
 * flatbuffers Table API and flexbuffers module (python3-flatbuffers), with
 * the slot numbers of the TFLite and DarwiNN schemas written out again and
 * the blob layout decoded with NumPy. */
#include "../flatbuf/fb_tools.h"
#include "etpu_test.h"

static const char CHECK[] =
    "import sys\n"
    "import numpy as np\n"
    "from flatbuffers.table import Table\n"
    "from flatbuffers import encode, number_types as N\n"
    "from flatbuffers import flexbuffers as fx\n"
    "buf = bytearray(open(sys.argv[1], 'rb').read())\n"
    "n = int(sys.argv[2])\n"
    "def root(b, off=0):\n"
    "    return Table(b, off + encode.Get(N.UOffsetTFlags.packer_type, b, off))\n"
    "def scal(t, s, fl, d=0):\n"
    "    o = t.Offset(4 + 2 * s)\n"
    "    return t.Get(fl, t.Pos + o) if o else d\n"
    "def vec(t, s):\n"
    "    o = t.Offset(4 + 2 * s)\n"
    "    return (t.Vector(o), t.VectorLen(o)) if o else (0, 0)\n"
    "def elem(t, s, i):\n"
    "    v, _ = vec(t, s)\n"
    "    return Table(t.Bytes, t.Indirect(v + 4 * i))\n"
    "def sub(t, s):\n"
    "    return Table(t.Bytes, t.Indirect(t.Pos + t.Offset(4 + 2 * s)))\n"
    "def string(t, s):\n"
    "    return t.String(t.Pos + t.Offset(4 + 2 * s)).decode()\n"
    "def raw(t, s):\n"
    "    v, l = vec(t, s)\n"
    "    return bytes(t.Bytes[v:v + l])\n"
    "assert buf[4:8] == b'TFL3'\n"
    "m = root(buf)\n"
    "assert scal(m, 0, N.Uint32Flags) == 3\n"
    "oc = elem(m, 1, 0)\n"
    "assert string(oc, 1) == 'edgetpu-custom-op'\n"
    "assert scal(oc, 0, N.Int8Flags) == 32 and scal(oc, 3, N.Int32Flags) == 32\n"
    "sg = elem(m, 2, 0)\n"
    "assert vec(sg, 0)[1] == 2 and vec(sg, 3)[1] == 1\n"
    "t0 = elem(sg, 0, 0)\n"
    "assert scal(t0, 1, N.Int8Flags) == 3\n"
    "q = sub(t0, 4)\n"
    "v, l = vec(q, 3)\n"
    "assert l == 1 and encode.Get(N.Int64Flags.packer_type, buf, v) == 127\n"
    "op = elem(sg, 3, 0)\n"
    "assert op.Offset(4) == 0  # opcode_index left to its default\n"
    "opts = fx.GetRoot(raw(op, 5)).AsMap\n"
    "assert opts['1'].AsInt == 0 and opts['5'].AsInt == -1\n"
    "s = opts['4']\n"
    "pkg = bytearray(fx.String(s._Indirect(), s._byte_width).Bytes)\n"
    "assert pkg[4:8] == b'DWN1'\n"
    "p = root(pkg)\n"
    "assert scal(p, 0, N.Int32Flags) == 14\n"
    "me = root(bytearray(raw(p, 1)))\n"
    "assert vec(me, 0)[1] == 2\n"
    "exes = []\n"
    "for i in range(2):\n"
    "    v, _ = vec(me, 0)\n"
    "    sbytes = bytearray(me.String(v + 4 * i))\n"
    "    exes.append(root(sbytes))\n"
    "eo, pc = exes\n"
    "assert scal(eo, 13, N.Int16Flags) == 2 and scal(pc, 13, N.Int16Flags) == 1\n"
    "assert scal(eo, 14, N.Uint64Flags) == scal(pc, 14, N.Uint64Flags) != 0\n"
    "bs = elem(eo, 5, 0)\n"
    "assert vec(bs, 0)[1] == 4224\n"
    "bits = [scal(elem(bs, 1, i), 1, N.Int32Flags) for i in range(vec(bs, 1)[1])]\n"
    "assert bits == [582, 710, 838, 966, 1862, 1990, 25414, 25542], bits\n"
    "hints = sub(eo, 7)\n"
    "kinds = [scal(elem(hints, 0, i), 0, N.Uint8Flags) for i in range(vec(hints, 0)[1])]\n"
    "assert kinds == [2, 1, 1, 3], kinds\n"
    "blob = np.frombuffer(raw(pc, 6), dtype=np.uint8)\n"
    "assert blob.size == (n // 64) * (512 + 64 * n)\n"
    "r = np.arange(n)[:, None]; c = np.arange(n)[None, :]\n"
    "off = (r // 64) * (512 + 64 * n) + 512 + (c // 4) * 256 + (r % 64) * 4 + (c % 4)\n"
    "w = (blob[off] ^ 0x80).astype(np.uint8).view(np.int8)\n"
    "want = (((7 * r + 13 * c) % 256) - 128).astype(np.int8)\n"
    "assert (w == want).all()\n"
    "ov = blob.reshape(n // 64, -1)[:, :512]\n"
    "mult = ov[:, :256].copy().view('<f4').reshape(-1)\n"
    "assert ((mult > 0.0003) & (mult < 0.0004)).all(), mult[:4]\n"
    "assert (ov[:, 256:].copy().view('<i4') == 128).all()\n"
    "print('ok')\n";

static void test_synthetic_by_python(void **state)
{
    (void)state;
    const char *py = fbt_python();
    char script[1024];
    snprintf(script, sizeof script, "%s", npk_tmp("check_synth.py"));
    fbt_write(script, CHECK);
    for (size_t n = 64; n <= 1024; n *= 4) {
        for (int w = 0; w <= 8; w += 4) {
            npk_etpu_synth_opts o = {.n = n, .flex_width = w == 0 ? 0 : w, .chip_keys = true};
            uint8_t *buf;
            size_t len;
            npk_error err = {0};
            if (npk_etpu_synth_dense(&o, &buf, &len, &err)) fail_msg("%s", err.msg);
            char path[1024], narg[16];
            snprintf(path, sizeof path, "%s", npk_tmp("synth.tflite"));
            assert_int_equal(npk_write_file(path, buf, len, &err), NPK_OK);
            snprintf(narg, sizeof narg, "%zu", n);
            char *argv[] = {(char *)py, script, path, narg, NULL};
            fbt_run(argv);
            free(buf);
        }
    }
}

static void test_bad_sizes(void **state)
{
    (void)state;
    static const size_t bad[] = {0, 32, 100, 8192};
    for (size_t i = 0; i < 4; i++) {
        npk_etpu_synth_opts o = {.n = bad[i]};
        uint8_t *buf = (uint8_t *)1;
        size_t len;
        npk_error err = {0};
        assert_int_equal(npk_etpu_synth_dense(&o, &buf, &len, &err), NPK_E_ARG);
        assert_null(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_by_python),
        cmocka_unit_test(test_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
