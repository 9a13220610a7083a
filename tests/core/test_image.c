/* Pictures: the fixture cat.bmp against its raw pixel rows, BMP/PNG/JPEG
 * written here (by hand, libspng and stb_image_write) in every layout the
 * decoders take, broken files with their offsets, the bilinear resize
 * against hand-computed values and a float model, and the conversion to
 * model inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/image.h"

#ifdef NPK_HAVE_SPNG
#include <spng.h>
#endif
#ifdef NPK_HAVE_STB
#include <stb/stb_image_write.h>
#endif

/* A test pattern: smooth in x and y, different per channel. */
static uint8_t pattern(uint32_t x, uint32_t y, int c)
{
    return (uint8_t)(c == 0 ? x * 7 + y : c == 1 ? y * 5 + 3 * x : 255 - x * 2 - y * 3);
}

#ifdef NPK_HAVE_STB
static void assert_pattern(const npk_image *img, uint32_t w, uint32_t h, int tol)
{
    assert_int_equal(img->width, w);
    assert_int_equal(img->height, h);
    int worst = 0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                int d = abs((int)img->rgb[(y * w + x) * 3 + c] - (int)pattern(x, y, c));
                if (d > worst) worst = d;
            }
    if (worst > tol) fail_msg("decoded pixels differ by up to %d (tolerance %d)", worst, tol);
}
#endif

static npk_status decode(const uint8_t *buf, size_t len, npk_image *img, npk_error *err)
{
    npk_error_clear(err);
    return npk_image_decode(buf, len, img, err);
}

/* ---- BMP written by hand ---- */

/* bpp 24 or 32 (BI_RGB, or BI_BITFIELDS with a 40-byte header), 8 (palette
 * of 256 greys: only the red value of the pattern); top-down when td. */
static uint8_t *make_bmp(uint32_t w, uint32_t h, int bpp, int td, int bitfields, size_t *len)
{
    uint32_t hsz = 40, pal = bpp == 8 ? 1024 : 0, masks = bitfields ? 12 : 0;
    uint32_t stride = (w * (uint32_t)bpp + 31) / 32 * 4, off = 14 + hsz + masks + pal;
    *len = off + (size_t)stride * h;
    uint8_t *b = calloc(1, *len);
    b[0] = 'B';
    b[1] = 'M';
    npk_st32le(b + 2, (uint32_t)*len);
    npk_st32le(b + 10, off);
    npk_st32le(b + 14, hsz);
    npk_st32le(b + 18, w);
    npk_st32le(b + 22, td ? (uint32_t) - (int32_t)h : h);
    npk_st16le(b + 26, 1);
    npk_st16le(b + 28, (uint16_t)bpp);
    npk_st32le(b + 30, bitfields ? 3 : 0);
    if (bitfields) { /* R, G, B masks of 32-bit pixels stored as B G R X */
        npk_st32le(b + 54, 0x00ff0000);
        npk_st32le(b + 58, 0x0000ff00);
        npk_st32le(b + 62, 0x000000ff);
    }
    for (uint32_t i = 0; i < pal / 4; i++) memset(b + 14 + hsz + masks + i * 4, (int)i, 3);
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *row = b + off + (size_t)stride * (td ? y : h - 1 - y);
        for (uint32_t x = 0; x < w; x++) {
            if (bpp == 8) {
                row[x] = pattern(x, y, 0);
                continue;
            }
            uint8_t *p = row + x * (uint32_t)bpp / 8;
            p[0] = pattern(x, y, 2);
            p[1] = pattern(x, y, 1);
            p[2] = pattern(x, y, 0);
        }
    }
    return b;
}

