/* What the hardening work found, pinned at library level with the exact
 * status and offset (the CLI-level cases are in test_corrupt_*.c). Each
 * test names the behaviour that was wrong before. */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/cnn2_render.h"
#include "png_crc.h"
#include "npukit/edgetpu.h"
#include "npukit/mgk.h"
#include "npukit/rknpu_stream.h"
#include "core/formats.h"

/* A 5x3 RGBA picture as PNG. */
static uint8_t *picture(size_t *len)
{
    uint8_t *rgba = NULL, *png = NULL;
    npk_error err = {0};
    if (npk_cnn2_pattern(5, 3, 1, true, &rgba, &err) ||
        npk_cnn2_png_encode(rgba, 5, 3, 4, &png, len, &err))
        fail_msg("%s", err.msg);
    free(rgba);
    return png;
}

/* Was: libspng stops after the image data, so a file cut inside (or
 * before) IEND decoded as if whole. Now an error at the end of the file. */
static void test_png_cut_before_iend(void **state)
{
    (void)state;
    if (!npk_cnn2_png_available()) skip();
    size_t len;
    uint8_t *png = picture(&len);
    for (size_t cut = 1; cut <= 12; cut++) {
        npk_cnn2_image img;
        npk_error err = {0};
        assert_int_equal(npk_cnn2_png_decode(png, len - cut, &img, &err), NPK_E_FORMAT);
        assert_true(err.has_offset);
        assert_int_equal(err.offset, len - cut);
    }
    npk_cnn2_image img;
    assert_int_equal(npk_cnn2_png_decode(png, len, &img, NULL), NPK_OK);
    npk_cnn2_image_free(&img);
    free(png);
}

/* Was: PNG errors had no offset, and an ancillary chunk with a bad CRC was
 * silently dropped (a lost tRNS changes the D channel). */
