/* The emulator on arbitrary streams: never a crash or a hang, bounded memory
 * (every buffer it touches is mapped and small) and bounded work (a limit on
 * multiply-accumulates; at most a few tasks per core).
 *
 * Input: byte 0 = mode (bit 0: one or three cores; bits 1-2: task count
 * 1..4; bit 3: go through the vendor submit with records from bytes 3..42),
 * bytes 1-2 = PC amount (little-endian), the rest = the stream, placed at
 * 0x00001000. Input, weight and output buffers of 64 KiB are mapped at the
 * golden addresses 0x10000000, 0x20000000, 0x30000000. Each input runs twice
 * on two emulators, one with plain mappings and one with tracked ones (which
 * keeps decodes, kernels and operands across runs): same statuses, messages
 * and memory after each run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_emu.h"

#define BUF   65536
#define SADDR 0x00001000u

/* One emulator over its own buffers; tracked: every mapping made with
 * npk_rk_emu_map_tracked (what the emulator may then keep across runs). */
typedef struct world {
    uint8_t in[BUF], wt[BUF], out[BUF], stream[BUF];
    npk_rk_emu *e;
} world;

static npk_status run(world *w, const uint8_t *data, uint32_t tasks, uint32_t amount,
                      npk_error *err)
{
    if (data[0] & 8) {
        /* A submit whose records (and fields) come from the input. */
        npk_rknpu_task rec[4];
        npk_rknpu_submit s;
        memset(&s, 0, sizeof s);
        for (int i = 0; i < 4; i++)
            rec[i] = (npk_rknpu_task){0,
                                      0,
                                      0x0D,
                                      0x300,
                                      0x1FFFF,
                                      0,
                                      amount + (uint32_t)i,
                                      0,
                                      SADDR + 0x400u * (uint32_t)i};
        s.flags = 1;
        s.task_number = tasks;
        s.core_mask = data[0] >> 4;
        for (int i = 0; i < 5; i++) {
            s.subcore_task[i].task_start = (uint32_t)(i & 1);
            s.subcore_task[i].task_number = (uint32_t)((data[0] >> i) & 3);
        }
        return npk_rk_emu_submit(w->e, &s, rec, 4, err);
    }
    return npk_rk_emu_run_core(w->e, 0, SADDR, amount, tasks, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    static world ws[2];
    npk_rk_emu_opts o = {(data[0] & 1) ? 3 : 1, 1u << 20, false};
    npk_error err = {0};
    for (int k = 0; k < 2; k++) {
        world *w = &ws[k];
        for (size_t i = 0; i < BUF; i++) {
            w->in[i] = (uint8_t)(i * 7 + size);
            w->wt[i] = (uint8_t)(i * 13 + 1);
        }
        memset(w->out, 0, BUF);
        memset(w->stream, 0, BUF);
        size_t n = size - 3 < BUF ? size - 3 : BUF;
        memcpy(w->stream, data + 3, n);
        if (npk_rk_emu_create(&o, &w->e, &err)) {
            if (k) npk_rk_emu_destroy(ws[0].e);
            return 0;
        }
        npk_status (*map)(npk_rk_emu *, uint32_t, void *, size_t, npk_error *) =
            k ? npk_rk_emu_map_tracked : npk_rk_emu_map;
        map(w->e, 0x10000000, w->in, BUF, &err);
        map(w->e, 0x20000000, w->wt, BUF, &err);
        map(w->e, 0x30000000, w->out, BUF, &err);
        map(w->e, SADDR, w->stream, BUF, &err);
    }
    uint32_t tasks = 1 + ((data[0] >> 1) & 3), amount = npk_ld16le(data + 1);
    /* Two runs each: the tracked emulator's second may reuse what it kept
     * from the first (decodes, kernels, operands), and must give what the
     * untracked one gives. */
    for (int r = 0; r < 2; r++) {
        npk_error e0 = {0}, e1 = {0};
        npk_status s0 = run(&ws[0], data, tasks, amount, &e0);
        npk_status s1 = run(&ws[1], data, tasks, amount, &e1);
        if (s0 != s1 || strcmp(e0.msg, e1.msg) || memcmp(ws[0].out, ws[1].out, BUF) ||
            memcmp(ws[0].stream, ws[1].stream, BUF) || memcmp(ws[0].in, ws[1].in, BUF) ||
            memcmp(ws[0].wt, ws[1].wt, BUF))
            __builtin_trap();
    }
    for (int k = 0; k < 2; k++) {
        const npk_rk_emu_stats *st = npk_rk_emu_stats_get(ws[k].e);
        if (st->macs > 2 * o.max_macs) __builtin_trap();
        npk_rk_emu_destroy(ws[k].e);
    }
    return 0;
}
