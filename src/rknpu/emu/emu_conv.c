/* The general convolution of a decoded task: any kernel size, stride,
 * dilation and padding, depthwise (int8) or any (fp16); the direct int8
 * convolution is emu_conv8.c. Loops without im2col: the input cube is read
 * once into a pixel-major buffer, the weights once into [tap][channel]
 * ([kernel]) order, and every output pixel accumulates over its taps with
 * the channel or kernel index innermost (contiguous, vectorisable).
 *
 * Padding: a tap outside the input reads the pad value of every channel
 * lane: for int8, CNA_PAD_CON1 byte 1 for the odd channels among the first
 * 32 of each 64-channel group and byte 0 for the others (docs/rknpu.md,
 * "Padding"); for fp16, the low 16 bits as an fp16 value. */
#include <string.h>

#include "emu_dpu8_fast.h"
#include "emu_internal.h"
#include "npukit/bytes.h"
#include "npukit/half.h"

static int16_t pad_lane_int8(uint32_t pad, uint32_t ch)
{
    unsigned byte = ((ch % 64) < 32 && (ch & 1)) ? 1 : 0;
    return (int8_t)(uint8_t)(pad >> (8 * byte));
}

/* The task's input cube as pixel-major int16 (P_in x C), and the pad lanes
 * (depthwise; the direct convolution is emu_conv8.c). */
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
                int8_t v[16]; /* a local copy: the int16 stores cannot alias it */
                memcpy(v, row + (size_t)xx * 16, 16);
                for (int j = 0; j < 16; j++) d[j] = v[j];
            }
        }
    *padv = x + pix * C;
    for (uint32_t ch = 0; ch < C; ch++) (*padv)[ch] = pad_lane_int8(t->pad_value, ch);
    return x;
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_CONV 1
/* With the DPU fused: a block's sums and window sums. */
#define DW_BLOCK_BYTES (64 * 1024)

/* Depthwise straight from the NC1HWC2 cube: for every output pixel (its
 * taps' byte offsets in a plane found once), every plane of 16 channels,
 * the taps two at a time: their int8 inputs interleaved per channel and
 * multiplied with the interleaved weights by vpmaddwd (x1 * w1 + x2 * w2
 * per channel, exact in 32 bits), summed in 32-bit lanes that wrap like the
 * portable loop's (the order of wrapping additions does not change the
 * result); the window sums of the inputs (CPEND) the same way with weights
 * 1 when ws is given. A tap outside the input reads the pad lanes.
 * wp: the weights as [tap pair][channel][2] int16 (the odd tap's partner
 * 0); pb: the pad lanes (C bytes); off: taps int64 of scratch. Output
 * pixels p0 .. p1 - 1, their sums from acc (and ws) on. */
#define DW_AVX2   __attribute__((target("avx2")))
#define DW_INLINE __attribute__((target("avx2"), always_inline)) static inline

/* One plane of 16 channels of an output pixel whose taps all lie inside the
 * input: tap t at base + rel[t] (no pad lanes, no per-tap choice); taps is
 * a constant where the caller makes it one. */
DW_INLINE void dw_inside(const uint8_t *base, const int64_t *rel, size_t taps, const int16_t *wc,
                         size_t C, bool ws, uint32_t *ap, uint32_t *sp)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, s0 = a0, s1 = a0;
    for (size_t j = 0; j < (taps + 1) / 2; j++) {
        const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(base + rel[2 * j]));
        const __m128i x1 =
            2 * j + 1 < taps
                ? _mm_loadu_si128((const __m128i *)(const void *)(base + rel[2 * j + 1]))
                : _mm_setzero_si128();
        const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x0, x1));
        const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x0, x1));
        const __m256i *wv = (const __m256i *)(const void *)(wc + j * C * 2);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(lo, _mm256_loadu_si256(wv)));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(hi, _mm256_loadu_si256(wv + 1)));
        if (ws) {
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(lo, ones));
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(hi, ones));
        }
    }
    _mm256_storeu_si256((__m256i *)(void *)ap, a0);
    _mm256_storeu_si256((__m256i *)(void *)(ap + 8), a1);
    if (ws) {
        _mm256_storeu_si256((__m256i *)(void *)sp, s0);
        _mm256_storeu_si256((__m256i *)(void *)(sp + 8), s1);
    }
}