static void test_cat_bmp(void **state)
{
    (void)state;
    npk_mapped m;
    npk_fixture_map("models/cat.bmp", &m);
    npk_image img;
    npk_error err = {0};
#ifndef NPK_HAVE_STB
    assert_int_equal(npk_image_decode(m.data, m.size, &img, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "libstb"));
    npk_unmap_file(&m);
    skip();
#else
    assert_int_equal(npk_image_detect(m.data, m.size), NPK_IMAGE_BMP);
    if (npk_image_decode(m.data, m.size, &img, &err)) fail_msg("%s", err.msg);
    assert_int_equal(img.width, 512);
    assert_int_equal(img.height, 341);
    /* The file's own rows: 24-bit BGR, bottom-up, from the data offset. */
    uint32_t off = npk_ld32le(m.data + 10);
    for (uint32_t y = 0; y < 341; y++)
        for (uint32_t x = 0; x < 512; x++)
            for (int c = 0; c < 3; c++)
                if (img.rgb[(y * 512 + x) * 3 + c] !=
                    m.data[off + (340 - y) * 1536 + x * 3 + (2 - c)])
                    fail_msg("cat.bmp pixel (%u, %u) channel %d differs", x, y, c);
    npk_image_free(&img);
    npk_unmap_file(&m);
#endif
}

