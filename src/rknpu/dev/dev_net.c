/* A compiled network on a device (npukit/rknpu_net.h): three buffers
 * (activations, weights, register streams) allocated once, the layers
 * planned again at their addresses, host buffers for the tensors the CPU
 * side reads or writes. A run packs the host tensors an NPU segment reads,
 * submits each layer, unpacks what the host needs, and runs the CPU
 * segments on their interpreters: nothing is allocated per run (the vendor
 * backend's per-submit task buffer aside). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev_internal.h"
#include "npukit/rknpu_net.h"
#include "npukit/rknpu_stream.h"

struct npk_rk_net_exec {
    npk_rk_net *net;
    npk_rk_device *d;
    dev_buf bufs[BUF_MAX];   /* BUF_OUTPUT: activations, BUF_WEIGHTS, BUF_REGCMD */
    uint8_t **host;          /* per tensor: NHWC bytes, or NULL */
    size_t **entries;        /* per layer: stream entries per task */
    size_t **seg_entries;    /* per merged segment: the same for its tasks */
    npk_rknpu_task *records; /* the task records at this device's addresses (the net may be
                                relocated for another executor later) */
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void npk_rk_net_exec_free(npk_rk_net_exec *x)
{
    if (!x) return;
    for (int i = 0; i < BUF_MAX; i++)
        if (x->bufs[i].live) x->d->ops->release(x->d, &x->bufs[i]);
    for (uint32_t t = 0; x->host && t < x->net->ntensors; t++) free(x->host[t]);
    for (size_t i = 0; x->entries && i < x->net->nops; i++) free(x->entries[i]);
    for (size_t k = 0; x->seg_entries && k < x->net->nsegs; k++) free(x->seg_entries[k]);
    free(x->host);
    free(x->entries);
    free(x->seg_entries);
    free(x->records);
    free(x);
}

static npk_status load(npk_rk_net_exec *x, npk_error *err)
{
    npk_rk_device *d = x->d;
    npk_rk_net *net = x->net;
    dev_buf *w = &x->bufs[BUF_WEIGHTS], *r = &x->bufs[BUF_REGCMD];
    npk_status st;
    if ((st = d->ops->cpu_begin(d, w, err))) return st;
    memcpy(w->host, net->weights, (size_t)net->weight_bytes);
    if ((st = d->ops->cpu_end(d, w, err)) || (st = d->ops->cpu_begin(d, r, err))) return st;
    memset(r->host, 0, (size_t)r->size);
    npk_rk_stream_to_bin(net->regcmd, net->regcmd_entries, r->host);
    return d->ops->cpu_end(d, r, err);
}

