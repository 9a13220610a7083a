/* TFLite_Detection_PostProcess (src/tflite/ops/op_detection.c): small models
 * built here with answers worked out by hand from TFLite's definition
 * (detection_postprocess.cc), hostile options and tensors, and the CPU tail
 * of the real SSD MobileNet segment with outputs pinned after comparing them
 * with LiteRT.js (docs/tflite.md). With NPK_KEEP_TMP=1 the models and
 * inputs stay in the test's temporary directory for re-running the oracle. */
#include "npukit/flatbuf.h"
#include "npukit/tensor.h"
#include "tfl_test.h"

typedef struct det_opts {
    int max_det, max_cls, per_class, num_classes;
    bool regular;
    float score_thr, iou_thr, sy, sx, sh, sw;
} det_opts;

static const det_opts DEFAULTS = {3, 1, 100, 1, false, 0.3f, 0.6f, 10, 10, 5, 5};

/* The FlexBuffer TFLite's converter writes for these options. */
static uint8_t *det_flex(const det_opts *o, size_t *len)
{
    npk_flexw_entry e[] = {
        {.key = "max_detections", .kind = NPK_FLEXW_INT, .i = o->max_det},
        {.key = "max_classes_per_detection", .kind = NPK_FLEXW_INT, .i = o->max_cls},
        {.key = "detections_per_class", .kind = NPK_FLEXW_INT, .i = o->per_class},
        {.key = "use_regular_nms", .kind = NPK_FLEXW_BOOL, .i = o->regular},
        {.key = "nms_score_threshold", .kind = NPK_FLEXW_FLOAT, .f = o->score_thr},
        {.key = "nms_iou_threshold", .kind = NPK_FLEXW_FLOAT, .f = o->iou_thr},
        {.key = "num_classes", .kind = NPK_FLEXW_INT, .i = o->num_classes},
        {.key = "y_scale", .kind = NPK_FLEXW_FLOAT, .f = o->sy},
        {.key = "x_scale", .kind = NPK_FLEXW_FLOAT, .f = o->sx},
        {.key = "h_scale", .kind = NPK_FLEXW_FLOAT, .f = o->sh},
        {.key = "w_scale", .kind = NPK_FLEXW_FLOAT, .f = o->sw},
    };
    uint8_t *out;
    npk_error err = {0};
    if (npk_flexw_map(e, sizeof e / sizeof e[0], 0, &out, len, &err)) fail_msg("%s", err.msg);
    return out;
}

/* One op: box encodings [1, n, 4] and scores [1, n, c] as inputs, anchors
 * [n, 4] constant; scale 0 means float32. */
typedef struct det_model {
    int n, c;
    float box_s, cls_s; /* 0: float32 */
    int box_z, cls_z;
    const void *anchors; /* float32; uint8 when anc_s > 0 */
    float anc_s;
    int anc_z;
    const uint8_t *opts; /* custom options (NULL: none) */
    size_t opts_len;
    int out_det; /* D in the output shapes; 0: shapes left empty ([]) */
} det_model;

