/* The network graph: tensors by id, records in topological order, shapes
 * checked to chain, quantisation per tensor (docs/mgk.md "Graph"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/mgk_graph.h"
#include "mgk_internal.h"

typedef struct idref {
    int32_t id;
    int tensor;
} idref;

typedef struct gb {
    const npk_mgk_model *m;
    npk_mgk_graph *g;
    npk_error *err;
    idref *ids; /* sorted by id */
    size_t nids;
    int *parent; /* union-find over tensors: same quantisation */
    /* Per class: zero point and scale. */
    bool *has_zp;
    int32_t *zp;
    double *scale;
    npk_mgk_qsrc *src;
} gb;

static void gwarn(npk_mgk_graph *g, uint64_t off, const char *fmt, ...) NPK_PRINTF(3, 4);
static void gwarn(npk_mgk_graph *g, uint64_t off, const char *fmt, ...)
{
    if (g->nwarnings == NPK_MGK_MAX_WARNINGS) return;
    npk_mgk_warning *w = &g->warnings[g->nwarnings++];
    w->offset = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->msg, sizeof w->msg, fmt, ap);
    va_end(ap);
}

static npk_status rec_fail(gb *b, size_t i, const char *fmt, ...) NPK_PRINTF(3, 4);
static npk_status rec_fail(gb *b, size_t i, const char *fmt, ...)
{
    const npk_mgk_record *r = &b->m->records[i];
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char kind[64];
    return npk_fail_at(b->err, NPK_E_FORMAT, r->offset, "record #%zu (%s): %s", i,
                       mgk_printable(r->kind, kind, sizeof kind), msg);
}

