/* CNN v2 CPU inference: images, static features, the scalar reference
 * renderer, the fast renderer, blending and PNG input/output.
 *
 * Semantics (docs/cnn2.md, reference section 3): every layer is a 12 -> 4
 * k x k cross-correlation over [R, G, B, D | p0 p1 p2 p3 uv_x uv_y sin 1];
 * f16 weights, f32 arithmetic; features and each layer's outputs rounded to
 * f16 ("faithful" precision); sigmoid on the first and last layer, ReLU in
 * between (or the legacy clamp rule); clamp-to-edge or zero borders.
 *
 * The fast renderer returns exactly the reference's bits: it accumulates
 * every output in the same order (vectorised across pixels, never across the
 * reduction) and uses the same exp/sigmoid code. */
#ifndef NPUKIT_CNN2_RENDER_H
#define NPUKIT_CNN2_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/cnn2.h"
#include "npukit/error.h"
#include "npukit/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Images accepted by the renderer (npukit limits). */
#define NPK_CNN2_MAX_SIDE   32768u
#define NPK_CNN2_MAX_PIXELS (1u << 25)
/* Largest kernel the renderer runs (the format allows any odd size). */
#define NPK_CNN2_MAX_RENDER_KERNEL 63u
#define NPK_CNN2_CHANNELS          12u /* 4 dynamic + 8 static */

/* A W x H image of R, G, B, D values (normally in [0, 1]); rows top to
 * bottom, 4 floats per pixel. */
typedef struct npk_cnn2_image {
    uint32_t width, height;
    float *rgbd; /* owned, width * height * 4 */
} npk_cnn2_image;

npk_status npk_cnn2_image_alloc(npk_cnn2_image *img, uint32_t width, uint32_t height,
                                npk_error *err);
void npk_cnn2_image_free(npk_cnn2_image *img);

typedef enum npk_cnn2_border {
    NPK_CNN2_BORDER_CLAMP = 0, /* taps outside read the nearest edge pixel (all 12 channels) */
    NPK_CNN2_BORDER_ZERO       /* taps outside read 0 in all 12 channels */
} npk_cnn2_border;

typedef enum npk_cnn2_activation {
    NPK_CNN2_ACT_DEFAULT = 0, /* sigmoid first and last layer, ReLU in between */
    NPK_CNN2_ACT_LEGACY_CLAMP /* ReLU except the last layer, which is clamped to [0, 1] */
} npk_cnn2_activation;

typedef enum npk_cnn2_precision {
    NPK_CNN2_PREC_F16 = 0, /* faithful: features and layer outputs rounded to f16 */
    NPK_CNN2_PREC_F32      /* everything kept in f32 */
} npk_cnn2_precision;

/* Options; an all-zero struct means the defaults. */
typedef struct npk_cnn2_render_opts {
    npk_cnn2_border border;
    npk_cnn2_activation activation;
    npk_cnn2_precision precision;
    unsigned threads;  /* fast renderer: 0 = one per online CPU */
    float **layer_out; /* optional: num_layers buffers of W*H*4, each layer's output */
    float *features;   /* optional: W*H*12, the input of layer 0 */
    /* optional: rows done of all layers (reference) or stages (fast renderer) */
    const npk_progress *progress;
} npk_cnn2_render_opts;

/* Can this model render this image? (12 -> 4 layers, kernel and size limits;
 * img may be NULL to check the network alone.) */
npk_status npk_cnn2_render_check(const npk_cnn2_model *m, const npk_cnn2_image *img,
                                 npk_error *err);

/* The input of layer 0 for every pixel: W*H*12 floats (R G B D p0..p3 uv_x
 * uv_y sin 1), rounded to f16 unless precision is F32. */
npk_status npk_cnn2_features(const npk_cnn2_image *img, uint32_t mip_level,
                             npk_cnn2_precision precision, float *out, npk_error *err);

/* The network output (last layer, before blending) into out: W*H*4. */
npk_status npk_cnn2_render_ref(const npk_cnn2_model *m, const npk_cnn2_image *img,
                               const npk_cnn2_render_opts *opts, float *out, npk_error *err);
npk_status npk_cnn2_render(const npk_cnn2_model *m, const npk_cnn2_image *img,
                           const npk_cnn2_render_opts *opts, float *out, npk_error *err);

/* A reusable fast renderer: buffers and threads' scratch stay allocated
 * between frames of the same size. The model is copied. */
typedef struct npk_cnn2_renderer npk_cnn2_renderer;
npk_status npk_cnn2_renderer_new(npk_cnn2_renderer **r, const npk_cnn2_model *m,
                                 const npk_cnn2_render_opts *opts, npk_error *err);
npk_status npk_cnn2_renderer_run(npk_cnn2_renderer *r, const npk_cnn2_image *img, float *out,
                                 npk_error *err);
void npk_cnn2_renderer_free(npk_cnn2_renderer *r);

/* The fast renderer's code path ("avx2" or "generic"); force_generic(1)
 * selects the portable vector code (for tests and benchmarks). */
const char *npk_cnn2_render_path(void);
void npk_cnn2_force_generic(int on);

/* ---- output ---- */

/* out = original * (1 - blend) + cnn * blend per channel, blend clamped to
 * [0, 1]; n pixels of 4 floats. out may alias cnn. */
void npk_cnn2_blend(const float *original, const float *cnn, size_t npix, float blend, float *out);
/* 8-bit: clamp to [0, 1], times 255, round to nearest. */
void npk_cnn2_to_rgba8(const float *rgbd, size_t npix, uint8_t *out);
/* RGBA8 to an image (alpha becomes D; has_alpha false sets D = 1). */
npk_status npk_cnn2_image_from_rgba8(npk_cnn2_image *img, const uint8_t *rgba, uint32_t width,
                                     uint32_t height, bool has_alpha, npk_error *err);

/* A deterministic test picture (gradients, rings and a checkerboard), RGBA8;
 * alpha is a diagonal ramp when with_alpha, else 255. *out is malloc'd. */
npk_status npk_cnn2_pattern(uint32_t width, uint32_t height, uint64_t seed, bool with_alpha,
                            uint8_t **out, npk_error *err);

/* ---- PNG (libspng; NPK_E_UNSUPPORTED in builds without it) ---- */

bool npk_cnn2_png_available(void);
/* Any PNG: 8-bit RGB/RGBA directly; greyscale, palette, 16-bit and tRNS are
 * converted by libspng. D = alpha (normalised) or 1.0 without alpha. */
npk_status npk_cnn2_png_decode(const uint8_t *buf, size_t len, npk_cnn2_image *img, npk_error *err);
/* Replace D by a depth PNG of the same size (its grey or first channel). */
npk_status npk_cnn2_png_depth(npk_cnn2_image *img, const uint8_t *buf, size_t len, npk_error *err);
/* Encode 8-bit RGBA (or RGB when channels == 3) into a malloc'd PNG. */
npk_status npk_cnn2_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int channels,
                               uint8_t **out, size_t *len, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
