/* Layer descriptions: names, shape arithmetic, activation ranges and the
 * checks every layer passes before it is planned. */
#include <math.h>

#include "layer_internal.h"
#include "npukit/rknpu_layer.h"

const char *npk_rk_layer_kind_name(npk_rk_layer_kind k)
{
    switch (k) {
    case NPK_RK_LAYER_CONV: return "conv";
    case NPK_RK_LAYER_DEPTHWISE: return "depthwise";
    case NPK_RK_LAYER_FC: return "fc";
    case NPK_RK_LAYER_ADD: return "add";
    case NPK_RK_LAYER_AVGPOOL: return "avgpool";
    case NPK_RK_LAYER_MAXPOOL: return "maxpool";
    }
    return "?";
}

const char *npk_rk_ltype_name(npk_rk_ltype t)
{
    switch (t) {
    case NPK_RK_LT_INT8: return "int8";
    case NPK_RK_LT_UINT8: return "uint8";
    case NPK_RK_LT_FP16: return "fp16";
    }
    return "?";
}

uint32_t npk_rk_conv_out_size(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil,
                              uint32_t pad_before, uint32_t pad_after)
{
    if (!k || !stride || !dil) return 0;
    uint64_t span = (uint64_t)in + pad_before + pad_after, ext = (uint64_t)(k - 1) * dil + 1;
    if (span < ext) return 0;
    return (uint32_t)((span - ext) / stride + 1);
}

void npk_rk_same_padding(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t *before,
                         uint32_t *after)
{
    uint64_t out = stride ? ((uint64_t)in + stride - 1) / stride : 0;
    uint64_t ext = k ? (uint64_t)(k - 1) * dil + 1 : 0;
    int64_t total = out ? (int64_t)((out - 1) * stride + ext) - (int64_t)in : 0;
    if (total < 0) total = 0;
    *before = (uint32_t)(total / 2);
    *after = (uint32_t)(total - total / 2);
}

static void type_range(npk_rk_ltype t, int32_t *lo, int32_t *hi)
{
    *lo = t == NPK_RK_LT_UINT8 ? 0 : -128;
    *hi = t == NPK_RK_LT_UINT8 ? 255 : 127;
}

void npk_rk_activation_range(int activation, npk_rk_ltype t, double scale, int32_t zero_point,
                             int32_t *lo, int32_t *hi)
{
    int32_t tlo, thi;
    type_range(t, &tlo, &thi);
    *lo = tlo;
    *hi = thi;
    double q_lo = -INFINITY, q_hi = INFINITY;
    switch (activation) {
    case 1: q_lo = 0; break;
    case 2: q_lo = -1, q_hi = 1; break;
    case 3: q_lo = 0, q_hi = 6; break;
    default: return;
    }
    /* TFLite: zero_point + round(x / scale), rounding half away from zero. */
    if (q_lo > -INFINITY) {
        double v = zero_point + round(q_lo / scale);
        if (v > *lo) *lo = v > thi ? thi : (int32_t)v;
    }
    if (q_hi < INFINITY) {
        double v = zero_point + round(q_hi / scale);
        if (v < *hi) *hi = v < tlo ? tlo : (int32_t)v;
    }
}

static npk_status check_quant(const char *what, const npk_rk_lquant *q, npk_rk_ltype t,
                              npk_error *err)
{
    int32_t lo, hi;
    type_range(t, &lo, &hi);
    if (!(q->scale > 0) || !isfinite(q->scale))
        return npk_fail(err, NPK_E_ARG, "%s scale %g: must be positive and finite", what, q->scale);
    if (q->zero_point < lo || q->zero_point > hi)
        return npk_fail(err, NPK_E_ARG, "%s zero point %d is outside %s's range %d..%d", what,
                        q->zero_point, npk_rk_ltype_name(t), lo, hi);
    return NPK_OK;
}

