/* Fuzz target for the CNN v2 parser and validator. Beyond "no crash", it
 * checks invariants: parse succeeds exactly when the validator finds no
 * error; a parsed model re-encodes to the input (up to the u32 padding) and
 * re-parses identically; and for small renderable models the fast renderer
 * returns the reference renderer's bits on a tiny image. */
#include <stdlib.h>
#include <string.h>

#include "npukit/cnn2.h"
#include "npukit/cnn2_render.h"
#include "core/formats.h"

static void check_render(const npk_cnn2_model *m, const uint8_t *data, size_t size)
{
    if (m->num_layers > 3 || npk_cnn2_render_check(m, NULL, NULL)) return;
    for (uint32_t i = 0; i < m->num_layers; i++)
        if (m->layers[i].kernel_size > 7) return;
    npk_cnn2_image img;
    uint32_t w = 1 + (uint32_t)(size % 5), h = 1 + (uint32_t)(size % 3);
    if (npk_cnn2_image_alloc(&img, w, h, NULL)) return;
    for (size_t i = 0; i < (size_t)w * h * 4; i++) img.rgbd[i] = (float)data[i % size] / 255.0f;
    npk_cnn2_render_opts o = {0};
    o.threads = 1 + (unsigned)(size & 1);
    o.border = (npk_cnn2_border)(data[size - 1] & 1);
    o.activation = (npk_cnn2_activation)((data[size - 1] >> 1) & 1);
    o.precision = (npk_cnn2_precision)((data[size - 1] >> 2) & 1);
    float *a = malloc((size_t)w * h * 16), *b = malloc((size_t)w * h * 16);
    if (a && b && !npk_cnn2_render_ref(m, &img, &o, a, NULL) &&
        !npk_cnn2_render(m, &img, &o, b, NULL) && memcmp(a, b, (size_t)w * h * 16) != 0)
        abort(); /* fast and reference renderers disagree */
    free(a);
    free(b);
    npk_cnn2_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_cnn2_report rep;
    if (npk_cnn2_validate(data, size, &rep, NULL)) return 0;
    npk_cnn2_model m;
    npk_error err = {0};
    npk_status st = npk_cnn2_parse(data, size, &m, &err);
    bool fits = rep.header_read && rep.num_layers <= NPK_CNN2_MAX_LAYERS;
    if ((st == NPK_OK) != (rep.errors == 0 && fits)) abort();
    npk_summary sum;
    memset(&sum, 0, sizeof sum);
    if (npk_cnn2_probe(data, size)) npk_cnn2_summarize(data, size, &sum, NULL);
    if (st == NPK_OK) {
        uint8_t *out;
        size_t len;
        if (npk_cnn2_encode(&m, &out, &len, NULL)) abort();
        /* The writer pads with zeros; the input may be the exact size (2
         * bytes less) and its padding is not checked. */
        size_t exact = (size_t)npk_cnn2_exact_size(m.version, m.num_layers, m.total_weights);
        if (!(len == size || len == size + 2) || memcmp(out, data, exact)) abort();
        npk_cnn2_model r;
        if (npk_cnn2_parse(out, len, &r, NULL) || r.total_weights != m.total_weights ||
            memcmp(r.layers, m.layers, m.num_layers * sizeof *m.layers) ||
            memcmp(r.weights, m.weights, (size_t)m.total_weights * 2))
            abort();
        npk_cnn2_free(&r);
        free(out);
        check_render(&m, data, size);
        npk_cnn2_free(&m);
    }
    npk_cnn2_report_free(&rep);
    return 0;
}
