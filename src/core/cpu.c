/* CPUID-based feature flags. Uses <cpuid.h> rather than
 * __builtin_cpu_supports(), whose accepted names differ between compilers
 * (clang 14 rejects "f16c"). AVX-class flags also require the OS to save
 * the YMM registers (OSXSAVE + XCR0). */
#include "cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>

static unsigned detect(void)
{
    unsigned a, b, c, d, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (c & (1u << 9)) f |= NPK_CPU_SSSE3;
    const unsigned osxsave = 1u << 27, avx = 1u << 28;
    if ((c & (osxsave | avx)) != (osxsave | avx)) return f;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 6) != 6) return f; /* XMM and YMM state not enabled by the OS */
    f |= NPK_CPU_AVX;
    if (c & (1u << 29)) f |= NPK_CPU_F16C;
    if (c & (1u << 12)) f |= NPK_CPU_FMA;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 5))) f |= NPK_CPU_AVX2;
    return f;
}

unsigned npk_cpu_features(void)
{
    /* Idempotent: a race between threads computes the same value twice. */
    static volatile int done;
    static volatile unsigned flags;
    if (!done) {
        flags = detect();
        done = 1;
    }
    return flags;
}
#else
unsigned npk_cpu_features(void)
{
    return 0;
}
#endif
