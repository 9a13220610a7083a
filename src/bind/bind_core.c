/* Binding support: struct sizes, tensor ownership, sources, `info`. */
#include <stdlib.h>
#include <string.h>

#include "bind_internal.h"
#include "npukit/detect.h"

size_t npk_bind_sizeof(const char *type)
{
    static const struct {
        const char *name;
        size_t size;
    } t[] = {
        {"npk_error", sizeof(npk_error)},
        {"npk_tensor", sizeof(npk_tensor)},
        {"npk_tensor_set", sizeof(npk_tensor_set)},
        {"npk_tfl_view", sizeof(npk_tfl_view)},
        {"npk_summary", sizeof(npk_summary)},
        {"npk_kv", sizeof(npk_kv)},
        {"npk_progress", sizeof(npk_progress)},
        {"npk_bind_mgk_layer", sizeof(npk_bind_mgk_layer)},
        {"npk_bind_cnn2_opts", sizeof(npk_bind_cnn2_opts)},
    };
    for (size_t i = 0; type && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].name, type)) return t[i].size;
    return 0;
}

npk_tensor *npk_bind_set_take(npk_tensor_set *s, size_t i)
{
    if (!s || i >= s->count) return NULL;
    npk_tensor *t = malloc(sizeof *t);
    if (!t) return NULL;
    *t = s->items[i];
    memset(&s->items[i], 0, sizeof s->items[i]);
    return t;
}

void npk_bind_set_release(npk_tensor_set *s)
{
    if (!s) return;
    npk_set_free(s);
    free(s);
}

void npk_bind_tensor_release(npk_tensor *t)
{
    if (!t) return;
    npk_tensor_free(t);
    free(t);
}

void npk_bind_free(void *p)
{
    free(p);
}

npk_status bind_src_open(bind_src *s, const char *path, const uint8_t *buf, size_t len,
                         npk_error *err)
{
    memset(s, 0, sizeof *s);
    if (path) {
        npk_status st = npk_map_file(path, &s->map, err);
        if (st) return st;
        s->data = s->map.data;
        s->size = s->map.size;
        return NPK_OK;
    }
    if (!buf && len) return npk_fail(err, NPK_E_ARG, "no bytes given");
    s->heap = malloc(len ? len : 1);
    if (!s->heap) return npk_fail(err, NPK_E_NOMEM, "out of memory for %zu bytes", len);
    if (len) memcpy(s->heap, buf, len);
    s->data = s->heap;
    s->size = len;
    return NPK_OK;
}

void bind_src_adopt(bind_src *s, uint8_t *buf, size_t len)
{
    memset(s, 0, sizeof *s);
    s->heap = buf;
    s->data = buf;
    s->size = len;
}

void bind_src_close(bind_src *s)
{
    if (s->map.data) npk_unmap_file(&s->map);
    free(s->heap);
    memset(s, 0, sizeof *s);
}

npk_status npk_bind_info(const char *path, const char **format, const char **description,
                         uint64_t *size, npk_summary *s, bool *described, npk_error *err)
{
    *format = "unknown";
    *description = "";
    *size = 0;
    *described = false;
    memset(s, 0, sizeof *s);
    npk_mapped m;
    npk_status st = npk_map_file(path, &m, err);
    if (st) return st;
    *size = m.size;
    const npk_format *f = npk_detect(m.data, m.size);
    if (!f) {
        st = npk_fail_at(err, NPK_E_FORMAT, 0, "unrecognised format");
    } else {
        *format = f->name;
        *description = f->description;
        if (f->summarize) st = f->summarize(m.data, m.size, s, err);
        *described = st == NPK_OK || s->malformed;
    }
    npk_unmap_file(&m);
    return st;
}
