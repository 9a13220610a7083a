/* AVX2 8-bit kernels (qkern.h), chosen at run time when the CPU has AVX2.
 * Same bytes as qkern_ref.c:
 *
 * - gemm: pmaddwd on 16-bit operands (bytes widened exactly, no zero point
 *   subtracted: A as stored, B packed by npk_tfl_qpack_b), so each pair of
 *   products is exact in 32 bits and the sums wrap like the reference's;
 *   the b_zero term is subtracted per row from the row sums. Tiles of 6
 *   rows by 16 columns (12 accumulators), A rows widened once per tile row
 *   into the work space, B widened from its packed bytes as it is read.
 * - depthwise (depth multiplier 1): 16 channels at a time, the taps in pairs
 *   (punpck of two taps' widened inputs, pmaddwd with the packed filter
 *   pairs); taps outside the input read a row of in_zero bytes, which the
 *   bias correction bias - in_zero * sum(w - w_zero) cancels exactly.
 * - requantisation: gemmlowp's SaturatingRoundingDoublingHighMul as
 *   (x * m + 2^30) >> 31 in 64 bits (the same value for every product but
 *   INT32_MIN^2, which QuantizeMultiplier never gives) and
 *   RoundingDivideByPOT with per-lane shifts, 8 lanes at a time. */
#include <stdint.h>
#include <string.h>

#include "npukit/checked.h"
#include "tflite/kernel.h"
#include "tflite/qkern.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#define FN     __attribute__((target("avx2")))
#define INLINE __attribute__((target("avx2"), always_inline)) static inline
#define MR     6  /* rows per tile */
#define DW_MAX 64 /* taps per depthwise window handled here (more: portable) */

/* ---- loads and requantisation ---- */

/* 16 bytes widened to 16-bit lanes. */
INLINE __m256i widen16(const uint8_t *p, bool sgn)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    return sgn ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
}

INLINE __m256i ld8x32(const int32_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

/* Requantisation constants of 8 channels. */
typedef struct rq8 {
    __m256i mult, mult_odd, left, right, mask, half;
} rq8;

INLINE rq8 rq8_make(__m256i mult, __m256i shift)
{
    const __m256i zero = _mm256_setzero_si256();
    rq8 q;
    q.mult = mult;
    q.mult_odd = _mm256_srli_epi64(mult, 32);
    q.left = _mm256_max_epi32(shift, zero);
    q.right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    q.mask =
        _mm256_sub_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), q.right), _mm256_set1_epi32(1));
    q.half = _mm256_srli_epi32(q.mask, 1);
    return q;
}

/* SaturatingRoundingDoublingHighMul then RoundingDivideByPOT on 8 lanes. */
INLINE __m256i srdhm_rdbpot8(__m256i x, const rq8 *q)
{
    const __m256i round = _mm256_set1_epi64x((int64_t)1 << 30), zero = _mm256_setzero_si256();
    __m256i even = _mm256_mul_epi32(x, q->mult);
    __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(x, 32), q->mult_odd);
    even = _mm256_srli_epi64(_mm256_add_epi64(even, round), 31); /* bits 31..62 -> low half */
    odd = _mm256_slli_epi64(_mm256_add_epi64(odd, round), 1);    /* bits 31..62 -> high half */
    x = _mm256_blend_epi32(even, odd, 0xAA);
    /* RoundingDivideByPOT: (x >> e) + (remainder > mask / 2 + (x < 0)) */
    const __m256i rem = _mm256_and_si256(x, q->mask);
    const __m256i thr = _mm256_sub_epi32(q->half, _mm256_cmpgt_epi32(zero, x));
    x = _mm256_srav_epi32(x, q->right);
    return _mm256_sub_epi32(x, _mm256_cmpgt_epi32(rem, thr));
}

/* MultiplyByQuantizedMultiplier on 8 lanes. */
INLINE __m256i mbqm8(__m256i x, const rq8 *q)
{
    return srdhm_rdbpot8(_mm256_sllv_epi32(x, q->left), q);
}

/* Lanes 8 * half .. 8 * half + 7 of constants stored as NPK_TFL_QC_N rows
 * of 16 (a panel's, a depthwise block's). */
