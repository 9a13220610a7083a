/* Bounds-checked FlexBuffers reader. A value is a slot of parent_width bytes
 * holding either the value itself (NULL, INT, UINT, FLOAT, BOOL) or an
 * unsigned offset pointing backwards to the data. Every such offset, every
 * length prefix and every element range is checked before use. */
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/flatbuf.h"

static const char *const type_names[] = {
    "NULL",          "INT",           "UINT",          "FLOAT",          "KEY",
    "STRING",        "INDIRECT_INT",  "INDIRECT_UINT", "INDIRECT_FLOAT", "MAP",
    "VECTOR",        "VECTOR_INT",    "VECTOR_UINT",   "VECTOR_FLOAT",   "VECTOR_KEY",
    "VECTOR_STRING", "VECTOR_INT2",   "VECTOR_UINT2",  "VECTOR_FLOAT2",  "VECTOR_INT3",
    "VECTOR_UINT3",  "VECTOR_FLOAT3", "VECTOR_INT4",   "VECTOR_UINT4",   "VECTOR_FLOAT4",
    "BLOB",          "BOOL"};

const char *npk_flex_type_name(int type)
{
    if (type >= 0 && type < (int)(sizeof type_names / sizeof type_names[0]))
        return type_names[type];
    return type == NPK_FLEX_VECTOR_BOOL ? "VECTOR_BOOL" : "invalid";
}

static bool valid_width(uint64_t w)
{
    return w == 1 || w == 2 || w == 4 || w == 8;
}
static bool valid_type(int t)
{
    return (t >= 0 && t <= NPK_FLEX_BOOL) || t == NPK_FLEX_VECTOR_BOOL;
}

static uint64_t rd_uint(const uint8_t *p, int w)
{
    switch (w) {
    case 1: return p[0];
    case 2: return npk_ld16le(p);
    case 4: return npk_ld32le(p);
    default: return npk_ld64le(p);
    }
}

static int64_t rd_int(const uint8_t *p, int w)
{
    switch (w) {
    case 1: return (int8_t)p[0];
    case 2: return (int16_t)npk_ld16le(p);
    case 4: return (int32_t)npk_ld32le(p);
    default: return (int64_t)npk_ld64le(p);
    }
}

static npk_status fail(const npk_flex_ref *r, npk_error *err, uint64_t pos, const char *what)
{
    return npk_fail_at(err, NPK_E_FORMAT, r->base + pos, "flexbuffer: %s (%s value at 0x%zx)", what,
                       npk_flex_type_name(r->type), r->pos);
}

/* Make a reference from a slot at pos of width pw and a packed type byte. */
static npk_status make_ref(const npk_flex_ref *parent, size_t pos, uint8_t pw, uint8_t packed,
                           npk_flex_ref *out, npk_error *err)
{
    *out = *parent;
    out->pos = pos;
    out->parent_width = pw;
    out->byte_width = (uint8_t)(1u << (packed & 3));
    out->type = (uint8_t)(packed >> 2);
    if (!valid_type(out->type))
        return npk_fail_at(err, NPK_E_FORMAT, parent->base + pos,
                           "flexbuffer: unknown value type %u at 0x%zx", out->type, pos);
    if (pos > parent->size || pw > parent->size - pos)
        return npk_fail_at(err, NPK_E_FORMAT, parent->base + pos,
                           "flexbuffer: value slot at 0x%zx runs past the end", pos);
    return NPK_OK;
}

npk_status npk_flex_root(const void *data, size_t size, uint64_t base, npk_flex_ref *r,
                         npk_error *err)
{
    const uint8_t *d = (const uint8_t *)data;
    memset(r, 0, sizeof *r);
    r->data = d;
    r->size = size;
    r->base = base;
    if (size < 3)
        return npk_fail_at(err, NPK_E_FORMAT, base, "flexbuffer of %zu bytes is too short", size);
    uint8_t w = d[size - 1];
    if (!valid_width(w) || (size_t)w + 2 > size)
        return npk_fail_at(err, NPK_E_FORMAT, base + size - 1,
                           "flexbuffer root width %u is invalid for a %zu-byte buffer", w, size);
    return make_ref(r, size - 2 - w, w, d[size - 2], r, err);
}

