/* CNN v2 reader, writer and validator: the fixtures' header values and
 * weights (from docs and fixtures.md), the broken fixtures' specific
 * problems, truncation at every byte, byte-exact round trips, the odd-count
 * padding rule and hand-made files with several problems at once. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/cnn2.h"
#include "core/formats.h"

static const char *valid_fixtures[] = {
    "cnn2/synthetic_identity_1x1_v1.bin", "cnn2/synthetic_identity_1x1_v2.bin",
    "cnn2/synthetic_identity_3x3_v2.bin", "cnn2/synthetic_mix_1x1_v2_mip2.bin",
    "cnn2/synthetic_random_3layer_v2.bin"};
#define NVALID (sizeof valid_fixtures / sizeof valid_fixtures[0])

static void parse_fixture(const char *rel, npk_cnn2_model *m)
{
    npk_mapped f;
    npk_fixture_map(rel, &f);
    npk_error err = {0};
    if (npk_cnn2_parse(f.data, f.size, m, &err)) fail_msg("%s: %s", rel, err.msg);
    npk_unmap_file(&f);
}

static void check_layer(const npk_cnn2_layer *l, uint32_t k, uint32_t in, uint32_t out,
                        uint32_t off, uint32_t count)
{
    assert_int_equal(l->kernel_size, k);
    assert_int_equal(l->in_channels, in);
    assert_int_equal(l->out_channels, out);
    assert_int_equal(l->weight_offset, off);
    assert_int_equal(l->weight_count, count);
}

/* Identity-style weights: want(o, i, ky, kx) for every weight of layer 0. */
static void check_weights(const npk_cnn2_model *m,
                          uint16_t (*want)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t))
{
    const npk_cnn2_layer *l = &m->layers[0];
    uint32_t k = l->kernel_size;
    for (uint32_t o = 0; o < 4; o++)
        for (uint32_t i = 0; i < 12; i++)
            for (uint32_t ky = 0; ky < k; ky++)
                for (uint32_t kx = 0; kx < k; kx++)
                    assert_int_equal(m->weights[npk_cnn2_weight_index(l, o, i, ky, kx)],
                                     want(k, o, i, ky, kx));
}

static uint16_t identity_w(uint32_t k, uint32_t o, uint32_t i, uint32_t ky, uint32_t kx)
{
    return i == o && ky == k / 2 && kx == k / 2 ? 0x3C00 : 0;
}

static uint16_t mix_w(uint32_t k, uint32_t o, uint32_t i, uint32_t ky, uint32_t kx)
{
    (void)k;
    (void)ky;
    (void)kx;
    return i == o || i == o + 4 ? 0x3800 : 0;
}

static void test_fixture_headers(void **state)
{
    (void)state;
    npk_cnn2_model m;

    /* The one-layer fixtures: 4 outputs of 12 inputs, weights known. */
    static const struct {
        const char *rel;
        uint32_t version, mip, k, count;
        uint16_t (*want)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t);
    } one[] = {
        {"cnn2/synthetic_identity_1x1_v2.bin", 2, 0, 1, 48, identity_w},
        {"cnn2/synthetic_identity_1x1_v1.bin", 1, 0, 1, 48, identity_w},
        {"cnn2/synthetic_identity_3x3_v2.bin", 2, 0, 3, 432, identity_w},
        {"cnn2/synthetic_mix_1x1_v2_mip2.bin", 2, 2, 1, 48, mix_w},
    };
    for (size_t c = 0; c < sizeof one / sizeof *one; c++) {
        parse_fixture(one[c].rel, &m);
        assert_int_equal(m.version, one[c].version);
        assert_int_equal(m.num_layers, 1);
        assert_int_equal(m.total_weights, one[c].count);
        assert_int_equal(m.mip_level, one[c].mip);
        check_layer(&m.layers[0], one[c].k, 12, 4, 0, one[c].count);
        check_weights(&m, one[c].want);
        npk_cnn2_free(&m);
    }

    parse_fixture("cnn2/synthetic_random_3layer_v2.bin", &m);
    assert_int_equal(m.version, 2);
    assert_int_equal(m.num_layers, 3);
    assert_int_equal(m.total_weights, 2064);
    assert_int_equal(m.mip_level, 1);
    check_layer(&m.layers[0], 3, 12, 4, 0, 432);
    check_layer(&m.layers[1], 5, 12, 4, 432, 1200);
    check_layer(&m.layers[2], 3, 12, 4, 1632, 432);
    /* "weights roughly uniform in +-0.5": all finite, |w| <= 0.5, both signs. */
    int neg = 0, pos = 0;
    for (uint32_t j = 0; j < m.total_weights; j++) {
        float w = npk_f16_to_f32(m.weights[j]);
        assert_true(isfinite(w) && fabsf(w) <= 0.5f);
        neg += w < 0;
        pos += w > 0;
    }
    assert_true(neg > 900 && pos > 900);
    npk_cnn2_free(&m);
}

