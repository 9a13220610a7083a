/* The FlexBuffers reader against buffers made by the reference Python
 * implementation (python3-flatbuffers) at every element width, the map
 * writer against that implementation's reader, and hostile buffers. */
#include <math.h>

#include "fb_tools.h"
#include "npukit/flatbuf.h"

static const char GEN[] =
    "import sys\n"
    "from flatbuffers import flexbuffers as fx\n"
    "out = sys.argv[1]\n"
    "def narrow(b):\n"
    "    with b.Map():\n"
    "        b.Int('neg', -5)\n"
    "        b.UInt('u', 200)\n"
    "        b.Bool('t', True)\n"
    "        b.Null('n')\n"
    "        b.String('s', 'hello')\n"
    "        b.Blob('blob', bytes(range(10)))\n"
    "        b.IndirectInt('ii', -7)\n"
    "        b.IndirectUInt('iu', 9)\n"
    "        b.Key('tv'); b.TypedVectorFromElements([1, -2, 100])\n"
    "        b.Key('fx'); b.FixedTypedVectorFromElements([1, 2, 3], fx.Type.INT)\n"
    "        b.Key('vb'); b.TypedVectorFromElements([True, False, True])\n"
    "        with b.Vector('v'):\n"
    "            b.Int(1); b.String('x'); b.Bool(False); b.Null()\n"
    "        with b.Map('m'):\n"
    "            b.Int('a', 1); b.String('b', 'two')\n"
    "def wide(b):\n"
    "    with b.Map():\n"
    "        b.Int('big', -(2**40))\n"
    "        b.UInt('u', 4000000000)\n"
    "        b.Float('f', 0.5)\n"
    "        b.Float('d', 1e300)\n"
    "        b.IndirectFloat('if', 2.5)\n"
    "        b.String('long', 'x' * 300)\n"
    "        b.Key('tf'); b.TypedVectorFromElements([1.5, -2.5], fx.Type.FLOAT)\n"
    "        b.Key('fx'); b.FixedTypedVectorFromElements([1.0, 2.0, 3.0], fx.Type.FLOAT)\n"
    "for w, bw in ((1, fx.BitWidth.W8), (2, fx.BitWidth.W16), (4, fx.BitWidth.W32),\n"
    "              (8, fx.BitWidth.W64)):\n"
    "    b = fx.Builder(force_min_bit_width=bw); narrow(b)\n"
    "    open(f'{out}/flex_narrow{w}.bin', 'wb').write(b.Finish())\n"
    "    b = fx.Builder(force_min_bit_width=bw); wide(b)\n"
    "    open(f'{out}/flex_wide{w}.bin', 'wb').write(b.Finish())\n";

static void generate(void)
{
    static int done;
    if (done) return;
    const char *py = fbt_python();
    char script[1024];
    snprintf(script, sizeof script, "%s", npk_tmp("gen_flex.py"));
    fbt_write(script, GEN);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", npk_tmpdir());
    char *argv[] = {(char *)py, script, dir, NULL};
    fbt_run(argv);
    done = 1;
}

static uint8_t *load(const char *kind, int w, size_t *len)
{
    char name[64];
    snprintf(name, sizeof name, "flex_%s%d.bin", kind, w);
    uint8_t *b = npk_slurp(npk_tmp(name), len);
    assert_non_null(b);
    return b;
}

static npk_flex_ref get(const npk_flex_vec *m, const char *key)
{
    npk_flex_ref r;
    bool found = false;
    npk_error err = {0};
    assert_int_equal(npk_flex_map_find(m, key, &r, &found, &err), NPK_OK);
    if (!found) fail_msg("key %s not found", key);
    return r;
}

static int64_t as_int(const npk_flex_ref *r)
{
    int64_t v;
    npk_error err = {0};
    if (npk_flex_int(r, &v, &err)) fail_msg("%s", err.msg);
    return v;
}

