/* The real models: every fixture parses, is written back as the same graph
 * (and cut), and the ones whose ops the interpreter supports run. Output
 * hashes are pinned for the models whose outputs were checked against
 * LiteRT.js (docs/tflite.md, "Agreement"): same top-1 class, differences of
 * a few LSB on a few elements, all explained by XNNPACK's float
 * requantisation (per-op comparisons differ by at most 1). */
#include "tfl_test.h"

static const char *const MODELS[] = {
    "models/deeplabv3_mnv2_pascal_quant.tflite",
    "models/deeplabv3_mnv2_pascal_quant_edgetpu.tflite",
    "models/mobilenet_v1_0.5_160_quant.tflite",
    "models/mobilenet_v1_0.5_160_quant_edgetpu.tflite",
    "models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite",
    "models/mobilenet_v1_1.0_224_quant_embedding_extractor_edgetpu.tflite",
    "models/mobilenet_v2_1.0_224_quant.tflite",
    "models/movenet_single_pose_lightning_ptq.tflite",
    "models/movenet_single_pose_lightning_ptq_edgetpu.tflite",
    "models/posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite",
    "models/posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite",
    "models/ssd_mobilenet_v1_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite",
    "models/ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite",
    "models/tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "edgetpu/dense_256.tflite",
    "edgetpu/dense_256_edgetpu.tflite",
    "edgetpu/gabor_64x64_p4.tflite",
    "edgetpu/gabor_64x64_p4_edgetpu.tflite",
    "edgetpu/keras_lstm_mnist_ptq.tflite",
    "edgetpu/keras_lstm_mnist_ptq_edgetpu.tflite",
    "edgetpu/looming_64x64_3x3.tflite",
    "edgetpu/looming_64x64_3x3_edgetpu.tflite",
    "edgetpu/split_concat.tflite",
    "edgetpu/split_concat_edgetpu.tflite",
};

typedef struct loaded {
    npk_mapped map;
    npk_tfl_model m;
} loaded;

static void load(const char *rel, loaded *l)
{
    npk_error err = {0};
    npk_fixture_map(rel, &l->map);
    if (npk_tfl_parse(l->map.data, l->map.size, &l->m, &err)) fail_msg("%s: %s", rel, err.msg);
}

static void unload(loaded *l)
{
    npk_tfl_free(&l->m);
    npk_unmap_file(&l->map);
}

/* ---- same graph ---- */

static void same_options(const npk_tfl_options *a, const npk_tfl_options *b)
{
    assert_int_equal(a->type, b->type);
    assert_ptr_equal(a->table, b->table);
    for (int i = 0; a->table && i < a->table->nfields; i++) {
        assert_int_equal(a->v[i].present, b->v[i].present);
        assert_int_equal(a->v[i].i, b->v[i].i);
        assert_memory_equal(&a->v[i].f, &b->v[i].f, sizeof(float));
        assert_int_equal(a->v[i].n, b->v[i].n);
        if (a->v[i].n) assert_memory_equal(a->v[i].vec, b->v[i].vec, a->v[i].n * 4);
    }
}

static void same_array(const void *a, const void *b, size_t n)
{
    if (n) assert_memory_equal(a, b, n);
}

static void same_tensor(const npk_tfl_model *ma, const npk_tfl_tensor *a, const npk_tfl_model *mb,
                        const npk_tfl_tensor *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->ndim, b->ndim);
    same_array(a->shape, b->shape, a->ndim * 4);
    assert_int_equal(a->is_variable, b->is_variable);
    assert_int_equal(a->has_quant, b->has_quant);
    assert_int_equal(a->q.nscale, b->q.nscale);
    assert_int_equal(a->q.nzero, b->q.nzero);
    assert_int_equal(a->q.nmin, b->q.nmin);
    assert_int_equal(a->q.nmax, b->q.nmax);
    same_array(a->q.scale, b->q.scale, a->q.nscale * 4);
    same_array(a->q.zero_point, b->q.zero_point, a->q.nzero * 8);
    same_array(a->q.min, b->q.min, a->q.nmin * 4);
    same_array(a->q.max, b->q.max, a->q.nmax * 4);
    assert_int_equal(a->q.quantized_dimension, b->q.quantized_dimension);
    const npk_tfl_buffer *ba = &ma->buffers[a->buffer], *bb = &mb->buffers[b->buffer];
    assert_int_equal(ba->size, bb->size);
    same_array(ba->data, bb->data, ba->size);
}

