/* The portable 8-bit inner loops (qkern.h): plain C that compilers can
 * vectorise, and the definition any SIMD replacement must match. */
#include "tflite/kernel.h"
#include "tflite/qkern.h"
#include "tflite/qmath.h"

static inline uint8_t requant(uint32_t acc, int32_t mult, int32_t shift, int32_t zero, int32_t lo,
                              int32_t hi)
{
    /* + zero wraps, like TFLite's int32 addition (reachable only with a
     * result near INT32_MAX, i.e. a multiplier above one) */
    int32_t v = (int32_t)((uint32_t)npk_tfl_mbqm((int32_t)acc, mult, (int)shift) + (uint32_t)zero);
    v = v < lo ? lo : v > hi ? hi : v;
    return (uint8_t)v;
}

uint8_t npk_tfl_qrequant(uint32_t acc, int32_t mult, int32_t shift, int32_t zero, int32_t lo,
                         int32_t hi)
{
    return requant(acc, mult, shift, zero, lo, hi);
}

static void gemm_u8(const npk_tfl_qgemm *g)
{
    const size_t k = g->k;
    for (size_t i = 0; i < g->m; i++) {
        const uint8_t *a = g->a + i * g->lda;
        uint32_t rowsum = 0;
        if (g->b_zero)
            for (size_t t = 0; t < k; t++) rowsum += a[t];
        const uint32_t corr = (uint32_t)g->b_zero * rowsum;
        uint8_t *c = g->c + i * g->ldc;
        size_t j = 0;
        for (; j + 4 <= g->n; j += 4) {
            const uint8_t *b0 = g->b + j * g->ldb, *b1 = b0 + g->ldb, *b2 = b1 + g->ldb,
                          *b3 = b2 + g->ldb;
            uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (size_t t = 0; t < k; t++) {
                const uint32_t x = a[t];
                s0 += x * b0[t];
                s1 += x * b1[t];
                s2 += x * b2[t];
                s3 += x * b3[t];
            }
            const uint32_t s[4] = {s0, s1, s2, s3};
            for (int q = 0; q < 4; q++)
                c[j + q] = requant(s[q] - corr + (uint32_t)g->bias[j + q], g->mult[j + q],
                                   g->shift[j + q], g->out_zero, g->act_min, g->act_max);
        }
        for (; j < g->n; j++) {
            const uint8_t *b = g->b + j * g->ldb;
            uint32_t s = 0;
            for (size_t t = 0; t < k; t++) s += (uint32_t)a[t] * b[t];
            c[j] = requant(s - corr + (uint32_t)g->bias[j], g->mult[j], g->shift[j], g->out_zero,
                           g->act_min, g->act_max);
        }
    }
}

static void gemm_i8(const npk_tfl_qgemm *g)
{
    const size_t k = g->k;
    for (size_t i = 0; i < g->m; i++) {
        const int8_t *a = (const int8_t *)(g->a + i * g->lda);
        uint32_t rowsum = 0;
        if (g->b_zero)
            for (size_t t = 0; t < k; t++) rowsum += (uint32_t)(int32_t)a[t];
        const uint32_t corr = (uint32_t)g->b_zero * rowsum;
        uint8_t *c = g->c + i * g->ldc;
        size_t j = 0;
        for (; j + 4 <= g->n; j += 4) {
            const int8_t *b0 = (const int8_t *)(g->b + j * g->ldb), *b1 = b0 + g->ldb,
                         *b2 = b1 + g->ldb, *b3 = b2 + g->ldb;
            uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (size_t t = 0; t < k; t++) {
                const int32_t x = a[t];
                s0 += (uint32_t)(x * b0[t]);
                s1 += (uint32_t)(x * b1[t]);
                s2 += (uint32_t)(x * b2[t]);
                s3 += (uint32_t)(x * b3[t]);
            }
            const uint32_t s[4] = {s0, s1, s2, s3};
            for (int q = 0; q < 4; q++)
                c[j + q] = requant(s[q] - corr + (uint32_t)g->bias[j + q], g->mult[j + q],
                                   g->shift[j + q], g->out_zero, g->act_min, g->act_max);
        }
        for (; j < g->n; j++) {
            const int8_t *b = (const int8_t *)(g->b + j * g->ldb);
            uint32_t s = 0;
            for (size_t t = 0; t < k; t++) s += (uint32_t)((int32_t)a[t] * b[t]);
            c[j] = requant(s - corr + (uint32_t)g->bias[j], g->mult[j], g->shift[j], g->out_zero,
                           g->act_min, g->act_max);
        }
    }
}

static void gemm(const npk_tfl_qgemm *g)
{
    if (g->is_signed)
        gemm_i8(g);
    else
        gemm_u8(g);
}

static void gemm_s32(const npk_tfl_qgemm *g, int32_t *c, size_t ldc)
{
    const size_t k = g->k;
    for (size_t i = 0; i < g->m; i++) {
        const uint8_t *a = g->a + i * g->lda;
        for (size_t j = 0; j < g->n; j++) {
            const uint8_t *b = g->b + j * g->ldb;
            uint32_t s = 0;
            if (g->is_signed)
                for (size_t t = 0; t < k; t++)
                    s += (uint32_t)((int32_t)(int8_t)a[t] * (int8_t)b[t]);
            else
                for (size_t t = 0; t < k; t++) s += (uint32_t)a[t] * b[t];
            c[i * ldc + j] = (int32_t)s;
        }
    }
}

static uint32_t widen(uint8_t x, bool sgn)
{
    return sgn ? (uint32_t)(int32_t)(int8_t)x : x;
}

