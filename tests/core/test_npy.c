/* .npy: round trips, files written by NumPy itself, files we write checked by
 * NumPy, and malformed inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"

static void fill(npk_tensor *t, uint64_t seed)
{
    uint8_t *p = t->data;
    for (size_t i = 0; i < t->nbytes; i++) p[i] = (uint8_t)npk_rand(&seed);
    /* Keep floats finite so value comparisons are meaningful. */
    if (t->dtype == NPK_F32)
        for (size_t i = 0; i < npk_tensor_count(t); i++)
            ((float *)t->data)[i] = (float)i * 0.5f - 3;
    if (t->dtype == NPK_F64)
        for (size_t i = 0; i < npk_tensor_count(t); i++) ((double *)t->data)[i] = (double)i / 3;
    if (t->dtype == NPK_F16)
        for (size_t i = 0; i < npk_tensor_count(t); i++)
            ((uint16_t *)t->data)[i] = npk_f32_to_f16((float)i - 7);
    if (t->dtype == NPK_BOOL)
        for (size_t i = 0; i < t->nbytes; i++) p[i] &= 1;
}

static const npk_dtype all_types[] = {NPK_F32, NPK_F16, NPK_F64, NPK_I8,  NPK_U8,  NPK_I16,
                                      NPK_U16, NPK_I32, NPK_U32, NPK_I64, NPK_U64, NPK_BOOL};

static void test_round_trip(void **state)
{
    (void)state;
    const int64_t shapes[][3] = {{3, 5, 7}, {1, 1, 1}, {0, 4, 2}, {17, 1, 3}};
    for (size_t d = 0; d < sizeof all_types / sizeof all_types[0]; d++) {
        for (int nd = 0; nd <= 3; nd++) {
            for (size_t s = 0; s < 4; s++) {
                npk_tensor t, u;
                npk_error err = {0};
                assert_int_equal(npk_tensor_alloc(&t, NULL, all_types[d], nd, shapes[s], &err),
                                 NPK_OK);
                fill(&t, d * 31 + s);
                uint8_t *buf;
                size_t len;
                assert_int_equal(npk_npy_encode(&t, &buf, &len, &err), NPK_OK);
                assert_int_equal((len - t.nbytes) % 64, 0); /* data 64-byte aligned */
                assert_int_equal(npk_npy_parse(buf, len, &u, &err), NPK_OK);
                assert_int_equal(u.dtype, t.dtype);
                assert_int_equal(u.ndim, nd);
                for (int k = 0; k < nd; k++) assert_int_equal(u.shape[k], t.shape[k]);
                assert_int_equal(u.nbytes, t.nbytes);
                assert_memory_equal(u.data, t.data, t.nbytes);
                /* Truncation at every byte is an error, never a crash. */
                for (size_t cut = 0; cut < len; cut++) {
                    npk_tensor v;
                    npk_error e2 = {0};
                    assert_int_not_equal(npk_npy_parse(buf, cut, &v, &e2), NPK_OK);
                    assert_true(e2.msg[0] != 0);
                }
                free(buf);
                npk_tensor_free(&t);
                npk_tensor_free(&u);
            }
        }
    }
}

static void test_bf16_rejected(void **state)
{
    (void)state;
    npk_tensor t;
    npk_error err = {0};
    int64_t shape[1] = {2};
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_BF16, 1, shape, &err), NPK_OK);
    uint8_t *buf;
    size_t len;
    assert_int_equal(npk_npy_encode(&t, &buf, &len, &err), NPK_E_UNSUPPORTED);
    npk_tensor_free(&t);
}

