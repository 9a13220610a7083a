/* Internals shared by the task planners (matmul plans, layer plans). */
#ifndef NPK_RKNPU_OPS_INTERNAL_H
#define NPK_RKNPU_OPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/rknpu_uapi.h"

/* Give `cores` cores contiguous ranges of the n tasks (work[i] each) so that
 * the largest core's work is minimal, every core getting at least one task
 * when n >= cores. Fills core[i] per task, and first/count/load per core. */
void rk_split_ranges(const uint64_t *work, size_t n, int cores, int *core,
                     uint32_t first[NPK_RKNPU_MAX_CORES], uint32_t count[NPK_RKNPU_MAX_CORES],
                     uint64_t load[NPK_RKNPU_MAX_CORES]);

#endif
