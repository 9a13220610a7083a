/* The 8-bit weights of a layer plan packed into the CNA layouts in one pass
 * that also sums them (the zero-point correction of the bias needs each
 * kernel's sum): the model's weights are read once, every byte of the packed
 * region written once (padding as zeros, so the buffer needs no clearing).
 * The sums are of the stored values (b ^ flip read as int8), taken as the
 * unsigned sum of b ^ flip ^ 0x80 less 128 per byte. 256-bit vectors on
 * AVX2 hosts (chosen at run time), 128-bit vectors on x86-64 (SSE2) and
 * little-endian AArch64 (NEON), 64-bit words elsewhere: the same bytes and
 * sums (test_layer_weights). */
#include <string.h>

#include "core/cpu.h"
#include "layer_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define RK_V128 1
#elif defined(__aarch64__) && defined(__ARM_NEON) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>
#define RK_V128 1
#endif

/* n <= 32 bytes of src ^ flip to d, zeros to 32 bytes; returns the
 * unsigned sum of src ^ flip ^ 0x80. */
static uint64_t chunk_word(const uint8_t *src, uint32_t n, uint8_t flip, uint8_t *d)
{
    const uint64_t f8 = flip * 0x0101010101010101ull, h8 = 0x8080808080808080ull,
                   lo = 0x00FF00FF00FF00FFull;
    uint64_t acc = 0, s = 0;
    uint32_t j = 0;
    for (; j + 8 <= n; j += 8) { /* 16-bit lanes: at most 4 x 2 x 255 */
        uint64_t v;
        memcpy(&v, src + j, 8);
        v ^= f8;
        memcpy(d + j, &v, 8);
        v ^= h8;
        acc += (v & lo) + ((v >> 8) & lo);
    }
    s = (acc & 0xFFFF) + ((acc >> 16) & 0xFFFF) + ((acc >> 32) & 0xFFFF) + (acc >> 48);
    for (; j < n; j++) {
        d[j] = src[j] ^ flip;
        s += (uint8_t)(d[j] ^ 0x80);
    }
    memset(d + n, 0, 32 - n);
    return s;
}

#if defined(__SSE2__)
/* A full chunk of 32 bytes. */
static void chunk32(const uint8_t *src, __m128i f, __m128i h, uint8_t *d, __m128i *acc)
{
    __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)src), f);
    __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + 16)), f);
    _mm_storeu_si128((__m128i *)d, a);
    _mm_storeu_si128((__m128i *)(d + 16), b);
    __m128i z = _mm_setzero_si128();
    *acc = _mm_add_epi64(*acc, _mm_sad_epu8(_mm_xor_si128(a, h), z));
    *acc = _mm_add_epi64(*acc, _mm_sad_epu8(_mm_xor_si128(b, h), z));
}
#endif

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define RK_AVX2 1
#define AVX2    __attribute__((target("avx2")))

/* The unsigned byte sums of a vector's 4 lanes. */
AVX2 static uint64_t lanes_sum(__m256i v)
{
    uint64_t l[4];
    memcpy(l, &v, sizeof l);
    return l[0] + l[1] + l[2] + l[3];
}

/* Kernels j..j+3 of a group (rows k bytes apart from s0) over its whole
 * 32-channel chunks (the first `full` channels): at each chunk and tap
 * their four 32-byte pieces are one 128-byte run of the packed layout, the
 * sums stay in registers, each row is read front to back. */
