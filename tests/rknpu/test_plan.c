/* Task and submit records, amounts, chaining, and multi-task plans: every
 * output element written exactly once (derived from the streams' own DPU
 * registers), chains that visit each core's range, the subcore slot rule,
 * balanced work, and the buffer placement helpers. */
#include <stdlib.h>
#include <string.h>

#include "rk_fixtures.h"
#include "npukit/rknpu_layout.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_uapi.h"

static void test_record_layouts(void **state)
{
    (void)state;
    assert_int_equal(sizeof(npk_rknpu_task), 40);
    assert_int_equal(sizeof(npk_rknpu_submit), 104);
    npk_rknpu_task t = {1, 2, 3, 4, 5, 6, 7, 8, 0x1122334455667788ull};
    uint8_t b[104];
    npk_rknpu_task_to_bytes(&t, b);
    for (int i = 0; i < 8; i++) assert_int_equal(b[4 * i], i + 1);
    assert_int_equal(b[32], 0x88);
    assert_int_equal(b[39], 0x11);
    npk_rknpu_task t2;
    npk_rknpu_task_from_bytes(b, &t2);
    assert_memory_equal(&t, &t2, sizeof t);

    npk_rknpu_submit s;
    memset(&s, 0, sizeof s);
    s.flags = 5;
    s.timeout = 6000;
    s.task_number = 7;
    s.priority = -2;
    s.task_obj_addr = 0xAABBCCDD00112233ull;
    s.core_mask = 7;
    s.fence_fd = -1;
    s.subcore_task[4].task_number = 0x99;
    npk_rknpu_submit_to_bytes(&s, b);
    assert_int_equal(b[0], 5);
    assert_int_equal(npk_ld32le(b + 4), 6000);
    assert_int_equal(npk_ld32le(b + 12), 7);
    assert_int_equal(npk_ld32le(b + 20), 0xFFFFFFFE);
    assert_int_equal(npk_ld64le(b + 24), 0xAABBCCDD00112233ull);
    assert_int_equal(npk_ld32le(b + 56), 7);
    assert_int_equal(npk_ld32le(b + 60), 0xFFFFFFFF);
    assert_int_equal(npk_ld32le(b + 100), 0x99);
    npk_rknpu_submit s2;
    npk_rknpu_submit_from_bytes(b, &s2);
    assert_memory_equal(&s, &s2, sizeof s);
}

static void test_amounts_and_slots(void **state)
{
    (void)state;
    assert_int_equal(npk_rknpu_regcfg_amount(108), 104);
    assert_int_equal(npk_rknpu_pc_data_amount(104), 53); /* the PC reads 54 x 16 B = 108 entries */
    assert_int_equal((npk_rknpu_pc_data_amount(104) + 1) * 2, 108);
    assert_int_equal(npk_rknpu_chain_amount(108), 53); /* whole stream, tail included */
    assert_int_equal(npk_rknpu_chain_amount(130), 64); /* Mesa's ALIGN((130-4)/2, 2) agrees */
    assert_int_equal(npk_rknpu_chain_amount(126), 62); /* the rocket-form matmul stream */
    assert_int_equal(npk_rknpu_subcore_slot(0x1, 0), 0);
    assert_int_equal(npk_rknpu_subcore_slot(0x3, 0), 0);
    assert_int_equal(npk_rknpu_subcore_slot(0x3, 1), 1);
    assert_int_equal(npk_rknpu_subcore_slot(0x2, 1), 1);
    assert_int_equal(npk_rknpu_subcore_slot(0x7, 0), 2);
    assert_int_equal(npk_rknpu_subcore_slot(0x7, 1), 3);
    assert_int_equal(npk_rknpu_subcore_slot(0x7, 2), 4);
    assert_int_equal(npk_rknpu_subcore_slot(0x5, 0), -1); /* the driver refuses 0x5 */
    assert_int_equal(npk_rknpu_subcore_slot(0x3, 2), -1);
}

