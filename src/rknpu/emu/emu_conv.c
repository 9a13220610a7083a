/* The general convolution of a decoded task: any kernel size, stride,
 * dilation and padding, direct or depthwise. Direct loops without im2col:
 * the input cube is read once into a pixel-major buffer, the weights once
 * into [tap][channel][kernel] order, and every output pixel accumulates
 * over its taps with the kernel index innermost (contiguous, vectorisable).
 *
 * Padding: a tap outside the input reads the pad value of every channel
 * lane: for int8, CNA_PAD_CON1 byte 1 for the odd channels among the first
 * 32 of each 64-channel group and byte 0 for the others (docs/rknpu.md,
 * "Padding"); for fp16, the low 16 bits as an fp16 value. */
#include <string.h>

#include "emu_internal.h"
#include "npukit/bytes.h"
#include "npukit/half.h"

static int16_t pad_lane_int8(uint32_t pad, uint32_t ch)
{
    unsigned byte = ((ch % 64) < 32 && (ch & 1)) ? 1 : 0;
    return (int8_t)(uint8_t)(pad >> (8 * byte));
}

/* The task's input cube as pixel-major int16 (P_in x C), and the pad lanes;
 * with psum, also each input pixel's sum over its channels (the pad lanes'
 * at psum[P_in]) for the window sums of CPEND, wrapping like the sums of
 * the convolution loops. */
static int16_t *load_int(npk_rk_emu *e, const emu_task *t, int16_t **padv, uint32_t **psum)
{
    size_t pix = (size_t)t->w * t->h, C = t->c;
    /* (pix + 1) * C int16 is a multiple of 32 bytes (C % 16 == 0): the
     * sums follow, aligned. */
    int16_t *x = emu_scratch_get(&e->a, (pix * C + C) * sizeof(int16_t) + (pix + 1) * 4);
    if (!x) return NULL;
    uint32_t *ps = psum ? (uint32_t *)(void *)(x + pix * C + C) : NULL;
    if (ps) memset(ps, 0, (pix + 1) * sizeof *ps);
    for (uint32_t cp = 0; cp < C / 16; cp++)
        for (uint32_t y = 0; y < t->h; y++) {
            const uint8_t *row = t->in + (uint64_t)cp * t->surf_pitch + (uint64_t)y * t->line_pitch;
            for (uint32_t xx = 0; xx < t->w; xx++) {
                int16_t *d = x + ((size_t)y * t->w + xx) * C + cp * 16;
                int8_t v[16]; /* a local copy: the int16 stores cannot alias it */
                memcpy(v, row + (size_t)xx * 16, 16);
                uint32_t sum = 0;
                for (int j = 0; j < 16; j++) {
                    d[j] = v[j];
                    sum += (uint32_t)(int32_t)v[j];
                }
                if (ps) ps[(size_t)y * t->w + xx] += sum;
            }
        }
    *padv = x + pix * C;
    for (uint32_t ch = 0; ch < C; ch++) (*padv)[ch] = pad_lane_int8(t->pad_value, ch);
    if (ps)
        for (uint32_t ch = 0; ch < C; ch++) ps[pix] += (uint32_t)(int32_t)(*padv)[ch];
    if (psum) *psum = ps;
    return x;
}

/* ---- direct int8 convolution ----
 *
 * Weights as int16 channel pairs per kernel, wp[((tap * C/2 + cp) * N + k) *
 * 2 + j] = weight of kernel k, tap, channel 2cp + j, so that one pair of
 * input channels times the pairs of 8 kernels is one multiply-add of 16-bit
 * lanes into 32-bit ones (AVX2 vpmaddwd). A block of PB output pixels by KB
 * kernels sums over every (tap, channel pair) in registers; the weights are
 * read once per pixel block. Products of int8 values fit 16 bits, a pair's
 * sum 32, and the 32-bit sums wrap like the hardware's registers. */
#define PB 4
#define KB 16

