/* The one public MGK file (data/mgk/AEC_T41_16K_NS_OUT_UC.mgk): container,
 * ELF, records, weights and requant tables against the values verified in
 * reference/mgk.md, and extract -> replace on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/mgk.h"

#define FIX "mgk/AEC_T41_16K_NS_OUT_UC.mgk"

static npk_mapped map;
static npk_mgk_model model;

static int setup(void **state)
{
    (void)state;
    const char *p = npk_fixture_path(FIX);
    if (!p) return 0; /* each test skips (or fails under CI) through NPK_FIXTURE */
    npk_error err = {0};
    if (npk_map_file(p, &map, &err)) return -1;
    if (npk_mgk_parse(map.data, map.size, &model, &err)) {
        fprintf(stderr, "parse: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    npk_mgk_free(&model);
    if (map.data) npk_unmap_file(&map);
    return 0;
}

#define NEED_FIXTURE() (void)NPK_FIXTURE(FIX)

static const npk_mgk_section *section(const char *name)
{
    for (size_t i = 0; i < model.nsections; i++)
        if (npk_mgk_str_eq(model.sections[i].name, name)) return &model.sections[i];
    return NULL;
}

static void test_container(void **state)
{
    (void)state;
    NEED_FIXTURE();
    assert_int_equal(model.size, 649920);
    assert_int_equal(model.footer_offset, 0x9EA70);
    assert_int_equal(model.sectab_offset, 0x9EA10);
    assert_int_equal(model.segtab_offset, 0x9E9D8);
    assert_int_equal(model.footer_size, 80);
    assert_int_equal(model.sect_entsize, 24);
    assert_int_equal(model.nsect, 4);
    assert_int_equal(model.seg_size, 56);
    assert_int_equal(model.nseg, 1);
    assert_int_equal(model.region_offset, 0x78B94);
    assert_int_equal(model.region_size, 0x20900);
    assert_int_equal(model.footer_region_offset, 0x78B94);
    assert_int_equal(model.footer_region_size, 0x20900);
    assert_int_equal(model.seg_unknown_20, 0x12800);
    static const struct {
        const char *name;
        uint64_t off, size;
        uint8_t index;
    } want[] = {{"model", 0x99494, 0x5485, 1},
                {".mlstrtab", 0x9E919, 0x22, 2},
                {".verstr", 0x9E93B, 0x2D, 3},
                {".version", 0x9E968, 0x70, 4}};
    assert_int_equal(model.nsections, 4);
    for (int i = 0; i < 4; i++) {
        const npk_mgk_section *s = section(want[i].name);
        assert_non_null(s);
        assert_int_equal(s->offset, want[i].off);
        assert_int_equal(s->size, want[i].size);
        assert_int_equal(s->index, want[i].index);
        assert_int_equal(s->name_inferred, i == 0);
    }
    /* The layout checks all hold on this file: no warnings. */
    for (size_t i = 0; i < model.nwarnings; i++)
        fprintf(stderr, "warning: %s\n", model.warnings[i].msg);
    assert_int_equal(model.nwarnings, 0);
    assert_int_equal(model.region_offset, model.elf.sh_end);
    assert_int_equal(model.region_offset + model.region_size, section("model")->offset);
}

static void test_versions(void **state)
{
    (void)state;
    NEED_FIXTURE();
    static const struct {
        uint8_t tag;
        uint64_t value;
        const char *str;
    } want[] = {{1, 0x9E93B, NULL}, {3, 1, "0.5.0"},    {4, 7, "77cfc40"}, {5, 15, "0.2.5.2.ALPHA"},
                {6, 29, "de83629"}, {9, 37, "8e4be86"}, {0, 1, NULL}};
    assert_int_equal(model.nversions, 7);
    for (int i = 0; i < 7; i++) {
        const npk_mgk_version *v = &model.versions[i];
        assert_int_equal(v->tag, want[i].tag);
        assert_int_equal(v->value, want[i].value);
        assert_int_equal(v->has_string, want[i].str != NULL);
        if (want[i].str) assert_true(npk_mgk_str_eq(v->string, want[i].str));
    }
}

static const npk_mgk_symbol *symbol(const char *short_name)
{
    char buf[128];
    for (size_t i = 0; i < model.elf.nsymbols; i++)
        if (!strcmp(npk_mgk_symbol_short(&model.elf.symbols[i], buf, sizeof buf), short_name))
            return &model.elf.symbols[i];
    return NULL;
}

static const npk_mgk_elf_section *elf_section(const char *name)
{
    for (size_t i = 0; i < model.elf.nsections; i++)
        if (npk_mgk_str_eq(model.elf.sections[i].name, name)) return &model.elf.sections[i];
    return NULL;
}

static void test_elf(void **state)
{
    (void)state;
    NEED_FIXTURE();
    const npk_mgk_elf *e = &model.elf;
    assert_int_equal(e->type, 3);
    assert_int_equal(e->machine, 8);
    assert_int_equal(e->flags, 0x70001C07);
    assert_int_equal(e->entry, 0xE6D0);
    assert_int_equal(e->abiversion, 3);
    assert_int_equal(e->phnum, 7);
    assert_int_equal(e->shoff, 0x78734);
    assert_int_equal(e->nsections, 28);
    assert_int_equal(e->shstrndx, 27);
    assert_int_equal(e->sh_end, 0x78B94);
    assert_int_equal(e->load_end, 0x785A0);
    static const struct {
        const char *name;
        uint32_t off, size;
    } secs[] = {{".dynsym", 0x12FC, 0x21A0},    {".dynstr", 0x349C, 0x8DD0},
                {".text", 0xE6D0, 0x5DB00},     {".rodata", 0x6C640, 0x72F0},
                {".eh_frame", 0x744C4, 0x2738}, {".data.rel.ro", 0x772E8, 0xAA0},
                {".got", 0x77D90, 0x80C}};
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        const npk_mgk_elf_section *s = elf_section(secs[i].name);
        assert_non_null(s);
        assert_int_equal(s->offset, secs[i].off);
        assert_int_equal(s->size, secs[i].size);
    }
    assert_int_equal(elf_section(".bss")->size, 0x170);
    static const struct {
        const char *name;
        uint32_t value, size;
    } syms[] = {{"create", 0x2C0C0, 148},
                {"destroy", 0x23DA4, 32},
                {"conv2d_int8_param_init", 0x2AD2C, 5012},
                {"gru_param_init", 0x24F40, 2492}};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        const npk_mgk_symbol *s = symbol(syms[i].name);
        assert_non_null(s);
        assert_int_equal(s->value, syms[i].value);
        assert_int_equal(s->size, syms[i].size);
        assert_int_equal(s->type, 2); /* STT_FUNC */
    }
    assert_int_equal(e->nsymbols, 421); /* defined, named dynamic symbols (readelf) */
}