static void test_chain_patch(void **state)
{
    (void)state;
    npk_rk_matmul mm = {4, 64, 64, NPK_RK_FP16, 0, 0, 0};
    uint64_t s[108];
    npk_error err = {0};
    assert_int_equal(npk_rk_matmul_stream(&mm, s, &err), NPK_OK);
    assert_int_equal(npk_rk_stream_chain(s, 108, 0x40000380, 108, &err), NPK_OK);
    assert_int_equal(s[104], 0x0101400003800010ull); /* PC_BASE_ADDRESS = next stream */
    assert_int_equal(s[105], 0x0101000000350014ull); /* PC_REGISTER_AMOUNTS = 53 */
    assert_int_equal(npk_rk_stream_chain(s, 108, 0x40000388, 108, &err), NPK_E_ARG);
    npk_error_clear(&err);
    s[106] = 0;
    assert_int_equal(npk_rk_stream_chain(s, 108, 0x40000380, 108, &err), NPK_E_FORMAT);
}

/* A one-task plan is exactly the single-task stream and the demo's records. */
static void test_single_task_plan(void **state)
{
    (void)state;
    gold_case cases[16];
    int n = gold_cases(cases, 16);
    for (int i = 0; i < n; i++) {
        npk_rk_plan_opts o = {cases[i].mm.m,
                              cases[i].mm.k,
                              cases[i].mm.n,
                              cases[i].mm.dtype,
                              1,
                              GOLD_IN,
                              GOLD_WT,
                              GOLD_OUT,
                              0x40000000,
                              0,
                              0,
                              NPK_RK_FORM_VENDOR};
        npk_rk_plan p;
        npk_error err = {0};
        if (npk_rk_plan_make(&o, &p, &err)) fail_msg("%s: %s", cases[i].name, err.msg);
        assert_int_equal(p.count, 1);
        npk_rk_stream g;
        gold_stream(cases[i].name, &g);
        assert_memory_equal(p.regcmd, g.entries, 108 * 8);
        npk_rk_stream_free(&g);
        assert_int_equal(p.regcmd_entries, 112); /* 864 bytes padded to 896 */
        for (size_t e = 108; e < 112; e++) assert_int_equal(p.regcmd[e], 0);
        npk_rknpu_task *t = &p.records[0];
        assert_int_equal(t->enable_mask, 0xD);
        assert_int_equal(t->int_mask, 0x300);
        assert_int_equal(t->int_clear, 0x1FFFF);
        assert_int_equal(t->regcfg_amount, 104);
        assert_int_equal(t->regcmd_addr, 0x40000000);
        assert_int_equal(p.submit.flags, 0x5);
        assert_int_equal(p.submit.timeout, 6000);
        assert_int_equal(p.submit.task_number, 1);
        assert_int_equal(p.submit.core_mask, 1);
        assert_int_equal(p.submit.fence_fd, -1);
        assert_int_equal(p.submit.subcore_task[0].task_start, 0);
        assert_int_equal(p.submit.subcore_task[0].task_number, 1);
        npk_rk_plan_free(&p);
    }
}

/* Decode one task's stream into the values of the registers we need. */
static uint32_t reg_value(const uint64_t *s, npk_rk_reg r)
{
    for (int i = 0; i < 108; i++) {
        npk_rk_entry e;
        npk_rk_entry_decode(s[i], &e);
        if (e.kind == NPK_RK_WRITE && e.reg == r) return e.value;
    }
    fail_msg("register %s not in stream", npk_rk_reg_get(r)->full_name);
    return 0;
}

static uint32_t fld(const uint64_t *s, npk_rk_field f)
{
    return npk_rk_field_extract(f, reg_value(s, npk_rk_field_get(f)->reg));
}

