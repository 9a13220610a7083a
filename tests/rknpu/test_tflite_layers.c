/* The TFLite front end on single-operator models built here (tflite_build.h):
 * every lowered operator kind (uint8/int8, per-tensor/per-channel weights,
 * kernels 1/3/5/7, strides 1/2, SAME/VALID, dilation, odd channel counts,
 * each fused activation, shapes that need height slices and channel groups,
 * 1-3 cores, vendor and rocket streams) runs on the emulator device and is
 * compared with the interpreter on the same model and input: no element off
 * by more than one, the share of exact elements reported per family. Also:
 * what the front end reads from the model (padding, clip, multipliers), the
 * refusals (each names the operator at its file offset), and several
 * operators in one bundle run from the shared record array. */
#include <math.h>

#include "../tflite/tfl_test.h"
#include "npukit/rknpu_bundle.h"
#include "npukit/rknpu_device.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_stream.h"
#include "npukit/rknpu_tflite.h"

/* One operator to build. */
typedef struct sop {
    int32_t builtin;
    int8_t type;
    int32_t h, w, cin, cout, k, stride, dil;
    int padding; /* NPK_TFL_PAD_* */
    int act;
    bool per_channel;
    int cores;
} sop;

/* ADD's cout (otherwise unused) names how its second input broadcasts. */
enum { BC_NONE, BC_HW1, BC_HW1_FIRST, BC_CONST_SCALAR, BC_CONST_C, BC_CONST_HW1 };

typedef struct fam {
    const char *name;
    uint64_t total, exact, off1, worse, layers;
    uint64_t digest; /* FNV-1a over the built models' bytes */
} fam;

static int32_t rnd(uint64_t *r, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(npk_rand(r) % (uint64_t)(hi - lo + 1));
}

static int32_t out_size(int padding, int32_t in, int32_t k, int32_t s, int32_t d)
{
    int32_t eff = (k - 1) * d + 1;
    return padding == NPK_TFL_PAD_SAME ? (in + s - 1) / s : (in - eff + s) / s;
}

/* The model: input(s) -> op -> output, with seeded weights, biases and
 * quantisation that spreads the sums over the output range. */
