/* The PNG input path of `cnn2 render` (the image and --depth) with damaged
 * PNGs: cut at every chunk boundary (length, type, data, CRC) and inside
 * the signature and IHDR, with IHDR fields and chunk lengths set to extreme
 * values (with the CRC made right again, so the field itself is what the
 * decoder meets, and without), on pictures from `cnn2 pattern` and on
 * palette, greyscale, 16-bit and interlaced images written here with
 * libspng. */
#include "harden.h"
#include "npukit/cnn2_render.h"
#include "png_crc.h"

#ifdef NPK_HAVE_SPNG
#include <spng.h>
#endif

#define N(a) (sizeof a / sizeof a[0])

static const hd_cmd cmds[] = {
    {"cnn2 render @1 @IN -o @OUT/out.png --raw @OUT/raw.npy", 2, 0, 0, HD_PNG},
    {"cnn2 render @1 @2 --depth @IN -o @OUT/out.png", 2, 0, 0, HD_PNG},
};

/* A copy with one field set; the CRC of the chunk at `chunk` recomputed when fix. */
static void png_field(const char *label, const char *what, const uint8_t *buf, size_t len,
                      size_t chunk, size_t off, hd_width w, uint64_t v, int fix)
{
    uint8_t *b = malloc(len);
    memcpy(b, buf, len);
    if (hd_load(b + off, w) == v) {
        free(b);
        return;
    }
    hd_store(b + off, w, v);
    if (fix) npk_png_seal_chunk(b, len, chunk);
    char d[256];
    snprintf(d, sizeof d, "%s: %s = 0x%llx%s", label, what, (unsigned long long)v,
             fix ? " (CRC fixed)" : "");
    hd_case(d, b, len, "bad.png", cmds, N(cmds));
    free(b);
}

static void corrupt(const char *label, const char *path)
{
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    assert_true(len > 33 && !memcmp(buf + 1, "PNG", 3));
    /* @2: a valid picture of the same size, for the --depth runs. */
    uint32_t w = npk_ld32be(buf + 16), h = npk_ld32be(buf + 20);
    hd_helper[2] = npk_tmp("same.png");
    hd_make("cnn2 pattern --size %ux%u -o %s", w, h, hd_helper[2]);
    hd_case("baseline", buf, len, "bad.png", hd_succeeding(cmds, N(cmds)), N(cmds));

    hd_cuts cuts = {0};
    static const size_t head[] = {0, 1, 4, 8, 16, 20, 24, 29};
    for (size_t i = 0; i < N(head); i++) hd_cut_add(&cuts, head[i]);
    size_t at = 8, chunks[64], nch = 0;
    while (at + 12 <= len && nch < 64) {
        uint32_t n = npk_ld32be(buf + at);
        chunks[nch++] = at;
        hd_cut_add(&cuts, at);     /* length */
        hd_cut_add(&cuts, at + 4); /* type */
        hd_cut_add(&cuts, at + 8); /* data */
        hd_cut_add(&cuts, at + 8 + n / 2);
        hd_cut_add(&cuts, at + 8 + n); /* CRC */
        hd_cut_add(&cuts, at + 10 + n);
        at += 12 + (size_t)n;
    }
    assert_int_equal(at, len); /* the walk reached IEND's end */
    hd_cut_add(&cuts, len - 1);
    hd_cuts_run(&cuts, len, 0, label, buf, "bad.png", cmds, N(cmds));

    /* IHDR: each field, with and without a matching CRC. */
    static const struct {
        const char *name;
        size_t off;
        hd_width w;
        uint64_t v[4];
        int n;
    } ihdr[] = {{"width", 16, HD_BE32, {0, 0x7fffffff, 0xffffffff, 40000}, 4},
                {"height", 20, HD_BE32, {0, 0x7fffffff, 0xffffffff, 40000}, 4},
                {"bit depth", 24, HD_LE8, {0, 3, 32, 255}, 4},
                {"colour type", 25, HD_LE8, {1, 5, 7, 255}, 4},
                {"compression", 26, HD_LE8, {1, 255}, 2},
                {"filter method", 27, HD_LE8, {1, 255}, 2},
                {"interlace", 28, HD_LE8, {2, 255}, 2}};
    for (size_t i = 0; i < N(ihdr); i++)
        for (int k = 0; k < ihdr[i].n; k++)
            for (int fix = 0; fix < 2; fix++)
                png_field(label, ihdr[i].name, buf, len, 8, ihdr[i].off, ihdr[i].w, ihdr[i].v[k],
                          fix);
    /* Every chunk's length, type and CRC. */
    for (size_t c = 0; c < nch; c++) {
        char what[64];
        snprintf(what, sizeof what, "chunk %zu length", c);
        png_field(label, what, buf, len, chunks[c], chunks[c], HD_BE32, 0x7fffffff, 0);
        png_field(label, what, buf, len, chunks[c], chunks[c], HD_BE32, 0xffffffff, 0);
        snprintf(what, sizeof what, "chunk %zu type", c);
        png_field(label, what, buf, len, chunks[c], chunks[c] + 4, HD_BE32, 0x49444154 ^ 0x20, 1);
        snprintf(what, sizeof what, "chunk %zu CRC", c);
        size_t crc = chunks[c] + 8 + npk_ld32be(buf + chunks[c]);
        png_field(label, what, buf, len, chunks[c], crc, HD_BE32,
                  ~npk_ld32be(buf + crc) & 0xffffffffu, 0);
    }
    free(buf);
}

