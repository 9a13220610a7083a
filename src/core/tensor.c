#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/checked.h"
#include "npukit/half.h"
#include "npukit/tensor.h"
#include "tensor_internal.h"

static const struct {
    npk_dtype dt;
    const char *name;
    size_t size;
} dtypes[] = {
    {NPK_F32, "f32", 4},   {NPK_F16, "f16", 2}, {NPK_BF16, "bf16", 2}, {NPK_F64, "f64", 8},
    {NPK_I8, "i8", 1},     {NPK_U8, "u8", 1},   {NPK_I16, "i16", 2},   {NPK_U16, "u16", 2},
    {NPK_I32, "i32", 4},   {NPK_U32, "u32", 4}, {NPK_I64, "i64", 8},   {NPK_U64, "u64", 8},
    {NPK_BOOL, "bool", 1},
};

size_t npk_dtype_size(npk_dtype dt)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == dt) return dtypes[i].size;
    return 0;
}

const char *npk_dtype_name(npk_dtype dt)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == dt) return dtypes[i].name;
    return "invalid";
}

npk_dtype npk_dtype_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dtypes[i].name, name) == 0) return dtypes[i].dt;
    return NPK_DT_INVALID;
}

npk_status npk_shape_size(npk_dtype dt, int ndim, const int64_t *shape, size_t *count,
                          size_t *nbytes, npk_error *err)
{
    size_t esz = npk_dtype_size(dt);
    if (!esz) return npk_fail(err, NPK_E_ARG, "invalid dtype");
    if (ndim < 0 || ndim > NPK_MAX_DIMS)
        return npk_fail(err, NPK_E_LIMIT, "%d dimensions (at most %d supported)", ndim,
                        NPK_MAX_DIMS);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return npk_fail(err, NPK_E_ARG, "dimension %d is negative (%lld)", i,
                            (long long)shape[i]);
        /* Checked even when another dimension is 0: code that walks one
         * dimension of an empty tensor must not loop 2^63 times. */
        if (shape[i] > NPK_MAX_DIM)
            return npk_fail(err, NPK_E_LIMIT, "dimension %d is %lld, more than the limit of %lld",
                            i, (long long)shape[i], (long long)NPK_MAX_DIM);
        size_t d;
        if (!npk_u64_to_sz((uint64_t)shape[i], &d) || !npk_mul_sz(n, d, &n))
            return npk_fail(err, NPK_E_LIMIT, "tensor size overflows");
    }
    size_t b;
    if (!npk_mul_sz(n, esz, &b)) return npk_fail(err, NPK_E_LIMIT, "tensor size overflows");
    if (count) *count = n;
    if (nbytes) *nbytes = b;
    return NPK_OK;
}

npk_status npk_tensor_alloc(npk_tensor *t, const char *name, npk_dtype dt, int ndim,
                            const int64_t *shape, npk_error *err)
{
    memset(t, 0, sizeof *t);
    size_t nbytes;
    npk_status st = npk_shape_size(dt, ndim, shape, NULL, &nbytes, err);
    if (st) return st;
    t->data = calloc(1, nbytes ? nbytes : 1);
    if (!t->data) return npk_fail(err, NPK_E_NOMEM, "out of memory for a %zu-byte tensor", nbytes);
    if (name) {
        size_t n = strlen(name);
        t->name = malloc(n + 1);
        if (!t->name) {
            free(t->data);
            t->data = NULL;
            return npk_fail(err, NPK_E_NOMEM, "out of memory");
        }
        memcpy(t->name, name, n + 1);
    }
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->nbytes = nbytes;
    return NPK_OK;
}

