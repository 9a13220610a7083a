/* The fast renderer's inner loops, written once with GCC/clang vector
 * extensions and compiled twice: for the baseline ISA (SSE2 on x86-64, NEON
 * on AArch64, scalar elsewhere) and, on x86, for AVX2 (picked at run time).
 *
 * Exactness: a lane holds one pixel, and each lane performs exactly the
 * reference's sequence of IEEE f32 operations for that pixel: the same
 * reduction order (i, ky, kx), separate multiply and add (no FMA is ever
 * enabled here), and the same exp/sigmoid steps as cnn2_internal.h with
 * selects in place of the scalar conditionals. */
#include <stddef.h>
#include <string.h>

#include "cnn2_internal.h"

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define BC(s)         ((v8f){(s), (s), (s), (s), (s), (s), (s), (s)})
/* m ? a : b per lane, m from a vector comparison (all ones or zero). */
#define SEL(m, a, b)  ((v8f)((((v8i)(a)) & (m)) | (((v8i)(b)) & ~(m))))

ALWAYS_INLINE void conv_body(const cnn2_row_job *j, long y)
{
    const long k = (long)j->k, r = k / 2;
    const ptrdiff_t S = (ptrdiff_t)j->stride;
    for (size_t x = 0; x < j->wpad; x += 16) {
        /* 4 outputs x 2 blocks of 8 pixels: 8 independent add chains. */
        v8f a0 = BC(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        const float *w = j->w;
        for (unsigned i = 0; i < NPK_CNN2_CHANNELS; i++) {
            const float *p = j->planes[i] + (y - r) * S + (ptrdiff_t)x - r;
            for (long ky = 0; ky < k; ky++, p += S)
                for (long kx = 0; kx < k; kx++, w += 4) {
                    v8f in0, in1;
                    memcpy(&in0, p + kx, sizeof in0);
                    memcpy(&in1, p + kx + 8, sizeof in1);
                    a0 = a0 + w[0] * in0;
                    b0 = b0 + w[0] * in1;
                    a1 = a1 + w[1] * in0;
                    b1 = b1 + w[1] * in1;
                    a2 = a2 + w[2] * in0;
                    b2 = b2 + w[2] * in1;
                    a3 = a3 + w[3] * in0;
                    b3 = b3 + w[3] * in1;
                }
        }
        memcpy(j->acc[0] + x, &a0, sizeof a0);
        memcpy(j->acc[0] + x + 8, &b0, sizeof b0);
        memcpy(j->acc[1] + x, &a1, sizeof a1);
        memcpy(j->acc[1] + x + 8, &b1, sizeof b1);
        memcpy(j->acc[2] + x, &a2, sizeof a2);
        memcpy(j->acc[2] + x + 8, &b2, sizeof b2);
        memcpy(j->acc[3] + x, &a3, sizeof a3);
        memcpy(j->acc[3] + x + 8, &b3, sizeof b3);
    }
}

/* cnn2_activate() on 8 lanes at v. */
ALWAYS_INLINE void act8(float *v, cnn2_act act)
{
    v8f a, out;
    memcpy(&a, v, sizeof a);
    if (act == CNN2_SIGMOID) {
        v8f x = -a; /* cnn2_expf(-a) */
        x = SEL(x < BC(CNN2_EXP_LO), BC(CNN2_EXP_LO), x);
        x = SEL(x > BC(CNN2_EXP_HI), BC(CNN2_EXP_HI), x);
        v8f t = x * CNN2_LOG2E;
        t = t + CNN2_ROUNDER;
        v8f n = t - CNN2_ROUNDER;
        v8f r = x - n * CNN2_LN2_HI;
        r = r - n * CNN2_LN2_LO;
        v8f p = BC(1.0f / 5040.0f);
        p = p * r + 1.0f / 720.0f;
        p = p * r + 1.0f / 120.0f;
        p = p * r + 1.0f / 24.0f;
        p = p * r + 1.0f / 6.0f;
        p = p * r + 0.5f;
        p = p * r + 1.0f;
        p = p * r + 1.0f;
        v8u ni = (v8u)t - cnn2_f2u(CNN2_ROUNDER);
        p = (v8f)((v8u)p + (ni << 23));
        out = 1.0f / (1.0f + p);
    } else {
        out = SEL(a < BC(0.0f), BC(0.0f), a);
        if (act == CNN2_CLAMP01) out = SEL(out > BC(1.0f), BC(1.0f), out);
    }
    out = SEL(a == a, out, (v8f)((v8u){0} + CNN2_CANON_NAN));
    memcpy(v, &out, sizeof out);
}

ALWAYS_INLINE void act_body(float *v, size_t n, cnn2_act act)
{
    size_t x = 0;
    for (; x + 8 <= n; x += 8) act8(v + x, act);
    for (; x < n; x++) v[x] = cnn2_activate(v[x], act);
}

static void conv_generic(const cnn2_row_job *j, long y) { conv_body(j, y); }
static void act_generic(float *v, size_t n, cnn2_act act) { act_body(v, n, act); }

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CNN2_HAVE_AVX2 1
__attribute__((target("avx2"))) static void conv_avx2(const cnn2_row_job *j, long y)
{
    conv_body(j, y);
}
__attribute__((target("avx2"))) static void act_avx2(float *v, size_t n, cnn2_act act)
{
    act_body(v, n, act);
}
static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
#endif

static int force_generic;

void npk_cnn2_force_generic(int on) { force_generic = on; }

void cnn2_kernels(cnn2_conv_fn *conv, cnn2_act_fn *act, const char **name)
{
    *conv = conv_generic;
    *act = act_generic;
    *name = "generic";
#ifdef CNN2_HAVE_AVX2
    if (!force_generic && cpu_has_avx2()) {
        *conv = conv_avx2;
        *act = act_avx2;
        *name = "avx2";
    }
#endif
}

const char *npk_cnn2_render_path(void)
{
    cnn2_conv_fn c;
    cnn2_act_fn a;
    const char *name;
    cnn2_kernels(&c, &a, &name);
    return name;
}