AVX2 static void kernels4(const uint8_t *s0, size_t k, size_t taps, uint32_t in_c, uint32_t full,
                          size_t step, size_t tap_step, uint8_t flip, uint8_t *d0, uint64_t *s)
{
    const __m256i f = _mm256_set1_epi8((char)flip), h = _mm256_set1_epi8((char)0x80),
                  z = _mm256_setzero_si256();
    __m256i a0 = z, a1 = z, a2 = z, a3 = z;
    for (size_t t = 0; t < taps; t++) {
        const uint8_t *r = s0 + t * in_c;
        uint8_t *d = d0 + t * tap_step;
        for (uint32_t c0 = 0; c0 < full; c0 += 32, r += 32, d += step) {
            __m256i v0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)r), f);
            __m256i v1 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(r + k)), f);
            __m256i v2 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(r + 2 * k)), f);
            __m256i v3 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(r + 3 * k)), f);
            _mm256_storeu_si256((__m256i *)d, v0);
            _mm256_storeu_si256((__m256i *)(d + 32), v1);
            _mm256_storeu_si256((__m256i *)(d + 64), v2);
            _mm256_storeu_si256((__m256i *)(d + 96), v3);
            a0 = _mm256_add_epi64(a0, _mm256_sad_epu8(_mm256_xor_si256(v0, h), z));
            a1 = _mm256_add_epi64(a1, _mm256_sad_epu8(_mm256_xor_si256(v1, h), z));
            a2 = _mm256_add_epi64(a2, _mm256_sad_epu8(_mm256_xor_si256(v2, h), z));
            a3 = _mm256_add_epi64(a3, _mm256_sad_epu8(_mm256_xor_si256(v3, h), z));
        }
    }
    s[0] += lanes_sum(a0);
    s[1] += lanes_sum(a1);
    s[2] += lanes_sum(a2);
    s[3] += lanes_sum(a3);
}

/* The same for one kernel. */
AVX2 static void kernel1(const uint8_t *s0, size_t taps, uint32_t in_c, uint32_t full, size_t step,
                         size_t tap_step, uint8_t flip, uint8_t *d0, uint64_t *s)
{
    const __m256i f = _mm256_set1_epi8((char)flip), h = _mm256_set1_epi8((char)0x80),
                  z = _mm256_setzero_si256();
    __m256i a0 = z;
    for (size_t t = 0; t < taps; t++) {
        const uint8_t *r = s0 + t * in_c;
        uint8_t *d = d0 + t * tap_step;
        for (uint32_t c0 = 0; c0 < full; c0 += 32, r += 32, d += step) {
            __m256i v0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)r), f);
            _mm256_storeu_si256((__m256i *)d, v0);
            a0 = _mm256_add_epi64(a0, _mm256_sad_epu8(_mm256_xor_si256(v0, h), z));
        }
    }
    *s += lanes_sum(a0);
}

/* rk_pack_conv8_v128's bytes and sums, kernels taken four at a time (the
 * packing is bound by its instructions: 4 chunks per loop step with their
 * sums in registers take ~0.6x the time of one chunk per step with the
 * sums in memory). Chunks of fewer than 32 real channels and padding
 * kernels are written after. */
AVX2 static void pack_conv8_avx2(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps,
                                 uint32_t cin, uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w,
                                 int64_t *sums)
{
    const size_t k = taps * in_c, step = taps * G * 32, tap_step = (size_t)G * 32;
    const uint32_t full = in_c / 32 * 32;
    for (uint32_t n0 = 0; n0 < cout; n0 += G) {
        uint32_t nk = out_c > n0 ? (out_c - n0 < G ? out_c - n0 : G) : 0; /* real kernels */
        uint8_t *wg = w + (size_t)(n0 / G) * G * cin * taps;
        const uint8_t *sg = src + (size_t)n0 * k;
        uint64_t s[32] = {0};
        uint32_t j = 0;
        for (; j + 4 <= nk; j += 4)
            kernels4(sg + j * k, k, taps, in_c, full, step, tap_step, flip, wg + 32 * j, s + j);
        for (; j < nk; j++)
            kernel1(sg + j * k, taps, in_c, full, step, tap_step, flip, wg + 32 * j, s + j);
        for (uint32_t c0 = full; c0 < cin; c0 += 32) { /* partial and padding chunks */
            uint32_t m = c0 < in_c ? in_c - c0 : 0;
            for (size_t t = 0; t < taps; t++)
                for (j = 0; j < nk; j++)
                    s[j] += chunk_word(m ? sg + j * k + t * in_c + c0 : src, m, flip,
                                       wg + (size_t)(c0 / 32) * step + t * tap_step + 32 * j);
        }
        for (uint32_t c0 = 0; nk < G && c0 < cin; c0 += 32) /* padding kernels */
            for (size_t t = 0; t < taps; t++)
                memset(wg + (size_t)(c0 / 32) * step + t * tap_step + 32 * nk, 0,
                       (size_t)(G - nk) * 32);
        for (j = 0; j < nk; j++) sums[n0 + j] = (int64_t)s[j] - 128 * (int64_t)k;
    }
}
#endif

