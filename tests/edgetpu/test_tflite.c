/* TFLite reader: facts of the fixture models (CPU and compiled), the
 * opcode rules (deprecated_builtin_code, max(), opcode_index default 0),
 * buffers stored after the flatbuffer, and invalid indices. */
#include "etpu_test.h"

static const char *const ALL[] = {"dense_256.tflite",
                                  "dense_256_edgetpu.tflite",
                                  "gabor_64x64_p4.tflite",
                                  "gabor_64x64_p4_edgetpu.tflite",
                                  "looming_64x64_3x3.tflite",
                                  "looming_64x64_3x3_edgetpu.tflite",
                                  "keras_lstm_mnist_ptq.tflite",
                                  "keras_lstm_mnist_ptq_edgetpu.tflite",
                                  "split_concat.tflite",
                                  "split_concat_edgetpu.tflite"};

/* The fixtures are the upstream files (sha256 from reference/fixtures.md). */
static void test_fixture_hashes(void **state)
{
    (void)state;
    static const char *const sha[] = {
        "73fcdbe9633027647a6661a22a3e1be3d33cb95079fbdc1975ef0be0ae3555a1",
        "145e02a22b0000b5844882d07442dff8e28c02afc17443a82758a31dd5c1f7db",
        "bbd85284c8c899c5509f6d171435035f70603281f7951fee7ef9e0e3cd20373e",
        "b8d2a165c8ad9238146ed1fab9c39c8c0582e39fb6c4b4f418b468e469a17c7c",
        "47198af0e5aee83950da9426fe1d77a71dac85ee9bfda6b74cfdc89ec33fc429",
        "1cae86d5b5440ab416f34480b1cc8301455b4c018ad18f5f268f80b9fe2ce8aa",
        "ac718e4b27731e370c21bc018ad6214512fd56ce1dfde308a050707eda6f0a4b",
        "1ee39c825eea0cdd45ca3cb66481921d4f48e0875dff8b4aba5d5dcc3472be79",
        "b268eb1ecc8fe5ace629354779e489a3ea32afd98b16a712091a79ec35c8a439",
        "f76de286d55330b6522b34c51d186d2cc154c73f96a67f16999465839d87092f"};
    for (size_t i = 0; i < sizeof ALL / sizeof ALL[0]; i++) {
        etpu_fx f;
        etpu_load(ALL[i], &f);
        sha_is(f.map.data, f.map.size, sha[i]);
        etpu_unload(&f);
    }
}

static void test_every_fixture_parses(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ALL / sizeof ALL[0]; i++) {
        etpu_fx f;
        etpu_load(ALL[i], &f);
        bool compiled = strstr(ALL[i], "_edgetpu") != NULL;
        assert_int_equal(f.m.tfl.version, 3);
        assert_int_equal(f.m.tfl.nsubgraphs, 1);
        assert_int_equal(f.m.nops, compiled ? 1 : 0);
        if (compiled) {
            assert_int_equal(f.m.tfl.nopcodes, 1);
            assert_string_equal(f.m.tfl.opcodes[0].custom_code, "edgetpu-custom-op");
            assert_int_equal(f.m.tfl.opcodes[0].builtin, NPK_TFL_OP_CUSTOM);
            assert_string_equal(f.m.tfl.description, "Exported from Subgraph.");
        }
        etpu_unload(&f);
    }
}