static void block_portable(const int16_t *const *rows, size_t taps, size_t C, const int16_t *wp,
                           size_t N, size_t k0, uint32_t out[PB][KB])
{
    uint32_t acc[PB][KB] = {{0}};
    for (size_t tap = 0; tap < taps; tap++) {
        const int16_t *const *r = rows + tap * PB;
        for (size_t cp = 0; cp < C / 2; cp++) {
            const int16_t *wv = wp + ((tap * (C / 2) + cp) * N + k0) * 2;
            for (int p = 0; p < PB; p++) {
                int32_t a0 = r[p][2 * cp], a1 = r[p][2 * cp + 1];
                for (int k = 0; k < KB; k++)
                    acc[p][k] += (uint32_t)(a0 * wv[2 * k] + a1 * wv[2 * k + 1]);
            }
        }
    }
    memcpy(out, acc, sizeof acc);
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_CONV 1

__attribute__((target("avx2"))) static void block_avx2(const int16_t *const *rows, size_t taps,
                                                       size_t C, const int16_t *wp, size_t N,
                                                       size_t k0, uint32_t out[PB][KB])
{
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
            a30 = a00, a31 = a00;
    for (size_t tap = 0; tap < taps; tap++) {
        const int16_t *r0 = rows[tap * PB], *r1 = rows[tap * PB + 1], *r2 = rows[tap * PB + 2],
                      *r3 = rows[tap * PB + 3];
        const int16_t *wv = wp + (tap * (C / 2) * N + k0) * 2;
        for (size_t cp = 0; cp < C / 2; cp++, wv += 2 * N) {
            __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)wv);
            __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(wv + 16));
            int32_t p0, p1, p2, p3;
            memcpy(&p0, r0 + 2 * cp, 4);
            memcpy(&p1, r1 + 2 * cp, 4);
            memcpy(&p2, r2 + 2 * cp, 4);
            memcpy(&p3, r3 + 2 * cp, 4);
            __m256i b = _mm256_set1_epi32(p0);
            a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(w0, b));
            a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(w1, b));
            b = _mm256_set1_epi32(p1);
            a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(w0, b));
            a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(w1, b));
            b = _mm256_set1_epi32(p2);
            a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(w0, b));
            a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(w1, b));
            b = _mm256_set1_epi32(p3);
            a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(w0, b));
            a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(w1, b));
        }
    }
    _mm256_storeu_si256((__m256i *)(void *)out[0], a00);
    _mm256_storeu_si256((__m256i *)(void *)(out[0] + 8), a01);
    _mm256_storeu_si256((__m256i *)(void *)out[1], a10);
    _mm256_storeu_si256((__m256i *)(void *)(out[1] + 8), a11);
    _mm256_storeu_si256((__m256i *)(void *)out[2], a20);
    _mm256_storeu_si256((__m256i *)(void *)(out[2] + 8), a21);
    _mm256_storeu_si256((__m256i *)(void *)out[3], a30);
    _mm256_storeu_si256((__m256i *)(void *)(out[3] + 8), a31);
}

/* One depthwise output pixel: for every 16 channels, the products of the
 * taps' inputs and weights (int8 x int8, exact in 16 bits) widened and
 * summed in 32-bit lanes that wrap like the portable loop's, and the window
 * sums of the inputs (CPEND) when ws is given. */
__attribute__((target("avx2"))) static void dw_pixel_avx2(const int16_t *const *xs, size_t taps,
                                                          const int16_t *wq, size_t C, uint32_t *ap,
                                                          uint32_t *ws)
{
    for (size_t ch = 0; ch < C; ch += 16) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, s0 = a0, s1 = a0;
        for (size_t tap = 0; tap < taps; tap++) {
            __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)(xs[tap] + ch));
            __m256i wv = _mm256_loadu_si256((const __m256i *)(const void *)(wq + tap * C + ch));
            __m256i pr = _mm256_mullo_epi16(xv, wv);
            a0 = _mm256_add_epi32(a0, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(pr)));
            a1 = _mm256_add_epi32(a1, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(pr, 1)));
            if (ws) {
                s0 = _mm256_add_epi32(s0, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(xv)));
                s1 = _mm256_add_epi32(s1, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(xv, 1)));
            }
        }
        _mm256_storeu_si256((__m256i *)(void *)(ap + ch), a0);
        _mm256_storeu_si256((__m256i *)(void *)(ap + ch + 8), a1);
        if (ws) {
            _mm256_storeu_si256((__m256i *)(void *)(ws + ch), s0);
            _mm256_storeu_si256((__m256i *)(void *)(ws + ch + 8), s1);
        }
    }
}
#endif

