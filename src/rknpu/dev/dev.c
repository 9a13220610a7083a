/* The device interface and the end-to-end matmul: plan for the device's
 * stream form and addresses, lay the operands out in device memory, run,
 * read the output back in row-major order. */
#include <stdlib.h>
#include <string.h>

#include "dev_internal.h"
#include "npukit/bytes.h"
#include "npukit/rknpu_stream.h"

const char *npk_rk_devkind_name(npk_rk_devkind k)
{
    switch (k) {
    case NPK_RK_DEV_EMU: return "emu";
    case NPK_RK_DEV_RKNPU: return "rknpu";
    case NPK_RK_DEV_ROCKET: return "rocket";
    }
    return "?";
}

bool npk_rk_devkind_parse(const char *name, npk_rk_devkind *k)
{
    for (int i = NPK_RK_DEV_EMU; i <= NPK_RK_DEV_ROCKET; i++)
        if (!strcmp(name, npk_rk_devkind_name((npk_rk_devkind)i))) {
            *k = (npk_rk_devkind)i;
            return true;
        }
    return false;
}

npk_status npk_rk_device_open(npk_rk_devkind kind, const npk_rk_open_opts *o, npk_rk_device **out,
                              npk_error *err)
{
    *out = NULL;
    npk_rk_open_opts none = {0};
    if (!o) o = &none;
    npk_rk_device *d = calloc(1, sizeof *d);
    if (!d) return npk_fail(err, NPK_E_NOMEM, "out of memory for a device");
    d->kind = kind;
    d->fd = -1;
    npk_status st;
    switch (kind) {
    case NPK_RK_DEV_EMU: st = dev_emu_open(o, d, err); break;
    case NPK_RK_DEV_RKNPU: st = dev_vendor_open(o, d, err); break;
    case NPK_RK_DEV_ROCKET: st = dev_rocket_open(o, d, err); break;
    default: st = npk_fail(err, NPK_E_ARG, "unknown device kind %d", (int)kind);
    }
    if (st) {
        free(d);
        return st;
    }
    *out = d;
    return NPK_OK;
}

void npk_rk_device_close(npk_rk_device *d)
{
    if (!d) return;
    if (d->ops && d->ops->close) d->ops->close(d);
    free(d);
}

const char *npk_rk_device_name(const npk_rk_device *d)
{
    return d->name;
}

npk_rk_devkind npk_rk_device_kind(const npk_rk_device *d)
{
    return d->kind;
}

npk_rk_form npk_rk_device_form(const npk_rk_device *d)
{
    return d->form;
}

npk_rk_emu *npk_rk_device_emu(npk_rk_device *d)
{
    return d->emu;
}

/* ---- byte order: device memory is little-endian ---- */

