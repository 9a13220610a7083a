/* The exact requantisation's bias and multiplier records, four channels a
 * step on AVX2 hosts (chosen at run time): [bias', b[c]] and [k[c], a[c]]
 * as little-endian words, bias' = bias - zx * (wsum - zsum) - lo. The
 * products are taken on 32-bit halves, so a block is done here only when
 * its wsum - zsum and zx fit in int32 and every bias' fits in int32; the
 * caller's loop does the rest (and reports a bias' that does not fit). */
#include "layer_internal.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#include "core/cpu.h"

#define AVX2 __attribute__((target("avx2")))

AVX2 static uint32_t records_avx2(const rk_exact_src *s, uint32_t n, uint8_t *bias, uint8_t *mul)
{
    const __m256i i32min = _mm256_set1_epi64x(INT32_MIN), i32max = _mm256_set1_epi64x(INT32_MAX),
                  zsum = _mm256_set1_epi64x(s->zsum), zx = _mm256_set1_epi64x(s->zx),
                  zero = _mm256_setzero_si256();
    uint32_t c = 0;
    for (; c + 4 <= n; c += 4) {
        __m256i d = _mm256_sub_epi64(_mm256_loadu_si256((const __m256i *)(s->ws + c)), zsum);
        __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi64(d, i32max), _mm256_cmpgt_epi64(i32min, d));
        __m256i b =
            s->bi ? _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(s->bi + c))) : zero;
        b = _mm256_sub_epi64(b, _mm256_mul_epi32(d, zx));
        if (s->lo)
            b = _mm256_sub_epi64(
                b, _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(s->lo + c))));
        bad = _mm256_or_si256(
            bad, _mm256_or_si256(_mm256_cmpgt_epi64(b, i32max), _mm256_cmpgt_epi64(i32min, b)));
        if (!_mm256_testz_si256(bad, bad)) break;
        __m256i qb = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(s->qb + c)));
        _mm256_storeu_si256((__m256i *)(bias + 8 * (size_t)c),
                            _mm256_blend_epi32(b, _mm256_slli_epi64(qb, 32), 0xAA));
        __m128i k = _mm_loadu_si128((const __m128i *)(s->qk + c)),
                a = _mm_loadu_si128((const __m128i *)(s->qa + c));
        _mm_storeu_si128((__m128i *)(mul + 8 * (size_t)c), _mm_unpacklo_epi32(k, a));
        _mm_storeu_si128((__m128i *)(mul + 8 * (size_t)c + 16), _mm_unpackhi_epi32(k, a));
    }
    return c;
}

uint32_t rk_exact_records_fast(const rk_exact_src *s, uint32_t n, uint8_t *bias, uint8_t *mul)
{
    if (s->zx < INT32_MIN || s->zx > INT32_MAX || !npk_cpu_has(NPK_CPU_AVX2)) return 0;
    return records_avx2(s, n, bias, mul);
}
#else
uint32_t rk_exact_records_fast(const rk_exact_src *s, uint32_t n, uint8_t *bias, uint8_t *mul)
{
    (void)s, (void)n, (void)bias, (void)mul;
    return 0;
}
#endif
