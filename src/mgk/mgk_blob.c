/* The `model` section: a sequence of serialised layer records. Each record
 * ends in an i64 holding its own length (true for all 62 records of the
 * known file), so records are framed by walking back from the end of the
 * blob; each is then parsed forward: a common header (tensor names, formats,
 * types and ids, the kernel id) and a kind-specific body. Convolution bodies
 * are decoded; other bodies are kept raw. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "mgk_internal.h"

#define TRAILER    8
#define MIN_RECORD 16

npk_status mgk_read_str(npk_cursor *c, npk_mgk_str *s, npk_error *err)
{
    const char *p;
    size_t n;
    npk_status st = npk_cur_str_u32(c, NPK_MGK_MAX_STR, &p, &n, err);
    if (st) return st;
    s->s = p;
    s->len = (uint32_t)n;
    return NPK_OK;
}

npk_status mgk_read_count(npk_cursor *c, uint32_t *n, size_t item_min, npk_error *err)
{
    uint64_t at = npk_cur_offset(c);
    npk_status st = npk_cur_u32le(c, n, err);
    if (st) return st;
    if (*n > NPK_MGK_MAX_VEC || (uint64_t)*n * item_min > npk_cur_left(c))
        return npk_fail_at(err, NPK_E_FORMAT, at, "vector of %u items does not fit the record", *n);
    return NPK_OK;
}

npk_status mgk_read_ivec(npk_cursor *c, int32_t *v, uint32_t cap, uint32_t *n, npk_error *err)
{
    uint64_t at = npk_cur_offset(c);
    npk_status st = mgk_read_count(c, n, 4, err);
    if (st) return st;
    if (*n > cap)
        return npk_fail_at(err, NPK_E_FORMAT, at, "vector of %u integers, expected at most %u", *n,
                           cap);
    for (uint32_t i = 0; i < *n; i++)
        if ((st = npk_cur_i32le(c, &v[i], err))) return st;
    return NPK_OK;
}

/* A vector<string> into the `field` member of n tensor refs (count must be n). */
static npk_status read_ref_strs(npk_cursor *c, npk_mgk_tensor_ref *refs, uint32_t n, int field,
                                npk_error *err)
{
    uint64_t at = npk_cur_offset(c);
    uint32_t k;
    npk_status st = mgk_read_count(c, &k, 4, err);
    if (st) return st;
    if (k != n)
        return npk_fail_at(err, NPK_E_FORMAT, at, "record header: %u items where %u expected", k,
                           n);
    for (uint32_t i = 0; i < n; i++) {
        npk_mgk_str *dst = field == 0   ? &refs[i].format
                           : field == 1 ? &refs[i].type
                                        : &refs[i].name;
        if ((st = mgk_read_str(c, dst, err))) return st;
    }
    return NPK_OK;
}

static npk_status read_strs(npk_cursor *c, npk_mgk_str **out, uint32_t *n, npk_error *err)
{
    npk_status st = mgk_read_count(c, n, 4, err);
    if (st) return st;
    *out = calloc(*n ? *n : 1, sizeof **out);
    if (!*out) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < *n; i++)
        if ((st = mgk_read_str(c, &(*out)[i], err))) return st;
    return NPK_OK;
}

/* Common header: name; inputs as formats, types, ids, names; output formats,
 * types and id; kernel id. */
