/* Pipelines, co-compiled models and several Edge TPU ops in one graph, on
 * the emulated accelerator: the SSD segment pair (segment 0 -> segment 1 by
 * tensor name, one caching token for both), switching between models on one
 * device, the two segments' ops in one model, real values from a stand-in
 * CPU model (the pair has no uncompiled twin), and the errors a user meets
 * before anything reaches a device. */
#include "ssd_standin.h"

#define SEG0 "ssd_mobilenet_v1_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"
#define SEG1 "ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"

/* Whether the interpreter has TFLite_Detection_PostProcess yet (segment 1's tail). */
static bool tail_supported(const gfx *s1)
{
    char why[200];
    return npk_tfl_op_supported(&s1->m.tfl, 0, 3, why, sizeof why);
}

/* Segment 1 cut at its Edge TPU op's outputs (while the tail is missing). */
static void seg1_cut(const gfx *s1, int32_t cut[2])
{
    cut[0] = gfx_find(&s1->m.tfl, "Squeeze1");
    cut[1] = gfx_find(&s1->m.tfl, "convert_scores");
}

typedef struct prig {
    gfx s0, s1;
    npk_etpu_emu *emu;
    npk_etpu_device *dev;
    npk_etpu_graph *g0, *g1;
    npk_etpu_pipeline *p;
    bool whole;
} prig;

/* cut: segment 1 ends at its Edge TPU outputs even when the tail runs. */
static void prig_open(prig *r, const npk_tfl_model *cpu, bool cut_tail)
{
    npk_error err = {0};
    memset(r, 0, sizeof *r);
    gfx_load(SEG0, &r->s0);
    gfx_load(SEG1, &r->s1);
    r->whole = !cut_tail && tail_supported(&r->s1);
    int32_t cut[2];
    seg1_cut(&r->s1, cut);
    npk_etpu_graph_opts o1 = {.threads = GTEST_THREADS, .outputs = cut, .noutputs = 2};
    if (r->whole) o1.noutputs = 0;
    const npk_etpu_graph_opts o0 = {.threads = GTEST_THREADS};
    if (npk_etpu_emu_new(NULL, &r->emu, &err) || npk_etpu_emu_add_model(r->emu, &r->s0.m, &err) ||
        npk_etpu_emu_add_model(r->emu, &r->s1.m, &err))
        gfx_fail("emulator", &err);
    if (cpu && (npk_etpu_emu_set_cpu_model(r->emu, &r->s0.m, cpu, GTEST_THREADS, &err) ||
                npk_etpu_emu_set_cpu_model(r->emu, &r->s1.m, cpu, GTEST_THREADS, &err)))
        gfx_fail("CPU model", &err);
    if (npk_etpu_open(npk_etpu_emu_transport(r->emu), NULL, &r->dev, &err)) gfx_fail("open", &err);
    if (npk_etpu_graph_new(&r->s0.m, &o0, &r->g0, &err) ||
        npk_etpu_graph_new(&r->s1.m, &o1, &r->g1, &err))
        gfx_fail("graph", &err);
    npk_etpu_graph *gs[2] = {r->g0, r->g1};
    if (npk_etpu_pipeline_new(gs, 2, &r->p, &err)) gfx_fail("pipeline", &err);
}

static void prig_close(prig *r)
{
    npk_etpu_pipeline_free(r->p);
    npk_etpu_graph_free(r->g0);
    npk_etpu_graph_free(r->g1);
    npk_etpu_close(r->dev);
    npk_etpu_emu_free(r->emu);
    gfx_unload(&r->s0);
    gfx_unload(&r->s1);
}

static void prig_invoke(prig *r, uint32_t uploads)
{
    npk_error err = {0};
    npk_etpu_graph_info info;
    if (npk_etpu_pipeline_invoke(r->p, r->dev, &info, &err)) gfx_fail("pipeline", &err);
    assert_int_equal(info.device_runs, 2);
    assert_int_equal(info.parameter_uploads, uploads);
}

/* Segment 0's outputs reach segment 1's input layers byte for byte (the
 * emulator's filler values), and the co-compiled pair loads its parameters
 * once: two regions under one token. */