static int cmp_idref(const void *a, const void *b)
{
    const idref *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int find_id(const gb *b, int32_t id)
{
    size_t lo = 0, hi = b->nids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->ids[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nids && b->ids[lo].id == id ? b->ids[lo].tensor : -1;
}

static npk_mgk_gtensor *add_tensor(gb *b, size_t *cap)
{
    npk_mgk_graph *g = b->g;
    if (g->ntensors == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        npk_mgk_gtensor *t = realloc(g->tensors, nc * sizeof *t);
        if (!t) return NULL;
        g->tensors = t;
        *cap = nc;
    }
    npk_mgk_gtensor *t = &g->tensors[g->ntensors++];
    memset(t, 0, sizeof *t);
    t->producer = -1;
    t->scale = 1.0;
    return t;
}

/* Tensors: every output id of every record, then every consumed id nobody
 * produces (graph inputs). */
static npk_status collect_tensors(gb *b)
{
    const npk_mgk_model *m = b->m;
    npk_mgk_graph *g = b->g;
    size_t cap = 0, nout = 0;
    for (size_t i = 0; i < m->nrecords; i++) nout += m->records[i].nout;
    b->ids = malloc((nout + 1) * sizeof *b->ids);
    if (!b->ids) return npk_fail(b->err, NPK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < m->nrecords; i++) {
        const npk_mgk_record *r = &m->records[i];
        if (r->nout > NPK_MGK_MAX_TB) return rec_fail(b, i, "%u outputs", r->nout);
        for (uint32_t k = 0; k < r->nout; k++) {
            npk_mgk_gtensor *t = add_tensor(b, &cap);
            if (!t) return npk_fail(b->err, NPK_E_NOMEM, "out of memory");
            /* One id is stored; output k has id out_id + k (docs/mgk.md). */
            t->id = (int32_t)((uint32_t)r->out_id + k);
            t->producer = (int)i;
            t->out_index = (int)k;
            t->name = k == 0 ? r->name : (npk_mgk_str){NULL, 0};
            t->format = r->out_formats[k];
            t->type = r->out_types[k];
            if (r->p.tb.present && k < r->p.tb.nshapes) {
                t->rank = r->p.tb.rank[k];
                memcpy(t->shape, r->p.tb.shape[k], sizeof t->shape);
            }
            b->ids[b->nids++] = (idref){t->id, (int)(g->ntensors - 1)};
        }
    }
    qsort(b->ids, b->nids, sizeof *b->ids, cmp_idref);
    for (size_t k = 1; k < b->nids; k++)
        if (b->ids[k].id == b->ids[k - 1].id) {
            size_t a = (size_t)g->tensors[b->ids[k - 1].tensor].producer;
            size_t c = (size_t)g->tensors[b->ids[k].tensor].producer;
            return rec_fail(b, c > a ? c : a, "output tensor id %d is also produced by record #%zu",
                            b->ids[k].id, c > a ? a : c);
        }
    /* Graph inputs. */
    size_t produced = b->nids;
    for (size_t i = 0; i < m->nrecords; i++) {
        const npk_mgk_record *r = &m->records[i];
        for (uint32_t k = 0; k < r->ninputs; k++) {
            int32_t id = r->inputs[k].id;
            if (find_id(b, id) >= 0) continue;
            bool seen = false;
            for (size_t j = produced; j < g->ntensors && !seen; j++) seen = g->tensors[j].id == id;
            if (seen) continue;
            npk_mgk_gtensor *t = add_tensor(b, &cap);
            if (!t) return npk_fail(b->err, NPK_E_NOMEM, "out of memory");
            t->id = id;
            t->name = r->inputs[k].name;
            t->format = r->inputs[k].format;
            t->type = r->inputs[k].type;
            t->graph_input = true;
        }
    }
    idref *ids = realloc(b->ids, (g->ntensors + 1) * sizeof *ids);
    if (!ids) return npk_fail(b->err, NPK_E_NOMEM, "out of memory");
    b->ids = ids;
    for (size_t j = produced; j < g->ntensors; j++)
        b->ids[b->nids++] = (idref){g->tensors[j].id, (int)j};
    qsort(b->ids, b->nids, sizeof *b->ids, cmp_idref);
    for (size_t j = 0; j < g->ntensors; j++)
        g->tensors[j].is_float = npk_mgk_str_eq(g->tensors[j].type, "FP32");
    return NPK_OK;
}

/* Records in topological order (Kahn), stable in record order. */
static npk_status order_nodes(gb *b)
{
    const npk_mgk_model *m = b->m;
    npk_mgk_graph *g = b->g;
    size_t n = m->nrecords, nt = g->ntensors, nedges = 0;
    for (size_t i = 0; i < n; i++) {
        if (m->records[i].ninputs > NPK_MGK_MAX_INPUTS)
            return rec_fail(b, i, "%u inputs, at most %d supported", m->records[i].ninputs,
                            NPK_MGK_MAX_INPUTS);
        nedges += m->records[i].ninputs;
    }
    g->nodes = calloc(n ? n : 1, sizeof *g->nodes);
    uint32_t *indeg = calloc(n ? n : 1, sizeof *indeg);
    size_t *queue = calloc(n ? n : 1, sizeof *queue);
    size_t *first = calloc(nt + 1, sizeof *first); /* consumers of tensor t: cons[first[t]..] */
    size_t *cons = calloc(nedges ? nedges : 1, sizeof *cons);
    npk_status st = NPK_OK;
    if (!g->nodes || !indeg || !queue || !first || !cons) {
        st = npk_fail(b->err, NPK_E_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const npk_mgk_record *r = &m->records[i];
        for (uint32_t k = 0; k < r->ninputs; k++) {
            int t = find_id(b, r->inputs[k].id);
            if (t < 0) continue;
            g->tensors[t].nconsumers++;
            first[t + 1]++;
            if (g->tensors[t].producer >= 0) indeg[i]++;
        }
    }
    for (size_t t = 0; t < nt; t++) first[t + 1] += first[t];
    for (size_t i = 0; i < n; i++) {
        const npk_mgk_record *r = &m->records[i];
        for (uint32_t k = 0; k < r->ninputs; k++) {
            int t = find_id(b, r->inputs[k].id);
            if (t >= 0) cons[first[t] + --g->tensors[t].nconsumers] = i;
        }
    }
    for (size_t i = 0; i < n; i++) /* restore the counts used as cursors above */
        for (uint32_t k = 0; k < m->records[i].ninputs; k++) {
            int t = find_id(b, m->records[i].inputs[k].id);
            if (t >= 0) g->tensors[t].nconsumers++;
        }
    size_t qh = 0, qt = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i]) queue[qt++] = i;
    while (qh < qt) {
        size_t i = queue[qh++];
        const npk_mgk_record *r = &m->records[i];
        npk_mgk_gnode *nd = &g->nodes[g->nnodes++];
        nd->record = i;
        nd->kind = r->p.kind;
        nd->nin = r->ninputs;
        nd->nout = r->nout;
        for (uint32_t k = 0; k < NPK_MGK_MAX_INPUTS; k++) nd->in[k] = -1;
        for (uint32_t k = 0; k < NPK_MGK_MAX_TB; k++) nd->out[k] = -1;
        for (uint32_t k = 0; k < r->ninputs; k++) nd->in[k] = find_id(b, r->inputs[k].id);
        for (uint32_t k = 0; k < r->nout; k++) {
            int t = find_id(b, (int32_t)((uint32_t)r->out_id + k));
            nd->out[k] = t;
            for (size_t e = t >= 0 ? first[t] : 0; t >= 0 && e < first[t + 1]; e++)
                if (--indeg[cons[e]] == 0) queue[qt++] = cons[e];
        }
    }
    if (g->nnodes < n) {
        size_t bad = 0;
        while (bad < n && !indeg[bad]) bad++;
        st = rec_fail(b, bad, "its inputs depend on its own output (a cycle of tensor ids)");
    }
done:
    free(indeg);
    free(queue);
    free(first);
    free(cons);
    return st;
}

/* ---- shapes ---- */

static int64_t prod(const int32_t *s, uint32_t n)
{
    int64_t p = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (s[i] < 0 || (s[i] && p > INT64_MAX / 4096 / s[i])) return -1;
        p *= s[i];
    }
    return p;
}

static bool is_ndhwc32(const npk_mgk_gtensor *t)
{
    return t->rank == 5 && t->shape[4] == 32;
}

static void set_logical(npk_mgk_gtensor *t, const int32_t *s, uint32_t n)
{
    t->lrank = n;
    memcpy(t->lshape, s, n * sizeof *s);
}

