/* Benchmarks of the edgetpu target. */
#include "bench.h"

void bench_edgetpu(npk_bench *b)
{
    (void)b;
}
