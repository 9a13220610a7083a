#include "fb_copy.h"

size_t npk_fbc_budget(size_t len)
{
    /* Parsed structs are a few times larger than their encoding; a hostile
     * file that shares vectors between tables is stopped at this bound. */
    size_t b = len > ((size_t)-1) / 64 ? (size_t)-1 : len * 64;
    return b < ((size_t)1 << 22) ? (size_t)1 << 22 : b;
}

void *npk_fbc_alloc(npk_fbc_rd *r, size_t count, size_t size, uint64_t off)
{
    return npk_arena_array(r->arena, count, size, off, &r->st, r->err);
}

#define COPY_VEC(name, type, width, get)                                                           \
    npk_status name(npk_fbc_rd *r, const npk_fb_table *t, int slot, uint32_t *n, type **out)      \
    {                                                                                              \
        npk_fb_vec v;                                                                              \
        *n = 0;                                                                                    \
        *out = NULL;                                                                               \
        npk_status st = npk_fb_vector(t, slot, width, &v, r->err);                                 \
        if (st || v.count == 0) return st;                                                         \
        if (NPK_FBC_ALLOC(r, v.count, *out, npk_fb_vec_offset(&v))) return r->st;                 \
        for (uint32_t i = 0; i < v.count; i++) (*out)[i] = get(&v, i);                             \
        *n = v.count;                                                                              \
        return NPK_OK;                                                                             \
    }

COPY_VEC(npk_fbc_i32s, int32_t, 4, npk_fb_vec_i32)
COPY_VEC(npk_fbc_f32s, float, 4, npk_fb_vec_f32)
COPY_VEC(npk_fbc_i64s, int64_t, 8, npk_fb_vec_i64)
