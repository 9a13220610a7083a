/* NumPy .npy reader and writer.
 * Format: "\x93NUMPY", major, minor, header length (u16 for 1.x, u32 for 2.x
 * and 3.x), then a Python dict literal {'descr': ..., 'fortran_order': ...,
 * 'shape': (...)} padded with spaces and ending in '\n', then the data. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/file.h"
#include "npukit/tensor.h"
#include "tensor_internal.h"

#define NPY_MAX_HEADER 65536

static const struct {
    char kind;
    int size;
    npk_dtype dt;
} npy_types[] = {
    {'f', 4, NPK_F32}, {'f', 2, NPK_F16}, {'f', 8, NPK_F64}, {'i', 1, NPK_I8},
    {'u', 1, NPK_U8},  {'i', 2, NPK_I16}, {'u', 2, NPK_U16}, {'i', 4, NPK_I32},
    {'u', 4, NPK_U32}, {'i', 8, NPK_I64}, {'u', 8, NPK_U64}, {'b', 1, NPK_BOOL},
};

/* A tiny parser for the header's dict literal. */
typedef struct {
    const char *p, *end;
    uint64_t base; /* file offset of the header text */
    const char *start;
} hdr_parser;

static void skip_ws(hdr_parser *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static uint64_t hoff(const hdr_parser *h)
{
    return h->base + (uint64_t)(h->p - h->start);
}

static npk_status expect(hdr_parser *h, char ch, npk_error *err)
{
    skip_ws(h);
    if (h->p >= h->end || *h->p != ch)
        return npk_fail_at(err, NPK_E_FORMAT, hoff(h), "npy header: expected '%c'", ch);
    h->p++;
    return NPK_OK;
}

/* A quoted string; returns a pointer/length into the header. */
static npk_status parse_str(hdr_parser *h, const char **s, size_t *n, npk_error *err)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return npk_fail_at(err, NPK_E_FORMAT, hoff(h), "npy header: expected a string");
    char q = *h->p++;
    const char *b = h->p;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\')
            return npk_fail_at(err, NPK_E_FORMAT, hoff(h), "npy header: escapes not supported");
        h->p++;
    }
    if (h->p >= h->end)
        return npk_fail_at(err, NPK_E_FORMAT, hoff(h), "npy header: unterminated string");
    *s = b;
    *n = (size_t)(h->p - b);
    h->p++;
    return NPK_OK;
}

static npk_status parse_shape(hdr_parser *h, npk_tensor *t, npk_error *err)
{
    npk_status st = expect(h, '(', err);
    if (st) return st;
    t->ndim = 0;
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            return NPK_OK;
        }
        if (h->p >= h->end || !isdigit((unsigned char)*h->p))
            return npk_fail_at(err, NPK_E_FORMAT, hoff(h), "npy header: bad shape");
        if (t->ndim >= NPK_MAX_DIMS)
            return npk_fail_at(err, NPK_E_LIMIT, hoff(h), "npy: more than %d dimensions",
                               NPK_MAX_DIMS);
        uint64_t v = 0;
        while (h->p < h->end && isdigit((unsigned char)*h->p)) {
            if (!npk_mul_u64(v, 10, &v) || !npk_add_u64(v, (uint64_t)(*h->p - '0'), &v) ||
                v > (uint64_t)INT64_MAX)
                return npk_fail_at(err, NPK_E_LIMIT, hoff(h), "npy: dimension too large");
            h->p++;
        }
        skip_ws(h);
        if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 long suffix */
        t->shape[t->ndim++] = (int64_t)v;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == ')') continue;
        return npk_fail_at(err, NPK_E_FORMAT, hoff(h), "npy header: bad shape");
    }
}

