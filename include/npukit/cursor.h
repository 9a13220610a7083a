/* A bounded reader over untrusted bytes. Every read checks the remaining
 * length first; a failed read leaves the position unchanged and records an
 * NPK_E_FORMAT error whose offset is the absolute file offset of the read
 * (base + position), so messages point at the exact byte. */
#ifndef NPUKIT_CURSOR_H
#define NPUKIT_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npk_cursor {
    const uint8_t *data; /* first byte of the window */
    size_t size;         /* bytes in the window */
    size_t pos;          /* read position inside the window */
    uint64_t base;       /* absolute file offset of data[0], for messages */
    const char *what;    /* optional name of the structure being read */
} npk_cursor;

npk_cursor npk_cur_init(const void *data, size_t size, uint64_t base);

static inline size_t npk_cur_left(const npk_cursor *c)
{
    return c->size - c->pos;
}
static inline uint64_t npk_cur_offset(const npk_cursor *c)
{
    return c->base + c->pos;
}

npk_status npk_cur_u8(npk_cursor *c, uint8_t *v, npk_error *err);
npk_status npk_cur_u16le(npk_cursor *c, uint16_t *v, npk_error *err);
npk_status npk_cur_u32le(npk_cursor *c, uint32_t *v, npk_error *err);
npk_status npk_cur_u64le(npk_cursor *c, uint64_t *v, npk_error *err);
npk_status npk_cur_i8(npk_cursor *c, int8_t *v, npk_error *err);
npk_status npk_cur_i16le(npk_cursor *c, int16_t *v, npk_error *err);
npk_status npk_cur_i32le(npk_cursor *c, int32_t *v, npk_error *err);
npk_status npk_cur_i64le(npk_cursor *c, int64_t *v, npk_error *err);
npk_status npk_cur_u16be(npk_cursor *c, uint16_t *v, npk_error *err);
npk_status npk_cur_u32be(npk_cursor *c, uint32_t *v, npk_error *err);
npk_status npk_cur_u64be(npk_cursor *c, uint64_t *v, npk_error *err);
npk_status npk_cur_f32le(npk_cursor *c, float *v, npk_error *err);
npk_status npk_cur_f64le(npk_cursor *c, double *v, npk_error *err);

/* Point *p at the next n bytes (no copy) and advance. */
npk_status npk_cur_bytes(npk_cursor *c, size_t n, const uint8_t **p, npk_error *err);
/* Copy the next n bytes into dst and advance. */
npk_status npk_cur_copy(npk_cursor *c, void *dst, size_t n, npk_error *err);
npk_status npk_cur_skip(npk_cursor *c, size_t n, npk_error *err);
/* Move to an absolute position inside the window (pos == size is allowed). */
npk_status npk_cur_seek(npk_cursor *c, size_t pos, npk_error *err);
/* A sub-window of n bytes at the current position; advances past it. */
npk_status npk_cur_take(npk_cursor *c, size_t n, npk_cursor *sub, npk_error *err);
/* A sub-window [off, off+n) of the whole window; the position is unchanged. */
npk_status npk_cur_slice(const npk_cursor *c, size_t off, size_t n, npk_cursor *sub,
                         npk_error *err);
/* A string of n bytes: *s points into the buffer (not NUL-terminated). */
npk_status npk_cur_str(npk_cursor *c, size_t n, const char **s, npk_error *err);
/* A string preceded by a u32 little-endian length, at most max_len bytes. */
npk_status npk_cur_str_u32(npk_cursor *c, size_t max_len, const char **s, size_t *len,
                           npk_error *err);
/* A NUL-terminated string of at most max_len bytes (terminator not counted). */
npk_status npk_cur_cstr(npk_cursor *c, size_t max_len, const char **s, size_t *len, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
