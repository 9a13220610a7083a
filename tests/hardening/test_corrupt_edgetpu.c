/* Corrupted TFLite / Edge TPU models through the CLI, on the compiled
 * fixtures and on `edgetpu synth-dense` files: truncation at every
 * structure the readers locate (TFLite root, tensors, operators, buffers,
 * the custom options, the DWN1 package, each executable, bitstream and
 * parameter blob), and extreme values in root offsets, vector lengths and
 * the DarwiNN fields a runtime trusts (sizes, bit positions of field
 * offsets, DMA hint ranges, layer sizes). Field positions are found with
 * npukit's own FlatBuffers reader. */
#include "harden.h"
#include "npukit/edgetpu.h"
#include "npukit/flatbuf.h"

static const hd_cmd dense_cmds[] = {
    {"info @IN", 2, 0, 8, 0},
    {"edgetpu info --json @IN", 2, 0, 0, HD_JSON},
    {"edgetpu weights @IN -o @OUT/w.npy", 2, 0, 0, 0},
    {"edgetpu set-weights @IN --weights @1 -o @OUT/new_edgetpu.tflite", 2, 0, 0, 0},
    {"edgetpu matmul @IN --input @2 -o @OUT/y.npy", 2, 0, 0, 0},
    {"edgetpu run @IN --input @3 -o @OUT/y.npy --device emu", 2, 0, 0, 0},
};
static const hd_cmd other_cmds[] = {
    {"info @IN", 2, 0, 8, 0},
    {"edgetpu info --json @IN", 2, 0, 0, HD_JSON},
};

static const hd_cmd *cmds;
static size_t ncmds;
static const char *label;
static const uint8_t *file;
static size_t file_len;

static void field(const char *what, uint64_t off, hd_width w, uint64_t v)
{
    hd_field(label, what, file, file_len, off, w, v, "field_edgetpu.tflite", cmds, ncmds);
}

/* Absolute position of a scalar field (0 when absent). */
static uint64_t pos_of(const npk_fb_table *t, int slot)
{
    uint16_t f = npk_fb_field(t, slot);
    return f ? npk_fb_offset(t) + f : 0;
}

/* A nested FlatBuffer that starts at absolute offset `off` in the file. */
static npk_fb_table root_at(uint64_t off, size_t size)
{
    npk_fb_buf b;
    npk_fb_table t = {0};
    npk_error err = {0};
    if (npk_fb_init(&b, file + off, size, off, &err) || npk_fb_root(&b, NULL, &t, &err))
        fail_msg("%s: no table at 0x%llx: %s", label, (unsigned long long)off, err.msg);
    return t;
}

/* Each vector-of-tables element of `slot`. */
static uint32_t tables(const npk_fb_table *t, int slot, npk_fb_table *out, uint32_t max)
{
    npk_fb_vec v;
    npk_error err = {0};
    if (npk_fb_vector(t, slot, 4, &v, &err) || !v.present) return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < v.count && n < max; i++)
        if (!npk_fb_vec_table(&v, i, &out[n], &err)) n++;
    return n;
}