void npk_tensor_free(npk_tensor *t)
{
    if (!t) return;
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

size_t npk_tensor_count(const npk_tensor *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
    return n;
}

const char *npk_shape_str(const npk_tensor *t, char *buf, size_t len)
{
    size_t o = 0;
    if (!len) return buf;
    buf[0] = 0;
    o += (size_t)snprintf(buf + o, len - o, "[");
    for (int i = 0; i < t->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
    return buf;
}

void npk_swap_copy(void *dst, const void *src, size_t nbytes, size_t esz, int swap)
{
    if (!swap || esz == 1) {
        if (nbytes) memcpy(dst, src, nbytes);
        return;
    }
    const uint8_t *s = src;
    uint8_t *d = dst;
    for (size_t i = 0; i < nbytes; i += esz)
        for (size_t j = 0; j < esz; j++) d[i + j] = s[i + esz - 1 - j];
}

/* ---- tensor sets ---- */

void npk_set_init(npk_tensor_set *s)
{
    memset(s, 0, sizeof *s);
}

void npk_set_free(npk_tensor_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) npk_tensor_free(&s->items[i]);
    free(s->items);
    memset(s, 0, sizeof *s);
}

npk_status npk_set_add(npk_tensor_set *s, npk_tensor *t, npk_error *err)
{
    if (s->count >= NPK_MAX_TENSORS)
        return npk_fail(err, NPK_E_LIMIT, "more than %d tensors", NPK_MAX_TENSORS);
    if (s->count == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        npk_tensor *ni = realloc(s->items, nc * sizeof *ni);
        if (!ni) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        s->items = ni;
        s->cap = nc;
    }
    s->items[s->count++] = *t;
    memset(t, 0, sizeof *t);
    return NPK_OK;
}

npk_tensor *npk_set_find(const npk_tensor_set *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->items[i].name && strcmp(s->items[i].name, name) == 0) return &s->items[i];
    return NULL;
}

/* ---- element conversion ---- */

static double load_elem(const void *data, npk_dtype dt, size_t i)
{
    switch (dt) {
    case NPK_F32: return ((const float *)data)[i];
    case NPK_F16: return npk_f16_to_f32(((const uint16_t *)data)[i]);
    case NPK_BF16: return npk_bf16_to_f32(((const uint16_t *)data)[i]);
    case NPK_F64: return ((const double *)data)[i];
    case NPK_I8: return ((const int8_t *)data)[i];
    case NPK_U8: return ((const uint8_t *)data)[i];
    case NPK_BOOL: return ((const uint8_t *)data)[i] != 0;
    case NPK_I16: return ((const int16_t *)data)[i];
    case NPK_U16: return ((const uint16_t *)data)[i];
    case NPK_I32: return ((const int32_t *)data)[i];
    case NPK_U32: return ((const uint32_t *)data)[i];
    case NPK_I64: return (double)((const int64_t *)data)[i];
    case NPK_U64: return (double)((const uint64_t *)data)[i];
    default: return 0;
    }
}

static bool int_range(npk_dtype dt, double *lo, double *hi)
{
    switch (dt) {
    case NPK_I8:
        *lo = -128;
        *hi = 127;
        return true;
    case NPK_U8:
    case NPK_BOOL:
        *lo = 0;
        *hi = 255;
        return true;
    case NPK_I16:
        *lo = -32768;
        *hi = 32767;
        return true;
    case NPK_U16:
        *lo = 0;
        *hi = 65535;
        return true;
    case NPK_I32:
        *lo = -2147483648.0;
        *hi = 2147483647.0;
        return true;
    case NPK_U32:
        *lo = 0;
        *hi = 4294967295.0;
        return true;
    case NPK_I64:
        *lo = -9223372036854775808.0;
        *hi = 9223372036854774784.0;
        return true;
    case NPK_U64:
        *lo = 0;
        *hi = 18446744073709549568.0;
        return true;
    default: return false;
    }
}

const char *npk_index_str(const npk_tensor *t, size_t i, char *buf, size_t len)
{
    size_t idx[NPK_MAX_DIMS], o = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        size_t n = t->shape[d] > 0 ? (size_t)t->shape[d] : 1;
        idx[d] = i % n;
        i /= n;
    }
    if (!len) return buf;
    buf[0] = 0;
    o += (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < t->ndim && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%zu", d ? ", " : "", idx[d]);
    if (o < len) snprintf(buf + o, len - o, "]");
    return buf;
}

uint64_t npk_tensor_src_offset(const npk_tensor *t, size_t i)
{
    if (!t->src_data_offset) return 0;
    size_t esz = npk_dtype_size(t->dtype);
    if (!t->src_fortran || t->ndim < 2) return t->src_data_offset + (uint64_t)i * esz;
    /* Column-major in the file: the same element's position there. */
    uint64_t at = 0, stride = 1;
    size_t idx[NPK_MAX_DIMS];
    for (int d = t->ndim - 1; d >= 0; d--) {
        size_t n = t->shape[d] > 0 ? (size_t)t->shape[d] : 1;
        idx[d] = i % n;
        i /= n;
    }
    for (int d = 0; d < t->ndim; d++) {
        at += idx[d] * stride;
        stride *= (uint64_t)t->shape[d];
    }
    return t->src_data_offset + at * esz;
}

