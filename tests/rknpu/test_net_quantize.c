/* QUANTIZE between 8-bit types as an NPU layer (src/rknpu/net/net_quantize.c)
 * on models built here: x -> AVERAGE_POOL_2D 1x1 (a layer, so x's copy is on the
 * device) -> a -> QUANTIZE -> q (an output). x holds every one of the 256
 * byte values many times; q must equal the interpreter's (TFLite's
 * Requantize) byte for byte for each pair of types and for scale ratios that
 * grow, shrink (saturating), barely change and shrink a thousandfold, on 1
 * and 3 cores. A QUANTIZE that keeps the stored bytes stays free; one whose
 * ratio meets TFLite's sign-dependent rounding ties (3/2), and one whose
 * input and readers are on the host, stay on the CPU. */
#include "../tflite/tfl_test.h"
#include "npukit/rknpu_net.h"

typedef struct qcase {
    const char *name;
    int8_t tin, tout;
    float sin, sout;
    int64_t zin, zout;
} qcase;

/* x (and a) of type tin; q of type tout. pooled: x goes through AVERAGE_POOL_2D
 * first (device input); else QUANTIZE reads the graph input directly. */
static tt_model build(const qcase *c, bool pooled)
{
    npk_tflb *b = npk_tflb_new();
    int32_t shape[4] = {1, 16, 16, 24};
    int32_t x = tt_add(b, "x", c->tin, 4, shape, c->sin, c->zin, NULL, 0);
    int32_t a = x;
    if (pooled) {
        a = tt_add(b, "a", c->tin, 4, shape, c->sin, c->zin, NULL, 0);
        static const char *const n[] = {"padding",       "stride_w",
                                        "stride_h",      "filter_width",
                                        "filter_height", "fused_activation_function"};
        npk_tfl_options po =
            tt_opts(NPK_TFL_OP_AVERAGE_POOL_2D, n, (double[]){NPK_TFL_PAD_VALID, 1, 1, 1, 1, 0}, 6);
        tt_op(b, NPK_TFL_OP_AVERAGE_POOL_2D, &x, 1, &a, 1, &po);
    }
    int32_t q = tt_add(b, "q", c->tout, 4, shape, c->sout, c->zout, NULL, 0);
    tt_op(b, NPK_TFL_OP_QUANTIZE, &a, 1, &q, 1, NULL);
    npk_tflb_io(b, &x, 1, &q, 1);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

/* Compile, run on the emulator, compare with the interpreter; the NPU,
 * free and CPU operator counts. */
static void run_case(const qcase *c, bool pooled, int cores, uint32_t want[3])
{
    tt_model tm = build(c, pooled);
    npk_error err = {0};
    npk_rk_net_opts no = {cores, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    npk_rk_net net;
    if (npk_rk_net_compile(&tm.m, &no, &net, &err)) fail_msg("%s: compile: %s", c->name, err.msg);
    if (net.npu_ops != want[0] || net.free_ops != want[1] || net.cpu_ops != want[2])
        fail_msg("%s: %u NPU / %u free / %u CPU operators, expected %u / %u / %u", c->name,
                 net.npu_ops, net.free_ops, net.cpu_ops, want[0], want[1], want[2]);
    npk_rk_device *dev;
    npk_rk_open_opts oo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &oo, &dev, &err), NPK_OK);
    npk_rk_net_exec *x;
    if (npk_rk_net_exec_new(&net, dev, &x, &err)) fail_msg("%s: bind: %s", c->name, err.msg);
    npk_tfl_view iv, ov;
    assert_int_equal(npk_rk_net_input(x, 0, &iv, &err), NPK_OK);
    uint64_t rng = 0x9a17;
    for (size_t k = 0; k < iv.bytes; k++) /* every value, in a scrambled order */
        ((uint8_t *)iv.data)[k] = (uint8_t)(k * 167 + (npk_rand(&rng) % 7 == 0 ? 1 : 0));
    if (npk_rk_net_run(x, NULL, &err)) fail_msg("%s: run: %s", c->name, err.msg);
    const void *ins[1] = {iv.data};
    npk_tfl_interp *it = tt_run(&tm, ins, 1);
    assert_int_equal(npk_rk_net_output(x, 0, &ov, &err), NPK_OK);
    npk_tfl_view w;
    assert_int_equal(npk_tfl_interp_output(it, 0, &w, &err), NPK_OK);
    assert_int_equal(w.bytes, ov.bytes);
    size_t differ = 0;
    for (size_t k = 0; k < w.bytes; k++) {
        bool d = ((uint8_t *)w.data)[k] != ((uint8_t *)ov.data)[k];
        if (d && differ < 8 && getenv("NPK_DEBUG"))
            printf("x %u: interpreter %u, NPU %u\n", ((uint8_t *)iv.data)[k],
                   ((uint8_t *)w.data)[k], ((uint8_t *)ov.data)[k]);
        differ += d;
    }
    if (differ)
        fail_msg("%s (%d cores): %zu of %zu elements differ from the interpreter's", c->name, cores,
                 differ, w.bytes);
    npk_tfl_interp_free(it);
    npk_rk_net_exec_free(x);
    npk_rk_device_close(dev);
    npk_rk_net_free(&net);
    tt_model_free(&tm);
}

