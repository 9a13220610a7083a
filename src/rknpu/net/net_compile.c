/* Whole networks, step 2: segments, tensor lifetimes, the activation buffer
 * planned by lifetime, and the address map (weights, streams, task records)
 * with every layer planned at its buffers' addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "npukit/checked.h"
#include "npukit/rknpu_uapi.h"

#define ALIGN 64

static uint64_t up(uint64_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

static void touch(npk_rk_net_tensor *g, int32_t at)
{
    if (g->first < 0 || at < g->first) g->first = at;
    if (at > g->last) g->last = at;
}

static void grow(npk_rk_net_tensor *g, uint64_t bytes)
{
    if (bytes > g->dev_bytes) g->dev_bytes = bytes;
}

static bool in_list(const int32_t *v, uint32_t n, int32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

static bool is_graph_output(const npk_tfl_subgraph *sg, int32_t t)
{
    return in_list(sg->outputs, sg->noutputs, t);
}

/* The graph in order, as the interpreter takes it (interp.c, make_nodes):
 * every input of an operator a model input, a constant or an earlier
 * operator's output; every output written once and neither a constant nor
 * a model input. Without it an operator reading its own output would get
 * one address for both on the NPU, and the lifetimes below assume it. */
static npk_status check_order(const npk_tfl_model *m, npk_error *err)
{
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    enum { NONE, INPUT, CONSTANT, WRITTEN };
    uint8_t *have = calloc((size_t)sg->ntensors + 1, 1);
    if (!have) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (uint32_t t = 0; t < sg->ntensors; t++) {
        const npk_tfl_tensor *x = &sg->tensors[t];
        const npk_tfl_buffer *b = x->buffer < m->nbuffers ? &m->buffers[x->buffer] : NULL;
        if (b && b->data && b->size) have[t] = CONSTANT;
    }
    for (uint32_t i = 0; i < sg->ninputs; i++)
        if (sg->inputs[i] >= 0 && (uint32_t)sg->inputs[i] < sg->ntensors)
            have[sg->inputs[i]] = INPUT;
    static const char *const what[] = {"", "a model input", "a constant",
                                       "written by an earlier operator"};
    npk_status st = NPK_OK;
    for (uint32_t i = 0; i < sg->noperators && !st; i++) {
        const npk_tfl_operator *op = &sg->operators[i];
        char buf[32];
        const char *name = npk_tfl_op_name(m, op, buf, sizeof buf);
        for (uint32_t j = 0; j < op->ninputs && !st; j++) {
            int32_t t = op->inputs[j];
            if (t >= 0 && (uint32_t)t < sg->ntensors && have[t] == NONE)
                st = npk_fail_at(err, NPK_E_FORMAT, op->offset,
                                 "operator %u (%s): input %u (tensor %d \"%s\") is neither a "
                                 "model input, a constant nor computed by an earlier operator",
                                 i, name, j, t, sg->tensors[t].name);
        }
        for (uint32_t j = 0; j < op->noutputs && !st; j++) {
            int32_t t = op->outputs[j];
            if (t < 0 || (uint32_t)t >= sg->ntensors) continue;
            if (have[t] != NONE)
                st = npk_fail_at(err, NPK_E_FORMAT, op->offset,
                                 "operator %u (%s): output %u (tensor %d \"%s\") is %s", i, name, j,
                                 t, sg->tensors[t].name, what[have[t]]);
            have[t] = WRITTEN;
        }
    }
    free(have);
    return st;
}