static tt_model build(const det_model *m)
{
    npk_tflb *b = npk_tflb_new();
    const int32_t bs[] = {1, m->n, 4}, cs[] = {1, m->n, m->c}, as[] = {m->n, 4};
    const int32_t ob[] = {1, m->out_det, 4}, o2[] = {1, m->out_det}, o1[] = {1};
    const int8_t bt = m->box_s > 0 ? NPK_TFL_UINT8 : NPK_TFL_FLOAT32;
    const int8_t ct = m->cls_s > 0 ? NPK_TFL_UINT8 : NPK_TFL_FLOAT32;
    const int8_t at = m->anc_s > 0 ? NPK_TFL_UINT8 : NPK_TFL_FLOAT32;
    int32_t box = tt_add(b, "boxes", bt, 3, bs, m->box_s, m->box_z, NULL, 0);
    int32_t cls = tt_add(b, "scores", ct, 3, cs, m->cls_s, m->cls_z, NULL, 0);
    int32_t anc = tt_add(b, "anchors", at, 2, as, m->anc_s, m->anc_z, m->anchors,
                         (size_t)m->n * 4 * (at == NPK_TFL_UINT8 ? 1 : 4));
    const uint32_t nd = m->out_det ? 1 : 0;
    int32_t out[4] = {
        tt_add(b, "det_boxes", NPK_TFL_FLOAT32, m->out_det ? 3 : 0, ob, 0, 0, NULL, 0),
        tt_add(b, "det_classes", NPK_TFL_FLOAT32, nd * 2, o2, 0, 0, NULL, 0),
        tt_add(b, "det_scores", NPK_TFL_FLOAT32, nd * 2, o2, 0, 0, NULL, 0),
        tt_add(b, "det_count", NPK_TFL_FLOAT32, nd, o1, 0, 0, NULL, 0),
    };
    npk_tflb_op op = {NPK_TFL_OP_CUSTOM,
                      "TFLite_Detection_PostProcess",
                      1,
                      (int32_t[]){box, cls, anc},
                      3,
                      out,
                      4,
                      NULL,
                      m->opts,
                      m->opts_len};
    assert_true(npk_tflb_op_add(b, &op) >= 0);
    npk_tflb_io(b, (int32_t[]){box, cls}, 2, out, 4);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

static tt_model build_with(det_model m, const det_opts *o)
{
    size_t len;
    uint8_t *f = det_flex(o, &len);
    m.opts = f;
    m.opts_len = len;
    if (!m.out_det) m.out_det = o->max_det * o->max_cls;
    tt_model tm = build(&m);
    free(f);
    return tm;
}

/* Expected results: `filled` slots as given, the rest zero, and the count
 * (the number of detections; filled = count * classes per detection). */
typedef struct det_result {
    int count;
    float boxes[8][4];
    float classes[8], scores[8];
    int filled; /* 0: count */
} det_result;

static void expect(npk_tfl_interp *it, int slots, const det_result *r)
{
    npk_tfl_view v[4];
    npk_error err = {0};
    for (uint32_t i = 0; i < 4; i++) assert_int_equal(npk_tfl_interp_output(it, i, &v[i], &err), 0);
    assert_int_equal(v[0].bytes, (size_t)slots * 16);
    assert_int_equal(v[1].bytes, (size_t)slots * 4);
    assert_int_equal(v[3].bytes, 4);
    const float *b = v[0].data, *c = v[1].data, *s = v[2].data, *n = v[3].data;
    const int filled = r->filled ? r->filled : r->count;
    if (n[0] != (float)r->count) fail_msg("count %g, expected %d", (double)n[0], r->count);
    for (int i = 0; i < slots; i++) {
        const bool on = i < filled;
        for (int k = 0; k < 4; k++)
            if (b[4 * i + k] != (on ? r->boxes[i][k] : 0.0f))
                fail_msg("box %d[%d] = %.9g, expected %.9g", i, k, (double)b[4 * i + k],
                         (double)(on ? r->boxes[i][k] : 0.0f));
        if (c[i] != (on ? r->classes[i] : 0.0f)) fail_msg("class %d = %g", i, (double)c[i]);
        if (s[i] != (on ? r->scores[i] : 0.0f)) fail_msg("score %d = %.9g", i, (double)s[i]);
    }
}

static npk_tfl_interp *run2(const tt_model *tm, const void *boxes, const void *scores)
{
    const void *in[] = {boxes, scores};
    return tt_run(tm, in, 1);
}

/* Build the model, run it on boxes and scores, expect r in `slots` slots. */
static void check_nms(det_model m, const det_opts *o, const void *boxes, const void *scores,
                      int slots, const det_result *r)
{
    tt_model tm = build_with(m, o);
    npk_tfl_interp *it = run2(&tm, boxes, scores);
    expect(it, slots, r);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* The box an anchor (y, x, h, w) gives for a zero encoding: the anchor itself
 * as corners (0.5 * exp(0) * h is exactly h / 2). */
#define CORNERS(y, x, h, w)                                                                        \
    {                                                                                              \
        (y) - 0.5f * (h), (x)-0.5f * (w), (y) + 0.5f * (h), (x) + 0.5f * (w)                       \
    }

static void test_one_box(void **state)
{
    (void)state;
    /* One anchor, one class after the background: decoded with ty = 10
     * (y_scale 10: one anchor height down) and tx = -10. */
    static const float anchors[] = {0.5f, 0.5f, 0.2f, 0.4f};
    static const float boxes[] = {10, -10, 0, 0}, scores[] = {0.1f, 0.9f};
    tt_model tm = build_with((det_model){.n = 1, .c = 2, .anchors = anchors}, &DEFAULTS);
    npk_tfl_interp *it = run2(&tm, boxes, scores);
    const float y = 0.5f + 0.2f, x = 0.5f - 0.4f;
    det_result r = {1, {CORNERS(y, x, 0.2f, 0.4f)}, {0}, {0.9f}, 0};
    expect(it, 3, &r);
    /* Run again: the same result (scratch and outputs are rewritten). */
    assert_int_equal(npk_tfl_interp_invoke(it, &(npk_error){0}), NPK_OK);
    expect(it, 3, &r);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* Three anchors: A and B overlap (IoU = 0.036 / 0.044 = 0.82 > 0.6), C
 * stands apart. Scores: A 0.8, B 0.9, C 0.7, so B wins and A goes. */
static const float ABC[] = {0.5f, 0.5f, 0.2f, 0.2f, 0.52f, 0.5f,
                            0.2f, 0.2f, 0.8f, 0.8f, 0.1f,  0.1f};
static const float ZERO12[12] = {0};

static void test_nms_overlap(void **state)
{
    (void)state;
    static const float scores[] = {0, 0.8f, 0, 0.9f, 0, 0.7f};
    det_result r = {2,
                    {CORNERS(0.52f, 0.5f, 0.2f, 0.2f), CORNERS(0.8f, 0.8f, 0.1f, 0.1f)},
                    {0, 0},
                    {0.9f, 0.7f},
                    0};
    check_nms((det_model){.n = 3, .c = 2, .anchors = ABC}, &DEFAULTS, ZERO12, scores, 3, &r);
    /* With an IoU threshold above 0.82 all three stay, best first; with
     * max_detections 2 only the two best. */
    det_opts o = DEFAULTS;
    o.iou_thr = 0.9f;
    det_result all = {3,
                      {CORNERS(0.52f, 0.5f, 0.2f, 0.2f), CORNERS(0.5f, 0.5f, 0.2f, 0.2f),
                       CORNERS(0.8f, 0.8f, 0.1f, 0.1f)},
                      {0, 0, 0},
                      {0.9f, 0.8f, 0.7f},
                      0};
    check_nms((det_model){.n = 3, .c = 2, .anchors = ABC}, &o, ZERO12, scores, 3, &all);
    o.max_det = 2;
    all.count = 2;
    check_nms((det_model){.n = 3, .c = 2, .anchors = ABC}, &o, ZERO12, scores, 2, &all);
}

/* Boundaries: a score equal to nms_score_threshold is kept (>=), one just
 * below is not; an IoU equal to nms_iou_threshold does not suppress (>).
 * Boxes [0, 0, 1, 1] and [0, 0, 1, 0.5]: IoU 0.5 / (1 + 0.5 - 0.5) = 0.5. */
static void test_thresholds(void **state)
{
    (void)state;
    static const float anchors[] = {0.5f, 0.5f, 1, 1, 0.5f, 0.25f, 1, 0.5f, 3, 3, 1, 1};
    const float below = nextafterf(0.3f, 0);
    const float scores[] = {0, 0.9f, 0, 0.3f, 0, below};
    det_opts o = DEFAULTS;
    o.iou_thr = 0.5f;
    det_result r = {
        2, {CORNERS(0.5f, 0.5f, 1, 1), CORNERS(0.5f, 0.25f, 1, 0.5f)}, {0, 0}, {0.9f, 0.3f}, 0};
    check_nms((det_model){.n = 3, .c = 2, .anchors = anchors}, &o, ZERO12, scores, 3, &r);
    /* Just below 0.5 the second box goes. */
    o.iou_thr = nextafterf(0.5f, 0);
    r.count = 1;
    check_nms((det_model){.n = 3, .c = 2, .anchors = anchors}, &o, ZERO12, scores, 3, &r);
}

/* Fast NMS with max_classes_per_detection 2 and no background column
 * (C = num_classes = 3): each kept box reports its two best classes, equal
 * scores in class order; boxes sort by their best class score. */
static void test_classes_per_detection(void **state)
{
    (void)state;
    static const float scores[] = {0.5f, 0.7f, 0.7f, 0.2f, 0.4f, 0.95f, 0.3f, 0.9f, 0.3f};
    det_opts o = DEFAULTS;
    o.max_cls = 2;
    o.num_classes = 3;
    /* B (best 0.95: classes 2 then 1) suppresses A (best 0.7); C (0.9:
     * class 1, then class 0 before class 2 at 0.3). 2 detections x 2
     * classes fill 4 of the 6 slots. */
    det_result r = {2,
                    {CORNERS(0.52f, 0.5f, 0.2f, 0.2f), CORNERS(0.52f, 0.5f, 0.2f, 0.2f),
                     CORNERS(0.8f, 0.8f, 0.1f, 0.1f), CORNERS(0.8f, 0.8f, 0.1f, 0.1f)},
                    {2, 1, 1, 0},
                    {0.95f, 0.4f, 0.9f, 0.3f},
                    4};
    check_nms((det_model){.n = 3, .c = 3, .anchors = ABC}, &o, ZERO12, scores, 6, &r);
    /* More classes per detection than classes: the extra slots stay empty. */
    static const float one[] = {0, 0.8f, 0, 0.9f, 0, 0.7f};
    o.max_cls = 2;
    o.num_classes = 1;
    det_result q = {2,
                    {CORNERS(0.52f, 0.5f, 0.2f, 0.2f), {0}, CORNERS(0.8f, 0.8f, 0.1f, 0.1f)},
                    {0, 0, 0},
                    {0.9f, 0, 0.7f},
                    3};
    check_nms((det_model){.n = 3, .c = 2, .anchors = ABC}, &o, ZERO12, one, 6, &q);
}

/* Regular NMS: per class, then the best max_detections over all classes.
 * Class 0: B 0.9 suppresses A 0.8, C 0.5 stays; class 1: C 0.95, A 0.6
 * stays (apart from C), B 0.35 goes (overlaps A). Best three of B0 0.9,
 * C0 0.5, C1 0.95, A1 0.6: C1, B0, A1. */
static const float REG_SCORES[] = {0, 0.8f, 0.6f, 0, 0.9f, 0.35f, 0, 0.5f, 0.95f};

static void test_regular_nms(void **state)
{
    (void)state;
    det_opts o = DEFAULTS;
    o.regular = true;
    o.num_classes = 2;
    det_result r = {3,
                    {CORNERS(0.8f, 0.8f, 0.1f, 0.1f), CORNERS(0.52f, 0.5f, 0.2f, 0.2f),
                     CORNERS(0.5f, 0.5f, 0.2f, 0.2f)},
                    {1, 0, 1},
                    {0.95f, 0.9f, 0.6f},
                    0};
    check_nms((det_model){.n = 3, .c = 3, .anchors = ABC}, &o, ZERO12, REG_SCORES, 3, &r);
    /* One detection per class: B0 0.9 and C1 0.95. */
    o.per_class = 1;
    det_result one = {2,
                      {CORNERS(0.8f, 0.8f, 0.1f, 0.1f), CORNERS(0.52f, 0.5f, 0.2f, 0.2f)},
                      {1, 0},
                      {0.95f, 0.9f},
                      0};
    check_nms((det_model){.n = 3, .c = 3, .anchors = ABC}, &o, ZERO12, REG_SCORES, 3, &one);
    /* max_detections 1 (the arg-max path of the final sort). */
    o.per_class = 100;
    o.max_det = 1;
    one.count = 1;
    check_nms((det_model){.n = 3, .c = 3, .anchors = ABC}, &o, ZERO12, REG_SCORES, 1, &one);
}

/* uint8 box encodings, anchors and scores: the same result as float inputs
 * holding the values dequantised as TFLite does ((q - z) * s in float for
 * boxes and anchors, float(double(s) * (q - z)) for scores). */
static void test_quantized_inputs(void **state)
{
    (void)state;
    static const uint8_t anc_q[] = {50, 50, 20, 20, 52, 50, 20, 20, 80, 80, 10, 10};
    static const uint8_t box_q[] = {128, 128, 128, 128, 131, 120, 126, 140, 128, 128, 100, 160};
    static const uint8_t cls_q[] = {0, 205, 0, 230, 0, 179};
    const float as = 0.01f, bs = 0.1f, cs = 1.0f / 256;
    float anc_f[12], box_f[12], cls_f[6];
    for (int i = 0; i < 12; i++) {
        anc_f[i] = ((float)anc_q[i] - 0.0f) * as;
        box_f[i] = ((float)box_q[i] - 128.0f) * bs;
    }
    for (int i = 0; i < 6; i++) cls_f[i] = (float)((double)cs * cls_q[i]);
    tt_model tq = build_with(
        (det_model){
            .n = 3, .c = 2, .box_s = bs, .box_z = 128, .cls_s = cs, .anchors = anc_q, .anc_s = as},
        &DEFAULTS);
    tt_model tf = build_with((det_model){.n = 3, .c = 2, .anchors = anc_f}, &DEFAULTS);
    npk_tfl_interp *iq = run2(&tq, box_q, cls_q), *itf = run2(&tf, box_f, cls_f);
    for (uint32_t i = 0; i < 4; i++) {
        npk_tfl_view a, b;
        npk_error err = {0};
        assert_int_equal(npk_tfl_interp_output(iq, i, &a, &err), NPK_OK);
        assert_int_equal(npk_tfl_interp_output(itf, i, &b, &err), NPK_OK);
        assert_int_equal(a.bytes, b.bytes);
        assert_memory_equal(a.data, b.data, a.bytes);
    }
    /* B (230/256) first; A (205/256) overlaps it; C (179/256 = 0.699)
     * is decoded with th = -2.8, tw = 3.2 (h_scale = w_scale = 5). */
    npk_tfl_view v;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_output(iq, 3, &v, &err), NPK_OK);
    assert_true(*(float *)v.data == 2.0f);
    assert_int_equal(npk_tfl_interp_output(iq, 2, &v, &err), NPK_OK);
    assert_true(((float *)v.data)[0] == 230.0f / 256 && ((float *)v.data)[1] == 179.0f / 256);
    assert_int_equal(npk_tfl_interp_output(iq, 0, &v, &err), NPK_OK);
    const float *b = v.data;
    /* C: center (0.8, 0.8), half sizes 0.5 * exp(-0.56) * 0.1 and 0.5 * exp(0.64) * 0.1. */
    const double hh = 0.5 * exp((double)((100.0f - 128.0f) * bs) / 5.0) * (double)(10 * as);
    assert_true(fabs(b[4] - (0.8 - hh)) < 1e-6 && fabs(b[6] - (0.8 + hh)) < 1e-6);
    npk_tfl_interp_free(iq);
    npk_tfl_interp_free(itf);
    tt_model_free(&tq);
    tt_model_free(&tf);
}

/* A negative anchor height inverts the decoded box: TFLite's ValidateBoxes
 * fails the op, so invoke does too, naming it. */
static void test_inverted_box(void **state)
{
    (void)state;
    static const float anchors[] = {0.5f, 0.5f, -0.2f, 0.2f};
    static const float boxes[4] = {0}, scores[] = {0, 0.9f};
    tt_model tm = build_with((det_model){.n = 1, .c = 2, .anchors = anchors}, &DEFAULTS);
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_new(&tm.m, NULL, &it, &err), NPK_OK);
    npk_tfl_view v;
    assert_int_equal(npk_tfl_interp_input(it, 0, &v, &err), NPK_OK);
    memcpy(v.data, boxes, sizeof boxes);
    assert_int_equal(npk_tfl_interp_input(it, 1, &v, &err), NPK_OK);
    memcpy(v.data, scores, sizeof scores);
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "operator 0 (TFLite_Detection_PostProcess): decoded box 0 is "
                                    "inverted"));
    assert_true(err.has_offset);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- hostile options and tensors ---- */

