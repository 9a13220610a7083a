/* Bilinear resize and conversion of a picture to a model's input tensor
 * (definitions in include/npukit/image.h and docs/images.md). */
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

/* Source coordinates of every destination row (or column) in 10-bit fixed
 * point, as TFLite's ResizeBilinearInteger with half_pixel_centers: the lower
 * and upper source index and the weight (0..1024) of the upper one. TFLite
 * reads outside the input for upscales of more than about 1000x; here the
 * indices are clamped to the picture, which changes nothing elsewhere. */
typedef struct lerp {
    uint32_t lo, hi;
    int64_t w;
} lerp;

static void lerp_table(uint32_t in, uint32_t out, lerp *t)
{
    int64_t scale = ((int64_t)in * 1024 + out / 2) / out;
    for (uint32_t i = 0; i < out; i++) {
        int64_t pos = (int64_t)i * scale + scale / 2 - 512;
        int64_t lo = pos / 1024, hi = (pos + 1023) / 1024; /* C division: toward zero */
        if (lo < 0) lo = 0;
        if (lo > (int64_t)in - 1) lo = (int64_t)in - 1;
        if (hi > (int64_t)in - 1) hi = (int64_t)in - 1;
        if (hi < lo) hi = lo;
        int64_t w = pos - lo * 1024;
        t[i].lo = (uint32_t)lo;
        t[i].hi = (uint32_t)hi;
        t[i].w = w < 0 ? 0 : w > 1024 ? 1024 : w;
        if (hi == lo) t[i].w = 0; /* one source pixel: its value, whatever the weight */
    }
}

npk_status npk_image_resize(const npk_image *src, uint32_t width, uint32_t height, npk_image *dst,
                            npk_error *err)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->rgb || !src->width || !src->height)
        return npk_fail(err, NPK_E_ARG, "resize: empty source picture");
    npk_status st = npk_image_alloc(dst, width, height, err);
    if (st) return st;
    if (width == src->width && height == src->height) {
        memcpy(dst->rgb, src->rgb, (size_t)width * height * 3);
        return NPK_OK;
    }
    lerp *ty = malloc(sizeof *ty * height), *tx = malloc(sizeof *tx * width);
    if (!ty || !tx) {
        free(ty);
        free(tx);
        npk_image_free(dst);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    lerp_table(src->height, height, ty);
    lerp_table(src->width, width, tx);
    size_t sw = src->width;
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *r0 = src->rgb + ty[y].lo * sw * 3, *r1 = src->rgb + ty[y].hi * sw * 3;
        int64_t wy = ty[y].w;
        uint8_t *o = dst->rgb + (size_t)y * width * 3;
        for (uint32_t x = 0; x < width; x++) {
            size_t x0 = (size_t)tx[x].lo * 3, x1 = (size_t)tx[x].hi * 3;
            int64_t wx = tx[x].w;
            for (int c = 0; c < 3; c++) {
                int64_t v = r0[x0 + c] * (1024 - wy) * (1024 - wx) + r1[x0 + c] * wy * (1024 - wx) +
                            r0[x1 + c] * (1024 - wy) * wx + r1[x1 + c] * wy * wx;
                v = (v + (1 << 19)) >> 20; /* v >= 0: half away from zero */
                o[(size_t)x * 3 + c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
    free(ty);
    free(tx);
    return NPK_OK;
}

static float pixel_float(const npk_image_input *in, uint8_t p)
{
    if (in->has_quant) return in->scale * (float)((int32_t)p - in->zero_point);
    switch (in->range) {
    case NPK_IMAGE_RANGE_SIGNED: return (float)p / 127.5f - 1.0f;
    case NPK_IMAGE_RANGE_PIXEL: return (float)p;
    default: return (float)p / 255.0f;
    }
}

npk_status npk_image_to_tensor(const npk_image *img, const npk_image_input *in, const char *name,
                               npk_tensor *out, npk_error *err)
{
    memset(out, 0, sizeof *out);
    if (!img || !img->rgb || !in)
        return npk_fail(err, NPK_E_ARG, "picture input: nothing to convert");
    if (in->dtype != NPK_U8 && in->dtype != NPK_I8 && in->dtype != NPK_F32)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "picture input of type %s: only u8, i8 and f32 inputs take pictures",
                        npk_dtype_name(in->dtype));
    if ((in->ndim != 3 && in->ndim != 4) || (in->ndim == 4 && in->shape[0] != 1))
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "picture input must be [1, H, W, C] or [H, W, C], not %d-dimensional%s",
                        in->ndim, in->ndim == 4 ? " with a batch other than 1" : "");
    const int64_t *hwc = in->shape + (in->ndim - 3);
    if (hwc[2] != 1 && hwc[2] != 3)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "picture input with %lld channels (1 or 3 expected)", (long long)hwc[2]);
    if (hwc[0] < 1 || hwc[1] < 1 || hwc[0] > NPK_IMAGE_MAX_SIDE || hwc[1] > NPK_IMAGE_MAX_SIDE)
        return npk_fail(err, NPK_E_LIMIT, "picture input of %lldx%lld pixels", (long long)hwc[1],
                        (long long)hwc[0]);
    if (in->dtype == NPK_F32 && in->has_quant && !(in->scale > 0))
        return npk_fail(err, NPK_E_ARG, "picture input: quantisation scale %g", (double)in->scale);
    npk_image sized;
    npk_status st = npk_image_resize(img, (uint32_t)hwc[1], (uint32_t)hwc[0], &sized, err);
    if (st) return st;
    st = npk_tensor_alloc(out, name, in->dtype, in->ndim, in->shape, err);
    if (st) {
        npk_image_free(&sized);
        return st;
    }
    size_t n = (size_t)sized.width * sized.height, ch = (size_t)hwc[2];
    for (size_t i = 0; i < n; i++) {
        const uint8_t *px = sized.rgb + i * 3;
        uint8_t v[3] = {px[0], px[1], px[2]};
        if (ch == 1) v[0] = (uint8_t)((77 * px[0] + 150 * px[1] + 29 * px[2] + 128) >> 8);
        for (size_t c = 0; c < ch; c++) {
            size_t k = i * ch + c;
            if (in->dtype == NPK_U8)
                ((uint8_t *)out->data)[k] = v[c];
            else if (in->dtype == NPK_I8)
                ((int8_t *)out->data)[k] = (int8_t)((int)v[c] - 128);
            else
                ((float *)out->data)[k] = pixel_float(in, v[c]);
        }
    }
    npk_image_free(&sized);
    return NPK_OK;
}