npk_status npk_rk_net_exec_new(npk_rk_net *net, npk_rk_device *d, npk_rk_net_exec **out,
                               npk_error *err)
{
    *out = NULL;
    if (net->opts.form != d->form)
        return npk_fail(err, NPK_E_ARG,
                        "the net was compiled for the %s stream form, the device "
                        "runs the %s form",
                        net->opts.form == NPK_RK_FORM_ROCKET ? "rocket" : "vendor",
                        d->form == NPK_RK_FORM_ROCKET ? "rocket" : "vendor");
    npk_rk_net_exec *x = calloc(1, sizeof *x);
    if (!x) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    x->net = net;
    x->d = d;
    x->host = calloc(net->ntensors + 1, sizeof *x->host);
    x->entries = calloc(net->nops + 1, sizeof *x->entries);
    x->seg_entries = calloc(net->nsegs + 1, sizeof *x->seg_entries);
    npk_status st = NPK_OK;
    if (!x->host || !x->entries || !x->seg_entries)
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
    uint64_t sizes[3] = {net->act_bytes, net->weight_bytes, (uint64_t)net->regcmd_entries * 8};
    static const int slot[3] = {BUF_OUTPUT, BUF_WEIGHTS, BUF_REGCMD};
    for (int i = 0; i < 3 && !st; i++)
        st = d->ops->alloc(d, &x->bufs[slot[i]], sizes[i] ? sizes[i] : 64,
                           slot[i] == BUF_REGCMD ? USE_REGCMD : USE_DATA, err);
    if (!st && (x->bufs[BUF_REGCMD].dma % NPK_RK_STREAM_ALIGN || x->bufs[BUF_OUTPUT].dma % 64 ||
                x->bufs[BUF_WEIGHTS].dma % 64))
        st = npk_fail(err, NPK_E_DEVICE, "the driver placed a buffer off 64-byte alignment");
    if (!st && (net->opts.act_addr != x->bufs[BUF_OUTPUT].dma ||
                net->opts.weight_addr != x->bufs[BUF_WEIGHTS].dma ||
                net->opts.regcmd_addr != x->bufs[BUF_REGCMD].dma))
        st = npk_rk_net_relocate(net, x->bufs[BUF_OUTPUT].dma, x->bufs[BUF_WEIGHTS].dma,
                                 x->bufs[BUF_REGCMD].dma, err);
    for (uint32_t t = 0; t < net->ntensors && !st; t++) {
        const npk_rk_net_tensor *g = &net->tensors[t];
        if (!(g->where & NPK_RK_NET_HOST)) continue;
        x->host[t] = calloc(1, g->host_bytes ? g->host_bytes : 1);
        if (!x->host[t]) st = npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < net->nops && !st; i++) {
        /* A run's first layer: the entries of the run's tasks (net_runs.c). */
        size_t n = 0, last = i + (net->ops[i].run > 1 ? net->ops[i].run : 1);
        for (size_t q = i; q < last; q++) n += net->ops[q].plan.count;
        x->entries[i] = malloc((n ? n : 1) * sizeof **x->entries);
        if (!x->entries[i]) {
            st = npk_fail(err, NPK_E_NOMEM, "out of memory");
            break;
        }
        /* In record order (a run over several cores has its records grouped
         * by core, net_runs.c). */
        for (size_t r = 0; r < n; r++) {
            size_t g = net->ops[i].task_first + r;
            x->entries[i][r] = net->ops[net->rec_op[g]].plan.tasks[net->rec_task[g]].entries;
        }
    }
    for (size_t k = 0; k < net->nsegs && !st; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        if (!s->merged) continue;
        size_t *e = x->seg_entries[k] = malloc(s->task_count * sizeof *e);
        if (!e) {
            st = npk_fail(err, NPK_E_NOMEM, "out of memory");
            break;
        }
        for (size_t i = s->npu_first, n = 0; i < s->npu_first + s->npu_count; i++)
            for (size_t t = 0; t < net->ops[i].plan.count; t++)
                e[n++] = net->ops[i].plan.tasks[t].entries;
    }
    if (!st && !(x->records = malloc((net->ntasks ? net->ntasks : 1) * sizeof *x->records)))
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
    if (!st) memcpy(x->records, net->records, net->ntasks * sizeof *x->records);
    if (!st) st = load(x, err);
    if (st) {
        npk_rk_net_exec_free(x);
        return st;
    }
    *out = x;
    return NPK_OK;
}

static const npk_tfl_subgraph *sg0(const npk_rk_net_exec *x)
{
    return &x->net->m->subgraphs[0];
}

uint32_t npk_rk_net_ninputs(const npk_rk_net_exec *x)
{
    return sg0(x)->ninputs;
}

uint32_t npk_rk_net_noutputs(const npk_rk_net_exec *x)
{
    return sg0(x)->noutputs;
}

