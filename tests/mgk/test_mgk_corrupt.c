/* Hostile input: every truncation of a synthetic MGK, targeted corruption
 * of the ELF header, footer, section table, segment record and `model`
 * records, and random byte flips. Each buffer is allocated at its exact
 * size so that, under ASan, any read past the end is caught. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/mgk.h"

static uint8_t *orig;
static size_t orig_len;
static npk_mgk_model ref; /* the pristine file, for field positions */

static int setup(void **state)
{
    (void)state;
    static const npk_mgk_synth_layer ls[] = {{20, 40, 3, 3, 8, 1, 1, NULL},
                                             {40, 5, 1, 5, 4, 1, 1, NULL}};
    npk_mgk_synth_spec spec = {ls, 2, 7, true, true, 0, 0};
    npk_error err = {0};
    if (npk_mgk_synth(&spec, &orig, &orig_len, &err)) return -1;
    return npk_mgk_parse(orig, orig_len, &ref, &err) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    npk_mgk_free(&ref);
    free(orig);
    return 0;
}

/* Parse a copy of `len` bytes; on success also run every reader over it. */
static npk_status parse_copy(const uint8_t *src, size_t len, npk_error *err)
{
    uint8_t *buf = malloc(len ? len : 1);
    memcpy(buf, src, len);
    npk_mgk_model m;
    npk_status st = npk_mgk_parse(buf, len, &m, err);
    if (st == NPK_OK) {
        npk_tensor_set set;
        npk_error e2 = {0};
        if (npk_mgk_extract(&m, &set, &e2) == NPK_OK) {
            uint8_t *out;
            size_t olen;
            if (npk_mgk_replace(&m, &set, &out, &olen, NULL, &e2) == NPK_OK) {
                assert_int_equal(olen, len);
                assert_memory_equal(out, buf, len); /* identity on anything that parses */
                free(out);
            }
            npk_set_free(&set);
        }
        npk_mgk_free(&m);
    }
    free(buf);
    return st;
}

/* Patch a copy and expect a parse failure whose offset is `at` (or any offset if at < 0). */
static void expect_error(const char *what, void (*patch)(uint8_t *), npk_status want, long long at)
{
    uint8_t *buf = malloc(orig_len);
    memcpy(buf, orig, orig_len);
    patch(buf);
    npk_error err = {0};
    npk_status st = parse_copy(buf, orig_len, &err);
    if (st != want) fail_msg("%s: status %d (%s), expected %d", what, st, err.msg, want);
    if (at >= 0 && (!err.has_offset || err.offset != (uint64_t)at))
        fail_msg("%s: offset 0x%llx, expected 0x%llx (%s)", what, (unsigned long long)err.offset,
                 at, err.msg);
    free(buf);
}

static void test_every_truncation(void **state)
{
    (void)state;
    for (size_t len = 0; len < orig_len; len++) {
        npk_error err = {0};
        assert_int_not_equal(parse_copy(orig, len, &err), NPK_OK);
        assert_true(err.msg[0] != 0);
    }
    npk_error err = {0};
    assert_int_equal(parse_copy(orig, orig_len, &err), NPK_OK);
}

/* Removing bytes before the footer leaves every offset pointing too far. */
static void test_cut_middle(void **state)
{
    (void)state;
    uint64_t model_off = ref.sections[ref.sec_model].offset;
    size_t cuts[] = {1, 7, 64, (size_t)(orig_len - model_off) / 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t cut = cuts[i], len = orig_len - cut;
        uint8_t *buf = malloc(len);
        size_t keep = (size_t)model_off + 3;
        memcpy(buf, orig, keep);
        memcpy(buf + keep, orig + keep + cut, orig_len - keep - cut);
        npk_error err = {0};
        assert_int_not_equal(parse_copy(buf, len, &err), NPK_OK);
        free(buf);
    }
}

