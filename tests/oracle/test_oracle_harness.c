/* The oracle harness itself, without running an oracle: file names of
 * outputs, the seeded input generator, the element comparison, and the
 * model cuts (re-read by npukit's TFLite reader). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/flatbuf.h"
#include "oracle.h"

static void test_sanitize(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"MobilenetV1/Predictions/Reshape_1", "MobilenetV1_Predictions_Reshape_1"},
        {"poses:1", "poses_1"},
        {"a b;c=d", "a_b_c_d"},
        {"", "_"},
        {".", "_"},
        {"..", "_"},
        {"x.y-z_0", "x.y-z_0"},
        {"\xc3\xa9", "__"}}; /* one '_' per byte of UTF-8 */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        npk_oracle_sanitize(cases[i][0], out, sizeof out);
        assert_string_equal(out, cases[i][1]);
    }
}

static void test_fill(void **state)
{
    (void)state;
    const int64_t shape[2] = {7, 13};
    const npk_dtype types[] = {NPK_U8, NPK_I8, NPK_I16, NPK_I32, NPK_F32, NPK_BOOL};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        npk_tensor a, b;
        npk_error err = {0};
        assert_int_equal(npk_tensor_alloc(&a, NULL, types[k], 2, shape, &err), NPK_OK);
        assert_int_equal(npk_tensor_alloc(&b, NULL, types[k], 2, shape, &err), NPK_OK);
        npk_oracle_fill(&a, 42);
        /* The documented definition: xorshift64* from the seed, one draw per
         * element, lo + draw % span (integers), lo + (hi - lo) * (draw >> 11)
         * * 2^-53 (floats, [-1, 1)). */
        uint64_t s = 42;
        for (size_t i = 0; i < 91; i++) {
            uint64_t d = npk_rand(&s);
            switch (types[k]) {
            case NPK_U8: assert_int_equal(((uint8_t *)a.data)[i], d % 256); break;
            case NPK_I8: assert_int_equal(((int8_t *)a.data)[i], -128 + (int64_t)(d % 256)); break;
            case NPK_I16:
                assert_int_equal(((int16_t *)a.data)[i], -32768 + (int64_t)(d % 65536));
                break;
            case NPK_I32:
                assert_int_equal(((int32_t *)a.data)[i],
                                 (int64_t)INT32_MIN + (int64_t)(d % 4294967296u));
                break;
            case NPK_F32:
                assert_float_equal(((float *)a.data)[i],
                                   (float)(-1 + 2 * (double)(d >> 11) * 0x1p-53), 0);
                break;
            default: assert_int_equal(((uint8_t *)a.data)[i], d & 1);
            }
        }
        npk_oracle_fill(&b, 42);
        assert_memory_equal(a.data, b.data, a.nbytes);
        npk_oracle_fill(&b, 43);
        assert_true(memcmp(a.data, b.data, a.nbytes) != 0);
        npk_oracle_fill_range(&b, 9, 10, 12);
        for (size_t i = 0; types[k] != NPK_BOOL && i < 91; i++) {
            double v = types[k] == NPK_U8    ? ((uint8_t *)b.data)[i]
                       : types[k] == NPK_I8  ? ((int8_t *)b.data)[i]
                       : types[k] == NPK_I16 ? ((int16_t *)b.data)[i]
                       : types[k] == NPK_I32 ? ((int32_t *)b.data)[i]
                                             : ((float *)b.data)[i];
            assert_true(v >= 10 && (types[k] == NPK_F32 ? v < 12 : v <= 12));
        }
        npk_tensor_free(&a);
        npk_tensor_free(&b);
    }
}

static void make(npk_tensor *t, npk_dtype dt, int ndim, const int64_t *shape, const double *v)
{
    npk_error err = {0};
    assert_int_equal(npk_tensor_alloc(t, "t", dt, ndim, shape, &err), NPK_OK);
    for (size_t i = 0; i < npk_tensor_count(t); i++) {
        if (dt == NPK_U8) ((uint8_t *)t->data)[i] = (uint8_t)v[i];
        if (dt == NPK_I64) ((int64_t *)t->data)[i] = (int64_t)v[i];
        if (dt == NPK_F32) ((float *)t->data)[i] = (float)v[i];
    }
}