static void same_operator(const npk_tfl_model *ma, const npk_tfl_operator *a,
                          const npk_tfl_model *mb, const npk_tfl_operator *b, const int32_t *tmap)
{
    const npk_tfl_opcode *ca = npk_tfl_op_code(ma, a), *cb = npk_tfl_op_code(mb, b);
    assert_int_equal(ca->builtin, cb->builtin);
    assert_int_equal(ca->version, cb->version);
    assert_int_equal(ca->custom_code == NULL, cb->custom_code == NULL);
    if (ca->custom_code) assert_string_equal(ca->custom_code, cb->custom_code);
    assert_int_equal(a->ninputs, b->ninputs);
    assert_int_equal(a->noutputs, b->noutputs);
    for (uint32_t j = 0; j < a->ninputs; j++)
        assert_int_equal(a->inputs[j] < 0 ? -1 : tmap[a->inputs[j]], b->inputs[j]);
    for (uint32_t j = 0; j < a->noutputs; j++) assert_int_equal(tmap[a->outputs[j]], b->outputs[j]);
    same_options(&a->options, &b->options);
    assert_int_equal(a->custom_options_len, b->custom_options_len);
    same_array(a->custom_options, b->custom_options, a->custom_options_len);
}

/* parse -> write -> parse gives the same graph: every fixture. */
static void test_write_round_trip(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof MODELS / sizeof MODELS[0]; k++) {
        loaded l;
        load(MODELS[k], &l);
        uint8_t *buf = NULL;
        size_t len = 0;
        npk_error err = {0};
        if (npk_tfl_write(&l.m, NULL, &buf, &len, &err)) fail_msg("%s: %s", MODELS[k], err.msg);
        npk_tfl_model m2;
        if (npk_tfl_parse(buf, len, &m2, &err)) fail_msg("%s reparsed: %s", MODELS[k], err.msg);
        assert_int_equal(l.m.nsubgraphs, m2.nsubgraphs);
        assert_int_equal(l.m.nbuffers, m2.nbuffers);
        assert_int_equal(l.m.nopcodes, m2.nopcodes);
        assert_string_equal(l.m.description, m2.description);
        for (uint32_t s = 0; s < l.m.nsubgraphs; s++) {
            const npk_tfl_subgraph *a = &l.m.subgraphs[s], *b = &m2.subgraphs[s];
            assert_int_equal(a->ntensors, b->ntensors);
            assert_int_equal(a->noperators, b->noperators);
            assert_int_equal(a->ninputs, b->ninputs);
            assert_int_equal(a->noutputs, b->noutputs);
            same_array(a->inputs, b->inputs, a->ninputs * 4);
            same_array(a->outputs, b->outputs, a->noutputs * 4);
            int32_t *id = calloc(a->ntensors + 1, sizeof *id);
            for (uint32_t i = 0; i < a->ntensors; i++) {
                id[i] = (int32_t)i;
                same_tensor(&l.m, &a->tensors[i], &m2, &b->tensors[i]);
            }
            for (uint32_t i = 0; i < a->noperators; i++)
                same_operator(&l.m, &a->operators[i], &m2, &b->operators[i], id);
            free(id);
        }
        /* Writing the written model again gives the same bytes. */
        uint8_t *buf2 = NULL;
        size_t len2 = 0;
        assert_int_equal(npk_tfl_write(&m2, NULL, &buf2, &len2, &err), NPK_OK);
        assert_int_equal(len, len2);
        assert_memory_equal(buf, buf2, len);
        free(buf2);
        npk_tfl_free(&m2);
        free(buf);
        unload(&l);
    }
}

/* DeepLab cut before ARG_MAX (its int64 output is what LiteRT.js refuses):
 * the pruned model keeps the ops up to there and nothing else. */
static void test_cut_deeplab(void **state)
{
    (void)state;
    loaded l;
    load("models/deeplabv3_mnv2_pascal_quant.tflite", &l);
    const npk_tfl_subgraph *sg = &l.m.subgraphs[0];
    const npk_tfl_operator *last = &sg->operators[sg->noperators - 1];
    assert_int_equal(npk_tfl_op_code(&l.m, last)->builtin, NPK_TFL_OP_ARG_MAX);
    const int32_t before = last->inputs[0];
    npk_tfl_write_opts o = {.outputs = &before, .noutputs = 1, .prune = true};
    uint8_t *buf = NULL;
    size_t len = 0;
    npk_error err = {0};
    assert_int_equal(npk_tfl_write(&l.m, &o, &buf, &len, &err), NPK_OK);
    npk_tfl_model c;
    assert_int_equal(npk_tfl_parse(buf, len, &c, &err), NPK_OK);
    const npk_tfl_subgraph *cs = &c.subgraphs[0];
    assert_int_equal(cs->noperators, sg->noperators - 1);
    assert_int_equal(cs->noutputs, 1);
    assert_string_equal(cs->tensors[cs->outputs[0]].name, sg->tensors[before].name);
    for (uint32_t i = 0; i < c.nopcodes; i++)
        assert_int_not_equal(c.opcodes[i].builtin, NPK_TFL_OP_ARG_MAX);
    assert_int_equal(c.nopcodes, l.m.nopcodes - 1);
    /* The ARG_MAX output and its axis constant are gone (with the tensors no
     * operator uses), and so are their buffers; buffer 0 stays empty. */
    for (uint32_t i = 0; i < cs->ntensors; i++)
        assert_string_not_equal(cs->tensors[i].name, sg->tensors[last->outputs[0]].name);
    assert_true(cs->ntensors <= sg->ntensors - 2);
    assert_true(c.nbuffers < l.m.nbuffers);
    assert_int_equal(c.buffers[0].size, 0);
    /* The kept operators are the same, in the same order. */
    int32_t *tmap = calloc(sg->ntensors, sizeof *tmap);
    for (uint32_t i = 0, k = 0; i < sg->ntensors; i++) {
        tmap[i] = -1;
        if (k < cs->ntensors && !strcmp(sg->tensors[i].name, cs->tensors[k].name) &&
            (int32_t)i != last->outputs[0])
            tmap[i] = (int32_t)k++;
    }
    for (uint32_t i = 0; i < cs->noperators; i++)
        same_operator(&l.m, &sg->operators[i], &c, &cs->operators[i], tmap);
    free(tmap);
    npk_tfl_free(&c);
    free(buf);
    unload(&l);
}

