/* The fused DPU's int32-lane form (loop 2 of emu_dpu8.c) for one 16-channel
 * output atom: its per-channel constants, loaded once, and one output
 * pixel's 16 sums (two vectors of 8 channels) to its 16 int8 outputs.
 * Shared by the DPU over a block of sums (emu_dpu8.c) and the 1x1 product
 * that feeds the DPU straight from its tiles' registers (emu_gemm8.c). */
#ifndef NPK_RK_EMU_DPU8_FAST_H
#define NPK_RK_EMU_DPU8_FAST_H

#include "emu_avx2.h"
#include "emu_internal.h"

#ifdef NPK_RK_EMU_AVX2
typedef struct emu_fast_atom {
    __m256i a0[2], m0[2], hi[2], lo[2], a1[2], m1e[2], m1o[2];
    __m128i rs, rb, bnr, bnl;
    __m256i one, owv, offset;
    /* radd: OUT_CVT as (x + rc) >> rs, rc = 2^(rs-1) + offset x 2^rs */
    __m256i rc;
} emu_fast_atom;

/* Whether OUT_CVT's rounding and offset fold into one add before the
 * shift: (x + 2^(rs-1) + offset x 2^rs) >> rs = floor((x + 2^(rs-1)) / 2^rs)
 * + offset (a multiple of 2^rs moves the floor by exactly offset), exact
 * where that sum cannot leave int32 (the plan's bound on x). */
static inline bool emu_fast_radd(const emu_dpu8 *d)
{
    unsigned a = 0;
    while (((int64_t)1 << a) < d->scale) a++;
    const unsigned rs = d->shift - a;
    const uint64_t off = (uint64_t)(d->offset < 0 ? -d->offset : d->offset);
    return rs >= 1 && rs <= 30 && off <= ((uint64_t)1 << 31 >> rs) &&
           d->cvt_in + ((uint64_t)1 << (rs - 1)) + (off << rs) <= (uint64_t)INT32_MAX;
}

/* The constants every atom of the task shares (d->loop == 2). */
static AVX2 inline __attribute__((always_inline)) void emu_fast_task(const emu_dpu8 *d,
                                                                     emu_fast_atom *k)
{
    unsigned a = 0;
    while (((int64_t)1 << a) < d->scale) a++;
    const unsigned rs = d->shift - a;
    k->rs = _mm_cvtsi32_si128((int)rs);
    k->rb = _mm_cvtsi32_si128((int)(rs - 1));
    k->bnr = _mm_cvtsi32_si128((int)d->st[1].shift);
    k->bnl = _mm_cvtsi32_si128((int)(32 - d->st[1].shift));
    k->one = _mm256_set1_epi32(1), k->owv = _mm256_set1_epi32((int32_t)d->ow);
    k->offset = _mm256_set1_epi32((int32_t)d->offset);
    k->rc = rs >= 1 && rs <= 30 ? _mm256_set1_epi32((int32_t)(((int64_t)1 << (rs - 1)) +
                                                              d->offset * ((int64_t)1 << rs)))
                                : _mm256_setzero_si256();
}

/* The constants of channels ch0 .. ch0 + 15, after emu_fast_task. */
static AVX2 inline __attribute__((always_inline)) void
emu_fast_atom_load(const emu_dpu8 *d, size_t ch0, emu_fast_atom *k)
{
    const emu_dpu8_step *bs = &d->st[0], *bn = &d->st[1];
    for (int q = 0; q < 2; q++) {
        const size_t ch = ch0 + 8 * (size_t)q;
        k->a0[q] = _mm256_loadu_si256((const __m256i *)(const void *)(bs->addv + ch));
        k->m0[q] = _mm256_loadu_si256((const __m256i *)(const void *)(bs->mulv + ch));
        k->hi[q] = _mm256_loadu_si256((const __m256i *)(const void *)(d->th + ch));
        k->lo[q] = _mm256_sub_epi32(_mm256_setzero_si256(), k->hi[q]);
        k->a1[q] = _mm256_loadu_si256((const __m256i *)(const void *)(bn->addv + ch));
        k->m1e[q] = _mm256_loadu_si256((const __m256i *)(const void *)(bn->mulv + ch));
        k->m1o[q] = _mm256_srli_epi64(k->m1e[q], 32);
    }
}

/* Half q (channels 8q .. 8q + 7) of a pixel: the outputs as int32, the
 * lanes failing the int32 check or-ed into bad (with chk). */
static AVX2 inline __attribute__((always_inline)) __m256i
emu_fast_half(const emu_fast_atom *k, __m256i x, const int q, const bool chk, const bool radd,
              __m256i *bad)
{
    x = _mm256_add_epi32(x, k->a0[q]);
    if (chk)
        *bad = _mm256_or_si256(*bad, _mm256_or_si256(_mm256_cmpgt_epi32(x, k->hi[q]),
                                                     _mm256_cmpgt_epi32(k->lo[q], x)));
    x = _mm256_mullo_epi32(x, k->m0[q]);
    const __m256i y = _mm256_add_epi32(x, k->a1[q]);
    const __m256i e = _mm256_srl_epi64(_mm256_mul_epi32(y, k->m1e[q]), k->bnr);
    const __m256i o =
        _mm256_sll_epi64(_mm256_mul_epi32(_mm256_srli_epi64(y, 32), k->m1o[q]), k->bnl);
    const __m256i z = _mm256_blend_epi32(e, o, 0xaa);
    if (radd) return _mm256_sra_epi32(_mm256_add_epi32(z, k->rc), k->rs);
    return _mm256_add_epi32(_mm256_add_epi32(_mm256_sra_epi32(z, k->rs),
                                             _mm256_and_si256(_mm256_sra_epi32(z, k->rb), k->one)),
                            k->offset);
}

/* x0, x1: channels 0-7 and 8-15 of one pixel's sums, CPEND's term added.
 * With chk, false (nothing stored) when a value fails the int32 check: the
 * pixel then takes the int64 steps. Else its 16 bytes go to dst. radd:
 * emu_fast_radd holds. */
static AVX2 inline __attribute__((always_inline)) bool emu_fast_pixel(const emu_fast_atom *k,
                                                                      __m256i x0, __m256i x1,
                                                                      const bool chk,
                                                                      const bool radd, uint8_t *dst)
{
    __m256i bad = _mm256_setzero_si256();
    const __m256i v0 = emu_fast_half(k, x0, 0, chk, radd, &bad),
                  v1 = emu_fast_half(k, x1, 1, chk, radd, &bad);
    if (chk && _mm256_movemask_ps(_mm256_castsi256_ps(bad))) return false;
    /* The packs work per 128-bit half: the low half holds channels 0-3 and
     * 8-11, the high half 4-7 and 12-15 (as 4-byte groups). */
    const __m256i w = _mm256_packs_epi32(v0, v1);
    const __m256i b = _mm256_packs_epi16(w, w);
    const __m128i lo16 = _mm256_castsi256_si128(b), hi16 = _mm256_extracti128_si256(b, 1);
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_unpacklo_epi32(lo16, hi16));
    return true;
}
#endif

#endif