static npk_status view(const npk_rk_net_exec *x, int32_t t, npk_tfl_view *v, npk_error *err)
{
    const npk_tfl_subgraph *sg = sg0(x);
    if (t < 0 || (uint32_t)t >= sg->ntensors || !x->host[t])
        return npk_fail(err, NPK_E_NOTFOUND, "tensor %d has no host buffer", t);
    const npk_tfl_tensor *tt = &sg->tensors[t];
    memset(v, 0, sizeof *v);
    v->index = t;
    v->name = tt->name;
    v->type = tt->type;
    v->ndim = x->net->tensors[t].ndim;
    memcpy(v->dims, x->net->tensors[t].dims, sizeof v->dims);
    v->data = x->host[t];
    v->bytes = x->net->tensors[t].host_bytes;
    if (tt->has_quant && tt->q.nscale) {
        v->scale = tt->q.scale[0];
        v->zero_point = tt->q.nzero ? (int32_t)tt->q.zero_point[0] : 0;
        v->q = &tt->q;
    }
    return NPK_OK;
}

npk_status npk_rk_net_input(const npk_rk_net_exec *x, uint32_t i, npk_tfl_view *v, npk_error *err)
{
    if (i >= sg0(x)->ninputs)
        return npk_fail(err, NPK_E_NOTFOUND, "input %u of %u", i, sg0(x)->ninputs);
    return view(x, sg0(x)->inputs[i], v, err);
}

npk_status npk_rk_net_output(const npk_rk_net_exec *x, uint32_t i, npk_tfl_view *v, npk_error *err)
{
    if (i >= sg0(x)->noutputs)
        return npk_fail(err, NPK_E_NOTFOUND, "output %u of %u", i, sg0(x)->noutputs);
    return view(x, sg0(x)->outputs[i], v, err);
}

static int32_t zero_point(const npk_tfl_tensor *t)
{
    return t->has_quant && t->q.nzero ? (int32_t)t->q.zero_point[0] : 0;
}

static npk_status run_npu(npk_rk_net_exec *x, const npk_rk_net_seg *s, npk_rk_net_timing *tm,
                          npk_error *err)
{
    npk_rk_device *d = x->d;
    npk_rk_net *net = x->net;
    const npk_tfl_subgraph *sg = sg0(x);
    dev_buf *act = &x->bufs[BUF_OUTPUT];
    npk_status st;
    double t0 = now_ms();
    if (s->nin) {
        if ((st = d->ops->cpu_begin(d, act, err))) return st;
        for (uint32_t j = 0; j < s->nin; j++) {
            int32_t t = s->in[j];
            const npk_rk_net_tensor *g = &net->tensors[t], *r = &net->tensors[g->root];
            int32_t src = g->pack_from >= 0 ? g->pack_from : t; /* a free QUANTIZE's input */
            const npk_tfl_tensor *tt = &sg->tensors[src];
            uint32_t planes = (uint32_t)(g->dev_bytes / ((uint64_t)g->h * g->w * 16));
            if (g->root != t) /* a CONCATENATION's input: its own planes of the output */
                planes = (g->c + 15) / 16;
            npk_rk_net_pack(x->host[src], tt->type == NPK_TFL_UINT8, zero_point(tt), g->h, g->w,
                            g->c, planes, act->host + r->dev_off + g->root_off);
        }
        if ((st = d->ops->cpu_end(d, act, err))) return st;
    }
    double t1 = now_ms();
    if (s->merged) {
        size_t k = (size_t)(s - net->segs);
        uint32_t first = 0, count = (uint32_t)s->task_count;
        dev_job job = {s->task_count, x->records + s->task_first, &s->submit, 1, &first,
                       &count,        x->seg_entries[k],          x->bufs};
        if ((st = d->ops->run(d, &job, err))) {
            npk_error e = *err;
            npk_error_clear(err);
            const npk_rk_net_op *o = &net->ops[s->npu_first];
            return npk_fail_at(err, st, o->tl.offset, "the layers from %s on: %s", o->tl.name,
                               e.msg);
        }
        if (tm) tm->submits++;
    }
    for (size_t i = s->npu_first; !s->merged && i < s->npu_first + s->npu_count; i++) {
        const npk_rk_net_op *o = &net->ops[i];
        const npk_rk_lplan *p = &o->plan;
        if (!o->run) continue; /* submitted with an earlier layer's run */
        dev_job job = {p->count,      x->records + o->task_first,
                       &p->submit,    p->cores,
                       p->core_first, p->core_count,
                       x->entries[i], x->bufs};
        if (o->run > 1) { /* a run of layers (net_runs.c) */
            job.count = 0;
            for (size_t q = i; q < i + o->run; q++) job.count += net->ops[q].plan.count;
            job.submit = &o->run_submit;
            job.cores = o->run_cores;
            job.core_first = o->run_core_first;
            job.core_count = o->run_core_count;
        }
        if ((st = d->ops->run(d, &job, err))) {
            npk_error e = *err;
            npk_error_clear(err);
            return npk_fail_at(err, st, net->ops[i].tl.offset, "%s: %s", net->ops[i].tl.name,
                               e.msg);
        }
        if (tm) tm->submits++;
    }
    double t2 = now_ms();
    if (s->nout) {
        if ((st = d->ops->cpu_begin(d, act, err))) return st;
        for (uint32_t j = 0; j < s->nout; j++) {
            int32_t t = s->out[j];
            const npk_rk_net_tensor *g = &net->tensors[t];
            const npk_rk_net_tensor *r = &net->tensors[g->root];
            npk_rk_net_unpack(act->host + r->dev_off + g->root_off,
                              sg->tensors[t].type == NPK_TFL_UINT8, g->h, g->w, g->c, x->host[t]);
        }
        if ((st = d->ops->cpu_end(d, act, err))) return st;
    }
    if (tm) {
        tm->convert_ms += (t1 - t0) + (now_ms() - t2);
        tm->npu_ms += t2 - t1;
    }
    return NPK_OK;
}