/* NumPy writes files (v1, v2, v3 headers; big-endian; every dtype); we read them. */
static void test_read_numpy_files(void **state)
{
    (void)state;
    const char *script =
        "import numpy as np, sys, os\n"
        "d = sys.argv[1]\n"
        "a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.25\n"
        "np.save(os.path.join(d, 'f32.npy'), a)\n"
        "for ver in [(1,0), (2,0), (3,0)]:\n"
        "    with open(os.path.join(d, 'v%d.npy' % ver[0]), 'wb') as f:\n"
        "        np.lib.format.write_array(f, a, version=ver)\n"
        "np.save(os.path.join(d, 'be.npy'), a.astype('>f4'))\n"
        "np.save(os.path.join(d, 'i8.npy'), np.arange(-5, 5, dtype=np.int8))\n"
        "np.save(os.path.join(d, 'f16.npy'), np.array([1.5, -2, 65504], dtype=np.float16))\n"
        "np.save(os.path.join(d, 'scalar.npy'), np.int32(-7))\n"
        "np.save(os.path.join(d, 'fortran.npy'), np.asfortranarray(a))\n"
        "w = np.arange(15, dtype=np.float32).reshape(3, 5) - 7.5\n"
        "np.save(os.path.join(d, 'wt.npy'), w.T)\n"
        "np.save(os.path.join(d, 'wt_c.npy'), np.ascontiguousarray(w.T))\n"
        "b = (np.arange(2 * 3 * 4 * 5, dtype='>i2').reshape(2, 3, 4, 5) * 37) % 1000\n"
        "np.save(os.path.join(d, 'f4d.npy'), np.asfortranarray(b))\n"
        "np.save(os.path.join(d, 'f4d_c.npy'), b.astype('<i2'))\n"
        "np.save(os.path.join(d, 'obj.npy'), np.array(['x', 'yy']))\n";
    npk_run r = npk_python(script, npk_tmpdir());
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    npk_error err = {0};
    npk_tensor t;
    const char *names[] = {"f32.npy", "v1.npy", "v2.npy", "v3.npy", "be.npy"};
    for (int i = 0; i < 5; i++) {
        npk_error_clear(&err);
        assert_int_equal(npk_npy_load(npk_tmp(names[i]), &t, &err), NPK_OK);
        assert_int_equal(t.dtype, NPK_F32);
        assert_int_equal(t.ndim, 3);
        assert_int_equal(t.shape[2], 4);
        for (int k = 0; k < 24; k++) assert_true(((float *)t.data)[k] == k * 0.25f);
        npk_tensor_free(&t);
    }
    assert_int_equal(npk_npy_load(npk_tmp("i8.npy"), &t, &err), NPK_OK);
    assert_int_equal(t.dtype, NPK_I8);
    assert_int_equal(((int8_t *)t.data)[0], -5);
    npk_tensor_free(&t);
    assert_int_equal(npk_npy_load(npk_tmp("f16.npy"), &t, &err), NPK_OK);
    assert_int_equal(((uint16_t *)t.data)[2], 0x7bff);
    npk_tensor_free(&t);
    assert_int_equal(npk_npy_load(npk_tmp("scalar.npy"), &t, &err), NPK_OK);
    assert_int_equal(t.ndim, 0);
    assert_int_equal(((int32_t *)t.data)[0], -7);
    npk_tensor_free(&t);
    /* Was: Fortran-order files (np.save(w.T)) were refused. Now transposed on
     * load: the same tensor as NumPy's C-order copy. */
    assert_int_equal(npk_npy_load(npk_tmp("fortran.npy"), &t, &err), NPK_OK);
    for (int k = 0; k < 24; k++) assert_true(((float *)t.data)[k] == k * 0.25f);
    npk_tensor_free(&t);
    const char *pairs[][2] = {{"wt.npy", "wt_c.npy"}, {"f4d.npy", "f4d_c.npy"}};
    for (int i = 0; i < 2; i++) {
        npk_tensor f, c;
        assert_int_equal(npk_npy_load(npk_tmp(pairs[i][0]), &f, &err), NPK_OK);
        assert_int_equal(npk_npy_load(npk_tmp(pairs[i][1]), &c, &err), NPK_OK);
        assert_int_equal(f.dtype, c.dtype);
        assert_int_equal(f.ndim, c.ndim);
        assert_memory_equal(f.shape, c.shape, sizeof f.shape);
        assert_int_equal(f.nbytes, c.nbytes);
        assert_memory_equal(f.data, c.data, f.nbytes);
        npk_tensor_free(&f);
        npk_tensor_free(&c);
    }
    npk_npy_header h;
    size_t n;
    uint8_t *raw = npk_slurp(npk_tmp("wt.npy"), &n);
    assert_int_equal(npk_npy_parse_header(raw, n, &h, &err), NPK_OK);
    assert_true(h.fortran_order);
    assert_int_equal(h.shape[0], 5);
    free(raw);
    assert_int_equal(npk_npy_load(npk_tmp("obj.npy"), &t, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "dtype"));
}