static void check_plan(const npk_rk_plan_opts *o)
{
    npk_rk_plan p;
    npk_error err = {0};
    if (npk_rk_plan_make(o, &p, &err))
        fail_msg("%ux%ux%u cores %d: %s", o->m, o->k, o->n, o->cores, err.msg);
    size_t ob = npk_rk_dtype_out_size(o->dtype), b = npk_rk_dtype_in_size(o->dtype);
    size_t total = (size_t)o->m * o->n;
    assert_int_equal(p.output_bytes, total * ob);

    /* Inverse of the plan's output placement: byte offset -> element. */
    uint32_t *owner = malloc(total * sizeof *owner);
    uint8_t *hit = calloc(total, 1);
    for (size_t i = 0; i < total; i++) owner[i] = UINT32_MAX;
    for (uint32_t m = 0; m < o->m; m++)
        for (uint32_t n = 0; n < o->n; n++) {
            uint64_t off = npk_rk_plan_output_offset(&p, m, n);
            assert_true(off % ob == 0 && off / ob < total);
            assert_int_equal(owner[off / ob], UINT32_MAX); /* placement is one-to-one */
            owner[off / ob] = m * o->n + n;
        }

    for (size_t t = 0; t < p.count; t++) {
        const npk_rk_plan_task *tk = &p.tasks[t];
        const uint64_t *s = p.regcmd + tk->regcmd_off / 8;
        assert_int_equal(tk->regcmd_off % 64, 0);
        /* What the stream itself says it writes. */
        uint32_t base = fld(s, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR);
        uint32_t h = fld(s, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT) + 1;
        uint32_t w = fld(s, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH) + 1;
        uint32_t c = fld(s, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL) + 1;
        uint32_t surf = fld(s, NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE);
        uint32_t prec = fld(s, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION);
        size_t es = prec == NPK_RK_PREC_FP16 ? 2 : 4, c2 = 16 / es;
        assert_int_equal(es, ob);
        assert_int_equal(w, 1);
        assert_int_equal(surf, h * w);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t ch = 0; ch < c; ch++) {
                uint64_t addr = base + ((uint64_t)(ch / c2) * surf * c2 + y * c2 + ch % c2) * es;
                uint64_t off = addr - o->output_addr;
                assert_true(addr >= o->output_addr && off / ob < total);
                uint32_t el = owner[off / ob];
                assert_int_not_equal(el, UINT32_MAX);
                if (hit[el]++) fail_msg("element (%u,%u) written twice", el / o->n, el % o->n);
                /* The element is the one the tile should compute. */
                assert_int_equal(el / o->n, tk->m0 + y);
                assert_int_equal(el % o->n, tk->n0 + ch);
            }
        /* Inputs: the tile's rows of A and columns of B. */
        assert_int_equal(fld(s, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT), tk->mt);
        assert_int_equal(fld(s, NPK_RKF_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR) - o->input_addr,
                         npk_rk_plan_input_offset(&p, tk->m0, 0));
        assert_int_equal(fld(s, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0) - o->weight_addr,
                         npk_rk_plan_weight_offset(&p, 0, tk->n0));
        assert_int_equal(fld(s, NPK_RKF_CNA_WEIGHT_SIZE0_WEIGHT_BYTES),
                         (uint64_t)o->k * tk->nt * b);
        /* Every generated stream decodes and re-encodes to itself. */
        for (int i = 0; i < 108; i++) {
            npk_rk_entry e;
            npk_rk_entry_decode(s[i], &e);
            assert_int_equal(e.problems, 0);
            assert_int_equal(npk_rk_entry_encode(e.op, e.value, e.offset), s[i]);
        }
    }
    for (size_t i = 0; i < total; i++)
        if (hit[i] != 1) fail_msg("element (%zu,%zu) written %d times", i / o->n, i % o->n, hit[i]);

    /* Chains: from each core's first task, follow the tails. */
    size_t visited = 0;
    uint32_t mask = p.submit.core_mask;
    assert_int_equal(mask, (1u << p.cores) - 1);
    for (int core = 0; core < p.cores; core++) {
        int slot = npk_rknpu_subcore_slot(mask, core);
        assert_true(slot >= 0);
        assert_int_equal(p.submit.subcore_task[slot].task_start, p.core_first[core]);
        assert_int_equal(p.submit.subcore_task[slot].task_number, p.core_count[core]);
        assert_true(p.core_count[core] > 0);
        uint32_t addr = (uint32_t)p.records[p.core_first[core]].regcmd_addr;
        for (uint32_t k = 0; k < p.core_count[core]; k++) {
            size_t idx = p.core_first[core] + k;
            assert_int_equal(p.tasks[idx].core, core);
            assert_int_equal(addr, o->regcmd_addr + p.tasks[idx].regcmd_off);
            assert_int_equal(p.records[idx].regcmd_addr, addr);
            assert_int_equal(p.records[idx].regcfg_amount, 104);
            const uint64_t *s = p.regcmd + p.tasks[idx].regcmd_off / 8;
            npk_rk_entry a, n;
            npk_rk_entry_decode(s[104], &a);
            npk_rk_entry_decode(s[105], &n);
            assert_int_equal(n.reg, NPK_RKR_PC_REGISTER_AMOUNTS);
            if (k + 1 < p.core_count[core]) {
                assert_int_equal(a.reg, NPK_RKR_PC_BASE_ADDRESS);
                assert_int_equal(n.value, 53);
                addr = a.value;
            } else {
                assert_int_equal(a.kind, NPK_RK_NOP); /* the core's last task stops */
                assert_int_equal(n.value, 0);
            }
            visited++;
        }
    }
    assert_int_equal(visited, p.count);
    assert_int_equal(p.submit.task_number, p.count);

    /* Balance: no core does much more than an equal share. */
    uint64_t work = 0, maxw = 0;
    for (int c = 0; c < p.cores; c++) {
        work += p.core_work[c];
        if (p.core_work[c] > maxw) maxw = p.core_work[c];
    }
    assert_int_equal(work, (uint64_t)o->m * o->n * o->k);
    if (p.count >= (size_t)p.cores * 4) assert_true(maxw * p.cores <= work * 5 / 4);
    free(owner);
    free(hit);
    npk_rk_plan_free(&p);
}

