/* The emulator: the golden streams compute the right products, generated
 * single- and multi-task plans over 1-3 cores give exact (int8, integer
 * fp16) or tightly bounded results, the rocket form runs, the DPU stages do
 * what the registers say, SIMD and portable kernels agree bit for bit, and
 * every unmodelled register combination is an error that names the register
 * and field and leaves the output untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_plan.h"
#include "rk_emu_util.h"
#include "rk_fixtures.h"

#define STREAM_ADDR 0x00100000u
#define SENTINEL    0xA5

/* One task's world: input, weights, output and a stream mapped at the
 * golden addresses. */
typedef struct world {
    npk_rk_emu *emu;
    rk_mats x;
    uint8_t *in, *wt, *out;
    size_t out_bytes;
    uint64_t *stream; /* host order */
    uint8_t *sbuf;    /* the stream's little-endian bytes as the NPU sees them */
    size_t entries;
} world;

static void world_make(world *w, const npk_rk_matmul *mm, npk_rk_form form, bool integer,
                       uint64_t seed, const npk_rk_emu_opts *eo)
{
    memset(w, 0, sizeof *w);
    npk_error err = {0};
    npk_rk_emu_opts def = {3, 0, false};
    assert_int_equal(npk_rk_emu_create(eo ? eo : &def, &w->emu, &err), NPK_OK);
    rk_mats_make(&w->x, mm->m, mm->k, mm->n, mm->dtype, integer, seed);
    unsigned b = npk_rk_dtype_in_size(mm->dtype), ob = npk_rk_dtype_out_size(mm->dtype);
    w->in = malloc((size_t)mm->m * mm->k * b);
    w->wt = malloc((size_t)mm->k * mm->n * b);
    w->out_bytes = (size_t)mm->m * mm->n * ob;
    w->out = malloc(w->out_bytes);
    memset(w->out, SENTINEL, w->out_bytes);
    rk_pack_input(&w->x, 0, mm->m, w->in);
    rk_pack_weights(&w->x, w->wt);
    w->entries = npk_rk_form_entries(form);
    w->stream = calloc(w->entries + 2, 8);
    w->sbuf = calloc(w->entries + 2, 8);
    assert_int_equal(npk_rk_matmul_stream_form(mm, form, w->stream, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(w->emu, mm->input_addr, w->in, (size_t)mm->m * mm->k * b, &err),
                     NPK_OK);
    assert_int_equal(
        npk_rk_emu_map(w->emu, mm->weight_addr, w->wt, (size_t)mm->k * mm->n * b, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(w->emu, mm->output_addr, w->out, w->out_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(w->emu, STREAM_ADDR, w->sbuf, (w->entries + 2) * 8, &err),
                     NPK_OK);
}

static void world_sync_stream(world *w)
{
    npk_rk_stream_to_bin(w->stream, w->entries, w->sbuf);
}

static npk_status world_run(world *w, npk_error *err)
{
    world_sync_stream(w);
    uint32_t amount = (uint32_t)(w->entries + 1) / 2 - 1;
    return npk_rk_emu_run_core(w->emu, 0, STREAM_ADDR, amount, 1, err);
}

static void world_free(world *w)
{
    npk_rk_emu_destroy(w->emu);
    rk_mats_free(&w->x);
    free(w->in);
    free(w->wt);
    free(w->out);
    free(w->stream);
    free(w->sbuf);
}

static void check_output(const world *w, bool exact, const char *what)
{
    for (uint32_t m = 0; m < w->x.m; m++)
        for (uint32_t n = 0; n < w->x.n; n++) {
            size_t i = (size_t)m * w->x.n + n;
            double got = rk_out_elem(w->out, w->x.dt, w->x.m, m, n);
            if (!rk_close(&w->x, i, got, exact))
                fail_msg("%s: C[%u][%u] = %.9g, want %.9g", what, m, n, got, rk_expect(&w->x, i));
        }
}

static bool untouched(const world *w)
{
    for (size_t i = 0; i < w->out_bytes; i++)
        if (w->out[i] != SENTINEL) return false;
    return true;
}

/* The golden streams, executed as recorded: right products for the golden
 * shapes (integer-valued fp16 and full-range int8: exact). */
static void test_golden_streams_execute(void **state)
{
    (void)state;
    gold_case cases[16];
    int n = gold_cases(cases, 16);
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++) {
        world w;
        world_make(&w, &cases[i].mm, NPK_RK_FORM_VENDOR, true, (uint64_t)i + 1, NULL);
        npk_rk_stream g;
        gold_stream(cases[i].name, &g);
        assert_int_equal(g.count, 108);
        memcpy(w.stream, g.entries, 108 * 8);
        npk_rk_stream_free(&g);
        npk_error err = {0};
        if (world_run(&w, &err)) fail_msg("%s: %s", cases[i].name, err.msg);
        check_output(&w, true, cases[i].name);
        const npk_rk_emu_stats *st = npk_rk_emu_stats_get(w.emu);
        assert_int_equal(st->tasks, 1);
        assert_int_equal(st->fetched_entries, 108);
        assert_int_equal(st->macs, (uint64_t)cases[i].mm.m * cases[i].mm.k * cases[i].mm.n);
        assert_int_equal(st->int_status[0], 0x300);
        world_free(&w);
    }
}

/* Non-integer fp16 data: fp32 accumulation error only; fp16 output rounded. */
static void test_random_fp16_tolerance(void **state)
{
    (void)state;
    static const npk_rk_matmul shapes[] = {
        {256, 512, 128, NPK_RK_FP16, GOLD_IN, GOLD_WT, GOLD_OUT},
        {1, 768, 64, NPK_RK_FP16_FP16, GOLD_IN, GOLD_WT, GOLD_OUT},
        {12, 96, 48, NPK_RK_FP16, GOLD_IN, GOLD_WT, GOLD_OUT},
        {36, 2048, 32, NPK_RK_FP16_FP16, GOLD_IN, GOLD_WT, GOLD_OUT},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        world w;
        world_make(&w, &shapes[i], NPK_RK_FORM_VENDOR, false, 40 + i, NULL);
        npk_error err = {0};
        if (world_run(&w, &err)) fail_msg("%s", err.msg);
        check_output(&w, false, "random fp16");
        world_free(&w);
    }
}

/* SIMD and portable multiply kernels: the same bits. */
static void test_kernels_agree(void **state)
{
    (void)state;
    npk_rk_matmul mm = {100, 320, 64, NPK_RK_FP16, GOLD_IN, GOLD_WT, GOLD_OUT};
    npk_rk_emu_opts po = {1, 0, true};
    world a, b;
    world_make(&a, &mm, NPK_RK_FORM_VENDOR, false, 7, NULL);
    world_make(&b, &mm, NPK_RK_FORM_VENDOR, false, 7, &po);
    assert_string_equal(npk_rk_emu_kernel(b.emu), "portable");
    npk_error err = {0};
    assert_int_equal(world_run(&a, &err), NPK_OK);
    assert_int_equal(world_run(&b, &err), NPK_OK);
    assert_memory_equal(a.out, b.out, a.out_bytes);
    print_message("kernel: %s\n", npk_rk_emu_kernel(a.emu));
    world_free(&a);
    world_free(&b);
}

/* The rocket form (DPU_RDMA block, op-enable 0x1D) computes the same. */
static void test_rocket_form(void **state)
{
    (void)state;
    for (int dt = 0; dt < 3; dt++) {
        npk_rk_matmul mm = {64, 128, 64, (npk_rk_dtype)dt, GOLD_IN, GOLD_WT, GOLD_OUT};
        world w;
        world_make(&w, &mm, NPK_RK_FORM_ROCKET, true, 11 + dt, NULL);
        assert_int_equal(w.entries, 126);
        npk_rk_entry en;
        npk_rk_entry_decode(w.stream[125], &en);
        assert_int_equal(en.kind, NPK_RK_OP_EN);
        assert_int_equal(en.value, 0x1D);
        npk_error err = {0};
        if (world_run(&w, &err)) fail_msg("%s", err.msg);
        check_output(&w, true, "rocket form");
        world_free(&w);
    }
}

/* ---- plans: many tasks, chained per core, 1 to 3 cores ---- */

static void run_plan(uint32_t m, uint32_t k, uint32_t n, npk_rk_dtype dt, int cores, uint32_t max_m,
                     uint32_t max_n, int emu_cores, bool integer, uint64_t seed)
{
    npk_rk_plan_opts o = {m,          k,          n,          dt,    cores, 0x10000000,
                          0x20000000, 0x30000000, 0x40000000, max_m, max_n, NPK_RK_FORM_VENDOR};
    npk_rk_plan p;
    npk_error err = {0};
    if (npk_rk_plan_make(&o, &p, &err)) fail_msg("%s", err.msg);
    rk_mats x;
    rk_mats_make(&x, m, k, n, dt, integer, seed);
    uint8_t *in = malloc(p.input_bytes), *wt = malloc(p.weight_bytes);
    uint8_t *out = malloc(p.output_bytes), *reg = malloc(p.regcmd_entries * 8);
    memset(out, SENTINEL, p.output_bytes);
    for (size_t t = 0; t < p.count; t += p.tiles_n)
        rk_pack_input(&x, p.tasks[t].m0, p.tasks[t].mt, in + p.tasks[t].input_off);
    rk_pack_weights(&x, wt);
    npk_rk_stream_to_bin(p.regcmd, p.regcmd_entries, reg);
    npk_rk_emu *e;
    npk_rk_emu_opts eo = {emu_cores, 0, false};
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, o.input_addr, in, p.input_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, o.weight_addr, wt, p.weight_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, o.output_addr, out, p.output_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, o.regcmd_addr, reg, p.regcmd_entries * 8, &err), NPK_OK);
    if (npk_rk_emu_submit(e, &p.submit, p.records, p.count, &err))
        fail_msg("%ux%ux%u %s cores %d: %s", m, k, n, npk_rk_dtype_name(dt), cores, err.msg);
    const npk_rk_emu_stats *st = npk_rk_emu_stats_get(e);
    assert_int_equal(st->tasks, p.count);
    for (int c = 0; c < p.cores; c++) assert_int_equal(st->core_tasks[c], p.core_count[c]);
    /* Every element, read back through the plan's own block layout. */
    for (uint32_t t = 0; t < p.count; t += p.tiles_n) {
        const npk_rk_plan_task *pt = &p.tasks[t];
        const uint8_t *blk = out + (size_t)pt->m0 * n * npk_rk_dtype_out_size(dt);
        for (uint32_t h = 0; h < pt->mt; h++)
            for (uint32_t j = 0; j < n; j++) {
                size_t i = (size_t)(pt->m0 + h) * n + j;
                double got = rk_out_elem(blk, dt, pt->mt, h, j);
                if (!rk_close(&x, i, got, integer))
                    fail_msg("%ux%ux%u %s: C[%u][%u] = %.9g, want %.9g", m, k, n,
                             npk_rk_dtype_name(dt), pt->m0 + h, j, got, rk_expect(&x, i));
            }
    }
    npk_rk_emu_destroy(e);
    rk_mats_free(&x);
    free(in);
    free(wt);
    free(out);
    free(reg);
    npk_rk_plan_free(&p);
}

