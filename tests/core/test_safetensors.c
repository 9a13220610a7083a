/* safetensors: round trips, an independent Python check of the header rules
 * on files we write, and every malformed-header rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"

#ifdef NPK_HAVE_CJSON

static void make_set(npk_tensor *ts)
{
    npk_error err = {0};
    int64_t s0[4] = {4, 12, 3, 3}, s1[1] = {5}, s2[2] = {2, 3}, s3[1] = {0};
    assert_int_equal(npk_tensor_alloc(&ts[0], "layer.0.weight", NPK_F32, 4, s0, &err), NPK_OK);
    assert_int_equal(npk_tensor_alloc(&ts[1], "bias", NPK_I32, 1, s1, &err), NPK_OK);
    assert_int_equal(npk_tensor_alloc(&ts[2], "w16", NPK_F16, 2, s2, &err), NPK_OK);
    assert_int_equal(npk_tensor_alloc(&ts[3], "scalar", NPK_I8, 0, s3, &err), NPK_OK);
    for (size_t i = 0; i < 432; i++) ((float *)ts[0].data)[i] = (float)i / 8 - 20;
    for (int i = 0; i < 5; i++) ((int32_t *)ts[1].data)[i] = -100000 * i;
    for (int i = 0; i < 6; i++) ((uint16_t *)ts[2].data)[i] = npk_f32_to_f16((float)i / 4);
    ((int8_t *)ts[3].data)[0] = -3;
}

static void test_round_trip(void **state)
{
    (void)state;
    npk_tensor ts[4];
    make_set(ts);
    npk_error err = {0};
    uint8_t *buf;
    size_t len;
    assert_int_equal(npk_st_encode(ts, 4, &buf, &len, &err), NPK_OK);
    assert_int_equal(npk_ld64le(buf) % 8, 0);
    npk_tensor_set s;
    assert_int_equal(npk_st_parse(buf, len, &s, &err), NPK_OK);
    assert_int_equal(s.count, 4);
    for (int i = 0; i < 4; i++) {
        npk_tensor *t = npk_set_find(&s, ts[i].name);
        assert_non_null(t);
        assert_int_equal(t->dtype, ts[i].dtype);
        assert_int_equal(t->ndim, ts[i].ndim);
        assert_int_equal(t->nbytes, ts[i].nbytes);
        assert_memory_equal(t->data, ts[i].data, ts[i].nbytes);
    }
    /* Re-encoding the parsed set is byte-identical. */
    uint8_t *buf2;
    size_t len2;
    assert_int_equal(npk_st_encode(s.items, s.count, &buf2, &len2, &err), NPK_OK);
    assert_int_equal(len2, len);
    assert_memory_equal(buf2, buf, len);
    /* Truncation at every byte fails cleanly. */
    for (size_t cut = 0; cut < len; cut++) {
        npk_tensor_set x;
        npk_error e = {0};
        assert_int_not_equal(npk_st_parse(buf, cut, &x, &e), NPK_OK);
        assert_true(e.has_offset);
    }
    free(buf);
    free(buf2);
    npk_set_free(&s);
    for (int i = 0; i < 4; i++) npk_tensor_free(&ts[i]);
}

/* An independent reader (json + numpy) enforcing the format's rules. */
static void test_python_checks_ours(void **state)
{
    (void)state;
    npk_tensor ts[4];
    make_set(ts);
    npk_error err = {0};
    assert_int_equal(npk_st_save(npk_tmp("ours.safetensors"), ts, 4, &err), NPK_OK);
    const char *script =
        "import json, struct, sys, numpy as np\n"
        "b = open(sys.argv[1], 'rb').read()\n"
        "n, = struct.unpack('<Q', b[:8])\n"
        "assert n % 8 == 0 and 8 + n <= len(b)\n"
        "h = json.loads(b[8:8+n].decode('utf-8'))\n"
        "data = b[8+n:]\n"
        "types = {'F32':'<f4','I32':'<i4','F16':'<f2','I8':'|i1'}\n"
        "spans = []\n"
        "arrs = {}\n"
        "for k, v in h.items():\n"
        "    if k == '__metadata__': continue\n"
        "    s, e = v['data_offsets']\n"
        "    dt = np.dtype(types[v['dtype']])\n"
        "    assert e - s == dt.itemsize * int(np.prod(v['shape'], dtype=np.int64)), k\n"
        "    spans.append((s, e))\n"
        "    arrs[k] = np.frombuffer(data[s:e], dtype=dt).reshape(v['shape'])\n"
        "spans.sort()\n"
        "pos = 0\n"
        "for s, e in spans:\n"
        "    assert s == pos, 'hole or overlap'\n"
        "    pos = e\n"
        "assert pos == len(data), 'trailing data'\n"
        "w = arrs['layer.0.weight']\n"
        "assert w.shape == (4, 12, 3, 3) and w.flat[431] == 431/8 - 20\n"
        "assert list(arrs['bias']) == [0, -100000, -200000, -300000, -400000]\n"
        "assert arrs['w16'].tolist() == [[0, 0.25, 0.5], [0.75, 1.0, 1.25]]\n"
        "assert arrs['scalar'].shape == () and int(arrs['scalar']) == -3\n"
        "print('ok')\n";
    npk_run r = npk_python(script, npk_tmp("ours.safetensors"));
    if (r.status) fail_msg("python check failed: %s", r.err);
    assert_string_equal(r.out, "ok\n");
    npk_run_free(&r);
    for (int i = 0; i < 4; i++) npk_tensor_free(&ts[i]);
}