static npk_status parse_descr(const char *s, size_t n, uint64_t off, npk_dtype *dt, int *swap,
                              npk_error *err)
{
    if (n < 3 || n > 4)
        return npk_fail_at(err, NPK_E_UNSUPPORTED, off, "npy: unsupported dtype '%.*s'", (int)n, s);
    char order = s[0], kind = s[1];
    int size = atoi(s + 2);
    for (size_t i = 2; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return npk_fail_at(err, NPK_E_UNSUPPORTED, off, "npy: unsupported dtype '%.*s'", (int)n,
                               s);
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return npk_fail_at(err, NPK_E_UNSUPPORTED, off, "npy: unsupported dtype '%.*s'", (int)n, s);
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
        if (npy_types[i].kind == kind && npy_types[i].size == size) {
            *dt = npy_types[i].dt;
            int file_le = order != '>' && !(order == '=' && !npk_host_is_le());
            *swap = size > 1 && (file_le != npk_host_is_le());
            return NPK_OK;
        }
    }
    return npk_fail_at(err, NPK_E_UNSUPPORTED, off, "npy: unsupported dtype '%.*s'", (int)n, s);
}

npk_status npk_npy_parse_header(const uint8_t *buf, size_t len, npk_npy_header *hd, npk_error *err)
{
    memset(hd, 0, sizeof *hd);
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return npk_fail_at(err, NPK_E_FORMAT, 0, "not a .npy file (bad magic)");
    uint8_t major = buf[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = npk_ld16le(buf + 8);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return npk_fail_at(err, NPK_E_FORMAT, 8, "npy: truncated header length");
        hlen = npk_ld32le(buf + 8);
        hstart = 12;
    } else {
        return npk_fail_at(err, NPK_E_UNSUPPORTED, 6, "npy: unsupported format version %u.%u",
                           major, buf[7]);
    }
    if (hlen > NPY_MAX_HEADER)
        return npk_fail_at(err, NPK_E_LIMIT, 8, "npy: header of %zu bytes exceeds the limit", hlen);
    if (hlen > len - hstart)
        return npk_fail_at(err, NPK_E_FORMAT, hstart, "npy: header runs past the end of the file");

    hdr_parser h = {(const char *)buf + hstart, (const char *)buf + hstart + hlen, hstart,
                    (const char *)buf + hstart};
    int have_descr = 0, have_order = 0, have_shape = 0, swap = 0, fortran = 0;
    uint64_t shape_off = hstart;
    npk_dtype dt = NPK_DT_INVALID;
    npk_tensor tmp;
    memset(&tmp, 0, sizeof tmp);
    npk_status st = expect(&h, '{', err);
    if (st) return st;
    for (;;) {
        skip_ws(&h);
        if (h.p < h.end && *h.p == '}') {
            h.p++;
            break;
        }
        const char *key;
        size_t klen;
        uint64_t koff = hoff(&h);
        if ((st = parse_str(&h, &key, &klen, err)) || (st = expect(&h, ':', err))) return st;
        if (klen == 5 && memcmp(key, "descr", 5) == 0) {
            const char *d;
            size_t dl;
            uint64_t doff = hoff(&h);
            if ((st = parse_str(&h, &d, &dl, err))) return st;
            if ((st = parse_descr(d, dl, doff, &dt, &swap, err))) return st;
            have_descr = 1;
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
            skip_ws(&h);
            if ((size_t)(h.end - h.p) >= 5 && memcmp(h.p, "False", 5) == 0) {
                h.p += 5;
            } else if ((size_t)(h.end - h.p) >= 4 && memcmp(h.p, "True", 4) == 0) {
                h.p += 4; /* column-major data: transposed on load */
                fortran = 1;
            } else {
                return npk_fail_at(err, NPK_E_FORMAT, hoff(&h), "npy header: bad fortran_order");
            }
            have_order = 1;
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
            skip_ws(&h);
            shape_off = hoff(&h);
            if ((st = parse_shape(&h, &tmp, err))) return st;
            have_shape = 1;
        } else {
            return npk_fail_at(err, NPK_E_FORMAT, koff, "npy header: unexpected key '%.*s'",
                               (int)klen, key);
        }
        skip_ws(&h);
        if (h.p < h.end && *h.p == ',') h.p++;
    }
    if (!have_descr || !have_order || !have_shape)
        return npk_fail_at(err, NPK_E_FORMAT, hstart,
                           "npy header: missing 'descr', 'fortran_order' or 'shape'");

    size_t count, nbytes;
    npk_error serr = {0};
    if ((st = npk_shape_size(dt, tmp.ndim, tmp.shape, &count, &nbytes, &serr)))
        return npk_fail_at(err, st, shape_off, "npy: shape: %s", serr.msg);
    size_t dstart = hstart + hlen;
    if (len - dstart != nbytes)
        return npk_fail_at(err, NPK_E_FORMAT, dstart,
                           "npy: data is %zu bytes, shape and dtype need %zu", len - dstart,
                           nbytes);
    hd->dtype = dt;
    hd->ndim = tmp.ndim;
    memcpy(hd->shape, tmp.shape, sizeof hd->shape);
    hd->fortran_order = fortran;
    hd->swap = swap;
    hd->major = major;
    hd->minor = buf[7];
    hd->data_offset = dstart;
    hd->shape_offset = shape_off;
    hd->nbytes = nbytes;
    return NPK_OK;
}

