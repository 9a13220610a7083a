/* npukit-bench [--filter SUBSTR] [--quick] [--markdown]
 * Runs each benchmark group and prints one line per figure. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static const npk_bench_entry groups[] = {
    {"half", bench_half},       {"cnn2", bench_cnn2},       {"mgk", bench_mgk},
    {"rknpu", bench_rknpu},     {"edgetpu", bench_edgetpu}, {"edgetpu-tails", bench_edgetpu_tails},
    {"rknet", bench_rknpu_net}, {"tflite", bench_tflite},
};

struct npk_bench {
    double min_time;
    int reps;
    bool markdown;
    int failures;
    size_t memcpy_bytes;
    double memcpy_secs;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double npk_bench_time(npk_bench *b, void (*fn)(void *), void *arg)
{
    fn(arg); /* warm up caches and lazy initialisation */
    size_t iters = 1;
    for (;;) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++) fn(arg);
        double t = now() - t0;
        if (t >= b->min_time / 4 || iters >= ((size_t)1 << 40)) break;
        iters *= (t > 0 && t < b->min_time / 40) ? 10 : 2;
    }
    double best = 1e30;
    for (int r = 0; r < b->reps; r++) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++) fn(arg);
        double t = (now() - t0) / (double)iters;
        if (t < best) best = t;
    }
    return best;
}

struct memcpy_arg {
    void *dst;
    const void *src;
    size_t n;
};

static void do_memcpy(void *p)
{
    struct memcpy_arg *a = p;
    memcpy(a->dst, a->src, a->n);
    __asm__ __volatile__("" : : "r"(a->dst) : "memory");
}

double npk_bench_memcpy_time(npk_bench *b, size_t bytes)
{
    if (b->memcpy_bytes == bytes) return b->memcpy_secs;
    struct memcpy_arg a = {malloc(bytes), malloc(bytes), bytes};
    memset(a.dst, 1, bytes);
    memset((void *)a.src, 2, bytes);
    double t = npk_bench_time(b, do_memcpy, &a);
    free(a.dst);
    free((void *)a.src);
    b->memcpy_bytes = bytes;
    b->memcpy_secs = t;
    return t;
}

static void line(npk_bench *b, const char *name, const char *value, const char *vs,
                 const char *goal, int ok)
{
    if (b->markdown)
        printf("| %s | %s | %s | %s | %s |\n", name, value, vs, goal,
               ok < 0 ? ""
               : ok   ? "yes"
                      : "**NO**");
    else
        printf("%-44s %-22s %-30s %-16s %s\n", name, value, vs, goal,
               ok < 0 ? ""
               : ok   ? "ok"
                      : "BELOW GOAL");
    if (ok == 0) b->failures++;
}

void npk_bench_report_bytes(npk_bench *b, const char *name, size_t bytes, double seconds,
                            double goal_ratio)
{
    double mc = npk_bench_memcpy_time(b, bytes);
    double ratio = mc / seconds;
    char value[64], vs[64], goal[32] = "";
    snprintf(value, sizeof value, "%.2f GB/s", (double)bytes / seconds / 1e9);
    snprintf(vs, sizeof vs, "%.2fx memcpy (%.2f GB/s)", ratio, (double)bytes / mc / 1e9);
    if (goal_ratio > 0) snprintf(goal, sizeof goal, ">= %.2fx", goal_ratio);
    line(b, name, value, vs, goal, goal_ratio > 0 ? ratio >= goal_ratio : -1);
}

static void fmt_rate(char *buf, size_t n, double rate, const char *unit)
{
    if (rate >= 1e9)
        snprintf(buf, n, "%.2f G%s", rate / 1e9, unit);
    else if (rate >= 1e6)
        snprintf(buf, n, "%.2f M%s", rate / 1e6, unit);
    else if (rate >= 1e3)
        snprintf(buf, n, "%.2f k%s", rate / 1e3, unit);
    else
        snprintf(buf, n, "%.2f %s", rate, unit);
}

void npk_bench_report_rate(npk_bench *b, const char *name, double items, const char *unit,
                           double seconds, const char *peer, double peer_seconds, double goal)
{
    char value[64], vs[64] = "", g[32] = "";
    double rate = items / seconds;
    fmt_rate(value, sizeof value, rate, unit);
    int ok = -1;
    if (peer && peer_seconds > 0) {
        double ratio = peer_seconds / seconds;
        snprintf(vs, sizeof vs, "%.2fx %s", ratio, peer);
        if (goal > 0) {
            snprintf(g, sizeof g, ">= %.2fx", goal);
            ok = ratio >= goal;
        }
    } else if (goal > 0) {
        fmt_rate(g, sizeof g - 3, goal, unit);
        memmove(g + 3, g, strlen(g) + 1);
        memcpy(g, ">= ", 3);
        ok = rate >= goal;
    }
    line(b, name, value, vs, g, ok);
}

void npk_bench_report_value(npk_bench *b, const char *name, const char *value, const char *vs,
                            const char *goal, bool ok)
{
    line(b, name, value, vs, goal, goal && *goal ? ok : -1);
}

bool npk_bench_quick(const npk_bench *b)
{
    return b->reps < 5;
}

void npk_bench_note(npk_bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(b->markdown ? "\n_" : "  # ", stdout);
    vprintf(fmt, ap);
    fputs(b->markdown ? "_\n\n" : "\n", stdout);
    va_end(ap);
}

int main(int argc, char **argv)
{
    npk_bench b = {0.2, 5, false, 0, 0, 0};
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--filter") && i + 1 < argc)
            filter = argv[++i];
        else if (!strcmp(argv[i], "--quick")) {
            b.min_time = 0.02;
            b.reps = 2;
        } else if (!strcmp(argv[i], "--markdown"))
            b.markdown = true;
        else if (!strcmp(argv[i], "--list")) {
            for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) puts(groups[g].name);
            return 0;
        } else {
            fprintf(stderr,
                    "usage: npukit-bench [--filter SUBSTR] [--quick] [--markdown] [--list]\n");
            return 2;
        }
    }
    if (b.markdown)
        printf("| figure | value | baseline (same run) | goal | met |\n|---|---|---|---|---|\n");
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        if (filter && !strstr(groups[g].name, filter)) continue;
        groups[g].run(&b);
    }
    if (b.failures) fprintf(stderr, "npukit-bench: %d figure(s) below goal\n", b.failures);
    return 0;
}