static void test_plans_all_dtypes_and_cores(void **state)
{
    (void)state;
    for (int dt = 0; dt < 3; dt++)
        for (int cores = 1; cores <= 3; cores++) {
            /* single task, then tiled in M, in N and in both */
            run_plan(8, 64, 64, (npk_rk_dtype)dt, cores, 0, 0, 3, true, 100 + dt);
            run_plan(44, 96, 128, (npk_rk_dtype)dt, cores, 8, 0, 3, true, 200 + dt);
            run_plan(16, 64, 192, (npk_rk_dtype)dt, cores, 0, 64, 3, true, 300 + dt);
            run_plan(36, 128, 96, (npk_rk_dtype)dt, cores, 12, 32, 3, true, 400 + dt);
            run_plan(1, 256, 64, (npk_rk_dtype)dt, cores, 0, 32, 3, true, 500 + dt);
        }
    /* Non-integer fp16 over several tasks and cores: tolerance. */
    run_plan(40, 160, 80, NPK_RK_FP16, 3, 8, 32, 3, false, 600);
    run_plan(40, 160, 96, NPK_RK_FP16_FP16, 2, 8, 32, 3, false, 601);
    /* A plan too large for one task, by the hardware limits alone. */
    run_plan(1100, 64, 32, NPK_RK_INT8, 3, 0, 0, 3, true, 700);
}