#define F(o) (buf + ref.footer_offset + (o))
static void p_no_imgk(uint8_t *buf)
{
    F(0)[3] = 'X';
}
static void p_sectab_far(uint8_t *buf)
{
    npk_st64le(F(0x18), 0xFFFFFFFFFFFFFFF0ull);
}
static void p_segtab_far(uint8_t *buf)
{
    npk_st64le(F(0x20), ref.footer_offset);
}
static void p_nsect0(uint8_t *buf)
{
    npk_st16le(F(0x2C), 0);
}
static void p_nsect65(uint8_t *buf)
{
    npk_st16le(F(0x2C), 65);
}
static void p_entsize(uint8_t *buf)
{
    npk_st16le(F(0x2A), 23);
}
static void p_nseg0(uint8_t *buf)
{
    npk_st16le(F(0x30), 0);
}
static void p_segsize(uint8_t *buf)
{
    npk_st16le(F(0x2E), 47);
}
static void p_footer_size(uint8_t *buf)
{
    npk_st16le(F(0x28), 81);
}
static void p_footer_region(uint8_t *buf)
{
    npk_st64le(F(0x40), 5);
}
#define S(i, o) (buf + ref.sectab_offset + 24 * (i) + (o))
static void p_model_far(uint8_t *buf)
{
    npk_st64le(S(0, 8), orig_len);
}
static void p_model_wrap(uint8_t *buf)
{
    npk_st64le(S(0, 8), ~0ull);
}
static void p_model_big(uint8_t *buf)
{
    npk_st64le(S(0, 16), orig_len);
}
static void p_model_short(uint8_t *buf)
{
    npk_st64le(S(0, 16), ref.sections[ref.sec_model].size - 1);
}
static void p_no_model(uint8_t *buf)
{
    *S(0, 0) = 9;
}
static void p_strtab_name(uint8_t *buf)
{
    *S(1, 2) = 3;
} /* no longer names .mlstrtab */
static void p_version_value(uint8_t *buf)
{
    npk_st64le(buf + ref.versions[1].entry_offset + 8, 999);
}
#define G(o) (buf + ref.segtab_offset + (o))
static void p_region_big(uint8_t *buf)
{
    npk_st64le(G(0x28), orig_len);
}
static void p_region_wrap(uint8_t *buf)
{
    npk_st64le(G(0x18), ~0ull - 4);
}
static void p_region_shift(uint8_t *buf)
{
    npk_st64le(G(0x18), ref.region_offset + 4);
}
static void p_elf_class(uint8_t *buf)
{
    buf[4] = 2;
}
static void p_elf_machine(uint8_t *buf)
{
    buf[18] = 3;
}
static void p_elf_shoff(uint8_t *buf)
{
    npk_st32le(buf + 32, (uint32_t)orig_len);
}
static void p_elf_shentsize(uint8_t *buf)
{
    npk_st16le(buf + 46, 48);
}
static void p_elf_shnum(uint8_t *buf)
{
    npk_st16le(buf + 48, 5000);
}
static void p_elf_phoff(uint8_t *buf)
{
    npk_st32le(buf + 28, 0xFFFFFF00u);
}
static void p_elf_section(uint8_t *buf) /* .dynsym (section 2) size past the end */
{
    npk_st32le(buf + ref.elf.shoff + 2 * 40 + 20, (uint32_t)orig_len);
}
static void p_elf_dynsym_link(uint8_t *buf)
{
    npk_st32le(buf + ref.elf.shoff + 2 * 40 + 24, 77);
}
static void p_elf_symname(uint8_t *buf) /* symbol 1's name beyond .dynstr */
{
    uint32_t dynsym = npk_ld32le(buf + ref.elf.shoff + 2 * 40 + 16);
    npk_st32le(buf + dynsym + 16, 0x10000);
}
static void p_elf_shstrndx(uint8_t *buf)
{
    npk_st16le(buf + 50, 9);
}

static void test_header_corruption(void **state)
{
    (void)state;
    uint64_t f = ref.footer_offset;
    expect_error("no IMGK", p_no_imgk, NPK_E_FORMAT, (long long)f);
    expect_error("section table far", p_sectab_far, NPK_E_FORMAT, (long long)f + 0x18);
    expect_error("segment table far", p_segtab_far, NPK_E_FORMAT, (long long)f + 0x20);
    expect_error("0 sections", p_nsect0, NPK_E_FORMAT, (long long)f + 0x2C);
    expect_error("65 sections", p_nsect65, NPK_E_FORMAT, (long long)f + 0x2C);
    expect_error("entry size", p_entsize, NPK_E_FORMAT, (long long)f + 0x2A);
    expect_error("0 segments", p_nseg0, NPK_E_FORMAT, (long long)f + 0x30);
    expect_error("segment size", p_segsize, NPK_E_FORMAT, (long long)f + 0x2E);
    expect_error("model far", p_model_far, NPK_E_FORMAT, (long long)ref.sectab_offset);
    expect_error("model wraps", p_model_wrap, NPK_E_FORMAT, (long long)ref.sectab_offset);
    expect_error("model too big", p_model_big, NPK_E_FORMAT, (long long)ref.sectab_offset);
    expect_error("model short", p_model_short, NPK_E_FORMAT, -1);
    expect_error("no model", p_no_model, NPK_E_FORMAT, (long long)ref.sectab_offset);
    expect_error("region too big", p_region_big, NPK_E_FORMAT, (long long)ref.segtab_offset + 0x18);
    expect_error("region wraps", p_region_wrap, NPK_E_FORMAT, (long long)ref.segtab_offset + 0x18);
    expect_error("ELF class", p_elf_class, NPK_E_UNSUPPORTED, 4);
    expect_error("ELF machine", p_elf_machine, NPK_E_UNSUPPORTED, 18);
    expect_error("ELF shoff", p_elf_shoff, NPK_E_FORMAT, 32);
    expect_error("ELF shentsize", p_elf_shentsize, NPK_E_FORMAT, 46);
    expect_error("ELF shnum", p_elf_shnum, NPK_E_LIMIT, 48);
    expect_error("ELF phoff", p_elf_phoff, NPK_E_FORMAT, 28);
    expect_error("ELF section", p_elf_section, NPK_E_FORMAT, (long long)ref.elf.shoff + 80);
    expect_error("ELF dynsym link", p_elf_dynsym_link, NPK_E_FORMAT, -1);
    expect_error("ELF symbol name", p_elf_symname, NPK_E_FORMAT, -1);
    expect_error("ELF shstrndx", p_elf_shstrndx, NPK_E_FORMAT, 50);
}