/* Table 5.3 of the reference: blob position of the weight_shape count word,
 * kernel, Cin, Cout, kernel vector, stride, weight shape, offsets, M_BT. */
static const struct conv_row {
    uint64_t pos;
    bool float_out;
    int cin, cout, k0, s0;
    int ws[7];
    int welems;
    uint64_t woff;
    int mbt, relems;
    uint64_t roff;
} convs[] = {
    {0x9A348, 0, 32, 32, 5, 2, {1, 1, 1, 5, 4, 32, 32}, 20480, 0x3900, 3, 96, 0x4D00},
    {0x9A572, 0, 64, 32, 3, 2, {1, 2, 1, 3, 4, 32, 32}, 24576, 0x4E80, 3, 96, 0x6680},
    {0x9A7A4, 0, 64, 32, 3, 1, {1, 2, 1, 3, 4, 32, 32}, 24576, 0x6800, 5, 160, 0x8000},
    {0x9A9D6, 0, 64, 32, 3, 1, {1, 2, 1, 3, 4, 32, 32}, 24576, 0x8280, 5, 160, 0x9A80},
    {0x9AC08, 0, 64, 32, 3, 1, {1, 2, 1, 3, 4, 32, 32}, 24576, 0x9D00, 5, 160, 0xB500},
    {0x9B2A0, 0, 64, 32, 1, 1, {1, 2, 1, 1, 4, 32, 32}, 8192, 0xF440, 2, 64, 0xFC40},
    {0x9C3A2, 0, 32, 32, 1, 1, {1, 1, 1, 1, 4, 32, 32}, 4096, 0x11D00, 2, 64, 0x12100},
    {0x9CE9A, 0, 128, 32, 3, 1, {1, 4, 1, 3, 4, 32, 32}, 49152, 0x17400, 3, 96, 0x1A400},
    {0x9D2B3, 0, 128, 32, 3, 1, {1, 4, 1, 3, 4, 32, 32}, 49152, 0x1A580, 3, 96, 0x1D580},
    {0x9D6CC, 0, 128, 32, 3, 1, {1, 4, 1, 3, 4, 32, 32}, 49152, 0x1D700, 3, 96, 0x20700},
    {0x9DBE5, 0, 128, 32, 3, 1, {1, 4, 1, 3, 4, 32, 32}, 49152, 0x700, 3, 96, 0x3700},
    {0x9E0FB, 0, 128, 2, 5, 1, {1, 4, 1, 5, 4, 32, 32}, 81920, 0x12300, 2, 64, 0x17300},
    {0x9E2F7, 1, 2, 2, 1, 1, {1, 1, 1, 1, 4, 32, 32}, 4096, 0x0, 2, 64, 0x400},
};