/* Every plane of an output pixel whose taps lie inside the input (base: the
 * first tap's offset in a plane). */
DW_INLINE void dw_pixel_inside(const emu_task *t, const int16_t *wp, int64_t base,
                               const int64_t *rel, size_t taps, uint32_t *acc, uint32_t *ws)
{
    const size_t C = t->c;
    for (size_t cp = 0; cp < C / 16; cp++)
        dw_inside(t->in + (uint64_t)cp * t->surf_pitch + base, rel, taps, wp + cp * 16 * 2, C,
                  ws != NULL, acc + cp * 16, ws ? ws + cp * 16 : NULL);
}

DW_AVX2 static void dw_pixel_inside9(const emu_task *t, const int16_t *wp, int64_t base,
                                     const int64_t *rel, uint32_t *acc, uint32_t *ws)
{
    dw_pixel_inside(t, wp, base, rel, 9, acc, ws);
}

DW_AVX2 static void dw_pixel_inside_any(const emu_task *t, const int16_t *wp, int64_t base,
                                        const int64_t *rel, size_t taps, uint32_t *acc,
                                        uint32_t *ws)
{
    dw_pixel_inside(t, wp, base, rel, taps, acc, ws);
}

/* Depthwise straight from the NC1HWC2 cube: for every output pixel (its
 * taps' byte offsets in a plane found once), every plane of 16 channels,
 * the taps two at a time: their int8 inputs interleaved per channel and
 * multiplied with the interleaved weights by vpmaddwd (x1 * w1 + x2 * w2
 * per channel, exact in 32 bits), summed in 32-bit lanes that wrap like the
 * portable loop's (the order of wrapping additions does not change the
 * result); the window sums of the inputs (CPEND) the same way with weights
 * 1 when ws is given. A tap outside the input reads the pad lanes; pixels
 * whose taps all lie inside take dw_pixel_inside (the taps at fixed offsets
 * from the first, 3x3 unrolled).
 * wp: the weights as [tap pair][channel][2] int16 (the odd tap's partner
 * 0); pb: the pad lanes (C bytes); off: 2 x (taps + 1) int64 of scratch.
 * Output pixels p0 .. p1 - 1, their sums from acc (and ws) on. */
