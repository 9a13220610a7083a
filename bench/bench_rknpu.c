/* RKNPU: stream generation rate, stream decoding, and the layout conversions
 * against memcpy of the same bytes (buffers well past the caches). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "npukit/file.h"
#include "npukit/half.h"
#include "npukit/rknpu_device.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_layout.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_stream.h"
#include "npukit/rknpu_tflite.h"
#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"

#ifdef NPK_HAVE_OPENBLAS
#include <cblas.h>
#endif

static uint64_t npk_rand_bench(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* ---- stream generation ---- */

#define GEN_BATCH 1024

struct gen_arg {
    npk_rk_matmul shapes[GEN_BATCH];
    uint64_t out[NPK_RK_MATMUL_ENTRIES];
    uint64_t sink;
};

static void gen(void *p)
{
    struct gen_arg *a = p;
    for (int i = 0; i < GEN_BATCH; i++) {
        npk_rk_matmul_stream(&a->shapes[i], a->out, NULL);
        a->sink += a->out[11];
    }
}

static void decode(void *p)
{
    struct gen_arg *a = p;
    for (int r = 0; r < GEN_BATCH / 16; r++)
        for (int i = 0; i < NPK_RK_MATMUL_ENTRIES; i++) {
            npk_rk_entry e;
            npk_rk_entry_decode(a->out[i], &e);
            a->sink += (uint64_t)e.reg;
        }
}

/* ---- layouts ---- */

struct lay_arg {
    npk_rk_feature_shape fs;
    npk_rk_weight_shape ws;
    npk_rk_order order;
    bool weight, pack;
    uint8_t *plain, *native;
};

static void lay(void *p)
{
    struct lay_arg *a = p;
    if (a->weight) {
        if (a->pack)
            npk_rk_weight_pack(&a->ws, a->order, a->plain, a->native, NULL);
        else
            npk_rk_weight_unpack(&a->ws, a->order, a->native, a->plain, NULL);
    } else {
        if (a->pack)
            npk_rk_feature_pack(&a->fs, a->order, a->plain, a->native, NULL);
        else
            npk_rk_feature_unpack(&a->fs, a->order, a->native, a->plain, NULL);
    }
}

static void run_layout(npk_bench *b, const char *name, struct lay_arg *a, size_t bytes, double goal)
{
    a->plain = malloc(bytes);
    a->native = malloc(bytes + 64);
    memset(a->plain, 0x3C, bytes);
    memset(a->native, 0x3C, bytes + 64);
    npk_bench_report_bytes(b, name, bytes, npk_bench_time(b, lay, a), goal);
    free(a->plain);
    free(a->native);
}

/* ---- the emulator against single-threaded OpenBLAS sgemm ---- */

#define EM 256
#define EK 512
#define EN 128

struct emu_arg {
    npk_rk_emu *emu;
    npk_rk_device *dev;
    uint16_t *a16, *b16;
    float *af, *bf, *cf;
    uint8_t *in, *wt, *out, *stream;
};

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1.0p-53 * 4.0 - 2.0;
}

/* One task through the emulator: fetch, decode, check, multiply, DPU, write. */
static void emu_task(void *p)
{
    struct emu_arg *a = p;
    npk_rk_emu_run_core(a->emu, 0, 0x00100000, 53, 1, NULL);
}

/* The whole path: plan, lay out, run, read back to row-major. */
static void emu_end_to_end(void *p)
{
    struct emu_arg *a = p;
    npk_rk_run_opts o = {EM, EK, EN, NPK_RK_FP16, 1};
    npk_rk_run_matmul(a->dev, &o, a->a16, a->b16, a->cf, NULL, NULL);
}

#ifdef NPK_HAVE_OPENBLAS
static void blas_sgemm(void *p)
{
    struct emu_arg *a = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, EM, EN, EK, 1.0f, a->af, EK, a->bf, EN,
                0.0f, a->cf, EN);
}
#endif

/* ---- layers: mobilenet_v2_1.0_224_quant's largest convolution ---- */

/* The 1x1 convolution 7x7x320 -> 1280 (20.1 M multiply-accumulates, the
 * model's largest by work), uint8, per tensor, with ReLU6. */
struct conv_arg {
    npk_rk_layer l;
    npk_rk_lplan p;
    npk_rk_emu *e;
    uint8_t *in, *out, *wt, *reg;
    uint64_t sink;
};

