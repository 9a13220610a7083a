/* RKNPU whole networks (npukit/rknpu_net.h): compiling mobilenet_v2 against
 * one interpreter inference, an emulated inference of mobilenet_v1 1.0 224
 * against the interpreter, and the activation buffer against the largest
 * live set. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "npukit/file.h"
#include "npukit/rknpu_device.h"
#include "npukit/rknpu_net.h"
#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"
#include "rknpu/ops/add_exact.h"

static void net_model_path(const char *name, char *path, size_t len)
{
    const char *e = getenv("NPUKIT_FIXTURES");
    if (e && *e) {
        snprintf(path, len, "%s/models/%s", e, name);
        return;
    }
    snprintf(path, len, "%s", __FILE__);
    for (int up = 0; up < 2; up++) {
        char *s = strrchr(path, '/');
        if (s) *s = 0;
    }
    size_t n = strlen(path);
    snprintf(path + n, len - n, "/../shared/data/models/%s", name);
}

typedef struct net_arg {
    npk_mapped map;
    npk_tfl_model m;
    npk_tfl_interp *it;
    npk_rk_net net;
    bool compiled;
    npk_rk_device *dev;
    npk_rk_net_exec *x;
    npk_rk_net_opts opts;
    bool failed;
} net_arg;

static bool open_model(npk_bench *b, const char *name, net_arg *a)
{
    char path[1024];
    net_model_path(name, path, sizeof path);
    npk_error err = {0};
    memset(a, 0, sizeof *a);
    if (npk_map_file(path, &a->map, &err)) {
        npk_bench_note(b, "rknpu net: no model %s (%s)", name, err.msg);
        return false;
    }
    if (npk_tfl_parse(a->map.data, a->map.size, &a->m, &err)) {
        npk_bench_note(b, "rknpu net: %s", err.msg);
        npk_unmap_file(&a->map);
        return false;
    }
    npk_tfl_interp_opts io = {0};
    io.threads = 1;
    if (npk_tfl_interp_new(&a->m, &io, &a->it, &err)) {
        npk_bench_note(b, "rknpu net: interpreter: %s", err.msg);
        npk_tfl_free(&a->m);
        npk_unmap_file(&a->map);
        return false;
    }
    npk_tfl_view v;
    uint64_t r = 0x9E3779B97F4A7C15ull;
    if (npk_tfl_interp_input(a->it, 0, &v, NULL) == NPK_OK)
        for (size_t i = 0; i < v.bytes; i++) {
            r ^= r >> 12, r ^= r << 25, r ^= r >> 27;
            ((uint8_t *)v.data)[i] = (uint8_t)((r * 0x2545F4914F6CDD1Dull) >> 56);
        }
    npk_rk_net_opts o = {1, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    a->opts = o;
    return true;
}

static void close_model(net_arg *a)
{
    npk_rk_net_exec_free(a->x);
    npk_rk_device_close(a->dev);
    if (a->compiled) npk_rk_net_free(&a->net);
    npk_tfl_interp_free(a->it);
    npk_tfl_free(&a->m);
    npk_unmap_file(&a->map);
}

static void infer(void *p)
{
    net_arg *a = p;
    npk_tfl_interp_invoke(a->it, NULL);
}

/* Partition, lowering, memory plan, every layer planned at its addresses
 * (twice: sizes, then places), the CPU segments' interpreters. */
static void compile_net(void *p)
{
    net_arg *a = p;
    npk_rk_net net;
    if (npk_rk_net_compile(&a->m, &a->opts, &net, NULL)) {
        a->failed = true;
        return;
    }
    npk_rk_net_free(&net);
}

/* The same with the per-thread table of add searches emptied first: what
 * the first compile in a process costs. */
static void compile_net_cold(void *p)
{
    rk_add_exact_forget();
    compile_net(p);
}

static void run_net(void *p)
{
    net_arg *a = p;
    if (npk_rk_net_run(a->x, NULL, NULL)) a->failed = true;
}

static void bench_net_compile(npk_bench *b)
{
    net_arg a;
    if (!open_model(b, "mobilenet_v2_1.0_224_quant.tflite", &a)) return;
    double peer = npk_bench_time(b, infer, &a);
    double t = npk_bench_time(b, compile_net, &a);
    npk_bench_note(b,
                   "rknpu net compile: the whole mobilenet_v2_1.0_224_quant (partition, each "
                   "layer planned once and its streams relocated, memory plan, CPU "
                   "interpreter); peer = one interpreter inference, 1 thread%s",
                   a.failed ? "; FAILED" : "");
    npk_bench_report_rate(b, "rknpu: compile the whole mobilenet_v2_1.0_224_quant", 1, "models/s",
                          t, "one interpreter inference", peer, 10.0);
    double tc = npk_bench_time(b, compile_net_cold, &a);
    npk_bench_report_rate(b, "rknpu: first (cold) compile of mobilenet_v2_1.0_224_quant", 1,
                          "models/s", tc, "one interpreter inference", peer, 10.0);
    /* The floor under any compile: one copy of the weight bytes it writes
     * (no goal of its own; the compile's goal means nothing below it). */
    npk_rk_net net;
    if (npk_rk_net_compile(&a.m, &a.opts, &net, NULL) == NPK_OK) {
        double mc = npk_bench_memcpy_time(b, (size_t)net.weight_bytes);
        npk_bench_note(b,
                       "rknpu net compile floor: one memcpy of its %llu weight bytes takes "
                       "%.3f ms, %.1fx faster than one interpreter inference (%.3f ms); the "
                       "compile takes %.3f ms",
                       (unsigned long long)net.weight_bytes, mc * 1e3, peer / mc, peer * 1e3,
                       t * 1e3);
        npk_rk_net_free(&net);
    }
    close_model(&a);
}