INLINE rq8 rq8_load(const int32_t *p, int half)
{
    rq8 q;
    q.mult = ld8x32(p + NPK_TFL_QC_MULT * 16 + half * 8);
    q.mult_odd = ld8x32(p + NPK_TFL_QC_MULT_ODD * 16 + half * 8);
    q.left = ld8x32(p + NPK_TFL_QC_LEFT * 16 + half * 8);
    q.right = ld8x32(p + NPK_TFL_QC_RIGHT * 16 + half * 8);
    q.mask = ld8x32(p + NPK_TFL_QC_MASK * 16 + half * 8);
    q.half = ld8x32(p + NPK_TFL_QC_HALF * 16 + half * 8);
    return q;
}

/* Zero point (wrapping, as the reference), then 16 lanes (a: lanes 0-7,
 * b: 8-15 in the 16-bit pack's order) to bytes, clamped to [lo, hi] (byte
 * vectors). Narrowing saturates, which leaves the clamp's result unchanged
 * as [lo, hi] lies within the type's range. */
INLINE __m128i to_bytes(__m256i a, __m256i b, __m256i zp, __m128i lo, __m128i hi, bool sgn)
{
    const __m256i w = _mm256_packs_epi32(_mm256_add_epi32(a, zp), _mm256_add_epi32(b, zp));
    const __m128i l = _mm256_castsi256_si128(w), h = _mm256_extracti128_si256(w, 1);
    /* bytes a0-3 b0-3 a4-7 b4-7 */
    if (sgn) return _mm_min_epi8(_mm_max_epi8(_mm_packs_epi16(l, h), lo), hi);
    return _mm_min_epu8(_mm_max_epu8(_mm_packus_epi16(l, h), lo), hi);
}

/* The clamp bounds as bytes. */
INLINE __m128i bound8(int32_t v)
{
    return _mm_set1_epi8((char)(uint8_t)v);
}

/* ---- gemm ---- */

static size_t round16(size_t k)
{
    return (k + 15) / 16 * 16;
}

static size_t gemm_work(size_t k)
{
    if (k > SIZE_MAX / (MR * sizeof(int16_t)) - 16) return SIZE_MAX;
    return MR * round16(k) * sizeof(int16_t);
}

/* Rows i0 .. i0 + mr - 1 of A widened to 16 bits (row stride ld16, zeros
 * up to it), and mul times each row's sum. Row i's bytes 16j .. 16j + 15 at
 * a + i * lda + j * ks (ks = 16: the row as stored; gemm_s32_blocks: the
 * RKNPU's NC1HWC2 planes). */
FN static void pack_a(const npk_tfl_qgemm *g, size_t ks, size_t i0, int mr, int16_t *pa,
                      size_t ld16, uint32_t mul, uint32_t *corr)
{
    const __m256i ones = _mm256_set1_epi16(1);
    const size_t k = g->k;
    for (int r = 0; r < mr; r++) {
        const uint8_t *a = g->a + (i0 + (size_t)r) * g->lda;
        int16_t *d = pa + (size_t)r * ld16;
        __m256i sum = _mm256_setzero_si256();
        size_t t = 0;
        for (; t + 16 <= k; t += 16, a += ks) {
            const __m256i v = widen16(a, g->is_signed);
            _mm256_storeu_si256((__m256i *)(void *)(d + t), v);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(v, ones));
        }
        if (t < k) {
            uint8_t tail[16] = {0};
            memcpy(tail, a, k - t);
            const __m256i v = widen16(tail, g->is_signed);
            _mm256_storeu_si256((__m256i *)(void *)(d + t), v);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(v, ones));
        }
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        corr[r] = mul * (uint32_t)_mm_cvtsi128_si32(s);
    }
}

/* The sums of an mr x 16 (wide) or mr x 8 tile over k2 pairs of k. */
INLINE void tile(const int16_t *pa, size_t ld16, const uint8_t *pb, size_t k2, int mr, bool wide,
                 bool sgn, __m256i acc[MR][2])
{
    __m256i c[MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) c[r][0] = c[r][1] = _mm256_setzero_si256();
    for (size_t kp = 0; kp < k2; kp++) {
        const __m256i b0 = widen16(pb + kp * 32, sgn);
        const __m256i b1 = wide ? widen16(pb + kp * 32 + 16, sgn) : _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            int32_t pair;
            memcpy(&pair, pa + (size_t)r * ld16 + 2 * kp, sizeof pair);
            const __m256i a = _mm256_set1_epi32(pair);
            c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(a, b0));
            if (wide) c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(a, b1));
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) acc[r][0] = c[r][0], acc[r][1] = c[r][1];
}

