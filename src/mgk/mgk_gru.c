/* GRU layers (docs/mgk.md "GRU"). A Gru record's body holds only its output
 * shapes; the weights and tables are bound by the generated constructor,
 * which passes their region offsets to gru_param_init as immediates. The
 * call of each record is found by its output-id argument, and the geometry
 * comes from the record's shapes. Layout (verified on the fixture):
 *   weights: NMHWSOIB2 [ndir*3H/32, (I+H)/32, 1, 1, 4, 32, 32]; output row
 *     d*3H + g*H + j (direction d, gate g, unit j); input columns 0..I-1 are
 *     the input weights W, I..I+H-1 the recurrent weights R;
 *   table (words): per direction int32 Wb[3H], Rb[3H]; then per direction
 *     fp32 Ws[3H], Rs[3H]; fp32 h_scale[H]; int32 h_zp[ndir].
 * Gate order z, r, h as in the ONNX GRU the toolchain converts (inferred). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "mgk_internal.h"

#define CTOR_PREFIX "_ZN17DerivedMagikModelC"
/* The one gru_param_init signature whose argument slots are known. */
#define GRU_CALLEE                                                                                 \
    "_Z14gru_param_initNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt6vectorIS4_SaIS4_"    \
    "EES7_S5_IiSaIiEES7_S7_iS7_S4_ibbiS9_iiiyiS9_S9_iiPvSA_xS5_IS9_SaIS9_EESC_S9_S9_S9_S9_"        \
    "bbiiibiiRS5_IN5magik5venus10TensorInfoESaISF_EERSt3mapIiSt4pairIS7_S7_ESt4lessIiESaISK_"      \
    "IKiSL_EEEPNSE_14MagikModelBase13PyramidConfigESt8functionIFNSE_11ReturnValueERSt10unique_"    \
    "ptrINSE_6kernel11KernelParamESt14default_deleteIS10_EEPNSE_8OpConfigEEE"
/* Outgoing o32 argument words (sp offset / 4) of that signature. */
enum { SLOT_OUT_ID = 6, SLOT_HIDDEN = 9, SLOT_ZPS = 16, SLOT_WEIGHTS = 23, SLOT_TABLE = 24 };

