/* Stream entries and whole streams: golden streams decode cleanly and
 * re-encode to themselves, odd entries are flagged (never dropped), and the
 * readers report malformed input at the right offset. */
#include <stdlib.h>
#include <string.h>

#include "rk_fixtures.h"

static void test_golden_decode(void **state)
{
    (void)state;
    gold_case cases[16];
    int n = gold_cases(cases, 16);
    for (int i = 0; i < n; i++) {
        npk_rk_stream s;
        gold_stream(cases[i].name, &s);
        int writes = 0;
        for (size_t e = 0; e < s.count; e++) {
            npk_rk_entry d;
            npk_rk_entry_decode(s.entries[e], &d);
            if (d.problems)
                fail_msg("%s entry %zu: %s", cases[i].name, e, npk_rk_problem_text(d.problems));
            assert_int_equal(npk_rk_entry_encode(d.op, d.value, d.offset), s.entries[e]);
            if (d.kind == NPK_RK_WRITE) {
                writes++;
                assert_int_not_equal(d.reg, NPK_RKR_NONE); /* every write is named */
                assert_int_equal(npk_rk_write(d.reg, d.value), s.entries[e]);
                assert_int_equal(npk_rk_reg_get(d.reg)->block, d.block);
            }
        }
        assert_int_equal(writes, 105);
        npk_rk_entry d;
        npk_rk_entry_decode(s.entries[0], &d);
        assert_int_equal(d.reg, NPK_RKR_DPU_S_POINTER);
        assert_int_equal(d.value, 0xE);
        npk_rk_entry_decode(s.entries[53], &d);
        assert_int_equal(d.reg, NPK_RKR_CORE_UNDOC_3030);
        npk_rk_entry_decode(s.entries[91], &d);
        assert_int_equal(d.reg, NPK_RKR_DPU_UNDOC_40C4);
        npk_rk_entry_decode(s.entries[104], &d);
        assert_int_equal(d.kind, NPK_RK_NOP);
        npk_rk_entry_decode(s.entries[105], &d);
        assert_int_equal(d.reg, NPK_RKR_PC_REGISTER_AMOUNTS);
        npk_rk_entry_decode(s.entries[106], &d);
        assert_int_equal(d.kind, NPK_RK_MARKER);
        npk_rk_entry_decode(s.entries[107], &d);
        assert_int_equal(d.kind, NPK_RK_OP_EN);
        assert_int_equal(d.reg, NPK_RKR_PC_OPERATION_ENABLE);
        assert_int_equal(d.layout, NPK_RKR_GLOBAL_OPERATION_ENABLE);
        assert_int_equal(d.value, 0xD);

        npk_rk_stream_stats st;
        npk_rk_stream_stats_of(s.entries, s.count, &st);
        assert_int_equal(st.entries, 108);
        assert_int_equal(st.writes, 105);
        assert_int_equal(st.nops, 1);
        assert_int_equal(st.markers, 1);
        assert_int_equal(st.op_enables, 1);
        assert_int_equal(st.enable_masks, 0xD);
        assert_int_equal(st.undocumented, 2);
        assert_int_equal(st.unknown_regs + st.unknown_ops + st.block_mismatch + st.chain_links, 0);
        assert_int_equal(st.blocks_written, 1u << NPK_RKB_PC | 1u << NPK_RKB_CNA |
                                                1u << NPK_RKB_CORE | 1u << NPK_RKB_DPU);
        assert_int_equal(st.first_problem, SIZE_MAX);

        /* Binary round trip through the reader. */
        uint8_t *bin = malloc(s.count * 8);
        npk_rk_stream_to_bin(s.entries, s.count, bin);
        assert_int_equal(bin[0], s.entries[0] & 0xFF); /* little-endian */
        npk_rk_stream s2;
        npk_error err = {0};
        assert_int_equal(npk_rk_stream_parse(bin, s.count * 8, NPK_RK_ENC_AUTO, &s2, &err), NPK_OK);
        assert_int_equal(s2.encoding, NPK_RK_ENC_BINARY);
        assert_int_equal(s2.count, s.count);
        assert_memory_equal(s2.entries, s.entries, s.count * 8);
        assert_int_equal(s2.src_off[5], 40);
        npk_rk_stream_free(&s2);
        free(bin);
        npk_rk_stream_free(&s);
    }
}