static void executable_fields(const npk_etpu_executable *x)
{
    npk_fb_table t = root_at(x->offset, x->size), items[64], sub;
    npk_error err = {0};
    bool present;
    field("executable root offset", x->offset, HD_LE32, 0xffffffff);
    field("executable root offset", x->offset, HD_LE32, 0x7fffffff);
    field("executable root offset", x->offset, HD_LE32, 0);
    field("executable batch_size", pos_of(&t, 3), HD_LE32, 0xffffffff);
    field("executable scratch_size_bytes", pos_of(&t, 4), HD_LE32, 0x80000000);
    field("executable type", pos_of(&t, 13), HD_LE16, 0x7fff);
    for (uint32_t b = 0; b < x->nbitstreams; b++) {
        field("bitstream length", x->bitstreams[b].offset - 4, HD_LE32, 0x7fffffff);
        field("bitstream length", x->bitstreams[b].offset - 4, HD_LE32, 0xffffffff);
    }
    if (x->parameters) {
        field("parameters length", x->parameters_offset - 4, HD_LE32, 0x7fffffff);
        field("parameters length", x->parameters_offset - 4, HD_LE32, 0xffffffff);
    }
    /* Field offsets: bit positions inside each bitstream. */
    uint32_t nb = tables(&t, 5, items, 64);
    for (uint32_t b = 0; b < nb; b++) {
        npk_fb_table fo[8];
        uint32_t nf = tables(&items[b], 1, fo, 8);
        for (uint32_t f = 0; f < nf && f < 2; f++) {
            field("field offset_bit", pos_of(&fo[f], 1), HD_LE32, 0x7fffffff);
            field("field offset_bit", pos_of(&fo[f], 1), HD_LE32, 0xffffffff);
        }
    }
    /* DMA hints: ranges and instruction chunks. */
    if (npk_fb_subtable(&t, 7, &sub, &present, &err) == NPK_OK && present) {
        npk_fb_table h[64];
        uint32_t nh = tables(&sub, 0, h, 64);
        for (uint32_t i = 0; i < nh && i < 12; i++) {
            uint8_t kind;
            npk_fb_table v;
            if (npk_fb_union(&h[i], 0, &kind, &v, &err)) continue;
            if (kind == NPK_ETPU_HINT_DMA) {
                field("DMA hint offset_in_bytes", pos_of(&v, 1), HD_LE32, 0xffffffff);
                field("DMA hint size_in_bytes", pos_of(&v, 2), HD_LE32, 0x80000000);
                if (x->hints[i].meta.desc != NPK_ETPU_DESC_INPUT &&
                    x->hints[i].meta.desc != NPK_ETPU_DESC_SCRATCH)
                    field("DMA hint size_in_bytes", pos_of(&v, 2), HD_LE32, 0x7fffffff);
            } else if (kind == NPK_ETPU_HINT_INSTRUCTION) {
                field("DMA hint instruction chunk", pos_of(&v, 0), HD_LE32, 0x7fffffff);
                field("DMA hint instruction chunk", pos_of(&v, 0), HD_LE32, 0xffffffff);
            }
        }
    }
    /* Layers: sizes and dimensions may not be negative. */
    for (int slot = 8; slot <= 9; slot++) {
        uint32_t nl = tables(&t, slot, items, 64);
        for (uint32_t i = 0; i < nl && i < 4; i++)
            for (int s = 1; s <= 4; s++)
                field("layer size or dimension", pos_of(&items[i], s), HD_LE32, 0xffffffff);
    }
}