static void conv_plan(void *p)
{
    struct conv_arg *a = p;
    npk_rk_lplan q;
    npk_rk_lplan_opts o = {1,          NPK_RK_FORM_VENDOR, 0x10000000, 0x20000000,
                           0x30000000, 0x40000000,         0,          0,
                           0,          NPK_RK_RQ_EXACT};
    if (npk_rk_lplan_make(&a->l, &o, &q, NULL) == NPK_OK) a->sink += q.regcmd_entries;
    npk_rk_lplan_free(&q);
}

static void conv_run(void *p)
{
    struct conv_arg *a = p;
    if (npk_rk_emu_submit(a->e, &a->p.submit, a->p.records, a->p.count, NULL) == NPK_OK)
        a->sink += a->out[7];
}

/* The peer: the TFLite interpreter (one thread) on the model's own layer,
 * the graph cut to that one operator. */
struct interp_arg {
    npk_tfl_interp *it;
};

static void interp_run(void *p)
{
    struct interp_arg *a = p;
    npk_tfl_interp_invoke(a->it, NULL);
}

/* A fixture model's path: $NPUKIT_FIXTURES/models/NAME, else the shared
 * data beside the source tree. */
static void model_path(const char *name, char *path, size_t len)
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

static double interp_peer(npk_bench *b)
{
    char path[1024];
    model_path("mobilenet_v2_1.0_224_quant.tflite", path, sizeof path);
    npk_mapped m;
    npk_tfl_model md;
    npk_error err = {0};
    if (npk_map_file(path, &m, &err)) {
        npk_bench_note(b, "rknpu conv: no interpreter peer (%s)", err.msg);
        return 0;
    }
    double t = 0;
    if (npk_tfl_parse(m.data, m.size, &md, &err) == NPK_OK) {
        const npk_tfl_subgraph *g = &md.subgraphs[0];
        int best = -1;
        double bm = 0;
        for (uint32_t i = 0; i < g->noperators; i++) {
            const npk_tfl_operator *o = &g->operators[i];
            const npk_tfl_opcode *oc = npk_tfl_op_code(&md, o);
            if (!oc || oc->builtin != 3 || o->ninputs < 2) continue; /* CONV_2D */
            const npk_tfl_tensor *wt = &g->tensors[o->inputs[1]], *ot = &g->tensors[o->outputs[0]];
            double macs = (double)ot->shape[1] * ot->shape[2];
            for (uint32_t d = 0; d < wt->ndim; d++) macs *= wt->shape[d];
            if (macs > bm) bm = macs, best = (int)i;
        }
        if (best >= 0) {
            const npk_tfl_operator *o = &g->operators[best];
            int32_t in[1] = {o->inputs[0]}, out[1] = {o->outputs[0]};
            npk_tfl_interp_opts io = {0};
            io.threads = 1;
            io.inputs = in, io.ninputs = 1, io.outputs = out, io.noutputs = 1;
            struct interp_arg a = {NULL};
            if (npk_tfl_interp_new(&md, &io, &a.it, &err) == NPK_OK) {
                t = npk_bench_time(b, interp_run, &a);
                npk_bench_note(b,
                               "rknpu conv: peer = the interpreter on operator %d of "
                               "mobilenet_v2_1.0_224_quant (the same shape), 1 thread",
                               best);
                npk_tfl_interp_free(a.it);
            }
        }
        npk_tfl_free(&md);
    }
    npk_unmap_file(&m);
    return t;
}

/* Plan the layer in `mode`, map its buffers into a fresh emulator. */
static bool conv_setup(struct conv_arg *a, const uint8_t *x, npk_rk_rq_mode mode)
{
    npk_rk_lplan_opts o = {
        1, NPK_RK_FORM_VENDOR, 0x10000000, 0x20000000, 0x30000000, 0x40000000, 0, 0, 0, mode};
    npk_rk_emu_opts eo = {3, 0, false};
    if (npk_rk_lplan_make(&a->l, &o, &a->p, NULL) || npk_rk_emu_create(&eo, &a->e, NULL))
        return false;
    a->in = calloc(1, a->p.input_bytes);
    a->out = calloc(1, a->p.output_bytes);
    a->wt = malloc(a->p.weight_bytes);
    a->reg = calloc(a->p.regcmd_entries, 8);
    memcpy(a->wt, a->p.wblob, a->p.weight_bytes);
    npk_rk_stream_to_bin(a->p.regcmd, a->p.regcmd_entries, a->reg);
    npk_rk_lplan_pack_input(&a->p, x, a->in);
    npk_rk_emu_map(a->e, 0x10000000, a->in, a->p.input_bytes, NULL);
    /* the weights and the command stream as the device maps its buffers:
     * tracked, never written (the stream's decode and checks are then kept
     * across runs, as the interpreter keeps its plan) */
    npk_rk_emu_map_tracked(a->e, 0x20000000, a->wt, a->p.weight_bytes, NULL);
    npk_rk_emu_map(a->e, 0x30000000, a->out, a->p.output_bytes, NULL);
    npk_rk_emu_map_tracked(a->e, 0x40000000, a->reg, a->p.regcmd_entries * 8, NULL);
    return true;
}

