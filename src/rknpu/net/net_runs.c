/* With 2-3 cores, consecutive layers of a segment share one submit where
 * that is correct: the vendor driver runs each core's subcore range as one
 * PC chain and waits for all cores only at the end of the submit, so no
 * core may touch what another core writes inside it
 * (npk_rk_net_check_submit proves it from the task descriptors). Runs of
 * layers on one core always qualify; layers split over cores do when every
 * core reads only what it wrote itself, e.g. a 1x1 convolution split by
 * rows after a layer split at the same rows (net_align_rows makes such
 * splits). A run's records are grouped by core (core 0's tasks of every
 * layer, then core 1's, ...) so each core's range is contiguous; in the
 * vendor form each core's last task of a layer continues with its first
 * task of the next, the rocket form makes one job per core. */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"
#include "npukit/rknpu_uapi.h"

/* Output rows per core of a layer split by rows over 2-3 cores (one
 * channel tile, whole rows, each core a contiguous run of rows in order);
 * false otherwise. */
static bool row_split(const npk_rk_lplan *p, uint32_t rows[NPK_RKNPU_MAX_CORES])
{
    memset(rows, 0, NPK_RKNPU_MAX_CORES * sizeof *rows);
    const npk_rk_layer *l = &p->layer;
    if (p->cores < 2 || p->tiles_c != 1 || p->tiles_w != 1 || l->kind == NPK_RK_LAYER_ADD ||
        l->kind == NPK_RK_LAYER_MAXPOOL)
        return false;
    uint32_t next = 0;
    for (int c = 0; c < p->cores; c++) {
        uint32_t lo = UINT32_MAX, hi = 0;
        for (size_t t = p->core_first[c]; t < (size_t)p->core_first[c] + p->core_count[c]; t++) {
            const npk_rk_ltask *k = &p->tasks[t];
            if (k->core != c) return false;
            if (k->oy0 < lo) lo = k->oy0;
            if (k->oy0 + k->oh > hi) hi = k->oy0 + k->oh;
        }
        if (lo != next || hi <= lo) return false;
        rows[c] = hi - lo;
        next = hi;
    }
    return next == l->out_h;
}

/* A layer whose output row y reads input row y only (1x1 window, stride 1,
 * no vertical padding) of the same height. */
static bool row_local(const npk_rk_layer *l)
{
    return (l->kind == NPK_RK_LAYER_CONV || l->kind == NPK_RK_LAYER_DEPTHWISE ||
            l->kind == NPK_RK_LAYER_AVGPOOL) &&
           l->k_h == 1 && l->stride_h == 1 && !l->pad_top && !l->pad_bottom && l->in_h == l->out_h;
}

/* The estimate of layer i's tasks summed per core (microseconds). */
static void core_us(const npk_rk_net *net, size_t i, double us[NPK_RKNPU_MAX_CORES])
{
    npk_rk_net_estimate e;
    npk_rk_net_estimate_defaults(&e);
    memset(us, 0, NPK_RKNPU_MAX_CORES * sizeof *us);
    for (size_t t = 0; t < net->ops[i].plan.count; t++) {
        int c = net->ops[i].plan.tasks[t].core;
        us[c >= 0 && c < NPK_RKNPU_MAX_CORES ? c : 0] += npk_rk_net_task_us(net, i, t, &e, NULL);
    }
}

npk_status net_plan_layer(const npk_rk_net_op *o, const npk_rk_lplan_opts *po, npk_rk_lplan *p,
                          npk_error *err)
{
    npk_error e = {0};
    bool rows = false;
    for (int c = 0; c < NPK_RKNPU_MAX_CORES; c++) rows |= o->plan.core_rows[c] != 0;
    npk_status st =
        npk_rk_lplan_make_rows(&o->tl.layer, po, rows ? o->plan.core_rows : NULL, p, &e);
    if (st) return npk_fail_at(err, st, o->tl.offset, "%s: %s", o->tl.name, e.msg);
    return NPK_OK;
}

