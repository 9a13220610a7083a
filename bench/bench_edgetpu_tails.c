/* Edge TPU models' CPU tails on the interpreter, against LiteRT.js running
 * the same operators on the same inputs in the same run (goal: faster):
 *   - DeepLab v3 513x513: RESIZE_BILINEAR, QUANTIZE, CONCATENATION, two
 *     CONV_2D, two RESIZE_BILINEAR (33 -> 513), ARG_MAX;
 *   - the PoseNet decoder (PosenetDecoderOp);
 *   - SSD post-processing (two DEQUANTIZE, TFLite_Detection_PostProcess).
 * Each tail is cut out of the compiled model (everything after its Edge TPU
 * op) with the TFLite writer. Inputs: DeepLab's and PoseNet's are what their
 * uncompiled twins compute for cat.bmp at the cut (real activations); SSD's
 * are synthetic (the pair has no twin): boxes random, class scores 0 but
 * for 2 % of the (anchor, class) pairs.
 *
 * LiteRT.js (@litertjs/core under Node, one thread, XNNPACK) runs through
 * tests/oracle/litert_run.mjs --repeat in its own process; its node_modules
 * are looked for in $NPK_LITERT_MODULES, then BUILD/oracle/node_modules
 * (scripts/oracle-deps.sh BUILD). npukit runs one thread too. Three
 * alternating rounds of ten runs each side; each side's best single run
 * counts. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "npukit/npukit.h"
#include "npukit/tflite_build.h"
#include "npukit/tflite_interp.h"
#include "npukit/vision.h"

typedef struct tail {
    const char *label, *compiled, *twin; /* twin: the uncompiled model (NULL: synthetic inputs) */
    const char *in[3], *out[4];
} tail;

static const tail TAILS[] = {
    {"DeepLab v3 513x513 tail (resize, concat, conv, arg-max)",
     "deeplabv3_mnv2_pascal_quant_edgetpu.tflite",
     "deeplabv3_mnv2_pascal_quant.tflite",
     {"aspp0/Relu;aspp0/add_fold;concat_projection/Conv2D_Fold;aspp0/Conv2D_Fold;aspp0/"
      "BatchNorm_Fold/bias",
      "image_pooling/Relu;image_pooling/add_fold;concat_projection/Conv2D_Fold;image_pooling/"
      "Conv2D_Fold;image_pooling/BatchNorm_Fold/bias"},
     {"ArgMax"}},
    {"PoseNet 481x641 decoder (PosenetDecoderOp)",
     "posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite",
     "posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite",
     {"float_heatmaps", "float_short_offsets", "float_mid_offsets"},
     {"poses", "poses:1", "poses:2", "poses:3"}},
    {"SSD post-processing (TFLite_Detection_PostProcess)",
     "ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite",
     NULL,
     {"Squeeze1", "convert_scores"},
     {"TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess:1",
      "TFLite_Detection_PostProcess:2", "TFLite_Detection_PostProcess:3"}},
};

static const char *src_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s", __FILE__);
    for (int up = 0; up < 2; up++) {
        char *s = strrchr(buf, '/');
        if (s) *s = 0;
    }
    return buf;
}

static const char *fixture(const char *name, char *buf, size_t n)
{
    const char *e = getenv("NPUKIT_FIXTURES");
    char src[1024];
    if (e && *e)
        snprintf(buf, n, "%s/models/%s", e, name);
    else
        snprintf(buf, n, "%s/../shared/data/models/%s", src_dir(src, sizeof src), name);
    return buf;
}

static int32_t find(const npk_tfl_model *m, const char *name)
{
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    for (uint32_t i = 0; i < sg->ntensors; i++)
        if (!strcmp(sg->tensors[i].name, name)) return (int32_t)i;
    return -1;
}

/* ---- the peer ---- */

typedef struct peer {
    char runner[1100], modules[1100], why[300];
} peer;

static bool peer_find(peer *p)
{
    char src[1024], exe[1024];
    snprintf(p->runner, sizeof p->runner, "%s/tests/oracle/litert_run.mjs",
             src_dir(src, sizeof src));
    const char *e = getenv("NPK_LITERT_MODULES");
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    if (e && *e)
        snprintf(p->modules, sizeof p->modules, "%s", e);
    else
        snprintf(p->modules, sizeof p->modules, "%s/oracle/node_modules", exe);
    p->why[0] = 0;
    if (system("command -v node >/dev/null 2>&1") != 0)
        snprintf(p->why, sizeof p->why, "node is not installed");
    else if (access(p->runner, R_OK) != 0)
        snprintf(p->why, sizeof p->why, "no LiteRT.js runner at %.200s", p->runner);
    return !p->why[0];
}

