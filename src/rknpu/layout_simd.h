/* Vector helpers shared by the layout converters: unaligned and streaming
 * loads and stores, and in-register transposes (8 x 8 of 16-bit elements,
 * 16 x 16 of bytes) on SSE2 registers and, within each 128-bit lane, on AVX2
 * registers. The transposes work in place on arrays that the compiler keeps
 * in registers once the loops are unrolled (GCC does not unroll them at -O2
 * by itself, and then spills every step to the stack). */
#ifndef NPK_RKNPU_LAYOUT_SIMD_H
#define NPK_RKNPU_LAYOUT_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAYOUT_UNROLL _Pragma("GCC unroll 16")

#if defined(__SSE2__)
#include <emmintrin.h>
#define LAYOUT_SSE2 1

static inline __m128i ld16(const uint8_t *s)
{
    return _mm_loadu_si128((const __m128i *)(const void *)s);
}
/* nt: a streaming store (d 16-byte aligned), for destinations past the caches. */
static inline void st16(uint8_t *d, __m128i v, bool nt)
{
    if (nt)
        _mm_stream_si128((__m128i *)(void *)d, v);
    else
        _mm_storeu_si128((__m128i *)(void *)d, v);
}

static inline void tr8x8_u16(__m128i *v)
{
    __m128i t[8], u[8];
    LAYOUT_UNROLL for (int i = 0; i < 4; i++)
    {
        t[2 * i] = _mm_unpacklo_epi16(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm_unpackhi_epi16(v[2 * i], v[2 * i + 1]);
    }
    LAYOUT_UNROLL for (int h = 0; h < 2; h++)
    {
        u[4 * h + 0] = _mm_unpacklo_epi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 1] = _mm_unpackhi_epi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 2] = _mm_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
    }
    LAYOUT_UNROLL for (int j = 0; j < 4; j++)
    {
        v[2 * j] = _mm_unpacklo_epi64(u[j], u[4 + j]);
        v[2 * j + 1] = _mm_unpackhi_epi64(u[j], u[4 + j]);
    }
}

static inline void tr16x16_u8(__m128i *v)
{
    __m128i a[16], b[16];
    LAYOUT_UNROLL for (int i = 0; i < 8; i++)
    {
        a[2 * i] = _mm_unpacklo_epi8(v[2 * i], v[2 * i + 1]);
        a[2 * i + 1] = _mm_unpackhi_epi8(v[2 * i], v[2 * i + 1]);
    }
    LAYOUT_UNROLL for (int q = 0; q < 4; q++)
    {
        b[4 * q + 0] = _mm_unpacklo_epi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 1] = _mm_unpackhi_epi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 2] = _mm_unpacklo_epi16(a[4 * q + 1], a[4 * q + 3]);
        b[4 * q + 3] = _mm_unpackhi_epi16(a[4 * q + 1], a[4 * q + 3]);
    }
    LAYOUT_UNROLL for (int h = 0; h < 2; h++) LAYOUT_UNROLL for (int j = 0; j < 4; j++)
    {
        a[8 * h + 2 * j] = _mm_unpacklo_epi32(b[8 * h + j], b[8 * h + 4 + j]);
        a[8 * h + 2 * j + 1] = _mm_unpackhi_epi32(b[8 * h + j], b[8 * h + 4 + j]);
    }
    LAYOUT_UNROLL for (int j = 0; j < 8; j++)
    {
        v[2 * j] = _mm_unpacklo_epi64(a[j], a[8 + j]);
        v[2 * j + 1] = _mm_unpackhi_epi64(a[j], a[8 + j]);
    }
}
#endif

/* AVX2, chosen at run time (rk_layout_have_avx2). */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define LAYOUT_AVX2 1
#define AVX2_FN     __attribute__((target("avx2")))

/* a in lane 0, b in lane 1. */
AVX2_FN static inline __m256i ld_pair(const uint8_t *a, const uint8_t *b)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)a)),
        _mm_loadu_si128((const __m128i *)(const void *)b), 1);
}
AVX2_FN static inline void st_pair(uint8_t *a, uint8_t *b, __m256i v)
{
    _mm_storeu_si128((__m128i *)(void *)a, _mm256_castsi256_si128(v));
    _mm_storeu_si128((__m128i *)(void *)b, _mm256_extracti128_si256(v, 1));
}
AVX2_FN static inline __m256i ld32(const uint8_t *s)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)s);
}
/* nt: two streaming 16-byte stores (d 16-byte aligned). */
AVX2_FN static inline void st32(uint8_t *d, __m256i v, bool nt)
{
    if (nt) {
        _mm_stream_si128((__m128i *)(void *)d, _mm256_castsi256_si128(v));
        _mm_stream_si128((__m128i *)(void *)(d + 16), _mm256_extracti128_si256(v, 1));
    } else {
        _mm256_storeu_si256((__m256i *)(void *)d, v);
    }
}

AVX2_FN static inline void tr8x8_u16_lanes(__m256i *v)
{
    __m256i t[8], u[8];
    LAYOUT_UNROLL for (int i = 0; i < 4; i++)
    {
        t[2 * i] = _mm256_unpacklo_epi16(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi16(v[2 * i], v[2 * i + 1]);
    }
    LAYOUT_UNROLL for (int h = 0; h < 2; h++)
    {
        u[4 * h + 0] = _mm256_unpacklo_epi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 1] = _mm256_unpackhi_epi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 2] = _mm256_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
    }
    LAYOUT_UNROLL for (int j = 0; j < 4; j++)
    {
        v[2 * j] = _mm256_unpacklo_epi64(u[j], u[4 + j]);
        v[2 * j + 1] = _mm256_unpackhi_epi64(u[j], u[4 + j]);
    }
}

AVX2_FN static inline void tr16x16_u8_lanes(__m256i *v)
{
    __m256i a[16], b[16];
    LAYOUT_UNROLL for (int i = 0; i < 8; i++)
    {
        a[2 * i] = _mm256_unpacklo_epi8(v[2 * i], v[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_epi8(v[2 * i], v[2 * i + 1]);
    }
    LAYOUT_UNROLL for (int q = 0; q < 4; q++)
    {
        b[4 * q + 0] = _mm256_unpacklo_epi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 1] = _mm256_unpackhi_epi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 2] = _mm256_unpacklo_epi16(a[4 * q + 1], a[4 * q + 3]);
        b[4 * q + 3] = _mm256_unpackhi_epi16(a[4 * q + 1], a[4 * q + 3]);
    }
    LAYOUT_UNROLL for (int h = 0; h < 2; h++) LAYOUT_UNROLL for (int j = 0; j < 4; j++)
    {
        a[8 * h + 2 * j] = _mm256_unpacklo_epi32(b[8 * h + j], b[8 * h + 4 + j]);
        a[8 * h + 2 * j + 1] = _mm256_unpackhi_epi32(b[8 * h + j], b[8 * h + 4 + j]);
    }
    LAYOUT_UNROLL for (int j = 0; j < 8; j++)
    {
        v[2 * j] = _mm256_unpacklo_epi64(a[j], a[8 + j]);
        v[2 * j + 1] = _mm256_unpackhi_epi64(a[j], a[8 + j]);
    }
}
#endif

#endif