typedef void (*tile_fn)(const int16_t *, size_t, const uint8_t *, size_t, __m256i[MR][2]);

#define TILE(M, W, S)                                                                              \
    FN static void tile_##M##_##W##_##S(const int16_t *pa, size_t ld16, const uint8_t *pb,         \
                                        size_t k2, __m256i acc[MR][2])                             \
    {                                                                                              \
        tile(pa, ld16, pb, k2, M, W, S, acc);                                                      \
    }
#define TILES(M) TILE(M, 0, 0) TILE(M, 0, 1) TILE(M, 1, 0) TILE(M, 1, 1)
TILES(1)
TILES(2)
TILES(3)
TILES(4)
TILES(5)
TILES(6)
#define ROW(M)                                                                                     \
    {                                                                                              \
        {tile_##M##_0_0, tile_##M##_0_1},                                                          \
        {                                                                                          \
            tile_##M##_1_0, tile_##M##_1_1                                                         \
        }                                                                                          \
    }
static const tile_fn tiles[MR][2][2] = {ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6)};

/* Requantises the rows of a tile and stores nc columns of each. */
INLINE void tile_out(const __m256i acc[MR][2], int mr, const uint32_t *corr, const uint8_t *panel,
                     size_t nc, uint8_t *c, size_t ldc, __m256i zp, __m128i lo, __m128i hi,
                     bool sgn)
{
    const int32_t *qc = (const int32_t *)(const void *)panel;
    const bool wide = nc > 8;
    const __m256i b0 = ld8x32(qc), b1 = ld8x32(qc + 8);
    const rq8 q0 = rq8_load(qc, 0), q1 = rq8_load(qc, 1);
    for (int r = 0; r < mr; r++, c += ldc) {
        const __m256i corr_r = _mm256_set1_epi32((int32_t)corr[r]);
        const __m256i v0 = mbqm8(_mm256_add_epi32(acc[r][0], _mm256_sub_epi32(b0, corr_r)), &q0);
        const __m256i v1 =
            wide ? mbqm8(_mm256_add_epi32(acc[r][1], _mm256_sub_epi32(b1, corr_r)), &q1) : v0;
        /* bytes come out as columns 0-3 8-11 4-7 12-15 */
        const __m128i o = _mm_shuffle_epi32(to_bytes(v0, v1, zp, lo, hi, sgn), 0xD8);
        if (nc == 16) {
            _mm_storeu_si128((__m128i *)(void *)c, o);
        } else {
            _Alignas(16) uint8_t tmp[16];
            _mm_store_si128((__m128i *)(void *)tmp, o);
            memcpy(c, tmp, nc);
        }
    }
}

INLINE void gemm_run(const npk_tfl_qgemm *g, bool sgn)
{
    const size_t k2 = (g->k + 1) / 2, ld16 = round16(g->k);
    const __m256i zp = _mm256_set1_epi32(g->out_zero);
    const __m128i lo = bound8(g->act_min), hi = bound8(g->act_max);
    int16_t *pa = g->work;
    for (size_t i0 = 0; i0 < g->m; i0 += MR) {
        const int mr = g->m - i0 < MR ? (int)(g->m - i0) : MR;
        uint32_t corr[MR];
        pack_a(g, 16, i0, mr, pa, ld16, (uint32_t)g->b_zero, corr);
        uint8_t *c = g->c + i0 * g->ldc;
        for (size_t j0 = 0; j0 < g->n; j0 += NPK_TFL_QPANEL) {
            const size_t nc = g->n - j0 < NPK_TFL_QPANEL ? g->n - j0 : NPK_TFL_QPANEL;
            _Alignas(32) __m256i acc[MR][2];
            const uint8_t *panel = npk_tfl_qpack_at(g->bp, j0, g->k);
            tiles[mr - 1][nc > 8][sgn](pa, ld16, panel + NPK_TFL_QPANEL_HEAD, k2, acc);
            tile_out(acc, mr, corr, panel, nc, c + j0, g->ldc, zp, lo, hi, sgn);
        }
    }
}

FN static void gemm_avx2(const npk_tfl_qgemm *g)
{
    if (g->is_signed)
        gemm_run(g, true);
    else
        gemm_run(g, false);
}

