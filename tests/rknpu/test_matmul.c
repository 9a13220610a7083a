/* Matmul generator: the 9 golden streams byte for byte, the golden field
 * values, an independent re-implementation of the reference formulas over
 * many accepted shapes, and every class of rejected shape. */
#include <stdlib.h>
#include <string.h>

#include "rk_fixtures.h"

static void test_golden_streams(void **state)
{
    (void)state;
    gold_case cases[16];
    int n = gold_cases(cases, 16);
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++) {
        uint64_t out[NPK_RK_MATMUL_ENTRIES];
        npk_error err = {0};
        if (npk_rk_matmul_stream(&cases[i].mm, out, &err))
            fail_msg("%s: %s", cases[i].name, err.msg);
        npk_rk_stream gold;
        gold_stream(cases[i].name, &gold);
        assert_int_equal(gold.count, NPK_RK_MATMUL_ENTRIES);
        for (int e = 0; e < NPK_RK_MATMUL_ENTRIES; e++)
            if (out[e] != gold.entries[e])
                fail_msg("%s entry %d: got %016llx want %016llx", cases[i].name, e,
                         (unsigned long long)out[e], (unsigned long long)gold.entries[e]);
        npk_rk_stream_free(&gold);

        /* The hex serialisation is byte-identical to the golden file. */
        char rel[128], hex[NPK_RK_MATMUL_ENTRIES * 17];
        snprintf(rel, sizeof rel, "rknpu/golden/%.64s.txt", cases[i].name);
        npk_mapped m;
        npk_fixture_map(rel, &m);
        npk_rk_stream_to_hex(out, NPK_RK_MATMUL_ENTRIES, hex);
        assert_int_equal(m.size, sizeof hex);
        assert_memory_equal(m.data, hex, sizeof hex);
        npk_unmap_file(&m);
    }
}

/* fields.csv names registers; each value must be what our stream holds for
 * the register of that name (resolved through the table). */
static void test_golden_fields(void **state)
{
    (void)state;
    gold_case cases[16];
    int ncase = gold_cases(cases, 16);
    npk_mapped m;
    npk_fixture_map("rknpu/golden/fields.csv", &m);
    char *text = malloc(m.size + 1);
    memcpy(text, m.data, m.size);
    text[m.size] = 0;
    npk_unmap_file(&m);
    char *save1, *line = strtok_r(text, "\n", &save1);
    char *cols[40];
    int ncol = 0;
    char *save2;
    for (char *t = strtok_r(line, ",", &save2); t && ncol < 40; t = strtok_r(NULL, ",", &save2))
        cols[ncol++] = t;
    assert_int_equal(ncol, 27);
    int rows = 0, checked = 0;
    while ((line = strtok_r(NULL, "\n", &save1))) {
        char *v[40];
        int nv = 0;
        for (char *t = strtok_r(line, ",", &save2); t && nv < 40; t = strtok_r(NULL, ",", &save2))
            v[nv++] = t;
        assert_int_equal(nv, ncol);
        const gold_case *g = NULL;
        for (int i = 0; i < ncase; i++)
            if (!strcmp(cases[i].name, v[0])) g = &cases[i];
        assert_non_null(g);
        uint64_t out[NPK_RK_MATMUL_ENTRIES];
        npk_error err = {0};
        assert_int_equal(npk_rk_matmul_stream(&g->mm, out, &err), NPK_OK);
        for (int c = 1; c < ncol; c++) {
            npk_rk_reg r = npk_rk_reg_by_name(cols[c]);
            if (r == NPK_RKR_NONE) fail_msg("fields.csv column %s is not in the table", cols[c]);
            int found = 0;
            for (int e = 0; e < NPK_RK_MATMUL_ENTRIES; e++) {
                npk_rk_entry d;
                npk_rk_entry_decode(out[e], &d);
                if (d.kind != NPK_RK_WRITE || d.reg != r) continue;
                found++;
                uint32_t want = (uint32_t)strtoul(v[c], NULL, 16);
                if (d.value != want)
                    fail_msg("%s %s: got 0x%08x want 0x%08x", v[0], cols[c], d.value, want);
                checked++;
            }
            assert_int_equal(found, 1);
        }
        rows++;
    }
    assert_int_equal(rows, 9);
    assert_int_equal(checked, 9 * 26);
    free(text);
}