/* Each fixture is the file fixtures.md describes (size and sha256). */
static void test_fixture_hashes(void **state)
{
    (void)state;
    static const struct {
        const char *rel;
        size_t size;
        const char *sha;
    } files[] = {
        {"cnn2/synthetic_identity_1x1_v2.bin", 136,
         "48a04dee332ebf4a9e378f0ab4f3732f54917561370dc9ce7761e0de990bd897"},
        {"cnn2/synthetic_random_3layer_v2.bin", 4208,
         "78379b762475859666a9be7d59b900c18b825b4727c1e129da61ca7017fe0007"},
        {"cnn2/bad_truncated.bin", 132,
         "922b84b3d8acdc12942852ff620e04a426bd4f354c536eb68cb3fbc2d93a6694"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        npk_mapped f;
        npk_fixture_map(files[i].rel, &f);
        char hex[65];
        assert_int_equal(f.size, files[i].size);
        npk_sha256_hex(f.data, f.size, hex);
        assert_string_equal(hex, files[i].sha);
        npk_unmap_file(&f);
    }
}

/* The broken fixtures fail with their specific problem, at the right offset. */
static void expect_bad(const char *rel, npk_cnn2_check check, uint64_t offset)
{
    npk_mapped f;
    npk_fixture_map(rel, &f);
    npk_cnn2_report rep;
    assert_int_equal(npk_cnn2_validate(f.data, f.size, &rep, NULL), NPK_OK);
    assert_int_equal(rep.errors, 1);
    const npk_cnn2_problem *p = npk_cnn2_first_error(&rep);
    assert_non_null(p);
    print_message("%s: %s at 0x%llx: %s\n", rel, npk_cnn2_check_name(p->check),
                  (unsigned long long)p->offset, p->msg);
    assert_int_equal(p->check, check);
    assert_int_equal(p->offset, offset);
    npk_cnn2_report_free(&rep);
    npk_cnn2_model m;
    npk_error err = {0};
    assert_int_equal(npk_cnn2_parse(f.data, f.size, &m, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, offset);
    assert_null(m.layers);
    npk_unmap_file(&f);
}

static void test_bad_fixtures(void **state)
{
    (void)state;
    expect_bad("cnn2/bad_magic.bin", NPK_CNN2_E_MAGIC, 0);
    expect_bad("cnn2/bad_offset.bin", NPK_CNN2_E_OFFSET, 0x20);
    /* 132 bytes is a v1 size, but the version field says 2: a size error. */
    expect_bad("cnn2/bad_truncated.bin", NPK_CNN2_E_SIZE, 132);
    npk_mapped f;
    npk_fixture_map("cnn2/bad_truncated.bin", &f);
    npk_cnn2_report rep;
    npk_cnn2_validate(f.data, f.size, &rep, NULL);
    assert_int_equal(rep.version, 2);
    assert_non_null(strstr(rep.items[0].msg, "expected 136"));
    npk_cnn2_report_free(&rep);
    npk_unmap_file(&f);
}

/* Every proper prefix of every valid fixture is rejected, and so are files
 * with extra bytes (all fixtures have even totals: exact = padded). */
static void test_truncation_every_byte(void **state)
{
    (void)state;
    for (size_t i = 0; i < NVALID; i++) {
        size_t len;
        const char *p = NPK_FIXTURE(valid_fixtures[i]);
        uint8_t *buf = npk_slurp(p, &len);
        assert_non_null(buf);
        uint8_t *copy = malloc(len + 8);
        for (size_t n = 0; n < len; n++) {
            memcpy(copy, buf, n); /* a fresh allocation of exactly n bytes for ASan */
            uint8_t *exact = malloc(n ? n : 1);
            memcpy(exact, buf, n);
            npk_cnn2_model m;
            npk_error err = {0};
            if (npk_cnn2_parse(exact, n, &m, &err) == NPK_OK)
                fail_msg("%s cut to %zu bytes was accepted", valid_fixtures[i], n);
            assert_true(err.has_offset);
            assert_true(err.offset <= len);
            npk_cnn2_report rep;
            npk_cnn2_validate(exact, n, &rep, NULL);
            assert_true(rep.errors >= 1);
            npk_cnn2_report_free(&rep);
            free(exact);
        }
        for (size_t extra = 1; extra <= 8; extra++) {
            memcpy(copy, buf, len);
            memset(copy + len, 0, extra);
            npk_cnn2_model m;
            npk_error err = {0};
            assert_int_equal(npk_cnn2_parse(copy, len + extra, &m, &err), NPK_E_FORMAT);
            assert_int_equal(err.offset, len);
        }
        free(copy);
        free(buf);
    }
}

/* encode(parse(f)) == f, byte for byte. */
static void test_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < NVALID; i++) {
        size_t len;
        uint8_t *buf = npk_slurp(NPK_FIXTURE(valid_fixtures[i]), &len);
        npk_cnn2_model m;
        npk_error err = {0};
        assert_int_equal(npk_cnn2_parse(buf, len, &m, &err), NPK_OK);
        uint8_t *out;
        size_t olen;
        assert_int_equal(npk_cnn2_encode(&m, &out, &olen, &err), NPK_OK);
        assert_int_equal(olen, len);
        assert_memory_equal(out, buf, len);
        /* Through tensors (f32) and back, and through safetensors metadata. */
        npk_tensor_set set;
        npk_cnn2_model m2;
        assert_int_equal(npk_cnn2_to_tensors(&m, &set, &err), NPK_OK);
        assert_int_equal(set.count, m.num_layers);
        assert_int_equal(npk_cnn2_from_tensors(&set, m.version, m.mip_level, &m2, &err), NPK_OK);
        npk_set_free(&set);
        free(out);
        assert_int_equal(npk_cnn2_encode(&m2, &out, &olen, &err), NPK_OK);
        assert_memory_equal(out, buf, len);
        free(out);
        npk_cnn2_free(&m2);
        if (npk_safetensors_available()) {
            uint8_t *st;
            size_t stlen;
            uint32_t v, mip;
            assert_int_equal(npk_cnn2_st_encode(&m, &st, &stlen, &err), NPK_OK);
            assert_int_equal(npk_cnn2_st_decode(st, stlen, &set, &v, &mip, &err), NPK_OK);
            assert_int_equal(v, m.version);
            assert_int_equal(mip, m.mip_level);
            assert_int_equal(npk_cnn2_from_tensors(&set, v, mip, &m2, &err), NPK_OK);
            assert_int_equal(npk_cnn2_encode(&m2, &out, &olen, &err), NPK_OK);
            assert_int_equal(olen, len);
            assert_memory_equal(out, buf, len);
            free(out);
            free(st);
            npk_set_free(&set);
            npk_cnn2_free(&m2);
        }
        npk_cnn2_free(&m);
        free(buf);
    }
}