static void conv_teardown(struct conv_arg *a)
{
    npk_rk_emu_destroy(a->e);
    npk_rk_lplan_free(&a->p);
    free(a->in), free(a->out), free(a->wt), free(a->reg);
    a->e = NULL;
    a->in = a->out = a->wt = a->reg = NULL;
}

static void bench_conv(npk_bench *b)
{
    struct conv_arg a;
    memset(&a, 0, sizeof a);
    npk_rk_layer *l = &a.l;
    l->kind = NPK_RK_LAYER_CONV;
    l->type = NPK_RK_LT_UINT8;
    l->in_h = l->in_w = l->out_h = l->out_w = 7;
    l->in_c = 320, l->out_c = 1280;
    l->k_h = l->k_w = l->stride_h = l->stride_w = l->dil_h = l->dil_w = 1;
    l->in = (npk_rk_lquant){0.0235, 128};
    l->w = (npk_rk_lquant){0.0021, 120};
    l->out = (npk_rk_lquant){0.0235, 0};
    npk_rk_activation_range(3, NPK_RK_LT_UINT8, l->out.scale, l->out.zero_point, &l->act_min,
                            &l->act_max);
    uint8_t *w = malloc((size_t)320 * 1280);
    int32_t *bias = malloc(1280 * sizeof *bias);
    uint8_t *x = malloc(7 * 7 * 320);
    uint64_t r = 11;
    for (size_t i = 0; i < (size_t)320 * 1280; i++) w[i] = (uint8_t)npk_rand_bench(&r);
    for (size_t i = 0; i < 7 * 7 * 320; i++) x[i] = (uint8_t)npk_rand_bench(&r);
    for (int i = 0; i < 1280; i++) bias[i] = (int32_t)(npk_rand_bench(&r) % 20000) - 10000;
    l->weights = w;
    l->bias_i32 = bias;
    if (!conv_setup(&a, x, NPK_RK_RQ_EXACT)) {
        npk_bench_note(b, "rknpu conv: setup failed");
        goto done;
    }
    npk_bench_note(b, "rknpu conv: %zu tasks", a.p.count);
    npk_bench_report_rate(b, "rknpu: plan mobilenet_v2's 7x7x320->1280 conv (weights packed)", 1,
                          "plans/s", npk_bench_time(b, conv_plan, &a), NULL, 0, 0);
    double peer = interp_peer(b);
    npk_bench_report_rate(b, "rknpu emulator: uint8 conv 7x7x320->1280 (exact requantisation)",
                          2.0 * 49 * 320 * 1280, "OP/s", npk_bench_time(b, conv_run, &a),
                          peer > 0 ? "TFLite interpreter" : NULL, peer, peer > 0 ? 1.0 : 0);
    conv_teardown(&a);
    if (conv_setup(&a, x, NPK_RK_RQ_SIMPLE))
        npk_bench_report_rate(b, "rknpu emulator: the same, simple requantisation (OUT_CVT only)",
                              2.0 * 49 * 320 * 1280, "OP/s", npk_bench_time(b, conv_run, &a),
                              peer > 0 ? "TFLite interpreter" : NULL, peer, 0);
done:
    conv_teardown(&a);
    free(w), free(bias), free(x);
}