/* ---- an independent model of the reference generator (reference section 4
 * and 5, raw numbers on purpose: it must not share code with the library) ---- */

#define OP(op, v, r) (((uint64_t)(op) << 48) | ((uint64_t)(uint32_t)(v) << 16) | (r))

static int ref_accepts(unsigned m, unsigned k, unsigned n, int dt)
{
    unsigned b = dt == 2 ? 1 : 2;
    if (!m || !k || !n) return 0;
    if ((m % 4 && m != 1) || k % 32 || n % (dt == 2 ? 32 : 16)) return 0;
    if (m + 1 > 1023 || k > 16384 || n > 8192) return 0;
    if (k * b > 32768) return 0;
    if ((m * k * b + 32767) / 32768 > 11) return 0;
    return 1;
}

static void ref_stream(unsigned M, unsigned K, unsigned N, int dt, uint32_t in, uint32_t wt,
                       uint32_t out_addr, uint64_t *o)
{
    unsigned b = dt == 2 ? 1 : 2, p = dt == 2 ? 0 : 2;
    unsigned q = dt == 0 ? 5 : dt == 1 ? 2 : 4, e = dt == 0 ? 3 : dt == 1 ? 1 : 7;
    unsigned u = dt == 0 ? 4 : dt == 1 ? 2 : 8;
    unsigned D = (M * K * b + 32767) / 32768;
    unsigned entries = (K * b + 63) / 64;
    int S = 4 * ((int)(M / 4) - 1);
    if (S < 0) S += 1;
    int i = 0;
    o[i++] = OP(0x1001, 0xE, 0x4004);
    o[i++] = OP(0x0201, p << 7 | p << 4, 0x100C);
    o[i++] = OP(0x0201, ((M + 1) & 0x3FF) << 4, 0x1010);
    o[i++] = OP(0x0201, 0x9, 0x1014);
    o[i++] = OP(0x0201, 1 << 16 | M, 0x1020);
    o[i++] = OP(0x0201, (K - 1) << 16 | K, 0x1024);
    o[i++] = OP(0x0201, 1, 0x1028);
    o[i++] = OP(0x0201, M, 0x102C);
    o[i++] = OP(0x0201, K * b * N, 0x1030);
    o[i++] = OP(0x0201, K * b, 0x1034);
    o[i++] = OP(0x0201, 1 << 24 | 1 << 16 | N, 0x1038);
    o[i++] = OP(0x0201, (12 - D) << 4 | D, 0x1040);
    o[i++] = OP(0x0201, entries, 0x1044);
    o[i++] = OP(0x0201, 0xB, 0x104C);
    for (int r = 0; r < 4; r++) o[i++] = OP(0x0201, 0x10000, 0x1050 + 4 * r);
    o[i++] = OP(0x0201, 0, 0x1060);
    o[i++] = OP(0x0201, 0, 0x1064);
    o[i++] = OP(0x0201, 0, 0x1068);
    o[i++] = OP(0x0201, in, 0x1070);
    o[i++] = OP(0x0201, 0, 0x1074);
    o[i++] = OP(0x0201, 0xF000F, 0x1078);
    o[i++] = OP(0x0201, 4, 0x107C);
    o[i++] = OP(0x0201, (uint32_t)S & 0xFFFFFFF, 0x1080);
    o[i++] = OP(0x0201, 1 << 16 | M, 0x1084);
    o[i++] = OP(0x0201, K, 0x1088);
    o[i++] = OP(0x0201, 0, 0x1100);
    o[i++] = OP(0x0201, 0, 0x1104);
    o[i++] = OP(0x0201, wt, 0x1110);
    for (int r = 0; r < 16; r++) o[i++] = OP(0x0201, 0, 0x1140 + 4 * r);
    o[i++] = OP(0x0201, 0, 0x1180);
    o[i++] = OP(0x0201, 0, 0x1184);
    o[i++] = OP(0x0801, p << 8 | (dt == 2 ? 0 : 1), 0x3010);
    o[i++] = OP(0x0801, (M - 1) << 16, 0x3014);
    o[i++] = OP(0x0801, N - 1, 0x3018);
    o[i++] = OP(0x0801, 0, 0x301C);
    o[i++] = OP(0x0801, 0, 0x3030);
    o[i++] = OP(0x1001, 0x1E4, 0x400C);
    o[i++] = OP(0x1001, q << 29 | p << 26 | p, 0x4010);
    o[i++] = OP(0x1001, 0, 0x4014);
    o[i++] = OP(0x1001, out_addr, 0x4020);
    o[i++] = OP(0x1001, M << 4, 0x4024);
    o[i++] = OP(0x1001, 0, 0x4030);
    o[i++] = OP(0x1001, M - 1, 0x4034);
    o[i++] = OP(0x1001, 0, 0x4038);
    o[i++] = OP(0x1001, (N - 1) << 16 | (N - 1), 0x403C);
    o[i++] = OP(0x1001, 0x53, 0x4040);
    for (int r = 0; r < 3; r++) o[i++] = OP(0x1001, 0, 0x4044 + 4 * r);
    o[i++] = OP(0x1001, e << 8 | e << 5 | e << 2 | 2, 0x4050);
    o[i++] = OP(0x1001, 0, 0x4054);
    o[i++] = OP(0x1001, N - 1, 0x4058);
    o[i++] = OP(0x1001, (M - 1) << 16, 0x405C);
    o[i++] = OP(0x1001, 0x53, 0x4060);
    for (int r = 0; r < 3; r++) o[i++] = OP(0x1001, 0, 0x4064 + 4 * r);
    o[i++] = OP(0x1001, 0x383, 0x4070);
    o[i++] = OP(0x1001, 0, 0x4074);
    o[i++] = OP(0x1001, 1, 0x4078);
    o[i++] = OP(0x1001, 0, 0x407C);
    o[i++] = OP(0x1001, 0, 0x4080);
    o[i++] = OP(0x1001, (dt == 1 ? 0x10000 : 0) | 1, 0x4084);
    o[i++] = OP(0x1001, 0, 0x4088);
    for (int r = 0; r < 8; r++) o[i++] = OP(0x1001, 0, 0x4090 + 4 * r);
    o[i++] = OP(0x1001, (M * u) << 4, 0x40C0);
    o[i++] = OP(0x1001, 0, 0x40C4);
    for (int r = 0; r < 12; r++) o[i++] = OP(0x1001, 0, 0x4100 + 4 * r);
    o[i++] = 0;
    o[i++] = OP(0x0101, 0, 0x0014);
    o[i++] = OP(0x0041, 0, 0);
    o[i++] = OP(0x0081, 0x0D, 0x0008);
    assert_int_equal(i, 108);
}

