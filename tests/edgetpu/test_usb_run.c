/* The USB runtime against the emulated accelerator on the compiled fixture
 * models: the whole sequence for dense_256 (initialisation, parameter
 * caching, execution) with outputs equal to the reference executor's; a
 * repeated run that skips the parameter upload; a run after set-weights
 * (same token, other bytes) that does not; split_concat (three inputs, five
 * outputs in hint order different from the layer order); the LSTM (EO
 * parameters, no output step); output chunk boundaries at every offset. */
#include "etpu_usb_test.h"

/* What the device should answer for dense input x with weights w. */
static void dense_expect(const npk_etpu_model *m, const int8_t *w, const uint8_t *x, uint8_t *y)
{
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(m, &d, &err), NPK_OK);
    assert_int_equal(npk_etpu_dense_run_device(&d, w, x, 1, y, &err), NPK_OK);
    npk_etpu_dense_free(&d);
}

static int8_t *dense_weights(const npk_etpu_model *m)
{
    npk_etpu_dense d;
    npk_error err = {0};
    assert_int_equal(npk_etpu_dense_init(m, &d, &err), NPK_OK);
    int8_t *w = malloc(d.n * d.n);
    assert_int_equal(npk_etpu_dense_weights(&d, w, &err), NPK_OK);
    npk_etpu_dense_free(&d);
    return w;
}

static void test_dense_sequence(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    npk_etpu_run_info info;
    rig_open(&r, "dense_256_edgetpu.tflite", NULL);
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
    assert_true(s->csr_writes > 40 && s->csr_reads > 10); /* the init sequence went by */
    assert_int_equal(s->bulk_out + s->bulk_in, 0);

    int8_t *w = dense_weights(&r.f.m);
    uint8_t y[256];
    for (int run = 0; run < 3; run++) {
        uint64_t seed = 100 + (uint64_t)run;
        for (int i = 0; i < 256; i++) r.in[0][i] = (uint8_t)npk_rand(&seed);
        if (rig_run(&r, &info, &err)) rig_fail("run", &err);
        assert_no_violation(r.emu);
        assert_true(s->initialised);
        /* Parameters once: the first run caches them, the others skip the upload. */
        assert_int_equal(info.parameters_uploaded, run == 0);
        assert_int_equal(s->parameter_loads, 1);
        assert_int_equal(s->executions, (uint64_t)run + 1);
        assert_int_equal(s->frames[NPK_ETPU_TAG_PARAMETERS], 1);
        assert_int_equal(s->frames[NPK_ETPU_TAG_INSTRUCTIONS], (uint64_t)run + 2);
        assert_int_equal(s->frames[NPK_ETPU_TAG_INPUT], (uint64_t)run + 1);
        assert_int_equal(info.output_steps, 1);
        assert_int_equal(info.bytes_out, (run == 0 ? 1072 + 67584 : 0) + 4224 + 256);
        assert_int_equal(info.bytes_in, 256);
        dense_expect(&r.f.m, w, r.in[0], y);
        assert_memory_equal(r.out[0], y, 256);
    }
    /* The emulator computes from what it was sent: other weights, other output. */
    int8_t *w2 = malloc(65536);
    for (int i = 0; i < 65536; i++) w2[i] = (int8_t)(w[i] ^ 1);
    uint8_t y2[256];
    dense_expect(&r.f.m, w2, r.in[0], y2);
    assert_memory_not_equal(y, y2, 256);
    free(w2);
    free(w);
    rig_close(&r);
}

/* set-weights keeps the token; the runtime must still upload the new bytes. */
static void test_set_weights_not_skipped(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    npk_etpu_run_info info;
    rig_open(&r, "dense_256_edgetpu.tflite", NULL);
    if (rig_run(&r, &info, &err)) rig_fail("run", &err);
    assert_true(info.parameters_uploaded);

    npk_etpu_dense d;
    assert_int_equal(npk_etpu_dense_init(&r.f.m, &d, &err), NPK_OK);
    int8_t *w = malloc(65536);
    uint64_t seed = 5;
    for (int i = 0; i < 65536; i++) w[i] = (int8_t)(npk_rand(&seed) % 61 - 30);
    uint8_t *file;
    assert_int_equal(npk_etpu_dense_set_weights(&d, r.f.map.data, r.f.map.size, w, &file, &err),
                     NPK_OK);
    npk_etpu_dense_free(&d);
    npk_etpu_model m2;
    npk_etpu_plan p2;
    assert_int_equal(npk_etpu_parse(file, r.f.map.size, &m2, &err), NPK_OK);
    assert_int_equal(npk_etpu_plan_init(&m2, &p2, &err), NPK_OK);
    assert_true(p2.pc->parameter_caching_token == r.p.pc->parameter_caching_token);
    assert_true(p2.param_hash != r.p.param_hash);

    uint8_t y[256];
    if (npk_etpu_run(r.dev, &p2, (const uint8_t *const *)r.in, r.out, &info, &err))
        rig_fail("run new weights", &err);
    assert_no_violation(r.emu);
    assert_true(info.parameters_uploaded);
    dense_expect(&m2, w, r.in[0], y);
    assert_memory_equal(r.out[0], y, 256);
    /* Again: now cached. Back to the first model: uploaded again. */
    assert_int_equal(npk_etpu_run(r.dev, &p2, (const uint8_t *const *)r.in, r.out, &info, &err),
                     NPK_OK);
    assert_false(info.parameters_uploaded);
    assert_int_equal(rig_run(&r, &info, &err), NPK_OK);
    assert_true(info.parameters_uploaded);
    assert_int_equal(npk_etpu_emu_get_stats(r.emu)->parameter_loads, 3);
    npk_etpu_plan_free(&p2);
    npk_etpu_free(&m2);
    free(file);
    free(w);
    rig_close(&r);
}