static void bench_emulator(npk_bench *b)
{
    struct emu_arg a;
    memset(&a, 0, sizeof a);
    a.a16 = malloc(EM * EK * 2);
    a.b16 = malloc(EK * EN * 2);
    a.af = malloc(EM * EK * 4);
    a.bf = malloc(EK * EN * 4);
    a.cf = malloc(EM * EN * 4);
    a.in = malloc(EM * EK * 2);
    a.wt = malloc(EK * EN * 2);
    a.out = malloc(EM * EN * 4);
    a.stream = malloc(112 * 8);
    uint64_t rng = 5;
    for (size_t i = 0; i < EM * EK; i++) a.a16[i] = npk_f32_to_f16((float)urand(&rng));
    for (size_t i = 0; i < EK * EN; i++) a.b16[i] = npk_f32_to_f16((float)urand(&rng));
    npk_f16_to_f32_n(a.a16, a.af, EM * EK);
    npk_f16_to_f32_n(a.b16, a.bf, EK * EN);
    npk_rk_feature_shape fs = {1, EK, EM, 1, 8, 2};
    npk_rk_weight_shape ws = {EK, EN, 16, 2};
    npk_rk_feature_pack(&fs, NPK_RK_NHWC, a.a16, a.in, NULL);
    npk_rk_weight_pack(&ws, NPK_RK_KN, a.b16, a.wt, NULL);
    npk_rk_matmul mm = {EM, EK, EN, NPK_RK_FP16, 0x10000000, 0x20000000, 0x30000000};
    uint64_t s[NPK_RK_MATMUL_ENTRIES];
    npk_rk_matmul_stream(&mm, s, NULL);
    memset(a.stream, 0, 112 * 8);
    npk_rk_stream_to_bin(s, NPK_RK_MATMUL_ENTRIES, a.stream);
    npk_rk_emu_opts eo = {3, 0, false};
    npk_rk_open_opts oo = {NULL, NULL, NULL, 3};
    if (npk_rk_emu_create(&eo, &a.emu, NULL) ||
        npk_rk_device_open(NPK_RK_DEV_EMU, &oo, &a.dev, NULL)) {
        npk_bench_note(b, "rknpu emulator: setup failed");
        return;
    }
    npk_rk_emu_map(a.emu, 0x10000000, a.in, EM * EK * 2, NULL);
    npk_rk_emu_map(a.emu, 0x20000000, a.wt, EK * EN * 2, NULL);
    npk_rk_emu_map(a.emu, 0x30000000, a.out, EM * EN * 4, NULL);
    npk_rk_emu_map(a.emu, 0x00100000, a.stream, 112 * 8, NULL);

    double flops = 2.0 * EM * EK * EN, peer = 0;
    const char *peer_name = NULL;
#ifdef NPK_HAVE_OPENBLAS
    openblas_set_num_threads(1);
    peer = npk_bench_time(b, blas_sgemm, &a);
    peer_name = "OpenBLAS sgemm, 1 thread";
    npk_bench_note(b, "rknpu emulator: peer OpenBLAS %s", openblas_get_config());
#else
    npk_bench_note(b, "rknpu emulator: built without OpenBLAS; no peer figure");
#endif
    npk_bench_note(b,
                   "rknpu emulator: fp16 256x512x128 (fp32 accumulation), %s kernel; FLOP = "
                   "2MKN",
                   npk_rk_emu_kernel(a.emu));
    npk_bench_report_rate(b, "rknpu emulator: fp16 matmul 256x512x128 (one task)", flops, "FLOP/s",
                          npk_bench_time(b, emu_task, &a), peer_name, peer, 0.25);
    /* The same task with the portable kernel (what hosts without AVX2 get). */
    npk_rk_emu *fast = a.emu, *slow = NULL;
    npk_rk_emu_opts po = {3, 0, true};
    if (!npk_rk_emu_create(&po, &slow, NULL)) {
        npk_rk_emu_map(slow, 0x10000000, a.in, EM * EK * 2, NULL);
        npk_rk_emu_map(slow, 0x20000000, a.wt, EK * EN * 2, NULL);
        npk_rk_emu_map(slow, 0x30000000, a.out, EM * EN * 4, NULL);
        npk_rk_emu_map(slow, 0x00100000, a.stream, 112 * 8, NULL);
        a.emu = slow;
        npk_bench_report_rate(b, "rknpu emulator: the same, portable kernel", flops, "FLOP/s",
                              npk_bench_time(b, emu_task, &a), peer_name, peer, 0);
        a.emu = fast;
        npk_rk_emu_destroy(slow);
    }
    npk_bench_report_rate(b, "rknpu emulator: run-matmul end to end (plan, layout, run, read back)",
                          flops, "FLOP/s", npk_bench_time(b, emu_end_to_end, &a), peer_name, peer,
                          0);
    npk_rk_device_close(a.dev);
    npk_rk_emu_destroy(a.emu);
    free(a.a16), free(a.b16), free(a.af), free(a.bf), free(a.cf);
    free(a.in), free(a.wt), free(a.out), free(a.stream);
}

