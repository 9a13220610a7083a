/* 128-bit 8-bit kernels (qkern.h): SSE2 on x86 (the x86-64 baseline, for
 * CPUs without AVX2) and NEON on little-endian AArch64 (the boards). Same
 * bytes as qkern_ref.c. Both multiply pairs of k from packed B
 * (npk_tfl_qpack_b) and keep the products exact:
 *
 * - SSE2: pmaddwd on 16-bit operands (A widened once per tile row into the
 *   work space), tiles of 4 rows by 8 columns (16 registers); the
 *   requantisation is scalar (SSE2 has no signed 32x32->64 multiply nor
 *   per-lane shifts).
 * - NEON: umull/smull of byte pairs (every 8x8-bit product fits 16 bits)
 *   and uadalp/sadalp into 32-bit sums, A read as stored; tiles of 4 rows by
 *   16 columns (16 accumulators); requantisation with sqrdmulh (which is
 *   gemmlowp's SaturatingRoundingDoublingHighMul) and the rounding shift
 *   srshl after the sign fix-up, as gemmlowp's RoundingDivideByPOT.
 *
 * Depthwise (depth multiplier 1), 8 channels at a time: SSE2 pairs the taps
 * for pmaddwd, NEON multiplies each tap with smlal; taps outside the input
 * read a row of in_zero bytes, cancelled by the corrected bias
 * bias - in_zero * sum(w - w_zero). */
#include <stdint.h>
#include <string.h>

#include "npukit/checked.h"
#include "tflite/kernel.h"
#include "tflite/qkern.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define V128_SSE2 1
#elif defined(__aarch64__) && defined(__ARM_NEON) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>
#define V128_NEON 1
#endif

#if defined(V128_SSE2) || defined(V128_NEON)

#define MR     4
#define DW_MAX 64 /* taps per depthwise window handled here (more: portable) */

/* ---- depthwise: what both share ---- */

typedef struct dw_head {
    int32_t taps, pairs, blocks;
    size_t block_bytes, zrow;
} dw_head;

static bool dw_ok(const npk_tfl_qdw *d)
{
    return d->dm == 1 && d->out_c >= 8 && (int64_t)d->kh * d->kw <= DW_MAX;
}

static int16_t dw_weight(const npk_tfl_qdw *d, int32_t t, int32_t o)
{
    if (t >= d->kh * d->kw) return 0;
    return (int16_t)(npk_tfl_ld8(d->w, (size_t)t * d->out_c + o, d->is_signed) - d->w_zero);
}

static int32_t dw_bias(const npk_tfl_qdw *d, int32_t o)
{
    uint32_t wsum = 0;
    for (int32_t t = 0; t < d->kh * d->kw; t++) wsum += (uint32_t)dw_weight(d, t, o);
    return (int32_t)((uint32_t)d->bias[o] - (uint32_t)d->in_zero * wsum);
}

/* Block layout of each instruction set (below). */
static size_t dw_block_bytes(int32_t taps);
static void dw_pack_block(const npk_tfl_qdw *d, int32_t b, uint8_t *blk);

static size_t dw_pack_bytes(const npk_tfl_qdw *d)
{
    if (!dw_ok(d)) return 0;
    size_t bytes; /* 0 (no packing: the portable loops) if it overflows */
    if (!npk_mul_sz((size_t)(d->out_c / 8), dw_block_bytes(d->kh * d->kw), &bytes) ||
        !npk_add_sz(bytes, sizeof(dw_head) + (size_t)d->in_c, &bytes))
        return 0;
    return bytes;
}

static void dw_pack(const npk_tfl_qdw *d, uint8_t *packed)
{
    dw_head h;
    h.taps = d->kh * d->kw;
    h.pairs = (h.taps + 1) / 2;
    h.blocks = d->out_c / 8;
    h.block_bytes = dw_block_bytes(h.taps);
    h.zrow = sizeof h + (size_t)h.blocks * h.block_bytes;
    memcpy(packed, &h, sizeof h);
    for (int32_t b = 0; b < h.blocks; b++)
        dw_pack_block(d, b, packed + sizeof h + (size_t)b * h.block_bytes);
    memset(packed + h.zrow, (uint8_t)d->in_zero, (size_t)d->in_c);
}