static const npk_mgk_conv *conv_at_weights(uint64_t woff)
{
    for (size_t i = 0; i < model.nconvs; i++)
        if (model.convs[i].weight_offset == woff) return &model.convs[i];
    return NULL;
}

static void test_records(void **state)
{
    (void)state;
    NEED_FIXTURE();
    assert_int_equal(model.nrecords, 62);
    static const struct {
        const char *kind;
        int count;
    } kinds[] = {
        {"FormatConvert", 28}, {"Convolution", 13}, {"Reshape", 6},  {"Concat", 5}, {"Gru", 2},
        {"Normalize", 3},      {"Add", 2},          {"UpSample", 2}, {"Permute", 1}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int n = 0;
        for (size_t i = 0; i < model.nrecords; i++)
            n += npk_mgk_str_eq(model.records[i].kind, kinds[k].kind);
        assert_int_equal(n, kinds[k].count);
    }
    uint64_t at = section("model")->offset;
    for (size_t i = 0; i < model.nrecords; i++) { /* back to back, covering the blob */
        const npk_mgk_record *r = &model.records[i];
        assert_int_equal(r->offset, at);
        assert_true(r->known_kind);
        assert_int_equal(npk_ld64le(map.data + r->offset + r->size - 8), r->size);
        at += r->size;
    }
    assert_int_equal(at, section("model")->offset + section("model")->size);
    /* The first record: FormatConvert NHWC -> NDHWC32. */
    const npk_mgk_record *r0 = &model.records[0];
    assert_true(npk_mgk_str_eq(r0->name, "__FormatConvert__26"));
    assert_true(npk_mgk_str_eq(r0->kernel, "FormatConvert/format_cvt_ubit8/2/0/0/"));
    assert_int_equal(r0->ninputs, 1);
    assert_true(npk_mgk_str_eq(r0->inputs[0].name, "onnx__QuantizeConcatInference_500"));
    assert_true(npk_mgk_str_eq(r0->inputs[0].format, "NHWC"));
    assert_int_equal(r0->nout, 1);
    assert_true(npk_mgk_str_eq(r0->out_formats[0], "NDHWC32"));
    /* A Concat record with four inputs. */
    const npk_mgk_record *cat = NULL;
    for (size_t i = 0; i < model.nrecords && !cat; i++)
        if (npk_mgk_str_eq(model.records[i].kind, "Concat")) cat = &model.records[i];
    assert_int_equal(cat->ninputs, 4);
    assert_true(npk_mgk_str_eq(cat->inputs[1].name, "layer_32_QuantizeFeature"));
}

