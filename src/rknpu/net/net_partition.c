/* Whole networks, step 1: which operator runs where. Operators in stored
 * (topological) order; an operator the layer front end lowers, whose tensors
 * have the layer's NPU geometry and no constant input, goes to the NPU; a
 * RESHAPE/SQUEEZE of a device tensor that keeps the innermost dimension is
 * free (the output shares the buffer); everything else goes to the
 * interpreter, and what neither runs is refused naming the operator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "rknpu/ops/layer_internal.h"
#include "npukit/bytes.h"

static uint64_t numel(const npk_tfl_tensor *t)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->ndim; i++) n *= t->shape[i] > 0 ? (uint64_t)t->shape[i] : 0;
    return n;
}

bool net_is_const(const npk_tfl_model *m, const npk_tfl_tensor *t)
{
    return t->buffer && t->buffer < m->nbuffers && m->buffers[t->buffer].data;
}

/* c the innermost dimension, w the one before, h the product of the rest
 * (the layers' view: [1, H, W, C], FC [1, C]); false for an empty tensor. */
static bool geometry(const npk_tfl_tensor *t, npk_rk_net_tensor *g)
{
    uint32_t d = t->ndim;
    uint64_t h = 1;
    for (uint32_t i = 0; i + 2 < d; i++) h *= t->shape[i] > 0 ? (uint64_t)t->shape[i] : 0;
    g->c = d ? (uint32_t)(t->shape[d - 1] > 0 ? t->shape[d - 1] : 0) : 1;
    g->w = d > 1 ? (uint32_t)(t->shape[d - 2] > 0 ? t->shape[d - 2] : 0) : 1;
    g->h = h <= UINT32_MAX ? (uint32_t)h : 0;
    return g->c && g->w && g->h;
}

static bool geo_eq(const npk_rk_net_tensor *g, uint32_t h, uint32_t w, uint32_t c)
{
    return g->h == h && g->w == w && g->c == c;
}

/* Conv and FC read the programmed input channels (a multiple of 32) with
 * Σ xp·(w − zw): padding channels of a tensor another layer wrote hold that
 * layer's padding outputs, not the zero point the planner assumes. With the
 * weights of those channels set to the weight zero point they contribute
 * nothing whatever they hold. */
static npk_status widen(npk_rk_net_op *o, npk_error *err)
{
    npk_rk_layer *L = &o->tl.layer;
    if ((L->kind != NPK_RK_LAYER_CONV && L->kind != NPK_RK_LAYER_FC) || L->in_c % 32 == 0)
        return NPK_OK;
    uint32_t cin = (L->in_c + 31) / 32 * 32;
    size_t taps = (size_t)L->out_c * L->k_h * L->k_w;
    uint8_t *w = malloc(taps * cin);
    if (!w) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    uint8_t pad = (uint8_t)L->w.zero_point; /* uint8: zw; int8: 0 */
    const uint8_t *src = L->weights;
    for (size_t t = 0; t < taps; t++) {
        memcpy(w + t * cin, src + t * L->in_c, L->in_c);
        memset(w + t * cin + L->in_c, pad, cin - L->in_c);
    }
    o->wide_w = w;
    o->widened = true;
    L->weights = w;
    L->in_c = cin;
    return NPK_OK;
}

/* A PAD of H and W only, by constant int32 amounts, whose one reader is a
 * convolution or depthwise convolution: its amounts move into the
 * convolution's padding (the CNA pads with the input zero point, which is
 * what PAD writes: the output zero point). Widths in pads[4]: top, bottom,
 * left, right. */
