/* The mainline rocket accel driver (Linux >= 6.18): BOs from CREATE_BO,
 * mapped at the offset it returns, CPU access bracketed by PREP_BO and
 * FINI_BO; a run submits one job per core range of the plan, each a list of
 * tasks (stream address, entry count). The driver starts every task itself
 * and load-balances jobs over the cores, so the streams are the rocket form
 * (DPU_RDMA block, op-enable 0x1D) and are not chained. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_internal.h"
#include "npukit/rknpu_rocket.h"

#define PREP_TIMEOUT_NS 10000000000ll /* 10 s: the driver's job timeout is 500 ms per job */

static npk_status r_alloc(npk_rk_device *d, dev_buf *b, uint64_t size, dev_use use, npk_error *err)
{
    (void)use;
    if (size > UINT32_MAX)
        return npk_fail(err, NPK_E_LIMIT, "a %llu-byte buffer exceeds CREATE_BO's 32-bit size",
                        (unsigned long long)size);
    npk_rocket_create_bo cb;
    memset(&cb, 0, sizeof cb);
    cb.size = (uint32_t)size;
    char what[80];
    snprintf(what, sizeof what, "DRM_IOCTL_ROCKET_CREATE_BO (%llu bytes)",
             (unsigned long long)size);
    npk_status st = dev_ioctl(d, NPK_ROCKET_IOCTL_CREATE_BO, &cb, what, err);
    if (st) return st;
    b->handle = cb.handle;
    b->size = size;
    b->live = true;
    if (cb.dma_address > UINT32_MAX || cb.dma_address + size > ((uint64_t)1 << 32)) {
        npk_fail(err, NPK_E_DEVICE,
                 "CREATE_BO gave NPU address 0x%llx; the NPU's registers take 32 bits",
                 (unsigned long long)cb.dma_address);
        d->ops->release(d, b);
        return NPK_E_DEVICE;
    }
    b->dma = (uint32_t)cb.dma_address;
    if ((st = dev_map(d, b, cb.offset, "a rocket BO", err))) {
        d->ops->release(d, b);
        return st;
    }
    return NPK_OK;
}

static void r_release(npk_rk_device *d, dev_buf *b)
{
    if (b->host) d->sys->munmap(d->sys->ctx, b->host, (size_t)b->map_size);
    b->host = NULL;
    npk_drm_gem_close gc = {b->handle, 0};
    dev_ioctl(d, NPK_DRM_IOCTL_GEM_CLOSE, &gc, "DRM_IOCTL_GEM_CLOSE", NULL);
    b->live = false;
}

static npk_status r_cpu_begin(npk_rk_device *d, dev_buf *b, npk_error *err)
{
    npk_rocket_prep_bo pb;
    memset(&pb, 0, sizeof pb);
    pb.handle = b->handle;
    pb.timeout_ns = PREP_TIMEOUT_NS;
    return dev_ioctl(d, NPK_ROCKET_IOCTL_PREP_BO, &pb, "DRM_IOCTL_ROCKET_PREP_BO", err);
}

static npk_status r_cpu_end(npk_rk_device *d, dev_buf *b, npk_error *err)
{
    npk_rocket_fini_bo fb = {b->handle, 0};
    return dev_ioctl(d, NPK_ROCKET_IOCTL_FINI_BO, &fb, "DRM_IOCTL_ROCKET_FINI_BO", err);
}

static npk_status r_run(npk_rk_device *d, const dev_job *p, npk_error *err)
{
    npk_rocket_task *tasks = calloc(p->count, sizeof *tasks);
    if (!tasks) return npk_fail(err, NPK_E_NOMEM, "out of memory for %zu tasks", p->count);
    for (size_t i = 0; i < p->count; i++) {
        tasks[i].regcmd = (uint32_t)p->records[i].regcmd_addr;
        tasks[i].regcmd_count = (uint32_t)p->entries[i]; /* the whole stream, tail included */
    }
    /* Every live buffer but the output is read (the second input of an add too). */
    uint32_t in[BUF_MAX], out[1] = {p->bufs[BUF_OUTPUT].handle}, nin = 0;
    static const int order[] = {BUF_INPUT, BUF_WEIGHTS, BUF_REGCMD, BUF_INPUT2};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        if (p->bufs[order[i]].live) in[nin++] = p->bufs[order[i]].handle;
    npk_rocket_job jobs[NPK_RKNPU_MAX_CORES];
    memset(jobs, 0, sizeof jobs);
    for (int c = 0; c < p->cores; c++) {
        jobs[c].tasks = (uint64_t)(uintptr_t)(tasks + p->core_first[c]);
        jobs[c].task_count = p->core_count[c];
        jobs[c].task_struct_size = sizeof(npk_rocket_task);
        jobs[c].in_bo_handles = (uint64_t)(uintptr_t)in;
        jobs[c].in_bo_handle_count = nin;
        jobs[c].out_bo_handles = (uint64_t)(uintptr_t)out;
        jobs[c].out_bo_handle_count = 1;
    }
    npk_rocket_submit s;
    memset(&s, 0, sizeof s);
    s.jobs = (uint64_t)(uintptr_t)jobs;
    s.job_count = (uint32_t)p->cores;
    s.job_struct_size = sizeof(npk_rocket_job);
    char what[96];
    snprintf(what, sizeof what, "DRM_IOCTL_ROCKET_SUBMIT (%d jobs, %zu tasks)", p->cores, p->count);
    npk_status st = dev_ioctl(d, NPK_ROCKET_IOCTL_SUBMIT, &s, what, err);
    free(tasks);
    return st;
}

static void r_close(npk_rk_device *d)
{
    if (d->fd >= 0) d->sys->close(d->sys->ctx, d->fd);
}

static const dev_ops rocket_ops = {r_alloc, r_release, r_cpu_begin, r_cpu_end, r_run, r_close};

npk_status dev_rocket_open(const npk_rk_open_opts *o, npk_rk_device *d, npk_error *err)
{
    npk_status st = dev_open_node(o, NPK_RK_DEV_ROCKET, d, err);
    if (st) return st;
    d->ops = &rocket_ops;
    d->form = NPK_RK_FORM_ROCKET;
    return NPK_OK;
}