/* The tiles' sums as they are (gemm_s32 of qkern.h): columns 0-7 in
 * acc[r][0], 8-15 in acc[r][1]; A's 16-byte blocks ks apart, each row's
 * sum to rowsum (when not NULL). */
INLINE void s32_run(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc, uint32_t *rowsum)
{
    const size_t k2 = (g->k + 1) / 2, ld16 = round16(g->k);
    int16_t *pa = g->work;
    for (size_t i0 = 0; i0 < g->m; i0 += MR) {
        const int mr = g->m - i0 < MR ? (int)(g->m - i0) : MR;
        uint32_t corr[MR];
        pack_a(g, ks, i0, mr, pa, ld16, 1, corr);
        if (rowsum) memcpy(rowsum + i0, corr, (size_t)mr * sizeof *corr);
        for (size_t j0 = 0; j0 < g->n; j0 += NPK_TFL_QPANEL) {
            const size_t nc = g->n - j0 < NPK_TFL_QPANEL ? g->n - j0 : NPK_TFL_QPANEL;
            _Alignas(32) __m256i acc[MR][2];
            const uint8_t *panel = npk_tfl_qpack_at(g->bp, j0, g->k);
            tiles[mr - 1][nc > 8][g->is_signed](pa, ld16, panel + NPK_TFL_QPANEL_HEAD, k2, acc);
            for (int r = 0; r < mr; r++) {
                int32_t *d = c + (i0 + (size_t)r) * ldc + j0;
                if (nc == NPK_TFL_QPANEL) {
                    _mm256_storeu_si256((__m256i *)(void *)d, acc[r][0]);
                    _mm256_storeu_si256((__m256i *)(void *)(d + 8), acc[r][1]);
                } else { /* through a row: gcc -O3 misjudges a copy out of acc */
                    _Alignas(32) int32_t row[NPK_TFL_QPANEL];
                    _mm256_store_si256((__m256i *)(void *)row, acc[r][0]);
                    _mm256_store_si256((__m256i *)(void *)(row + 8), acc[r][1]);
                    memcpy(d, row, nc * sizeof *d);
                }
            }
        }
    }
}

FN static void gemm_s32_avx2(const npk_tfl_qgemm *g, int32_t *c, size_t ldc)
{
    s32_run(g, 16, c, ldc, NULL);
}

FN static void gemm_s32_blocks_avx2(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc,
                                    uint32_t *rowsum)
{
    s32_run(g, ks, c, ldc, rowsum);
}

/* ---- depthwise (depth multiplier 1) ---- */

/* Packed parameters: a header, then per block of 16 channels the bias
 * (corrected) and requantisation constants in the order of the
 * accumulators ({0-3, 8-11} and {4-7, 12-15}: pmaddwd after punpck{l,h}wd
 * within 128-bit lanes), then the filter as 16-bit tap pairs in the same
 * order; then a row of in_c bytes of in_zero. */
typedef struct dw_head {
    int32_t taps, pairs, blocks;
    size_t block_bytes, zrow;
} dw_head;

#define DW_PARAM_BYTES (NPK_TFL_QC_N * 16 * 4)

/* Accumulator lane -> channel within the block. */
static int32_t lane_channel(int lane)
{
    const int half = lane / 8, p = lane % 8; /* half 0: acc lo, 1: acc hi */
    return p / 4 * 8 + half * 4 + p % 4;
}

static bool dw_ok(const npk_tfl_qdw *d)
{
    return d->dm == 1 && d->out_c >= 16 && (int64_t)d->kh * d->kw <= DW_MAX;
}

static size_t dw_pack_bytes(const npk_tfl_qdw *d)
{
    if (!dw_ok(d)) return 0;
    const size_t taps = (size_t)d->kh * d->kw, pairs = (taps + 1) / 2;
    size_t bytes; /* 0 (no packing: the portable loops) if it overflows */
    if (!npk_mul_sz((size_t)(d->out_c / 16), DW_PARAM_BYTES + pairs * 64, &bytes) ||
        !npk_add_sz(bytes, sizeof(dw_head) + (size_t)d->in_c, &bytes))
        return 0;
    return bytes;
}

