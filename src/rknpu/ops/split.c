/* Contiguous task ranges per core: binary search on the largest core's work,
 * then a greedy fill that leaves at least one task for every later core. */
#include <stdbool.h>
#include <string.h>

#include "ops_internal.h"

static int cores_needed(const uint64_t *work, size_t n, uint64_t bound)
{
    uint64_t load = 0;
    int used = 1;
    for (size_t i = 0; i < n; i++) {
        if (load + work[i] > bound) {
            used++;
            load = 0;
        }
        load += work[i];
    }
    return used;
}

void rk_split_ranges(const uint64_t *work, size_t n, int cores, int *core,
                     uint32_t first[NPK_RKNPU_MAX_CORES], uint32_t count[NPK_RKNPU_MAX_CORES],
                     uint64_t load_out[NPK_RKNPU_MAX_CORES])
{
    uint64_t lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        hi += work[i];
        if (work[i] > lo) lo = work[i];
    }
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cores_needed(work, n, mid) <= cores)
            hi = mid;
        else
            lo = mid + 1;
    }
    memset(first, 0, NPK_RKNPU_MAX_CORES * sizeof *first);
    memset(count, 0, NPK_RKNPU_MAX_CORES * sizeof *count);
    memset(load_out, 0, NPK_RKNPU_MAX_CORES * sizeof *load_out);
    int c = 0;
    uint64_t load = 0;
    for (size_t i = 0; i < n; i++) {
        size_t left = n - i;
        bool must_move = c + 1 < cores && left <= (size_t)(cores - 1 - c);
        if (count[c] && (load + work[i] > lo || must_move) && c + 1 < cores) {
            c++;
            first[c] = (uint32_t)i;
            load = 0;
        }
        core[i] = c;
        count[c]++;
        load_out[c] += work[i];
        load += work[i];
    }
}
