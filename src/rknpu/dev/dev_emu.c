/* The emulator as a device: buffers are host memory mapped into the
 * emulator's address space, and a run is the vendor driver's submit of the
 * plan's task records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_internal.h"

#define EMU_DMA_BASE  0x00100000u /* where the bump allocator starts */
#define EMU_DMA_ALIGN 0x1000u

static npk_status emu_alloc(npk_rk_device *d, dev_buf *b, uint64_t size, dev_use use,
                            npk_error *err)
{
    (void)use;
    uint64_t span = (size + EMU_DMA_ALIGN - 1) & ~(uint64_t)(EMU_DMA_ALIGN - 1);
    if (!size || size > SIZE_MAX || (uint64_t)d->next_dma + span > ((uint64_t)1 << 32))
        return npk_fail(err, NPK_E_LIMIT,
                        "a buffer of %llu bytes does not fit the emulator's 32-bit address space",
                        (unsigned long long)size);
    void *p = NULL;
    if (posix_memalign(&p, EMU_DMA_ALIGN, (size_t)span))
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a %llu-byte buffer",
                        (unsigned long long)size);
    memset(p, 0, (size_t)span);
    /* Tracked: the host writes a buffer only between cpu_begin and cpu_end
     * (its pointer stays inside the library), and emu_cpu_end tells the
     * emulator, which can then keep the packed weights without comparing
     * the weight buffer's bytes every run. */
    npk_status st = npk_rk_emu_map_tracked(d->emu, d->next_dma, p, (size_t)span, err);
    if (st) {
        free(p);
        return st;
    }
    b->host = p;
    b->size = size;
    b->dma = d->next_dma;
    b->live = true;
    d->next_dma += (uint32_t)span;
    return NPK_OK;
}

static void emu_release(npk_rk_device *d, dev_buf *b)
{
    npk_rk_emu_unmap(d->emu, b->dma);
    free(b->host);
    b->live = false;
}

static npk_status emu_cpu_begin(npk_rk_device *d, dev_buf *b, npk_error *err)
{
    (void)d, (void)b, (void)err;
    return NPK_OK;
}

/* The host may have written the buffer. */
static npk_status emu_cpu_end(npk_rk_device *d, dev_buf *b, npk_error *err)
{
    (void)err;
    npk_rk_emu_touch(d->emu, b->dma);
    return NPK_OK;
}

static npk_status emu_run(npk_rk_device *d, const dev_job *j, npk_error *err)
{
    return npk_rk_emu_submit(d->emu, j->submit, j->records, j->count, err);
}

static void emu_close(npk_rk_device *d)
{
    npk_rk_emu_destroy(d->emu);
}

static const dev_ops emu_ops = {emu_alloc,   emu_release, emu_cpu_begin,
                                emu_cpu_end, emu_run,     emu_close};

npk_status dev_emu_open(const npk_rk_open_opts *o, npk_rk_device *d, npk_error *err)
{
    npk_rk_emu_opts eo = {o->emu_cores ? o->emu_cores : NPK_RKNPU_MAX_CORES, 0, false};
    npk_status st = npk_rk_emu_create(&eo, &d->emu, err);
    if (st) return st;
    d->ops = &emu_ops;
    d->form = NPK_RK_FORM_VENDOR;
    d->next_dma = EMU_DMA_BASE;
    snprintf(d->name, sizeof d->name, "emulator (%d core%s, %s kernel)", eo.cores,
             eo.cores == 1 ? "" : "s", npk_rk_emu_kernel(d->emu));
    return NPK_OK;
}