static void dw_pack(const npk_tfl_qdw *d, uint8_t *packed)
{
    dw_head h;
    h.taps = d->kh * d->kw;
    h.pairs = (h.taps + 1) / 2;
    h.blocks = d->out_c / 16;
    h.block_bytes = DW_PARAM_BYTES + (size_t)h.pairs * 64;
    h.zrow = sizeof h + (size_t)h.blocks * h.block_bytes;
    memcpy(packed, &h, sizeof h);
    for (int32_t b = 0; b < h.blocks; b++) {
        uint8_t *blk = packed + sizeof h + (size_t)b * h.block_bytes;
        int32_t par[NPK_TFL_QC_N][16];
        int16_t w[2][16];
        for (int lane = 0; lane < 16; lane++) {
            const int32_t o = b * 16 + lane_channel(lane);
            uint32_t wsum = 0;
            for (int32_t t = 0; t < h.taps; t++)
                wsum += (uint32_t)(npk_tfl_ld8(d->w, (size_t)t * d->out_c + o, d->is_signed) -
                                   d->w_zero);
            const int32_t sh = d->shift[o], right = sh > 0 ? 0 : -sh;
            par[NPK_TFL_QC_BIAS][lane] =
                (int32_t)((uint32_t)d->bias[o] - (uint32_t)d->in_zero * wsum);
            par[NPK_TFL_QC_MULT][lane] = d->mult[o];
            par[NPK_TFL_QC_LEFT][lane] = sh > 0 ? sh : 0;
            par[NPK_TFL_QC_RIGHT][lane] = right;
            par[NPK_TFL_QC_MASK][lane] = (int32_t)(((int64_t)1 << right) - 1);
            par[NPK_TFL_QC_HALF][lane] = par[NPK_TFL_QC_MASK][lane] >> 1;
        }
        /* mult_odd: each 64-bit lane's high half moved down (for pmuldq) */
        for (int lane = 0; lane < 16; lane++)
            par[NPK_TFL_QC_MULT_ODD][lane] = lane % 2 ? 0 : par[NPK_TFL_QC_MULT][lane + 1];
        memcpy(blk, par, sizeof par);
        for (int32_t pr = 0; pr < h.pairs; pr++) {
            for (int half = 0; half < 2; half++)
                for (int e = 0; e < 16; e++) {
                    /* element e of the acc half: lane128 e / 8, channel pair (e % 8) / 2 */
                    const int lane = half * 8 + e / 8 * 4 + (e % 8) / 2;
                    const int32_t o = b * 16 + lane_channel(lane), t = 2 * pr + e % 2;
                    w[half][e] =
                        t < h.taps
                            ? (int16_t)(npk_tfl_ld8(d->w, (size_t)t * d->out_c + o, d->is_signed) -
                                        d->w_zero)
                            : 0;
                }
            memcpy(blk + DW_PARAM_BYTES + (size_t)pr * 64, w, sizeof w);
        }
    }
    memset(packed + h.zrow, (uint8_t)d->in_zero, (size_t)d->in_c);
}

INLINE void dw_pixel(const dw_head *h, const uint8_t *blocks, const uint8_t *const *tp,
                     uint8_t *out, bool sgn, __m256i zp, __m128i lo, __m128i hi)
{
    for (int32_t b = 0; b < h->blocks; b++) {
        const uint8_t *blk = blocks + (size_t)b * h->block_bytes;
        const int32_t *par = (const int32_t *)(const void *)blk;
        const __m256i *w = (const __m256i *)(const void *)(blk + DW_PARAM_BYTES);
        __m256i a0 = ld8x32(par), a1 = ld8x32(par + 8);
        const size_t off = (size_t)b * 16;
        for (int32_t pr = 0; pr < h->pairs; pr++) {
            const __m256i x0 = widen16(tp[2 * pr] + off, sgn),
                          x1 = widen16(tp[2 * pr + 1] + off, sgn);
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1),
                                                        _mm256_loadu_si256(w + 2 * pr)));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1),
                                                        _mm256_loadu_si256(w + 2 * pr + 1)));
        }
        const rq8 q0 = rq8_load(par, 0), q1 = rq8_load(par, 1);
        /* lanes {0-3, 8-11} and {4-7, 12-15}: the 16-bit pack puts them in order */
        _mm_storeu_si128((__m128i *)(void *)(out + off),
                         to_bytes(mbqm8(a0, &q0), mbqm8(a1, &q1), zp, lo, hi, sgn));
    }
}