DW_AVX2 static void dw_avx2(const emu_task *t, const int16_t *wp, const uint8_t *pb, int64_t *off,
                            uint32_t *acc, uint32_t *ws, size_t p0, size_t p1)
{
    const size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh, pairs = (taps + 1) / 2;
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t lp = (int64_t)t->line_pitch;
    int64_t *rel = off + taps + 1; /* tap offsets from the first, inside the input */
    for (uint32_t ky = 0; ky < t->kh; ky++)
        for (uint32_t kx = 0; kx < t->kw; kx++)
            rel[(size_t)ky * t->kw + kx] = (int64_t)ky * t->dy * lp + (int64_t)kx * t->dx * 16;
    const int64_t ylast = (int64_t)(t->kh - 1) * t->dy, xlast = (int64_t)(t->kw - 1) * t->dx;
    for (size_t pp = p0; pp < p1; pp++) {
        const uint32_t oy = (uint32_t)(pp / t->ow), ox = (uint32_t)(pp % t->ow);
        const size_t p = pp - p0;
        const int64_t iy0 = (int64_t)oy * t->sy - t->pt, ix0 = (int64_t)ox * t->sx - t->pl;
        if (iy0 >= 0 && ix0 >= 0 && iy0 + ylast < t->h && ix0 + xlast < t->w) {
            const int64_t base = iy0 * lp + ix0 * 16;
            if (taps == 9)
                dw_pixel_inside9(t, wp, base, rel, acc + p * N, ws ? ws + p * N : NULL);
            else
                dw_pixel_inside_any(t, wp, base, rel, taps, acc + p * N, ws ? ws + p * N : NULL);
            continue;
        }
        for (uint32_t ky = 0; ky < t->kh; ky++) {
            const int64_t iy = iy0 + (int64_t)ky * t->dy;
            for (uint32_t kx = 0; kx < t->kw; kx++) {
                const int64_t ix = ix0 + (int64_t)kx * t->dx;
                off[(size_t)ky * t->kw + kx] =
                    iy >= 0 && iy < t->h && ix >= 0 && ix < t->w ? iy * lp + ix * 16 : -1;
            }
        }
        off[taps] = -2; /* the odd tap's partner: zeros */
        for (size_t cp = 0; cp < C / 16; cp++) {
            const uint8_t *plane = t->in + (uint64_t)cp * t->surf_pitch;
            const __m128i padv = _mm_loadu_si128((const __m128i *)(const void *)(pb + cp * 16));
            __m256i a0 = _mm256_setzero_si256(), a1 = a0, s0 = a0, s1 = a0;
            for (size_t j = 0; j < pairs; j++) {
                __m128i x[2];
                for (int k = 0; k < 2; k++) {
                    const int64_t o = off[2 * j + (size_t)k];
                    x[k] = o >= 0    ? _mm_loadu_si128((const __m128i *)(const void *)(plane + o))
                           : o == -1 ? padv
                                     : _mm_setzero_si128();
                }
                const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x[0], x[1]));
                const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x[0], x[1]));
                const __m256i *wv = (const __m256i *)(const void *)(wp + (j * C + cp * 16) * 2);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(lo, _mm256_loadu_si256(wv)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(hi, _mm256_loadu_si256(wv + 1)));
                if (ws) {
                    s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(lo, ones));
                    s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(hi, ones));
                }
            }
            uint32_t *ap = acc + p * N + cp * 16;
            _mm256_storeu_si256((__m256i *)(void *)ap, a0);
            _mm256_storeu_si256((__m256i *)(void *)(ap + 8), a1);
            if (ws) {
                _mm256_storeu_si256((__m256i *)(void *)(ws + p * N + cp * 16), s0);
                _mm256_storeu_si256((__m256i *)(void *)(ws + p * N + cp * 16 + 8), s1);
            }
        }
    }
}

#ifdef NPK_RK_EMU_AVX2
/* The 16 channels of a plane of one output pixel whose taps all lie inside
 * the input (tap t at x + rel[t]): their sums, dw_inside's, in registers. */
DW_INLINE void dw_sums_inside(const uint8_t *x, const int64_t *rel, size_t taps, const int16_t *wc,
                              size_t C, __m256i *s0, __m256i *s1)
{
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    for (size_t j = 0; j < (taps + 1) / 2; j++) {
        const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(x + rel[2 * j]));
        const __m128i x1 =
            2 * j + 1 < taps ? _mm_loadu_si128((const __m128i *)(const void *)(x + rel[2 * j + 1]))
                             : _mm_setzero_si128();
        const __m256i *wv = (const __m256i *)(const void *)(wc + j * C * 2);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x0, x1)),
                                                    _mm256_loadu_si256(wv)));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x0, x1)),
                                                    _mm256_loadu_si256(wv + 1)));
    }
    *s0 = a0, *s1 = a1;
}

/* One 16-channel plane of every output pixel, the DPU's int32-lane form
 * (emu_dpu8_fast.h) run on each pixel's sums in registers and its 16 bytes
 * stored: no int32 sums written and read back. The plane's weights and DPU
 * constants stay at hand while its pixels go by (plane by plane, as the
 * 1x1 path goes atom by atom). ro: per output row and kernel row the tap
 * row's offset in a plane, or -1 outside; co: the same per column (x 16);
 * in_r / in_c: rows and columns whose taps all lie inside. Pixels a
 * channel's bound does not prove safe and whose values fail the int32
 * check take the int64 steps (emu_dpu8_pixel; no window sums: CPEND is in
 * the weights or off). */