static npk_status parse_header(npk_cursor *c, npk_mgk_record *r, npk_error *err)
{
    npk_status st;
    if ((st = mgk_read_str(c, &r->name, err))) return st;
    uint32_t n;
    if ((st = mgk_read_count(c, &n, 4, err))) return st;
    r->inputs = calloc(n ? n : 1, sizeof *r->inputs);
    if (!r->inputs) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    r->ninputs = n;
    for (uint32_t i = 0; i < n; i++)
        if ((st = mgk_read_str(c, &r->inputs[i].format, err))) return st;
    if ((st = read_ref_strs(c, r->inputs, n, 1, err))) return st;
    uint64_t at = npk_cur_offset(c);
    uint32_t k;
    if ((st = mgk_read_count(c, &k, 4, err))) return st;
    if (k != n)
        return npk_fail_at(err, NPK_E_FORMAT, at, "record header: %u input ids for %u inputs", k,
                           n);
    for (uint32_t i = 0; i < n; i++)
        if ((st = npk_cur_i32le(c, &r->inputs[i].id, err))) return st;
    if ((st = read_ref_strs(c, r->inputs, n, 2, err))) return st;
    if ((st = read_strs(c, &r->out_formats, &r->nout, err))) return st;
    at = npk_cur_offset(c);
    if ((st = read_strs(c, &r->out_types, &k, err))) return st;
    if (k != r->nout)
        return npk_fail_at(err, NPK_E_FORMAT, at, "record header: %u output types for %u formats",
                           k, r->nout);
    if ((st = npk_cur_i32le(c, &r->out_id, err)) || (st = mgk_read_str(c, &r->kernel, err)))
        return st;
    const char *slash = r->kernel.len ? memchr(r->kernel.s, '/', r->kernel.len) : NULL;
    r->kind.s = r->kernel.s;
    r->kind.len = slash ? (uint32_t)(slash - r->kernel.s) : r->kernel.len;
    r->known_kind = mgk_kind_lookup(r->kind) != NULL;
    return NPK_OK;
}