/* LiteRT.js on a model with inputs in order: its best run in seconds, or a
 * negative value with the reason in p->why. */
static double peer_run(peer *p, const char *model, char (*inputs)[1100], int nin, int runs)
{
    char cmd[8000];
    size_t k = (size_t)snprintf(cmd, sizeof cmd, "node --no-liftoff '%s' '%s'", p->runner, model);
    for (int i = 0; i < nin && k < sizeof cmd; i++)
        k += (size_t)snprintf(cmd + k, sizeof cmd - k, " --input '%s'", inputs[i]);
    if (k < sizeof cmd)
        snprintf(cmd + k, sizeof cmd - k, " --repeat %d --modules '%s' 2>&1", runs, p->modules);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(p->why, sizeof p->why, "cannot start node");
        return -1;
    }
    char line[1000], last[1000] = "";
    double min_ms = -1, med_ms = 0;
    while (fgets(line, sizeof line, f)) {
        const char *m = strstr(line, "min ");
        if (m && sscanf(m, "min %lf ms, median %lf", &min_ms, &med_ms) >= 1) continue;
        snprintf(last, sizeof last, "%s", line);
    }
    const int st = pclose(f);
    if (min_ms < 0) {
        last[strcspn(last, "\n")] = 0;
        snprintf(p->why, sizeof p->why, "LiteRT.js: %.250s (exit %d)", last, st);
        return -1;
    }
    return min_ms / 1e3;
}

/* ---- the tails ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* npukit's best single run of `runs` (after one to warm up), in seconds:
 * measured as LiteRT.js's runner measures itself (its best of --repeat
 * runs), so both sides count the same way on a shared machine. */
static double best_run(npk_tfl_interp *it, int runs)
{
    npk_tfl_interp_invoke(it, NULL);
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        const double t0 = now_s();
        npk_tfl_interp_invoke(it, NULL);
        const double t = now_s() - t0;
        if (t < best) best = t;
    }
    return best;
}

/* The tail's inputs: the twin's activations for cat.bmp at the cut, or synthetic. */
static npk_status make_inputs(const tail *t, npk_tfl_interp *it, npk_error *err)
{
    char path[1200];
    if (!t->twin) {
        uint64_t s = 0x5D5D;
        for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
            npk_tfl_view v;
            npk_status st = npk_tfl_interp_input(it, i, &v, err);
            if (st) return st;
            const bool scores = !strcmp(v.name, "convert_scores");
            for (size_t k = 0; k < v.bytes; k++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                ((uint8_t *)v.data)[k] =
                    scores ? ((s >> 20) % 50 == 0 ? (uint8_t)(s >> 40) : 0) : (uint8_t)(s >> 32);
            }
        }
        return NPK_OK;
    }
    npk_mapped map = {0};
    npk_tfl_model m;
    npk_tfl_interp *front = NULL;
    npk_image img = {0};
    int32_t outs[3];
    npk_status st = npk_map_file(fixture(t->twin, path, sizeof path), &map, err);
    if (st) return st;
    if ((st = npk_tfl_parse(map.data, map.size, &m, err))) {
        npk_unmap_file(&map);
        return st;
    }
    const uint32_t n = npk_tfl_interp_ninputs(it);
    for (uint32_t i = 0; i < n && !st; i++) {
        npk_tfl_view v;
        if (!(st = npk_tfl_interp_input(it, i, &v, err)) && (outs[i] = find(&m, v.name)) < 0)
            st = npk_fail(err, NPK_E_NOTFOUND, "%s: no tensor %s", t->twin, v.name);
    }
    npk_tfl_interp_opts o = {.threads = 2, .outputs = outs, .noutputs = n};
    npk_tfl_view in;
    if (!st) st = npk_tfl_interp_new(&m, &o, &front, err);
    if (!st) st = npk_image_load(fixture("cat.bmp", path, sizeof path), &img, err);
    if (!st) st = npk_tfl_interp_input(front, 0, &in, err);
    if (!st) st = npk_vis_fill_input(&img, &in, err);
    if (!st) st = npk_tfl_interp_invoke(front, err);
    for (uint32_t i = 0; i < n && !st; i++) {
        npk_tfl_view a, b;
        if (!(st = npk_tfl_interp_output(front, i, &a, err)) &&
            !(st = npk_tfl_interp_input(it, i, &b, err)))
            memcpy(b.data, a.data, a.bytes < b.bytes ? a.bytes : b.bytes);
    }
    npk_image_free(&img);
    npk_tfl_interp_free(front);
    npk_tfl_free(&m);
    npk_unmap_file(&map);
    return st;
}