static void gru_problem(npk_mgk_gru *g, const char *fmt, ...) NPK_PRINTF(2, 3);
static void gru_problem(npk_mgk_gru *g, const char *fmt, ...)
{
    if (g->problem[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->problem, sizeof g->problem, fmt, ap);
    va_end(ap);
}

/* The output shape of the record producing tensor `id`, or NULL. */
static const npk_mgk_tblock *producer_shape(const npk_mgk_model *m, int32_t id, uint32_t *k)
{
    for (size_t i = 0; i < m->nrecords; i++) {
        const npk_mgk_record *r = &m->records[i];
        if (!r->p.tb.present) continue;
        for (uint32_t j = 0; j < r->nout && j < r->p.tb.nshapes; j++)
            if (r->out_id + (int32_t)j == id) {
                *k = j;
                return &r->p.tb;
            }
    }
    return NULL;
}

static void gru_derive(const npk_mgk_model *m, const npk_mgk_record *r, npk_mgk_gru *g)
{
    const npk_mgk_tblock *tb = &r->p.tb;
    if (!r->p.decoded || tb->nshapes < 1 || tb->rank[0] != 4) {
        gru_problem(g, "output shape is not [batch, seq, directions, hidden]");
        return;
    }
    g->batch = tb->shape[0][0];
    g->seq = tb->shape[0][1];
    g->ndir = tb->shape[0][2];
    g->hidden = tb->shape[0][3];
    uint32_t k;
    const npk_mgk_tblock *in = r->ninputs ? producer_shape(m, r->inputs[0].id, &k) : NULL;
    if (!in || in->rank[k] < 1) {
        gru_problem(g, "the producer of input %d has no shape", r->ninputs ? r->inputs[0].id : -1);
        return;
    }
    g->input = in->shape[k][in->rank[k] - 1];
    int64_t elems = 1;
    for (uint32_t i = 0; i < in->rank[k]; i++) elems *= in->shape[k][i] > 0 ? in->shape[k][i] : 0;
    if (g->ndir < 1 || g->ndir > 2 || g->hidden < 1 || g->hidden > 4096 || g->batch < 1 ||
        g->seq < 1 || g->input < 1 || g->input > 4096 ||
        elems != (int64_t)g->batch * g->seq * g->input) {
        gru_problem(g, "shapes do not chain: input of %lld elements, output [%d, %d, %d, %d]",
                    (long long)elems, g->batch, g->seq, g->ndir, g->hidden);
        return;
    }
    if (g->arg_hidden != g->hidden) {
        gru_problem(g, "hidden size %d in the constructor, %d in the output shape", g->arg_hidden,
                    g->hidden);
        return;
    }
    if (g->hidden % 32 || g->input % 32) {
        gru_problem(g, "input %d / hidden %d not multiples of 32: gate lane layout unknown",
                    g->input, g->hidden);
        return;
    }
    g->n_ofp = g->ndir * 3 * g->hidden / 32;
    g->m_ifp = (g->input + g->hidden) / 32;
    g->planes = 4; /* gru_ubit8: 8-bit weights; checked against the byte range below */
    g->bits = 8;
    g->weight_bytes = (uint64_t)g->n_ofp * (uint64_t)g->m_ifp * 1024u;
    uint64_t words =
        (uint64_t)g->ndir * 12u * (uint64_t)g->hidden + (uint64_t)g->hidden + (uint64_t)g->ndir;
    g->table_bytes = words * 4;
    if (g->weight_offset < 0 || (uint64_t)g->weight_offset > m->region_size ||
        g->table_offset < g->weight_offset ||
        (uint64_t)(g->table_offset - g->weight_offset) < g->weight_bytes ||
        (uint64_t)(g->table_offset - g->weight_offset) >= g->weight_bytes + 128) {
        gru_problem(g,
                    "weights of %llu bytes ([%d, %d, 1, 1, 4, 32, 32]) do not fit region+0x%llx.."
                    "0x%llx",
                    (unsigned long long)g->weight_bytes, g->n_ofp, g->m_ifp,
                    (unsigned long long)g->weight_offset, (unsigned long long)g->table_offset);
        return;
    }
    if ((uint64_t)g->table_offset > m->region_size ||
        g->table_bytes > m->region_size - (uint64_t)g->table_offset) {
        gru_problem(g, "table of %llu bytes at region+0x%llx runs past the weight region",
                    (unsigned long long)g->table_bytes, (unsigned long long)g->table_offset);
        return;
    }
    g->in_zp = g->arg_zps & 0xFFFF;
    g->h_zp = (g->arg_zps >> 16) & 0xFFFF;
    g->usable = true;
}

npk_status mgk_find_grus(npk_mgk_model *m, npk_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nrecords; i++) n += m->records[i].p.kind == NPK_MGK_K_GRU;
    if (!n) return NPK_OK;
    m->grus = calloc(n, sizeof *m->grus);
    if (!m->grus) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    mgk_callsite *calls = NULL;
    size_t ncalls = 0;
    npk_status st = mgk_call_sites(m, CTOR_PREFIX, GRU_CALLEE, &calls, &ncalls, err);
    if (st) return st;
    for (size_t i = 0; i < m->nrecords; i++) {
        npk_mgk_record *r = &m->records[i];
        if (r->p.kind != NPK_MGK_K_GRU) continue;
        npk_mgk_gru *g = &m->grus[m->ngrus];
        g->record = i;
        g->id = (int)i;
        r->gru = (int)m->ngrus++;
        const mgk_callsite *cs = NULL;
        for (size_t k = 0; k < ncalls && !cs; k++) {
            uint64_t need = (1ull << SLOT_OUT_ID) | (1ull << SLOT_HIDDEN) | (1ull << SLOT_ZPS) |
                            (1ull << SLOT_WEIGHTS) | (1ull << SLOT_TABLE);
            if ((calls[k].known & need) == need && calls[k].slot[SLOT_OUT_ID] == r->out_id)
                cs = &calls[k];
        }
        if (!cs) {
            gru_problem(g, "%s",
                        !ncalls ? "no call from the DerivedMagikModel constructor to the known "
                                  "gru_param_init signature"
                                : "no gru_param_init call with this record's output id");
            continue;
        }
        g->located = true;
        g->call_addr = cs->addr;
        g->arg_out_id = cs->slot[SLOT_OUT_ID];
        g->arg_hidden = cs->slot[SLOT_HIDDEN];
        g->arg_zps = cs->slot[SLOT_ZPS];
        g->weight_offset = (uint32_t)cs->slot[SLOT_WEIGHTS];
        g->table_offset = (uint32_t)cs->slot[SLOT_TABLE];
        gru_derive(m, r, g);
    }
    free(calls);
    return NPK_OK;
}

const npk_mgk_gru *npk_mgk_find_gru(const npk_mgk_model *m, int id)
{
    for (size_t i = 0; i < m->ngrus; i++)
        if (m->grus[i].id == id) return &m->grus[i];
    return NULL;
}

