/* ONNX export of an MGK model (docs/mgk.md "ONNX export"). The protobuf is
 * written by libprotobuf-c with C generated at build time from the ONNX
 * schema Debian ships (python3-onnx's onnx.proto); without it the export
 * reports that it is unavailable.
 *
 * Every MGK tensor becomes a float tensor in logical NHWC layout holding its
 * real value scale * (code - zero point) (code units where the file gives no
 * scale); each record becomes the standard operators it performs, with the
 * integer arithmetic of its requantisation folded into float weights and
 * biases. With --qdq, weights are int8 with DequantizeLinear and every
 * quantised activation passes QuantizeLinear/DequantizeLinear. */
#include "npukit/mgk_graph.h"

#ifndef NPK_HAVE_PROTOBUF_C

bool npk_mgk_onnx_available(void)
{
    return false;
}

npk_status npk_mgk_export_onnx(const npk_mgk_model *m, const npk_mgk_onnx_opts *opts, uint8_t **out,
                               size_t *len, npk_error *err)
{
    (void)m;
    (void)opts;
    *out = NULL;
    *len = 0;
    return npk_fail(err, NPK_E_UNSUPPORTED,
                    "ONNX export is not in this build (needs libprotobuf-c and protoc-c)");
}

#else

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/version.h"
#include "mgk_internal.h"
#include "onnx.pb-c.h"

#define OPSET         13
#define CUSTOM_DOMAIN "ai.npukit.mgk"

typedef struct ob {
    void **mem; /* every allocation, freed at the end */
    size_t nmem, capmem;
    Onnx__NodeProto **nodes;
    size_t nnodes, capnodes;
    Onnx__TensorProto **inits;
    size_t ninits, capinits;
    Onnx__ValueInfoProto **ins, **outs;
    size_t nins, nouts, capins, capouts;
    bool custom;
    bool qdq;
    npk_status st;
    npk_error *err;
    const npk_mgk_model *m;
    const npk_mgk_graph *g;
    char **tname; /* ONNX value name of each graph tensor */
} ob;

static void *oalloc(ob *b, size_t n)
{
    if (b->st) return NULL;
    void *p = calloc(1, n ? n : 1);
    if (p && b->nmem == b->capmem) {
        size_t nc = b->capmem ? 2 * b->capmem : 256;
        void **v = realloc(b->mem, nc * sizeof *v);
        if (!v) {
            free(p);
            p = NULL;
        } else {
            b->mem = v;
            b->capmem = nc;
        }
    }
    if (!p) {
        b->st = npk_fail(b->err, NPK_E_NOMEM, "out of memory");
        return NULL;
    }
    b->mem[b->nmem++] = p;
    return p;
}

static char *ostr(ob *b, const char *fmt, ...) NPK_PRINTF(2, 3);
static char *ostr(ob *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    char *s = oalloc(b, strlen(tmp) + 1);
    if (s) strcpy(s, tmp);
    return s;
}

/* Append to a growing pointer array. */
static bool push(ob *b, void ***arr, size_t *n, size_t *cap, void *item)
{
    if (b->st || !item) return false;
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        void **v = realloc(*arr, nc * sizeof *v);
        if (!v) {
            b->st = npk_fail(b->err, NPK_E_NOMEM, "out of memory");
            return false;
        }
        *arr = v;
        *cap = nc;
    }
    (*arr)[(*n)++] = item;
    return true;
}

/* ---- nodes and attributes ---- */

static Onnx__NodeProto *node(ob *b, const char *op, const char *name, int nin,
                             const char *const *in, const char *out)
{
    Onnx__NodeProto *n = oalloc(b, sizeof *n);
    char **iv = oalloc(b, (size_t)(nin ? nin : 1) * sizeof *iv);
    char **ov = oalloc(b, sizeof *ov);
    if (!n || !iv || !ov) return NULL;
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)name;
    for (int i = 0; i < nin; i++) iv[i] = (char *)in[i];
    n->n_input = (size_t)nin;
    n->input = iv;
    ov[0] = (char *)out;
    n->n_output = 1;
    n->output = ov;
    push(b, (void ***)&b->nodes, &b->nnodes, &b->capnodes, n);
    return n;
}

static Onnx__AttributeProto *attr(ob *b, Onnx__NodeProto *n, const char *name,
                                  Onnx__AttributeProto__AttributeType t)
{
    if (!n) return NULL;
    Onnx__AttributeProto *a = oalloc(b, sizeof *a);
    Onnx__AttributeProto **v = oalloc(b, (n->n_attribute + 1) * sizeof *v);
    if (!a || !v) return NULL;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = t;
    if (n->n_attribute) memcpy(v, n->attribute, n->n_attribute * sizeof *v);
    v[n->n_attribute++] = a;
    n->attribute = v;
    return a;
}

static void attr_i(ob *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (!a) return;
    a->has_i = 1;
    a->i = v;
}

static void attr_ints(ob *b, Onnx__NodeProto *n, const char *name, const int64_t *v, size_t k)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    int64_t *c = oalloc(b, k * sizeof *c);
    if (!a || !c) return;
    memcpy(c, v, k * sizeof *c);
    a->n_ints = k;
    a->ints = c;
}