static void test_odd_entries(void **state)
{
    (void)state;
    static const struct {
        uint64_t raw;
        npk_rk_kind kind;
        unsigned problems;
        npk_rk_reg reg;
    } cases[] = {
        {0x0201000001201234ull, NPK_RK_WRITE, NPK_RK_BAD_REG, NPK_RKR_NONE},
        {0x0201000000004004ull, NPK_RK_WRITE, NPK_RK_BAD_BLOCK, NPK_RKR_DPU_S_POINTER},
        {0x0301000000001010ull, NPK_RK_UNKNOWN_OP, NPK_RK_BAD_OP, NPK_RKR_CNA_CONV_CON2},
        {0x0202000000001010ull, NPK_RK_UNKNOWN_OP, NPK_RK_BAD_OP, NPK_RKR_CNA_CONV_CON2},
        {0x0041000000010000ull, NPK_RK_MARKER, NPK_RK_BAD_PAYLOAD, NPK_RKR_NONE},
        {0x0000000000000008ull, NPK_RK_NOP, NPK_RK_BAD_PAYLOAD, NPK_RKR_NONE},
        {0x00810000000D0010ull, NPK_RK_OP_EN, NPK_RK_BAD_ENABLE_REG, NPK_RKR_PC_BASE_ADDRESS},
        {0x0081000000020008ull, NPK_RK_OP_EN, NPK_RK_BAD_BITS, NPK_RKR_PC_OPERATION_ENABLE},
        {0x020180000000100Cull, NPK_RK_WRITE, NPK_RK_BAD_BITS, NPK_RKR_CNA_CONV_CON1},
        {0x0201000000008000ull, NPK_RK_WRITE, NPK_RK_BAD_BLOCK, NPK_RKR_DDMA_CFG_OUTSTANDING},
        {0x200100000001500Cull, NPK_RK_WRITE, 0, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_WIDTH},
        {0x0081000000790008ull, NPK_RK_OP_EN, 0, NPK_RKR_PC_OPERATION_ENABLE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        npk_rk_entry d;
        npk_rk_entry_decode(cases[i].raw, &d);
        assert_int_equal(d.kind, cases[i].kind);
        if (d.problems != cases[i].problems)
            fail_msg("case %zu: problems 0x%x want 0x%x", i, d.problems, cases[i].problems);
        assert_int_equal(d.reg, cases[i].reg);
        assert_int_equal(npk_rk_entry_encode(d.op, d.value, d.offset), cases[i].raw);
        if (d.problems) assert_true(strlen(npk_rk_problem_text(d.problems)) > 5);
    }
    /* Registers of blocks without a stream code cannot be written. */
    assert_int_equal(npk_rk_write(NPK_RKR_GLOBAL_OPERATION_ENABLE, 1), 0);
    assert_int_equal(npk_rk_write_op(NPK_RKR_SDMA_CFG_STATUS), 0);
    assert_int_equal(npk_rk_write_op(NPK_RKR_PPU_RDMA_RDMA_S_POINTER), 0x8001);
    assert_int_equal(npk_rk_write(NPK_RKR_NONE, 1), 0);

    uint64_t mixed[] = {0x0201000001201234ull, 0x0301000000001010ull, 0x0101000000400010ull,
                        0x0201000000004004ull};
    npk_rk_stream_stats st;
    npk_rk_stream_stats_of(mixed, 4, &st);
    assert_int_equal(st.unknown_regs, 1);
    assert_int_equal(st.unknown_ops, 1);
    assert_int_equal(st.block_mismatch, 1);
    assert_int_equal(st.chain_links, 1);
    assert_int_equal(st.first_problem, 0);
}

static npk_status parse_text(const char *t, npk_rk_stream *s, npk_error *err)
{
    return npk_rk_stream_parse((const uint8_t *)t, strlen(t), NPK_RK_ENC_AUTO, s, err);
}

/* An entry writing one bit is flagged NPK_RK_BAD_BITS exactly when no
 * field of its register covers that bit: every register, every bit. */
static void test_stray_bits(void **state)
{
    (void)state;
    for (int r = 0; r < NPK_RKR_COUNT; r++) {
        const npk_rk_reg_info *ri = npk_rk_reg_get((npk_rk_reg)r);
        uint32_t covered = 0;
        for (unsigned i = 0; i < ri->field_count; i++)
            covered |= npk_rk_field_mask((npk_rk_field)(ri->first_field + i));
        for (int b = 0; b < 32; b++) {
            uint64_t raw = npk_rk_write((npk_rk_reg)r, (uint32_t)1 << b);
            if (!raw) break; /* no write op for this register */
            npk_rk_entry e;
            npk_rk_entry_decode(raw, &e);
            const bool bad = (e.problems & NPK_RK_BAD_BITS) != 0;
            if (bad != !(covered >> b & 1))
                fail_msg("%s bit %d: BAD_BITS %d, covered 0x%08x", ri->full_name, b, bad, covered);
        }
    }
}

static void test_readers(void **state)
{
    (void)state;
    npk_rk_stream s;
    npk_error err = {0};
    const char *ok = "# a comment\n10010000000e4004\r\n\n  0x0201000001201234  \n0041000000000000";
    assert_true(npk_rk_is_hex_text((const uint8_t *)ok, strlen(ok)));
    assert_int_equal(parse_text(ok, &s, &err), NPK_OK);
    assert_int_equal(s.encoding, NPK_RK_ENC_HEX);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.entries[1], 0x0201000001201234ull);
    assert_int_equal(s.src_off[1], 31);
    npk_rk_stream_free(&s);

    /* Malformed hex: the offset points at the bad character. */
    const char *bad = "10010000000e4004\n020100000120123g\n";
    assert_int_equal(
        npk_rk_stream_parse((const uint8_t *)bad, strlen(bad), NPK_RK_ENC_HEX, &s, &err),
        NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 32);
    npk_error_clear(&err);
    const char *shortl = "10010000000e400\n";
    assert_int_equal(
        npk_rk_stream_parse((const uint8_t *)shortl, strlen(shortl), NPK_RK_ENC_HEX, &s, &err),
        NPK_E_FORMAT);
    npk_error_clear(&err);
    const char *longl = "10010000000e40040\n";
    assert_false(npk_rk_is_hex_text((const uint8_t *)longl, strlen(longl)));
    assert_int_equal(
        npk_rk_stream_parse((const uint8_t *)longl, strlen(longl), NPK_RK_ENC_HEX, &s, &err),
        NPK_E_FORMAT);
    assert_int_equal(err.offset, 16);
    npk_error_clear(&err);
    assert_int_equal(npk_rk_stream_parse((const uint8_t *)"# x\n\n", 5, NPK_RK_ENC_HEX, &s, &err),
                     NPK_E_FORMAT);
    npk_error_clear(&err);

    /* Binary: a trailing partial word is reported at its offset. */
    uint8_t bin[20] = {0};
    assert_int_equal(npk_rk_stream_parse(bin, 20, NPK_RK_ENC_BINARY, &s, &err), NPK_E_FORMAT);
    assert_int_equal(err.offset, 16);
    npk_error_clear(&err);
    assert_int_equal(npk_rk_stream_parse(bin, 0, NPK_RK_ENC_AUTO, &s, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_rk_stream_parse(bin, 16, NPK_RK_ENC_AUTO, &s, &err), NPK_OK);
    assert_int_equal(s.count, 2);
    npk_rk_stream_free(&s);

    /* Hex serialisation: 16 lowercase digits and a newline per entry. */
    uint64_t e[2] = {0x10010000000E4004ull, 0};
    char hex[34];
    npk_rk_stream_to_hex(e, 2, hex);
    assert_memory_equal(hex, "10010000000e4004\n0000000000000000\n", 34);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_decode),
        cmocka_unit_test(test_odd_entries),
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_stray_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