DW_INLINE void dw_plane_fused(const emu_task *t, const emu_dpu8 *d, const int16_t *wp,
                              const uint8_t *pb, const int64_t *rel, const int64_t *ro,
                              const int64_t *co, const uint8_t *in_r, const uint8_t *in_c,
                              size_t cp, const size_t taps, const bool radd, const bool chk)
{
    const size_t C = t->c, G = t->group, ch0 = cp * 16, pairs = (taps + 1) / 2;
    const uint8_t *plane = t->in + (uint64_t)cp * t->surf_pitch;
    const int16_t *wc = wp + ch0 * 2;
    const __m128i padv = _mm_loadu_si128((const __m128i *)(const void *)(pb + ch0));
    uint8_t *dst = t->out + ch0 / G * t->surf_add + ch0 % G / 16 * t->dst_surf;
    emu_fast_atom k;
    emu_fast_task(d, &k);
    emu_fast_atom_load(d, ch0, &k);
    const int64_t lp = (int64_t)t->line_pitch;
    for (size_t oy = 0, p = 0; oy < t->oh; oy++) {
        const int64_t iy0 = (int64_t)oy * t->sy - t->pt;
        for (size_t ox = 0; ox < t->ow; ox++, p++) {
            __m256i s0, s1;
            if (in_r[oy] && in_c[ox]) {
                const int64_t ix0 = (int64_t)ox * t->sx - t->pl;
                dw_sums_inside(plane + iy0 * lp + ix0 * 16, rel, taps, wc, C, &s0, &s1);
            } else {
                s0 = s1 = _mm256_setzero_si256();
                for (size_t j = 0; j < pairs; j++) {
                    __m128i x[2];
                    for (size_t q = 0; q < 2; q++) {
                        const size_t tap = 2 * j + q;
                        if (tap == taps) {
                            x[q] = _mm_setzero_si128();
                            continue;
                        }
                        const int64_t r = ro[oy * t->kh + tap / t->kw],
                                      c = co[ox * t->kw + tap % t->kw];
                        x[q] = r >= 0 && c >= 0
                                   ? _mm_loadu_si128((const __m128i *)(const void *)(plane + r + c))
                                   : padv;
                    }
                    const __m256i *wv = (const __m256i *)(const void *)(wc + j * C * 2);
                    s0 = _mm256_add_epi32(
                        s0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x[0], x[1])),
                                              _mm256_loadu_si256(wv)));
                    s1 = _mm256_add_epi32(
                        s1, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x[0], x[1])),
                                              _mm256_loadu_si256(wv + 1)));
                }
            }
            if (!emu_fast_pixel(&k, s0, s1, chk, radd, dst + p * 16)) {
                _Alignas(32) uint32_t c16[16];
                _mm256_store_si256((__m256i *)(void *)c16, s0);
                _mm256_store_si256((__m256i *)(void *)(c16 + 8), s1);
                emu_dpu8_pixel(d, t, c16, 0, ch0, dst + p * 16);
            }
        }
    }
}

DW_AVX2 static void dw_plane9(const emu_task *t, const emu_dpu8 *d, const int16_t *wp,
                              const uint8_t *pb, const int64_t *rel, const int64_t *ro,
                              const int64_t *co, const uint8_t *in_r, const uint8_t *in_c,
                              size_t cp, bool radd)
{
    /* the choices made once per plane, not per pixel (chk: the plane's
     * channels not proven safe) */
    const bool chk = !(d->safe && d->safe[cp]);
    if (radd && chk)
        dw_plane_fused(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, 9, true, true);
    else if (radd)
        dw_plane_fused(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, 9, true, false);
    else if (chk)
        dw_plane_fused(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, 9, false, true);
    else
        dw_plane_fused(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, 9, false, false);
}

DW_AVX2 static void dw_plane_any(const emu_task *t, const emu_dpu8 *d, const int16_t *wp,
                                 const uint8_t *pb, const int64_t *rel, const int64_t *ro,
                                 const int64_t *co, const uint8_t *in_r, const uint8_t *in_c,
                                 size_t cp, size_t taps)
{
    dw_plane_fused(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, taps, false, true);
}

/* The depthwise task with the DPU fused per pixel (dw_plane_fused) when its
 * plan takes the int32-lane form without window sums; false (nothing
 * written) otherwise, or without memory for the offset tables. */
