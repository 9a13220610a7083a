/* Reference execution of Dense templates against a float matmul, within
 * the bound quantisation allows, plus exact integer cases and the XOR
 * convention of int8 tensors on the device. */
#include "etpu_test.h"

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* y = dense(x) on the template's own weights vs the float product with the
 * dequantised weights: the error is at most half an output step plus the
 * input rounding propagated through |W|. */
static void check_matmul(const npk_etpu_dense *d, const int8_t *w, const float *wf, size_t batch,
                         uint64_t seed, bool float_weights_given, const float *wtrue)
{
    const size_t n = d->n;
    float *x = malloc(batch * n * sizeof *x), *y = malloc(batch * n * sizeof *y);
    npk_error err = {0};
    const float xlo = (float)((0 - d->in_zero_point) * (double)d->in_scale),
                xhi = (float)((255 - d->in_zero_point) * (double)d->in_scale);
    for (size_t i = 0; i < batch * n; i++) x[i] = xlo + (xhi - xlo) * (float)npk_randf(&seed);
    assert_int_equal(npk_etpu_dense_matmul(d, w, x, batch, y, &err), NPK_OK);
    const float ylo = (float)((0 - d->out_zero_point) * (double)d->out_scale),
                yhi = (float)((255 - d->out_zero_point) * (double)d->out_scale);
    double worst = 0;
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < n; r++) {
            const float *wr = (float_weights_given ? wtrue : wf) + r * n;
            double ref = 0, sum_abs_w = 0, sum_abs_x = 0;
            for (size_t c = 0; c < n; c++) {
                ref += (double)wr[c] * x[b * n + c];
                sum_abs_w += fabs(wr[c]);
                sum_abs_x += fabs(x[b * n + c]);
            }
            double bound = d->out_scale / 2 + sum_abs_w * d->in_scale / 2 + 1e-5;
            if (float_weights_given) bound += sum_abs_x * d->w_scale[r] / 2;
            double e = fabs(y[b * n + r] - clampf((float)ref, ylo, yhi));
            if (e > bound)
                fail_msg("row %zu of batch %zu: error %g exceeds the bound %g", r, b, e, bound);
            worst = e > worst ? e : worst;
        }
    assert_true(worst > 0); /* it is quantised, not a float copy */
    free(x);
    free(y);
}

static void test_dense_256_matmul(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_OK);
    const size_t n = d.n;
    int8_t *w = malloc(n * n);
    float *wf = malloc(n * n * sizeof *wf);
    npk_etpu_dense_weights(&d, w, &err);
    for (size_t r = 0; r < n; r++)
        for (size_t c = 0; c < n; c++) wf[r * n + c] = (float)w[r * n + c] * d.w_scale[r];
    check_matmul(&d, w, wf, 8, 1, false, NULL);

    /* New float weights inside each channel's range, quantised per channel. */
    uint64_t seed = 99;
    for (size_t r = 0; r < n; r++)
        for (size_t c = 0; c < n; c++)
            wf[r * n + c] = (float)((npk_randf(&seed) * 2 - 1) * 120 * d.w_scale[r] / 4);
    size_t clipped;
    assert_int_equal(npk_etpu_quantize_rows(wf, n, n, d.w_scale, w, &clipped, &err), NPK_OK);
    assert_int_equal(clipped, 0);
    float *wq = malloc(n * n * sizeof *wq);
    for (size_t r = 0; r < n; r++)
        for (size_t c = 0; c < n; c++) wq[r * n + c] = (float)w[r * n + c] * d.w_scale[r];
    check_matmul(&d, w, wq, 4, 2, true, wf);
    free(wq);
    free(w);
    free(wf);
    npk_etpu_dense_free(&d);
    etpu_unload(&f);
}

/* Exact integer behaviour: inputs at the zero point give the output zero
 * point; a one-hot input picks one weight column times the multiplier. */
