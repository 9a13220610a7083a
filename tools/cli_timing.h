/* Latency of repeated runs (`tflite run`, `rknpu run`, `edgetpu run`
 * --repeat): a monotonic clock in milliseconds and the sort that puts the
 * minimum first and the median at n / 2. */
#ifndef NPK_CLI_TIMING_H
#define NPK_CLI_TIMING_H

#include <stddef.h>

/* Milliseconds on CLOCK_MONOTONIC (differences only). */
double cli_now_ms(void);
/* Ascending. */
void cli_sort_ms(double *ms, size_t n);

#endif
