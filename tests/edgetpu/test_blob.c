/* The Dense parameter-blob codec and per-channel quantisation: the golden
 * hash of the reference, the dense_256 round trip (overheads equal the
 * sidecar's, weights equal the CPU model's), an independent element-wise
 * implementation of the layout formula, and the per-channel scales. */
#include "etpu_test.h"

/* The layout formula of the reference, one byte at a time (independent of
 * the tiled copy loops under test). */
static void naive_encode(const int8_t *w, size_t rows, size_t cols, const uint8_t *ov, uint8_t *b)
{
    size_t stride = 512 + 64 * cols;
    for (size_t g = 0; g < rows / 64; g++) memcpy(b + g * stride, ov + g * 512, 512);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            b[(r / 64) * stride + 512 + (c / 4) * 256 + (r % 64) * 4 + (c % 4)] =
                (uint8_t)w[r * cols + c] ^ 0x80;
}

static void test_sizes(void **state)
{
    (void)state;
    assert_int_equal(npk_etpu_blob_size(256, 256), 67584);
    assert_int_equal(npk_etpu_blob_size(512, 512), 266240);
    assert_int_equal(npk_etpu_blob_size(1024, 1024), 1056768);
    assert_int_equal(npk_etpu_blob_size(100, 256), 0); /* rows must be whole groups */
    assert_int_equal(npk_etpu_blob_size(256, 30), 0);  /* columns whole tiles */
    assert_int_equal(npk_etpu_blob_size(0, 0), 0);
    assert_int_equal(npk_etpu_blob_size(SIZE_MAX / 64 * 64, SIZE_MAX / 4 * 4), 0); /* overflow */
}

/* Random weights and overheads, several shapes (square and not, columns not
 * a multiple of 16): encode equals the formula, decode inverts it. */
static void test_against_formula(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{64, 4}, {64, 64}, {128, 36}, {192, 256}, {256, 1028}};
    uint64_t seed = 42;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t rows = shapes[s][0], cols = shapes[s][1], size = npk_etpu_blob_size(rows, cols);
        int8_t *w = malloc(rows * cols), *back = malloc(rows * cols);
        uint8_t *ov = malloc(rows / 64 * 512), *ov2 = malloc(rows / 64 * 512);
        uint8_t *a = malloc(size), *b = malloc(size);
        for (size_t i = 0; i < rows * cols; i++) w[i] = (int8_t)npk_rand(&seed);
        for (size_t i = 0; i < rows / 64 * 512; i++) ov[i] = (uint8_t)npk_rand(&seed);
        npk_error err = {0};
        naive_encode(w, rows, cols, ov, a);
        assert_int_equal(npk_etpu_blob_encode(w, rows, cols, ov, b, size, &err), NPK_OK);
        assert_memory_equal(a, b, size);
        assert_int_equal(npk_etpu_blob_decode(b, size, rows, cols, back, ov2, &err), NPK_OK);
        assert_memory_equal(w, back, rows * cols);
        assert_memory_equal(ov, ov2, rows / 64 * 512);
        /* wrong sizes are refused */
        assert_int_equal(npk_etpu_blob_decode(b, size - 1, rows, cols, back, NULL, &err),
                         NPK_E_FORMAT);
        npk_error_clear(&err);
        assert_int_equal(npk_etpu_blob_encode(w, rows + 1, cols, ov, b, size, &err), NPK_E_ARG);
        free(w);
        free(back);
        free(ov);
        free(ov2);
        free(a);
        free(b);
    }
}

/* The dense_256 sidecar; false (the test goes on without it) in builds
 * without JSON support. */
static bool load_sidecar(npk_etpu_sidecar *s)
{
    npk_mapped m;
    npk_error err = {0};
    npk_fixture_map("edgetpu/dense_256_edgetpu.json", &m);
    npk_status st = npk_etpu_sidecar_parse(m.data, m.size, s, &err);
    npk_unmap_file(&m);
    if (st == NPK_E_UNSUPPORTED) {
        printf("[  NOTE    ] no JSON support: sidecar comparisons left out\n");
        return false;
    }
    assert_int_equal(st, NPK_OK);
    assert_int_equal(s->matrix_size, 256);
    assert_int_equal(s->param_size, 67584);
    assert_int_equal(s->param_overhead_size, 2048);
    return true;
}

/* W[r][c] = ((7r + 13c) mod 256) - 128 with the template's overhead (the
 * sidecar's param_overhead, equal to the compiled blob's as checked below). */
