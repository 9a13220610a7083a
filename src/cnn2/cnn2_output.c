/* Blending, 8-bit conversion and the deterministic test picture. */
#include <math.h>
#include <stdlib.h>

#include "cnn2_internal.h"

void npk_cnn2_blend(const float *original, const float *cnn, size_t npix, float blend, float *out)
{
    float b = blend > 1.0f ? 1.0f : blend >= 0.0f ? blend : 0.0f; /* NaN counts as 0 */
    float keep = 1.0f - b;
    for (size_t i = 0; i < npix * 4; i++) out[i] = original[i] * keep + cnn[i] * b;
}

void npk_cnn2_to_rgba8(const float *rgbd, size_t npix, uint8_t *out)
{
    for (size_t i = 0; i < npix * 4; i++) {
        float v = rgbd[i] > 1.0f ? 1.0f : rgbd[i] >= 0.0f ? rgbd[i] : 0.0f;
        out[i] = (uint8_t)floorf(v * 255.0f + 0.5f);
    }
}

npk_status npk_cnn2_image_from_rgba8(npk_cnn2_image *img, const uint8_t *rgba, uint32_t width,
                                     uint32_t height, bool has_alpha, npk_error *err)
{
    npk_status st = npk_cnn2_image_alloc(img, width, height, err);
    if (st) return st;
    size_t n = (size_t)width * height;
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) img->rgbd[i * 4 + c] = (float)rgba[i * 4 + c] / 255.0f;
        img->rgbd[i * 4 + 3] = has_alpha ? (float)rgba[i * 4 + 3] / 255.0f : 1.0f;
    }
    return NPK_OK;
}

static uint32_t isqrt(uint64_t v)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > v) bit >>= 2;
    while (bit) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return (uint32_t)r;
}

/* Integer arithmetic only, so every platform draws the same bytes. */
npk_status npk_cnn2_pattern(uint32_t width, uint32_t height, uint64_t seed, bool with_alpha,
                            uint8_t **out, npk_error *err)
{
    *out = NULL;
    if (width == 0 || height == 0 || width > NPK_CNN2_MAX_SIDE || height > NPK_CNN2_MAX_SIDE ||
        (uint64_t)width * height > NPK_CNN2_MAX_PIXELS)
        return npk_fail(err, NPK_E_LIMIT, "pattern %ux%u is outside 1..%u per side, %u pixels",
                        width, height, NPK_CNN2_MAX_SIDE, NPK_CNN2_MAX_PIXELS);
    uint8_t *p = malloc((size_t)width * height * 4);
    if (!p) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    s ^= s >> 29;
    uint32_t phase = (uint32_t)(s % 32), cell = 4 + (uint32_t)((s >> 8) % 13);
    uint64_t wx = width > 1 ? width - 1 : 1, hy = height > 1 ? height - 1 : 1;
    for (uint32_t y = 0; y < height; y++)
        for (uint32_t x = 0; x < width; x++) {
            uint8_t *q = p + ((size_t)y * width + x) * 4;
            int64_t dx = 2 * (int64_t)x + 1 - width, dy = 2 * (int64_t)y + 1 - height;
            uint32_t ring = (isqrt((uint64_t)(dx * dx + dy * dy)) + phase) % 32;
            int g = (int)((uint64_t)y * 255 / hy);
            g += ((x / cell + y / cell) & 1) ? 24 : -24;
            q[0] = (uint8_t)((uint64_t)x * 255 / wx);
            q[1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
            q[2] = (uint8_t)(ring * 8);
            q[3] = with_alpha ? (uint8_t)(((uint64_t)x + y) * 255 / (wx + hy)) : 255;
        }
    *out = p;
    return NPK_OK;
}
