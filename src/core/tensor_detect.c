/* Detection and summaries of .npy and safetensors files. */
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/tensor.h"
#include "formats.h"

bool npk_npy_probe(const uint8_t *buf, size_t len)
{
    return len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0; /* a cut header is then an error */
}

/* Header only: a summary never copies (or even reads) the data. */
npk_status npk_npy_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    npk_npy_header h;
    npk_status st = npk_npy_parse_header(buf, len, &h, err);
    if (st) return st;
    npk_tensor t = {.dtype = h.dtype, .ndim = h.ndim};
    memcpy(t.shape, h.shape, sizeof t.shape);
    char shape[128];
    npk_shape_str(&t, shape, sizeof shape);
    npk_sum_title(out, "%s %s", npk_dtype_name(t.dtype), shape);
    npk_sum_uint(out, "version", buf[6]);
    npk_sum_str(out, "dtype", "%s", npk_dtype_name(t.dtype));
    npk_sum_str(out, "shape", "%s", shape);
    npk_sum_uint(out, "elements", npk_tensor_count(&t));
    if (h.fortran_order) npk_sum_bool(out, "fortran_order", true);
    return NPK_OK;
}

bool npk_st_probe(const uint8_t *buf, size_t len)
{
    if (len < 10) return false;
    uint64_t n = npk_ld64le(buf);
    return n >= 2 && n <= len - 8 && buf[8] == '{';
}

npk_status npk_st_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    npk_tensor_set s;
    npk_status st = npk_st_parse_header(buf, len, &s, err); /* no tensor data copied */
    if (st) return st;
    size_t total = 0;
    for (size_t i = 0; i < s.count; i++) total += npk_tensor_count(&s.items[i]);
    npk_sum_title(out, "%zu tensors, %zu elements", s.count, total);
    npk_sum_uint(out, "tensors", s.count);
    npk_sum_uint(out, "elements", total);
    for (size_t i = 0; i < s.count && i < 16; i++) {
        char shape[128];
        npk_shape_str(&s.items[i], shape, sizeof shape);
        npk_sum_str(out, s.items[i].name, "%s %s", npk_dtype_name(s.items[i].dtype), shape);
    }
    npk_set_free(&s);
    return NPK_OK;
}