void npk_mgk_gru_tensors_free(npk_mgk_gru_tensors *t)
{
    free(t->w);
    free(t->r);
    free(t->wb);
    free(t->rb);
    free(t->ws);
    free(t->rs);
    free(t->h_scale);
    free(t->h_zp);
    memset(t, 0, sizeof *t);
}

static npk_mgk_wshape gru_wshape(const npk_mgk_gru *g)
{
    npk_mgk_wshape s = {g->n_ofp, g->m_ifp, 1, 1, g->bits, 32 * g->n_ofp, 32 * g->m_ifp, 0};
    return s;
}

npk_status npk_mgk_gru_read(const npk_mgk_model *m, const npk_mgk_gru *g, npk_mgk_gru_tensors *t,
                            npk_error *err)
{
    memset(t, 0, sizeof *t);
    if (!g->usable) return npk_fail(err, NPK_E_UNSUPPORTED, "GRU layer %d: %s", g->id, g->problem);
    size_t nd = (size_t)g->ndir, h3 = 3 * (size_t)g->hidden, in = (size_t)g->input,
           hid = (size_t)g->hidden, cols = in + hid;
    t->ndir = g->ndir;
    t->hidden = g->hidden;
    t->input = g->input;
    int8_t *all = malloc(nd * h3 * cols);
    t->w = malloc(nd * h3 * in);
    t->r = malloc(nd * h3 * hid);
    t->wb = malloc(nd * h3 * sizeof *t->wb);
    t->rb = malloc(nd * h3 * sizeof *t->rb);
    t->ws = malloc(nd * h3 * sizeof *t->ws);
    t->rs = malloc(nd * h3 * sizeof *t->rs);
    t->h_scale = malloc(hid * sizeof *t->h_scale);
    t->h_zp = malloc(nd * sizeof *t->h_zp);
    if (!all || !t->w || !t->r || !t->wb || !t->rb || !t->ws || !t->rs || !t->h_scale || !t->h_zp) {
        free(all);
        npk_mgk_gru_tensors_free(t);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    npk_mgk_wshape s = gru_wshape(g);
    npk_status st = npk_mgk_nmhw_decode(&s, m->data + m->region_offset + g->weight_offset,
                                        (size_t)g->weight_bytes, all, err);
    if (st) {
        free(all);
        npk_mgk_gru_tensors_free(t);
        return st;
    }
    for (size_t row = 0; row < nd * h3; row++) {
        memcpy(t->w + row * in, all + row * cols, in);
        memcpy(t->r + row * hid, all + row * cols + in, hid);
    }
    free(all);
    const uint8_t *tab = m->data + m->region_offset + g->table_offset;
    size_t sbase = nd * 2 * h3;
    for (size_t d = 0; d < nd; d++)
        for (size_t j = 0; j < h3; j++) {
            size_t o = d * h3 + j;
            t->wb[o] = (int32_t)npk_ld32le(tab + 4 * (d * 2 * h3 + j));
            t->rb[o] = (int32_t)npk_ld32le(tab + 4 * (d * 2 * h3 + h3 + j));
            t->ws[o] = npk_ldf32le(tab + 4 * (sbase + d * 2 * h3 + j));
            t->rs[o] = npk_ldf32le(tab + 4 * (sbase + d * 2 * h3 + h3 + j));
        }
    for (size_t j = 0; j < hid; j++) t->h_scale[j] = npk_ldf32le(tab + 4 * (2 * sbase + j));
    for (size_t d = 0; d < nd; d++)
        t->h_zp[d] = (int32_t)npk_ld32le(tab + 4 * (2 * sbase + hid + d));
    return NPK_OK;
}

/* Re-encode W and R ([ndir][3H][I] and [ndir][3H][H]) into the file copy. */
npk_status mgk_gru_encode(const npk_mgk_model *m, const npk_mgk_gru *g, const int8_t *w,
                          const int8_t *rw, uint8_t *file, npk_error *err)
{
    size_t rows = (size_t)g->ndir * 3 * (size_t)g->hidden, in = (size_t)g->input,
           hid = (size_t)g->hidden, cols = in + hid;
    int8_t *all = malloc(rows * cols);
    if (!all) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (size_t row = 0; row < rows; row++) {
        memcpy(all + row * cols, w + row * in, in);
        memcpy(all + row * cols + in, rw + row * hid, hid);
    }
    npk_mgk_wshape s = gru_wshape(g);
    npk_status st = npk_mgk_nmhw_encode(&s, all, file + m->region_offset + g->weight_offset,
                                        (size_t)g->weight_bytes, err);
    free(all);
    return st;
}
