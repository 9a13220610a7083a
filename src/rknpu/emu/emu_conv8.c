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

/* The sum of the int8 values of a pixel's atoms in n planes (pitch sp),
 * wrapping like the sums. */
static inline uint32_t atoms_sum(const uint8_t *src, uint64_t sp, size_t n)
{
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi8((char)0x80), zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (size_t cp = 0; cp < n; cp++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + cp * sp));
        acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_xor_si128(v, flip), zero));
    }
    /* sum(v) = sum(v ^ 0x80 as unsigned) - 16 * 128 per atom */
    return (uint32_t)_mm_cvtsi128_si32(acc) + (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(acc, 8)) -
           (uint32_t)n * 16u * 128u;
#else
    uint32_t sum = 0;
    for (size_t cp = 0; cp < n; cp++)
        for (int i = 0; i < 16; i++) sum += (uint32_t)(int32_t)(int8_t)src[cp * sp + (size_t)i];
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
    memset(b, 0, t->n * K); /* the padding of the rows (row_len) */
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

/* The used channels one run within a plane (the first layer's 3): each
 * tap's are copied as 16 bytes (emu_conv_direct8). */
static bool one_run(const uint16_t *use, size_t cu, size_t C)
{
    return cu && cu < C && (size_t)use[cu - 1] - use[0] == cu - 1 &&
           use[0] / 16 == use[cu - 1] / 16;
}

/* The length of A's rows and B's: K, or with a short run of channels (the
 * first layer's 3 x 9 taps = 27) K rounded up to 16 with zero weights and
 * zero bytes in A, so the product's A packing reads whole 16-byte blocks
 * (a K with a tail copies each row's tail through a buffer: a store-to-load
 * stall per row, more than the padding's products cost). */