static bool dw_fused(npk_rk_emu *e, const emu_task *t, const emu_dpu8 *d, const int16_t *wp,
                     const uint8_t *pb)
{
    if (d->loop != 2 || d->cpend || t->group % 16 || t->n != t->c) return false;
    const size_t taps = (size_t)t->kw * t->kh;
    const size_t nro = (size_t)t->oh * t->kh, nco = (size_t)t->ow * t->kw;
    int64_t *rel = emu_scratch_get(&e->u, (taps + nro + nco) * sizeof(int64_t) + t->oh + t->ow);
    if (!rel) return false;
    int64_t *ro = rel + taps, *co = ro + nro;
    uint8_t *in_r = (uint8_t *)(co + nco), *in_c = in_r + t->oh;
    const int64_t lp = (int64_t)t->line_pitch;
    for (uint32_t ky = 0; ky < t->kh; ky++)
        for (uint32_t kx = 0; kx < t->kw; kx++)
            rel[(size_t)ky * t->kw + kx] = (int64_t)ky * t->dy * lp + (int64_t)kx * t->dx * 16;
    for (size_t oy = 0; oy < t->oh; oy++) {
        in_r[oy] = 1;
        for (uint32_t ky = 0; ky < t->kh; ky++) {
            const int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
            const bool in = iy >= 0 && iy < t->h;
            ro[oy * t->kh + ky] = in ? iy * lp : -1;
            in_r[oy] &= in;
        }
    }
    for (size_t ox = 0; ox < t->ow; ox++) {
        in_c[ox] = 1;
        for (uint32_t kx = 0; kx < t->kw; kx++) {
            const int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
            const bool in = ix >= 0 && ix < t->w;
            co[ox * t->kw + kx] = in ? ix * 16 : -1;
            in_c[ox] &= in;
        }
    }
    const bool radd = emu_fast_radd(d);
    for (size_t cp = 0; cp < t->c / 16; cp++) {
        if (taps == 9)
            dw_plane9(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, radd);
        else
            dw_plane_any(t, d, wp, pb, rel, ro, co, in_r, in_c, cp, taps);
    }
    return true;
}
#endif
#endif

