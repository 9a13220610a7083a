#include <string.h>

#include "npukit/half.h"
#include "cpu.h"

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float npk_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        if (mant == 0) return u2f(sign);
        /* Subnormal: normalise the mantissa into an f32 normal. */
        uint32_t e = 113;
        while (!(mant & 0x400)) {
            mant <<= 1;
            e--;
        }
        return u2f(sign | (e << 23) | ((mant & 0x3ff) << 13));
    }
    if (exp == 31) {
        uint32_t bits = sign | 0x7f800000 | (mant << 13);
        if (mant) bits |= 0x00400000; /* quiet the NaN, keep its payload */
        return u2f(bits);
    }
    return u2f(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t npk_f32_to_f16(float f)
{
    uint32_t x = f2u(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffff;
    if (ax >= 0x7f800000) {
        if (ax == 0x7f800000) return sign | 0x7c00;
        return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
    }
    if (ax >= 0x477ff000) return sign | 0x7c00; /* >= 65520 rounds to infinity */
    if (ax >= 0x38800000) {                     /* normal half */
        uint32_t r = ax - 0x38000000 + 0xfff + ((ax >> 13) & 1);
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000) return sign; /* <= 2^-25 rounds to zero (tie to even) */
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7fffff) | 0x800000;
    uint32_t s = 126 - e; /* 14..24 */
    uint32_t q = m >> s;
    uint32_t rem = m & ((1u << s) - 1);
    uint32_t half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
}

float npk_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    if ((bits & 0x7fffffff) > 0x7f800000) bits |= 0x00400000;
    return u2f(bits);
}

uint16_t npk_f32_to_bf16(float f)
{
    uint32_t x = f2u(f);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* ---- bulk paths ---- */

static void f16_to_f32_portable(const uint16_t *s, float *d, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] = npk_f16_to_f32(s[i]);
}
static void f32_to_f16_portable(const float *s, uint16_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] = npk_f32_to_f16(s[i]);
}

typedef void (*h2f_fn)(const uint16_t *, float *, size_t);
typedef void (*f2h_fn)(const float *, uint16_t *, size_t);

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define NPK_HAVE_F16C_PATH 1

__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint16_t *s, float *d,
                                                                size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 8));
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(a));
        _mm256_storeu_ps(d + i + 8, _mm256_cvtph_ps(b));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    for (; i < n; i++) d[i] = npk_f16_to_f32(s[i]);
}

__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const float *s, uint16_t *d,
                                                                size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
        __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(s + i + 8), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(d + i), a);
        _mm_storeu_si128((__m128i *)(d + i + 8), b);
    }
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) d[i] = npk_f32_to_f16(s[i]);
}

static int cpu_has_f16c(void)
{
    return npk_cpu_has(NPK_CPU_AVX | NPK_CPU_F16C);
}
#elif defined(__aarch64__)
#include <arm_neon.h>
#define NPK_HAVE_NEON_PATH 1

static void f16_to_f32_neon(const uint16_t *s, float *d, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(d + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(s + i))));
    for (; i < n; i++) d[i] = npk_f16_to_f32(s[i]);
}
static void f32_to_f16_neon(const float *s, uint16_t *d, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(d + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(s + i))));
    for (; i < n; i++) d[i] = npk_f32_to_f16(s[i]);
}
#endif

static int force_portable;

static int use_simd(void)
{
    if (force_portable) return 0;
#if defined(NPK_HAVE_F16C_PATH)
    static int has = -1;
    if (has < 0) has = cpu_has_f16c();
    return has;
#elif defined(NPK_HAVE_NEON_PATH)
    return 1;
#else
    return 0;
#endif
}

void npk_half_force_portable(int on)
{
    force_portable = on;
}

const char *npk_half_path(void)
{
    if (!use_simd()) return "portable";
#if defined(NPK_HAVE_F16C_PATH)
    return "f16c";
#else
    return "neon";
#endif
}

void npk_f16_to_f32_n(const uint16_t *src, float *dst, size_t n)
{
#if defined(NPK_HAVE_F16C_PATH)
    if (use_simd()) {
        f16_to_f32_f16c(src, dst, n);
        return;
    }
#elif defined(NPK_HAVE_NEON_PATH)
    if (use_simd()) {
        f16_to_f32_neon(src, dst, n);
        return;
    }
#endif
    f16_to_f32_portable(src, dst, n);
}

void npk_f32_to_f16_n(const float *src, uint16_t *dst, size_t n)
{
#if defined(NPK_HAVE_F16C_PATH)
    if (use_simd()) {
        f32_to_f16_f16c(src, dst, n);
        return;
    }
#elif defined(NPK_HAVE_NEON_PATH)
    if (use_simd()) {
        f32_to_f16_neon(src, dst, n);
        return;
    }
#endif
    f32_to_f16_portable(src, dst, n);
}

void npk_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = npk_bf16_to_f32(src[i]);
}

void npk_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = npk_f32_to_bf16(src[i]);
}
