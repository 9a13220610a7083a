/* The rule a submit over several cores must keep (docs/rknpu.md,
 * "Submits"): the vendor driver runs each core's task range as one chain
 * and waits for the cores only at the end of the submit, so no byte one
 * core's task writes may be read or written by another core's task in the
 * same submit. Reads of what was written before the submit, and of what
 * the core's own earlier tasks wrote, are safe.
 *
 * The byte ranges come from each task's descriptor and its layer's buffer
 * addresses (the ones the streams were planned with): NC1HWC2 channel
 * planes of 16-byte atoms, the task's input rows and columns, its output
 * tile, the K-split partial sums (4 channels per atom) and the
 * sign-following scratch. Where a layer's tasks cannot be described that
 * precisely (an add that first expands its second input), every task is
 * taken to touch the layer's whole buffers: that only refuses more. Tasks
 * of one such layer are not compared with each other (their disjointness
 * is the planner's, tested with the layer). */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

typedef struct acc {
    uint64_t lo, hi; /* [lo, hi) */
    uint32_t op, task;
    int core;
    bool write;
} acc;

typedef struct accs {
    acc *a;
    size_t n, cap;
    bool nomem;
} accs;

static void put(accs *v, uint64_t lo, uint64_t hi, uint32_t op, uint32_t task, int core, bool write)
{
    if (hi <= lo || v->nomem) return;
    if (v->n) { /* extend the last range of the same task */
        acc *l = &v->a[v->n - 1];
        if (l->op == op && l->task == task && l->write == write && l->hi == lo) {
            l->hi = hi;
            return;
        }
    }
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        acc *a = realloc(v->a, cap * sizeof *a);
        if (!a) {
            v->nomem = true;
            return;
        }
        v->a = a;
        v->cap = cap;
    }
    v->a[v->n++] = (acc){lo, hi, op, task, core, write};
}

/* Planes p0 .. p1-1 of an NC1HWC2 tensor of h x w at base; rows y0 ..
 * y0+ny-1, columns x0 .. x0+nx-1 of each. */
typedef struct box {
    uint32_t p0, p1, y0, ny, x0, nx;
} box;

static void region(accs *v, uint64_t base, uint32_t h, uint32_t w, box b, uint32_t op,
                   uint32_t task, int core, bool write)
{
    uint64_t row = (uint64_t)w * 16, plane = (uint64_t)h * row;
    if (b.y0 >= h || b.x0 >= w) return;
    if (b.ny > h - b.y0) b.ny = h - b.y0;
    if (b.nx > w - b.x0) b.nx = w - b.x0;
    for (uint32_t p = b.p0; p < b.p1; p++) {
        uint64_t at = base + p * plane + b.y0 * row;
        if (b.x0 == 0 && b.nx == w) {
            put(v, at, at + b.ny * row, op, task, core, write);
            continue;
        }
        for (uint32_t y = 0; y < b.ny; y++, at += row)
            put(v, at + b.x0 * 16ull, at + (b.x0 + b.nx) * 16ull, op, task, core, write);
    }
}

static uint32_t cdiv(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a + b - 1) / b);
}

/* Whether the layer's tasks are described per task (else whole buffers). */
static bool precise(const npk_rk_lplan *p)
{
    return p->layer.kind != NPK_RK_LAYER_ADD || !p->scratch_bytes;
}