/* ---- compiling every layer of mobilenet_v2_1.0_224_quant ---- */

struct compile_arg {
    npk_tfl_model m;
    uint32_t ops[256];
    size_t nops;
    npk_tfl_interp *it;
    uint64_t sink;
    bool failed;
};

/* The TFLite front end and the planner on every NPU layer of the model:
 * lowering, weights packed, requantisation chosen, streams emitted. */
static void compile_all(void *p)
{
    struct compile_arg *a = p;
    for (size_t i = 0; i < a->nops; i++) {
        npk_rk_tfl_layer l;
        npk_rk_lplan q;
        npk_rk_lplan_opts o = {1,          NPK_RK_FORM_VENDOR, 0x10000000, 0x20000000,
                               0x30000000, 0x40000000,         0,          0,
                               0x50000000, NPK_RK_RQ_EXACT};
        if (npk_rk_tfl_lower(&a->m, 0, a->ops[i], &l, NULL) || npk_rk_tfl_plan(&l, &o, &q, NULL)) {
            a->failed = true;
            npk_rk_tfl_layer_free(&l);
            continue;
        }
        a->sink += q.regcmd_entries;
        npk_rk_lplan_free(&q);
        npk_rk_tfl_layer_free(&l);
    }
}

static void infer(void *p)
{
    struct compile_arg *a = p;
    npk_tfl_interp_invoke(a->it, NULL);
}

static void bench_compile(npk_bench *b)
{
    char path[1024];
    model_path("mobilenet_v2_1.0_224_quant.tflite", path, sizeof path);
    npk_mapped m;
    struct compile_arg a;
    memset(&a, 0, sizeof a);
    npk_error err = {0};
    if (npk_map_file(path, &m, &err)) {
        npk_bench_note(b, "rknpu compile: no model (%s)", err.msg);
        return;
    }
    if (npk_tfl_parse(m.data, m.size, &a.m, &err)) {
        npk_bench_note(b, "rknpu compile: %s", err.msg);
        npk_unmap_file(&m);
        return;
    }
    const npk_tfl_subgraph *g = &a.m.subgraphs[0];
    for (uint32_t i = 0; i < g->noperators && a.nops < 256; i++)
        if (npk_rk_tfl_op_kind(npk_tfl_op_code(&a.m, &g->operators[i])->builtin))
            a.ops[a.nops++] = i;
    npk_tfl_interp_opts io = {0};
    io.threads = 1;
    if (npk_tfl_interp_new(&a.m, &io, &a.it, &err) == NPK_OK) {
        npk_tfl_view v;
        if (npk_tfl_interp_input(a.it, 0, &v, NULL) == NPK_OK) {
            uint64_t r = 5;
            for (size_t i = 0; i < v.bytes; i++)
                ((uint8_t *)v.data)[i] = (uint8_t)npk_rand_bench(&r);
        }
        double peer = npk_bench_time(b, infer, &a);
        double t = npk_bench_time(b, compile_all, &a);
        npk_bench_note(b,
                       "rknpu compile: %zu layers of mobilenet_v2_1.0_224_quant (front end, "
                       "requantisation, weights, streams); peer = one interpreter inference of "
                       "the model, 1 thread%s",
                       a.nops, a.failed ? "; SOME LAYERS FAILED" : "");
        npk_bench_report_rate(b, "rknpu: compile every layer of mobilenet_v2_1.0_224_quant", 1,
                              "models/s", t, "one interpreter inference", peer, 10.0);
        npk_tfl_interp_free(a.it);
    } else {
        npk_bench_note(b, "rknpu compile: no interpreter (%s)", err.msg);
    }
    npk_tfl_free(&a.m);
    npk_unmap_file(&m);
}

