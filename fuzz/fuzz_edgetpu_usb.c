/* The USB runtime and the emulated accelerator on arbitrary bytes.
 * First byte even: the rest is a model file; when its plan is accepted it
 * runs on the emulator and every output is converted (plan checks, hint
 * following, output assembly, relayout, dequantisation).
 * First byte odd: the rest is a bulk-out byte stream sent, in pieces, to an
 * initialised emulator that knows a synthetic Dense model (frame parsing,
 * hint matching), interleaved with output and event reads. */
#include <stdlib.h>
#include <string.h>

#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_usb.h"

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
