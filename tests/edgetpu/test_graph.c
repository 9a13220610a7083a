/* Whole compiled models on the emulated accelerator with real values: for
 * every compiled / uncompiled pair of the fixtures, the graph runtime (Edge
 * TPU op on the emulator, answered from the uncompiled model's part through
 * the USB protocol; CPU ops on the interpreter) equals the interpreter on the
 * uncompiled model bit for bit. Pairs whose CPU tail needs an operator the
 * interpreter does not have yet are skipped with the operator's name. */
#include "graph_test.h"

/* The compiled model against its uncompiled twin, whole or cut at the Edge
 * TPU ops' outputs (edgetpu_part), on seeded random inputs and (when
 * picture) on cat.bmp. */
static void pair(const char *compiled, const char *cpu, bool edgetpu_part, bool picture)
{
    gfx c, u;
    gfx_load(compiled, &c);
    gfx_load_cpu(cpu, &u);
    char why[160];
    int32_t cut[16];
    uint32_t ncut = 0;
    if (edgetpu_part) ncut = gfx_edgetpu_outputs(&c, cut, 16);
    if (!gfx_cpu_supported(&u, &c, edgetpu_part, why, sizeof why)) {
        gfx_unload(&c);
        gfx_unload(&u);
        printf("NOT YET: %s vs %s: %s\n", compiled, cpu, why);
        skip();
    }
    grun g;
    grun_open(&g, &c, &u, cut, ncut);
    gcpu ref;
    gcpu_new(&ref, &u, &g);
    for (int round = 0; round < (picture ? 3 : 2); round++) {
        if (round < 2)
            grun_random_inputs(&g, 100 + (uint64_t)round);
        else
            grun_picture(&g, "models/cat.bmp");
        npk_etpu_graph_info info;
        grun_invoke(&g, &info);
        /* Parameters once per caching token: on the first run only. */
        assert_int_equal(info.parameter_uploads, round == 0 ? c.m.nops : 0);
        assert_int_equal(info.device_runs, c.m.nops);
        gcpu_copy_inputs(&ref, &g);
        gcpu_invoke(&ref);
        grun_expect_equal(&g, &ref);
    }
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(g.emu);
    assert_null(npk_etpu_emu_violation(g.emu));
    assert_int_equal(s->parameter_loads, c.m.nops);
    gcpu_free(&ref);
    grun_close(&g);
    gfx_unload(&c);
    gfx_unload(&u);
}

static void mobilenet(void **state)
{
    (void)state;
    pair("mobilenet_v1_0.5_160_quant_edgetpu.tflite", "mobilenet_v1_0.5_160_quant.tflite", false,
         true);
}

static void embedding(void **state)
{
    (void)state;
    pair("mobilenet_v1_1.0_224_quant_embedding_extractor_edgetpu.tflite",
         "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite", false, false);
}

static void deeplab_part(void **state)
{
    (void)state;
    pair("deeplabv3_mnv2_pascal_quant_edgetpu.tflite", "deeplabv3_mnv2_pascal_quant.tflite", true,
         false);
}

static void deeplab(void **state)
{
    (void)state;
    pair("deeplabv3_mnv2_pascal_quant_edgetpu.tflite", "deeplabv3_mnv2_pascal_quant.tflite", false,
         true);
}

static void posenet_part(void **state)
{
    (void)state;
    pair("posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite",
         "posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite", true, false);
}

static void posenet(void **state)
{
    (void)state;
    pair("posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite",
         "posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite", false, true);
}

static void movenet_part(void **state)
{
    (void)state;
    pair("movenet_single_pose_lightning_ptq_edgetpu.tflite",
         "movenet_single_pose_lightning_ptq.tflite", true, false);
}

static void movenet(void **state)
{
    (void)state;
    pair("movenet_single_pose_lightning_ptq_edgetpu.tflite",
         "movenet_single_pose_lightning_ptq.tflite", false, true);
}

/* The small compiled models of data/edgetpu against their uncompiled twins:
 * a Dense template (whose emulator answer would otherwise come from the
 * reference executor: the CPU model wins), a Gabor filter bank, the looming
 * detector (9 values in a 16-byte tiled layer) and split_concat (three
 * inputs, five outputs in a hint order other than the layer order). */
static void dense_256(void **state)
{
    (void)state;
    pair("edgetpu/dense_256_edgetpu.tflite", "edgetpu/dense_256.tflite", false, false);
}

