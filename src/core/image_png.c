/* PNG pictures through libspng (optional): any colour type and bit depth,
 * decoded to 8-bit RGB by libspng (alpha dropped, 16-bit samples reduced to
 * their high byte, no gamma correction). */
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"
#include "npukit/file.h"

#ifdef NPK_HAVE_SPNG
#include <spng.h>

bool npk_image_png_available(void)
{
    return true;
}

#define IHDR_WIDTH 16 /* file offset of the size: signature, chunk length and type */

/* libspng reads through this so an error can name where decoding stopped:
 * the start of the last read (a chunk header, its data or its CRC), or the
 * end of a file that ends too soon. */
typedef struct png_src {
    const uint8_t *buf;
    size_t len, pos, last;
    bool eof;
} png_src;

static int png_read(spng_ctx *ctx, void *user, void *dst, size_t n)
{
    png_src *s = user;
    (void)ctx;
    s->last = s->pos;
    if (n > s->len - s->pos) {
        s->eof = true;
        s->last = s->pos = s->len;
        return SPNG_IO_EOF;
    }
    memcpy(dst, s->buf + s->pos, n);
    s->pos += n;
    return 0;
}

npk_status npk_image_png_decode(const uint8_t *buf, size_t len, npk_image *img, npk_error *err)
{
    memset(img, 0, sizeof *img);
    spng_ctx *ctx = spng_ctx_new(0);
    if (!ctx) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = NPK_OK;
    png_src src = {buf, len, 0, 0, false};
    struct spng_ihdr ihdr;
    size_t size;
    int rc;
    spng_set_image_limits(ctx, NPK_IMAGE_MAX_SIDE, NPK_IMAGE_MAX_SIDE);
    spng_set_chunk_limits(ctx, 64u << 20, 64u << 20);
    spng_set_crc_action(ctx, SPNG_CRC_ERROR, SPNG_CRC_ERROR);
    if ((rc = spng_set_png_stream(ctx, png_read, &src)) || (rc = spng_get_ihdr(ctx, &ihdr))) {
        st = npk_fail_at(err, NPK_E_FORMAT, src.last, "not a readable PNG: %s", spng_strerror(rc));
        goto done;
    }
    if ((st = npk_image_check_size("PNG", ihdr.width, ihdr.height, IHDR_WIDTH, err))) goto done;
    if ((rc = spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &size))) {
        st = npk_fail_at(err, NPK_E_FORMAT, src.last, "PNG decoding failed: %s", spng_strerror(rc));
        goto done;
    }
    if ((st = npk_image_alloc(img, ihdr.width, ihdr.height, err))) goto done;
    if (size != (size_t)ihdr.width * ihdr.height * 3) {
        st =
            npk_fail(err, NPK_E_UNSUPPORTED, "PNG: libspng gives %zu bytes for a %ux%u RGB picture",
                     size, ihdr.width, ihdr.height);
        goto done;
    }
    if ((rc = spng_decode_image(ctx, img->rgb, size, SPNG_FMT_RGB8, 0)) ||
        (rc = spng_decode_chunks(ctx))) { /* read on to IEND: a cut file is an error */
        st = npk_fail_at(err, NPK_E_FORMAT, src.last, "PNG decoding failed: %s", spng_strerror(rc));
        goto done;
    }
    if (src.eof) st = npk_fail_at(err, NPK_E_FORMAT, len, "PNG ends before its IEND chunk");
done:
    if (st) npk_image_free(img);
    spng_ctx_free(ctx);
    return st;
}

npk_status npk_image_encode_png(const npk_image *img, uint8_t **out, size_t *len, npk_error *err)
{
    *out = NULL;
    *len = 0;
    if (!img || !img->rgb || !img->width || !img->height)
        return npk_fail(err, NPK_E_ARG, "PNG output: an empty picture");
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    if (!ctx) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    struct spng_ihdr ihdr = {0};
    ihdr.width = img->width;
    ihdr.height = img->height;
    ihdr.bit_depth = 8;
    ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
    int rc;
    npk_status st = NPK_OK;
    const size_t size = (size_t)img->width * img->height * 3;
    if ((rc = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1)) || (rc = spng_set_ihdr(ctx, &ihdr)) ||
        (rc = spng_encode_image(ctx, img->rgb, size, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE))) {
        st = npk_fail(err, NPK_E_IO, "PNG encoding failed: %s", spng_strerror(rc));
    } else if (!(*out = spng_get_png_buffer(ctx, len, &rc))) {
        st = npk_fail(err, NPK_E_NOMEM, "PNG encoding failed: %s", spng_strerror(rc));
    }
    spng_ctx_free(ctx);
    return st;
}

#else /* !NPK_HAVE_SPNG */

npk_status npk_image_encode_png(const npk_image *img, uint8_t **out, size_t *len, npk_error *err)
{
    (void)img;
    *out = NULL;
    *len = 0;
    return npk_fail(err, NPK_E_UNSUPPORTED,
                    "PNG output needs libspng, which this build lacks (Debian libspng-dev)");
}

bool npk_image_png_available(void)
{
    return false;
}

npk_status npk_image_png_decode(const uint8_t *buf, size_t len, npk_image *img, npk_error *err)
{
    (void)buf;
    (void)len;
    memset(img, 0, sizeof *img);
    return npk_fail(err, NPK_E_UNSUPPORTED,
                    "PNG pictures need libspng, which this build lacks (Debian libspng-dev)");
}

#endif

npk_status npk_image_save_png(const char *path, const npk_image *img, npk_error *err)
{
    uint8_t *buf;
    size_t len;
    npk_status st = npk_image_encode_png(img, &buf, &len, err);
    if (!st) st = npk_write_file(path, buf, len, err);
    free(buf);
    return st;
}
