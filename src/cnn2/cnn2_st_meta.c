/* safetensors for CNN v2: the core codec writes the tensors; this file adds
 * (and reads back) the two header fields a tensor cannot carry, version and
 * mip_level, as "__metadata__" strings, so unpack + pack is byte-exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/cnn2.h"
#include "npukit/half.h"

#define META_VERSION "cnn2.version"
#define META_MIP     "cnn2.mip_level"

#ifdef NPK_HAVE_CJSON
#include <cjson/cJSON.h>

/* The JSON header of a model's safetensors file (as npk_st_encode writes the
 * tensors, then "__metadata__"), padded with spaces to a multiple of 8, and
 * the size of the data that follows. */
static npk_status st_header(const npk_cnn2_model *m, char **hdr, size_t *hl, uint64_t *data,
                            npk_error *err)
{
    npk_status st = npk_cnn2_check_model(m, err);
    if (st) return st;
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_CreateObject();
    uint64_t at = 0;
    bool ok = root && meta;
    for (uint32_t i = 0; ok && i < m->num_layers; i++) {
        const npk_cnn2_layer *l = &m->layers[i];
        char name[48];
        snprintf(name, sizeof name, "layer.%u.weight", i);
        cJSON *e = cJSON_AddObjectToObject(root, name);
        cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
        cJSON *offs = shape ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
        ok = offs && cJSON_AddStringToObject(e, "dtype", "F32");
        const double dims[4] = {l->out_channels, l->in_channels, l->kernel_size, l->kernel_size};
        for (int d = 0; ok && d < 4; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber(dims[d]));
        uint64_t end = at + (uint64_t)l->weight_count * 4;
        if (ok) {
            cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
            cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)end));
        }
        at = end;
    }
    char v[16], mip[16];
    snprintf(v, sizeof v, "%u", m->version);
    snprintf(mip, sizeof mip, "%u", m->mip_level);
    char *json = NULL;
    if (ok && cJSON_AddStringToObject(meta, "format", "cnn2") &&
        cJSON_AddStringToObject(meta, META_VERSION, v) &&
        cJSON_AddStringToObject(meta, META_MIP, mip)) {
        cJSON_AddItemToObject(root, "__metadata__", meta);
        meta = NULL;
        json = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(meta);
    cJSON_Delete(root);
    if (!json) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    size_t jl = strlen(json), n = (jl + 7) & ~(size_t)7;
    char *h = realloc(json, n ? n : 1);
    if (!h) {
        free(json);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    memset(h + jl, ' ', n - jl);
    *hdr = h;
    *hl = n;
    *data = at;
    return NPK_OK;
}

/* Layer weights as little-endian float32, converted a chunk at a time. */
typedef npk_status (*sink_fn)(void *ctx, const void *p, size_t n, npk_error *err);

static npk_status st_emit(const npk_cnn2_model *m, sink_fn sink, void *ctx, npk_error *err)
{
    char *hdr;
    size_t hl;
    uint64_t data;
    npk_status st = st_header(m, &hdr, &hl, &data, err);
    if (st) return st;
    uint8_t len8[8];
    npk_st64le(len8, hl);
    if (!(st = npk_check_output_size(8 + hl + data, err)) && !(st = sink(ctx, len8, 8, err)))
        st = sink(ctx, hdr, hl, err);
    free(hdr);
    enum { CHUNK = 4096 };
    float f[CHUNK];
    for (uint32_t i = 0; !st && i < m->num_layers; i++) {
        const npk_cnn2_layer *l = &m->layers[i];
        for (uint32_t at = 0; !st && at < l->weight_count; at += CHUNK) {
            uint32_t n = l->weight_count - at < CHUNK ? l->weight_count - at : CHUNK;
            npk_f16_to_f32_n(m->weights + l->weight_offset + at, f, n);
            if (!npk_host_is_le())
                for (uint32_t k = 0; k < n; k++) npk_stf32le((uint8_t *)&f[k], f[k]);
            st = sink(ctx, f, (size_t)n * 4, err);
        }
    }
    return st;
}

typedef struct mem_sink {
    uint8_t *buf;
    size_t len;
} mem_sink;

static npk_status to_mem(void *ctx, const void *p, size_t n, npk_error *err)
{
    (void)err;
    mem_sink *s = ctx;
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return NPK_OK;
}

static npk_status to_out(void *ctx, const void *p, size_t n, npk_error *err)
{
    return npk_out_write(ctx, p, n, err);
}

npk_status npk_cnn2_st_write(const npk_cnn2_model *m, npk_out *o, npk_error *err)
{
    return st_emit(m, to_out, o, err);
}

npk_status npk_cnn2_st_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err)
{
    char *hdr;
    size_t hl;
    uint64_t data;
    npk_status st = st_header(m, &hdr, &hl, &data, err);
    if (st) return st;
    free(hdr);
    size_t total;
    if (!npk_u64_to_sz(8 + hl + data, &total))
        return npk_fail(err, NPK_E_LIMIT, "cnn2: safetensors of %llu bytes is too large",
                        (unsigned long long)(8 + hl + data));
    mem_sink s = {malloc(total ? total : 1), 0};
    if (!s.buf) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    if ((st = st_emit(m, to_mem, &s, err))) {
        free(s.buf);
        return st;
    }
    *out = s.buf;
    *len = s.len;
    return NPK_OK;
}

/* A one-digit metadata value; -1 when malformed. */
static int meta_digit(const cJSON *j)
{
    const char *s = cJSON_IsString(j) ? j->valuestring : NULL;
    return s && s[0] >= '0' && s[0] <= '9' && !s[1] ? s[0] - '0' : -1;
}

npk_status npk_cnn2_st_decode(const uint8_t *buf, size_t len, npk_tensor_set *set,
                              uint32_t *version, uint32_t *mip_level, npk_error *err)
{
    *version = *mip_level = 0;
    npk_status st = npk_st_parse(buf, len, set, err);
    if (st) return st;
    /* npk_st_parse accepted the header, so it is a JSON object in bounds. */
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)npk_ld64le(buf));
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(meta, META_VERSION);
    const cJSON *jm = cJSON_GetObjectItemCaseSensitive(meta, META_MIP);
    int v = jv ? meta_digit(jv) : 0, mip = jm ? meta_digit(jm) : 0;
    if (jv && v != 1 && v != 2)
        st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: metadata %s is not 1 or 2",
                         META_VERSION);
    else if (mip < 0 || mip > (int)NPK_CNN2_MAX_MIP)
        st = npk_fail_at(err, NPK_E_FORMAT, 8, "safetensors: metadata %s is not 0..3", META_MIP);
    *version = (uint32_t)v;
    *mip_level = st ? 0 : (uint32_t)mip;
    cJSON_Delete(root);
    if (st) npk_set_free(set);
    return st;
}

#else /* !NPK_HAVE_CJSON */

npk_status npk_cnn2_st_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err)
{
    (void)m;
    (void)out;
    (void)len;
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

npk_status npk_cnn2_st_write(const npk_cnn2_model *m, npk_out *o, npk_error *err)
{
    (void)m;
    (void)o;
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

npk_status npk_cnn2_st_decode(const uint8_t *buf, size_t len, npk_tensor_set *set,
                              uint32_t *version, uint32_t *mip_level, npk_error *err)
{
    (void)buf;
    (void)len;
    npk_set_init(set);
    *version = *mip_level = 0;
    return npk_fail(err, NPK_E_UNSUPPORTED, "safetensors support was not built (needs libcjson)");
}

#endif
