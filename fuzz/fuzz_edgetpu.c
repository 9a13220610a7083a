/* The model readers on arbitrary bytes: TFLite, the Edge TPU custom op and
 * DarwiNN packages, and everything built on a parsed model (Dense template
 * recognition, blob decoding, reference execution, relayout, patching). */
#include <stdlib.h>
#include <string.h>

#include "npukit/edgetpu.h"

static void exercise(const npk_etpu_model *m)
{
    npk_error err = {0};
    for (uint32_t o = 0; o < m->nops; o++)
        for (uint32_t p = 0; p < m->ops[o].npackages; p++) {
            const npk_etpu_package *pk = &m->ops[o].packages[p];
            for (uint32_t e = 0; e < pk->nexecutables; e++) {
                const npk_etpu_executable *x = &pk->executables[e];
                for (uint32_t b = 0; b < x->nbitstreams; b++) {
                    const npk_etpu_bitstream *bs = &x->bitstreams[b];
                    uint8_t *bits = malloc(bs->size ? bs->size : 1);
                    if (!bits) continue;
                    memcpy(bits, bs->data, bs->size);
                    const uint64_t addr[4] = {1, 2, 3, 4};
                    npk_etpu_patch_bitstream(bs, bits, addr, &err);
                    free(bits);
                }
                for (uint32_t l = 0; l < x->noutputs; l++) {
                    const npk_etpu_layer *ly = &x->outputs[l];
                    size_t dev = (size_t)ly->size_bytes, out = 1 << 16;
                    if (dev > (1 << 16)) continue;
                    uint8_t *d = calloc(dev ? dev : 1, 1), *y = malloc(out);
                    if (d && y) npk_etpu_relayout(ly, d, dev, y, out, &err);
                    free(d);
                    free(y);
                }
            }
        }
    npk_etpu_dense d;
    if (npk_etpu_dense_init(m, &d, &err) == NPK_OK) {
        if (d.n <= 256) {
            int8_t *w = malloc(d.n * d.n);
            float *x = calloc(d.n, sizeof *x), *y = malloc(d.n * sizeof *y);
            if (w && x && y && npk_etpu_dense_weights(&d, w, &err) == NPK_OK)
                npk_etpu_dense_matmul(&d, w, x, 1, y, &err);
            free(w);
            free(x);
            free(y);
        }
        npk_etpu_dense_free(&d);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_etpu_model m;
    npk_error err = {0};
    if (npk_etpu_parse(data, size, &m, &err) == NPK_OK) {
        exercise(&m);
        npk_etpu_free(&m);
    }
    return 0;
}
