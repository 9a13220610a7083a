/* Images, the mip pyramid and the static features of reference section 3.2-3.4:
 *   p0..p3  R, G, B, D at mip_level (level 0 read directly; levels 1..3
 *           built by 2x2 box filtering in f32, sampled bilinearly at the
 *           texel centre with clamp-to-edge, positions and lerps in double)
 *   uv_x    (x + 0.5) / W in f32;  uv_y  (y + 0.5) / H in f32, y = 0 at the top
 *   sin     sinf(10 * uv_x) of the unrounded f32 uv_x
 *   bias    1.0
 * then all rounded to f16 (faithful precision). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/checked.h"
#include "cnn2_internal.h"

npk_status npk_cnn2_image_alloc(npk_cnn2_image *img, uint32_t width, uint32_t height,
                                npk_error *err)
{
    memset(img, 0, sizeof *img);
    if (width == 0 || height == 0 || width > NPK_CNN2_MAX_SIDE || height > NPK_CNN2_MAX_SIDE ||
        (uint64_t)width * height > NPK_CNN2_MAX_PIXELS)
        return npk_fail(err, NPK_E_LIMIT,
                        "image %ux%u is outside npukit's limits (1..%u per side, %u pixels)", width,
                        height, NPK_CNN2_MAX_SIDE, NPK_CNN2_MAX_PIXELS);
    img->rgbd = calloc((size_t)width * height * 4, sizeof(float));
    if (!img->rgbd)
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a %ux%u image", width, height);
    img->width = width;
    img->height = height;
    return NPK_OK;
}

void npk_cnn2_image_free(npk_cnn2_image *img)
{
    if (!img) return;
    free(img->rgbd);
    memset(img, 0, sizeof *img);
}

float cnn2_sin10(float uvx)
{
    return sinf(10.0f * uvx);
}

npk_status cnn2_mips_build(cnn2_mips *m, const npk_cnn2_image *img, uint32_t levels, npk_error *err)
{
    memset(m, 0, sizeof *m);
    m->w[0] = img->width;
    m->h[0] = img->height;
    m->level[0] = img->rgbd;
    size_t total = 0, at[NPK_CNN2_MAX_MIP + 1] = {0};
    for (uint32_t l = 1; l <= levels; l++) {
        m->w[l] = img->width >> l ? img->width >> l : 1;
        m->h[l] = img->height >> l ? img->height >> l : 1;
        at[l] = total;
        total += (size_t)m->w[l] * m->h[l] * 4;
    }
    if (!total) return NPK_OK;
    m->owned = malloc(total * sizeof(float));
    if (!m->owned) return npk_fail(err, NPK_E_NOMEM, "out of memory for the mip levels");
    for (uint32_t l = 1; l <= levels; l++) {
        float *dst = m->owned + at[l];
        const float *src = m->level[l - 1];
        uint32_t sw = m->w[l - 1], sh = m->h[l - 1];
        for (uint32_t j = 0; j < m->h[l]; j++) {
            /* Source rows 2j and 2j+1, clamped when the finer level has one row. */
            uint32_t y0 = 2 * j < sh ? 2 * j : sh - 1, y1 = 2 * j + 1 < sh ? 2 * j + 1 : sh - 1;
            for (uint32_t i = 0; i < m->w[l]; i++) {
                uint32_t x0 = 2 * i < sw ? 2 * i : sw - 1;
                uint32_t x1 = 2 * i + 1 < sw ? 2 * i + 1 : sw - 1;
                for (uint32_t c = 0; c < 4; c++) {
                    float t00 = src[((size_t)y0 * sw + x0) * 4 + c];
                    float t10 = src[((size_t)y0 * sw + x1) * 4 + c];
                    float t01 = src[((size_t)y1 * sw + x0) * 4 + c];
                    float t11 = src[((size_t)y1 * sw + x1) * 4 + c];
                    dst[((size_t)j * m->w[l] + i) * 4 + c] = (t00 + t10 + t01 + t11) * 0.25f;
                }
            }
        }
        m->level[l] = dst;
    }
    return NPK_OK;
}

void cnn2_mips_free(cnn2_mips *m)
{
    free(m->owned);
    memset(m, 0, sizeof *m);
}

npk_status npk_cnn2_features(const npk_cnn2_image *img, uint32_t mip_level,
                             npk_cnn2_precision precision, float *out, npk_error *err)
{
    if (!img || !img->rgbd || !img->width || !img->height)
        return npk_fail(err, NPK_E_ARG, "cnn2: empty image");
    if (mip_level > NPK_CNN2_MAX_MIP)
        return npk_fail(err, NPK_E_ARG, "cnn2: mip_level %u is greater than 3", mip_level);
    cnn2_mips mips;
    npk_status st = cnn2_mips_build(&mips, img, mip_level, err);
    if (st) return st;
    uint32_t W = img->width, H = img->height, lw = mips.w[mip_level], lh = mips.h[mip_level];
    for (uint32_t y = 0; y < H; y++) {
        cnn2_tap ty = cnn2_tap_at(y, H, lh);
        for (uint32_t x = 0; x < W; x++) {
            const float *px = img->rgbd + ((size_t)y * W + x) * 4;
            float *f = out + ((size_t)y * W + x) * NPK_CNN2_CHANNELS;
            cnn2_tap tx = cnn2_tap_at(x, W, lw);
            for (uint32_t c = 0; c < 4; c++) {
                f[c] = px[c];
                f[4 + c] =
                    mip_level == 0 ? px[c] : cnn2_bilinear(mips.level[mip_level], lw, tx, ty, c);
            }
            float uvx = cnn2_uv(x, W);
            f[8] = uvx;
            f[9] = cnn2_uv(y, H);
            f[10] = cnn2_sin10(uvx);
            f[11] = 1.0f;
            for (uint32_t c = 0; c < NPK_CNN2_CHANNELS; c++) f[c] = cnn2_round(f[c], precision);
        }
    }
    cnn2_mips_free(&mips);
    return NPK_OK;
}

npk_status npk_cnn2_render_check(const npk_cnn2_model *m, const npk_cnn2_image *img, npk_error *err)
{
    npk_status st = m ? npk_cnn2_check_model(m, err) : NPK_OK;
    if (st) return st;
    for (uint32_t i = 0; m && i < m->num_layers; i++) {
        const npk_cnn2_layer *l = &m->layers[i];
        if (l->in_channels != NPK_CNN2_STD_IN || l->out_channels != NPK_CNN2_STD_OUT)
            return npk_fail(err, NPK_E_UNSUPPORTED,
                            "cnn2: unsupported network shape: layer %u is %u -> %u channels (the "
                            "renderer needs 12 -> 4 on every layer)",
                            i, l->in_channels, l->out_channels);
        if (l->kernel_size > NPK_CNN2_MAX_RENDER_KERNEL)
            return npk_fail(err, NPK_E_UNSUPPORTED,
                            "cnn2: layer %u: kernel %ux%u is larger than the renderer's %u", i,
                            l->kernel_size, l->kernel_size, NPK_CNN2_MAX_RENDER_KERNEL);
    }
    if (!img) return NPK_OK; /* the network alone */
    if (!img->rgbd || img->width == 0 || img->height == 0 || img->width > NPK_CNN2_MAX_SIDE ||
        img->height > NPK_CNN2_MAX_SIDE || (uint64_t)img->width * img->height > NPK_CNN2_MAX_PIXELS)
        return npk_fail(err, NPK_E_ARG, "cnn2: image size is outside the renderer's limits");
    return NPK_OK;
}