static void ssd_pipeline(void **state)
{
    (void)state;
    npk_error err = {0};
    prig r;
    prig_open(&r, NULL, false);
    assert_int_equal(npk_etpu_pipeline_ninputs(r.p), 1);
    assert_int_equal(npk_etpu_pipeline_noutputs(r.p), r.whole ? 4 : 2);
    assert_int_equal(npk_etpu_graph_plan(r.g0, 0)->eo->parameter_caching_token,
                     npk_etpu_graph_plan(r.g1, 0)->eo->parameter_caching_token);
    npk_tfl_view in;
    assert_int_equal(npk_etpu_pipeline_input(r.p, 0, &in, &err), NPK_OK);
    assert_string_equal(in.name, "normalized_input_image_tensor");
    for (int k = 0; k < 3; k++) {
        view_random(&in, 40 + (uint64_t)k);
        prig_invoke(&r, k == 0 ? 2 : 0);
        /* What segment 1's executable received is what segment 0 produced. */
        const npk_tfl_interp *i0 = npk_etpu_graph_interp(r.g0);
        for (uint32_t o = 0; o < 2; o++) {
            npk_tfl_view v;
            size_t n = 0;
            assert_int_equal(npk_tfl_interp_output(i0, o, &v, &err), NPK_OK);
            const uint8_t *got = npk_etpu_emu_input(r.emu, v.name, &n);
            assert_non_null(got);
            assert_true(n >= v.bytes);
            assert_memory_equal(got, v.data, v.bytes);
        }
    }
    const npk_etpu_emu_stats *s = npk_etpu_emu_get_stats(r.emu);
    assert_int_equal(s->parameter_loads, 2);
    assert_int_equal(s->executions, 6);
    assert_null(npk_etpu_emu_violation(r.emu));
    prig_close(&r);
}

static npk_etpu_graph *graph_of(gfx *f, const int32_t *cut, uint32_t ncut)
{
    npk_error err = {0};
    npk_etpu_graph *g = NULL;
    const npk_etpu_graph_opts o = {.threads = GTEST_THREADS, .outputs = cut, .noutputs = ncut};
    if (npk_etpu_graph_new(&f->m, &o, &g, &err)) gfx_fail("graph", &err);
    return g;
}

static uint32_t uploads(npk_etpu_graph *g, npk_etpu_device *dev)
{
    npk_error err = {0};
    npk_etpu_graph_info info;
    if (npk_etpu_graph_invoke(g, dev, &info, &err)) gfx_fail("invoke", &err);
    return info.parameter_uploads;
}

/* One device, three models: the co-compiled segments keep each other's
 * parameters; a model with another token drops them. */
static void cocompiled_switch(void **state)
{
    (void)state;
    npk_error err = {0};
    gfx s0, s1, mn;
    gfx_load(SEG0, &s0);
    gfx_load(SEG1, &s1);
    gfx_load("mobilenet_v1_0.5_160_quant_edgetpu.tflite", &mn);
    int32_t cut[2];
    seg1_cut(&s1, cut);
    npk_etpu_emu *emu = NULL;
    npk_etpu_device *dev = NULL;
    assert_int_equal(npk_etpu_emu_new(NULL, &emu, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &s0.m, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &s1.m, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &mn.m, &err), NPK_OK);
    assert_int_equal(npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err), NPK_OK);
    npk_etpu_graph *g0 = graph_of(&s0, NULL, 0), *g1 = graph_of(&s1, cut, 2),
                   *gm = graph_of(&mn, NULL, 0);
    const uint32_t want[] = {1, 1, 0, 0, 1, 1, 1, 0, 0};
    npk_etpu_graph *seq[] = {g0, g1, g0, g1, gm, g0, g1, g1, g0};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(uploads(seq[i], dev), want[i]);
    assert_int_equal(npk_etpu_emu_get_stats(emu)->parameter_loads, 5);
    assert_null(npk_etpu_emu_violation(emu));
    /* Forgetting (e.g. after a reset) uploads again. */
    npk_etpu_forget_parameters(dev);
    assert_int_equal(uploads(g1, dev), 1);
    npk_etpu_graph_free(g0);
    npk_etpu_graph_free(g1);
    npk_etpu_graph_free(gm);
    npk_etpu_close(dev);
    npk_etpu_emu_free(emu);
    gfx_unload(&s0);
    gfx_unload(&s1);
    gfx_unload(&mn);
}

/* A copy of a compiled model's tensor into a builder. */
static int32_t copy_tensor(npk_tflb *b, const npk_tfl_model *m, int32_t i)
{
    const npk_tfl_tensor *t = &m->subgraphs[0].tensors[i];
    npk_tflb_tensor d = {.name = t->name, .type = t->type, .ndim = t->ndim, .shape = t->shape};
    if (t->has_quant && t->q.nscale) {
        d.nscale = t->q.nscale;
        d.scale = t->q.scale;
        d.zero_point = t->q.zero_point;
    }
    return npk_tflb_tensor_add(b, &d);
}