static void attr_s(ob *b, Onnx__NodeProto *n, const char *name, const char *v)
{
    Onnx__AttributeProto *a = attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a) return;
    a->has_s = 1;
    a->s.data = (uint8_t *)v;
    a->s.len = strlen(v);
}

/* ---- initializers (raw data little-endian, whatever the host) ---- */

static Onnx__TensorProto *tensor(ob *b, const char *name, int32_t dtype, const int64_t *dims,
                                 size_t nd, size_t bytes)
{
    Onnx__TensorProto *t = oalloc(b, sizeof *t);
    int64_t *d = oalloc(b, (nd ? nd : 1) * sizeof *d);
    uint8_t *raw = oalloc(b, bytes);
    if (!t || !d || !raw) return NULL;
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = dtype;
    if (nd) memcpy(d, dims, nd * sizeof *d);
    t->n_dims = nd;
    t->dims = d;
    t->has_raw_data = 1;
    t->raw_data.data = raw;
    t->raw_data.len = bytes;
    push(b, (void ***)&b->inits, &b->ninits, &b->capinits, t);
    return t;
}

static size_t count_of(const int64_t *dims, size_t nd)
{
    size_t n = 1;
    for (size_t i = 0; i < nd; i++) n *= (size_t)dims[i];
    return n;
}

static const char *init_f32(ob *b, const char *name, const int64_t *dims, size_t nd, const float *v)
{
    size_t n = count_of(dims, nd);
    Onnx__TensorProto *t = tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, nd, 4 * n);
    if (!t) return name;
    for (size_t i = 0; i < n; i++) npk_stf32le(t->raw_data.data + 4 * i, v[i]);
    return name;
}

static const char *init_scalar(ob *b, const char *name, float v)
{
    return init_f32(b, name, NULL, 0, &v);
}

static const char *init_i64(ob *b, const char *name, const int64_t *v, size_t n)
{
    int64_t d = (int64_t)n;
    Onnx__TensorProto *t = tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &d, 1, 8 * n);
    for (size_t i = 0; t && i < n; i++) npk_st64le(t->raw_data.data + 8 * i, (uint64_t)v[i]);
    return name;
}

static const char *init_i8(ob *b, const char *name, const int64_t *dims, size_t nd, const int8_t *v)
{
    size_t n = count_of(dims, nd);
    Onnx__TensorProto *t = tensor(b, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, dims, nd, n);
    if (t && n) memcpy(t->raw_data.data, v, n);
    return name;
}

static const char *init_zp(ob *b, const char *name, int32_t dtype, size_t n, int32_t zp)
{
    int64_t d = (int64_t)n;
    Onnx__TensorProto *t = tensor(b, name, dtype, &d, n ? 1 : 0, n ? n : 1);
    if (t) memset(t->raw_data.data, zp, t->raw_data.len);
    return name;
}