static tt_model build(const sop *o, uint64_t seed)
{
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 11;
    bool u8 = o->type == NPK_TFL_UINT8, dw = o->builtin == NPK_TFL_OP_DEPTHWISE_CONV_2D;
    bool fc = o->builtin == NPK_TFL_OP_FULLY_CONNECTED, add = o->builtin == NPK_TFL_OP_ADD;
    bool pool = o->builtin == NPK_TFL_OP_AVERAGE_POOL_2D || o->builtin == NPK_TFL_OP_MAX_POOL_2D;
    int32_t tlo = u8 ? 0 : -128, thi = u8 ? 255 : 127;
    npk_tflb *b = npk_tflb_new();
    int32_t cout = dw || pool || add ? o->cin : o->cout;
    int32_t oh = fc || add ? o->h : out_size(o->padding, o->h, o->k, o->stride, o->dil);
    int32_t ow = fc || add ? o->w : out_size(o->padding, o->w, o->k, o->stride, o->dil);
    int32_t is[4] = {1, o->h, o->w, o->cin}, os[4] = {1, oh, ow, cout};
    float si = (float)(0.01 + 0.04 * npk_randf(&r));
    int64_t zi = u8 ? rnd(&r, 100, 150) : rnd(&r, -30, 30);
    int32_t x =
        tt_add(b, "x", o->type, fc ? 2 : 4, fc ? (int32_t[]){1, o->cin} : is, si, zi, NULL, 0);
    int32_t ins[3] = {x, -1, -1}, nin = 1, y;
    npk_tfl_options opt;
    uint8_t *wv = NULL;
    int32_t *bias = NULL;
    float *ws = NULL;
    if (pool) {
        y = tt_add(b, "y", o->type, 4, os, si, zi, NULL, 0);
        static const char *const n[] = {"padding",       "stride_w",
                                        "stride_h",      "filter_width",
                                        "filter_height", "fused_activation_function"};
        double v[] = {o->padding, o->stride, o->stride, o->k, o->k, o->act};
        opt = tt_opts(o->builtin, n, v, 6);
    } else if (add) {
        float s2 = (float)(0.01 + 0.04 * npk_randf(&r));
        const int32_t bcast = o->cout;
        int32_t s2sh[4] = {1, o->h, o->w, bcast ? 1 : o->cin}, nd2 = 4, n2 = o->h * o->w;
        if (bcast == BC_CONST_SCALAR) nd2 = 0, n2 = 1;
        if (bcast == BC_CONST_C) nd2 = 1, s2sh[0] = o->cin, n2 = o->cin;
        if (!bcast) n2 *= o->cin;
        uint8_t *cv = NULL;
        if (bcast >= BC_CONST_SCALAR) {
            cv = malloc((size_t)n2);
            for (int32_t i = 0; i < n2; i++) cv[i] = (uint8_t)npk_rand(&r);
        }
        int64_t z2 = u8 ? rnd(&r, 90, 160) : rnd(&r, -40, 40);
        int32_t x2 = tt_add(b, "x2", o->type, (uint32_t)nd2, s2sh, s2, z2, cv, cv ? (size_t)n2 : 0);
        free(cv);
        /* Two draws in one argument list would come in the compiler's
         * order (x86-64 gcc: right to left, aarch64: left to right), so
         * each host would build another model: drawn one by one. */
        int64_t zo = u8 ? rnd(&r, 90, 160) : rnd(&r, -40, 40);
        float so = (float)((si + s2) * (0.6 + 0.6 * npk_randf(&r)));
        y = tt_add(b, "y", o->type, 4, os, so, zo, NULL, 0);
        ins[1] = x2;
        if (bcast == BC_HW1_FIRST) ins[0] = x2, ins[1] = x;
        nin = 2;
        static const char *const n[] = {"fused_activation_function"};
        double v[] = {o->act};
        opt = tt_opts(o->builtin, n, v, 1);
    } else {
        int32_t taps = fc ? 1 : o->k * o->k, depth = dw ? taps : taps * o->cin;
        size_t nw = dw ? (size_t)taps * o->cin : (size_t)cout * taps * o->cin;
        wv = malloc(nw);
        for (size_t i = 0; i < nw; i++) wv[i] = (uint8_t)rnd(&r, tlo + 1, thi);
        float sw = (float)(0.002 + 0.01 * npk_randf(&r));
        int64_t zw = u8 ? rnd(&r, 100, 150) : 0;
        ws = malloc((size_t)cout * sizeof *ws);
        int64_t *zws = calloc((size_t)cout, sizeof *zws);
        for (int32_t c = 0; c < cout; c++) {
            ws[c] = o->per_channel ? (float)(sw * (0.25 + 1.5 * npk_randf(&r))) : sw;
            zws[c] = zw;
        }
        int32_t wsh[4] = {cout, o->k, o->k, o->cin};
        if (dw) wsh[0] = 1, wsh[3] = cout;
        int32_t fsh[2] = {cout, o->cin};
        int qdim = dw ? 3 : 0;
        npk_tflb_tensor wt = {"w",
                              o->type,
                              fc ? 2u : 4u,
                              fc ? fsh : wsh,
                              wv,
                              nw,
                              o->per_channel ? (uint32_t)cout : 1u,
                              ws,
                              zws,
                              qdim};
        int32_t f = npk_tflb_tensor_add(b, &wt);
        assert_true(f >= 0);
        free(zws);
        double spread = sqrt((double)depth) * 74.0 * 74.0 * si * sw;
        float so = (float)(spread / (30.0 + 60.0 * npk_randf(&r)));
        bias = malloc((size_t)cout * sizeof *bias);
        int32_t bl = (int32_t)(spread / (si * sw));
        for (int32_t c = 0; c < cout; c++) bias[c] = rnd(&r, -bl, bl);
        int32_t bsh[1] = {cout};
        int32_t bt = tt_add(b, "b", NPK_TFL_INT32, 1, bsh, 0, 0, bias, (size_t)cout * 4);
        y = tt_add(b, "y", o->type, fc ? 2 : 4, fc ? (int32_t[]){1, cout} : os, so,
                   u8 ? rnd(&r, 90, 160) : rnd(&r, -40, 40), NULL, 0);
        ins[1] = f, ins[2] = bt, nin = 3;
        if (fc) {
            static const char *const n[] = {"fused_activation_function"};
            double v[] = {o->act};
            opt = tt_opts(o->builtin, n, v, 1);
        } else if (dw) {
            static const char *const n[] = {"padding",
                                            "stride_w",
                                            "stride_h",
                                            "depth_multiplier",
                                            "fused_activation_function",
                                            "dilation_w_factor",
                                            "dilation_h_factor"};
            double v[] = {o->padding, o->stride, o->stride, 1, o->act, o->dil, o->dil};
            opt = tt_opts(o->builtin, n, v, 7);
        } else {
            static const char *const n[] = {"padding",           "stride_w",
                                            "stride_h",          "fused_activation_function",
                                            "dilation_w_factor", "dilation_h_factor"};
            double v[] = {o->padding, o->stride, o->stride, o->act, o->dil, o->dil};
            opt = tt_opts(o->builtin, n, v, 6);
        }
    }
    tt_op(b, o->builtin, ins, (uint32_t)nin, &y, 1, &opt);
    if (add && o->cout >= BC_CONST_SCALAR)
        npk_tflb_io(b, &x, 1, &y, 1);
    else
        npk_tflb_io(b, ins, add ? 2 : 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    free(wv);
    free(bias);
    free(ws);
    return tm;
}

/* Lower operator 0, run it on an emulator device, compare with the
 * interpreter on the same seeded input. */
static void run_op(const sop *o, uint64_t seed, fam *f)
{
    tt_model tm = build(o, seed);
    for (size_t i = 0; i < tm.len; i++) f->digest = (f->digest ^ tm.bytes[i]) * 0x100000001B3ull;
    npk_rk_tfl_layer l;
    npk_error err = {0};
    if (npk_rk_tfl_lower(&tm.m, 0, 0, &l, &err)) fail_msg("%s: %s", f->name, err.msg);
    uint64_t r = seed + 99;
    npk_tfl_interp *it = NULL;
    if (npk_tfl_interp_new(&tm.m, NULL, &it, &err)) fail_msg("interpreter: %s", err.msg);
    const void *x[2] = {NULL, NULL};
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_input(it, i, &v, &err), NPK_OK);
        for (size_t j = 0; j < v.bytes; j++) ((uint8_t *)v.data)[j] = (uint8_t)npk_rand(&r);
        /* The layer's inputs in its order (a broadcasting ADD puts the
         * operand of the output's shape first). */
        for (int k = 0; k < 2; k++)
            if (l.inputs[k] == tm.m.subgraphs[0].inputs[i]) x[k] = v.data;
    }
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_OK);
    npk_tfl_view want;
    assert_int_equal(npk_tfl_interp_output(it, 0, &want, &err), NPK_OK);
    uint8_t *y = malloc(want.bytes);
    npk_rk_device *d;
    npk_rk_open_opts oo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &oo, &d, &err), NPK_OK);
    npk_rk_run_info info;
    if (npk_rk_run_layer(d, &l.layer, o->cores ? o->cores : 1, x[0], x[1], y, &info, &err))
        fail_msg("%s: %s", f->name, err.msg);
    npk_rk_device_close(d);
    bool u8 = o->type == NPK_TFL_UINT8;
    for (size_t j = 0; j < want.bytes; j++) {
        int a = u8 ? y[j] : (int8_t)y[j],
            b = u8 ? ((uint8_t *)want.data)[j] : ((int8_t *)want.data)[j];
        int dd = abs(a - b);
        f->total++;
        f->exact += dd == 0;
        f->off1 += dd == 1;
        if (dd > 1 && f->worse++ < 3)
            printf("%s: element %zu = %d, interpreter %d\n", f->name, j, a, b);
    }
    f->layers++;
    free(y);
    npk_tfl_interp_free(it);
    npk_rk_tfl_layer_free(&l);
    tt_model_free(&tm);
}

