/* The DarwiNN readers on their own: a serialized DWN1 Package (as carried in
 * an edgetpu-custom-op), its MultiExecutable and every Executable, then
 * what a runtime does with them (DMA-hint checks, bitstream patching,
 * output relayout). Seeds are the packages cut out of the compiled
 * fixtures, so the fuzzer starts past the TFLite and FlexBuffer layers. */
#include <stdlib.h>
#include <string.h>

#include "npukit/edgetpu.h"
#include "edgetpu/etpu_darwinn.h"

static void executable(const npk_etpu_executable *x)
{
    npk_error err = {0};
    npk_etpu_check_hints(x, &err);
    for (uint32_t h = 0; h < x->nhints; h++) npk_etpu_hint_layer(x, &x->hints[h]);
    for (uint32_t b = 0; b < x->nbitstreams; b++) {
        const npk_etpu_bitstream *bs = &x->bitstreams[b];
        uint8_t *bits = malloc(bs->size ? bs->size : 1);
        if (!bits) continue;
        memcpy(bits, bs->data, bs->size);
        const uint64_t addr[4] = {0x1111222233334444u, 2, 3, 0xFFFFFFFFFFFFFFFFu};
        npk_error_clear(&err);
        npk_etpu_patch_bitstream(bs, bits, addr, &err);
        free(bits);
    }
    for (uint32_t l = 0; l < x->noutputs; l++) {
        const npk_etpu_layer *ly = &x->outputs[l];
        size_t dev = (size_t)ly->size_bytes, out = 1 << 16;
        if (ly->size_bytes < 0 || dev > (1 << 16)) continue;
        uint8_t *d = calloc(dev ? dev : 1, 1), *y = malloc(out);
        npk_error_clear(&err);
        if (d && y) npk_etpu_relayout(ly, d, dev, y, out, &err);
        free(d);
        free(y);
    }
}

static void package(const npk_etpu_package *p, int depth)
{
    for (uint32_t e = 0; e < p->nexecutables; e++) executable(&p->executables[e]);
    if (depth < 4)
        for (uint32_t c = 0; c < p->nmulti_chip; c++) package(&p->multi_chip[c], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_error err = {0};
    npk_fb_buf b;
    if (npk_fb_init(&b, data, size, 0, &err)) return 0;
    npk_arena *a = npk_arena_new(npk_fbc_budget(size));
    if (!a) return 0;
    npk_fbc_rd r = {a, &err, NPK_OK};
    npk_etpu_package p;
    memset(&p, 0, sizeof p);
    if (npk_etpu_parse_package(&r, &b, &p) == NPK_OK) package(&p, 0);
    npk_arena_free(a);
    return 0;
}
