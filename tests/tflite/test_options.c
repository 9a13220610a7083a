/* The builtin options table against the real models' bytes: every
 * operator of every fixture carries the union type the table gives its op
 * (or none), and decoded fields hold the values the models were made with.
 * Plus the table's own rules (defaults, setting, encoding round trip). */
#include "tfl_test.h"

static const char *const FIXTURES[] = {
    "models/deeplabv3_mnv2_pascal_quant.tflite",
    "models/mobilenet_v1_0.5_160_quant.tflite",
    "models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite",
    "models/mobilenet_v2_1.0_224_quant.tflite",
    "models/movenet_single_pose_lightning_ptq.tflite",
    "models/posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite",
    "models/ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite",
    "models/tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "edgetpu/dense_256.tflite",
    "edgetpu/gabor_64x64_p4.tflite",
    "edgetpu/keras_lstm_mnist_ptq.tflite",
    "edgetpu/looming_64x64_3x3.tflite",
    "edgetpu/split_concat.tflite",
};

static void load(const char *rel, npk_mapped *map, npk_tfl_model *m)
{
    npk_error err = {0};
    npk_fixture_map(rel, map);
    if (npk_tfl_parse(map->data, map->size, m, &err)) fail_msg("%s: %s", rel, err.msg);
}

static void test_union_types_match_models(void **state)
{
    (void)state;
    uint32_t decoded = 0;
    for (size_t k = 0; k < sizeof FIXTURES / sizeof FIXTURES[0]; k++) {
        npk_mapped map;
        npk_tfl_model m;
        load(FIXTURES[k], &map, &m);
        for (uint32_t s = 0; s < m.nsubgraphs; s++)
            for (uint32_t i = 0; i < m.subgraphs[s].noperators; i++) {
                const npk_tfl_operator *op = &m.subgraphs[s].operators[i];
                const npk_tfl_opcode *oc = npk_tfl_op_code(&m, op);
                if (op->builtin_options_type == 0) continue;
                if (op->builtin_options_type != npk_tfl_builtin_options_type(oc->builtin))
                    fail_msg("%s operator %u (%s): options type %u, the table says %u", FIXTURES[k],
                             i, npk_tfl_builtin_name(oc->builtin), op->builtin_options_type,
                             npk_tfl_builtin_options_type(oc->builtin));
                /* Every options table in these models is known and decoded. */
                assert_non_null(op->options.table);
                assert_int_equal(op->options.type, op->builtin_options_type);
                decoded++;
            }
        npk_tfl_free(&m);
        npk_unmap_file(&map);
    }
    assert_true(decoded > 400);
}

/* The option values of a few operators (from `tflite info`, checked against
 * what the models are known to be). */
static int64_t opt(const npk_tfl_model *m, uint32_t op, const char *name)
{
    npk_tfl_opt_value v;
    assert_true(npk_tfl_opt_get(&m->subgraphs[0].operators[op].options, name, &v));
    return v.i;
}

