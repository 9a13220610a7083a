/* Corrupted CNN v2 files through the CLI: every truncation at a boundary of
 * the header, the layer table (each field of each layer) and the weights of
 * each layer, and every header and layer field set to extreme values; on
 * the fixtures and on files `cnn2 pack` makes. The PNG input of `cnn2
 * render` is in test_corrupt_png.c. */
#include "harden.h"
#include "npukit/cnn2.h"

static const hd_cmd cmds[] = {
    {"info @IN", 2, 0, 4, 0},
    {"cnn2 validate @IN", 1, 1, 0, 0},
    {"cnn2 info @IN", 2, 0, 0, 0},
    {"cnn2 unpack @IN -o @OUT/w.safetensors", 2, 0, 0, HD_JSON},
    {"cnn2 render @IN @1 -o @OUT/out.png --raw @OUT/raw.npy --dump-layers @OUT/layers", 2, 0, 0,
     HD_PNG},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

static void corrupt(const char *label, const char *path)
{
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    assert_non_null(buf);
    npk_cnn2_model m;
    npk_error err = {0};
    if (npk_cnn2_parse(buf, len, &m, &err)) fail_msg("%s: %s", path, err.msg);
    uint32_t hs = npk_cnn2_header_size(m.version);
    uint64_t table = hs, weights = hs + (uint64_t)m.num_layers * NPK_CNN2_LAYER_BYTES;

    /* Truncation: each header field, each field of each layer entry, the
     * start of each layer's weights, and the last bytes. */
    hd_cuts cuts = {0};
    for (uint32_t o = 0; o <= hs; o += 4) hd_cut_add(&cuts, o);
    for (uint32_t i = 0; i < m.num_layers; i++) {
        for (uint32_t f = 0; f < NPK_CNN2_LAYER_BYTES; f += 4)
            hd_cut_add(&cuts, table + i * NPK_CNN2_LAYER_BYTES + f);
        hd_cut_add(&cuts, weights + 2ull * m.layers[i].weight_offset);
    }
    hd_cut_add(&cuts, len - 2);
    hd_cut_add(&cuts, len - 1);
    hd_cuts_run(&cuts, len, 1, label, buf, "cut.bin", cmds, NCMDS);

    /* Extreme values: header fields (a mip level 0..3 is valid), then the
     * five fields of every layer. */
    hd_field_all(label, "version", buf, len, 4, HD_LE32, "field.bin", cmds, NCMDS);
    hd_field_all(label, "num_layers", buf, len, 8, HD_LE32, "field.bin", cmds, NCMDS);
    hd_field_all(label, "total_weights", buf, len, 12, HD_LE32, "field.bin", cmds, NCMDS);
    if (m.version == 2) {
        hd_field(label, "mip_level", buf, len, 16, HD_LE32, 0x7fffffff, "field.bin", cmds, NCMDS);
        hd_field(label, "mip_level", buf, len, 16, HD_LE32, 0xffffffff, "field.bin", cmds, NCMDS);
        hd_field(label, "mip_level", buf, len, 16, HD_LE32, 4, "field.bin", cmds, NCMDS);
    }
    static const char *const names[] = {"kernel_size", "in_channels", "out_channels",
                                        "weight_offset", "weight_count"};
    for (uint32_t i = 0; i < m.num_layers; i++)
        for (uint32_t f = 0; f < 5; f++) {
            char field[64];
            snprintf(field, sizeof field, "layer %u %s", i, names[f]);
            hd_field_all(label, field, buf, len, table + i * NPK_CNN2_LAYER_BYTES + 4 * f, HD_LE32,
                         "field.bin", cmds, NCMDS);
        }
    /* The magic itself. */
    hd_field(label, "magic", buf, len, 0, HD_LE32, 0x314E4E43, "field.bin", cmds, NCMDS);
    npk_cnn2_free(&m);
    free(buf);
}

static void test_fixtures(void **state)
{
    (void)state;
    static const char *const files[] = {"cnn2/synthetic_identity_1x1_v1.bin",
                                        "cnn2/synthetic_random_3layer_v2.bin"};
    hd_helper[1] = npk_tmp("in.png");
    if (npk_cnn2_png_available()) hd_make("cnn2 pattern --size 9x7 -o %s", hd_helper[1]);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s", NPK_FIXTURE(files[i]));
        corrupt(files[i], p);
    }
    hd_summary("cnn2 fixtures");
}

/* A file the CLI writes itself: two layers (3x3, 5x5), mip level 2. */
static void test_generated(void **state)
{
    (void)state;
    if (!npk_safetensors_available()) skip();
    hd_helper[1] = npk_tmp("in.png");
    if (npk_cnn2_png_available()) hd_make("cnn2 pattern --size 5x4 --alpha -o %s", hd_helper[1]);
    hd_make("tensor random --shape 4,12,3,3 --seed 3 --min -0.5 --max 0.5 -o %s",
            npk_tmp("l0.npy"));
    hd_make("tensor random --shape 4,12,5,5 --seed 4 --min -0.5 --max 0.5 -o %s",
            npk_tmp("l1.npy"));
    hd_make("tensor convert layer.0.weight=%s layer.1.weight=%s -o %s", npk_tmp("l0.npy"),
            npk_tmp("l1.npy"), npk_tmp("w.safetensors"));
    hd_make("cnn2 pack %s --mip 2 -o %s", npk_tmp("w.safetensors"), npk_tmp("gen2.bin"));
    corrupt("generated v2", npk_tmp("gen2.bin"));
    hd_summary("cnn2 generated");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fixtures),
                                       cmocka_unit_test(test_generated)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
