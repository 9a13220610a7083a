/* A layer on a device: plan for the device's stream form, allocate the
 * input(s), weights, output and regcmd buffers, plan again at their NPU
 * addresses, lay the host tensors out, run, read the output back. The
 * plan's buffers are written little-endian by the planner and packers, so
 * no byte swapping is needed here. */
#include <stdlib.h>
#include <string.h>

#include "dev_internal.h"
#include "npukit/rknpu_stream.h"

static void release_bufs(npk_rk_device *d, dev_buf *bufs)
{
    for (int i = 0; i < BUF_MAX; i++)
        if (bufs[i].live) d->ops->release(d, &bufs[i]);
}

static npk_status fill(npk_rk_device *d, const npk_rk_lplan *p, dev_buf *bufs, const void *x,
                       const void *x2, npk_error *err)
{
    npk_status st;
    for (int i = 0; i < BUF_MAX; i++)
        if (i != BUF_OUTPUT && bufs[i].live && (st = d->ops->cpu_begin(d, &bufs[i], err)))
            return st;
    memset(bufs[BUF_INPUT].host, 0, (size_t)bufs[BUF_INPUT].size);
    npk_rk_lplan_pack_input(p, x, bufs[BUF_INPUT].host);
    if (bufs[BUF_INPUT2].live) {
        memset(bufs[BUF_INPUT2].host, 0, (size_t)bufs[BUF_INPUT2].size);
        npk_rk_lplan_pack_input2(p, x2, bufs[BUF_INPUT2].host);
    }
    if (bufs[BUF_WEIGHTS].live) memcpy(bufs[BUF_WEIGHTS].host, p->wblob, (size_t)p->weight_bytes);
    memset(bufs[BUF_REGCMD].host, 0, (size_t)bufs[BUF_REGCMD].size);
    npk_rk_stream_to_bin(p->regcmd, p->regcmd_entries, bufs[BUF_REGCMD].host);
    for (int i = 0; i < BUF_MAX; i++)
        if (i != BUF_OUTPUT && bufs[i].live && (st = d->ops->cpu_end(d, &bufs[i], err))) return st;
    return NPK_OK;
}

npk_status npk_rk_run_layer(npk_rk_device *d, const npk_rk_layer *l, int cores, const void *x,
                            const void *x2, void *y, npk_rk_run_info *info, npk_error *err)
{
    /* Sizes first (a plan at address 0), then the plan at the real addresses. */
    npk_rk_lplan_opts po = {cores, d->form, 0, 0, 0, 0, 0, 0, 0, NPK_RK_RQ_EXACT};
    npk_rk_lplan p;
    npk_status st = npk_rk_lplan_make(l, &po, &p, err);
    if (st) return st;
    uint64_t sizes[BUF_MAX] = {p.input_bytes, p.weight_bytes, p.output_bytes,
                               (uint64_t)p.regcmd_entries * 8, npk_rk_lplan_input2_bytes(&p)};
    npk_rk_lplan_free(&p);
    if (sizes[BUF_INPUT2] && !x2)
        return npk_fail(err, NPK_E_ARG, "the layer has a second input and none was given");
    dev_buf bufs[BUF_MAX];
    memset(bufs, 0, sizeof bufs);
    for (int i = 0; i < BUF_MAX; i++) {
        if (!sizes[i]) continue; /* no weights (ADD, max pooling), no second input */
        st = d->ops->alloc(d, &bufs[i], sizes[i], i == BUF_REGCMD ? USE_REGCMD : USE_DATA, err);
        if (st) {
            release_bufs(d, bufs);
            return st;
        }
    }
    if (bufs[BUF_REGCMD].dma % NPK_RK_STREAM_ALIGN) {
        release_bufs(d, bufs);
        return npk_fail(err, NPK_E_DEVICE,
                        "the driver placed the regcmd buffer at 0x%08x, not %d-byte aligned",
                        bufs[BUF_REGCMD].dma, NPK_RK_STREAM_ALIGN);
    }
    po.input_addr = bufs[BUF_INPUT].dma;
    po.weight_addr = bufs[BUF_WEIGHTS].dma;
    po.output_addr = bufs[BUF_OUTPUT].dma;
    po.regcmd_addr = bufs[BUF_REGCMD].dma;
    po.input2_addr = bufs[BUF_INPUT2].dma;
    if ((st = npk_rk_lplan_make(l, &po, &p, err))) {
        release_bufs(d, bufs);
        return st;
    }
    size_t *entries = malloc(p.count * sizeof *entries);
    if (!entries) {
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < p.count; i++) entries[i] = p.tasks[i].entries;
    dev_job job = {p.count,      p.records,    &p.submit, p.cores,
                   p.core_first, p.core_count, entries,   bufs};
    if ((st = fill(d, &p, bufs, x, x2, err)) || (st = d->ops->run(d, &job, err))) goto out;
    if ((st = d->ops->cpu_begin(d, &bufs[BUF_OUTPUT], err))) goto out;
    npk_rk_lplan_unpack_output(&p, bufs[BUF_OUTPUT].host, y);
    if ((st = d->ops->cpu_end(d, &bufs[BUF_OUTPUT], err))) goto out;
    if (info) {
        info->tasks = p.count;
        info->cores = p.cores;
        info->form = p.opts.form;
    }
out:
    free(entries);
    npk_rk_lplan_free(&p);
    release_bufs(d, bufs);
    return st;
}
