/* Export of convolution weights and requant tables as tensors, and the
 * reverse: re-encoding replacement weights into a copy of the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgk_internal.h"

static npk_status add_tensor(npk_tensor_set *set, const char *name, npk_dtype dt, int ndim,
                             const int64_t *shape, const void *data, npk_error *err)
{
    npk_tensor t;
    npk_status st = npk_tensor_alloc(&t, name, dt, ndim, shape, err);
    if (st) return st;
    if (data && t.nbytes) memcpy(t.data, data, t.nbytes);
    if ((st = npk_set_add(set, &t, err))) npk_tensor_free(&t);
    return st;
}

static npk_status extract_requant(const npk_mgk_model *m, const npk_mgk_conv *c,
                                  npk_tensor_set *out, npk_error *err)
{
    npk_mgk_requant rq;
    npk_status st = npk_mgk_requant_read(m, c, &rq, err);
    if (st) return st;
    char name[64];
    int64_t one[1] = {rq.channels}, two[2] = {rq.rows, rq.channels};
    if (rq.bias) {
        snprintf(name, sizeof name, "layer_%d.bias", c->id);
        st = add_tensor(out, name, NPK_I32, 1, one, rq.bias, err);
    }
    if (!st && rq.scale) {
        snprintf(name, sizeof name, "layer_%d.scale", c->id);
        st = add_tensor(out, name, NPK_F32, 1, one, rq.scale, err);
    }
    if (!st && rq.mult) {
        snprintf(name, sizeof name, "layer_%d.mult", c->id);
        st = add_tensor(out, name, NPK_I32, 1, one, rq.mult, err);
    }
    if (!st) {
        snprintf(name, sizeof name, "layer_%d.requant", c->id);
        st = add_tensor(out, name, NPK_I32, 2, two, rq.ints, err);
    }
    npk_mgk_requant_free(&rq);
    return st;
}

static npk_status extract_gru(const npk_mgk_model *m, const npk_mgk_gru *g, npk_tensor_set *out,
                              npk_error *err)
{
    npk_mgk_gru_tensors t;
    npk_status st = npk_mgk_gru_read(m, g, &t, err);
    if (st) return st;
    int64_t nd = t.ndir, h3 = 3 * (int64_t)t.hidden;
    int64_t sw[3] = {nd, h3, t.input}, sr[3] = {nd, h3, t.hidden}, sb[2] = {nd, h3};
    int64_t sh[1] = {t.hidden}, sz[1] = {nd};
    static const char *suffix[8] = {"W", "R", "Wb", "Rb", "Ws", "Rs", "h_scale", "h_zp"};
    const void *data[8] = {t.w, t.r, t.wb, t.rb, t.ws, t.rs, t.h_scale, t.h_zp};
    const npk_dtype dt[8] = {NPK_I8, NPK_I8, NPK_I32, NPK_I32, NPK_F32, NPK_F32, NPK_F32, NPK_I32};
    const int nd_[8] = {3, 3, 2, 2, 2, 2, 1, 1};
    const int64_t *shp[8] = {sw, sr, sb, sb, sb, sb, sh, sz};
    for (int i = 0; i < 8 && !st; i++) {
        char name[64];
        snprintf(name, sizeof name, "layer_%d.%s", g->id, suffix[i]);
        st = add_tensor(out, name, dt[i], nd_[i], shp[i], data[i], err);
    }
    npk_mgk_gru_tensors_free(&t);
    return st;
}

npk_status npk_mgk_extract(const npk_mgk_model *m, npk_tensor_set *out, npk_error *err)
{
    npk_set_init(out);
    npk_status st = NPK_OK;
    for (size_t i = 0; i < m->nconvs && !st; i++) {
        const npk_mgk_conv *c = &m->convs[i];
        if (!c->usable) continue;
        char name[64];
        snprintf(name, sizeof name, "layer_%d.weight", c->id);
        int64_t shape[4] = {c->out_channels, c->in_channels, c->kh, c->kw};
        npk_tensor t;
        if ((st = npk_tensor_alloc(&t, name, NPK_I8, 4, shape, err))) break;
        if ((st = npk_mgk_decode_layer(m, c, 0, t.data, err)) || (st = npk_set_add(out, &t, err))) {
            npk_tensor_free(&t);
            break;
        }
        if (c->requant_ok) st = extract_requant(m, c, out, err);
    }
    for (size_t i = 0; i < m->ngrus && !st; i++)
        if (m->grus[i].usable) st = extract_gru(m, &m->grus[i], out, err);
    if (st) npk_set_free(out);
    return st;
}

/* "layer_<id>.<suffix>" -> id, with *suffix pointing after the dot; -1 for
 * any other name. */
static int layer_name_id(const char *name, const char **suffix)
{
    if (!name || strncmp(name, "layer_", 6) != 0) return -1;
    const char *p = name + 6;
    long id = 0;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9' && id < 100000000) id = id * 10 + (*p++ - '0');
    if (*p != '.') return -1;
    *suffix = p + 1;
    return (int)id;
}