/* NDHWC32 [N, D, H, W, 32] with C real channels as logical [N, H, W, C]. */
static bool nd_logical(npk_mgk_gtensor *t, int32_t c)
{
    if (!is_ndhwc32(t) || c < 1 || c > 32 * t->shape[1] || c <= 32 * (t->shape[1] - 1))
        return false;
    int32_t l[4] = {t->shape[0], t->shape[2], t->shape[3], c};
    set_logical(t, l, 4);
    return true;
}

static npk_mgk_gtensor *tin(gb *b, const npk_mgk_gnode *nd, uint32_t k)
{
    return nd->in[k] >= 0 ? &b->g->tensors[nd->in[k]] : NULL;
}
static npk_mgk_gtensor *tout(gb *b, const npk_mgk_gnode *nd, uint32_t k)
{
    return nd->out[k] >= 0 ? &b->g->tensors[nd->out[k]] : NULL;
}

/* Logical shape of a graph input, from what its consumer implies. */
static void input_shape(gb *b, const npk_mgk_gnode *nd, uint32_t k)
{
    const npk_mgk_record *r = &b->m->records[nd->record];
    npk_mgk_gtensor *x = tin(b, nd, k), *y = tout(b, nd, 0);
    if (!x || !x->graph_input || x->lrank || !y || !y->rank) return;
    switch (nd->kind) {
    case NPK_MGK_K_FORMAT_CONVERT:
        if (r->p.fc_direction == 0 && is_ndhwc32(y)) {
            int32_t s[4] = {y->shape[0], y->shape[2], y->shape[3], r->p.fc_channels};
            x->rank = 4;
            memcpy(x->shape, s, sizeof s);
            set_logical(x, s, 4);
        }
        break;
    case NPK_MGK_K_NORMALIZE:
        x->rank = y->rank;
        memcpy(x->shape, y->shape, sizeof x->shape);
        set_logical(x, y->shape, y->rank);
        break;
    case NPK_MGK_K_GRU:
        if (k == 1 && r->nout > 1 && tout(b, nd, 1) && tout(b, nd, 1)->rank) {
            const npk_mgk_gtensor *h = tout(b, nd, 1);
            x->rank = h->rank;
            memcpy(x->shape, h->shape, sizeof x->shape);
            set_logical(x, h->shape, h->rank);
        }
        break;
    case NPK_MGK_K_CONV: {
        /* The smallest input that gives the output size (exact at stride 1). */
        if (r->conv < 0 || nd->nin != 1 || !is_ndhwc32(y)) break;
        const npk_mgk_conv *c = &b->m->convs[r->conv];
        if (c->npads != 4 || c->nkernel != 2 || c->nstride != 2) break;
        int32_t h = (y->shape[2] - 1) * c->stride[1] + c->kernel[1] - c->pads[0] - c->pads[1];
        int32_t w = (y->shape[3] - 1) * c->stride[0] + c->kernel[0] - c->pads[2] - c->pads[3];
        if (h < 1 || w < 1) break;
        int32_t s[5] = {y->shape[0], (c->cin + 31) / 32, h, w, 32};
        x->rank = 5;
        memcpy(x->shape, s, sizeof s);
        nd_logical(x, c->cin);
        break;
    }
    default: break;
    }
}

/* Derive a permutation of `in` giving `out`, keeping the relative order of
 * equal sizes; false if none. */
static bool find_perm(const int32_t *in, const int32_t *out, uint32_t n, int32_t *perm)
{
    bool used[NPK_MGK_MAX_RANK] = {false};
    for (uint32_t i = 0; i < n; i++) {
        int pick = -1;
        for (uint32_t j = 0; j < n && pick < 0; j++)
            if (!used[j] && in[j] == out[i]) pick = (int)j;
        if (pick < 0) return false;
        used[pick] = true;
        perm[i] = pick;
    }
    return true;
}

