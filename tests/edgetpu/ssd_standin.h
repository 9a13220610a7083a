/* A stand-in "uncompiled" model for the SSD segment pair, which ships
 * without its uncompiled twin: the same tensor names, types, shapes and
 * quantisation at the segments' boundaries (copied from the compiled
 * models), with convolutions of seeded random weights in between, and the
 * real CPU tail (two DEQUANTIZE, TFLite_Detection_PostProcess with the
 * model's anchors and options). It gives the emulated accelerator real,
 * varied values for both segments; its numbers mean nothing as detections.
 *
 *   normalized_input_image_tensor [1,300,300,3]
 *     -> conv 16x16/16 -> f11 [1,19,19,512]   (segment 0's outputs)
 *     -> conv 1x1/2    -> f13 [1,10,10,1024]
 *   box and class heads on f11 (19x19, 3 anchors), f13 (10x10, 6) and a chain
 *   of stride-2 convs from f13 (5x5, 3x3, 2x2, 1x1; 6 anchors each), reshaped
 *   and concatenated to Squeeze1 [1,1917,4] and convert_scores [1,1917,91]
 *   (segment 1's Edge TPU outputs), then the CPU tail of segment 1. */
#ifndef NPK_SSD_STANDIN_H
#define NPK_SSD_STANDIN_H

#include <math.h>

#include "graph_test.h"
#include "npukit/tflite_build.h"

typedef struct sb {
    npk_tflb *b;
    uint64_t seed;
} sb;

/* A copy of tensor `name` of a compiled model (name, type, shape, quantisation). */
static inline int32_t sb_copy(sb *s, const npk_tfl_model *m, const char *name)
{
    const npk_tfl_tensor *t = &m->subgraphs[0].tensors[gfx_find(m, name)];
    npk_tflb_tensor d = {.name = t->name, .type = t->type, .ndim = t->ndim, .shape = t->shape};
    if (t->has_quant && t->q.nscale) {
        d.nscale = t->q.nscale;
        d.scale = t->q.scale;
        d.zero_point = t->q.zero_point;
    }
    return npk_tflb_tensor_add(s->b, &d);
}

static inline int32_t sb_act(sb *s, const char *name, int32_t h, int32_t w, int32_t c, float scale,
                             int64_t zp)
{
    const int32_t shape[4] = {1, h, w, c};
    npk_tflb_tensor t = {.name = name,
                         .type = NPK_TFL_UINT8,
                         .ndim = 4,
                         .shape = shape,
                         .nscale = 1,
                         .scale = &scale,
                         .zero_point = &zp};
    return npk_tflb_tensor_add(s->b, &t);
}

/* conv (k x k, stride, SAME) of x (cin channels, scale sx) into y (cout,
 * scale sy): uint8 weights with zero point 128 and a scale that spreads
 * the outputs over about +-50 steps of y. */
static inline void sb_conv(sb *s, int32_t x, int32_t y, int32_t cin, float sx, int32_t cout,
                           float sy, int32_t k, int32_t stride)
{
    npk_error err = {0};
    const size_t nw = (size_t)cout * (size_t)k * (size_t)k * (size_t)cin;
    uint8_t *w = malloc(nw);
    int32_t *bias = malloc((size_t)cout * sizeof *bias);
    assert_non_null(w);
    assert_non_null(bias);
    for (size_t i = 0; i < nw; i++) w[i] = (uint8_t)npk_rand(&s->seed);
    const float sw = (float)(50.0 * sy / (sqrt((double)(k * k * cin)) * 74.0 * 74.0 * sx));
    for (int32_t i = 0; i < cout; i++)
        bias[i] = (int32_t)(npk_rand(&s->seed) % 2001) - 1000;
    const int32_t wshape[4] = {cout, k, k, cin}, bshape[1] = {cout};
    const int64_t wzp = 128, bzp = 0;
    const float bs = sx * sw;
    npk_tflb_tensor wt = {.type = NPK_TFL_UINT8,
                          .ndim = 4,
                          .shape = wshape,
                          .data = w,
                          .data_bytes = nw,
                          .nscale = 1,
                          .scale = &sw,
                          .zero_point = &wzp};
    npk_tflb_tensor bt = {.type = NPK_TFL_INT32,
                          .ndim = 1,
                          .shape = bshape,
                          .data = bias,
                          .data_bytes = (size_t)cout * 4,
                          .nscale = 1,
                          .scale = &bs,
                          .zero_point = &bzp};
    const int32_t wi = npk_tflb_tensor_add(s->b, &wt), bi = npk_tflb_tensor_add(s->b, &bt);
    free(w);
    free(bias);
    npk_tfl_options o;
    assert_int_equal(npk_tfl_options_init(&o, npk_tfl_builtin_options_type(NPK_TFL_OP_CONV_2D), &err),
                     NPK_OK);
    assert_int_equal(npk_tfl_options_set(&o, "padding", NPK_TFL_PAD_SAME, &err), NPK_OK);
    assert_int_equal(npk_tfl_options_set(&o, "stride_w", stride, &err), NPK_OK);
    assert_int_equal(npk_tfl_options_set(&o, "stride_h", stride, &err), NPK_OK);
    const int32_t in[3] = {x, wi, bi}, out[1] = {y};
    npk_tflb_op op = {.builtin = NPK_TFL_OP_CONV_2D,
                      .inputs = in,
                      .ninputs = 3,
                      .outputs = out,
                      .noutputs = 1,
                      .options = &o};
    assert_true(npk_tflb_op_add(s->b, &op) >= 0);
}

