/* Internal: an allocation arena for parsed models, with a byte budget so a
 * hostile file that shares one large vector among many tables cannot make
 * the parser allocate far more than the file's own size. */
#ifndef NPK_FB_ARENA_H
#define NPK_FB_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

typedef struct npk_arena npk_arena;

/* budget: total bytes the arena may hand out. */
npk_arena *npk_arena_new(size_t budget);
void npk_arena_free(npk_arena *a);
/* count * size zeroed bytes (suitably aligned); NULL for count 0. On
 * failure returns NULL and sets *st to NPK_E_LIMIT (over budget) or
 * NPK_E_NOMEM; off is the file offset named in the message. */
void *npk_arena_array(npk_arena *a, size_t count, size_t size, uint64_t off, npk_status *st,
                      npk_error *err);

#endif