static void check_shape(unsigned m, unsigned k, unsigned n, int dt, uint64_t *rng)
{
    npk_rk_matmul mm = {m,
                        k,
                        n,
                        (npk_rk_dtype)dt,
                        (uint32_t)npk_rand(rng) & ~63u,
                        (uint32_t)npk_rand(rng) & ~63u,
                        (uint32_t)npk_rand(rng) & ~63u};
    uint64_t got[108], want[108];
    npk_error err = {0};
    npk_status st = npk_rk_matmul_stream(&mm, got, &err);
    int acc = ref_accepts(m, k, n, dt);
    if (acc != (st == NPK_OK))
        fail_msg("%ux%ux%u dt %d: reference %s, npukit %s (%s)", m, k, n, dt,
                 acc ? "accepts" : "rejects", st ? "rejects" : "accepts", err.msg);
    if (!acc) {
        assert_true(err.msg[0] != 0);
        return;
    }
    ref_stream(m, k, n, dt, mm.input_addr, mm.weight_addr, mm.output_addr, want);
    for (int e = 0; e < 108; e++)
        if (got[e] != want[e])
            fail_msg("%ux%ux%u dt %d entry %d: got %016llx want %016llx", m, k, n, dt, e,
                     (unsigned long long)got[e], (unsigned long long)want[e]);
}