static void test_exact_cases(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(&f.m, &d, &err), NPK_OK);
    const size_t n = d.n;
    int8_t *w = malloc(n * n);
    uint8_t *x = malloc(2 * n), *y = malloc(2 * n);
    npk_etpu_dense_weights(&d, w, &err);
    memset(x, d.in_zero_point, n);
    memset(x + n, d.in_zero_point, n);
    x[n + 17] = (uint8_t)(d.in_zero_point + 100);
    assert_int_equal(npk_etpu_dense_run(&d, w, x, 2, y, &err), NPK_OK);
    for (size_t r = 0; r < n; r++) {
        assert_int_equal(y[r], d.out_zero_point);
        long v = lround(100.0 * w[r * n + 17] * d.multiplier[r]) + d.out_zero_point;
        v = v < 0 ? 0 : v > 255 ? 255 : v;
        assert_int_equal(y[n + r], v);
    }
    /* The device view of uint8 tensors is the same bytes. */
    uint8_t *yd = malloc(2 * n);
    assert_int_equal(npk_etpu_dense_run_device(&d, w, x, 2, yd, &err), NPK_OK);
    assert_memory_equal(yd, y, 2 * n);
    free(yd);

    /* An int8 template (same numbers, types int8, zero points shifted by
     * 128): device bytes are the CPU's XOR 0x80, both ways. */
    npk_etpu_dense d8 = d;
    d8.in_type = d8.out_type = NPK_TFL_INT8;
    d8.in_zero_point -= 128;
    d8.out_zero_point -= 128;
    uint8_t *x8 = malloc(2 * n), *y8 = malloc(2 * n), *y8d = malloc(2 * n), *xd = malloc(2 * n);
    for (size_t i = 0; i < 2 * n; i++) x8[i] = (uint8_t)(x[i] ^ 0x80); /* same values, int8 */
    assert_int_equal(npk_etpu_dense_run(&d8, w, x8, 2, y8, &err), NPK_OK);
    for (size_t i = 0; i < 2 * n; i++) assert_int_equal((uint8_t)(y8[i] ^ 0x80), y[i]);
    for (size_t i = 0; i < 2 * n; i++) xd[i] = (uint8_t)(x8[i] ^ 0x80);
    assert_int_equal(npk_etpu_dense_run_device(&d8, w, xd, 2, y8d, &err), NPK_OK);
    for (size_t i = 0; i < 2 * n; i++) assert_int_equal(y8d[i], (uint8_t)(y8[i] ^ 0x80));
    free(x8);
    free(y8);
    free(y8d);
    free(xd);
    free(w);
    free(x);
    free(y);
    npk_etpu_dense_free(&d);
    etpu_unload(&f);
}

/* The synthetic template computes within the same bound. */
static void test_synthetic_matmul(void **state)
{
    (void)state;
    npk_etpu_synth_opts o = {.n = 192};
    uint8_t *buf;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_etpu_synth_dense(&o, &buf, &len, &err), NPK_OK);
    npk_etpu_model m;
    npk_etpu_dense d;
    assert_int_equal(npk_etpu_parse(buf, len, &m, &err), NPK_OK);
    assert_int_equal(npk_etpu_dense_init(&m, &d, &err), NPK_OK);
    int8_t *w = malloc(192 * 192);
    float *wf = malloc(192 * 192 * sizeof *wf);
    npk_etpu_dense_weights(&d, w, &err);
    for (size_t r = 0; r < 192; r++)
        for (size_t c = 0; c < 192; c++) wf[r * 192 + c] = (float)w[r * 192 + c] * d.w_scale[r];
    check_matmul(&d, w, wf, 3, 5, false, NULL);
    free(w);
    free(wf);
    npk_etpu_dense_free(&d);
    npk_etpu_free(&m);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_256_matmul),
        cmocka_unit_test(test_exact_cases),
        cmocka_unit_test(test_synthetic_matmul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
