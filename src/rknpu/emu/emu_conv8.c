/* The direct (not depthwise) int8 convolution of a task as one matrix
 * product through the interpreter's 8-bit kernels (src/tflite/qkern.h,
 * gemm_s32: raw wrapping int32 sums, AVX2 / SSE2 / NEON / portable):
 *
 *   A: one row per output pixel, the input channels of every tap (im2col,
 *      a block of rows at a time; 1x1 stride 1 reads the pixels in place),
 *      the pad lanes for taps outside the input;
 *   B: one row per kernel in the same (tap, channel) order, from the CNA's
 *      weight layout [N/G][C/32][kh][kw][G][32].
 *
 * Channels whose weights are zero in every kernel and tap add nothing to
 * any sum (x * 0 = 0 exactly), so they are left out of K: the first layer
 * of a network reads its 3 channels as 32. The CPEND window sums still
 * cover every channel, as the hardware's do. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "emu_internal.h"
#include "npukit/checked.h"
#include "tflite/qkern.h"

/* Rows of A built at a time (a multiple of every kernel's tile height). */
#define A_BLOCK_BYTES (192 * 1024)
/* With the DPU fused: the int32 sums of a block of rows, in cache when the
 * DPU reads them (second-level cache: smaller blocks cost more in the
 * DPU's per-block setup than they save). */
#define C_BLOCK_BYTES (128 * 1024)

static uint8_t pad_lane(uint32_t pad, size_t ch)
{
    unsigned byte = ((ch % 64) < 32 && (ch & 1)) ? 1 : 0;
    return (uint8_t)(pad >> (8 * byte));
}

/* The 16-byte atoms of n planes (pitch sp) to d, one after another; the sum
 * of their int8 values (wrapping, like the sums). */
static inline uint32_t copy_sum(const uint8_t *src, uint64_t sp, size_t n, uint8_t *d)
{
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi8((char)0x80), zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (size_t cp = 0; cp < n; cp++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + cp * sp));
        _mm_storeu_si128((__m128i *)(void *)(d + cp * 16), v);
        acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_xor_si128(v, flip), zero));
    }
    /* sum(v) = sum(v ^ 0x80 as unsigned) - 16 * 128 per atom */
    return (uint32_t)_mm_cvtsi128_si32(acc) + (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(acc, 8)) -
           (uint32_t)n * 16u * 128u;
#else
    uint32_t sum = 0;
    for (size_t cp = 0; cp < n; cp++) {
        memcpy(d + cp * 16, src + cp * sp, 16);
        for (int i = 0; i < 16; i++) sum += (uint32_t)(int32_t)(int8_t)d[cp * 16 + (size_t)i];
    }
    return sum;
#endif
}

/* Weight of kernel k, tap, channel ch in the CNA's layout. */
static const uint8_t *wt_at(const emu_task *t, size_t k, size_t tap, size_t ch)
{
    const size_t C = t->c, G = t->group, taps = (size_t)t->kw * t->kh;
    return t->wt + (k / G) * G * C * taps + (ch / 32) * taps * G * 32 + tap * G * 32 +
           (k % G) * 32 + ch % 32;
}

/* B as N rows of K bytes, (tap, used channel) order. */
static void rows_b(const emu_task *t, const uint16_t *use, size_t cu, size_t K, uint8_t *b)
{
    const size_t taps = (size_t)t->kw * t->kh;
    for (size_t k = 0; k < t->n; k++)
        for (size_t tap = 0; tap < taps; tap++) {
            uint8_t *d = b + k * K + tap * cu;
            if (cu == t->c)
                for (size_t c0 = 0; c0 < cu; c0 += 32) memcpy(d + c0, wt_at(t, k, tap, c0), 32);
            else
                for (size_t u = 0; u < cu; u++) d[u] = *wt_at(t, k, tap, use[u]);
        }
}

/* B straight into the packed layout of qkern.h (panels of 16 kernels, each
 * k pair of a panel's kernels as 2-byte lanes), the panel heads zero: no
 * requantisation here. */