static void dw_pixel(const npk_tfl_qdw *d, const dw_head *h, const uint8_t *blocks,
                     const uint8_t *const *tp, uint8_t *out);

static void dw_row_v128(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, uint8_t *out,
                        int32_t *acc)
{
    if (!d->packed) {
        npk_tfl_qkern_portable.dw_row(d, in, oy, out, acc);
        return;
    }
    dw_head h;
    memcpy(&h, d->packed, sizeof h);
    const uint8_t *blocks = d->packed + sizeof h, *zrow = d->packed + h.zrow;
    const uint8_t *tp[DW_MAX + 1];
    tp[h.taps] = zrow; /* the odd tap's partner (weights 0) */
    for (int32_t ox = 0; ox < d->out_w; ox++) {
        npk_tfl_qdw_taps(d, in, oy, ox, zrow, tp);
        uint8_t *px = out + (size_t)ox * d->out_c;
        dw_pixel(d, &h, blocks, tp, px);
        if (h.blocks * 8 < d->out_c) npk_tfl_qdw_pixel_ref(d, in, oy, ox, h.blocks * 8, px);
    }
}

#if defined(V128_SSE2)

/* ---- SSE2 ---- */

static inline __m128i ld128(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

/* Bytes 0-7 and 8-15 of v widened to 16 bits. */
static inline __m128i widen_lo(__m128i v, bool sgn)
{
    return sgn ? _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8)
               : _mm_unpacklo_epi8(v, _mm_setzero_si128());
}
static inline __m128i widen_hi(__m128i v, bool sgn)
{
    return sgn ? _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8)
               : _mm_unpackhi_epi8(v, _mm_setzero_si128());
}

static size_t round16(size_t k)
{
    return (k + 15) / 16 * 16;
}

static size_t gemm_work(size_t k)
{
    if (k > SIZE_MAX / (MR * sizeof(int16_t)) - 16) return SIZE_MAX;
    return MR * round16(k) * sizeof(int16_t);
}

static inline int32_t hsum(__m128i s)
{
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* Rows i0 .. i0 + mr - 1 of A widened to 16 bits, and mul times each row's
 * sum; row i's bytes 16j .. 16j + 15 at a + i * lda + j * ks (ks = 16: the
 * row as stored; gemm_s32_blocks: the RKNPU's NC1HWC2 planes). */
static void pack_a(const npk_tfl_qgemm *g, size_t ks, size_t i0, int mr, int16_t *pa, size_t ld16,
                   uint32_t mul, uint32_t *corr)
{
    const __m128i ones = _mm_set1_epi16(1);
    const size_t k = g->k;
    for (int r = 0; r < mr; r++) {
        const uint8_t *a = g->a + (i0 + (size_t)r) * g->lda;
        int16_t *d = pa + (size_t)r * ld16;
        __m128i sum = _mm_setzero_si128();
        for (size_t t = 0; t < k; t += 16, a += ks) {
            __m128i v;
            if (t + 16 <= k) {
                v = ld128(a);
            } else {
                uint8_t tail[16] = {0};
                memcpy(tail, a, k - t);
                v = ld128(tail);
            }
            const __m128i l = widen_lo(v, g->is_signed), h = widen_hi(v, g->is_signed);
            _mm_storeu_si128((__m128i *)(void *)(d + t), l);
            _mm_storeu_si128((__m128i *)(void *)(d + t + 8), h);
            sum =
                _mm_add_epi32(sum, _mm_add_epi32(_mm_madd_epi16(l, ones), _mm_madd_epi16(h, ones)));
        }
        corr[r] = mul * (uint32_t)hsum(sum);
    }
}

/* Sums of an mr x 8 tile: 8 columns from the 16 bytes at pb (+ 32 per k pair). */
static inline __attribute__((always_inline)) void tile(const int16_t *pa, size_t ld16,
                                                       const uint8_t *pb, size_t k2, int mr,
                                                       bool sgn, __m128i acc[MR][2])
{
    __m128i c[MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) c[r][0] = c[r][1] = _mm_setzero_si128();
    for (size_t kp = 0; kp < k2; kp++) {
        const __m128i b = ld128(pb + kp * 32);
        const __m128i b0 = widen_lo(b, sgn), b1 = widen_hi(b, sgn);
#pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            int32_t pair;
            memcpy(&pair, pa + (size_t)r * ld16 + 2 * kp, sizeof pair);
            const __m128i a = _mm_set1_epi32(pair);
            c[r][0] = _mm_add_epi32(c[r][0], _mm_madd_epi16(a, b0));
            c[r][1] = _mm_add_epi32(c[r][1], _mm_madd_epi16(a, b1));
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++) acc[r][0] = c[r][0], acc[r][1] = c[r][1];
}

typedef void (*tile_fn)(const int16_t *, size_t, const uint8_t *, size_t, __m128i[MR][2]);
#define TILE(M, S)                                                                                 \
    static void tile_##M##_##S(const int16_t *pa, size_t ld16, const uint8_t *pb, size_t k2,       \
                               __m128i acc[MR][2])                                                 \
    {                                                                                              \
        tile(pa, ld16, pb, k2, M, S, acc);                                                         \
    }
