/* Internal: what CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pools
 * share: window geometry (TFLite's ComputePaddingHeightWidth) and weight
 * quantisation with its requantisation multipliers
 * (PopulateConvolutionQuantizationParams). */
#ifndef NPK_TFL_CONV_UTIL_H
#define NPK_TFL_CONV_UTIL_H

#include "tflite/kernel.h"

typedef struct npk_tfl_geom {
    int32_t n, ih, iw, ic;  /* input NHWC */
    int32_t oh, ow, oc, dm; /* output; depth multiplier */
    int32_t kh, kw;         /* window (set by the caller) */
    int32_t sh, sw, dh, dw; /* strides, dilations */
    int32_t ph, pw;         /* padding before (top, left) */
} npk_tfl_geom;

/* Read padding, stride_h/w and (when the names are given) dilations from
 * the options, check them, and compute the output size and padding. */
npk_status npk_tfl_geom_window(npk_tfl_plan *p, const npk_tfl_node *n, npk_tfl_geom *g,
                               const char *dil_h, const char *dil_w);

typedef struct npk_tfl_wquant {
    uint32_t nscale; /* 1 (per tensor) or the channel count */
    const float *scale;
    int32_t zero; /* uint8: the zero point; int8: 0 */
} npk_tfl_wquant;

/* A filter's quantisation: per tensor, or per channel along qdim (int8 only). */
npk_status npk_tfl_weight_quant(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *w,
                                int32_t channels, int qdim, npk_tfl_wquant *wq);

/* Multiplier and shift per output channel. float_product: the scale of a
 * per-tensor filter is multiplied in float before the division, as TFLite's
 * GetQuantizedConvolutionMultipler does (uint8 conv, every per-tensor FC);
 * per channel, in double (PopulateConvolutionQuantizationParams). */
npk_status npk_tfl_conv_multipliers(npk_tfl_plan *p, const npk_tfl_node *n, bool float_product,
                                    float in_scale, const npk_tfl_wquant *wq, float out_scale,
                                    int32_t channels, int32_t *mult, int32_t *shift);

/* One multiplier, checked to be usable by MultiplyByQuantizedMultiplier. */
npk_status npk_tfl_multiplier(npk_tfl_plan *p, const npk_tfl_node *n, double real, int32_t *mult,
                              int32_t *shift);

#endif