static void test_conv_records(void **state)
{
    (void)state;
    NEED_FIXTURE();
    assert_int_equal(model.nconvs, 13);
    int of = 0;
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        const struct conv_row *w = &convs[i];
        const npk_mgk_conv *c = conv_at_weights(w->woff);
        assert_non_null(c);
        const npk_mgk_record *r = npk_mgk_conv_record(&model, c);
        assert_int_equal(c->shape_pos, w->pos);
        assert_true(npk_mgk_str_eq(r->kernel, w->float_out ? "Convolution/base_i8of/2/0/0"
                                                           : "Convolution/base_i8/2/0/0"));
        of += w->float_out;
        assert_int_equal(c->cin, w->cin);
        assert_int_equal(c->cout, w->cout);
        assert_int_equal(c->nkernel, 2);
        assert_int_equal(c->kernel[0], w->k0);
        assert_int_equal(c->kernel[1], 1);
        assert_int_equal(c->stride[0], w->s0);
        assert_int_equal(c->dilation[0], 1);
        assert_memory_equal(c->weight_shape, w->ws, sizeof w->ws);
        assert_int_equal(c->counts[0], w->welems);
        assert_int_equal(c->weight_bytes, (uint64_t)w->welems / 4);
        assert_int_equal(c->offsets[1], (int64_t)w->roff);
        assert_int_equal(c->requant_shape[1], w->mbt);
        assert_int_equal(c->counts[1], w->relems);
        assert_int_equal(c->counts[2], 0);
        assert_int_equal(c->offsets[2], 0);
        assert_int_equal(c->bits, 8);
        assert_true(c->usable && c->requant_ok && c->unpadded);
        assert_true(npk_mgk_str_eq(c->layout, "BGRA"));
        assert_int_equal(c->unknown_d, 6);
        assert_int_equal(c->id, (int)c->record);
        assert_ptr_equal(npk_mgk_find_layer(&model, c->id), c);
    }
    assert_int_equal(of, 1);
    const npk_mgk_conv *c = conv_at_weights(0x12300); /* record at 0x9E0FB */
    static const int32_t pads[4] = {0, 0, 2, 2};
    assert_int_equal(c->npads, 4);
    assert_memory_equal(c->pads, pads, sizeof pads);
    assert_int_equal(c->kh, 1);
    assert_int_equal(c->kw, 5);
}

/* Every non-zero byte of the weight region belongs to a layer (convolution
 * weights and tables, GRU weights and tables, Normalize tables); what is left
 * is zero and explained. */
static void test_unassigned(void **state)
{
    (void)state;
    NEED_FIXTURE();
    static const struct {
        uint64_t offset, size;
        const char *why;
    } want[] = {
        {0x500, 0x200, "no record and no constructor argument"},
        {0x38a0, 32, "64-byte boundary"},
        {0x38e0, 32, "64-byte boundary"},
        {0xf408, 56, "64-byte boundary"},
        {0x11cc4, 60, "64-byte boundary"},
        {0x20880, 0x80, "end of the region"},
    };
    assert_int_equal(model.nunassigned, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(model.unassigned[i].offset, want[i].offset);
        assert_int_equal(model.unassigned[i].size, want[i].size);
        assert_true(model.unassigned[i].all_zero);
        assert_non_null(model.unassigned[i].why);
        assert_non_null(strstr(model.unassigned[i].why, want[i].why));
    }
}

static int8_t *decode(const npk_mgk_conv *c, unsigned flags, size_t *count)
{
    npk_mgk_wshape s;
    npk_error err = {0};
    assert_int_equal(npk_mgk_layer_wshape(c, flags, &s, &err), NPK_OK);
    assert_int_equal(npk_mgk_wshape_check(&s, NULL, count, &err), NPK_OK);
    int8_t *w = malloc(*count);
    assert_int_equal(npk_mgk_decode_layer(&model, c, flags, w, &err), NPK_OK);
    return w;
}