/* Column-major (Fortran) data to row-major: walk the destination in order
 * with an odometer over the indices, keeping the source offset in step. */
static void from_fortran(uint8_t *dst, const uint8_t *src, int ndim, const int64_t *shape,
                         size_t esz, int swap)
{
    size_t count = 1, stride[NPK_MAX_DIMS], idx[NPK_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++) {
        stride[i] = count; /* source stride of dimension i */
        count *= (size_t)shape[i];
    }
    if (count == 0) return;
    size_t at = 0;
    for (size_t n = 0; n < count; n++) {
        npk_swap_copy(dst + n * esz, src + at * esz, esz, esz, swap);
        for (int i = ndim - 1; i >= 0; i--) {
            if (++idx[i] < (size_t)shape[i]) {
                at += stride[i];
                break;
            }
            at -= stride[i] * (idx[i] - 1);
            idx[i] = 0;
        }
    }
}

npk_status npk_npy_parse(const uint8_t *buf, size_t len, npk_tensor *t, npk_error *err)
{
    memset(t, 0, sizeof *t);
    npk_npy_header h;
    npk_status st = npk_npy_parse_header(buf, len, &h, err);
    if (st) return st;
    if ((st = npk_tensor_alloc(t, NULL, h.dtype, h.ndim, h.shape, err))) return st;
    t->src_shape_offset = h.shape_offset;
    t->src_data_offset = h.data_offset;
    t->src_fortran = h.fortran_order && h.ndim > 1;
    const uint8_t *data = buf + h.data_offset;
    size_t esz = npk_dtype_size(h.dtype);
    if (h.fortran_order && h.ndim > 1)
        from_fortran(t->data, data, h.ndim, h.shape, esz, h.swap);
    else
        npk_swap_copy(t->data, data, h.nbytes, esz, h.swap);
    return NPK_OK;
}

npk_status npk_npy_load(const char *path, npk_tensor *t, npk_error *err)
{
    npk_mapped m;
    npk_status st = npk_map_file(path, &m, err);
    if (st) return st;
    st = npk_npy_parse(m.data, m.size, t, err);
    npk_unmap_file(&m);
    return st;
}

static const char *npy_descr(npk_dtype dt)
{
    switch (dt) {
    case NPK_F32: return "<f4";
    case NPK_F16: return "<f2";
    case NPK_F64: return "<f8";
    case NPK_I8: return "|i1";
    case NPK_U8: return "|u1";
    case NPK_I16: return "<i2";
    case NPK_U16: return "<u2";
    case NPK_I32: return "<i4";
    case NPK_U32: return "<u4";
    case NPK_I64: return "<i8";
    case NPK_U64: return "<u8";
    case NPK_BOOL: return "|b1";
    default: return NULL;
    }
}

/* The header of t: magic, version 1.0, dict padded so the data starts on a
 * 64-byte boundary as NumPy does. Returns its length (a multiple of 64). */