static void test_golden_hash_256(void **state)
{
    (void)state;
    npk_etpu_sidecar s;
    etpu_fx f;
    npk_etpu_dense d;
    npk_error err = {0};
    bool have_sidecar = load_sidecar(&s);
    etpu_load("dense_256_edgetpu.tflite", &f);
    assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_OK);
    const uint8_t *overhead = have_sidecar ? s.param_overhead : d.overhead;
    int8_t *w = malloc(256 * 256);
    uint8_t *blob = malloc(67584);
    for (int r = 0; r < 256; r++)
        for (int c = 0; c < 256; c++) w[r * 256 + c] = (int8_t)((7 * r + 13 * c) % 256 - 128);
    assert_int_equal(npk_etpu_blob_encode(w, 256, 256, overhead, blob, 67584, &err), NPK_OK);
    sha_is(blob, 67584, "aed432df93f1a977903be3977f89c9f88f393f31d80196ef996a85f3a032abfd");
    free(w);
    free(blob);
    npk_etpu_dense_free(&d);
    etpu_unload(&f);
    if (have_sidecar) npk_etpu_sidecar_free(&s);
}

/* The libredgetpu round trip on the compiled template, and the facts of
 * its overhead: float multipliers in_s * w_s[r] / out_s, then 64 x int32 128. */
static void test_dense_256_round_trip(void **state)
{
    (void)state;
    npk_etpu_sidecar s;
    bool have_sidecar = load_sidecar(&s);
    etpu_fx f, cpu;
    etpu_load("dense_256_edgetpu.tflite", &f);
    etpu_load("dense_256.tflite", &cpu);
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_OK);
    assert_int_equal(d.n, 256);
    assert_int_equal(d.blob_offset, 12584);
    int8_t *w = malloc(256 * 256);
    uint8_t *ov = malloc(2048), *again = malloc(67584);
    assert_int_equal(npk_etpu_blob_decode(d.blob, d.blob_size, 256, 256, w, ov, &err), NPK_OK);
    if (have_sidecar) assert_memory_equal(ov, s.param_overhead, 2048);
    assert_memory_equal(ov, d.overhead, 2048);
    /* The recovered weights are the CPU model's buffer 2 (at file offset 488), untransposed. */
    assert_memory_equal(w, cpu.map.data + 488, 65536);
    assert_int_equal(npk_etpu_blob_encode(w, 256, 256, ov, again, 67584, &err), NPK_OK);
    assert_memory_equal(again, d.blob, 67584);
    /* Overhead: per-channel multipliers and the constant 128s. */
    const npk_tfl_tensor *wt = &cpu.m.tfl.subgraphs[0].tensors[1];
    const npk_tfl_tensor *in = &cpu.m.tfl.subgraphs[0].tensors[0];
    const npk_tfl_tensor *out = &cpu.m.tfl.subgraphs[0].tensors[4];
    double worst = 0, worst_ws = 0;
    for (int r = 0; r < 256; r++) {
        double want = (double)in->q.scale[0] * wt->q.scale[r] / out->q.scale[0];
        double rel = fabs(d.multiplier[r] - want) / want;
        worst = rel > worst ? rel : worst;
        rel = fabs(d.w_scale[r] - wt->q.scale[r]) / wt->q.scale[r];
        worst_ws = rel > worst_ws ? rel : worst_ws;
        assert_int_equal(npk_ld32le(ov + (r / 64) * 512 + 256 + (r % 64) * 4), 128);
    }
    assert_true(worst < 2e-7);    /* reference: 9.6e-8 */
    assert_true(worst_ws < 3e-7); /* the scales the template implies are the model's */
    if (have_sidecar) {
        /* The sidecar's weight_scale is channel 0's only. */
        assert_true(fabs(s.weight_scale - wt->q.scale[0]) < 1e-12);
        assert_true(fabs(s.input_scale - d.in_scale) < 1e-9);
        assert_int_equal(s.input_zero_point, d.in_zero_point);
        assert_true(fabs(s.output_scale - d.out_scale) < 1e-9);
        npk_etpu_sidecar_free(&s);
    }
    free(w);
    free(ov);
    free(again);
    npk_etpu_dense_free(&d);
    etpu_unload(&f);
    etpu_unload(&cpu);
}

/* Quantising the template's own float weights per channel gives back its
 * int8 weights exactly; one scale for every row (libredgetpu) does not. */
static void test_per_channel_quantisation(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_OK);
    size_t n = d.n, clipped = 99;
    int8_t *w = malloc(n * n), *q = malloc(n * n);
    float *wf = malloc(n * n * sizeof *wf), *one = malloc(n * sizeof *one);
    npk_etpu_dense_weights(&d, w, &err);
    for (size_t r = 0; r < n; r++)
        for (size_t c = 0; c < n; c++) wf[r * n + c] = (float)w[r * n + c] * d.w_scale[r];
    assert_int_equal(npk_etpu_quantize_rows(wf, n, n, d.w_scale, q, &clipped, &err), NPK_OK);
    assert_int_equal(clipped, 0);
    assert_memory_equal(q, w, n * n);
    for (size_t r = 0; r < n; r++) one[r] = d.w_scale[0];
    assert_int_equal(npk_etpu_quantize_rows(wf, n, n, one, q, &clipped, &err), NPK_OK);
    /* many values land one step off: a per-row gain error */
    size_t differ = 0;
    for (size_t i = 0; i < n * n; i++) differ += q[i] != w[i];
    assert_true(differ > 3000); /* 3,241 of 65,536 */
    free(w);
    free(q);
    free(wf);
    free(one);
    npk_etpu_dense_free(&d);
    etpu_unload(&f);
}

