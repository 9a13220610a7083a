/* Bulk f16 <-> f32 conversion against memcpy of the larger (f32) buffer. */
#include <stdint.h>
#include <stdlib.h>

#include "bench.h"
#include "npukit/half.h"

#define N (1u << 24) /* 16 Mi values: 64 MiB of f32, well past the caches */

struct half_arg {
    uint16_t *h;
    float *f;
};

static void h2f(void *p)
{
    struct half_arg *a = p;
    npk_f16_to_f32_n(a->h, a->f, N);
}
static void f2h(void *p)
{
    struct half_arg *a = p;
    npk_f32_to_f16_n(a->f, a->h, N);
}

void bench_half(npk_bench *b)
{
    struct half_arg a = {malloc(N * 2), malloc(N * 4)};
    for (uint32_t i = 0; i < N; i++) a.h[i] = (uint16_t)(i * 2654435761u >> 16) & 0x7bff;
    npk_bench_note(b, "half precision bulk path: %s; bytes = f32 buffer (4 B/value)",
                   npk_half_path());
    npk_bench_report_bytes(b, "half: f16->f32 bulk", N * 4, npk_bench_time(b, h2f, &a), 0.5);
    npk_bench_report_bytes(b, "half: f32->f16 bulk", N * 4, npk_bench_time(b, f2h, &a), 0.5);
    npk_half_force_portable(1);
    npk_bench_report_bytes(b, "half: f16->f32 portable", N * 4, npk_bench_time(b, h2f, &a), 0);
    npk_bench_report_bytes(b, "half: f32->f16 portable", N * 4, npk_bench_time(b, f2h, &a), 0);
    npk_half_force_portable(0);
    free(a.h);
    free(a.f);
}
