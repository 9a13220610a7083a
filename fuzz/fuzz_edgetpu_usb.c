/* The USB runtime and the emulated accelerator on arbitrary bytes.
 * First byte even: the rest is a model file; when its plan is accepted it
 * runs on the emulator and every output is converted (plan checks, hint
 * following, output assembly, relayout, dequantisation); when its whole
 * graph plans (edgetpu_graph.h: boundaries, interpreter), the graph runs on
 * the emulator too, once answered by filler and once with the model itself
 * as its CPU model (the boundary checks and cut interpreters).
 * First byte odd: the rest is a bulk-out byte stream sent, in pieces, to an
 * initialised emulator that knows a synthetic Dense model (frame parsing,
 * hint matching), interleaved with output and event reads. */
#include <stdlib.h>
#include <string.h>

#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_graph.h"
#include "npukit/edgetpu_usb.h"

static void run_graph(const npk_etpu_model *m, size_t size)
{
    npk_error err = {0};
    npk_etpu_graph *g = NULL;
    if (npk_etpu_graph_new(m, NULL, &g, &err)) return;
    const npk_tfl_interp *it = npk_etpu_graph_interp(g);
    size_t total = 0;
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        if (!npk_tfl_interp_input(it, i, &v, &err)) total += v.bytes;
    }
    for (int cpu = 0; cpu < 2 && total < (16u << 20); cpu++) {
        npk_etpu_emu *emu = NULL;
        npk_etpu_device *dev = NULL;
        npk_etpu_emu_opts o = {.chunk_size = 1 + size % 300};
        if (!npk_etpu_emu_new(&o, &emu, &err) && !npk_etpu_emu_add_model(emu, m, &err) &&
            (!cpu || !npk_etpu_emu_set_cpu_model(emu, m, &m->tfl, 1, &err)) &&
            !npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err))
            npk_etpu_graph_invoke(g, dev, NULL, &err);
        npk_etpu_close(dev);
        npk_etpu_emu_free(emu);
    }
    npk_etpu_graph_free(g);
}

static void run_model(const uint8_t *data, size_t size)
{
    npk_etpu_model m;
    npk_etpu_plan p;
    npk_error err = {0};
    if (npk_etpu_parse(data, size, &m, &err)) return;
    if (npk_etpu_plan_init(&m, &p, &err) == NPK_OK) {
        size_t total = 0;
        for (uint32_t i = 0; i < p.ninputs; i++) total += (size_t)p.eo->inputs[i].size_bytes;
        for (uint32_t i = 0; i < p.noutputs; i++) total += (size_t)p.eo->outputs[i].size_bytes;
        uint8_t **in = calloc(p.ninputs + 1, sizeof *in),
                **out = calloc(p.noutputs + 1, sizeof *out);
        bool ok = in && out && total < (16u << 20);
        for (uint32_t i = 0; ok && i < p.ninputs; i++)
            ok = (in[i] = calloc((size_t)p.eo->inputs[i].size_bytes, 1)) != NULL;
        for (uint32_t i = 0; ok && i < p.noutputs; i++)
            ok = (out[i] = calloc((size_t)p.eo->outputs[i].size_bytes, 1)) != NULL;
        npk_etpu_emu *emu = NULL;
        npk_etpu_device *dev = NULL;
        npk_etpu_emu_opts o = {.chunk_size = 1 + size % 300};
        if (ok && !npk_etpu_emu_new(&o, &emu, &err) && !npk_etpu_emu_add_model(emu, &m, &err) &&
            !npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err) &&
            !npk_etpu_run(dev, &p, (const uint8_t *const *)in, out, NULL, &err)) {
            for (uint32_t i = 0; i < p.noutputs; i++) {
                npk_tensor t;
                const npk_etpu_layer *l = &p.eo->outputs[i];
                if (!npk_etpu_layer_to_tensor(l, out[i], (size_t)l->size_bytes, i & 1, NULL, 0, &t,
                                              &err))
                    npk_tensor_free(&t);
            }
        }
        npk_etpu_close(dev);
        npk_etpu_emu_free(emu);
        for (uint32_t i = 0; in && i < p.ninputs; i++) free(in[i]);
        for (uint32_t i = 0; out && i < p.noutputs; i++) free(out[i]);
        free(in);
        free(out);
        npk_etpu_plan_free(&p);
    }
    run_graph(&m, size);
    npk_etpu_free(&m);
}

static void stream(const uint8_t *data, size_t size)
{
    static uint8_t *file;
    static size_t len;
    static npk_etpu_model m;
    npk_error err = {0};
    if (!file) {
        npk_etpu_synth_opts so = {.n = 64};
        if (npk_etpu_synth_dense(&so, &file, &len, NULL) || npk_etpu_parse(file, len, &m, NULL))
            abort();
    }
    npk_etpu_emu *emu = NULL;
    npk_etpu_device *dev = NULL;
    if (!npk_etpu_emu_new(NULL, &emu, &err) && !npk_etpu_emu_add_model(emu, &m, &err) &&
        !npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err)) {
        npk_etpu_transport *t = npk_etpu_emu_transport(emu);
        uint8_t buf[32768];
        size_t pos = 0;
        while (pos < size) {
            size_t n = 1 + data[pos] % 97;
            if (n > size - pos) n = size - pos;
            if (t->ops->bulk_out(t->ctx, NPK_ETPU_EP_OUT, data + pos, n, 10, &err)) {
                size_t got;
                t->ops->bulk_in(t->ctx, data[pos] & 1 ? NPK_ETPU_EP_OUTPUT : NPK_ETPU_EP_EVENT, buf,
                                data[pos] & 2 ? 16 : sizeof buf, &got, 10, &err);
            }
            pos += n;
        }
    }
    npk_etpu_close(dev);
    npk_etpu_emu_free(emu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] & 1)
        stream(data + 1, size - 1);
    else
        run_model(data + 1, size - 1);
    return 0;
}