static int32_t pad_reader(const npk_tfl_model *m, uint32_t i, uint32_t pads[4])
{
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    const npk_tfl_operator *op = &sg->operators[i];
    const npk_tfl_opcode *oc = npk_tfl_op_code(m, op);
    if (!oc || oc->builtin != NPK_TFL_OP_PAD || op->ninputs != 2 || op->noutputs != 1) return -1;
    int32_t in = op->inputs[0], pt = op->inputs[1], out = op->outputs[0];
    if (in < 0 || pt < 0 || out < 0 || (uint32_t)in >= sg->ntensors ||
        (uint32_t)pt >= sg->ntensors || (uint32_t)out >= sg->ntensors)
        return -1;
    const npk_tfl_tensor *tp = &sg->tensors[pt];
    if (tp->type != NPK_TFL_INT32 || tp->ndim != 2 || tp->shape[0] != 4 || tp->shape[1] != 2 ||
        !net_is_const(m, tp) || m->buffers[tp->buffer].size != 32 || sg->tensors[in].ndim != 4)
        return -1;
    const uint8_t *d = m->buffers[tp->buffer].data;
    int32_t v[8];
    for (int k = 0; k < 8; k++) v[k] = (int32_t)npk_ld32le(d + 4 * k);
    if (v[0] || v[1] || v[6] || v[7]) return -1;
    for (int k = 2; k < 6; k++)
        if (v[k] < 0 || v[k] > 15) return -1;
    pads[0] = (uint32_t)v[2], pads[1] = (uint32_t)v[3], pads[2] = (uint32_t)v[4],
    pads[3] = (uint32_t)v[5];
    for (uint32_t j = 0; j < sg->noutputs; j++)
        if (sg->outputs[j] == out) return -1;
    int32_t reader = -1;
    for (uint32_t q = 0; q < sg->noperators; q++) {
        const npk_tfl_operator *c = &sg->operators[q];
        for (uint32_t j = 0; j < c->ninputs; j++)
            if (c->inputs[j] == out) {
                if (reader >= 0 || j != 0) return -1;
                reader = (int32_t)q;
            }
    }
    if (reader <= (int32_t)i) return -1;
    const npk_tfl_opcode *rc = npk_tfl_op_code(m, &sg->operators[reader]);
    if (!rc || (rc->builtin != NPK_TFL_OP_CONV_2D && rc->builtin != NPK_TFL_OP_DEPTHWISE_CONV_2D))
        return -1;
    return reader;
}

/* The lowered convolution reading PAD `pad`'s input with the amounts added
 * to its own padding; false when the result is past the CNA's limits. */
static bool fold_pad(const npk_tfl_model *m, uint32_t pad, npk_rk_tfl_layer *tl)
{
    uint32_t p[4];
    if (pad_reader(m, pad, p) != (int32_t)tl->op_index) return false;
    npk_rk_layer L = tl->layer;
    if (L.in_h <= p[0] + p[1] || L.in_w <= p[2] + p[3]) return false;
    L.in_h -= p[0] + p[1];
    L.in_w -= p[2] + p[3];
    L.pad_top += p[0], L.pad_bottom += p[1], L.pad_left += p[2], L.pad_right += p[3];
    if (npk_rk_layer_check(&L, NULL) != NPK_OK) return false;
    tl->layer = L;
    tl->inputs[0] = m->subgraphs[0].operators[pad].inputs[0];
    return true;
}

/* npk_rk_tfl_plan, the layer's weight buffer built in its place in the
 * network's (the offset place() gives it) when that holds it. */
static npk_status plan_in(net_build *b, const npk_rk_tfl_layer *tl, const npk_rk_lplan_opts *po,
                          npk_rk_lplan *p, npk_error *err)
{
    uint8_t *at = b->net->weights && b->wt_used < b->wt_cap ? b->net->weights + b->wt_used : NULL;
    npk_error e = {0};
    npk_status st =
        rk_lplan_make_in(&tl->layer, po, NULL, at, at ? b->wt_cap - b->wt_used : 0, p, &e);
    if (st) return npk_fail_at(err, st, tl->offset, "%s: %s", tl->name, e.msg);
    return NPK_OK;
}

