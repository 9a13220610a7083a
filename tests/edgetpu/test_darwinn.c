/* The Edge TPU custom op of every fixture: FlexBuffer keys, the DWN1
 * package, [EO, PC] executables, bitstreams and field offsets, parameters,
 * DMA hints and layers, against docs/edgetpu.md (reference section 4). */
#include "etpu_test.h"

typedef struct fact {
    const char *file;
    size_t eo_bits, eo_fields, eo_params, pc_bits, pc_params;
    size_t package_size, package_at; /* package bytes and their offset in custom_options */
    int min_runtime;
    const char *compiler;
    bool chip_keys; /* keys "6" = [18] and "7" = [] */
    uint32_t ninputs, noutputs;
} fact;

static const fact FACTS[] = {
    {"dense_256_edgetpu.tflite", 4224, 8, 0, 1072, 67584, 102400, 8, 14, "cl/", true, 1, 1},
    {"gabor_64x64_p4_edgetpu.tflite", 7040, 8, 0, 688, 3200, 36864, 6, 14, "cl/", true, 1, 1},
    {"looming_64x64_3x3_edgetpu.tflite", 20320, 8, 0, 944, 1024, 53248, 6, 14, "cl/", true, 1, 1},
    {"keras_lstm_mnist_ptq_edgetpu.tflite", 60864, 16, 576, 3152, 43968, 139264, 8, 12, "cl/", true,
     3, 3},
    {"split_concat_edgetpu.tflite", 23648, 20, 0, 1232, 192, 57344, 6, 13, "cl/343520747", false, 3,
     5},
};