/* An odd weight total: the writer pads to a whole u32 with 0x0000; the
 * reader accepts the exact and the padded size and nothing else. */
static void test_odd_count_padding(void **state)
{
    (void)state;
    for (uint32_t version = 1; version <= 2; version++) {
        npk_cnn2_shape s[1] = {{1, 3, 1}}; /* 1x1, 3 -> 1: 3 weights */
        npk_cnn2_model m;
        npk_error err = {0};
        assert_int_equal(npk_cnn2_build(&m, version, 0, 1, s, &err), NPK_OK);
        assert_int_equal(m.total_weights, 3);
        m.weights[0] = 0x3C00;
        m.weights[1] = 0xBC00;
        m.weights[2] = 0x3555;
        uint8_t *out;
        size_t len;
        assert_int_equal(npk_cnn2_encode(&m, &out, &len, &err), NPK_OK);
        uint32_t hs = version == 1 ? 16 : 20;
        assert_int_equal(len, hs + 20 + 8); /* padded: 4 * ceil(3 / 2) */
        assert_int_equal(npk_cnn2_exact_size(version, 1, 3), hs + 20 + 6);
        assert_int_equal(npk_cnn2_padded_size(version, 1, 3), len);
        const uint8_t *w = out + hs + 20;
        static const uint8_t want[8] = {0x00, 0x3C, 0x00, 0xBC, 0x55, 0x35, 0x00, 0x00};
        assert_memory_equal(w, want, 8);
        for (size_t n = len - 3; n <= len + 2; n++) {
            uint8_t *b = calloc(1, n);
            memcpy(b, out, n < len ? n : len);
            npk_cnn2_model r;
            npk_status st = npk_cnn2_parse(b, n, &r, &err);
            npk_error_clear(&err);
            if (n == len || n == len - 2) {
                assert_int_equal(st, NPK_OK);
                assert_int_equal(r.weights[2], 0x3555);
                npk_cnn2_free(&r);
            } else {
                assert_int_equal(st, NPK_E_FORMAT);
            }
            free(b);
        }
        free(out);
        npk_cnn2_free(&m);
    }
}