static void plan_fails_with(const det_model *m, npk_status st, const char *needle)
{
    tt_model tm = build(m);
    tt_plan_fails(&tm, st, needle);
    tt_model_free(&tm);
}

static void options_fail(npk_flexw_entry *e, size_t n, int width, const char *needle)
{
    uint8_t *f;
    size_t len;
    npk_error err = {0};
    if (npk_flexw_map(e, n, width, &f, &len, &err)) fail_msg("%s", err.msg);
    det_model m = {.n = 3, .c = 2, .anchors = ABC, .opts = f, .opts_len = len, .out_det = 3};
    if (needle)
        plan_fails_with(&m, NPK_E_FORMAT, needle);
    else {
        tt_model tm = build(&m);
        npk_tfl_interp *it = run2(&tm, ZERO12, (const float[]){0, 0.8f, 0, 0.9f, 0, 0.7f});
        det_result r = {2,
                        {CORNERS(0.52f, 0.5f, 0.2f, 0.2f), CORNERS(0.8f, 0.8f, 0.1f, 0.1f)},
                        {0, 0},
                        {0.9f, 0.7f},
                        0};
        expect(it, 3, &r);
        npk_tfl_interp_free(it);
        tt_model_free(&tm);
    }
    free(f);
}

enum { K_MAXDET, K_MAXCLS, K_PERCLS, K_REGULAR, K_SCORE, K_IOU, K_NCLS, K_Y, K_X, K_H, K_W, K_N };