static void test_structure_of_every_fixture(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof FACTS / sizeof FACTS[0]; i++) {
        const fact *x = &FACTS[i];
        etpu_fx f;
        etpu_load(x->file, &f);
        const npk_etpu_op *op = &f.m.ops[0];
        const npk_tfl_operator *top = &f.m.tfl.subgraphs[0].operators[op->op];
        assert_int_equal(op->version, 0);
        assert_int_equal(op->execution_preference, -1);
        assert_null(op->chip_name);
        assert_false(op->has_legacy_pc);
        if (x->chip_keys) {
            assert_int_equal(op->nchips, 1);
            assert_int_equal(op->chips[0], 18);
        } else {
            assert_int_equal(op->nchips, 0);
        }
        assert_int_equal(op->npackages, 1);
        const npk_etpu_package *p = &op->packages[0];
        assert_int_equal(p->size, x->package_size);
        assert_int_equal(p->size % 4096, 0);
        assert_int_equal(p->offset - top->custom_options_offset, x->package_at);
        assert_memory_equal(f.map.data + p->offset + 4, "DWN1", 4);
        assert_int_equal(p->min_runtime_version, x->min_runtime);
        assert_string_equal(p->compiler_version, x->compiler);
        assert_int_equal(p->nmulti_chip, 0);
        /* MultiExecutable = [EO, PC], same token, chip "beagle". */
        assert_int_equal(p->nexecutables, 2);
        const npk_etpu_executable *eo = &p->executables[0], *pc = &p->executables[1];
        assert_int_equal(eo->type, NPK_ETPU_EXECUTION_ONLY);
        assert_int_equal(pc->type, NPK_ETPU_PARAMETER_CACHING);
        assert_true(eo->parameter_caching_token == pc->parameter_caching_token);
        assert_true(eo->parameter_caching_token != 0);
        assert_string_equal(eo->chip, "beagle");
        assert_string_equal(pc->chip, "beagle");
        assert_int_equal(eo->nbitstreams, 1);
        assert_int_equal(pc->nbitstreams, 1);
        assert_int_equal(eo->bitstreams[0].size, x->eo_bits);
        assert_int_equal(eo->bitstreams[0].nfields, x->eo_fields);
        assert_int_equal(pc->bitstreams[0].size, x->pc_bits);
        assert_int_equal(pc->bitstreams[0].nfields, 2);
        assert_int_equal(eo->parameters_size, x->eo_params);
        assert_int_equal(pc->parameters_size, x->pc_params);
        assert_int_equal(eo->ninputs, x->ninputs);
        assert_int_equal(eo->noutputs, x->noutputs);
        assert_int_equal(pc->ninputs + pc->noutputs, 0);
        /* Every bitstream is whole 128-bit words; every immediate sits at bit 70 of
         * a word and is 0 as shipped; each address has a LOWER and an UPPER entry. */
        for (int e = 0; e < 2; e++) {
            const npk_etpu_bitstream *bs = &p->executables[e].bitstreams[0];
            assert_int_equal(bs->size % 16, 0);
            int lower[4] = {0}, upper[4] = {0};
            for (uint32_t k = 0; k < bs->nfields; k++) {
                const npk_etpu_field_offset *fo = &bs->fields[k];
                uint32_t v = 1;
                npk_error err = {0};
                assert_int_equal(fo->offset_bit % 128, 70);
                assert_int_equal(
                    npk_etpu_get_bits32(bs->data, bs->size, (uint64_t)fo->offset_bit, &v, &err),
                    NPK_OK);
                assert_int_equal(v, 0);
                assert_true(fo->meta.desc >= 0 && fo->meta.desc <= 3);
                (fo->meta.position ? upper : lower)[fo->meta.desc]++;
            }
            for (int d = 0; d < 4; d++) assert_int_equal(lower[d], upper[d]);
        }
        /* Every DMA hint names a layer that exists (the parser checked it too). */
        for (uint32_t h = 0; h < eo->nhints; h++) {
            const npk_etpu_dma_hint *d = &eo->hints[h];
            if (d->kind == NPK_ETPU_HINT_DMA && d->meta.desc != NPK_ETPU_DESC_PARAMETER)
                assert_non_null(npk_etpu_hint_layer(eo, d));
        }
        /* PC: instruction chunk 0, the whole parameter blob, interrupt 0. */
        assert_int_equal(pc->nhints, 3);
        assert_int_equal(pc->hints[0].kind, NPK_ETPU_HINT_INSTRUCTION);
        assert_int_equal(pc->hints[1].kind, NPK_ETPU_HINT_DMA);
        assert_int_equal(pc->hints[1].meta.desc, NPK_ETPU_DESC_PARAMETER);
        assert_int_equal(pc->hints[1].size_in_bytes, (int)x->pc_params);
        assert_int_equal(pc->hints[2].kind, NPK_ETPU_HINT_INTERRUPT);
        assert_int_equal(pc->hints[2].interrupt_type, 0);
        etpu_unload(&f);
    }
}