static void test_weights_1x1_float_out(void **state)
{
    (void)state;
    NEED_FIXTURE();
    const npk_mgk_conv *c = conv_at_weights(0);
    size_t n;
    int8_t *w = decode(c, 0, &n);
    assert_int_equal(n, 4);
    assert_int_equal(w[0], 71);  /* w[0][0] */
    assert_int_equal(w[1], 30);  /* w[0][1] */
    assert_int_equal(w[2], -99); /* w[1][0] */
    assert_int_equal(w[3], 111); /* w[1][1] */
    free(w);
    w = decode(c, NPK_MGK_ALL_LANES, &n);
    assert_int_equal(n, 1024);
    for (int co = 0; co < 32; co++)
        for (int ci = 0; ci < 32; ci++) {
            int v = w[co * 32 + ci];
            if (co >= 2)
                assert_int_equal(v, -128); /* padded outputs: code 0 */
            else if (ci >= 2)
                assert_int_equal(v, 0); /* padded inputs of real outputs */
        }
    free(w);
}

static void test_weights_1x5(void **state)
{
    (void)state;
    NEED_FIXTURE();
    const npk_mgk_conv *c = conv_at_weights(0x12300);
    size_t n;
    int8_t *w = decode(c, NPK_MGK_ALL_LANES, &n); /* [32][128][1][5] */
    assert_int_equal(n, 32 * 128 * 5);
    long abs_sum = 0, within = 0, used = 0;
    for (int co = 0; co < 32; co++) {
        int nz = 0;
        for (int i = 0; i < 128 * 5; i++) nz += w[co * 640 + i] != 0;
        assert_true(co < 2 ? nz > 0 : nz == 0); /* exactly outputs 0 and 1 are non-zero */
    }
    for (int ci = 0; ci < 128; ci++) {
        int nz = 0;
        for (int co = 0; co < 2; co++)
            for (int k = 0; k < 5; k++) {
                int v = w[(co * 128 + ci) * 5 + k];
                nz += v != 0;
                abs_sum += v < 0 ? -v : v;
                within += v >= -32 && v <= 32;
            }
        if (ci == 70 || ci == 75) assert_int_equal(nz, 0); /* all zero, yet Cin = 128 */
        used += nz > 0;
    }
    assert_int_equal(used, 126);
    double mean = (double)abs_sum / (2 * 128 * 5);
    assert_true(mean > 17.3 && mean < 18.3);
    assert_true(within > 0.78 * 1280 && within < 0.84 * 1280);
    static const int8_t first[4][5] = {
        {10, 21, 4, -2, -2}, {-2, -2, -13, -14, -6}, {-1, -2, -28, -48, -24}, {7, 0, 18, 0, -43}};
    for (int ci = 0; ci < 4; ci++)
        for (int k = 0; k < 5; k++) assert_int_equal(w[ci * 5 + k], first[ci][k]);
    /* The unpadded decode is the first two output channels of the full one. */
    size_t rn;
    int8_t *r = decode(c, 0, &rn);
    assert_int_equal(rn, 2 * 128 * 5);
    assert_memory_equal(r, w, rn);
    free(r);
    free(w);
}

static void check_rq(uint64_t roff, npk_mgk_rq_form form, int rows)
{
    const npk_mgk_conv *c = NULL;
    for (size_t i = 0; i < model.nconvs; i++)
        if (model.convs[i].requant_offset == roff) c = &model.convs[i];
    assert_non_null(c);
    npk_mgk_requant rq;
    npk_error err = {0};
    assert_int_equal(npk_mgk_requant_read(&model, c, &rq, &err), NPK_OK);
    assert_int_equal(rq.form, form);
    assert_int_equal(rq.rows, rows);
    assert_int_equal(rq.channels, c->cout);
    /* Raw words: row r, channel ch at region + roff + 128 r + 4 ch. */
    const uint8_t *t = map.data + model.region_offset + roff;
    for (int r = 0; r < rows; r++)
        for (int ch = 0; ch < rq.channels; ch++)
            assert_int_equal(rq.ints[r * rq.channels + ch],
                             (int32_t)npk_ld32le(t + 128 * r + 4 * ch));
    npk_mgk_requant_free(&rq);
}

