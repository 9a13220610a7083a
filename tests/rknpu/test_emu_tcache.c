/* The emulator keeps each fetched stream's decode and register checks
 * across runs (emu_tcache.c) only while it can tell nothing they depend on
 * changed: a second run of a tracked command buffer reuses every task's
 * decode (stats.decode_hits) with the same output; a command buffer changed
 * by the host — through npk_rk_emu_host's pointer, or written and touched —
 * is decoded and checked again (a bad field is refused naming it, the output
 * untouched), and so is every run of an untracked buffer, and a task whose
 * core registers differ before its fetch (another layer ran in between). A
 * broken promise (a write with no touch) shows the kept decode is what runs
 * otherwise. */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

#define IN_ADDR  0x10000000u
#define WT_ADDR  0x20000000u
#define OUT_ADDR 0x30000000u
#define REG_ADDR 0x40000000u
#define BASE2    0x01000000u /* the second layer's buffers: each address + BASE2 */
#define SENTINEL 0x5A

typedef struct layer {
    npk_rk_lplan p;
    uint8_t *in, *wt, *out, *reg;
} layer;

static void layer_make(layer *y, uint32_t out_c, uint32_t base, uint32_t seed)
{
    enum { H = 9, W = 8, C = 64, K = 3 };
    memset(y, 0, sizeof *y);
    int8_t *w = malloc((size_t)out_c * K * K * C), *x = malloc((size_t)H * W * C);
    assert_true(w && x);
    uint32_t r = seed;
    for (size_t i = 0; i < (size_t)out_c * K * K * C; i++) {
        r = r * 1103515245u + 12345u;
        w[i] = (int8_t)(r >> 24);
    }
    for (size_t i = 0; i < (size_t)H * W * C; i++) {
        r = r * 1103515245u + 12345u;
        x[i] = (int8_t)(r >> 24);
    }
    npk_rk_layer l = {0};
    l.kind = NPK_RK_LAYER_CONV;
    l.type = NPK_RK_LT_INT8;
    l.in_h = l.out_h = H, l.in_w = l.out_w = W, l.in_c = C, l.out_c = out_c;
    l.k_h = l.k_w = K, l.stride_h = l.stride_w = l.dil_h = l.dil_w = 1;
    l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = 1;
    l.in.scale = 0.02, l.in.zero_point = 3, l.w.scale = 0.01, l.out.scale = 0.25;
    l.act_min = -128, l.act_max = 127;
    l.weights = w;
    /* three output rows per task: a chain of tasks */
    npk_rk_lplan_opts o = {1,
                           NPK_RK_FORM_VENDOR,
                           IN_ADDR + base,
                           WT_ADDR + base,
                           OUT_ADDR + base,
                           REG_ADDR + base,
                           3,
                           0,
                           0,
                           NPK_RK_RQ_EXACT};
    npk_error err = {0};
    assert_int_equal(npk_rk_lplan_make(&l, &o, &y->p, &err), NPK_OK);
    assert_true(y->p.count >= 3);
    y->in = calloc(1, y->p.input_bytes), y->wt = malloc(y->p.weight_bytes);
    y->out = calloc(1, y->p.output_bytes), y->reg = calloc(y->p.regcmd_entries, 8);
    assert_true(y->in && y->wt && y->out && y->reg);
    npk_rk_lplan_pack_input(&y->p, x, y->in);
    memcpy(y->wt, y->p.wblob, y->p.weight_bytes);
    npk_rk_stream_to_bin(y->p.regcmd, y->p.regcmd_entries, y->reg);
    free(w), free(x);
}