/* A file with several problems lists all of them, in rule order. */
static void test_every_problem_listed(void **state)
{
    (void)state;
    /* v2, 2 layers, header claims total 999 and mip 7. */
    uint8_t b[20 + 40 + 16] = {0};
    memcpy(b, "CNN2", 4);
    npk_st32le(b + 4, 2);
    npk_st32le(b + 8, 2);
    npk_st32le(b + 12, 999);
    npk_st32le(b + 16, 7);
    /* layer 0: k=2 (even), in=0, out=9, offset=5, count=1 */
    uint32_t l0[5] = {2, 0, 9, 5, 1};
    /* layer 1: k=1, in=12, out=4, offset=1, count=47 (should be 48) */
    uint32_t l1[5] = {1, 12, 4, 1, 47};
    for (int i = 0; i < 5; i++) {
        npk_st32le(b + 20 + 4 * i, l0[i]);
        npk_st32le(b + 40 + 4 * i, l1[i]);
    }
    npk_cnn2_report rep;
    assert_int_equal(npk_cnn2_validate(b, sizeof b, &rep, NULL), NPK_OK);
    static const struct {
        npk_cnn2_check check;
        uint64_t offset;
    } want[] = {
        {NPK_CNN2_E_MIP, 0x10},    {NPK_CNN2_E_KERNEL, 0x14}, {NPK_CNN2_E_IN, 0x18},
        {NPK_CNN2_E_OUT, 0x1c},    {NPK_CNN2_E_COUNT, 0x24},  {NPK_CNN2_E_COUNT, 0x38},
        {NPK_CNN2_E_OFFSET, 0x20}, {NPK_CNN2_E_TOTAL, 0x0c},  {NPK_CNN2_E_SIZE, 76},
    };
    size_t nwant = sizeof want / sizeof want[0];
    for (size_t i = 0; i < rep.count; i++)
        print_message("  %s 0x%llx %s\n", npk_cnn2_check_name(rep.items[i].check),
                      (unsigned long long)rep.items[i].offset, rep.items[i].msg);
    assert_int_equal(rep.errors, nwant);
    for (size_t i = 0; i < nwant; i++) {
        assert_int_equal(rep.items[i].check, want[i].check);
        assert_int_equal(rep.items[i].offset, want[i].offset);
        assert_false(rep.items[i].warning);
    }
    npk_cnn2_report_free(&rep);
}