/* clang-format off */
TILE(1, 0) TILE(1, 1) TILE(2, 0) TILE(2, 1) TILE(3, 0) TILE(3, 1) TILE(4, 0) TILE(4, 1)
static const tile_fn tiles[MR][2] = {
    {tile_1_0, tile_1_1}, {tile_2_0, tile_2_1}, {tile_3_0, tile_3_1}, {tile_4_0, tile_4_1}};
/* clang-format on */

static void gemm_v128(const npk_tfl_qgemm *g)
{
    const size_t k2 = (g->k + 1) / 2, ld16 = round16(g->k);
    int16_t *pa = g->work;
    for (size_t i0 = 0; i0 < g->m; i0 += MR) {
        const int mr = g->m - i0 < MR ? (int)(g->m - i0) : MR;
        uint32_t corr[MR];
        pack_a(g, 16, i0, mr, pa, ld16, (uint32_t)g->b_zero, corr);
        for (size_t j0 = 0; j0 < g->n; j0 += 8) {
            const size_t nc = g->n - j0 < 8 ? g->n - j0 : 8;
            __m128i acc[MR][2];
            const uint8_t *pb =
                npk_tfl_qpack_at(g->bp, j0 / NPK_TFL_QPANEL * NPK_TFL_QPANEL, g->k) +
                NPK_TFL_QPANEL_HEAD + j0 % NPK_TFL_QPANEL * 2;
            tiles[mr - 1][g->is_signed](pa, ld16, pb, k2, acc);
            for (int r = 0; r < mr; r++) {
                uint32_t s[8];
                memcpy(s, acc[r], sizeof s);
                uint8_t *c = g->c + (i0 + (size_t)r) * g->ldc + j0;
                for (size_t q = 0; q < nc; q++)
                    c[q] = npk_tfl_qrequant(s[q] + (uint32_t)g->bias[j0 + q] - corr[r],
                                            g->mult[j0 + q], g->shift[j0 + q], g->out_zero,
                                            g->act_min, g->act_max);
            }
        }
    }
}

/* The tiles' sums as they are (gemm_s32 of qkern.h); A's 16-byte blocks
 * ks apart, each row's sum to rowsum (when not NULL). */
static void s32_run(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc, uint32_t *rowsum)
{
    const size_t k2 = (g->k + 1) / 2, ld16 = round16(g->k);
    int16_t *pa = g->work;
    for (size_t i0 = 0; i0 < g->m; i0 += MR) {
        const int mr = g->m - i0 < MR ? (int)(g->m - i0) : MR;
        uint32_t corr[MR];
        pack_a(g, ks, i0, mr, pa, ld16, 1, corr);
        if (rowsum) memcpy(rowsum + i0, corr, (size_t)mr * sizeof *corr);
        for (size_t j0 = 0; j0 < g->n; j0 += 8) {
            const size_t nc = g->n - j0 < 8 ? g->n - j0 : 8;
            __m128i acc[MR][2];
            const uint8_t *pb =
                npk_tfl_qpack_at(g->bp, j0 / NPK_TFL_QPANEL * NPK_TFL_QPANEL, g->k) +
                NPK_TFL_QPANEL_HEAD + j0 % NPK_TFL_QPANEL * 2;
            tiles[mr - 1][g->is_signed](pa, ld16, pb, k2, acc);
            for (int r = 0; r < mr; r++) memcpy(c + (i0 + (size_t)r) * ldc + j0, acc[r], nc * 4);
        }
    }
}

