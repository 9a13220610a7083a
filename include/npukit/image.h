/* Pictures as model input: decode BMP, PNG and JPEG into 8-bit RGB, resize
 * bilinearly, convert to a model's input tensor (docs/images.md).
 *
 * Decoders: PNG through libspng (NPK_HAVE_SPNG), BMP and JPEG through
 * stb_image from Debian's libstb (NPK_HAVE_STB). A build without one of them
 * returns NPK_E_UNSUPPORTED naming the missing library; the rest (resize,
 * conversion) needs libc only.
 *
 * Input files are hostile: the container structure (BMP headers, JPEG marker
 * segments, PNG chunks) is checked with offsets before pixels are decoded,
 * image size is limited (NPK_IMAGE_MAX_SIDE, NPK_IMAGE_MAX_PIXELS), and a file
 * whose pixel data ends early is an error, not a picture padded with black. */
#ifndef NPUKIT_IMAGE_H
#define NPUKIT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on a decoded picture (and on a resize target). */
#define NPK_IMAGE_MAX_SIDE   16384u
#define NPK_IMAGE_MAX_PIXELS (1u << 26) /* 64 Mpixel: 192 MiB of RGB */

/* An 8-bit RGB picture, rows top to bottom, pixels left to right, R G B
 * interleaved (HWC): rgb[(y * width + x) * 3 + c]. */
typedef struct npk_image {
    uint32_t width, height;
    uint8_t *rgb; /* owned; width * height * 3 bytes */
} npk_image;

typedef enum npk_image_format {
    NPK_IMAGE_UNKNOWN = 0,
    NPK_IMAGE_BMP,
    NPK_IMAGE_PNG,
    NPK_IMAGE_JPEG
} npk_image_format;

/* The format by its leading bytes; NPK_IMAGE_UNKNOWN when none matches. */
npk_image_format npk_image_detect(const uint8_t *buf, size_t len);
const char *npk_image_format_name(npk_image_format f); /* "BMP", "PNG", "JPEG", "unknown" */
/* Whether this build can decode the format (the decoder library was found). */
bool npk_image_format_available(npk_image_format f);

/* Decode a whole file held in memory. Grey pictures are expanded to R=G=B;
 * alpha is dropped (colours as stored, not composited); palettes are
 * expanded; 16-bit PNG samples are reduced to 8 bits by libspng; no gamma
 * or colour-profile correction is applied. */
npk_status npk_image_decode(const uint8_t *buf, size_t len, npk_image *img, npk_error *err);
npk_status npk_image_load(const char *path, npk_image *img, npk_error *err);
/* A zeroed picture of the given size. */
npk_status npk_image_alloc(npk_image *img, uint32_t width, uint32_t height, npk_error *err);
void npk_image_free(npk_image *img);

/* Encode as an 8-bit RGB PNG (libspng; NPK_E_UNSUPPORTED without it) into
 * a malloc'd buffer, or write it atomically to path. */
npk_status npk_image_encode_png(const npk_image *img, uint8_t **out, size_t *len, npk_error *err);
npk_status npk_image_save_png(const char *path, const npk_image *img, npk_error *err);

/* Bilinear resize of src into a new width x height picture. The definition
 * is TFLite's integer RESIZE_BILINEAR (reference_ops::ResizeBilinearInteger)
 * with half_pixel_centers = true and align_corners = false, applied to
 * uint8: 10-bit fixed-point source coordinates, products summed in 64 bits,
 * rounded half away from zero. Same size: an exact copy. */
npk_status npk_image_resize(const npk_image *src, uint32_t width, uint32_t height, npk_image *dst,
                            npk_error *err);

/* How float inputs without quantisation receive the pixel p (0..255). */
typedef enum npk_image_range {
    NPK_IMAGE_RANGE_UNIT = 0, /* p / 255: [0, 1] (the default) */
    NPK_IMAGE_RANGE_SIGNED,   /* p / 127.5 - 1: [-1, 1] */
    NPK_IMAGE_RANGE_PIXEL     /* p: [0, 255] */
} npk_image_range;

/* A model's picture input: [1, H, W, C] or [H, W, C], C = 3 (RGB) or 1 (grey:
 * (77 R + 150 G + 29 B + 128) >> 8). */
typedef struct npk_image_input {
    npk_dtype dtype; /* NPK_U8, NPK_I8 or NPK_F32 */
    int ndim;        /* 3 or 4 */
    int64_t shape[4];
    /* The input's quantisation (has_quant false when the model gives none). */
    bool has_quant;
    float scale;
    int32_t zero_point;
    npk_image_range range; /* float inputs without quantisation */
} npk_image_input;

/* Resize img to the input's H x W (as npk_image_resize) and convert:
 *   uint8:  the pixel value p itself;
 *   int8:   p - 128 (the pixel range moved into int8; image models quantised
 *           to int8 keep the uint8 scale with zero point - 128);
 *   float:  with quantisation: scale * (p - zero_point), the value the uint8
 *           input with those parameters would stand for; without: by range.
 * out receives a new tensor named name (may be NULL). */
npk_status npk_image_to_tensor(const npk_image *img, const npk_image_input *in, const char *name,
                               npk_tensor *out, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