npk_status emu_conv_int(npk_rk_emu *e, const emu_task *t, int32_t *acc, int32_t *s,
                        const emu_dpu8 *dpu, const emu_where *w, npk_error *err)
{
    size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh;
    size_t G = t->group;
    if (!t->dw) return emu_conv_direct8(e, t, acc, s, dpu, w, err);
#ifdef HAVE_AVX2_CONV
    if (e->simd) {
        /* Depthwise: [C/G][kh][kw][G] -> [tap pair][channel][2] int16. */
        const size_t pairs = (taps + 1) / 2;
        int16_t *wbuf = emu_scratch_get(&e->b, pairs * C * 2 * sizeof(int16_t) + C);
        int64_t *off = emu_scratch_get(&e->t, 2 * (taps + 1) * sizeof *off);
        if (!wbuf || !off) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        uint8_t *pb = (uint8_t *)(wbuf + pairs * C * 2); /* the pad lanes */
        for (uint32_t ch = 0; ch < C; ch++) pb[ch] = (uint8_t)pad_lane_int8(t->pad_value, ch);
        /* CPEND folded into the weights where nothing can saturate: sum +
         * OW_OP x window sum = the sum over the taps of x (w + OW_OP), all
         * within int32 (the plan's bounds), with w + OW_OP within int16. */
        const bool fold = dpu && t->cpend && !dpu->start_sat && t->ow_op >= -32768 + 128 &&
                          t->ow_op <= 32767 - 127;
        const int32_t ow = fold ? t->ow_op : 0;
        /* Without window sums, 128 x the sum of |w + OW_OP| over a
         * channel's taps bounds its values: the atoms that need no checks. */
        const bool ws = t->cpend && !fold;
        uint64_t *bsc = dpu && !ws ? emu_scratch_get(&e->sf, C * sizeof *bsc + C / 16 + 1) : NULL;
        uint8_t *safe = bsc ? (uint8_t *)(bsc + C) : NULL;
        const int16_t *wp = wbuf;
        const uint64_t *bound = bsc;
        /* With the bounds (the fused DPU): the re-laid weights and the
         * bounds kept across runs for this OW_OP, while the weight bytes are
         * unchanged (emu_wcache.c, which compares them or trusts a tracked
         * mapping's generation). */
        const size_t raw = C * taps, wbytes = pairs * C * 2 * sizeof(int16_t);
        emu_wpack *kp = bsc && raw <= t->wt_span ? emu_wcache_find(e, t, false, raw) : NULL;
        if (kp && kp->wabs_ok && kp->wabs_ow == ow && kp->b_bytes == wbytes) {
            wp = (const int16_t *)(const void *)kp->b, bound = kp->wabs;
        } else {
            if (!kp && bsc && raw <= t->wt_span) kp = emu_wcache_add(e, t, false, raw, wbytes);
            if (kp) kp->wabs_ok = false;
            if (bsc) memset(bsc, 0, C * sizeof *bsc);
            for (size_t g0 = 0; g0 < C; g0 += G) {
                const size_t gn = C - g0 < G ? C - g0 : G;
                for (size_t tap = 0; tap < taps; tap++) {
                    const uint8_t *src = t->wt + g0 * taps + tap * G;
                    int16_t *d = wbuf + (tap / 2 * C + g0) * 2 + tap % 2;
                    for (size_t j = 0; j < gn; j++) {
                        const int32_t v = (int8_t)src[j] + ow;
                        d[2 * j] = (int16_t)v;
                        if (bsc) bsc[g0 + j] += (uint64_t)(v < 0 ? -v : v);
                    }
                }
            }
            if (taps % 2) /* the odd tap's partner */
                for (size_t ch = 0; ch < C; ch++) wbuf[((taps / 2) * C + ch) * 2 + 1] = 0;
            if (bsc)
                for (size_t ch = 0; ch < C; ch++) bsc[ch] *= 128;
            if (kp && kp->b_bytes == wbytes) {
                memcpy(kp->b, wbuf, wbytes);
                memcpy(kp->wabs, bsc, C * sizeof *bsc);
                kp->wabs_ow = ow, kp->wabs_ok = true;
            }
        }
        const size_t P = (size_t)t->ow * t->oh;
        if (!dpu) {
            dw_avx2(t, wp, pb, off, (uint32_t *)acc, (uint32_t *)s, 0, P);
            return NPK_OK;
        }
        /* Blocks of pixels whose sums stay in cache, each
         * through the DPU right after it is made. */
        size_t rows = DW_BLOCK_BYTES / (N * 8);
        rows = rows < 1 ? 1 : rows < P ? rows : P;
        emu_dpu8 d = *dpu;
        d.cpend = ws;
        if (bound) emu_dpu8_safe(&d, t, bound, safe);
#ifdef NPK_RK_EMU_AVX2
        if (dw_fused(e, t, &d, wp, pb)) return NPK_OK;
#endif
        uint32_t *cb = emu_scratch_get(&e->c, rows * N * sizeof *cb);
        uint32_t *sb = ws ? emu_scratch_get(&e->s, rows * N * sizeof *sb) : NULL;
        if (!cb || (ws && !sb)) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        for (size_t p0 = 0; p0 < P; p0 += rows) {
            const size_t m = P - p0 < rows ? P - p0 : rows;
            dw_avx2(t, wp, pb, off, cb, sb, p0, p0 + m);
            emu_dpu8_rows(&d, t, cb, (const int32_t *)sb, p0, m);
        }
        return NPK_OK;
    }
#endif
    if (dpu) { /* the fused DPU comes with the AVX2 kernels; whole buffers here */
        acc = emu_scratch_get(&e->c, (size_t)t->ow * t->oh * N * sizeof *acc);
        s = t->cpend ? emu_scratch_get(&e->s, (size_t)t->ow * t->oh * N * sizeof *s) : NULL;
        if (!acc || (t->cpend && !s))
            return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    }
    int16_t *padv = NULL;
    int16_t *x = load_int(e, t, &padv);
    if (!x) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
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
    if (dpu) emu_dpu8_rows(dpu, t, a, s, 0, (size_t)t->ow * t->oh);
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