/* Files we write load in NumPy with the right dtype, shape and values. */
static void test_numpy_loads_ours(void **state)
{
    (void)state;
    npk_error err = {0};
    for (size_t d = 0; d < sizeof all_types / sizeof all_types[0]; d++) {
        int64_t shape[2] = {3, 5};
        npk_tensor t;
        assert_int_equal(npk_tensor_alloc(&t, NULL, all_types[d], 2, shape, &err), NPK_OK);
        fill(&t, d);
        char name[64];
        snprintf(name, sizeof name, "ours_%s.npy", npk_dtype_name(all_types[d]));
        assert_int_equal(npk_npy_save(npk_tmp(name), &t, &err), NPK_OK);
        /* Compare NumPy's view of the file with the raw little-endian bytes. */
        char raw[64];
        snprintf(raw, sizeof raw, "ours_%s.raw", npk_dtype_name(all_types[d]));
        /* The raw file holds the little-endian bytes, whatever the host order. */
        uint8_t *le = malloc(t.nbytes + 1);
        size_t esz = npk_dtype_size(t.dtype);
        for (size_t i = 0; i < t.nbytes; i++)
            le[i] = ((uint8_t *)t.data)[npk_host_is_le() ? i : i - i % esz + (esz - 1 - i % esz)];
        assert_int_equal(npk_write_file(npk_tmp(raw), le, t.nbytes, &err), NPK_OK);
        free(le);
        npk_tensor_free(&t);
    }
    const char *script =
        "import numpy as np, sys, os, glob\n"
        "d = sys.argv[1]\n"
        "names = {'f32':'<f4','f16':'<f2','f64':'<f8','i8':'|i1','u8':'|u1','i16':'<i2',\n"
        "         'u16':'<u2','i32':'<i4','u32':'<u4','i64':'<i8','u64':'<u8','bool':'|b1'}\n"
        "for k, dt in names.items():\n"
        "    a = np.load(os.path.join(d, 'ours_%s.npy' % k))\n"
        "    raw = np.fromfile(os.path.join(d, 'ours_%s.raw' % k), dtype=dt).reshape(3, 5)\n"
        "    assert a.dtype == np.dtype(dt), (k, a.dtype)\n"
        "    assert a.shape == (3, 5), (k, a.shape)\n"
        "    assert a.tobytes() == raw.tobytes(), k\n"
        "print('ok', len(names))\n";
    npk_run r = npk_python(script, npk_tmpdir());
    if (r.status != 0) fail_msg("numpy check failed: %s", r.err);
    assert_string_equal(r.out, "ok 12\n");
    npk_run_free(&r);
}

static void test_malformed(void **state)
{
    (void)state;
    struct {
        const char *hdr;
        npk_status want;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", NPK_OK},
        {"{'descr': '<f4', 'fortran_order': False }", NPK_E_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", NPK_E_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
         NPK_E_LIMIT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,), }", NPK_E_LIMIT},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", NPK_E_UNSUPPORTED},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", NPK_E_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", NPK_E_FORMAT},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", NPK_E_UNSUPPORTED},
        {"['descr']", NPK_E_FORMAT},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), "
         "}",
         NPK_E_LIMIT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[256] = "\x93NUMPY\x01\x00";
        size_t hl = strlen(cases[i].hdr);
        buf[8] = (uint8_t)hl;
        buf[9] = 0;
        memcpy(buf + 10, cases[i].hdr, hl);
        memset(buf + 10 + hl, 0, 8); /* 2 float32 values */
        npk_tensor t;
        npk_error err = {0};
        npk_status st = npk_npy_parse(buf, 10 + hl + 8, &t, &err);
        if (st != cases[i].want)
            fail_msg("case %zu: got %d (%s), want %d", i, st, err.msg, cases[i].want);
        if (st == NPK_OK)
            npk_tensor_free(&t);
        else
            assert_true(err.has_offset);
    }
    /* Header length beyond the file; unknown version; trailing bytes. */
    uint8_t b[16] = "\x93NUMPY\x01\x00\xff\xff";
    npk_tensor t;
    npk_error err = {0};
    assert_int_equal(npk_npy_parse(b, 16, &t, &err), NPK_E_FORMAT);
    b[6] = 9;
    npk_error_clear(&err);
    assert_int_equal(npk_npy_parse(b, 16, &t, &err), NPK_E_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_bf16_rejected),
        cmocka_unit_test(test_read_numpy_files), cmocka_unit_test(test_numpy_loads_ours),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