/* split_concat: each input DMA reads its own layer; outputs arrive in hint
 * order (rnn1, split2, split0, split4, rnn2) and land in their own layers. */
static void check_split_concat(rig *r, uint64_t execution)
{
    const npk_etpu_executable *eo = r->p.eo;
    assert_int_equal(r->p.ninputs, 3);
    assert_int_equal(r->p.noutputs, 5);
    for (uint32_t i = 0; i < 3; i++) {
        size_t n;
        const uint8_t *got = npk_etpu_emu_input(r->emu, eo->inputs[i].name, &n);
        assert_non_null(got);
        assert_int_equal(n, eo->inputs[i].size_bytes);
        assert_memory_equal(got, r->in[i], n);
    }
    for (uint32_t k = 0; k < 5; k++) {
        size_t n = (size_t)eo->outputs[k].size_bytes;
        uint8_t *want = malloc(n);
        npk_etpu_emu_fill(eo->outputs[k].name, execution, want, n);
        assert_memory_equal(r->out[k], want, n);
        free(want);
    }
}

static void test_split_concat(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    npk_etpu_run_info info;
    rig_open(&r, "split_concat_edgetpu.tflite", NULL);
    /* The hint order is not the layer order. */
    assert_string_equal(r.p.eo->hints[4].meta.name, "outputs/rnn1");
    assert_string_equal(r.p.eo->outputs[0].name, "concat/split0");
    for (uint64_t run = 1; run <= 2; run++) {
        for (uint32_t i = 0; i < 3; i++)
            memset(r.in[i], (int)(0x10 * (i + 1) + run), r.p.eo->inputs[i].size_bytes);
        if (rig_run(&r, &info, &err)) rig_fail("run", &err);
        assert_no_violation(r.emu);
        assert_int_equal(info.output_steps, 5);
        check_split_concat(&r, run);
    }
    rig_close(&r);
}

/* keras_lstm: parameters in the EO executable, sent on every run; no output step. */
static void test_lstm(void **state)
{
    (void)state;
    rig r;
    npk_error err = {0};
    npk_etpu_run_info info;
    rig_open(&r, "keras_lstm_mnist_ptq_edgetpu.tflite", NULL);
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
    assert_int_equal(r.p.eo->parameters_size, 576);
    assert_int_equal(r.p.ninputs, 3);
    for (int run = 0; run < 2; run++) {
        if (rig_run(&r, &info, &err)) rig_fail("run", &err);
        assert_no_violation(r.emu);
        assert_int_equal(info.parameters_uploaded, run == 0);
        assert_int_equal(info.output_steps, 0);
        assert_int_equal(s->parameter_loads, 1);
        /* PC parameters once, EO parameters every run. */
        assert_int_equal(s->frames[NPK_ETPU_TAG_PARAMETERS], (uint64_t)run + 2);
        assert_int_equal(s->frames[NPK_ETPU_TAG_INPUT], 3 * ((uint64_t)run + 1));
        assert_int_equal(info.bytes_out,
                         (run == 0 ? 3152 + 43968 : 0) + 60864 + 576 + 784 + 24 + 40);
    }
    for (uint32_t i = 0; i < 3; i++) {
        size_t n;
        const uint8_t *got = npk_etpu_emu_input(r.emu, r.p.eo->inputs[i].name, &n);
        assert_non_null(got);
        assert_memory_equal(got, r.in[i], (size_t)r.p.eo->inputs[i].size_bytes);
    }
    assert_int_equal(r.p.output_steps[0], 0);
    rig_close(&r);
}