/* Mismatches of the layout checks are warnings, not errors. */
static void expect_warning(void (*patch)(uint8_t *), const char *needle)
{
    uint8_t *buf = malloc(orig_len);
    memcpy(buf, orig, orig_len);
    patch(buf);
    npk_mgk_model m;
    npk_error err = {0};
    assert_int_equal(npk_mgk_parse(buf, orig_len, &m, &err), NPK_OK);
    bool found = false;
    for (size_t i = 0; i < m.nwarnings; i++) found |= strstr(m.warnings[i].msg, needle) != NULL;
    if (!found) fail_msg("no warning containing '%s' (%zu warnings)", needle, m.nwarnings);
    npk_mgk_free(&m);
    free(buf);
}

static void test_cross_check_warnings(void **state)
{
    (void)state;
    assert_int_equal(ref.nwarnings, 0);
    expect_warning(p_footer_size, "footer says its size is 81");
    expect_warning(p_footer_region, "footer gives the weight region");
    expect_warning(p_region_shift, "not at the end of the ELF section headers");
    expect_warning(p_strtab_name, "no .mlstrtab");
    expect_warning(p_version_value, ".version tag 3");
}

/* The record of layer `i` (conv index) and positions inside it. */
static const npk_mgk_record *conv_rec(size_t i)
{
    return npk_mgk_conv_record(&ref, &ref.convs[i]);
}

static uint8_t *patched;
static void p_apply(uint8_t *buf)
{
    memcpy(buf, patched, orig_len);
}

static void patch_and_expect(uint64_t off, const void *bytes, size_t n, npk_status want,
                             long long at, const char *what)
{
    patched = malloc(orig_len);
    memcpy(patched, orig, orig_len);
    memcpy(patched + off, bytes, n);
    expect_error(what, p_apply, want, at);
    free(patched);
}

static void test_blob_corruption(void **state)
{
    (void)state;
    const npk_mgk_section *blob = &ref.sections[ref.sec_model];
    uint8_t w[8];
    /* The last record's length word: 0, too big, and off by one. */
    uint64_t last = blob->offset + blob->size - 8;
    npk_st64le(w, 0);
    patch_and_expect(last, w, 8, NPK_E_FORMAT, (long long)last, "length 0");
    npk_st64le(w, blob->size + 1);
    patch_and_expect(last, w, 8, NPK_E_FORMAT, (long long)last, "length too big");
    npk_st64le(w, ~0ull);
    patch_and_expect(last, w, 8, NPK_E_FORMAT, (long long)last, "length huge");
    /* The first record's name length. */
    uint64_t r0 = ref.records[0].offset;
    npk_st32le(w, 0x7FFFFFFF);
    patch_and_expect(r0, w, 4, NPK_E_LIMIT, (long long)r0, "name length");
    /* A conv record's input count (after the name). */
    const npk_mgk_record *cr = conv_rec(0);
    uint64_t cnt = cr->offset + 4 + cr->name.len;
    npk_st32le(w, 0xFFFFFFFF);
    patch_and_expect(cnt, w, 4, NPK_E_FORMAT, (long long)cnt, "input count");
    npk_st32le(w, 2); /* 2 formats but 1 type */
    patch_and_expect(cnt, w, 4, NPK_E_FORMAT, -1, "count mismatch");
    /* weight_shape with 6 dimensions. */
    uint64_t ws = ref.convs[0].shape_pos;
    npk_st32le(w, 6);
    patch_and_expect(ws, w, 4, NPK_E_FORMAT, -1, "weight shape rank");
    npk_st32le(w, 9);
    patch_and_expect(ws, w, 4, NPK_E_FORMAT, (long long)ws, "weight shape rank 9");
}

