/* The PNG input path of the CNN v2 renderer: bytes -> libspng -> RGBD
 * image, the same bytes as a depth image, and for small images the whole
 * render of an identity network plus an RGBA8 PNG round trip (encode what
 * was decoded, decode again: the 8-bit values must come back unchanged).
 * Each input is decoded as given and with its chunk CRCs made right; what
 * decodes must hold a whole IEND chunk (fuzz/regressions/png: cut files). */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/cnn2.h"
#include "npukit/cnn2_render.h"
#include "png_crc.h"

/* A 1x1 12 -> 4 network passing R, G, B, D through (built once). */
static const npk_cnn2_model *identity(void)
{
    static npk_cnn2_model m;
    static int ready;
    if (!ready) {
        npk_cnn2_shape s = {1, NPK_CNN2_STD_IN, NPK_CNN2_STD_OUT};
        if (npk_cnn2_build(&m, 2, 0, 1, &s, NULL)) abort();
        for (uint32_t c = 0; c < 4; c++)
            m.weights[npk_cnn2_weight_index(m.layers, c, c, 0, 0)] = 0x3C00;
        ready = 1;
    }
    return &m;
}

static void render_small(const npk_cnn2_image *img)
{
    size_t npix = (size_t)img->width * img->height;
    float *out = malloc(npix * 16);
    npk_cnn2_render_opts o = {0};
    o.threads = 1;
    if (out && npk_cnn2_render(identity(), img, &o, out, NULL) == NPK_OK) {
        uint8_t *rgba = malloc(npix * 4);
        if (rgba) {
            npk_cnn2_blend(img->rgbd, out, npix, 0.5f, out);
            npk_cnn2_to_rgba8(out, npix, rgba);
        }
        free(rgba);
    }
    free(out);
}

static void round_trip(const npk_cnn2_image *img)
{
    size_t npix = (size_t)img->width * img->height;
    uint8_t *rgba = malloc(npix * 4), *png = NULL;
    size_t len;
    npk_cnn2_image back;
    if (!rgba) return;
    npk_cnn2_to_rgba8(img->rgbd, npix, rgba);
    if (npk_cnn2_png_encode(rgba, img->width, img->height, 4, &png, &len, NULL) == NPK_OK) {
        if (npk_cnn2_png_decode(png, len, &back, NULL) != NPK_OK) abort();
        uint8_t *again = malloc(npix * 4);
        if (again) {
            npk_cnn2_to_rgba8(back.rgbd, npix, again);
            if (back.width != img->width || back.height != img->height ||
                memcmp(again, rgba, npix * 4))
                abort(); /* 8-bit RGBA does not survive encode + decode */
        }
        free(again);
        npk_cnn2_image_free(&back);
    }
    free(png);
    free(rgba);
}

/* Recompute the CRC of every whole chunk, so that mutations reach the
 * decoder instead of stopping at the first checksum. */
static void fix_crcs(uint8_t *p, size_t n)
{
    size_t at = 8;
    while (npk_png_seal_chunk(p, n, at)) at += 12 + (size_t)npk_ld32be(p + at);
}

/* A whole IEND chunk (length 0, type, CRC) somewhere after the signature. */
static int has_iend(const uint8_t *p, size_t n)
{
    static const uint8_t iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    for (size_t i = 8; i + 12 <= n; i++)
        if (!memcmp(p + i, iend, 12)) return 1;
    return 0;
}

static void one(const uint8_t *data, size_t size)
{
    npk_cnn2_image img;
    npk_error err = {0};
    if (npk_cnn2_png_decode(data, size, &img, &err) != NPK_OK) return;
    if (!has_iend(data, size)) abort(); /* a file cut before IEND must fail */
    if ((uint64_t)img.width * img.height <= 4096) {
        if (npk_cnn2_png_depth(&img, data, size, &err) != NPK_OK) abort(); /* same bytes */
        render_small(&img);
        round_trip(&img);
    }
    npk_cnn2_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    if (memcmp(copy, data, size)) one(copy, size);
    free(copy);
    return 0;
}