/* Segments: maximal runs of operators on one side (free reshapes go with the NPU). */
static npk_status make_segments(net_build *b, npk_error *err)
{
    npk_rk_net *net = b->net;
    const npk_tfl_subgraph *sg = &net->m->subgraphs[0];
    size_t nops = 0;
    for (uint32_t i = 0; i < sg->noperators; i++) {
        bool npu = b->side[i] != SIDE_CPU;
        if (!net->nsegs || net->segs[net->nsegs - 1].npu != npu) {
            npk_rk_net_seg *s = &net->segs[net->nsegs++];
            s->npu = npu;
            s->op_first = i;
            s->npu_first = nops;
        }
        npk_rk_net_seg *s = &net->segs[net->nsegs - 1];
        s->op_count++;
        if (b->side[i] == SIDE_NPU) {
            s->npu_count++;
            nops++;
        }
    }
    /* Per segment: NPU: tensors packed before (host-made roots its layers
     * read) and unpacked after (device-made tensors the host needs); CPU: the
     * interpreter's cut. Lists are bounded by the tensor count. */
    for (size_t k = 0; k < net->nsegs; k++) {
        npk_rk_net_seg *s = &net->segs[k];
        s->in = calloc(net->ntensors + 1, sizeof *s->in);
        s->out = calloc(net->ntensors + 1, sizeof *s->out);
        if (!s->in || !s->out) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        uint32_t end = s->op_first + s->op_count;
        for (uint32_t i = s->op_first; i < end; i++) {
            const npk_tfl_operator *op = &sg->operators[i];
            if (s->npu && b->side[i] == SIDE_NPU) {
                const npk_rk_net_op *o = &net->ops[b->npu_of[i]];
                for (int j = 0; j < 2; j++) {
                    int32_t t = o->tl.inputs[j];
                    if (t < 0) continue;
                    int32_t r = net->tensors[t].root;
                    if (!b->dev_made[r] && !in_list(s->in, s->nin, r)) s->in[s->nin++] = r;
                }
            }
            /* A CONCATENATION's host inputs: packed at their planes here. */
            for (uint32_t j = 0; b->side[i] == SIDE_CONCAT && j < op->ninputs; j++)
                if (!b->dev_made[op->inputs[j]] && !in_list(s->in, s->nin, op->inputs[j]))
                    s->in[s->nin++] = op->inputs[j];
            /* A free QUANTIZE of a host tensor: its output is packed here. */
            if (b->side[i] == SIDE_FREE && net->tensors[op->outputs[0]].pack_from >= 0 &&
                !in_list(s->in, s->nin, op->outputs[0]))
                s->in[s->nin++] = op->outputs[0];
            for (uint32_t j = 0; j < op->noutputs; j++) {
                int32_t t = op->outputs[j];
                if (t < 0 || (uint32_t)t >= net->ntensors) continue;
                bool outside = is_graph_output(sg, t);
                for (uint32_t q = 0; q < sg->noperators && !outside; q++) {
                    if (q >= s->op_first && q < end) continue;
                    const npk_tfl_operator *c = &sg->operators[q];
                    if (s->npu && b->side[q] != SIDE_CPU) continue; /* read on the device */
                    outside = in_list(c->inputs, c->ninputs, t);
                }
                if (outside && !in_list(s->out, s->nout, t)) s->out[s->nout++] = t;
            }
            if (!s->npu)
                for (uint32_t j = 0; j < op->ninputs; j++) {
                    int32_t t = op->inputs[j];
                    if (t < 0 || (uint32_t)t >= net->ntensors ||
                        net_is_const(net->m, &sg->tensors[t]))
                        continue;
                    bool inside = false;
                    for (uint32_t q = s->op_first; q < i && !inside; q++)
                        inside = in_list(sg->operators[q].outputs, sg->operators[q].noutputs, t);
                    if (!inside && !in_list(s->in, s->nin, t)) s->in[s->nin++] = t;
                }
        }
    }
    return NPK_OK;
}

