/* The driver records every planner ends with: one task record per register
 * stream and the submit that spreads the tasks over the cores. */
#include "npukit/rknpu_stream.h"
#include "ops_internal.h"

npk_rknpu_task rk_task_record(const uint64_t *regcmd, uint32_t off, uint32_t entries,
                              uint32_t int_mask, uint64_t regcmd_addr)
{
    /* The stream's last entry is the operation enable: its value is the
     * task's enable mask. */
    npk_rk_entry en;
    npk_rk_entry_decode(regcmd[off / 8 + entries - 1], &en);
    return (npk_rknpu_task){0,
                            0,
                            en.value,
                            int_mask,
                            NPK_RKNPU_INT_CLEAR,
                            0,
                            npk_rknpu_regcfg_amount(entries),
                            0,
                            regcmd_addr + off};
}

void rk_submit_fill(npk_rknpu_submit *s, size_t count, int cores,
                    const uint32_t first[NPK_RKNPU_MAX_CORES],
                    const uint32_t number[NPK_RKNPU_MAX_CORES])
{
    s->flags = NPK_RKNPU_JOB_PC | NPK_RKNPU_JOB_BLOCK | NPK_RKNPU_JOB_PINGPONG;
    s->timeout = NPK_RKNPU_TIMEOUT_MS;
    s->task_start = 0;
    s->task_number = (uint32_t)count;
    s->core_mask = (1u << cores) - 1;
    s->fence_fd = -1;
    for (int c = 0; c < cores; c++) {
        int slot = npk_rknpu_subcore_slot(s->core_mask, c);
        s->subcore_task[slot].task_start = first[c];
        s->subcore_task[slot].task_number = number[c];
    }
}
