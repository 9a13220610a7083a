/* The C register table against registers.tsv, entry by entry: block, offset,
 * name, and every field's name and bit range in order. Plus the lookups and
 * field accessors that everything else derives from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/rknpu_regs.h"

static void test_table_matches_tsv(void **state)
{
    (void)state;
    npk_mapped m;
    npk_fixture_map("rknpu/registers.tsv", &m);
    char *text = malloc(m.size + 1);
    memcpy(text, m.data, m.size);
    text[m.size] = 0;
    npk_unmap_file(&m);

    bool seen[NPK_RKR_COUNT] = {0};
    int lines = 0, nfields = 0;
    char *save1;
    for (char *line = strtok_r(text, "\n", &save1); line; line = strtok_r(NULL, "\n", &save1)) {
        char *cols[4];
        char *p = line;
        for (int i = 0; i < 4; i++) {
            cols[i] = p;
            char *tab = strchr(p, '\t');
            if (i < 3) {
                assert_non_null(tab);
                *tab = 0;
                p = tab + 1;
            }
        }
        unsigned off = (unsigned)strtoul(cols[1], NULL, 16);
        npk_rk_reg r = npk_rk_reg_by_offset((uint16_t)off);
        if (r == NPK_RKR_NONE) fail_msg("register %s 0x%04X %s missing", cols[0], off, cols[2]);
        const npk_rk_reg_info *ri = npk_rk_reg_get(r);
        assert_false(seen[r]);
        seen[r] = true;
        assert_string_equal(npk_rk_block_get(ri->block)->name, cols[0]);
        assert_int_equal(ri->offset, off);
        assert_string_equal(ri->name, cols[2]);
        assert_false(ri->undocumented);
        char full[96];
        snprintf(full, sizeof full, "%s_%s", cols[0], cols[2]);
        assert_string_equal(ri->full_name, full);
        assert_int_equal(npk_rk_reg_by_name(full), r);

        unsigned k = 0;
        char *save2;
        for (char *f = strtok_r(cols[3], " ", &save2); f; f = strtok_r(NULL, " ", &save2), k++) {
            char name[64];
            unsigned hi, lo;
            if (sscanf(f, "%63[A-Z0-9_][%u:%u]", name, &hi, &lo) != 3) {
                assert_int_equal(sscanf(f, "%63[A-Z0-9_][%u]", name, &hi), 2);
                lo = hi;
            }
            assert_true(k < ri->field_count);
            const npk_rk_field_info *fi = npk_rk_field_get((npk_rk_field)(ri->first_field + k));
            if (strcmp(fi->name, name) || fi->hi != hi || fi->lo != lo)
                fail_msg("%s field %u: table %s[%u:%u], tsv %s[%u:%u]", full, k, fi->name, fi->hi,
                         fi->lo, name, hi, lo);
            assert_int_equal(fi->reg, r);
            assert_int_equal(npk_rk_field_by_name(r, name), ri->first_field + k);
            nfields++;
        }
        assert_int_equal(k, ri->field_count);
        lines++;
    }
    free(text);
    assert_int_equal(lines, 199);
    /* Exactly the two undocumented registers remain. */
    int extra = 0;
    for (int r = 0; r < NPK_RKR_COUNT; r++) {
        if (seen[r]) continue;
        const npk_rk_reg_info *ri = npk_rk_reg_get((npk_rk_reg)r);
        assert_true(ri->undocumented);
        assert_true(ri->offset == 0x3030 || ri->offset == 0x40C4);
        nfields += (int)ri->field_count;
        extra++;
    }
    assert_int_equal(extra, 2);
    assert_int_equal(NPK_RKR_COUNT, 201);
    assert_int_equal(nfields, NPK_RKF_COUNT);
}

static void test_blocks(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint32_t code;
        uint16_t base;
        int regs;
    } want[] = {{"PC", 0x100, 0x0000, 12},        {"CNA", 0x200, 0x1000, 52},
                {"CORE", 0x800, 0x3000, 9},       {"DPU", 0x1000, 0x4000, 53},
                {"DPU_RDMA", 0x2000, 0x5000, 20}, {"PPU", 0x4000, 0x6000, 20},
                {"PPU_RDMA", 0x8000, 0x7000, 10}, {"DDMA", 0x10000, 0x8000, 12},
                {"SDMA", 0x20000, 0x9000, 12},    {"GLOBAL", 0x40000, 0xF000, 1}};
    assert_int_equal(NPK_RKB_COUNT, 10);
    for (int b = 0; b < NPK_RKB_COUNT; b++) {
        const npk_rk_block_info *bi = npk_rk_block_get((npk_rk_block)b);
        assert_string_equal(bi->name, want[b].name);
        assert_int_equal(bi->code, want[b].code);
        assert_int_equal(bi->base, want[b].base);
        assert_int_equal(npk_rk_block_by_name(want[b].name), b);
        assert_int_equal(npk_rk_block_by_code(want[b].code), b);
        assert_int_equal(npk_rk_block_of_offset((uint16_t)(want[b].base + 0x10)), b);
        int n = 0;
        for (int r = 0; r < NPK_RKR_COUNT; r++) {
            const npk_rk_reg_info *ri = npk_rk_reg_get((npk_rk_reg)r);
            if (ri->block != b) continue;
            n++;
            assert_int_equal(ri->offset & 0xF000, want[b].base); /* inside its window */
        }
        assert_int_equal(n, want[b].regs);
    }
    assert_int_equal(npk_rk_block_by_code(0x300), NPK_RKB_NONE);
    assert_int_equal(npk_rk_block_of_offset(0x2000), NPK_RKB_NONE);
    assert_null(npk_rk_block_get(NPK_RKB_COUNT));
    assert_null(npk_rk_reg_get(NPK_RKR_NONE));
}

