/* The CORE's fp32 multiply-accumulate: C = A . B on packed panels, blocked
 * over K. Every output is accumulated in k order starting from zero, and an
 * fp16 x fp16 product is exact in fp32, so the AVX2/FMA kernel (fused) and
 * the portable kernel (multiply, then add) give identical bits. */
#include <string.h>

#include "core/cpu.h"
#include "emu_internal.h"

#define KC 256 /* K block: an A panel slice (6 KiB) and a B panel slice (16 KiB) stay in L1 */

/* One MR x NR tile: c (ldc) = (first ? 0 : c) + a . b over kc. */
static void tile_portable(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                          bool first)
{
    float acc[EMU_MR][EMU_NR];
    for (int r = 0; r < EMU_MR; r++)
        for (int n = 0; n < EMU_NR; n++) acc[r][n] = first ? 0.0f : c[r * ldc + n];
    for (size_t k = 0; k < kc; k++) {
        const float *bk = b + k * EMU_NR;
        for (int r = 0; r < EMU_MR; r++) {
            float av = a[k * EMU_MR + r];
            for (int n = 0; n < EMU_NR; n++) acc[r][n] += av * bk[n];
        }
    }
    for (int r = 0; r < EMU_MR; r++)
        for (int n = 0; n < EMU_NR; n++) c[r * ldc + n] = acc[r][n];
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

__attribute__((target("avx2,fma"))) static void tile_avx2(size_t kc, const float *a, const float *b,
                                                          float *c, size_t ldc, bool first)
{
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (first) {
        c00 = c01 = c10 = c11 = c20 = c21 = _mm256_setzero_ps();
        c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    } else {
        c00 = _mm256_loadu_ps(c + 0 * ldc), c01 = _mm256_loadu_ps(c + 0 * ldc + 8);
        c10 = _mm256_loadu_ps(c + 1 * ldc), c11 = _mm256_loadu_ps(c + 1 * ldc + 8);
        c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
        c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
        c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
        c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    }
    for (size_t k = 0; k < kc; k++, a += EMU_MR, b += EMU_NR) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), av;
        av = _mm256_broadcast_ss(a + 0);
        c00 = _mm256_fmadd_ps(av, b0, c00), c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a + 1);
        c10 = _mm256_fmadd_ps(av, b0, c10), c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a + 2);
        c20 = _mm256_fmadd_ps(av, b0, c20), c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a + 3);
        c30 = _mm256_fmadd_ps(av, b0, c30), c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a + 4);
        c40 = _mm256_fmadd_ps(av, b0, c40), c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a + 5);
        c50 = _mm256_fmadd_ps(av, b0, c50), c51 = _mm256_fmadd_ps(av, b1, c51);
    }
    _mm256_storeu_ps(c + 0 * ldc, c00), _mm256_storeu_ps(c + 0 * ldc + 8, c01);
    _mm256_storeu_ps(c + 1 * ldc, c10), _mm256_storeu_ps(c + 1 * ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

static int cpu_has_avx2_fma(void)
{
    return npk_cpu_has(NPK_CPU_AVX2 | NPK_CPU_FMA);
}
#endif

bool emu_gemm_simd_available(void)
{
#ifdef HAVE_AVX2_PATH
    static int has = -1;
    if (has < 0) has = cpu_has_avx2_fma();
    return has == 1;
#else
    return false;
#endif
}

static void tile(bool simd, size_t kc, const float *a, const float *b, float *c, size_t ldc,
                 bool first)
{
#ifdef HAVE_AVX2_PATH
    if (simd) {
        tile_avx2(kc, a, b, c, ldc, first);
        return;
    }
#else
    (void)simd;
#endif
    tile_portable(kc, a, b, c, ldc, first);
}

void emu_gemm_f32(bool simd, size_t P, size_t N, size_t K, const float *ap, const float *bp,
                  float *c)
{
    size_t panels = (P + EMU_MR - 1) / EMU_MR;
    float part[EMU_MR * EMU_NR];
    for (size_t k0 = 0; k0 < K; k0 += KC) {
        size_t kc = K - k0 < KC ? K - k0 : KC;
        bool first = k0 == 0;
        for (size_t j = 0; j < N / EMU_NR; j++) {
            const float *b = bp + j * K * EMU_NR + k0 * EMU_NR;
            for (size_t i = 0; i < panels; i++) {
                const float *a = ap + i * K * EMU_MR + k0 * EMU_MR;
                float *ct = c + i * EMU_MR * N + j * EMU_NR;
                size_t rows = P - i * EMU_MR < EMU_MR ? P - i * EMU_MR : EMU_MR;
                if (rows == EMU_MR) {
                    tile(simd, kc, a, b, ct, N, first);
                    continue;
                }
                /* The last, partial panel goes through a full-size tile. */
                memset(part, 0, sizeof part);
                for (size_t r = 0; r < rows; r++)
                    memcpy(part + r * EMU_NR, ct + r * N, EMU_NR * sizeof(float));
                tile(simd, kc, a, b, part, EMU_NR, first);
                for (size_t r = 0; r < rows; r++)
                    memcpy(ct + r * N, part + r * EMU_NR, EMU_NR * sizeof(float));
            }
        }
    }
}