static bool is_integer_dtype(npk_dtype dt)
{
    return dt == NPK_I8 || dt == NPK_U8 || dt == NPK_I16 || dt == NPK_U16 || dt == NPK_I32 ||
           dt == NPK_U32 || dt == NPK_I64 || dt == NPK_U64;
}

/* Element i of an integer tensor (host order) as a signed value, saturated. */
static int64_t int_at(const npk_tensor *t, size_t i)
{
    const uint8_t *p = (const uint8_t *)t->data + i * npk_dtype_size(t->dtype);
    switch (t->dtype) {
    case NPK_I8: return *(const int8_t *)p;
    case NPK_U8: return *p;
    case NPK_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case NPK_U16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case NPK_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case NPK_U32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case NPK_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    }
}

/* Errors about the model (a layer it cannot re-encode) are input 0 with the
 * layer record's offset; errors about the weights file are input 1. */
/* An integer tensor of exactly `count` values in [-128, 127] as int8. */
static npk_status to_int8(const npk_tensor *t, const int64_t *shape, int ndim, int layer,
                          int8_t **out, npk_error *err)
{
    *out = NULL;
    if (t->ndim != ndim || memcmp(t->shape, shape, (size_t)ndim * sizeof *shape) != 0) {
        if (t->src_shape_offset)
            npk_fail_at(err, NPK_E_ARG, t->src_shape_offset, "%s: shape does not match layer %d's",
                        t->name, layer);
        else
            npk_fail(err, NPK_E_ARG, "%s: shape does not match layer %d's", t->name, layer);
        return npk_error_about(err, 1, NPK_E_ARG);
    }
    if (!is_integer_dtype(t->dtype)) {
        if (t->src_shape_offset)
            npk_fail_at(err, NPK_E_ARG, t->src_shape_offset,
                        "%s: dtype %s; quantised weights must be integers", t->name,
                        npk_dtype_name(t->dtype));
        else
            npk_fail(err, NPK_E_ARG, "%s: dtype %s; quantised weights must be integers", t->name,
                     npk_dtype_name(t->dtype));
        return npk_error_about(err, 1, NPK_E_ARG);
    }
    size_t n = npk_tensor_count(t);
    int8_t *v = malloc(n ? n : 1);
    if (!v) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int64_t x = int_at(t, i);
        if (x < -128 || x > 127) {
            free(v);
            uint64_t off = npk_tensor_src_offset(t, i);
            if (off)
                npk_fail_at(err, NPK_E_ARG, off,
                            "%s: value %lld at index %zu is outside the 8-bit range of layer %d",
                            t->name, (long long)x, i, layer);
            else
                npk_fail(err, NPK_E_ARG,
                         "%s: value %lld at index %zu is outside the 8-bit range of layer %d",
                         t->name, (long long)x, i, layer);
            return npk_error_about(err, 1, NPK_E_ARG);
        }
        v[i] = (int8_t)x;
    }
    *out = v;
    return NPK_OK;
}

static npk_status replace_gru(const npk_mgk_model *m, const npk_mgk_gru *g, const npk_tensor *tw,
                              const npk_tensor *tr, uint8_t *file, npk_error *err)
{
    const npk_tensor *named = tw ? tw : tr;
    if (!g->usable) { /* about the model: the GRU's record */
        const npk_mgk_record *rec = &m->records[g->record];
        return npk_fail_at(err, NPK_E_UNSUPPORTED, rec->offset,
                           "GRU layer %d (record at 0x%llx) cannot be re-encoded for %s: %s", g->id,
                           (unsigned long long)rec->offset, named->name, g->problem);
    }
    npk_mgk_gru_tensors cur;
    npk_status st = npk_mgk_gru_read(m, g, &cur, err);
    if (st) return st;
    int64_t sw[3] = {g->ndir, 3 * (int64_t)g->hidden, g->input};
    int64_t sr[3] = {g->ndir, 3 * (int64_t)g->hidden, g->hidden};
    int8_t *w = NULL, *r = NULL;
    if (tw) st = to_int8(tw, sw, 3, g->id, &w, err);
    if (!st && tr) st = to_int8(tr, sr, 3, g->id, &r, err);
    if (!st) st = mgk_gru_encode(m, g, w ? w : cur.w, r ? r : cur.r, file, err);
    free(w);
    free(r);
    npk_mgk_gru_tensors_free(&cur);
    return st;
}

