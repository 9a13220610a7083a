/* Latency of repeated runs (cli_timing.h). */
#include "cli_timing.h"

#include <stdlib.h>
#include <time.h>

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void cli_sort_ms(double *ms, size_t n)
{
    qsort(ms, n, sizeof *ms, cmp_double);
}
