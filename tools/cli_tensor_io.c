/* Interpreter views as tensors, tensor names as file names (cli_tensor_io.h). */
#include "cli_tensor_io.h"

#include <stdio.h>
#include <string.h>

#include "npukit/bind.h"
#include "npukit/tflite.h"

npk_dtype cli_npu_view_dtype(int8_t type)
{
    npk_dtype d = npk_bind_tfl_dtype(type);
    switch (d) {
    case NPK_F16:
    case NPK_F64:
    case NPK_U64:
    case NPK_U32:
    case NPK_U16: return NPK_DT_INVALID; /* not a type the NPU models' views carry */
    default: return d;
    }
}

npk_status cli_view_tensor(const npk_tfl_view *v, npk_dtype dt, npk_tensor *t, npk_error *err)
{
    int64_t shape[NPK_MAX_DIMS];
    for (uint32_t d = 0; d < v->ndim && d < NPK_MAX_DIMS; d++) shape[d] = v->dims[d];
    if (dt == NPK_DT_INVALID)
        return npk_fail(err, NPK_E_UNSUPPORTED, "tensor \"%s\" has type %s, not writable as .npy",
                        v->name, npk_tfl_type_name(v->type));
    npk_status st = npk_tensor_alloc(t, v->name, dt, (int)v->ndim, shape, err);
    if (st) return st;
    if (t->nbytes != v->bytes) {
        npk_tensor_free(t);
        return npk_fail(err, NPK_E_ARG, "tensor \"%s\": size mismatch", v->name);
    }
    if (v->bytes) memcpy(t->data, v->data, v->bytes);
    return NPK_OK;
}

void cli_view_describe(const npk_tfl_view *v, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "%s [", npk_tfl_type_name(v->type));
    for (uint32_t d = 0; d < v->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%d", d ? ", " : "", v->dims[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

void cli_npy_file_name(const char *name, char *out, size_t n)
{
    size_t k = 0;
    for (const char *c = name; *c && k + 5 < n && k < 120; c++)
        out[k++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || *c == '.' || *c == '-')
                       ? *c
                       : '_';
    if (k == 0 || (k <= 2 && out[0] == '.' && (k == 1 || out[1] == '.'))) out[k++] = '_';
    memcpy(out + k, ".npy", 5);
}