static void test_requant(void **state)
{
    (void)state;
    NEED_FIXTURE();
    npk_mgk_requant rq;
    npk_error err = {0};
    assert_int_equal(npk_mgk_requant_read(&model, conv_at_weights(0x12300), &rq, &err), NPK_OK);
    assert_int_equal(rq.form, NPK_MGK_RQ_FLOAT);
    assert_true(rq.form_from_values);
    assert_int_equal(rq.channels, 2);
    assert_int_equal(rq.bias[0], 469);
    assert_int_equal(rq.bias[1], -3530);
    assert_true(fabs(rq.scale[0] - 0.00257825) < 1e-8);
    assert_true(fabs(rq.scale[1] - 0.00221584) < 1e-8);
    assert_null(rq.mult);
    npk_mgk_requant_free(&rq);
    assert_int_equal(npk_mgk_requant_read(&model, conv_at_weights(0), &rq, &err), NPK_OK);
    assert_int_equal(rq.form, NPK_MGK_RQ_FLOAT);
    assert_int_equal(rq.bias[0], -40804);
    assert_int_equal(rq.bias[1], -4848);
    assert_true(fabs(rq.scale[0] - 0.000254669) < 1e-9);
    assert_true(fabs(rq.scale[1] - 0.0028413) < 1e-7);
    npk_mgk_requant_free(&rq);
    static const struct {
        uint64_t woff;
        int32_t mult;
    } packed[] = {{0xF440, 1874}, {0x11D00, 998}};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(npk_mgk_requant_read(&model, conv_at_weights(packed[i].woff), &rq, &err),
                         NPK_OK);
        assert_int_equal(rq.form, NPK_MGK_RQ_PACKED);
        assert_int_equal(rq.channels, 32);
        assert_null(rq.scale);
        for (int ch = 0; ch < 32; ch++) assert_int_equal(rq.mult[ch], packed[i].mult);
        npk_mgk_requant_free(&rq);
    }
    /* Two-slope tables: row 2 = alpha * row 1 with one alpha per table. */
    static const uint64_t three[] = {0x3700, 0x4D00, 0x6680, 0x1A400, 0x1D580, 0x20700};
    static const double alpha[] = {-0.00015, -1.00192, 0.02788, -0.0365, -0.13014, -0.00653};
    for (int i = 0; i < 6; i++) {
        check_rq(three[i], NPK_MGK_RQ_TWO_SLOPE, 3);
        const npk_mgk_conv *c = NULL;
        for (size_t k = 0; k < model.nconvs; k++)
            if (model.convs[k].requant_offset == three[i]) c = &model.convs[k];
        assert_int_equal(npk_mgk_requant_read(&model, c, &rq, &err), NPK_OK);
        double a0 = (double)rq.slope2[0] / (double)rq.scale[0];
        assert_true(fabs(a0 - alpha[i]) <= fabs(alpha[i]) * 0.05); /* reference rounds alpha */
        for (int ch = 0; ch < 32; ch++) {
            double a = (double)rq.slope2[ch] / (double)rq.scale[ch];
            assert_true(fabs(a - a0) <= fabs(a0) * 1e-5); /* one constant per table */
        }
        assert_ptr_equal(rq.bias, rq.ints);
        npk_mgk_requant_free(&rq);
    }
    static const uint64_t five[] = {0x8000, 0x9A80, 0xB500};
    for (int i = 0; i < 3; i++) {
        check_rq(five[i], NPK_MGK_RQ_FIVE_ROW, 5);
        const npk_mgk_conv *c = NULL;
        for (size_t k = 0; k < model.nconvs; k++)
            if (model.convs[k].requant_offset == five[i]) c = &model.convs[k];
        assert_int_equal(npk_mgk_requant_read(&model, c, &rq, &err), NPK_OK);
        assert_null(rq.bias);
        assert_null(rq.scale);
        for (int ch = 0; ch < 32; ch++) {
            assert_true(rq.ints[2 * 32 + ch] >= 146 && rq.ints[2 * 32 + ch] <= 3306);
            assert_true(rq.ints[3 * 32 + ch] < 0);
            assert_true(rq.ints[4 * 32 + ch] >= 1254 && rq.ints[4 * 32 + ch] <= 152860);
        }
        npk_mgk_requant_free(&rq);
    }
    check_rq(0x17300, NPK_MGK_RQ_FLOAT, 2);
    check_rq(0xFC40, NPK_MGK_RQ_PACKED, 2);
}

