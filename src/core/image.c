/* Pictures: format detection, size limits, the dispatch to the decoders, and
 * the structure checks of BMP and JPEG files (made here, with offsets, before
 * stb_image sees the bytes: stb reads past the end of a file as zeros and
 * gives no positions). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"
#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/file.h"

npk_image_format npk_image_detect(const uint8_t *buf, size_t len)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len >= 8 && !memcmp(buf, png_sig, 8)) return NPK_IMAGE_PNG;
    if (len >= 3 && buf[0] == 0xff && buf[1] == 0xd8 && buf[2] == 0xff) return NPK_IMAGE_JPEG;
    if (len >= 2 && buf[0] == 'B' && buf[1] == 'M') return NPK_IMAGE_BMP;
    return NPK_IMAGE_UNKNOWN;
}

const char *npk_image_format_name(npk_image_format f)
{
    switch (f) {
    case NPK_IMAGE_BMP: return "BMP";
    case NPK_IMAGE_PNG: return "PNG";
    case NPK_IMAGE_JPEG: return "JPEG";
    default: return "unknown";
    }
}

bool npk_image_format_available(npk_image_format f)
{
    switch (f) {
    case NPK_IMAGE_BMP:
    case NPK_IMAGE_JPEG: return npk_image_stb_available();
    case NPK_IMAGE_PNG: return npk_image_png_available();
    default: return false;
    }
}

npk_status npk_image_check_size(const char *fmt, uint64_t width, uint64_t height, uint64_t offset,
                                npk_error *err)
{
    if (!width || !height)
        return npk_fail_at(err, NPK_E_FORMAT, offset, "%s picture is %llux%llu (empty)", fmt,
                           (unsigned long long)width, (unsigned long long)height);
    if (width > NPK_IMAGE_MAX_SIDE || height > NPK_IMAGE_MAX_SIDE ||
        width * height > NPK_IMAGE_MAX_PIXELS)
        return npk_fail_at(err, NPK_E_LIMIT, offset,
                           "%s picture is %llux%llu, more than the limit (%u per side, %u pixels)",
                           fmt, (unsigned long long)width, (unsigned long long)height,
                           NPK_IMAGE_MAX_SIDE, NPK_IMAGE_MAX_PIXELS);
    return NPK_OK;
}

npk_status npk_image_alloc(npk_image *img, uint32_t width, uint32_t height, npk_error *err)
{
    memset(img, 0, sizeof *img);
    npk_status st = npk_image_check_size("the", width, height, 0, err);
    if (st) return st;
    img->rgb = calloc((size_t)width * height, 3);
    if (!img->rgb)
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a %ux%u picture", width, height);
    img->width = width;
    img->height = height;
    return NPK_OK;
}

void npk_image_free(npk_image *img)
{
    if (!img) return;
    free(img->rgb);
    memset(img, 0, sizeof *img);
}

/* ---- BMP: BITMAPFILEHEADER (14 bytes) + an info header of 12 (OS/2 core),
 * 40, 56, 108 or 124 bytes (the ones stb_image reads) ---- */

#define BMP_FILE_HDR 14

npk_status npk_image_bmp_check(const uint8_t *buf, size_t len, npk_error *err)
{
    if (len < BMP_FILE_HDR + 4)
        return npk_fail_at(err, NPK_E_FORMAT, len, "BMP ends inside its file header");
    uint32_t data_off = npk_ld32le(buf + 10);
    uint32_t hsz = npk_ld32le(buf + 14);
    if (hsz != 12 && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124)
        return npk_fail_at(err, NPK_E_UNSUPPORTED, 14,
                           "BMP info header of %u bytes is not supported", hsz);
    if (len < BMP_FILE_HDR + (size_t)hsz)
        return npk_fail_at(err, NPK_E_FORMAT, len, "BMP ends inside its %u-byte info header", hsz);
    const uint8_t *h = buf + BMP_FILE_HDR;
    int64_t width, height;
    uint16_t planes, bpp;
    uint32_t compression = 0;
    if (hsz == 12) {
        width = npk_ld16le(h + 4);
        height = npk_ld16le(h + 6);
        planes = npk_ld16le(h + 8);
        bpp = npk_ld16le(h + 10);
    } else {
        width = (int32_t)npk_ld32le(h + 4);
        height = (int32_t)npk_ld32le(h + 8);
        planes = npk_ld16le(h + 12);
        bpp = npk_ld16le(h + 14);
        compression = npk_ld32le(h + 16);
    }
    if (planes != 1)
        return npk_fail_at(err, NPK_E_FORMAT, BMP_FILE_HDR + (hsz == 12 ? 8 : 12),
                           "BMP has %u colour planes, expected 1", planes);
    uint64_t bpp_off = BMP_FILE_HDR + (hsz == 12 ? 10 : 14);
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
        return npk_fail_at(err, NPK_E_UNSUPPORTED, bpp_off, "BMP with %u bits per pixel", bpp);
    /* 0 = BI_RGB, 3 = BI_BITFIELDS (16 and 32 bpp); RLE and embedded JPEG/PNG are not read. */
    if (compression != 0 && !(compression == 3 && (bpp == 16 || bpp == 32)))
        return npk_fail_at(err, NPK_E_UNSUPPORTED, BMP_FILE_HDR + 16,
                           "BMP compression %u with %u bits per pixel is not supported",
                           compression, bpp);
    npk_status st =
        npk_image_check_size("BMP", width < 0 ? 0 : (uint64_t)width,
                             (uint64_t)(height < 0 ? -height : height), BMP_FILE_HDR + 4, err);
    if (st) return st;
    /* Rows are padded to 4 bytes; every row must be in the file. */
    uint64_t stride = ((uint64_t)width * bpp + 31) / 32 * 4;
    uint64_t need = stride * (uint64_t)(height < 0 ? -height : height);
    uint64_t header_end = BMP_FILE_HDR + (uint64_t)hsz + (compression == 3 && hsz == 40 ? 12 : 0);
    if (data_off < header_end || data_off > len)
        return npk_fail_at(
            err, NPK_E_FORMAT, 10,
            "BMP pixel data offset %u is outside the file (headers end at %llu, file "
            "is %zu bytes)",
            data_off, (unsigned long long)header_end, len);
    if (need > len - data_off)
        return npk_fail_at(err, NPK_E_FORMAT, len,
                           "BMP pixel data ends early: %llu rows of %llu bytes from offset %u need "
                           "%llu bytes, the file has %llu",
                           (unsigned long long)(height < 0 ? -height : height),
                           (unsigned long long)stride, data_off, (unsigned long long)need,
                           (unsigned long long)(len - data_off));
    return NPK_OK;
}