static void gabor(void **state)
{
    (void)state;
    pair("edgetpu/gabor_64x64_p4_edgetpu.tflite", "edgetpu/gabor_64x64_p4.tflite", false, false);
}

static void looming(void **state)
{
    (void)state;
    pair("edgetpu/looming_64x64_3x3_edgetpu.tflite", "edgetpu/looming_64x64_3x3.tflite", false,
         false);
}

static void split_concat(void **state)
{
    (void)state;
    pair("edgetpu/split_concat_edgetpu.tflite", "edgetpu/split_concat.tflite", false, false);
}

/* The picture path: cat.bmp through the model input and the top class. */
static void mobilenet_cat(void **state)
{
    (void)state;
    gfx c, u;
    gfx_load("mobilenet_v1_0.5_160_quant_edgetpu.tflite", &c);
    gfx_load_cpu("mobilenet_v1_0.5_160_quant.tflite", &u);
    grun g;
    grun_open(&g, &c, &u, NULL, 0);
    grun_picture(&g, "models/cat.bmp");
    grun_invoke(&g, NULL);
    npk_tfl_view out;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_output(npk_etpu_graph_interp(g.g), 0, &out, &err), NPK_OK);
    npk_vis_class top[3];
    uint32_t n = 0;
    assert_int_equal(npk_vis_classify(&out, 3, top, &n, &err), NPK_OK);
    assert_int_equal(n, 3);
    /* ImageNet 286 "Egyptian cat", 283 "tiger cat", 282 "tabby" (uint8 / 256). */
    assert_int_equal(top[0].id, 286);
    assert_int_equal(top[1].id, 283);
    assert_int_equal(top[2].id, 282);
    assert_true(top[0].score == 149.0f / 256);
    grun_close(&g);
    gfx_unload(&c);
    gfx_unload(&u);
}

/* An op with several packages: the first one for the USB Accelerator's chip
 * ("beagle") runs. MobileNet's op gets a copy of its package for another chip
 * in front of its own; alone, that copy is refused before any device. */
static void packages(void **state)
{
    (void)state;
    gfx c, u;
    gfx_load("mobilenet_v1_0.5_160_quant_edgetpu.tflite", &c);
    gfx_load_cpu("mobilenet_v1_0.5_160_quant.tflite", &u);
    npk_etpu_op *op = &c.m.ops[0];
    assert_int_equal(op->npackages, 1);
    npk_etpu_package *orig = op->packages, two[2] = {orig[0], orig[0]};
    npk_etpu_executable *ex = calloc(orig->nexecutables, sizeof *ex);
    for (uint32_t i = 0; i < orig->nexecutables; i++) {
        ex[i] = orig->executables[i];
        ex[i].chip = "other_chip";
    }
    two[0].executables = ex;
    op->packages = two;
    op->npackages = 2;
    npk_etpu_plan plan;
    npk_error err = {0};
    assert_int_equal(npk_etpu_plan_init_op(&c.m, 0, &plan, &err), NPK_OK);
    assert_int_equal(plan.package, 1);
    npk_etpu_plan_free(&plan);
    grun g;
    grun_open(&g, &c, &u, NULL, 0);
    gcpu ref;
    gcpu_new(&ref, &u, &g);
    grun_random_inputs(&g, 7);
    npk_etpu_graph_info info;
    grun_invoke(&g, &info);
    gcpu_copy_inputs(&ref, &g);
    gcpu_invoke(&ref);
    grun_expect_equal(&g, &ref);
    gcpu_free(&ref);
    grun_close(&g);
    op->npackages = 1;
    npk_etpu_graph *none = NULL;
    assert_int_equal(npk_etpu_graph_new(&c.m, NULL, &none, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "Edge TPU op 0: none of its 1 packages is for the USB "
                                    "Accelerator's chip \"beagle\" (first: chip other_chip)"));
    assert_null(none);
    op->packages = orig;
    free(ex);
    gfx_unload(&c);
    gfx_unload(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mobilenet),     cmocka_unit_test(embedding),
        cmocka_unit_test(mobilenet_cat), cmocka_unit_test(deeplab_part),
        cmocka_unit_test(deeplab),       cmocka_unit_test(posenet_part),
        cmocka_unit_test(posenet),       cmocka_unit_test(movenet_part),
        cmocka_unit_test(movenet),       cmocka_unit_test(dense_256),
        cmocka_unit_test(gabor),         cmocka_unit_test(looming),
        cmocka_unit_test(split_concat),  cmocka_unit_test(packages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