/* The target of an offset value: pos - offset, which must not go below 0. */
static npk_status target(const npk_flex_ref *r, size_t *tgt, npk_error *err)
{
    uint64_t off = rd_uint(r->data + r->pos, r->parent_width);
    if (off > r->pos) return fail(r, err, r->pos, "offset points before the start of the buffer");
    *tgt = r->pos - (size_t)off;
    return NPK_OK;
}

/* A length-prefixed object at tgt: the prefix of width w sits just before it. */
static npk_status prefixed_len(const npk_flex_ref *r, size_t tgt, int w, uint64_t *len,
                               npk_error *err)
{
    if (tgt < (size_t)w) return fail(r, err, tgt, "length prefix lies before the buffer");
    *len = rd_uint(r->data + tgt - w, w);
    return NPK_OK;
}

npk_status npk_flex_int(const npk_flex_ref *r, int64_t *v, npk_error *err)
{
    size_t t = 0;
    npk_status st;
    switch (r->type) {
    case NPK_FLEX_INT: *v = rd_int(r->data + r->pos, r->parent_width); return NPK_OK;
    case NPK_FLEX_UINT:
    case NPK_FLEX_BOOL: {
        uint64_t u = rd_uint(r->data + r->pos, r->parent_width);
        if (u > (uint64_t)INT64_MAX) return fail(r, err, r->pos, "value does not fit an int64");
        *v = (int64_t)u;
        return NPK_OK;
    }
    case NPK_FLEX_INDIRECT_INT:
    case NPK_FLEX_INDIRECT_UINT:
        if ((st = target(r, &t, err))) return st;
        if (r->byte_width > r->size - t) return fail(r, err, t, "indirect value runs past the end");
        if (r->type == NPK_FLEX_INDIRECT_INT) {
            *v = rd_int(r->data + t, r->byte_width);
        } else {
            uint64_t u = rd_uint(r->data + t, r->byte_width);
            if (u > (uint64_t)INT64_MAX) return fail(r, err, t, "value does not fit an int64");
            *v = (int64_t)u;
        }
        return NPK_OK;
    default: return fail(r, err, r->pos, "not an integer");
    }
}

npk_status npk_flex_uint(const npk_flex_ref *r, uint64_t *v, npk_error *err)
{
    size_t t = 0;
    npk_status st;
    switch (r->type) {
    case NPK_FLEX_UINT:
    case NPK_FLEX_BOOL: *v = rd_uint(r->data + r->pos, r->parent_width); return NPK_OK;
    case NPK_FLEX_INDIRECT_UINT:
        if ((st = target(r, &t, err))) return st;
        if (r->byte_width > r->size - t) return fail(r, err, t, "indirect value runs past the end");
        *v = rd_uint(r->data + t, r->byte_width);
        return NPK_OK;
    case NPK_FLEX_INT:
    case NPK_FLEX_INDIRECT_INT: {
        int64_t i;
        if ((st = npk_flex_int(r, &i, err))) return st;
        if (i < 0) return fail(r, err, r->pos, "negative value where an unsigned one is needed");
        *v = (uint64_t)i;
        return NPK_OK;
    }
    default: return fail(r, err, r->pos, "not an unsigned integer");
    }
}

static npk_status rd_float(const npk_flex_ref *r, size_t pos, int w, double *v, npk_error *err)
{
    if (w == 4)
        *v = npk_ldf32le(r->data + pos);
    else if (w == 8)
        *v = npk_ldf64le(r->data + pos);
    else
        return fail(r, err, pos, "float of width 1 or 2 is not defined");
    return NPK_OK;
}