static void layer_map(npk_rk_emu *e, const layer *y, uint32_t base, bool tracked_reg)
{
    npk_error err = {0};
    assert_int_equal(npk_rk_emu_map_tracked(e, IN_ADDR + base, y->in, y->p.input_bytes, &err),
                     NPK_OK);
    assert_int_equal(npk_rk_emu_map_tracked(e, WT_ADDR + base, y->wt, y->p.weight_bytes, &err),
                     NPK_OK);
    assert_int_equal(npk_rk_emu_map_tracked(e, OUT_ADDR + base, y->out, y->p.output_bytes, &err),
                     NPK_OK);
    assert_int_equal((tracked_reg ? npk_rk_emu_map_tracked : npk_rk_emu_map)(
                         e, REG_ADDR + base, y->reg, y->p.regcmd_entries * 8, &err),
                     NPK_OK);
}

static void layer_free(layer *y)
{
    npk_rk_lplan_free(&y->p);
    free(y->in), free(y->wt), free(y->out), free(y->reg);
}

/* One submit of y; st: its status, *hits: the tasks whose decode was kept;
 * err's message kept for the caller. */
static npk_status run(npk_rk_emu *e, const layer *y, uint64_t *hits, npk_error *err)
{
    memset(y->out, SENTINEL, y->p.output_bytes);
    npk_rk_emu_stats_clear(e);
    npk_status st = npk_rk_emu_submit(e, &y->p.submit, y->p.records, y->p.count, err);
    *hits = npk_rk_emu_stats_get(e)->decode_hits;
    return st;
}

static uint8_t *run_ok(npk_rk_emu *e, const layer *y, uint64_t want_hits)
{
    npk_error err = {0};
    uint64_t hits = 0;
    assert_int_equal(run(e, y, &hits, &err), NPK_OK);
    assert_int_equal(hits, want_hits);
    uint8_t *o = malloc(y->p.output_bytes);
    assert_non_null(o);
    memcpy(o, y->out, y->p.output_bytes);
    return o;
}

/* After a run that decoded every task: the next run keeps every decode
 * but the first task's (the core's registers before it were those of a
 * fresh core or of another fetch, now those y's last task left), the one
 * after keeps all; the same output as ref each time. */
static void settle(npk_rk_emu *e, const layer *y, const uint8_t *ref)
{
    for (uint64_t hits = y->p.count - 1; hits <= y->p.count; hits++) {
        uint8_t *o = run_ok(e, y, hits);
        assert_memory_equal(o, ref, y->p.output_bytes);
        free(o);
    }
}

static void run_bad(npk_rk_emu *e, const layer *y, const char *needle)
{
    npk_error err = {0};
    uint64_t hits = 9;
    assert_int_not_equal(run(e, y, &hits, &err), NPK_OK);
    if (!strstr(err.msg, needle)) fail_msg("'%s' lacks '%s'", err.msg, needle);
    assert_int_equal(hits, 0);
    for (size_t i = 0; i < y->p.output_bytes; i++)
        if (y->out[i] != SENTINEL) fail_msg("output byte %zu written despite the error", i);
}

/* The stream entry writing CNA_CBUF_CON1 in the first task (a byte offset
 * in the command buffer) and a value of its DATA_ENTRIES that is refused. */
static size_t entries_at(const layer *y, uint64_t *bad)
{
    for (size_t i = 0; i < y->p.regcmd_entries; i++) {
        npk_rk_entry en;
        npk_rk_entry_decode(npk_ld64le(y->reg + 8 * i), &en);
        if (en.kind == NPK_RK_WRITE && en.reg == NPK_RKR_CNA_CBUF_CON1) {
            npk_rk_field f = NPK_RKF_CNA_CBUF_CON1_DATA_ENTRIES;
            *bad = npk_rk_write(
                en.reg, npk_rk_field_insert(f, en.value, npk_rk_field_extract(f, en.value) + 1));
            return 8 * i;
        }
    }
    fail_msg("no CNA_CBUF_CON1 write");
    return 0;
}