static void test_rounding_and_clipping(void **state)
{
    (void)state;
    const float scale[2] = {0.5f, 2.0f};
    /* row 0 (scale 0.5): 1.25 -> 2.5 -> 2 (even), 1.75 -> 3.5 -> 4, -1.25 -> -2, 64 -> 128 -> clip
     * 127 row 1 (scale 2): 5 -> 2.5 -> 2, -300 -> -150 -> clip -128, 0.9 -> 0, -1 -> -0.5 -> 0 */
    const float w[8] = {1.25f, 1.75f, -1.25f, 64.0f, 5.0f, -300.0f, 0.9f, -1.0f};
    const int8_t want[8] = {2, 4, -2, 127, 2, -128, 0, 0};
    int8_t q[8];
    size_t clipped;
    npk_error err = {0};
    assert_int_equal(npk_etpu_quantize_rows(w, 2, 4, scale, q, &clipped, &err), NPK_OK);
    assert_memory_equal(q, want, 8);
    assert_int_equal(clipped, 2);
    const float bad[8] = {0, 0, 0, NAN, 0, 0, 0, 0};
    assert_int_equal(npk_etpu_quantize_rows(bad, 2, 4, scale, q, &clipped, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "[0, 3]"));
    npk_error_clear(&err);
    const float zero[2] = {0.5f, 0.0f};
    assert_int_equal(npk_etpu_quantize_rows(w, 2, 4, zero, q, &clipped, &err), NPK_E_ARG);
}

/* Other templates' parameters are not Dense blobs and are refused as such. */
static void test_not_dense(void **state)
{
    (void)state;
    static const char *const others[] = {
        "gabor_64x64_p4_edgetpu.tflite", "looming_64x64_3x3_edgetpu.tflite",
        "keras_lstm_mnist_ptq_edgetpu.tflite", "split_concat_edgetpu.tflite", "dense_256.tflite"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        etpu_fx f;
        npk_etpu_dense d;
        npk_error err = {0};
        etpu_load(others[i], &f);
        assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_E_UNSUPPORTED);
        assert_non_null(strstr(err.msg, "not a Dense template"));
        etpu_unload(&f);
    }
}

/* set-weights: only the blob's weight bytes change; same weights, same file. */
static void test_set_weights(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_OK);
    int8_t *w = malloc(65536);
    uint8_t *out;
    npk_etpu_dense_weights(&d, w, &err);
    assert_int_equal(npk_etpu_dense_set_weights(&d, f.map.data, f.map.size, w, &out, &err), NPK_OK);
    assert_memory_equal(out, f.map.data, f.map.size);
    free(out);
    for (int i = 0; i < 65536; i++) w[i] = (int8_t)(i * 31 + 7);
    assert_int_equal(npk_etpu_dense_set_weights(&d, f.map.data, f.map.size, w, &out, &err), NPK_OK);
    size_t lo = f.map.size, hi = 0;
    for (size_t i = 0; i < f.map.size; i++)
        if (out[i] != f.map.data[i]) {
            lo = i < lo ? i : lo;
            hi = i;
        }
    /* changes only inside the weight bytes of the blob (never its overheads) */
    assert_true(lo >= d.blob_offset + 512 && hi < d.blob_offset + d.blob_size);
    for (size_t g = 0; g < 4; g++)
        assert_memory_equal(out + d.blob_offset + g * 16896, f.map.data + d.blob_offset + g * 16896,
                            512);
    /* the new file parses and holds the new weights */
    npk_etpu_model m2;
    npk_etpu_dense d2;
    int8_t *back = malloc(65536);
    assert_int_equal(npk_etpu_parse(out, f.map.size, &m2, &err), NPK_OK);
    assert_int_equal(npk_etpu_dense_init(&m2, &d2, &err), NPK_OK);
    npk_etpu_dense_weights(&d2, back, &err);
    assert_memory_equal(back, w, 65536);
    npk_etpu_dense_free(&d2);
    npk_etpu_free(&m2);
    free(back);
    free(out);
    free(w);
    npk_etpu_dense_free(&d);
    etpu_unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_against_formula),
        cmocka_unit_test(test_golden_hash_256),
        cmocka_unit_test(test_dense_256_round_trip),
        cmocka_unit_test(test_per_channel_quantisation),
        cmocka_unit_test(test_rounding_and_clipping),
        cmocka_unit_test(test_not_dense),
        cmocka_unit_test(test_set_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