/* Output chunks of every size: the first chunk ends at every offset of the
 * output stream and the later ones follow every k bytes. */
static void test_chunk_boundaries(void **state)
{
    (void)state;
    npk_error err = {0};
    npk_etpu_run_info info;
    const size_t total = 5 * 256;
    for (size_t k = 1; k <= total; k++) {
        npk_etpu_emu_opts o = {.chunk_size = k, .first_chunk = k};
        rig r;
        rig_open(&r, "split_concat_edgetpu.tflite", &o);
        if (rig_run(&r, &info, &err)) fail_msg("chunk %zu: %s", k, err.msg);
        assert_no_violation(r.emu);
        const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
        assert_int_equal(s->output_bytes, total);
        assert_int_equal(info.bytes_in, total);
        /* One event read plus one read per chunk. */
        assert_int_equal(s->bulk_in, 2 + (total + k - 1) / k);
        check_split_concat(&r, 1);
        rig_close(&r);
    }
    /* And with 32 KiB chunks after a first chunk ending anywhere. */
    for (size_t k = 1; k <= 256; k++) {
        npk_etpu_emu_opts o = {.first_chunk = k};
        rig r;
        rig_open(&r, "dense_256_edgetpu.tflite", &o);
        if (rig_run(&r, &info, &err)) fail_msg("first chunk %zu: %s", k, err.msg);
        assert_no_violation(r.emu);
        int8_t *w = dense_weights(&r.f.m);
        uint8_t y[256];
        dense_expect(&r.f.m, w, r.in[0], y);
        assert_memory_equal(r.out[0], y, 256);
        free(w);
        rig_close(&r);
    }
}

/* Multi-dimensional output through the tables, and a layer larger than its values. */
static void test_relayout_and_dequant(void **state)
{
    (void)state;
    const char *models[] = {"gabor_64x64_p4_edgetpu.tflite", "looming_64x64_3x3_edgetpu.tflite"};
    for (int m = 0; m < 2; m++) {
        rig r;
        npk_error err = {0};
        rig_open(&r, models[m], NULL);
        if (rig_run(&r, NULL, &err)) rig_fail("run", &err);
        assert_no_violation(r.emu);
        const npk_etpu_layer *l = &r.p.eo->outputs[0];
        size_t n = (size_t)l->size_bytes, count, elem;
        uint8_t *dev = malloc(n);
        npk_etpu_emu_fill(l->name, 1, dev, n);
        assert_memory_equal(r.out[0], dev, n);
        assert_true(npk_etpu_layer_count(l, &count, &elem));
        uint8_t *yxz = malloc(count);
        assert_int_equal(npk_etpu_relayout(l, dev, n, yxz, count, &err), NPK_OK);
        npk_tensor t, raw;
        const npk_tfl_tensor *tt = npk_etpu_layer_tensor(&r.f.m, l);
        assert_non_null(tt);
        int64_t shape[8];
        for (uint32_t d = 0; d < tt->ndim; d++) shape[d] = tt->shape[d];
        assert_int_equal(
            npk_etpu_layer_to_tensor(l, r.out[0], n, false, shape, (int)tt->ndim, &t, &err),
            NPK_OK);
        assert_int_equal(npk_etpu_layer_to_tensor(l, r.out[0], n, true, NULL, 0, &raw, &err),
                         NPK_OK);
        assert_int_equal(t.ndim, (int)tt->ndim);
        assert_int_equal(raw.ndim, 3);
        assert_int_equal(raw.dtype, NPK_U8);
        for (size_t i = 0; i < count; i++) {
            assert_int_equal(((uint8_t *)raw.data)[i], yxz[i]);
            float want = (float)(((double)yxz[i] - l->zero_point) * l->dequantization_factor);
            assert_true(((float *)t.data)[i] == want);
        }
        npk_tensor_free(&t);
        npk_tensor_free(&raw);
        free(yxz);
        free(dev);
        rig_close(&r);
    }
}

/* The SYNTHETIC model (zero bitstreams) runs on the emulator too (demo). */
static void test_synthetic(void **state)
{
    (void)state;
    npk_etpu_synth_opts so = {.n = 128};
    uint8_t *buf;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_etpu_synth_dense(&so, &buf, &len, &err), NPK_OK);
    npk_etpu_model m;
    npk_etpu_plan p;
    npk_etpu_emu *emu;
    npk_etpu_device *dev;
    assert_int_equal(npk_etpu_parse(buf, len, &m, &err), NPK_OK);
    assert_int_equal(npk_etpu_plan_init(&m, &p, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_new(NULL, &emu, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &m, &err), NPK_OK);
    assert_int_equal(npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err), NPK_OK);
    uint8_t x[128], y[128], want[128];
    for (int i = 0; i < 128; i++) x[i] = (uint8_t)(i * 7);
    const uint8_t *in[1] = {x};
    uint8_t *out[1] = {y};
    if (npk_etpu_run(dev, &p, in, out, NULL, &err)) rig_fail("run", &err);
    assert_no_violation(emu);
    int8_t *w = dense_weights(&m);
    dense_expect(&m, w, x, want);
    assert_memory_equal(y, want, 128);
    free(w);
    npk_etpu_close(dev);
    npk_etpu_emu_free(emu);
    npk_etpu_plan_free(&p);
    npk_etpu_free(&m);
    free(buf);
}

