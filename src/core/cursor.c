#include <string.h>

#include "npukit/bytes.h"
#include "npukit/cursor.h"

npk_cursor npk_cur_init(const void *data, size_t size, uint64_t base)
{
    npk_cursor c = {(const uint8_t *)data, size, 0, base, NULL};
    return c;
}

static npk_status short_read(const npk_cursor *c, size_t want, npk_error *err)
{
    if (c->what)
        return npk_fail_at(err, NPK_E_FORMAT, npk_cur_offset(c),
                           "truncated %s: need %zu bytes, %zu left", c->what, want,
                           npk_cur_left(c));
    return npk_fail_at(err, NPK_E_FORMAT, npk_cur_offset(c), "truncated: need %zu bytes, %zu left",
                       want, npk_cur_left(c));
}

#define NEED(c, n, err)                                                                            \
    do {                                                                                           \
        if (npk_cur_left(c) < (n)) return short_read((c), (n), (err));                             \
    } while (0)

npk_status npk_cur_u8(npk_cursor *c, uint8_t *v, npk_error *err)
{
    NEED(c, 1, err);
    *v = c->data[c->pos++];
    return NPK_OK;
}

#define READER(name, type, n, load)                                                                \
    npk_status name(npk_cursor *c, type *v, npk_error *err)                                        \
    {                                                                                              \
        NEED(c, n, err);                                                                           \
        *v = (type)load(c->data + c->pos);                                                         \
        c->pos += n;                                                                               \
        return NPK_OK;                                                                             \
    }

READER(npk_cur_u16le, uint16_t, 2, npk_ld16le)
READER(npk_cur_u32le, uint32_t, 4, npk_ld32le)
READER(npk_cur_u64le, uint64_t, 8, npk_ld64le)
READER(npk_cur_i16le, int16_t, 2, npk_ld16le)
READER(npk_cur_i32le, int32_t, 4, npk_ld32le)
READER(npk_cur_i64le, int64_t, 8, npk_ld64le)
READER(npk_cur_u16be, uint16_t, 2, npk_ld16be)
READER(npk_cur_u32be, uint32_t, 4, npk_ld32be)
READER(npk_cur_u64be, uint64_t, 8, npk_ld64be)
READER(npk_cur_f32le, float, 4, npk_ldf32le)
READER(npk_cur_f64le, double, 8, npk_ldf64le)

npk_status npk_cur_i8(npk_cursor *c, int8_t *v, npk_error *err)
{
    NEED(c, 1, err);
    *v = (int8_t)c->data[c->pos++];
    return NPK_OK;
}

npk_status npk_cur_bytes(npk_cursor *c, size_t n, const uint8_t **p, npk_error *err)
{
    NEED(c, n, err);
    *p = c->data + c->pos;
    c->pos += n;
    return NPK_OK;
}

npk_status npk_cur_copy(npk_cursor *c, void *dst, size_t n, npk_error *err)
{
    NEED(c, n, err);
    if (n) memcpy(dst, c->data + c->pos, n);
    c->pos += n;
    return NPK_OK;
}

npk_status npk_cur_skip(npk_cursor *c, size_t n, npk_error *err)
{
    NEED(c, n, err);
    c->pos += n;
    return NPK_OK;
}

npk_status npk_cur_seek(npk_cursor *c, size_t pos, npk_error *err)
{
    if (pos > c->size)
        return npk_fail_at(err, NPK_E_FORMAT, c->base + c->size,
                           "offset 0x%zx is past the end (size 0x%zx)%s%s", pos, c->size,
                           c->what ? " of " : "", c->what ? c->what : "");
    c->pos = pos;
    return NPK_OK;
}

npk_status npk_cur_take(npk_cursor *c, size_t n, npk_cursor *sub, npk_error *err)
{
    NEED(c, n, err);
    *sub = npk_cur_init(c->data + c->pos, n, npk_cur_offset(c));
    sub->what = c->what;
    c->pos += n;
    return NPK_OK;
}

npk_status npk_cur_slice(const npk_cursor *c, size_t off, size_t n, npk_cursor *sub, npk_error *err)
{
    if (off > c->size || n > c->size - off)
        return npk_fail_at(err, NPK_E_FORMAT, c->base + (off > c->size ? c->size : off),
                           "range 0x%zx+0x%zx is outside the %s%s(size 0x%zx)", off, n,
                           c->what ? c->what : "input", c->what ? " " : " ", c->size);
    *sub = npk_cur_init(c->data + off, n, c->base + off);
    sub->what = c->what;
    return NPK_OK;
}

npk_status npk_cur_str(npk_cursor *c, size_t n, const char **s, npk_error *err)
{
    const uint8_t *p;
    npk_status st = npk_cur_bytes(c, n, &p, err);
    if (st == NPK_OK) *s = (const char *)p;
    return st;
}

npk_status npk_cur_str_u32(npk_cursor *c, size_t max_len, const char **s, size_t *len,
                           npk_error *err)
{
    size_t start = c->pos;
    uint32_t n;
    npk_status st = npk_cur_u32le(c, &n, err);
    if (st) return st;
    if (n > max_len) {
        c->pos = start;
        return npk_fail_at(err, NPK_E_LIMIT, npk_cur_offset(c),
                           "string length %u exceeds the limit of %zu", n, max_len);
    }
    st = npk_cur_str(c, n, s, err);
    if (st) {
        c->pos = start;
        return st;
    }
    *len = n;
    return NPK_OK;
}

npk_status npk_cur_cstr(npk_cursor *c, size_t max_len, const char **s, size_t *len, npk_error *err)
{
    size_t avail = npk_cur_left(c);
    size_t lim = avail < max_len + 1 ? avail : max_len + 1;
    const uint8_t *p = c->data + c->pos;
    const uint8_t *nul = memchr(p, 0, lim);
    if (!nul) {
        if (lim == avail)
            return npk_fail_at(err, NPK_E_FORMAT, npk_cur_offset(c), "unterminated string");
        return npk_fail_at(err, NPK_E_LIMIT, npk_cur_offset(c),
                           "string longer than the limit of %zu bytes", max_len);
    }
    *s = (const char *)p;
    *len = (size_t)(nul - p);
    c->pos += *len + 1;
    return NPK_OK;
}
