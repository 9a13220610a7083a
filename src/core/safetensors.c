/* safetensors reader and writer (through cJSON).
 * Layout: u64 LE header length N, N bytes of JSON, then the data buffer.
 * The JSON maps tensor names to {"dtype", "shape", "data_offsets": [b, e]}
 * (offsets relative to the data buffer) plus an optional "__metadata__"
 * map of strings. The tensors must cover the buffer exactly: no overlaps,
 * no holes. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/file.h"
#include "npukit/tensor.h"
#include "npukit/utf8.h"
#include "tensor_internal.h"

#define ST_MAX_HEADER (100u * 1000u * 1000u)

#ifdef NPK_HAVE_CJSON
#include <cjson/cJSON.h>
#include <math.h>

bool npk_safetensors_available(void)
{
    return true;
}

static const struct {
    const char *name;
    npk_dtype dt;
} st_types[] = {
    {"F32", NPK_F32}, {"F16", NPK_F16}, {"BF16", NPK_BF16}, {"F64", NPK_F64}, {"I8", NPK_I8},
    {"U8", NPK_U8},   {"I16", NPK_I16}, {"U16", NPK_U16},   {"I32", NPK_I32}, {"U32", NPK_U32},
    {"I64", NPK_I64}, {"U64", NPK_U64}, {"BOOL", NPK_BOOL},
};

static const char *st_name(npk_dtype dt)
{
    for (size_t i = 0; i < sizeof st_types / sizeof st_types[0]; i++)
        if (st_types[i].dt == dt) return st_types[i].name;
    return NULL;
}

typedef struct {
    size_t begin, end, index;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

/* A JSON number that is a non-negative integer that fits in 2^53. */
static bool json_uint(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsNumber(j)) return false;
    double d = j->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || floor(d) != d) return false;
    *v = (uint64_t)d;
    return true;
}

