/* Internal: gemmlowp's fixed-point functions on int32 raw values, as
 * TFLite's reference kernels use them (SOFTMAX's exp and reciprocal, DIV's
 * GetReciprocal). */
#ifndef NPK_TFL_FIXEDPOINT_H
#define NPK_TFL_FIXEDPOINT_H

#include <stdint.h>

#include "tflite/qmath.h"

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

static inline int32_t fp_rounding_half_sum(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + b;
    return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static inline int32_t fp_exp_quarter(int32_t a)
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
static inline int32_t fp_exp_negative(int32_t a, int ibits)
{
    const int fbits = 31 - ibits;
    const int32_t quarter = 1 << (fbits - 2);
    const int32_t mask = quarter - 1;
    const int32_t a_mod = fp_sub(a & mask, quarter);
    int32_t result = fp_exp_quarter(fp_pot(a_mod, ibits)); /* Rescale<0> */
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
static inline int32_t fp_one_over_one_plus(int32_t a)
{
    const int32_t half_denominator = fp_rounding_half_sum(a, INT32_MAX);
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
static inline int32_t fp_reciprocal(int32_t x, int ibits, int *bits_over_unit)
{
    int headroom = 0;
    while (headroom < 32 && !((uint32_t)x & (0x80000000u >> headroom))) headroom++;
    *bits_over_unit = ibits - headroom;
    const uint32_t shifted = headroom >= 32 ? 0 : (uint32_t)x << headroom;
    return fp_one_over_one_plus((int32_t)(shifted - 0x80000000u));
}

#endif