/* A single-core NPU runs submit.task_start/task_number on core 0. */
static void test_single_core_emulator(void **state)
{
    (void)state;
    run_plan(24, 64, 64, NPK_RK_FP16, 1, 8, 0, 1, true, 800);
    run_plan(24, 64, 64, NPK_RK_INT8, 1, 8, 0, 1, true, 801);
}

/* ---- errors ---- */

/* Replace field f in the stream's write of its register. */
static void set_field(world *w, npk_rk_field f, uint32_t v)
{
    npk_rk_reg r = npk_rk_field_get(f)->reg;
    for (size_t i = 0; i < w->entries; i++) {
        npk_rk_entry en;
        npk_rk_entry_decode(w->stream[i], &en);
        if (en.kind == NPK_RK_WRITE && en.reg == r) {
            w->stream[i] = npk_rk_write(r, npk_rk_field_insert(f, en.value, v));
            return;
        }
    }
    fail_msg("register of field %d not in the stream", (int)f);
}

static void expect_error(world *w, const char *needle, const char *what)
{
    npk_error err = {0};
    npk_status st = world_run(w, &err);
    if (st == NPK_OK) fail_msg("%s: accepted", what);
    if (!strstr(err.msg, needle)) fail_msg("%s: '%s' lacks '%s'", what, err.msg, needle);
    if (!untouched(w)) fail_msg("%s: output written despite the error", what);
}