static void str_is(const npk_flex_ref *r, const char *want)
{
    const char *s;
    size_t n;
    npk_error err = {0};
    if (npk_flex_string(r, &s, &n, NULL, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(s, want, n + 1);
}

static int64_t key_int(const npk_flex_vec *m, const char *key)
{
    npk_flex_ref r = get(m, key);
    return as_int(&r);
}

static void key_str(const npk_flex_vec *m, const char *key, const char *want)
{
    npk_flex_ref r = get(m, key);
    str_is(&r, want);
}

static void test_narrow_all_widths(void **state)
{
    (void)state;
    generate();
    for (int w = 1; w <= 8; w *= 2) {
        size_t len;
        uint8_t *buf = load("narrow", w, &len);
        npk_flex_ref root, r, e;
        npk_flex_vec m, v;
        npk_error err = {0};
        assert_int_equal(npk_flex_root(buf, len, 0, &root, &err), NPK_OK);
        assert_int_equal(root.type, NPK_FLEX_MAP);
        assert_int_equal(root.byte_width, w); /* the forced width reached the map */
        assert_int_equal(npk_flex_map(&root, &m, &err), NPK_OK);
        assert_int_equal(m.count, 13);
        assert_int_equal(m.width, w);
        /* keys come sorted */
        const char *k0, *k1;
        npk_flex_map_key(&m, 0, &k0, NULL, &err);
        npk_flex_map_key(&m, 12, &k1, NULL, &err);
        assert_string_equal(k0, "blob");
        assert_string_equal(k1, "vb");

        r = get(&m, "neg");
        assert_int_equal(r.type, NPK_FLEX_INT);
        assert_int_equal(as_int(&r), -5);
        r = get(&m, "u");
        uint64_t u;
        assert_int_equal(r.type, NPK_FLEX_UINT);
        assert_int_equal(npk_flex_uint(&r, &u, &err), NPK_OK);
        assert_int_equal(u, 200);
        bool b;
        r = get(&m, "t");
        assert_int_equal(npk_flex_bool(&r, &b, &err), NPK_OK);
        assert_true(b);
        r = get(&m, "n");
        assert_int_equal(r.type, NPK_FLEX_NULL);
        assert_int_equal(npk_flex_int(&r, &(int64_t){0}, &err), NPK_E_FORMAT);
        npk_error_clear(&err);
        key_str(&m, "s", "hello");
        const uint8_t *p;
        size_t n;
        r = get(&m, "blob");
        assert_int_equal(npk_flex_blob(&r, &p, &n, NULL, &err), NPK_OK);
        assert_int_equal(n, 10);
        for (int i = 0; i < 10; i++) assert_int_equal(p[i], i);
        r = get(&m, "ii");
        assert_int_equal(r.type, NPK_FLEX_INDIRECT_INT);
        assert_int_equal(as_int(&r), -7);
        r = get(&m, "iu");
        assert_int_equal(npk_flex_uint(&r, &u, &err), NPK_OK);
        assert_int_equal(u, 9);

        r = get(&m, "tv");
        assert_int_equal(r.type, NPK_FLEX_VECTOR_INT);
        assert_int_equal(npk_flex_vector(&r, &v, &err), NPK_OK);
        assert_int_equal(v.count, 3);
        static const int64_t tv[] = {1, -2, 100};
        for (size_t i = 0; i < 3; i++) {
            assert_int_equal(npk_flex_at(&v, i, &e, &err), NPK_OK);
            assert_int_equal(as_int(&e), tv[i]);
        }
        r = get(&m, "fx");
        assert_int_equal(r.type, NPK_FLEX_VECTOR_INT3);
        assert_int_equal(npk_flex_vector(&r, &v, &err), NPK_OK);
        assert_int_equal(v.count, 3);
        npk_flex_at(&v, 2, &e, &err);
        assert_int_equal(as_int(&e), 3);
        assert_int_equal(npk_flex_at(&v, 3, &e, &err), NPK_E_ARG); /* index checked */
        npk_error_clear(&err);
        r = get(&m, "vb");
        assert_int_equal(r.type, NPK_FLEX_VECTOR_BOOL);
        assert_int_equal(npk_flex_vector(&r, &v, &err), NPK_OK);
        for (size_t i = 0; i < 3; i++) {
            npk_flex_at(&v, i, &e, &err);
            assert_int_equal(npk_flex_bool(&e, &b, &err), NPK_OK);
            assert_int_equal(b, i != 1);
        }
        r = get(&m, "v");
        assert_int_equal(r.type, NPK_FLEX_VECTOR);
        assert_int_equal(npk_flex_vector(&r, &v, &err), NPK_OK);
        assert_int_equal(v.count, 4);
        npk_flex_at(&v, 0, &e, &err);
        assert_int_equal(as_int(&e), 1);
        npk_flex_at(&v, 1, &e, &err);
        str_is(&e, "x");
        npk_flex_at(&v, 2, &e, &err);
        assert_int_equal(e.type, NPK_FLEX_BOOL);
        npk_flex_at(&v, 3, &e, &err);
        assert_int_equal(e.type, NPK_FLEX_NULL);
        npk_flex_vec sub;
        r = get(&m, "m");
        assert_int_equal(npk_flex_map(&r, &sub, &err), NPK_OK);
        assert_int_equal(key_int(&sub, "a"), 1);
        key_str(&sub, "b", "two");
        bool found = true;
        assert_int_equal(npk_flex_map_find(&sub, "c", &e, &found, &err), NPK_OK);
        assert_false(found);
        /* Type errors are errors, not conversions. */
        assert_int_equal(npk_flex_map(&e, &sub, &err), NPK_E_FORMAT);
        npk_error_clear(&err);
        assert_int_equal(npk_flex_walk(&root, NULL, NULL, &err), NPK_OK);
        assert_int_equal(err.status, NPK_OK);
        free(buf);
    }
}

static void test_wide_all_widths(void **state)
{
    (void)state;
    generate();
    for (int w = 1; w <= 8; w *= 2) {
        size_t len;
        uint8_t *buf = load("wide", w, &len);
        npk_flex_ref root, r, e;
        npk_flex_vec m, v;
        npk_error err = {0};
        double d;
        uint64_t u;
        assert_int_equal(npk_flex_root(buf, len, 0, &root, &err), NPK_OK);
        assert_int_equal(npk_flex_map(&root, &m, &err), NPK_OK);
        assert_int_equal(key_int(&m, "big"), -(INT64_C(1) << 40));
        r = get(&m, "u");
        assert_int_equal(npk_flex_uint(&r, &u, &err), NPK_OK);
        assert_int_equal(u, 4000000000u);
        r = get(&m, "f");
        assert_int_equal(npk_flex_float(&r, &d, &err), NPK_OK);
        assert_true(d == 0.5);
        r = get(&m, "d");
        assert_int_equal(npk_flex_float(&r, &d, &err), NPK_OK);
        assert_true(d == 1e300);
        r = get(&m, "if");
        assert_int_equal(r.type, NPK_FLEX_INDIRECT_FLOAT);
        assert_int_equal(npk_flex_float(&r, &d, &err), NPK_OK);
        assert_true(d == 2.5);
        r = get(&m, "long");
        const char *s;
        size_t n;
        assert_int_equal(npk_flex_string(&r, &s, &n, NULL, &err), NPK_OK);
        assert_int_equal(n, 300);
        assert_true(r.byte_width >= 2); /* a 300-byte length needs 2 bytes */
        r = get(&m, "tf");
        assert_int_equal(npk_flex_vector(&r, &v, &err), NPK_OK);
        npk_flex_at(&v, 1, &e, &err);
        assert_int_equal(npk_flex_float(&e, &d, &err), NPK_OK);
        assert_true(d == -2.5);
        r = get(&m, "fx");
        assert_int_equal(r.type, NPK_FLEX_VECTOR_FLOAT3);
        assert_int_equal(npk_flex_vector(&r, &v, &err), NPK_OK);
        npk_flex_at(&v, 2, &e, &err);
        assert_int_equal(npk_flex_float(&e, &d, &err), NPK_OK);
        assert_true(d == 3.0);
        assert_int_equal(npk_flex_walk(&root, NULL, NULL, &err), NPK_OK);
        free(buf);
    }
}

static int count_visit(void *ctx, int depth, const char *key, const npk_flex_ref *r)
{
    (void)depth;
    (void)key;
    (void)r;
    (*(int *)ctx)++;
    return 0;
}

static void test_hostile(void **state)
{
    (void)state;
    generate();
    size_t len;
    uint8_t *buf = load("narrow", 2, &len);
    npk_error err = {0};
    npk_flex_ref root;
    int visits = 0;
    assert_int_equal(npk_flex_root(buf, len, 0, &root, &err), NPK_OK);
    assert_int_equal(npk_flex_walk(&root, count_visit, &visits, &err), NPK_OK);
    assert_int_equal(visits, 1 + 13 + 3 + 3 + 3 + 4 + 2); /* root, values, elements */
    /* Every truncation (the root lives at the end, so cuts are re-rooted):
     * walking a cut buffer must never read outside it. */
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, buf, n);
        npk_error_clear(&err);
        if (npk_flex_root(cut, n, 0, &root, &err) == NPK_OK) npk_flex_walk(&root, NULL, NULL, &err);
        free(cut);
    }
    /* Every byte corrupted: no crash; failures carry an offset inside the buffer. */
    for (size_t i = 0; i < len; i++)
        for (int x = 1; x < 256; x <<= 1) {
            uint8_t *bad = malloc(len);
            memcpy(bad, buf, len);
            bad[i] ^= (uint8_t)x;
            npk_error_clear(&err);
            npk_status st = npk_flex_root(bad, len, 0, &root, &err);
            if (!st) st = npk_flex_walk(&root, NULL, NULL, &err);
            if (st && st != NPK_E_ARG) {
                assert_true(err.has_offset);
                assert_true(err.offset < len);
            }
            free(bad);
        }
    free(buf);

    /* Crafted: a root width that is not 1/2/4/8, an offset before the start,
     * a vector claiming more elements than there are bytes. */
    uint8_t b1[] = {0, 0x24, 3};
    npk_error_clear(&err);
    assert_int_equal(npk_flex_root(b1, 3, 0, &root, &err), NPK_E_FORMAT);
    uint8_t b2[] = {9, (NPK_FLEX_MAP << 2), 1}; /* map offset 9 back from position 0 */
    npk_error_clear(&err);
    npk_flex_vec m;
    assert_int_equal(npk_flex_root(b2, 3, 0, &root, &err), NPK_OK);
    assert_int_equal(npk_flex_map(&root, &m, &err), NPK_E_FORMAT);
    uint8_t b3[] = {200, 1, 2, 3, 3, (NPK_FLEX_VECTOR_INT << 2), 1}; /* 200 ints in 4 bytes */
    npk_error_clear(&err);
    assert_int_equal(npk_flex_root(b3, sizeof b3, 0, &root, &err), NPK_OK);
    assert_int_equal(npk_flex_vector(&root, &m, &err), NPK_E_FORMAT);
    /* A vector that contains itself: the walk stops at the depth limit. */
    /* [0] length 1; [1] element 0: offset 0, i.e. the vector at 1 itself; [2] its
     * type (a vector); [3] root: offset 2 back to position 1; [4] root type; [5] width. */
    uint8_t b4[] = {1, 0, (NPK_FLEX_VECTOR << 2), 2, (NPK_FLEX_VECTOR << 2), 1};
    npk_error_clear(&err);
    assert_int_equal(npk_flex_root(b4, sizeof b4, 0, &root, &err), NPK_OK);
    assert_int_equal(npk_flex_walk(&root, NULL, NULL, &err), NPK_E_LIMIT);
}