static void test_dense_256(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    const npk_etpu_executable *pc = etpu_exec(&f.m, NPK_ETPU_PARAMETER_CACHING);
    assert_true(eo->parameter_caching_token == 0xFCE222D70D502FB8ull);
    static const struct {
        int32_t bit;
        int desc, pos;
    } want[] = {{582, NPK_ETPU_DESC_PARAMETER, NPK_ETPU_LOWER_32BIT},
                {710, NPK_ETPU_DESC_PARAMETER, NPK_ETPU_UPPER_32BIT},
                {838, NPK_ETPU_DESC_SCRATCH, NPK_ETPU_LOWER_32BIT},
                {966, NPK_ETPU_DESC_SCRATCH, NPK_ETPU_UPPER_32BIT},
                {1862, NPK_ETPU_DESC_INPUT, NPK_ETPU_UPPER_32BIT},
                {1990, NPK_ETPU_DESC_INPUT, NPK_ETPU_LOWER_32BIT},
                {25414, NPK_ETPU_DESC_OUTPUT, NPK_ETPU_UPPER_32BIT},
                {25542, NPK_ETPU_DESC_OUTPUT, NPK_ETPU_LOWER_32BIT}};
    const npk_etpu_bitstream *bs = &eo->bitstreams[0];
    for (int i = 0; i < 8; i++) {
        assert_int_equal(bs->fields[i].offset_bit, want[i].bit);
        assert_int_equal(bs->fields[i].meta.desc, want[i].desc);
        assert_int_equal(bs->fields[i].meta.position, want[i].pos);
        assert_int_equal(bs->fields[i].meta.batch, 0);
    }
    assert_string_equal(bs->fields[4].meta.name, "serving_default_keras_tensor:0");
    assert_string_equal(bs->fields[7].meta.name, "StatefulPartitionedCall_1:0");
    assert_int_equal(pc->bitstreams[0].fields[0].offset_bit, 582);
    assert_int_equal(pc->bitstreams[0].fields[1].offset_bit, 710);
    /* PC parameters: 67,584 bytes at file offset 12,584 with a known hash. */
    assert_int_equal(pc->parameters_offset, 12584);
    assert_ptr_equal(pc->parameters, f.map.data + 12584);
    sha_is(pc->parameters, pc->parameters_size,
           "a24433d6c22aaf08a1ad8682010dfce5c370e0daa28cd668dabbe425089c1a0b");
    /* EO hints: instruction, input 256, output 256, interrupt. */
    assert_int_equal(eo->nhints, 4);
    assert_true(eo->fully_deterministic);
    assert_int_equal(eo->hints[0].kind, NPK_ETPU_HINT_INSTRUCTION);
    assert_int_equal(eo->hints[0].instruction_chunk_index, 0);
    assert_int_equal(eo->hints[1].direction, NPK_ETPU_INFEED);
    assert_int_equal(eo->hints[1].meta.desc, NPK_ETPU_DESC_INPUT);
    assert_int_equal(eo->hints[1].size_in_bytes, 256);
    assert_int_equal(eo->hints[2].direction, NPK_ETPU_OUTFEED);
    assert_int_equal(eo->hints[2].meta.desc, NPK_ETPU_DESC_OUTPUT);
    assert_int_equal(eo->hints[2].size_in_bytes, 256);
    assert_int_equal(eo->hints[3].kind, NPK_ETPU_HINT_INTERRUPT);
    /* Layers: [1, 256] uint8, zp 127 / 0.00784303 -> zp 129 / 0.0190489. */
    const npk_etpu_layer *in = &eo->inputs[0], *out = &eo->outputs[0];
    assert_int_equal(in->size_bytes, 256);
    assert_int_equal(in->z_dim, 256);
    assert_int_equal(in->y_dim * in->x_dim, 1);
    assert_int_equal(in->data_type, NPK_ETPU_FIXED_POINT8);
    assert_int_equal(in->zero_point, 127);
    assert_true(fabsf(in->dequantization_factor - 0.00784303f) < 1e-8f);
    assert_int_equal(in->layer_kind, 2);
    assert_int_equal(out->zero_point, 129);
    assert_true(fabsf(out->dequantization_factor - 0.0190489f) < 1e-7f);
    assert_int_equal(out->layer_kind, 1);
    assert_int_equal(out->ndims, 2);
    assert_int_equal(out->shape[1].start, 0);
    assert_int_equal(out->shape[1].end, 255);
    assert_true(out->has_layout);
    assert_int_equal(eo->batch_size, 1);
    assert_int_equal(eo->scratch_size_bytes, 0);
    assert_string_equal(eo->name, "model");
    etpu_unload(&f);
}