/* x [1, h, w, a * d] -> [1, h * w * a, d] with y's quantisation. */
static inline int32_t sb_reshape(sb *s, int32_t x, int32_t n, int32_t d, float scale, int64_t zp)
{
    const int32_t shape[3] = {1, n, d}, sshape[1] = {3};
    npk_tflb_tensor st = {.type = NPK_TFL_INT32,
                          .ndim = 1,
                          .shape = sshape,
                          .data = shape,
                          .data_bytes = sizeof shape};
    npk_tflb_tensor yt = {.type = NPK_TFL_UINT8,
                          .ndim = 3,
                          .shape = shape,
                          .nscale = 1,
                          .scale = &scale,
                          .zero_point = &zp};
    const int32_t si = npk_tflb_tensor_add(s->b, &st), y = npk_tflb_tensor_add(s->b, &yt);
    const int32_t in[2] = {x, si}, out[1] = {y};
    npk_tflb_op op = {
        .builtin = NPK_TFL_OP_RESHAPE, .inputs = in, .ninputs = 2, .outputs = out, .noutputs = 1};
    assert_true(npk_tflb_op_add(s->b, &op) >= 0);
    return y;
}

/* One head per feature map, reshaped and concatenated into `out` (d values per anchor). */
static inline void sb_heads(sb *s, const int32_t *maps, const int32_t *hw, const int32_t *ch,
                            const float *sc, const int32_t *anchors, int nmaps, int32_t d,
                            int32_t out, float so, int64_t zo)
{
    npk_error err = {0};
    int32_t parts[8];
    for (int i = 0; i < nmaps; i++) {
        const int32_t h = sb_act(s, NULL, hw[i], hw[i], anchors[i] * d, so, zo);
        sb_conv(s, maps[i], h, ch[i], sc[i], anchors[i] * d, so, 1, 1);
        parts[i] = sb_reshape(s, h, hw[i] * hw[i] * anchors[i], d, so, zo);
    }
    npk_tfl_options o;
    assert_int_equal(
        npk_tfl_options_init(&o, npk_tfl_builtin_options_type(NPK_TFL_OP_CONCATENATION), &err),
        NPK_OK);
    assert_int_equal(npk_tfl_options_set(&o, "axis", 1, &err), NPK_OK);
    const int32_t outs[1] = {out};
    npk_tflb_op op = {.builtin = NPK_TFL_OP_CONCATENATION,
                      .inputs = parts,
                      .ninputs = (uint32_t)nmaps,
                      .outputs = outs,
                      .noutputs = 1,
                      .options = &o};
    assert_true(npk_tflb_op_add(s->b, &op) >= 0);
}

/* The stand-in as a .tflite image (malloc'd). seg0 / seg1: the compiled
 * segments (names and quantisation are copied from them). with_tail: add
 * the DEQUANTIZE and post-processing ops (outputs: the detections), else
 * the outputs are Squeeze1 and convert_scores. */