static void gemm_s32_v128(const npk_tfl_qgemm *g, int32_t *c, size_t ldc)
{
    s32_run(g, 16, c, ldc, NULL);
}

static void gemm_s32_blocks_v128(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc,
                                 uint32_t *rowsum)
{
    s32_run(g, ks, c, ldc, rowsum);
}

/* Depthwise block: the corrected bias of 8 channels, then per tap pair two
 * vectors of 4 channels x 2 taps (pmaddwd operands). */
static size_t dw_block_bytes(int32_t taps)
{
    return 8 * sizeof(int32_t) + (size_t)(taps + 1) / 2 * 32;
}

static void dw_pack_block(const npk_tfl_qdw *d, int32_t b, uint8_t *blk)
{
    int32_t bias[8];
    for (int i = 0; i < 8; i++) bias[i] = dw_bias(d, b * 8 + i);
    memcpy(blk, bias, sizeof bias);
    for (int32_t pr = 0; pr < (d->kh * d->kw + 1) / 2; pr++) {
        int16_t w[16];
        for (int e = 0; e < 16; e++) w[e] = dw_weight(d, 2 * pr + e % 2, b * 8 + e / 2);
        memcpy(blk + sizeof bias + (size_t)pr * 32, w, sizeof w);
    }
}

static inline __m128i widen8(const uint8_t *p, bool sgn)
{
    return widen_lo(_mm_loadl_epi64((const __m128i *)(const void *)p), sgn);
}

static void dw_pixel(const npk_tfl_qdw *d, const dw_head *h, const uint8_t *blocks,
                     const uint8_t *const *tp, uint8_t *out)
{
    const bool sgn = d->is_signed;
    for (int32_t b = 0; b < h->blocks; b++) {
        const uint8_t *blk = blocks + (size_t)b * h->block_bytes, *w = blk + 32;
        __m128i a0 = ld128(blk), a1 = ld128(blk + 16);
        const size_t off = (size_t)b * 8;
        for (int32_t pr = 0; pr < h->pairs; pr++) {
            const __m128i x0 = widen8(tp[2 * pr] + off, sgn),
                          x1 = widen8(tp[2 * pr + 1] + off, sgn);
            a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpacklo_epi16(x0, x1), ld128(w + pr * 32)));
            a1 = _mm_add_epi32(a1,
                               _mm_madd_epi16(_mm_unpackhi_epi16(x0, x1), ld128(w + pr * 32 + 16)));
        }
        uint32_t s[8];
        memcpy(s, &a0, 16);
        memcpy(s + 4, &a1, 16);
        for (int i = 0; i < 8; i++) {
            const size_t o = off + (size_t)i;
            out[o] = npk_tfl_qrequant(s[i], d->mult[o], d->shift[o], d->out_zero, d->act_min,
                                      d->act_max);
        }
    }
}

#else /* V128_NEON */

/* ---- NEON ---- */

/* Requantisation constants of 4 channels. */
typedef struct rq4 {
    int32x4_t mult, left, right; /* right: minus the right shift, for srshl */
} rq4;

static inline int32x4_t mbqm4(int32x4_t x, const rq4 *q)
{
    x = vqrdmulhq_s32(vshlq_s32(x, q->left), q->mult);
    /* x - 1 for negative x when shifting: srshl then rounds half away from zero */
    const int32x4_t fix = vshrq_n_s32(vandq_s32(x, q->right), 31);
    return vrshlq_s32(vqaddq_s32(x, fix), q->right);
}

/* Zero point (wrapping, as the reference), saturating narrowing of 8 lanes
 * and the clamp to [lo, hi] on the bytes (the saturation cannot change its
 * result: [lo, hi] lies within the type's range). */