static void test_dense_cpu_model(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256.tflite", &f);
    const npk_tfl_model *t = &f.m.tfl;
    assert_string_equal(t->description, "MLIR Converted.");
    assert_int_equal(t->nopcodes, 2);
    assert_int_equal(t->opcodes[0].builtin, NPK_TFL_OP_QUANTIZE);
    assert_string_equal(npk_tfl_builtin_name(t->opcodes[0].builtin), "QUANTIZE");
    assert_int_equal(t->opcodes[1].builtin, NPK_TFL_OP_FULLY_CONNECTED);
    assert_null(t->opcodes[0].custom_code);
    const npk_tfl_subgraph *sg = &t->subgraphs[0];
    assert_int_equal(sg->ntensors, 5);
    assert_int_equal(sg->noperators, 3);
    /* QUANTIZE -> FULLY_CONNECTED (no bias: input -1) -> QUANTIZE */
    assert_int_equal(sg->operators[0].opcode_index, 0);
    assert_int_equal(sg->operators[1].opcode_index, 1);
    assert_int_equal(sg->operators[2].opcode_index, 0);
    assert_int_equal(sg->operators[1].ninputs, 3);
    assert_int_equal(sg->operators[1].inputs[0], 2);
    assert_int_equal(sg->operators[1].inputs[1], 1);
    assert_int_equal(sg->operators[1].inputs[2], -1);
    const npk_tfl_tensor *in = &sg->tensors[0], *w = &sg->tensors[1];
    assert_string_equal(in->name, "serving_default_keras_tensor:0");
    assert_int_equal(in->type, NPK_TFL_UINT8);
    assert_true(fabsf(in->q.scale[0] - 0.00784303f) < 1e-8f);
    assert_int_equal(in->q.zero_point[0], 127);
    assert_string_equal(w->name, "tfl.pseudo_qconst");
    assert_int_equal(w->type, NPK_TFL_INT8);
    assert_int_equal(w->ndim, 2);
    assert_int_equal(w->shape[0], 256);
    assert_int_equal(w->shape[1], 256);
    assert_int_equal(w->buffer, 2);
    /* Per-channel: 256 scales, 8.2926e-4 .. 8.5239e-4, zero points 0, dimension 0. */
    assert_int_equal(w->q.nscale, 256);
    assert_int_equal(w->q.nzero, 256);
    assert_int_equal(w->q.quantized_dimension, 0);
    float lo = 1, hi = 0;
    for (uint32_t i = 0; i < 256; i++) {
        lo = fminf(lo, w->q.scale[i]);
        hi = fmaxf(hi, w->q.scale[i]);
        assert_int_equal(w->q.zero_point[i], 0);
    }
    assert_true(fabsf(lo - 8.2926e-4f) < 1e-7f && fabsf(hi - 8.5239e-4f) < 1e-7f);
    assert_true(fabsf(w->q.scale[0] - 8.4924e-4f) < 1e-7f);
    const npk_tfl_buffer *b = &t->buffers[2];
    assert_int_equal(b->size, 65536);
    assert_int_equal(b->offset, 488);
    assert_false(b->external);
    assert_ptr_equal(b->data, f.map.data + 488);
    assert_null(t->buffers[0].data);
    etpu_unload(&f);
}

/* split_concat's converter wrote deprecated_builtin_code 32 and builtin_code 0. */
static void test_deprecated_builtin_code(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("split_concat_edgetpu.tflite", &f);
    const npk_tfl_opcode *oc = &f.m.tfl.opcodes[0];
    assert_int_equal(oc->deprecated_builtin_code, 32);
    assert_int_equal(oc->builtin_code, 0);
    assert_int_equal(oc->builtin, NPK_TFL_OP_CUSTOM);
    const npk_tfl_subgraph *sg = &f.m.tfl.subgraphs[0];
    assert_int_equal(sg->ninputs, 3);
    assert_int_equal(sg->noutputs, 5);
    assert_string_equal(sg->tensors[sg->inputs[2]].name, "inputs/rnn2");
    assert_int_equal(sg->tensors[sg->inputs[2]].shape[3], 2);
    etpu_unload(&f);
    etpu_load("dense_256_edgetpu.tflite", &f);
    oc = &f.m.tfl.opcodes[0];
    assert_int_equal(oc->deprecated_builtin_code, 32);
    assert_int_equal(oc->builtin_code, 32);
    etpu_unload(&f);
}

/* The operators of the compiled models leave opcode_index out of their
 * tables: the reader must take the schema default 0, not skip them. */