typedef struct field_case {
    npk_rk_field f;
    uint32_t v;
    const char *needle;
} field_case;

static void test_unmodelled_fields(void **state)
{
    (void)state;
    static const field_case cases[] = {
        {NPK_RKF_CNA_CONV_CON1_CONV_MODE, 3, "WEIGHT_KERNELS = 64 is not 1 for a depthwise"},
        {NPK_RKF_CNA_CONV_CON1_CONV_MODE, 1, "CNA_CONV_CON1.CONV_MODE = 1 is not modelled"},
        {NPK_RKF_CNA_CONV_CON1_IN_PRECISION, 5, "CNA_CONV_CON1.IN_PRECISION = 5"},
        {NPK_RKF_CNA_CONV_CON1_PROC_PRECISION, 0,
         "CNA_CONV_CON1.PROC_PRECISION = 0 does not match"},
        {NPK_RKF_CNA_CONV_CON3_CONV_Y_STRIDE, 2, "rows of padding below"},
        {NPK_RKF_CNA_CONV_CON3_CONV_X_STRIDE, 0, "CNA_CONV_CON3.CONV_X_STRIDE = 0 is not modelled"},
        {NPK_RKF_CNA_CONV_CON2_KERNEL_GROUP, 1, "CNA_CONV_CON2.KERNEL_GROUP = 1"},
        {NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, 3, "WEIGHT_BYTES_PER_KERNEL = 128 does not match"},
        {NPK_RKF_CNA_PAD_CON0_PAD_TOP, 1, "CNA_PAD_CON0.PAD_TOP = 1 reaches past the kernel"},
        {NPK_RKF_CNA_CVT_CON0_CVT_BYPASS, 0, "CNA_CVT_CON0.CVT_BYPASS = 0"},
        {NPK_RKF_CNA_DCOMP_CTRL_DECOMP_CONTROL, 1, "CNA_DCOMP_CTRL.DECOMP_CONTROL = 1"},
        {NPK_RKF_CNA_CBUF_CON0_WEIGHT_REUSE, 1, "CNA_CBUF_CON0.WEIGHT_REUSE = 1"},
        {NPK_RKF_CNA_CBUF_CON0_DATA_BANK, 0, "CNA_CBUF_CON0.DATA_BANK = 0"},
        {NPK_RKF_CNA_CBUF_CON1_DATA_ENTRIES, 7, "CNA_CBUF_CON1.DATA_ENTRIES = 7 does not match"},
        {NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH, 2,
         "CNA_DATA_SIZE2.DATAOUT_WIDTH = 2 needs 1 columns of padding"},
        {NPK_RKF_CNA_DMA_CON1_LINE_STRIDE, 2, "CNA_DMA_CON1.LINE_STRIDE = 2 makes 8-byte lines"},
        {NPK_RKF_CNA_DMA_CON2_SURF_STRIDE, 0x0FFFFFF0, "CNA_DMA_CON2.SURF_STRIDE"},
        {NPK_RKF_CNA_FC_CON0_FC_SKIP_EN, 1, "CNA_FC_CON0.FC_SKIP_EN = 1"},
        {NPK_RKF_CNA_WEIGHT_SIZE0_WEIGHT_BYTES, 4096, "CNA_WEIGHT_SIZE0.WEIGHT_BYTES = 4096"},
        {NPK_RKF_CORE_MISC_CFG_DW_EN, 1, "CORE_MISC_CFG.DW_EN = 1 does not match"},
        {NPK_RKF_CORE_CLIP_TRUNCATE_CLIP_TRUNCATE, 4, "CORE_CLIP_TRUNCATE.CLIP_TRUNCATE = 4"},
        {NPK_RKF_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, 31,
         "CORE_DATAOUT_SIZE_1.DATAOUT_CHANNEL = 31"},
        {NPK_RKF_CORE_UNDOC_3030_VALUE, 1, "CORE_UNDOC_3030.VALUE = 1"},
        {NPK_RKF_DPU_FEATURE_MODE_CFG_FLYING_MODE, 1, "DPU_FEATURE_MODE_CFG.FLYING_MODE = 1"},
        {NPK_RKF_DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 0, "DPU_FEATURE_MODE_CFG.OUTPUT_MODE = 0"},
        {NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION, 0, "DPU_DATA_FORMAT.OUT_PRECISION = 0"},
        {NPK_RKF_DPU_BS_CFG_BS_BYPASS, 0, ""}, /* placeholder: all sub-stages bypassed is fine */
        {NPK_RKF_DPU_BS_CFG_BS_MUL_PRELU, 1, "DPU_BS_CFG.BS_MUL_PRELU = 1"},
        {NPK_RKF_DPU_BS_CFG_BS_ALU_SRC, 1, "DPU_BS_CFG.BS_ALU_SRC = 1 with the stage bypassed"},
        {NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS, 0, "DPU_BS_OW_CFG.OD_BYPASS = 0 on the floating-point"},
        {NPK_RKF_DPU_BS_OW_CFG_SIZE_E_1, 1, "DPU_BS_OW_CFG.SIZE_E_1 = 1 is not 3"},
        {NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, 0, "DPU_EW_CFG.EW_LUT_BYPASS = 0"},
        {NPK_RKF_DPU_EW_CFG_EW_OP_SRC, 1, "DPU_EW_CFG.EW_OP_SRC = 1"},
        {NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 2,
         "OUT_CVT_SCALE = 2 does not match the identity"},
        {NPK_RKF_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, 1, "DPU_OUT_CVT_SCALE.FP32TOFP16_EN = 1"},
        {NPK_RKF_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, 3, "DPU_OUT_CVT_SHIFT.OUT_CVT_SHIFT = 3"},
        {NPK_RKF_DPU_OUT_CVT_OFFSET_OUT_CVT_OFFSET, 5, "DPU_OUT_CVT_OFFSET.OUT_CVT_OFFSET = 5"},
        {NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, 2, "DPU_DST_SURF_STRIDE.DST_SURF_STRIDE = 2"},
        {NPK_RKF_DPU_SURFACE_ADD_SURF_ADD, 4, "DPU_SURFACE_ADD.SURF_ADD = 4"},
        {NPK_RKF_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, 5, "DPU_DATA_CUBE_CHANNEL.ORIG_CHANNEL = 5"},
        {NPK_RKF_DPU_BS_OW_OP_OW_OP, 0x80, "DPU_BS_OW_OP.OW_OP = 128 with CPEND bypassed"},
        {NPK_RKF_DPU_UNDOC_40C4_VALUE, 9, "DPU_UNDOC_40C4.VALUE = 9"},
        {NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR, 0x30000008,
         "DST_BASE_ADDR = 805306376 is not 16"},
    };
    npk_rk_matmul mm = {8, 64, 64, NPK_RK_FP16, GOLD_IN, GOLD_WT, GOLD_OUT};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (!cases[i].needle[0]) continue;
        world w;
        world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
        set_field(&w, cases[i].f, cases[i].v);
        expect_error(&w, cases[i].needle, cases[i].needle);
        world_free(&w);
    }
}

