/* Binding object: a compiled Edge TPU model, its Dense template (when it is
 * one) and, once asked for, a device running its Edge TPU op. */
#include <stdlib.h>
#include <string.h>

#include "bind_internal.h"
#include "npukit/edgetpu.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_graph.h"
#include "npukit/edgetpu_usb.h"

struct npk_bind_etpu {
    bind_src src;
    npk_etpu_model m;
    bool parsed;
    npk_etpu_dense d;
    bool dense;
    npk_error dense_err; /* why it is not a Dense template */
    /* device run */
    npk_etpu_plan p;
    bool planned;
    npk_etpu_emu *emu;
    npk_etpu_transport *usb;
    npk_etpu_device *dev;
    uint8_t **in, **out;
    /* whole-model run */
    npk_etpu_graph *g;
    npk_etpu_emu *g_emu;
    npk_etpu_transport *g_usb;
    npk_etpu_device *g_dev;
    npk_mapped cpu_map;
    npk_tfl_model cpu;
    bool cpu_parsed;
};

static void close_graph(npk_bind_etpu *b)
{
    npk_etpu_close(b->g_dev);
    npk_etpu_transport_close(b->g_usb);
    npk_etpu_emu_free(b->g_emu);
    npk_etpu_graph_free(b->g);
    b->g_dev = NULL;
    b->g_usb = NULL;
    b->g_emu = NULL;
    b->g = NULL;
    if (b->cpu_parsed) npk_tfl_free(&b->cpu);
    b->cpu_parsed = false;
    npk_unmap_file(&b->cpu_map);
    memset(&b->cpu_map, 0, sizeof b->cpu_map);
}

static void close_device(npk_bind_etpu *b)
{
    for (uint32_t i = 0; b->in && i < b->p.ninputs; i++) free(b->in[i]);
    for (uint32_t i = 0; b->out && i < b->p.noutputs; i++) free(b->out[i]);
    free(b->in);
    free(b->out);
    b->in = b->out = NULL;
    npk_etpu_close(b->dev);
    npk_etpu_transport_close(b->usb);
    npk_etpu_emu_free(b->emu);
    b->dev = NULL;
    b->usb = NULL;
    b->emu = NULL;
    if (b->planned) npk_etpu_plan_free(&b->p);
    b->planned = false;
}

static void close_model(npk_bind_etpu *b)
{
    close_graph(b);
    close_device(b);
    if (b->dense) npk_etpu_dense_free(&b->d);
    if (b->parsed) npk_etpu_free(&b->m);
    b->dense = b->parsed = false;
    bind_src_close(&b->src);
}

/* Parse b->src; a model that is not a Dense template is still a model. */
static npk_status parse(npk_bind_etpu *b, npk_error *err)
{
    npk_status st = npk_etpu_parse(b->src.data, b->src.size, &b->m, err);
    if (st) return st;
    b->parsed = true;
    npk_error_clear(&b->dense_err);
    b->dense = npk_etpu_dense_init(&b->m, &b->d, &b->dense_err) == NPK_OK;
    return NPK_OK;
}

void npk_bind_etpu_free(npk_bind_etpu *b)
{
    if (!b) return;
    close_model(b);
    free(b);
}

npk_status npk_bind_etpu_open(const char *path, const uint8_t *buf, size_t len, npk_bind_etpu **out,
                              npk_error *err)
{
    *out = NULL;
    npk_bind_etpu *b = calloc(1, sizeof *b);
    if (!b) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = bind_src_open(&b->src, path, buf, len, err);
    if (!st) st = parse(b, err);
    if (st) {
        npk_bind_etpu_free(b);
        return st;
    }
    *out = b;
    return NPK_OK;
}

const uint8_t *npk_bind_etpu_bytes(const npk_bind_etpu *b, size_t *len)
{
    *len = b->src.size;
    return b->src.data;
}

static npk_status need_dense(const npk_bind_etpu *b, npk_error *err)
{
    if (b->dense) return NPK_OK;
    *err = b->dense_err;
    return b->dense_err.status ? b->dense_err.status : NPK_E_UNSUPPORTED;
}

npk_status npk_bind_etpu_dense_size(const npk_bind_etpu *b, size_t *n, npk_error *err)
{
    *n = 0;
    npk_status st = need_dense(b, err);
    if (!st) *n = b->d.n;
    return st;
}

npk_status npk_bind_etpu_weights(const npk_bind_etpu *b, int8_t *w, float *scale, npk_error *err)
{
    npk_status st = need_dense(b, err);
    if (st) return st;
    if (scale) memcpy(scale, b->d.w_scale, b->d.n * sizeof *scale);
    return w ? npk_etpu_dense_weights(&b->d, w, err) : NPK_OK;
}

