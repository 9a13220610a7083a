/* Internal helpers shared by the FlatBuffers-based readers (TFLite, DarwiNN): copying
 * FlatBuffers vectors into host-order arrays held by a budgeted arena. */
#ifndef NPK_FB_COPY_H
#define NPK_FB_COPY_H

#include "npukit/flatbuf.h"
#include "fb_arena.h"

typedef struct npk_fbc_rd {
    npk_arena *arena;
    npk_error *err;
    npk_status st; /* status of the last allocation */
} npk_fbc_rd;

/* Allocation budget for parsing a file of len bytes. */
size_t npk_fbc_budget(size_t len);

void *npk_fbc_alloc(npk_fbc_rd *r, size_t count, size_t size, uint64_t off);
/* ptr = count zeroed elements of *ptr's type; evaluates to the status. */
#define NPK_FBC_ALLOC(r, count, ptr, off)                                                         \
    ((ptr) = npk_fbc_alloc((r), (count), sizeof *(ptr), (off)), (r)->st)

/* Copy a vector field into a new array (*n = 0, *out = NULL when absent). */
npk_status npk_fbc_i32s(npk_fbc_rd *r, const npk_fb_table *t, int slot, uint32_t *n,
                         int32_t **out);
npk_status npk_fbc_f32s(npk_fbc_rd *r, const npk_fb_table *t, int slot, uint32_t *n, float **out);
npk_status npk_fbc_i64s(npk_fbc_rd *r, const npk_fb_table *t, int slot, uint32_t *n,
                         int64_t **out);

#endif