static void test_quantize_layer(void **state)
{
    (void)state;
    static const qcase cs[] = {
        /* DeepLab's ResizeBilinear -> ResizeBilinear1 */
        {"uint8 0.0124 -> 0.0352", NPK_TFL_UINT8, NPK_TFL_UINT8, 0.012422440573573112f,
         0.03520936891436577f, 0, 0},
        {"uint8 growing (saturates)", NPK_TFL_UINT8, NPK_TFL_UINT8, 0.05f, 0.013f, 131, 120},
        {"int8 barely changing", NPK_TFL_INT8, NPK_TFL_INT8, 0.05f, 0.0501f, -3, 4},
        {"int8 a thousandfold smaller", NPK_TFL_INT8, NPK_TFL_INT8, 0.001f, 1.0f, 10, -20},
        {"int8 -> uint8 with a scale", NPK_TFL_INT8, NPK_TFL_UINT8, 0.02f, 0.03f, -7, 140},
        {"uint8 -> int8 with a scale", NPK_TFL_UINT8, NPK_TFL_INT8, 0.03f, 0.025f, 140, -7},
        {"uint8 zero point moved by 5", NPK_TFL_UINT8, NPK_TFL_UINT8, 0.02f, 0.02f, 128, 133},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int cores = 1; cores <= 3; cores += 2)
            run_case(&cs[i], true, cores, (uint32_t[]){2, 0, 0});
}

static void test_quantize_placement(void **state)
{
    (void)state;
    /* Same stored bytes (zero points 128 apart, one scale): free. */
    static const qcase same = {
        "int8 -> uint8 same bytes", NPK_TFL_INT8, NPK_TFL_UINT8, 0.02f, 0.02f, -5, 123};
    run_case(&same, true, 1, (uint32_t[]){1, 1, 0});
    /* A ratio of 3/2: TFLite meets a rounding tie on every other input
     * value, where the NPU would round one sign differently: the CPU's. */
    static const qcase ties = {
        "uint8 -> int8 3/2", NPK_TFL_UINT8, NPK_TFL_INT8, 0.03f, 0.02f, 140, -7};
    run_case(&ties, true, 1, (uint32_t[]){1, 0, 1});
    /* A host input and a host reader: the interpreter's. */
    static const qcase host = {
        "uint8 on the host", NPK_TFL_UINT8, NPK_TFL_UINT8, 0.02f, 0.03f, 128, 100};
    run_case(&host, false, 1, (uint32_t[]){0, 0, 1});
}

/* Graphs out of order are refused as the interpreter refuses them, with the
 * operator's offset: a QUANTIZE reading its own output (the NPU would give
 * both one address; a fuzz finding), and one writing the model's input. */
static void test_order_refused(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        npk_tflb *b = npk_tflb_new();
        int32_t shape[4] = {1, 4, 4, 8};
        int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 4, shape, 0.02f, 128, NULL, 0);
        int32_t q = tt_add(b, "q", NPK_TFL_UINT8, 4, shape, 0.03f, 100, NULL, 0);
        if (k == 0)
            tt_op(b, NPK_TFL_OP_QUANTIZE, &q, 1, &q, 1, NULL);
        else
            tt_op(b, NPK_TFL_OP_QUANTIZE, &x, 1, &x, 1, NULL);
        npk_tflb_io(b, &x, 1, &q, 1);
        tt_model tm;
        tt_finish(b, &tm);
        npk_error err = {0};
        npk_rk_net_opts no = {1, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
        npk_rk_net net;
        assert_int_equal(npk_rk_net_compile(&tm.m, &no, &net, &err), NPK_E_FORMAT);
        assert_true(err.has_offset && err.offset == tm.m.subgraphs[0].operators[0].offset);
        assert_non_null(strstr(err.msg, k == 0 ? "input 0 (tensor 1 \"q\") is neither a model "
                                                 "input, a constant nor computed by an earlier"
                                               : "output 0 (tensor 0 \"x\") is a model input"));
        tt_model_free(&tm);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantize_layer),
        cmocka_unit_test(test_quantize_placement),
        cmocka_unit_test(test_order_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