/* The writer's maps, read back by the reference implementation. */
static void test_writer_against_python(void **state)
{
    (void)state;
    const char *py = fbt_python();
    static const char CHECK[] =
        "import sys\n"
        "from flatbuffers import flexbuffers as fx\n"
        "d = open(sys.argv[1], 'rb').read()\n"
        "m = fx.GetRoot(d).AsMap\n"
        "assert [k.AsKey for k in m.Keys] == ['1', '4', '5', '6', '7', 'blob'], list(m.Keys)\n"
        "assert m['1'].AsInt == 0 and m['5'].AsInt == -1, (m['1'], m['5'])\n"
        "s = fx.String(m['4']._Indirect(), m['4']._byte_width).Bytes\n"
        "assert m['4'].IsString and len(s) == int(sys.argv[2]), len(s)\n"
        "assert s == bytes((i * 7) % 256 for i in range(len(s)))\n"
        "assert [x.AsInt for x in m['6'].AsVector] == [18, -70000]\n"
        "assert len(m['7'].AsVector) == 0\n"
        "assert m['blob'].AsBlob == b'\\x01\\x02\\x03'\n"
        "assert d[-1] in (1, 2, 4, 8)\n"
        "print('width', (d[-2] & 3))\n";
    char script[1024];
    snprintf(script, sizeof script, "%s", npk_tmp("check_flexw.py"));
    fbt_write(script, CHECK);
    static const size_t lens[] = {5, 300, 70000};
    for (size_t li = 0; li < 3; li++) {
        uint8_t *pk = malloc(lens[li]);
        for (size_t i = 0; i < lens[li]; i++) pk[i] = (uint8_t)((i * 7) % 256);
        const int64_t chips[2] = {18, -70000};
        npk_flexw_entry e[6] = {
            {.key = "7", .kind = NPK_FLEXW_INT_VECTOR, .len = 0},
            {.key = "1", .kind = NPK_FLEXW_INT, .i = 0},
            {.key = "4", .kind = NPK_FLEXW_STRING, .bytes = pk, .len = lens[li]},
            {.key = "blob", .kind = NPK_FLEXW_BLOB, .bytes = (const uint8_t *)"\1\2\3", .len = 3},
            {.key = "5", .kind = NPK_FLEXW_INT, .i = -1},
            {.key = "6", .kind = NPK_FLEXW_INT_VECTOR, .ints = chips, .len = 2},
        };
        for (int w = 0; w <= 8; w = w ? w * 2 : 1) {
            uint8_t *out;
            size_t len;
            npk_error err = {0};
            npk_status st = npk_flexw_map(e, 6, w, &out, &len, &err);
            /* A forced narrow width is refused when an offset cannot fit it. */
            if (st) {
                assert_int_equal(st, NPK_E_LIMIT);
                assert_true(w > 0 && w < 8);
                continue;
            }
            /* Our own reader agrees... */
            npk_flex_ref root, r;
            npk_flex_vec m;
            bool found;
            assert_int_equal(npk_flex_root(out, len, 0, &root, &err), NPK_OK);
            assert_int_equal(npk_flex_map(&root, &m, &err), NPK_OK);
            if (w) assert_int_equal(m.width, w);
            assert_int_equal(npk_flex_map_find(&m, "5", &r, &found, &err), NPK_OK);
            assert_true(found);
            assert_int_equal(as_int(&r), -1);
            assert_int_equal(npk_flex_walk(&root, NULL, NULL, &err), NPK_OK);
            /* ...and so does the reference implementation. */
            char bin[1024];
            snprintf(bin, sizeof bin, "%s", npk_tmp("flexw.bin"));
            assert_int_equal(npk_write_file(bin, out, len, &err), NPK_OK);
            char lenarg[32];
            snprintf(lenarg, sizeof lenarg, "%zu", lens[li]);
            char *argv[] = {(char *)py, script, bin, lenarg, NULL};
            fbt_run(argv);
            free(out);
        }
        free(pk);
    }
}