static void test_header_errors(void **state)
{
    (void)state;
    uint8_t b[64] = {0};
    memcpy(b, "CNN2", 4);
    npk_cnn2_report rep;
    /* Shorter than 16 bytes. */
    for (size_t n = 0; n < 16; n++) {
        npk_cnn2_validate(b, n, &rep, NULL);
        assert_int_equal(rep.errors, 1);
        assert_int_equal(rep.items[0].check, NPK_CNN2_E_SHORT);
        assert_int_equal(rep.items[0].offset, n);
        npk_cnn2_report_free(&rep);
    }
    /* Unknown versions stop the checks (the header length is unknown). */
    uint32_t versions[] = {0, 3, 0xFFFFFFFF};
    for (size_t i = 0; i < 3; i++) {
        npk_st32le(b + 4, versions[i]);
        npk_cnn2_validate(b, sizeof b, &rep, NULL);
        assert_int_equal(rep.errors, 1);
        assert_int_equal(rep.items[0].check, NPK_CNN2_E_VERSION);
        assert_int_equal(rep.items[0].offset, 4);
        assert_false(rep.header_read);
        npk_cnn2_report_free(&rep);
        npk_cnn2_model m;
        npk_error err = {0};
        assert_int_equal(npk_cnn2_parse(b, sizeof b, &m, &err), NPK_E_UNSUPPORTED);
    }
    /* Version 2 needs 20 bytes even where version 1 would need 16. */
    npk_st32le(b + 4, 2);
    for (size_t n = 16; n < 20; n++) {
        npk_cnn2_validate(b, n, &rep, NULL);
        assert_int_equal(rep.errors, 1);
        assert_int_equal(rep.items[0].check, NPK_CNN2_E_SHORT);
        npk_cnn2_report_free(&rep);
    }
    /* num_layers 0, and a huge num_layers: the table runs past the end, no
     * allocation, the offset is the first incomplete record. */
    npk_st32le(b + 8, 0);
    npk_cnn2_validate(b, 20, &rep, NULL);
    assert_int_equal(rep.items[0].check, NPK_CNN2_E_NO_LAYERS);
    assert_int_equal(rep.items[0].offset, 8);
    npk_cnn2_report_free(&rep);
    npk_st32le(b + 8, 0xFFFFFFFF);
    npk_cnn2_validate(b, 50, &rep, NULL);
    assert_int_equal(rep.errors, 1);
    assert_int_equal(rep.items[0].check, NPK_CNN2_E_TABLE);
    assert_int_equal(rep.items[0].offset, 40);
    npk_cnn2_report_free(&rep);
    /* A bad magic does not stop the other checks. */
    memcpy(b, "PK\3\4", 4);
    npk_st32le(b + 8, 1);
    npk_st32le(b + 12, 48);
    uint32_t l0[5] = {1, 12, 4, 0, 48};
    for (int i = 0; i < 5; i++) npk_st32le(b + 20 + 4 * i, l0[i]);
    npk_cnn2_validate(b, 64, &rep, NULL);
    assert_int_equal(rep.errors, 2);
    assert_int_equal(rep.items[0].check, NPK_CNN2_E_MAGIC);
    assert_int_equal(rep.items[1].check, NPK_CNN2_E_SIZE);
    npk_cnn2_report_free(&rep);
}