/* Where each tensor lives, each device root's lifetime and size. */
static void lifetimes(net_build *b)
{
    npk_rk_net *net = b->net;
    const npk_tfl_subgraph *sg = &net->m->subgraphs[0];
    for (uint32_t i = 0; i < sg->ninputs; i++)
        if (sg->inputs[i] >= 0 && (uint32_t)sg->inputs[i] < net->ntensors)
            net->tensors[sg->inputs[i]].where |= NPK_RK_NET_HOST;
    for (size_t k = 0; k < net->nsegs; k++) {
        npk_rk_net_seg *s = &net->segs[k];
        int32_t last = (int32_t)(s->op_first + s->op_count - 1);
        if (!s->npu) {
            for (uint32_t j = 0; j < s->nin; j++) net->tensors[s->in[j]].where |= NPK_RK_NET_HOST;
            for (uint32_t j = 0; j < s->nout; j++) net->tensors[s->out[j]].where |= NPK_RK_NET_HOST;
            continue;
        }
        for (uint32_t j = 0; j < s->nin; j++) {
            npk_rk_net_tensor *g = &net->tensors[s->in[j]], *r = &net->tensors[g->root];
            if (g->pack_from >= 0) net->tensors[g->pack_from].where |= NPK_RK_NET_HOST;
            g->where |= NPK_RK_NET_DEV;
            r->where |= NPK_RK_NET_DEV;
            touch(r, (int32_t)s->op_first);
            grow(r, g->root_off + (uint64_t)(g->c + 15) / 16 * g->h * g->w * 16);
        }
        for (uint32_t j = 0; j < s->nout; j++) {
            npk_rk_net_tensor *g = &net->tensors[s->out[j]];
            g->where |= NPK_RK_NET_HOST;
            touch(&net->tensors[g->root], last);
        }
        for (uint32_t i = s->op_first; i <= (uint32_t)last; i++) {
            const npk_tfl_operator *op = &sg->operators[i];
            if (b->side[i] == SIDE_FOLDED) continue;
            if (b->side[i] == SIDE_FREE || b->side[i] == SIDE_CONCAT) {
                npk_rk_net_tensor *g = &net->tensors[net->tensors[op->outputs[0]].root];
                g->where |= NPK_RK_NET_DEV;
                touch(g, (int32_t)i);
                continue;
            }
            npk_rk_net_op *o = &net->ops[b->npu_of[i]];
            for (int j = 0; j < 2; j++) {
                if (o->tl.inputs[j] < 0) continue;
                o->in[j] = net->tensors[o->tl.inputs[j]].root;
                npk_rk_net_tensor *g = &net->tensors[o->in[j]];
                g->where |= NPK_RK_NET_DEV;
                touch(g, (int32_t)i);
                grow(g, j ? npk_rk_lplan_input2_bytes(&o->plan) : o->plan.input_bytes);
            }
            o->out = net->tensors[o->tl.output].root; /* a CONCATENATION's when an input of it */
            npk_rk_net_tensor *g = &net->tensors[o->out];
            g->where |= NPK_RK_NET_DEV;
            touch(g, (int32_t)i);
            grow(g, net->tensors[o->tl.output].root_off + o->plan.output_bytes);
        }
    }
    for (uint32_t i = 0; i < sg->noutputs; i++)
        if (sg->outputs[i] >= 0 && (uint32_t)sg->outputs[i] < net->ntensors)
            net->tensors[sg->outputs[i]].where |= NPK_RK_NET_HOST;
}