static inline uint8x8_t to_bytes(int32x4_t a, int32x4_t b, int32x4_t zp, uint8x8_t lo, uint8x8_t hi,
                                 bool sgn)
{
    const int16x8_t w = vcombine_s16(vqmovn_s32(vaddq_s32(a, zp)), vqmovn_s32(vaddq_s32(b, zp)));
    if (sgn)
        return vreinterpret_u8_s8(
            vmin_s8(vmax_s8(vqmovn_s16(w), vreinterpret_s8_u8(lo)), vreinterpret_s8_u8(hi)));
    return vmin_u8(vmax_u8(vqmovun_s16(w), lo), hi);
}

static size_t gemm_work(size_t k)
{
    (void)k;
    return 0;
}

static uint32_t row_sum(const uint8_t *a, size_t k, bool sgn)
{
    uint32x4_t s = vdupq_n_u32(0);
    size_t t = 0;
    if (sgn) {
        int32x4_t si = vdupq_n_s32(0);
        for (; t + 16 <= k; t += 16)
            si = vpadalq_s16(si, vpaddlq_s8(vld1q_s8((const int8_t *)a + t)));
        s = vreinterpretq_u32_s32(si);
    } else {
        for (; t + 16 <= k; t += 16) s = vpadalq_u16(s, vpaddlq_u8(vld1q_u8(a + t)));
    }
    uint32_t sum = vaddvq_u32(s);
    for (; t < k; t++) sum += sgn ? (uint32_t)(int32_t)(int8_t)a[t] : a[t];
    return sum;
}

/* The byte pair (a[0], a[1]) in every 16-bit lane. */
static inline uint8x16_t pair_dup(const uint8_t *a)
{
    uint16_t p;
    memcpy(&p, a, sizeof p);
    return vreinterpretq_u8_u16(vdupq_n_u16(p));
}

/* Sums of an mr x 16 tile over k (rows from a[]); the odd last k pairs with 0.
 * blk: the rows stored in 16-byte blocks ks apart (gemm_s32_blocks). */
static inline __attribute__((always_inline)) void tile(const uint8_t *const *a, size_t k,
                                                       const uint8_t *pb, int mr, bool sgn,
                                                       bool blk, size_t ks, uint32x4_t acc[MR][4])
{
    uint32x4_t c[MR][4];
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) c[r][0] = c[r][1] = c[r][2] = c[r][3] = vdupq_n_u32(0);
    const size_t k2 = (k + 1) / 2;
    for (size_t kp = 0; kp < k2; kp++) {
        const uint8x16_t b0 = vld1q_u8(pb + kp * 32), b1 = vld1q_u8(pb + kp * 32 + 16);
        const bool last_odd = 2 * kp + 1 == k;
        const size_t at = blk ? kp / 8 * ks + kp % 8 * 2 : 2 * kp;
#pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            const uint8x16_t x =
                last_odd ? vreinterpretq_u8_u16(vdupq_n_u16(a[r][at])) : pair_dup(a[r] + at);
            if (sgn) {
                const int8x16_t xs = vreinterpretq_s8_u8(x), bs0 = vreinterpretq_s8_u8(b0),
                                bs1 = vreinterpretq_s8_u8(b1);
#define ACC(i, prod)                                                                               \
    c[r][i] = vreinterpretq_u32_s32(vpadalq_s16(vreinterpretq_s32_u32(c[r][i]), prod))
                ACC(0, vmull_s8(vget_low_s8(bs0), vget_low_s8(xs)));
                ACC(1, vmull_high_s8(bs0, xs));
                ACC(2, vmull_s8(vget_low_s8(bs1), vget_low_s8(xs)));
                ACC(3, vmull_high_s8(bs1, xs));
#undef ACC
            } else {
                c[r][0] = vpadalq_u16(c[r][0], vmull_u8(vget_low_u8(b0), vget_low_u8(x)));
                c[r][1] = vpadalq_u16(c[r][1], vmull_high_u8(b0, x));
                c[r][2] = vpadalq_u16(c[r][2], vmull_u8(vget_low_u8(b1), vget_low_u8(x)));
                c[r][3] = vpadalq_u16(c[r][3], vmull_high_u8(b1, x));
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < mr; r++)
        for (int i = 0; i < 4; i++) acc[r][i] = c[r][i];
}