npk_status npk_flex_float(const npk_flex_ref *r, double *v, npk_error *err)
{
    size_t t = 0;
    npk_status st;
    switch (r->type) {
    case NPK_FLEX_FLOAT: return rd_float(r, r->pos, r->parent_width, v, err);
    case NPK_FLEX_INDIRECT_FLOAT:
        if ((st = target(r, &t, err))) return st;
        if (r->byte_width > r->size - t) return fail(r, err, t, "indirect value runs past the end");
        return rd_float(r, t, r->byte_width, v, err);
    case NPK_FLEX_INT:
    case NPK_FLEX_INDIRECT_INT: {
        int64_t i;
        if ((st = npk_flex_int(r, &i, err))) return st;
        *v = (double)i;
        return NPK_OK;
    }
    case NPK_FLEX_UINT:
    case NPK_FLEX_INDIRECT_UINT: {
        uint64_t u;
        if ((st = npk_flex_uint(r, &u, err))) return st;
        *v = (double)u;
        return NPK_OK;
    }
    default: return fail(r, err, r->pos, "not a number");
    }
}

npk_status npk_flex_bool(const npk_flex_ref *r, bool *v, npk_error *err)
{
    if (r->type != NPK_FLEX_BOOL) {
        uint64_t u;
        if (r->type != NPK_FLEX_UINT && r->type != NPK_FLEX_INT)
            return fail(r, err, r->pos, "not a boolean");
        u = rd_uint(r->data + r->pos, r->parent_width);
        *v = u != 0;
        return NPK_OK;
    }
    *v = rd_uint(r->data + r->pos, r->parent_width) != 0;
    return NPK_OK;
}

npk_status npk_flex_string(const npk_flex_ref *r, const char **s, size_t *len, uint64_t *off,
                           npk_error *err)
{
    size_t t = 0;
    npk_status st;
    if (r->type != NPK_FLEX_STRING && r->type != NPK_FLEX_KEY)
        return fail(r, err, r->pos, "not a string");
    if ((st = target(r, &t, err))) return st;
    size_t n;
    if (r->type == NPK_FLEX_KEY) {
        const uint8_t *z = memchr(r->data + t, 0, r->size - t);
        if (!z) return fail(r, err, t, "key is not NUL-terminated");
        n = (size_t)(z - (r->data + t));
    } else {
        uint64_t l = 0;
        if ((st = prefixed_len(r, t, r->byte_width, &l, err))) return st;
        if (l >= r->size - t) return fail(r, err, t, "string runs past the end of the buffer");
        if (r->data[t + l] != 0) return fail(r, err, t + l, "string is not NUL-terminated");
        n = (size_t)l;
    }
    *s = (const char *)r->data + t;
    if (len) *len = n;
    if (off) *off = r->base + t;
    return NPK_OK;
}

npk_status npk_flex_blob(const npk_flex_ref *r, const uint8_t **p, size_t *len, uint64_t *off,
                         npk_error *err)
{
    size_t t = 0;
    uint64_t l = 0;
    npk_status st;
    if (r->type == NPK_FLEX_STRING) {
        const char *s;
        st = npk_flex_string(r, &s, len, off, err);
        if (!st) *p = (const uint8_t *)s;
        return st;
    }
    if (r->type != NPK_FLEX_BLOB) return fail(r, err, r->pos, "not a blob");
    if ((st = target(r, &t, err)) || (st = prefixed_len(r, t, r->byte_width, &l, err))) return st;
    if (l > r->size - t) return fail(r, err, t, "blob runs past the end of the buffer");
    *p = r->data + t;
    *len = (size_t)l;
    if (off) *off = r->base + t;
    return NPK_OK;
}

/* Element type and fixed length of typed vectors (0 length: prefixed). */
static bool typed_vector(int type, uint8_t *elem, size_t *fixed)
{
    *fixed = 0;
    if (type >= NPK_FLEX_VECTOR_INT && type <= NPK_FLEX_VECTOR_KEY) {
        *elem = (uint8_t)(type - NPK_FLEX_VECTOR_INT + NPK_FLEX_INT);
        return true;
    }
    if (type == NPK_FLEX_VECTOR_STRING_DEPRECATED) {
        *elem = NPK_FLEX_STRING;
        return true;
    }
    if (type == NPK_FLEX_VECTOR_BOOL) {
        *elem = NPK_FLEX_BOOL;
        return true;
    }
    if (type >= NPK_FLEX_VECTOR_INT2 && type <= NPK_FLEX_VECTOR_FLOAT4) {
        int k = type - NPK_FLEX_VECTOR_INT2;
        *elem = (uint8_t)(NPK_FLEX_INT + k % 3);
        *fixed = (size_t)(k / 3 + 2);
        return true;
    }
    return false;
}

