/* Vector helpers shared by the layout converters: unaligned and streaming
 * loads and stores, and in-register transposes (8 x 8 of 16-bit elements,
 * 16 x 16 of bytes) on 128-bit registers (SSE2, NEON) and, within each
 * 128-bit lane, on AVX2 registers. The transposes work in place on arrays that the compiler keeps
 * in registers once the loops are unrolled: "#pragma GCC unroll", because
 * GCC does not unroll them at -O2 by itself and then keeps every step on
 * the stack (a third of the speed). */
#ifndef NPK_RKNPU_LAYOUT_SIMD_H
#define NPK_RKNPU_LAYOUT_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 128-bit vectors: SSE2 on x86, NEON on little-endian AArch64. zip_lo*
 * interleave the low halves of two vectors in units of 8 to 64 bits
 * (punpckl* / zip1), zip_hi* the high halves. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define LAYOUT_V128      1
#define LAYOUT_V128_NAME "sse2"
typedef __m128i v128;
static inline v128 ld16(const uint8_t *s)
{
    return _mm_loadu_si128((const __m128i *)(const void *)s);
}
/* nt: a streaming store (d 16-byte aligned), for destinations past the
 * caches; stream_fence() orders them before returning. */
static inline void st16(uint8_t *d, v128 v, bool nt)
{
    if (nt)
        _mm_stream_si128((__m128i *)(void *)d, v);
    else
        _mm_storeu_si128((__m128i *)(void *)d, v);
}
static inline void stream_fence(void)
{
    _mm_sfence();
}
static inline v128 zip_lo8(v128 a, v128 b)
{
    return _mm_unpacklo_epi8(a, b);
}
static inline v128 zip_hi8(v128 a, v128 b)
{
    return _mm_unpackhi_epi8(a, b);
}
static inline v128 zip_lo16(v128 a, v128 b)
{
    return _mm_unpacklo_epi16(a, b);
}
static inline v128 zip_hi16(v128 a, v128 b)
{
    return _mm_unpackhi_epi16(a, b);
}
static inline v128 zip_lo32(v128 a, v128 b)
{
    return _mm_unpacklo_epi32(a, b);
}
static inline v128 zip_hi32(v128 a, v128 b)
{
    return _mm_unpackhi_epi32(a, b);
}
static inline v128 zip_lo64(v128 a, v128 b)
{
    return _mm_unpacklo_epi64(a, b);
}
static inline v128 zip_hi64(v128 a, v128 b)
{
    return _mm_unpackhi_epi64(a, b);
}
#elif defined(__aarch64__) && defined(__ARM_NEON) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>
#define LAYOUT_V128      1
#define LAYOUT_V128_NAME "neon"
typedef uint8x16_t v128;
static inline v128 ld16(const uint8_t *s)
{
    return vld1q_u8(s);
}
static inline void st16(uint8_t *d, v128 v, bool nt)
{
    (void)nt;
    vst1q_u8(d, v);
}
static inline void stream_fence(void) {}
#define U16(v)           vreinterpretq_u16_u8(v)
#define U32(v)           vreinterpretq_u32_u8(v)
#define U64(v)           vreinterpretq_u64_u8(v)
static inline v128 zip_lo8(v128 a, v128 b)
{
    return vzip1q_u8(a, b);
}
static inline v128 zip_hi8(v128 a, v128 b)
{
    return vzip2q_u8(a, b);
}
static inline v128 zip_lo16(v128 a, v128 b)
{
    return vreinterpretq_u8_u16(vzip1q_u16(U16(a), U16(b)));
}
static inline v128 zip_hi16(v128 a, v128 b)
{
    return vreinterpretq_u8_u16(vzip2q_u16(U16(a), U16(b)));
}
static inline v128 zip_lo32(v128 a, v128 b)
{
    return vreinterpretq_u8_u32(vzip1q_u32(U32(a), U32(b)));
}
static inline v128 zip_hi32(v128 a, v128 b)
{
    return vreinterpretq_u8_u32(vzip2q_u32(U32(a), U32(b)));
}
static inline v128 zip_lo64(v128 a, v128 b)
{
    return vreinterpretq_u8_u64(vzip1q_u64(U64(a), U64(b)));
}
static inline v128 zip_hi64(v128 a, v128 b)
{
    return vreinterpretq_u8_u64(vzip2q_u64(U64(a), U64(b)));
}
#undef U16
#undef U32
#undef U64
#endif