typedef void (*tile_fn)(const uint8_t *const *, size_t, const uint8_t *, size_t, uint32x4_t[MR][4]);
#define TILE(M, S, B)                                                                              \
    static void tile_##M##_##S##_##B(const uint8_t *const *a, size_t k, const uint8_t *pb,         \
                                     size_t ks, uint32x4_t acc[MR][4])                             \
    {                                                                                              \
        tile(a, k, pb, M, S, B, ks, acc);                                                          \
    }
#define TILES(M) TILE(M, 0, 0) TILE(M, 1, 0) TILE(M, 0, 1) TILE(M, 1, 1)
TILES(1)
TILES(2)
TILES(3)
TILES(4)
/* clang-format off */
static const tile_fn tiles[MR][2] = {
    {tile_1_0_0, tile_1_1_0}, {tile_2_0_0, tile_2_1_0}, {tile_3_0_0, tile_3_1_0},
    {tile_4_0_0, tile_4_1_0}};
static const tile_fn tiles_blk[MR][2] = {
    {tile_1_0_1, tile_1_1_1}, {tile_2_0_1, tile_2_1_1}, {tile_3_0_1, tile_3_1_1},
    {tile_4_0_1, tile_4_1_1}};
/* clang-format on */

static void gemm_v128(const npk_tfl_qgemm *g)
{
    const int32x4_t zp = vdupq_n_s32(g->out_zero);
    const uint8x8_t lo = vdup_n_u8((uint8_t)g->act_min), hi = vdup_n_u8((uint8_t)g->act_max);
    for (size_t i0 = 0; i0 < g->m; i0 += MR) {
        const int mr = g->m - i0 < MR ? (int)(g->m - i0) : MR;
        const uint8_t *a[MR];
        uint32_t corr[MR];
        for (int r = 0; r < mr; r++) {
            a[r] = g->a + (i0 + (size_t)r) * g->lda;
            corr[r] = g->b_zero ? (uint32_t)g->b_zero * row_sum(a[r], g->k, g->is_signed) : 0;
        }
        for (size_t j0 = 0; j0 < g->n; j0 += NPK_TFL_QPANEL) {
            const size_t nc = g->n - j0 < NPK_TFL_QPANEL ? g->n - j0 : NPK_TFL_QPANEL;
            uint32x4_t acc[MR][4];
            const uint8_t *panel = npk_tfl_qpack_at(g->bp, j0, g->k);
            tiles[mr - 1][g->is_signed](a, g->k, panel + NPK_TFL_QPANEL_HEAD, 16, acc);
            int32_t qc[NPK_TFL_QC_N][NPK_TFL_QPANEL];
            memcpy(qc, panel, sizeof qc);
            rq4 rq[4];
            int32x4_t b[4];
            for (int i = 0; i < 4; i++) {
                rq[i].mult = vld1q_s32(qc[NPK_TFL_QC_MULT] + 4 * i);
                rq[i].left = vld1q_s32(qc[NPK_TFL_QC_LEFT] + 4 * i);
                rq[i].right = vnegq_s32(vld1q_s32(qc[NPK_TFL_QC_RIGHT] + 4 * i));
                b[i] = vld1q_s32(qc[NPK_TFL_QC_BIAS] + 4 * i);
            }
            for (int r = 0; r < mr; r++) {
                const int32x4_t cr = vdupq_n_s32((int32_t)corr[r]);
                int32x4_t v[4];
                for (int i = 0; i < 4; i++)
                    v[i] = mbqm4(vsubq_s32(vaddq_s32(vreinterpretq_s32_u32(acc[r][i]), b[i]), cr),
                                 &rq[i]);
                const uint8x16_t o = vcombine_u8(to_bytes(v[0], v[1], zp, lo, hi, g->is_signed),
                                                 to_bytes(v[2], v[3], zp, lo, hi, g->is_signed));
                uint8_t *c = g->c + (i0 + (size_t)r) * g->ldc + j0;
                if (nc == 16) {
                    vst1q_u8(c, o);
                } else {
                    uint8_t tmp[16];
                    vst1q_u8(tmp, o);
                    memcpy(c, tmp, nc);
                }
            }
        }
    }
}

