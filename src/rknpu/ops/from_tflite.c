/* One TFLite operator -> an RKNPU layer (npukit/rknpu_tflite.h): shapes,
 * options and quantisation as the model states them, the requantisation
 * multipliers as the interpreter computes them (src/tflite/ops/conv_util.c),
 * weights and biases from the constant buffers. Every refusal names the
 * operator and what the NPU (or this lowering) cannot do. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_tflite.h"
#include "npukit/tflite_quant.h"

typedef struct ctx {
    const npk_tfl_model *m;
    const npk_tfl_subgraph *sg;
    const npk_tfl_operator *op;
    npk_rk_tfl_layer *l;
    npk_error *err;
} ctx;

static npk_status fail(const ctx *c, npk_status st, const char *fmt, ...) NPK_PRINTF(3, 4);

static npk_status fail(const ctx *c, npk_status st, const char *fmt, ...)
{
    char msg[NPK_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return npk_fail_at(c->err, st, c->op->offset, "%s: %s", c->l->name, msg);
}

bool npk_rk_tfl_op_kind(int32_t builtin)
{
    switch (builtin) {
    case NPK_TFL_OP_CONV_2D:
    case NPK_TFL_OP_DEPTHWISE_CONV_2D:
    case NPK_TFL_OP_FULLY_CONNECTED:
    case NPK_TFL_OP_ADD:
    case NPK_TFL_OP_AVERAGE_POOL_2D:
    case NPK_TFL_OP_MAX_POOL_2D: return true;
    default: return false;
    }
}

/* Input or output slot `i` of the operator as a tensor (NULL when the
 * optional slot is left out). */
static npk_status tensor_at(const ctx *c, bool output, uint32_t i, const char *what,
                            const npk_tfl_tensor **t, int32_t *index)
{
    uint32_t n = output ? c->op->noutputs : c->op->ninputs;
    int32_t ix = i < n ? (output ? c->op->outputs : c->op->inputs)[i] : -1;
    *t = NULL;
    if (index) *index = ix;
    if (ix < 0) return NPK_OK;
    if ((uint32_t)ix >= c->sg->ntensors)
        return fail(c, NPK_E_FORMAT, "%s refers to tensor %d of %u", what, ix, c->sg->ntensors);
    *t = &c->sg->tensors[ix];
    return NPK_OK;
}

static npk_status need(const ctx *c, const npk_tfl_tensor *t, const char *what)
{
    if (!t) return fail(c, NPK_E_FORMAT, "the %s is missing", what);
    return NPK_OK;
}

static uint64_t numel(const npk_tfl_tensor *t)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->ndim; i++) n *= t->shape[i] > 0 ? (uint64_t)t->shape[i] : 0;
    return n;
}

