/* A small FlatBuffers builder. Like the reference builder it writes back to
 * front, so every uoffset points forward to an object written earlier. An
 * object is named by its distance from the end of the buffer (npk_fbb_ref).
 * Failures are sticky: the first one is reported by npk_fbb_finish(). */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/flatbuf.h"

void npk_fbb_init(npk_fbb *b)
{
    memset(b, 0, sizeof *b), b->minalign = 1;
}

void npk_fbb_free(npk_fbb *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}

/* Room for n more bytes in front of the data. */
static bool reserve(npk_fbb *b, size_t n)
{
    if (b->status) return false;
    if (b->cap - b->used >= n) return true;
    size_t need, cap = b->cap ? b->cap : 1024;
    if (!npk_add_sz(b->used, n, &need) || need > NPK_FB_MAX_SIZE) {
        b->status = NPK_E_LIMIT;
        return false;
    }
    while (cap < need) cap *= 2;
    uint8_t *nb = malloc(cap);
    if (!nb) {
        b->status = NPK_E_NOMEM;
        return false;
    }
    if (b->used) memcpy(nb + cap - b->used, b->buf + b->cap - b->used, b->used);
    free(b->buf);
    b->buf = nb;
    b->cap = cap;
    return true;
}

/* Push n bytes (NULL: zeros) and return where they went. */
static uint8_t *push(npk_fbb *b, const void *p, size_t n)
{
    if (n == 0) return b->buf; /* nothing to write (and no arithmetic on NULL) */
    if (!reserve(b, n)) return NULL;
    b->used += n;
    uint8_t *dst = b->buf + b->cap - b->used;
    if (p)
        memcpy(dst, p, n);
    else
        memset(dst, 0, n);
    return dst;
}

/* Pad so that after `extra` more bytes the size is a multiple of align. */
static void prep(npk_fbb *b, size_t align, size_t extra)
{
    if (align > b->minalign) b->minalign = align;
    size_t pad = (align - ((b->used + extra) & (align - 1))) & (align - 1);
    push(b, NULL, pad);
}

static void push_u32(npk_fbb *b, uint32_t v)
{
    uint8_t t[4];
    npk_st32le(t, v);
    push(b, t, 4);
}

/* A uoffset to ref written at the current front. */
static void push_ref(npk_fbb *b, npk_fbb_ref ref)
{
    prep(b, 4, 0);
    if (ref == 0 || ref > b->used) {
        if (!b->status) b->status = NPK_E_ARG;
        return;
    }
    push_u32(b, (uint32_t)(b->used + 4 - ref));
}

npk_fbb_ref npk_fbb_string(npk_fbb *b, const char *s, size_t len)
{
    if (b->in_table) b->status = NPK_E_ARG;
    prep(b, 4, len + 1);
    push(b, NULL, 1);
    push(b, s, len);
    push_u32(b, (uint32_t)len);
    return (npk_fbb_ref)b->used;
}

npk_fbb_ref npk_fbb_vector(npk_fbb *b, const void *elems, size_t count, size_t elem_size,
                           size_t align)
{
    size_t bytes;
    if (b->in_table || !npk_mul_sz(count, elem_size, &bytes) || count > NPK_FB_MAX_VECTOR ||
        (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)) {
        if (!b->status) b->status = NPK_E_ARG;
        return 0;
    }
    if (align < elem_size) align = elem_size;
    prep(b, 4, bytes);
    prep(b, align, bytes);
    uint8_t *dst = push(b, NULL, bytes);
    if (!dst) return 0;
    const uint8_t *src = (const uint8_t *)elems;
    for (size_t i = 0; i < count; i++, src += elem_size, dst += elem_size) {
        switch (elem_size) {
        case 1: *dst = *src; break;
        case 2: {
            uint16_t v;
            memcpy(&v, src, 2);
            npk_st16le(dst, v);
            break;
        }
        case 4: {
            uint32_t v;
            memcpy(&v, src, 4);
            npk_st32le(dst, v);
            break;
        }
        default: {
            uint64_t v;
            memcpy(&v, src, 8);
            npk_st64le(dst, v);
        }
        }
    }
    prep(b, 4, 0);
    push_u32(b, (uint32_t)count);
    return (npk_fbb_ref)b->used;
}

npk_fbb_ref npk_fbb_vector_bytes(npk_fbb *b, const void *bytes, size_t count, size_t elem_size,
                                 size_t align)
{
    size_t n;
    if (b->in_table || !elem_size || !npk_mul_sz(count, elem_size, &n) ||
        count > NPK_FB_MAX_VECTOR || (align & (align - 1))) {
        if (!b->status) b->status = NPK_E_ARG;
        return 0;
    }
    if (align < 4) align = 4;
    prep(b, 4, n);
    prep(b, align, n);
    push(b, bytes, n);
    prep(b, 4, 0);
    push_u32(b, (uint32_t)count);
    return (npk_fbb_ref)b->used;
}