static npk_status check_node_shapes(gb *b, npk_mgk_gnode *nd)
{
    const npk_mgk_model *m = b->m;
    const npk_mgk_record *r = &m->records[nd->record];
    size_t ri = nd->record;
    for (uint32_t k = 0; k < nd->nin; k++) input_shape(b, nd, k);
    for (uint32_t k = 0; k < nd->nin; k++)
        if (!tin(b, nd, k) || !tin(b, nd, k)->lrank) return NPK_OK; /* unknown: nothing to check */
    npk_mgk_gtensor *x = tin(b, nd, 0), *y = tout(b, nd, 0);
    if (!x || !y || !y->rank || !r->p.decoded) return NPK_OK;
    int64_t nx = prod(x->lshape, x->lrank), ny = prod(y->shape, y->rank);
    switch (nd->kind) {
    case NPK_MGK_K_FORMAT_CONVERT: {
        int32_t c = x->lshape[x->lrank - 1];
        if (r->p.fc_direction == 0) {
            if (!nd_logical(y, c) || prod(y->lshape, 4) != nx)
                return rec_fail(b, ri,
                                "NHWC input of %lld elements (C %d) does not fit output "
                                "[%d, %d, %d, %d, %d]",
                                (long long)nx, c, y->shape[0], y->shape[1], y->shape[2],
                                y->shape[3], y->shape[4]);
        } else {
            if (ny != nx || y->shape[y->rank - 1] != c)
                return rec_fail(b, ri,
                                "NDHWC32 input of %lld elements (C %d) does not fit the "
                                "NHWC output of %lld",
                                (long long)nx, c, (long long)ny);
            set_logical(y, y->shape, y->rank);
        }
        break;
    }
    case NPK_MGK_K_RESHAPE:
    case NPK_MGK_K_PERMUTE:
        if (ny != nx || is_ndhwc32(y))
            return rec_fail(b, ri, "%lld input elements, %lld output elements", (long long)nx,
                            (long long)ny);
        set_logical(y, y->shape, y->rank);
        if (nd->kind == NPK_MGK_K_PERMUTE) {
            int32_t perm[NPK_MGK_MAX_RANK];
            if (x->lrank != y->rank || !find_perm(x->lshape, y->shape, y->rank, perm))
                return rec_fail(b, ri, "output shape is not a permutation of the input's");
        }
        break;
    case NPK_MGK_K_CONV: {
        if (r->conv < 0) break;
        const npk_mgk_conv *c = &m->convs[r->conv];
        int64_t cin = 0;
        for (uint32_t k = 0; k < nd->nin; k++) {
            const npk_mgk_gtensor *t = tin(b, nd, k);
            if (t->lrank != 4 || t->lshape[1] != x->lshape[1] || t->lshape[2] != x->lshape[2])
                return rec_fail(b, ri, "input %u is not [N, H, W, C] of the first input's size", k);
            cin += t->lshape[3];
        }
        if (c->npads != 4 || c->nkernel != 2 || c->nstride != 2 || c->stride[0] < 1 ||
            c->stride[1] < 1)
            return rec_fail(b, ri, "pads/kernel/stride vectors of %u/%u/%u items", c->npads,
                            c->nkernel, c->nstride);
        if (cin > c->cin)
            return rec_fail(b, ri, "inputs bring %lld channels, the layer takes %d", (long long)cin,
                            c->cin);
        int64_t h =
            ((int64_t)x->lshape[1] + c->pads[0] + c->pads[1] - c->kernel[1]) / c->stride[1] + 1;
        int64_t w =
            ((int64_t)x->lshape[2] + c->pads[2] + c->pads[3] - c->kernel[0]) / c->stride[0] + 1;
        bool fp = y->is_float;
        if (fp ? (y->rank != 4 || y->shape[1] != h || y->shape[2] != w || y->shape[3] != c->cout)
               : (!is_ndhwc32(y) || y->shape[2] != h || y->shape[3] != w ||
                  !nd_logical(y, c->cout)))
            return rec_fail(b, ri,
                            "input %dx%d with kernel %dx%d, stride %d,%d and pads gives "
                            "%lldx%lld, not the stored output",
                            x->lshape[1], x->lshape[2], c->kernel[1], c->kernel[0], c->stride[1],
                            c->stride[0], (long long)h, (long long)w);
        if (fp) set_logical(y, y->shape, y->rank);
        break;
    }
    case NPK_MGK_K_CONCAT: {
        int64_t c = 0;
        for (uint32_t k = 0; k < nd->nin; k++) {
            const npk_mgk_gtensor *t = tin(b, nd, k);
            if (t->lrank != 4 || t->lshape[1] != x->lshape[1] || t->lshape[2] != x->lshape[2])
                return rec_fail(b, ri, "input %u does not match the first input's N, H, W", k);
            c += t->lshape[3];
        }
        if (!is_ndhwc32(y) || y->shape[2] != x->lshape[1] || y->shape[3] != x->lshape[2] ||
            c > INT32_MAX || !nd_logical(y, (int32_t)c))
            return rec_fail(b, ri, "%lld input channels do not fit the stored output",
                            (long long)c);
        break;
    }
    case NPK_MGK_K_ADD:
        for (uint32_t k = 1; k < nd->nin; k++)
            if (tin(b, nd, k)->lrank != x->lrank ||
                memcmp(tin(b, nd, k)->lshape, x->lshape, x->lrank * sizeof(int32_t)))
                return rec_fail(b, ri, "input %u has another shape than input 0", k);
        if (x->lrank != 4 || !is_ndhwc32(y) || y->shape[2] != x->lshape[1] ||
            y->shape[3] != x->lshape[2] || !nd_logical(y, x->lshape[3]))
            return rec_fail(b, ri, "output shape differs from the inputs'");
        break;
    case NPK_MGK_K_UPSAMPLE: {
        if (r->p.up_nscales < 2 || x->lrank != 4) return rec_fail(b, ri, "needs 2 scale factors");
        double hw = (double)x->lshape[1] * r->p.up_scales[1],
               ww = (double)x->lshape[2] * r->p.up_scales[0];
        if (!is_ndhwc32(y) || (double)y->shape[2] != hw || (double)y->shape[3] != ww ||
            !nd_logical(y, x->lshape[3]))
            return rec_fail(b, ri, "input %dx%d scaled by (%g, %g) is not the stored output",
                            x->lshape[1], x->lshape[2], (double)r->p.up_scales[1],
                            (double)r->p.up_scales[0]);
        break;
    }
    case NPK_MGK_K_NORMALIZE: {
        int32_t c = x->lshape[x->lrank - 1];
        if (r->p.nz_bias_count < c || r->p.nz_scale_count < c)
            return rec_fail(b, ri, "tables of %d/%d channels for %d channels", r->p.nz_bias_count,
                            r->p.nz_scale_count, c);
        if (is_ndhwc32(y)) {
            if (!nd_logical(y, c) || prod(y->lshape, 4) != nx)
                return rec_fail(b, ri, "output shape differs from the input's");
        } else {
            if (ny != nx) return rec_fail(b, ri, "output shape differs from the input's");
            set_logical(y, y->shape, y->rank);
        }
        break;
    }
    case NPK_MGK_K_GRU: {
        const npk_mgk_gru *gr = r->gru >= 0 ? &m->grus[r->gru] : NULL;
        if (!gr || !gr->usable)
            return rec_fail(b, ri, "GRU data: %s", gr ? gr->problem : "not located");
        set_logical(y, y->shape, y->rank);
        for (uint32_t k = 1; k < nd->nout; k++)
            if (tout(b, nd, k))
                set_logical(tout(b, nd, k), tout(b, nd, k)->shape, tout(b, nd, k)->rank);
        if (nd->nin > 1) {
            const npk_mgk_gtensor *h = tin(b, nd, 1);
            if (prod(h->lshape, h->lrank) != (int64_t)gr->batch * gr->ndir * gr->hidden)
                return rec_fail(b, ri, "initial hidden state of %lld elements for [%d, %d, %d]",
                                (long long)prod(h->lshape, h->lrank), gr->ndir, gr->batch,
                                gr->hidden);
        }
        break;
    }
    default: set_logical(y, y->shape, y->rank); break;
    }
    return NPK_OK;
}