static void test_unmodelled_structure(void **state)
{
    (void)state;
    npk_rk_matmul mm = {8, 64, 64, NPK_RK_FP16, GOLD_IN, GOLD_WT, GOLD_OUT};
    world w;

    /* PPU in the operation enable. */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[107] = npk_rk_entry_encode(NPK_RK_OP_ENABLE, 0x2D, 0x0008);
    expect_error(&w, "operation enable 0x2d leaves GLOBAL_OPERATION_ENABLE.PPU_RDMA_OP_EN = 0",
                 "PPU with the convolution blocks");
    world_free(&w);
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[107] = npk_rk_entry_encode(NPK_RK_OP_ENABLE, 0x6D, 0x0008);
    expect_error(&w,
                 "sets GLOBAL_OPERATION_ENABLE.DPU_OP_EN: the emulator does not model that "
                 "block in this combination",
                 "PPU and DPU in one task");
    world_free(&w);

    /* Without the marker. */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[106] = 0;
    expect_error(&w, "without the 0x0041 marker", "no marker");
    world_free(&w);

    /* A register the model does not know what to do with (CNA_S_STATUS). */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[18] = npk_rk_write(NPK_RKR_CNA_OPERATION_ENABLE, 1);
    expect_error(&w, "CNA_OPERATION_ENABLE = 0x00000001: the emulator does not model this register",
                 "unknown register");
    world_free(&w);

    /* A register the model reads, left unwritten (the write became a nop). */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[63] = 0;
    expect_error(&w, "DPU_BS_CFG is not written by this task's stream", "unwritten");
    world_free(&w);

    /* An offset no register has, and an unknown op. */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[20] = npk_rk_entry_encode(0x0201, 0, 0x1234);
    expect_error(&w, "entry 20", "unknown offset");
    world_free(&w);
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    w.stream[20] = npk_rk_entry_encode(0x0401, 0, 0x1068);
    expect_error(&w, "op 0x0401 is not modelled", "unknown op");
    world_free(&w);

    /* Buffers outside mapped memory. */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    set_field(&w, NPK_RKF_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, 0x50000000);
    expect_error(&w, "CNA_FEATURE_DATA_ADDR 0x50000000", "input unmapped");
    world_free(&w);
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    set_field(&w, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, GOLD_WT + 16);
    expect_error(&w, "weights at CNA_DCOMP_ADDR0 0x20000010", "weights run past the buffer");
    world_free(&w);

    /* The PC's fetch: a stream of 108 entries fetched with amount 52 stops
     * at entry 105, before the marker and the operation enable. */
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, NULL);
    world_sync_stream(&w);
    npk_error err = {0};
    assert_int_equal(npk_rk_emu_run_core(w.emu, 0, STREAM_ADDR, 52, 1, &err), NPK_E_FORMAT);
    assert_non_null(
        strstr(err.msg, "fetched 106 entries (amount 52) and none is an operation enable"));
    assert_true(untouched(&w));
    /* Two tasks asked for, but the stream does not chain. */
    npk_error_clear(&err);
    assert_int_equal(npk_rk_emu_run_core(w.emu, 0, STREAM_ADDR, 53, 2, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "does not chain"));
    /* A core this emulator does not have; a fetch past mapped memory. */
    npk_error_clear(&err);
    assert_int_equal(npk_rk_emu_run_core(w.emu, 3, STREAM_ADDR, 53, 1, &err), NPK_E_ARG);
    npk_error_clear(&err);
    assert_int_equal(npk_rk_emu_run_core(w.emu, 0, STREAM_ADDR, 60, 1, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "leaves mapped memory"));
    world_free(&w);

    /* The work limit. */
    npk_rk_emu_opts lim = {3, 1000, false};
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 1, &lim);
    expect_error(&w, "over the emulator's limit", "work limit");
    world_free(&w);
}

