/* Matmul validation and planning with arbitrary shapes, options and buffer
 * addresses: never a crash; every accepted plan's streams decode without
 * problems, every buffer lies inside the 32-bit DMA address space and no
 * two buffers overlap. Input: 25 bytes of parameters. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 25) return 0;
    npk_rk_plan_opts o;
    memset(&o, 0, sizeof o);
    o.m = npk_ld32le(data) % 20000;
    o.k = npk_ld32le(data + 4) % 40000;
    o.n = npk_ld32le(data + 8) % 40000;
    o.dtype = (npk_rk_dtype)(data[12] % 4);
    o.cores = data[13] % 5;
    o.max_m = npk_ld16le(data + 14);
    o.max_n = npk_ld16le(data + 16);
    o.regcmd_addr = npk_ld32le(data + 18) & ~63u;
    o.input_addr = (uint32_t)data[22] << 24;
    o.output_addr = (uint32_t)data[23] << 24;
    o.weight_addr = (uint32_t)data[24] << 24;
    npk_rk_matmul mm = {o.m, o.k, o.n, o.dtype, 0, 0, 0};
    uint64_t s[NPK_RK_MATMUL_ENTRIES];
    npk_error err = {0};
    npk_rk_matmul_stream(&mm, s, &err);
    npk_rk_plan p;
    npk_error_clear(&err);
    if (npk_rk_plan_make(&o, &p, &err) != NPK_OK) return 0;
    for (size_t i = 0; i < p.regcmd_entries; i++) {
        npk_rk_entry e;
        npk_rk_entry_decode(p.regcmd[i], &e);
        if (e.problems) __builtin_trap();
    }
    const uint64_t addr[4] = {o.input_addr, o.weight_addr, o.output_addr, o.regcmd_addr};
    const uint64_t len[4] = {p.input_bytes, p.weight_bytes, p.output_bytes, p.regcmd_entries * 8};
    bool placed = addr[0] || addr[1] || addr[2] || addr[3];
    for (int i = 0; i < 4; i++) {
        if (addr[i] + len[i] > ((uint64_t)1 << 32)) __builtin_trap();
        for (int j = i + 1; placed && j < 4; j++)
            if (len[i] && len[j] && addr[i] < addr[j] + len[j] && addr[j] < addr[i] + len[i])
                __builtin_trap();
    }
    npk_rk_plan_free(&p);
    return 0;
}