/* Both segments' Edge TPU ops in one model (optionally followed by a
 * custom op the interpreter does not know). */
static uint8_t *two_op_model(const gfx *s0, const gfx *s1, bool unknown_op, size_t *len)
{
    npk_error err = {0};
    npk_tflb *b = npk_tflb_new();
    const npk_tfl_model *m0 = &s0->m.tfl, *m1 = &s1->m.tfl;
    const npk_tfl_operator *o0 = &m0->subgraphs[0].operators[0],
                           *o1 = &m1->subgraphs[0].operators[0];
    const int32_t in = copy_tensor(b, m0, o0->inputs[0]), f11 = copy_tensor(b, m0, o0->outputs[0]),
                  f13 = copy_tensor(b, m0, o0->outputs[1]);
    const int32_t bx = copy_tensor(b, m1, o1->outputs[0]), sc = copy_tensor(b, m1, o1->outputs[1]);
    /* Segment 1's op takes its inputs in its own order (by name). */
    int32_t i1[2];
    for (int k = 0; k < 2; k++)
        i1[k] = !strcmp(m1->subgraphs[0].tensors[o1->inputs[k]].name,
                        m0->subgraphs[0].tensors[o0->outputs[0]].name)
                    ? f11
                    : f13;
    const int32_t a_in[1] = {in}, a_out[2] = {f11, f13}, b_out[2] = {bx, sc};
    npk_tflb_op a = {.builtin = NPK_TFL_OP_CUSTOM,
                     .custom_code = NPK_ETPU_CUSTOM_CODE,
                     .inputs = a_in,
                     .ninputs = 1,
                     .outputs = a_out,
                     .noutputs = 2,
                     .custom_options = o0->custom_options,
                     .custom_options_len = o0->custom_options_len},
                c = a;
    c.inputs = i1;
    c.ninputs = 2;
    c.outputs = b_out;
    c.custom_options = o1->custom_options;
    c.custom_options_len = o1->custom_options_len;
    assert_true(npk_tflb_op_add(b, &a) >= 0);
    assert_true(npk_tflb_op_add(b, &c) >= 0);
    int32_t outs[2] = {bx, sc};
    if (unknown_op) {
        const int32_t shape[1] = {1};
        npk_tflb_tensor t = {.name = "odd", .type = NPK_TFL_FLOAT32, .ndim = 1, .shape = shape};
        const int32_t odd = npk_tflb_tensor_add(b, &t), ui[1] = {bx}, uo[1] = {odd};
        npk_tflb_op u = {.builtin = NPK_TFL_OP_CUSTOM,
                         .custom_code = "NoSuchOp",
                         .inputs = ui,
                         .ninputs = 1,
                         .outputs = uo,
                         .noutputs = 1};
        assert_true(npk_tflb_op_add(b, &u) >= 0);
        outs[0] = odd;
    }
    const int32_t ins[1] = {in};
    npk_tflb_io(b, ins, 1, outs, 2);
    uint8_t *out = NULL;
    if (npk_tflb_finish(b, &out, len, &err)) gfx_fail("two-op model", &err);
    npk_tflb_free(b);
    return out;
}

/* The two Edge TPU ops in one graph: two plans, one token, parameters for
 * both on the first run only, and the same device traffic (so the same
 * emulator values) as the pipeline of the two segments. */