npk_status npk_bind_etpu_set_weights(npk_bind_etpu *b, const int8_t *w8, const float *wf,
                                     size_t *clipped, npk_error *err)
{
    npk_status st = need_dense(b, err);
    if (st) return st;
    if (clipped) *clipped = 0;
    const size_t n = b->d.n;
    int8_t *q = NULL;
    if (!w8) {
        if (!wf) return npk_fail(err, NPK_E_ARG, "no weights given");
        size_t c = 0;
        if (!(q = malloc(n * n))) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        if ((st = npk_etpu_quantize_rows(wf, n, n, b->d.w_scale, q, &c, err))) {
            free(q);
            return st;
        }
        if (clipped) *clipped = c;
        w8 = q;
    }
    uint8_t *file = NULL;
    st = npk_etpu_dense_set_weights(&b->d, b->src.data, b->src.size, w8, &file, err);
    free(q);
    if (st) return st;
    /* The new bytes replace the old ones: parse them (the template is the
     * same, so this cannot fail unless memory runs out). */
    const size_t len = b->src.size;
    close_model(b);
    bind_src_adopt(&b->src, file, len);
    return parse(b, err);
}

npk_status npk_bind_etpu_matmul(const npk_bind_etpu *b, const float *x, size_t batch, float *y,
                                npk_error *err)
{
    npk_status st = need_dense(b, err);
    if (st) return st;
    int8_t *w = malloc(b->d.n * b->d.n);
    if (!w) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    st = npk_etpu_dense_weights(&b->d, w, err);
    if (!st) st = npk_etpu_dense_matmul(&b->d, w, x, batch, y, err);
    free(w);
    return st;
}