/* `models`: the digest of the family's models, the same on every host (a
 * host that built other models, e.g. from random draws in another order,
 * would test other quantisations than the goal was set on). */
static void family(const char *name, const sop *ops, size_t n, double goal, uint64_t models)
{
    fam f = {name, 0, 0, 0, 0, 0, 0xCBF29CE484222325ull};
    for (size_t i = 0; i < n; i++) run_op(&ops[i], i + 1, &f);
    printf("%-26s %3llu layers %7llu elements: %8.4f%% exact, %llu off by one, %llu worse"
           " (models %016llx)\n",
           name, (unsigned long long)f.layers, (unsigned long long)f.total,
           100.0 * (double)f.exact / (double)f.total, (unsigned long long)f.off1,
           (unsigned long long)f.worse, (unsigned long long)f.digest);
    assert_int_equal(f.digest, models);
    assert_int_equal(f.worse, 0);
    assert_true((double)f.exact >= goal / 100.0 * (double)f.total);
}

#define CONV  NPK_TFL_OP_CONV_2D
#define DW    NPK_TFL_OP_DEPTHWISE_CONV_2D
#define FC    NPK_TFL_OP_FULLY_CONNECTED
#define ADD   NPK_TFL_OP_ADD
#define AVG   NPK_TFL_OP_AVERAGE_POOL_2D
#define MAX   NPK_TFL_OP_MAX_POOL_2D
#define U8    NPK_TFL_UINT8
#define I8    NPK_TFL_INT8
#define SAME  NPK_TFL_PAD_SAME
#define VALID NPK_TFL_PAD_VALID
#define RELU  NPK_TFL_ACT_RELU
#define RELU6 NPK_TFL_ACT_RELU6
#define RN1   NPK_TFL_ACT_RELU_N1_TO_1

/* Clipped layers (as every conv and depthwise of the real models is):
 * exact. */