/* Vendor submit semantics: a mask the driver ignores, an int_mask that the
 * tasks never raise. */
static void test_submit_rules(void **state)
{
    (void)state;
    npk_rk_plan_opts o = {8,          64,         64,         NPK_RK_INT8, 1, 0x10000000,
                          0x20000000, 0x30000000, 0x40000000, 0,           0, NPK_RK_FORM_VENDOR};
    npk_rk_plan p;
    npk_error err = {0};
    assert_int_equal(npk_rk_plan_make(&o, &p, &err), NPK_OK);
    uint8_t in[8 * 64], wt[64 * 64], out[8 * 64 * 4], reg[112 * 8];
    memset(in, 1, sizeof in);
    memset(wt, 1, sizeof wt);
    npk_rk_stream_to_bin(p.regcmd, p.regcmd_entries, reg);
    npk_rk_emu *e;
    npk_rk_emu_opts eo = {3, 0, false};
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    npk_rk_emu_map(e, 0x10000000, in, sizeof in, &err);
    npk_rk_emu_map(e, 0x20000000, wt, sizeof wt, &err);
    npk_rk_emu_map(e, 0x30000000, out, sizeof out, &err);
    npk_rk_emu_map(e, 0x40000000, reg, sizeof reg, &err);
    assert_int_equal(npk_rk_emu_submit(e, &p.submit, p.records, p.count, &err), NPK_OK);
    assert_int_equal(npk_ld32le(out), 64); /* 64 products of 1 x 1 */
    npk_rknpu_submit s = p.submit;
    s.core_mask = 0x5;
    assert_int_equal(npk_rk_emu_submit(e, &s, p.records, p.count, &err), NPK_E_TIMEOUT);
    npk_error_clear(&err);
    s = p.submit;
    s.flags = 0;
    assert_int_equal(npk_rk_emu_submit(e, &s, p.records, p.count, &err), NPK_E_UNSUPPORTED);
    npk_error_clear(&err);
    p.records[0].int_mask = 0xC00;
    assert_int_equal(npk_rk_emu_submit(e, &p.submit, p.records, p.count, &err), NPK_E_TIMEOUT);
    assert_non_null(strstr(err.msg, "int_mask 0xc00"));
    npk_error_clear(&err);
    p.records[0].int_mask = 0x300;
    s = p.submit;
    s.subcore_task[0].task_number = 2;
    assert_int_equal(npk_rk_emu_submit(e, &s, p.records, p.count, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "outside the task buffer"));
    npk_rk_emu_destroy(e);
    npk_rk_plan_free(&p);
}