/* Try operator i on the NPU: lowered and planned (sizes, address 0). */
static bool try_npu(net_build *b, uint32_t i, npk_rk_net_op *o, char *why, size_t why_len)
{
    npk_rk_net *net = b->net;
    npk_error e = {0};
    memset(o, 0, sizeof *o);
    o->op_index = i;
    o->in[0] = o->in[1] = o->out = -1;
    const npk_tfl_opcode *oc = npk_tfl_op_code(net->m, &net->m->subgraphs[0].operators[i]);
    if (oc && oc->builtin == NPK_TFL_OP_QUANTIZE ? net_quantize_lower(net->m, i, &o->tl, &e)
                                                 : npk_rk_tfl_lower(net->m, 0, i, &o->tl, &e)) {
        snprintf(why, why_len, "%s", e.msg);
        return false;
    }
    const npk_rk_layer *L = &o->tl.layer;
    bool ok = true;
    if (b->fold[i] >= 0 && !fold_pad(net->m, (uint32_t)b->fold[i], &o->tl)) {
        snprintf(why, why_len, "%s: the PAD before it does not fold", o->tl.name);
        ok = false;
    }
    for (int k = 0; k < 2 && ok; k++) {
        if (o->tl.inputs[k] < 0) continue;
        const npk_rk_net_tensor *g = &net->tensors[o->tl.inputs[k]];
        if (o->tl.const_data[k]) {
            snprintf(why, why_len, "%s: a constant input", o->tl.name);
            ok = false;
        } else {
            /* A broadcasting ADD's second input has its own shape. */
            bool b2 = k == 1 && L->in2_h;
            uint32_t h = b2 ? L->in2_h : L->in_h, w = b2 ? L->in2_w : L->in_w,
                     c = b2 ? L->in2_c : L->in_c;
            if (!geo_eq(g, h, w, c)) {
                snprintf(why, why_len, "%s: input %ux%ux%u is not the layer's %ux%ux%u", o->tl.name,
                         g->h, g->w, g->c, h, w, c);
                ok = false;
            }
        }
    }
    if (ok && !geo_eq(&net->tensors[o->tl.output], L->out_h, L->out_w, L->out_c)) {
        snprintf(why, why_len, "%s: the output's geometry is not the layer's", o->tl.name);
        ok = false;
    }
    npk_status st = ok ? widen(o, &e) : NPK_OK;
    if (ok && st) {
        snprintf(why, why_len, "%s", e.msg);
        ok = false;
    }
    if (ok) {
        /* Marker addresses: every address in the streams names its buffer. */
        npk_rk_lplan_opts po = {net->opts.cores, net->opts.form,   NET_MARK_IN, NET_MARK_WT,
                                NET_MARK_OUT,    NET_MARK_REG,     0,           0,
                                NET_MARK_IN2,    net->opts.requant};
        if (plan_in(b, &o->tl, &po, &o->plan, &e)) {
            snprintf(why, why_len, "%s", e.msg);
            ok = false;
        } else if (o->plan.input_bytes >= NET_MARK_SPAN || o->plan.output_bytes >= NET_MARK_SPAN ||
                   o->plan.weight_bytes >= NET_MARK_SPAN ||
                   (uint64_t)o->plan.regcmd_entries * 8 >= NET_MARK_SPAN) {
            snprintf(why, why_len, "%s: a buffer of 512 MiB or more", o->tl.name);
            npk_rk_lplan_free(&o->plan);
            ok = false;
        } else {
            uint32_t mark[NET_BUFS] = {NET_MARK_IN, NET_MARK_IN2, NET_MARK_OUT, NET_MARK_WT,
                                       NET_MARK_REG};
            memcpy(o->addr, mark, sizeof mark);
        }
    }
    if (!ok) {
        npk_rk_tfl_layer_free(&o->tl);
        free(o->wide_w);
        o->wide_w = NULL;
    }
    return ok;
}

/* QUANTIZE uint8 <-> int8 that only moves the zero point by 128: the
 * stored domain (uint8 as u - 128) holds the same bytes for both. */