static void conv_problem(npk_mgk_conv *c, const char *fmt, ...) NPK_PRINTF(2, 3);
static void conv_problem(npk_mgk_conv *c, const char *fmt, ...)
{
    if (c->problem[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problem, sizeof c->problem, fmt, ap);
    va_end(ap);
}

static bool in_region(const npk_mgk_model *m, int64_t off, uint64_t size)
{
    return off >= 0 && size <= m->region_size && (uint64_t)off <= m->region_size - size;
}

/* Check the decoded fields and derive sizes; sets usable / requant_ok. */
static void conv_derive(const npk_mgk_model *m, npk_mgk_conv *c)
{
    const int32_t *ws = c->weight_shape, *rs = c->requant_shape;
    const npk_mgk_bitwidth *bw = npk_mgk_bitwidth_by_planes(ws[4]);
    c->n_ofp = ws[0];
    c->m_ifp = ws[1];
    c->kh = ws[2];
    c->kw = ws[3];
    c->planes = ws[4];
    if (ws[5] != 32 || ws[6] != 32) {
        conv_problem(c, "weight shape lanes %d x %d, expected 32 x 32", ws[5], ws[6]);
        return;
    }
    for (int i = 0; i < 4; i++)
        if (ws[i] < 1 || ws[i] > 4096) {
            conv_problem(c, "weight shape dimension %d is %d", i, ws[i]);
            return;
        }
    if (!bw) {
        conv_problem(c, "S_BIT2 = %d planes: no known bit width", ws[4]);
        return;
    }
    c->bits = bw->bits;
    uint64_t elems = (uint64_t)ws[0] * (uint64_t)ws[1] * (uint64_t)ws[2] * (uint64_t)ws[3] *
                     (uint64_t)ws[4] * 1024u;
    if (c->counts[0] < 0 || elems != (uint64_t)c->counts[0]) {
        conv_problem(c, "weight element count %d does not match the shape (%llu)", c->counts[0],
                     (unsigned long long)elems);
        return;
    }
    c->weight_bytes = elems / 4;
    if (!in_region(m, c->offsets[0], c->weight_bytes)) {
        conv_problem(c, "weights at region+0x%llx (%llu bytes) lie outside the weight region",
                     (unsigned long long)c->offsets[0], (unsigned long long)c->weight_bytes);
        return;
    }
    c->weight_offset = (uint64_t)c->offsets[0];
    /* Real channel counts select the lanes; if they do not fit, keep all lanes. */
    if (c->cout > 32 * (c->n_ofp - 1) && c->cout <= 32 * c->n_ofp && c->cin > 32 * (c->m_ifp - 1) &&
        c->cin <= 32 * c->m_ifp) {
        c->out_channels = c->cout;
        c->in_channels = c->cin;
        c->unpadded = true;
    } else {
        c->out_channels = 32 * c->n_ofp;
        c->in_channels = 32 * c->m_ifp;
        conv_problem(c, "Cin/Cout %d/%d do not fit the weight shape; all lanes used", c->cin,
                     c->cout);
    }
    c->usable = true;
    if (rs[0] != ws[0] || rs[1] < 1 || rs[1] > 64 || rs[2] != 1 || rs[3] != 1 || rs[4] != 32) {
        conv_problem(c, "requant shape [%d, %d, %d, %d, %d] not understood", rs[0], rs[1], rs[2],
                     rs[3], rs[4]);
        return;
    }
    uint64_t rq = (uint64_t)rs[0] * 32u * (uint64_t)rs[1];
    if (c->counts[1] < 0 || rq != (uint64_t)c->counts[1]) {
        conv_problem(c, "requant element count %d does not match its shape (%llu)", c->counts[1],
                     (unsigned long long)rq);
        return;
    }
    c->requant_bytes = rq * 4;
    if (!in_region(m, c->offsets[1], c->requant_bytes)) {
        conv_problem(c, "requant table at region+0x%llx (%llu bytes) lies outside the region",
                     (unsigned long long)c->offsets[1], (unsigned long long)c->requant_bytes);
        return;
    }
    c->m_bt = rs[1];
    c->requant_offset = (uint64_t)c->offsets[1];
    c->requant_ok = true;
}

/* The convolution body, in the read order of conv2d_int8_param_init. */
static npk_status parse_conv(npk_mgk_model *m, npk_cursor *c, npk_mgk_conv *cv, npk_error *err)
{
    npk_status st;
    uint32_t n;
    if ((st = npk_cur_copy(c, cv->unknown_head, sizeof cv->unknown_head, err)) ||
        (st = npk_cur_i32le(c, &cv->unknown_a, err)) || (st = npk_cur_i32le(c, &cv->cin, err)) ||
        (st = npk_cur_i32le(c, &cv->cout, err)) ||
        (st = mgk_read_ivec(c, cv->pads, 8, &cv->npads, err)) ||
        (st = mgk_read_ivec(c, cv->kernel, 8, &cv->nkernel, err)) ||
        (st = mgk_read_ivec(c, cv->stride, 8, &cv->nstride, err)) ||
        (st = mgk_read_ivec(c, cv->dilation, 8, &cv->ndilation, err)) ||
        (st = npk_cur_i32le(c, &cv->unknown_b[0], err)) ||
        (st = npk_cur_i32le(c, &cv->unknown_b[1], err)) ||
        (st = npk_cur_copy(c, cv->unknown_c, 3, err)) || (st = npk_cur_i32le(c, &cv->act, err)) ||
        (st = mgk_read_str(c, &cv->layout, err)) ||
        (st = npk_cur_copy(c, cv->zero_points, 5, err)) ||
        (st = npk_cur_i32le(c, &cv->unknown_d, err)))
        return st;
    cv->shape_pos = npk_cur_offset(c);
    if ((st = mgk_read_ivec(c, cv->weight_shape, 7, &n, err))) return st;
    if (n != 7)
        return npk_fail_at(err, NPK_E_FORMAT, cv->shape_pos,
                           "convolution weight shape has %u dimensions, expected 7", n);
    uint64_t at = npk_cur_offset(c);
    if ((st = mgk_read_ivec(c, cv->requant_shape, 5, &n, err))) return st;
    if (n != 5)
        return npk_fail_at(err, NPK_E_FORMAT, at,
                           "convolution requant shape has %u dimensions, expected 5", n);
    if ((st = mgk_read_ivec(c, cv->third_shape, 8, &cv->nthird, err)) ||
        (st = npk_cur_u8(c, &cv->has_third, err)))
        return st;
    for (int i = 0; i < 3; i++)
        if ((st = npk_cur_i32le(c, &cv->counts[i], err))) return st;
    for (int i = 0; i < 3; i++)
        if ((st = npk_cur_i64le(c, &cv->offsets[i], err))) return st;
    cv->tail_offset = npk_cur_offset(c);
    cv->tail_size = npk_cur_left(c);
    conv_derive(m, cv);
    return NPK_OK;
}

/* Frame the records by their trailing length words, last to first. */
static npk_status frame_records(const npk_mgk_model *m, const npk_mgk_section *blob,
                                uint64_t **starts, size_t *count, npk_error *err)
{
    size_t cap = 64, n = 0;
    uint64_t *v = malloc(cap * sizeof *v);
    if (!v) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    uint64_t end = blob->size;
    while (end > 0) {
        uint64_t at = blob->offset + end - TRAILER;
        if (end < MIN_RECORD) {
            free(v);
            return npk_fail_at(err, NPK_E_FORMAT, blob->offset,
                               "model: %llu bytes before the first record cannot hold a record",
                               (unsigned long long)end);
        }
        uint64_t len = npk_ld64le(m->data + at);
        if (len < MIN_RECORD || len > end) {
            free(v);
            return npk_fail_at(err, NPK_E_FORMAT, at,
                               "model: record length %llu does not fit (%llu bytes before it)",
                               (unsigned long long)len, (unsigned long long)end);
        }
        if (n == NPK_MGK_MAX_RECORDS) {
            free(v);
            return npk_fail_at(err, NPK_E_LIMIT, at, "model: more than %u records",
                               NPK_MGK_MAX_RECORDS);
        }
        if (n == cap) {
            uint64_t *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) {
                free(v);
                return npk_fail(err, NPK_E_NOMEM, "out of memory");
            }
            v = nv;
            cap *= 2;
        }
        end -= len;
        v[n++] = end;
    }
    for (size_t i = 0; i < n / 2; i++) { /* into file order */
        uint64_t t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    *starts = v;
    *count = n;
    return NPK_OK;
}

npk_status mgk_parse_blob(npk_mgk_model *m, npk_error *err)
{
    const npk_mgk_section *blob = &m->sections[m->sec_model];
    uint64_t *starts = NULL;
    size_t n = 0;
    npk_status st = frame_records(m, blob, &starts, &n, err);
    if (st) return st;
    m->records = calloc(n ? n : 1, sizeof *m->records);
    m->convs = calloc(n ? n : 1, sizeof *m->convs);
    if (!m->records || !m->convs) {
        free(starts);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n && !st; i++) {
        uint64_t next = i + 1 < n ? starts[i + 1] : blob->size;
        npk_mgk_record *r = &m->records[m->nrecords++];
        r->offset = blob->offset + starts[i];
        r->size = next - starts[i];
        r->conv = -1;
        npk_cursor c = npk_cur_init(m->data + r->offset, (size_t)(r->size - TRAILER), r->offset);
        c.what = "model record";
        if ((st = parse_header(&c, r, err))) break;
        r->body_offset = npk_cur_offset(&c);
        r->body_size = npk_cur_left(&c);
        if (!npk_mgk_str_eq(r->kind, "Convolution")) continue;
        npk_mgk_conv *cv = &m->convs[m->nconvs];
        cv->record = i;
        cv->id = (int)i;
        if ((st = parse_conv(m, &c, cv, err))) break;
        r->conv = (int)m->nconvs++;
    }
    free(starts);
    return st;
}

static int cmp_range(const void *a, const void *b)
{
    const npk_mgk_range *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Byte ranges of the weight region that no convolution record claims. */
npk_status mgk_find_unassigned(npk_mgk_model *m, npk_error *err)
{
    npk_mgk_range *used = calloc(2 * m->nconvs + 1, sizeof *used);
    if (!used) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    size_t nu = 0;
    for (size_t i = 0; i < m->nconvs; i++) {
        const npk_mgk_conv *c = &m->convs[i];
        if (c->usable) used[nu++] = (npk_mgk_range){c->weight_offset, c->weight_bytes, false};
        if (c->requant_ok) used[nu++] = (npk_mgk_range){c->requant_offset, c->requant_bytes, false};
    }
    qsort(used, nu, sizeof *used, cmp_range);
    m->unassigned = calloc(nu + 1, sizeof *m->unassigned);
    if (!m->unassigned) {
        free(used);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    uint64_t at = 0;
    for (size_t i = 0; i <= nu; i++) {
        uint64_t begin = i < nu ? used[i].offset : m->region_size;
        if (i < nu && begin < at)
            mgk_warn(m, m->region_offset + begin, "weight-region ranges overlap at region+0x%llx",
                     (unsigned long long)begin);
        if (begin > at) {
            npk_mgk_range *r = &m->unassigned[m->nunassigned++];
            r->offset = at;
            r->size = begin - at;
            const uint8_t *p = m->data + m->region_offset + at;
            r->all_zero = true;
            for (uint64_t k = 0; k < r->size && r->all_zero; k++) r->all_zero = p[k] == 0;
        }
        if (i < nu && used[i].offset + used[i].size > at) at = used[i].offset + used[i].size;
    }
    free(used);
    return NPK_OK;
}