static void pack_b(const emu_task *t, const uint16_t *use, size_t cu, size_t K, uint8_t *pb)
{
    const size_t taps = (size_t)t->kw * t->kh, N = t->n, k2 = (K + 1) / 2;
    for (size_t j0 = 0; j0 < N; j0 += NPK_TFL_QPANEL) {
        uint8_t *p = (uint8_t *)npk_tfl_qpack_at(pb, j0, K);
        memset(p, 0, NPK_TFL_QPANEL_HEAD + k2 * 2 * NPK_TFL_QPANEL);
        p += NPK_TFL_QPANEL_HEAD;
        for (size_t c = 0; c < NPK_TFL_QPANEL && j0 + c < N; c++)
            for (size_t tap = 0; tap < taps; tap++) {
                const size_t t0 = tap * cu; /* even when every channel is used */
                if (cu == t->c)
                    for (size_t c0 = 0; c0 < cu; c0 += 32) {
                        const uint8_t *src = wt_at(t, j0 + c, tap, c0);
                        uint8_t *d = p + (t0 + c0) / 2 * 2 * NPK_TFL_QPANEL + 2 * c;
                        for (size_t i = 0; i < 16; i++)
                            memcpy(d + i * 2 * NPK_TFL_QPANEL, src + 2 * i, 2);
                    }
                else
                    for (size_t u = 0; u < cu; u++) {
                        const size_t k = t0 + u;
                        p[k / 2 * 2 * NPK_TFL_QPANEL + 2 * c + k % 2] =
                            *wt_at(t, j0 + c, tap, use[u]);
                    }
            }
    }
}

/* The channels the product needs (as indices, in order) and their count.
 * A channel whose weight is the same value v in every kernel and tap adds
 * v x (the window's sum of that channel) to every kernel's sum alike: it is
 * left out of K, and uni[ch] = v (0 for the others) gives that term per
 * pixel (emu_conv_direct8). Sums wrap modulo 2^32 either way, so the split
 * is exact. With one tap (1x1) only zero channels are left out: a 1x1
 * product over every channel reads the input in place. */
static size_t used_channels(const emu_task *t, uint16_t *use, int8_t *uni)
{
    const size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh, G = t->group;
    size_t cu = 0;
    for (size_t ch = 0; ch < C; ch++) {
        const uint8_t v = *wt_at(t, 0, 0, ch);
        bool same = true;
        for (size_t k = 0; k < N && same; k++) {
            const uint8_t *kb = wt_at(t, k, 0, ch);
            for (size_t tap = 0; tap < taps && same; tap++) same = kb[tap * G * 32] == v;
        }
        uni[ch] = 0;
        if (same && (v == 0 || taps > 1))
            uni[ch] = (int8_t)v;
        else
            use[cu++] = (uint16_t)ch;
    }
    return cu;
}

/* sum of the 16 int8 values times the 16 int8 weights u (wrapping) */
static inline uint32_t dot16(const uint8_t *p, const int8_t *u)
{
#ifdef __SSE2__
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i w = _mm_loadu_si128((const __m128i *)(const void *)u);
    /* int8 -> int16: the byte in the high half, shifted down with its sign */
    __m128i s = _mm_add_epi32(_mm_madd_epi16(_mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8),
                                             _mm_srai_epi16(_mm_unpacklo_epi8(w, w), 8)),
                              _mm_madd_epi16(_mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8),
                                             _mm_srai_epi16(_mm_unpackhi_epi8(w, w), 8)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(s);
#else
    uint32_t sum = 0;
    for (int i = 0; i < 16; i++) sum += (uint32_t)(int32_t)(int8_t)p[i] * (uint32_t)(int32_t)u[i];
    return sum;
#endif
}

/* 128 x the sum of |w + ow| over each kernel's taps and channels: |x| <= 128
 * for every input and pad lane, so it bounds |sum + ow x window sum|. */
static void kernel_bounds(const emu_task *t, int32_t ow, uint64_t *bound)
{
    const size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh;
    for (size_t k = 0; k < N; k++) {
        uint64_t sum = 0;
        for (size_t c0 = 0; c0 < C; c0 += 32)
            for (size_t tap = 0; tap < taps; tap++) {
                const uint8_t *w = wt_at(t, k, tap, c0);
                for (size_t i = 0; i < 32; i++) {
                    const int32_t v = (int8_t)w[i] + ow;
                    sum += (uint64_t)(v < 0 ? -v : v);
                }
            }
        bound[k] = 128 * sum;
    }
}