static void base_entries(npk_flexw_entry *e)
{
    const det_opts *o = &DEFAULTS;
    const npk_flexw_entry d[K_N] = {
        {.key = "max_detections", .kind = NPK_FLEXW_INT, .i = o->max_det},
        {.key = "max_classes_per_detection", .kind = NPK_FLEXW_INT, .i = o->max_cls},
        {.key = "detections_per_class", .kind = NPK_FLEXW_INT, .i = o->per_class},
        {.key = "use_regular_nms", .kind = NPK_FLEXW_BOOL, .i = 0},
        {.key = "nms_score_threshold", .kind = NPK_FLEXW_FLOAT, .f = o->score_thr},
        {.key = "nms_iou_threshold", .kind = NPK_FLEXW_FLOAT, .f = o->iou_thr},
        {.key = "num_classes", .kind = NPK_FLEXW_INT, .i = 1},
        {.key = "y_scale", .kind = NPK_FLEXW_FLOAT, .f = 10},
        {.key = "x_scale", .kind = NPK_FLEXW_FLOAT, .f = 10},
        {.key = "h_scale", .kind = NPK_FLEXW_FLOAT, .f = 5},
        {.key = "w_scale", .kind = NPK_FLEXW_FLOAT, .f = 5},
    };
    memcpy(e, d, sizeof d);
}