/* Elements [pos, pos + count * w) plus `extra` bytes per element must fit. */
static npk_status span(const npk_flex_ref *r, size_t pos, uint64_t count, int w, int extra,
                       npk_error *err)
{
    uint64_t left = r->size - pos;
    if (count > left / ((uint64_t)w + (uint64_t)extra))
        return fail(r, err, pos, "vector elements run past the end of the buffer");
    return NPK_OK;
}

npk_status npk_flex_vector(const npk_flex_ref *r, npk_flex_vec *v, npk_error *err)
{
    size_t t = 0, fixed = 0;
    uint64_t count = 0;
    uint8_t elem = 0;
    npk_status st;
    memset(v, 0, sizeof *v);
    v->ref = *r;
    bool typed = typed_vector(r->type, &elem, &fixed);
    if (!typed && r->type != NPK_FLEX_VECTOR && r->type != NPK_FLEX_MAP)
        return fail(r, err, r->pos, "not a vector");
    if ((st = target(r, &t, err))) return st;
    int w = r->byte_width;
    if (fixed)
        count = fixed;
    else if ((st = prefixed_len(r, t, w, &count, err)))
        return st;
    if ((st = span(r, t, count, w, typed ? 0 : 1, err))) return st;
    v->pos = t;
    v->count = (size_t)count;
    v->width = (uint8_t)w;
    v->typed = typed;
    v->elem_type = typed ? elem : 0;
    v->types_pos = typed ? 0 : t + (size_t)count * (size_t)w;
    if (r->type != NPK_FLEX_MAP) return NPK_OK;

    /* Map: keys-vector offset at -3w and its width at -2w, before the length. */
    if (t < 3 * (size_t)w) return fail(r, err, t, "map header lies before the buffer");
    size_t kslot = t - 3 * (size_t)w;
    uint64_t koff = rd_uint(r->data + kslot, w), kw = rd_uint(r->data + t - 2 * (size_t)w, w);
    if (koff > kslot) return fail(r, err, kslot, "map keys offset points before the buffer");
    if (!valid_width(kw)) return fail(r, err, t - 2 * (size_t)w, "map keys width is invalid");
    size_t kpos = kslot - (size_t)koff;
    npk_flex_ref kref = *r;
    kref.type = NPK_FLEX_VECTOR_KEY;
    uint64_t kcount = 0;
    if ((st = prefixed_len(&kref, kpos, (int)kw, &kcount, err))) return st;
    if (kcount != count) return fail(r, err, kpos, "map has different numbers of keys and values");
    if ((st = span(&kref, kpos, kcount, (int)kw, 0, err))) return st;
    v->is_map = true;
    v->keys_pos = kpos;
    v->keys_width = (uint8_t)kw;
    return NPK_OK;
}

npk_status npk_flex_at(const npk_flex_vec *v, size_t i, npk_flex_ref *out, npk_error *err)
{
    if (i >= v->count)
        return npk_fail(err, NPK_E_ARG, "flexbuffer: index %zu of a %zu-element vector", i,
                        v->count);
    size_t pos = v->pos + i * v->width;
    if (!v->typed) return make_ref(&v->ref, pos, v->width, v->ref.data[v->types_pos + i], out, err);
    uint8_t packed = (uint8_t)(v->elem_type << 2);
    npk_status st = make_ref(&v->ref, pos, v->width, packed, out, err);
    /* The deprecated string vector stores lengths in the vector's width. */
    if (!st && v->ref.type == NPK_FLEX_VECTOR_STRING_DEPRECATED) out->byte_width = v->width;
    return st;
}

npk_status npk_flex_map(const npk_flex_ref *r, npk_flex_vec *m, npk_error *err)
{
    if (r->type != NPK_FLEX_MAP) {
        memset(m, 0, sizeof *m);
        return fail(r, err, r->pos, "not a map");
    }
    return npk_flex_vector(r, m, err);
}