static void test_extract_replace_identity(void **state)
{
    (void)state;
    NEED_FIXTURE();
    npk_tensor_set set;
    npk_error err = {0};
    assert_int_equal(npk_mgk_extract(&model, &set, &err), NPK_OK);
    assert_int_equal(set.count, 62); /* 13 weights + 33 requant tensors + 2 x 8 GRU tensors */
    npk_tensor *t = npk_set_find(&set, "layer_56.weight");
    assert_non_null(t);
    assert_int_equal(t->dtype, NPK_I8);
    assert_int_equal(t->ndim, 4);
    assert_int_equal(((int8_t *)t->data)[2], -99);
    t = npk_set_find(&set, "layer_55.scale");
    assert_non_null(t);
    assert_true(fabs(((float *)t->data)[0] - 0.00257825) < 1e-8);
    assert_non_null(npk_set_find(&set, "layer_22.mult"));
    assert_null(npk_set_find(&set, "layer_22.scale"));
    assert_null(npk_set_find(&set, "layer_14.bias")); /* five-row table: meaning unknown */
    assert_non_null(npk_set_find(&set, "layer_14.requant"));
    uint8_t *out;
    size_t len;
    npk_mgk_replace_stats st;
    assert_int_equal(npk_mgk_replace(&model, &set, &out, &len, &st, &err), NPK_OK);
    assert_int_equal(st.layers, 15); /* 13 convolutions, 2 GRUs */
    assert_int_equal(st.bytes_changed, 0);
    assert_int_equal(st.ignored, 45);
    assert_int_equal(len, map.size);
    assert_memory_equal(out, map.data, len);
    free(out);
    npk_set_free(&set);
}

static void test_replace_changes_only_the_layer(void **state)
{
    (void)state;
    NEED_FIXTURE();
    const npk_mgk_conv *c = conv_at_weights(0x12300);
    size_t n;
    int8_t *w = decode(c, 0, &n);
    npk_tensor_set set;
    npk_set_init(&set);
    npk_tensor t;
    npk_error err = {0};
    int64_t shape[4] = {2, 128, 1, 5};
    char name[32];
    snprintf(name, sizeof name, "layer_%d.weight", c->id);
    assert_int_equal(npk_tensor_alloc(&t, name, NPK_I8, 4, shape, &err), NPK_OK);
    memcpy(t.data, w, n);
    int8_t *v = t.data;
    v[0] = -7;                          /* w[0][0][0][0]: was 10 */
    v[(1 * 128 + 127) * 5 + 4] ^= 0x55; /* w[1][127][0][4] */
    v[(1 * 128 + 70) * 5 + 2] = 127;    /* an all-zero input channel */
    assert_int_equal(npk_set_add(&set, &t, &err), NPK_OK);
    uint8_t *out;
    size_t len;
    npk_mgk_replace_stats st;
    assert_int_equal(npk_mgk_replace(&model, &set, &out, &len, &st, &err), NPK_OK);
    assert_int_equal(st.layers, 1);
    assert_true(st.bytes_changed > 0 && st.bytes_changed <= 12);
    uint64_t lo = model.region_offset + 0x12300, hi = lo + 20480;
    for (size_t i = 0; i < len; i++)
        if (out[i] != map.data[i] && (i < lo || i >= hi)) fail_msg("byte 0x%zx changed", i);
    /* Read back through a fresh parse. */
    npk_mgk_model m2;
    assert_int_equal(npk_mgk_parse(out, len, &m2, &err), NPK_OK);
    const npk_mgk_conv *c2 = npk_mgk_find_layer(&m2, c->id);
    int8_t *w2 = malloc(n);
    assert_int_equal(npk_mgk_decode_layer(&m2, c2, 0, w2, &err), NPK_OK);
    assert_memory_equal(w2, set.items[0].data, n);
    assert_int_equal(w2[0], -7);
    size_t diff = 0;
    for (size_t i = 0; i < n; i++) diff += w2[i] != w[i];
    assert_int_equal(diff, 3);
    /* Every other layer decodes as before. */
    for (size_t i = 0; i < model.nconvs; i++) {
        if (model.convs[i].id == c->id) continue;
        size_t k;
        int8_t *a = decode(&model.convs[i], NPK_MGK_ALL_LANES, &k), *b = malloc(k);
        assert_int_equal(npk_mgk_decode_layer(&m2, &m2.convs[i], NPK_MGK_ALL_LANES, b, &err),
                         NPK_OK);
        assert_memory_equal(a, b, k);
        free(a);
        free(b);
    }
    free(w2);
    npk_mgk_free(&m2);
    free(out);
    free(w);
    npk_set_free(&set);
}

