/* Typed readers for record bodies: each read appends a named field (offset,
 * type, value, whether its meaning is established) to the record, so that
 * every decoded byte is accounted for and can be listed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "mgk_internal.h"

static npk_mgk_field *fadd(mgk_fdec *d, const char *name, const char *meaning, npk_mgk_ftype t,
                           bool known, uint64_t at)
{
    npk_mgk_record *r = d->r;
    if (r->nfields == d->cap) {
        uint32_t cap = d->cap ? 2 * d->cap : 16;
        npk_mgk_field *f = realloc(r->fields, cap * sizeof *f);
        if (!f) {
            d->st = npk_fail(d->err, NPK_E_NOMEM, "out of memory");
            return NULL;
        }
        r->fields = f;
        d->cap = cap;
    }
    npk_mgk_field *f = &r->fields[r->nfields++];
    memset(f, 0, sizeof *f);
    f->name = name;
    f->meaning = known ? meaning : (meaning ? meaning : "unknown");
    f->type = t;
    f->known = known;
    f->offset = at;
    return f;
}

/* Close a field: its size is what the cursor consumed since `at`. */
static void fclose_at(mgk_fdec *d, npk_mgk_field *f, uint64_t at)
{
    if (f) f->size = (uint32_t)(npk_cur_offset(d->c) - at);
}

int64_t mgk_f_int(mgk_fdec *d, npk_mgk_ftype t, const char *name, const char *meaning, bool known)
{
    if (d->st) return 0;
    uint64_t at = npk_cur_offset(d->c);
    int64_t v = 0;
    switch (t) {
    case NPK_MGK_F_U8: {
        uint8_t x;
        d->st = npk_cur_u8(d->c, &x, d->err);
        v = x;
        break;
    }
    case NPK_MGK_F_U16: {
        uint16_t x;
        d->st = npk_cur_u16le(d->c, &x, d->err);
        v = x;
        break;
    }
    case NPK_MGK_F_U32: {
        uint32_t x;
        d->st = npk_cur_u32le(d->c, &x, d->err);
        v = x;
        break;
    }
    case NPK_MGK_F_I64: d->st = npk_cur_i64le(d->c, &v, d->err); break;
    default: {
        int32_t x;
        d->st = npk_cur_i32le(d->c, &x, d->err);
        v = x;
        break;
    }
    }
    if (d->st) return 0;
    npk_mgk_field *f = fadd(d, name, meaning, t, known, at);
    if (!f) return 0;
    f->i = v;
    f->count = 1;
    f->data = at;
    fclose_at(d, f, at);
    return v;
}

float mgk_f_f32(mgk_fdec *d, const char *name, const char *meaning, bool known)
{
    if (d->st) return 0;
    uint64_t at = npk_cur_offset(d->c);
    uint32_t bits;
    if ((d->st = npk_cur_u32le(d->c, &bits, d->err))) return 0;
    npk_mgk_field *f = fadd(d, name, meaning, NPK_MGK_F_F32, known, at);
    float v = npk_ldf32le(d->m->data + at);
    if (f) {
        f->i = bits;
        f->f = (double)v;
        f->count = 1;
        f->data = at;
        fclose_at(d, f, at);
    }
    return v;
}

/* A counted vector of `item`-byte items; returns the count (0 on error). */
static uint32_t fvec(mgk_fdec *d, npk_mgk_ftype t, size_t item, const char *name,
                     const char *meaning, bool known, npk_mgk_field **fo)
{
    *fo = NULL;
    if (d->st) return 0;
    uint64_t at = npk_cur_offset(d->c);
    uint32_t n;
    if ((d->st = mgk_read_count(d->c, &n, item, d->err))) return 0;
    uint64_t data = npk_cur_offset(d->c);
    if ((d->st = npk_cur_skip(d->c, (size_t)n * item, d->err))) return 0;
    npk_mgk_field *f = fadd(d, name, meaning, t, known, at);
    if (!f) return 0;
    f->count = n;
    f->data = data;
    fclose_at(d, f, at);
    *fo = f;
    return n;
}

uint32_t mgk_f_ivec(mgk_fdec *d, const char *name, const char *meaning, bool known, int32_t *out,
                    uint32_t cap)
{
    npk_mgk_field *f;
    uint32_t n = fvec(d, NPK_MGK_F_IVEC, 4, name, meaning, known, &f);
    for (uint32_t i = 0; f && out && i < n && i < cap; i++)
        out[i] = (int32_t)npk_ld32le(d->m->data + f->data + 4 * (uint64_t)i);
    return n;
}

uint32_t mgk_f_i64vec(mgk_fdec *d, const char *name, const char *meaning, bool known, int64_t *out,
                      uint32_t cap)
{
    npk_mgk_field *f;
    uint32_t n = fvec(d, NPK_MGK_F_I64VEC, 8, name, meaning, known, &f);
    for (uint32_t i = 0; f && out && i < n && i < cap; i++)
        out[i] = (int64_t)npk_ld64le(d->m->data + f->data + 8 * (uint64_t)i);
    return n;
}

uint32_t mgk_f_f32vec(mgk_fdec *d, const char *name, const char *meaning, bool known, float *out,
                      uint32_t cap)
{
    npk_mgk_field *f;
    uint32_t n = fvec(d, NPK_MGK_F_F32VEC, 4, name, meaning, known, &f);
    for (uint32_t i = 0; f && out && i < n && i < cap; i++)
        out[i] = npk_ldf32le(d->m->data + f->data + 4 * (uint64_t)i);
    return n;
}