static void test_bad_options(void **state)
{
    (void)state;
    npk_flexw_entry e[K_N + 1];
    const char *op = "operator 0 (TFLite_Detection_PostProcess): ";
    char msg[256];
#define FAILS(width, text)                                                                         \
    do {                                                                                           \
        snprintf(msg, sizeof msg, "%s%s", op, text);                                               \
        options_fail(e, K_N, width, msg);                                                          \
        base_entries(e);                                                                           \
    } while (0)
    base_entries(e);
    options_fail(e, K_N, 0, NULL); /* the base runs */
    options_fail(e, K_N, 8, NULL); /* floats stored as float64 */
    /* Optional keys: absent or null take TFLite's defaults. */
    e[K_PERCLS] = (npk_flexw_entry){.key = "detections_per_class", .kind = NPK_FLEXW_NULL};
    e[K_REGULAR] = (npk_flexw_entry){.key = "use_regular_nms", .kind = NPK_FLEXW_NULL};
    options_fail(e, K_N, 0, NULL);
    base_entries(e);
    /* Integers given for floats are numbers too. */
    e[K_SCORE] = (npk_flexw_entry){.key = "nms_score_threshold", .kind = NPK_FLEXW_INT, .i = 0};
    options_fail(e, K_N, 0, NULL);
    base_entries(e);

    e[K_NCLS].key = "num_classes_";
    FAILS(0, "custom options: the required key \"num_classes\" is missing");
    e[K_MAXDET] = (npk_flexw_entry){.key = "max_detections",
                                    .kind = NPK_FLEXW_STRING,
                                    .bytes = (const uint8_t *)"20",
                                    .len = 2};
    FAILS(0, "custom option \"max_detections\" is STRING, expected an integer");
    e[K_MAXDET].i = 0;
    FAILS(0, "custom option \"max_detections\" is 0, expected 1 to 1048576");
    e[K_MAXCLS].i = -3;
    FAILS(0, "custom option \"max_classes_per_detection\" is -3, expected 1 to 1048576");
    e[K_MAXDET].i = 1 << 20;
    e[K_MAXCLS].i = 2;
    FAILS(0, "max_detections * max_classes_per_detection = 2097152 (limit 1048576)");
    e[K_REGULAR] = (npk_flexw_entry){.key = "use_regular_nms", .kind = NPK_FLEXW_FLOAT, .f = 1};
    FAILS(0, "custom option \"use_regular_nms\" is FLOAT, expected a boolean");
    e[K_SCORE] = (npk_flexw_entry){.key = "nms_score_threshold",
                                   .kind = NPK_FLEXW_BLOB,
                                   .bytes = (const uint8_t *)"x",
                                   .len = 1};
    FAILS(0, "custom option \"nms_score_threshold\" is BLOB, expected a number");
    e[K_IOU].f = 0;
    FAILS(0, "custom option \"nms_iou_threshold\" is 0, expected (0, 1]");
    e[K_IOU].f = 1.5;
    FAILS(0, "custom option \"nms_iou_threshold\" is 1.5, expected (0, 1]");
    e[K_Y].f = 0;
    FAILS(0, "custom options: a box scale (y_scale, x_scale, h_scale, w_scale) is 0");
    e[K_H].f = 1e300;
    FAILS(8, "custom option \"h_scale\" is 1e+300, expected a finite float");
    e[K_NCLS].i = 5;
    FAILS(0, "class predictions have 2 classes for num_classes 5");
#undef FAILS
    /* Not a FlexBuffer map, or none at all. */
    det_model m = {.n = 3, .c = 2, .anchors = ABC, .out_det = 3};
    plan_fails_with(&m, NPK_E_FORMAT, "(TFLite_Detection_PostProcess): has no custom options");
    m.opts = (const uint8_t *)"\x05\x04\x01";
    m.opts_len = 3;
    plan_fails_with(&m, NPK_E_FORMAT, "(TFLite_Detection_PostProcess): custom options: ");
    m.opts = (const uint8_t *)"\x01\x02";
    m.opts_len = 2;
    plan_fails_with(&m, NPK_E_FORMAT, "(TFLite_Detection_PostProcess): custom options: ");
    /* Every truncation of real options fails cleanly (or, when the cut
     * leaves a valid map, plans). */
    size_t len;
    uint8_t *f = det_flex(&DEFAULTS, &len);
    for (size_t cut = 1; cut < len; cut++) {
        det_model t = {
            .n = 3, .c = 2, .anchors = ABC, .opts = f + cut, .opts_len = len - cut, .out_det = 3};
        tt_model tm = build(&t);
        npk_tfl_interp *it = NULL;
        npk_error err = {0};
        if (npk_tfl_interp_new(&tm.m, NULL, &it, &err) == NPK_OK)
            npk_tfl_interp_free(it);
        else
            assert_non_null(strstr(err.msg, "operator 0 (TFLite_Detection_PostProcess): "));
        tt_model_free(&tm);
    }
    free(f);
}