/* The tiles' sums as they are (gemm_s32 of qkern.h); blk: A's 16-byte
 * blocks ks apart, each row's sum to rowsum (when not NULL). */
static void s32_run(const npk_tfl_qgemm *g, bool blk, size_t ks, int32_t *c, size_t ldc,
                    uint32_t *rowsum)
{
    for (size_t i0 = 0; i0 < g->m; i0 += MR) {
        const int mr = g->m - i0 < MR ? (int)(g->m - i0) : MR;
        const uint8_t *a[MR];
        for (int r = 0; r < mr; r++) {
            a[r] = g->a + (i0 + (size_t)r) * g->lda;
            if (!rowsum) continue;
            uint32_t sum = 0;
            for (size_t t = 0; t < g->k; t += 16)
                sum += row_sum(a[r] + t / 16 * ks, g->k - t < 16 ? g->k - t : 16, g->is_signed);
            rowsum[i0 + (size_t)r] = sum;
        }
        for (size_t j0 = 0; j0 < g->n; j0 += NPK_TFL_QPANEL) {
            const size_t nc = g->n - j0 < NPK_TFL_QPANEL ? g->n - j0 : NPK_TFL_QPANEL;
            uint32x4_t acc[MR][4];
            const uint8_t *panel = npk_tfl_qpack_at(g->bp, j0, g->k);
            (blk ? tiles_blk : tiles)[mr - 1][g->is_signed](a, g->k, panel + NPK_TFL_QPANEL_HEAD,
                                                            ks, acc);
            for (int r = 0; r < mr; r++) {
                uint32_t s[16];
                for (int i = 0; i < 4; i++) vst1q_u32(s + 4 * i, acc[r][i]);
                memcpy(c + (i0 + (size_t)r) * ldc + j0, s, nc * 4);
            }
        }
    }
}

static void gemm_s32_v128(const npk_tfl_qgemm *g, int32_t *c, size_t ldc)
{
    s32_run(g, false, 16, c, ldc, NULL);
}

static void gemm_s32_blocks_v128(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc,
                                 uint32_t *rowsum)
{
    s32_run(g, true, ks, c, ldc, rowsum);
}

/* Depthwise block: corrected bias, multiplier, left shift, minus the right
 * shift (8 channels each), then per tap the 8 channels' weights. */
static size_t dw_block_bytes(int32_t taps)
{
    return 4 * 8 * sizeof(int32_t) + (size_t)taps * 16;
}

static void dw_pack_block(const npk_tfl_qdw *d, int32_t b, uint8_t *blk)
{
    int32_t par[4][8];
    for (int i = 0; i < 8; i++) {
        const int32_t o = b * 8 + i, s = d->shift[o];
        par[0][i] = dw_bias(d, o);
        par[1][i] = d->mult[o];
        par[2][i] = s > 0 ? s : 0;
        par[3][i] = s > 0 ? 0 : s;
    }
    memcpy(blk, par, sizeof par);
    for (int32_t t = 0; t < d->kh * d->kw; t++) {
        int16_t w[8];
        for (int i = 0; i < 8; i++) w[i] = dw_weight(d, t, b * 8 + i);
        memcpy(blk + sizeof par + (size_t)t * 16, w, sizeof w);
    }
}