/* weight_count is checked in 64 bits: k = 2^32 - 1 must not wrap. */
static void test_count_overflow(void **state)
{
    (void)state;
    uint8_t b[40 + 8] = {0};
    memcpy(b, "CNN2", 4);
    npk_st32le(b + 4, 2);
    npk_st32le(b + 8, 1);
    npk_st32le(b + 12, 4);
    uint32_t l0[5] = {0xFFFFFFFF, 0xFFFFFFFF, 8, 0, 4};
    for (int i = 0; i < 5; i++) npk_st32le(b + 20 + 4 * i, l0[i]);
    npk_cnn2_report rep;
    npk_cnn2_validate(b, sizeof b, &rep, NULL);
    assert_int_equal(rep.errors, 1);
    assert_int_equal(rep.items[0].check, NPK_CNN2_E_COUNT);
    assert_non_null(strstr(rep.items[0].msg, "overflows"));
    npk_cnn2_report_free(&rep);
    /* A count that would match only modulo 2^32: k = 65537, out*in = 1. */
    uint32_t l1[5] = {65537, 1, 1, 0, (uint32_t)(65537ull * 65537ull)};
    for (int i = 0; i < 5; i++) npk_st32le(b + 20 + 4 * i, l1[i]);
    npk_st32le(b + 12, l1[4]);
    npk_cnn2_validate(b, sizeof b, &rep, NULL);
    assert_int_equal(rep.items[0].check, NPK_CNN2_E_COUNT);
    npk_cnn2_report_free(&rep);
}

static void test_warnings(void **state)
{
    (void)state;
    /* 2 layers: 13 -> 3 (k=1), then 12 -> 5: every warning once, plus inf. */
    npk_cnn2_shape s[2] = {{1, 13, 3}, {1, 12, 5}};
    npk_cnn2_model m;
    npk_error err = {0};
    assert_int_equal(npk_cnn2_build(&m, 2, 0, 2, s, &err), NPK_OK);
    m.weights[7] = 0x7C00;  /* +inf */
    m.weights[50] = 0xFE01; /* NaN */
    uint8_t *b;
    size_t len;
    assert_int_equal(npk_cnn2_encode(&m, &b, &len, &err), NPK_OK);
    npk_cnn2_report rep;
    npk_cnn2_validate(b, len, &rep, NULL);
    assert_int_equal(rep.errors, 0);
    assert_int_equal(rep.warnings, 4);
    assert_int_equal(rep.items[0].check, NPK_CNN2_W_IN_FIRST);
    assert_int_equal(rep.items[0].offset, 0x18);
    assert_int_equal(rep.items[1].check, NPK_CNN2_W_IN_CHAIN);
    assert_int_equal(rep.items[1].offset, 0x2c);
    assert_int_equal(rep.items[2].check, NPK_CNN2_W_OUT_LAST);
    assert_int_equal(rep.items[2].offset, 0x30);
    assert_int_equal(rep.items[3].check, NPK_CNN2_W_NONFINITE);
    assert_int_equal(rep.items[3].offset, 20 + 40 + 2 * 7);
    assert_non_null(strstr(rep.items[3].msg, "2 weight"));
    for (size_t i = 0; i < rep.count; i++) assert_true(rep.items[i].warning);
    npk_cnn2_report_free(&rep);
    /* Warnings do not stop parsing. */
    npk_cnn2_model r;
    assert_int_equal(npk_cnn2_parse(b, len, &r, &err), NPK_OK);
    npk_cnn2_free(&r);
    free(b);
    npk_cnn2_free(&m);
}

