/* Overflow-checked size arithmetic. Each returns true on success and stores
 * the result; on overflow it returns false and leaves *out unspecified. */
#ifndef NPUKIT_CHECKED_H
#define NPUKIT_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool npk_add_sz(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}
static inline bool npk_mul_sz(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool npk_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}
static inline bool npk_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
/* a*b*c... for up to n factors; false on overflow. */
static inline bool npk_prod_sz(const size_t *f, size_t n, size_t *out)
{
    size_t r = 1;
    for (size_t i = 0; i < n; i++)
        if (!npk_mul_sz(r, f[i], &r)) return false;
    *out = r;
    return true;
}
/* Convert a u64 (e.g. a field read from a file) to size_t without truncation. */
static inline bool npk_u64_to_sz(uint64_t v, size_t *out)
{
    if (v > (uint64_t)SIZE_MAX) return false;
    *out = (size_t)v;
    return true;
}
/* Round v up to a multiple of align (a power of two); false on overflow. */
static inline bool npk_align_sz(size_t v, size_t align, size_t *out)
{
    size_t t;
    if (!npk_add_sz(v, align - 1, &t)) return false;
    *out = t & ~(align - 1);
    return true;
}

#endif