static bool same_bytes_quantize(const npk_tfl_tensor *ti, const npk_tfl_tensor *to)
{
    bool u2i = ti->type == NPK_TFL_UINT8 && to->type == NPK_TFL_INT8;
    bool i2u = ti->type == NPK_TFL_INT8 && to->type == NPK_TFL_UINT8;
    if (!(u2i || i2u) || !ti->has_quant || !to->has_quant || ti->q.nscale != 1 ||
        to->q.nscale != 1 || ti->q.nzero != 1 || to->q.nzero != 1)
        return false;
    if (memcmp(&ti->q.scale[0], &to->q.scale[0], sizeof(float))) return false;
    return to->q.zero_point[0] - ti->q.zero_point[0] == (u2i ? -128 : 128);
}

/* A RESHAPE/SQUEEZE of a device tensor keeping the innermost dimension, or
 * a QUANTIZE that keeps the stored bytes (of a device or a host tensor). */
static bool is_free(net_build *b, const npk_tfl_operator *op, int32_t builtin)
{
    npk_rk_net *net = b->net;
    bool quantize = builtin == NPK_TFL_OP_QUANTIZE;
    if (builtin != NPK_TFL_OP_RESHAPE && builtin != NPK_TFL_OP_SQUEEZE && !quantize) return false;
    if (op->ninputs < 1 || op->noutputs != 1 || op->inputs[0] < 0 || op->outputs[0] < 0)
        return false;
    int32_t in = op->inputs[0], out = op->outputs[0];
    if ((uint32_t)in >= net->ntensors || (uint32_t)out >= net->ntensors) return false;
    const npk_tfl_subgraph *sg = &net->m->subgraphs[0];
    const npk_tfl_tensor *ti = &sg->tensors[in], *to = &sg->tensors[out];
    if (quantize) {
        if (!same_bytes_quantize(ti, to) || ti->ndim != to->ndim || net_is_const(net->m, ti))
            return false;
        for (uint32_t d = 0; d < ti->ndim; d++)
            if (ti->shape[d] != to->shape[d]) return false;
        if (!net->tensors[in].c) return false;
        if (b->dev_made[in]) return true;
        /* Of a host tensor: worth it only when an NPU layer may read the result. */
        for (uint32_t q = 0; q < sg->noperators; q++) {
            const npk_tfl_operator *c = &sg->operators[q];
            const npk_tfl_opcode *oc = npk_tfl_op_code(net->m, c);
            for (uint32_t j = 0; oc && j < c->ninputs; j++)
                if (c->inputs[j] == out && (npk_rk_tfl_op_kind(oc->builtin) ||
                                            pad_reader(net->m, q, (uint32_t[4]){0}) >= 0))
                    return true;
        }
        return false;
    }
    if (!b->dev_made[in]) return false;
    if (ti->type != to->type || numel(ti) != numel(to) || !numel(ti)) return false;
    const npk_rk_net_tensor *gi = &net->tensors[in], *go = &net->tensors[out];
    return gi->c == go->c && gi->c && (uint64_t)gi->h * gi->w == (uint64_t)go->h * go->w;
}