static void test_bmp_layouts(void **state)
{
    (void)state;
    const struct {
        int bpp, td, bitfields;
    } cases[] = {{24, 0, 0}, {24, 1, 0}, {32, 0, 0}, {32, 1, 1}, {8, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        uint8_t *b = make_bmp(13, 7, cases[i].bpp, cases[i].td, cases[i].bitfields, &len);
        npk_image img;
        npk_error err = {0};
        npk_status st = decode(b, len, &img, &err);
#ifdef NPK_HAVE_STB
        if (st) fail_msg("case %zu: %s", i, err.msg);
        if (cases[i].bpp == 8) { /* grey palette: R = G = B = the red pattern */
            for (uint32_t k = 0; k < 13 * 7; k++)
                for (int c = 0; c < 3; c++)
                    assert_int_equal(img.rgb[k * 3 + c], pattern(k % 13, k / 13, 0));
        } else {
            assert_pattern(&img, 13, 7, 0);
        }
        npk_image_free(&img);
#else
        assert_int_equal(st, NPK_E_UNSUPPORTED);
#endif
        free(b);
    }
}

static void expect_error(const uint8_t *b, size_t len, npk_status want, uint64_t off,
                         const char *words)
{
    npk_image img;
    npk_error err = {0};
    npk_status st = decode(b, len, &img, &err);
    if (st != want)
        fail_msg("status %s (%s), expected %s", npk_status_name(st), err.msg,
                 npk_status_name(want));
    assert_null(img.rgb);
    if (off != UINT64_MAX) {
        assert_true(err.has_offset);
        if (err.offset != off)
            fail_msg("offset 0x%llx, expected 0x%llx (%s)", (unsigned long long)err.offset,
                     (unsigned long long)off, err.msg);
    }
    if (words && !strstr(err.msg, words)) fail_msg("message \"%s\" lacks \"%s\"", err.msg, words);
}

static void test_bmp_broken(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = make_bmp(13, 7, 24, 0, 0, &len);
    /* Cut inside the pixel rows: an error at the end, not black pixels. */
    expect_error(b, len - 1, NPK_E_FORMAT, len - 1, "ends early");
    expect_error(b, 20, NPK_E_FORMAT, 20, "info header");
    expect_error(b, 10, NPK_E_FORMAT, 10, "file header");
    uint8_t *c = malloc(len);
    memcpy(c, b, len);
    npk_st32le(c + 14, 64); /* OS/2 2.x header size */
    expect_error(c, len, NPK_E_UNSUPPORTED, 14, "info header");
    memcpy(c, b, len);
    npk_st32le(c + 30, 1); /* RLE8 */
    expect_error(c, len, NPK_E_UNSUPPORTED, 30, "compression");
    memcpy(c, b, len);
    npk_st16le(c + 28, 2);
    expect_error(c, len, NPK_E_UNSUPPORTED, 28, "bits per pixel");
    memcpy(c, b, len);
    npk_st32le(c + 18, 100000); /* width over the limit */
    expect_error(c, len, NPK_E_LIMIT, 18, "limit");
    memcpy(c, b, len);
    npk_st32le(c + 22, 0x80000000u); /* height INT32_MIN */
    expect_error(c, len, NPK_E_LIMIT, 18, "limit");
    memcpy(c, b, len);
    npk_st32le(c + 18, 0);
    expect_error(c, len, NPK_E_FORMAT, 18, "empty");
    memcpy(c, b, len);
    npk_st32le(c + 10, (uint32_t)len + 5); /* data offset past the end */
    expect_error(c, len, NPK_E_FORMAT, 10, "offset");
    memcpy(c, b, len);
    npk_st16le(c + 26, 3);
    expect_error(c, len, NPK_E_FORMAT, 26, "planes");
    free(c);
    free(b);
    const uint8_t junk[] = "GIF89a....";
    expect_error(junk, sizeof junk, NPK_E_FORMAT, 0, "not a BMP, PNG or JPEG");
    expect_error(junk, 0, NPK_E_FORMAT, 0, NULL);
}

/* ---- PNG written with libspng ---- */

#ifdef NPK_HAVE_SPNG
static uint8_t *make_png(uint32_t w, uint32_t h, uint8_t color_type, uint8_t depth, const void *pix,
                         size_t size, struct spng_plte *plte, size_t *len)
{
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    struct spng_ihdr ihdr = {w, h, depth, color_type, 0, 0, 0};
    int rc = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
    if (!rc) rc = spng_set_ihdr(ctx, &ihdr);
    if (!rc && plte) rc = spng_set_plte(ctx, plte);
    if (!rc) rc = spng_encode_image(ctx, pix, size, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
    if (rc) fail_msg("test PNG encoding: %s", spng_strerror(rc));
    uint8_t *out = spng_get_png_buffer(ctx, len, &rc);
    spng_ctx_free(ctx);
    return out;
}
#endif

static void test_png(void **state)
{
    (void)state;
#ifndef NPK_HAVE_SPNG
    const uint8_t sig[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0};
    npk_image img;
    npk_error err = {0};
    assert_int_equal(npk_image_decode(sig, sizeof sig, &img, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "libspng"));
    skip();
#else
    enum { W = 11, H = 6 };
    uint8_t rgb[W * H * 3], rgba[W * H * 4], grey[W * H], idx[W * H];
    uint16_t rgb16[W * H * 3], grey16[W * H]; /* libspng takes host-order samples */
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            uint32_t k = y * W + x;
            for (int c = 0; c < 3; c++) {
                rgb[k * 3 + c] = rgba[k * 4 + c] = pattern(x, y, c);
                /* 16-bit samples: high byte the pattern, low byte below 0x80 (so
                 * truncating and rounding to 8 bits agree) */
                rgb16[k * 3 + c] =
                    (uint16_t)(pattern(x, y, c) << 8 | ((k * 37 + (uint32_t)c) & 0x7f));
            }
            rgba[k * 4 + 3] = (uint8_t)(k * 3); /* alpha: dropped */
            grey[k] = pattern(x, y, 0);
            grey16[k] = (uint16_t)(pattern(x, y, 0) << 8 | 0x11);
            idx[k] = (uint8_t)(k % 4);
        }
    struct spng_plte plte = {.n_entries = 4};
    for (int i = 0; i < 4; i++) {
        plte.entries[i].red = (uint8_t)(i * 60);
        plte.entries[i].green = (uint8_t)(i * 10 + 1);
        plte.entries[i].blue = (uint8_t)(250 - i);
    }
    const struct {
        uint8_t ct, depth;
        const void *pix;
        size_t size;
    } cases[] = {
        {SPNG_COLOR_TYPE_TRUECOLOR, 8, rgb, sizeof rgb},
        {SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, 8, rgba, sizeof rgba},
        {SPNG_COLOR_TYPE_TRUECOLOR, 16, rgb16, sizeof rgb16},
        {SPNG_COLOR_TYPE_GRAYSCALE, 8, grey, sizeof grey},
        {SPNG_COLOR_TYPE_GRAYSCALE, 16, grey16, sizeof grey16},
        {SPNG_COLOR_TYPE_INDEXED, 8, idx, sizeof idx},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        uint8_t *png = make_png(W, H, cases[i].ct, cases[i].depth, cases[i].pix, cases[i].size,
                                cases[i].ct == SPNG_COLOR_TYPE_INDEXED ? &plte : NULL, &len);
        npk_image img;
        npk_error err = {0};
        assert_int_equal(npk_image_detect(png, len), NPK_IMAGE_PNG);
        if (decode(png, len, &img, &err)) fail_msg("case %zu: %s", i, err.msg);
        assert_int_equal(img.width, W);
        assert_int_equal(img.height, H);
        for (uint32_t k = 0; k < W * H; k++)
            for (int c = 0; c < 3; c++) {
                uint8_t want;
                if (cases[i].ct == SPNG_COLOR_TYPE_GRAYSCALE)
                    want = grey[k];
                else if (cases[i].ct == SPNG_COLOR_TYPE_INDEXED)
                    want = c == 0   ? plte.entries[k % 4].red
                           : c == 1 ? plte.entries[k % 4].green
                                    : plte.entries[k % 4].blue;
                else
                    want = rgb[k * 3 + c];
                if (img.rgb[k * 3 + c] != want)
                    fail_msg("case %zu: pixel %u channel %d is %u, expected %u", i, k, c,
                             img.rgb[k * 3 + c], want);
            }
        npk_image_free(&img);
        if (i == 0) { /* broken copies of the first one */
            expect_error(png, len - 1, NPK_E_FORMAT, UINT64_MAX, NULL); /* cut IEND */
            expect_error(png, 30, NPK_E_FORMAT, UINT64_MAX, NULL);
            uint8_t *c = malloc(len);
            memcpy(c, png, len);
            npk_st32be(c + 16, 20000); /* IHDR width over the limit, CRC fixed below */
            uint32_t crc = 0xffffffffu;
            for (int k = 12; k < 29; k++) { /* CRC-32 of "IHDR" + 13 data bytes */
                crc ^= c[k];
                for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
            }
            npk_st32be(c + 29, ~crc);
            npk_image img2;
            npk_error err2 = {0};
            npk_status st = npk_image_decode(c, len, &img2, &err2);
            assert_true(st == NPK_E_LIMIT || st == NPK_E_FORMAT);
            assert_true(err2.has_offset);
            free(c);
        }
        free(png);
    }
#endif
}

/* ---- JPEG written with stb_image_write ---- */

#ifdef NPK_HAVE_STB
typedef struct membuf {
    uint8_t *p;
    size_t n;
} membuf;

static void mem_write(void *ctx, void *data, int size)
{
    membuf *m = ctx;
    m->p = realloc(m->p, m->n + (size_t)size);
    memcpy(m->p + m->n, data, (size_t)size);
    m->n += (size_t)size;
}
#endif

static void test_jpeg(void **state)
{
    (void)state;
#ifndef NPK_HAVE_STB
    const uint8_t soi[] = {0xff, 0xd8, 0xff, 0xd9};
    npk_image img;
    npk_error err = {0};
    assert_int_equal(npk_image_decode(soi, sizeof soi, &img, &err), NPK_E_FORMAT);
    skip();
#else
    enum { W = 40, H = 24 };
    uint8_t rgb[W * H * 3], grey[W * H];
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            for (int c = 0; c < 3; c++) rgb[(y * W + x) * 3 + c] = pattern(x, y, c);
            grey[y * W + x] = pattern(x, y, 0);
        }
    membuf j = {0}, g = {0};
    assert_true(stbi_write_jpg_to_func(mem_write, &j, W, H, 3, rgb, 100));
    assert_true(stbi_write_jpg_to_func(mem_write, &g, W, H, 1, grey, 100));
    npk_image img;
    npk_error err = {0};
    assert_int_equal(npk_image_detect(j.p, j.n), NPK_IMAGE_JPEG);
    if (decode(j.p, j.n, &img, &err)) fail_msg("%s", err.msg);
    /* Lossy at quality 100 with 4:4:4 sampling: a few levels off at most. */
    assert_pattern(&img, W, H, 6);
    npk_image_free(&img);
    if (decode(g.p, g.n, &img, &err)) fail_msg("%s", err.msg);
    for (uint32_t k = 0; k < W * H; k++) {
        assert_int_equal(img.rgb[k * 3], img.rgb[k * 3 + 1]);
        assert_int_equal(img.rgb[k * 3], img.rgb[k * 3 + 2]);
        assert_true(abs((int)img.rgb[k * 3] - (int)grey[k]) <= 6);
    }
    npk_image_free(&img);

    /* Cut in the scan data: no end-of-image marker. */
    expect_error(j.p, j.n - 2, NPK_E_FORMAT, j.n - 2, "end-of-image");
    /* Cut inside the headers. */
    expect_error(j.p, 30, NPK_E_FORMAT, UINT64_MAX, NULL);
    /* A segment length past the end: the offset of that length. */
    uint8_t *c = malloc(j.n);
    memcpy(c, j.p, j.n);
    assert_int_equal(c[2], 0xff);
    npk_st16le(c + 4, 0xffff); /* first segment (APP0 or DQT) length */
    expect_error(c, j.n, NPK_E_FORMAT, 4, "runs past the end");
    /* A frame size over the limit, at the offset of the height. */
    memcpy(c, j.p, j.n);
    size_t sof = 0;
    for (size_t i = 2; i + 1 < j.n; i++)
        if (c[i] == 0xff && c[i + 1] == 0xc0) {
            sof = i;
            break;
        }
    assert_true(sof > 0);
    c[sof + 5] = 0xff; /* height 0xff?? */
    c[sof + 7] = 0xff; /* width 0xff?? */
    expect_error(c, j.n, NPK_E_LIMIT, sof + 5, "limit");
    c[sof + 5] = c[sof + 6] = 0;
    expect_error(c, j.n, NPK_E_FORMAT, sof + 5, "empty");
    /* Garbage in place of the second marker. */
    memcpy(c, j.p, j.n);
    size_t second = 4 + npk_ld16be(c + 4);
    c[second] = 0x12;
    expect_error(c, j.n, NPK_E_FORMAT, second, "expected a marker");
    free(c);
    free(j.p);
    free(g.p);
#endif
}

