/* A direct reference of TFLite's integer convolution semantics (reference
 * kernels: conv.h, depthwise_conv.h, fully_connected.h) on the library's
 * fixed-point primitives (npukit/tflite_quant.h), for the tests until phase
 * B compares against the interpreter itself. Header-only (each test is its
 * own program). */
#ifndef RK_TFL_REF_H
#define RK_TFL_REF_H

#include <math.h>
#include <stdint.h>

#include "npukit/rknpu_layer.h"
#include "npukit/tflite_quant.h"

/* TFLite's fixed-point primitives: the library's (npukit/tflite_quant.h). */
static inline void rk_ref_quantize_multiplier(double m, int32_t *q, int *shift)
{
    npk_q_quantize_multiplier(m, q, shift);
}

static inline int32_t rk_ref_srdhm(int32_t a, int32_t b)
{
    return npk_q_srdhm(a, b);
}

static inline int32_t rk_ref_mbqm(int32_t x, int32_t q, int shift)
{
    return npk_q_mul(x, q, shift);
}

static inline int32_t rk_ref_load(const npk_rk_layer *l, const void *p, size_t i)
{
    return l->type == NPK_RK_LT_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* y[out_h][out_w][out_c] (the layer's type) from x[in_h][in_w][in_c];
 * tie (optional) marks the outputs whose final rounding (RoundingDivideByPOT
 * after the rounded high multiply) fell exactly half-way: TFLite's double
 * rounding decides those, where a single rounding of the exact product
 * may go the other way. */
static inline void rk_ref_conv_ties(const npk_rk_layer *l, const void *x, void *y, uint8_t *tie)
{
    bool dw = l->kind == NPK_RK_LAYER_DEPTHWISE;
    for (uint32_t c = 0; c < l->out_c; c++) {
        double ws = l->w_scales ? l->w_scales[c] : l->w.scale;
        double m = l->in.scale * ws / l->out.scale;
        int32_t q;
        int sh;
        rk_ref_quantize_multiplier(m, &q, &sh);
        for (uint32_t oy = 0; oy < l->out_h; oy++)
            for (uint32_t ox = 0; ox < l->out_w; ox++) {
                int64_t acc = l->bias_i32 ? l->bias_i32[c] : 0;
                for (uint32_t ky = 0; ky < l->k_h; ky++)
                    for (uint32_t kx = 0; kx < l->k_w; kx++) {
                        int64_t iy = (int64_t)oy * l->stride_h - l->pad_top + ky * l->dil_h;
                        int64_t ix = (int64_t)ox * l->stride_w - l->pad_left + kx * l->dil_w;
                        if (iy < 0 || ix < 0 || iy >= l->in_h || ix >= l->in_w) continue;
                        size_t px = ((size_t)iy * l->in_w + ix) * l->in_c;
                        if (dw) {
                            int32_t xv = rk_ref_load(l, x, px + c) - l->in.zero_point;
                            int32_t wv = rk_ref_load(l, l->weights,
                                                     ((size_t)ky * l->k_w + kx) * l->in_c + c) -
                                         l->w.zero_point;
                            acc += (int64_t)xv * wv;
                            continue;
                        }
                        for (uint32_t ic = 0; ic < l->in_c; ic++) {
                            int32_t xv = rk_ref_load(l, x, px + ic) - l->in.zero_point;
                            size_t wi = (((size_t)c * l->k_h + ky) * l->k_w + kx) * l->in_c + ic;
                            int32_t wv = rk_ref_load(l, l->weights, wi) - l->w.zero_point;
                            acc += (int64_t)xv * wv;
                        }
                    }
                int32_t o = rk_ref_mbqm((int32_t)acc, q, sh) + l->out.zero_point;
                if (tie) {
                    int left = sh > 0 ? sh : 0, right = sh > 0 ? 0 : -sh;
                    int32_t hi = rk_ref_srdhm((int32_t)(acc * ((int64_t)1 << left)), q);
                    tie[((size_t)oy * l->out_w + ox) * l->out_c + c] =
                        right > 0 && (hi & ((1 << right) - 1)) == (1 << (right - 1));
                }
                if (o < l->act_min) o = l->act_min;
                if (o > l->act_max) o = l->act_max;
                size_t oi = ((size_t)oy * l->out_w + ox) * l->out_c + c;
                if (l->type == NPK_RK_LT_UINT8)
                    ((uint8_t *)y)[oi] = (uint8_t)o;
                else
                    ((int8_t *)y)[oi] = (int8_t)o;
            }
    }
}

static inline void rk_ref_conv(const npk_rk_layer *l, const void *x, void *y)
{
    rk_ref_conv_ties(l, x, y, NULL);
}

#endif
