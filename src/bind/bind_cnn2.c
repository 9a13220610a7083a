/* Binding calls: CNN v2 pictures and rendering, as `cnn2 render` does them. */
#include <stdlib.h>
#include <string.h>

#include "bind_internal.h"
#include "npukit/cnn2_render.h"

npk_status npk_bind_cnn2_load_png(const char *path, const char *depth, float **rgbd, uint32_t *w,
                                  uint32_t *h, npk_error *err)
{
    *rgbd = NULL;
    *w = *h = 0;
    npk_mapped fi = {0}, fd = {0};
    npk_cnn2_image img = {0};
    npk_status st = npk_map_file(path, &fi, err);
    if (!st) st = npk_cnn2_png_decode(fi.data, fi.size, &img, err);
    if (!st && depth && !(st = npk_map_file(depth, &fd, err)))
        st = npk_cnn2_png_depth(&img, fd.data, fd.size, err);
    if (fi.data) npk_unmap_file(&fi);
    if (fd.data) npk_unmap_file(&fd);
    if (st) {
        npk_cnn2_image_free(&img);
        return st;
    }
    *rgbd = img.rgbd; /* ownership moves to the caller */
    *w = img.width;
    *h = img.height;
    return NPK_OK;
}

npk_status npk_bind_cnn2_from_rgba8(const uint8_t *pix, uint32_t w, uint32_t h, int channels,
                                    float *rgbd, npk_error *err)
{
    if (channels != 3 && channels != 4)
        return npk_fail(err, NPK_E_ARG, "pixels must have 3 (RGB) or 4 (RGBA) channels, not %d",
                        channels);
    const size_t n = (size_t)w * h;
    uint8_t *rgba = malloc(n * 4 + 1);
    if (!rgba) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        memcpy(rgba + 4 * i, pix + (size_t)channels * i, 3);
        rgba[4 * i + 3] = channels == 4 ? pix[4 * i + 3] : 255;
    }
    npk_cnn2_image img = {0};
    npk_status st = npk_cnn2_image_from_rgba8(&img, rgba, w, h, channels == 4, err);
    free(rgba);
    if (!st) memcpy(rgbd, img.rgbd, n * 4 * sizeof *rgbd);
    npk_cnn2_image_free(&img);
    return st;
}

npk_status npk_bind_cnn2_render(const char *model, const float *rgbd, uint32_t w, uint32_t h,
                                const npk_bind_cnn2_opts *o, const npk_progress *progress,
                                float *raw, uint8_t *rgba8, npk_error *err)
{
    if (o->border < NPK_CNN2_BORDER_CLAMP || o->border > NPK_CNN2_BORDER_ZERO ||
        o->activation < NPK_CNN2_ACT_DEFAULT || o->activation > NPK_CNN2_ACT_LEGACY_CLAMP ||
        o->precision < NPK_CNN2_PREC_F16 || o->precision > NPK_CNN2_PREC_F32)
        return npk_fail(err, NPK_E_ARG, "render options out of range");
    npk_mapped fm = {0};
    npk_cnn2_model m = {0};
    const size_t npix = (size_t)w * h;
    /* The image is the caller's buffer (read only): no copy. */
    const npk_cnn2_image img = {w, h, (float *)rgbd};
    float *cnn = raw ? raw : malloc(npix * 4 * sizeof *cnn + 1);
    if (!cnn) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = npk_map_file(model, &fm, err);
    if (!st) st = npk_cnn2_parse(fm.data, fm.size, &m, err);
    if (!st) st = npk_cnn2_render_check(&m, &img, err);
    if (!st) {
        npk_cnn2_render_opts ro = {.border = (npk_cnn2_border)o->border,
                                   .activation = (npk_cnn2_activation)o->activation,
                                   .precision = (npk_cnn2_precision)o->precision,
                                   .threads = o->threads,
                                   .progress = progress};
        st = o->reference ? npk_cnn2_render_ref(&m, &img, &ro, cnn, err)
                          : npk_cnn2_render(&m, &img, &ro, cnn, err);
    }
    if (!st && rgba8) {
        float *blended = malloc(npix * 4 * sizeof *blended + 1);
        if (!blended) {
            st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        } else {
            npk_cnn2_blend(rgbd, cnn, npix, o->blend, blended);
            npk_cnn2_to_rgba8(blended, npix, rgba8);
            free(blended);
        }
    }
    if (cnn != raw) free(cnn);
    npk_cnn2_free(&m);
    if (fm.data) npk_unmap_file(&fm);
    return st;
}