static npk_status conv_direct_int(npk_rk_emu *e, const emu_task *t, const int16_t *x,
                                  const int16_t *padv, const uint32_t *psum, int32_t *acc,
                                  int32_t *s, const emu_where *w, npk_error *err)
{
    size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh, G = t->group;
    size_t P = (size_t)t->ow * t->oh;
    int16_t *wp = emu_scratch_get(&e->b, taps * C * N * sizeof(int16_t));
    const int16_t **rows = emu_scratch_get(&e->t, taps * PB * sizeof *rows);
    if (!wp || !rows) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    /* [N/G][C/32][kh][kw][G][32] -> pairs; one 32 x 32 block of a kernel
     * group, channel block and tap at a time, written row by row. */
    for (size_t k0 = 0; k0 < N; k0 += G)
        for (size_t c0 = 0; c0 < C; c0 += 32)
            for (size_t tap = 0; tap < taps; tap++) {
                const uint8_t *blk =
                    t->wt + (k0 / G) * G * C * taps + (c0 / 32) * taps * G * 32 + tap * G * 32;
                for (size_t cc = 0; cc < 32; cc += 2) {
                    int16_t *d = wp + ((tap * (C / 2) + (c0 + cc) / 2) * N + k0) * 2;
                    for (size_t kk = 0; kk < G; kk++) {
                        d[2 * kk] = (int8_t)blk[kk * 32 + cc];
                        d[2 * kk + 1] = (int8_t)blk[kk * 32 + cc + 1];
                    }
                }
            }
    bool simd = false;
#ifdef HAVE_AVX2_CONV
    simd = e->simd;
#endif
    uint32_t *a = (uint32_t *)acc;
    for (size_t p0 = 0; p0 < P; p0 += PB) {
        /* The rows each tap reads for the block's pixels (the pad lanes
         * outside the input; past the last pixel, any valid row). */
        for (size_t q = 0; q < PB; q++) {
            size_t p = p0 + q < P ? p0 + q : P - 1;
            uint32_t oy = (uint32_t)(p / t->ow), ox = (uint32_t)(p % t->ow);
            uint32_t sum = 0;
            for (uint32_t ky = 0; ky < t->kh; ky++) {
                int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
                for (uint32_t kx = 0; kx < t->kw; kx++) {
                    int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
                    bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                    size_t ip = in ? (size_t)iy * t->w + (size_t)ix : (size_t)t->w * t->h;
                    rows[((size_t)ky * t->kw + kx) * PB + q] = in ? x + ip * C : padv;
                    if (s) sum += psum[ip];
                }
            }
            if (s && p0 + q < P) ((uint32_t *)s)[p] = sum;
        }
        for (size_t k0 = 0; k0 < N; k0 += KB) {
            uint32_t blk[PB][KB];
#ifdef HAVE_AVX2_CONV
            if (simd)
                block_avx2(rows, taps, C, wp, N, k0, blk);
            else
#endif
                block_portable(rows, taps, C, wp, N, k0, blk);
            for (size_t q = 0; q < PB && p0 + q < P; q++)
                memcpy(a + (p0 + q) * N + k0, blk[q], sizeof blk[q]);
        }
    }
    (void)simd;
    return NPK_OK;
}

npk_status emu_conv_int(npk_rk_emu *e, const emu_task *t, int32_t *acc, int32_t *s,
                        const emu_where *w, npk_error *err)
{
    size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh;
    size_t G = t->group;
    int16_t *padv = NULL;
    uint32_t *psum = NULL;
    int16_t *x = load_int(e, t, &padv, !t->dw && s ? &psum : NULL);
    if (!x) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    if (!t->dw) return conv_direct_int(e, t, x, padv, psum, acc, s, w, err);
#ifdef HAVE_AVX2_CONV
    if (e->simd) {
        /* Depthwise: [C/G][kh][kw][G] -> [tap][channel] int16, and the
         * taps' input rows (the pad lanes outside) of each pixel. */
        int16_t *wh = emu_scratch_get(&e->b, taps * C * sizeof(int16_t));
        const int16_t **xs = emu_scratch_get(&e->t, taps * sizeof *xs);
        if (!wh || !xs) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        for (size_t ch = 0; ch < C; ch++)
            for (size_t tap = 0; tap < taps; tap++)
                wh[tap * C + ch] = (int8_t)t->wt[(ch / G) * taps * G + tap * G + ch % G];
        for (uint32_t oy = 0; oy < t->oh; oy++)
            for (uint32_t ox = 0; ox < t->ow; ox++) {
                size_t p = (size_t)oy * t->ow + ox;
                for (uint32_t ky = 0; ky < t->kh; ky++) {
                    int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
                    for (uint32_t kx = 0; kx < t->kw; kx++) {
                        int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
                        bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                        xs[(size_t)ky * t->kw + kx] =
                            in ? x + ((size_t)iy * t->w + (size_t)ix) * C : padv;
                    }
                }
                dw_pixel_avx2(xs, taps, wh, C, (uint32_t *)acc + p * N,
                              s ? (uint32_t *)s + p * N : NULL);
            }
        return NPK_OK;
    }
#endif
    /* Depthwise: [C/G][kh][kw][G] -> [tap][channel], 32-bit so that the
     * per-channel loops vectorise at -O2. */
    uint32_t *wq = emu_scratch_get(&e->b, taps * C * sizeof(uint32_t));
    if (!wq) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    for (size_t ch = 0; ch < C; ch++)
        for (size_t tap = 0; tap < taps; tap++)
            wq[tap * C + ch] =
                (uint32_t)(int32_t)(int8_t)t->wt[(ch / G) * taps * G + tap * G + ch % G];
    /* Sums wrap modulo 2^32 as int32 hardware registers would (without
     * signed overflow in C). */
    uint32_t *a = (uint32_t *)acc;
    uint32_t *ws = (uint32_t *)s;
    for (uint32_t oy = 0; oy < t->oh; oy++)
        for (uint32_t ox = 0; ox < t->ow; ox++) {
            size_t p = (size_t)oy * t->ow + ox;
            uint32_t *ap = a + p * N;
            memset(ap, 0, N * sizeof *ap);
            if (ws) memset(ws + p * N, 0, N * sizeof *ws);
            for (uint32_t ky = 0; ky < t->kh; ky++) {
                int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
                for (uint32_t kx = 0; kx < t->kw; kx++) {
                    int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
                    bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                    const int16_t *xv = in ? x + ((size_t)iy * t->w + (size_t)ix) * C : padv;
                    const uint32_t *wr = wq + ((size_t)ky * t->kw + kx) * C;
                    for (size_t ch = 0; ch < C; ch++) ap[ch] += (uint32_t)(int32_t)xv[ch] * wr[ch];
                    if (ws)
                        for (size_t ch = 0; ch < C; ch++)
                            ws[p * N + ch] += (uint32_t)(int32_t)xv[ch];
                }
            }
        }
    return NPK_OK;
}