void rk_pack_conv8(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps, uint32_t cin,
                   uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w, int64_t *sums)
{
#if defined(RK_AVX2)
    if (G <= 32 && npk_cpu_has(NPK_CPU_AVX2)) {
        pack_conv8_avx2(src, out_c, in_c, taps, cin, cout, G, flip, w, sums);
        return;
    }
#endif
    rk_pack_conv8_v128(src, out_c, in_c, taps, cin, cout, G, flip, w, sums);
}

/* In the order of the packed layout (its bytes written front to back, the
 * G kernels of a group read side by side); _portable below goes kernel by
 * kernel. */
void rk_pack_conv8_v128(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps,
                        uint32_t cin, uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w,
                        int64_t *sums)
{
    if (G > 32) {
        rk_pack_conv8_portable(src, out_c, in_c, taps, cin, cout, G, flip, w, sums);
        return;
    }
    const size_t k = taps * in_c, step = taps * G * 32; /* step: the next 32 channels */
    const uint32_t full = in_c / 32 * 32;
#if defined(__SSE2__)
    const __m128i f = _mm_set1_epi8((char)flip), h = _mm_set1_epi8((char)0x80);
    __m128i acc[32];
#elif defined(RK_V128)
    const uint8x16_t f = vdupq_n_u8(flip), h = vdupq_n_u8(0x80);
#endif
    for (uint32_t n0 = 0; n0 < cout; n0 += G) {
        uint32_t nk = out_c > n0 ? (out_c - n0 < G ? out_c - n0 : G) : 0; /* real kernels */
        uint8_t *wg = w + (size_t)(n0 / G) * G * cin * taps;
        uint64_t s[32] = {0};
#if defined(__SSE2__)
        for (uint32_t j = 0; j < nk; j++) acc[j] = _mm_setzero_si128();
#endif
        for (uint32_t c0 = 0; c0 < cin; c0 += 32)
            for (size_t t = 0; t < taps; t++) {
                uint8_t *d = wg + (size_t)(c0 / 32) * step + t * G * 32;
                uint32_t m = c0 < in_c ? (in_c - c0 < 32 ? in_c - c0 : 32) : 0, j = 0;
                if (c0 < full) {
                    for (; j < nk; j++) {
                        const uint8_t *sp = src + (size_t)(n0 + j) * k + t * in_c + c0;
#if defined(__SSE2__)
                        chunk32(sp, f, h, d + 32 * j, &acc[j]);
#elif defined(RK_V128)
                        uint8x16_t a = veorq_u8(vld1q_u8(sp), f),
                                   b = veorq_u8(vld1q_u8(sp + 16), f);
                        vst1q_u8(d + 32 * j, a);
                        vst1q_u8(d + 32 * j + 16, b);
                        s[j] += vaddlvq_u8(veorq_u8(a, h)) + vaddlvq_u8(veorq_u8(b, h));
#else
                        s[j] += chunk_word(sp, 32, flip, d + 32 * j);
#endif
                    }
                } else {
                    for (; j < nk; j++)
                        s[j] += chunk_word(m ? src + (size_t)(n0 + j) * k + t * in_c + c0 : src, m,
                                           flip, d + 32 * j);
                }
                memset(d + 32 * j, 0, (size_t)(G - j) * 32); /* padding kernels */
            }
        for (uint32_t j = 0; j < nk; j++) {
#if defined(__SSE2__)
            uint64_t lanes[2];
            memcpy(lanes, &acc[j], sizeof lanes);
            s[j] += lanes[0] + lanes[1];
#endif
            sums[n0 + j] = (int64_t)s[j] - 128 * (int64_t)k;
        }
    }
}