static void test_plan_coverage(void **state)
{
    (void)state;
    static const struct {
        uint32_t m, k, n;
        npk_rk_dtype dt;
        uint32_t max_m, max_n;
    } shapes[] = {
        {400, 1024, 8208, NPK_RK_FP16, 0, 0},    /* tiles in M (CBUF) and N (DPU channel) */
        {4096, 64, 256, NPK_RK_FP16_FP16, 0, 0}, /* M beyond FEATURE_GRAINS */
        {1, 4096, 20000, NPK_RK_FP16, 0, 0},     /* M = 1, N beyond 8192 */
        {1100, 4096, 96, NPK_RK_INT8, 0, 0},     /* int8, CBUF-bound M */
        {68, 96, 80, NPK_RK_FP16, 12, 32},       /* forced small, uneven tiles */
        {4, 32, 16, NPK_RK_FP16, 0, 0},          /* one task */
        {36, 64, 64, NPK_RK_INT8, 8, 32},
        {16384, 16384, 16, NPK_RK_FP16, 0, 0}, /* K at its limit: 8-row tiles */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int cores = 1; cores <= 3; cores++) {
            if (shapes[i].m == 16384 && cores != 3) continue; /* 2048 tasks; once is enough */
            /* Buffers one after another (a 512 MiB input does not fit below 0x20000000). */
            uint64_t b = npk_rk_dtype_in_size(shapes[i].dt);
            uint64_t in = 0x10000000,
                     wt = in + ((uint64_t)shapes[i].m * shapes[i].k * b + 0xfff) / 0x1000 * 0x1000;
            uint64_t out = wt + ((uint64_t)shapes[i].k * shapes[i].n * b + 0xfff) / 0x1000 * 0x1000;
            uint64_t rc = out + ((uint64_t)shapes[i].m * shapes[i].n * 4 + 0xfff) / 0x1000 * 0x1000;
            if (rc < 0x40000000) rc = 0x40000000;
            npk_rk_plan_opts o = {shapes[i].m,     shapes[i].k,     shapes[i].n,
                                  shapes[i].dt,    cores,           (uint32_t)in,
                                  (uint32_t)wt,    (uint32_t)out,   (uint32_t)rc,
                                  shapes[i].max_m, shapes[i].max_n, NPK_RK_FORM_VENDOR};
            check_plan(&o);
        }
}

static void test_plan_balance_and_cores(void **state)
{
    (void)state;
    /* 3 cores: the tile grid is chosen so tasks divide evenly. */
    npk_rk_plan_opts o = {1024,       512,        256,        NPK_RK_FP16, 3, 0x10000000,
                          0x20000000, 0x30000000, 0x40000000, 0,           0, NPK_RK_FORM_VENDOR};
    npk_rk_plan p;
    npk_error err = {0};
    assert_int_equal(npk_rk_plan_make(&o, &p, &err), NPK_OK);
    assert_int_equal(p.count % 3, 0);
    assert_int_equal(p.submit.core_mask, 7);
    assert_int_equal(p.submit.subcore_task[0].task_number, 0); /* slots 0-1 unused */
    assert_int_equal(p.submit.subcore_task[1].task_number, 0);
    assert_int_equal(p.submit.subcore_task[2].task_number + p.submit.subcore_task[3].task_number +
                         p.submit.subcore_task[4].task_number,
                     p.count);
    uint64_t lo = p.core_work[0], hi = p.core_work[0];
    for (int c = 1; c < 3; c++) {
        if (p.core_work[c] < lo) lo = p.core_work[c];
        if (p.core_work[c] > hi) hi = p.core_work[c];
    }
    assert_true(hi * 100 <= lo * 105);
    npk_rk_plan_free(&p);

    /* A shape too small for three tasks uses fewer cores. */
    npk_rk_plan_opts t = {1, 32, 16, NPK_RK_FP16, 3, 0, 0, 0, 0, 0, 0, NPK_RK_FORM_VENDOR};
    assert_int_equal(npk_rk_plan_make(&t, &p, &err), NPK_OK);
    assert_int_equal(p.count, 1);
    assert_int_equal(p.cores, 1);
    assert_int_equal(p.submit.core_mask, 1);
    npk_rk_plan_free(&p);
}