npk_status emu_conv_fp(npk_rk_emu *e, const emu_task *t, float *acc, const emu_where *w,
                       npk_error *err)
{
    size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh, G = t->group;
    size_t pix = (size_t)t->w * t->h;
    float *x = emu_scratch_get(&e->a, (pix * C + C) * sizeof(float));
    size_t wcount = t->dw ? taps * C : taps * C * N;
    float *wq = emu_scratch_get(&e->b, wcount * sizeof(float));
    if (!x || !wq) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    for (uint32_t cp = 0; cp < C / 8; cp++)
        for (uint32_t y = 0; y < t->h; y++) {
            const uint8_t *row = t->in + (uint64_t)cp * t->surf_pitch + (uint64_t)y * t->line_pitch;
            for (uint32_t xx = 0; xx < t->w; xx++)
                for (int j = 0; j < 8; j++)
                    x[((size_t)y * t->w + xx) * C + cp * 8 + j] =
                        npk_f16_to_f32(npk_ld16le(row + xx * 16 + 2 * j));
        }
    float *padv = x + pix * C;
    float pad = npk_f16_to_f32((uint16_t)t->pad_value);
    for (size_t ch = 0; ch < C; ch++) padv[ch] = pad;
    const uint8_t *W = t->wt;
    if (t->dw) {
        for (size_t ch = 0; ch < C; ch++)
            for (size_t tap = 0; tap < taps; tap++)
                wq[tap * C + ch] =
                    npk_f16_to_f32(npk_ld16le(W + 2 * ((ch / G) * taps * G + tap * G + ch % G)));
    } else {
        for (size_t k = 0; k < N; k++)
            for (size_t ch = 0; ch < C; ch++)
                for (size_t tap = 0; tap < taps; tap++)
                    wq[(tap * C + ch) * N + k] = npk_f16_to_f32(
                        npk_ld16le(W + 2 * ((k / G) * G * C * taps + (ch / 32) * taps * G * 32 +
                                            tap * G * 32 + (k % G) * 32 + ch % 32)));
    }
    /* fp16 products are exact in fp32; sums in tap-then-channel order, the
     * order the 1x1 matmul path uses too. */
    for (uint32_t oy = 0; oy < t->oh; oy++)
        for (uint32_t ox = 0; ox < t->ow; ox++) {
            float *ap = acc + ((size_t)oy * t->ow + ox) * N;
            for (size_t k = 0; k < N; k++) ap[k] = 0.0f;
            for (uint32_t ky = 0; ky < t->kh; ky++) {
                int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
                for (uint32_t kx = 0; kx < t->kw; kx++) {
                    int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
                    bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                    const float *xv = in ? x + ((size_t)iy * t->w + (size_t)ix) * C : padv;
                    size_t tap = (size_t)ky * t->kw + kx;
                    if (t->dw) {
                        const float *wr = wq + tap * C;
                        for (size_t ch = 0; ch < C; ch++) ap[ch] += xv[ch] * wr[ch];
                        continue;
                    }
                    for (size_t ch = 0; ch < C; ch++) {
                        float av = xv[ch];
                        const float *wr = wq + (tap * C + ch) * N;
                        for (size_t k = 0; k < N; k++) ap[k] += av * wr[k];
                    }
                }
            }
        }
    return NPK_OK;
}