static Onnx__ValueInfoProto *value_info(ob *b, const char *name, const int32_t *shape, uint32_t n,
                                        bool known)
{
    Onnx__ValueInfoProto *v = oalloc(b, sizeof *v);
    Onnx__TypeProto *tp = oalloc(b, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = oalloc(b, sizeof *tt);
    Onnx__TensorShapeProto *sh = oalloc(b, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dims = oalloc(b, (n ? n : 1) * sizeof *dims);
    if (!v || !tp || !tt || !sh || !dims) return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    for (uint32_t i = 0; i < n; i++) {
        dims[i] = oalloc(b, sizeof **dims);
        if (!dims[i]) return NULL;
        onnx__tensor_shape_proto__dimension__init(dims[i]);
        dims[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[i]->dim_value = shape[i];
    }
    sh->n_dim = n;
    sh->dim = dims;
    tt->has_elem_type = 1;
    tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    if (known) tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    v->name = (char *)name;
    v->type = tp;
    return v;
}

/* ---- names ---- */

/* A value name from a file string: printable ASCII letters, digits and
 * "._-:/"; anything else becomes '_'. */
static char *clean(ob *b, npk_mgk_str s, int32_t id)
{
    char *r = oalloc(b, (s.len < 200 ? s.len : 200) + 24);
    if (!r) return NULL;
    size_t k = 0;
    for (uint32_t i = 0; i < s.len && i < 200; i++) {
        char c = s.s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-' || c == ':' || c == '/';
        r[k++] = ok ? c : '_';
    }
    if (!k) k = (size_t)sprintf(r, "t%d", id);
    r[k] = 0;
    return r;
}

static int cmp_name(const void *a, const void *c)
{
    const char *const *x = a, *const *y = c;
    return strcmp(*x, *y);
}

/* Unique names: a name shared by several tensors gets "_t<id>" appended. */
static npk_status name_tensors(ob *b)
{
    const npk_mgk_graph *g = b->g;
    b->tname = oalloc(b, (g->ntensors ? g->ntensors : 1) * sizeof *b->tname);
    char **sorted = oalloc(b, (g->ntensors ? g->ntensors : 1) * sizeof *sorted);
    if (!b->tname || !sorted) return b->st;
    for (size_t i = 0; i < g->ntensors; i++) {
        const npk_mgk_gtensor *t = &g->tensors[i];
        if (!t->name.len && t->producer >= 0) /* e.g. a GRU's second output */
            b->tname[i] =
                ostr(b, "%s_out%d", clean(b, b->m->records[t->producer].name, t->id), t->out_index);
        else
            b->tname[i] = clean(b, t->name, t->id);
        if (!b->tname[i]) return b->st;
        sorted[i] = b->tname[i];
    }
    qsort(sorted, g->ntensors, sizeof *sorted, cmp_name);
    for (size_t i = 0; i < g->ntensors; i++) {
        const char *nm = b->tname[i];
        size_t lo = 0, hi = g->ntensors;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (strcmp(sorted[mid], nm) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        bool dup = lo + 1 < g->ntensors && !strcmp(sorted[lo + 1], nm);
        if (dup || (nm[0] == 't' && nm[1] >= '0' && nm[1] <= '9'))
            b->tname[i] = ostr(b, "%s_t%d", nm, g->tensors[i].id);
    }
    return b->st;
}

static const char *tn(ob *b, int t)
{
    return b->tname[t];
}

static const npk_mgk_gtensor *T(ob *b, int t)
{
    return &b->g->tensors[t];
}

/* ---- activations ---- */

/* Finish a node whose float result is in `v` and whose tensor is `t`:
 * clamp to the codes of a quantised tensor (float mode) or pass it through
 * QuantizeLinear/DequantizeLinear (qdq mode), into the tensor's name. */
static void finish(ob *b, const char *v, int t, const char *prefix)
{
    const npk_mgk_gtensor *x = T(b, t);
    const char *name = tn(b, t);
    if (x->is_float || !x->has_zp) {
        const char *in[1] = {v};
        node(b, "Identity", ostr(b, "%s/out", prefix), 1, in, name);
        return;
    }
    if (b->qdq) {
        const char *s = init_scalar(b, ostr(b, "%s/scale", name), (float)x->scale);
        const char *zp =
            init_zp(b, ostr(b, "%s/zp", name), ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 0, x->zp);
        const char *q = ostr(b, "%s/q", name);
        const char *qi[3] = {v, s, zp};
        node(b, "QuantizeLinear", ostr(b, "%s/quantize", prefix), 3, qi, q);
        const char *di[3] = {q, s, zp};
        node(b, "DequantizeLinear", ostr(b, "%s/dequantize", prefix), 3, di, name);
        return;
    }
    const char *lo = init_scalar(b, ostr(b, "%s/min", name), (float)(x->scale * (0 - x->zp)));
    const char *hi = init_scalar(b, ostr(b, "%s/max", name), (float)(x->scale * (255 - x->zp)));
    const char *ci[3] = {v, lo, hi};
    node(b, "Clip", ostr(b, "%s/clip", prefix), 3, ci, name);
}

static const char *reshape(ob *b, const char *prefix, const char *x, const int32_t *shape,
                           uint32_t n, const char *out)
{
    int64_t s[NPK_MGK_MAX_RANK];
    for (uint32_t i = 0; i < n; i++) s[i] = shape[i];
    const char *in[2] = {x, init_i64(b, ostr(b, "%s/shape", prefix), s, n)};
    const char *o = out ? out : ostr(b, "%s/reshaped", prefix);
    node(b, "Reshape", ostr(b, "%s/reshape", prefix), 2, in, o);
    return o;
}

static const char *transpose(ob *b, const char *prefix, const char *tag, const char *x,
                             const int64_t *perm, size_t n)
{
    const char *o = ostr(b, "%s/%s", prefix, tag);
    const char *in[1] = {x};
    attr_ints(b, node(b, "Transpose", ostr(b, "%s/%s_op", prefix, tag), 1, in, o), "perm", perm, n);
    return o;
}

/* ---- records ---- */

static npk_status refuse(ob *b, const npk_mgk_gnode *nd, const char *why)
{
    const npk_mgk_record *r = &b->m->records[nd->record];
    return b->st = npk_fail_at(b->err, NPK_E_UNSUPPORTED, r->offset,
                               "record #%zu (%s): semantics not established: %s (use "
                               "--allow-unknown to export it as a custom node)",
                               nd->record, npk_mgk_kind_name(nd->kind), why);
}

/* A custom-domain node named after the record (--allow-unknown). */
static void custom(ob *b, const npk_mgk_gnode *nd)
{
    const npk_mgk_record *r = &b->m->records[nd->record];
    const char *in[NPK_MGK_MAX_INPUTS];
    for (uint32_t k = 0; k < nd->nin; k++) in[k] = tn(b, nd->in[k]);
    if (nd->nout < 1 || nd->out[0] < 0) return;
    char *op = clean(b, r->kind, 0);
    Onnx__NodeProto *n =
        node(b, op, ostr(b, "record_%zu", nd->record), (int)nd->nin, in, tn(b, nd->out[0]));
    if (!n) return;
    n->domain = CUSTOM_DOMAIN;
    attr_s(b, n, "kernel", clean(b, r->kernel, 0));
    attr_s(b, n, "note", ostr(b, "%.150s", nd->note));
    b->custom = true;
}

/* Per-input-channel scale and zero point of a convolution's inputs (the
 * inputs are concatenated along channels, padded to cin). */
static void input_quant(ob *b, const npk_mgk_gnode *nd, int cin, double *s, double *zp)
{
    int ch = 0;
    for (uint32_t k = 0; k < nd->nin; k++) {
        const npk_mgk_gtensor *x = T(b, nd->in[k]);
        for (int c = 0; c < x->lshape[3] && ch < cin; c++, ch++) {
            s[ch] = x->is_float ? 1.0 : x->scale;
            zp[ch] = x->is_float ? 0.0 : x->zp;
        }
    }
    for (; ch < cin; ch++) { /* padding lanes: the last input's quantisation (value 0 real) */
        s[ch] = ch ? s[ch - 1] : 1.0;
        zp[ch] = ch ? zp[ch - 1] : 0.0;
    }
}

static void export_conv(ob *b, const npk_mgk_gnode *nd, const char *px)
{
    const npk_mgk_model *m = b->m;
    const npk_mgk_conv *c = &m->convs[m->records[nd->record].conv];
    const npk_mgk_gtensor *y = T(b, nd->out[0]);
    npk_mgk_requant rq;
    if (npk_mgk_requant_read(m, c, &rq, b->err)) {
        b->st = NPK_E_FORMAT;
        return;
    }
    size_t co_n = (size_t)c->out_channels, ci_n = (size_t)c->in_channels,
           taps = (size_t)(c->kh * c->kw);
    size_t wn = co_n * ci_n * taps;
    int8_t *w = malloc(wn ? wn : 1);
    float *wf = malloc((wn ? wn : 1) * sizeof *wf), *bias = malloc(co_n * sizeof *bias);
    float *alpha = malloc(co_n * sizeof *alpha), *wsc = malloc(co_n * sizeof *wsc);
    double *s_in = malloc(ci_n * sizeof *s_in), *z_in = malloc(ci_n * sizeof *z_in);
    if (!w || !wf || !bias || !alpha || !wsc || !s_in || !z_in) {
        b->st = npk_fail(b->err, NPK_E_NOMEM, "out of memory");
        goto done;
    }
    if ((b->st = npk_mgk_decode_layer(m, c, 0, w, b->err))) goto done;
    input_quant(b, nd, (int)ci_n, s_in, z_in);
    double s_out = y->is_float ? 1.0 : y->scale;
    bool prelu = false, same_in = true;
    for (size_t i = 1; i < ci_n; i++) same_in &= s_in[i] == s_in[0];
    for (size_t co = 0; co < co_n; co++) {
        /* gain: output units per accumulator unit; b0: constant term in output code units. */
        double gain, b0;
        int64_t wz = 0;
        double wzf = 0;
        for (size_t ci = 0; ci < ci_n; ci++)
            for (size_t t = 0; t < taps; t++) wzf += w[(co * ci_n + ci) * taps + t] * z_in[ci];
        (void)wz;
        int32_t r0 = rq.ints[co];
        alpha[co] = 1.0f;
        if (rq.rows == 5) { /* packed two-slope: t = (4 acc + r0) / r2 */
            double r2 = rq.ints[2 * co_n + co], r4 = rq.ints[4 * co_n + co];
            gain = 4.0 / r2;
            b0 = ((double)r0 + 4.0 * wzf) / r2;
            alpha[co] = (float)(r2 / r4);
            prelu = true;
        } else if (rq.form == NPK_MGK_RQ_PACKED) { /* floor((4 acc + bias) / mult) + 128 */
            double mult = rq.mult[co];
            double zp_out = y->has_zp ? y->zp : 0;
            gain = 4.0 / mult;
            b0 = ((double)r0 + 4.0 * wzf) / mult - 0.5 + 128.0 - zp_out;
        } else { /* float path: ((acc << 1) + bias) * scale */
            double sc = rq.scale[co];
            gain = 2.0 * sc;
            b0 = sc * ((double)r0 + 2.0 * wzf);
            if (rq.slope2) {
                alpha[co] = sc != 0 ? (float)(rq.slope2[co] / sc) : 0.0f;
                prelu = true;
            }
        }
        wsc[co] = (float)(gain * s_out / s_in[0]);
        bias[co] = (float)(b0 * s_out);
        for (size_t ci = 0; ci < ci_n; ci++)
            for (size_t t = 0; t < taps; t++) {
                size_t i = (co * ci_n + ci) * taps + t;
                wf[i] = (float)(w[i] * gain * s_out / s_in[ci]);
            }
    }
    /* Inputs concatenated along channels (NHWC), padded to the layer's lanes. */
    const char *x = tn(b, nd->in[0]);
    int cin_have = 0;
    for (uint32_t k = 0; k < nd->nin; k++) cin_have += T(b, nd->in[k])->lshape[3];
    if (nd->nin > 1) {
        const char *in[NPK_MGK_MAX_INPUTS];
        for (uint32_t k = 0; k < nd->nin; k++) in[k] = tn(b, nd->in[k]);
        const char *o = ostr(b, "%s/concat", px);
        attr_i(b, node(b, "Concat", ostr(b, "%s/concat_op", px), (int)nd->nin, in, o), "axis", 3);
        x = o;
    }
    if (cin_have < (int)ci_n) {
        int64_t pads[8] = {0, 0, 0, 0, 0, 0, 0, (int64_t)ci_n - cin_have};
        const char *in[2] = {x, init_i64(b, ostr(b, "%s/pads", px), pads, 8)};
        const char *o = ostr(b, "%s/padded", px);
        node(b, "Pad", ostr(b, "%s/pad_op", px), 2, in, o);
        x = o;
    }
    static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
    x = transpose(b, px, "nchw", x, to_nchw, 4);
    int64_t wd[4] = {(int64_t)co_n, (int64_t)ci_n, c->kh, c->kw};
    const char *wname = ostr(b, "layer_%d.weight", c->id);
    const char *wref = wname;
    if (b->qdq && same_in) {
        const char *q = init_i8(b, ostr(b, "layer_%d.weight_q", c->id), wd, 4, w);
        int64_t cd = (int64_t)co_n;
        const char *sc = init_f32(b, ostr(b, "layer_%d.weight_scale", c->id), &cd, 1, wsc);
        const char *zp = init_zp(b, ostr(b, "layer_%d.weight_zp", c->id),
                                 ONNX__TENSOR_PROTO__DATA_TYPE__INT8, co_n, 0);
        const char *in[3] = {q, sc, zp};
        attr_i(b, node(b, "DequantizeLinear", ostr(b, "%s/weight_dq", px), 3, in, wname), "axis",
               0);
    } else {
        init_f32(b, wname, wd, 4, wf);
    }
    int64_t bd = (int64_t)co_n;
    const char *bname = init_f32(b, ostr(b, "layer_%d.bias", c->id), &bd, 1, bias);
    const char *cin[3] = {x, wref, bname};
    const char *cv = ostr(b, "%s/conv", px);
    Onnx__NodeProto *n = node(b, "Conv", ostr(b, "%s/conv_op", px), 3, cin, cv);
    int64_t ks[2] = {c->kh, c->kw}, st[2] = {c->stride[1], c->stride[0]};
    int64_t pd[4] = {c->pads[0], c->pads[2], c->pads[1], c->pads[3]}, dl[2] = {1, 1};
    attr_ints(b, n, "kernel_shape", ks, 2);
    attr_ints(b, n, "strides", st, 2);
    attr_ints(b, n, "pads", pd, 4);
    attr_ints(b, n, "dilations", dl, 2);
    if (prelu) {
        int64_t ad[3] = {(int64_t)co_n, 1, 1};
        const char *in[2] = {cv, init_f32(b, ostr(b, "layer_%d.prelu_slope", c->id), ad, 3, alpha)};
        cv = ostr(b, "%s/prelu", px);
        node(b, "PRelu", ostr(b, "%s/prelu_op", px), 2, in, cv);
    }
    cv = transpose(b, px, "nhwc", cv, to_nhwc, 4);
    finish(b, cv, nd->out[0], px);
done:
    free(w);
    free(wf);
    free(bias);
    free(alpha);
    free(wsc);
    free(s_in);
    free(z_in);
    npk_mgk_requant_free(&rq);
}

/* GRU: ONNX GRU (gates z, r, h; linear_before_reset = 1) between layout moves. */
static void export_gru(ob *b, const npk_mgk_gnode *nd, const char *px)
{
    const npk_mgk_model *m = b->m;
    const npk_mgk_gru *g = &m->grus[m->records[nd->record].gru];
    npk_mgk_gru_tensors t;
    if ((b->st = npk_mgk_gru_read(m, g, &t, b->err))) return;
    const npk_mgk_gtensor *x = T(b, nd->in[0]), *y = T(b, nd->out[0]);
    size_t nd_ = (size_t)t.ndir, h3 = 3 * (size_t)t.hidden, in = (size_t)t.input,
           hid = (size_t)t.hidden;
    double s_x = x->scale, z_x = x->has_zp ? x->zp : 0, s_h = y->scale;
    float *wf = malloc(nd_ * h3 * in * sizeof *wf), *rf = malloc(nd_ * h3 * hid * sizeof *rf);
    float *bb = malloc(nd_ * 2 * h3 * sizeof *bb), *ws = malloc(nd_ * sizeof *ws),
          *rs = malloc(nd_ * sizeof *rs);
    if (!wf || !rf || !bb || !ws || !rs) {
        b->st = npk_fail(b->err, NPK_E_NOMEM, "out of memory");
        goto done;
    }
    bool per_dir = true; /* one weight scale per direction: qdq can use axis 0 */
    for (size_t d = 0; d < nd_; d++) {
        ws[d] = (float)(t.ws[d * h3] / s_x);
        rs[d] = (float)(t.rs[d * h3] / s_h);
        for (size_t j = 0; j < h3; j++) {
            size_t o = d * h3 + j;
            per_dir &= t.ws[o] == t.ws[d * h3] && t.rs[o] == t.rs[d * h3];
            double sw = 0, sr = 0;
            for (size_t i = 0; i < in; i++) {
                wf[o * in + i] = (float)(t.w[o * in + i] * t.ws[o] / s_x);
                sw += t.w[o * in + i];
            }
            for (size_t i = 0; i < hid; i++) {
                rf[o * hid + i] = (float)(t.r[o * hid + i] * t.rs[o] / s_h);
                sr += t.r[o * hid + i];
            }
            bb[d * 2 * h3 + j] = (float)(t.ws[o] * ((double)t.wb[o] + z_x * sw));
            bb[d * 2 * h3 + h3 + j] = (float)(t.rs[o] * ((double)t.rb[o] + t.h_zp[d] * sr));
        }
    }
    int64_t dw[3] = {(int64_t)nd_, (int64_t)h3, (int64_t)in},
            dr[3] = {(int64_t)nd_, (int64_t)h3, (int64_t)hid};
    int64_t dbias[2] = {(int64_t)nd_, 2 * (int64_t)h3}, dd = (int64_t)nd_;
    const char *wn = ostr(b, "layer_%d.W", g->id), *rn = ostr(b, "layer_%d.R", g->id);
    if (b->qdq && per_dir) {
        const char *zp = init_zp(b, ostr(b, "layer_%d.W_zp", g->id),
                                 ONNX__TENSOR_PROTO__DATA_TYPE__INT8, nd_, 0);
        const char *wi[3] = {init_i8(b, ostr(b, "layer_%d.W_q", g->id), dw, 3, t.w),
                             init_f32(b, ostr(b, "layer_%d.W_scale", g->id), &dd, 1, ws), zp};
        attr_i(b, node(b, "DequantizeLinear", ostr(b, "%s/W_dq", px), 3, wi, wn), "axis", 0);
        const char *ri[3] = {init_i8(b, ostr(b, "layer_%d.R_q", g->id), dr, 3, t.r),
                             init_f32(b, ostr(b, "layer_%d.R_scale", g->id), &dd, 1, rs), zp};
        attr_i(b, node(b, "DequantizeLinear", ostr(b, "%s/R_dq", px), 3, ri, rn), "axis", 0);
    } else {
        init_f32(b, wn, dw, 3, wf);
        init_f32(b, rn, dr, 3, rf);
    }
    const char *bn = init_f32(b, ostr(b, "layer_%d.B", g->id), dbias, 2, bb);
    /* X: [B, S, I] batch first -> [S, B, I]. */
    int32_t xs[3] = {g->batch, g->seq, g->input};
    static const int64_t swap01[3] = {1, 0, 2};
    const char *xv = reshape(b, px, tn(b, nd->in[0]), xs, 3, NULL);
    xv = transpose(b, px, "x_sbi", xv, swap01, 3);
    const char *h0 = "";
    if (nd->nin > 1) {
        int32_t hs[3] = {g->batch, g->ndir, g->hidden};
        h0 = reshape(b, ostr(b, "%s/h0", px), tn(b, nd->in[1]), hs, 3, NULL);
        h0 = transpose(b, px, "h0_dbh", h0, swap01, 3);
    }
    const char *gin[6] = {xv, wn, rn, bn, "", h0};
    const char *yv = ostr(b, "%s/Y", px), *yh = ostr(b, "%s/Y_h", px);
    Onnx__NodeProto *n = node(b, "GRU", ostr(b, "%s/gru", px), nd->nin > 1 ? 6 : 4, gin, yv);
    if (n) {
        char **ov = oalloc(b, 2 * sizeof *ov);
        if (ov) {
            ov[0] = (char *)yv;
            ov[1] = (char *)yh;
            n->output = ov;
            n->n_output = 2;
        }
    }
    attr_i(b, n, "hidden_size", g->hidden);
    attr_s(b, n, "direction", g->ndir == 2 ? "bidirectional" : "forward");
    attr_i(b, n, "linear_before_reset", 1);
    /* Y: [S, D, B, H] -> [B, S, D, H] -> stored shape; Y_h: [D, B, H] -> [B, D, H]. */
    static const int64_t y_perm[4] = {2, 0, 1, 3};
    const char *yo = transpose(b, px, "y_bsdh", yv, y_perm, 4);
    yo = reshape(b, ostr(b, "%s/y", px), yo, y->lshape, y->lrank, NULL);
    finish(b, yo, nd->out[0], ostr(b, "%s/y", px));
    if (nd->nout > 1 && nd->out[1] >= 0) {
        const npk_mgk_gtensor *y2 = T(b, nd->out[1]);
        const char *ho = transpose(b, px, "yh_bdh", yh, swap01, 3);
        ho = reshape(b, ostr(b, "%s/yh", px), ho, y2->lshape, y2->lrank, NULL);
        finish(b, ho, nd->out[1], ostr(b, "%s/yh", px));
    }
done:
    free(wf);
    free(rf);
    free(bb);
    free(ws);
    free(rs);
    npk_mgk_gru_tensors_free(&t);
}

/* Per-channel affine y = A x + B (Normalize; the Add as two Muls). */
static void export_normalize(ob *b, const npk_mgk_gnode *nd, const char *px)
{
    const npk_mgk_model *m = b->m;
    const npk_mgk_params *p = &m->records[nd->record].p;
    const npk_mgk_gtensor *x = T(b, nd->in[0]), *y = T(b, nd->out[0]);
    int c = x->lshape[x->lrank - 1];
    float *a = malloc((size_t)c * sizeof *a), *bb = malloc((size_t)c * sizeof *bb);
    if (!a || !bb) {
        free(a);
        free(bb);
        b->st = npk_fail(b->err, NPK_E_NOMEM, "out of memory");
        return;
    }
    const uint8_t *sc = m->data + m->region_offset + p->nz_scale_offset;
    const uint8_t *bi = m->data + m->region_offset + p->nz_bias_offset;
    double s_out = y->scale, zo = y->has_zp ? y->zp : 0;
    for (int i = 0; i < c; i++) {
        double s = npk_ldf32le(sc + 4 * i), o = npk_ldf32le(bi + 4 * i);
        if (x->is_float) {
            a[i] = (float)(s_out * s);
            bb[i] = (float)(s_out * (o - zo));
        } else {
            a[i] = (float)(s_out * s / x->scale);
            bb[i] = (float)(s_out * (s * (x->has_zp ? x->zp : 0) + o - zo));
        }
    }
    int64_t d = c;
    const char *mi[2] = {tn(b, nd->in[0]), init_f32(b, ostr(b, "%s/mul_c", px), &d, 1, a)};
    const char *mo = ostr(b, "%s/mul", px);
    node(b, "Mul", ostr(b, "%s/mul_op", px), 2, mi, mo);
    const char *ai[2] = {mo, init_f32(b, ostr(b, "%s/add_c", px), &d, 1, bb)};
    const char *ao = ostr(b, "%s/add", px);
    node(b, "Add", ostr(b, "%s/add_op", px), 2, ai, ao);
    free(a);
    free(bb);
    finish(b, ao, nd->out[0], px);
}

/* Add: y = floor((64 * sum(w_k x_k) + bias) / mult) + 128 in codes. */
static void export_add(ob *b, const npk_mgk_gnode *nd, const char *px)
{
    const npk_mgk_params *p = &b->m->records[nd->record].p;
    const npk_mgk_gtensor *y = T(b, nd->out[0]);
    double c0 = (double)p->add_bias;
    const char *acc = NULL;
    for (uint32_t k = 0; k < nd->nin; k++) {
        const npk_mgk_gtensor *x = T(b, nd->in[k]);
        c0 += 64.0 * p->add_w[k] * (x->has_zp ? x->zp : 0);
        float ck = (float)(64.0 * p->add_w[k] * y->scale / ((double)p->add_mult * x->scale));
        const char *mi[2] = {tn(b, nd->in[k]), init_scalar(b, ostr(b, "%s/gain%u", px, k), ck)};
        const char *mo = ostr(b, "%s/term%u", px, k);
        node(b, "Mul", ostr(b, "%s/mul%u", px, k), 2, mi, mo);
        if (acc) {
            const char *ai[2] = {acc, mo};
            const char *ao = ostr(b, "%s/sum%u", px, k);
            node(b, "Add", ostr(b, "%s/add%u", px, k), 2, ai, ao);
            acc = ao;
        } else {
            acc = mo;
        }
    }
    float cst =
        (float)(y->scale * (c0 / (double)p->add_mult - 0.5 + 128.0 - (y->has_zp ? y->zp : 0)));
    const char *ai[2] = {acc, init_scalar(b, ostr(b, "%s/offset", px), cst)};
    const char *ao = ostr(b, "%s/sum", px);
    node(b, "Add", ostr(b, "%s/offset_op", px), 2, ai, ao);
    finish(b, ao, nd->out[0], px);
}

static void export_node(ob *b, const npk_mgk_gnode *nd, bool allow_unknown)
{
    const npk_mgk_record *r = &b->m->records[nd->record];
    if (!nd->established) {
        if (!allow_unknown) {
            refuse(b, nd, nd->note[0] ? nd->note : "unknown kind");
            return;
        }
        custom(b, nd);
        return;
    }
    const char *px = ostr(b, "r%zu", nd->record);
    const char *x = nd->nin ? tn(b, nd->in[0]) : "";
    const npk_mgk_gtensor *y = nd->nout ? T(b, nd->out[0]) : NULL;
    switch (nd->kind) {
    case NPK_MGK_K_FORMAT_CONVERT:
    case NPK_MGK_K_RESHAPE: reshape(b, px, x, y->lshape, y->lrank, tn(b, nd->out[0])); break;
    case NPK_MGK_K_PERMUTE: {
        const npk_mgk_gtensor *xi = T(b, nd->in[0]);
        int64_t perm[NPK_MGK_MAX_RANK];
        bool used[NPK_MGK_MAX_RANK] = {false};
        for (uint32_t i = 0; i < y->lrank; i++) {
            perm[i] = 0;
            for (uint32_t j = 0; j < xi->lrank; j++)
                if (!used[j] && xi->lshape[j] == y->lshape[i]) {
                    perm[i] = j;
                    used[j] = true;
                    break;
                }
        }
        const char *in[1] = {x};
        attr_ints(b, node(b, "Transpose", ostr(b, "%s/transpose", px), 1, in, tn(b, nd->out[0])),
                  "perm", perm, y->lrank);
        break;
    }
    case NPK_MGK_K_CONV: export_conv(b, nd, px); break;
    case NPK_MGK_K_GRU: export_gru(b, nd, px); break;
    case NPK_MGK_K_NORMALIZE: export_normalize(b, nd, px); break;
    case NPK_MGK_K_ADD: export_add(b, nd, px); break;
    case NPK_MGK_K_CONCAT: {
        const char *in[NPK_MGK_MAX_INPUTS];
        for (uint32_t k = 0; k < nd->nin; k++) in[k] = tn(b, nd->in[k]);
        const char *o = ostr(b, "%s/concat", px);
        attr_i(b, node(b, "Concat", ostr(b, "%s/concat_op", px), (int)nd->nin, in, o), "axis", 3);
        finish(b, o, nd->out[0], px);
        break;
    }
    case NPK_MGK_K_UPSAMPLE: {
        const npk_mgk_params *p = &r->p;
        float sc[4] = {1.0f, p->up_scales[1], p->up_scales[0], 1.0f};
        int64_t d = 4;
        const char *in[3] = {x, "", init_f32(b, ostr(b, "%s/scales", px), &d, 1, sc)};
        const char *o = ostr(b, "%s/resize", px);
        Onnx__NodeProto *n = node(b, "Resize", ostr(b, "%s/resize_op", px), 3, in, o);
        attr_s(b, n, "mode", "nearest");
        attr_s(b, n, "coordinate_transformation_mode", "asymmetric");
        attr_s(b, n, "nearest_mode", "floor");
        finish(b, o, nd->out[0], px);
        break;
    }
    default: refuse(b, nd, "no export rule"); break;
    }
}

bool npk_mgk_onnx_available(void)
{
    return true;
}

static void free_ob(ob *b)
{
    for (size_t i = 0; i < b->nmem; i++) free(b->mem[i]);
    free(b->mem);
    free(b->nodes);
    free(b->inits);
    free(b->ins);
    free(b->outs);
}

npk_status npk_mgk_export_onnx(const npk_mgk_model *m, const npk_mgk_onnx_opts *opts, uint8_t **out,
                               size_t *len, npk_error *err)
{
    *out = NULL;
    *len = 0;
    npk_mgk_graph g;
    npk_status st = npk_mgk_graph_build(m, &g, err);
    if (st) return st;
    ob b;
    memset(&b, 0, sizeof b);
    b.err = err;
    b.m = m;
    b.g = &g;
    b.qdq = opts && opts->qdq;
    bool allow = opts && opts->allow_unknown;
    name_tensors(&b);
    for (size_t i = 0; !b.st && i < g.nnodes; i++) export_node(&b, &g.nodes[i], allow);
    for (size_t i = 0; !b.st && i < g.ntensors; i++) {
        const npk_mgk_gtensor *t = &g.tensors[i];
        if (!t->graph_input && !t->graph_output) continue;
        if (!t->lrank) {
            /* ONNX graph inputs and outputs need a shape: an output of a custom
             * node whose shape is unknown stays a dangling node output. */
            if (t->graph_output && allow) continue;
            uint64_t at = t->producer >= 0 ? m->records[t->producer].offset : 0;
            for (size_t k = 0; t->producer < 0 && k < g.nnodes && !at; k++)
                for (uint32_t j = 0; j < g.nodes[k].nin; j++)
                    if (g.nodes[k].in[j] == (int)i) at = m->records[g.nodes[k].record].offset;
            b.st = npk_fail_at(err, NPK_E_UNSUPPORTED, at, "tensor %d (%s): shape unknown", t->id,
                               b.tname[i]);
            break;
        }
        Onnx__ValueInfoProto *v = value_info(&b, b.tname[i], t->lshape, t->lrank, t->lrank > 0);
        if (t->graph_input)
            push(&b, (void ***)&b.ins, &b.nins, &b.capins, v);
        else
            push(&b, (void ***)&b.outs, &b.nouts, &b.capouts, v);
    }
    if (!b.st) {
        Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
        gp.name = "mgk";
        gp.n_node = b.nnodes;
        gp.node = b.nodes;
        gp.n_initializer = b.ninits;
        gp.initializer = b.inits;
        gp.n_input = b.nins;
        gp.input = b.ins;
        gp.n_output = b.nouts;
        gp.output = b.outs;
        gp.doc_string = "Exported by npukit from an Ingenic MGK model. Tensors are real values "
                        "scale * (code - zero point), NHWC; see docs/mgk.md.";
        Onnx__OperatorSetIdProto def = ONNX__OPERATOR_SET_ID_PROTO__INIT,
                                 cus = ONNX__OPERATOR_SET_ID_PROTO__INIT;
        def.domain = "";
        def.has_version = 1;
        def.version = OPSET;
        cus.domain = CUSTOM_DOMAIN;
        cus.has_version = 1;
        cus.version = 1;
        Onnx__OperatorSetIdProto *ops[2] = {&def, &cus};
        Onnx__StringStringEntryProto meta[3] = {ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                                ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                                ONNX__STRING_STRING_ENTRY_PROTO__INIT};
        meta[0].key = "npukit.gru_gate_order";
        meta[0].value = "z,r,h (inferred: the ONNX order the toolchain converts from)";
        meta[1].key = "npukit.weights";
        meta[1].value = b.qdq ? "int8 with DequantizeLinear" : "dequantised to float";
        meta[2].key = "npukit.layout";
        meta[2].value = "NHWC; tensor values are scale * (code - zero point)";
        Onnx__StringStringEntryProto *mp[3] = {&meta[0], &meta[1], &meta[2]};
        Onnx__ModelProto mod = ONNX__MODEL_PROTO__INIT;
        mod.has_ir_version = 1;
        mod.ir_version = 7;
        mod.n_opset_import = b.custom ? 2 : 1;
        mod.opset_import = ops;
        mod.producer_name = "npukit";
        mod.producer_version = NPK_VERSION;
        mod.graph = &gp;
        mod.n_metadata_props = 3;
        mod.metadata_props = mp;
        size_t n = onnx__model_proto__get_packed_size(&mod);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf) {
            b.st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        } else {
            *len = onnx__model_proto__pack(&mod, buf);
            *out = buf;
        }
    }
    st = b.st;
    free_ob(&b);
    npk_mgk_graph_free(&g);
    return st;
}

#endif
