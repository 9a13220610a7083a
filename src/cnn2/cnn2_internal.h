/* Pieces shared by the reference and the fast CNN v2 renderers. Everything
 * here is the definition of the semantics: both renderers call these scalar
 * functions (the fast one also has vector twins in cnn2_kernel.c that perform
 * the same IEEE operations in the same order, hence the same bits). */
#ifndef NPK_CNN2_INTERNAL_H
#define NPK_CNN2_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "npukit/cnn2_render.h"
#include "npukit/half.h"

/* Separate multiply and add everywhere: a fused multiply-add would change
 * the bits (GCC in ISO C mode already never contracts). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static inline uint32_t cnn2_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float cnn2_u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Constants of the exp approximation (shared with the vector code). */
#define CNN2_EXP_LO    -86.0f /* e^-86 is still a normal float; sigmoid(86) rounds to 1 */
#define CNN2_EXP_HI    88.0f
#define CNN2_LOG2E     1.44269504088896341f
#define CNN2_ROUNDER   12582912.0f  /* 1.5 * 2^23: adding it rounds to an integer */
#define CNN2_LN2_HI    0.693359375f /* ln 2 = LN2_HI + LN2_LO, LN2_HI with 9 bits */
#define CNN2_LN2_LO    -2.12194440e-4f
#define CNN2_CANON_NAN 0x7fc00000u

/* e^x in f32: x = n ln2 + r with |r| <= ln2/2, e^r by its Taylor series to
 * degree 7 (error < 1e-8 relative), 2^n added to the exponent bits. Only
 * +, -, *, compares and integer adds, so a vector version is bit-identical.
 * Not for NaN (callers handle it). */
static inline float cnn2_expf(float x)
{
    x = x < CNN2_EXP_LO ? CNN2_EXP_LO : x;
    x = x > CNN2_EXP_HI ? CNN2_EXP_HI : x;
    float t = x * CNN2_LOG2E;
    t = t + CNN2_ROUNDER;
    float n = t - CNN2_ROUNDER;
    float r = x - n * CNN2_LN2_HI;
    r = r - n * CNN2_LN2_LO;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    /* n sits in the low mantissa bits of t. */
    uint32_t ni = cnn2_f2u(t) - cnn2_f2u(CNN2_ROUNDER);
    return cnn2_u2f(cnn2_f2u(p) + (ni << 23));
}

static inline float cnn2_sigmoid(float a)
{
    return 1.0f / (1.0f + cnn2_expf(-a));
}

/* What a layer does to its accumulated sums. */
typedef enum cnn2_act { CNN2_SIGMOID, CNN2_RELU, CNN2_CLAMP01 } cnn2_act;

static inline cnn2_act cnn2_layer_act(npk_cnn2_activation mode, uint32_t layer, uint32_t n)
{
    bool last = layer + 1 == n;
    if (mode == NPK_CNN2_ACT_LEGACY_CLAMP) return last ? CNN2_CLAMP01 : CNN2_RELU;
    return layer == 0 || last ? CNN2_SIGMOID : CNN2_RELU;
}

/* Activation; NaN in gives the one canonical quiet NaN out, so both
 * renderers agree on NaN bits too (only NaN/inf weights produce NaN). */
static inline float cnn2_activate(float a, cnn2_act act)
{
    float v;
    if (act == CNN2_SIGMOID)
        v = cnn2_sigmoid(a);
    else if (act == CNN2_RELU)
        v = a < 0.0f ? 0.0f : a;
    else {
        v = a < 0.0f ? 0.0f : a;
        v = v > 1.0f ? 1.0f : v;
    }
    return a == a ? v : cnn2_u2f(CNN2_CANON_NAN);
}

/* Faithful-mode rounding: f32 -> nearest-even f16 -> f32. */
static inline float cnn2_round(float v, npk_cnn2_precision p)
{
    return p == NPK_CNN2_PREC_F16 ? npk_f16_to_f32(npk_f32_to_f16(v)) : v;
}

