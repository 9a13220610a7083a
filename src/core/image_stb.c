/* BMP and JPEG pixels through stb_image (Debian libstb, optional). The
 * structure checks in image.c have already run, with offsets; stb_image
 * decodes the pixels and gives a reason, but no position, when it fails. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

#ifdef NPK_HAVE_STB
#include <stb/stb_image.h>

bool npk_image_stb_available(void)
{
    return true;
}

npk_status npk_image_stb_decode(npk_image_format f, const uint8_t *buf, size_t len, npk_image *img,
                                npk_error *err)
{
    const char *name = npk_image_format_name(f);
    memset(img, 0, sizeof *img);
    if (len > INT_MAX)
        return npk_fail(err, NPK_E_LIMIT, "%s file of %zu bytes is too large", name, len);
    int w, h, comp;
    /* The size again as stb_image reads it: the limits hold for what it allocates. */
    if (!stbi_info_from_memory(buf, (int)len, &w, &h, &comp))
        return npk_fail(err, NPK_E_FORMAT, "%s decoding failed: %s", name, stbi_failure_reason());
    /* (stb reports a top-down BMP's height as stored: negative) */
    npk_status st = npk_image_check_size(name, w < 0 ? 0 : (uint64_t)w,
                                         (uint64_t)(h < 0 ? -(int64_t)h : h), 0, err);
    if (st) return st;
    uint8_t *pix = stbi_load_from_memory(buf, (int)len, &w, &h, &comp, 3);
    if (!pix)
        return npk_fail(err, NPK_E_FORMAT, "%s decoding failed: %s", name, stbi_failure_reason());
    st = npk_image_alloc(img, (uint32_t)w, (uint32_t)h, err);
    if (!st) memcpy(img->rgb, pix, (size_t)w * (size_t)h * 3);
    stbi_image_free(pix);
    return st;
}

#else /* !NPK_HAVE_STB */

bool npk_image_stb_available(void)
{
    return false;
}

npk_status npk_image_stb_decode(npk_image_format f, const uint8_t *buf, size_t len, npk_image *img,
                                npk_error *err)
{
    (void)buf;
    (void)len;
    memset(img, 0, sizeof *img);
    return npk_fail(err, NPK_E_UNSUPPORTED,
                    "%s pictures need stb_image, which this build lacks (Debian libstb-dev)",
                    npk_image_format_name(f));
}

#endif