#ifdef NPK_HAVE_SPNG
/* A 9x5 picture in another colour type, written with libspng. */
static const char *write_png(const char *name, uint8_t color, uint8_t depth, uint8_t interlace)
{
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    struct spng_ihdr ih = {9, 5, depth, color, 0, 0, interlace};
    int ch = color == 2 ? 3 : color == 4 ? 2 : color == 6 ? 4 : 1;
    size_t row = ((size_t)9 * ch * depth + 7) / 8, n = row * 5;
    uint8_t px[1024];
    for (size_t i = 0; i < n; i++) px[i] = (uint8_t)(i * 37 + 11);
    int bad = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1) || spng_set_ihdr(ctx, &ih);
    if (color == 3) {
        struct spng_plte plte = {0};
        plte.n_entries = 1u << depth;
        for (uint32_t i = 0; i < plte.n_entries; i++)
            plte.entries[i] = (struct spng_plte_entry){(uint8_t)(i * 9), (uint8_t)(i * 5), 77, 255};
        struct spng_trns trns = {0};
        trns.n_type3_entries = 2;
        trns.type3_alpha[0] = 0;
        trns.type3_alpha[1] = 128;
        bad = bad || spng_set_plte(ctx, &plte) || spng_set_trns(ctx, &trns);
    }
    size_t len = 0;
    int rc;
    void *png = NULL;
    if (!bad && !spng_encode_image(ctx, px, n, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE))
        png = spng_get_png_buffer(ctx, &len, &rc);
    spng_ctx_free(ctx);
    if (!png) fail_msg("libspng could not write %s", name);
    const char *p = npk_tmp(name);
    npk_error err = {0};
    if (npk_write_file(p, png, len, &err)) fail_msg("%s", err.msg);
    free(png);
    return p;
}
#endif

static void test_png(void **state)
{
    (void)state;
    if (!npk_cnn2_png_available()) skip();
    hd_helper[1] = npk_tmp("model.bin");
    hd_make("tensor random --shape 4,12,3,3 --seed 2 --min -0.3 --max 0.3 -o %s",
            npk_tmp("l0.npy"));
    hd_make("tensor convert layer.0.weight=%s -o %s", npk_tmp("l0.npy"), npk_tmp("w.safetensors"));
    hd_make("cnn2 pack %s -o %s", npk_tmp("w.safetensors"), hd_helper[1]);
    hd_make("cnn2 pattern --size 13x7 --alpha -o %s", npk_tmp("rgba.png"));
    hd_make("cnn2 pattern --size 6x11 -o %s", npk_tmp("rgb.png"));
    corrupt("pattern RGBA", npk_tmp("rgba.png"));
    corrupt("pattern RGB", npk_tmp("rgb.png"));
#ifdef NPK_HAVE_SPNG
    corrupt("palette + tRNS", write_png("palette.png", 3, 4, 0));
    corrupt("grey 16-bit", write_png("grey16.png", 0, 16, 0));
    corrupt("grey + alpha, interlaced", write_png("ga.png", 4, 8, 1));
#endif
    hd_summary("png");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_png)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