/* ---- DPU stages ---- */

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void test_dpu_stages_fp(void **state)
{
    (void)state;
    npk_rk_matmul mm = {8, 64, 32, NPK_RK_FP16, GOLD_IN, GOLD_WT, GOLD_OUT};
    world w;
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 3, NULL);
    /* BS: add 2.5; BN: multiply by 1.5 (fp16 operand), then ReLU; EW:
     * add -10 then ReLU clamped at 40. */
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_ALU_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_ALU_ALGO, 2);
    set_field(&w, NPK_RKF_DPU_BS_ALU_CFG_BS_ALU_OPERAND, bits_of(2.5f));
    set_field(&w, NPK_RKF_DPU_BN_CFG_BN_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BN_CFG_BN_MUL_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_OPERAND, npk_f32_to_f16(1.5f));
    set_field(&w, NPK_RKF_DPU_BN_CFG_BN_RELU_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_EW_CFG_EW_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_EW_CFG_EW_OP_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO, 2);
    set_field(&w, NPK_RKF_DPU_EW_OP_VALUE_0_EW_OPERAND_0, bits_of(-10.0f));
    set_field(&w, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN, 1);
    set_field(&w, NPK_RKF_DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT, bits_of(40.0f));
    npk_error err = {0};
    if (world_run(&w, &err)) fail_msg("%s", err.msg);
    int clamped = 0, zeroed = 0;
    for (uint32_t m = 0; m < mm.m; m++)
        for (uint32_t n = 0; n < mm.n; n++) {
            double v = (w.x.ref[m * mm.n + n] + 2.5) * 1.5;
            v = v < 0 ? 0 : v;
            v -= 10;
            v = v < 0 ? 0 : v > 40 ? 40 : v;
            clamped += v == 40, zeroed += v == 0;
            double got = rk_out_elem(w.out, mm.dtype, mm.m, m, n);
            if (got != v) fail_msg("C[%u][%u] = %g, want %g", m, n, got, v);
        }
    assert_true(clamped > 0 && zeroed > 0); /* the data exercises both limits */
    /* Unmodelled variants of the same stages. */
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_ALU_ALGO, 0);
    memset(w.out, SENTINEL, w.out_bytes);
    expect_error(&w, "DPU_BS_CFG.BS_ALU_ALGO = 0 is not modelled", "max");
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_ALU_ALGO, 2);
    set_field(&w, NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE, 1);
    expect_error(&w, "DPU_BN_MUL_CFG.BN_MUL_SHIFT_VALUE = 1 on the floating-point path", "shift");
    world_free(&w);
    (void)f32_of;
}