static size_t row_len(const uint16_t *use, size_t cu, size_t C, size_t K)
{
    return one_run(use, cu, C) && K % 16 && K < 64 ? (K + 15) / 16 * 16 : K;
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

#ifdef __GNUC__
#define ROW_INLINE static inline __attribute__((always_inline))
#else
#define ROW_INLINE static inline
#endif

/* n output pixels in a row whose taps all lie inside the input, `run` from
 * the first byte of an atom: each tap's cu channels copied as 16 bytes at
 * the tap's offset rel from the pixel's first tap (b0, then sx atoms on),
 * the bytes from Kt to K zeroed; with ps0 (ps0 + relp: the taps' sums of
 * every channel) the window's sum to wsm. Called with constant taps, cu
 * and K for the first layer's shape. */
ROW_INLINE void inside_row(uint8_t *dst, const uint8_t *b0, size_t bstep, const int64_t *rel,
                           const uint32_t *ps0, size_t pstep, const int64_t *relp, uint32_t *wsm,
                           size_t n, size_t taps, size_t cu, size_t K)
{
    for (size_t i = 0; i < n; i++, dst += K, b0 += bstep) {
        uint32_t sum = 0;
        for (size_t tap = 0; tap < taps; tap++) {
            memcpy(dst + tap * cu, b0 + rel[tap], 16);
            if (ps0) sum += ps0[relp[tap]];
        }
        if (K > taps * cu) memset(dst + taps * cu, 0, 16); /* into the next row */
        if (ps0) wsm[i] = sum, ps0 += pstep;
    }
}

/* Rows y0 .. y1 - 1 of each input pixel's sum of every channel (wps) and
 * its sum over the channels times uni (wus). */
static void pixel_sums(const emu_task *t, const int8_t *uni, bool wps, bool wus, size_t y0,
                       size_t y1, uint32_t *psum, uint32_t *usum)
{
    const size_t W = t->w, planes = t->c / 16;
    const uint64_t lp = t->line_pitch, sp = t->surf_pitch;
    for (size_t y = y0; y < y1; y++) {
        size_t xx = 0;
#ifdef __SSE2__
        /* four pixels (a line of atoms) at a time: one store of their sums */
        const __m128i flip = _mm_set1_epi8((char)0x80), zero = _mm_setzero_si128();
        const __m128i bias = _mm_set1_epi32((int32_t)(planes * 16 * 128));
        for (; wps && !wus && xx + 4 <= W; xx += 4) {
            const uint8_t *src = t->in + y * lp + xx * 16;
            __m128i acc[4] = {zero, zero, zero, zero};
            for (size_t cp = 0; cp < planes; cp++)
                for (int i = 0; i < 4; i++) {
                    const __m128i v =
                        _mm_loadu_si128((const __m128i *)(const void *)(src + cp * sp + 16 * i));
                    acc[i] = _mm_add_epi64(acc[i], _mm_sad_epu8(_mm_xor_si128(v, flip), zero));
                }
            const __m128i ab = _mm_add_epi64(_mm_unpacklo_epi64(acc[0], acc[1]),
                                             _mm_unpackhi_epi64(acc[0], acc[1]));
            const __m128i cd = _mm_add_epi64(_mm_unpacklo_epi64(acc[2], acc[3]),
                                             _mm_unpackhi_epi64(acc[2], acc[3]));
            const __m128i r = _mm_castps_si128(_mm_shuffle_ps(
                _mm_castsi128_ps(ab), _mm_castsi128_ps(cd), _MM_SHUFFLE(2, 0, 2, 0)));
            _mm_storeu_si128((__m128i *)(void *)(psum + y * W + xx), _mm_sub_epi32(r, bias));
        }
#endif
        for (; xx < W; xx++) {
            const uint8_t *src = t->in + y * lp + xx * 16;
            if (wps) psum[y * W + xx] = atoms_sum(src, sp, planes);
            if (wus) {
                uint32_t us = 0;
                for (size_t cp = 0; cp < planes; cp++) us += dot16(src + cp * sp, uni + cp * 16);
                usum[y * W + xx] = us;
            }
        }
    }
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
        const size_t K = row_len(use, cu, C, taps * cu);
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
    /* Channels left out with a weight other than 0; when every channel left
     * out has the same weight v (the first layer's 29 padding channels),
     * their term is v x (the window's sum of every channel - the sum of its
     * row of A): no per-pixel pass over their weights. */
    bool any_uni = false, one_uni = cu > 0;
    int32_t v0 = 0;                                      /* the first channel left out's weight */
    for (size_t ch = 0, u = 0; ch < C && cu < C; ch++) { /* none left out: no term */
        any_uni |= uni[ch] != 0;
        if (u < cu && use[u] == ch)
            u++;
        else if (u == ch) /* the first left out */
            v0 = uni[ch];
        else
            one_uni &= uni[ch] == v0;
    }
    one_uni &= any_uni;
    const uint32_t uv = (uint32_t)v0;

    const bool all = cu == C;
    const size_t W = t->w, H = t->h;
    const uint64_t lp = t->line_pitch, sp = t->surf_pitch;
    const size_t planes = C / 16;
    /* 1x1 stride 1 over every channel: the product reads the NC1HWC2 cube
     * in place (output pixel p = input pixel p at 16 p in each plane), and
     * its row sums are the CPEND window sums. */
    const bool in_place = all && taps == 1 && t->sx == 1 && t->sy == 1 && t->pl == 0 &&
                          t->pt == 0 && t->ow == t->w && t->oh == t->h && (lp == 16 * W || H == 1);
    const bool ws = dpu ? t->cpend : s != NULL;

    /* Otherwise A is built a block of rows at a time from the planes (im2col).
     * The pad lanes, read by taps outside the input: C bytes, the planes 16
     * apart. */
    uint8_t *padv = emu_scratch_get(&e->a, (C + 7) / 8 * 8 + 2 * taps * sizeof(int64_t));
    if (!padv) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    for (size_t ch = 0; ch < C && !in_place; ch++) padv[ch] = pad_lane(t->pad_value, ch);
    /* Each input pixel's sum of every channel (CPEND, one_uni) and its sum
     * over the channels left out times their weight (other any_uni); the pad
     * lanes' at index pix. */
    const bool wps = ws || one_uni, wus = any_uni && !one_uni;
    uint32_t *psum = NULL, *usum = NULL;
    if (!in_place && (wps || wus)) {
        psum = emu_scratch_get(&e->s2, 2 * (pix + 1) * sizeof *psum);
        if (!psum) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        usum = psum + pix + 1;
        uint32_t ps = 0, us = 0;
        for (size_t ch = 0; ch < C; ch++) {
            ps += (uint32_t)(int32_t)(int8_t)padv[ch];
            us += (uint32_t)(int32_t)(int8_t)padv[ch] * (uint32_t)(int32_t)uni[ch];
        }
        psum[pix] = ps, usum[pix] = us;
    }

    /* A few used channels in one run within a plane (the first layer's 3):
     * each tap's are copied as 16 bytes from the first (from the atom, or a
     * copy of it when the run starts inside: no byte past the atom is read),
     * the bytes past the run overwritten by the next tap or row (or written
     * to the slack of A). */
    const bool run = one_run(use, cu, C);
    const size_t Kt = taps * cu, K = row_len(use, cu, C, Kt);
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
        if (in_place && emu_gemm8_fused(e, t, wp, t->in, sp, &d)) return NPK_OK;
        /* Blocks whose sums stay in cache. */
        size_t rf = C_BLOCK_BYTES / (N * 4) / 12 * 12;
        rows = rows < rf ? rows : rf < 12 ? 12 : rf;
        rows = rows < P ? rows : P;
        cb = emu_scratch_get(&e->c, rows * N * sizeof *cb);
        sb = ws ? emu_scratch_get(&e->s, rows * sizeof *sb) : NULL;
        if (!cb || (ws && !sb)) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    }
    const size_t mrows = rows < P ? rows : P;
    uint8_t *a = in_place ? NULL : emu_scratch_get(&e->im, mrows * (K ? K : 1) + 16);
    /* ub: each row's term of the channels left out; one_uni: the rows' sums
     * of every channel in the window (ws: in sm) after it */
    uint32_t *ub = any_uni ? emu_scratch_get(&e->u, 2 * mrows * sizeof *ub) : NULL;
    if ((!in_place && !a) || (any_uni && !ub))
        return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    /* locals: the byte stores into A cannot alias them */
    const int64_t kh = t->kh, kw = t->kw, sy = t->sy, sx = t->sx, dy = t->dy, dx = t->dx;
    const int64_t pt = t->pt, pl = t->pl, ih = t->h, iw = t->w;
    const size_t ow = t->ow;
    const uint8_t *in = t->in;
    /* `run` from the first byte of an atom: pixels whose taps all lie
     * inside copy them from fixed offsets (rel: in the plane, relp: in the
     * pixels' sums) */
    const bool run0 = run && use[0] % 16 == 0;
    const uint8_t *in0 = run0 ? in + (uint64_t)(use[0] / 16) * sp : in;
    int64_t *rel = (int64_t *)(void *)(padv + (C + 7) / 8 * 8), *relp = rel + taps;
    for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
            rel[ky * kw + kx] = ky * dy * (int64_t)lp + kx * dx * 16;
            relp[ky * kw + kx] = ky * dy * iw + kx * dx;
        }
    const int64_t ylast = (kh - 1) * dy, xlast = (kw - 1) * dx;
    size_t done = 0; /* input rows with their pixels' sums */
    for (size_t p0 = 0; p0 < P; p0 += rows) {
        const size_t m = P - p0 < rows ? P - p0 : rows;
        int32_t *cm = dpu ? cb : acc + p0 * N;
        uint32_t *sm = !ws ? NULL : dpu ? (uint32_t *)sb : (uint32_t *)s + p0;
        uint32_t *wsm = one_uni && !ws ? ub + mrows : sm;
        for (size_t q = 0, oy = p0 / ow, ox = p0 % ow; q < m && !in_place; q++) {
            uint32_t sum = 0, us = 0;
            uint8_t *dst = a + q * K;
            const int64_t iy0 = (int64_t)oy * sy - pt, ix0 = (int64_t)ox * sx - pl;
            if (psum && iy0 + ylast >= (int64_t)done && done < H) {
                /* the pixels' sums a few rows ahead of the taps, which then
                 * read the input rows from cache */
                const size_t need = iy0 + ylast + 1 < ih ? (size_t)(iy0 + ylast + 1) : H;
                pixel_sums(t, uni, wps, wus, done, need, psum, usum), done = need;
            }
            if (run0 && !wus && iy0 >= 0 && ix0 >= 0 && iy0 + ylast < ih && ix0 + xlast < iw) {
                /* the pixels of the row from here whose taps all lie inside */
                size_t n = (size_t)((iw - 1 - xlast - ix0) / sx) + 1;
                n = n < ow - ox ? n : ow - ox;
                n = n < m - q ? n : m - q;
                const uint8_t *b0 = in0 + (uint64_t)iy0 * lp + (uint64_t)ix0 * 16;
                const uint32_t *ps0 = wps ? psum + (size_t)iy0 * (size_t)iw + (size_t)ix0 : NULL;
                const size_t bstep = (size_t)sx * 16, pstep = (size_t)sx;
                if (taps == 9 && cu == 3 && K == 32 && ps0)
                    inside_row(dst, b0, bstep, rel, ps0, pstep, relp, wsm + q, n, 9, 3, 32);
                else
                    inside_row(dst, b0, bstep, rel, ps0, pstep, relp, wps ? wsm + q : NULL, n, taps,
                               cu, K);
                q += n - 1, ox += n;
                if (ox == ow) ox = 0, oy++;
                continue;
            }
            if (run0 && iy0 >= 0 && ix0 >= 0 && iy0 + ylast < ih && ix0 + xlast < iw) {
                /* every tap inside: at fixed offsets from the first */
                const uint8_t *b0 = in0 + (uint64_t)iy0 * lp + (uint64_t)ix0 * 16;
                const uint32_t *ps0 = psum ? psum + (size_t)iy0 * (size_t)iw + (size_t)ix0 : NULL;
                for (size_t tap = 0; tap < taps; tap++, dst += cu) {
                    memcpy(dst, b0 + rel[tap], 16);
                    if (wps) sum += ps0[relp[tap]];
                    if (wus) us += usum[ps0 - psum + relp[tap]];
                }
                if (K > Kt) memset(dst, 0, 16); /* the row's padding, into the next row */
                if (wps) wsm[q] = sum;
                if (wus) ub[q] = us;
                if (++ox == ow) ox = 0, oy++;
                continue;
            }
            for (int64_t ky = 0; ky < kh; ky++) {
                const int64_t iy = (int64_t)oy * sy - pt + ky * dy;
                for (int64_t kx = 0; kx < kw; kx++, dst += cu) {
                    const int64_t ix = (int64_t)ox * sx - pl + kx * dx;
                    const bool inside = iy >= 0 && iy < ih && ix >= 0 && ix < iw;
                    const size_t ip = inside ? (size_t)iy * (size_t)iw + (size_t)ix : pix;
                    if (wps) sum += psum[ip];
                    if (wus) us += usum[ip];
                    /* the tap's pixel: its atoms pitch apart */
                    const uint8_t *src = inside ? in + (uint64_t)iy * lp + (uint64_t)ix * 16 : padv;
                    const uint64_t pitch = inside ? sp : 16;
                    if (all) {
                        for (size_t cp = 0; cp < planes; cp++)
                            memcpy(dst + cp * 16, src + cp * pitch, 16);
                    } else if (run && use[0] % 16 == 0) {
                        memcpy(dst, src + use[0] / 16 * pitch, 16);
                    } else if (run) {
                        uint8_t atom[32] = {0};
                        memcpy(atom, src + use[0] / 16 * pitch, 16);
                        memcpy(dst, atom + use[0] % 16, 16);
                    } else {
                        for (size_t u = 0; u < cu; u++)
                            dst[u] = src[use[u] / 16 * pitch + use[u] % 16];
                    }
                }
            }
            if (K > Kt) memset(dst, 0, 16);
            if (wps) wsm[q] = sum;
            if (wus) ub[q] = us;
            if (++ox == ow) ox = 0, oy++;
        }
        if (in_place) {
            g.m = m, g.a = in + p0 * 16, g.lda = 16;
            qk->gemm_s32_blocks(&g, (size_t)sp, cm, N, sm);
        } else if (K) {
            g.m = m, g.a = a, g.lda = K;
            if (one_uni) /* with the sums of A's rows, into ub */
                qk->gemm_s32_blocks(&g, 16, cm, N, ub);
            else
                qk->gemm_s32(&g, cm, N);
        } else {
            memset(cm, 0, m * N * sizeof *cm);
        }
        if (one_uni)
            for (size_t q = 0; q < m; q++) ub[q] = uv * (wsm[q] - ub[q]);
        if (any_uni) /* the channels left out: the same term for every kernel */
            for (size_t q = 0; q < m; q++) {
                uint32_t *r = (uint32_t *)cm + q * N;
                if (ub[q])
                    for (size_t n = 0; n < N; n++) r[n] += ub[q];
            }
        if (dpu) emu_dpu8_rows(dpu, t, (const uint32_t *)cm, (const int32_t *)sm, p0, m);
    }
    return NPK_OK;
}