/* ---- JPEG: walk the marker segments up to the first scan ---- */

static bool is_sof(uint8_t m)
{
    return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

npk_status npk_image_jpeg_check(const uint8_t *buf, size_t len, npk_error *err)
{
    size_t pos = 2; /* after SOI */
    bool sof = false;
    for (;;) {
        if (pos >= len)
            return npk_fail_at(err, NPK_E_FORMAT, len, "JPEG ends before its first scan");
        if (buf[pos] != 0xff)
            return npk_fail_at(err, NPK_E_FORMAT, pos, "JPEG: expected a marker, found 0x%02x",
                               buf[pos]);
        while (pos < len && buf[pos] == 0xff) pos++; /* fill bytes */
        if (pos >= len)
            return npk_fail_at(err, NPK_E_FORMAT, len, "JPEG ends before its first scan");
        uint8_t m = buf[pos];
        size_t at = pos - 1; /* the marker's 0xff */
        pos++;
        if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) continue; /* no length */
        if (m == 0xd9 || m == 0xd8)
            return npk_fail_at(err, NPK_E_FORMAT, at, "JPEG: marker 0xff%02x before the first scan",
                               m);
        if (len - pos < 2)
            return npk_fail_at(err, NPK_E_FORMAT, len, "JPEG ends inside marker 0xff%02x", m);
        size_t seg = npk_ld16be(buf + pos);
        if (seg < 2 || seg > len - pos)
            return npk_fail_at(err, NPK_E_FORMAT, pos,
                               "JPEG: marker 0xff%02x segment of %zu bytes runs past the end (%zu "
                               "bytes left)",
                               m, seg, len - pos);
        if (is_sof(m)) {
            if (seg < 8)
                return npk_fail_at(err, NPK_E_FORMAT, pos, "JPEG: frame header of %zu bytes", seg);
            uint16_t h = npk_ld16be(buf + pos + 3), w = npk_ld16be(buf + pos + 5);
            npk_status st = npk_image_check_size("JPEG", w, h, pos + 3, err);
            if (st) return st;
            sof = true;
        }
        if (m == 0xda) {
            if (!sof)
                return npk_fail_at(err, NPK_E_FORMAT, at, "JPEG: scan before any frame header");
            break;
        }
        pos += seg;
    }
    /* Entropy-coded data escapes 0xff as 0xff 0x00, so 0xff 0xd9 after the
     * first scan is the end-of-image marker; a cut file has none. */
    for (size_t i = pos; i + 1 < len; i++)
        if (buf[i] == 0xff && buf[i + 1] == 0xd9) return NPK_OK;
    return npk_fail_at(err, NPK_E_FORMAT, len, "JPEG ends without its end-of-image marker");
}

/* ---- dispatch ---- */

npk_status npk_image_decode(const uint8_t *buf, size_t len, npk_image *img, npk_error *err)
{
    memset(img, 0, sizeof *img);
    npk_image_format f = npk_image_detect(buf, len);
    npk_status st;
    switch (f) {
    case NPK_IMAGE_PNG: return npk_image_png_decode(buf, len, img, err);
    case NPK_IMAGE_BMP: st = npk_image_bmp_check(buf, len, err); break;
    case NPK_IMAGE_JPEG: st = npk_image_jpeg_check(buf, len, err); break;
    default: return npk_fail_at(err, NPK_E_FORMAT, 0, "not a BMP, PNG or JPEG picture");
    }
    if (st) return st;
    return npk_image_stb_decode(f, buf, len, img, err);
}

npk_status npk_image_load(const char *path, npk_image *img, npk_error *err)
{
    memset(img, 0, sizeof *img);
    npk_mapped m;
    npk_status st = npk_map_file(path, &m, err);
    if (st) return st;
    st = npk_image_decode(m.data, m.size, img, err);
    npk_unmap_file(&m);
    return st;
}