/* ---- quantisation ---- */

static int find_root(gb *b, int t)
{
    while (b->parent[t] != t) t = b->parent[t] = b->parent[b->parent[t]];
    return t;
}

static void unite(gb *b, int x, int y)
{
    if (x < 0 || y < 0) return;
    x = find_root(b, x);
    y = find_root(b, y);
    if (x != y) b->parent[y] = x;
}

static void set_zp(gb *b, int t, int32_t zp, size_t rec)
{
    if (t < 0 || b->g->tensors[t].is_float) return;
    int c = find_root(b, t);
    if (b->has_zp[c] && b->zp[c] != zp)
        gwarn(b->g, b->m->records[rec].offset,
              "record #%zu: zero point %d of tensor %d, elsewhere %d", rec, zp, b->g->tensors[t].id,
              b->zp[c]);
    if (!b->has_zp[c]) {
        b->has_zp[c] = true;
        b->zp[c] = zp;
    }
}

static bool set_scale(gb *b, int t, double s, npk_mgk_qsrc src, size_t rec)
{
    if (t < 0 || b->g->tensors[t].is_float || !(s > 0) || !isfinite(s)) return false;
    int c = find_root(b, t);
    if (b->src[c] != NPK_MGK_Q_NONE) {
        if (fabs(b->scale[c] - s) > 0.01 * b->scale[c])
            gwarn(b->g, b->m->records[rec].offset,
                  "record #%zu: scale %g of tensor %d, elsewhere %g", rec, s, b->g->tensors[t].id,
                  b->scale[c]);
        return false;
    }
    b->scale[c] = s;
    b->src[c] = src;
    return true;
}

static bool cls_scale(gb *b, int t, double *s)
{
    if (t < 0) return false;
    int c = find_root(b, t);
    *s = b->scale[c];
    return b->src[c] != NPK_MGK_Q_NONE;
}

static bool all_equal_f32(const npk_mgk_model *m, int64_t off, int32_t n, float *v)
{
    if (off < 0 || n < 1 || (uint64_t)off > m->region_size ||
        4u * (uint64_t)n > m->region_size - (uint64_t)off)
        return false;
    const uint8_t *p = m->data + m->region_offset + off;
    *v = npk_ldf32le(p);
    for (int32_t i = 1; i < n; i++)
        if (npk_ldf32le(p + 4 * i) != *v) return false;
    return true;
}