static void test_plan_rejections(void **state)
{
    (void)state;
    static const struct {
        uint32_t m, k, n;
        npk_rk_dtype dt;
        int cores;
        const char *needle;
    } bad[] = {
        {64, 16416, 64, NPK_RK_FP16, 1, "splitting K would need partial sums"},
        {64, 32768, 64, NPK_RK_FP16, 2, "splitting K"},
        {64, 16416, 64, NPK_RK_INT8, 1, "DATAIN_CHANNEL_REAL"},
        {6, 64, 64, NPK_RK_FP16, 1, "multiple of 4"},
        {8, 40, 64, NPK_RK_FP16, 1, "multiple of 32"},
        {8, 64, 48, NPK_RK_INT8, 1, "multiple of 32 for int8"},
        {8, 64, 64, NPK_RK_FP16, 4, "must be 1, 2 or 3"},
        {8, 64, 64, NPK_RK_FP16, 0, "must be 1, 2 or 3"},
        {0, 64, 64, NPK_RK_FP16, 1, "at least 1"},
        {65536, 16384, 16, NPK_RK_FP16, 1, "tasks per submit"},
        {60000, 16384, 8192, NPK_RK_FP16, 1, "tasks per submit"},
        {66000, 4096, 16384, NPK_RK_FP16, 1, "32-bit DMA address space"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        npk_rk_plan_opts o = {bad[i].m, bad[i].k, bad[i].n, bad[i].dt, bad[i].cores,      0, 0,
                              0,        0,        0,        0,         NPK_RK_FORM_VENDOR};
        npk_rk_plan p;
        npk_error err = {0};
        if (npk_rk_plan_make(&o, &p, &err) == NPK_OK)
            fail_msg("%ux%ux%u accepted", bad[i].m, bad[i].k, bad[i].n);
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("%ux%ux%u: '%s' lacks '%s'", bad[i].m, bad[i].k, bad[i].n, err.msg,
                     bad[i].needle);
        assert_null(p.tasks);
    }
}

/* Was: `rknpu plan -m 4 -k 4096 -n 65536` put 512 MiB of weights at
 * 0x20000000, over the output at 0x30000000, and a weight address equal to
 * the input's was accepted. Overlaps and buffers past 4 GiB are refused with
 * both buffers and their ranges named. */
static void test_plan_overlaps(void **state)
{
    (void)state;
    static const struct {
        uint32_t m, k, n, in, wt, out, rc;
        const char *needle;
    } bad[] = {
        {4, 4096, 65536, 0x10000000, 0x20000000, 0x30000000, 0x40000000,
         "weight buffer 0x20000000..0x3fffffff (536870912 bytes) overlaps output buffer "
         "0x30000000..0x300fffff (1048576 bytes)"},
        {4, 16384, 65536, 0x10000000, 0x20000000, 0x30000000, 0x40000000,
         "weight buffer 0x20000000..0x9fffffff (2147483648 bytes) overlaps output"},
        {4, 64, 64, 0x10000000, 0x10000000, 0x30000000, 0x40000000,
         "input buffer 0x10000000..0x100001ff (512 bytes) overlaps weight buffer"},
        {4, 64, 64, 0x10000000, 0x20000000, 0x30000000, 0x300003c0, "output buffer"},
        {4, 64, 64, 0x10000000, 0x20000000, 0xffffff00, 0x40000000,
         "output buffer 0xffffff00..0x1000002ff (1024 bytes) exceeds the 32-bit DMA address"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        npk_rk_plan_opts o = {bad[i].m,  bad[i].k,   bad[i].n,  NPK_RK_FP16, 1, bad[i].in,
                              bad[i].wt, bad[i].out, bad[i].rc, 0,           0, NPK_RK_FORM_VENDOR};
        npk_rk_plan p;
        npk_error err = {0};
        if (npk_rk_plan_make(&o, &p, &err) == NPK_OK) fail_msg("case %zu accepted", i);
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].needle);
    }
    /* Adjacent buffers are fine; all addresses 0 is a sizing plan. */
    npk_rk_plan_opts ok = {4,          64,         64,         NPK_RK_FP16, 1, 0x10000000,
                           0x10000200, 0x10002200, 0x10002600, 0,           0, NPK_RK_FORM_VENDOR};
    npk_rk_plan p;
    npk_error err = {0};
    if (npk_rk_plan_make(&ok, &p, &err)) fail_msg("adjacent: %s", err.msg);
    npk_rk_plan_free(&p);
    npk_rk_plan_opts sizes = {4, 4096, 65536, NPK_RK_FP16, 1, 0, 0, 0, 0, 0, 0, NPK_RK_FORM_VENDOR};
    if (npk_rk_plan_make(&sizes, &p, &err)) fail_msg("sizing plan: %s", err.msg);
    npk_rk_plan_free(&p);
}

