/* PNG input and output of the renderer: every colour type and bit depth
 * (written here with libspng directly), transparency, depth images and
 * broken files. */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/cnn2_render.h"

#ifdef NPK_HAVE_SPNG
#include <spng.h>

typedef struct png_spec {
    uint8_t color_type, bit_depth;
    const void *pixels;
    size_t size;
    const struct spng_plte *plte;
    const struct spng_trns *trns;
} png_spec;

static uint8_t *make_png(uint32_t w, uint32_t h, const png_spec *p, size_t *len)
{
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    struct spng_ihdr ihdr = {w, h, p->bit_depth, p->color_type, 0, 0, 0};
    int rc = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
    if (!rc) rc = spng_set_ihdr(ctx, &ihdr);
    if (!rc && p->plte) rc = spng_set_plte(ctx, (struct spng_plte *)p->plte);
    if (!rc && p->trns) rc = spng_set_trns(ctx, (struct spng_trns *)p->trns);
    if (!rc) rc = spng_encode_image(ctx, p->pixels, p->size, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
    if (rc) fail_msg("test PNG encoding: %s", spng_strerror(rc));
    uint8_t *buf = spng_get_png_buffer(ctx, len, &rc);
    spng_ctx_free(ctx);
    return buf;
}

static void decode_ok(const uint8_t *png, size_t len, npk_cnn2_image *img)
{
    npk_error err = {0};
    if (npk_cnn2_png_decode(png, len, img, &err)) fail_msg("decode: %s", err.msg);
}

static void expect_px(const npk_cnn2_image *img, size_t i, float r, float g, float b, float d)
{
    const float *p = img->rgbd + i * 4;
    if (p[0] != r || p[1] != g || p[2] != b || p[3] != d)
        fail_msg("pixel %zu: (%g %g %g %g), want (%g %g %g %g)", i, p[0], p[1], p[2], p[3], r, g, b,
                 d);
}

static void test_rgb_rgba_8(void **state)
{
    (void)state;
    uint8_t rgba[2 * 4] = {255, 0, 51, 128, 1, 2, 3, 0};
    size_t len;
    uint8_t *png;
    npk_error err = {0};
    assert_int_equal(npk_cnn2_png_encode(rgba, 2, 1, 4, &png, &len, &err), NPK_OK);
    npk_cnn2_image img;
    decode_ok(png, len, &img);
    assert_int_equal(img.width, 2);
    assert_int_equal(img.height, 1);
    expect_px(&img, 0, 1.0f, 0.0f, 51 / 255.0f, 128 / 255.0f);
    expect_px(&img, 1, 1 / 255.0f, 2 / 255.0f, 3 / 255.0f, 0.0f);
    npk_cnn2_image_free(&img);
    free(png);
    uint8_t rgb[2 * 3] = {10, 20, 30, 40, 50, 60};
    assert_int_equal(npk_cnn2_png_encode(rgb, 1, 2, 3, &png, &len, &err), NPK_OK);
    decode_ok(png, len, &img);
    expect_px(&img, 1, 40 / 255.0f, 50 / 255.0f, 60 / 255.0f, 1.0f); /* no alpha: D = 1 */
    npk_cnn2_image_free(&img);
    free(png);
    assert_int_equal(npk_cnn2_png_encode(rgb, 1, 2, 2, &png, &len, &err), NPK_E_ARG);
}

static void test_grey_and_16bit(void **state)
{
    (void)state;
    size_t len;
    npk_cnn2_image img;
    uint8_t grey[3] = {0, 128, 255};
    png_spec g8 = {SPNG_COLOR_TYPE_GRAYSCALE, 8, grey, 3, NULL, NULL};
    uint8_t *png = make_png(3, 1, &g8, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 1, 128 / 255.0f, 128 / 255.0f, 128 / 255.0f, 1.0f);
    npk_cnn2_image_free(&img);
    free(png);

    uint8_t ga[4] = {200, 100, 7, 255};
    png_spec ga8 = {SPNG_COLOR_TYPE_GRAYSCALE_ALPHA, 8, ga, 4, NULL, NULL};
    png = make_png(2, 1, &ga8, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 0, 200 / 255.0f, 200 / 255.0f, 200 / 255.0f, 100 / 255.0f);
    expect_px(&img, 1, 7 / 255.0f, 7 / 255.0f, 7 / 255.0f, 1.0f);
    npk_cnn2_image_free(&img);
    free(png);

    uint16_t rgba16[4] = {65535, 0, 32768, 1};
    png_spec r16 = {SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, 16, rgba16, 8, NULL, NULL};
    png = make_png(1, 1, &r16, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 0, 1.0f, 0.0f, 32768 / 65535.0f, 1 / 65535.0f);
    npk_cnn2_image_free(&img);
    free(png);

    uint16_t g16[2] = {1000, 65535};
    png_spec gg16 = {SPNG_COLOR_TYPE_GRAYSCALE, 16, g16, 4, NULL, NULL};
    png = make_png(2, 1, &gg16, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 0, 1000 / 65535.0f, 1000 / 65535.0f, 1000 / 65535.0f, 1.0f);
    npk_cnn2_image_free(&img);
    free(png);

    /* 1-bit greyscale: libspng scales to 8 bits (0 -> 0, 1 -> 255). */
    uint8_t bits[1] = {0x40}; /* 0 1 0 0 ... */
    png_spec g1 = {SPNG_COLOR_TYPE_GRAYSCALE, 1, bits, 1, NULL, NULL};
    png = make_png(3, 1, &g1, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 0, 0.0f, 0.0f, 0.0f, 1.0f);
    expect_px(&img, 1, 1.0f, 1.0f, 1.0f, 1.0f);
    npk_cnn2_image_free(&img);
    free(png);
}

static void test_palette_and_trns(void **state)
{
    (void)state;
    size_t len;
    npk_cnn2_image img;
    struct spng_plte plte = {0};
    plte.n_entries = 2;
    plte.entries[0] = (struct spng_plte_entry){255, 0, 0, 0};
    plte.entries[1] = (struct spng_plte_entry){0, 0, 255, 0};
    struct spng_trns trns = {0};
    trns.n_type3_entries = 1;
    trns.type3_alpha[0] = 51; /* entry 0 partly transparent, entry 1 opaque */
    uint8_t idx[2] = {0, 1};
    png_spec p8 = {SPNG_COLOR_TYPE_INDEXED, 8, idx, 2, &plte, &trns};
    uint8_t *png = make_png(2, 1, &p8, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 0, 1.0f, 0.0f, 0.0f, 51 / 255.0f);
    expect_px(&img, 1, 0.0f, 0.0f, 1.0f, 1.0f);
    npk_cnn2_image_free(&img);
    free(png);

    /* Truecolour with a tRNS colour key: that colour gets alpha 0. */
    struct spng_trns key = {0};
    key.red = 1;
    key.green = 2;
    key.blue = 3;
    uint8_t rgb[6] = {1, 2, 3, 4, 5, 6};
    png_spec k8 = {SPNG_COLOR_TYPE_TRUECOLOR, 8, rgb, 6, NULL, &key};
    png = make_png(2, 1, &k8, &len);
    decode_ok(png, len, &img);
    expect_px(&img, 0, 1 / 255.0f, 2 / 255.0f, 3 / 255.0f, 0.0f);
    expect_px(&img, 1, 4 / 255.0f, 5 / 255.0f, 6 / 255.0f, 1.0f);
    npk_cnn2_image_free(&img);
    free(png);
}

static void test_depth(void **state)
{
    (void)state;
    size_t len, dlen;
    uint8_t rgba[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t *png, *dpng;
    npk_error err = {0};
    assert_int_equal(npk_cnn2_png_encode(rgba, 2, 1, 4, &png, &len, &err), NPK_OK);
    uint8_t depth[2] = {0, 204};
    png_spec g8 = {SPNG_COLOR_TYPE_GRAYSCALE, 8, depth, 2, NULL, NULL};
    dpng = make_png(2, 1, &g8, &dlen);
    npk_cnn2_image img;
    decode_ok(png, len, &img);
    assert_int_equal(npk_cnn2_png_depth(&img, dpng, dlen, &err), NPK_OK);
    expect_px(&img, 0, 1 / 255.0f, 2 / 255.0f, 3 / 255.0f, 0.0f); /* depth overrides alpha */
    expect_px(&img, 1, 5 / 255.0f, 6 / 255.0f, 7 / 255.0f, 204 / 255.0f);
    free(dpng);
    /* A depth image of another size is refused and leaves D alone. */
    png_spec g2 = {SPNG_COLOR_TYPE_GRAYSCALE, 8, depth, 2, NULL, NULL};
    dpng = make_png(1, 2, &g2, &dlen);
    assert_int_equal(npk_cnn2_png_depth(&img, dpng, dlen, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "1x2"));
    expect_px(&img, 1, 5 / 255.0f, 6 / 255.0f, 7 / 255.0f, 204 / 255.0f);
    npk_cnn2_image_free(&img);
    free(dpng);
    free(png);
}

static void test_broken(void **state)
{
    (void)state;
    uint8_t rgba[16 * 16 * 4];
    for (size_t i = 0; i < sizeof rgba; i++) rgba[i] = (uint8_t)(i * 7);
    size_t len;
    uint8_t *png;
    npk_error err = {0};
    assert_int_equal(npk_cnn2_png_encode(rgba, 16, 16, 4, &png, &len, &err), NPK_OK);
    npk_cnn2_image img;
    /* Every truncation fails cleanly (no crash, no image), up to a missing
     * IEND CRC (the last 4 bytes), which libspng tolerates: the image and
     * every chunk before it are complete then. */
    for (size_t n = 0; n < len - 4; n++) {
        npk_error_clear(&err);
        npk_status st = npk_cnn2_png_decode(png, n, &img, &err);
        if (st == NPK_OK) fail_msg("PNG cut to %zu of %zu bytes was accepted", n, len);
        assert_null(img.rgbd);
    }
    /* A corrupted CRC. */
    uint8_t *bad = malloc(len);
    memcpy(bad, png, len);
    bad[len - 20] ^= 0x55;
    npk_error_clear(&err);
    assert_int_not_equal(npk_cnn2_png_decode(bad, len, &img, &err), NPK_OK);
    static const uint8_t cnn2[] = "CNN2\2\0\0\0";
    npk_error_clear(&err);
    assert_int_equal(npk_cnn2_png_decode(cnn2, sizeof cnn2, &img, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "PNG"));
    free(bad);
    free(png);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rgb_rgba_8),       cmocka_unit_test(test_grey_and_16bit),
        cmocka_unit_test(test_palette_and_trns), cmocka_unit_test(test_depth),
        cmocka_unit_test(test_broken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_no_png(void **state)
{
    (void)state;
    npk_cnn2_image img;
    npk_error err = {0};
    assert_false(npk_cnn2_png_available());
    assert_int_equal(npk_cnn2_png_decode((const uint8_t *)"x", 1, &img, &err), NPK_E_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_png)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