static void quantisation(gb *b)
{
    const npk_mgk_model *m = b->m;
    npk_mgk_graph *g = b->g;
    /* Layout-only records keep the quantisation of their input. */
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        if (nd->kind == NPK_MGK_K_FORMAT_CONVERT || nd->kind == NPK_MGK_K_RESHAPE ||
            nd->kind == NPK_MGK_K_PERMUTE || nd->kind == NPK_MGK_K_UPSAMPLE)
            if (nd->nin == 1 && nd->nout == 1) unite(b, nd->in[0], nd->out[0]);
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        const npk_mgk_record *r = &m->records[nd->record];
        const npk_mgk_params *p = &r->p;
        size_t ri = nd->record;
        if (!p->decoded) continue;
        switch (nd->kind) {
        case NPK_MGK_K_CONCAT:
            for (uint32_t k = 0; k < nd->nin && k < p->cat_ninputs; k++) {
                set_zp(b, nd->in[k], p->cat_zp[k], ri);
                set_scale(b, nd->in[k], (double)p->cat_scale[k], NPK_MGK_Q_FILE, ri);
            }
            set_zp(b, nd->out[0], (p->q >> 16) & 0xFFFF, ri);
            if (p->cat_inv_scale > 0)
                set_scale(b, nd->out[0], 1.0 / (double)p->cat_inv_scale, NPK_MGK_Q_FILE, ri);
            break;
        case NPK_MGK_K_CONV: {
            if (r->conv < 0) break;
            const npk_mgk_conv *c = &m->convs[r->conv];
            for (uint32_t k = 0; k < nd->nin; k++) set_zp(b, nd->in[k], c->zp_word & 0xFFFF, ri);
            set_zp(b, nd->out[0], (c->zp_word >> 16) & 0xFFFF, ri);
            break;
        }
        case NPK_MGK_K_NORMALIZE: {
            set_zp(b, nd->out[0], p->q, ri);
            float s;
            if (nd->nin == 1 && nd->in[0] >= 0 && b->g->tensors[nd->in[0]].is_float &&
                all_equal_f32(m, p->nz_scale_offset, p->nz_scale_count, &s) && s != 0)
                set_scale(b, nd->out[0], 1.0 / fabs((double)s), NPK_MGK_Q_FILE, ri);
            break;
        }
        case NPK_MGK_K_UPSAMPLE:
            if (nd->nin) set_zp(b, nd->in[0], p->q, ri);
            break;
        case NPK_MGK_K_GRU: {
            if (r->gru < 0 || !m->grus[r->gru].usable || nd->nin < 1) break;
            const npk_mgk_gru *gr = &m->grus[r->gru];
            set_zp(b, nd->in[0], gr->in_zp, ri);
            npk_mgk_gru_tensors t;
            npk_error e = {0};
            if (npk_mgk_gru_read(m, gr, &t, &e)) break;
            bool same = true;
            for (int j = 1; j < t.hidden; j++) same &= t.h_scale[j] == t.h_scale[0];
            for (uint32_t k = 0; k < nd->nout; k++) {
                set_zp(b, nd->out[k], gr->h_zp, ri);
                if (same) set_scale(b, nd->out[k], (double)t.h_scale[0], NPK_MGK_Q_FILE, ri);
            }
            if (nd->nin > 1) {
                set_zp(b, nd->in[1], gr->h_zp, ri);
                if (same) set_scale(b, nd->in[1], (double)t.h_scale[0], NPK_MGK_Q_FILE, ri);
            }
            npk_mgk_gru_tensors_free(&t);
            break;
        }
        default: break;
        }
    }
    /* Add: s_in[k] / s_out = 64 * w[k] / mult (docs/mgk.md); propagate to a
     * fixed point, then check the zero points against the same arithmetic. */
    for (size_t pass = 0; pass <= g->nnodes; pass++) {
        bool changed = false;
        for (size_t i = 0; i < g->nnodes; i++) {
            const npk_mgk_gnode *nd = &g->nodes[i];
            const npk_mgk_params *p = &m->records[nd->record].p;
            if (nd->kind != NPK_MGK_K_ADD || !p->decoded || p->add_mult <= 0 ||
                p->add_ninputs != nd->nin)
                continue;
            double sy, sk;
            for (uint32_t k = 0; k < nd->nin; k++) {
                double gain = 64.0 * p->add_w[k] / (double)p->add_mult;
                if (gain <= 0) continue;
                if (cls_scale(b, nd->out[0], &sy) && !cls_scale(b, nd->in[k], &sk))
                    changed |= set_scale(b, nd->in[k], sy * gain, NPK_MGK_Q_DERIVED, nd->record);
                else if (cls_scale(b, nd->in[k], &sk) && !cls_scale(b, nd->out[0], &sy))
                    changed |= set_scale(b, nd->out[0], sk / gain, NPK_MGK_Q_DERIVED, nd->record);
            }
        }
        if (!changed) break;
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        const npk_mgk_params *p = &m->records[nd->record].p;
        if (nd->kind != NPK_MGK_K_ADD || !p->decoded || p->add_mult <= 0 ||
            p->add_ninputs != nd->nin)
            continue;
        double acc = (double)p->add_bias;
        bool all = true;
        for (uint32_t k = 0; k < nd->nin && all; k++) {
            int c = nd->in[k] >= 0 ? find_root(b, nd->in[k]) : -1;
            all = c >= 0 && b->has_zp[c];
            if (all) acc += 64.0 * p->add_w[k] * b->zp[c];
        }
        if (!all) continue;
        int32_t zy = (int32_t)floor(acc / (double)p->add_mult) + 128;
        set_zp(b, nd->out[0], zy, nd->record);
    }
    for (size_t t = 0; t < g->ntensors; t++) {
        npk_mgk_gtensor *x = &g->tensors[t];
        int c = find_root(b, (int)t);
        if (x->is_float) continue;
        x->has_zp = b->has_zp[c];
        x->zp = b->zp[c];
        x->scale_src = b->src[c] != NPK_MGK_Q_NONE ? b->src[c] : NPK_MGK_Q_CODE;
        x->scale = b->src[c] != NPK_MGK_Q_NONE ? b->scale[c] : 1.0;
    }
}

