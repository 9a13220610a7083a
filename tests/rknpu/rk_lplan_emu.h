/* A layer planned with explicit options (requantisation mode, tiling knobs)
 * and run on a three-core emulator through the vendor submit: the tests'
 * way to run what npk_rk_run_layer (exact mode, hardware limits) does not
 * expose. */
#ifndef NPK_TEST_RK_LPLAN_EMU_H
#define NPK_TEST_RK_LPLAN_EMU_H

#include <stdlib.h>
#include <string.h>

#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

/* Plan l with o (addresses are chosen here), run it, unpack into y (NHWC of
 * the layer's type). Returns the plan's status (err set), or the
 * emulator's. tasks receives the plan's task count. */
static inline npk_status rk_lplan_emu_run_rows(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                                               const uint32_t *rows, const void *x, const void *x2,
                                               void *y, size_t *tasks, npk_error *err);

static inline npk_status rk_lplan_emu_run(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                                          const void *x, const void *x2, void *y, size_t *tasks,
                                          npk_error *err)
{
    return rk_lplan_emu_run_rows(l, o, NULL, x, x2, y, tasks, err);
}

/* The same with each core's output rows given (npk_rk_lplan_make_rows). */
static inline npk_status rk_lplan_emu_run_rows(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                                               const uint32_t *rows, const void *x, const void *x2,
                                               void *y, size_t *tasks, npk_error *err)
{
    npk_rk_lplan_opts po = *o;
    po.input_addr = 0x10000000u;
    po.weight_addr = 0x20000000u;
    po.output_addr = 0x30000000u;
    po.regcmd_addr = 0x40000000u;
    po.input2_addr = 0x50000000u;
    po.form = NPK_RK_FORM_VENDOR;
    npk_rk_lplan p;
    npk_status st = npk_rk_lplan_make_rows(l, &po, rows, &p, err);
    if (st) return st;
    uint64_t n2 = npk_rk_lplan_input2_bytes(&p);
    uint8_t *in = calloc(1, (size_t)p.input_bytes), *in2 = calloc(1, n2 ? (size_t)n2 : 1);
    uint8_t *wt = malloc(p.weight_bytes ? (size_t)p.weight_bytes : 1);
    uint8_t *out = calloc(1, (size_t)p.output_bytes), *reg = calloc(p.regcmd_entries, 8);
    npk_rk_emu *e = NULL;
    npk_rk_emu_opts eo = {3, 0, false};
    if (!in || !in2 || !wt || !out || !reg) {
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto out;
    }
    npk_rk_lplan_pack_input(&p, x, in);
    if (n2) npk_rk_lplan_pack_input2(&p, x2, in2);
    if (p.weight_bytes) memcpy(wt, p.wblob, (size_t)p.weight_bytes);
    npk_rk_stream_to_bin(p.regcmd, p.regcmd_entries, reg);
    if ((st = npk_rk_emu_create(&eo, &e, err)) ||
        (st = npk_rk_emu_map(e, po.input_addr, in, (size_t)p.input_bytes, err)) ||
        (p.weight_bytes &&
         (st = npk_rk_emu_map(e, po.weight_addr, wt, (size_t)p.weight_bytes, err))) ||
        (n2 && (st = npk_rk_emu_map(e, po.input2_addr, in2, (size_t)n2, err))) ||
        (st = npk_rk_emu_map(e, po.output_addr, out, (size_t)p.output_bytes, err)) ||
        (st = npk_rk_emu_map(e, po.regcmd_addr, reg, p.regcmd_entries * 8, err)) ||
        (st = npk_rk_emu_submit(e, &p.submit, p.records, p.count, err)))
        goto out;
    npk_rk_lplan_unpack_output(&p, out, y);
    if (tasks) *tasks = p.count;
out:
    if (e) npk_rk_emu_destroy(e);
    free(in), free(in2), free(wt), free(out), free(reg);
    npk_rk_lplan_free(&p);
    return st;
}

#endif
