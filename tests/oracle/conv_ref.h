/* An int8 CONV_2D written out plainly for the oracle tests, with either of
 * the two requantisations TFLite uses:
 *   reference  MultiplyByQuantizedMultiplier: SaturatingRoundingDoublingHighMul,
 *              then RoundingDivideByPOT (two roundings; reference kernels,
 *              npukit);
 *   ruy        (acc * q + 2^(s-1)) >> s with s = 31 - shift (one rounding;
 *              ruy/apply_multiplier.cc, which TFLite's optimized int8
 *              CONV_2D hands its output stage to).
 * Per-channel or per-tensor filter scales, SAME/VALID padding as TFLite's
 * ComputePaddingHeightWidth, strides, dilation, fused activation. */
#ifndef NPK_ORACLE_CONV_REF_H
#define NPK_ORACLE_CONV_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"
#include "npukit/tflite_quant.h"

static inline int32_t oc_ruy_mul(int32_t x, int32_t q, int shift)
{
    int total = 31 - shift;
    int64_t r = (int64_t)x * q + ((int64_t)1 << (total - 1));
    return (int32_t)(r >> total);
}

static inline int oc_conv_pad(int64_t padding, int stride, int dil, int in, int k, int out)
{
    if (padding != 0) return 0; /* VALID */
    int eff = (k - 1) * dil + 1;
    int total = (out - 1) * stride + eff - in;
    return total > 0 ? total / 2 : 0;
}

/* Whether op is a CONV_2D on int8 NHWC tensors this file computes. */
static inline bool oc_is_int8_conv(const npk_tfl_model *m, const npk_tfl_operator *op)
{
    const npk_tfl_subgraph *g = &m->subgraphs[0];
    return npk_tfl_op_code(m, op)->builtin == NPK_TFL_OP_CONV_2D && op->ninputs >= 2 &&
           g->tensors[op->inputs[0]].type == NPK_TFL_INT8 && g->tensors[op->inputs[1]].ndim == 4 &&
           g->tensors[op->outputs[0]].ndim == 4;
}

/* y = conv(x, w, b) of op into dst (y's shape), rounding as ruy when ruy,
 * else as the reference kernels. b may be NULL. */
static inline void oc_conv_int8(const npk_tfl_operator *op, const npk_tfl_quant *wq,
                                const npk_tfl_view *x, const npk_tfl_view *w, const int32_t *b,
                                const npk_tfl_view *y, bool ruy, int8_t *dst)
{
    int cout = w->dims[0], kh = w->dims[1], kw = w->dims[2], cin = w->dims[3];
    int ih = x->dims[1], iw = x->dims[2], oh = y->dims[1], ow = y->dims[2];
    const npk_tfl_options *o = &op->options;
    int sw = (int)npk_tfl_opt_int(o, "stride_w", 1), sh = (int)npk_tfl_opt_int(o, "stride_h", 1);
    int dw = (int)npk_tfl_opt_int(o, "dilation_w_factor", 1);
    int dh = (int)npk_tfl_opt_int(o, "dilation_h_factor", 1);
    int64_t padding = npk_tfl_opt_int(o, "padding", 0);
    int ph = oc_conv_pad(padding, sh, dh, ih, kh, oh),
        pw = oc_conv_pad(padding, sw, dw, iw, kw, ow);
    int32_t lo, hi;
    npk_q_activation_range((int)npk_tfl_opt_int(o, "fused_activation_function", 0), NPK_TFL_INT8,
                           y->scale, y->zero_point, &lo, &hi);
    const int8_t *xd = x->data, *wd = w->data;
    for (int c = 0; c < cout; c++) {
        int32_t q;
        int shift;
        float sc = wq->nscale > 1 ? wq->scale[c] : wq->scale[0];
        npk_q_quantize_multiplier((double)x->scale * (double)sc / (double)y->scale, &q, &shift);
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                int32_t acc = b ? b[c] : 0;
                for (int ky = 0; ky < kh; ky++)
                    for (int kx = 0; kx < kw; kx++) {
                        int iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
                        if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
                        const int8_t *xp = xd + ((size_t)iy * iw + ix) * cin;
                        const int8_t *wp = wd + (((size_t)c * kh + ky) * kw + kx) * cin;
                        for (int i = 0; i < cin; i++) acc += (xp[i] - x->zero_point) * wp[i];
                    }
                int32_t v =
                    (ruy ? oc_ruy_mul(acc, q, shift) : npk_q_mul(acc, q, shift)) + y->zero_point;
                v = v < lo ? lo : v > hi ? hi : v;
                dst[((size_t)oy * ow + ox) * cout + c] = (int8_t)v;
            }
    }
}

#endif