npk_status net_align_rows(npk_rk_net *net, npk_error *err)
{
    if (net->opts.cores == 1) return NPK_OK;
    for (size_t k = 0; k < net->nsegs; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        for (size_t i = s->npu_first + 1; s->npu && i < s->npu_first + s->npu_count; i++) {
            npk_rk_net_op *prev = &net->ops[i - 1], *o = &net->ops[i];
            uint32_t rows[NPK_RKNPU_MAX_CORES];
            if (o->in[0] != prev->out || o->in[1] >= 0 || !row_local(&o->plan.layer) ||
                o->plan.layer.in_h != prev->plan.layer.out_h || !row_split(&prev->plan, rows))
                continue;
            npk_rk_lplan p;
            npk_status st = npk_rk_lplan_make_rows(&o->tl.layer, &o->plan.opts, rows, &p, NULL);
            if (st == NPK_E_NOMEM) return npk_fail(err, st, "out of memory");
            if (st) continue; /* keep the planner's own split */
            if (!p.core_rows[0] || p.weight_bytes != o->plan.weight_bytes ||
                p.output_bytes != o->plan.output_bytes || p.input_bytes != o->plan.input_bytes) {
                npk_rk_lplan_free(&p);
                continue;
            }
            /* Worth it when the two layers in one submit (each core runs
             * both its parts) beat the two one after the other by the
             * estimate: more tasks cost their fixed time. */
            double a[NPK_RKNPU_MAX_CORES], b[NPK_RKNPU_MAX_CORES], c[NPK_RKNPU_MAX_CORES];
            core_us(net, i - 1, a);
            core_us(net, i, b);
            npk_rk_lplan old = o->plan;
            o->plan = p;
            core_us(net, i, c);
            double together = 0, pa = 0, pb = 0;
            for (int q = 0; q < NPK_RKNPU_MAX_CORES; q++) {
                if (a[q] + c[q] > together) together = a[q] + c[q];
                if (a[q] > pa) pa = a[q];
                if (b[q] > pb) pb = b[q];
            }
            if (together < pa + pb) {
                o->own = old; /* back to it if the pair cannot share a submit */
            } else {
                npk_rk_lplan_free(&o->plan);
                o->plan = old;
            }
        }
    }
    return NPK_OK;
}

void net_extend_lifetimes(npk_rk_net *net)
{
    for (size_t k = 0; k < net->nsegs; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        size_t end = s->npu_first + s->npu_count;
        for (size_t i = s->npu_first + 1; s->npu && i < end; i++) {
            if (!net->ops[i].plan.core_rows[0]) continue;
            size_t a = i - 1, b = i;
            while (b + 1 < end && net->ops[b + 1].plan.core_rows[0]) b++;
            int32_t lo = (int32_t)net->ops[a].op_index, hi = (int32_t)net->ops[b].op_index;
            for (uint32_t t = 0; t < net->ntensors; t++) {
                npk_rk_net_tensor *g = &net->tensors[t];
                if (g->root == (int32_t)t && (g->where & NPK_RK_NET_DEV) && g->last >= lo &&
                    g->last < hi)
                    g->last = hi;
            }
            i = b;
        }
    }
}

npk_status net_unalign(npk_rk_net *net, bool *changed, npk_error *err)
{
    *changed = false;
    static const uint32_t mark[NET_BUFS] = {NET_MARK_IN, NET_MARK_IN2, NET_MARK_OUT, NET_MARK_WT,
                                            NET_MARK_REG};
    for (size_t i = 1; i < net->nops; i++) {
        npk_rk_net_op *o = &net->ops[i];
        bool own = o->own.count != 0;
        if (!o->plan.core_rows[0] || !o->run || o->rows_kept) { /* in a run, or kept */
            npk_rk_lplan_free(&o->own);
            continue;
        }
        /* The planner's own split at the addresses the layer was placed at
         * (o->addr): the plan kept aside when the rows were given (moved
         * from the marker addresses), else planned again. */
        npk_rk_lplan p;
        npk_status st;
        if (own) {
            p = o->own;
            memset(&o->own, 0, sizeof o->own);
            st = net_relocate_plan(&p, mark, o->addr, err);
            if (st) npk_rk_lplan_free(&p);
        } else {
            npk_rk_lplan_opts po = o->plan.opts;
            po.input_addr = o->addr[NET_IN];
            po.input2_addr = o->addr[NET_IN2];
            po.output_addr = o->addr[NET_OUT];
            po.weight_addr = o->addr[NET_WT];
            po.regcmd_addr = o->addr[NET_REG];
            st = npk_rk_tfl_plan(&o->tl, &po, &p, err);
        }
        if (st) return st;
        /* Kept where it is faster on its own (its rows spread over the
         * cores where the planner used fewer). */
        double a[NPK_RKNPU_MAX_CORES], b[NPK_RKNPU_MAX_CORES], ma = 0, mb = 0;
        core_us(net, i, a);
        npk_rk_lplan old = o->plan;
        o->plan = p;
        core_us(net, i, b);
        for (int q = 0; q < NPK_RKNPU_MAX_CORES; q++) {
            if (a[q] > ma) ma = a[q];
            if (b[q] > mb) mb = b[q];
        }
        if (ma < mb) {
            npk_rk_lplan_free(&o->plan);
            o->plan = old;
            o->rows_kept = true; /* decided: not tried again */
            continue;
        }
        npk_rk_lplan_free(&old);
        *changed = true;
    }
    return NPK_OK;
}