/* ---- what each record computes ---- */

/* Two-slope tables: row 2 = alpha * row 1 with one alpha per layer. */
static bool const_ratio(const float *a, const float *b, int n, double *alpha)
{
    if (n < 1 || a[0] == 0) return false;
    *alpha = (double)b[0] / (double)a[0];
    for (int i = 1; i < n; i++)
        if (a[i] == 0 || fabs((double)b[i] / (double)a[i] - *alpha) > 1e-3 * (fabs(*alpha) + 1e-6))
            return false;
    return true;
}

static void describe_conv(const npk_mgk_model *m, const npk_mgk_conv *c, npk_mgk_gnode *nd)
{
    snprintf(nd->note, sizeof nd->note, "kernel %dx%d, stride %dx%d (HxW), %d->%d channels, %d-bit",
             c->kh, c->kw, c->nstride == 2 ? c->stride[1] : 0, c->nstride == 2 ? c->stride[0] : 0,
             c->cin, c->cout, c->bits);
    if (!c->usable || !c->requant_ok || !c->unpadded) {
        snprintf(nd->note, sizeof nd->note, "%.150s", c->problem);
        return;
    }
    if (c->unknown_b[0] != 1 || c->ndilation != 2 || c->dilation[0] != 1 || c->dilation[1] != 1) {
        snprintf(nd->note, sizeof nd->note, "grouped or dilated convolution");
        return;
    }
    npk_mgk_requant rq;
    npk_error e = {0};
    if (npk_mgk_requant_read(m, c, &rq, &e)) {
        snprintf(nd->note, sizeof nd->note, "%.150s", e.msg);
        return;
    }
    unsigned mode = c->mode & 7;
    double a;
    if (rq.rows == 2 && mode == 1 && c->act == -1 && rq.form == NPK_MGK_RQ_FLOAT) {
        nd->op = "Conv";
        nd->established = true;
    } else if (rq.rows == 2 && mode == 2 && c->act == -1 && rq.form == NPK_MGK_RQ_PACKED) {
        nd->op = "Conv";
        nd->established = true;
    } else if (rq.rows == 3 && mode == 1 && c->act == 3 &&
               const_ratio(rq.floats + rq.channels, rq.floats + 2 * rq.channels, rq.channels, &a)) {
        nd->op = "Conv+PRelu";
        nd->established = true;
    } else if (rq.rows == 5 && mode == 2 && (c->mode & 8) && c->act == 3) {
        /* rows: r0 = mult*t0, r1 = r0 + mult*(zp - 127.5), mult, negative-side bias, mult/alpha */
        int32_t zp = (c->zp_word >> 16) & 0xFFFF;
        bool ok = true;
        double alpha = 0;
        for (int ch = 0; ch < rq.channels && ok; ch++) {
            int64_t r0 = rq.ints[ch], r1 = rq.ints[rq.channels + ch],
                    r2 = rq.ints[2 * rq.channels + ch], r4 = rq.ints[4 * rq.channels + ch];
            ok = r2 > 0 && r4 > 0 && 2 * (r1 - r0) == (int64_t)(2 * zp - 255) * r2;
            double al = (double)r2 / (double)r4;
            if (ch == 0) alpha = al;
            ok = ok && fabs(al - alpha) < 0.01 * alpha;
        }
        if (ok) {
            nd->op = "Conv+PRelu";
            nd->established = true;
        } else {
            snprintf(nd->note, sizeof nd->note, "five-row table not of the two-slope packed form");
        }
    } else {
        snprintf(nd->note, sizeof nd->note, "requant form %s with mode %u and activation %d",
                 npk_mgk_rq_form_name(rq.form), c->mode, c->act);
    }
    npk_mgk_requant_free(&rq);
}

