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

/* acc[k] += a0 w0[k] + a1 w1[k] + a2 w2[k] + a3 w3[k] (rows of n apart), modulo
 * 2^32; n is a multiple of 16, and the fixed-length inner loop lets the
 * compiler vectorise it at -O2. */
static void mac4(uint32_t *restrict acc, const uint32_t *restrict w, size_t n, uint32_t a0,
                 uint32_t a1, uint32_t a2, uint32_t a3)
{
    for (size_t k0 = 0; k0 < n; k0 += 16) {
        uint32_t *restrict d = acc + k0;
        const uint32_t *restrict x0 = w + k0, *restrict x1 = x0 + n, *restrict x2 = x1 + n,
                                 *restrict x3 = x2 + n;
        for (size_t k = 0; k < 16; k++) d[k] += a0 * x0[k] + a1 * x1[k] + a2 * x2[k] + a3 * x3[k];
    }
}

/* The task's input cube as pixel-major int16 (P_in x C), and the pad lanes. */
static int16_t *load_int(npk_rk_emu *e, const emu_task *t, int16_t **padv)
{
    size_t pix = (size_t)t->w * t->h, C = t->c;
    int16_t *x = emu_scratch_get(&e->a, (pix * C + C) * sizeof(int16_t));
    if (!x) return NULL;
    for (uint32_t cp = 0; cp < C / 16; cp++)
        for (uint32_t y = 0; y < t->h; y++) {
            const uint8_t *row = t->in + (uint64_t)cp * t->surf_pitch + (uint64_t)y * t->line_pitch;
            for (uint32_t xx = 0; xx < t->w; xx++) {
                int16_t *d = x + ((size_t)y * t->w + xx) * C + cp * 16;
                for (int j = 0; j < 16; j++) d[j] = (int8_t)row[xx * 16 + j];
            }
        }
    *padv = x + pix * C;
    for (uint32_t ch = 0; ch < C; ch++) (*padv)[ch] = pad_lane_int8(t->pad_value, ch);
    return x;
}

npk_status emu_conv_int(npk_rk_emu *e, const emu_task *t, int32_t *acc, int32_t *s,
                        const emu_where *w, npk_error *err)
{
    size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh;
    size_t G = t->group;
    int16_t *padv = NULL;
    int16_t *x = load_int(e, t, &padv);
    size_t wcount = t->dw ? taps * C : taps * C * N;
    /* 32-bit weights: the multiply loops below then vectorise at -O2. */
    uint32_t *wq = emu_scratch_get(&e->b, wcount * sizeof(uint32_t));
    if (!x || !wq) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    if (t->dw) {
        /* [C/G][kh][kw][G] -> [tap][channel] */
        for (size_t ch = 0; ch < C; ch++)
            for (size_t tap = 0; tap < taps; tap++)
                wq[tap * C + ch] =
                    (uint32_t)(int32_t)(int8_t)t->wt[(ch / G) * taps * G + tap * G + ch % G];
    } else {
        /* [N/G][C/32][kh][kw][G][32] -> [tap][channel][kernel], one 32 x 32
         * block (a kernel group's channel block of one tap) at a time. */
        for (size_t k0 = 0; k0 < N; k0 += G)
            for (size_t c0 = 0; c0 < C; c0 += 32)
                for (size_t tap = 0; tap < taps; tap++) {
                    const uint8_t *blk =
                        t->wt + (k0 / G) * G * C * taps + (c0 / 32) * taps * G * 32 + tap * G * 32;
                    for (size_t kk = 0; kk < G; kk++)
                        for (size_t cc = 0; cc < 32; cc++)
                            wq[(tap * C + c0 + cc) * N + k0 + kk] =
                                (uint32_t)(int32_t)(int8_t)blk[kk * 32 + cc];
                }
    }
    /* Sums wrap modulo 2^32 as int32 hardware registers would (without
     * signed overflow in C). */
    uint32_t *a = (uint32_t *)acc;
    uint32_t *ws = (uint32_t *)s;
    for (uint32_t oy = 0; oy < t->oh; oy++)
        for (uint32_t ox = 0; ox < t->ow; ox++) {
            size_t p = (size_t)oy * t->ow + ox;
            uint32_t *ap = a + p * N;
            memset(ap, 0, N * sizeof *ap);
            if (ws) memset(ws + (t->dw ? p * N : p), 0, (t->dw ? N : 1) * sizeof *ws);
            uint32_t sum = 0;
            for (uint32_t ky = 0; ky < t->kh; ky++) {
                int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
                for (uint32_t kx = 0; kx < t->kw; kx++) {
                    int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
                    bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                    const int16_t *xv = in ? x + ((size_t)iy * t->w + (size_t)ix) * C : padv;
                    size_t tap = (size_t)ky * t->kw + kx;
                    if (t->dw) {
                        const uint32_t *wr = wq + tap * C;
                        for (size_t ch = 0; ch < C; ch++)
                            ap[ch] += (uint32_t)(int32_t)xv[ch] * wr[ch];
                        if (ws)
                            for (size_t ch = 0; ch < C; ch++)
                                ws[p * N + ch] += (uint32_t)(int32_t)xv[ch];
                        continue;
                    }
                    /* Four channels per pass over the kernels: a quarter of
                     * the accumulator traffic (C is a multiple of 32). */
                    for (size_t ch = 0; ch < C; ch += 4) {
                        int32_t a0 = xv[ch], a1 = xv[ch + 1], a2 = xv[ch + 2], a3 = xv[ch + 3];
                        sum += (uint32_t)(a0 + a1 + a2 + a3);
                        if (!(a0 | a1 | a2 | a3)) continue;
                        const uint32_t *w0 = wq + (tap * C + ch) * N;
                        mac4(ap, w0, N, (uint32_t)a0, (uint32_t)a1, (uint32_t)a2, (uint32_t)a3);
                    }
                }
            }
            if (ws && !t->dw) ws[p] = sum;
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
