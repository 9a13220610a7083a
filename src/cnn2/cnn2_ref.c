/* The scalar reference renderer: reference section 3 written as plainly as
 * possible. Speed is not a goal here; the fast renderer (cnn2_fast.c) must
 * reproduce these bits exactly.
 *
 * Per layer, output pixel (x, y) and output channel o:
 *   acc = 0
 *   for i in 0..11, ky in 0..k-1, kx in 0..k-1 (this order, f32 adds):
 *       acc = acc + w[o][i][ky][kx] * in_i(x + kx - r, y + ky - r)
 *   out = round_f16(activation(acc))
 * where in_0..3 are the previous layer's outputs (R, G, B, D for layer 0) and
 * in_4..11 the static features; taps outside the image read the nearest
 * edge pixel (clamp) or 0 (zero). */
#include <stdlib.h>
#include <string.h>

#include "cnn2_internal.h"

/* Channel i at (x, y) of the current layer input, with the border rule. */
static float tap(const float *in, long W, long H, long x, long y, uint32_t i,
                 npk_cnn2_border border)
{
    if (x < 0 || y < 0 || x >= W || y >= H) {
        if (border == NPK_CNN2_BORDER_ZERO) return 0.0f;
        x = x < 0 ? 0 : x >= W ? W - 1 : x;
        y = y < 0 ? 0 : y >= H ? H - 1 : y;
    }
    return in[((size_t)y * (size_t)W + (size_t)x) * NPK_CNN2_CHANNELS + i];
}

npk_status npk_cnn2_render_ref(const npk_cnn2_model *m, const npk_cnn2_image *img,
                               const npk_cnn2_render_opts *opts, float *out, npk_error *err)
{
    static const npk_cnn2_render_opts defaults;
    if (!opts) opts = &defaults;
    npk_status st = npk_cnn2_render_check(m, img, err);
    if (st) return st;
    long W = img->width, H = img->height;
    size_t npix = (size_t)W * (size_t)H;
    float *in = malloc(npix * NPK_CNN2_CHANNELS * sizeof(float));
    float *next = malloc(npix * 4 * sizeof(float));
    if (!in || !next) {
        free(in);
        free(next);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    st = npk_cnn2_features(img, m->mip_level, opts->precision, in, err);
    if (!st && opts->features) memcpy(opts->features, in, npix * NPK_CNN2_CHANNELS * sizeof(float));
    for (uint32_t l = 0; !st && l < m->num_layers; l++) {
        const npk_cnn2_layer *layer = &m->layers[l];
        long k = layer->kernel_size, r = k / 2;
        cnn2_act act = cnn2_layer_act(opts->activation, l, m->num_layers);
        for (long y = 0; !st && y < H; y++) {
            for (long x = 0; x < W; x++)
                for (uint32_t o = 0; o < 4; o++) {
                    float acc = 0.0f;
                    for (uint32_t i = 0; i < NPK_CNN2_CHANNELS; i++)
                        for (long ky = 0; ky < k; ky++)
                            for (long kx = 0; kx < k; kx++) {
                                uint16_t wh = m->weights[npk_cnn2_weight_index(
                                    layer, o, i, (uint32_t)ky, (uint32_t)kx)];
                                float w = npk_f16_to_f32(wh);
                                float v = tap(in, W, H, x + kx - r, y + ky - r, i, opts->border);
                                acc = acc + w * v;
                            }
                    float a = cnn2_activate(acc, act);
                    next[((size_t)y * (size_t)W + (size_t)x) * 4 + o] =
                        cnn2_round(a, opts->precision);
                }
            st = npk_progress_report(opts->progress, "row",
                                     (uint64_t)l * (uint64_t)H + (uint64_t)y + 1,
                                     (uint64_t)m->num_layers * (uint64_t)H, err);
        }
        if (st) break;
        /* The whole layer is done: its outputs become channels 0..3. */
        for (size_t p = 0; p < npix; p++)
            memcpy(in + p * NPK_CNN2_CHANNELS, next + p * 4, 4 * sizeof(float));
        if (opts->layer_out && opts->layer_out[l])
            memcpy(opts->layer_out[l], next, npix * 4 * sizeof(float));
    }
    if (!st) memcpy(out, next, npix * 4 * sizeof(float));
    free(in);
    free(next);
    return st;
}
