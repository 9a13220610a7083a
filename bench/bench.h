/* The benchmark harness. Each figure is reported as a throughput and as a
 * ratio against a baseline measured in the same run: memcpy of the same
 * number of bytes, or a named peer (e.g. OpenBLAS). Timings take the best of
 * several repetitions, each long enough to swamp timer resolution. */
#ifndef NPK_BENCH_H
#define NPK_BENCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct npk_bench npk_bench;

/* Seconds for one call of fn(arg): best of `reps` runs of enough calls to
 * take at least the harness's minimum time. */
double npk_bench_time(npk_bench *b, void (*fn)(void *), void *arg);
/* Seconds to memcpy `bytes` bytes (cached per size within a run). */
double npk_bench_memcpy_time(npk_bench *b, size_t bytes);

/* Report a byte-throughput figure with its memcpy ratio (same bytes, same run).
 * goal_ratio <= 0 means no goal. */
void npk_bench_report_bytes(npk_bench *b, const char *name, size_t bytes, double seconds,
                            double goal_ratio);
/* Report an item-rate figure (e.g. "streams/s"), optionally against a peer:
 * ratio = peer_seconds / seconds. goal <= 0 means no goal; the goal applies
 * to the rate when peer_seconds <= 0, else to the ratio. */
void npk_bench_report_rate(npk_bench *b, const char *name, double items, const char *unit,
                           double seconds, const char *peer, double peer_seconds, double goal);
/* Report a figure given as text (e.g. a memory ratio) with its goal; ok says
 * whether the goal is met. */
void npk_bench_report_value(npk_bench *b, const char *name, const char *value, const char *vs,
                            const char *goal, bool ok);
/* --quick was given (groups with their own repetition counts use fewer). */
bool npk_bench_quick(const npk_bench *b);
/* A note line in the report (e.g. which code path was used). */
void npk_bench_note(npk_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A benchmark group: registered in bench/main.c. */
typedef struct npk_bench_entry {
    const char *name;
    void (*run)(npk_bench *b);
} npk_bench_entry;

/* Groups, one file each. */
void bench_half(npk_bench *b);
void bench_cnn2(npk_bench *b);
void bench_mgk(npk_bench *b);
void bench_rknpu(npk_bench *b);
void bench_edgetpu(npk_bench *b);
void bench_edgetpu_tails(npk_bench *b);
void bench_rknpu_net(npk_bench *b);
void bench_tflite(npk_bench *b);

#endif