static bool alive_together(const npk_rk_net_tensor *a, const npk_rk_net_tensor *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* Whether tensor t is a root in the activation buffer. */
static bool dev_root(const npk_rk_net *net, uint32_t t)
{
    const npk_rk_net_tensor *g = &net->tensors[t];
    return g->root == (int32_t)t && (g->where & NPK_RK_NET_DEV);
}

/* Greedy by size, largest first: the lowest offset that overlaps no placed
 * tensor alive at the same time (TFLite's arena strategy). */
static npk_status plan_memory(npk_rk_net *net, npk_error *err)
{
    int32_t *roots = malloc((net->ntensors + 1) * sizeof *roots);
    if (!roots) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    uint32_t n = 0;
    for (uint32_t t = 0; t < net->ntensors; t++) {
        npk_rk_net_tensor *g = &net->tensors[t];
        if (dev_root(net, t) && g->dev_bytes) {
            g->dev_bytes = up(g->dev_bytes);
            roots[n++] = (int32_t)t;
        }
    }
    /* insertion sort: largest first, then earliest */
    for (uint32_t i = 1; i < n; i++) {
        int32_t x = roots[i];
        uint32_t j = i;
        while (j > 0) {
            const npk_rk_net_tensor *a = &net->tensors[roots[j - 1]], *c = &net->tensors[x];
            if (a->dev_bytes > c->dev_bytes ||
                (a->dev_bytes == c->dev_bytes && a->first <= c->first))
                break;
            roots[j] = roots[j - 1];
            j--;
        }
        roots[j] = x;
    }
    uint64_t extent = 0;
    for (uint32_t i = 0; i < n; i++) {
        npk_rk_net_tensor *g = &net->tensors[roots[i]];
        uint64_t off = 0;
        bool moved = true;
        while (moved) {
            moved = false;
            for (uint32_t j = 0; j < i; j++) {
                const npk_rk_net_tensor *h = &net->tensors[roots[j]];
                if (!net->opts.keep_all && !alive_together(g, h)) continue;
                if (off < h->dev_off + h->dev_bytes && h->dev_off < off + g->dev_bytes) {
                    off = h->dev_off + h->dev_bytes;
                    moved = true;
                }
            }
        }
        g->dev_off = off;
        if (off + g->dev_bytes > extent) extent = off + g->dev_bytes;
    }
    net->act_bytes = extent;
    /* The lower bound: the largest sum of sizes alive at one operator, from
     * each size added where its tensor's life starts and taken off after it
     * ends. */
    const npk_tfl_subgraph *sg = &net->m->subgraphs[0];
    int64_t nop = sg->noperators;
    uint64_t *step = calloc((size_t)nop + 1, sizeof *step);
    if (!step) {
        free(roots);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        const npk_rk_net_tensor *g = &net->tensors[roots[i]];
        int64_t lo = g->first < 0 ? 0 : g->first, hi = g->last < nop ? g->last : nop - 1;
        if (lo > hi) continue;
        step[lo] += g->dev_bytes;
        step[hi + 1] -= g->dev_bytes; /* modulo 2^64: the running sum is exact */
    }
    net->peak_live = 0;
    uint64_t sum = 0;
    for (int64_t at = 0; at < nop; at++) {
        sum += step[at];
        if (sum > net->peak_live) net->peak_live = sum;
    }
    free(step);
    free(roots);
    return NPK_OK;
}

npk_status npk_rk_net_check_memory(const npk_rk_net *net, npk_error *err)
{
    /* The roots in order, each compared with the later ones (the same pairs
     * in the same order as over all tensors). */
    uint32_t *roots = malloc((net->ntensors + 1) * sizeof *roots), n = 0;
    if (!roots) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (uint32_t a = 0; a < net->ntensors; a++)
        if (dev_root(net, a)) roots[n++] = a;
    npk_status st = NPK_OK;
    for (uint32_t a = 0, i = 0; a < net->ntensors && !st; a++) {
        const npk_rk_net_tensor *g = &net->tensors[a], *r = &net->tensors[g->root];
        if (g->root_off && g->root_off + g->dev_bytes > r->dev_bytes) {
            st = npk_fail(err, NPK_E_LIMIT, "tensor %u passes the end of tensor %d it is part of",
                          a, g->root);
            break;
        }
        if (i == n || roots[i] != a) continue;
        i++;
        if (g->dev_off + g->dev_bytes > net->act_bytes) {
            st = npk_fail(err, NPK_E_LIMIT, "tensor %u at 0x%llx+%llu passes the buffer's end", a,
                          (unsigned long long)g->dev_off, (unsigned long long)g->dev_bytes);
            break;
        }
        for (uint32_t j = i; j < n; j++) {
            uint32_t b = roots[j];
            const npk_rk_net_tensor *h = &net->tensors[b];
            if (alive_together(g, h) && g->dev_off < h->dev_off + h->dev_bytes &&
                h->dev_off < g->dev_off + g->dev_bytes) {
                st = npk_fail(err, NPK_E_LIMIT,
                              "tensors %u and %u overlap while both are alive (operators "
                              "%d..%d and %d..%d)",
                              a, b, g->first, g->last, h->first, h->last);
                break;
            }
        }
    }
    free(roots);
    if (st) return st;
    for (size_t i = 0; i < net->nops; i++) {
        const npk_rk_net_op *o = &net->ops[i];
        const npk_rk_net_tensor *in = &net->tensors[o->in[0]], *out = &net->tensors[o->out];
        uint64_t out_off = net->tensors[o->tl.output].root_off;
        if (o->plan.input_bytes > in->dev_bytes ||
            out_off + o->plan.output_bytes > out->dev_bytes ||
            (o->in[1] >= 0 &&
             npk_rk_lplan_input2_bytes(&o->plan) > net->tensors[o->in[1]].dev_bytes))
            return npk_fail(err, NPK_E_LIMIT, "%s: a buffer is smaller than the layer reads",
                            o->tl.name);
    }
    return NPK_OK;
}

static npk_status merge_segments(npk_rk_net *net, npk_error *err);

/* Plan every layer at its place; the address map's arrays rebuilt. */
static npk_status place(npk_rk_net *net, npk_error *err)
{
    const npk_rk_net_opts *no = &net->opts;
    uint64_t wt = 0, reg = 0;
    size_t tasks = 0;
    for (size_t i = 0; i < net->nops; i++) {
        npk_rk_net_op *o = &net->ops[i];
        npk_rk_lplan *p = &o->plan;
        o->weight_off = wt;
        o->regcmd_off = reg;
        o->task_first = tasks;
        wt = up(wt + p->weight_bytes);
        reg = up(reg + (uint64_t)p->regcmd_entries * 8);
        tasks += p->count;
    }
    if ((uint64_t)no->act_addr + net->act_bytes > ((uint64_t)1 << 32) ||
        (uint64_t)no->weight_addr + wt > ((uint64_t)1 << 32) ||
        (uint64_t)no->regcmd_addr + reg > ((uint64_t)1 << 32))
        return npk_fail(err, NPK_E_LIMIT, "the buffers pass the NPU's 32-bit address space");
    for (size_t i = 0; i < net->nops; i++) {
        npk_rk_net_op *o = &net->ops[i];
        uint32_t to[NET_BUFS];
        to[NET_IN] = no->act_addr + (uint32_t)net->tensors[o->in[0]].dev_off;
        to[NET_IN2] = o->in[1] >= 0 ? no->act_addr + (uint32_t)net->tensors[o->in[1]].dev_off : 0;
        to[NET_OUT] = no->act_addr + (uint32_t)(net->tensors[o->out].dev_off +
                                                net->tensors[o->tl.output].root_off);
        to[NET_WT] = no->weight_addr + (uint32_t)o->weight_off;
        to[NET_REG] = no->regcmd_addr + (uint32_t)o->regcmd_off;
        npk_status st;
        if (!no->replan) {
            if ((st = net_relocate_plan(&o->plan, o->addr, to, err))) {
                npk_error e = *err;
                npk_error_clear(err);
                return npk_fail_at(err, st, o->tl.offset, "%s: %s", o->tl.name, e.msg);
            }
            memcpy(o->addr, to, sizeof to);
            continue;
        }
        npk_rk_lplan_opts po = {no->cores,   no->form, to[NET_IN], to[NET_WT],  to[NET_OUT],
                                to[NET_REG], 0,        0,          to[NET_IN2], no->requant};
        npk_rk_lplan p;
        if ((st = net_plan_layer(o, &po, &p, err))) return st;
        if (p.count != o->plan.count || p.regcmd_entries != o->plan.regcmd_entries ||
            p.weight_bytes != o->plan.weight_bytes) {
            npk_rk_lplan_free(&p);
            return npk_fail_at(err, NPK_E_LIMIT, o->tl.offset,
                               "%s: the plan changed size with its addresses", o->tl.name);
        }
        npk_rk_lplan_free(&o->plan);
        o->plan = p;
        memcpy(o->addr, to, sizeof to);
    }
    free(net->records);
    free(net->regcmd);
    net->ntasks = tasks;
    net->weight_bytes = wt; /* the weights hold no address: gathered once (gather_weights) */
    net->regcmd_entries = (size_t)(reg / 8);
    net->records = calloc(tasks ? tasks : 1, sizeof *net->records);
    net->regcmd = calloc(net->regcmd_entries ? net->regcmd_entries : 1, 8);
    if (!net->records || !net->regcmd) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    net->macs = 0;
    for (size_t i = 0; i < net->nops; i++) {
        const npk_rk_net_op *o = &net->ops[i];
        const npk_rk_lplan *p = &o->plan;
        memcpy(net->records + o->task_first, p->records, p->count * sizeof *p->records);
        memcpy(net->regcmd + o->regcmd_off / 8, p->regcmd, p->regcmd_entries * 8);
        for (size_t t = 0; t < p->count; t++) net->macs += p->tasks[t].macs;
    }
    return merge_segments(net, err);
}

/* The weight buffer: most layers were planned into it at their offsets
 * (net_partition.c, cap bytes); the others' buffers are copied in, the
 * alignment gaps zeroed. */
static npk_status gather_weights(npk_rk_net *net, uint64_t cap, npk_error *err)
{
    uint64_t wt = net->weight_bytes;
    for (size_t i = 0; i < net->nops; i++) {
        npk_rk_lplan *p = &net->ops[i].plan;
        if (!p->wblob_lent || p->wblob == net->weights + net->ops[i].weight_off) continue;
        uint8_t *own = malloc(p->weight_bytes ? (size_t)p->weight_bytes : 1); /* not its place */
        if (!own) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        memcpy(own, p->wblob, (size_t)p->weight_bytes);
        p->wblob = own;
        p->wblob_lent = false;
    }
    if (!net->weights || wt > cap) {
        uint8_t *nw = realloc(net->weights, wt ? (size_t)wt : 1);
        if (!nw) return npk_fail(err, NPK_E_NOMEM, "out of memory for the weights");
        net->weights = nw;
        for (size_t i = 0; i < net->nops; i++) /* moved with the buffer */
            if (net->ops[i].plan.wblob_lent) net->ops[i].plan.wblob = nw + net->ops[i].weight_off;
    }
    for (size_t i = 0; i < net->nops; i++) {
        const npk_rk_net_op *o = &net->ops[i];
        const npk_rk_lplan *p = &o->plan;
        if (p->weight_bytes && !p->wblob_lent)
            memcpy(net->weights + o->weight_off, p->wblob, p->weight_bytes);
        uint64_t end = o->weight_off + p->weight_bytes,
                 next = i + 1 < net->nops ? net->ops[i + 1].weight_off : wt;
        memset(net->weights + end, 0, (size_t)(next - end)); /* the alignment gap */
    }
    return NPK_OK;
}

/* One core: each NPU segment's layers in one submit (see npk_rk_net_seg). */
static npk_status merge_segments(npk_rk_net *net, npk_error *err)
{
    for (size_t k = 0; k < net->nsegs; k++) {
        npk_rk_net_seg *s = &net->segs[k];
        s->merged = false;
        if (!s->npu || !s->npu_count || net->opts.cores != 1) continue;
        const npk_rk_net_op *first = &net->ops[s->npu_first];
        s->task_first = first->task_first;
        s->task_count = 0;
        for (size_t i = s->npu_first; i < s->npu_first + s->npu_count; i++) {
            const npk_rk_net_op *o = &net->ops[i];
            s->task_count += o->plan.count;
            if (i + 1 == s->npu_first + s->npu_count || net->opts.form != NPK_RK_FORM_VENDOR)
                continue;
            const npk_rk_net_op *n = &net->ops[i + 1];
            const npk_rk_ltask *last = &o->plan.tasks[o->plan.count - 1], *next = &n->plan.tasks[0];
            npk_status st = npk_rk_stream_chain(
                net->regcmd + (o->regcmd_off + last->regcmd_off) / 8, last->entries,
                net->opts.regcmd_addr + (uint32_t)(n->regcmd_off + next->regcmd_off), next->entries,
                err);
            if (st) return st;
        }
        if (s->task_count > NPK_RKNPU_MAX_SUBMIT_TASKS) continue; /* a submit per layer */
        npk_rknpu_submit sub = first->plan.submit;
        memset(sub.subcore_task, 0, sizeof sub.subcore_task);
        sub.task_start = 0;
        sub.task_number = (uint32_t)s->task_count;
        sub.core_mask = 1;
        int sl = npk_rknpu_subcore_slot(1, 0);
        sub.subcore_task[sl].task_start = 0;
        sub.subcore_task[sl].task_number = (uint32_t)s->task_count;
        s->submit = sub;
        s->merged = true;
    }
    return net_merge_runs(net, err);
}

size_t npk_rk_net_submits(const npk_rk_net *net)
{
    size_t n = 0;
    for (size_t k = 0; k < net->nsegs; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        if (s->npu && s->merged) n++;
        for (size_t i = s->npu_first; s->npu && !s->merged && i < s->npu_first + s->npu_count; i++)
            n += net->ops[i].run != 0; /* one per layer or run of layers on one core */
    }
    return n;
}

npk_status npk_rk_net_relocate(npk_rk_net *net, uint32_t act_addr, uint32_t weight_addr,
                               uint32_t regcmd_addr, npk_error *err)
{
    if ((act_addr | weight_addr | regcmd_addr) % ALIGN)
        return npk_fail(err, NPK_E_ARG, "region addresses must be %d-byte aligned", ALIGN);
    net->opts.act_addr = act_addr;
    net->opts.weight_addr = weight_addr;
    net->opts.regcmd_addr = regcmd_addr;
    return place(net, err);
}

/* The interpreters of the CPU segments, on the cut of each. */
static npk_status make_interps(npk_rk_net *net, npk_error *err)
{
    for (size_t k = 0; k < net->nsegs; k++) {
        npk_rk_net_seg *s = &net->segs[k];
        if (s->npu) continue;
        if (!s->nin || !s->nout) {
            const npk_tfl_operator *op = &net->m->subgraphs[0].operators[s->op_first];
            return npk_fail_at(err, NPK_E_UNSUPPORTED, op->offset,
                               "operators %u..%u on the CPU have %s: not supported", s->op_first,
                               s->op_first + s->op_count - 1,
                               s->nin ? "no output anyone reads" : "no input but constants");
        }
        npk_tfl_interp_opts io = {0};
        io.inputs = s->in;
        io.ninputs = s->nin;
        io.outputs = s->out;
        io.noutputs = s->nout;
        io.threads = net->opts.threads;
        npk_status st = npk_tfl_interp_new(net->m, &io, &s->it, err);
        if (st) return st;
        /* The interpreter knows the shapes the model leaves open. */
        for (uint32_t j = 0; j < s->nout; j++) {
            npk_tfl_view v;
            if ((st = npk_tfl_interp_output(s->it, j, &v, err))) return st;
            npk_rk_net_tensor *g = &net->tensors[s->out[j]];
            g->host_bytes = v.bytes;
            g->ndim = v.ndim;
            memcpy(g->dims, v.dims, sizeof g->dims);
        }
        for (uint32_t j = 0; j < s->nin; j++) {
            npk_tfl_view v;
            if ((st = npk_tfl_interp_input(s->it, j, &v, err))) return st;
            if (v.bytes != net->tensors[s->in[j]].host_bytes)
                return npk_fail(err, NPK_E_FORMAT,
                                "tensor %d (\"%s\"): %zu bytes in the interpreter, %zu planned",
                                s->in[j], v.name, v.bytes, net->tensors[s->in[j]].host_bytes);
        }
    }
    return NPK_OK;
}

npk_status npk_rk_net_compile(const npk_tfl_model *m, const npk_rk_net_opts *o, npk_rk_net *net,
                              npk_error *err)
{
    memset(net, 0, sizeof *net);
    net->opts = *o;
    if (net->opts.cores < 1 || net->opts.cores > 3)
        return npk_fail(err, NPK_E_ARG, "cores must be 1..3 (got %d)", net->opts.cores);
    if (!net->opts.act_addr) net->opts.act_addr = 0x10000000;
    if (!net->opts.weight_addr) net->opts.weight_addr = 0x20000000;
    if (!net->opts.regcmd_addr) net->opts.regcmd_addr = 0x40000000;
    if ((net->opts.act_addr | net->opts.weight_addr | net->opts.regcmd_addr) % ALIGN)
        return npk_fail(err, NPK_E_ARG, "region addresses must be %d-byte aligned", ALIGN);
    if (!m->nsubgraphs) return npk_fail(err, NPK_E_FORMAT, "the model has no subgraph");
    net->m = m;
    npk_status st = check_order(m, err);
    if (st) return st;
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    net->ntensors = sg->ntensors;
    net_build b = {net, NULL, NULL, NULL, NULL, 0, 0};
    net->tensors = calloc(sg->ntensors + 1, sizeof *net->tensors);
    size_t ops_bytes; /* not cleared: each op is cleared as it is tried (net_partition.c) */
    if (npk_mul_sz((size_t)sg->noperators + 1, sizeof *net->ops, &ops_bytes))
        net->ops = malloc(ops_bytes);
    net->segs = calloc(sg->noperators + 1, sizeof *net->segs);
    b.side = calloc(sg->noperators + 1, 1);
    b.npu_of = calloc(sg->noperators + 1, sizeof *b.npu_of);
    b.dev_made = calloc(sg->ntensors + 1, sizeof *b.dev_made);
    b.fold = calloc(sg->noperators + 1, sizeof *b.fold);
    if (!net->tensors || !net->ops || !net->segs || !b.side || !b.npu_of || !b.dev_made || !b.fold)
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (uint32_t i = 0; !st && i < sg->noperators; i++) b.npu_of[i] = b.fold[i] = -1;
    /* Room for the packed weights: the model's 8-bit constants and a quarter
     * more (channels padded to 32, bias and multiplier records); layers
     * beyond it get buffers of their own. */
    uint64_t cap = 65536;
    for (uint32_t t = 0; t < sg->ntensors; t++)
        if ((sg->tensors[t].type == NPK_TFL_UINT8 || sg->tensors[t].type == NPK_TFL_INT8) &&
            net_is_const(m, &sg->tensors[t]))
            cap += m->buffers[sg->tensors[t].buffer].size;
    cap += cap / 4;
    uint64_t most = (uint64_t)m->file_size + m->file_size / 4 + 65536; /* shared buffers */
    if (cap > most) cap = most;
    if (!st && cap <= SIZE_MAX / 2 && (net->weights = malloc((size_t)cap))) b.wt_cap = cap;
    if (!st) st = net_partition(&b, err);
    if (!st) st = make_segments(&b, err);
    if (!st) st = net_align_rows(net, err);
    if (!st) {
        lifetimes(&b);
        net_extend_lifetimes(net);
        st = plan_memory(net, err);
    }
    if (!st) st = place(net, err);
    for (bool again = true; !st && again;) /* each round plans at least one layer again */
        if (!(st = net_unalign(net, &again, err)) && again) st = place(net, err);
    if (!st) st = gather_weights(net, b.wt_cap, err);
    if (!st) st = npk_rk_net_check_memory(net, err);
    if (!st) st = make_interps(net, err);
    free(b.side);
    free(b.npu_of);
    free(b.dev_made);
    free(b.fold);
    if (st) npk_rk_net_free(net);
    return st;
}

void npk_rk_net_free(npk_rk_net *net)
{
    for (size_t i = 0; net->ops && i < net->nops; i++) {
        npk_rk_lplan_free(&net->ops[i].plan);
        npk_rk_lplan_free(&net->ops[i].own);
        npk_rk_tfl_layer_free(&net->ops[i].tl);
        free(net->ops[i].wide_w);
    }
    for (size_t k = 0; net->segs && k < net->nsegs; k++) {
        free(net->segs[k].in);
        free(net->segs[k].out);
        npk_tfl_interp_free(net->segs[k].it);
    }
    free(net->tensors);
    free(net->ops);
    free(net->segs);
    free(net->records);
    free(net->rec_op);
    free(net->rec_task);
    free(net->task_rec);
    free(net->weights);
    free(net->regcmd);
    memset(net, 0, sizeof *net);
}