static npk_status parse_json(const char *json, size_t data_len, npk_error *err)
{
    size_t jl = strlen(json);
    uint8_t *buf = calloc(1, 8 + jl + data_len);
    npk_st64le(buf, jl);
    memcpy(buf + 8, json, jl);
    npk_tensor_set s;
    npk_status st = npk_st_parse(buf, 8 + jl + data_len, &s, err);
    if (st == NPK_OK) npk_set_free(&s);
    free(buf);
    return st;
}

static void test_malformed(void **state)
{
    (void)state;
    struct {
        const char *json;
        size_t data;
        npk_status want;
        const char *msg;
    } cases[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, NPK_OK, ""},
        {"{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":["
         "0,2]}}",
         2, NPK_OK, ""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, NPK_E_FORMAT,
         "after the last"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, NPK_E_FORMAT,
         "hole"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, NPK_E_FORMAT, "overlaps"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, NPK_E_FORMAT,
         "past the end"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, NPK_E_FORMAT,
         "needs"},
        {"{\"a\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, NPK_E_UNSUPPORTED,
         "dtype"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, NPK_E_FORMAT,
         "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, NPK_E_FORMAT,
         "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 4, NPK_E_FORMAT,
         "data_offsets"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, NPK_E_FORMAT, "lacks"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":["
         "0,4]}}",
         4, NPK_E_LIMIT, "overflow"},
        {"{\"__metadata__\":{\"k\":1}}", 0, NPK_E_FORMAT, "not a string"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", 4, NPK_E_FORMAT,
         "trailing"},
        {"{\"a\":", 0, NPK_E_FORMAT, "invalid JSON"},
        {"[1,2]", 0, NPK_E_FORMAT, "not a JSON object"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\","
         "\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, NPK_E_FORMAT, "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npk_error err = {0};
        npk_status st = parse_json(cases[i].json, cases[i].data, &err);
        if (st != cases[i].want || !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: got %d '%s', want %d '%s'", i, st, err.msg, cases[i].want,
                     cases[i].msg);
    }
    /* A header length larger than the file or the 100 MB limit. */
    uint8_t b[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'};
    npk_tensor_set s;
    npk_error err = {0};
    assert_int_equal(npk_st_parse(b, 16, &s, &err), NPK_E_LIMIT);
    npk_st64le(b, 9);
    npk_error_clear(&err);
    assert_int_equal(npk_st_parse(b, 16, &s, &err), NPK_E_FORMAT);
}

static void test_encode_rejects(void **state)
{
    (void)state;
    npk_tensor ts[2];
    npk_error err = {0};
    int64_t sh[1] = {1};
    npk_tensor_alloc(&ts[0], "x", NPK_F32, 1, sh, &err);
    npk_tensor_alloc(&ts[1], "x", NPK_F32, 1, sh, &err);
    uint8_t *buf;
    size_t len;
    assert_int_equal(npk_st_encode(ts, 2, &buf, &len, &err), NPK_E_ARG);
    npk_tensor_free(&ts[0]);
    npk_tensor_free(&ts[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_python_checks_ours),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_encode_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
int main(void)
{
    printf("[  SKIPPED ] built without libcjson: no safetensors support\n");
    return 0;
}
#endif