static void test_conv_clipped(void **state)
{
    (void)state;
    static const sop ops[] = {
        {CONV, U8, 9, 11, 3, 5, 3, 1, 1, SAME, RELU6, false, 1},
        {CONV, U8, 12, 10, 17, 33, 5, 2, 1, SAME, RELU, false, 2},
        {CONV, I8, 13, 13, 8, 40, 7, 2, 1, SAME, RELU6, true, 3},
        {CONV, I8, 10, 9, 45, 20, 3, 2, 1, VALID, RELU, true, 1},
        {CONV, I8, 11, 11, 24, 24, 3, 1, 2, SAME, RELU6, true, 1},
        {CONV, U8, 8, 8, 40, 48, 1, 1, 1, VALID, RELU6, false, 1},
        {DW, U8, 10, 10, 70, 0, 5, 1, 1, SAME, RELU6, false, 1},
        {DW, I8, 11, 9, 24, 0, 3, 2, 1, SAME, RELU6, true, 2},
        {DW, I8, 12, 12, 40, 0, 3, 1, 2, SAME, RELU, true, 1},
        {DW, U8, 9, 13, 130, 0, 3, 2, 1, VALID, RELU6, false, 3},
        {DW, I8, 10, 10, 16, 0, 7, 1, 1, SAME, RELU6, true, 1},
        {FC, U8, 1, 1, 300, 50, 1, 1, 1, VALID, RELU, false, 1},
        {FC, I8, 1, 1, 64, 37, 1, 1, 1, VALID, RELU6, true, 1},
    };
    family("conv/dw/fc with a clip", ops, sizeof ops / sizeof *ops, 100.0, 0xef1fa27a34b2bbb4ull);
}

/* Without a clip TFLite's second rounding depends on the sign of the value:
 * one DPU pass follows one sign, so the exact mode runs such layers twice
 * and combines the passes (docs/rknpu.md, "Sign-following rounding"): exact
 * like the clipped ones (99.897% in one pass). */
static void test_conv_linear(void **state)
{
    (void)state;
    static const sop ops[] = {
        {CONV, U8, 9, 11, 3, 5, 3, 1, 1, SAME, 0, false, 1},
        {CONV, I8, 12, 10, 17, 33, 5, 2, 1, SAME, 0, true, 2},
        {CONV, I8, 7, 12, 16, 64, 3, 1, 1, SAME, RN1, false, 1},
        {DW, U8, 10, 10, 70, 0, 5, 1, 1, SAME, 0, false, 1},
        {DW, I8, 12, 12, 32, 0, 3, 1, 1, SAME, 0, true, 3},
        {FC, U8, 1, 1, 1280, 1001, 1, 1, 1, VALID, 0, false, 1},
        {FC, I8, 1, 1, 100, 10, 1, 1, 1, VALID, 0, true, 1},
    };
    family("conv/dw/fc linear", ops, sizeof ops / sizeof *ops, 100.0, 0x1980ec4ce7a82c00ull);
}

/* Shapes that need height slices (input beyond the data banks) and channel
 * groups (weights beyond the weight banks), over 1-3 cores. */
static void test_tiling(void **state)
{
    (void)state;
    static const sop ops[] = {
        {DW, U8, 120, 120, 96, 0, 3, 2, 1, SAME, RELU6, false, 3},
        {CONV, U8, 96, 96, 64, 32, 3, 1, 1, SAME, RELU6, false, 3},
        {CONV, I8, 6, 6, 512, 256, 3, 1, 1, SAME, RELU6, true, 2},
    };
    /* Under an emulator (cross builds) the two largest are left to native runs. */
    family("tiling and cores", ops, sizeof ops / sizeof *ops - (npk_test_light() ? 2 : 0), 100.0,
           npk_test_light() ? 0xb8281ba12e357880ull : 0xb4690b7333f40d48ull);
}

/* Column tiling: rows whose input exceeds the data banks beside the
 * weights, and an input wider than CNA_DATA_SIZE0.DATAIN_WIDTH's 2047. */
static void test_column_tiling(void **state)
{
    (void)state;
    static const sop ops[] = {
        {CONV, I8, 3, 2100, 64, 32, 3, 1, 1, SAME, RELU6, false, 3},
        {DW, U8, 3, 2000, 64, 0, 3, 1, 1, SAME, RELU6, false, 2},
        {CONV, I8, 2, 2400, 16, 20, 3, 2, 1, SAME, 0, true, 1},
    };
    family("column tiling", ops, sizeof ops / sizeof *ops - (npk_test_light() ? 2 : 0), 99.9,
           npk_test_light() ? 0x3e076c290fb2da13ull : 0xe26ea6acb58a337dull);
    /* K-split: one 32-kernel group's weights beyond the weight banks. */
    static const sop ks[] = {
        {FC, I8, 1, 1, 12000, 40, 1, 1, 1, VALID, RELU, true, 2},
        {CONV, U8, 6, 6, 1300, 48, 3, 1, 1, SAME, RELU6, false, 3},
    };
    family("K-split", ks, sizeof ks / sizeof *ks, 99.9, 0x79090c99f3cc7d8full);
}