/* The generated identifiers point at the right entries. */
static void test_identifiers(void **state)
{
    (void)state;
    const npk_rk_reg_info *ri = npk_rk_reg_get(NPK_RKR_CNA_CONV_CON2);
    assert_int_equal(ri->offset, 0x1010);
    const npk_rk_field_info *fi = npk_rk_field_get(NPK_RKF_CNA_CONV_CON2_FEATURE_GRAINS);
    assert_string_equal(fi->name, "FEATURE_GRAINS");
    assert_int_equal(fi->hi, 13);
    assert_int_equal(fi->lo, 4);
    assert_int_equal(fi->reg, NPK_RKR_CNA_CONV_CON2);
    assert_int_equal(npk_rk_reg_get(NPK_RKR_CORE_UNDOC_3030)->offset, 0x3030);
    assert_int_equal(npk_rk_reg_get(NPK_RKR_DPU_UNDOC_40C4)->offset, 0x40C4);
    assert_int_equal(npk_rk_reg_get(NPK_RKR_GLOBAL_OPERATION_ENABLE)->offset, 0xF008);
    assert_int_equal(npk_rk_reg_get(NPK_RKR_DPU_RDMA_RDMA_S_POINTER)->offset, 0x5004);
    assert_string_equal(npk_rk_reg_get(NPK_RKR_DPU_RDMA_RDMA_S_POINTER)->full_name,
                        "DPU_RDMA_RDMA_S_POINTER");
    assert_int_equal(npk_rk_reg_by_offset(0x1000 + 0x0C), NPK_RKR_CNA_CONV_CON1);
    assert_int_equal(npk_rk_reg_by_offset(0x100E), NPK_RKR_NONE);
    assert_int_equal(npk_rk_reg_by_offset(0xFFFF), NPK_RKR_NONE);
    /* Every 16-bit offset: the register with that offset in the table (a
     * linear search), else none. */
    for (unsigned off = 0; off <= 0xFFFF; off++) {
        npk_rk_reg want = NPK_RKR_NONE;
        for (int r = 0; r < NPK_RKR_COUNT; r++)
            if (npk_rk_reg_get((npk_rk_reg)r)->offset == off) want = (npk_rk_reg)r;
        if (npk_rk_reg_by_offset((uint16_t)off) != want)
            fail_msg("offset 0x%04x: register %d, want %d", off,
                     (int)npk_rk_reg_by_offset((uint16_t)off), (int)want);
    }
    assert_int_equal(npk_rk_reg_by_name("CNA_NOPE"), NPK_RKR_NONE);
    assert_int_equal(npk_rk_field_by_name(NPK_RKR_CNA_CONV_CON2, "NOPE"), NPK_RKF_NONE);
    /* The table is sorted by offset. */
    for (int r = 1; r < NPK_RKR_COUNT; r++)
        assert_true(npk_rk_reg_get((npk_rk_reg)(r - 1))->offset <
                    npk_rk_reg_get((npk_rk_reg)r)->offset);
}

/* Accessors over every field, against plain shift-and-mask arithmetic. */
static void test_field_accessors(void **state)
{
    (void)state;
    uint64_t rng = 7;
    for (int f = 0; f < NPK_RKF_COUNT; f++) {
        const npk_rk_field_info *fi = npk_rk_field_get((npk_rk_field)f);
        unsigned w = fi->hi - fi->lo + 1u;
        uint64_t max = (1ull << w) - 1;
        assert_true(fi->hi >= fi->lo && fi->hi < 32);
        assert_int_equal(npk_rk_field_width((npk_rk_field)f), w);
        assert_int_equal(npk_rk_field_max((npk_rk_field)f), max);
        assert_int_equal(npk_rk_field_mask((npk_rk_field)f), (uint32_t)(max << fi->lo));
        for (int i = 0; i < 20; i++) {
            uint64_t v = npk_rand(&rng) & max;
            uint32_t packed = 0, reg = (uint32_t)npk_rand(&rng);
            assert_true(npk_rk_field_pack((npk_rk_field)f, v, &packed));
            assert_int_equal(packed, (uint32_t)(v << fi->lo));
            assert_int_equal(npk_rk_field_extract((npk_rk_field)f, packed), v);
            uint32_t ins = npk_rk_field_insert((npk_rk_field)f, reg, (uint32_t)v);
            assert_int_equal(npk_rk_field_extract((npk_rk_field)f, ins), v);
            assert_int_equal(ins & ~npk_rk_field_mask((npk_rk_field)f),
                             reg & ~npk_rk_field_mask((npk_rk_field)f));
        }
        uint32_t keep = 0x5A5A5A5A;
        if (max < UINT32_MAX) assert_false(npk_rk_field_pack((npk_rk_field)f, max + 1, &keep));
        assert_int_equal(keep, max < UINT32_MAX ? 0x5A5A5A5A : keep);
        assert_false(npk_rk_field_pack((npk_rk_field)f, 1ull << 32, &keep));
    }
    /* Fields of one register never overlap. */
    for (int r = 0; r < NPK_RKR_COUNT; r++) {
        const npk_rk_reg_info *ri = npk_rk_reg_get((npk_rk_reg)r);
        uint32_t seen = 0;
        for (unsigned i = 0; i < ri->field_count; i++) {
            uint32_t mk = npk_rk_field_mask((npk_rk_field)(ri->first_field + i));
            assert_int_equal(seen & mk, 0);
            seen |= mk;
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_tsv),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_identifiers),
        cmocka_unit_test(test_field_accessors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