static npk_status npy_header(const npk_tensor *t, uint8_t *b, size_t cap, size_t *hlen_out,
                             npk_error *err)
{
    const char *descr = npy_descr(t->dtype);
    if (!descr)
        return npk_fail(err, NPK_E_UNSUPPORTED, "dtype %s has no NumPy equivalent",
                        npk_dtype_name(t->dtype));
    size_t nbytes;
    npk_status st = npk_shape_size(t->dtype, t->ndim, t->shape, NULL, &nbytes, err);
    if (st) return st;
    if (nbytes != t->nbytes)
        return npk_fail(err, NPK_E_ARG, "tensor size does not match its shape");
    char dict[64 + NPK_MAX_DIMS * 24];
    int o =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->ndim; i++)
        o += snprintf(dict + o, sizeof dict - (size_t)o, "%lld%s", (long long)t->shape[i],
                      (t->ndim == 1 || i + 1 < t->ndim) ? ", " : "");
    if (t->ndim == 1) o -= 1; /* "(5,)" rather than "(5, )" */
    o += snprintf(dict + o, sizeof dict - (size_t)o, "), }");
    size_t pre = 10, total = pre + (size_t)o + 1;
    size_t padded = (total + 63) & ~(size_t)63;
    size_t hlen = padded - pre;
    if (padded > cap) return npk_fail(err, NPK_E_ARG, "npy header too long");
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    npk_st16le(b + 8, (uint16_t)hlen);
    memcpy(b + pre, dict, (size_t)o);
    memset(b + pre + o, ' ', hlen - (size_t)o - 1);
    b[padded - 1] = '\n';
    *hlen_out = padded;
    return NPK_OK;
}

#define NPY_HEADER_CAP 512

npk_status npk_npy_encode(const npk_tensor *t, uint8_t **out, size_t *len, npk_error *err)
{
    uint8_t hdr[NPY_HEADER_CAP];
    size_t padded, outlen;
    npk_status st = npy_header(t, hdr, sizeof hdr, &padded, err);
    if (st) return st;
    if (!npk_add_sz(padded, t->nbytes, &outlen)) return npk_fail(err, NPK_E_LIMIT, "npy too large");
    uint8_t *b = malloc(outlen ? outlen : 1);
    if (!b) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    memcpy(b, hdr, padded);
    npk_swap_copy(b + padded, t->data, t->nbytes, npk_dtype_size(t->dtype), !npk_host_is_le());
    *out = b;
    *len = outlen;
    return NPK_OK;
}

npk_status npk_npy_write(npk_out *o, const npk_tensor *t, npk_error *err)
{
    uint8_t hdr[NPY_HEADER_CAP];
    size_t padded;
    npk_status st = npy_header(t, hdr, sizeof hdr, &padded, err);
    if (!st) st = npk_check_output_size((uint64_t)padded + t->nbytes, err);
    if (!st) st = npk_out_write(o, hdr, padded, err);
    size_t es = npk_dtype_size(t->dtype);
    if (st || npk_host_is_le() || es == 1)
        return st ? st : npk_out_write(o, t->data, t->nbytes, err);
    /* Big-endian host: swap in chunks rather than copying the whole tensor. */
    uint8_t chunk[1 << 14];
    const uint8_t *p = t->data;
    for (size_t at = 0; at < t->nbytes && !st; at += sizeof chunk) {
        size_t n = t->nbytes - at < sizeof chunk ? t->nbytes - at : sizeof chunk;
        npk_swap_copy(chunk, p + at, n, es, 1);
        st = npk_out_write(o, chunk, n, err);
    }
    return st;
}

npk_status npk_npy_save(const char *path, const npk_tensor *t, npk_error *err)
{
    npk_out *o;
    npk_status st = npk_out_open(&o, path, err);
    if (st) return st;
    if ((st = npk_npy_write(o, t, err))) {
        npk_out_abort(o);
        return st;
    }
    return npk_out_commit(o, err);
}

npk_status npk_npy_save_in(npk_outdir *d, const char *name, const npk_tensor *t, npk_error *err)
{
    npk_out *o;
    npk_status st = npk_outdir_file(d, name, &o, err);
    if (st) return st;
    if ((st = npk_npy_write(o, t, err))) {
        npk_out_abort(o);
        return st;
    }
    return npk_out_commit(o, err);
}