static void replace_expect(npk_tensor *t, npk_status want, const char *needle)
{
    npk_tensor_set set;
    npk_set_init(&set);
    npk_error err = {0};
    assert_int_equal(npk_set_add(&set, t, &err), NPK_OK);
    uint8_t *out = NULL;
    size_t len;
    assert_int_equal(npk_mgk_replace(&model, &set, &out, &len, NULL, &err), want);
    assert_null(out);
    if (!strstr(err.msg, needle)) fail_msg("'%s' not in '%s'", needle, err.msg);
    npk_set_free(&set);
}

static void test_replace_errors(void **state)
{
    (void)state;
    NEED_FIXTURE();
    npk_tensor t;
    npk_error err = {0};
    int64_t ok[4] = {2, 2, 1, 1}, bad[4] = {2, 3, 1, 1};
    assert_int_equal(npk_tensor_alloc(&t, "layer_56.weight", NPK_I16, 4, ok, &err), NPK_OK);
    ((int16_t *)t.data)[3] = 128; /* beyond int8 */
    replace_expect(&t, NPK_E_ARG, "outside the 8-bit range [-128, 127] of layer 56");
    assert_int_equal(npk_tensor_alloc(&t, "layer_56.weight", NPK_I8, 4, bad, &err), NPK_OK);
    replace_expect(&t, NPK_E_ARG, "shape does not match the layer's [2, 2, 1, 1]");
    assert_int_equal(npk_tensor_alloc(&t, "layer_56.weight", NPK_F32, 4, ok, &err), NPK_OK);
    replace_expect(&t, NPK_E_ARG, "must be integers");
    assert_int_equal(npk_tensor_alloc(&t, "layer_3.weight", NPK_I8, 4, ok, &err), NPK_OK);
    replace_expect(&t, NPK_E_NOTFOUND, "no convolution layer 3");
}

/* Garbage in fields documented as unused changes nothing. */
static void test_garbage_tolerance(void **state)
{
    (void)state;
    NEED_FIXTURE();
    uint8_t *buf = malloc(map.size);
    memcpy(buf, map.data, map.size);
    uint64_t f = model.footer_offset;
    memset(buf + f + 0x32, 0xEE, 6);
    memset(buf + f + 0x4A, 0xEE, 6);
    memset(buf + f + 0x04, 0xEE, 4);
    for (int i = 0; i < 4; i++) memset(buf + model.sectab_offset + 24 * i + 3, 0xEE, 5);
    for (size_t i = 0; i < model.nversions; i++)
        memset(buf + model.versions[i].entry_offset + 1, 0xEE, 7);
    npk_mgk_model m2;
    npk_error err = {0};
    assert_int_equal(npk_mgk_parse(buf, map.size, &m2, &err), NPK_OK);
    assert_int_equal(m2.nwarnings, 0);
    assert_int_equal(m2.region_offset, model.region_offset);
    assert_int_equal(m2.nconvs, 13);
    assert_int_equal(m2.nversions, 7);
    assert_true(npk_mgk_str_eq(m2.versions[1].string, "0.5.0"));
    npk_mgk_free(&m2);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_elf),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_conv_records),
        cmocka_unit_test(test_unassigned),
        cmocka_unit_test(test_weights_1x1_float_out),
        cmocka_unit_test(test_weights_1x5),
        cmocka_unit_test(test_requant),
        cmocka_unit_test(test_extract_replace_identity),
        cmocka_unit_test(test_replace_changes_only_the_layer),
        cmocka_unit_test(test_replace_errors),
        cmocka_unit_test(test_garbage_tolerance),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