static void test_writer_checks(void **state)
{
    (void)state;
    npk_cnn2_shape s = {3, 12, 4};
    npk_cnn2_model m;
    npk_error err = {0};
    uint8_t *b;
    size_t len;
    assert_int_equal(npk_cnn2_build(&m, 1, 2, 1, &s, &err), NPK_E_ARG); /* v1 has no mip */
    npk_error_clear(&err);
    s.kernel_size = 4;
    assert_int_equal(npk_cnn2_build(&m, 2, 0, 1, &s, &err), NPK_E_ARG);
    npk_error_clear(&err);
    s = (npk_cnn2_shape){3, 12, 9};
    assert_int_equal(npk_cnn2_build(&m, 2, 0, 1, &s, &err), NPK_E_ARG);
    npk_error_clear(&err);
    s = (npk_cnn2_shape){3, 12, 4};
    assert_int_equal(npk_cnn2_build(&m, 2, 3, 1, &s, &err), NPK_OK);
    m.layers[0].weight_offset = 1; /* corrupted in memory: refused */
    assert_int_equal(npk_cnn2_encode(&m, &b, &len, &err), NPK_E_ARG);
    npk_error_clear(&err);
    m.layers[0].weight_offset = 0;
    m.mip_level = 4;
    assert_int_equal(npk_cnn2_encode(&m, &b, &len, &err), NPK_E_ARG);
    npk_error_clear(&err);
    m.mip_level = 3;
    assert_int_equal(npk_cnn2_encode(&m, &b, &len, &err), NPK_OK);
    assert_int_equal(len, 904);
    assert_int_equal(npk_ld32le(b + 16), 3);
    free(b);
    npk_cnn2_free(&m);
}

static npk_tensor make_tensor(const char *name, npk_dtype dt, int64_t o, int64_t i, int64_t kh,
                              int64_t kw)
{
    npk_tensor t;
    int64_t shape[4] = {o, i, kh, kw};
    npk_tensor_alloc(&t, name, dt, 4, shape, NULL);
    return t;
}

static npk_status from_one(npk_tensor t, npk_error *err)
{
    npk_tensor_set set;
    npk_set_init(&set);
    npk_set_add(&set, &t, NULL);
    npk_cnn2_model m;
    npk_status st = npk_cnn2_from_tensors(&set, 2, 0, &m, err);
    npk_cnn2_free(&m);
    npk_set_free(&set);
    return st;
}

