/* Binding object: an MGK model; layers as flat records, extract, replace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind_internal.h"
#include "npukit/mgk.h"

struct npk_bind_mgk {
    bind_src src;
    npk_mgk_model m;
    bool parsed;
};

void npk_bind_mgk_free(npk_bind_mgk *b)
{
    if (!b) return;
    if (b->parsed) npk_mgk_free(&b->m);
    bind_src_close(&b->src);
    free(b);
}

static npk_status finish_open(npk_bind_mgk *b, npk_bind_mgk **out, npk_error *err)
{
    npk_status st = npk_mgk_parse(b->src.data, b->src.size, &b->m, err);
    if (st) {
        npk_bind_mgk_free(b);
        return st;
    }
    b->parsed = true;
    *out = b;
    return NPK_OK;
}

npk_status npk_bind_mgk_open(const char *path, const uint8_t *buf, size_t len, npk_bind_mgk **out,
                             npk_error *err)
{
    *out = NULL;
    npk_bind_mgk *b = calloc(1, sizeof *b);
    if (!b) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = bind_src_open(&b->src, path, buf, len, err);
    if (st) {
        npk_bind_mgk_free(b);
        return st;
    }
    return finish_open(b, out, err);
}

const uint8_t *npk_bind_mgk_bytes(const npk_bind_mgk *b, size_t *len)
{
    *len = b->src.size;
    return b->src.data;
}

size_t npk_bind_mgk_nlayers(const npk_bind_mgk *b)
{
    return b->m.nconvs + b->m.ngrus;
}

static void copy_ints(int32_t *dst, uint32_t *n, const int32_t *src, uint32_t count)
{
    *n = count < 8 ? count : 8;
    memcpy(dst, src, *n * sizeof *dst);
}

/* The requantisation table's form, as `mgk info` names it. */
static void requant_form(const npk_mgk_model *m, const npk_mgk_conv *c, char *out, size_t n)
{
    npk_mgk_requant rq;
    npk_error err = {0};
    if (!c->requant_ok) {
        snprintf(out, n, "-");
    } else if (npk_mgk_requant_read(m, c, &rq, &err)) {
        snprintf(out, n, "?");
    } else {
        snprintf(out, n, "%s", npk_mgk_rq_form_name(rq.form));
        npk_mgk_requant_free(&rq);
    }
}

npk_status npk_bind_mgk_layer_get(const npk_bind_mgk *b, size_t i, npk_bind_mgk_layer *l,
                                  npk_error *err)
{
    const npk_mgk_model *m = &b->m;
    memset(l, 0, sizeof *l);
    if (i >= m->nconvs + m->ngrus)
        return npk_fail(err, NPK_E_NOTFOUND, "layer index %zu: the model has %zu layers", i,
                        m->nconvs + m->ngrus);
    if (i < m->nconvs) {
        const npk_mgk_conv *c = &m->convs[i];
        const npk_mgk_record *r = npk_mgk_conv_record(m, c);
        l->id = c->id;
        l->usable = c->usable;
        l->requant_ok = c->requant_ok;
        l->name = r->name.s;
        l->name_len = r->name.len;
        l->kernel = r->kernel.s;
        l->kernel_len = r->kernel.len;
        snprintf(l->problem, sizeof l->problem, "%s", c->problem);
        requant_form(m, c, l->requant_form, sizeof l->requant_form);
        l->bits = c->bits;
        l->in_channels = c->cin;
        l->out_channels = c->cout;
        l->kernel_h = c->kh;
        l->kernel_w = c->kw;
        memcpy(l->weight_shape, c->weight_shape, sizeof l->weight_shape);
        copy_ints(l->stride, &l->nstride, c->stride, c->nstride);
        copy_ints(l->dilation, &l->ndilation, c->dilation, c->ndilation);
        copy_ints(l->pads, &l->npads, c->pads, c->npads);
        l->act = c->act;
        l->record_offset = r->offset;
        return NPK_OK;
    }
    const npk_mgk_gru *g = &m->grus[i - m->nconvs];
    const npk_mgk_record *r = &m->records[g->record];
    l->id = g->id;
    l->gru = true;
    l->usable = g->usable;
    l->name = r->name.s;
    l->name_len = r->name.len;
    l->kernel = r->kernel.s;
    l->kernel_len = r->kernel.len;
    snprintf(l->problem, sizeof l->problem, "%s", g->problem);
    l->bits = g->bits;
    l->record_offset = r->offset;
    if (g->usable) {
        const int32_t ws[7] = {g->n_ofp, g->m_ifp, 1, 1, g->planes, 32, 32};
        memcpy(l->weight_shape, ws, sizeof ws);
        l->directions = g->ndir;
        l->batch = g->batch;
        l->seq = g->seq;
        l->input_size = g->input;
        l->hidden_size = g->hidden;
    }
    return NPK_OK;
}

npk_status npk_bind_mgk_extract(const npk_bind_mgk *b, npk_tensor_set **out, npk_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = npk_mgk_extract(&b->m, *out, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

npk_status npk_bind_mgk_replace(const npk_bind_mgk *b, const npk_tensor *ts, size_t n,
                                npk_bind_mgk **out, uint64_t stats[3], npk_error *err)
{
    *out = NULL;
    /* A set that borrows the caller's tensors: never freed here. */
    const npk_tensor_set w = {(npk_tensor *)ts, n, n};
    uint8_t *buf = NULL;
    size_t len = 0;
    npk_mgk_replace_stats rs;
    npk_status st = npk_mgk_replace(&b->m, &w, &buf, &len, &rs, err);
    if (st) return st;
    stats[0] = rs.layers;
    stats[1] = rs.bytes_changed;
    stats[2] = rs.ignored;
    npk_bind_mgk *nb = calloc(1, sizeof *nb);
    if (!nb) {
        free(buf);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    bind_src_adopt(&nb->src, buf, len);
    return finish_open(nb, out, err);
}
