/* Benchmarks of the mgk target. */
#include "bench.h"

void bench_mgk(npk_bench *b)
{
    (void)b;
}