npk_status net_partition(net_build *b, npk_error *err)
{
    npk_rk_net *net = b->net;
    const npk_tfl_model *m = net->m;
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    for (uint32_t t = 0; t < net->ntensors; t++) {
        npk_rk_net_tensor *g = &net->tensors[t];
        g->root = (int32_t)t;
        g->first = g->last = -1;
        g->pack_from = -1;
        const npk_tfl_tensor *tt = &sg->tensors[t];
        if (!geometry(tt, g)) g->h = g->w = g->c = 0;
        size_t es = npk_tfl_type_size(tt->type);
        g->host_bytes = (size_t)numel(tt) * es;
        g->ndim = tt->ndim < NPK_TFL_VIEW_MAX_DIMS ? tt->ndim : NPK_TFL_VIEW_MAX_DIMS;
        for (uint32_t d = 0; d < g->ndim; d++) g->dims[d] = tt->shape[d];
    }
    char why[NPK_ERROR_MSG_MAX];
    for (uint32_t i = 0; i < sg->noperators; i++) {
        const npk_tfl_operator *op = &sg->operators[i];
        const npk_tfl_opcode *oc = npk_tfl_op_code(m, op);
        int32_t builtin = oc ? oc->builtin : -1;
        why[0] = 0;
        /* A QUANTIZE that keeps the stored bytes is free (below); one that
         * changes them is a layer where that saves a trip to the host. */
        bool npu_kind =
            npk_rk_tfl_op_kind(builtin) || (builtin == NPK_TFL_OP_QUANTIZE &&
                                            !is_free(b, op, builtin) && net_quantize_worth(b, i));
        if (npu_kind && try_npu(b, i, &net->ops[net->nops], why, sizeof why)) {
            npk_rk_net_op *o = &net->ops[net->nops++];
            b->side[i] = SIDE_NPU;
            b->npu_of[i] = (int32_t)(net->nops - 1);
            b->dev_made[o->tl.output] = true;
            b->wt_used = (b->wt_used + o->plan.weight_bytes + 63) & ~(uint64_t)63;
            net->npu_ops++;
            continue;
        }
        if (builtin == NPK_TFL_OP_PAD) {
            /* Folded when its reader lowers with the amounts in its padding. */
            int32_t q = pad_reader(m, i, (uint32_t[4]){0});
            npk_rk_tfl_layer tl;
            if (q >= 0 && !net_is_const(m, &sg->tensors[op->inputs[0]]) &&
                npk_rk_tfl_lower(m, 0, (uint32_t)q, &tl, NULL) == NPK_OK) {
                /* ... and plans (so the reader surely goes to the NPU). */
                npk_rk_lplan_opts po = {net->opts.cores, net->opts.form,   NET_MARK_IN, NET_MARK_WT,
                                        NET_MARK_OUT,    NET_MARK_REG,     0,           0,
                                        NET_MARK_IN2,    net->opts.requant};
                npk_rk_lplan plan;
                bool ok = fold_pad(m, i, &tl) && npk_rk_tfl_plan(&tl, &po, &plan, NULL) == NPK_OK;
                if (ok) npk_rk_lplan_free(&plan);
                npk_rk_tfl_layer_free(&tl);
                if (ok) {
                    b->side[i] = SIDE_FOLDED;
                    b->fold[q] = (int32_t)i;
                    net->free_ops++;
                    continue;
                }
            }
        }
        if (b->fold[i] >= 0)
            return npk_fail_at(err, NPK_E_UNSUPPORTED, op->offset,
                               "operator %u: the PAD folded into it no longer folds: %s", i, why);
        if (is_free(b, op, builtin)) {
            int32_t in = op->inputs[0], out = op->outputs[0];
            b->side[i] = SIDE_FREE;
            if (b->dev_made[in]) {
                net->tensors[out].root = net->tensors[in].root;
                b->dev_made[out] = true;
            } else {
                net->tensors[out].pack_from = in; /* packed at its segment's start */
            }
            net->free_ops++;
            continue;
        }
        if (net_concat(b, i)) {
            b->side[i] = SIDE_CONCAT;
            net->free_ops++;
            continue;
        }
        char iwhy[256] = "";
        if (!npk_tfl_op_supported(m, 0, i, iwhy, sizeof iwhy)) {
            char nb[32];
            const char *name = npk_tfl_op_name(m, op, nb, sizeof nb);
            return npk_fail_at(err, NPK_E_UNSUPPORTED, op->offset,
                               "operator %u (%s): neither the NPU nor the interpreter runs it "
                               "(interpreter: %s%s%s)",
                               i, name, iwhy, why[0] ? "; NPU: " : "", why);
        }
        b->side[i] = SIDE_CPU;
        net->cpu_ops++;
    }
    return NPK_OK;
}
