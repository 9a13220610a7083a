/* CONV_2D and DEPTHWISE_CONV_2D of the real models against an independent
 * oracle: tests/tflite/ref_conv.py recomputes each op from TFLite's
 * reference-kernel arithmetic in Python integers (its own FlatBuffers walk,
 * numpy), and every element must be equal. Each op runs alone (a cut of the
 * graph at its input and output) on a fixed pseudo-random input. */
#include "tfl_test.h"

typedef struct ref_case {
    const char *model;
    uint32_t op;
} ref_case;

static const ref_case CASES[] = {
    {"models/mobilenet_v1_0.5_160_quant.tflite", 0},   /* uint8 conv 3x3 stride 2, SAME */
    {"models/mobilenet_v1_0.5_160_quant.tflite", 1},   /* uint8 depthwise 3x3 */
    {"models/mobilenet_v1_0.5_160_quant.tflite", 2},   /* uint8 pointwise */
    {"models/mobilenet_v1_0.5_160_quant.tflite", 3},   /* uint8 depthwise stride 2 */
    {"models/tf2_mobilenet_v2_1.0_224_ptq.tflite", 1}, /* int8 per-channel conv stride 2 */
    {"models/tf2_mobilenet_v2_1.0_224_ptq.tflite", 2}, /* int8 per-channel depthwise */
    {"models/tf2_mobilenet_v2_1.0_224_ptq.tflite", 3}, /* int8 per-channel pointwise */
};

static npk_dtype dtype(int8_t t)
{
    return t == NPK_TFL_INT8 ? NPK_I8 : NPK_U8;
}

static void save_view(const npk_tfl_view *v, const char *path)
{
    npk_tensor t;
    npk_error err = {0};
    int64_t shape[NPK_MAX_DIMS];
    for (uint32_t d = 0; d < v->ndim; d++) shape[d] = v->dims[d];
    assert_int_equal(npk_tensor_alloc(&t, NULL, dtype(v->type), (int)v->ndim, shape, &err), NPK_OK);
    memcpy(t.data, v->data, v->bytes);
    assert_int_equal(npk_npy_save(path, &t, &err), NPK_OK);
    npk_tensor_free(&t);
}

static void test_against_python_reference(void **state)
{
    (void)state;
    if (npk_test_light()) skip(); /* minutes under an emulator */
    char script[1024];
    snprintf(script, sizeof script,
             "import runpy; runpy.run_path('%s/tests/tflite/ref_conv.py', run_name='__main__')",
             NPK_SOURCE_DIR);
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const char *path = NPK_FIXTURE(CASES[k].model);
        npk_mapped map;
        npk_tfl_model m;
        npk_error err = {0};
        npk_fixture_map(CASES[k].model, &map);
        assert_int_equal(npk_tfl_parse(map.data, map.size, &m, &err), NPK_OK);
        const npk_tfl_operator *op = &m.subgraphs[0].operators[CASES[k].op];
        npk_tfl_interp_opts o = {
            .inputs = op->inputs, .ninputs = 1, .outputs = op->outputs, .noutputs = 1};
        npk_tfl_interp *it = NULL;
        if (npk_tfl_interp_new(&m, &o, &it, &err)) fail_msg("%s: %s", CASES[k].model, err.msg);
        npk_tfl_view in, out;
        assert_int_equal(npk_tfl_interp_input(it, 0, &in, &err), NPK_OK);
        uint64_t seed = 1000 + k;
        for (size_t i = 0; i < in.bytes; i++) ((uint8_t *)in.data)[i] = (uint8_t)npk_rand(&seed);
        assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_OK);
        assert_int_equal(npk_tfl_interp_output(it, 0, &out, &err), NPK_OK);
        char ip[64], op_[64], arg[2048];
        snprintf(ip, sizeof ip, "in%zu.npy", k);
        snprintf(op_, sizeof op_, "out%zu.npy", k);
        const char *inp = npk_tmp(ip), *outp = npk_tmp(op_);
        save_view(&in, inp);
        save_view(&out, outp);
        snprintf(arg, sizeof arg, "%s,%u,%s,%s", path, CASES[k].op, inp, outp);
        npk_run r = npk_python(script, arg);
        if (r.status != 0) fail_msg("%s op %u: %s%s", CASES[k].model, CASES[k].op, r.out, r.err);
        assert_non_null(strstr(r.out, "0 of "));
        npk_run_free(&r);
        npk_tfl_interp_free(it);
        npk_tfl_free(&m);
        npk_unmap_file(&map);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_python_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