static void test_reference_model(void **state)
{
    (void)state;
    uint64_t rng = 12345;
    /* Edges of every limit, then random shapes across the whole range. */
    static const unsigned ms[] = {1, 2, 4, 8, 12, 64, 352, 384, 544, 1016, 1020, 1022, 1024, 1023};
    static const unsigned ks[] = {32, 64, 96, 512, 4096, 8192, 16352, 16384, 16416, 32768};
    static const unsigned ns[] = {16, 32, 48, 768, 4096, 8176, 8192, 8208, 16384};
    for (int dt = 0; dt < 3; dt++)
        for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
            for (size_t b = 0; b < sizeof ks / sizeof *ks; b++)
                for (size_t c = 0; c < sizeof ns / sizeof *ns; c++)
                    check_shape(ms[a], ks[b], ns[c], dt, &rng);
    int accepted = 0;
    for (int i = 0; i < 20000; i++) {
        unsigned m = npk_rand(&rng) % 4 ? 4 * (1 + (unsigned)(npk_rand(&rng) % 300)) : 1;
        unsigned k = 32 * (1 + (unsigned)(npk_rand(&rng) % 600));
        unsigned n = 16 * (1 + (unsigned)(npk_rand(&rng) % 600));
        int dt = (int)(npk_rand(&rng) % 3);
        check_shape(m, k, n, dt, &rng);
        accepted += ref_accepts(m, k, n, dt);
    }
    assert_true(accepted > 2000); /* the sweep really exercises accepted shapes */
}

