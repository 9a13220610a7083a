/* A FlexBuffer writer for one map of scalars, strings, blobs and int vectors
 * (the shape of the Edge TPU custom-op options and of TFLite's custom ops). FlexBuffers are written
 * front to back: data first, then the keys, the keys vector, the map and
 * finally the root slot, each offset pointing backwards. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/flatbuf.h"

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
    bool failed;
} wbuf;

static size_t put(wbuf *w, const void *src, size_t n)
{
    size_t at = w->len;
    if (w->failed || n == 0) return at;
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n) {
            if (cap > NPK_FB_MAX_SIZE) {
                w->failed = true;
                return at;
            }
            cap *= 2;
        }
        uint8_t *np = realloc(w->p, cap);
        if (!np) {
            w->failed = true;
            return at;
        }
        w->p = np;
        w->cap = cap;
    }
    if (src)
        memcpy(w->p + w->len, src, n);
    else
        memset(w->p + w->len, 0, n);
    w->len += n;
    return at;
}

static void align_to(wbuf *w, size_t a)
{
    put(w, NULL, (a - (w->len & (a - 1))) & (a - 1));
}

static void put_uint(wbuf *w, uint64_t v, int width)
{
    uint8_t t[8];
    npk_st64le(t, v);
    put(w, t, (size_t)width); /* the low `width` bytes of a little-endian u64 */
}

static int log2w(int w)
{
    return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3;
}

static int uint_width(uint64_t v)
{
    return v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffu ? 4 : 8;
}
static int int_width(int64_t v)
{
    uint64_t u = v >= 0 ? (uint64_t)v : ~(uint64_t)v;
    return u <= 0x7f ? 1 : u <= 0x7fff ? 2 : u <= 0x7fffffff ? 4 : 8;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp((*(const npk_flexw_entry *const *)a)->key,
                  (*(const npk_flexw_entry *const *)b)->key);
}

