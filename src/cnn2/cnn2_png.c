/* PNG input and output for the renderer, through libspng (optional).
 * Input: any PNG libspng decodes. 8-bit images are decoded to RGBA8, 16-bit
 * ones to RGBA16 (values / 255 or / 65535); libspng expands greyscale (grey
 * into R, G, B), palettes and tRNS transparency. D = alpha when the image has
 * an alpha channel or tRNS, else 1.0. Output: 8-bit RGBA (or RGB). */
#include <stdlib.h>
#include <string.h>

#include "cnn2_internal.h"

#ifdef NPK_HAVE_SPNG
#include <spng.h>

bool npk_cnn2_png_available(void)
{
    return true;
}

#define IHDR_WIDTH 16 /* file offset of the image size: signature, chunk length and type */

/* libspng reads the file through this, so an error can name the offset at
 * which decoding stopped: the start of the last read (a chunk header, its
 * data or its CRC), or the end of a file that ends too soon. */
typedef struct png_src {
    const uint8_t *buf;
    size_t len, pos, last;
    bool eof; /* a read ran past the end: the file ends before IEND */
} png_src;

static int png_read(spng_ctx *ctx, void *user, void *dst, size_t n)
{
    png_src *s = user;
    (void)ctx;
    s->last = s->pos;
    if (n > s->len - s->pos) { /* the file ends here */
        s->eof = true;
        s->last = s->pos = s->len;
        return SPNG_IO_EOF;
    }
    memcpy(dst, s->buf + s->pos, n);
    s->pos += n;
    return 0;
}

/* Decode into img (RGBD); *alpha says whether the PNG carried transparency. */
static npk_status decode(const uint8_t *buf, size_t len, npk_cnn2_image *img, bool *alpha,
                         npk_error *err)
{
    memset(img, 0, sizeof *img);
    spng_ctx *ctx = spng_ctx_new(0);
    if (!ctx) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = NPK_OK;
    void *pix = NULL;
    struct spng_ihdr ihdr;
    struct spng_trns trns;
    png_src src = {buf, len, 0, 0, false};
    int rc;
    spng_set_image_limits(ctx, NPK_CNN2_MAX_SIDE, NPK_CNN2_MAX_SIDE);
    spng_set_chunk_limits(ctx, 64u << 20, 64u << 20);
    /* A damaged ancillary chunk is an error too: libspng would otherwise drop
     * it silently (a lost tRNS changes the D channel). */
    spng_set_crc_action(ctx, SPNG_CRC_ERROR, SPNG_CRC_ERROR);
    if ((rc = spng_set_png_stream(ctx, png_read, &src)) || (rc = spng_get_ihdr(ctx, &ihdr))) {
        st = npk_fail_at(err, NPK_E_FORMAT, src.last, "not a readable PNG: %s", spng_strerror(rc));
        goto done;
    }
    if ((uint64_t)ihdr.width * ihdr.height > NPK_CNN2_MAX_PIXELS) {
        st = npk_fail_at(err, NPK_E_LIMIT, IHDR_WIDTH, "PNG is %ux%u, more than %u pixels",
                         ihdr.width, ihdr.height, NPK_CNN2_MAX_PIXELS);
        goto done;
    }
    /* Looking for tRNS reads every chunk before the image data: a damaged
     * one is reported here (later calls would only say "bad state"). */
    int trc = spng_get_trns(ctx, &trns);
    if (trc && trc != SPNG_ECHUNKAVAIL) {
        st =
            npk_fail_at(err, NPK_E_FORMAT, src.last, "PNG decoding failed: %s", spng_strerror(trc));
        goto done;
    }
    *alpha = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
             ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA || trc == 0;
    bool wide = ihdr.bit_depth == 16;
    int fmt = wide ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
    size_t size;
    if ((rc = spng_decoded_image_size(ctx, fmt, &size)) || !(pix = malloc(size)) ||
        (rc = spng_decode_image(ctx, pix, size, fmt, SPNG_DECODE_TRNS)) ||
        (rc = spng_decode_chunks(ctx))) { /* read on to IEND: a cut file is an error */
        st = rc ? npk_fail_at(err, NPK_E_FORMAT, src.last, "PNG decoding failed: %s",
                              spng_strerror(rc))
                : npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto done;
    }
    if (src.eof) { /* libspng accepts a file cut after its image data */
        st = npk_fail_at(err, NPK_E_FORMAT, len, "PNG ends before its IEND chunk");
        goto done;
    }
    if ((st = npk_cnn2_image_alloc(img, ihdr.width, ihdr.height, err))) goto done;
    size_t n = (size_t)ihdr.width * ihdr.height * 4;
    for (size_t i = 0; i < n; i++)
        img->rgbd[i] = wide ? (float)((const uint16_t *)pix)[i] / 65535.0f
                            : (float)((const uint8_t *)pix)[i] / 255.0f;
    if (!*alpha)
        for (size_t i = 3; i < n; i += 4) img->rgbd[i] = 1.0f;
done:
    free(pix);
    spng_ctx_free(ctx);
    return st;
}