/* Every class of rejection, with the limit named in the message. */
static void test_rejections(void **state)
{
    (void)state;
    static const struct {
        unsigned m, k, n;
        npk_rk_dtype dt;
        const char *needle;
    } cases[] = {
        {0, 64, 64, NPK_RK_FP16, "at least 1"},
        {6, 64, 64, NPK_RK_FP16, "M must be a multiple of 4"},
        {2, 64, 64, NPK_RK_INT8, "M must be a multiple of 4"},
        {4, 48, 64, NPK_RK_FP16, "K must be a multiple of 32"},
        {4, 64, 24, NPK_RK_FP16, "multiple of 16 for fp16"},
        {4, 64, 48, NPK_RK_INT8, "multiple of 32 for int8"},
        {4, 64, 40, NPK_RK_FP16_FP16, "multiple of 16 for fp16-fp16"},
        {1024, 32, 16, NPK_RK_FP16, "CNA_CONV_CON2.FEATURE_GRAINS (10 bits"},
        {1024, 32, 32, NPK_RK_INT8, "CNA_CONV_CON2.FEATURE_GRAINS"},
        {2048, 32, 16, NPK_RK_FP16, "FEATURE_GRAINS"},
        /* Was "N <= 16383" (the first field overflowed); the limit that applies is 8192. */
        {1, 32, 16384, NPK_RK_FP16,
         "DPU_DATA_CUBE_CHANNEL.CHANNEL (13 bits, max 8191), so N <= 8192"},
        {4, 64, 8208, NPK_RK_FP16, "DPU_DATA_CUBE_CHANNEL.CHANNEL (13 bits"},
        {4, 16416, 32, NPK_RK_INT8, "CNA_DATA_SIZE1.DATAIN_CHANNEL_REAL (14 bits"},
        {1, 32768, 16, NPK_RK_FP16, "weight bytes per kernel exceed one CBUF bank"},
        {1, 65504, 32, NPK_RK_INT8, "weight bytes per kernel exceed one CBUF bank"},
        {384, 4096, 4096, NPK_RK_FP16, "need 96 CBUF banks"},
        {512, 384, 64, NPK_RK_FP16, "need 12 CBUF banks"},
        {1020, 384, 64, NPK_RK_INT8, "need 12 CBUF banks"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        npk_rk_matmul mm = {cases[i].m, cases[i].k, cases[i].n, cases[i].dt, 0, 0, 0};
        uint64_t out[108];
        for (int e = 0; e < 108; e++) out[e] = 0x5555;
        npk_error err = {0};
        npk_status st = npk_rk_matmul_stream(&mm, out, &err);
        if (st == NPK_OK) fail_msg("%ux%ux%u accepted", cases[i].m, cases[i].k, cases[i].n);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("%ux%ux%u: message '%s' lacks '%s'", cases[i].m, cases[i].k, cases[i].n,
                     err.msg, cases[i].needle);
        for (int e = 0; e < 108; e++) assert_int_equal(out[e], 0x5555); /* nothing written */
    }
    /* The limits next to each rejection are accepted. */
    static const unsigned ok[][4] = {{1020, 32, 16, 0}, {1, 32, 8192, 0},  {4, 16384, 32, 2},
                                     {1, 16384, 16, 0}, {352, 512, 64, 0}, {4, 64, 16, 1}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        npk_rk_matmul mm = {ok[i][0], ok[i][1], ok[i][2], (npk_rk_dtype)ok[i][3], 0, 0, 0};
        npk_error err = {0};
        if (npk_rk_matmul_check(&mm, &err)) fail_msg("%s", err.msg);
    }
}

/* The emitter itself refuses any descriptor value that overflows its field. */
static void test_emit_checks_fields(void **state)
{
    (void)state;
    npk_rk_matmul mm = {4, 64, 64, NPK_RK_FP16, 0, 0, 0};
    npk_rk_cna_desc c;
    npk_rk_core_desc k;
    npk_rk_dpu_desc d;
    npk_error err = {0};
    assert_int_equal(npk_rk_matmul_descs(&mm, &c, &k, &d, &err), NPK_OK);
    assert_int_equal(c.data_bank, 1);
    assert_int_equal(c.weight_bank, 11);
    assert_int_equal(c.data_entries, 2);
    uint64_t out[108];
    c.feature_grains = 1024;
    assert_int_equal(npk_rk_descs_emit(&c, &k, &d, out, &err), NPK_E_LIMIT);
    assert_non_null(strstr(err.msg, "CNA_CONV_CON2.FEATURE_GRAINS"));
    npk_error_clear(&err);
    c.feature_grains = 5;
    c.surf_stride = -(1 << 27) - 1; /* below the 28-bit two's complement range */
    assert_int_equal(npk_rk_descs_emit(&c, &k, &d, out, &err), NPK_E_LIMIT);
    assert_non_null(strstr(err.msg, "CNA_DMA_CON2.SURF_STRIDE"));
    npk_error_clear(&err);
    c.surf_stride = -3;
    assert_int_equal(npk_rk_descs_emit(&c, &k, &d, out, &err), NPK_OK);
    npk_rk_entry e;
    npk_rk_entry_decode(out[25], &e);
    assert_int_equal(e.reg, NPK_RKR_CNA_DMA_CON2);
    assert_int_equal(e.value, 0x0FFFFFFD);
}

static void test_limits_helpers(void **state)
{
    (void)state;
    assert_int_equal(npk_rk_matmul_max_m(32, NPK_RK_FP16), 1020);
    assert_int_equal(npk_rk_matmul_max_m(512, NPK_RK_FP16), 352);
    assert_int_equal(npk_rk_matmul_max_m(16384, NPK_RK_FP16), 8);
    assert_int_equal(npk_rk_matmul_max_n(NPK_RK_FP16), 8192);
    assert_int_equal(npk_rk_matmul_max_n(NPK_RK_INT8), 8192);
    for (int dt = 0; dt < 3; dt++)
        for (uint32_t k = 32; k <= 16384; k += 32) {
            npk_rk_matmul mm = {
                npk_rk_matmul_max_m(k, (npk_rk_dtype)dt), k, 32, (npk_rk_dtype)dt, 0, 0, 0};
            npk_error err = {0};
            if (k * npk_rk_dtype_in_size((npk_rk_dtype)dt) > 32768) continue;
            if (npk_rk_matmul_check(&mm, &err)) fail_msg("max_m(%u): %s", k, err.msg);
            mm.m += 4;
            assert_int_not_equal(npk_rk_matmul_check(&mm, &err), NPK_OK);
        }
}

static void test_dtype_names(void **state)
{
    (void)state;
    npk_rk_dtype dt;
    assert_true(npk_rk_dtype_parse("fp16-fp16", &dt));
    assert_int_equal(dt, NPK_RK_FP16_FP16);
    assert_false(npk_rk_dtype_parse("fp32", &dt));
    assert_int_equal(npk_rk_dtype_in_c2(NPK_RK_FP16), 8);
    assert_int_equal(npk_rk_dtype_in_c2(NPK_RK_INT8), 16);
    assert_int_equal(npk_rk_dtype_out_c2(NPK_RK_FP16), 4);
    assert_int_equal(npk_rk_dtype_out_c2(NPK_RK_FP16_FP16), 8);
    assert_int_equal(npk_rk_dtype_out_c2(NPK_RK_INT8), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_streams),     cmocka_unit_test(test_golden_fields),
        cmocka_unit_test(test_reference_model),    cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_emit_checks_fields), cmocka_unit_test(test_limits_helpers),
        cmocka_unit_test(test_dtype_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
