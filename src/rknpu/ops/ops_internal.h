/* Internals shared by the task planners (matmul plans, layer plans). */
#ifndef NPK_RKNPU_OPS_INTERNAL_H
#define NPK_RKNPU_OPS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_uapi.h"

/* A device buffer of a plan, for rk_check_buffers. */
typedef struct rk_buf {
    const char *name; /* "input", "weight", "output", "regcmd", "input2" */
    uint64_t addr, bytes;
    int alias; /* buffers with the same nonzero value may be the very same buffer
                  (an element-wise input written in place), never partly overlap */
} rk_buf;

/* Every buffer inside the 32-bit DMA address space and no two overlapping;
 * refusals name both buffers and their ranges. All addresses 0 means the
 * buffers are not placed yet (a plan made for its sizes): only the sizes
 * are checked. */
npk_status rk_check_buffers(const rk_buf *b, size_t n, npk_error *err);

/* Give `cores` cores contiguous ranges of the n tasks (work[i] each) so that
 * the largest core's work is minimal, every core getting at least one task
 * when n >= cores. Fills core[i] per task, and first/count/load per core. */
void rk_split_ranges(const uint64_t *work, size_t n, int cores, int *core,
                     uint32_t first[NPK_RKNPU_MAX_CORES], uint32_t count[NPK_RKNPU_MAX_CORES],
                     uint64_t load[NPK_RKNPU_MAX_CORES]);

/* The driver record of the task whose stream is `entries` entries at byte
 * `off` of regcmd (placed at regcmd_addr): enable mask from its last entry. */
npk_rknpu_task rk_task_record(const uint64_t *regcmd, uint32_t off, uint32_t entries,
                              uint32_t int_mask, uint64_t regcmd_addr);
/* The submit of `count` tasks, core c running number[c] from first[c]. */
void rk_submit_fill(npk_rknpu_submit *s, size_t count, int cores,
                    const uint32_t first[NPK_RKNPU_MAX_CORES],
                    const uint32_t number[NPK_RKNPU_MAX_CORES]);

#endif