static void test_png_offsets_and_ancillary_crc(void **state)
{
    (void)state;
    if (!npk_cnn2_png_available()) skip();
    size_t len;
    uint8_t *png = picture(&len);
    /* Insert a tEXt chunk after IHDR (which ends at 33), then break its CRC. */
    static const uint8_t text[] = {0, 0, 0, 5, 't', 'E', 'X', 't', 'a', 0, 'b', 'c', 'd'};
    uint8_t *b = malloc(len + sizeof text + 4);
    memcpy(b, png, 33);
    memcpy(b + 33, text, sizeof text);
    npk_st32be(b + 33 + sizeof text, npk_png_crc(text + 4, sizeof text - 4));
    memcpy(b + 33 + sizeof text + 4, png + 33, len - 33);
    size_t n = len + sizeof text + 4;
    npk_cnn2_image img;
    npk_error err = {0};
    assert_int_equal(npk_cnn2_png_decode(b, n, &img, &err), NPK_OK);
    npk_cnn2_image_free(&img);
    b[33 + sizeof text] ^= 1; /* the tEXt CRC */
    assert_int_equal(npk_cnn2_png_decode(b, n, &img, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 33 + sizeof text); /* where the CRC was read */
    /* A broken IHDR CRC: the error names the first read (signature + IHDR). */
    memcpy(b, png, len);
    b[29] ^= 1;
    npk_error_clear(&err);
    assert_int_equal(npk_cnn2_png_decode(b, len, &img, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    free(b);
    free(png);
}

/* Was: a hex stream cut inside a line was not hex any more (every line had
 * to be whole), so it was read as binary: "5 of 5 entries flagged". */
static void test_rknpu_hex_cut_line(void **state)
{
    (void)state;
    static const char text[] = "10010000000e4004\n020100000120100c\n0201000000";
    npk_rk_stream s;
    npk_error err = {0};
    assert_true(npk_rk_is_hex_text((const uint8_t *)text, strlen(text)));
    assert_int_equal(
        npk_rk_stream_parse((const uint8_t *)text, strlen(text), NPK_RK_ENC_AUTO, &s, &err),
        NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 34);
    /* `info` recognises it as a stream and its summary fails there. */
    assert_true(npk_rknpu_stream_probe((const uint8_t *)text, strlen(text)));
    /* Text whose first entry line is not a word stays text. */
    static const char prose[] = "# notes\nhello world\n10010000000e4004\n";
    assert_false(npk_rk_is_hex_text((const uint8_t *)prose, strlen(prose)));
}

/* Was: DMA-hint check errors had no offset. */
static void test_edgetpu_hint_offset(void **state)
{
    (void)state;
    npk_etpu_synth_opts o = {64, 0, NULL, false};
    uint8_t *buf;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_etpu_synth_dense(&o, &buf, &len, &err), NPK_OK);
    npk_etpu_model m;
    assert_int_equal(npk_etpu_parse(buf, len, &m, &err), NPK_OK);
    npk_etpu_executable e = m.ops[0].packages[0].executables[0];
    assert_true(e.nhints > 0);
    npk_etpu_dma_hint *h = malloc(e.nhints * sizeof *h);
    memcpy(h, e.hints, e.nhints * sizeof *h);
    e.hints = h;
    for (uint32_t i = 0; i < e.nhints; i++) {
        assert_true(h[i].offset > 0 && h[i].offset < len);
        if (h[i].kind == NPK_ETPU_HINT_INSTRUCTION) {
            h[i].instruction_chunk_index = 99;
            assert_int_equal(npk_etpu_check_hints(&e, &err), NPK_E_FORMAT);
            assert_true(err.has_offset);
            assert_int_equal(err.offset, h[i].offset);
            break;
        }
    }
    free(h);
    npk_etpu_free(&m);
    free(buf);
}

/* Was: e_shstrndx could name any section with file bytes as the name table. */
static void test_mgk_shstrndx_not_strtab(void **state)
{
    (void)state;
    static const npk_mgk_synth_layer ls[] = {{16, 8, 3, 3, 8, 1, 1, NULL}};
    npk_mgk_synth_spec spec = {ls, 1, 1, false, false, 0, 0};
    uint8_t *buf;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_OK);
    npk_mgk_model m;
    assert_int_equal(npk_mgk_parse(buf, len, &m, &err), NPK_OK);
    uint16_t dynsym = 0;
    for (uint16_t i = 0; i < m.elf.nsections; i++)
        if (m.elf.sections[i].type == 11) dynsym = i;
    npk_mgk_free(&m);
    assert_true(dynsym > 0);
    npk_st16le(buf + 50, dynsym); /* .dynsym as the section-name table */
    assert_int_equal(npk_mgk_parse(buf, len, &m, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 50);
    free(buf);
}

/* Was: a .npy cut after its magic was "text", and `info` of an invalid
 * CNN v2 file exited 0. */
static void test_detection_of_damaged_files(void **state)
{
    (void)state;
    assert_true(npk_npy_probe((const uint8_t *)"\x93NUMPY", 6));
    npk_summary s;
    memset(&s, 0, sizeof s);
    npk_error err = {0};
    static const uint8_t cut_npy[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    assert_int_not_equal(npk_npy_summarize(cut_npy, sizeof cut_npy, &s, &err), NPK_OK);
    assert_true(err.has_offset);
    /* A CNN v2 header with a bad layer table: described, then an error. */
    uint8_t cnn2[40] = {'C', 'N', 'N', '2', 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    memset(&s, 0, sizeof s);
    npk_error_clear(&err);
    assert_int_equal(npk_cnn2_summarize(cnn2, sizeof cnn2, &s, &err), NPK_E_FORMAT);
    assert_true(s.malformed && s.title[0]);
    assert_true(err.has_offset);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_cut_before_iend),
        cmocka_unit_test(test_png_offsets_and_ancillary_crc),
        cmocka_unit_test(test_rknpu_hex_cut_line),
        cmocka_unit_test(test_edgetpu_hint_offset),
        cmocka_unit_test(test_mgk_shstrndx_not_strtab),
        cmocka_unit_test(test_detection_of_damaged_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