/* Tensors to device bytes: signed types travel offset by 0x80 / 0x8000,
 * floats are quantised with the layer's numerics (LSTM state layers). */
static void test_tensor_conversion(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("keras_lstm_mnist_ptq_edgetpu.tflite", &f);
    const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    const npk_etpu_layer *l8 = &eo->inputs[1], *l16 = &eo->inputs[2];
    assert_int_equal(l8->data_type, NPK_ETPU_SIGNED_FIXED_POINT8);
    assert_int_equal(l16->data_type, NPK_ETPU_SIGNED_FIXED_POINT16);
    /* The TFLite zero points are the layer's minus the offset. */
    const npk_tfl_tensor *t8 = npk_etpu_layer_tensor(&f.m, l8),
                         *t16 = npk_etpu_layer_tensor(&f.m, l16);
    assert_non_null(t8);
    assert_non_null(t16);
    assert_int_equal(t8->q.zero_point[0] + 128, l8->zero_point);
    assert_int_equal(t16->q.zero_point[0] + 32768, l16->zero_point);
    npk_error err = {0};
    npk_tensor t;
    int64_t shape[2] = {1, 20};
    uint8_t dev[64];
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_I8, 2, shape, &err), NPK_OK);
    for (int i = 0; i < 20; i++) ((int8_t *)t.data)[i] = (int8_t)(i * 13 - 128);
    assert_int_equal(npk_etpu_layer_from_tensor(l8, &t, dev, 24, &err), NPK_OK);
    for (int i = 0; i < 20; i++) assert_int_equal(dev[i], (uint8_t)(i * 13 - 128) ^ 0x80);
    for (int i = 20; i < 24; i++) assert_int_equal(dev[i], 0);
    npk_tensor_free(&t);
    /* float -> int16 layer: q = round(x / s) + 32768 on the bus (LE). */
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_F32, 2, shape, &err), NPK_OK);
    for (int i = 0; i < 20; i++) ((float *)t.data)[i] = (float)((i - 10) * 0.1);
    assert_int_equal(npk_etpu_layer_from_tensor(l16, &t, dev, 40, &err), NPK_OK);
    for (int i = 0; i < 20; i++) {
        double q = nearbyint((double)(float)((i - 10) * 0.1) / l16->dequantization_factor) + 32768;
        assert_int_equal(npk_ld16le(dev + 2 * i), (uint16_t)q);
    }
    /* Back: raw int16 is the TFLite value, float is dequantised. */
    npk_tensor back;
    npk_etpu_layer lo = *l16; /* as an output layer without tiling */
    lo.has_layout = false;
    assert_int_equal(npk_etpu_layer_to_tensor(&lo, dev, 40, true, shape, 2, &back, &err), NPK_OK);
    assert_int_equal(back.dtype, NPK_I16);
    for (int i = 0; i < 20; i++)
        assert_int_equal(((int16_t *)back.data)[i], (int16_t)(npk_ld16le(dev + 2 * i) ^ 0x8000));
    npk_tensor_free(&back);
    /* Wrong element count and wrong integer type are refused. */
    npk_tensor_free(&t);
    int64_t bad[1] = {19};
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_F32, 1, bad, &err), NPK_OK);
    assert_int_equal(npk_etpu_layer_from_tensor(l16, &t, dev, 40, &err), NPK_E_ARG);
    npk_tensor_free(&t);
    npk_error e2 = {0};
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_U8, 2, shape, &e2), NPK_OK);
    assert_int_equal(npk_etpu_layer_from_tensor(l16, &t, dev, 40, &e2), NPK_E_ARG);
    assert_non_null(strstr(e2.msg, "i16"));
    npk_tensor_free(&t);
    etpu_unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_sequence),   cmocka_unit_test(test_set_weights_not_skipped),
        cmocka_unit_test(test_split_concat),     cmocka_unit_test(test_lstm),
        cmocka_unit_test(test_chunk_boundaries), cmocka_unit_test(test_relayout_and_dequant),
        cmocka_unit_test(test_synthetic),        cmocka_unit_test(test_tensor_conversion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