/* header_only: the tensors get name, dtype, shape and nbytes, no data. */
static npk_status st_parse(const uint8_t *buf, size_t len, npk_tensor_set *s, bool header_only,
                           npk_error *err)
{
    npk_set_init(s);
    if (len < 8) return npk_fail_at(err, NPK_E_FORMAT, 0, "safetensors: file shorter than 8 bytes");
    uint64_t n = npk_ld64le(buf);
    if (n > ST_MAX_HEADER)
        return npk_fail_at(err, NPK_E_LIMIT, 0, "safetensors: header length %llu exceeds the limit",
                           (unsigned long long)n);
    if (n > len - 8)
        return npk_fail_at(err, NPK_E_FORMAT, 0,
                           "safetensors: header length %llu runs past the end of the file",
                           (unsigned long long)n);
    if (n < 2 || buf[8] != '{')
        return npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: header is not a JSON object");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)buf + 8, (size_t)n, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        uint64_t off = 8 + (end ? (uint64_t)(end - (const char *)buf - 8) : 0);
        cJSON_Delete(root);
        return npk_fail_at(err, NPK_E_FORMAT, off, "safetensors: invalid JSON header");
    }
    /* After the JSON only padding spaces may follow inside the header. */
    for (const char *p = end; p && p < (const char *)buf + 8 + n; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != 0) {
            cJSON_Delete(root);
            return npk_fail_at(err, NPK_E_FORMAT, (uint64_t)(p - (const char *)buf),
                               "safetensors: trailing bytes after the JSON header");
        }
    size_t dstart = 8 + (size_t)n, dlen = len - dstart;
    size_t count = 0;
    for (cJSON *it = root->child; it; it = it->next) count++;
    if (count > NPK_MAX_TENSORS) {
        cJSON_Delete(root);
        return npk_fail_at(err, NPK_E_LIMIT, 8, "safetensors: more than %d entries",
                           NPK_MAX_TENSORS);
    }
    span *spans = calloc(count ? count : 1, sizeof *spans);
    npk_status st = NPK_OK;
    size_t ns = 0;
    if (!spans) {
        cJSON_Delete(root);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (cJSON *it = root->child; it; it = it->next) {
        const char *name = it->string;
        if (strcmp(name, "__metadata__") == 0) {
            if (!cJSON_IsObject(it)) {
                st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: __metadata__ is not a map");
                goto fail;
            }
            for (cJSON *m = it->child; m; m = m->next)
                if (!cJSON_IsString(m)) {
                    st = npk_fail_at(err, NPK_E_FORMAT, 8,
                                     "safetensors: __metadata__ value '%s' is not a string",
                                     m->string);
                    goto fail;
                }
            continue;
        }
        if (strlen(name) > NPK_MAX_TENSOR_NAME) {
            st = npk_fail_at(err, NPK_E_LIMIT, 8, "safetensors: tensor name too long");
            goto fail;
        }
        if (npk_set_find(s, name)) {
            st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: duplicate tensor '%s'", name);
            goto fail;
        }
        cJSON *jd = cJSON_GetObjectItemCaseSensitive(it, "dtype");
        cJSON *js = cJSON_GetObjectItemCaseSensitive(it, "shape");
        cJSON *jo = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
        if (!cJSON_IsObject(it) || !cJSON_IsString(jd) || !cJSON_IsArray(js) ||
            !cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2) {
            st = npk_fail_at(err, NPK_E_FORMAT, 8,
                             "safetensors: tensor '%s' lacks dtype, shape or data_offsets", name);
            goto fail;
        }
        npk_dtype dt = NPK_DT_INVALID;
        for (size_t i = 0; i < sizeof st_types / sizeof st_types[0]; i++)
            if (strcmp(jd->valuestring, st_types[i].name) == 0) dt = st_types[i].dt;
        if (dt == NPK_DT_INVALID) {
            st = npk_fail_at(err, NPK_E_UNSUPPORTED, 8,
                             "safetensors: tensor '%s' has unsupported dtype %s", name,
                             jd->valuestring);
            goto fail;
        }
        int ndim = cJSON_GetArraySize(js);
        if (ndim > NPK_MAX_DIMS) {
            st = npk_fail_at(err, NPK_E_LIMIT, 8, "safetensors: tensor '%s' has %d dimensions",
                             name, ndim);
            goto fail;
        }
        int64_t shape[NPK_MAX_DIMS];
        int k = 0;
        for (cJSON *d = js->child; d; d = d->next) {
            uint64_t v;
            if (!json_uint(d, &v)) {
                st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: tensor '%s' has a bad shape",
                                 name);
                goto fail;
            }
            shape[k++] = (int64_t)v;
        }
        uint64_t b, e;
        if (!json_uint(jo->child, &b) || !json_uint(jo->child->next, &e) || e < b) {
            st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: tensor '%s' has bad data_offsets",
                             name);
            goto fail;
        }
        size_t cnt, nbytes;
        npk_error serr = {0};
        if ((st = npk_shape_size(dt, ndim, shape, &cnt, &nbytes, &serr))) {
            npk_fail_at(err, st, 8, "safetensors: tensor '%s': %s", name, serr.msg);
            goto fail;
        }
        if (e - b != nbytes) {
            st = npk_fail_at(err, NPK_E_FORMAT, 8,
                             "safetensors: tensor '%s' spans %llu bytes, its shape needs %zu", name,
                             (unsigned long long)(e - b), nbytes);
            goto fail;
        }
        if (e > dlen) {
            st = npk_fail_at(err, NPK_E_FORMAT, dstart + dlen,
                             "safetensors: tensor '%s' ends past the end of the file", name);
            goto fail;
        }
        npk_tensor t;
        if (header_only) {
            memset(&t, 0, sizeof t);
            if (!(t.name = strdup(name))) {
                st = npk_fail(err, NPK_E_NOMEM, "out of memory");
                goto fail;
            }
            t.dtype = dt;
            t.ndim = ndim;
            memcpy(t.shape, shape, sizeof shape);
            t.nbytes = nbytes;
        } else if ((st = npk_tensor_alloc(&t, name, dt, ndim, shape, err))) {
            goto fail;
        }
        t.src_shape_offset = 8;
        t.src_data_offset = dstart + b;
        if (!header_only)
            npk_swap_copy(t.data, buf + dstart + b, nbytes, npk_dtype_size(dt), !npk_host_is_le());
        spans[ns].begin = (size_t)b;
        spans[ns].end = (size_t)e;
        spans[ns].index = s->count;
        ns++;
        if ((st = npk_set_add(s, &t, err))) {
            npk_tensor_free(&t);
            goto fail;
        }
    }
    /* The buffer must be covered exactly, in any order. */
    qsort(spans, ns, sizeof *spans, span_cmp);
    size_t at = 0;
    for (size_t i = 0; i < ns; i++) {
        if (spans[i].begin != at) {
            st = npk_fail_at(
                err, NPK_E_FORMAT, dstart + (spans[i].begin < at ? spans[i].begin : at),
                "safetensors: tensor '%s' %s the previous one", s->items[spans[i].index].name,
                spans[i].begin < at ? "overlaps" : "leaves a hole before");
            goto fail;
        }
        at = spans[i].end;
    }
    if (at != dlen) {
        st = npk_fail_at(err, NPK_E_FORMAT, dstart + at,
                         "safetensors: %zu bytes after the last tensor", dlen - at);
        goto fail;
    }
    free(spans);
    cJSON_Delete(root);
    return NPK_OK;
