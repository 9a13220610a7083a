/* Matmul validation and planning with arbitrary shapes and options: never a
 * crash, and every accepted plan's streams decode without problems. */
#include <stdint.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 24) return 0;
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
    npk_rk_plan_free(&p);
    return 0;
}
