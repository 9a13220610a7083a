/* TFLite interpreter: one-thread latency per inference of
 * mobilenet_v1_1.0_224_quant_embedding_extractor and mobilenet_v2_1.0_224_quant
 * against LiteRT.js (@litertjs/core under Node: TFLite in WebAssembly with
 * XNNPACK, one thread) on the same input (i * 7 mod 256) in the same run.
 * Goal: npukit >= 1.5x faster (ratio of the best runs; the machine is
 * shared, so medians are reported too), and the activation arena within
 * 1.2x the largest set of tensors alive at once.
 *
 * Timing alternates npukit and LiteRT.js in rounds so that both see the
 * same load. LiteRT.js runs in its own Node process per round
 * (tests/oracle/litert_run.mjs --repeat when present, else
 * bench/litert_repeat.mjs; NPK_LITERT_RUNNER overrides), with V8's
 * baseline WebAssembly compiler off (--no-liftoff) so that every timed run
 * uses the optimised code it would reach after warming up. The package is
 * looked for in $NPK_LITERT_MODULES, then BUILD/oracle/node_modules
 * (scripts/oracle-deps.sh); without Node or the package the peer is
 * skipped with a note. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "npukit/file.h"
#include "npukit/tensor.h"
#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"
#include "tflite/qkern.h"

static const char *const MODELS[] = {
    "mobilenet_v1_1.0_224_quant_embedding_extractor",
    "mobilenet_v2_1.0_224_quant",
};

#define ROUNDS 2

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool exists(const char *path)
{
    return access(path, R_OK) == 0;
}

/* ---- the peer ---- */

typedef struct peer {
    char runner[1024], modules[1024];
    bool ok;
    char why[256];
} peer;

static void peer_find(peer *p)
{
    const char *e = getenv("NPK_LITERT_RUNNER");
    if (e && *e)
        snprintf(p->runner, sizeof p->runner, "%s", e);
    else if (snprintf(p->runner, sizeof p->runner, "%s/tests/oracle/litert_run.mjs",
                      NPK_BENCH_SOURCE_DIR),
             !exists(p->runner))
        snprintf(p->runner, sizeof p->runner, "%s/bench/litert_repeat.mjs", NPK_BENCH_SOURCE_DIR);
    e = getenv("NPK_LITERT_MODULES");
    if (e && *e)
        snprintf(p->modules, sizeof p->modules, "%s", e);
    else
        snprintf(p->modules, sizeof p->modules, "%s/oracle/node_modules", NPK_BENCH_BUILD_DIR);
    p->ok = false;
    if (system("command -v node >/dev/null 2>&1") != 0)
        snprintf(p->why, sizeof p->why, "node is not installed");
    else if (!exists(p->runner))
        snprintf(p->why, sizeof p->why, "no LiteRT.js runner at %.200s", p->runner);
    else if (strchr(p->runner, '\'') || strchr(p->modules, '\''))
        snprintf(p->why, sizeof p->why, "a quote in the runner or modules path");
    else
        p->ok = true;
}

/* Runs the peer: min and median milliseconds of `runs` runs, or false with
 * p->why set (and p->ok cleared when it cannot run at all). */
static bool peer_run(peer *p, const char *model, const char *npy, int runs, double *min_ms,
                     double *med_ms)
{
    char cmd[8192], out[4096] = "";
    snprintf(cmd, sizeof cmd,
             "node --no-liftoff '%s' '%s' --input '%s' --repeat %d --modules '%s' 2>&1", p->runner,
             model, npy, runs, p->modules);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(p->why, sizeof p->why, "cannot start node");
        p->ok = false;
        return false;
    }
    size_t len = fread(out, 1, sizeof out - 1, f);
    out[len] = 0;
    const int st = pclose(f);
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    const char *m = strstr(out, "min ");
    if (code == 0 && m && sscanf(m, "min %lf ms, median %lf ms", min_ms, med_ms) == 2) return true;
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    snprintf(p->why, sizeof p->why, "%.120s (exit %d)%s", out, code,
             code == 4 ? ": install it with scripts/oracle-deps.sh BUILD or set NPK_LITERT_MODULES"
                       : "");
    if (code == 4 || code == 127) p->ok = false;
    return false;
}