static void two_ops(void **state)
{
    (void)state;
    npk_error err = {0};
    prig r;
    prig_open(&r, NULL, true);
    size_t len = 0;
    uint8_t *file = two_op_model(&r.s0, &r.s1, false, &len);
    npk_etpu_model m;
    assert_int_equal(npk_etpu_parse(file, len, &m, &err), NPK_OK);
    assert_int_equal(m.nops, 2);
    npk_etpu_emu *emu = NULL;
    npk_etpu_device *dev = NULL;
    npk_etpu_graph *g = NULL;
    assert_int_equal(npk_etpu_emu_new(NULL, &emu, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &m, &err), NPK_OK);
    assert_int_equal(npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err), NPK_OK);
    assert_int_equal(npk_etpu_graph_new(&m, NULL, &g, &err), NPK_OK);
    assert_int_equal(npk_etpu_graph_nops(g), 2);
    assert_int_equal(npk_etpu_graph_plan(g, 0)->eo->parameter_caching_token,
                     npk_etpu_graph_plan(g, 1)->eo->parameter_caching_token);
    npk_tfl_view a, b;
    assert_int_equal(npk_tfl_interp_input(npk_etpu_graph_interp(g), 0, &a, &err), NPK_OK);
    assert_int_equal(npk_etpu_pipeline_input(r.p, 0, &b, &err), NPK_OK);
    for (int k = 0; k < 2; k++) {
        view_random(&a, 9 + (uint64_t)k);
        memcpy(b.data, a.data, a.bytes);
        npk_etpu_graph_info info;
        assert_int_equal(npk_etpu_graph_invoke(g, dev, &info, &err), NPK_OK);
        assert_int_equal(info.device_runs, 2);
        assert_int_equal(info.parameter_uploads, k == 0 ? 2 : 0);
        prig_invoke(&r, k == 0 ? 2 : 0);
        for (uint32_t o = 0; o < 2; o++) {
            npk_tfl_view x, y;
            assert_int_equal(npk_tfl_interp_output(npk_etpu_graph_interp(g), o, &x, &err), NPK_OK);
            assert_int_equal(npk_tfl_interp_output(npk_etpu_graph_interp(r.g1), o, &y, &err),
                             NPK_OK);
            assert_string_equal(x.name, y.name);
            assert_int_equal(x.bytes, y.bytes);
            assert_memory_equal(x.data, y.data, x.bytes);
        }
    }
    assert_null(npk_etpu_emu_violation(emu));
    npk_etpu_graph_free(g);
    npk_etpu_close(dev);
    npk_etpu_emu_free(emu);
    npk_etpu_free(&m);
    free(file);
    prig_close(&r);
}

/* Real values for the pair: the stand-in model answers both segments, and
 * the pipeline's outputs (the detections when the interpreter has the
 * post-processing op, else segment 1's Edge TPU outputs) equal the
 * interpreter on the stand-in bit for bit. */
static void ssd_standin_exact(void **state)
{
    (void)state;
    npk_error err = {0};
    gfx s0, s1;
    gfx_load(SEG0, &s0);
    gfx_load(SEG1, &s1);
    const bool whole = tail_supported(&s1);
    size_t len = 0;
    uint8_t *file = ssd_standin(&s0.m.tfl, &s1.m.tfl, whole, &len);
    npk_tfl_model cpu;
    assert_int_equal(npk_tfl_parse(file, len, &cpu, &err), NPK_OK);
    prig r;
    prig_open(&r, &cpu, false);
    npk_tfl_interp *ref = NULL;
    npk_tfl_interp_opts ro = {.threads = GTEST_THREADS};
    if (npk_tfl_interp_new(&cpu, &ro, &ref, &err)) gfx_fail("stand-in", &err);
    npk_tfl_view in, rin;
    assert_int_equal(npk_etpu_pipeline_input(r.p, 0, &in, &err), NPK_OK);
    assert_int_equal(npk_tfl_interp_input(ref, 0, &rin, &err), NPK_OK);
    npk_image img;
    NPK_NEED_FEATURE("bmp");
    if (npk_image_load(NPK_FIXTURE("models/cat.bmp"), &img, &err)) gfx_fail("cat.bmp", &err);
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            assert_int_equal(npk_vis_fill_input(&img, &in, &err), NPK_OK);
        else
            view_random(&in, 77);
        memcpy(rin.data, in.data, in.bytes);
        prig_invoke(&r, k == 0 ? 2 : 0);
        assert_int_equal(npk_tfl_interp_invoke(ref, &err), NPK_OK);
        assert_int_equal(npk_etpu_pipeline_noutputs(r.p), npk_tfl_interp_noutputs(ref));
        for (uint32_t o = 0; o < npk_tfl_interp_noutputs(ref); o++) {
            npk_tfl_view x, y;
            assert_int_equal(npk_etpu_pipeline_output(r.p, o, &x, &err), NPK_OK);
            assert_int_equal(npk_tfl_interp_output(ref, o, &y, &err), NPK_OK);
            assert_string_equal(x.name, y.name);
            assert_int_equal(x.bytes, y.bytes);
            assert_memory_equal(x.data, y.data, x.bytes);
        }
    }
    /* The values are real ones: segment 1's inputs vary (not a constant). */
    size_t n = 0;
    const uint8_t *f = npk_etpu_emu_input(r.emu, cpu.subgraphs[0].tensors[1].name, &n);
    assert_non_null(f);
    uint32_t distinct = 0;
    bool seen[256] = {false};
    for (size_t i = 0; i < n; i++) distinct += !seen[f[i]], seen[f[i]] = true;
    assert_true(distinct > 30);
    if (whole) {
        npk_tfl_view outs[4];
        for (uint32_t o = 0; o < 4; o++)
            assert_int_equal(npk_etpu_pipeline_output(r.p, o, &outs[o], &err), NPK_OK);
        npk_vis_box boxes[20];
        uint32_t nb = 0;
        assert_int_equal(npk_vis_detect(outs, 4, 0.0f, boxes, 20, &nb, &err), NPK_OK);
    } else {
        printf("NOT YET: the SSD tail (TFLite_Detection_PostProcess): compared up to segment 1's "
               "Edge TPU outputs\n");
    }
    npk_image_free(&img);
    npk_tfl_interp_free(ref);
    prig_close(&r);
    npk_tfl_free(&cpu);
    free(file);
    gfx_unload(&s0);
    gfx_unload(&s1);
}

