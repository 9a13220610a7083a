/* SOFTMAX over the last dimension: uint8 -> uint8 (scale 1/256, zero point
 * 0), int8 -> int8 (scale 1/256, zero point -128), float32.
 *
 * Quantised definition: TFLite's reference_ops::Softmax (softmax.h), the
 * fixed-point path also used by TFLite Micro and TFLite's reference kernel:
 * input differences to the row maximum scaled to Q5.26 by
 * PreprocessSoftmaxScaling(beta, input_scale, 5), gemmlowp's
 * exp_on_negative_values, a Q12.19 sum, its reciprocal by
 * one_over_one_plus_x_for_x_in_0_1, and a rounding shift to 8 bits. Fully
 * integer, so identical on every machine. (TFLite's optimized CPU kernel and
 * XNNPACK use float lookup tables instead: docs/tflite.md gives the
 * tolerance.) Float: reference_ops::Softmax (expf, float sums). */
#include <math.h>

#include "tflite/kernel.h"
#include "tflite/qmath.h"

#define DIFF_BITS  5  /* kScaledDiffIntegerBits */
#define ACCUM_BITS 12 /* kAccumulationIntegerBits */

typedef struct softmax {
    int8_t type;
    size_t rows, depth;
    int32_t mult, left_shift, diff_min;
    float beta;
} softmax;

/* ---- gemmlowp fixed point (int32 raw values) ---- */

static inline int32_t fp_mul(int32_t a, int32_t b)
{
    return npk_tfl_srdhm(a, b);
}

