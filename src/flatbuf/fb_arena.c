#include <stdlib.h>
#include <string.h>

#include "npukit/checked.h"
#include "fb_arena.h"

struct block {
    struct block *next;
    max_align_t data[];
};

struct npk_arena {
    struct block *head;
    size_t used, budget;
};

npk_arena *npk_arena_new(size_t budget)
{
    npk_arena *a = calloc(1, sizeof *a);
    if (a) a->budget = budget;
    return a;
}

void npk_arena_free(npk_arena *a)
{
    if (!a) return;
    for (struct block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

void *npk_arena_array(npk_arena *a, size_t count, size_t size, uint64_t off, npk_status *st,
                      npk_error *err)
{
    size_t n, total;
    *st = NPK_OK;
    if (count == 0) return NULL;
    if (!npk_mul_sz(count, size, &n) || !npk_add_sz(a->used, n, &total) || total > a->budget) {
        *st = npk_fail_at(err, NPK_E_LIMIT, off,
                          "%zu elements of %zu bytes exceed the allocation budget of %zu bytes "
                          "for this file",
                          count, size, a->budget);
        return NULL;
    }
    struct block *b = calloc(1, sizeof *b + n);
    if (!b) {
        *st = npk_fail(err, NPK_E_NOMEM, "out of memory (%zu bytes)", n);
        return NULL;
    }
    b->next = a->head;
    a->head = b;
    a->used = total;
    return b->data;
}