static void layer_accs(accs *v, const npk_rk_net_op *o, uint32_t op)
{
    const npk_rk_lplan *p = &o->plan;
    const npk_rk_layer *l = &p->layer;
    uint64_t in = o->addr[NET_IN], in2 = o->addr[NET_IN2], out = o->addr[NET_OUT];
    uint32_t c2 = p->fp ? 8 : 16; /* channels per 16-byte atom */
    for (uint32_t t = 0; t < p->count; t++) {
        const npk_rk_ltask *k = &p->tasks[t];
        int core = k->core;
        if (!precise(p)) {
            put(v, in, in + p->input_bytes, op, t, core, false);
            if (p->input2_bytes) put(v, in2, in2 + p->input2_bytes, op, t, core, false);
            put(v, out, out + p->output_bytes, op, t, core, true);
            continue;
        }
        box ob = {k->oc0 / c2, cdiv(k->oc0 + k->ocn, c2), k->oy0, k->oh, k->ox0, k->ow};
        if (l->kind == NPK_RK_LAYER_ADD || l->kind == NPK_RK_LAYER_MAXPOOL) {
            /* Channel surfaces, whole planes, read and written alike. */
            box ib = {ob.p0, ob.p1, 0, l->in_h, 0, l->in_w};
            region(v, in, l->in_h, l->in_w, ib, op, t, core, false);
            if (l->kind == NPK_RK_LAYER_ADD && p->input2_bytes)
                region(v, in2, l->in_h, l->in_w, ib, op, t, core, false);
            box wb = {ob.p0, ob.p1, 0, l->out_h, 0, l->out_w};
            region(v, out, l->out_h, l->out_w, wb, op, t, core, true);
            continue;
        }
        /* Convolution, depthwise, fully connected, average pool. */
        box ib = {0, 0, k->iy0, k->ih, k->ix0, k->iw};
        if (p->depthwise) {
            ib.p0 = k->oc0 / c2;
            ib.p1 = cdiv(k->oc0 + k->ocn, c2);
        } else if (k->icn) {
            ib.p0 = k->ic0 / c2;
            ib.p1 = cdiv(k->ic0 + k->icn, c2);
        } else if (!k->requant_only) {
            ib.p1 = cdiv(p->cin, c2);
        }
        region(v, in, l->in_h, l->in_w, ib, op, t, core, false);
        region(v, out, l->out_h, l->out_w, ob, op, t, core, true);
        if (l->fused_add) region(v, in2, l->out_h, l->out_w, ob, op, t, core, false);
        if (p->scratch_bytes) { /* both partial-sum tensors, 4 channels per atom */
            box sb = {k->oc0 / 4, cdiv(k->oc0 + k->ocn, 4), k->oy0, k->oh, k->ox0, k->ow};
            for (int s = 0; s < 2; s++)
                region(v, out + p->scratch_off + s * (p->scratch_bytes / 2), l->out_h, l->out_w, sb,
                       op, t, core, true);
        }
        if (p->sign_bytes) region(v, out + p->sign_off, l->out_h, l->out_w, ob, op, t, core, true);
    }
}

static int by_lo(const void *a, const void *b)
{
    const acc *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

npk_status npk_rk_net_check_submit(const npk_rk_net *net, size_t first, size_t count,
                                   npk_error *err)
{
    if (first > net->nops || count > net->nops - first)
        return npk_fail(err, NPK_E_ARG, "layers %zu..%zu: the net has %zu", first, first + count,
                        net->nops);
    accs v = {0};
    for (size_t i = first; i < first + count; i++) {
        const npk_rk_lplan *p = &net->ops[i].plan;
        for (size_t t = 0; t < p->count; t++)
            if (p->tasks[t].core < 0 || p->tasks[t].core >= NPK_RKNPU_MAX_CORES) {
                free(v.a);
                return npk_fail_at(err, NPK_E_LIMIT, net->ops[i].tl.offset,
                                   "%s: task %zu on core %d", net->ops[i].tl.name, t,
                                   p->tasks[t].core);
            }
        layer_accs(&v, &net->ops[i], (uint32_t)i);
    }
    if (v.nomem) {
        free(v.a);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    qsort(v.a, v.n, sizeof *v.a, by_lo);
    npk_status st = NPK_OK;
    for (size_t i = 0; i < v.n && !st; i++) {
        const acc *a = &v.a[i];
        for (size_t j = i + 1; j < v.n && v.a[j].lo < a->hi; j++) {
            const acc *b = &v.a[j];
            if (a->core == b->core || (!a->write && !b->write)) continue;
            if (a->op == b->op && !precise(&net->ops[a->op].plan)) continue;
            /* The writer first in the message. */
            const acc *w = a->write ? a : b, *r = a->write ? b : a;
            uint64_t lo = a->lo > b->lo ? a->lo : b->lo, hi = a->hi < b->hi ? a->hi : b->hi;
            const npk_rk_net_op *wo = &net->ops[w->op], *ro = &net->ops[r->op];
            st = npk_fail_at(err, NPK_E_LIMIT, ro->tl.offset,
                             "%s task %u on core %d writes 0x%llx..0x%llx, which %s task %u on "
                             "core %d %s in the same submit (from %s): the cores do not wait "
                             "for each other inside a submit",
                             wo->tl.name, w->task, w->core, (unsigned long long)lo,
                             (unsigned long long)hi - 1, ro->tl.name, r->task, r->core,
                             r->write ? "also writes" : "reads", net->ops[first].tl.name);
            break;
        }
    }
    free(v.a);
    return st;
}