/* ADD: two inputs and the output of one shape (no broadcasting), int8 or uint8. */
static npk_status check_add(const npk_rk_layer *l, npk_error *err)
{
    if ((unsigned)l->type > NPK_RK_LT_FP16)
        return npk_fail(err, NPK_E_ARG, "unknown layer type %d", (int)l->type);
    if (!l->in_h || !l->in_w || !l->in_c || l->out_h != l->in_h || l->out_w != l->in_w ||
        l->out_c != l->in_c)
        return npk_fail(err, NPK_E_ARG,
                        "add of %ux%ux%u into %ux%ux%u: the first input and the output must have "
                        "one non-empty shape",
                        l->in_h, l->in_w, l->in_c, l->out_h, l->out_w, l->out_c);
    bool bc = l->in2_h || l->in2_w || l->in2_c;
    uint32_t h2 = bc ? l->in2_h : l->in_h, w2 = bc ? l->in2_w : l->in_w,
             c2 = bc ? l->in2_c : l->in_c;
    if ((h2 != 1 && h2 != l->in_h) || (w2 != 1 && w2 != l->in_w) || (c2 != 1 && c2 != l->in_c))
        return npk_fail(err, NPK_E_ARG,
                        "add of %ux%ux%u and %ux%ux%u: the second input does not broadcast to the "
                        "first",
                        l->in_h, l->in_w, l->in_c, h2, w2, c2);
    bool same = h2 == l->in_h && w2 == l->in_w && c2 == l->in_c;
    if (!same && !l->in2_const && (h2 != l->in_h || w2 != l->in_w))
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "add of %ux%ux%u and %ux%ux%u: broadcasting a second input read at run "
                        "time over rows or columns is not lowered (constants, and [H, W, 1] over "
                        "channels, are)",
                        l->in_h, l->in_w, l->in_c, h2, w2, c2);
    if (l->type == NPK_RK_LT_FP16) {
        if (!same || l->in2_const)
            return npk_fail(err, NPK_E_UNSUPPORTED,
                            "fp16 add of %ux%ux%u and %ux%ux%u: broadcasting is planned for int8 "
                            "and uint8 only",
                            l->in_h, l->in_w, l->in_c, h2, w2, c2);
        if (l->act_min > l->act_max)
            return npk_fail(err, NPK_E_ARG, "activation range %d..%d is empty", l->act_min,
                            l->act_max);
        return NPK_OK;
    }
    npk_status st;
    if ((st = check_quant("first input", &l->in, l->type, err)) ||
        (st = check_quant("second input", &l->in2, l->type, err)) ||
        (st = check_quant("output", &l->out, l->type, err)))
        return st;
    int32_t lo, hi;
    type_range(l->type, &lo, &hi);
    if (l->act_min < lo || l->act_max > hi || l->act_min > l->act_max)
        return npk_fail(err, NPK_E_ARG, "activation range %d..%d is not inside %d..%d", l->act_min,
                        l->act_max, lo, hi);
    return NPK_OK;
}