npk_status npk_cnn2_png_decode(const uint8_t *buf, size_t len, npk_cnn2_image *img, npk_error *err)
{
    bool alpha;
    return decode(buf, len, img, &alpha, err);
}

npk_status npk_cnn2_png_depth(npk_cnn2_image *img, const uint8_t *buf, size_t len, npk_error *err)
{
    npk_cnn2_image d;
    bool alpha;
    npk_status st = decode(buf, len, &d, &alpha, err);
    if (st) return st;
    if (d.width != img->width || d.height != img->height) {
        st = npk_fail_at(err, NPK_E_FORMAT, IHDR_WIDTH,
                         "depth image is %ux%u, the input image %ux%u", d.width, d.height,
                         img->width, img->height);
    } else {
        size_t n = (size_t)img->width * img->height;
        for (size_t i = 0; i < n; i++) img->rgbd[i * 4 + 3] = d.rgbd[i * 4]; /* grey or R */
    }
    npk_cnn2_image_free(&d);
    return st;
}

npk_status npk_cnn2_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int channels,
                               uint8_t **out, size_t *len, npk_error *err)
{
    *out = NULL;
    if ((channels != 3 && channels != 4) || !width || !height)
        return npk_fail(err, NPK_E_ARG, "PNG output needs 3 or 4 channels and a non-empty image");
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    if (!ctx) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    struct spng_ihdr ihdr = {0};
    ihdr.width = width;
    ihdr.height = height;
    ihdr.bit_depth = 8;
    ihdr.color_type = channels == 4 ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA : SPNG_COLOR_TYPE_TRUECOLOR;
    int rc;
    npk_status st = NPK_OK;
    size_t size = (size_t)width * height * (size_t)channels;
    if ((rc = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1)) || (rc = spng_set_ihdr(ctx, &ihdr)) ||
        (rc = spng_encode_image(ctx, pixels, size, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE))) {
        st = npk_fail(err, NPK_E_IO, "PNG encoding failed: %s", spng_strerror(rc));
    } else {
        void *png = spng_get_png_buffer(ctx, len, &rc);
        if (!png) st = npk_fail(err, NPK_E_NOMEM, "PNG encoding failed: %s", spng_strerror(rc));
        *out = png;
    }
    spng_ctx_free(ctx);
    return st;
}

#else /* !NPK_HAVE_SPNG */

bool npk_cnn2_png_available(void)
{
    return false;
}

static npk_status no_png(npk_error *err)
{
    return npk_fail(err, NPK_E_UNSUPPORTED, "PNG support was not built (needs libspng)");
}

npk_status npk_cnn2_png_decode(const uint8_t *buf, size_t len, npk_cnn2_image *img, npk_error *err)
{
    (void)buf;
    (void)len;
    memset(img, 0, sizeof *img);
    return no_png(err);
}

npk_status npk_cnn2_png_depth(npk_cnn2_image *img, const uint8_t *buf, size_t len, npk_error *err)
{
    (void)img;
    (void)buf;
    (void)len;
    return no_png(err);
}

npk_status npk_cnn2_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int channels,
                               uint8_t **out, size_t *len, npk_error *err)
{
    (void)pixels;
    (void)width;
    (void)height;
    (void)channels;
    *out = NULL;
    *len = 0;
    return no_png(err);
}

#endif