npk_status npk_flex_map_key(const npk_flex_vec *m, size_t i, const char **key, size_t *len,
                            npk_error *err)
{
    if (!m->is_map || i >= m->count)
        return npk_fail(err, NPK_E_ARG, "flexbuffer: no key %zu in this map", i);
    npk_flex_ref k = m->ref;
    k.pos = m->keys_pos + i * m->keys_width;
    k.parent_width = m->keys_width;
    k.byte_width = 1;
    k.type = NPK_FLEX_KEY;
    return npk_flex_string(&k, key, len, NULL, err);
}

npk_status npk_flex_map_find(const npk_flex_vec *m, const char *key, npk_flex_ref *out, bool *found,
                             npk_error *err)
{
    size_t want = strlen(key);
    *found = false;
    for (size_t i = 0; i < m->count; i++) {
        const char *k;
        size_t n;
        npk_status st = npk_flex_map_key(m, i, &k, &n, err);
        if (st) return st;
        if (n == want && memcmp(k, key, n) == 0) {
            *found = true;
            return npk_flex_at(m, i, out, err);
        }
    }
    return NPK_OK;
}

static bool is_container(int type)
{
    uint8_t e;
    size_t f;
    return type == NPK_FLEX_VECTOR || type == NPK_FLEX_MAP || typed_vector(type, &e, &f);
}

/* Check one value's own bytes (what the typed accessors would check). */
static npk_status check_value(const npk_flex_ref *r, npk_error *err)
{
    const char *s;
    const uint8_t *p;
    size_t n;
    int64_t i;
    double d;
    switch (r->type) {
    case NPK_FLEX_INT:
    case NPK_FLEX_INDIRECT_INT:
    case NPK_FLEX_UINT:
    case NPK_FLEX_INDIRECT_UINT: {
        uint64_t u;
        /* large UINTs do not fit int64: read them unsigned */
        if (r->type == NPK_FLEX_UINT || r->type == NPK_FLEX_INDIRECT_UINT)
            return npk_flex_uint(r, &u, err);
        return npk_flex_int(r, &i, err);
    }
    case NPK_FLEX_FLOAT:
    case NPK_FLEX_INDIRECT_FLOAT: return npk_flex_float(r, &d, err);
    case NPK_FLEX_KEY:
    case NPK_FLEX_STRING: return npk_flex_string(r, &s, &n, NULL, err);
    case NPK_FLEX_BLOB: return npk_flex_blob(r, &p, &n, NULL, err);
    default: return NPK_OK;
    }
}

/* Shared sub-vectors can make a small buffer a huge tree: the walk visits at
 * most a budget of values proportional to the buffer size. */
typedef struct walker {
    npk_flex_visit visit;
    void *ctx;
    uint64_t budget;
} walker;

static npk_status walk(walker *w, const npk_flex_ref *r, int depth, const char *key, npk_error *err)
{
    if (depth > NPK_FLEX_MAX_DEPTH)
        return npk_fail_at(err, NPK_E_LIMIT, npk_flex_offset(r),
                           "flexbuffer: values nested more than %d deep", NPK_FLEX_MAX_DEPTH);
    if (w->budget-- == 0)
        return npk_fail_at(err, NPK_E_LIMIT, npk_flex_offset(r),
                           "flexbuffer: too many values (shared sub-vectors?)");
    npk_status st = check_value(r, err);
    if (st) return st;
    if (w->visit) {
        int rc = w->visit(w->ctx, depth, key, r);
        if (rc) return (npk_status)rc;
    }
    if (!is_container(r->type)) return NPK_OK;
    npk_flex_vec v;
    if ((st = npk_flex_vector(r, &v, err))) return st;
    for (size_t i = 0; i < v.count; i++) {
        const char *k = NULL;
        npk_flex_ref e;
        if (v.is_map && (st = npk_flex_map_key(&v, i, &k, NULL, err))) return st;
        if ((st = npk_flex_at(&v, i, &e, err))) return st;
        if ((st = walk(w, &e, depth + 1, k, err))) return st;
    }
    return NPK_OK;
}

npk_status npk_flex_walk(const npk_flex_ref *root, npk_flex_visit visit, void *ctx, npk_error *err)
{
    walker w = {visit, ctx, 8 * (uint64_t)root->size + 1024};
    return walk(&w, root, 0, NULL, err);
}