/* Floats, booleans and nulls (custom-op options): inline in 4- or 8-byte
 * maps (a float forces at least 4), read back by our reader and by the
 * reference implementation. */
static void test_writer_scalars(void **state)
{
    (void)state;
    const char *py = fbt_python();
    static const char CHECK[] =
        "import sys\n"
        "from flatbuffers import flexbuffers as fx\n"
        "m = fx.GetRoot(open(sys.argv[1], 'rb').read()).AsMap\n"
        "assert m['f'].IsFloat and m['f'].AsFloat == float(sys.argv[2]), m['f'].AsFloat\n"
        "assert m['t'].IsBool and m['t'].AsBool is True and m['n'].IsNull\n"
        "assert m['i'].AsInt == -3\n";
    char script[1024];
    snprintf(script, sizeof script, "%s", npk_tmp("check_flexs.py"));
    fbt_write(script, CHECK);
    const npk_flexw_entry e[] = {
        {.key = "f", .kind = NPK_FLEXW_FLOAT, .f = 0.1},
        {.key = "t", .kind = NPK_FLEXW_BOOL, .i = 7},
        {.key = "n", .kind = NPK_FLEXW_NULL},
        {.key = "i", .kind = NPK_FLEXW_INT, .i = -3},
    };
    for (int w = 0; w <= 8; w = w ? w * 2 : 1) {
        uint8_t *out;
        size_t len;
        npk_error err = {0};
        npk_status st = npk_flexw_map(e, 4, w, &out, &len, &err);
        if (w == 1 || w == 2) {
            assert_int_equal(st, NPK_E_LIMIT); /* no room for an inline float */
            continue;
        }
        assert_int_equal(st, NPK_OK);
        npk_flex_ref root, r;
        npk_flex_vec m;
        bool found, b;
        double d;
        assert_int_equal(npk_flex_root(out, len, 0, &root, &err), NPK_OK);
        assert_int_equal(npk_flex_map(&root, &m, &err), NPK_OK);
        assert_int_equal(m.width, w ? w : 4);
        assert_int_equal(npk_flex_map_find(&m, "f", &r, &found, &err), NPK_OK);
        assert_true(found && r.type == NPK_FLEX_FLOAT);
        assert_int_equal(npk_flex_float(&r, &d, &err), NPK_OK);
        assert_true(d == (w == 8 ? 0.1 : (double)0.1f));
        assert_int_equal(npk_flex_map_find(&m, "t", &r, &found, &err), NPK_OK);
        assert_int_equal(npk_flex_bool(&r, &b, &err), NPK_OK);
        assert_true(found && r.type == NPK_FLEX_BOOL && b);
        assert_int_equal(npk_flex_map_find(&m, "n", &r, &found, &err), NPK_OK);
        assert_true(found && r.type == NPK_FLEX_NULL);
        char bin[1024], val[64];
        snprintf(bin, sizeof bin, "%s", npk_tmp("flexs.bin"));
        assert_int_equal(npk_write_file(bin, out, len, &err), NPK_OK);
        snprintf(val, sizeof val, "%.17g", w == 8 ? 0.1 : (double)0.1f);
        char *argv[] = {(char *)py, script, bin, val, NULL};
        fbt_run(argv);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_narrow_all_widths), cmocka_unit_test(test_wide_all_widths),
        cmocka_unit_test(test_hostile),           cmocka_unit_test(test_writer_against_python),
        cmocka_unit_test(test_writer_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