static void test_decoded_values(void **state)
{
    (void)state;
    npk_mapped map;
    npk_tfl_model m;
    load("models/mobilenet_v2_1.0_224_quant.tflite", &map, &m);
    /* The stem: 3x3 conv, SAME, stride 2, RELU6. */
    assert_int_equal(opt(&m, 0, "padding"), NPK_TFL_PAD_SAME);
    assert_int_equal(opt(&m, 0, "stride_w"), 2);
    assert_int_equal(opt(&m, 0, "stride_h"), 2);
    assert_int_equal(opt(&m, 0, "fused_activation_function"), NPK_TFL_ACT_RELU6);
    assert_int_equal(opt(&m, 0, "dilation_w_factor"), 1);
    assert_false(m.subgraphs[0].operators[0].options.v[6].present); /* quantized_bias_type */
    assert_int_equal(opt(&m, 1, "depth_multiplier"), 1);
    /* The global pool: VALID 7x7. */
    assert_int_equal(opt(&m, 62, "filter_width"), 7);
    assert_int_equal(opt(&m, 62, "padding"), NPK_TFL_PAD_VALID);
    assert_true(npk_tfl_opt_float(&m.subgraphs[0].operators[65].options, "beta", 0) == 1.0f);
    npk_tfl_free(&m);
    npk_unmap_file(&map);

    load("models/deeplabv3_mnv2_pascal_quant.tflite", &map, &m);
    assert_int_equal(opt(&m, 61, "filter_width"), 33);
    assert_int_equal(opt(&m, 64, "align_corners"), 1);
    assert_int_equal(opt(&m, 64, "half_pixel_centers"), 0);
    assert_int_equal(opt(&m, 66, "axis"), 3);
    assert_int_equal(opt(&m, 71, "output_type"), NPK_TFL_INT64);
    npk_tfl_free(&m);
    npk_unmap_file(&map);

    load("models/movenet_single_pose_lightning_ptq.tflite", &map, &m);
    assert_int_equal(opt(&m, 71, "half_pixel_centers"), 1);
    assert_int_equal(opt(&m, 89, "output_type"), NPK_TFL_INT32);
    assert_int_equal(opt(&m, 99, "values_count"), 3);
    assert_int_equal(opt(&m, 99, "axis"), 1);
    assert_int_equal(opt(&m, 114, "num"), 2);
    assert_int_equal(opt(&m, 2, "pot_scale_int16"), 1); /* SUB: the schema default */
    npk_tfl_free(&m);
    npk_unmap_file(&map);

    load("edgetpu/keras_lstm_mnist_ptq.tflite", &map, &m);
    assert_int_equal(opt(&m, 1, "fused_activation_function"), NPK_TFL_ACT_TANH);
    assert_true(npk_tfl_opt_float(&m.subgraphs[0].operators[1].options, "cell_clip", 0) == 10.0f);
    npk_tfl_free(&m);
    npk_unmap_file(&map);
}

static void test_table_rules(void **state)
{
    (void)state;
    size_t n;
    const npk_tfl_opt_table *t = npk_tfl_opt_tables(&n);
    for (size_t i = 0; i < n; i++) {
        /* Sorted, named as the union, and slots distinct. */
        if (i) assert_true(t[i].type > t[i - 1].type);
        assert_string_equal(t[i].name, npk_tfl_options_name(t[i].type));
        assert_ptr_equal(npk_tfl_opt_table_find(t[i].type), &t[i]);
        for (int a = 0; a < t[i].nfields; a++)
            for (int b = 0; b < a; b++)
                assert_int_not_equal(t[i].fields[a].slot, t[i].fields[b].slot);
    }
    assert_string_equal(npk_tfl_options_name(1), "Conv2DOptions");
    assert_string_equal(npk_tfl_options_name(89), "QuantizeOptions");
    assert_string_equal(npk_tfl_options_name(126), "RightShiftOptions");
    assert_null(npk_tfl_options_name(0));
    assert_null(npk_tfl_options_name(127));
    assert_int_equal(npk_tfl_builtin_options_type(NPK_TFL_OP_SQUEEZE), 30);
    assert_int_equal(npk_tfl_builtin_options_type(NPK_TFL_OP_TILE), 51);
    assert_int_equal(npk_tfl_builtin_options_type(NPK_TFL_OP_RESIZE_NEAREST_NEIGHBOR), 74);
    assert_int_equal(npk_tfl_builtin_options_type(NPK_TFL_OP_LOGISTIC), 0);

    npk_tfl_options o;
    npk_error err = {0};
    assert_int_equal(npk_tfl_options_init(&o, 1, &err), NPK_OK);
    assert_int_equal(npk_tfl_opt_int(&o, "dilation_w_factor", -1), 1); /* schema default */
    assert_int_equal(npk_tfl_opt_int(&o, "no_such_field", -7), -7);
    assert_int_equal(npk_tfl_options_set(&o, "stride_w", 3, &err), NPK_OK);
    assert_int_equal(npk_tfl_options_set(&o, "stride_w", 0.5, &err), NPK_E_ARG);
    assert_int_equal(npk_tfl_options_set(&o, "padding", 300, &err), NPK_E_ARG);
    assert_int_equal(npk_tfl_options_set(&o, "nope", 1, &err), NPK_E_ARG);
    assert_int_equal(npk_tfl_options_init(&o, 3 /* ConcatEmbeddings: not in the table */, &err),
                     NPK_E_UNSUPPORTED);
    assert_string_equal(npk_tfl_opt_enum_name(NPK_TFL_OPT_ACTIVATION, 3), "RELU6");
    assert_string_equal(npk_tfl_opt_enum_name(NPK_TFL_OPT_PADDING, 1), "VALID");
    assert_string_equal(npk_tfl_opt_enum_name(NPK_TFL_OPT_TYPE, 9), "INT8");
    assert_null(npk_tfl_opt_enum_name(NPK_TFL_OPT_PADDING, 2));
}