void rk_pack_conv8_portable(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps,
                            uint32_t cin, uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w,
                            int64_t *sums)
{
    const size_t k = taps * in_c;
    for (uint32_t n = 0; n < cout; n++) {
        uint8_t *dn = w + (size_t)(n / G) * G * cin * taps + (size_t)(n % G) * 32;
        uint64_t s = 0;
        for (size_t t = 0; t < taps; t++)
            for (uint32_t c0 = 0; c0 < cin; c0 += 32) {
                uint32_t m = n < out_c && c0 < in_c ? (in_c - c0 < 32 ? in_c - c0 : 32) : 0;
                s += chunk_word(m ? src + (size_t)n * k + t * in_c + c0 : src, m, flip,
                                dn + ((size_t)(c0 / 32) * taps + t) * G * 32);
            }
        if (n < out_c) sums[n] = (int64_t)s - 128 * (int64_t)k;
    }
}

/* One whole group of G channels (G a multiple of 16, G <= 64) over at most
 * 255 taps: the sums in 16-bit lanes. */
#if defined(RK_V128)
static void dw_group(const uint8_t *src, uint32_t c_real, size_t taps, uint32_t G, uint8_t flip,
                     uint8_t *d0, int64_t *sums)
{
    int16_t lanes[64];
#if defined(__SSE2__)
    const __m128i f = _mm_set1_epi8((char)flip), z = _mm_setzero_si128();
    __m128i acc[8];
    for (uint32_t i = 0; i < G / 8; i++) acc[i] = z;
    for (size_t t = 0; t < taps; t++)
        for (uint32_t j = 0; j < G; j += 16) {
            __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + t * c_real + j)), f);
            _mm_storeu_si128((__m128i *)(d0 + t * G + j), v);
            __m128i sign = _mm_cmpgt_epi8(z, v);
            acc[j / 8] = _mm_add_epi16(acc[j / 8], _mm_unpacklo_epi8(v, sign));
            acc[j / 8 + 1] = _mm_add_epi16(acc[j / 8 + 1], _mm_unpackhi_epi8(v, sign));
        }
    for (uint32_t i = 0; i < G / 8; i++) _mm_storeu_si128((__m128i *)(lanes + 8 * i), acc[i]);
#else
    const uint8x16_t f = vdupq_n_u8(flip);
    int16x8_t acc[8];
    for (uint32_t i = 0; i < G / 8; i++) acc[i] = vdupq_n_s16(0);
    for (size_t t = 0; t < taps; t++)
        for (uint32_t j = 0; j < G; j += 16) {
            uint8x16_t v = veorq_u8(vld1q_u8(src + t * c_real + j), f);
            vst1q_u8(d0 + t * G + j, v);
            int8x16_t sv = vreinterpretq_s8_u8(v);
            acc[j / 8] = vaddw_s8(acc[j / 8], vget_low_s8(sv));
            acc[j / 8 + 1] = vaddw_high_s8(acc[j / 8 + 1], sv);
        }
    for (uint32_t i = 0; i < G / 8; i++) vst1q_s16(lanes + 8 * i, acc[i]);
#endif
    for (uint32_t j = 0; j < G; j++) sums[j] = lanes[j];
}
#endif

void rk_pack_dw8(const uint8_t *src, uint32_t c_real, size_t taps, uint32_t cpad, uint32_t G,
                 uint8_t flip, uint8_t *w, int64_t *sums)
{
    for (uint32_t c0 = 0; c0 < cpad; c0 += G) { /* one G-channel group at a time */
        uint32_t m = c0 < c_real ? (c_real - c0 < G ? c_real - c0 : G) : 0;
        uint8_t *dg = w + (size_t)(c0 / G) * taps * G;
#if defined(RK_V128)
        if (m == G && G % 16 == 0 && G <= 64 && taps <= 255) {
            dw_group(src + c0, c_real, taps, G, flip, dg, sums + c0);
            continue;
        }
#endif
        for (uint32_t j = 0; j < m; j++) sums[c0 + j] = 0;
        for (size_t t = 0; t < taps; t++) {
            uint8_t *d = dg + t * G;
            for (uint32_t j = 0; j < m; j++) {
                d[j] = src[t * c_real + c0 + j] ^ flip;
                sums[c0 + j] += (int8_t)d[j];
            }
            memset(d + m, 0, G - m);
        }
    }
}