static void test_dpu_stages_int(void **state)
{
    (void)state;
    npk_rk_matmul mm = {4, 64, 32, NPK_RK_INT8, GOLD_IN, GOLD_WT, GOLD_OUT};
    world w;
    world_make(&w, &mm, NPK_RK_FORM_VENDOR, true, 5, NULL);
    /* BS: add 1000, multiply by 3 then shift right by 2 (floor), ReLU. */
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_ALU_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_ALU_ALGO, 2);
    set_field(&w, NPK_RKF_DPU_BS_ALU_CFG_BS_ALU_OPERAND, 1000);
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_MUL_BYPASS, 0);
    set_field(&w, NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_OPERAND, 3);
    set_field(&w, NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE, 2);
    set_field(&w, NPK_RKF_DPU_BS_CFG_BS_RELU_BYPASS, 0);
    npk_error err = {0};
    if (world_run(&w, &err)) fail_msg("%s", err.msg);
    int neg = 0;
    for (uint32_t m = 0; m < mm.m; m++)
        for (uint32_t n = 0; n < mm.n; n++) {
            long long v = (long long)w.x.ref[m * mm.n + n] + 1000;
            v = v * 3;
            long long q = v >= 0 ? v / 4 : -((-v + 3) / 4); /* floor */
            neg += q < 0;
            q = q < 0 ? 0 : q;
            double got = rk_out_elem(w.out, mm.dtype, mm.m, m, n);
            if (got != (double)q) fail_msg("C[%u][%u] = %g, want %lld", m, n, got, q);
        }
    assert_true(neg > 0);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_streams_execute),
        cmocka_unit_test(test_random_fp16_tolerance),
        cmocka_unit_test(test_kernels_agree),
        cmocka_unit_test(test_rocket_form),
        cmocka_unit_test(test_plans_all_dtypes_and_cores),
        cmocka_unit_test(test_single_core_emulator),
        cmocka_unit_test(test_unmodelled_fields),
        cmocka_unit_test(test_unmodelled_structure),
        cmocka_unit_test(test_submit_rules),
        cmocka_unit_test(test_dpu_stages_fp),
        cmocka_unit_test(test_dpu_stages_int),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
