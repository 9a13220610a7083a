/* The 1x1 stride-1 direct int8 convolution with its DPU fused into the
 * product's tiles (AVX2): where the general path (emu_conv8.c) has the
 * interpreter's gemm_s32 write a block of int32 sums and the DPU read them
 * back, this tile's 6 pixels x 16 channels (one output atom per pixel) go
 * through the DPU's int32-lane form (emu_dpu8_fast.h) from its registers,
 * 16 bytes stored per pixel. The loops run atom by atom (the 16 kernels of
 * one panel stay in the first-level cache) over a block of pixels.
 *
 * The kernels are kept widened to int16 with the packed kernels of the
 * weight cache (emu_wcache.c): the interpreter's tile widens its packed
 * bytes on every load, a step the emulator can skip as its weights outlive
 * the run. The sums are the same pmaddwd pairs added in wrapping int32
 * lanes, so they equal gemm_s32's bit for bit (wrapping addition does not
 * depend on the order). CPEND's term (OW_OP x the pixel's sum of its
 * inputs) is folded into those kernels as w + OW_OP, so the tiles' sums
 * already hold it: no window sums, no per-pixel add (an OW_OP too large
 * for that leaves the task to the general path). */
#include <string.h>

#include "emu_dpu8_fast.h"
#include "emu_internal.h"
#include "tflite/qkern.h"

#ifdef NPK_RK_EMU_AVX2
#define MR 6
/* A block of input pixels widened to int16 at a time (second-level cache). */
#define A_BLOCK_BYTES (96 * 1024)

/* The sums of mr pixels (rows of pa, ld int16 apart) by the 16 kernels of
 * a panel (k2 pairs of k, 32 int16 each: kernels 0-7 then 8-15, each a
 * pair of k): c[r][0] kernels 0-7, c[r][1] 8-15. (Seven rows with the
 * kernels as memory operands, to leave no tail tile on 7x7 outputs, ran
 * 1.7x slower: loads, not multiplies, then bound the loop.) */
static AVX2 inline __attribute__((always_inline)) void
tile(const int16_t *pa, size_t ld, const int16_t *b, size_t k2, const int mr, __m256i c[MR][2])
{
    __m256i s[MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) s[r][0] = s[r][1] = _mm256_setzero_si256();
    for (size_t kp = 0; kp < k2; kp++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(b + kp * 32));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(b + kp * 32 + 16));
#pragma GCC unroll 8
        for (int r = 0; r < mr; r++) {
            int32_t pair;
            memcpy(&pair, pa + (size_t)r * ld + 2 * kp, sizeof pair);
            const __m256i a = _mm256_set1_epi32(pair);
            s[r][0] = _mm256_add_epi32(s[r][0], _mm256_madd_epi16(a, b0));
            s[r][1] = _mm256_add_epi32(s[r][1], _mm256_madd_epi16(a, b1));
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) c[r][0] = s[r][0], c[r][1] = s[r][1];
}

typedef void tile_fn(const int16_t *, size_t, const int16_t *, size_t, __m256i[MR][2]);
#define TILE(M)                                                                                    \
    static AVX2 void tile_##M(const int16_t *pa, size_t ld, const int16_t *b, size_t k2,           \
                              __m256i c[MR][2])                                                    \
    {                                                                                              \
        tile(pa, ld, b, k2, M, c);                                                                 \
    }
TILE(1)
TILE(2)
TILE(3)
TILE(4)
TILE(5)
TILE(6)
static tile_fn *const tiles[MR] = {tile_1, tile_2, tile_3, tile_4, tile_5, tile_6};

/* The packed kernels (qkern.h's panels of 16 kernels, bytes) widened,
 * ow added to each (w + ow stays within int16: emu_gemm8_fused). */
static AVX2 void widen_b(const uint8_t *bp, size_t n, size_t k, int32_t ow, int16_t *b16)
{
    const size_t k2 = k / 2, panel = k2 * 32;
    const __m256i owv = _mm256_set1_epi16((int16_t)ow);
    for (size_t j0 = 0; j0 < n; j0 += NPK_TFL_QPANEL) {
        const uint8_t *src = (const uint8_t *)npk_tfl_qpack_at(bp, j0, k) + NPK_TFL_QPANEL_HEAD;
        int16_t *d = b16 + j0 / NPK_TFL_QPANEL * panel;
        for (size_t i = 0; i < panel; i += 16)
            _mm256_storeu_si256((__m256i *)(void *)(d + i),
                                _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(
                                                     (const __m128i *)(const void *)(src + i))),
                                                 owv));
    }
}

/* m pixels (from p0) of an NC1HWC2 cube (16 bytes a pixel, planes sp
 * apart) widened to int16 rows of k. */