/* Options set through the table come back from a written model unchanged,
 * for every table: each field set to a value that is not its default. */
static void test_every_table_round_trips(void **state)
{
    (void)state;
    size_t n;
    const npk_tfl_opt_table *t = npk_tfl_opt_tables(&n);
    npk_tflb *b = npk_tflb_new();
    static const int32_t s1[] = {1}, vec[] = {3, -1, 7};
    int32_t x = tt_add(b, "x", NPK_TFL_FLOAT32, 1, s1, 0, 0, NULL, 0);
    npk_tfl_options *set = calloc(n, sizeof *set);
    for (size_t i = 0; i < n; i++) {
        npk_error err = {0};
        assert_int_equal(npk_tfl_options_init(&set[i], t[i].type, &err), NPK_OK);
        for (int f = 0; f < t[i].nfields; f++) {
            const npk_tfl_opt_field *fd = &t[i].fields[f];
            if (fd->kind == NPK_TFL_OPT_INT32_VEC)
                assert_int_equal(npk_tfl_options_set_vec(&set[i], fd->name, vec, 3, &err), NPK_OK);
            else
                assert_int_equal(npk_tfl_options_set(&set[i], fd->name,
                                                     fd->kind == NPK_TFL_OPT_FLOAT  ? 0.375
                                                     : fd->kind == NPK_TFL_OPT_BOOL ? !fd->def
                                                                                    : 1 + f,
                                                     &err),
                                 NPK_OK);
        }
        int32_t y = tt_add(b, "y", NPK_TFL_FLOAT32, 1, s1, 0, 0, NULL, 0);
        tt_op(b, 127, &x, 1, &y, 1, &set[i]); /* an op code no kernel has: just a carrier */
    }
    npk_tflb_io(b, &x, 1, &x, 1);
    tt_model tm;
    tt_finish(b, &tm);
    for (size_t i = 0; i < n; i++) {
        const npk_tfl_options *got = &tm.m.subgraphs[0].operators[i].options;
        assert_int_equal(got->type, t[i].type);
        assert_ptr_equal(got->table, &t[i]);
        for (int f = 0; f < t[i].nfields; f++) {
            assert_true(got->v[f].present);
            assert_int_equal(got->v[f].i, set[i].v[f].i);
            assert_true(got->v[f].f == set[i].v[f].f);
            assert_int_equal(got->v[f].n, set[i].v[f].n);
            if (got->v[f].n) assert_memory_equal(got->v[f].vec, vec, sizeof vec);
        }
    }
    free(set);
    tt_model_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union_types_match_models),
        cmocka_unit_test(test_decoded_values),
        cmocka_unit_test(test_table_rules),
        cmocka_unit_test(test_every_table_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