/* ---- static features ---- */

/* A mip pyramid of R, G, B, D in f32: level 0 is the image itself. */
typedef struct cnn2_mips {
    uint32_t w[NPK_CNN2_MAX_MIP + 1], h[NPK_CNN2_MAX_MIP + 1];
    const float *level[NPK_CNN2_MAX_MIP + 1]; /* 4 floats per texel */
    float *owned;
} cnn2_mips;

npk_status cnn2_mips_build(cnn2_mips *m, const npk_cnn2_image *img, uint32_t levels,
                           npk_error *err);
void cnn2_mips_free(cnn2_mips *m);

/* Bilinear sampling position along one axis: texel centre of pixel i of n,
 * mapped into a level of size nm, in double. */
typedef struct cnn2_tap {
    uint32_t i0, i1; /* clamped tap indices */
    double a;        /* weight of i1 */
} cnn2_tap;

static inline cnn2_tap cnn2_tap_at(uint32_t i, uint32_t n, uint32_t nm)
{
    double u = ((double)i + 0.5) / (double)n;
    double f = u * (double)nm - 0.5;
    double f0 = floor(f);
    cnn2_tap t;
    long i0 = (long)f0;
    t.a = f - f0;
    t.i0 = (uint32_t)(i0 < 0 ? 0 : i0 > (long)nm - 1 ? (long)nm - 1 : i0);
    t.i1 = (uint32_t)(i0 + 1 < 0 ? 0 : i0 + 1 > (long)nm - 1 ? (long)nm - 1 : i0 + 1);
    return t;
}

static inline double cnn2_lerp(double a, double b, double t)
{
    return a + (b - a) * t;
}

/* The f32 value of p_c at a level > 0 for taps tx, ty. */
static inline float cnn2_bilinear(const float *lvl, uint32_t lw, cnn2_tap tx, cnn2_tap ty,
                                  uint32_t c)
{
    double t00 = lvl[((size_t)ty.i0 * lw + tx.i0) * 4 + c];
    double t10 = lvl[((size_t)ty.i0 * lw + tx.i1) * 4 + c];
    double t01 = lvl[((size_t)ty.i1 * lw + tx.i0) * 4 + c];
    double t11 = lvl[((size_t)ty.i1 * lw + tx.i1) * 4 + c];
    return (float)cnn2_lerp(cnn2_lerp(t00, t10, tx.a), cnn2_lerp(t01, t11, tx.a), ty.a);
}

/* uv_x, uv_y and sin(10 uv_x), unrounded f32. */
static inline float cnn2_uv(uint32_t i, uint32_t n)
{
    return ((float)i + 0.5f) / (float)n;
}
float cnn2_sin10(float uvx);

/* ---- fast renderer kernels (cnn2_kernel.c) ---- */

/* One output row of one 12 -> 4 layer: acc[o][x] for x < wpad (a multiple
 * of 16). rows[i][ky] points at column 0 of the input row y + ky - k/2 of
 * channel i (the border rule already applied to rows outside the image);
 * each row is readable from column -k/2 to wpad + k/2 - 1. w: weights as
 * [i][ky][kx][o] f32. */
typedef struct cnn2_row_job {
    const float *rows[NPK_CNN2_CHANNELS][NPK_CNN2_MAX_RENDER_KERNEL];
    const float *w;
    uint32_t k;
    size_t wpad;
    float *acc[NPK_CNN2_STD_OUT];
} cnn2_row_job;

typedef void (*cnn2_conv_fn)(const cnn2_row_job *job);
typedef void (*cnn2_act_fn)(float *v, size_t n, cnn2_act act);

/* The best kernels for this CPU (or the generic ones when forced). */
void cnn2_kernels(cnn2_conv_fn *conv, cnn2_act_fn *act, const char **name);

#endif
