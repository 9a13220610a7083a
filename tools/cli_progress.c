#include "cli_progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool quiet;

void cli_set_quiet(bool q)
{
    quiet = q;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool wanted(void)
{
    const char *env = getenv("NPUKIT_PROGRESS");
    if (quiet || (env && !strcmp(env, "never"))) return false;
    if (env && !strcmp(env, "always")) return true;
    return isatty(STDERR_FILENO) == 1;
}

static bool from_library(void *user, const char *what, uint64_t done, uint64_t total)
{
    cli_progress_update(user, what, done, total);
    return true;
}

void cli_progress_start(cli_progress *p, const char *label)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->on = wanted();
    p->t0 = now_s();
    if (p->on) p->p = (npk_progress){.fn = from_library, .user = p};
}

static void draw(cli_progress *p, double t)
{
    char pct[16] = "";
    if (p->total)
        snprintf(pct, sizeof pct, " (%u%%)",
                 (unsigned)(100.0 * (double)p->done / (double)p->total));
    if (p->total)
        fprintf(stderr, "\rnpukit: %s: %s %" PRIu64 "/%" PRIu64 "%s, %.1f s  ", p->label, p->what,
                p->done, p->total, pct, t - p->t0);
    else
        fprintf(stderr, "\rnpukit: %s: %s %" PRIu64 ", %.1f s  ", p->label, p->what, p->done,
                t - p->t0);
    fflush(stderr);
    p->drawn = true;
}

void cli_progress_update(cli_progress *p, const char *what, uint64_t done, uint64_t total)
{
    if (!p->on) return;
    p->what = what ? what : "step";
    p->done = done;
    p->total = total;
    const double t = now_s();
    if (!p->drawn || t - p->last >= 0.1 || (total && done == total)) {
        p->last = t;
        draw(p, t);
    }
}

void cli_progress_end(cli_progress *p, bool ok)
{
    if (!p->on) return;
    const double t = now_s() - p->t0;
    if (p->drawn) fprintf(stderr, "\r%*s\r", 78, "");
    const double v = t < 1 ? t * 1e3 : t;
    const char *unit = t < 1 ? "ms" : "s";
    if (ok && p->what)
        fprintf(stderr, "npukit: %s: %" PRIu64 " %s%s in %.3f %s\n", p->label, p->done, p->what,
                p->done == 1 ? "" : "s", v, unit);
    else if (ok)
        fprintf(stderr, "npukit: %s: done in %.3f %s\n", p->label, v, unit);
    fflush(stderr);
}