static void corrupt(const char *lbl, const char *path, int dense)
{
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    assert_non_null(buf);
    npk_etpu_model m;
    npk_error err = {0};
    if (npk_etpu_parse(buf, len, &m, &err)) fail_msg("%s: %s", path, err.msg);
    label = lbl;
    file = buf;
    file_len = len;
    cmds = dense ? dense_cmds : other_cmds;
    ncmds =
        dense ? sizeof dense_cmds / sizeof dense_cmds[0] : sizeof other_cmds / sizeof other_cmds[0];
    if (dense) {
        npk_etpu_dense d;
        if (npk_etpu_dense_init(&m, &d, &err)) fail_msg("%s: %s", path, err.msg);
        hd_helper[1] = npk_tmp("w.npy");
        hd_helper[2] = npk_tmp("x.npy");
        hd_make("edgetpu weights %s -o %s", path, hd_helper[1]);
        hd_make("tensor random --shape 2,%zu --dtype f32 -o %s", d.n, hd_helper[2]);
        hd_helper[3] = npk_tmp("x1.npy");
        hd_make("tensor random --shape %zu --dtype f32 -o %s", d.n, hd_helper[3]);
        npk_etpu_dense_free(&d);
    }

    /* Truncation at each structure. */
    hd_cuts cuts = {0};
    hd_cut_add(&cuts, 0);
    hd_cut_add(&cuts, 4);
    hd_cut_add(&cuts, 8);
    const npk_tfl_model *t = &m.tfl;
    for (uint32_t s = 0; s < t->nsubgraphs; s++) {
        for (uint32_t i = 0; i < t->subgraphs[s].ntensors && i < 8; i++)
            hd_cut_add(&cuts, t->subgraphs[s].tensors[i].offset);
        for (uint32_t i = 0; i < t->subgraphs[s].noperators; i++) {
            const npk_tfl_operator *op = &t->subgraphs[s].operators[i];
            hd_cut_add(&cuts, op->offset);
            if (op->custom_options) {
                hd_cut_add(&cuts, op->custom_options_offset);
                hd_cut_add(&cuts, op->custom_options_offset + op->custom_options_len);
            }
        }
    }
    for (uint32_t i = 0; i < t->nbuffers; i++)
        if (t->buffers[i].data) hd_cut_add(&cuts, t->buffers[i].offset);
    for (uint32_t o = 0; o < m.nops; o++)
        for (uint32_t p = 0; p < m.ops[o].npackages; p++) {
            const npk_etpu_package *pk = &m.ops[o].packages[p];
            hd_cut_add(&cuts, pk->offset);
            for (uint32_t e = 0; e < pk->nexecutables; e++) {
                const npk_etpu_executable *x = &pk->executables[e];
                hd_cut_add(&cuts, x->offset);
                for (uint32_t b = 0; b < x->nbitstreams; b++)
                    hd_cut_add(&cuts, x->bitstreams[b].offset);
                if (x->parameters) hd_cut_add(&cuts, x->parameters_offset);
            }
        }
    hd_cuts_done(&cuts, len, 1);
    /* The end of the data: the last non-zero byte (a builder may leave
     * unreferenced zero padding after it, which can go without harm). */
    size_t last = len - 1;
    while (last > 0 && buf[last] == 0) last--;
    for (size_t i = 0; i < cuts.n; i++)
        if (cuts.at[i] > last) cuts.at[i] = last;
    hd_cuts_run(&cuts, len, 0, lbl, buf, "cut_edgetpu.tflite", cmds, ncmds);

    /* Extreme values: the TFLite root and vectors. */
    hd_field_all(lbl, "root offset", buf, len, 0, HD_LE32, "field_edgetpu.tflite", cmds, ncmds);
    uint32_t root = npk_ld32le(buf);
    field("root vtable offset", root, HD_LE32, 0x7fffffff);
    field("root vtable offset", root, HD_LE32, 0x80000000);
    field("root vtable offset", root, HD_LE32, 0);
    for (uint32_t s = 0; s < t->nsubgraphs; s++)
        for (uint32_t i = 0; i < t->subgraphs[s].noperators; i++) {
            const npk_tfl_operator *op = &t->subgraphs[s].operators[i];
            if (!op->custom_options) continue;
            field("custom options length", op->custom_options_offset - 4, HD_LE32, 0x7fffffff);
            field("custom options length", op->custom_options_offset - 4, HD_LE32, 0xffffffff);
        }
    for (uint32_t i = 0; i < t->nbuffers; i++)
        if (t->buffers[i].data && !t->buffers[i].external) {
            field("buffer length", t->buffers[i].offset - 4, HD_LE32, 0x7fffffff);
            field("buffer length", t->buffers[i].offset - 4, HD_LE32, 0xffffffff);
        }
    /* The package and its executables. */
    for (uint32_t o = 0; o < m.nops; o++)
        for (uint32_t p = 0; p < m.ops[o].npackages; p++) {
            const npk_etpu_package *pk = &m.ops[o].packages[p];
            field("package root offset", pk->offset, HD_LE32, 0xffffffff);
            field("package root offset", pk->offset, HD_LE32, 0);
            field("package identifier", pk->offset + 4, HD_LE32, 0x314E5744);
            for (uint32_t e = 0; e < pk->nexecutables; e++) executable_fields(&pk->executables[e]);
        }
    npk_etpu_free(&m);
    free(buf);
}

static void test_synthetic(void **state)
{
    (void)state;
    const char *p = npk_tmp("synth_edgetpu.tflite");
    hd_make("edgetpu synth-dense --size 64 -o %s", p);
    corrupt("synth-dense 64", p, 1);
    hd_make("edgetpu synth-dense --size 128 --flex-width 2 --chip-keys -o %s", p);
    corrupt("synth-dense 128", p, 1);
    hd_summary("edgetpu synthetic");
}

static void test_fixtures(void **state)
{
    (void)state;
    static const char *const files[] = {
        "edgetpu/dense_256_edgetpu.tflite", "edgetpu/gabor_64x64_p4_edgetpu.tflite",
        "edgetpu/keras_lstm_mnist_ptq_edgetpu.tflite", "edgetpu/split_concat_edgetpu.tflite"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s", NPK_FIXTURE(files[i]));
        corrupt(files[i], p, i == 0);
    }
    hd_summary("edgetpu fixtures");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_synthetic),
                                       cmocka_unit_test(test_fixtures)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