static void dw_pixel(const npk_tfl_qdw *d, const dw_head *h, const uint8_t *blocks,
                     const uint8_t *const *tp, uint8_t *out)
{
    const int32x4_t zp = vdupq_n_s32(d->out_zero);
    const uint8x8_t lo = vdup_n_u8((uint8_t)d->act_min), hi = vdup_n_u8((uint8_t)d->act_max);
    for (int32_t b = 0; b < h->blocks; b++) {
        const uint8_t *blk = blocks + (size_t)b * h->block_bytes;
        int32_t par[4][8];
        memcpy(par, blk, sizeof par);
        int32x4_t a0 = vld1q_s32(par[0]), a1 = vld1q_s32(par[0] + 4);
        const size_t off = (size_t)b * 8;
        for (int32_t t = 0; t < h->taps; t++) {
            int16_t wv[8];
            memcpy(wv, blk + sizeof par + (size_t)t * 16, sizeof wv);
            const int16x8_t w = vld1q_s16(wv);
            const int16x8_t x = d->is_signed
                                    ? vmovl_s8(vld1_s8((const int8_t *)tp[t] + off))
                                    : vreinterpretq_s16_u16(vmovl_u8(vld1_u8(tp[t] + off)));
            a0 = vmlal_s16(a0, vget_low_s16(x), vget_low_s16(w));
            a1 = vmlal_high_s16(a1, x, w);
        }
        const rq4 q0 = {vld1q_s32(par[1]), vld1q_s32(par[2]), vld1q_s32(par[3])};
        const rq4 q1 = {vld1q_s32(par[1] + 4), vld1q_s32(par[2] + 4), vld1q_s32(par[3] + 4)};
        vst1_u8(out + off, to_bytes(mbqm4(a0, &q0), mbqm4(a1, &q1), zp, lo, hi, d->is_signed));
    }
}

/* ---- ADD ---- */

static inline int32x4_t srdhm_rdbpot4(int32x4_t x, int32x4_t mult, int32x4_t right)
{
    x = vqrdmulhq_s32(x, mult);
    const int32x4_t fix = vshrq_n_s32(vandq_s32(x, right), 31);
    return vrshlq_s32(vqaddq_s32(x, fix), right);
}

static inline int32x4_t add4(int16x4_t x1, int16x4_t x2, const npk_tfl_qadd *q)
{
    const int32x4_t a =
        vshlq_n_s32(vaddq_s32(vmovl_s16(x1), vdupq_n_s32(q->off1)), NPK_TFL_QADD_LEFT);
    const int32x4_t b =
        vshlq_n_s32(vaddq_s32(vmovl_s16(x2), vdupq_n_s32(q->off2)), NPK_TFL_QADD_LEFT);
    return srdhm_rdbpot4(vaddq_s32(srdhm_rdbpot4(a, vdupq_n_s32(q->m1), vdupq_n_s32(q->s1)),
                                   srdhm_rdbpot4(b, vdupq_n_s32(q->m2), vdupq_n_s32(q->s2))),
                         vdupq_n_s32(q->mo), vdupq_n_s32(q->so));
}

static void add_v128(const npk_tfl_qadd *q, const uint8_t *a, const uint8_t *b, uint8_t *out,
                     size_t count)
{
    const int32x4_t zp = vdupq_n_s32(q->out_zero);
    const uint8x8_t lo = vdup_n_u8((uint8_t)q->act_min), hi = vdup_n_u8((uint8_t)q->act_max);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        int16x8_t x1, x2;
        if (q->is_signed) {
            x1 = vmovl_s8(vld1_s8((const int8_t *)a + i));
            x2 = vmovl_s8(vld1_s8((const int8_t *)b + i));
        } else {
            x1 = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(a + i)));
            x2 = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(b + i)));
        }
        vst1_u8(out + i,
                to_bytes(add4(vget_low_s16(x1), vget_low_s16(x2), q),
                         add4(vget_high_s16(x1), vget_high_s16(x2), q), zp, lo, hi, q->is_signed));
    }
    if (i < count) npk_tfl_qkern_portable.add(q, a + i, b + i, out + i, count - i);
}

#endif

#if defined(V128_SSE2)
/* SSE2 has neither signed 32x32 multiplies nor per-lane shifts: scalar. */
static void add_v128(const npk_tfl_qadd *q, const uint8_t *a, const uint8_t *b, uint8_t *out,
                     size_t count)
{
    npk_tfl_qkern_portable.add(q, a, b, out, count);
}
#endif

static const npk_tfl_qkern v128 = {
#if defined(V128_SSE2)
    "sse2",
#else
    "neon",
#endif
    true,        gemm_work, gemm_v128,     dw_pack_bytes,       dw_pack,
    dw_row_v128, add_v128,  gemm_s32_v128, gemm_s32_blocks_v128};
const npk_tfl_qkern *const npk_tfl_qkern_v128 = &v128;
#else
const npk_tfl_qkern *const npk_tfl_qkern_v128 = NULL;
#endif