/* Build with element width w; false when some value or offset does not fit. */
static bool build(const npk_flexw_entry **e, size_t n, int w, wbuf *out)
{
    size_t *data = calloc(n ? n : 1, sizeof *data), *keys = calloc(n ? n : 1, sizeof *keys);
    uint8_t *types = calloc(n ? n : 1, 1);
    bool ok = data && keys && types;
    for (size_t i = 0; ok && i < n; i++) {
        const npk_flexw_entry *x = e[i];
        if (x->kind == NPK_FLEXW_INT) {
            if (int_width(x->i) > w) ok = false;
            types[i] = (uint8_t)(NPK_FLEX_INT << 2 | log2w(int_width(x->i)));
        } else if (x->kind == NPK_FLEXW_FLOAT) {
            if (w < 4) ok = false; /* inline floats are 4 or 8 bytes */
            types[i] = (uint8_t)(NPK_FLEX_FLOAT << 2 | log2w(w < 4 ? 4 : w));
        } else if (x->kind == NPK_FLEXW_BOOL) {
            types[i] = (uint8_t)(NPK_FLEX_BOOL << 2);
        } else if (x->kind == NPK_FLEXW_NULL) {
            types[i] = (uint8_t)(NPK_FLEX_NULL << 2);
        } else if (x->kind == NPK_FLEXW_INT_VECTOR) {
            /* An untyped vector of ints (what the Edge TPU compiler writes). */
            int ew = uint_width(x->len);
            for (size_t k = 0; k < x->len; k++)
                if (int_width(x->ints[k]) > ew) ew = int_width(x->ints[k]);
            align_to(out, (size_t)ew);
            put_uint(out, x->len, ew);
            data[i] = out->len;
            for (size_t k = 0; k < x->len; k++) put_uint(out, (uint64_t)x->ints[k], ew);
            for (size_t k = 0; k < x->len; k++) {
                uint8_t t = (uint8_t)(NPK_FLEX_INT << 2 | log2w(int_width(x->ints[k])));
                put(out, &t, 1);
            }
            types[i] = (uint8_t)(NPK_FLEX_VECTOR << 2 | log2w(ew));
        } else {
            int lw = uint_width(x->len);
            align_to(out, (size_t)lw);
            put_uint(out, x->len, lw);
            data[i] = put(out, x->bytes, x->len);
            if (x->kind == NPK_FLEXW_STRING) put(out, NULL, 1);
            int t = x->kind == NPK_FLEXW_STRING ? NPK_FLEX_STRING : NPK_FLEX_BLOB;
            types[i] = (uint8_t)(t << 2 | log2w(lw));
        }
    }
    for (size_t i = 0; ok && i < n; i++) keys[i] = put(out, e[i]->key, strlen(e[i]->key) + 1);
    /* The keys vector, in the map's width (a typed vector of keys). */
    align_to(out, (size_t)w);
    put_uint(out, n, w);
    size_t kvec = out->len;
    for (size_t i = 0; ok && i < n; i++) {
        if (uint_width(out->len - keys[i]) > w) ok = false;
        put_uint(out, out->len - keys[i], w);
    }
    /* The map: keys offset, keys width, length, values, types. */
    if (uint_width(out->len - kvec) > w) ok = false;
    put_uint(out, out->len - kvec, w);
    put_uint(out, (uint64_t)w, w);
    put_uint(out, n, w);
    size_t map = out->len;
    for (size_t i = 0; ok && i < n; i++) {
        if (e[i]->kind == NPK_FLEXW_INT) {
            put_uint(out, (uint64_t)e[i]->i, w);
        } else if (e[i]->kind == NPK_FLEXW_FLOAT) {
            uint8_t t[8] = {0};
            if (w == 8) {
                uint64_t u;
                memcpy(&u, &e[i]->f, 8);
                npk_st64le(t, u);
            } else
                npk_stf32le(t, (float)e[i]->f);
            put(out, t, (size_t)w); /* w < 4 was refused above */
        } else if (e[i]->kind == NPK_FLEXW_BOOL || e[i]->kind == NPK_FLEXW_NULL) {
            put_uint(out, e[i]->kind == NPK_FLEXW_BOOL && e[i]->i != 0, w);
        } else {
            if (uint_width(out->len - data[i]) > w) ok = false;
            put_uint(out, out->len - data[i], w);
        }
    }
    put(out, types, n);
    /* Root: an offset to the map in the root width, the packed type, the width. */
    int rw = uint_width(out->len + 8 - map);
    align_to(out, (size_t)rw);
    put_uint(out, out->len - map, rw);
    uint8_t tail[2] = {(uint8_t)(NPK_FLEX_MAP << 2 | log2w(w)), (uint8_t)rw};
    put(out, tail, 2);
    free(data);
    free(keys);
    free(types);
    return ok && !out->failed;
}

npk_status npk_flexw_map(const npk_flexw_entry *e, size_t n, int width, uint8_t **out, size_t *len,
                         npk_error *err)
{
    *out = NULL;
    *len = 0;
    if (width != 0 && width != 1 && width != 2 && width != 4 && width != 8)
        return npk_fail(err, NPK_E_ARG, "flexbuffer writer: width %d is not 0, 1, 2, 4 or 8",
                        width);
    const npk_flexw_entry **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return npk_fail(err, NPK_E_NOMEM, "flexbuffer writer: out of memory");
    for (size_t i = 0; i < n; i++) sorted[i] = &e[i];
    qsort(sorted, n, sizeof *sorted, cmp_entry);
    for (int w = width ? width : 1; w <= 8; w *= 2) {
        wbuf b = {0};
        if (build(sorted, n, w, &b)) {
            free(sorted);
            *out = b.p;
            *len = b.len;
            return NPK_OK;
        }
        free(b.p);
        if (b.failed) break;
        if (width) break;
    }
    free(sorted);
    return npk_fail(err, NPK_E_LIMIT, "flexbuffer writer: values do not fit width %d", width);
}
