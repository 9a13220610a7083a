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
        r->gru = -1;
        npk_cursor c = npk_cur_init(m->data + r->offset, (size_t)(r->size - TRAILER), r->offset);
        c.what = "model record";
        if ((st = parse_header(&c, r, err))) break;
        r->body_offset = npk_cur_offset(&c);
        r->body_size = npk_cur_left(&c);
        st = mgk_decode_body(m, i, &c, err);
    }
    free(starts);
    return st;
}

static int cmp_range(const void *a, const void *b)
{
    const npk_mgk_range *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* A Normalize table claim, when it lies in the region. */
static bool nz_claim(const npk_mgk_model *m, int32_t count, int64_t off, npk_mgk_range *r)
{
    uint64_t bytes = count > 0 ? 4u * (uint64_t)count : 0;
    if (!bytes || off < 0 || (uint64_t)off > m->region_size ||
        bytes > m->region_size - (uint64_t)off)
        return false;
    *r = (npk_mgk_range){(uint64_t)off, bytes, false, NULL};
    return true;
}

/* Why an unclaimed range is there, as far as can be told. */
static const char *explain(const npk_mgk_model *m, const npk_mgk_range *r)
{
    if (!r->all_zero) return NULL;
    if (r->offset + r->size == m->region_size) return "zero padding at the end of the region";
    if (r->size < 128 && (r->offset + r->size) % 64 == 0)
        return "zero padding up to a 64-byte boundary";
    return "zero bytes no record and no constructor argument refers to";
}

/* Byte ranges of the weight region that no layer claims (convolution weights
 * and requant tables, GRU weights and tables, Normalize tables). */
npk_status mgk_find_unassigned(npk_mgk_model *m, npk_error *err)
{
    size_t cap = 2 * m->nconvs + 2 * m->ngrus + 2 * m->nrecords + 1;
    npk_mgk_range *used = calloc(cap, sizeof *used);
    if (!used) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    size_t nu = 0;
    for (size_t i = 0; i < m->nconvs; i++) {
        const npk_mgk_conv *c = &m->convs[i];
        if (c->usable) used[nu++] = (npk_mgk_range){c->weight_offset, c->weight_bytes, false, NULL};
        if (c->requant_ok)
            used[nu++] = (npk_mgk_range){c->requant_offset, c->requant_bytes, false, NULL};
    }
    for (size_t i = 0; i < m->ngrus; i++) {
        const npk_mgk_gru *g = &m->grus[i];
        if (!g->usable) continue;
        used[nu++] = (npk_mgk_range){(uint64_t)g->weight_offset, g->weight_bytes, false, NULL};
        used[nu++] = (npk_mgk_range){(uint64_t)g->table_offset, g->table_bytes, false, NULL};
    }
    for (size_t i = 0; i < m->nrecords; i++) {
        const npk_mgk_params *p = &m->records[i].p;
        if (p->kind != NPK_MGK_K_NORMALIZE || !p->decoded) continue;
        nu += nz_claim(m, p->nz_bias_count, p->nz_bias_offset, &used[nu]);
        nu += nz_claim(m, p->nz_scale_count, p->nz_scale_offset, &used[nu]);
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
            r->why = explain(m, r);
        }
        if (i < nu && used[i].offset + used[i].size > at) at = used[i].offset + used[i].size;
    }
    free(used);
    return NPK_OK;
}