/* The placement helpers agree with the layout functions element by element. */
static void test_plan_buffers(void **state)
{
    (void)state;
    for (int dt = 0; dt < 3; dt++) {
        npk_rk_plan_opts o = {36, 64, 64, (npk_rk_dtype)dt,  2, 0, 0, 0,
                              0,  8,  32, NPK_RK_FORM_VENDOR};
        npk_rk_plan p;
        npk_error err = {0};
        assert_int_equal(npk_rk_plan_make(&o, &p, &err), NPK_OK);
        assert_true(p.count > 4);
        size_t b = npk_rk_dtype_in_size(o.dtype), ob = npk_rk_dtype_out_size(o.dtype);
        uint8_t *a = malloc(o.m * o.k * b), *in = malloc(p.input_bytes);
        uint8_t *w = malloc(o.k * o.n * b), *wt = malloc(p.weight_bytes);
        uint8_t *outb = malloc(p.output_bytes), *c = malloc(o.m * o.n * ob);
        uint64_t rng = 99;
        for (size_t i = 0; i < o.m * o.k * b; i++) a[i] = (uint8_t)npk_rand(&rng);
        for (size_t i = 0; i < o.k * o.n * b; i++) w[i] = (uint8_t)npk_rand(&rng);
        memset(in, 0xEE, p.input_bytes);
        memset(wt, 0xEE, p.weight_bytes);
        npk_rk_plan_pack_input(&p, a, in);
        npk_rk_plan_pack_weights(&p, w, wt);
        for (uint32_t m = 0; m < o.m; m++)
            for (uint32_t k = 0; k < o.k; k++)
                assert_memory_equal(in + npk_rk_plan_input_offset(&p, m, k), a + (m * o.k + k) * b,
                                    b);
        for (uint32_t k = 0; k < o.k; k++)
            for (uint32_t n = 0; n < o.n; n++)
                assert_memory_equal(wt + npk_rk_plan_weight_offset(&p, k, n), w + (k * o.n + n) * b,
                                    b);
        for (uint32_t m = 0; m < o.m; m++)
            for (uint32_t n = 0; n < o.n; n++)
                for (size_t i = 0; i < ob; i++)
                    outb[npk_rk_plan_output_offset(&p, m, n) + i] = (uint8_t)(m * 7 + n * 13 + i);
        npk_rk_plan_unpack_output(&p, outb, c);
        for (uint32_t m = 0; m < o.m; m++)
            for (uint32_t n = 0; n < o.n; n++)
                for (size_t i = 0; i < ob; i++)
                    assert_int_equal(c[(m * o.n + n) * ob + i], (uint8_t)(m * 7 + n * 13 + i));
        free(a);
        free(in);
        free(w);
        free(wt);
        free(outb);
        free(c);
        npk_rk_plan_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_layouts),  cmocka_unit_test(test_amounts_and_slots),
        cmocka_unit_test(test_chain_patch),     cmocka_unit_test(test_single_task_plan),
        cmocka_unit_test(test_plan_coverage),   cmocka_unit_test(test_plan_balance_and_cores),
        cmocka_unit_test(test_plan_rejections), cmocka_unit_test(test_plan_buffers),
        cmocka_unit_test(test_plan_overlaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