static void test_opcode_index_default(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    npk_fb_buf b;
    npk_fb_table root, sg, op;
    npk_fb_vec v;
    npk_error err = {0};
    npk_fb_init(&b, f.map.data, f.map.size, 0, &err);
    assert_int_equal(npk_fb_root(&b, "TFL3", &root, &err), NPK_OK);
    npk_fb_vector(&root, 2, 4, &v, &err);
    npk_fb_vec_table(&v, 0, &sg, &err);
    npk_fb_vector(&sg, 3, 4, &v, &err);
    assert_int_equal(npk_fb_vec_table(&v, 0, &op, &err), NPK_OK);
    assert_false(npk_fb_present(&op, 0)); /* absent in the file */
    assert_int_equal(f.m.tfl.subgraphs[0].operators[0].opcode_index, 0);
    assert_non_null(f.m.tfl.subgraphs[0].operators[0].custom_options);
    etpu_unload(&f);
}

/* A model whose buffer data and custom options live after the flatbuffer
 * (Buffer.offset/size, Operator.large_custom_options_offset/size). */
static uint8_t *external_model(size_t *len, uint64_t data_off_delta, uint64_t opt_size_delta)
{
    npk_fbb b;
    npk_error err = {0};
    npk_fbb_init(&b);
    int32_t shape[1] = {16}, io0 = 0;
    npk_fbb_ref sv = npk_fbb_vector(&b, shape, 1, 4, 4);
    npk_fbb_ref nm = npk_fbb_string(&b, "w", 1);
    npk_fbb_table_start(&b);
    npk_fbb_add_ref(&b, 0, sv);
    npk_fbb_add_u8(&b, 1, NPK_TFL_UINT8);
    npk_fbb_add_u32(&b, 2, 1);
    npk_fbb_add_ref(&b, 3, nm);
    npk_fbb_ref ten = npk_fbb_table_end(&b);
    npk_fbb_ref tv = npk_fbb_vector_refs(&b, &ten, 1);
    npk_fbb_ref iv = npk_fbb_vector(&b, &io0, 1, 4, 4);
    npk_fbb_table_start(&b);
    npk_fbb_add_ref(&b, 1, iv);
    npk_fbb_add_ref(&b, 2, iv);
    npk_fbb_add_u64(&b, 9, 0xc0ffeec0ffeeull); /* marker, patched below */
    npk_fbb_add_u64(&b, 10, 8 + opt_size_delta);
    npk_fbb_ref op = npk_fbb_table_end(&b);
    npk_fbb_ref ov = npk_fbb_vector_refs(&b, &op, 1);
    npk_fbb_table_start(&b);
    npk_fbb_add_ref(&b, 0, tv);
    npk_fbb_add_ref(&b, 3, ov);
    npk_fbb_ref sg = npk_fbb_table_end(&b);
    npk_fbb_ref sgv = npk_fbb_vector_refs(&b, &sg, 1);
    npk_fbb_ref cc = npk_fbb_string(&b, "mine", 4);
    npk_fbb_table_start(&b);
    npk_fbb_add_ref(&b, 1, cc);
    npk_fbb_ref oc = npk_fbb_table_end(&b);
    npk_fbb_ref ocv = npk_fbb_vector_refs(&b, &oc, 1);
    npk_fbb_table_start(&b);
    npk_fbb_ref b0 = npk_fbb_table_end(&b);
    npk_fbb_table_start(&b);
    npk_fbb_add_u64(&b, 1, 0x5eed5eed5eedull); /* marker, patched below */
    npk_fbb_add_u64(&b, 2, 16);
    npk_fbb_ref b1 = npk_fbb_table_end(&b);
    npk_fbb_ref brefs[2] = {b0, b1};
    npk_fbb_ref bv = npk_fbb_vector_refs(&b, brefs, 2);
    npk_fbb_table_start(&b);
    npk_fbb_add_u32(&b, 0, 3);
    npk_fbb_add_ref(&b, 1, ocv);
    npk_fbb_add_ref(&b, 2, sgv);
    npk_fbb_add_ref(&b, 4, bv);
    uint8_t *fb;
    size_t fl;
    assert_int_equal(npk_fbb_finish(&b, npk_fbb_table_end(&b), "TFL3", &fb, &fl, &err), NPK_OK);
    npk_fbb_free(&b);
    /* Append 16 bytes of buffer data and 8 bytes of options; patch their offsets. */
    uint8_t *file = malloc(fl + 24);
    memcpy(file, fb, fl);
    for (int i = 0; i < 24; i++) file[fl + i] = (uint8_t)(0xa0 + i);
    free(fb);
    for (size_t i = 0; i + 8 <= fl; i++) {
        if (npk_ld64le(file + i) == 0x5eed5eed5eedull) npk_st64le(file + i, fl + data_off_delta);
    }
    for (size_t i = 0; i + 8 <= fl; i++)
        if (npk_ld64le(file + i) == 0xc0ffeec0ffeeull) npk_st64le(file + i, fl + 16);
    *len = fl + 24;
    return file;
}