static void test_bad_tensors(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = det_flex(&DEFAULTS, &len);
    const char *op = "operator 0 (TFLite_Detection_PostProcess): ";
    char msg[256];
    det_model m = {.n = 3, .c = 2, .anchors = ABC, .opts = f, .opts_len = len, .out_det = 5};
    snprintf(msg, sizeof msg,
             "%soutput 0 (tensor 3 \"det_boxes\") is [1, 5, 4] in the model but the op computes "
             "[1, 3, 4]",
             op);
    plan_fails_with(&m, NPK_E_FORMAT, msg);
    /* Shapes left empty take the computed ones. */
    m.out_det = 0;
    tt_model tm = build(&m);
    npk_tfl_interp *it = run2(&tm, ZERO12, (const float[]){0, 0.8f, 0, 0.9f, 0, 0.7f});
    npk_tfl_view v;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_output(it, 0, &v, &err), NPK_OK);
    assert_int_equal(v.ndim, 3);
    assert_int_equal(v.dims[1], 3);
    assert_int_equal(npk_tfl_interp_output(it, 3, &v, &err), NPK_OK);
    assert_int_equal(v.ndim, 1);
    assert_true(*(float *)v.data == 2.0f);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    m.out_det = 3;
    /* uint8 boxes need uint8 anchors (TFLite reads them as the boxes' type). */
    m.box_s = 0.1f;
    snprintf(msg, sizeof msg, "%sanchors are FLOAT32 but box encodings UINT8", op);
    plan_fails_with(&m, NPK_E_UNSUPPORTED, msg);
    m.box_s = 0;
    m.c = 4;
    snprintf(msg, sizeof msg, "%sclass predictions have 4 classes for num_classes 1", op);
    plan_fails_with(&m, NPK_E_FORMAT, msg);
    m.c = 2;
    /* Anchors of another shape, scores for other boxes. */
    npk_tflb *b = npk_tflb_new();
    const int32_t bs[] = {1, 3, 4}, cs[] = {1, 2, 2}, as[] = {3, 4}, o3[] = {1, 3, 4},
                  o2[] = {1, 3}, o1[] = {1};
    int32_t box = tt_add(b, "boxes", NPK_TFL_FLOAT32, 3, bs, 0, 0, NULL, 0);
    int32_t cls = tt_add(b, "scores", NPK_TFL_FLOAT32, 3, cs, 0, 0, NULL, 0);
    int32_t anc = tt_add(b, "anchors", NPK_TFL_FLOAT32, 2, as, 0, 0, ABC, sizeof ABC);
    int32_t out[4] = {tt_add(b, "b", NPK_TFL_FLOAT32, 3, o3, 0, 0, NULL, 0),
                      tt_add(b, "c", NPK_TFL_FLOAT32, 2, o2, 0, 0, NULL, 0),
                      tt_add(b, "s", NPK_TFL_FLOAT32, 2, o2, 0, 0, NULL, 0),
                      tt_add(b, "n", NPK_TFL_INT32, 1, o1, 0, 0, NULL, 0)};
    npk_tflb_op op1 = {NPK_TFL_OP_CUSTOM,
                       "TFLite_Detection_PostProcess",
                       1,
                       (int32_t[]){box, cls, anc},
                       3,
                       out,
                       4,
                       NULL,
                       f,
                       len};
    assert_true(npk_tflb_op_add(b, &op1) >= 0);
    npk_tflb_io(b, (int32_t[]){box, cls}, 2, out, 4);
    tt_finish(b, &tm);
    snprintf(msg, sizeof msg, "%sclass predictions are [1, 2, 2], expected [1, 3, classes]", op);
    tt_plan_fails(&tm, NPK_E_FORMAT, msg);
    tt_model_free(&tm);
    free(f);
}

