/* Benchmarks of the cnn2 target. */
#include "bench.h"

void bench_cnn2(npk_bench *b)
{
    (void)b;
}