/* ---- resize ---- */

static void test_resize_values(void **state)
{
    (void)state;
    npk_image src, dst;
    npk_error err = {0};
    /* 2x1 -> 4x1: half-pixel source positions -0.25, 0.25, 0.75, 1.25. */
    assert_int_equal(npk_image_alloc(&src, 2, 1, &err), NPK_OK);
    memset(src.rgb, 0, 3);
    memset(src.rgb + 3, 100, 3);
    assert_int_equal(npk_image_resize(&src, 4, 1, &dst, &err), NPK_OK);
    const uint8_t want[4] = {0, 25, 75, 100};
    for (int x = 0; x < 4; x++) assert_int_equal(dst.rgb[x * 3 + 1], want[x]);
    npk_image_free(&dst);
    /* 2x1 -> 1x1: position 0.5, the mean rounded half up: (0 + 100) / 2. */
    assert_int_equal(npk_image_resize(&src, 1, 1, &dst, &err), NPK_OK);
    assert_int_equal(dst.rgb[0], 50);
    npk_image_free(&dst);
    /* 3 -> 2: scale 1.5 (1536/1024), positions 0.25 and 1.75 of {0, 10, 201}. */
    npk_image_free(&src);
    assert_int_equal(npk_image_alloc(&src, 3, 1, &err), NPK_OK);
    const uint8_t v3[3] = {0, 10, 201};
    for (int x = 0; x < 3; x++) memset(src.rgb + x * 3, v3[x], 3);
    assert_int_equal(npk_image_resize(&src, 2, 1, &dst, &err), NPK_OK);
    assert_int_equal(dst.rgb[0], 3);   /* 0.75 * 0 + 0.25 * 10 = 2.5 -> 3 */
    assert_int_equal(dst.rgb[3], 153); /* 0.25 * 10 + 0.75 * 201 = 153.25 */
    npk_image_free(&dst);
    npk_image_free(&src);
    /* Errors. */
    npk_image empty = {0};
    assert_int_equal(npk_image_resize(&empty, 4, 4, &dst, &err), NPK_E_ARG);
    assert_int_equal(npk_image_alloc(&src, 2, 2, &err), NPK_OK);
    npk_error_clear(&err);
    assert_int_equal(npk_image_resize(&src, 0, 4, &dst, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_image_resize(&src, 20000, 4, &dst, &err), NPK_E_LIMIT);
    npk_image_free(&src);
}

/* Against half-pixel bilinear interpolation in double precision. TFLite's
 * definition rounds the scale in/out to 1/1024 (so a 3 -> 50 upscale drifts
 * by up to 0.02 pixel, several levels on a noisy picture): with that scale
 * the double model gives the same dyadic values and the same rounding, so
 * the results must be identical; with the true scale they are identical
 * too when the scale is a whole number of 1/1024ths. */
static int resize_diff(const npk_image *src, const npk_image *dst, int true_scale)
{
    uint32_t sw = src->width, sh = src->height, dw = dst->width, dh = dst->height;
    /* TFLite: position = (i * s + s / 2 - 512) / 1024 with s = round(1024 in / out)
     * and s / 2 an integer division. */
    int64_t s10y = (1024 * (int64_t)sh + dh / 2) / dh, s10x = (1024 * (int64_t)sw + dw / 2) / dw;
    int worst = 0;
    for (uint32_t y = 0; y < dh; y++)
        for (uint32_t x = 0; x < dw; x++) {
            double fy = true_scale ? (y + 0.5) * sh / dh - 0.5
                                   : (double)((int64_t)y * s10y + s10y / 2 - 512) / 1024;
            double fx = true_scale ? (x + 0.5) * sw / dw - 0.5
                                   : (double)((int64_t)x * s10x + s10x / 2 - 512) / 1024;
            if (fy < 0) fy = 0;
            if (fx < 0) fx = 0;
            uint32_t y0 = (uint32_t)fy, x0 = (uint32_t)fx;
            uint32_t y1 = y0 + 1 < sh ? y0 + 1 : sh - 1, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
            double wy = fy - y0, wx = fx - x0;
            for (int c = 0; c < 3; c++) {
#define PX(yy, xx) src->rgb[((size_t)(yy)*sw + (xx)) * 3 + c]
                double v = PX(y0, x0) * (1 - wy) * (1 - wx) + PX(y1, x0) * wy * (1 - wx) +
                           PX(y0, x1) * (1 - wy) * wx + PX(y1, x1) * wy * wx;
#undef PX
                int d = abs((int)dst->rgb[((size_t)y * dw + x) * 3 + c] - (int)lround(v));
                if (d > worst) worst = d;
            }
        }
    return worst;
}

static void test_resize_model(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    const uint32_t sizes[][5] = {/* sw, sh, dw, dh, scale exact in 1/1024ths */
                                 {17, 9, 5, 4, 0},    {5, 4, 17, 9, 0},       {64, 48, 32, 24, 1},
                                 {31, 29, 31, 29, 1}, {100, 3, 7, 50, 0},     {1, 1, 6, 5, 0},
                                 {8, 6, 32, 48, 1},   {512, 341, 160, 160, 0}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        npk_image src, dst;
        npk_error err = {0};
        assert_int_equal(npk_image_alloc(&src, sizes[s][0], sizes[s][1], &err), NPK_OK);
        for (size_t i = 0; i < (size_t)src.width * src.height * 3; i++)
            src.rgb[i] = (uint8_t)npk_rand(&seed);
        assert_int_equal(npk_image_resize(&src, sizes[s][2], sizes[s][3], &dst, &err), NPK_OK);
        int d = resize_diff(&src, &dst, 0);
        if (d)
            fail_msg("%ux%u -> %ux%u: off by %d from the model with TFLite's scale", src.width,
                     src.height, dst.width, dst.height, d);
        if (sizes[s][4] && (d = resize_diff(&src, &dst, 1)))
            fail_msg("%ux%u -> %ux%u: off by %d from the exact-scale model", src.width, src.height,
                     dst.width, dst.height, d);
        npk_image_free(&src);
        npk_image_free(&dst);
    }
}

/* ---- conversion to a model input ---- */

static void test_to_tensor(void **state)
{
    (void)state;
    npk_image img;
    npk_error err = {0};
    assert_int_equal(npk_image_alloc(&img, 4, 2, &err), NPK_OK);
    for (uint32_t k = 0; k < 8; k++) {
        img.rgb[k * 3] = (uint8_t)(k * 30);
        img.rgb[k * 3 + 1] = 255;
        img.rgb[k * 3 + 2] = 0;
    }
    npk_image_input in = {.dtype = NPK_U8, .ndim = 4, .shape = {1, 2, 4, 3}};
    npk_tensor t;
    assert_int_equal(npk_image_to_tensor(&img, &in, "input", &t, &err), NPK_OK);
    assert_string_equal(t.name, "input");
    assert_int_equal(t.nbytes, 24);
    assert_memory_equal(t.data, img.rgb, 24);
    npk_tensor_free(&t);

    in.dtype = NPK_I8;
    assert_int_equal(npk_image_to_tensor(&img, &in, NULL, &t, &err), NPK_OK);
    for (int k = 0; k < 24; k++) assert_int_equal(((int8_t *)t.data)[k], (int)img.rgb[k] - 128);
    npk_tensor_free(&t);

    in.dtype = NPK_F32;
    const npk_image_range ranges[] = {NPK_IMAGE_RANGE_UNIT, NPK_IMAGE_RANGE_SIGNED,
                                      NPK_IMAGE_RANGE_PIXEL};
    const float lo[] = {0, -1, 0}, hi[] = {1, 1, 255};
    for (int r = 0; r < 3; r++) {
        in.range = ranges[r];
        assert_int_equal(npk_image_to_tensor(&img, &in, NULL, &t, &err), NPK_OK);
        const float *f = t.data;
        assert_float_equal(f[1], hi[r], 1e-6); /* green 255 */
        assert_float_equal(f[2], lo[r], 1e-6); /* blue 0 */
        npk_tensor_free(&t);
    }
    in.has_quant = true; /* float input carrying a quantisation: scale * (p - zp) */
    in.scale = 0.5f;
    in.zero_point = 10;
    assert_int_equal(npk_image_to_tensor(&img, &in, NULL, &t, &err), NPK_OK);
    assert_float_equal(((float *)t.data)[3], 0.5f * (30 - 10), 1e-6);
    npk_tensor_free(&t);

    /* Grey input, 3-dimensional, resized 4x2 -> 2x1. */
    npk_image_input g = {.dtype = NPK_U8, .ndim = 3, .shape = {1, 2, 1}};
    assert_int_equal(npk_image_to_tensor(&img, &g, NULL, &t, &err), NPK_OK);
    assert_int_equal(t.nbytes, 2);
    npk_image half;
    assert_int_equal(npk_image_resize(&img, 2, 1, &half, &err), NPK_OK);
    for (int k = 0; k < 2; k++) {
        const uint8_t *p = half.rgb + k * 3;
        assert_int_equal(((uint8_t *)t.data)[k], (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8);
    }
    npk_image_free(&half);
    npk_tensor_free(&t);

    /* Refused inputs. */
    npk_image_input bad = in;
    bad.dtype = NPK_I32;
    assert_int_equal(npk_image_to_tensor(&img, &bad, NULL, &t, &err), NPK_E_UNSUPPORTED);
    bad = in;
    bad.shape[3] = 4;
    assert_int_equal(npk_image_to_tensor(&img, &bad, NULL, &t, &err), NPK_E_UNSUPPORTED);
    bad = in;
    bad.shape[0] = 2;
    assert_int_equal(npk_image_to_tensor(&img, &bad, NULL, &t, &err), NPK_E_UNSUPPORTED);
    bad = in;
    bad.scale = 0;
    assert_int_equal(npk_image_to_tensor(&img, &bad, NULL, &t, &err), NPK_E_ARG);
    npk_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cat_bmp),      cmocka_unit_test(test_bmp_layouts),
        cmocka_unit_test(test_bmp_broken),   cmocka_unit_test(test_png),
        cmocka_unit_test(test_jpeg),         cmocka_unit_test(test_resize_values),
        cmocka_unit_test(test_resize_model), cmocka_unit_test(test_to_tensor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