static void bench_tail(npk_bench *b, const tail *t, peer *p, bool have_peer, const char *tmp)
{
    npk_error err = {0};
    char path[1200], label[200];
    npk_mapped map = {0};
    npk_tfl_model m, cut;
    uint8_t *cut_bytes = NULL;
    size_t cut_len = 0;
    npk_tfl_interp *it = NULL;
    bool parsed = false, cut_parsed = false;
    int32_t in[3], out[4];
    uint32_t nin = 0, nout = 0;
    snprintf(label, sizeof label, "edgetpu tail: %s", t->label);
    npk_status st = npk_map_file(fixture(t->compiled, path, sizeof path), &map, &err);
    if (!st && !(st = npk_tfl_parse(map.data, map.size, &m, &err))) parsed = true;
    for (; !st && nin < 3 && t->in[nin]; nin++)
        if ((in[nin] = find(&m, t->in[nin])) < 0) st = npk_fail(&err, NPK_E_NOTFOUND, "no input");
    for (; !st && nout < 4 && t->out[nout]; nout++)
        if ((out[nout] = find(&m, t->out[nout])) < 0)
            st = npk_fail(&err, NPK_E_NOTFOUND, "no output");
    npk_tfl_write_opts wo = {in, nin, out, nout, true};
    if (!st) st = npk_tfl_write(&m, &wo, &cut_bytes, &cut_len, &err);
    if (!st && !(st = npk_tfl_parse(cut_bytes, cut_len, &cut, &err))) cut_parsed = true;
    npk_tfl_interp_opts io = {.threads = 1};
    if (!st) st = npk_tfl_interp_new(&cut, &io, &it, &err);
    if (!st) st = make_inputs(t, it, &err);
    if (st) {
        npk_bench_note(b, "%s: not measured: %s", label, err.msg);
        goto done;
    }
    double mine = 1e30, theirs = -1;
    char model[1200], inputs[3][1100];
    if (have_peer) { /* the same cut model and inputs for LiteRT.js */
        snprintf(model, sizeof model, "%s/tail.tflite", tmp);
        st = npk_write_file(model, cut_bytes, cut_len, &err);
        for (uint32_t i = 0; i < nin && !st; i++) {
            npk_tfl_view v;
            npk_tensor x;
            int64_t shape[NPK_MAX_DIMS];
            if ((st = npk_tfl_interp_input(it, i, &v, &err))) break;
            for (uint32_t d = 0; d < v.ndim; d++) shape[d] = v.dims[d];
            snprintf(inputs[i], sizeof inputs[i], "%s/in%u.npy", tmp, i);
            if (!(st = npk_tensor_alloc(&x, NULL, NPK_U8, (int)v.ndim, shape, &err))) {
                memcpy(x.data, v.data, v.bytes);
                st = npk_npy_save(inputs[i], &x, &err);
                npk_tensor_free(&x);
            }
        }
        if (st) snprintf(p->why, sizeof p->why, "%.250s", err.msg);
    }
    /* Alternating rounds, so that both see the same load on a shared machine;
     * ten runs a round on each side. */
    for (int round = 0; round < 3; round++) {
        const double t = best_run(it, 10);
        if (t < mine) mine = t;
        if (have_peer && !st) {
            const double u = peer_run(p, model, inputs, (int)nin, 10);
            if (u <= 0) break;
            if (theirs < 0 || u < theirs) theirs = u;
        }
    }
    npk_bench_report_rate(b, label, 1, "runs/s", mine, theirs > 0 ? "LiteRT.js" : NULL,
                          theirs > 0 ? theirs : 0, theirs > 0 ? 1.0 : 0);
    if (theirs <= 0) npk_bench_note(b, "%s: no LiteRT.js figure: %s", label, p->why);
done:
    npk_tfl_interp_free(it);
    if (cut_parsed) npk_tfl_free(&cut);
    free(cut_bytes);
    if (parsed) npk_tfl_free(&m);
    npk_unmap_file(&map);
}

void bench_edgetpu_tails(npk_bench *b)
{
    peer p;
    const bool have = peer_find(&p);
    char tmp[] = "/tmp/npk-bench-tails.XXXXXX";
    if (!mkdtemp(tmp)) {
        npk_bench_note(b, "edgetpu tails: no temporary directory");
        return;
    }
    for (size_t i = 0; i < sizeof TAILS / sizeof TAILS[0]; i++)
        bench_tail(b, &TAILS[i], &p, have, tmp);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) npk_bench_note(b, "could not remove %s", tmp);
}