/* Record an error about element i of src: its index, and its file offset
 * when src was read from a file. */
static npk_status elem_fail(npk_error *err, npk_status st, const npk_tensor *src, size_t i,
                            const char *what)
{
    char idx[160];
    npk_index_str(src, i, idx, sizeof idx);
    uint64_t off = npk_tensor_src_offset(src, i);
    if (off) return npk_fail_at(err, st, off, "element %s (index %zu) %s", idx, i, what);
    return npk_fail(err, st, "element %s (index %zu) %s", idx, i, what);
}

npk_status npk_tensor_convert(const npk_tensor *src, npk_tensor *dst, npk_error *err)
{
    return npk_tensor_convert_ex(src, dst, 0, err);
}

npk_status npk_tensor_convert_ex(const npk_tensor *src, npk_tensor *dst, unsigned flags,
                                 npk_error *err)
{
    size_t n = npk_tensor_count(src);
    if (npk_tensor_count(dst) != n)
        return npk_fail(err, NPK_E_ARG, "convert: %zu elements into %zu", n, npk_tensor_count(dst));
    bool src_float = src->dtype == NPK_F32 || src->dtype == NPK_F16 || src->dtype == NPK_BF16 ||
                     src->dtype == NPK_F64;
    if (src->dtype == dst->dtype && !(src_float && (flags & NPK_CONVERT_NO_NAN))) {
        if (n) memcpy(dst->data, src->data, src->nbytes);
        return NPK_OK;
    }
    double lo = 0, hi = 0; /* set by int_range for integer types (the only ones that use them) */
    bool is_int = int_range(dst->dtype, &lo, &hi);
    char what[96];
    for (size_t i = 0; i < n; i++) {
        double v = load_elem(src->data, src->dtype, i), orig = v;
        if ((flags & NPK_CONVERT_NO_NAN) && !isfinite(v)) {
            snprintf(what, sizeof what, "is %g", v);
            return elem_fail(err, NPK_E_ARG, src, i, what);
        }
        if (is_int) {
            if (dst->dtype == NPK_BOOL) v = v != 0;
            v = nearbyint(v); /* default rounding mode: half to even */
            if (!(v >= lo && v <= hi)) {
                snprintf(what, sizeof what, "= %g does not fit in %s", orig,
                         npk_dtype_name(dst->dtype));
                return elem_fail(err, NPK_E_LIMIT, src, i, what);
            }
            if ((flags & NPK_CONVERT_EXACT) && v != orig && dst->dtype != NPK_BOOL) {
                snprintf(what, sizeof what, "= %.9g is not an integer: %s needs exact values", orig,
                         npk_dtype_name(dst->dtype));
                return elem_fail(err, NPK_E_ARG, src, i, what);
            }
        }
        switch (dst->dtype) {
        case NPK_F32: ((float *)dst->data)[i] = (float)v; break;
        case NPK_F16: ((uint16_t *)dst->data)[i] = npk_f32_to_f16((float)v); break;
        case NPK_BF16: ((uint16_t *)dst->data)[i] = npk_f32_to_bf16((float)v); break;
        case NPK_F64: ((double *)dst->data)[i] = v; break;
        case NPK_I8: ((int8_t *)dst->data)[i] = (int8_t)v; break;
        case NPK_U8:
        case NPK_BOOL: ((uint8_t *)dst->data)[i] = (uint8_t)v; break;
        case NPK_I16: ((int16_t *)dst->data)[i] = (int16_t)v; break;
        case NPK_U16: ((uint16_t *)dst->data)[i] = (uint16_t)v; break;
        case NPK_I32: ((int32_t *)dst->data)[i] = (int32_t)v; break;
        case NPK_U32: ((uint32_t *)dst->data)[i] = (uint32_t)v; break;
        case NPK_I64: ((int64_t *)dst->data)[i] = (int64_t)v; break;
        case NPK_U64: ((uint64_t *)dst->data)[i] = (uint64_t)v; break;
        default: return npk_fail(err, NPK_E_ARG, "convert: invalid dtype");
        }
        if ((flags & NPK_CONVERT_FINITE) && isfinite(orig) &&
            !isfinite(load_elem(dst->data, dst->dtype, i))) {
            snprintf(what, sizeof what, "= %g overflows %s", orig, npk_dtype_name(dst->dtype));
            return elem_fail(err, NPK_E_LIMIT, src, i, what);
        }
    }
    return NPK_OK;
}