static npk_status replace_layer(const npk_mgk_model *m, const npk_mgk_conv *c, const npk_tensor *t,
                                uint8_t *file, npk_error *err)
{
    const npk_mgk_record *rec = npk_mgk_conv_record(m, c);
    if (!c->usable)
        return npk_fail_at(err, NPK_E_UNSUPPORTED, rec->offset,
                           "layer %d (record at 0x%llx) cannot be re-encoded for %s: %s", c->id,
                           (unsigned long long)rec->offset, t->name, c->problem);
    int64_t want[4] = {c->out_channels, c->in_channels, c->kh, c->kw};
    char what[NPK_ERROR_MSG_MAX];
    if (t->ndim != 4 || memcmp(t->shape, want, sizeof want) != 0)
        snprintf(what, sizeof what, "%s: shape does not match the layer's [%lld, %lld, %lld, %lld]",
                 t->name, (long long)want[0], (long long)want[1], (long long)want[2],
                 (long long)want[3]);
    else if (!is_integer_dtype(t->dtype))
        snprintf(what, sizeof what, "%s: dtype %s; quantised weights must be integers", t->name,
                 npk_dtype_name(t->dtype));
    else
        what[0] = 0;
    if (what[0]) { /* about the weights file: where the tensor's header entry is */
        if (t->src_shape_offset)
            npk_fail_at(err, NPK_E_ARG, t->src_shape_offset, "%s", what);
        else
            npk_fail(err, NPK_E_ARG, "%s", what);
        return npk_error_about(err, 1, NPK_E_ARG);
    }
    size_t n = npk_tensor_count(t);
    int8_t *v = malloc(n ? n : 1);
    if (!v) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    int64_t lo = -(1 << (c->bits - 1)), hi = (1 << (c->bits - 1)) - 1;
    size_t taps = (size_t)c->kh * (size_t)c->kw, cin = (size_t)c->in_channels;
    for (size_t i = 0; i < n; i++) {
        int64_t x = int_at(t, i);
        if (x < lo || x > hi) {
            free(v);
            size_t tap = i % taps, ci = (i / taps) % cin, co = i / taps / cin;
            char what[NPK_ERROR_MSG_MAX + 64];
            snprintf(what, sizeof what,
                     "%s: value %lld at [%zu, %zu, %zu, %zu] is outside the "
                     "%d-bit range [%lld, %lld] of layer %d",
                     t->name, (long long)x, co, ci, tap / (size_t)c->kw, tap % (size_t)c->kw,
                     c->bits, (long long)lo, (long long)hi, c->id);
            uint64_t off = npk_tensor_src_offset(t, i);
            if (off)
                npk_fail_at(err, NPK_E_ARG, off, "%s", what);
            else
                npk_fail(err, NPK_E_ARG, "%s", what);
            return npk_error_about(err, 1, NPK_E_ARG);
        }
        v[i] = (int8_t)x;
    }
    npk_mgk_wshape s;
    npk_error e2 = {0};
    npk_status st = npk_mgk_layer_wshape(c, 0, &s, &e2);
    if (!st)
        st = npk_mgk_nmhw_encode(&s, v, file + m->region_offset + c->weight_offset,
                                 (size_t)c->weight_bytes, &e2);
    free(v);
    if (st) /* the layer as the model describes it */
        return npk_fail_at(err, st, rec->offset, "layer %d (record at 0x%llx): %s", c->id,
                           (unsigned long long)rec->offset, e2.msg);
    return NPK_OK;
}

npk_status npk_mgk_replace(const npk_mgk_model *m, const npk_tensor_set *w, uint8_t **out,
                           size_t *out_len, npk_mgk_replace_stats *stats, npk_error *err)
{
    npk_mgk_replace_stats local = {0, 0, 0};
    uint8_t *file = malloc(m->size ? m->size : 1);
    if (!file) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    memcpy(file, m->data, m->size);
    npk_status st = NPK_OK;
    for (size_t i = 0; i < w->count && !st; i++) {
        const npk_tensor *t = &w->items[i];
        const char *suffix = NULL;
        int id = layer_name_id(t->name, &suffix);
        if (id >= 0 && !strcmp(suffix, "weight")) {
            const npk_mgk_conv *c = npk_mgk_find_layer(m, id);
            if (!c) {
                npk_fail(err, NPK_E_NOTFOUND, "%s: the model has no convolution layer %d", t->name,
                         id);
                st = npk_error_about(err, 1, NPK_E_NOTFOUND);
                break;
            }
            if (!(st = replace_layer(m, c, t, file, err))) local.layers++;
        } else if (id >= 0 && (!strcmp(suffix, "W") || !strcmp(suffix, "R"))) {
            const npk_mgk_gru *g = npk_mgk_find_gru(m, id);
            if (!g) {
                npk_fail(err, NPK_E_NOTFOUND, "%s: the model has no GRU layer %d", t->name, id);
                st = npk_error_about(err, 1, NPK_E_NOTFOUND);
                break;
            }
            if (suffix[0] == 'R') {
                char wn[64];
                snprintf(wn, sizeof wn, "layer_%d.W", id);
                if (npk_set_find(w, wn)) continue; /* done with its W */
            }
            char rn[64];
            snprintf(rn, sizeof rn, "layer_%d.R", id);
            const npk_tensor *tr = suffix[0] == 'W' ? npk_set_find(w, rn) : t;
            const npk_tensor *tw = suffix[0] == 'W' ? t : NULL;
            if (!(st = replace_gru(m, g, tw, tr, file, err))) local.layers++;
        } else {
            local.ignored++;
        }
    }
    if (st) {
        free(file);
        return st;
    }
    for (size_t i = 0; i < m->size; i++) local.bytes_changed += file[i] != m->data[i];
    if (stats) *stats = local;
    *out = file;
    *out_len = m->size;
    return NPK_OK;
}