FN static void dw_row_avx2(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, uint8_t *out,
                           int32_t *acc)
{
    if (!d->packed) {
        npk_tfl_qkern_portable.dw_row(d, in, oy, out, acc);
        return;
    }
    dw_head h;
    memcpy(&h, d->packed, sizeof h);
    const uint8_t *blocks = d->packed + sizeof h, *zrow = d->packed + h.zrow;
    const __m256i zp = _mm256_set1_epi32(d->out_zero);
    const __m128i lo = bound8(d->act_min), hi = bound8(d->act_max);
    const uint8_t *tp[DW_MAX + 1];
    tp[h.taps] = zrow; /* the odd tap's partner (weights 0) */
    for (int32_t ox = 0; ox < d->out_w; ox++) {
        npk_tfl_qdw_taps(d, in, oy, ox, zrow, tp);
        uint8_t *px = out + (size_t)ox * d->out_c;
        if (d->is_signed)
            dw_pixel(&h, blocks, tp, px, true, zp, lo, hi);
        else
            dw_pixel(&h, blocks, tp, px, false, zp, lo, hi);
        if (h.blocks * 16 < d->out_c) npk_tfl_qdw_pixel_ref(d, in, oy, ox, h.blocks * 16, px);
    }
}

/* ---- ADD ---- */

/* 8 bytes widened to 32-bit lanes. */
INLINE __m256i widen8x32(const uint8_t *p, bool sgn)
{
    const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return sgn ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
}

INLINE __m256i add8(const uint8_t *a, const uint8_t *b, bool sgn, __m256i off1, __m256i off2,
                    const rq8 *q1, const rq8 *q2, const rq8 *qo)
{
    const __m256i x1 =
        _mm256_slli_epi32(_mm256_add_epi32(widen8x32(a, sgn), off1), NPK_TFL_QADD_LEFT);
    const __m256i x2 =
        _mm256_slli_epi32(_mm256_add_epi32(widen8x32(b, sgn), off2), NPK_TFL_QADD_LEFT);
    return srdhm_rdbpot8(_mm256_add_epi32(srdhm_rdbpot8(x1, q1), srdhm_rdbpot8(x2, q2)), qo);
}

INLINE void add_run(const npk_tfl_qadd *q, const uint8_t *a, const uint8_t *b, uint8_t *out,
                    size_t count, bool sgn)
{
    const rq8 q1 = rq8_make(_mm256_set1_epi32(q->m1), _mm256_set1_epi32(q->s1));
    const rq8 q2 = rq8_make(_mm256_set1_epi32(q->m2), _mm256_set1_epi32(q->s2));
    const rq8 qo = rq8_make(_mm256_set1_epi32(q->mo), _mm256_set1_epi32(q->so));
    const __m256i off1 = _mm256_set1_epi32(q->off1), off2 = _mm256_set1_epi32(q->off2),
                  zp = _mm256_set1_epi32(q->out_zero);
    const __m128i lo = bound8(q->act_min), hi = bound8(q->act_max);
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m256i r0 = add8(a + i, b + i, sgn, off1, off2, &q1, &q2, &qo);
        const __m256i r1 = add8(a + i + 8, b + i + 8, sgn, off1, off2, &q1, &q2, &qo);
        /* bytes come out as elements 0-3 8-11 4-7 12-15 */
        _mm_storeu_si128((__m128i *)(void *)(out + i),
                         _mm_shuffle_epi32(to_bytes(r0, r1, zp, lo, hi, sgn), 0xD8));
    }
    if (i < count) npk_tfl_qkern_portable.add(q, a + i, b + i, out + i, count - i);
}

FN static void add_avx2(const npk_tfl_qadd *q, const uint8_t *a, const uint8_t *b, uint8_t *out,
                        size_t count)
{
    if (q->is_signed)
        add_run(q, a, b, out, count, true);
    else
        add_run(q, a, b, out, count, false);
}

static const npk_tfl_qkern avx2 = {
    "avx2",  true,        gemm_work, gemm_avx2,     dw_pack_bytes,
    dw_pack, dw_row_avx2, add_avx2,  gemm_s32_avx2, gemm_s32_blocks_avx2};
const npk_tfl_qkern *const npk_tfl_qkern_avx2 = &avx2;
#else
const npk_tfl_qkern *const npk_tfl_qkern_avx2 = NULL;
#endif