static void gemm_s32_blocks(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc,
                            uint32_t *rowsum)
{
    const size_t k = g->k;
    const bool sgn = g->is_signed;
    for (size_t i = 0; i < g->m; i++) {
        const uint8_t *a = g->a + i * g->lda;
        if (rowsum) {
            uint32_t rs = 0;
            for (size_t t0 = 0; t0 < k; t0 += 16)
                for (size_t u = 0; u < 16 && t0 + u < k; u++) rs += widen(a[t0 / 16 * ks + u], sgn);
            rowsum[i] = rs;
        }
        for (size_t j = 0; j < g->n; j++) {
            const uint8_t *b = g->b + j * g->ldb;
            uint32_t s = 0;
            for (size_t t0 = 0; t0 < k; t0 += 16) {
                const uint8_t *x = a + t0 / 16 * ks;
                for (size_t u = 0; u < 16 && t0 + u < k; u++)
                    s += widen(x[u], sgn) * widen(b[t0 + u], sgn);
            }
            c[i * ldc + j] = (int32_t)s;
        }
    }
}

static void dw_row(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, uint8_t *out,
                   int32_t *acc_scratch)
{
    /* Wrapping sums, like TFLite's int32 accumulators on real machines. */
    uint32_t *acc = (uint32_t *)acc_scratch;
    const int32_t oc = d->out_c, ic = d->in_c, dm = d->dm;
    const int32_t y0 = oy * d->sh - d->pad_h;
    for (int32_t ox = 0; ox < d->out_w; ox++) {
        const int32_t x0 = ox * d->sw - d->pad_w;
        for (int32_t o = 0; o < oc; o++) acc[o] = (uint32_t)d->bias[o];
        for (int32_t ky = 0; ky < d->kh; ky++) {
            const int32_t y = y0 + ky * d->dh;
            if (y < 0 || y >= d->in_h) continue;
            for (int32_t kx = 0; kx < d->kw; kx++) {
                const int32_t x = x0 + kx * d->dw;
                if (x < 0 || x >= d->in_w) continue;
                const uint8_t *px = in + ((size_t)y * d->in_w + x) * ic;
                const uint8_t *w = d->w + ((size_t)ky * d->kw + kx) * oc;
                const int32_t zi = d->in_zero, zw = d->w_zero;
                if (d->is_signed) {
                    const int8_t *p = (const int8_t *)px, *q = (const int8_t *)w;
                    if (dm == 1)
                        for (int32_t o = 0; o < oc; o++)
                            acc[o] += (uint32_t)((p[o] - zi) * (q[o] - zw));
                    else
                        for (int32_t c = 0; c < ic; c++)
                            for (int32_t m = 0; m < dm; m++)
                                acc[c * dm + m] += (uint32_t)((p[c] - zi) * (q[c * dm + m] - zw));
                } else {
                    if (dm == 1)
                        for (int32_t o = 0; o < oc; o++)
                            acc[o] += (uint32_t)((px[o] - zi) * (w[o] - zw));
                    else
                        for (int32_t c = 0; c < ic; c++)
                            for (int32_t m = 0; m < dm; m++)
                                acc[c * dm + m] += (uint32_t)((px[c] - zi) * (w[c * dm + m] - zw));
                }
            }
        }
        uint8_t *po = out + (size_t)ox * oc;
        for (int32_t o = 0; o < oc; o++)
            po[o] = requant(acc[o], d->mult[o], d->shift[o], d->out_zero, d->act_min, d->act_max);
    }
}

void npk_tfl_qdw_pixel_ref(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, int32_t ox,
                           int32_t o0, uint8_t *out_px)
{
    const int32_t y0 = oy * d->sh - d->pad_h, x0 = ox * d->sw - d->pad_w;
    for (int32_t o = o0; o < d->out_c; o++) {
        uint32_t acc = (uint32_t)d->bias[o];
        const int32_t c = o / d->dm;
        for (int32_t ky = 0; ky < d->kh; ky++) {
            const int32_t y = y0 + ky * d->dh;
            if (y < 0 || y >= d->in_h) continue;
            for (int32_t kx = 0; kx < d->kw; kx++) {
                const int32_t x = x0 + kx * d->dw;
                if (x < 0 || x >= d->in_w) continue;
                const size_t pi = ((size_t)y * d->in_w + x) * d->in_c + c,
                             wi = ((size_t)ky * d->kw + kx) * d->out_c + o;
                acc += (uint32_t)((npk_tfl_ld8(in, pi, d->is_signed) - d->in_zero) *
                                  (npk_tfl_ld8(d->w, wi, d->is_signed) - d->w_zero));
            }
        }
        out_px[o] = requant(acc, d->mult[o], d->shift[o], d->out_zero, d->act_min, d->act_max);
    }
}

/* MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0). */
static inline int32_t mul_small(int32_t x, int32_t m, int32_t s)
{
    return npk_tfl_rdbpot(npk_tfl_srdhm(x, m), -s);
}

static void add(const npk_tfl_qadd *q, const uint8_t *a, const uint8_t *b, uint8_t *out,
                size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const int32_t x1 = npk_tfl_ld8(a, i, q->is_signed), x2 = npk_tfl_ld8(b, i, q->is_signed);
        const int32_t s1 = mul_small((x1 + q->off1) * (1 << NPK_TFL_QADD_LEFT), q->m1, q->s1);
        const int32_t s2 = mul_small((x2 + q->off2) * (1 << NPK_TFL_QADD_LEFT), q->m2, q->s2);
        const int32_t r = mul_small(s1 + s2, q->mo, q->so) + q->out_zero;
        out[i] = (uint8_t)npk_tfl_clamp(r, q->act_min, q->act_max);
    }
}

const npk_tfl_qkern npk_tfl_qkern_portable = {"portable", false,  NULL, gemm,     NULL,
                                              NULL,       dw_row, add,  gemm_s32, gemm_s32_blocks};