static inline uint8_t *ssd_standin(const npk_tfl_model *m0, const npk_tfl_model *m1, bool with_tail,
                                   size_t *len)
{
    npk_error err = {0};
    sb s = {npk_tflb_new(), 0x55D};
    assert_non_null(s.b);
    const char *n11 = m1->subgraphs[0].tensors[1].name, *n13 = m1->subgraphs[0].tensors[2].name;
    const int32_t in = sb_copy(&s, m0, "normalized_input_image_tensor");
    const int32_t f11 = sb_copy(&s, m0, n11), f13 = sb_copy(&s, m0, n13);
    const int32_t boxes = sb_copy(&s, m1, "Squeeze1"), scores = sb_copy(&s, m1, "convert_scores");
    const npk_tfl_subgraph *g0 = &m0->subgraphs[0], *g1 = &m1->subgraphs[0];
    const float sin = g0->tensors[gfx_find(m0, "normalized_input_image_tensor")].q.scale[0];
    const float s11 = g1->tensors[1].q.scale[0], s13 = g1->tensors[2].q.scale[0];
    const float sbox = g1->tensors[gfx_find(m1, "Squeeze1")].q.scale[0];
    const int64_t zbox = g1->tensors[gfx_find(m1, "Squeeze1")].q.zero_point[0];
    const float ssc = g1->tensors[gfx_find(m1, "convert_scores")].q.scale[0];
    const int64_t zsc = g1->tensors[gfx_find(m1, "convert_scores")].q.zero_point[0];
    /* Segment 0. */
    sb_conv(&s, in, f11, 3, sin, 512, s11, 16, 16);
    sb_conv(&s, f11, f13, 512, s11, 1024, s13, 1, 2);
    /* Segment 1: the extra feature maps, then the heads. */
    const float sx = 0.05f;
    const int32_t c5 = sb_act(&s, NULL, 5, 5, 64, sx, 128), c3 = sb_act(&s, NULL, 3, 3, 64, sx, 128),
                  c2 = sb_act(&s, NULL, 2, 2, 64, sx, 128), c1 = sb_act(&s, NULL, 1, 1, 64, sx, 128);
    sb_conv(&s, f13, c5, 1024, s13, 64, sx, 1, 2);
    sb_conv(&s, c5, c3, 64, sx, 64, sx, 3, 2);
    sb_conv(&s, c3, c2, 64, sx, 64, sx, 3, 2);
    sb_conv(&s, c2, c1, 64, sx, 64, sx, 3, 2);
    const int32_t maps[6] = {f11, f13, c5, c3, c2, c1}, hw[6] = {19, 10, 5, 3, 2, 1},
                  ch[6] = {512, 1024, 64, 64, 64, 64}, anchors[6] = {3, 6, 6, 6, 6, 6};
    const float sc[6] = {s11, s13, sx, sx, sx, sx};
    sb_heads(&s, maps, hw, ch, sc, anchors, 6, 4, boxes, sbox, zbox);
    sb_heads(&s, maps, hw, ch, sc, anchors, 6, 91, scores, ssc, zsc);
    int32_t outs[4] = {boxes, scores};
    uint32_t nouts = 2;
    if (with_tail) {
        /* Segment 1's own CPU tail: its operators 1..3 with their tensors. */
        const int32_t anc = gfx_find(m1, "anchors");
        const npk_tfl_tensor *at = &g1->tensors[anc];
        const npk_tfl_buffer *ab = &m1->buffers[at->buffer];
        npk_tflb_tensor a = {.name = "anchors",
                             .type = at->type,
                             .ndim = at->ndim,
                             .shape = at->shape,
                             .data = ab->data,
                             .data_bytes = ab->size};
        const int32_t ai = npk_tflb_tensor_add(s.b, &a), b2 = sb_copy(&s, m1, "Squeeze2"),
                      s2 = sb_copy(&s, m1, "convert_scores1");
        const int32_t d1in[1] = {boxes}, d1out[1] = {b2}, d2in[1] = {scores}, d2out[1] = {s2};
        npk_tflb_op d1 = {.builtin = NPK_TFL_OP_DEQUANTIZE,
                          .inputs = d1in,
                          .ninputs = 1,
                          .outputs = d1out,
                          .noutputs = 1},
                    d2 = {.builtin = NPK_TFL_OP_DEQUANTIZE,
                          .inputs = d2in,
                          .ninputs = 1,
                          .outputs = d2out,
                          .noutputs = 1};
        assert_true(npk_tflb_op_add(s.b, &d1) >= 0);
        assert_true(npk_tflb_op_add(s.b, &d2) >= 0);
        const npk_tfl_operator *pp = &g1->operators[3];
        int32_t pin[3] = {b2, s2, ai}, pout[4];
        static const char *const names[4] = {
            "TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess:1",
            "TFLite_Detection_PostProcess:2", "TFLite_Detection_PostProcess:3"};
        for (int i = 0; i < 4; i++) pout[i] = outs[i] = sb_copy(&s, m1, names[i]);
        npk_tflb_op p = {.builtin = NPK_TFL_OP_CUSTOM,
                         .custom_code = "TFLite_Detection_PostProcess",
                         .inputs = pin,
                         .ninputs = 3,
                         .outputs = pout,
                         .noutputs = 4,
                         .custom_options = pp->custom_options,
                         .custom_options_len = pp->custom_options_len};
        assert_true(npk_tflb_op_add(s.b, &p) >= 0);
        nouts = 4;
    }
    const int32_t ins[1] = {in};
    npk_tflb_io(s.b, ins, 1, outs, nouts);
    uint8_t *out = NULL;
    if (npk_tflb_finish(s.b, &out, len, &err)) gfx_fail("stand-in", &err);
    npk_tflb_free(s.b);
    return out;
}

#endif