/* ---- npukit ---- */

typedef struct model {
    npk_mapped map;
    npk_tfl_model m;
    npk_tfl_interp *it;
} model;

static bool model_open(npk_bench *b, const char *path, model *md)
{
    npk_error err = {0};
    memset(md, 0, sizeof *md);
    if (npk_map_file(path, &md->map, &err)) {
        npk_bench_note(b, "%s: %s", path, err.msg);
        return false;
    }
    if (npk_tfl_parse(md->map.data, md->map.size, &md->m, &err)) {
        npk_bench_note(b, "%s: %s", path, err.msg);
        npk_unmap_file(&md->map);
        return false;
    }
    return true;
}

static void model_close(model *md)
{
    npk_tfl_interp_free(md->it);
    npk_tfl_free(&md->m);
    npk_unmap_file(&md->map);
}

/* Plans the interpreter (one thread) on the kernels of force level `level`
 * and fills the input; false (with a note) when it cannot run. */
static bool model_plan(npk_bench *b, model *md, int level, npk_tensor *in)
{
    npk_error err = {0};
    npk_tfl_interp_opts o = {.threads = 1};
    npk_tfl_interp_free(md->it);
    md->it = NULL;
    npk_tfl_qkern_force(level);
    const npk_status st = npk_tfl_interp_new(&md->m, &o, &md->it, &err);
    npk_tfl_qkern_force(0);
    npk_tfl_view v;
    if (st || npk_tfl_interp_ninputs(md->it) != 1 || npk_tfl_interp_input(md->it, 0, &v, &err)) {
        npk_bench_note(b, "cannot run: %s", st ? err.msg : "not one input");
        return false;
    }
    if (in && !in->data) {
        int64_t shape[NPK_MAX_DIMS];
        for (uint32_t d = 0; d < v.ndim; d++) shape[d] = v.dims[d];
        if (v.type != NPK_TFL_UINT8 ||
            npk_tensor_alloc(in, NULL, NPK_U8, (int)v.ndim, shape, &err)) {
            npk_bench_note(b, "cannot make the input: %s", err.msg[0] ? err.msg : "not uint8");
            return false;
        }
        for (size_t i = 0; i < v.bytes; i++) ((uint8_t *)in->data)[i] = (uint8_t)(i * 7);
    }
    memcpy(v.data, in->data, v.bytes);
    return true;
}

/* `runs` timed invocations (after one untimed) appended to t (seconds). */
static void model_time(model *md, int runs, double *t, size_t *nt)
{
    npk_error err = {0};
    npk_tfl_interp_invoke(md->it, &err);
    for (int r = 0; r < runs; r++) {
        const double t0 = now();
        npk_tfl_interp_invoke(md->it, &err);
        t[(*nt)++] = now() - t0;
    }
}

/* npukit and LiteRT.js in alternating rounds on the planned model. */
static void compare(npk_bench *b, const char *name, const char *path, const char *npy, model *md,
                    peer *p, int runs)
{
    char label[160];
    double *t = malloc(sizeof *t * (size_t)runs * ROUNDS), pmin = 1e30, pmed = 0;
    size_t nt = 0;
    int pr = 0;
    for (int r = 0; r < ROUNDS; r++) {
        model_time(md, runs, t, &nt);
        double mn, med;
        if (p->ok && peer_run(p, path, npy, runs, &mn, &med)) {
            pmin = mn < pmin ? mn : pmin;
            pmed += med;
            pr++;
        }
    }
    const double mine_med = median(t, nt), mine_min = t[0];
    const char *kern = npk_tfl_qkern_get()->name;
    snprintf(label, sizeof label, "tflite: %s, 1 thread, %s, best", name, kern);
    if (pr) {
        pmed /= pr; /* the mean of the rounds' medians */
        npk_bench_report_rate(b, label, 1, "inf/s", mine_min, "LiteRT.js 1 thread, best",
                              pmin / 1e3, 1.5);
        snprintf(label, sizeof label, "tflite: %s, 1 thread, %s, median", name, kern);
        npk_bench_report_rate(b, label, 1, "inf/s", mine_med, "LiteRT.js 1 thread, median",
                              pmed / 1e3, 0);
        npk_bench_note(b,
                       "%s: npukit min %.2f ms, median %.2f ms (%zu runs); LiteRT.js min %.2f ms, "
                       "median %.2f ms (%d rounds of %d runs)",
                       name, mine_min * 1e3, mine_med * 1e3, nt, pmin, pmed, pr, runs);
    } else {
        npk_bench_report_rate(b, label, 1, "inf/s", mine_min, NULL, 0, 0);
        npk_bench_note(b, "%s: npukit min %.2f ms, median %.2f ms; LiteRT.js skipped: %s", name,
                       mine_min * 1e3, mine_med * 1e3, p->why);
    }
    free(t);
}