void bench_rknpu(npk_bench *b)
{
    bench_emulator(b);
    bench_conv(b);
    bench_compile(b);

    struct gen_arg *g = calloc(1, sizeof *g);
    uint64_t rng = 1;
    for (int i = 0; i < GEN_BATCH; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        npk_rk_dtype dt = (npk_rk_dtype)((rng >> 33) % 3);
        uint32_t m = 4 * (1 + (uint32_t)(rng >> 40) % 64),
                 k = 32 * (1 + (uint32_t)(rng >> 20) % 32);
        uint32_t n = 32 * (1 + (uint32_t)(rng >> 50) % 64);
        g->shapes[i] = (npk_rk_matmul){m, k, n, dt, 0x10000000, 0x20000000, 0x30000000};
    }
    npk_bench_note(b,
                   "rknpu: 1024 different valid shapes (all dtypes), 108 entries each; one core");
    npk_bench_report_rate(b, "rknpu: single-task matmul streams", GEN_BATCH, "streams/s",
                          npk_bench_time(b, gen, g), NULL, 0, 1e6);
    npk_bench_report_rate(b, "rknpu: stream entry decode", GEN_BATCH / 16 * NPK_RK_MATMUL_ENTRIES,
                          "entries/s", npk_bench_time(b, decode, g), NULL, 0, 0);
    free(g);

    npk_bench_note(b,
                   "rknpu layouts: 64 MiB plain buffers (twice the L3 here); bytes = the plain "
                   "buffer (the native one is the same size); transposes on the %s path",
                   npk_rk_layout_path());
    const size_t MiB64 = (size_t)64 << 20;
    struct lay_arg a;
    memset(&a, 0, sizeof a);
    a.order = NPK_RK_NHWC;
    a.pack = true;
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096 / 2, 1, 8, 2};
    run_layout(b, "rknpu: feature pack fp16 MxK -> NC1HWC2 (C2=8)", &a, MiB64, 0.5);
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096, 1, 16, 1};
    run_layout(b, "rknpu: feature pack int8 MxK -> NC1HWC2 (C2=16)", &a, MiB64, 0.5);
    a.pack = false;
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096 / 4, 1, 4, 4};
    run_layout(b, "rknpu: feature unpack fp32 NC1HWC2 (C2=4) -> MxN", &a, MiB64, 0.5);
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096 / 2, 1, 8, 2};
    run_layout(b, "rknpu: feature unpack fp16 NC1HWC2 (C2=8) -> MxN", &a, MiB64, 0.5);
    a.fs = (npk_rk_feature_shape){1, 64, 1024, MiB64 / 64 / 1024 / 2, 8, 2};
    a.order = NPK_RK_NCHW;
    a.pack = true;
    run_layout(b, "rknpu: feature pack fp16 NCHW 64x1024x512 -> NC1HWC2", &a, MiB64, 0.5);
    a.pack = false;
    run_layout(b, "rknpu: feature unpack fp16 NC1HWC2 -> NCHW 64x1024x512", &a, MiB64, 0.5);

    a.weight = true;
    a.pack = true;
    a.ws = (npk_rk_weight_shape){4096, MiB64 / 4096 / 2, 16, 2};
    a.order = NPK_RK_KN;
    run_layout(b, "rknpu: weight pack fp16 B[KxN] -> [N/16][K/32][16][32]", &a, MiB64, 0.5);
    a.order = NPK_RK_NK;
    run_layout(b, "rknpu: weight pack fp16 W[NxK] -> [N/16][K/32][16][32]", &a, MiB64, 0.5);
    a.order = NPK_RK_KN;
    a.pack = false;
    run_layout(b, "rknpu: weight unpack fp16 -> B[KxN]", &a, MiB64, 0.5);
    a.pack = true;
    a.ws = (npk_rk_weight_shape){8192, MiB64 / 8192, 32, 1};
    run_layout(b, "rknpu: weight pack int8 B[KxN] -> [N/32][K/32][32][32]", &a, MiB64, 0.5);
    a.pack = false;
    run_layout(b, "rknpu: weight unpack int8 -> B[KxN]", &a, MiB64, 0.5);

    /* The same transposes on the 128-bit path (x86 without AVX2; NEON). */
    npk_rk_layout_force(1);
    npk_bench_note(b, "rknpu layouts: B[KxN] transposes forced to the %s path",
                   npk_rk_layout_path());
    a.ws = (npk_rk_weight_shape){4096, MiB64 / 4096 / 2, 16, 2};
    a.pack = true;
    run_layout(b, "rknpu: weight pack fp16 B[KxN], 128-bit path", &a, MiB64, 0);
    a.pack = false;
    run_layout(b, "rknpu: weight unpack fp16 B[KxN], 128-bit path", &a, MiB64, 0);
    a.ws = (npk_rk_weight_shape){8192, MiB64 / 8192, 32, 1};
    a.pack = true;
    run_layout(b, "rknpu: weight pack int8 B[KxN], 128-bit path", &a, MiB64, 0);
    a.pack = false;
    run_layout(b, "rknpu: weight unpack int8 B[KxN], 128-bit path", &a, MiB64, 0);
    npk_rk_layout_force(0);
}