static void test_external_buffers(void **state)
{
    (void)state;
    size_t len;
    uint8_t *file = external_model(&len, 0, 0);
    npk_tfl_model m;
    npk_error err = {0};
    assert_int_equal(npk_tfl_parse(file, len, &m, &err), NPK_OK);
    assert_int_equal(m.nbuffers, 2);
    assert_true(m.buffers[1].external);
    assert_int_equal(m.buffers[1].size, 16);
    assert_int_equal(m.buffers[1].offset, len - 24);
    assert_int_equal(m.buffers[1].data[0], 0xa0);
    const npk_tfl_operator *op = &m.subgraphs[0].operators[0];
    assert_int_equal(op->custom_options_len, 8);
    assert_int_equal(op->custom_options_offset, len - 8);
    assert_int_equal(op->custom_options[0], 0xb0);
    npk_tfl_free(&m);
    free(file);
    /* Data running past the end of the file. */
    file = external_model(&len, 9, 0);
    assert_int_equal(npk_tfl_parse(file, len, &m, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "buffer 1"));
    assert_non_null(strstr(err.msg, "outside"));
    free(file);
    npk_error_clear(&err);
    file = external_model(&len, 0, 1);
    assert_int_equal(npk_tfl_parse(file, len, &m, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "custom options"));
    free(file);
}

/* Indices stored in the file are validated; errors name where they are. */
static void test_bad_indices(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256.tflite", &f);
    /* Find operator 1's inputs vector [2, 1, -1] and make tensor index 2 -> 99. */
    const uint8_t want[12] = {2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    uint8_t *copy = malloc(f.map.size);
    memcpy(copy, f.map.data, f.map.size);
    size_t at = 0;
    for (size_t i = 4; i + 12 <= f.map.size; i++)
        if (!memcmp(copy + i, want, 12) && npk_ld32le(copy + i - 4) == 3) at = i;
    assert_true(at > 0);
    copy[at] = 99;
    npk_tfl_model m;
    npk_error err = {0};
    assert_int_equal(npk_tfl_parse(copy, f.map.size, &m, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "operator 1"));
    assert_non_null(strstr(err.msg, "tensor 99"));
    assert_true(err.has_offset);
    /* Not a TFLite file at all. */
    npk_error_clear(&err);
    copy[at] = 2;
    copy[4] = 'X';
    assert_int_equal(npk_tfl_parse(copy, f.map.size, &m, &err), NPK_E_FORMAT);
    assert_int_equal(err.offset, 4);
    free(copy);
    etpu_unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_hashes),       cmocka_unit_test(test_every_fixture_parses),
        cmocka_unit_test(test_dense_cpu_model),      cmocka_unit_test(test_deprecated_builtin_code),
        cmocka_unit_test(test_opcode_index_default), cmocka_unit_test(test_external_buffers),
        cmocka_unit_test(test_bad_indices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