static void test_add_and_pools(void **state)
{
    (void)state;
    static const sop ops[] = {
        {ADD, U8, 14, 14, 96, 0, 1, 1, 1, VALID, 0, false, 2},
        {ADD, I8, 9, 11, 40, 0, 1, 1, 1, VALID, RELU6, false, 1},
        {AVG, U8, 7, 7, 64, 0, 7, 1, 1, VALID, 0, false, 1},
        {AVG, I8, 12, 12, 40, 0, 3, 2, 1, VALID, RELU6, false, 1},
        {MAX, U8, 13, 13, 48, 0, 3, 2, 1, SAME, 0, false, 3},
        {MAX, I8, 12, 12, 24, 0, 2, 2, 1, VALID, 0, false, 1},
        /* padded average pooling: a region of tasks per window count */
        {AVG, I8, 11, 11, 40, 0, 3, 1, 1, SAME, 0, false, 2},
        {AVG, U8, 9, 10, 70, 0, 3, 2, 1, SAME, RELU6, false, 3},
        {AVG, I8, 8, 8, 16, 0, 5, 1, 1, SAME, 0, false, 1},
    };
    family("add and pools", ops, sizeof ops / sizeof *ops, 100.0, 0xc600d3e016c86fb2ull);
}

/* Broadcasting ADD: a second input [1,H,W,1] at run time (either operand
 * order), constants of every broadcast shape (docs/rknpu.md, "Add"). */
static void test_add_broadcast(void **state)
{
    (void)state;
    static const sop ops[] = {
        {ADD, U8, 14, 14, 40, BC_HW1, 1, 1, 1, VALID, 0, false, 2},
        {ADD, I8, 9, 11, 17, BC_HW1, 1, 1, 1, VALID, RELU6, false, 1},
        {ADD, I8, 1, 1, 17, BC_HW1_FIRST, 1, 1, 1, VALID, 0, false, 3}, /* movenet's [1,1] + [17] */
        {ADD, U8, 12, 10, 33, BC_HW1_FIRST, 1, 1, 1, VALID, RELU, false, 1},
        {ADD, I8, 48, 48, 17, BC_CONST_SCALAR, 1, 1, 1, VALID, 0, false, 3}, /* movenet's + [] */
        {ADD, U8, 10, 10, 64, BC_CONST_SCALAR, 1, 1, 1, VALID, RELU6, false, 2},
        {ADD, I8, 13, 7, 70, BC_CONST_C, 1, 1, 1, VALID, 0, false, 1},
        {ADD, U8, 8, 9, 24, BC_CONST_HW1, 1, 1, 1, VALID, 0, false, 3},
    };
    family("add, broadcasting", ops, sizeof ops / sizeof *ops, 100.0, 0x02caa93bfde74f66ull);
}

/* Average pools beyond the CNA's 31 taps per axis: window pieces summed in
 * int32 by K-split partials, one exact division (docs/rknpu.md, "Pools"). */
static void test_large_pools(void **state)
{
    (void)state;
    static const sop ops[] = {
        {AVG, U8, 33, 33, 40, 0, 33, 1, 1, VALID, 0, false, 1},     /* DeepLab's global pool */
        {AVG, I8, 33, 33, 70, 0, 33, 1, 1, VALID, RELU6, false, 3}, /* 2x2 pieces, 3 cores */
        {AVG, I8, 44, 40, 24, 0, 36, 2, 1, VALID, 0, false, 2},     /* 3x3 outputs, stride 2 */
        {AVG, U8, 64, 64, 16, 0, 64, 1, 1, VALID, RELU, false, 1},  /* 4x4 pieces of 16x16 */
        {AVG, U8, 60, 60, 32, 0, 33, 3, 1, VALID, 0, false, 3},     /* 10x10 outputs */
        {AVG, I8, 57, 60, 48, 0, 32, 3, 1, VALID, RN1, false, 2},   /* even window: halves */
    };
    family("average pools beyond 31", ops, sizeof ops / sizeof *ops, 100.0, 0x3455554b90ca7701ull);
}

/* What the front end reads: SAME padding, the clip, per-channel scales, the
 * multipliers as the interpreter forms them, bias and weights. */