/* The cores layers i..j use (a mask) and the vendor driver runs it. */
static uint32_t cores_of(const npk_rk_net *net, size_t i, size_t j)
{
    uint32_t mask = 0;
    for (size_t q = i; q <= j; q++)
        for (size_t t = 0; t < net->ops[q].plan.count; t++)
            mask |= 1u << net->ops[q].plan.tasks[t].core;
    return mask;
}

/* Whether layers i..j may share a submit: a core mask the driver runs
 * (0x1, 0x3, 0x7), and one core (its chain runs in order) or the check. */
static bool may_join(const npk_rk_net *net, size_t i, size_t j)
{
    uint32_t mask = cores_of(net, i, j);
    if (npk_rknpu_subcore_slot(mask, 0) < 0) return false;
    return mask == 1 || npk_rk_net_check_submit(net, i, j - i + 1, NULL) == NPK_OK;
}

/* Layers i..j as one run: records grouped by core, streams chained per
 * core, the submit. */
static npk_status make_run(npk_rk_net *net, size_t i, size_t j, size_t total, npk_rknpu_task *tmp,
                           npk_error *err)
{
    npk_rk_net_op *h = &net->ops[i];
    size_t t0 = h->task_first, n = 0;
    uint32_t mask = cores_of(net, i, j);
    memcpy(tmp, net->records + t0, total * sizeof *tmp);
    memset(h->run_core_first, 0, sizeof h->run_core_first);
    memset(h->run_core_count, 0, sizeof h->run_core_count);
    npk_rknpu_submit sub = h->plan.submit;
    memset(sub.subcore_task, 0, sizeof sub.subcore_task);
    sub.task_start = 0;
    sub.task_number = (uint32_t)total;
    sub.core_mask = mask;
    h->run_cores = 0;
    for (int c = 0; c < NPK_RKNPU_MAX_CORES; c++) {
        h->run_core_first[c] = (uint32_t)n;
        const npk_rk_net_op *lo = NULL; /* the layer of the core's previous task */
        const npk_rk_ltask *lt = NULL;
        for (size_t q = i; q <= j; q++) {
            const npk_rk_net_op *o = &net->ops[q];
            for (size_t t = 0; t < o->plan.count; t++) {
                const npk_rk_ltask *k = &o->plan.tasks[t];
                if (k->core != c) continue;
                net->records[t0 + n] = tmp[o->task_first - t0 + t];
                net->rec_op[t0 + n] = (uint32_t)q;
                net->rec_task[t0 + n] = (uint32_t)t;
                net->task_rec[o->task_first + t] = (uint32_t)(t0 + n);
                n++;
                /* Within a layer the planner chained the core's tasks. */
                if (lo && lo != o && net->opts.form == NPK_RK_FORM_VENDOR) {
                    npk_status st = npk_rk_stream_chain(
                        net->regcmd + (lo->regcmd_off + lt->regcmd_off) / 8, lt->entries,
                        net->opts.regcmd_addr + (uint32_t)(o->regcmd_off + k->regcmd_off),
                        k->entries, err);
                    if (st) return st;
                }
                lo = o;
                lt = k;
            }
        }
        h->run_core_count[c] = (uint32_t)n - h->run_core_first[c];
        if (!h->run_core_count[c]) continue;
        h->run_cores = c + 1;
        int slot = npk_rknpu_subcore_slot(mask, c);
        if (slot < 0)
            return npk_fail(err, NPK_E_LIMIT, "%s: core %d outside the mask 0x%x", h->tl.name, c,
                            mask);
        sub.subcore_task[slot].task_start = h->run_core_first[c];
        sub.subcore_task[slot].task_number = h->run_core_count[c];
    }
    h->run = (uint32_t)(j - i + 1);
    for (size_t q = i + 1; q <= j; q++) net->ops[q].run = 0;
    h->run_submit = sub;
    return NPK_OK;
}