static void bench_net_run(npk_bench *b)
{
    net_arg a;
    if (!open_model(b, "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite", &a)) return;
    npk_error err = {0};
    npk_rk_open_opts oo = {0};
    oo.emu_cores = 1;
    if (npk_rk_net_compile(&a.m, &a.opts, &a.net, &err) ||
        (a.compiled = true, npk_rk_device_open(NPK_RK_DEV_EMU, &oo, &a.dev, &err)) ||
        npk_rk_net_exec_new(&a.net, a.dev, &a.x, &err)) {
        npk_bench_note(b, "rknpu net run: %s", err.msg);
        close_model(&a);
        return;
    }
    npk_tfl_view v, w;
    if (npk_tfl_interp_input(a.it, 0, &v, NULL) == NPK_OK &&
        npk_rk_net_input(a.x, 0, &w, NULL) == NPK_OK && v.bytes == w.bytes)
        memcpy(w.data, v.data, v.bytes);
    double peer = npk_bench_time(b, infer, &a);
    double t = npk_bench_time(b, run_net, &a);
    npk_bench_note(b,
                   "rknpu net run: mobilenet_v1 1.0 224 (the embedding extractor: %u layers, "
                   "%zu tasks, one core) on the emulator device, layouts converted at the "
                   "boundaries; peer = the interpreter, 1 thread%s",
                   a.net.npu_ops, a.net.ntasks, a.failed ? "; FAILED" : "");
    npk_bench_report_rate(b, "rknpu emulator: mobilenet_v1 1.0 224 inference", 1, "inferences/s", t,
                          "TFLite interpreter", peer, 1.0);
    close_model(&a);
}

/* The sign-following passes' cost (docs/rknpu.md, "Sign-following
 * rounding"): an emulated mobilenet_v2 inference in the exact mode against
 * the same in one pass (--requant exact1), one emulated core. No goal: the
 * figure is the price of exact linear layers. */
static bool start_run(npk_bench *b, const char *name, npk_rk_rq_mode mode, net_arg *a)
{
    if (!open_model(b, name, a)) return false;
    a->opts.requant = mode;
    npk_error err = {0};
    npk_rk_open_opts oo = {0};
    oo.emu_cores = 1;
    if (npk_rk_net_compile(&a->m, &a->opts, &a->net, &err) ||
        (a->compiled = true, npk_rk_device_open(NPK_RK_DEV_EMU, &oo, &a->dev, &err)) ||
        npk_rk_net_exec_new(&a->net, a->dev, &a->x, &err)) {
        npk_bench_note(b, "rknpu net run: %s", err.msg);
        close_model(a);
        return false;
    }
    npk_tfl_view v, w;
    if (npk_tfl_interp_input(a->it, 0, &v, NULL) == NPK_OK &&
        npk_rk_net_input(a->x, 0, &w, NULL) == NPK_OK && v.bytes == w.bytes)
        memcpy(w.data, v.data, v.bytes);
    return true;
}

static void bench_net_signs(npk_bench *b)
{
    net_arg two, one;
    if (!start_run(b, "mobilenet_v2_1.0_224_quant.tflite", NPK_RK_RQ_EXACT, &two)) return;
    if (!start_run(b, "mobilenet_v2_1.0_224_quant.tflite", NPK_RK_RQ_EXACT1, &one)) {
        close_model(&two);
        return;
    }
    double peer = npk_bench_time(b, run_net, &one);
    double t = npk_bench_time(b, run_net, &two);
    npk_bench_note(b,
                   "rknpu net run: mobilenet_v2_1.0_224_quant, one emulated core: exact mode "
                   "%zu tasks, one pass (exact1) %zu tasks; peer = the one-pass inference%s",
                   two.net.ntasks, one.net.ntasks, two.failed || one.failed ? "; FAILED" : "");
    npk_bench_report_rate(b, "rknpu emulator: mobilenet_v2 inference, sign-following passes", 1,
                          "inferences/s", t, "the same in one pass", peer, 0.0);
    close_model(&one);
    close_model(&two);
}

/* Memory: the planned activation buffer against the largest sum of device
 * tensors alive at one operator, per model (goal <= 1.2x). */
static void bench_net_memory(npk_bench *b)
{
    static const char *const models[] = {
        "mobilenet_v1_0.5_160_quant.tflite", "mobilenet_v2_1.0_224_quant.tflite",
        "deeplabv3_mnv2_pascal_quant.tflite", "movenet_single_pose_lightning_ptq.tflite"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        net_arg a;
        if (!open_model(b, models[i], &a)) continue;
        npk_error err = {0};
        if (npk_rk_net_compile(&a.m, &a.opts, &a.net, &err)) {
            npk_bench_note(b, "rknpu net memory: %s: %s", models[i], err.msg);
        } else {
            a.compiled = true;
            npk_bench_note(b,
                           "rknpu net memory: %s: activation buffer %llu bytes, largest live "
                           "set %llu bytes: %.3fx (goal <= 1.2x); interpreter arena %zu bytes",
                           models[i], (unsigned long long)a.net.act_bytes,
                           (unsigned long long)a.net.peak_live,
                           (double)a.net.act_bytes / (double)a.net.peak_live,
                           npk_tfl_interp_arena_bytes(a.it));
        }
        close_model(&a);
    }
}

void bench_rknpu_net(npk_bench *b)
{
    bench_net_compile(b);
    bench_net_run(b);
    bench_net_signs(b);
    bench_net_memory(b);
}
