/* Helpers shared by the emulator and device tests: random matrices, an
 * independent writer of the native layouts (the reference's formulas,
 * little-endian bytes), an independent CPU matmul, and comparisons.
 * Header-only (each test is its own program). */
#ifndef RK_EMU_UTIL_H
#define RK_EMU_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/half.h"
#include "npukit/rknpu_matmul.h"

/* Host matrices of one matmul: A (M x K) and B (K x N) as fp16 bits or
 * int8, in row-major order; the exact reference in double. */
typedef struct rk_mats {
    uint32_t m, k, n;
    npk_rk_dtype dt;
    uint16_t *a16, *b16;
    int8_t *a8, *b8;
    double *ref; /* M x N exact products (fp16 inputs are exact in double) */
    double *mag; /* M x N sum of |a.b|, for error bounds */
} rk_mats;

/* integer: fp16 values are small integers (so fp32 sums are exact). */
static inline void rk_mats_make(rk_mats *x, uint32_t m, uint32_t k, uint32_t n, npk_rk_dtype dt,
                                bool integer, uint64_t seed)
{
    memset(x, 0, sizeof *x);
    x->m = m, x->k = k, x->n = n, x->dt = dt;
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t na = (size_t)m * k, nb = (size_t)k * n;
    double *fa = malloc(na * sizeof(double)), *fb = malloc(nb * sizeof(double));
    if (dt == NPK_RK_INT8) {
        x->a8 = malloc(na);
        x->b8 = malloc(nb);
        for (size_t i = 0; i < na; i++) fa[i] = x->a8[i] = (int8_t)npk_rand(&rng);
        for (size_t i = 0; i < nb; i++) fb[i] = x->b8[i] = (int8_t)npk_rand(&rng);
    } else {
        x->a16 = malloc(na * 2);
        x->b16 = malloc(nb * 2);
        for (size_t i = 0; i < na + nb; i++) {
            float v = integer ? (float)((int)(npk_rand(&rng) % 17) - 8)
                              : (float)(npk_randf(&rng) * 4.0 - 2.0);
            uint16_t h = npk_f32_to_f16(v);
            if (i < na) {
                x->a16[i] = h;
                fa[i] = npk_f16_to_f32(h);
            } else {
                x->b16[i - na] = h;
                fb[i - na] = npk_f16_to_f32(h);
            }
        }
    }
    x->ref = calloc((size_t)m * n, sizeof(double));
    x->mag = calloc((size_t)m * n, sizeof(double));
    for (size_t i = 0; i < m; i++)
        for (size_t kk = 0; kk < k; kk++) {
            double av = fa[i * k + kk];
            if (av == 0) continue;
            for (size_t j = 0; j < n; j++) {
                x->ref[i * n + j] += av * fb[kk * n + j];
                x->mag[i * n + j] += fabs(av * fb[kk * n + j]);
            }
        }
    free(fa);
    free(fb);
}

static inline void rk_mats_free(rk_mats *x)
{
    free(x->a16);
    free(x->b16);
    free(x->a8);
    free(x->b8);
    free(x->ref);
    free(x->mag);
}

static inline void rk_put_elem(uint8_t *dst, size_t index, unsigned es, uint32_t v)
{
    for (unsigned i = 0; i < es; i++) dst[index * es + i] = (uint8_t)(v >> (8 * i));
}

/* Rows [m0, m0 + mt) of A in NC1HWC2 (H = mt, W = 1, C = K), little-endian:
 * feature_data(C, H, W, C2, c, h, w) of the reference, 0-based. */
static inline void rk_pack_input(const rk_mats *x, uint32_t m0, uint32_t mt, uint8_t *dst)
{
    unsigned es = x->dt == NPK_RK_INT8 ? 1 : 2, c2 = 16 / es;
    for (uint32_t h = 0; h < mt; h++)
        for (uint32_t c = 0; c < x->k; c++) {
            size_t idx = (size_t)(c / c2) * mt * c2 + (size_t)c2 * h + c % c2;
            size_t src = (size_t)(m0 + h) * x->k + c;
            rk_put_elem(dst, idx, es, es == 1 ? (uint8_t)x->a8[src] : x->a16[src]);
        }
}

/* B (K x N) in the packed weight layout: weight_fp16 / weight_int8 of the
 * reference, 0-based. */
static inline void rk_pack_weights(const rk_mats *x, uint8_t *dst)
{
    unsigned es = x->dt == NPK_RK_INT8 ? 1 : 2, g = x->dt == NPK_RK_INT8 ? 32 : 16;
    for (uint32_t n = 0; n < x->n; n++)
        for (uint32_t c = 0; c < x->k; c++) {
            size_t idx = (size_t)(c / 32) * 32 * g + (size_t)(n / g) * g * x->k + c % 32 +
                         (size_t)(n % g) * 32;
            size_t src = (size_t)c * x->n + n;
            rk_put_elem(dst, idx, es, es == 1 ? (uint8_t)x->b8[src] : x->b16[src]);
        }
}

/* Element (m, n) of an output block of mt rows in NC1HWC2 (C2 = 16 bytes /
 * element size), little-endian, as a double. */
static inline double rk_out_elem(const uint8_t *blk, npk_rk_dtype dt, uint32_t mt, uint32_t h,
                                 uint32_t n)
{
    unsigned es = dt == NPK_RK_FP16_FP16 ? 2 : 4, c2 = 16 / es;
    const uint8_t *p = blk + ((size_t)(n / c2) * mt * c2 + (size_t)c2 * h + n % c2) * es;
    uint32_t u = 0;
    for (unsigned i = 0; i < es; i++) u |= (uint32_t)p[i] << (8 * i);
    if (dt == NPK_RK_INT8) return (double)(int32_t)u;
    if (dt == NPK_RK_FP16_FP16) return npk_f16_to_f32((uint16_t)u);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The value the NPU should produce for element i: exact for int8 and for
 * integer-valued fp16 (then rounded to fp16 for fp16 output). */
static inline double rk_expect(const rk_mats *x, size_t i)
{
    if (x->dt == NPK_RK_FP16_FP16) return npk_f16_to_f32(npk_f32_to_f16((float)x->ref[i]));
    return x->ref[i];
}

/* Is got acceptable for element i? exact: bit-for-bit the expected value;
 * otherwise within fp32 accumulation error (K * 2^-24 relative to the sum
 * of magnitudes) plus the fp16 output rounding. */
static inline bool rk_close(const rk_mats *x, size_t i, double got, bool exact)
{
    double want = rk_expect(x, i);
    if (exact || x->dt == NPK_RK_INT8) return got == want;
    double tol = (x->k + 2) * ldexp(1.0, -24) * x->mag[i] + 1e-30;
    if (x->dt == NPK_RK_FP16_FP16) tol += ldexp(fabs(x->ref[i]), -10);
    return fabs(got - x->ref[i]) <= tol;
}

#endif