fail:
    free(spans);
    cJSON_Delete(root);
    npk_set_free(s);
    return st;
}

npk_status npk_st_parse(const uint8_t *buf, size_t len, npk_tensor_set *s, npk_error *err)
{
    return st_parse(buf, len, s, false, err);
}

npk_status npk_st_parse_header(const uint8_t *buf, size_t len, npk_tensor_set *s, npk_error *err)
{
    return st_parse(buf, len, s, true, err);
}

npk_status npk_st_encode(const npk_tensor *ts, size_t n, uint8_t **out, size_t *len, npk_error *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = NPK_OK;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const npk_tensor *t = &ts[i];
        const char *dn = st_name(t->dtype);
        size_t nbytes;
        if (!t->name || !*t->name) {
            st = npk_fail(err, NPK_E_ARG, "safetensors: tensor %zu has no name", i);
            goto fail;
        }
        if (!npk_utf8_valid(t->name, strlen(t->name))) {
            /* The header is JSON: its names must be UTF-8 (a damaged input's
             * name is not copied into a new file). */
            st = npk_fail(err, NPK_E_ARG, "safetensors: tensor %zu's name is not valid UTF-8", i);
            goto fail;
        }
        if (!dn) {
            st = npk_fail(err, NPK_E_UNSUPPORTED, "safetensors: dtype %s not supported",
                          npk_dtype_name(t->dtype));
            goto fail;
        }
        if ((st = npk_shape_size(t->dtype, t->ndim, t->shape, NULL, &nbytes, err))) goto fail;
        if (cJSON_GetObjectItemCaseSensitive(root, t->name) ||
            strcmp(t->name, "__metadata__") == 0) {
            st = npk_fail(err, NPK_E_ARG, "safetensors: duplicate or reserved name '%s'", t->name);
            goto fail;
        }
        cJSON *e = cJSON_AddObjectToObject(root, t->name);
        cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
        cJSON *offs = shape ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
        if (!offs || !cJSON_AddStringToObject(e, "dtype", dn)) {
            st = npk_fail(err, NPK_E_NOMEM, "out of memory");
            goto fail;
        }
        for (int d = 0; d < t->ndim; d++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(at + nbytes)));
        at += nbytes;
    }
    char *json = cJSON_PrintUnformatted(root);
    if (!json) {
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto fail;
    }
    size_t jl = strlen(json), hl = (jl + 7) & ~(size_t)7, total = 8 + hl + at;
    uint8_t *b = malloc(total);
    if (!b) {
        free(json);
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto fail;
    }
    npk_st64le(b, hl);
    memcpy(b + 8, json, jl);
    memset(b + 8 + jl, ' ', hl - jl);
    free(json);
    size_t o = 8 + hl;
    for (size_t i = 0; i < n; i++) {
        npk_swap_copy(b + o, ts[i].data, ts[i].nbytes, npk_dtype_size(ts[i].dtype),
                      !npk_host_is_le());
        o += ts[i].nbytes;
    }
    cJSON_Delete(root);
    *out = b;
    *len = total;
    return NPK_OK;
fail:
    cJSON_Delete(root);
    return st;
}

#else /* !NPK_HAVE_CJSON */

bool npk_safetensors_available(void)
{
    return false;
}

npk_status npk_st_parse(const uint8_t *buf, size_t len, npk_tensor_set *s, npk_error *err)
{
    (void)buf;
    (void)len;
    npk_set_init(s);
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

npk_status npk_st_parse_header(const uint8_t *buf, size_t len, npk_tensor_set *s, npk_error *err)
{
    return npk_st_parse(buf, len, s, err);
}

npk_status npk_st_encode(const npk_tensor *ts, size_t n, uint8_t **out, size_t *len, npk_error *err)
{
    (void)ts;
    (void)n;
    (void)out;
    (void)len;
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

#endif

npk_status npk_st_load(const char *path, npk_tensor_set *s, npk_error *err)
{
    npk_mapped m;
    npk_set_init(s);
    npk_status st = npk_map_file(path, &m, err);
    if (st) return st;
    st = npk_st_parse(m.data, m.size, s, err);
    npk_unmap_file(&m);
    return st;
}

npk_status npk_st_save(const char *path, const npk_tensor *ts, size_t n, npk_error *err)
{
    uint8_t *buf;
    size_t len;
    npk_status st = npk_st_encode(ts, n, &buf, &len, err);
    if (st) return st;
    st = npk_write_file(path, buf, len, err);
    free(buf);
    return st;
}
