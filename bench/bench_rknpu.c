/* Benchmarks of the rknpu target. */
#include "bench.h"

void bench_rknpu(npk_bench *b)
{
    (void)b;
}
