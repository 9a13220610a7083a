/* Shared by the picture decoders (image.c, image_stb.c, image_png.c). */
#ifndef NPK_IMAGE_INTERNAL_H
#define NPK_IMAGE_INTERNAL_H

#include "npukit/image.h"

/* Refuse a picture size outside the limits; offset locates the size field. */
npk_status npk_image_check_size(const char *fmt, uint64_t width, uint64_t height, uint64_t offset,
                                npk_error *err);

/* Structure checks that give offsets, then the decoders (which may be
 * compiled out: they then fail with NPK_E_UNSUPPORTED). */
npk_status npk_image_bmp_check(const uint8_t *buf, size_t len, npk_error *err);
npk_status npk_image_jpeg_check(const uint8_t *buf, size_t len, npk_error *err);
npk_status npk_image_stb_decode(npk_image_format f, const uint8_t *buf, size_t len, npk_image *img,
                                npk_error *err);
npk_status npk_image_png_decode(const uint8_t *buf, size_t len, npk_image *img, npk_error *err);
bool npk_image_stb_available(void);
bool npk_image_png_available(void);

#endif