/* keras_lstm: EO parameters, scratch, no output step and no interrupt. */
static void test_keras_lstm(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("keras_lstm_mnist_ptq_edgetpu.tflite", &f);
    const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    assert_int_equal(eo->parameters_size, 576);
    assert_int_equal(eo->scratch_size_bytes, 672);
    assert_false(eo->fully_deterministic);
    bool param_dma = false;
    for (uint32_t h = 0; h < eo->nhints; h++) {
        const npk_etpu_dma_hint *d = &eo->hints[h];
        assert_int_equal(d->direction, NPK_ETPU_INFEED); /* no output step */
        assert_true(d->kind != NPK_ETPU_HINT_INTERRUPT);
        if (d->kind == NPK_ETPU_HINT_DMA && d->meta.desc == NPK_ETPU_DESC_PARAMETER)
            param_dma = d->size_in_bytes == 576;
    }
    assert_true(param_dma);
    /* 28x28 uint8 image, 20 int8 state values, 20 int16 state values. */
    assert_int_equal(eo->inputs[0].x_dim * eo->inputs[0].z_dim, 784);
    assert_int_equal(eo->inputs[0].data_type, NPK_ETPU_FIXED_POINT8);
    assert_int_equal(eo->inputs[1].z_dim, 20);
    assert_int_equal(eo->inputs[1].data_type, NPK_ETPU_SIGNED_FIXED_POINT8);
    assert_int_equal(eo->inputs[2].z_dim, 20);
    assert_int_equal(eo->inputs[2].data_type, NPK_ETPU_SIGNED_FIXED_POINT16);
    assert_int_equal(eo->outputs[0].z_dim, 10);
    assert_int_equal(eo->outputs[1].z_dim, 20);
    assert_int_equal(eo->outputs[2].data_type, NPK_ETPU_SIGNED_FIXED_POINT16);
    etpu_unload(&f);
}

/* split_concat: three named input DMAs at offset 0, five output DMAs whose
 * order differs from output_layers; outputs 256 B for 64-byte tensors. */
static void test_split_concat(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("split_concat_edgetpu.tflite", &f);
    const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    static const char *const in_hints[] = {"input1", "inputs/rnn1", "inputs/rnn2"};
    static const char *const out_hints[] = {"outputs/rnn1", "concat/split2", "concat/split0",
                                            "concat/split4", "outputs/rnn2"};
    static const char *const out_layers[] = {"concat/split0", "outputs/rnn1", "concat/split2",
                                             "concat/split4", "outputs/rnn2"};
    static const int32_t in_sizes[] = {192, 64, 128}, in_z[] = {3, 1, 2};
    int ni = 0, no = 0;
    for (uint32_t h = 0; h < eo->nhints; h++) {
        const npk_etpu_dma_hint *d = &eo->hints[h];
        if (d->kind != NPK_ETPU_HINT_DMA) continue;
        assert_int_equal(d->offset_in_bytes, 0);
        if (d->meta.desc == NPK_ETPU_DESC_INPUT) {
            assert_string_equal(d->meta.name, in_hints[ni]);
            assert_int_equal(d->size_in_bytes, in_sizes[ni]);
            ni++;
        } else {
            assert_int_equal(d->meta.desc, NPK_ETPU_DESC_OUTPUT);
            assert_string_equal(d->meta.name, out_hints[no++]);
            assert_int_equal(d->size_in_bytes, 256);
        }
    }
    assert_int_equal(ni, 3);
    assert_int_equal(no, 5);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(eo->inputs[i].name, in_hints[i]);
        assert_int_equal(eo->inputs[i].y_dim, 8);
        assert_int_equal(eo->inputs[i].x_dim, 8);
        assert_int_equal(eo->inputs[i].z_dim, in_z[i]);
    }
    for (int i = 0; i < 5; i++) {
        assert_string_equal(eo->outputs[i].name, out_layers[i]);
        assert_int_equal(eo->outputs[i].size_bytes, 256);
        assert_true(eo->outputs[i].has_layout);
    }
    etpu_unload(&f);
}