static void test_compare(void **state)
{
    (void)state;
    npk_tensor a, b, c;
    const int64_t s23[2] = {2, 3}, s6[1] = {6}, s4[1] = {4};
    make(&a, NPK_U8, 2, s23, (const double[]){0, 1, 2, 3, 4, 5});
    make(&b, NPK_U8, 2, s23, (const double[]){0, 2, 2, 6, 4, 5});
    npk_cmp r = npk_oracle_compare(&a, &b, 0, true);
    assert_true(r.same_shape);
    assert_int_equal(r.count, 6);
    assert_int_equal(r.exact, 4);
    assert_int_equal(r.off1, 1);
    assert_int_equal(r.worse, 1);
    assert_float_equal(r.max_diff, 3, 0);
    assert_int_equal(r.worst_index, 3);
    assert_int_equal(r.rows, 2);
    assert_int_equal(r.top1_agree, 0); /* row 0: 2 vs 1 (first of equal maxima); row 1: 2 vs 0 */
    assert_int_equal(r.top1_a, 2);
    assert_int_equal(r.top1_b, 1);
    char line[300];
    assert_string_equal(
        npk_cmp_summary(&r, "x", line, sizeof line),
        "x: 6 elements: 4 exact, 1 off by 1, 1 worse (max |diff| 3 LSB); top-1 agrees "
        "in 0 of 2 rows");
    r = npk_oracle_compare(&a, &a, 0, true);
    assert_int_equal(r.exact, 6);
    assert_int_equal(r.top1_agree, 2);
    make(&c, NPK_U8, 1, s6, (const double[]){0, 1, 2, 3, 4, 5}); /* same data, other shape */
    assert_false(npk_oracle_compare(&a, &c, 0, false).same_shape);
    npk_tensor_free(&c);
    npk_tensor_free(&a);
    npk_tensor_free(&b);

    /* int64 (ARG_MAX indices) */
    make(&a, NPK_I64, 1, s4, (const double[]){0, 20, 3, -5});
    make(&b, NPK_I64, 1, s4, (const double[]){0, 20, 4, 5});
    r = npk_oracle_compare(&a, &b, 0, false);
    assert_int_equal(r.exact, 2);
    assert_int_equal(r.off1, 1);
    assert_int_equal(r.worse, 1);
    assert_float_equal(r.max_diff, 10, 0);
    npk_tensor_free(&a);
    npk_tensor_free(&b);

    /* float: in steps of a scale, or in ulps; NaN */
    make(&a, NPK_F32, 1, s4, (const double[]){1.0, 2.0, NAN, NAN});
    make(&b, NPK_F32, 1, s4, (const double[]){1.5, 3.5, NAN, 1.0});
    r = npk_oracle_compare(&a, &b, 0.5, false);
    assert_string_equal(r.unit, "LSB");
    assert_int_equal(r.exact, 1); /* NaN and NaN */
    assert_int_equal(r.off1, 1);  /* 0.5 = one step */
    assert_int_equal(r.worse, 2); /* 3 steps; NaN against a number */
    ((float *)b.data)[0] = nextafterf(1.0f, 2.0f);
    ((float *)b.data)[1] = 2.0f;
    ((float *)b.data)[3] = NAN;
    r = npk_oracle_compare(&a, &b, 0, false);
    assert_string_equal(r.unit, "ulp");
    assert_int_equal(r.exact, 3);
    assert_int_equal(r.off1, 1);
    assert_float_equal(r.max_diff, 1, 0);
    ((float *)a.data)[0] = -0.0f;
    ((float *)b.data)[0] = 1e-45f; /* the smallest subnormal: 1 ulp from -0 (and +0) */
    r = npk_oracle_compare(&a, &b, 0, false);
    assert_float_equal(r.max_diff, 1, 0);
    npk_tensor_free(&a);
    npk_tensor_free(&b);
}

