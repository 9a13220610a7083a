/* The vendor rknpu DRM driver (BSP kernels, driver 0.9.x): GEM buffers from
 * RKNPU_MEM_CREATE, mapped through RKNPU_MEM_MAP; a run writes the task
 * records into a kernel-mapped buffer and submits them in PC mode with the
 * plan's per-core ranges. Data buffers are cacheable and synced explicitly;
 * the stream and task buffers are uncached, like the public demo's. */
#include <stdio.h>
#include <string.h>

#include "dev_internal.h"
#include "npukit/rknpu_uapi.h"

static npk_status v_alloc(npk_rk_device *d, dev_buf *b, uint64_t size, dev_use use, npk_error *err)
{
    npk_rknpu_mem_create mc;
    memset(&mc, 0, sizeof mc);
    mc.flags = use == USE_DATA    ? NPK_RKNPU_MEM_CACHEABLE
               : use == USE_TASKS ? NPK_RKNPU_MEM_KERNEL_MAPPING
                                  : NPK_RKNPU_MEM_NON_CACHEABLE;
    mc.size = size;
    char what[80];
    snprintf(what, sizeof what, "RKNPU_MEM_CREATE (%llu bytes)", (unsigned long long)size);
    npk_status st = dev_ioctl(d, NPK_RKNPU_IOCTL_MEM_CREATE, &mc, what, err);
    if (st) return st;
    b->handle = mc.handle;
    b->obj_addr = mc.obj_addr;
    b->flags = mc.flags;
    b->size = size;
    b->live = true;
    if (mc.dma_addr > UINT32_MAX || mc.dma_addr + size > ((uint64_t)1 << 32)) {
        npk_fail(err, NPK_E_DEVICE,
                 "RKNPU_MEM_CREATE gave DMA address 0x%llx; the NPU's registers take 32 bits",
                 (unsigned long long)mc.dma_addr);
        d->ops->release(d, b);
        return NPK_E_DEVICE;
    }
    b->dma = (uint32_t)mc.dma_addr;
    npk_rknpu_mem_map mm;
    memset(&mm, 0, sizeof mm);
    mm.handle = b->handle;
    if ((st = dev_ioctl(d, NPK_RKNPU_IOCTL_MEM_MAP, &mm, "RKNPU_MEM_MAP", err)) ||
        (st = dev_map(d, b, mm.offset, "an rknpu buffer", err))) {
        d->ops->release(d, b);
        return st;
    }
    return NPK_OK;
}

static void v_release(npk_rk_device *d, dev_buf *b)
{
    if (b->host) d->sys->munmap(d->sys->ctx, b->host, (size_t)b->map_size);
    b->host = NULL;
    npk_rknpu_mem_destroy md;
    memset(&md, 0, sizeof md);
    md.handle = b->handle;
    md.obj_addr = b->obj_addr;
    dev_ioctl(d, NPK_RKNPU_IOCTL_MEM_DESTROY, &md, "RKNPU_MEM_DESTROY", NULL);
    b->live = false;
}

/* Only cacheable buffers are synced (the driver refuses the others). */
static npk_status v_sync(npk_rk_device *d, dev_buf *b, uint32_t dir, npk_error *err)
{
    if (!(b->flags & NPK_RKNPU_MEM_CACHEABLE)) return NPK_OK;
    npk_rknpu_mem_sync ms;
    memset(&ms, 0, sizeof ms);
    ms.flags = dir;
    ms.obj_addr = b->obj_addr;
    ms.offset = 0;
    ms.size = b->size;
    return dev_ioctl(d, NPK_RKNPU_IOCTL_MEM_SYNC, &ms, "RKNPU_MEM_SYNC", err);
}

static npk_status v_cpu_begin(npk_rk_device *d, dev_buf *b, npk_error *err)
{
    return v_sync(d, b, NPK_RKNPU_MEM_SYNC_FROM_DEVICE, err);
}

static npk_status v_cpu_end(npk_rk_device *d, dev_buf *b, npk_error *err)
{
    return v_sync(d, b, NPK_RKNPU_MEM_SYNC_TO_DEVICE, err);
}

static npk_status v_run(npk_rk_device *d, const dev_job *p, npk_error *err)
{
    /* The driver reads the task records through its kernel mapping of this
     * buffer: records task_start .. task_start + task_number - 1 per core. */
    dev_buf tasks;
    memset(&tasks, 0, sizeof tasks);
    npk_status st = v_alloc(d, &tasks, (uint64_t)p->count * NPK_RKNPU_TASK_SIZE, USE_TASKS, err);
    if (st) return st;
    memcpy(tasks.host, p->records, p->count * sizeof *p->records);
    npk_rknpu_submit s = *p->submit;
    s.task_obj_addr = tasks.obj_addr;
    char what[96];
    snprintf(what, sizeof what, "RKNPU_SUBMIT (%zu tasks, core mask 0x%x)", p->count, s.core_mask);
    st = dev_ioctl(d, NPK_RKNPU_IOCTL_SUBMIT, &s, what, err);
    v_release(d, &tasks);
    return st;
}

static void v_close(npk_rk_device *d)
{
    if (d->fd >= 0) d->sys->close(d->sys->ctx, d->fd);
}

static const dev_ops vendor_ops = {v_alloc, v_release, v_cpu_begin, v_cpu_end, v_run, v_close};

npk_status dev_vendor_open(const npk_rk_open_opts *o, npk_rk_device *d, npk_error *err)
{
    npk_status st = dev_open_node(o, NPK_RK_DEV_RKNPU, d, err);
    if (st) return st;
    d->ops = &vendor_ops;
    d->form = NPK_RK_FORM_VENDOR;
    /* A soft reset first, as the public demo does. */
    npk_rknpu_action act = {NPK_RKNPU_ACT_RESET, 0};
    if ((st = dev_ioctl(d, NPK_RKNPU_IOCTL_ACTION, &act, "RKNPU_ACTION (reset)", err))) {
        v_close(d);
        return st;
    }
    return NPK_OK;
}