npk_status net_merge_runs(npk_rk_net *net, npk_error *err)
{
    free(net->rec_op);
    free(net->rec_task);
    free(net->task_rec);
    size_t n = net->ntasks ? net->ntasks : 1;
    net->rec_op = malloc(n * sizeof *net->rec_op);
    net->rec_task = malloc(n * sizeof *net->rec_task);
    net->task_rec = malloc(n * sizeof *net->task_rec);
    npk_rknpu_task *tmp = malloc(n * sizeof *tmp);
    if (!net->rec_op || !net->rec_task || !net->task_rec || !tmp) {
        free(tmp);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < net->nops; i++) {
        npk_rk_net_op *o = &net->ops[i];
        o->run = 1;
        o->run_cores = o->plan.cores;
        for (size_t t = 0; t < o->plan.count; t++) {
            net->rec_op[o->task_first + t] = (uint32_t)i;
            net->rec_task[o->task_first + t] = (uint32_t)t;
            net->task_rec[o->task_first + t] = (uint32_t)(o->task_first + t);
        }
    }
    npk_status st = NPK_OK;
    for (size_t k = 0; k < net->nsegs && !st && net->opts.cores > 1; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        size_t end = s->npu_first + s->npu_count;
        for (size_t i = s->npu_first; s->npu && i < end && !st;) {
            size_t j = i, total = net->ops[i].plan.count;
            while (j + 1 < end &&
                   total + net->ops[j + 1].plan.count <= NPK_RKNPU_MAX_SUBMIT_TASKS &&
                   may_join(net, i, j + 1))
                total += net->ops[++j].plan.count;
            if (j > i)
                st = make_run(net, i, j, total, tmp, err);
            else if (net->ops[i].plan.cores > 1) /* the planner's own split, checked too */
                st = npk_rk_net_check_submit(net, i, 1, err);
            i = j + 1;
        }
    }
    free(tmp);
    return st;
}

bool npk_rk_net_submit_at(const npk_rk_net *net, size_t k, npk_rk_net_submit_view *v)
{
    memset(v, 0, sizeof *v);
    size_t n = 0;
    for (size_t g = 0; g < net->nsegs; g++) {
        const npk_rk_net_seg *s = &net->segs[g];
        if (!s->npu || !s->npu_count) continue;
        if (s->merged) {
            if (n++ < k) continue;
            v->first_op = s->npu_first;
            v->nops = s->npu_count;
            v->task_first = s->task_first;
            v->task_count = s->task_count;
            v->cores = 1;
            v->core_count[0] = (uint32_t)s->task_count;
            v->submit = &s->submit;
            return true;
        }
        for (size_t i = s->npu_first; i < s->npu_first + s->npu_count; i++) {
            const npk_rk_net_op *o = &net->ops[i];
            if (!o->run || n++ < k) continue;
            v->first_op = i;
            v->nops = o->run;
            v->task_first = o->task_first;
            for (size_t q = i; q < i + o->run; q++) v->task_count += net->ops[q].plan.count;
            bool run = o->run > 1;
            v->cores = run ? o->run_cores : o->plan.cores;
            memcpy(v->core_first, run ? o->run_core_first : o->plan.core_first,
                   sizeof v->core_first);
            memcpy(v->core_count, run ? o->run_core_count : o->plan.core_count,
                   sizeof v->core_count);
            v->submit = run ? &o->run_submit : &o->plan.submit;
            return true;
        }
    }
    return false;
}