static void test_gabor_and_looming(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("gabor_64x64_p4_edgetpu.tflite", &f);
    const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    assert_int_equal(eo->inputs[0].size_bytes, 4096);
    assert_int_equal(eo->inputs[0].y_dim, 64);
    assert_int_equal(eo->inputs[0].x_dim, 64);
    assert_int_equal(eo->inputs[0].z_dim, 1);
    assert_int_equal(eo->outputs[0].size_bytes, 2048);
    assert_int_equal(eo->outputs[0].y_dim, 16);
    assert_int_equal(eo->outputs[0].x_dim, 16);
    assert_int_equal(eo->outputs[0].z_dim, 8);
    assert_int_equal(eo->outputs[0].ndims, 4);
    assert_int_equal(eo->outputs[0].shape[3].end, 7);
    etpu_unload(&f);
    etpu_load("looming_64x64_3x3_edgetpu.tflite", &f);
    eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    const npk_etpu_layer *out = &eo->outputs[0];
    assert_int_equal(out->size_bytes, 16); /* 9 values in a 16-byte layer */
    assert_int_equal(out->z_dim, 9);
    assert_true(fabsf(out->dequantization_factor - 71.6336f) < 1e-3f);
    bool big = false;
    for (uint32_t k = 0; k < eo->bitstreams[0].nfields; k++)
        big |= eo->bitstreams[0].fields[k].offset_bit == 156486 ||
               eo->bitstreams[0].fields[k].offset_bit == 156614;
    assert_true(big);
    etpu_unload(&f);
}

/* The synthetic model has the structure the tests above check, built by us. */
static void test_synthetic_model(void **state)
{
    (void)state;
    for (size_t n = 64; n <= 512; n *= 2) {
        for (int w = 0; w <= 8; w = w ? w * 2 : 1) {
            npk_etpu_synth_opts o = {.n = n, .flex_width = w, .chip_keys = w == 4};
            uint8_t *buf;
            size_t len;
            npk_error err = {0};
            npk_status st = npk_etpu_synth_dense(&o, &buf, &len, &err);
            if (st) { /* a package too large for a narrow forced width */
                assert_int_equal(st, NPK_E_LIMIT);
                assert_true(w == 1 || w == 2);
                continue;
            }
            npk_etpu_model m;
            assert_int_equal(npk_etpu_parse(buf, len, &m, &err), NPK_OK);
            assert_int_equal(m.nops, 1);
            assert_int_equal(m.ops[0].nchips, w == 4 ? 1 : 0);
            const npk_etpu_executable *eo = etpu_exec(&m, NPK_ETPU_EXECUTION_ONLY);
            const npk_etpu_executable *pc = etpu_exec(&m, NPK_ETPU_PARAMETER_CACHING);
            assert_int_equal(pc->parameters_size, npk_etpu_blob_size(n, n));
            assert_true(eo->parameter_caching_token == pc->parameter_caching_token);
            assert_int_equal(eo->bitstreams[0].nfields, 8);
            assert_int_equal(eo->bitstreams[0].fields[7].offset_bit, 25542);
            assert_int_equal(eo->inputs[0].size_bytes, (int32_t)n);
            assert_int_equal(m.tfl.subgraphs[0].operators[0].opcode_index, 0);
            npk_etpu_dense d;
            assert_int_equal(npk_etpu_dense_init(&m, &d, &err), NPK_OK);
            assert_int_equal(d.n, n);
            int8_t *wts = malloc(n * n);
            assert_int_equal(npk_etpu_dense_weights(&d, wts, &err), NPK_OK);
            for (size_t r = 0; r < n; r += 7)
                for (size_t c = 0; c < n; c += 5)
                    assert_int_equal(wts[r * n + c], (int8_t)((7 * r + 13 * c) % 256 - 128));
            free(wts);
            npk_etpu_dense_free(&d);
            npk_etpu_free(&m);
            free(buf);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure_of_every_fixture),
        cmocka_unit_test(test_dense_256),
        cmocka_unit_test(test_keras_lstm),
        cmocka_unit_test(test_split_concat),
        cmocka_unit_test(test_gabor_and_looming),
        cmocka_unit_test(test_synthetic_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