static void test_lowering(void **state)
{
    (void)state;
    sop o = {CONV, U8, 9, 11, 3, 5, 3, 2, 1, SAME, RELU6, false, 1};
    tt_model tm = build(&o, 5);
    npk_rk_tfl_layer l;
    npk_error err = {0};
    assert_int_equal(npk_rk_tfl_lower(&tm.m, 0, 0, &l, &err), NPK_OK);
    assert_string_equal(l.name, "operator 0 (CONV_2D)");
    assert_int_equal(l.layer.kind, NPK_RK_LAYER_CONV);
    assert_int_equal(l.layer.type, NPK_RK_LT_UINT8);
    /* 9x11, 3x3 stride 2 SAME: 5x6 out, padding 1/1 rows, 1/1 columns. */
    assert_int_equal(l.layer.out_h, 5);
    assert_int_equal(l.layer.out_w, 6);
    assert_int_equal(l.layer.pad_top, 1);
    assert_int_equal(l.layer.pad_bottom, 1);
    assert_int_equal(l.layer.pad_left, 1);
    assert_int_equal(l.layer.pad_right, 1);
    const npk_tfl_subgraph *sg = &tm.m.subgraphs[0];
    const npk_tfl_tensor *x = &sg->tensors[l.inputs[0]], *w = &sg->tensors[1],
                         *y = &sg->tensors[l.output];
    assert_int_equal(l.inputs[1], -1);
    assert_null(l.const_data[0]);
    int32_t lo, hi;
    npk_q_activation_range(NPK_TFL_ACT_RELU6, NPK_TFL_UINT8, y->q.scale[0],
                           (int32_t)y->q.zero_point[0], &lo, &hi);
    assert_int_equal(l.layer.act_min, lo);
    assert_int_equal(l.layer.act_max, hi);
    /* uint8 per tensor: the product of the scales in float, as TFLite. */
    double m = (double)(x->q.scale[0] * w->q.scale[0]) / (double)y->q.scale[0];
    for (uint32_t c = 0; c < 5; c++) assert_true(l.layer.mults[c] == m);
    assert_int_equal(l.layer.w.zero_point, (int32_t)w->q.zero_point[0]);
    assert_null(l.layer.w_scales);
    assert_ptr_equal(l.layer.weights, tm.m.buffers[w->buffer].data);
    npk_rk_tfl_layer_free(&l);
    tt_model_free(&tm);

    /* int8 per channel: the scales along dimension 3 for depthwise. */
    sop d = {DW, I8, 8, 8, 20, 0, 3, 1, 1, VALID, 0, true, 1};
    tm = build(&d, 6);
    assert_int_equal(npk_rk_tfl_lower(&tm.m, 0, 0, &l, &err), NPK_OK);
    w = &tm.m.subgraphs[0].tensors[1];
    assert_non_null(l.layer.w_scales);
    for (uint32_t c = 0; c < 20; c++) assert_true(l.layer.w_scales[c] == w->q.scale[c]);
    assert_int_equal(l.layer.act_min, -128);
    assert_int_equal(l.layer.act_max, 127);
    assert_int_equal(l.layer.out_h, 6);
    npk_rk_tfl_layer_free(&l);
    tt_model_free(&tm);
}

/* A model whose operator 0 the front end must refuse with `needle`, naming
 * the operator at its offset. */
static void expect_refusal(tt_model *tm, const char *needle)
{
    npk_rk_tfl_layer l;
    npk_error err = {0};
    npk_status st = npk_rk_tfl_lower(&tm->m, 0, 0, &l, &err);
    printf("refused: %s\n", err.msg);
    assert_int_not_equal(st, NPK_OK);
    assert_non_null(strstr(err.msg, "operator 0 ("));
    assert_non_null(strstr(err.msg, needle));
    assert_true(err.has_offset);
    assert_int_equal(err.offset, tm->m.subgraphs[0].operators[0].offset);
    tt_model_free(tm);
}