static npk_status run_cpu(npk_rk_net_exec *x, const npk_rk_net_seg *s, npk_rk_net_timing *tm,
                          npk_error *err)
{
    double t0 = now_ms();
    npk_status st;
    for (uint32_t j = 0; j < s->nin; j++) {
        npk_tfl_view v;
        if ((st = npk_tfl_interp_input(s->it, j, &v, err))) return st;
        memcpy(v.data, x->host[s->in[j]], v.bytes);
    }
    if ((st = npk_tfl_interp_invoke(s->it, err))) return st;
    for (uint32_t j = 0; j < s->nout; j++) {
        npk_tfl_view v;
        if ((st = npk_tfl_interp_output(s->it, j, &v, err))) return st;
        memcpy(x->host[s->out[j]], v.data, v.bytes);
    }
    if (tm) tm->cpu_ms += now_ms() - t0;
    return NPK_OK;
}

npk_status npk_rk_net_run(npk_rk_net_exec *x, npk_rk_net_timing *tm, npk_error *err)
{
    if (tm) memset(tm, 0, sizeof *tm);
    for (size_t k = 0; k < x->net->nsegs; k++) {
        const npk_rk_net_seg *s = &x->net->segs[k];
        npk_status st = s->npu ? run_npu(x, s, tm, err) : run_cpu(x, s, tm, err);
        if (st) return st;
    }
    return NPK_OK;
}

npk_status npk_rk_net_read(npk_rk_net_exec *x, int32_t t, void *y, npk_error *err)
{
    npk_rk_net *net = x->net;
    if (t < 0 || (uint32_t)t >= net->ntensors)
        return npk_fail(err, NPK_E_NOTFOUND, "tensor %d of %u", t, net->ntensors);
    const npk_rk_net_tensor *g = &net->tensors[t];
    const npk_rk_net_tensor *r = &net->tensors[g->root];
    if (!(r->where & NPK_RK_NET_DEV))
        return npk_fail(err, NPK_E_NOTFOUND, "tensor %d is not on the device", t);
    dev_buf *act = &x->bufs[BUF_OUTPUT];
    npk_status st = x->d->ops->cpu_begin(x->d, act, err);
    if (st) return st;
    npk_rk_net_unpack(act->host + r->dev_off + g->root_off,
                      sg0(x)->tensors[t].type == NPK_TFL_UINT8, g->h, g->w, g->c, y);
    return x->d->ops->cpu_end(x->d, act, err);
}
