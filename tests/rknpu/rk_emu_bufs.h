/* One planned layer's buffers on a one-core emulator at fixed addresses:
 * the set-up the emulator's cache tests share (test_emu_fused,
 * test_emu_firstconv, test_emu_wcache). */
#ifndef NPK_TEST_RK_EMU_BUFS_H
#define NPK_TEST_RK_EMU_BUFS_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

#define IN_ADDR  0x10000000u
#define WT_ADDR  0x20000000u
#define OUT_ADDR 0x30000000u
#define REG_ADDR 0x40000000u

typedef struct bufs {
    uint8_t *in, *wt, *out, *reg;
} bufs;

/* The plan's options at these addresses (vendor form, exact requantisation). */
static inline npk_rk_lplan_opts rk_bufs_opts(void)
{
    npk_rk_lplan_opts o = {1, NPK_RK_FORM_VENDOR, IN_ADDR, WT_ADDR, OUT_ADDR, REG_ADDR, 0, 0,
                           0, NPK_RK_RQ_EXACT};
    return o;
}

/* p's input (x, NHWC) laid out, its weights and command stream. */
static inline bufs rk_bufs_make(const npk_rk_lplan *p, const void *x)
{
    bufs b = {calloc(1, p->input_bytes), malloc(p->weight_bytes), calloc(1, p->output_bytes),
              calloc(p->regcmd_entries, 8)};
    assert_true(b.in && b.wt && b.out && b.reg);
    memcpy(b.wt, p->wblob, p->weight_bytes);
    npk_rk_lplan_pack_input(p, x, b.in);
    npk_rk_stream_to_bin(p->regcmd, p->regcmd_entries, b.reg);
    return b;
}

static inline void rk_bufs_free(bufs *b)
{
    free(b->in), free(b->wt), free(b->out), free(b->reg);
}

/* An emulator with b mapped; the weights tracked or not. */
static inline npk_rk_emu *rk_bufs_emu(const npk_rk_lplan *p, bool portable, bool tracked,
                                      const bufs *b)
{
    npk_rk_emu_opts eo = {1, 0, portable};
    npk_rk_emu *e = NULL;
    npk_error err = {0};
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, IN_ADDR, b->in, p->input_bytes, &err), NPK_OK);
    assert_int_equal((tracked ? npk_rk_emu_map_tracked : npk_rk_emu_map)(e, WT_ADDR, b->wt,
                                                                         p->weight_bytes, &err),
                     NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, OUT_ADDR, b->out, p->output_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, REG_ADDR, b->reg, p->regcmd_entries * 8, &err), NPK_OK);
    return e;
}

/* One submit of p over an output buffer filled with fill; a copy of it. */
static inline uint8_t *rk_bufs_run(npk_rk_emu *e, const npk_rk_lplan *p, const bufs *b,
                                   uint8_t fill)
{
    npk_error err = {0};
    memset(b->out, fill, p->output_bytes);
    if (npk_rk_emu_submit(e, &p->submit, p->records, p->count, &err)) fail_msg("%s", err.msg);
    uint8_t *o = malloc(p->output_bytes);
    assert_non_null(o);
    memcpy(o, b->out, p->output_bytes);
    return o;
}

/* Two submits on one emulator, weights tracked (the second from the kept
 * kernels); the output, which both must give. */
static inline uint8_t *rk_bufs_run_twice(const npk_rk_lplan *p, bool portable, const bufs *b)
{
    npk_rk_emu *e = rk_bufs_emu(p, portable, true, b);
    uint8_t *o0 = rk_bufs_run(e, p, b, 0x5A), *o1 = rk_bufs_run(e, p, b, 0x5A);
    assert_memory_equal(o0, o1, p->output_bytes);
    free(o1);
    npk_rk_emu_destroy(e);
    return o0;
}

/* A layer on the SIMD and the portable emulator: planned at these
 * addresses (a refusal fails the test), its buffers made from x, and each
 * output from rk_bufs_run_twice. */
typedef struct rk_both {
    npk_rk_lplan p;
    bufs b;
    uint8_t *simd, *port;
} rk_both;

/* The index of the first byte the two outputs differ in, or -1. */
static inline ptrdiff_t rk_bufs_both(const npk_rk_layer *l, const void *x, rk_both *r)
{
    npk_rk_lplan_opts o = rk_bufs_opts();
    npk_error err = {0};
    if (npk_rk_lplan_make(l, &o, &r->p, &err)) fail_msg("%s", err.msg);
    r->b = rk_bufs_make(&r->p, x);
    r->simd = rk_bufs_run_twice(&r->p, false, &r->b);
    r->port = rk_bufs_run_twice(&r->p, true, &r->b);
    for (size_t i = 0; i < r->p.output_bytes; i++)
        if (r->simd[i] != r->port[i]) return (ptrdiff_t)i;
    return -1;
}

static inline void rk_both_free(rk_both *r)
{
    free(r->simd), free(r->port);
    rk_bufs_free(&r->b);
    npk_rk_lplan_free(&r->p);
}

#endif