npk_fbb_ref npk_fbb_vector_refs(npk_fbb *b, const npk_fbb_ref *refs, size_t count)
{
    if (b->in_table || count > NPK_FB_MAX_VECTOR) {
        if (!b->status) b->status = NPK_E_ARG;
        return 0;
    }
    prep(b, 4, 4 * count);
    for (size_t i = count; i-- > 0;) push_ref(b, refs[i]);
    push_u32(b, (uint32_t)count);
    return (npk_fbb_ref)b->used;
}

void npk_fbb_table_start(npk_fbb *b)
{
    if (b->in_table) b->status = NPK_E_ARG;
    b->in_table = true;
    b->nfields = 0;
    b->table_start = b->used;
}

static void field_done(npk_fbb *b, int slot)
{
    if (!b->in_table || slot < 0 || slot > 1000 ||
        b->nfields >= (int)(sizeof b->fields / sizeof b->fields[0])) {
        if (!b->status) b->status = NPK_E_ARG;
        return;
    }
    b->fields[b->nfields].slot = (uint16_t)slot;
    b->fields[b->nfields].at = (uint32_t)b->used;
    b->nfields++;
}

static void add_scalar(npk_fbb *b, int slot, const void *le, size_t n)
{
    prep(b, n, 0);
    push(b, le, n);
    field_done(b, slot);
}

void npk_fbb_add_u8(npk_fbb *b, int slot, uint8_t v)
{
    add_scalar(b, slot, &v, 1);
}
void npk_fbb_add_u16(npk_fbb *b, int slot, uint16_t v)
{
    uint8_t t[2];
    npk_st16le(t, v);
    add_scalar(b, slot, t, 2);
}
void npk_fbb_add_u32(npk_fbb *b, int slot, uint32_t v)
{
    uint8_t t[4];
    npk_st32le(t, v);
    add_scalar(b, slot, t, 4);
}
void npk_fbb_add_u64(npk_fbb *b, int slot, uint64_t v)
{
    uint8_t t[8];
    npk_st64le(t, v);
    add_scalar(b, slot, t, 8);
}
void npk_fbb_add_f32(npk_fbb *b, int slot, float v)
{
    uint8_t t[4];
    npk_stf32le(t, v);
    add_scalar(b, slot, t, 4);
}
void npk_fbb_add_ref(npk_fbb *b, int slot, npk_fbb_ref ref)
{
    push_ref(b, ref);
    field_done(b, slot);
}

npk_fbb_ref npk_fbb_table_end(npk_fbb *b)
{
    if (!b->in_table) b->status = NPK_E_ARG;
    b->in_table = false;
    prep(b, 4, 0);
    uint8_t *soff = push(b, NULL, 4);
    if (!soff) return 0;
    size_t table = b->used;
    size_t tbl_size = table - b->table_start;
    int nslots = 0;
    for (int i = 0; i < b->nfields; i++)
        if (b->fields[i].slot + 1 > nslots) nslots = b->fields[i].slot + 1;
    size_t vt_size = 4 + 2 * (size_t)nslots;
    if (tbl_size > 0xffff) {
        b->status = NPK_E_LIMIT;
        return 0;
    }
    uint8_t *vt = push(b, NULL, vt_size);
    if (!vt) return 0;
    npk_st16le(vt, (uint16_t)vt_size);
    npk_st16le(vt + 2, (uint16_t)tbl_size);
    for (int i = 0; i < b->nfields; i++)
        npk_st16le(vt + 4 + 2 * b->fields[i].slot, (uint16_t)(table - b->fields[i].at));
    /* soffset: table position minus vtable position (the vtable is in front). */
    npk_st32le(b->buf + b->cap - table, (uint32_t)(b->used - table));
    return (npk_fbb_ref)table;
}

npk_status npk_fbb_finish(npk_fbb *b, npk_fbb_ref root, const char *ident, uint8_t **out,
                          size_t *len, npk_error *err)
{
    *out = NULL;
    *len = 0;
    if (b->in_table && !b->status) b->status = NPK_E_ARG;
    prep(b, b->minalign > 4 ? b->minalign : 4, ident ? 8 : 4);
    if (ident) push(b, ident, 4);
    push_ref(b, root);
    if (b->status)
        return npk_fail(err, b->status, "flatbuffer builder: %s",
                        b->status == NPK_E_NOMEM ? "out of memory"
                        : b->status == NPK_E_LIMIT
                            ? "buffer would exceed the FlatBuffers limit of 2 GiB - 1 bytes"
                            : "invalid use");
    uint8_t *copy = malloc(b->used ? b->used : 1);
    if (!copy) return npk_fail(err, NPK_E_NOMEM, "flatbuffer builder: out of memory");
    memcpy(copy, b->buf + b->cap - b->used, b->used);
    *out = copy;
    *len = b->used;
    return NPK_OK;
}