static bool host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Host-order elements of `es` bytes <-> little-endian, in place. */
static void swap_to_le(uint8_t *p, uint64_t bytes, unsigned es)
{
    if (host_is_le() || es == 1) return;
    for (uint64_t i = 0; i + es <= bytes; i += es)
        for (unsigned a = 0, b = es - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* ---- the run ---- */

static void release_all(npk_rk_device *d, dev_buf *bufs)
{
    for (int i = 0; i < BUF_MAX; i++)
        if (bufs[i].live) d->ops->release(d, &bufs[i]);
}

static npk_status write_inputs(npk_rk_device *d, const npk_rk_plan *p, dev_buf *bufs, const void *a,
                               const void *b, npk_error *err)
{
    npk_status st;
    unsigned es = npk_rk_dtype_in_size(p->opts.dtype);
    for (int i = 0; i < BUF_COUNT; i++)
        if (i != BUF_OUTPUT && (st = d->ops->cpu_begin(d, &bufs[i], err))) return st;
    npk_rk_plan_pack_input(p, a, bufs[BUF_INPUT].host);
    npk_rk_plan_pack_weights(p, b, bufs[BUF_WEIGHTS].host);
    swap_to_le(bufs[BUF_INPUT].host, p->input_bytes, es);
    swap_to_le(bufs[BUF_WEIGHTS].host, p->weight_bytes, es);
    memset(bufs[BUF_REGCMD].host, 0, bufs[BUF_REGCMD].size);
    npk_rk_stream_to_bin(p->regcmd, p->regcmd_entries, bufs[BUF_REGCMD].host);
    for (int i = 0; i < BUF_COUNT; i++)
        if (i != BUF_OUTPUT && (st = d->ops->cpu_end(d, &bufs[i], err))) return st;
    return NPK_OK;
}

static npk_status read_output(npk_rk_device *d, const npk_rk_plan *p, dev_buf *out, void *c,
                              npk_error *err)
{
    npk_status st = d->ops->cpu_begin(d, out, err);
    if (st) return st;
    unsigned es = npk_rk_dtype_out_size(p->opts.dtype);
    if (host_is_le()) {
        npk_rk_plan_unpack_output(p, out->host, c);
    } else {
        uint8_t *tmp = malloc(p->output_bytes);
        if (!tmp) return npk_fail(err, NPK_E_NOMEM, "out of memory reading the output");
        memcpy(tmp, out->host, p->output_bytes);
        swap_to_le(tmp, p->output_bytes, es);
        npk_rk_plan_unpack_output(p, tmp, c);
        free(tmp);
    }
    return d->ops->cpu_end(d, out, err);
}

npk_status npk_rk_run_matmul(npk_rk_device *d, const npk_rk_run_opts *o, const void *a,
                             const void *b, void *c, npk_rk_run_info *info, npk_error *err)
{
    /* Sizes first (a plan at address 0), then the plan at the real addresses. */
    npk_rk_plan_opts po = {o->m, o->k, o->n, o->dtype, o->cores, 0, 0, 0, 0, 0, 0, d->form};
    npk_rk_plan p;
    npk_status st = npk_rk_plan_make(&po, &p, err);
    if (st) return st;
    uint64_t sizes[BUF_COUNT] = {p.input_bytes, p.weight_bytes, p.output_bytes,
                                 (uint64_t)p.regcmd_entries * 8};
    npk_rk_plan_free(&p);
    dev_buf bufs[BUF_MAX];
    memset(bufs, 0, sizeof bufs);
    for (int i = 0; i < BUF_COUNT; i++) {
        st = d->ops->alloc(d, &bufs[i], sizes[i], i == BUF_REGCMD ? USE_REGCMD : USE_DATA, err);
        if (st) {
            release_all(d, bufs);
            return st;
        }
    }
    if (bufs[BUF_REGCMD].dma % NPK_RK_STREAM_ALIGN) {
        release_all(d, bufs);
        return npk_fail(err, NPK_E_DEVICE,
                        "the driver placed the regcmd buffer at 0x%08x, not "
                        "%d-byte aligned",
                        bufs[BUF_REGCMD].dma, NPK_RK_STREAM_ALIGN);
    }
    po.input_addr = bufs[BUF_INPUT].dma;
    po.weight_addr = bufs[BUF_WEIGHTS].dma;
    po.output_addr = bufs[BUF_OUTPUT].dma;
    po.regcmd_addr = bufs[BUF_REGCMD].dma;
    if ((st = npk_rk_plan_make(&po, &p, err))) {
        release_all(d, bufs);
        return st;
    }
    size_t *entries = malloc(p.count * sizeof *entries);
    for (size_t i = 0; entries && i < p.count; i++) entries[i] = p.stream_entries;
    dev_job job = {p.count,      p.records,    &p.submit, p.cores,
                   p.core_first, p.core_count, entries,   bufs};
    if (!entries)
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
    else if (!(st = write_inputs(d, &p, bufs, a, b, err)) && !(st = d->ops->run(d, &job, err)))
        st = read_output(d, &p, &bufs[BUF_OUTPUT], c, err);
    if (!st && info) {
        info->tasks = p.count;
        info->cores = p.cores;
        info->form = p.opts.form;
    }
    free(entries);
    npk_rk_plan_free(&p);
    release_all(d, bufs);
    return st;
}