static void test_from_tensors(void **state)
{
    (void)state;
    npk_error err = {0};
    assert_int_equal(from_one(make_tensor("layer.0.weight", NPK_F32, 4, 12, 3, 3), &err), NPK_OK);
    assert_int_equal(from_one(make_tensor("layer.0.weight", NPK_F16, 4, 12, 3, 3), &err), NPK_OK);
    assert_int_equal(from_one(make_tensor("layer.0.bias", NPK_F32, 4, 12, 3, 3), &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(from_one(make_tensor("layer.1.weight", NPK_F32, 4, 12, 3, 3), &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(from_one(make_tensor("layer.00.weight", NPK_F32, 4, 12, 3, 3), &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(from_one(make_tensor("layer.0.weight", NPK_F64, 4, 12, 3, 3), &err),
                     NPK_E_UNSUPPORTED);
    npk_error_clear(&err);
    assert_int_equal(from_one(make_tensor("layer.0.weight", NPK_F32, 4, 12, 3, 5), &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(from_one(make_tensor("layer.0.weight", NPK_F32, 4, 12, 2, 2), &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(from_one(make_tensor("layer.0.weight", NPK_F32, 9, 12, 3, 3), &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);

    /* Two layers given out of order; f32 rounds to nearest even f16. */
    npk_tensor_set set;
    npk_set_init(&set);
    npk_tensor t1 = make_tensor("layer.1.weight", NPK_F32, 4, 12, 1, 1);
    npk_tensor t0 = make_tensor("layer.0.weight", NPK_F32, 4, 12, 5, 5);
    ((float *)t1.data)[0] = 1.0f + 1.0f / 2048; /* halfway between 0x3C00 and 0x3C01: to even */
    ((float *)t1.data)[1] = 1.0f + 3.0f / 2048; /* halfway between 0x3C01 and 0x3C02: to even */
    ((float *)t0.data)[5] = -0.5f;
    npk_set_add(&set, &t1, NULL);
    npk_set_add(&set, &t0, NULL);
    npk_cnn2_model m;
    assert_int_equal(npk_cnn2_from_tensors(&set, 2, 1, &m, &err), NPK_OK);
    assert_int_equal(m.num_layers, 2);
    assert_int_equal(m.layers[0].kernel_size, 5);
    assert_int_equal(m.layers[1].weight_offset, 1200);
    assert_int_equal(m.weights[5], 0xB800);
    assert_int_equal(m.weights[1200], 0x3C00);
    assert_int_equal(m.weights[1201], 0x3C02);
    npk_cnn2_free(&m);
    npk_set_free(&set);
}

/* `npukit info` facts come from the real validator. */
static void test_summary(void **state)
{
    (void)state;
    npk_mapped f;
    npk_fixture_map("cnn2/synthetic_random_3layer_v2.bin", &f);
    const npk_format *fmt = npk_detect(f.data, f.size);
    assert_non_null(fmt);
    assert_string_equal(fmt->name, "cnn2");
    npk_summary s;
    memset(&s, 0, sizeof s);
    assert_int_equal(fmt->summarize(f.data, f.size, &s, NULL), NPK_OK);
    int seen = 0;
    for (int i = 0; i < s.count; i++) {
        const npk_kv *kv = &s.kv[i];
        if (!strcmp(kv->key, "mip_level")) seen += kv->v.u == 1;
        if (!strcmp(kv->key, "total_weights")) seen += kv->v.u == 2064;
        if (!strcmp(kv->key, "num_layers")) seen += kv->v.u == 3;
        if (!strcmp(kv->key, "valid")) seen += kv->v.b;
        if (!strcmp(kv->key, "layer1")) seen += strstr(kv->s, "k=5") != NULL;
    }
    assert_int_equal(seen, 5);
    npk_unmap_file(&f);
    npk_fixture_map("cnn2/bad_offset.bin", &f);
    memset(&s, 0, sizeof s);
    npk_error err = {0};
    assert_int_equal(npk_cnn2_summarize(f.data, f.size, &s, &err), NPK_E_FORMAT);
    assert_true(s.malformed); /* still described, with the first problem as the error */
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 0x20);
    for (int i = 0; i < s.count; i++)
        if (!strcmp(s.kv[i].key, "valid")) assert_false(s.kv[i].v.b);
    npk_unmap_file(&f);
}

/* Was: `cnn2 unpack` of a 2 GiB file held 12.6 GB and wrote 4.29 GB, past
 * the 4 GiB limit. The float32 safetensors is streamed, and its size is
 * checked before the first byte: here 1G weights (4 GiB of float32) are
 * refused without a weight being read (the weights buffer is 4 halves). */
static void test_unpack_output_limit(void **state)
{
    (void)state;
    if (!npk_safetensors_available()) skip();
    npk_cnn2_layer layers[8];
    for (uint32_t i = 0; i < 8; i++)
        layers[i] = (npk_cnn2_layer){1, 1u << 24, 8, i << 27, 1u << 27};
    uint16_t few[4] = {0};
    npk_cnn2_model m = {2, 8, 1u << 30, 0, layers, few};
    npk_out *o;
    npk_error err = {0};
    const char *p = npk_tmp("huge.safetensors");
    assert_int_equal(npk_out_open(&o, p, &err), NPK_OK);
    assert_int_equal(npk_cnn2_st_write(&m, o, &err), NPK_E_LIMIT);
    assert_non_null(strstr(err.msg, "4 GiB output limit"));
    npk_out_abort(o);
    assert_false(npk_exists(p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_headers),
        cmocka_unit_test(test_fixture_hashes),
        cmocka_unit_test(test_bad_fixtures),
        cmocka_unit_test(test_truncation_every_byte),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_odd_count_padding),
        cmocka_unit_test(test_every_problem_listed),
        cmocka_unit_test(test_header_errors),
        cmocka_unit_test(test_count_overflow),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_writer_checks),
        cmocka_unit_test(test_from_tensors),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_unpack_output_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