static AVX2 void widen_a(const uint8_t *in, uint64_t sp, size_t p0, size_t m, size_t k, int16_t *pa)
{
    for (size_t i = 0; i < m; i++)
        for (size_t cp = 0; cp < k / 16; cp++)
            _mm256_storeu_si256((__m256i *)(void *)(pa + i * k + cp * 16),
                                _mm256_cvtepi8_epi16(_mm_loadu_si128((
                                    const __m128i *)(const void *)(in + cp * sp + (p0 + i) * 16))));
}

/* The tiles' sums hold CPEND's term (folded into the kernels). */
static AVX2 inline __attribute__((always_inline)) void
run_atoms(const emu_task *t, const int16_t *b16, const int16_t *pa, size_t p0, size_t m,
          const emu_dpu8 *d, const bool radd)
{
    const size_t N = t->n, K = t->c, k2 = K / 2, G = t->group;
    emu_fast_atom k;
    emu_fast_task(d, &k);
    for (size_t ch0 = 0; ch0 < N; ch0 += 16) {
        emu_fast_atom_load(d, ch0, &k);
        const bool chk = !(d->safe && d->safe[ch0 / 16]);
        const int16_t *b = b16 + ch0 / 16 * k2 * 32;
        uint8_t *dst = t->out + ch0 / G * t->surf_add + ch0 % G / 16 * t->dst_surf;
        for (size_t i0 = 0, mr; i0 < m; i0 += mr) {
            /* the last 7 rows as 4 + 3 rather than 6 + 1: a one-row tile
             * is bound by its loads, not its multiplies (49 = 6 x 7 + 7) */
            mr = m - i0 == MR + 1 ? 4 : m - i0 < MR ? m - i0 : MR;
            _Alignas(32) __m256i c[MR][2];
            tiles[mr - 1](pa + i0 * K, K, b, k2, c);
            for (size_t r = 0; r < mr; r++) {
                const size_t p = p0 + i0 + r;
                if (!emu_fast_pixel(&k, c[r][0], c[r][1], chk, radd, dst + p * 16)) {
                    /* the sums hold CPEND's term: a window sum of 0 adds
                     * nothing more */
                    _Alignas(32) uint32_t c16[16];
                    _mm256_store_si256((__m256i *)(void *)c16, c[r][0]);
                    _mm256_store_si256((__m256i *)(void *)(c16 + 8), c[r][1]);
                    emu_dpu8_pixel(d, t, c16, 0, ch0, dst + p * 16);
                }
            }
        }
    }
}

static AVX2 void run(const emu_task *t, const int16_t *b16, const int16_t *pa, size_t p0, size_t m,
                     const emu_dpu8 *d)
{
    if (emu_fast_radd(d))
        run_atoms(t, b16, pa, p0, m, d, true);
    else
        run_atoms(t, b16, pa, p0, m, d, false);
}

bool emu_gemm8_fused(npk_rk_emu *e, const emu_task *t, emu_wpack *wp, const uint8_t *in,
                     uint64_t sp, const emu_dpu8 *d)
{
    const size_t N = t->n, K = t->c, P = (size_t)t->ow * t->oh;
    /* CPEND folded into the kernels: sum + OW_OP x window sum = the sum of
     * x (w + OW_OP), in the same wrapping int32 lanes (the DPU's int32-lane
     * form adds the term so; loop 2 has no CPEND saturation), with w + OW_OP
     * within int16 so the pairs stay exact (an OW_OP beyond that takes the
     * general path, with window sums). */
    if (e->qk != npk_tfl_qkern_avx2 || !e->qk || !wp || !wp->packed || wp->cu != K ||
        d->loop != 2 || d->dw || !d->cpend || t->dw || N % 16 || t->group % 16 || K % 32 || !K ||
        K > A_BLOCK_BYTES / 2 / MR || d->ow < -32768 + 128 || d->ow > 32767 - 127)
        return false;
    const int32_t ow = (int32_t)d->ow;
    if (!wp->b16 || wp->b16_ow != ow) {
        if (!emu_wcache_b16(e, wp, N * K * sizeof(int16_t))) return false;
        widen_b(wp->b, N, K, ow, wp->b16);
        wp->b16_ow = ow;
    }
    size_t rows = A_BLOCK_BYTES / 2 / K / MR * MR;
    if (rows > P) rows = P;
    int16_t *pa = emu_scratch_get(&e->im, rows * K * sizeof *pa);
    if (!pa) return false;
    for (size_t p0 = 0; p0 < P; p0 += rows) {
        const size_t m = P - p0 < rows ? P - p0 : rows;
        widen_a(in, sp, p0, m, K, pa);
        run(t, wp->b16, pa, p0, m, d);
    }
    return true;
}
#else
bool emu_gemm8_fused(npk_rk_emu *e, const emu_task *t, emu_wpack *wp, const uint8_t *in,
                     uint64_t sp, const emu_dpu8 *d)
{
    (void)e, (void)t, (void)wp, (void)in, (void)sp, (void)d;
    return false;
}
#endif
