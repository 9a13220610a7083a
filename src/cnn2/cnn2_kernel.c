/* The fast renderer's inner loops (cnn2_kernel_body.h), compiled with GCC /
 * clang vector extensions for the baseline ISA (4 lanes: SSE2 on x86-64,
 * NEON on AArch64, scalar code elsewhere) and, on x86, for AVX2 (8 lanes,
 * chosen at run time). No FMA is enabled anywhere: a fused multiply-add
 * would round differently from the reference. */
#include <stddef.h>
#include <string.h>

#include "cnn2_internal.h"
#include "core/cpu.h"

/* Baseline: 16-byte vectors. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
#define VF v4f
#define VI v4i
#define VU v4u
#define VW 4
#define KATTR
#define KNAME(x) x##_generic
#include "cnn2_kernel_body.h"
#undef VF
#undef VI
#undef VU
#undef VW
#undef KATTR
#undef KNAME

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CNN2_HAVE_AVX2 1
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
#define VF       v8f
#define VI       v8i
#define VU       v8u
#define VW       8
#define KATTR    __attribute__((target("avx2")))
#define KNAME(x) x##_avx2
#include "cnn2_kernel_body.h"

static int cpu_has_avx2(void) { return npk_cpu_has(NPK_CPU_AVX2); }
#endif

static int force_generic;

void npk_cnn2_force_generic(int on)
{
    force_generic = on;
}

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