npk_status emu_conv_direct8(npk_rk_emu *e, const emu_task *t, int32_t *acc, int32_t *s,
                            const emu_dpu8 *dpu, const emu_where *w, npk_error *err)
{
    const npk_tfl_qkern *qk = e->qk;
    const size_t C = t->c, N = t->n, taps = (size_t)t->kw * t->kh, G = t->group;
    const size_t pix = (size_t)t->w * t->h, P = (size_t)t->ow * t->oh;

    /* B (and the channels it uses): kept across runs while the weight
     * bytes are unchanged (emu_wcache.c), else built in scratch. */
    uint16_t *use = emu_scratch_get(&e->t, C * (sizeof(uint16_t) + 1));
    if (!use) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    int8_t *uni = (int8_t *)(use + C);
    const size_t raw = (N + G - 1) / G * G * C * taps;
    const bool packed = qk->packed_b;
    size_t cu = 0, bbytes = 0;
    const uint8_t *bop = NULL;
    emu_wpack *wp = raw <= t->wt_span ? emu_wcache_find(e, t, packed, raw) : NULL;
    if (wp) {
        use = wp->use, uni = wp->uni, cu = wp->cu, bop = wp->b;
    } else {
        cu = used_channels(t, use, uni);
        const size_t K = taps * cu;
        if (packed ? !npk_tfl_qpack_bytes(N, K, &bbytes) : !npk_mul_sz(N, K, &bbytes))
            return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        if (raw <= t->wt_span) wp = emu_wcache_add(e, t, packed, raw, bbytes);
        uint8_t *b = wp ? wp->b : emu_scratch_get(packed ? &e->pb : &e->b, bbytes ? bbytes : 1);
        if (!b) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        (packed ? pack_b : rows_b)(t, use, cu, K, b);
        if (wp) {
            memcpy(wp->use, use, cu * sizeof *use), memcpy(wp->uni, uni, C), wp->cu = cu;
            use = wp->use, uni = wp->uni, wp->wabs_ok = false;
        }
        bop = b;
    }
    /* The planes holding a channel left out with a weight other than 0. */
    bool any_uni = false;
    for (size_t ch = 0; ch < C; ch++) any_uni |= uni[ch] != 0;

    /* The input pixel-major (pix rows of C bytes), then the pad lanes' row. */
    uint8_t *x = emu_scratch_get(&e->a, (pix + 1) * C + 16); /* + 16: see `run` */
    if (!x) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    /* CPEND: each input pixel's sum of every channel, taken on the way; and
     * each input pixel's sum over the channels left out, times their weight. */
    const bool ws = dpu ? t->cpend : s != NULL;
    uint32_t *psum = NULL, *usum = NULL;
    if (ws || any_uni) {
        psum = emu_scratch_get(&e->s2, 2 * (pix + 1) * sizeof *psum);
        if (!psum) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        usum = psum + pix + 1;
        if (!ws) memset(psum, 0, (pix + 1) * sizeof *psum);
    }
    const size_t W = t->w, H = t->h; /* locals: the byte stores cannot alias them */
    const uint64_t lp = t->line_pitch, sp = t->surf_pitch;
    const size_t planes = C / 16;
    for (size_t y = 0; y < H; y++)
        for (size_t xx = 0; xx < W; xx++) {
            /* a pixel's atoms from every plane, stored one after another */
            const uint8_t *src = t->in + y * lp + xx * 16;
            uint8_t *d = x + (y * W + xx) * C;
            if (ws)
                psum[y * W + xx] = copy_sum(src, sp, planes, d);
            else
                for (size_t cp = 0; cp < planes; cp++) memcpy(d + cp * 16, src + cp * sp, 16);
            if (any_uni) {
                uint32_t us = 0;
                for (size_t cp = 0; cp < planes; cp++) us += dot16(src + cp * sp, uni + cp * 16);
                usum[y * W + xx] = us;
            }
        }
    uint8_t *padv = x + pix * C;
    for (size_t ch = 0; ch < C; ch++) padv[ch] = pad_lane(t->pad_value, ch);
    if (psum) {
        uint32_t ps = 0, us = 0;
        for (size_t ch = 0; ch < C; ch++) {
            ps += (uint32_t)(int32_t)(int8_t)padv[ch];
            us += (uint32_t)(int32_t)(int8_t)padv[ch] * (uint32_t)(int32_t)uni[ch];
        }
        psum[pix] = ps, usum[pix] = us;
    }

    const bool all = cu == C;
    /* A few used channels in one run (the first layer's 3): each tap's are
     * copied as 16 bytes from the first, the bytes past the run read from
     * the next pixel (or the slack) and overwritten by the next tap or row
     * (or written to the slack of A). */
    const bool run = !all && cu && cu <= 16 && (size_t)use[cu - 1] - use[0] == cu - 1;
    const size_t K = taps * cu;
    npk_tfl_qgemm g;
    memset(&g, 0, sizeof g);
    g.n = N, g.k = K, g.ldb = K, g.is_signed = true;
    if (packed) {
        size_t wbytes = qk->gemm_work(K);
        if (wbytes == SIZE_MAX) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        g.work = emu_scratch_get(&e->work, wbytes ? wbytes : 1);
        if (!g.work) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        g.bp = bop;
    } else {
        g.b = bop;
    }

    const bool in_place = all && taps == 1 && t->sx == 1 && t->sy == 1 && t->pl == 0 &&
                          t->pt == 0 && t->ow == t->w && t->oh == t->h;
    size_t rows = K ? A_BLOCK_BYTES / K / 12 * 12 : P;
    if (rows < 12) rows = 12;
    if (in_place) rows = P;
    int32_t *cb = acc, *sb = s;
    emu_dpu8 d;
    if (dpu) {
        /* The atoms that need no per-pixel checks, from the kernels' bounds
         * (kept with the packed kernels, for this OW_OP). */
        d = *dpu, dpu = &d;
        const int32_t ow = t->cpend ? t->ow_op : 0;
        uint8_t *safe = wp && d.loop == 2 ? emu_scratch_get(&e->sf, N / 16 + 1) : NULL;
        if (safe) {
            if (!wp->wabs_ok || wp->wabs_ow != ow)
                kernel_bounds(t, ow, wp->wabs), wp->wabs_ow = ow, wp->wabs_ok = true;
            emu_dpu8_safe(&d, t, wp->wabs, safe);
        }
        /* 1x1 on AVX2: the DPU straight from the tiles (emu_gemm8.c) */
        if (in_place && emu_gemm8_fused(e, t, wp, x, psum, &d)) return NPK_OK;
        /* Blocks whose sums stay in cache. */
        size_t rf = C_BLOCK_BYTES / (N * 4) / 12 * 12;
        rows = rows < rf ? rows : rf < 12 ? 12 : rf;
        rows = rows < P ? rows : P;
        cb = emu_scratch_get(&e->c, rows * N * sizeof *cb);
        sb = ws ? emu_scratch_get(&e->s, rows * sizeof *sb) : NULL;
        if (!cb || (ws && !sb)) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    }
    uint8_t *a =
        in_place ? NULL : emu_scratch_get(&e->im, (rows < P ? rows : P) * (K ? K : 1) + 16);
    uint32_t *ub = any_uni ? emu_scratch_get(&e->u, (rows < P ? rows : P) * sizeof *ub) : NULL;
    if ((!in_place && !a) || (any_uni && !ub))
        return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    if (in_place && ws && !dpu)
        memcpy(s, psum, P * sizeof *psum); /* one tap: the pixel's own sum */
    for (size_t p0 = 0; p0 < P; p0 += rows) {
        const size_t m = P - p0 < rows ? P - p0 : rows;
        int32_t *cm = dpu ? cb : acc + p0 * N;
        uint32_t *sm = !ws ? NULL : dpu ? (uint32_t *)sb : (uint32_t *)s + p0;
        if (in_place && dpu && ws) sm = psum + p0;
        for (size_t q = 0; q < m && !in_place; q++) {
            size_t p = p0 + q;
            uint32_t oy = (uint32_t)(p / t->ow), ox = (uint32_t)(p % t->ow), sum = 0, us = 0;
            for (uint32_t ky = 0; ky < t->kh; ky++) {
                int64_t iy = (int64_t)oy * t->sy - t->pt + (int64_t)ky * t->dy;
                for (uint32_t kx = 0; kx < t->kw; kx++) {
                    int64_t ix = (int64_t)ox * t->sx - t->pl + (int64_t)kx * t->dx;
                    bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                    size_t ip = in ? (size_t)iy * t->w + (size_t)ix : pix;
                    if (ws) sum += psum[ip];
                    if (any_uni) us += usum[ip];
                    const uint8_t *src = x + ip * C;
                    uint8_t *d = a + q * K + ((size_t)ky * t->kw + kx) * cu;
                    if (all)
                        memcpy(d, src, C);
                    else if (run)
                        memcpy(d, src + use[0], 16);
                    else
                        for (size_t u = 0; u < cu; u++) d[u] = src[use[u]];
                }
            }
            if (ws) sm[q] = sum;
            if (any_uni) ub[q] = us;
        }
        g.m = m, g.a = in_place ? x + p0 * C : a, g.lda = in_place ? C : K;
        if (K)
            qk->gemm_s32(&g, cm, N);
        else
            memset(cm, 0, m * N * sizeof *cm);
        if (any_uni) /* the channels left out: the same term for every kernel */
            for (size_t q = 0; q < m; q++) {
                uint32_t *r = (uint32_t *)cm + q * N;
                for (size_t n = 0; n < N; n++) r[n] += ub[q];
            }
        if (dpu) emu_dpu8_rows(dpu, t, (const uint32_t *)cm, (const int32_t *)sm, p0, m);
    }
    return NPK_OK;
}