static void describe(gb *b, npk_mgk_gnode *nd)
{
    const npk_mgk_model *m = b->m;
    const npk_mgk_record *r = &m->records[nd->record];
    const npk_mgk_params *p = &r->p;
    nd->op = npk_mgk_kind_name(nd->kind);
    nd->note[0] = 0;
    if (nd->kind == NPK_MGK_K_UNKNOWN) {
        char k[100];
        snprintf(nd->note, sizeof nd->note, "kernel %s: unknown kind",
                 mgk_printable(r->kernel, k, sizeof k));
        return;
    }
    if (!p->decoded) {
        snprintf(nd->note, sizeof nd->note, "body not decoded");
        return;
    }
    for (uint32_t k = 0; k < nd->nout; k++)
        if (nd->out[k] < 0 || !b->g->tensors[nd->out[k]].lrank) {
            snprintf(nd->note, sizeof nd->note, "output shape unknown");
            return;
        }
    for (uint32_t k = 0; k < nd->nin; k++)
        if (nd->in[k] < 0 || !b->g->tensors[nd->in[k]].lrank) {
            snprintf(nd->note, sizeof nd->note, "input shape unknown");
            return;
        }
    /* Inputs and outputs each kind needs. */
    bool one_in = nd->kind == NPK_MGK_K_FORMAT_CONVERT || nd->kind == NPK_MGK_K_RESHAPE ||
                  nd->kind == NPK_MGK_K_PERMUTE || nd->kind == NPK_MGK_K_NORMALIZE ||
                  nd->kind == NPK_MGK_K_UPSAMPLE;
    if (nd->nout < 1 || nd->nin < 1 || (one_in && (nd->nin != 1 || nd->nout != 1)) ||
        (nd->kind == NPK_MGK_K_GRU && nd->nin > 2) ||
        (nd->kind != NPK_MGK_K_GRU && nd->nout != 1)) {
        snprintf(nd->note, sizeof nd->note, "%u inputs and %u outputs", nd->nin, nd->nout);
        return;
    }
    switch (nd->kind) {
    case NPK_MGK_K_FORMAT_CONVERT:
        nd->op = "Identity";
        nd->established = true;
        snprintf(nd->note, sizeof nd->note, "layout %s, %d channels",
                 p->fc_direction ? "NDHWC32 -> NHWC" : "NHWC -> NDHWC32", p->fc_channels);
        break;
    case NPK_MGK_K_RESHAPE: nd->established = true; break;
    case NPK_MGK_K_PERMUTE:
        nd->op = "Transpose";
        nd->established = true;
        break;
    case NPK_MGK_K_CONV:
        if (r->conv >= 0) describe_conv(m, &m->convs[r->conv], nd);
        break;
    case NPK_MGK_K_CONCAT: {
        nd->op = "Concat";
        nd->established = p->cat_ninputs == nd->nin;
        for (uint32_t k = 0; k + 1 < nd->nin; k++)
            if (tin(b, nd, k) && tin(b, nd, k)->lshape[3] % 32) nd->established = false;
        snprintf(nd->note, sizeof nd->note, "%s",
                 nd->established ? "channels, requantised to one scale"
                                 : "inputs padded inside the result");
        break;
    }
    case NPK_MGK_K_ADD:
        nd->established = p->add_ninputs == nd->nin && nd->nin == 2 && p->add_mult > 0;
        snprintf(nd->note, sizeof nd->note, "weights %d, %d; mult %g, bias %g", p->add_w[0],
                 p->add_w[1], (double)p->add_mult, (double)p->add_bias);
        break;
    case NPK_MGK_K_UPSAMPLE:
        nd->op = "Resize";
        nd->established = p->up_nscales == 2 && p->up_scales[0] >= 1 && p->up_scales[1] >= 1;
        snprintf(nd->note, sizeof nd->note, "nearest, W x%g, H x%g", (double)p->up_scales[0],
                 (double)p->up_scales[1]);
        break;
    case NPK_MGK_K_NORMALIZE:
        nd->op = "Mul+Add";
        nd->established = true;
        snprintf(nd->note, sizeof nd->note, "per channel y = x * scale + bias (%d channels)",
                 p->nz_scale_count);
        break;
    case NPK_MGK_K_GRU: {
        if (r->gru < 0) {
            snprintf(nd->note, sizeof nd->note, "GRU data not located");
            break;
        }
        const npk_mgk_gru *gr = &m->grus[r->gru];
        nd->established = gr->usable;
        snprintf(nd->note, sizeof nd->note, "%s, input %d, hidden %d, seq %d, batch %d",
                 gr->ndir == 2 ? "bidirectional" : "forward", gr->input, gr->hidden, gr->seq,
                 gr->batch);
        break;
    }
    default: break;
    }
}

npk_status npk_mgk_graph_build(const npk_mgk_model *m, npk_mgk_graph *g, npk_error *err)
{
    memset(g, 0, sizeof *g);
    gb b = {m, g, err, NULL, 0, NULL, NULL, NULL, NULL, NULL};
    npk_status st = collect_tensors(&b);
    if (!st) st = order_nodes(&b);
    for (size_t i = 0; !st && i < g->nnodes; i++) st = check_node_shapes(&b, &g->nodes[i]);
    if (!st) {
        size_t n = g->ntensors ? g->ntensors : 1;
        b.parent = malloc(n * sizeof *b.parent);
        b.has_zp = calloc(n, sizeof *b.has_zp);
        b.zp = calloc(n, sizeof *b.zp);
        b.scale = calloc(n, sizeof *b.scale);
        b.src = calloc(n, sizeof *b.src);
        if (!b.parent || !b.has_zp || !b.zp || !b.scale || !b.src)
            st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        for (size_t t = 0; !st && t < g->ntensors; t++) b.parent[t] = (int)t;
    }
    if (!st) quantisation(&b);
    for (size_t i = 0; !st && i < g->nnodes; i++) describe(&b, &g->nodes[i]);
    for (size_t t = 0; !st && t < g->ntensors; t++)
        g->tensors[t].graph_output = g->tensors[t].producer >= 0 && !g->tensors[t].nconsumers;
    free(b.ids);
    free(b.parent);
    free(b.has_zp);
    free(b.zp);
    free(b.scale);
    free(b.src);
    if (st) npk_mgk_graph_free(g);
    return st;
}

void npk_mgk_graph_free(npk_mgk_graph *g)
{
    free(g->tensors);
    free(g->nodes);
    memset(g, 0, sizeof *g);
}