/* ---- runs ---- */

typedef struct run_case {
    const char *model;
    const char *sha256; /* of the outputs' bytes, in order */
} run_case;

/* Outputs for input i * 7 mod 256 (the pattern of the LiteRT.js check). */
static const run_case RUNS[] = {
    {"models/mobilenet_v1_0.5_160_quant.tflite",
     "4a692b28d84cf2418ff7089c6b92f265757e8d9a703563408b9f464f736a3d19"},
    {"models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite",
     "443b69fcc02c24b5a1938362f41c0811c677c5b177976173f9022f9d8b12d4e9"},
    {"models/mobilenet_v2_1.0_224_quant.tflite",
     "1e6db688fcc6348556a6160ecb3034f571f1dfbedffb20ac3de8c9efa9e899b5"},
    {"models/tf2_mobilenet_v2_1.0_224_ptq.tflite",
     "43ec7f82e115f10407d745e73ab90adc827a95aa863424c510a61f3e84103378"},
    {"edgetpu/gabor_64x64_p4.tflite",
     "63ba73c5c8d91e8ff9441ab4fe036b2a624a3eeba94095b502c132c946e34dc1"},
    /* LiteRT.js cannot run this one (a layout error on its [1, 256] input):
     * it runs and is deterministic, nothing more is pinned. */
    {"edgetpu/dense_256.tflite", NULL},
    /* MoveNet and DeepLab (docs/tflite.md, "Agreement"): every operator
     * within 1 LSB of LiteRT.js on the same input, the elementwise, resize
     * and gather ops exact or within 1; whole-model differences are those
     * accumulated by the backbone, as large as LiteRT.js's against Arm NN.
     * DeepLab's ARG_MAX agrees on every pixel for this input. */
    {"models/movenet_single_pose_lightning_ptq.tflite",
     "d6d729fd3e9d079d6a4f1fd2d1e743ad270026b686103759ad8b914abb2cbca7"},
    {"models/deeplabv3_mnv2_pascal_quant.tflite",
     "806c262a172147845c4e545f44960cf5daade4da880d8eff5db8a3c25014aeab"},
    /* Both equal LiteRT.js's outputs byte for byte on this input. */
    {"edgetpu/looming_64x64_3x3.tflite",
     "a5e16a73e90c9a0d3bc5df419d455ecb1582f713198cd02e1ea0674e626f5a91"},
    {"edgetpu/split_concat.tflite",
     "64e37fc87b777a8a11630fd08812e147b696b27c223a4dbcdd1d483dfae7c7b3"},
};

/* kernels: NULL, or the value of NPUKIT_TFL_KERNELS while the interpreter
 * is made (the 8-bit loops it then uses). */