static void shape_str(const npk_tfl_tensor *t, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < t->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", t->shape[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

/* The same as an argument of an error message (formatted only when one is). */
static const char *shape_of(const npk_tfl_tensor *t, char buf[96])
{
    shape_str(t, buf, 96);
    return buf;
}

/* A tensor's constant bytes (exactly numel x element size), or NULL when it
 * has no buffer data (an activation). */
static npk_status const_bytes(const ctx *c, const npk_tfl_tensor *t, const char *what,
                              const uint8_t **data)
{
    *data = NULL;
    if (t->buffer == 0 || t->buffer >= c->m->nbuffers || !c->m->buffers[t->buffer].data)
        return NPK_OK;
    const npk_tfl_buffer *b = &c->m->buffers[t->buffer];
    size_t es = npk_tfl_type_size(t->type);
    uint64_t want = numel(t) * es;
    if (!es || b->size != want)
        return fail(c, NPK_E_FORMAT, "the %s's buffer holds %zu bytes, its shape needs %llu", what,
                    b->size, (unsigned long long)want);
    *data = b->data;
    return NPK_OK;
}

static npk_status layer_type(const ctx *c, const npk_tfl_tensor *t, const char *what,
                             npk_rk_ltype *lt)
{
    switch (t->type) {
    case NPK_TFL_UINT8: *lt = NPK_RK_LT_UINT8; return NPK_OK;
    case NPK_TFL_INT8: *lt = NPK_RK_LT_INT8; return NPK_OK;
    case NPK_TFL_FLOAT32:
        return fail(c, NPK_E_UNSUPPORTED,
                    "float32 %s: the NPU's float path is fp16 and float32 operators are not "
                    "converted (quantised uint8/int8 operators are lowered)",
                    what);
    default:
        return fail(c, NPK_E_UNSUPPORTED, "%s of type %s: the NPU layers take uint8 or int8", what,
                    npk_tfl_type_name(t->type));
    }
}

static npk_status same_type(const ctx *c, const npk_tfl_tensor *t, const char *what, int8_t want)
{
    if (t->type != want)
        return fail(c, NPK_E_UNSUPPORTED,
                    "%s is %s but the input is %s: mixed types are not lowered", what,
                    npk_tfl_type_name(t->type), npk_tfl_type_name(want));
    return NPK_OK;
}

/* Per-tensor quantisation of an activation. */
static npk_status act_quant(const ctx *c, const npk_tfl_tensor *t, const char *what,
                            npk_rk_lquant *q, float *fscale)
{
    if (!t->has_quant || t->q.nscale == 0)
        return fail(c, NPK_E_UNSUPPORTED, "the %s (tensor \"%s\") has no quantisation", what,
                    t->name);
    if (t->q.nscale != 1)
        return fail(c, NPK_E_UNSUPPORTED,
                    "the %s has %u scales: activations are quantised per tensor", what,
                    t->q.nscale);
    float s = t->q.scale[0];
    if (!(s > 0.0f) || !isfinite(s))
        return fail(c, NPK_E_FORMAT, "the %s's scale is %g", what, (double)s);
    int64_t zp = t->q.nzero ? t->q.zero_point[0] : 0;
    int64_t lo = t->type == NPK_TFL_UINT8 ? 0 : -128, hi = t->type == NPK_TFL_UINT8 ? 255 : 127;
    if (zp < lo || zp > hi)
        return fail(c, NPK_E_FORMAT, "the %s's zero point %lld is outside %lld..%lld", what,
                    (long long)zp, (long long)lo, (long long)hi);
    q->scale = s;
    q->zero_point = (int32_t)zp;
    if (fscale) *fscale = s;
    return NPK_OK;
}

/* A 4-D NHWC activation of batch 1. */
static npk_status nhwc(const ctx *c, const npk_tfl_tensor *t, const char *what, uint32_t *h,
                       uint32_t *w, uint32_t *ch)
{
    char s[96];
    if (t->ndim != 4 || t->shape[1] < 1 || t->shape[2] < 1 || t->shape[3] < 1)
        return fail(c, NPK_E_UNSUPPORTED, "the %s has shape %s: expected [1, H, W, C]", what,
                    shape_of(t, s));
    if (t->shape[0] != 1)
        return fail(c, NPK_E_UNSUPPORTED, "the %s has shape %s: the NPU layers take batch 1", what,
                    shape_of(t, s));
    *h = (uint32_t)t->shape[1];
    *w = (uint32_t)t->shape[2];
    *ch = (uint32_t)t->shape[3];
    return NPK_OK;
}

static npk_status options(const ctx *c, uint8_t want_type)
{
    if (c->op->options.type != want_type || !c->op->options.table)
        return fail(c, NPK_E_FORMAT, "options of type %u, expected %s", c->op->options.type,
                    npk_tfl_options_name(want_type) ? npk_tfl_options_name(want_type) : "?");
    return NPK_OK;
}

static int64_t opt(const ctx *c, const char *name, int64_t fallback)
{
    return npk_tfl_opt_int(&c->op->options, name, fallback);
}

/* The fused activation as the output's clip range (the interpreter's rule). */
static npk_status clip(const ctx *c, const npk_tfl_tensor *out, float so, int32_t zo)
{
    int64_t act = opt(c, "fused_activation_function", 0);
    if (act != NPK_TFL_ACT_NONE && act != NPK_TFL_ACT_RELU && act != NPK_TFL_ACT_RELU6 &&
        act != NPK_TFL_ACT_RELU_N1_TO_1) {
        const char *n = npk_tfl_opt_enum_name(NPK_TFL_OPT_ACTIVATION, act);
        return fail(c, NPK_E_UNSUPPORTED,
                    "fused activation %s: the DPU clips (RELU, RELU6, RELU_N1_TO_1) but has no "
                    "such function",
                    n ? n : "?");
    }
    npk_q_activation_range((int)act, out->type, so, zo, &c->l->layer.act_min, &c->l->layer.act_max);
    return NPK_OK;
}

/* Window geometry from Conv2D/DepthwiseConv2D/Pool2D options. */
static npk_status window(const ctx *c, bool dilation)
{
    npk_rk_layer *L = &c->l->layer;
    int64_t pad = opt(c, "padding", 0), sh = opt(c, "stride_h", 0), sw = opt(c, "stride_w", 0);
    int64_t dh = dilation ? opt(c, "dilation_h_factor", 1) : 1,
            dw = dilation ? opt(c, "dilation_w_factor", 1) : 1;
    if (pad != NPK_TFL_PAD_SAME && pad != NPK_TFL_PAD_VALID)
        return fail(c, NPK_E_FORMAT, "padding %lld is neither SAME nor VALID", (long long)pad);
    if (sh < 1 || sw < 1 || sh > 7 || sw > 7)
        return fail(c, NPK_E_LIMIT, "stride %lldx%lld: CNA_CONV_CON3.CONV_X/Y_STRIDE take 1..7",
                    (long long)sh, (long long)sw);
    if (dh < 1 || dw < 1 || dh > 32 || dw > 32)
        return fail(c, NPK_E_LIMIT,
                    "dilation %lldx%lld: CNA_CONV_CON3.ATROUS_X/Y_DILATION take 1..32",
                    (long long)dh, (long long)dw);
    L->stride_h = (uint32_t)sh, L->stride_w = (uint32_t)sw;
    L->dil_h = (uint32_t)dh, L->dil_w = (uint32_t)dw;
    if (pad == NPK_TFL_PAD_SAME) {
        npk_rk_same_padding(L->in_h, L->k_h, L->stride_h, L->dil_h, &L->pad_top, &L->pad_bottom);
        npk_rk_same_padding(L->in_w, L->k_w, L->stride_w, L->dil_w, &L->pad_left, &L->pad_right);
    }
    uint32_t oh =
        npk_rk_conv_out_size(L->in_h, L->k_h, L->stride_h, L->dil_h, L->pad_top, L->pad_bottom);
    uint32_t ow =
        npk_rk_conv_out_size(L->in_w, L->k_w, L->stride_w, L->dil_w, L->pad_left, L->pad_right);
    if (oh != L->out_h || ow != L->out_w)
        return fail(c, NPK_E_FORMAT,
                    "output %ux%u, but a %ux%u window with stride %ux%u, dilation %ux%u and %s "
                    "padding gives %ux%u",
                    L->out_h, L->out_w, L->k_h, L->k_w, L->stride_h, L->stride_w, L->dil_h,
                    L->dil_w, pad == NPK_TFL_PAD_SAME ? "SAME" : "VALID", oh, ow);
    return NPK_OK;
}

/* Weights (constant, the input's type), per-tensor or per-channel scales
 * along qdim, one zero point; the real multipliers per output channel as the
 * interpreter computes them (conv_util.c: a float product of the scales for
 * per-tensor uint8 convolutions and every per-tensor fully-connected). */
static npk_status weights(const ctx *c, const npk_tfl_tensor *w, int8_t type, int qdim,
                          uint32_t channels, float si, float so, bool float_product)
{
    npk_rk_layer *L = &c->l->layer;
    npk_status st;
    if ((st = same_type(c, w, "the filter", type))) return st;
    const uint8_t *wd;
    if ((st = const_bytes(c, w, "filter", &wd))) return st;
    if (!wd)
        return fail(c, NPK_E_UNSUPPORTED,
                    "the filter (tensor \"%s\") is not a constant: weights computed at run time "
                    "are not lowered",
                    w->name);
    if (!w->has_quant || w->q.nscale == 0)
        return fail(c, NPK_E_FORMAT, "the filter has no quantisation");
    const npk_tfl_quant *q = &w->q;
    if (q->nscale != 1 && q->nscale != channels)
        return fail(c, NPK_E_FORMAT, "the filter has %u scales for %u output channels", q->nscale,
                    channels);
    if (q->nscale > 1 && q->quantized_dimension != qdim)
        return fail(c, NPK_E_UNSUPPORTED,
                    "per-channel filter quantised along dimension %d: the output channels are "
                    "dimension %d",
                    q->quantized_dimension, qdim);
    int64_t zw = q->nzero ? q->zero_point[0] : 0;
    for (uint32_t i = 1; i < q->nzero; i++)
        if (q->zero_point[i] != zw)
            return fail(c, NPK_E_UNSUPPORTED,
                        "filter zero points differ between channels (%lld, %lld): BS_OW_OP holds "
                        "one",
                        (long long)zw, (long long)q->zero_point[i]);
    if (type == NPK_TFL_INT8 && zw != 0)
        return fail(c, NPK_E_UNSUPPORTED,
                    "int8 filter zero point %lld (TFLite's int8 kernels require 0)", (long long)zw);
    if (zw < (type == NPK_TFL_UINT8 ? 0 : -128) || zw > (type == NPK_TFL_UINT8 ? 255 : 127))
        return fail(c, NPK_E_FORMAT, "filter zero point %lld", (long long)zw);
    for (uint32_t i = 0; i < q->nscale; i++)
        if (!(q->scale[i] > 0.0f) || !isfinite(q->scale[i]))
            return fail(c, NPK_E_FORMAT, "filter scale %u is %g", i, (double)q->scale[i]);
    L->weights = wd;
    L->w.scale = q->scale[0];
    L->w.zero_point = (int32_t)zw;
    c->l->own_mults = malloc(channels * sizeof(double));
    if (!c->l->own_mults) return fail(c, NPK_E_NOMEM, "out of memory");
    if (q->nscale > 1) {
        c->l->own_scales = malloc(channels * sizeof(double));
        if (!c->l->own_scales) return fail(c, NPK_E_NOMEM, "out of memory");
        for (uint32_t i = 0; i < channels; i++) c->l->own_scales[i] = q->scale[i];
        L->w_scales = c->l->own_scales;
    }
    double *mu = c->l->own_mults;
    if (q->nscale == 1) { /* per tensor: one multiplier */
        float ws = q->scale[0];
        double real =
            float_product ? (double)(si * ws) / (double)so : (double)si * (double)ws / (double)so;
        for (uint32_t i = 0; i < channels; i++) mu[i] = real;
    } else {
        for (uint32_t i = 0; i < channels; i++)
            mu[i] = (double)si * (double)q->scale[i] / (double)so;
    }
    L->mults = c->l->own_mults;
    return NPK_OK;
}

static npk_status bias(const ctx *c, const npk_tfl_tensor *b, uint32_t channels)
{
    if (!b) return NPK_OK;
    char s[96];
    if (b->type != NPK_TFL_INT32)
        return fail(c, NPK_E_UNSUPPORTED, "bias of type %s: quantised layers take int32 biases",
                    npk_tfl_type_name(b->type));
    if (numel(b) != channels)
        return fail(c, NPK_E_FORMAT, "bias of shape %s for %u output channels", shape_of(b, s),
                    channels);
    const uint8_t *d;
    npk_status st = const_bytes(c, b, "bias", &d);
    if (st) return st;
    if (!d) return fail(c, NPK_E_UNSUPPORTED, "the bias is not a constant");
    if (npk_host_is_le() && (uintptr_t)d % _Alignof(int32_t) == 0) {
        /* The file's order is the host's: used in place, like the weights. */
        c->l->layer.bias_i32 = (const int32_t *)(const void *)d;
        return NPK_OK;
    }
    int32_t *ob = malloc(channels * sizeof(int32_t));
    if (!ob) return fail(c, NPK_E_NOMEM, "out of memory");
    c->l->own_bias = ob;
    for (uint32_t i = 0; i < channels; i++) ob[i] = (int32_t)npk_ld32le(d + 4 * i);
    c->l->layer.bias_i32 = ob;
    return NPK_OK;
}

/* The activation input: an activation tensor (its bytes at run time). */
static npk_status data_input(const ctx *c, uint32_t slot, const char *what,
                             const npk_tfl_tensor **t)
{
    int32_t ix;
    npk_status st = tensor_at(c, false, slot, what, t, &ix);
    if (st || (st = need(c, *t, what))) return st;
    const uint8_t *d;
    if ((st = const_bytes(c, *t, what, &d))) return st;
    c->l->inputs[slot] = ix;
    c->l->const_data[slot] = d;
    return NPK_OK;
}

static npk_status lower_conv(const ctx *c, bool depthwise)
{
    npk_rk_layer *L = &c->l->layer;
    const npk_tfl_tensor *in, *w, *b, *out;
    npk_status st;
    if ((st = options(c, depthwise ? 2 : 1)) || (st = data_input(c, 0, "input", &in)) ||
        (st = tensor_at(c, false, 1, "filter", &w, NULL)) || (st = need(c, w, "filter")) ||
        (st = tensor_at(c, false, 2, "bias", &b, NULL)) ||
        (st = tensor_at(c, true, 0, "output", &out, &c->l->output)) ||
        (st = need(c, out, "output")) || (st = layer_type(c, in, "input", &L->type)) ||
        (st = same_type(c, out, "the output", in->type)) ||
        (st = nhwc(c, in, "input", &L->in_h, &L->in_w, &L->in_c)) ||
        (st = nhwc(c, out, "output", &L->out_h, &L->out_w, &L->out_c)))
        return st;
    L->kind = depthwise ? NPK_RK_LAYER_DEPTHWISE : NPK_RK_LAYER_CONV;
    char s[96];
    if (w->ndim != 4 || w->shape[1] < 1 || w->shape[2] < 1)
        return fail(c, NPK_E_FORMAT, "filter of shape %s", shape_of(w, s));
    L->k_h = (uint32_t)w->shape[1];
    L->k_w = (uint32_t)w->shape[2];
    if (depthwise) {
        if (w->shape[0] != 1 || (uint32_t)w->shape[3] != L->out_c)
            return fail(c, NPK_E_FORMAT, "depthwise filter of shape %s for %u output channels",
                        shape_of(w, s), L->out_c);
        if (L->out_c != L->in_c)
            return fail(c, NPK_E_UNSUPPORTED,
                        "depthwise convolution from %u to %u channels (depth multiplier %u): "
                        "only depth multiplier 1 is lowered",
                        L->in_c, L->out_c, L->in_c ? L->out_c / L->in_c : 0);
    } else if ((uint32_t)w->shape[0] != L->out_c || (uint32_t)w->shape[3] != L->in_c) {
        return fail(c, NPK_E_UNSUPPORTED,
                    "filter of shape %s for %u input and %u output channels (grouped "
                    "convolutions are not lowered)",
                    shape_of(w, s), L->in_c, L->out_c);
    }
    if (L->k_h > 31 || L->k_w > 31)
        return fail(c, NPK_E_LIMIT, "kernel %ux%u: CNA_WEIGHT_SIZE2.WEIGHT_WIDTH/HEIGHT take 1..31",
                    L->k_h, L->k_w);
    float si, so;
    if ((st = window(c, true)) || (st = act_quant(c, in, "input", &L->in, &si)) ||
        (st = act_quant(c, out, "output", &L->out, &so)) ||
        (st = weights(c, w, in->type, depthwise ? 3 : 0, L->out_c, si, so,
                      in->type == NPK_TFL_UINT8)) ||
        (st = bias(c, b, L->out_c)) || (st = clip(c, out, so, L->out.zero_point)))
        return st;
    return NPK_OK;
}

static npk_status lower_fc(const ctx *c)
{
    npk_rk_layer *L = &c->l->layer;
    const npk_tfl_tensor *in, *w, *b, *out;
    npk_status st;
    if ((st = options(c, 8)) || (st = data_input(c, 0, "input", &in)) ||
        (st = tensor_at(c, false, 1, "filter", &w, NULL)) || (st = need(c, w, "filter")) ||
        (st = tensor_at(c, false, 2, "bias", &b, NULL)) ||
        (st = tensor_at(c, true, 0, "output", &out, &c->l->output)) ||
        (st = need(c, out, "output")) || (st = layer_type(c, in, "input", &L->type)) ||
        (st = same_type(c, out, "the output", in->type)))
        return st;
    if (opt(c, "weights_format", 0) != 0)
        return fail(c, NPK_E_UNSUPPORTED, "shuffled weights (weights_format %lld) are not lowered",
                    (long long)opt(c, "weights_format", 0));
    char s[96];
    if (w->ndim != 2 || w->shape[0] < 1 || w->shape[1] < 1)
        return fail(c, NPK_E_FORMAT, "filter of shape %s: expected [units, depth]", shape_of(w, s));
    uint64_t units = (uint64_t)w->shape[0], depth = (uint64_t)w->shape[1];
    uint64_t n = numel(in);
    if (!n || n % depth)
        return fail(c, NPK_E_FORMAT, "input of %llu elements for a depth of %llu",
                    (unsigned long long)n, (unsigned long long)depth);
    if (n != depth)
        return fail(c, NPK_E_UNSUPPORTED,
                    "batch %llu: fully-connected layers are lowered for one row (batch 1)",
                    (unsigned long long)(n / depth));
    if (numel(out) != units)
        return fail(c, NPK_E_FORMAT, "output of %llu elements for %llu units",
                    (unsigned long long)numel(out), (unsigned long long)units);
    L->kind = NPK_RK_LAYER_FC;
    L->in_h = L->in_w = L->out_h = L->out_w = 1;
    L->in_c = (uint32_t)depth;
    L->out_c = (uint32_t)units;
    L->k_h = L->k_w = L->stride_h = L->stride_w = L->dil_h = L->dil_w = 1;
    float si, so;
    if ((st = act_quant(c, in, "input", &L->in, &si)) ||
        (st = act_quant(c, out, "output", &L->out, &so)) ||
        (st = weights(c, w, in->type, 0, L->out_c, si, so, true)) || (st = bias(c, b, L->out_c)) ||
        (st = clip(c, out, so, L->out.zero_point)))
        return st;
    return NPK_OK;
}

/* A tensor's (h, w, c) as the NPU layers see it, right-aligned to `nd`
 * dimensions (TFLite's broadcasting): C the last dimension, W the one
 * before, H the one before that; every dimension before those must be 1. */
static bool geo3(const npk_tfl_tensor *t, uint32_t nd, uint32_t g[3])
{
    int64_t d[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    if (t->ndim > nd || nd > 8 || nd < 3) return false;
    for (uint32_t i = 0; i < t->ndim; i++) d[nd - t->ndim + i] = t->shape[i];
    for (uint32_t i = 0; i + 3 < nd; i++)
        if (d[i] != 1) return false;
    for (int k = 0; k < 3; k++) {
        int64_t v = d[nd - 3 + (uint32_t)k];
        if (v < 1 || v > UINT32_MAX) return false;
        g[k] = (uint32_t)v;
    }
    return true;
}

/* "add of A and B: why", the shapes formatted only for the message. */
static npk_status add_fail(const ctx *c, npk_status st, const npk_tfl_tensor *a,
                           const npk_tfl_tensor *b, const char *why)
{
    char sa[96], sb[96];
    shape_str(a, sa, sizeof sa);
    shape_str(b, sb, sizeof sb);
    return fail(c, st, "add of %s and %s: %s", sa, sb, why);
}

static npk_status lower_add(const ctx *c)
{
    npk_rk_layer *L = &c->l->layer;
    const npk_tfl_tensor *a, *b, *out;
    npk_status st;
    if ((st = options(c, 11)) || (st = data_input(c, 0, "first input", &a)) ||
        (st = data_input(c, 1, "second input", &b)) ||
        (st = tensor_at(c, true, 0, "output", &out, &c->l->output)) ||
        (st = need(c, out, "output")) || (st = layer_type(c, a, "input", &L->type)) ||
        (st = same_type(c, b, "the second input", a->type)) ||
        (st = same_type(c, out, "the output", a->type)))
        return st;
    const npk_tfl_tensor *a0 = a, *b0 = b; /* as given, for the messages */
    uint32_t nd = out->ndim < 3 ? 3 : out->ndim, ga[3], gb[3], go[3];
    if (!numel(a) || !numel(b) || !geo3(a, nd, ga) || !geo3(b, nd, gb) || !geo3(out, nd, go))
        return add_fail(c, NPK_E_UNSUPPORTED, a0, b0, "expected up to [1, H, W, C]");
    /* The operand of the output's shape comes first (the sum is the same
     * either way round); the other broadcasts to it. */
    bool swap = !(ga[0] == go[0] && ga[1] == go[1] && ga[2] == go[2]);
    if (swap) {
        const npk_tfl_tensor *t = a;
        a = b, b = t;
        uint32_t g[3] = {ga[0], ga[1], ga[2]};
        memcpy(ga, gb, sizeof g);
        memcpy(gb, g, sizeof g);
        int32_t ix = c->l->inputs[0];
        c->l->inputs[0] = c->l->inputs[1], c->l->inputs[1] = ix;
        const void *cd = c->l->const_data[0];
        c->l->const_data[0] = c->l->const_data[1], c->l->const_data[1] = cd;
    }
    if (ga[0] != go[0] || ga[1] != go[1] || ga[2] != go[2])
        return add_fail(c, NPK_E_UNSUPPORTED, a0, b0,
                        "neither input has the output's shape (both broadcast)");
    for (int k = 0; k < 3; k++)
        if (gb[k] != 1 && gb[k] != ga[k])
            return add_fail(c, NPK_E_FORMAT, a0, b0, "the shapes do not broadcast");
    if (c->l->const_data[0])
        return add_fail(c, NPK_E_UNSUPPORTED, a0, b0,
                        "the operand of the output's shape is a constant");
    L->in_h = ga[0], L->in_w = ga[1], L->in_c = ga[2];
    L->out_h = L->in_h, L->out_w = L->in_w, L->out_c = L->in_c;
    if (gb[0] != ga[0] || gb[1] != ga[1] || gb[2] != ga[2] || c->l->const_data[1]) {
        L->in2_h = gb[0], L->in2_w = gb[1], L->in2_c = gb[2];
        /* A constant operand becomes part of the layer (no run-time input). */
        if (c->l->const_data[1]) {
            L->in2_const = c->l->const_data[1];
            c->l->inputs[1] = -1;
            c->l->const_data[1] = NULL;
        }
    }
    L->kind = NPK_RK_LAYER_ADD;
    L->k_h = L->k_w = L->stride_h = L->stride_w = L->dil_h = L->dil_w = 1;
    float so;
    if ((st = act_quant(c, a, swap ? "second input" : "first input", &L->in, NULL)) ||
        (st = act_quant(c, b, swap ? "first input" : "second input", &L->in2, NULL)) ||
        (st = act_quant(c, out, "output", &L->out, &so)) ||
        (st = clip(c, out, so, L->out.zero_point)))
        return st;
    return NPK_OK;
}

static npk_status lower_pool(const ctx *c, bool max)
{
    npk_rk_layer *L = &c->l->layer;
    const npk_tfl_tensor *in, *out;
    npk_status st;
    if ((st = options(c, 5)) || (st = data_input(c, 0, "input", &in)) ||
        (st = tensor_at(c, true, 0, "output", &out, &c->l->output)) ||
        (st = need(c, out, "output")) || (st = layer_type(c, in, "input", &L->type)) ||
        (st = same_type(c, out, "the output", in->type)) ||
        (st = nhwc(c, in, "input", &L->in_h, &L->in_w, &L->in_c)) ||
        (st = nhwc(c, out, "output", &L->out_h, &L->out_w, &L->out_c)))
        return st;
    L->kind = max ? NPK_RK_LAYER_MAXPOOL : NPK_RK_LAYER_AVGPOOL;
    int64_t fh = opt(c, "filter_height", 0), fw = opt(c, "filter_width", 0);
    /* Average windows beyond 31 are summed in pieces (pool_avg.c). */
    int64_t wmax = max ? 31 : 4096;
    if (fh < 1 || fw < 1 || fh > wmax || fw > wmax)
        return fail(c, NPK_E_LIMIT, "pooling window %lldx%lld: the NPU takes 1..%lld",
                    (long long)fh, (long long)fw, (long long)wmax);
    if (L->out_c != L->in_c)
        return fail(c, NPK_E_FORMAT, "pooling from %u to %u channels", L->in_c, L->out_c);
    L->k_h = (uint32_t)fh, L->k_w = (uint32_t)fw;
    float so;
    if ((st = window(c, false)) || (st = act_quant(c, in, "input", &L->in, NULL)) ||
        (st = act_quant(c, out, "output", &L->out, &so)) ||
        (st = clip(c, out, so, L->out.zero_point)))
        return st;
    if (L->in.scale != L->out.scale || L->in.zero_point != L->out.zero_point)
        return fail(c, NPK_E_UNSUPPORTED,
                    "pooling from scale %g, zero point %d to scale %g, zero point %d: the "
                    "input and output quantisation must be equal",
                    L->in.scale, L->in.zero_point, L->out.scale, L->out.zero_point);
    return NPK_OK;
}

/* "operator N (NAME)" cut to len - 1 bytes as snprintf would: formatted
 * by hand (a whole-network compile names every layer). */
static void layer_name(char *out, size_t len, uint32_t op_index, const char *name)
{
    char digits[10];
    int nd = 0;
    do digits[nd++] = (char)('0' + op_index % 10);
    while (op_index /= 10);
    size_t o = 0;
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (o + 1 < len) out[o++] = (char)(ch);                                                    \
    } while (0)
    for (const char *s = "operator "; *s; s++) PUT(*s);
    while (nd) PUT(digits[--nd]);
    PUT(' ');
    PUT('(');
    for (const char *s = name; *s; s++) PUT(*s);
    PUT(')');
#undef PUT
    if (len) out[o] = 0;
}

npk_status npk_rk_tfl_lower(const npk_tfl_model *m, uint32_t subgraph, uint32_t op_index,
                            npk_rk_tfl_layer *out, npk_error *err)
{
    memset(out, 0, sizeof *out);
    out->inputs[0] = out->inputs[1] = out->output = -1;
    out->subgraph = subgraph;
    out->op_index = op_index;
    if (subgraph >= m->nsubgraphs)
        return npk_fail(err, NPK_E_NOTFOUND, "subgraph %u: the model has %u", subgraph,
                        m->nsubgraphs);
    const npk_tfl_subgraph *sg = &m->subgraphs[subgraph];
    if (op_index >= sg->noperators)
        return npk_fail(err, NPK_E_NOTFOUND, "operator %u: the subgraph has %u", op_index,
                        sg->noperators);
    const npk_tfl_operator *op = &sg->operators[op_index];
    char nb[32];
    const char *name = npk_tfl_op_name(m, op, nb, sizeof nb);
    layer_name(out->name, sizeof out->name, op_index, name);
    out->offset = op->offset;
    const npk_tfl_opcode *oc = npk_tfl_op_code(m, op);
    out->builtin = oc ? oc->builtin : -1;
    ctx c = {m, sg, op, out, err};
    npk_status st;
    switch (out->builtin) {
    case NPK_TFL_OP_CONV_2D: st = lower_conv(&c, false); break;
    case NPK_TFL_OP_DEPTHWISE_CONV_2D: st = lower_conv(&c, true); break;
    case NPK_TFL_OP_FULLY_CONNECTED: st = lower_fc(&c); break;
    case NPK_TFL_OP_ADD: st = lower_add(&c); break;
    case NPK_TFL_OP_AVERAGE_POOL_2D: st = lower_pool(&c, false); break;
    case NPK_TFL_OP_MAX_POOL_2D: st = lower_pool(&c, true); break;
    default:
        st = fail(&c, NPK_E_UNSUPPORTED,
                  "not an NPU layer (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, "
                  "AVERAGE_POOL_2D, MAX_POOL_2D are)");
    }
    if (!st && (st = npk_rk_layer_check(&out->layer, NULL)) != NPK_OK) {
        npk_error e = {0};
        npk_rk_layer_check(&out->layer, &e);
        st = fail(&c, e.status, "%s", e.msg);
    }
    if (st) {
        npk_rk_tfl_layer_free(out);
        out->layer = (npk_rk_layer){0};
    }
    return st;
}

void npk_rk_tfl_layer_free(npk_rk_tfl_layer *l)
{
    if (!l) return;
    free(l->own_weights);
    free(l->own_bias);
    free(l->own_scales);
    free(l->own_mults);
    l->own_weights = NULL;
    l->own_bias = NULL;
    l->own_scales = l->own_mults = NULL;
}

npk_status npk_rk_tfl_plan(const npk_rk_tfl_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                           npk_error *err)
{
    npk_error e = {0};
    npk_status st = npk_rk_lplan_make(&l->layer, o, p, &e);
    if (st) return npk_fail_at(err, st, l->offset, "%s: %s", l->name, e.msg);
    return NPK_OK;
}