npk_status npk_rk_layer_check(const npk_rk_layer *l, npk_error *err)
{
    if (l->kind == NPK_RK_LAYER_ADD) return check_add(l, err);
    if ((unsigned)l->kind > NPK_RK_LAYER_MAXPOOL)
        return npk_fail(err, NPK_E_ARG, "unknown layer kind %d", (int)l->kind);
    bool pool = l->kind == NPK_RK_LAYER_AVGPOOL || l->kind == NPK_RK_LAYER_MAXPOOL;
    if ((unsigned)l->type > NPK_RK_LT_FP16)
        return npk_fail(err, NPK_E_ARG, "unknown layer type %d", (int)l->type);
    if (!l->in_h || !l->in_w || !l->in_c || !l->out_c)
        return npk_fail(err, NPK_E_ARG, "empty input or output (%ux%ux%u -> %u channels)", l->in_h,
                        l->in_w, l->in_c, l->out_c);
    if (!l->weights && !pool) return npk_fail(err, NPK_E_ARG, "layer without weights");
    if (pool && l->in_c != l->out_c)
        return npk_fail(err, NPK_E_ARG, "pooling from %u to %u channels: they must be equal",
                        l->in_c, l->out_c);
    if (pool && l->dil_h * l->dil_w != 1)
        return npk_fail(err, NPK_E_ARG, "pooling with dilation %ux%u", l->dil_h, l->dil_w);
    if (pool && l->type != NPK_RK_LT_FP16 &&
        (l->in.scale != l->out.scale || l->in.zero_point != l->out.zero_point))
        return npk_fail(err, NPK_E_ARG,
                        "pooling with different input and output quantisation (TFLite requires "
                        "them equal)");
    if (l->kind == NPK_RK_LAYER_FC && (l->in_h != 1 || l->in_w != 1 || l->k_h != 1 || l->k_w != 1))
        return npk_fail(err, NPK_E_ARG,
                        "fully-connected layers take one pixel and a 1x1 kernel (got %ux%u input, "
                        "%ux%u kernel): flatten the input into channels",
                        l->in_h, l->in_w, l->k_h, l->k_w);
    if (l->kind == NPK_RK_LAYER_DEPTHWISE && l->in_c != l->out_c)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "depthwise with %u input and %u output channels: only depth multiplier 1 "
                        "is supported",
                        l->in_c, l->out_c);
    if (l->stride_h < 1 || l->stride_h > 7 || l->stride_w < 1 || l->stride_w > 7)
        return npk_fail(err, NPK_E_LIMIT, "stride %ux%u: CNA_CONV_CON3.CONV_X/Y_STRIDE take 1..7",
                        l->stride_h, l->stride_w);
    if (l->dil_h < 1 || l->dil_w < 1 || l->dil_h > 32 || l->dil_w > 32)
        return npk_fail(err, NPK_E_LIMIT,
                        "dilation %ux%u: CNA_CONV_CON3.ATROUS_X/Y_DILATION take 1..32", l->dil_h,
                        l->dil_w);
    /* Average pools beyond 31 are cut into window pieces (pool_avg.c). */
    uint32_t kmax = l->kind == NPK_RK_LAYER_AVGPOOL ? 4096 : 31;
    if (!l->k_h || !l->k_w || l->k_h > kmax || l->k_w > kmax)
        return npk_fail(err, NPK_E_LIMIT,
                        "kernel %ux%u: CNA_WEIGHT_SIZE2.WEIGHT_WIDTH/HEIGHT take 1..%u", l->k_h,
                        l->k_w, kmax);
    if ((uint64_t)l->pad_top > (uint64_t)(l->k_h - 1) * l->dil_h ||
        (uint64_t)l->pad_left > (uint64_t)(l->k_w - 1) * l->dil_w)
        return npk_fail(err, NPK_E_ARG,
                        "padding top %u, left %u reaches past the kernel's extent: some outputs "
                        "would see only padding",
                        l->pad_top, l->pad_left);
    if (l->pad_top > 15 || l->pad_left > 15)
        return npk_fail(err, NPK_E_LIMIT,
                        "padding top %u, left %u: CNA_PAD_CON0.PAD_TOP/PAD_LEFT take 0..15",
                        l->pad_top, l->pad_left);
    if ((uint64_t)l->pad_bottom > (uint64_t)(l->k_h - 1) * l->dil_h ||
        (uint64_t)l->pad_right > (uint64_t)(l->k_w - 1) * l->dil_w)
        return npk_fail(err, NPK_E_LIMIT,
                        "padding bottom %u, right %u exceeds the kernel's extent minus one (the "
                        "CNA pads implicitly only within one window)",
                        l->pad_bottom, l->pad_right);
    uint32_t oh =
        npk_rk_conv_out_size(l->in_h, l->k_h, l->stride_h, l->dil_h, l->pad_top, l->pad_bottom);
    uint32_t ow =
        npk_rk_conv_out_size(l->in_w, l->k_w, l->stride_w, l->dil_w, l->pad_left, l->pad_right);
    if (!oh || !ow || oh != l->out_h || ow != l->out_w)
        return npk_fail(err, NPK_E_ARG,
                        "output %ux%u does not follow from input %ux%u, kernel %ux%u, stride "
                        "%ux%u, dilation %ux%u and padding (%u, %u, %u, %u): expected %ux%u",
                        l->out_h, l->out_w, l->in_h, l->in_w, l->k_h, l->k_w, l->stride_h,
                        l->stride_w, l->dil_h, l->dil_w, l->pad_top, l->pad_left, l->pad_bottom,
                        l->pad_right, oh, ow);
    if (l->type == NPK_RK_LT_FP16) return NPK_OK;
    npk_status st;
    if ((st = check_quant("input", &l->in, l->type, err)) ||
        (st = check_quant("output", &l->out, l->type, err)))
        return st;
    if (l->fused_add) {
        if (pool)
            return npk_fail(err, NPK_E_UNSUPPORTED,
                            "a fused add follows only conv, depthwise or fc");
        if ((st = check_quant("add input", &l->in2, l->type, err)) ||
            (st = check_quant("add output", &l->add_out, l->type, err)))
            return st;
    }
    if (pool) {
        int32_t lo, hi;
        type_range(l->type, &lo, &hi);
        if (l->kind == NPK_RK_LAYER_MAXPOOL && (l->act_min != lo || l->act_max != hi))
            return npk_fail(err, NPK_E_UNSUPPORTED,
                            "max pooling with a fused activation (clip %d..%d): the PPU has no "
                            "clip stage",
                            l->act_min, l->act_max);
        if (l->act_min < lo || l->act_max > hi || l->act_min > l->act_max)
            return npk_fail(err, NPK_E_ARG, "activation range %d..%d is not inside %d..%d",
                            l->act_min, l->act_max, lo, hi);
        return NPK_OK;
    }
    if (l->w_scales) {
        for (uint32_t c = 0; c < l->out_c; c++) {
            npk_rk_lquant q = {l->w_scales[c], l->w.zero_point};
            if ((st = check_quant("weight (per channel)", &q, l->type, err))) return st;
        }
    } else if ((st = check_quant("weight", &l->w, l->type, err)))
        return st;
    /* A run of one value is checked once (its bits: a run of -0 after 0 or
     * of a NaN is checked again, and fails where the first did). */
    for (uint32_t c = 0; l->mults && c < l->out_c; c = rk_same_run(l->mults, c, l->out_c))
        if (!(l->mults[c] > 0) || !isfinite(l->mults[c]))
            return npk_fail(err, NPK_E_ARG, "channel %u: requantisation multiplier %g", c,
                            l->mults[c]);
    int32_t lo, hi;
    type_range(l->type, &lo, &hi);
    if (l->act_min < lo || l->act_max > hi || l->act_min > l->act_max)
        return npk_fail(err, NPK_E_ARG,
                        "activation range %d..%d is not inside %s's range %d..%d (or empty)",
                        l->act_min, l->act_max, npk_rk_ltype_name(l->type), lo, hi);
    return NPK_OK;
}