static void run_one(const run_case *rc, int threads, const char *kernels, char hex[65],
                    size_t *arena, size_t *peak)
{
    loaded l;
    load(rc->model, &l);
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    npk_tfl_interp_opts o = {.threads = threads};
    if (kernels) setenv("NPUKIT_TFL_KERNELS", kernels, 1);
    const npk_status st = npk_tfl_interp_new(&l.m, &o, &it, &err);
    unsetenv("NPUKIT_TFL_KERNELS");
    if (st) fail_msg("%s: %s", rc->model, err.msg);
    if (kernels) assert_string_equal(npk_tfl_interp_kernels(it), kernels);
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_input(it, i, &v, &err), NPK_OK);
        uint8_t *p = v.data;
        for (size_t k = 0; k < v.bytes; k++) p[k] = (uint8_t)(k * 7);
    }
    if (npk_tfl_interp_invoke(it, &err)) fail_msg("%s: %s", rc->model, err.msg);
    size_t total = 0;
    for (uint32_t i = 0; i < npk_tfl_interp_noutputs(it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_output(it, i, &v, &err), NPK_OK);
        total += v.bytes;
    }
    uint8_t *all = malloc(total + 1), *p = all;
    for (uint32_t i = 0; i < npk_tfl_interp_noutputs(it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_output(it, i, &v, &err), NPK_OK);
        memcpy(p, v.data, v.bytes);
        p += v.bytes;
    }
    npk_sha256_hex(all, total, hex);
    *arena = npk_tfl_interp_arena_bytes(it);
    *peak = npk_tfl_interp_peak_live_bytes(it);
    free(all);
    npk_tfl_interp_free(it);
    unload(&l);
}

static void test_models_run(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof RUNS / sizeof RUNS[0]; k++) {
        /* Under an emulator only the smallest network runs. */
        if (npk_test_light() && k > 0 && !strstr(RUNS[k].model, "edgetpu/")) continue;
        char one[65], three[65];
        size_t arena, peak, a3, p3;
        run_one(&RUNS[k], 1, NULL, one, &arena, &peak);
        if (getenv("TFL_PRINT_HASHES"))
            printf("%s %s\n", RUNS[k].model, one);
        else if (RUNS[k].sha256 && strcmp(one, RUNS[k].sha256))
            fail_msg("%s: outputs sha256 %s, expected %s", RUNS[k].model, one, RUNS[k].sha256);
        /* The arena stays within 1.2x the largest set of tensors alive at once. */
        assert_true(peak > 0);
        assert_true(arena * 10 <= peak * 12);
        /* Threads give the same bits. */
        run_one(&RUNS[k], 3, NULL, three, &a3, &p3);
        assert_string_equal(one, three);
        /* So does the portable definition of the 8-bit loops (the reference
         * the vector kernels are tested against, tests/tflite/test_qkern.c). */
        run_one(&RUNS[k], 1, "portable", three, &a3, &p3);
        if (strcmp(one, three))
            fail_msg("%s: portable kernels give sha256 %s, the vector kernels %s", RUNS[k].model,
                     three, one);
    }
}

/* Every op of the fully supported models is reported as supported; the
 * others name what is missing (PoseNet: only its custom decoder). */
static void test_supported(void **state)
{
    (void)state;
    loaded l;
    load("models/tf2_mobilenet_v2_1.0_224_ptq.tflite", &l);
    for (uint32_t i = 0; i < l.m.subgraphs[0].noperators; i++)
        assert_true(npk_tfl_op_supported(&l.m, 0, i, NULL, 0));
    unload(&l);
    static const char *const full[] = {"models/movenet_single_pose_lightning_ptq.tflite",
                                       "models/deeplabv3_mnv2_pascal_quant.tflite",
                                       "edgetpu/looming_64x64_3x3.tflite",
                                       "edgetpu/split_concat.tflite"};
    for (size_t k = 0; k < sizeof full / sizeof full[0]; k++) {
        load(full[k], &l);
        for (uint32_t i = 0; i < l.m.subgraphs[0].noperators; i++)
            if (!npk_tfl_op_supported(&l.m, 0, i, NULL, 0)) fail_msg("%s: op %u", full[k], i);
        unload(&l);
    }
    load("models/posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite", &l);
    const uint32_t last = l.m.subgraphs[0].noperators - 1;
    for (uint32_t i = 0; i <= last; i++) assert_true(npk_tfl_op_supported(&l.m, 0, i, NULL, 0));
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_new(&l.m, NULL, &it, &err), NPK_OK); /* PAD + decoder */
    npk_tfl_interp_free(it);
    unload(&l);
    /* The LSTM model: its UNIDIRECTIONAL_SEQUENCE_LSTM has no kernel. */
    load("edgetpu/keras_lstm_mnist_ptq.tflite", &l);
    char why[128];
    assert_false(npk_tfl_op_supported(&l.m, 0, 1, why, sizeof why));
    assert_string_equal(why, "no kernel for UNIDIRECTIONAL_SEQUENCE_LSTM");
    unload(&l);
    /* A custom op without a kernel: the Edge TPU's, before the SSD tail. */
    load("models/ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite", &l);
    assert_false(npk_tfl_op_supported(&l.m, 0, 0, why, sizeof why));
    assert_string_equal(why, "no kernel for edgetpu-custom-op (custom op: needs a handler)");
    assert_true(
        npk_tfl_op_supported(&l.m, 0, 3, why, sizeof why)); /* TFLite_Detection_PostProcess */
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_cut_deeplab),
        cmocka_unit_test(test_models_run),
        cmocka_unit_test(test_supported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