/* What a user meets before anything reaches a device. */
static void errors(void **state)
{
    (void)state;
    npk_error err = {0};
    gfx s0, s1, mn, emb;
    gfx_load(SEG0, &s0);
    gfx_load(SEG1, &s1);
    gfx_load("mobilenet_v1_0.5_160_quant_edgetpu.tflite", &mn);
    gfx_load_cpu("mobilenet_v1_1.0_224_quant_embedding_extractor.tflite", &emb);
    /* Segments in the wrong order. */
    int32_t cut[2];
    seg1_cut(&s1, cut);
    npk_etpu_graph *g0 = graph_of(&s0, NULL, 0), *g1 = graph_of(&s1, cut, 2), *gs[2] = {g1, g0};
    npk_etpu_pipeline *p = NULL;
    assert_int_equal(npk_etpu_pipeline_new(gs, 2, &p, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "segment 1 takes none of its inputs"));
    /* A CPU operator the interpreter lacks: named, before any device. */
    size_t len = 0;
    uint8_t *file = two_op_model(&s0, &s1, true, &len);
    npk_etpu_model m;
    npk_etpu_graph *g = NULL;
    assert_int_equal(npk_etpu_parse(file, len, &m, &(npk_error){0}), NPK_OK);
    err = (npk_error){0};
    assert_int_equal(npk_etpu_graph_new(&m, NULL, &g, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "operator 2 (NoSuchOp): no kernel"));
    assert_true(err.has_offset);
    /* The same through the command line: one line naming the op, exit 2,
     * no device opened, nothing written. */
    const char *bad = npk_tmp("no_such_op_edgetpu.tflite"), *x = npk_tmp("no_such_op_x.npy"),
               *out = npk_tmp("no_such_op_out.npy");
    assert_int_equal(npk_write_file(bad, file, len, &err), NPK_OK);
    const int64_t shape[] = {1, 300, 300, 3};
    npk_tensor t;
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_U8, 4, shape, &err), NPK_OK);
    memset(t.data, 7, t.nbytes);
    assert_int_equal(npk_npy_save(x, &t, &err), NPK_OK);
    npk_tensor_free(&t);
    npk_run r = npk_cli("edgetpu run %s --device emu --input %s -o %s", bad, x, out);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "offset 0x") || !strstr(r.err, "operator 2 (NoSuchOp): no kernel"))
        fail_msg("%s", r.err);
    assert_true(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
    assert_null(strstr(r.out, "opened"));
    assert_false(npk_exists(out));
    npk_run_free(&r);
    /* CPU models that do not match the op's boundary. */
    npk_etpu_emu *emu = NULL;
    assert_int_equal(npk_etpu_emu_new(NULL, &emu, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &mn.m, &err), NPK_OK);
    assert_int_equal(npk_etpu_emu_add_model(emu, &s0.m, &err), NPK_OK);
    err = (npk_error){0};
    assert_int_equal(npk_etpu_emu_set_cpu_model(emu, &mn.m, &emb.t, 1, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "Edge TPU op 0 input \"input\" is UINT8 [1, 160, 160, 3]"));
    assert_non_null(strstr(err.msg, "in the CPU model it is UINT8 [1, 224, 224, 3]"));
    err = (npk_error){0};
    assert_int_equal(npk_etpu_emu_set_cpu_model(emu, &s0.m, &emb.t, 1, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "\"normalized_input_image_tensor\": no tensor of that name"));
    npk_etpu_emu_free(emu);
    npk_etpu_free(&m);
    free(file);
    npk_etpu_graph_free(g0);
    npk_etpu_graph_free(g1);
    gfx_unload(&s0);
    gfx_unload(&s1);
    gfx_unload(&mn);
    gfx_unload(&emb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ssd_pipeline), cmocka_unit_test(cocompiled_switch),
        cmocka_unit_test(two_ops),      cmocka_unit_test(ssd_standin_exact),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