/* The arena against the largest live set, and the parameters' memory. */
static void memory(npk_bench *b, const char *name, const model *md)
{
    const size_t arena = npk_tfl_interp_arena_bytes(md->it),
                 peak = npk_tfl_interp_peak_live_bytes(md->it),
                 params = npk_tfl_interp_param_bytes(md->it);
    char label[160], value[64], vs[96];
    snprintf(label, sizeof label, "tflite: %s arena", name);
    snprintf(value, sizeof value, "%zu bytes", arena);
    snprintf(vs, sizeof vs, "%.3fx the largest live set (%zu)", (double)arena / (double)peak, peak);
    npk_bench_report_value(b, label, value, vs, "<= 1.20x", arena * 10 <= peak * 12);
    size_t weights = 0;
    for (uint32_t i = 0; i < md->m.nbuffers; i++) weights += md->m.buffers[i].size;
    npk_bench_note(b,
                   "%s: operator parameters incl. packed weights %zu bytes (%s kernels); the "
                   "model's constants %zu bytes",
                   name, params, npk_tfl_qkern_get()->name, weights);
}

static void bench_model(npk_bench *b, const char *dir, const char *name, peer *p, int runs)
{
    char path[4200], label[160];
    snprintf(path, sizeof path, "%s/models/%s.tflite", dir, name);
    if (!exists(path)) {
        npk_bench_note(b, "tflite: %s missing: skipped", path);
        return;
    }
    model md;
    if (!model_open(b, path, &md)) return;
    npk_tensor in = {0};
    char npy[] = "/tmp/npukit-bench-XXXXXX";
    int fd = -1;
    npk_error err = {0};
    if (model_plan(b, &md, 0, &in)) {
        if ((fd = mkstemp(npy)) < 0 || npk_npy_save(npy, &in, &err)) {
            npk_bench_note(b, "cannot write the input for LiteRT.js: %s", err.msg);
            p->ok = false;
        }
        compare(b, name, path, npy, &md, p, runs);
        memory(b, name, &md);
    }
    /* What hosts without AVX2 (SSE2) and the boards without NEON (portable C) get. */
    for (int level = 1; level <= 2; level++) {
        if (level == 1 && !npk_tfl_qkern_v128) continue;
        if (!model_plan(b, &md, level, &in)) break;
        double *u = malloc(sizeof *u * (size_t)runs);
        size_t nu = 0;
        model_time(&md, runs, u, &nu);
        const double um = median(u, nu);
        snprintf(label, sizeof label, "tflite: %s, 1 thread, %s kernels, best", name,
                 level == 1 ? npk_tfl_qkern_v128->name : "portable");
        npk_bench_report_rate(b, label, 1, "inf/s", u[0], NULL, 0, 0);
        npk_bench_note(b, "median %.2f ms", um * 1e3);
        free(u);
    }
    if (fd >= 0) {
        close(fd);
        unlink(npy);
    }
    npk_tensor_free(&in);
    model_close(&md);
}

void bench_tflite(npk_bench *b)
{
    const char *dir = getenv("NPUKIT_FIXTURES");
    char buf[2048];
    if (!dir || !*dir) {
        snprintf(buf, sizeof buf, "%s/../shared/data", NPK_BENCH_SOURCE_DIR);
        dir = buf;
    }
    peer p;
    peer_find(&p);
    if (!p.ok) npk_bench_note(b, "tflite: LiteRT.js skipped: %s", p.why);
    const int runs = npk_bench_quick(b) ? 5 : 15;
    for (size_t i = 0; i < sizeof MODELS / sizeof MODELS[0]; i++)
        bench_model(b, dir, MODELS[i], &p, runs);
}