#ifdef LAYOUT_V128
static inline void tr8x8_u16(v128 *v)
{
    v128 t[8], u[8];
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[2 * i] = zip_lo16(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = zip_hi16(v[2 * i], v[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        u[4 * h + 0] = zip_lo32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 1] = zip_hi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 2] = zip_lo32(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = zip_hi32(t[4 * h + 1], t[4 * h + 3]);
    }
#pragma GCC unroll 16
    for (int j = 0; j < 4; j++) {
        v[2 * j] = zip_lo64(u[j], u[4 + j]);
        v[2 * j + 1] = zip_hi64(u[j], u[4 + j]);
    }
}

static inline void tr16x16_u8(v128 *v)
{
    v128 a[16], b[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        a[2 * i] = zip_lo8(v[2 * i], v[2 * i + 1]);
        a[2 * i + 1] = zip_hi8(v[2 * i], v[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int q = 0; q < 4; q++) {
        b[4 * q + 0] = zip_lo16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 1] = zip_hi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 2] = zip_lo16(a[4 * q + 1], a[4 * q + 3]);
        b[4 * q + 3] = zip_hi16(a[4 * q + 1], a[4 * q + 3]);
    }
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 16
        for (int j = 0; j < 4; j++) {
            a[8 * h + 2 * j] = zip_lo32(b[8 * h + j], b[8 * h + 4 + j]);
            a[8 * h + 2 * j + 1] = zip_hi32(b[8 * h + j], b[8 * h + 4 + j]);
        }
#pragma GCC unroll 16
    for (int j = 0; j < 8; j++) {
        v[2 * j] = zip_lo64(a[j], a[8 + j]);
        v[2 * j + 1] = zip_hi64(a[j], a[8 + j]);
    }
}
#endif

/* AVX2, for functions chosen at run time (CPUID). */
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
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi16(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi16(v[2 * i], v[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        u[4 * h + 0] = _mm256_unpacklo_epi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 1] = _mm256_unpackhi_epi32(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 2] = _mm256_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
    }
#pragma GCC unroll 16
    for (int j = 0; j < 4; j++) {
        v[2 * j] = _mm256_unpacklo_epi64(u[j], u[4 + j]);
        v[2 * j + 1] = _mm256_unpackhi_epi64(u[j], u[4 + j]);
    }
}

AVX2_FN static inline void tr16x16_u8_lanes(__m256i *v)
{
    __m256i a[16], b[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm256_unpacklo_epi8(v[2 * i], v[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_epi8(v[2 * i], v[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int q = 0; q < 4; q++) {
        b[4 * q + 0] = _mm256_unpacklo_epi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 1] = _mm256_unpackhi_epi16(a[4 * q + 0], a[4 * q + 2]);
        b[4 * q + 2] = _mm256_unpacklo_epi16(a[4 * q + 1], a[4 * q + 3]);
        b[4 * q + 3] = _mm256_unpackhi_epi16(a[4 * q + 1], a[4 * q + 3]);
    }
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 16
        for (int j = 0; j < 4; j++) {
            a[8 * h + 2 * j] = _mm256_unpacklo_epi32(b[8 * h + j], b[8 * h + 4 + j]);
            a[8 * h + 2 * j + 1] = _mm256_unpackhi_epi32(b[8 * h + j], b[8 * h + 4 + j]);
        }
#pragma GCC unroll 16
    for (int j = 0; j < 8; j++) {
        v[2 * j] = _mm256_unpacklo_epi64(a[j], a[8 + j]);
        v[2 * j + 1] = _mm256_unpackhi_epi64(a[j], a[8 + j]);
    }
}
#endif

#endif
