/* PAD and PADV2 (pad.cc, reference_ops::Pad): constant padding before and
 * after each dimension, given by a constant int32 or int64 [rank, 2]
 * tensor (no negative amounts). The pad value is 0 for float and integer
 * tensors and the output zero point for quantised ones (PAD), or the one
 * element of PADV2's constant_values input, which for quantised tensors must
 * have the output's scale and zero point (as TFLite). Elements are copied
 * unchanged: any type. */
#include <string.h>

#include "tflite/kernel.h"

typedef struct pad {
    uint32_t ndim;
    int32_t before[NPK_TFL_MAXD];
    size_t es;         /* element size */
    uint8_t value[16]; /* the pad element (PAD) */
    bool from_input;   /* PADV2: the value is input 2 */
} pad;

static npk_status pad_prepare(npk_tfl_plan *p, npk_tfl_node *n)
{
    const bool v2 = n->builtin == NPK_TFL_OP_PADV2;
    npk_status st;
    /* PADV2's constant_values is optional (TFLite's pad.cc: zero point or 0 without it). */
    if ((st = npk_tfl_k_io(p, n, 2, v2 ? 3 : 2, 2, 1))) return st;
    const npk_tfl_rt *in = n->in[0], *pads = n->in[1], *out = n->out[0];
    const size_t es = npk_tfl_type_size(in->type);
    if (es == 0 || es > 8)
        return npk_tfl_k_unsupported(p, n, "input type %s", npk_tfl_type_name(in->type));
    if ((st = npk_tfl_k_type(p, n, out, "output", in->type)) ||
        (st = npk_tfl_k_const(p, n, pads, "paddings")))
        return st;
    if (pads->type != NPK_TFL_INT32 && pads->type != NPK_TFL_INT64)
        return npk_tfl_k_fail(p, n, "paddings are %s, expected INT32 or INT64",
                              npk_tfl_type_name(pads->type));
    if (pads->ndim != 2 || pads->dims[0] != (int32_t)in->ndim || pads->dims[1] != 2) {
        char s[96];
        return npk_tfl_k_fail(p, n, "paddings of shape %s for %u dimensions",
                              npk_tfl_k_shape_str(pads->dims, pads->ndim, s, sizeof s), in->ndim);
    }
    pad *q = npk_tfl_k_alloc(p, n, sizeof *q);
    if (!q) return NPK_E_NOMEM;
    n->params = q;
    q->ndim = in->ndim;
    q->es = es;
    int32_t dims[NPK_TFL_MAXD];
    for (uint32_t d = 0; d < in->ndim; d++) {
        int64_t b, a;
        if (pads->type == NPK_TFL_INT32) {
            int32_t v[2];
            memcpy(v, pads->data + 8 * d, 8);
            b = v[0], a = v[1];
        } else {
            int64_t v[2];
            memcpy(v, pads->data + 16 * d, 16);
            b = v[0], a = v[1];
        }
        if (b < 0 || a < 0 || b > INT32_MAX || a > INT32_MAX ||
            (int64_t)in->dims[d] + b + a > INT32_MAX)
            return npk_tfl_k_fail(p, n, "padding %lld, %lld of dimension %u", (long long)b,
                                  (long long)a, d);
        q->before[d] = (int32_t)b;
        dims[d] = (int32_t)(in->dims[d] + b + a);
    }
    if ((st = npk_tfl_k_output_shape(p, n, 0, in->ndim, dims))) return st;
    const bool q8 =
        in->type == NPK_TFL_UINT8 || in->type == NPK_TFL_INT8 || in->type == NPK_TFL_INT16;
    const npk_tfl_rt *c = v2 && n->nin > 2 ? n->in[2] : NULL;
    if (c) {
        if ((st = npk_tfl_k_type(p, n, c, "constant_values", in->type))) return st;
        if (c->count != 1)
            return npk_tfl_k_fail(p, n, "constant_values has %zu elements, expected 1", c->count);
        if (q8 && out->has_q &&
            (!c->has_q || c->scale != out->scale || c->zero_point != out->zero_point))
            return npk_tfl_k_fail(p, n, "constant_values is not quantised as the output");
        q->from_input = true;
        return NPK_OK;
    }
    if (q8 && out->has_q) {
        const int32_t z = out->zero_point;
        if (z < npk_tfl_qmin(in->type) || z > npk_tfl_qmax(in->type))
            return npk_tfl_k_fail(p, n, "output zero point %d outside the %s range", z,
                                  npk_tfl_type_name(in->type));
        if (es == 1) {
            q->value[0] = (uint8_t)z;
        } else {
            const int16_t h = (int16_t)z;
            memcpy(q->value, &h, 2);
        }
    }
    return NPK_OK;
}

static npk_status pad_eval(npk_tfl_exec *x, const npk_tfl_node *n)
{
    (void)x;
    const pad *q = n->params;
    const npk_tfl_rt *in = n->in[0], *out = n->out[0];
    const uint8_t *value = q->from_input ? n->in[2]->data : q->value;
    const size_t es = q->es;
    /* Fill with the pad value, then copy the input's rows into place. */
    bool uniform = true; /* every byte of the value the same: one memset */
    for (size_t k = 0; k < es; k++) uniform = uniform && value[k] == value[0];
    if (uniform)
        memset(out->data, value[0], out->bytes);
    else
        for (size_t i = 0; i < out->count; i++) memcpy(out->data + i * es, value, es);
    if (in->count == 0) return NPK_OK;
    const uint32_t nd = q->ndim;
    if (nd == 0) {
        memcpy(out->data, in->data, es);
        return NPK_OK;
    }
    /* Output strides (elements). */
    size_t ostride[NPK_TFL_MAXD];
    size_t s = 1;
    for (uint32_t d = nd; d-- > 0;) {
        ostride[d] = s;
        s *= (size_t)out->dims[d];
    }
    const size_t row = (size_t)in->dims[nd - 1];
    const size_t rows = in->count / row;
    int32_t idx[NPK_TFL_MAXD] = {0};
    for (size_t r = 0; r < rows; r++) {
        size_t o = (size_t)q->before[nd - 1];
        for (uint32_t d = 0; d + 1 < nd; d++) o += (size_t)(idx[d] + q->before[d]) * ostride[d];
        memcpy(out->data + o * es, in->data + r * row * es, row * es);
        for (uint32_t d = nd - 1; d-- > 0;) {
            if (++idx[d] < in->dims[d]) break;
            idx[d] = 0;
        }
    }
    return NPK_OK;
}

const npk_tfl_kernel npk_tfl_k_pad = {NPK_TFL_OP_PAD, NULL, 0xffffffffu, pad_prepare, pad_eval};
const npk_tfl_kernel npk_tfl_k_padv2 = {NPK_TFL_OP_PADV2, NULL, 0xffffffffu, pad_prepare, pad_eval};