/* ---- the real SSD MobileNet v1 (COCO) tail ---- */

/* Segment 1 of the Edge TPU pipeline: edgetpu-custom-op -> Squeeze1 (box
 * encodings, u8 [1, 1917, 4]) and convert_scores (u8 [1, 1917, 91]) ->
 * DEQUANTIZE x 2 -> TFLite_Detection_PostProcess (fast NMS, 20 detections,
 * 90 classes + background, IoU 0.6, score 0.3, scales 10 10 5 5). The
 * interpreter runs the CPU tail alone, cut at the Edge TPU op's outputs. */
static const char *const SSD =
    "models/ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite";
enum { SSD_BOXES = 1917, SSD_CLASSES = 91 };
/* Outputs checked against LiteRT.js, then pinned: equal bit for bit in every
 * slot holding a detection (LiteRT.js leaves the others unwritten). The
 * frame-like input finds its five objects: person, dog, car, chair, person
 * (COCO classes 0, 17, 2, 61, 0 without the background). */
#define SSD_RANDOM_SHA  "184b8393ec19c48d1907fac259198f693d2f26abf61ff3d50a43dfe32675ce73"
#define SSD_FRAME_SHA   "a16b7694c91aa8b77838c4229407d2ac6701b0c84bfb1ba758120564ac1eb913"
#define SSD_FRAME_COUNT 5.0f

static void save_u8(const char *name, const uint8_t *data, int64_t d1, int64_t d2)
{
    npk_tensor t;
    npk_error err = {0};
    const int64_t shape[3] = {1, d1, d2};
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_U8, 3, shape, &err), NPK_OK);
    memcpy(t.data, data, (size_t)(d1 * d2));
    assert_int_equal(npk_npy_save(npk_tmp(name), &t, &err), NPK_OK);
    npk_tensor_free(&t);
}

/* Run the tail on the given inputs; returns the sha256 of the four outputs
 * as little-endian float32 bytes, and the count. */
static float ssd_run(const npk_tfl_model *m, const uint8_t *boxes, const uint8_t *scores,
                     const char *tag, char sha[65])
{
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    int32_t in[2] = {-1, -1};
    for (uint32_t i = 0; i < sg->ntensors; i++) {
        if (!strcmp(sg->tensors[i].name, "Squeeze1")) in[0] = (int32_t)i;
        if (!strcmp(sg->tensors[i].name, "convert_scores")) in[1] = (int32_t)i;
    }
    assert_true(in[0] >= 0 && in[1] >= 0);
    npk_tfl_interp_opts o = {.inputs = in, .ninputs = 2};
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    if (npk_tfl_interp_new(m, &o, &it, &err)) fail_msg("%s", err.msg);
    npk_tfl_view v;
    assert_int_equal(npk_tfl_interp_input(it, 0, &v, &err), NPK_OK);
    memcpy(v.data, boxes, v.bytes);
    assert_int_equal(npk_tfl_interp_input(it, 1, &v, &err), NPK_OK);
    memcpy(v.data, scores, v.bytes);
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_OK);
    uint8_t le[20 * 4 * 4 + 3 * 20 * 4];
    size_t k = 0;
    float count = -1;
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(npk_tfl_interp_output(it, i, &v, &err), NPK_OK);
        static const size_t sizes[] = {80, 20, 20, 1};
        assert_int_equal(v.bytes, sizes[i] * 4);
        for (size_t j = 0; j < sizes[i]; j++, k += 4) npk_stf32le(le + k, ((float *)v.data)[j]);
        if (i == 3) count = *(float *)v.data;
    }
    npk_sha256_hex(le, k, sha);
    /* For re-running the oracle (NPK_KEEP_TMP=1). */
    char name[64];
    snprintf(name, sizeof name, "ssd_%s_boxes.npy", tag);
    save_u8(name, boxes, SSD_BOXES, 4);
    snprintf(name, sizeof name, "ssd_%s_scores.npy", tag);
    save_u8(name, scores, SSD_BOXES, SSD_CLASSES);
    npk_tfl_interp_free(it);
    return count;
}

