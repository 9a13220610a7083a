/* Internal: placing the interpreter's buffers (activations and per-op
 * scratch) in one arena by lifetime. */
#ifndef NPK_TFL_ARENA_H
#define NPK_TFL_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* Every buffer starts at a multiple of this (SIMD loads, cache lines). */
#define NPK_TFL_ARENA_ALIGN 64

typedef struct npk_tfl_arena_item {
    size_t bytes;
    int32_t first, last; /* alive during plan steps first..last (inclusive) */
    size_t offset;       /* result */
} npk_tfl_arena_item;

/* Place the items: greedy by size (largest first), each at the best-fitting
 * gap among the items it overlaps in time. *total: the arena's size;
 * *peak: the largest sum of bytes alive at one step (the lower bound). 1 on
 * size overflow. */
int npk_tfl_arena_plan(npk_tfl_arena_item *items, size_t n, size_t *total, size_t *peak);

#endif