static void test_refusals(void **state)
{
    (void)state;
    static const int32_t s4[] = {1, 4, 4, 2}, s4b[] = {1, 4, 4, 4}, w4[] = {1, 3, 3, 4};
    static const int32_t one[] = {1, 1, 1, 4}, two[] = {2, 4, 4, 2};
    uint8_t wv[64] = {0};
    int32_t bv[4] = {0};
    npk_tfl_options o;
    tt_model tm;
    /* Depth multiplier 2. */
    npk_tflb *b = npk_tflb_new();
    int32_t x = tt_add(b, "x", U8, 4, s4, 0.1f, 128, NULL, 0);
    int32_t w = tt_add(b, "w", U8, 4, w4, 0.1f, 128, wv, 36);
    int32_t c = tt_add(b, "b", NPK_TFL_INT32, 1, (int32_t[]){4}, 0.01f, 0, bv, 16);
    int32_t y = tt_add(b, "y", U8, 4, s4b, 0.1f, 128, NULL, 0);
    static const char *const dn[] = {"padding", "stride_w", "stride_h", "depth_multiplier"};
    o = tt_opts(DW, dn, (double[]){SAME, 1, 1, 2}, 4);
    tt_op(b, DW, (int32_t[]){x, w, c}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "depth multiplier 2");
    /* Broadcasting add. */
    b = npk_tflb_new();
    x = tt_add(b, "x", U8, 4, s4b, 0.1f, 128, NULL, 0);
    int32_t x2 = tt_add(b, "x2", U8, 4, one, 0.1f, 128, NULL, 0);
    y = tt_add(b, "y", U8, 4, s4b, 0.1f, 128, NULL, 0);
    o = tt_opts(ADD, NULL, NULL, 0);
    tt_op(b, ADD, (int32_t[]){x, x2}, 2, &y, 1, &o);
    npk_tflb_io(b, (int32_t[]){x, x2}, 2, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "broadcasting");
    /* Max pooling with a clip. */
    b = npk_tflb_new();
    x = tt_add(b, "x", I8, 4, s4, 0.1f, 0, NULL, 0);
    y = tt_add(b, "y", I8, 4, (int32_t[]){1, 2, 2, 2}, 0.1f, 0, NULL, 0);
    static const char *const mn[] = {"padding",      "stride_w",      "stride_h",
                                     "filter_width", "filter_height", "fused_activation_function"};
    o = tt_opts(MAX, mn, (double[]){VALID, 2, 2, 2, 2, RELU6}, 6);
    tt_op(b, MAX, &x, 1, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "no clip stage");
    /* Batch 2. */
    b = npk_tflb_new();
    x = tt_add(b, "x", U8, 4, two, 0.1f, 128, NULL, 0);
    w = tt_add(b, "w", U8, 4, (int32_t[]){2, 1, 1, 2}, 0.1f, 128, wv, 4);
    c = tt_add(b, "b", NPK_TFL_INT32, 1, (int32_t[]){2}, 0.01f, 0, bv, 8);
    y = tt_add(b, "y", U8, 4, two, 0.1f, 128, NULL, 0);
    static const char *const cn[] = {"padding", "stride_w", "stride_h"};
    o = tt_opts(CONV, cn, (double[]){VALID, 1, 1}, 3);
    tt_op(b, CONV, (int32_t[]){x, w, c}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "batch 1");
    /* Float32. */
    b = npk_tflb_new();
    float fw[4] = {1, 2, 3, 4};
    x = tt_add(b, "x", NPK_TFL_FLOAT32, 4, s4, 0, 0, NULL, 0);
    w = tt_add(b, "w", NPK_TFL_FLOAT32, 4, (int32_t[]){2, 1, 1, 2}, 0, 0, fw, 16);
    y = tt_add(b, "y", NPK_TFL_FLOAT32, 4, s4, 0, 0, NULL, 0);
    o = tt_opts(CONV, cn, (double[]){VALID, 1, 1}, 3);
    tt_op(b, CONV, (int32_t[]){x, w, -1}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "float32");
    /* Stride 8 (the CNA takes 1..7). */
    b = npk_tflb_new();
    x = tt_add(b, "x", U8, 4, (int32_t[]){1, 16, 16, 2}, 0.1f, 128, NULL, 0);
    w = tt_add(b, "w", U8, 4, (int32_t[]){2, 1, 1, 2}, 0.1f, 128, wv, 4);
    y = tt_add(b, "y", U8, 4, (int32_t[]){1, 2, 2, 2}, 0.1f, 128, NULL, 0);
    o = tt_opts(CONV, cn, (double[]){VALID, 8, 8}, 3);
    tt_op(b, CONV, (int32_t[]){x, w, -1}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "CONV_X/Y_STRIDE");
    /* Not an NPU layer. */
    b = npk_tflb_new();
    x = tt_add(b, "x", U8, 4, s4, 0.1f, 128, NULL, 0);
    y = tt_add(b, "y", U8, 4, s4, 0.1f, 128, NULL, 0);
    tt_op(b, NPK_TFL_OP_SOFTMAX, &x, 1, &y, 1, NULL);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    expect_refusal(&tm, "not an NPU layer");
}

/* Two operators of one model in a bundle: each submit, run from the shared
 * record array and regcmd buffer on the emulator, gives the same output as
 * the operator planned alone. */