npk_mgk_str mgk_f_str(mgk_fdec *d, const char *name, const char *meaning, bool known)
{
    npk_mgk_str s = {NULL, 0};
    if (d->st) return s;
    uint64_t at = npk_cur_offset(d->c);
    if ((d->st = mgk_read_str(d->c, &s, d->err))) return s;
    npk_mgk_field *f = fadd(d, name, meaning, NPK_MGK_F_STR, known, at);
    if (f) {
        f->count = s.len;
        f->data = at + 4;
        fclose_at(d, f, at);
    }
    return s;
}

void mgk_f_ivec3(mgk_fdec *d, const char *name, const char *meaning, bool known)
{
    if (d->st) return;
    uint64_t at = npk_cur_offset(d->c);
    uint32_t n;
    if ((d->st = mgk_read_count(d->c, &n, 4, d->err))) return;
    for (uint32_t i = 0; i < n && !d->st; i++) {
        uint32_t k;
        if ((d->st = mgk_read_count(d->c, &k, 4, d->err))) break;
        for (uint32_t j = 0; j < k && !d->st; j++) {
            uint32_t items;
            if ((d->st = mgk_read_count(d->c, &items, 4, d->err))) break;
            d->st = npk_cur_skip(d->c, (size_t)items * 4, d->err);
        }
    }
    if (d->st) return;
    npk_mgk_field *f = fadd(d, name, meaning, NPK_MGK_F_IVEC3, known, at);
    if (f) {
        f->count = n;
        f->data = at + 4;
        fclose_at(d, f, at);
    }
}

void mgk_f_bytes(mgk_fdec *d, size_t n, const char *name, const char *meaning, bool known)
{
    if (d->st) return;
    uint64_t at = npk_cur_offset(d->c);
    if ((d->st = npk_cur_skip(d->c, n, d->err))) return;
    npk_mgk_field *f = fadd(d, name, meaning, NPK_MGK_F_BYTES, known, at);
    if (f) {
        f->count = (uint32_t)n;
        f->data = at;
        fclose_at(d, f, at);
    }
}

const npk_mgk_field *npk_mgk_field_get(const npk_mgk_record *r, const char *name)
{
    for (uint32_t i = 0; i < r->nfields; i++)
        if (!strcmp(r->fields[i].name, name)) return &r->fields[i];
    return NULL;
}

/* Append to buf (bounded); returns the new length. */
static size_t put(char *buf, size_t n, size_t at, const char *fmt, ...) NPK_PRINTF(4, 5);
static size_t put(char *buf, size_t n, size_t at, const char *fmt, ...)
{
    if (at >= n) return at;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + at, n - at, fmt, ap);
    va_end(ap);
    return k < 0 ? at : at + (size_t)k;
}

size_t npk_mgk_field_format(const npk_mgk_model *m, const npk_mgk_field *f, char *buf, size_t n,
                            uint32_t max_items)
{
    size_t at = 0;
    if (n) buf[0] = 0;
    const uint8_t *p = m->data + f->data;
    uint32_t shown = f->count < max_items ? f->count : max_items;
    switch (f->type) {
    case NPK_MGK_F_F32: at = put(buf, n, at, "%.9g", f->f); break;
    case NPK_MGK_F_IVEC:
    case NPK_MGK_F_I64VEC:
    case NPK_MGK_F_F32VEC:
        at = put(buf, n, at, "[");
        for (uint32_t i = 0; i < shown; i++) {
            const char *sep = i ? ", " : "";
            if (f->type == NPK_MGK_F_IVEC)
                at = put(buf, n, at, "%s%d", sep, (int32_t)npk_ld32le(p + 4 * (size_t)i));
            else if (f->type == NPK_MGK_F_I64VEC)
                at = put(buf, n, at, "%s%lld", sep,
                         (long long)(int64_t)npk_ld64le(p + 8 * (size_t)i));
            else
                at = put(buf, n, at, "%s%.9g", sep, (double)npk_ldf32le(p + 4 * (size_t)i));
        }
        at = put(buf, n, at, "%s]", shown < f->count ? ", ..." : "");
        break;
    case NPK_MGK_F_IVEC3: at = put(buf, n, at, "(%u nested vectors)", f->count); break;
    case NPK_MGK_F_STR:
        for (uint32_t i = 0; i < f->count && i < 256; i++) {
            uint8_t ch = p[i];
            at = ch >= 0x20 && ch < 0x7F && ch != '\\' ? put(buf, n, at, "%c", ch)
                                                       : put(buf, n, at, "\\x%02x", ch);
        }
        break;
    case NPK_MGK_F_BYTES:
        for (uint32_t i = 0; i < shown; i++) at = put(buf, n, at, "%02x", p[i]);
        if (shown < f->count) at = put(buf, n, at, "...");
        break;
    case NPK_MGK_F_U8:
    case NPK_MGK_F_U16:
    case NPK_MGK_F_U32: at = put(buf, n, at, "%llu", (unsigned long long)f->i); break;
    default: at = put(buf, n, at, "%lld", (long long)f->i); break;
    }
    return at;
}

const char *npk_mgk_ftype_name(npk_mgk_ftype t)
{
    static const char *names[] = {"u8",    "u16",   "i32",   "u32",       "i64",    "f32",
                                  "i32[]", "i64[]", "f32[]", "i32[][][]", "string", "bytes"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const char *mgk_printable(npk_mgk_str s, char *buf, size_t n)
{
    size_t k = 0;
    for (uint32_t i = 0; i < s.len && k + 1 < n; i++) {
        unsigned char c = (unsigned char)s.s[i];
        buf[k++] = c >= 0x20 && c < 0x7F ? (char)c : '?';
    }
    if (n) buf[k] = 0;
    return buf;
}