npk_status npk_bind_etpu_device(npk_bind_etpu *b, const char *device, const uint8_t *firmware,
                                size_t firmware_size, unsigned timeout_ms, npk_error *err)
{
    const bool emu = device && !strcmp(device, "emu");
    if (!emu && !(device && !strcmp(device, "usb")))
        return npk_fail(err, NPK_E_ARG, "device \"%s\": expected \"emu\" or \"usb\"",
                        device ? device : "");
    close_device(b);
    close_graph(b);
    /* Everything is checked before the device is touched. */
    npk_status st = npk_etpu_plan_init(&b->m, &b->p, err);
    if (st) return st;
    b->planned = true;
    b->in = calloc(b->p.ninputs + 1, sizeof *b->in);
    b->out = calloc(b->p.noutputs + 1, sizeof *b->out);
    bool ok = b->in && b->out;
    for (uint32_t i = 0; ok && i < b->p.ninputs; i++)
        ok = (b->in[i] = calloc((size_t)b->p.eo->inputs[i].size_bytes + 1, 1)) != NULL;
    for (uint32_t i = 0; ok && i < b->p.noutputs; i++)
        ok = (b->out[i] = calloc((size_t)b->p.eo->outputs[i].size_bytes + 1, 1)) != NULL;
    if (!ok) {
        close_device(b);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    npk_etpu_transport *t;
    if (emu) {
        npk_etpu_emu_opts eo = {.dfu = firmware != NULL};
        if ((st = npk_etpu_emu_new(&eo, &b->emu, err)) ||
            (st = npk_etpu_emu_add_model(b->emu, &b->m, err))) {
            close_device(b);
            return st;
        }
        t = npk_etpu_emu_transport(b->emu);
    } else {
        if ((st = npk_etpu_usb_open(-1, &b->usb, err))) {
            close_device(b);
            return st;
        }
        t = b->usb;
    }
    npk_etpu_open_opts oo = {
        .firmware = firmware, .firmware_size = firmware_size, .timeout_ms = timeout_ms};
    if ((st = npk_etpu_open(t, &oo, &b->dev, err))) close_device(b);
    return st;
}

uint32_t npk_bind_etpu_ninputs(const npk_bind_etpu *b)
{
    return b->planned ? b->p.ninputs : 0;
}

uint32_t npk_bind_etpu_noutputs(const npk_bind_etpu *b)
{
    return b->planned ? b->p.noutputs : 0;
}

const char *npk_bind_etpu_input_name(const npk_bind_etpu *b, uint32_t i)
{
    return b->planned && i < b->p.ninputs ? b->p.eo->inputs[i].name : NULL;
}

const char *npk_bind_etpu_output_name(const npk_bind_etpu *b, uint32_t i)
{
    return b->planned && i < b->p.noutputs ? b->p.eo->outputs[i].name : NULL;
}

npk_status npk_bind_etpu_run(npk_bind_etpu *b, const npk_tensor *in, uint32_t nin, bool raw,
                             npk_tensor_set **out, npk_error *err)
{
    *out = NULL;
    if (!b->dev) return npk_fail(err, NPK_E_ARG, "no device is open");
    if (nin != b->p.ninputs)
        return npk_fail(err, NPK_E_ARG, "the Edge TPU op has %u input layers, %u tensors given",
                        b->p.ninputs, nin);
    npk_status st;
    for (uint32_t i = 0; i < nin; i++) {
        const npk_etpu_layer *l = &b->p.eo->inputs[i];
        if ((st = npk_etpu_layer_from_tensor(l, &in[i], b->in[i], (size_t)l->size_bytes, err)))
            return st;
    }
    npk_etpu_run_info info;
    if ((st = npk_etpu_run(b->dev, &b->p, (const uint8_t *const *)b->in, b->out, &info, err)))
        return st;
    npk_tensor_set *set = calloc(1, sizeof *set);
    if (!set) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_set_init(set);
    for (uint32_t k = 0; !st && k < b->p.noutputs; k++) {
        const npk_etpu_layer *l = &b->p.eo->outputs[k];
        if (!b->p.output_steps[k]) continue; /* not transferred by the hints */
        const npk_tfl_tensor *tt = npk_etpu_layer_tensor(&b->m, l);
        int64_t shape[NPK_MAX_DIMS];
        int nd = 0;
        for (uint32_t d = 0; tt && d < tt->ndim && d < NPK_MAX_DIMS; d++)
            shape[nd++] = tt->shape[d];
        npk_tensor t;
        if (!(st = npk_etpu_layer_to_tensor(l, b->out[k], (size_t)l->size_bytes, raw,
                                            tt ? shape : NULL, nd, &t, err)))
            if ((st = npk_set_add(set, &t, err))) npk_tensor_free(&t);
    }
    if (st) {
        npk_bind_set_release(set);
        return st;
    }
    *out = set;
    return NPK_OK;
}

npk_status npk_bind_etpu_graph_open(npk_bind_etpu *b, const char *device, const uint8_t *firmware,
                                    size_t firmware_size, unsigned timeout_ms,
                                    const char *cpu_model, int threads, npk_error *err)
{
    const bool emu = device && !strcmp(device, "emu");
    if (!emu && !(device && !strcmp(device, "usb")))
        return npk_fail(err, NPK_E_ARG, "device \"%s\": expected \"emu\" or \"usb\"",
                        device ? device : "");
    if (cpu_model && !emu)
        return npk_fail(err, NPK_E_ARG,
                        "a CPU model answers for the emulator: needs device \"emu\"");
    close_device(b);
    close_graph(b);
    if (b->m.nops == 0)
        return npk_fail(err, NPK_E_UNSUPPORTED, "no Edge TPU op (run it with npukit.tflite)");
    /* Everything is checked before the device is touched, as `edgetpu run` does. */
    const npk_etpu_graph_opts go = {.threads = threads};
    npk_status st = npk_etpu_graph_new(&b->m, &go, &b->g, err);
    if (!st && cpu_model) {
        if (!(st = npk_map_file(cpu_model, &b->cpu_map, err)) &&
            !(st = npk_tfl_parse(b->cpu_map.data, b->cpu_map.size, &b->cpu, err)))
            b->cpu_parsed = true;
    }
    npk_etpu_transport *t = NULL;
    if (!st && emu) {
        npk_etpu_emu_opts eo = {.dfu = firmware != NULL};
        if (!(st = npk_etpu_emu_new(&eo, &b->g_emu, err)) &&
            !(st = npk_etpu_emu_add_model(b->g_emu, &b->m, err)) && cpu_model)
            st = npk_etpu_emu_set_cpu_model(b->g_emu, &b->m, &b->cpu, threads, err);
        if (!st) t = npk_etpu_emu_transport(b->g_emu);
    } else if (!st) {
        if (!(st = npk_etpu_usb_open(-1, &b->g_usb, err))) t = b->g_usb;
    }
    if (!st) {
        npk_etpu_open_opts oo = {
            .firmware = firmware, .firmware_size = firmware_size, .timeout_ms = timeout_ms};
        st = npk_etpu_open(t, &oo, &b->g_dev, err);
    }
    if (st) close_graph(b);
    return st;
}

npk_tfl_interp *npk_bind_etpu_graph_interp(npk_bind_etpu *b)
{
    return b->g && b->g_dev ? npk_etpu_graph_interp(b->g) : NULL;
}

npk_status npk_bind_etpu_graph_run(npk_bind_etpu *b, uint64_t repeat, const npk_progress *progress,
                                   npk_error *err)
{
    if (!b->g || !b->g_dev) return npk_fail(err, NPK_E_ARG, "no device is open");
    if (repeat < 1) return npk_fail(err, NPK_E_ARG, "repeat must be at least 1");
    for (uint64_t k = 0; k < repeat; k++) {
        npk_etpu_graph_info gi;
        npk_status st = npk_etpu_graph_invoke(b->g, b->g_dev, &gi, err);
        if (!st) st = npk_progress_report(progress, "run", k + 1, repeat, err);
        if (st) return st;
    }
    return NPK_OK;
}