static void test_bundle(void **state)
{
    (void)state;
    sop o = {CONV, U8, 12, 10, 17, 33, 3, 2, 1, SAME, RELU6, false, 2};
    tt_model a = build(&o, 21);
    sop p = {DW, I8, 10, 10, 70, 0, 3, 1, 1, SAME, RELU6, true, 3};
    tt_model bm = build(&p, 22);
    npk_rk_tfl_layer la, lb;
    npk_error err = {0};
    assert_int_equal(npk_rk_tfl_lower(&a.m, 0, 0, &la, &err), NPK_OK);
    assert_int_equal(npk_rk_tfl_lower(&bm.m, 0, 0, &lb, &err), NPK_OK);
    const npk_rk_layer *ls[] = {&la.layer, &lb.layer};
    const char *names[] = {la.name, lb.name};
    npk_rk_bundle_opts bo = {2, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0};
    npk_rk_bundle bu;
    if (npk_rk_bundle_make(ls, names, 2, &bo, &bu, &err)) fail_msg("%s", err.msg);
    assert_int_equal(bu.nops, 2);
    assert_int_equal(bu.ntasks, bu.ops[0].plan.count + bu.ops[1].plan.count);
    assert_int_equal(bu.ops[1].task_first, bu.ops[0].plan.count);
    /* Buffers apart: every op's activations after the previous op's. */
    assert_true(bu.ops[1].plan.opts.input_addr >=
                bu.ops[0].plan.opts.output_addr + bu.ops[0].plan.output_bytes);
    uint8_t *act = calloc(1, (size_t)bu.act_bytes), *reg = calloc(bu.regcmd_entries, 8);
    npk_rk_stream_to_bin(bu.regcmd, bu.regcmd_entries, reg);
    npk_rk_emu_opts eo = {3, 0, false};
    npk_rk_emu *e;
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, bu.opts.act_addr, act, (size_t)bu.act_bytes, &err), NPK_OK);
    assert_int_equal(
        npk_rk_emu_map(e, bu.opts.weight_addr, bu.weights, (size_t)bu.weight_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, bu.opts.regcmd_addr, reg, bu.regcmd_entries * 8, &err),
                     NPK_OK);
    const npk_rk_tfl_layer *tls[] = {&la, &lb};
    uint64_t r = 77;
    for (size_t i = 0; i < 2; i++) {
        const npk_rk_lplan *pl = &bu.ops[i].plan;
        const npk_rk_layer *l = ls[i];
        size_t nx = (size_t)l->in_h * l->in_w * l->in_c,
               ny = (size_t)l->out_h * l->out_w * l->out_c;
        uint8_t *x = malloc(nx), *y = malloc(ny), *y1 = malloc(ny);
        for (size_t j = 0; j < nx; j++) x[j] = (uint8_t)npk_rand(&r);
        npk_rk_lplan_pack_input(pl, x, act + (pl->opts.input_addr - bu.opts.act_addr));
        if (npk_rk_emu_submit(e, &bu.submits[i], bu.records, bu.ntasks, &err))
            fail_msg("%s", err.msg);
        npk_rk_lplan_unpack_output(pl, act + (pl->opts.output_addr - bu.opts.act_addr), y);
        npk_rk_device *d;
        npk_rk_open_opts oo = {0};
        assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &oo, &d, &err), NPK_OK);
        assert_int_equal(npk_rk_run_layer(d, &tls[i]->layer, 2, x, NULL, y1, NULL, &err), NPK_OK);
        npk_rk_device_close(d);
        assert_memory_equal(y, y1, ny);
        free(x), free(y), free(y1);
    }
    npk_rk_emu_destroy(e);
    free(act);
    free(reg);
    /* The regions placed so the second layer's activations start on the
     * first layer's weights (its own buffers apart): refused, both regions
     * named. Was: planned, the second layer overwriting the first's weights. */
    uint64_t act0 = bu.ops[1].plan.opts.input_addr - bu.opts.act_addr;
    npk_rk_bundle_opts bad = bo;
    bad.weight_addr = 0x20000000;
    bad.act_addr = (uint32_t)(bad.weight_addr - act0);
    npk_rk_bundle_free(&bu);
    assert_int_equal(npk_rk_bundle_make(ls, names, 2, &bad, &bu, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "the activation region 0x"));
    assert_non_null(strstr(err.msg, "overlaps the weight region 0x20000000.."));
    npk_error_clear(&err);
    npk_rk_tfl_layer_free(&la);
    npk_rk_tfl_layer_free(&lb);
    tt_model_free(&a);
    tt_model_free(&bm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lowering),      cmocka_unit_test(test_conv_clipped),
        cmocka_unit_test(test_conv_linear),   cmocka_unit_test(test_tiling),
        cmocka_unit_test(test_add_and_pools), cmocka_unit_test(test_add_broadcast),
        cmocka_unit_test(test_large_pools),   cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_bundle),        cmocka_unit_test(test_column_tiling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
