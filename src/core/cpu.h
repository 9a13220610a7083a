/* Run-time CPU feature detection for the SIMD paths (x86 only; elsewhere
 * every flag is clear and the portable or compile-time paths are used). */
#ifndef NPK_CPU_H
#define NPK_CPU_H

#include <stdbool.h>

enum {
    NPK_CPU_SSSE3 = 1u << 0,
    NPK_CPU_AVX = 1u << 1, /* includes the OS saving YMM state */
    NPK_CPU_F16C = 1u << 2,
    NPK_CPU_FMA = 1u << 3,
    NPK_CPU_AVX2 = 1u << 4
};

/* The flags above that this CPU (and OS) supports; computed once. */
unsigned npk_cpu_features(void);

/* True when every flag in `want` is supported. */
static inline bool npk_cpu_has(unsigned want)
{
    return (npk_cpu_features() & want) == want;
}

#endif