/* Something like a real frame: low class scores everywhere, and a few
 * objects, each seen by the anchors of a 3x3 block of cells of one feature
 * map (best in the centre) whose box encodings point at the object's box
 * (quantised like the model's Squeeze1: scale 0.0865558, zero point 183),
 * so that NMS has overlapping candidates to remove. anchors: the model's
 * (y, x, h, w) rows. */
typedef struct object {
    int cells, first, row, col, per_cell, cls; /* feature map: cells x cells from anchor first */
    float y, x, h, w;                          /* the object's box */
} object;

static uint8_t encode(double v, uint64_t *seed)
{
    const double q = floor(v / 0.0865558013 + 0.5) + 183 + (double)(npk_rand(seed) % 5) - 2;
    return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

static void frame_like(const float *anchors, uint8_t *boxes, uint8_t *scores)
{
    static const object objects[] = {
        {19, 0, 9, 4, 3, 1, 0.5f, 0.25f, 0.3f, 0.12f},      /* a person */
        {10, 1083, 6, 6, 6, 18, 0.62f, 0.64f, 0.35f, 0.4f}, /* a dog */
        {10, 1083, 2, 7, 6, 3, 0.22f, 0.72f, 0.18f, 0.3f},  /* a car */
        {5, 1683, 2, 2, 6, 62, 0.5f, 0.5f, 0.6f, 0.5f},     /* a chair */
        {19, 0, 14, 15, 3, 1, 0.75f, 0.8f, 0.25f, 0.1f},    /* another person */
    };
    uint64_t seed = 77;
    for (int i = 0; i < SSD_BOXES * 4; i++) boxes[i] = (uint8_t)(153 + npk_rand(&seed) % 61);
    for (int i = 0; i < SSD_BOXES * SSD_CLASSES; i++) scores[i] = (uint8_t)(npk_rand(&seed) % 40);
    for (size_t o = 0; o < sizeof objects / sizeof objects[0]; o++) {
        const object *ob = &objects[o];
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++)
                for (int k = 0; k < ob->per_cell; k++) {
                    const int cell = (ob->row + dr) * ob->cells + ob->col + dc;
                    const int a = ob->first + ob->per_cell * cell + k;
                    const float *an = anchors + 4 * a;
                    const int best = dr == 0 && dc == 0;
                    scores[a * SSD_CLASSES + ob->cls] =
                        (uint8_t)((best ? 190 : 60) + npk_rand(&seed) % 60);
                    uint8_t *b = boxes + 4 * a;
                    b[0] = encode(10.0 * (ob->y - an[0]) / an[2], &seed);
                    b[1] = encode(10.0 * (ob->x - an[1]) / an[3], &seed);
                    b[2] = encode(5.0 * log(ob->h / an[2]), &seed);
                    b[3] = encode(5.0 * log(ob->w / an[3]), &seed);
                }
    }
}

static void test_ssd_tail(void **state)
{
    (void)state;
    npk_mapped map;
    npk_tfl_model m;
    npk_error err = {0};
    npk_fixture_map(SSD, &map);
    assert_int_equal(npk_tfl_parse(map.data, map.size, &m, &err), NPK_OK);
    uint8_t *boxes = malloc(SSD_BOXES * 4), *scores = malloc(SSD_BOXES * SSD_CLASSES);
    char sha[65];
    /* Uniform random bytes: thousands of candidates above 0.3, many equal. */
    uint64_t seed = 1;
    for (int i = 0; i < SSD_BOXES * 4; i++) boxes[i] = (uint8_t)npk_rand(&seed);
    for (int i = 0; i < SSD_BOXES * SSD_CLASSES; i++) scores[i] = (uint8_t)npk_rand(&seed);
    float count = ssd_run(&m, boxes, scores, "random", sha);
    assert_true(count == 20.0f);
    assert_string_equal(sha, SSD_RANDOM_SHA);
    const npk_tfl_subgraph *sg = &m.subgraphs[0];
    const float *anchors = NULL;
    for (uint32_t i = 0; i < sg->ntensors; i++)
        if (!strcmp(sg->tensors[i].name, "anchors")) {
            const npk_tfl_buffer *b = &m.buffers[sg->tensors[i].buffer];
            assert_int_equal(b->size, SSD_BOXES * 16);
            float *a = malloc(b->size);
            for (size_t j = 0; j < SSD_BOXES * 4; j++) a[j] = npk_ldf32le(b->data + 4 * j);
            anchors = a;
        }
    assert_non_null(anchors);
    frame_like(anchors, boxes, scores);
    free((void *)anchors);
    count = ssd_run(&m, boxes, scores, "frame", sha);
    assert_true(count == SSD_FRAME_COUNT);
    assert_string_equal(sha, SSD_FRAME_SHA);
    free(boxes);
    free(scores);
    npk_tfl_free(&m);
    npk_unmap_file(&map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_box),      cmocka_unit_test(test_nms_overlap),
        cmocka_unit_test(test_thresholds),   cmocka_unit_test(test_classes_per_detection),
        cmocka_unit_test(test_regular_nms),  cmocka_unit_test(test_quantized_inputs),
        cmocka_unit_test(test_inverted_box), cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_bad_tensors),  cmocka_unit_test(test_ssd_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
