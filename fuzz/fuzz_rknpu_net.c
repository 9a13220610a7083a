/* The whole-network compiler on arbitrary models: partition, lowering,
 * memory plan, streams placed, CPU segments' interpreters (models over 48
 * operators, 128 tensors or 65536 elements per tensor skipped, to keep runs
 * short). Invariants: a refusal has a message; a compiled net passes its own
 * memory check, its segments cover every operator once in order, every
 * layer's task records point into the streams, every submit over several
 * cores passes npk_rk_net_check_submit with its records grouped by core,
 * and relocating the streams gives the same bytes as planning every layer
 * again. */
#include <string.h>

#include "npukit/rknpu_net.h"

#include "fuzz_small_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tfl_model m;
    if (npk_tfl_parse(data, size, &m, NULL) != NPK_OK) return 0;
    if (!fuzz_small_model(&m)) {
        npk_tfl_free(&m);
        return 0;
    }
    int cores = 1 + (int)(size % 3);
    npk_rk_net_opts o = {cores,
                         size % 2 ? NPK_RK_FORM_ROCKET : NPK_RK_FORM_VENDOR,
                         NPK_RK_RQ_EXACT,
                         0,
                         0,
                         0,
                         1,
                         false,
                         false};
    npk_rk_net a;
    npk_error err = {0};
    if (npk_rk_net_compile(&m, &o, &a, &err) != NPK_OK) {
        if (!err.msg[0]) __builtin_trap();
        npk_tfl_free(&m);
        return 0;
    }
    if (npk_rk_net_check_memory(&a, NULL) != NPK_OK) __builtin_trap();
    uint32_t next = 0;
    for (size_t k = 0; k < a.nsegs; k++) {
        if (a.segs[k].op_first != next) __builtin_trap();
        next += a.segs[k].op_count;
    }
    if (next != m.subgraphs[0].noperators) __builtin_trap();
    uint64_t reg_end = (uint64_t)a.opts.regcmd_addr + a.regcmd_entries * 8;
    for (size_t t = 0; t < a.ntasks; t++)
        if (a.records[t].regcmd_addr < a.opts.regcmd_addr || a.records[t].regcmd_addr >= reg_end)
            __builtin_trap();
    /* Every submit over several cores keeps the cross-core rule, its core
     * ranges contiguous and in order, every record once. */
    npk_rk_net_submit_view v;
    size_t recs = 0;
    for (size_t k = 0; npk_rk_net_submit_at(&a, k, &v); k++) {
        if (v.cores > 1 && npk_rk_net_check_submit(&a, v.first_op, v.nops, NULL) != NPK_OK)
            __builtin_trap();
        uint32_t sum = 0;
        for (int c = 0; c < v.cores; c++) {
            if (v.core_first[c] != sum) __builtin_trap();
            sum += v.core_count[c];
        }
        if (sum != v.task_count || v.task_first != recs) __builtin_trap();
        recs += v.task_count;
    }
    if (recs != a.ntasks) __builtin_trap();
    o.replan = true;
    npk_rk_net b;
    if (npk_rk_net_compile(&m, &o, &b, NULL) != NPK_OK) __builtin_trap();
    if (a.regcmd_entries != b.regcmd_entries || memcmp(a.regcmd, b.regcmd, a.regcmd_entries * 8) ||
        a.ntasks != b.ntasks || memcmp(a.records, b.records, a.ntasks * sizeof *a.records))
        __builtin_trap();
    npk_rk_net_free(&b);
    npk_rk_net_free(&a);
    npk_tfl_free(&m);
    return 0;
}