static inline int32_t fp_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t fp_sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* SaturatingRoundingMultiplyByPOT<e>. */
static inline int32_t fp_pot(int32_t x, int e)
{
    if (e < 0) return npk_tfl_rdbpot(x, -e);
    if (e == 0) return x;
    const int32_t threshold = (int32_t)((1u << (31 - e)) - 1);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

static inline int32_t rounding_half_sum(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + b;
    return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static int32_t exp_quarter(int32_t a)
{
    const int32_t constant_term = 1895147668;    /* exp(-1/8) */
    const int32_t constant_1_over_3 = 715827883; /* 1/3 */
    const int32_t x = fp_add(a, 1 << 28);        /* a + 1/8 */
    const int32_t x2 = fp_mul(x, x), x3 = fp_mul(x2, x), x4 = fp_mul(x2, x2);
    const int32_t x4_over_4 = fp_pot(x4, -2);
    const int32_t poly = fp_pot(fp_add(fp_mul(fp_add(x4_over_4, x3), constant_1_over_3), x2), -1);
    return fp_add(constant_term, fp_mul(constant_term, fp_add(x, poly)));
}

/* exp(a) for a <= 0 given with `ibits` integer bits; Q0.31 result. */
static int32_t exp_negative(int32_t a, int ibits)
{
    const int fbits = 31 - ibits;
    const int32_t quarter = 1 << (fbits - 2);
    const int32_t mask = quarter - 1;
    const int32_t a_mod = fp_sub(a & mask, quarter);
    int32_t result = exp_quarter(fp_pot(a_mod, ibits)); /* Rescale<0> */
    const int32_t remainder = fp_sub(a_mod, a);
    static const struct {
        int exponent;
        int32_t mult;
    } barrel[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                  {2, 39332535},    {3, 720401},      {4, 242}};
    for (int i = 0; i < 7; i++)
        if (ibits > barrel[i].exponent && (remainder & (1 << (fbits + barrel[i].exponent))))
            result = fp_mul(result, barrel[i].mult);
    if (ibits > 5) {
        const int32_t clamp = -(1 << (36 - ibits)); /* -32 */
        if (a < clamp) result = 0;
    }
    return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (Newton-Raphson). */
static int32_t one_over_one_plus(int32_t a)
{
    const int32_t half_denominator = rounding_half_sum(a, INT32_MAX);
    const int32_t c48_17 = 1515870810, cm32_17 = -1010580540; /* Q2.29 */
    int32_t x = fp_add(c48_17, fp_mul(half_denominator, cm32_17));
    for (int i = 0; i < 3; i++) {
        const int32_t hx = fp_mul(half_denominator, x);
        const int32_t one_minus = fp_sub(1 << 29, hx);  /* F2 One */
        x = fp_add(x, fp_pot(fp_mul(x, one_minus), 2)); /* Rescale<2> of a Q4 product */
    }
    return fp_pot(x, 1); /* Rescale<0>(ExactMulByPot<-1>(x)) */
}

/* GetReciprocal: 1/x for x with `ibits` integer bits, as a Q0.31 value and
 * the number of bits x has over one. */
static int32_t reciprocal(int32_t x, int ibits, int *bits_over_unit)
{
    int headroom = 0;
    while (headroom < 32 && !((uint32_t)x & (0x80000000u >> headroom))) headroom++;
    *bits_over_unit = ibits - headroom;
    const uint32_t shifted = headroom >= 32 ? 0 : (uint32_t)x << headroom;
    return one_over_one_plus((int32_t)(shifted - 0x80000000u));
}

/* ---- the kernel ---- */

static npk_status softmax_prepare(npk_tfl_plan *p, npk_tfl_node *n)
{
    npk_status st;
    if ((st = npk_tfl_k_io(p, n, 1, 1, 1, 1))) return st;
    const npk_tfl_rt *in = n->in[0], *out = n->out[0];
    const int8_t type = in->type;
    if (type != NPK_TFL_UINT8 && type != NPK_TFL_INT8 && type != NPK_TFL_FLOAT32)
        return npk_tfl_k_unsupported(p, n, "input type %s", npk_tfl_type_name(type));
    if ((st = npk_tfl_k_type(p, n, out, "output", type))) return st;
    if (in->ndim < 1) return npk_tfl_k_fail(p, n, "input is a scalar");
    if ((st = npk_tfl_k_output_shape(p, n, 0, in->ndim, in->dims))) return st;
    softmax *s = npk_tfl_k_alloc(p, n, sizeof *s);
    if (!s) return NPK_E_NOMEM;
    n->params = s;
    s->type = type;
    s->depth = (size_t)in->dims[in->ndim - 1];
    s->rows = s->depth ? in->count / s->depth : 0;
    s->beta = npk_tfl_opt_float(n->opt, "beta", 0.0f);
    if (!isfinite(s->beta)) return npk_tfl_k_fail(p, n, "beta %g", (double)s->beta);
    if (type == NPK_TFL_FLOAT32) return NPK_OK;
    float si, so;
    int32_t zi, zo;
    if ((st = npk_tfl_k_quant(p, n, in, "input", &si, &zi)) ||
        (st = npk_tfl_k_quant(p, n, out, "output", &so, &zo)))
        return st;
    /* softmax.cc: uint8 out has zero point 0 (scale 1/256 within 0.001/256),
     * int8 out zero point -128 and scale exactly 1/256. */
    if (type == NPK_TFL_UINT8 ? (zo != 0 || fabsf(so - 1.0f / 256) > 0.001f / 256)
                              : (zo != -128 || so != 1.0f / 256))
        return npk_tfl_k_unsupported(p, n, "output quantisation %g, %d (expected 1/256, %d)",
                                     (double)so, zo, type == NPK_TFL_UINT8 ? 0 : -128);
    /* PreprocessSoftmaxScaling(beta, input_scale, 5). */
    double real = (double)s->beta * (double)si * (double)(1 << (31 - DIFF_BITS));
    if (real > 2147483647.0) real = 2147483647.0;
    /* QuantizeMultiplierGreaterThanOne: TFLite fails below one. */
    if (!(real > 1.0))
        return npk_tfl_k_unsupported(p, n, "beta * input scale %g is too small",
                                     (double)s->beta * (double)si);
    int shift;
    npk_q_quantize_multiplier(real, &s->mult, &shift);
    s->left_shift = shift; /* 0 .. 31 for 1 < real < 2^31 */
    /* diff_min = -CalculateInputRadius(5, left_shift, 31). */
    const double radius = 1.0 * ((1 << DIFF_BITS) - 1) * (double)(1ll << (31 - DIFF_BITS)) /
                          (double)(1ll << s->left_shift);
    s->diff_min = -(int32_t)floor(radius);
    return NPK_OK;
}

static void softmax_row_q(const softmax *s, const uint8_t *in, uint8_t *out)
{
    const bool sg = s->type == NPK_TFL_INT8;
    const int32_t tmin = sg ? -128 : 0, tmax = sg ? 127 : 255;
    int32_t max = tmin;
    for (size_t c = 0; c < s->depth; c++) {
        const int32_t v = npk_tfl_ld8(in, c, sg);
        if (v > max) max = v;
    }
    int32_t sum = 0; /* Q12.19 */
    for (size_t c = 0; c < s->depth; c++) {
        const int32_t diff = npk_tfl_ld8(in, c, sg) - max;
        if (diff >= s->diff_min) {
            /* MultiplyByQuantizedMultiplierGreaterThanOne */
            const int32_t scaled =
                npk_tfl_srdhm((int32_t)((uint32_t)diff << s->left_shift), s->mult);
            sum = fp_add(sum, fp_pot(exp_negative(scaled, DIFF_BITS), -ACCUM_BITS));
        }
    }
    int bits_over_unit;
    const int32_t scale = reciprocal(sum, ACCUM_BITS, &bits_over_unit);
    int exponent = bits_over_unit + 31 - 8;
    if (exponent < 0) exponent = 0; /* cannot happen: sum >= 1 */
    if (exponent > 31) exponent = 31;
    for (size_t c = 0; c < s->depth; c++) {
        const int32_t diff = npk_tfl_ld8(in, c, sg) - max;
        int32_t v = tmin;
        if (diff >= s->diff_min) {
            const int32_t scaled =
                npk_tfl_srdhm((int32_t)((uint32_t)diff << s->left_shift), s->mult);
            const int32_t e = exp_negative(scaled, DIFF_BITS);
            v = npk_tfl_clamp(npk_tfl_rdbpot(fp_mul(scale, e), exponent) + tmin, tmin, tmax);
        }
        out[c] = (uint8_t)v;
    }
}

static void softmax_row_f(const softmax *s, const float *in, float *out)
{
    float max = -3.4028235e38f;
    for (size_t c = 0; c < s->depth; c++) max = in[c] > max ? in[c] : max;
    float sum = 0.0f;
    for (size_t c = 0; c < s->depth; c++) {
        const float d = (in[c] - max) * s->beta;
        out[c] = expf(d);
        sum += out[c];
    }
    for (size_t c = 0; c < s->depth; c++) out[c] = out[c] / sum;
}

static npk_status softmax_eval(npk_tfl_exec *x, const npk_tfl_node *n)
{
    (void)x;
    const softmax *s = n->params;
    const size_t es = s->type == NPK_TFL_FLOAT32 ? 4 : 1;
    for (size_t r = 0; r < s->rows; r++) {
        const uint8_t *in = n->in[0]->data + r * s->depth * es;
        uint8_t *out = n->out[0]->data + r * s->depth * es;
        if (es == 4)
            softmax_row_f(s, (const float *)in, (float *)out);
        else
            softmax_row_q(s, in, out);
    }
    return NPK_OK;
}

const npk_tfl_kernel npk_tfl_k_softmax = {NPK_TFL_OP_SOFTMAX, NULL,
                                          NPK_TFL_T(NPK_TFL_UINT8) | NPK_TFL_T(NPK_TFL_INT8) |
                                              NPK_TFL_T(NPK_TFL_FLOAT32),
                                          softmax_prepare, softmax_eval};
