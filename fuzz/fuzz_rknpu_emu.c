/* The emulator on arbitrary streams: never a crash or a hang, bounded memory
 * (every buffer it touches is mapped and small) and bounded work (a limit on
 * multiply-accumulates; at most a few tasks per core).
 *
 * Input: byte 0 = mode (bit 0: one or three cores; bits 1-2: task count
 * 1..4; bit 3: go through the vendor submit with records from bytes 3..42),
 * bytes 1-2 = PC amount (little-endian), the rest = the stream, placed at
 * 0x00001000. Input, weight and output buffers of 64 KiB are mapped at the
 * golden addresses 0x10000000, 0x20000000, 0x30000000. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_emu.h"

#define BUF   65536
#define SADDR 0x00001000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    static uint8_t in[BUF], wt[BUF], out[BUF], stream[BUF];
    for (size_t i = 0; i < BUF; i++) {
        in[i] = (uint8_t)(i * 7 + size);
        wt[i] = (uint8_t)(i * 13 + 1);
    }
    memset(out, 0, BUF);
    memset(stream, 0, BUF);
    size_t n = size - 3 < BUF ? size - 3 : BUF;
    memcpy(stream, data + 3, n);

    npk_rk_emu_opts o = {(data[0] & 1) ? 3 : 1, 1u << 20, false};
    npk_rk_emu *e;
    npk_error err = {0};
    if (npk_rk_emu_create(&o, &e, &err)) return 0;
    npk_rk_emu_map(e, 0x10000000, in, BUF, &err);
    npk_rk_emu_map(e, 0x20000000, wt, BUF, &err);
    npk_rk_emu_map(e, 0x30000000, out, BUF, &err);
    npk_rk_emu_map(e, SADDR, stream, BUF, &err);
    uint32_t tasks = 1 + ((data[0] >> 1) & 3), amount = npk_ld16le(data + 1);
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
        npk_rk_emu_submit(e, &s, rec, 4, &err);
    } else {
        npk_rk_emu_run_core(e, 0, SADDR, amount, tasks, &err);
    }
    const npk_rk_emu_stats *st = npk_rk_emu_stats_get(e);
    if (st->macs > o.max_macs) __builtin_trap();
    npk_rk_emu_destroy(e);
    return 0;
}
