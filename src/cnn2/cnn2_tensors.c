/* CNN v2 model <-> tensors named layer.<i>.weight, shape [out, in, k, k]
 * (PyTorch's OIHW, the order of the file). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/cnn2.h"
#include "npukit/half.h"

npk_status npk_cnn2_to_tensors(const npk_cnn2_model *m, npk_tensor_set *set, npk_error *err)
{
    npk_set_init(set);
    npk_status st = npk_cnn2_check_model(m, err);
    if (st) return st;
    for (uint32_t i = 0; i < m->num_layers; i++) {
        const npk_cnn2_layer *l = &m->layers[i];
        char name[48];
        snprintf(name, sizeof name, "layer.%u.weight", i);
        int64_t shape[4] = {l->out_channels, l->in_channels, l->kernel_size, l->kernel_size};
        npk_tensor t;
        if ((st = npk_tensor_alloc(&t, name, NPK_F32, 4, shape, err))) break;
        npk_f16_to_f32_n(m->weights + l->weight_offset, t.data, l->weight_count);
        if ((st = npk_set_add(set, &t, err))) {
            npk_tensor_free(&t);
            break;
        }
    }
    if (st) npk_set_free(set);
    return st;
}

/* An error about tensor t: at its place in the file it came from, if known. */
static npk_status tensor_fail(npk_error *err, npk_status st, const npk_tensor *t, const char *fmt,
                              ...) NPK_PRINTF(4, 5);
static npk_status tensor_fail(npk_error *err, npk_status st, const npk_tensor *t, const char *fmt,
                              ...)
{
    char msg[NPK_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (t && t->src_shape_offset) return npk_fail_at(err, st, t->src_shape_offset, "%s", msg);
    return npk_fail(err, st, "%s", msg);
}

/* "layer.<i>.weight" with a canonical decimal i; -1 otherwise. */
static long layer_index(const char *name)
{
    if (!name || strncmp(name, "layer.", 6) != 0) return -1;
    const char *p = name + 6;
    long v = 0;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
        if (v > (long)NPK_CNN2_MAX_LAYERS) return -1;
    }
    return strcmp(p, ".weight") == 0 ? v : -1;
}

npk_status npk_cnn2_from_tensors(const npk_tensor_set *set, uint32_t version, uint32_t mip_level,
                                 npk_cnn2_model *m, npk_error *err)
{
    memset(m, 0, sizeof *m);
    size_t n = set->count;
    if (n == 0)
        return npk_fail(err, NPK_E_FORMAT, "cnn2: no tensors (expected layer.0.weight ...)");
    if (n > NPK_CNN2_MAX_LAYERS)
        return npk_fail(err, NPK_E_LIMIT, "cnn2: %zu tensors, more than %u layers", n,
                        NPK_CNN2_MAX_LAYERS);
    const npk_tensor **by_layer = calloc(n, sizeof *by_layer);
    npk_cnn2_shape *shapes = calloc(n, sizeof *shapes);
    npk_status st = NPK_OK;
    if (!by_layer || !shapes) {
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < n; j++) {
        const npk_tensor *t = &set->items[j];
        long i = layer_index(t->name);
        if (i < 0) {
            st =
                tensor_fail(err, NPK_E_FORMAT, t, "cnn2: tensor '%s' is not named layer.<i>.weight",
                            t->name ? t->name : "");
            goto done;
        }
        if ((size_t)i >= n) {
            st = tensor_fail(err, NPK_E_FORMAT, t,
                             "cnn2: tensor '%s' but only %zu tensors (layers must be 0..%zu)",
                             t->name, n, n - 1);
            goto done;
        }
        by_layer[i] = t; /* names are unique in a set, so no index repeats */
    }
    for (size_t i = 0; i < n; i++) {
        const npk_tensor *t = by_layer[i];
        if (t->dtype != NPK_F32 && t->dtype != NPK_F16) {
            st = tensor_fail(err, NPK_E_UNSUPPORTED, t,
                             "cnn2: %s is %s; float32 or float16 expected", t->name,
                             npk_dtype_name(t->dtype));
            goto done;
        }
        if (t->ndim != 4 || t->shape[2] != t->shape[3] || t->shape[0] < 1 || t->shape[1] < 1 ||
            t->shape[2] < 1 || t->shape[0] > (int64_t)NPK_CNN2_MAX_OUT ||
            t->shape[1] > (int64_t)UINT32_MAX || t->shape[2] > 65535) {
            char buf[128];
            st = tensor_fail(err, NPK_E_FORMAT, t,
                             "cnn2: %s has shape %s; expected [out 1..8, in, k, k]", t->name,
                             npk_shape_str(t, buf, sizeof buf));
            goto done;
        }
        shapes[i].out_channels = (uint32_t)t->shape[0];
        shapes[i].in_channels = (uint32_t)t->shape[1];
        shapes[i].kernel_size = (uint32_t)t->shape[2];
        if (shapes[i].kernel_size % 2 == 0) {
            st = tensor_fail(err, NPK_E_FORMAT, t, "cnn2: %s has an even kernel size %u", t->name,
                             shapes[i].kernel_size);
            goto done;
        }
    }
    if ((st = npk_cnn2_build(m, version, mip_level, (uint32_t)n, shapes, err))) goto done;
    for (size_t i = 0; i < n; i++) {
        const npk_tensor *t = by_layer[i];
        uint16_t *dst = m->weights + m->layers[i].weight_offset;
        if (t->dtype == NPK_F16)
            memcpy(dst, t->data, (size_t)m->layers[i].weight_count * 2);
        else
            npk_f32_to_f16_n(t->data, dst, m->layers[i].weight_count);
    }
done:
    free(by_layer);
    free(shapes);
    if (st) npk_cnn2_free(m);
    return st;
}