/* Field damage that leaves the record readable makes only that layer unusable. */
static void test_unusable_layers(void **state)
{
    (void)state;
    static const struct {
        int field; /* index into weight_shape (0..6), 7 = weight count, 8 = weight offset, 9 =
                      requant count */
        int64_t value;
        bool usable, requant_ok;
        const char *needle;
    } cases[] = {
        {4, 5, false, false, "S_BIT2 = 5 planes"},
        {5, 16, false, false, "lanes 16 x 32"},
        {2, 0, false, false, "dimension 2 is 0"},
        {7, 12345, false, false, "weight element count 12345"},
        {8, 1 << 30, false, false, "outside the weight region"},
        {8, -128, false, false, "outside the weight region"},
        {9, 7, true, false, "requant element count 7"},
    };
    const npk_mgk_conv *c0 = &ref.convs[0];
    uint64_t ws = c0->shape_pos + 4;
    /* counts follow: weight_shape (4 + 28), requant (4 + 20), third (4 + 4), u8. */
    uint64_t counts = ws + 28 + 4 + 20 + 4 + 4 + 1;
    uint64_t offsets = counts + 12;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *buf = malloc(orig_len);
        memcpy(buf, orig, orig_len);
        if (cases[i].field < 7)
            npk_st32le(buf + ws + 4 * cases[i].field, (uint32_t)cases[i].value);
        else if (cases[i].field == 7)
            npk_st32le(buf + counts, (uint32_t)cases[i].value);
        else if (cases[i].field == 8)
            npk_st64le(buf + offsets, (uint64_t)cases[i].value);
        else
            npk_st32le(buf + counts + 4, (uint32_t)cases[i].value);
        npk_mgk_model m;
        npk_error err = {0};
        assert_int_equal(npk_mgk_parse(buf, orig_len, &m, &err), NPK_OK);
        const npk_mgk_conv *c = &m.convs[0];
        assert_int_equal(c->usable, cases[i].usable);
        assert_int_equal(c->requant_ok, cases[i].requant_ok);
        if (!strstr(c->problem, cases[i].needle)) fail_msg("problem '%s'", c->problem);
        assert_true(m.convs[1].usable); /* the other layer is unaffected */
        /* Extract skips it; replace refuses it by name; decode says why. */
        npk_tensor_set set;
        assert_int_equal(npk_mgk_extract(&m, &set, &err), NPK_OK);
        char name[32];
        snprintf(name, sizeof name, "layer_%d.weight", c->id);
        assert_int_equal(npk_set_find(&set, name) != NULL, cases[i].usable);
        npk_set_free(&set);
        if (!c->usable) {
            int8_t tmp[1];
            assert_int_equal(npk_mgk_decode_layer(&m, c, 0, tmp, &err), NPK_E_UNSUPPORTED);
            npk_tensor t;
            int64_t shape[4] = {40, 20, 3, 3};
            npk_tensor_alloc(&t, name, NPK_I8, 4, shape, &err);
            npk_set_init(&set);
            npk_set_add(&set, &t, &err);
            uint8_t *out = NULL;
            size_t olen;
            npk_error e2 = {0};
            assert_int_equal(npk_mgk_replace(&m, &set, &out, &olen, NULL, &e2), NPK_E_UNSUPPORTED);
            assert_non_null(strstr(e2.msg, name));
            npk_set_free(&set);
        }
        npk_mgk_free(&m);
        free(buf);
    }
}

static void test_random_flips(void **state)
{
    (void)state;
    uint64_t seed = 2024;
    uint8_t *buf = malloc(orig_len);
    int ok = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, orig, orig_len);
        int flips = 1 + (int)(npk_rand(&seed) % 4);
        for (int k = 0; k < flips; k++) {
            /* Half of the flips land in the payload, where the structure is. */
            size_t base = (npk_rand(&seed) & 1) ? (size_t)ref.sections[ref.sec_model].offset : 0;
            size_t at = base + (size_t)(npk_rand(&seed) % (orig_len - base));
            buf[at] ^= (uint8_t)(1u << (npk_rand(&seed) % 8));
        }
        npk_error err = {0};
        ok += parse_copy(buf, orig_len, &err) == NPK_OK;
    }
    assert_true(ok > 0); /* some flips hit bytes that do not matter */
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_truncation),  cmocka_unit_test(test_cut_middle),
        cmocka_unit_test(test_header_corruption), cmocka_unit_test(test_cross_check_warnings),
        cmocka_unit_test(test_blob_corruption),   cmocka_unit_test(test_unusable_layers),
        cmocka_unit_test(test_random_flips),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