/* Signature definitions (Model slot 7) left in a prepared file. */
static uint32_t signature_count(const uint8_t *buf, size_t len)
{
    npk_fb_buf fb;
    npk_fb_table root;
    npk_fb_vec v;
    npk_error err = {0};
    if (npk_fb_init(&fb, buf, len, 0, &err) || npk_fb_root(&fb, NULL, &root, &err) ||
        npk_fb_vector(&root, 7, 4, &v, &err))
        fail_msg("%s", err.msg);
    return v.count;
}

static void test_prepare(void **state)
{
    (void)state;
    npk_mapped f;
    npk_fixture_map("models/mobilenet_v1_0.5_160_quant.tflite", &f);
    npk_tfl_model m, c;
    npk_error err = {0};
    assert_int_equal(npk_tfl_parse(f.data, f.size, &m, &err), NPK_OK);
    const npk_tfl_subgraph *g = &m.subgraphs[0];
    char why[256];
    const char *path = npk_tmp("cut.tflite");

    /* Outputs: the fourth operator's output; only operators 0-3 remain. */
    int32_t out = g->operators[3].outputs[0];
    assert_int_equal(npk_oracle_prepare(f.data, f.size, NULL, 0, &out, 1, path, why, sizeof why),
                     0);
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    assert_true(len >= f.size); /* patched in place, vectors appended */
    if (npk_tfl_parse(buf, len, &c, &err)) fail_msg("the cut model does not parse: %s", err.msg);
    const npk_tfl_subgraph *h = &c.subgraphs[0];
    assert_int_equal(h->noperators, 4);
    for (uint32_t o = 0; o < 4; o++)
        assert_int_equal(h->operators[o].offset, g->operators[o].offset);
    assert_int_equal(h->noutputs, 1);
    assert_int_equal(h->outputs[0], out);
    assert_int_equal(h->ninputs, g->ninputs);
    assert_int_equal(h->inputs[0], g->inputs[0]);
    assert_int_equal(h->ntensors, g->ntensors);
    npk_tfl_free(&c);
    free(buf);

    /* Inputs and outputs inside: operators 2 and 3 only. */
    int32_t in = g->operators[2].inputs[0];
    assert_int_equal(npk_oracle_prepare(f.data, f.size, &in, 1, &out, 1, path, why, sizeof why), 0);
    buf = npk_slurp(path, &len);
    assert_int_equal(npk_tfl_parse(buf, len, &c, &err), NPK_OK);
    assert_int_equal(c.subgraphs[0].noperators, 2);
    assert_int_equal(c.subgraphs[0].operators[0].offset, g->operators[2].offset);
    assert_int_equal(c.subgraphs[0].inputs[0], in);
    npk_tfl_free(&c);
    free(buf);

    /* Nothing computes the model's input from a later tensor. */
    int32_t first = g->inputs[0];
    assert_int_equal(npk_oracle_prepare(f.data, f.size, &in, 1, &first, 1, path, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "neither an input, a constant nor computed"));
    int32_t bad = (int32_t)g->ntensors;
    assert_int_equal(npk_oracle_prepare(f.data, f.size, NULL, 0, &bad, 1, path, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "does not exist"));
    npk_tfl_free(&m);
    npk_unmap_file(&f);

    /* Signature definitions are removed, the rest stays as it was. */
    npk_fixture_map("edgetpu/dense_256.tflite", &f);
    assert_true(signature_count(f.data, f.size) > 0);
    assert_int_equal(npk_oracle_prepare(f.data, f.size, NULL, 0, NULL, 0, path, why, sizeof why),
                     0);
    buf = npk_slurp(path, &len);
    assert_int_equal(len, f.size);
    assert_int_equal(signature_count(buf, len), 0);
    size_t differ = 0;
    for (size_t i = 0; i < len; i++) differ += buf[i] != f.data[i];
    assert_true(differ >= 1 && differ <= 4); /* one vector length */
    free(buf);
    npk_unmap_file(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_prepare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