static void test_changed_stream_decoded_again(void **state)
{
    (void)state;
    layer y;
    layer_make(&y, 48, 0, 12345);
    uint64_t bad;
    const size_t at = entries_at(&y, &bad);
    const uint64_t good = npk_ld64le(y.reg + at);
    npk_rk_emu_opts eo = {1, 0, false};
    npk_error err = {0};
    npk_rk_emu *e = NULL;
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    layer_map(e, &y, 0, true);
    uint8_t *a1 = run_ok(e, &y, 0);
    settle(e, &y, a1);

    /* written through the emulator's pointer (a touch by itself) */
    uint8_t *reg = npk_rk_emu_host(e, REG_ADDR, y.p.regcmd_entries * 8);
    assert_ptr_equal(reg, y.reg);
    npk_st64le(reg + at, bad);
    run_bad(e, &y, "CNA_CBUF_CON1.DATA_ENTRIES");
    reg = npk_rk_emu_host(e, REG_ADDR, y.p.regcmd_entries * 8);
    npk_st64le(reg + at, good);
    uint8_t *a3 = run_ok(e, &y, 0); /* decoded again, then kept */
    assert_memory_equal(a1, a3, y.p.output_bytes);
    settle(e, &y, a1);

    /* written by the host and touched */
    npk_st64le(y.reg + at, bad);
    npk_rk_emu_touch(e, REG_ADDR + 8);
    run_bad(e, &y, "CNA_CBUF_CON1.DATA_ENTRIES");
    npk_st64le(y.reg + at, good);
    npk_rk_emu_touch(e, REG_ADDR + 8);
    free(run_ok(e, &y, 0));
    settle(e, &y, a1);

    /* a broken promise (no touch): the kept decode runs, the bad field
     * unseen — what the touch is for */
    npk_st64le(y.reg + at, bad);
    uint8_t *stale = run_ok(e, &y, y.p.count);
    assert_memory_equal(a1, stale, y.p.output_bytes);
    npk_rk_emu_touch(e, REG_ADDR);
    run_bad(e, &y, "CNA_CBUF_CON1.DATA_ENTRIES");
    npk_st64le(y.reg + at, good);
    npk_rk_emu_touch(e, REG_ADDR);

    /* another layer's tasks in between leave other register values: the
     * first task of y (whose registers before its fetch differ) is decoded
     * again; the output is the same */
    layer z;
    layer_make(&z, 32, BASE2, 777);
    layer_map(e, &z, BASE2, true);
    free(run_ok(e, &y, 0)); /* the mapping table changed: every decode again */
    settle(e, &y, a1);
    uint8_t *b1 = run_ok(e, &z, 0);
    settle(e, &z, b1);
    uint8_t *a5 = run_ok(e, &y, y.p.count - 1);
    assert_memory_equal(a1, a5, y.p.output_bytes);
    npk_rk_emu_destroy(e);
    layer_free(&z);
    free(a1), free(a3), free(a5), free(b1), free(stale);
    layer_free(&y);
}

static void test_untracked_stream_decoded_every_run(void **state)
{
    (void)state;
    layer y;
    layer_make(&y, 48, 0, 4242);
    uint64_t bad;
    const size_t at = entries_at(&y, &bad);
    const uint64_t good = npk_ld64le(y.reg + at);
    npk_rk_emu_opts eo = {1, 0, false};
    npk_error err = {0};
    npk_rk_emu *e = NULL;
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    layer_map(e, &y, 0, false);
    uint8_t *a1 = run_ok(e, &y, 0);
    uint8_t *a2 = run_ok(e, &y, 0);
    assert_memory_equal(a1, a2, y.p.output_bytes);
    npk_st64le(y.reg + at, bad); /* no touch: none needed */
    run_bad(e, &y, "CNA_CBUF_CON1.DATA_ENTRIES");
    npk_st64le(y.reg + at, good);
    uint8_t *a3 = run_ok(e, &y, 0);
    assert_memory_equal(a1, a3, y.p.output_bytes);
    npk_rk_emu_destroy(e);
    free(a1), free(a2), free(a3);
    layer_free(&y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changed_stream_decoded_again),
        cmocka_unit_test(test_untracked_stream_decoded_every_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
