/* Requantisation tables: [N_OFP, M_BT, 1, 1, 32] words, i.e. for each group
 * of 32 output channels M_BT rows of 32 words (row r at +128 r). The words
 * are exposed per channel as int32 and as fp32; the named views (bias,
 * scale, mult, slope2) follow docs/mgk.md section "Requantisation". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "mgk_internal.h"

const char *npk_mgk_rq_form_name(npk_mgk_rq_form f)
{
    switch (f) {
    case NPK_MGK_RQ_FLOAT: return "float";
    case NPK_MGK_RQ_PACKED: return "packed";
    case NPK_MGK_RQ_TWO_SLOPE: return "two-slope";
    case NPK_MGK_RQ_FIVE_ROW: return "five-row";
    default: return "unknown";
    }
}

/* Two-row tables do not say whether row 1 is an fp32 scale or an int32
 * multiplier. Known multipliers (998, 1874) are small positive integers,
 * which read as fp32 are denormals; known scales are normal floats. Decide
 * only when every channel agrees. */
static npk_mgk_rq_form classify_two_rows(const int32_t *row1, int n)
{
    int ints = 0, floats = 0, zeros = 0;
    for (int i = 0; i < n; i++) {
        uint32_t u = (uint32_t)row1[i];
        uint32_t exp = (u >> 23) & 0xFF;
        if (u == 0)
            zeros++;
        else if (row1[i] > 0 && row1[i] < (1 << 23))
            ints++;
        else if (exp != 0 && exp != 0xFF)
            floats++;
    }
    if (ints && ints + zeros == n) return NPK_MGK_RQ_PACKED;
    if (floats && floats + zeros == n) return NPK_MGK_RQ_FLOAT;
    return NPK_MGK_RQ_UNKNOWN;
}

npk_status npk_mgk_requant_parse(const uint8_t *table, size_t len, int n_ofp, int rows,
                                 int channels, npk_mgk_requant *rq, npk_error *err)
{
    memset(rq, 0, sizeof *rq);
    if (n_ofp < 1 || n_ofp > 4096 || rows < 1 || rows > 64 || channels < 1 || channels > 32 * n_ofp)
        return npk_fail(err, NPK_E_ARG, "requant table: %d groups, %d rows, %d channels", n_ofp,
                        rows, channels);
    size_t need = (size_t)n_ofp * (size_t)rows * 128;
    if (len < need)
        return npk_fail(err, NPK_E_FORMAT, "requant table of %zu bytes, needs %zu", len, need);
    size_t n = (size_t)rows * (size_t)channels;
    rq->ints = malloc(n * sizeof *rq->ints);
    rq->floats = malloc(n * sizeof *rq->floats);
    if (!rq->ints || !rq->floats) {
        npk_mgk_requant_free(rq);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    rq->rows = rows;
    rq->channels = channels;
    for (int r = 0; r < rows; r++)
        for (int ch = 0; ch < channels; ch++) {
            const uint8_t *w = table + ((size_t)(ch / 32) * (size_t)rows + (size_t)r) * 128 +
                               (size_t)(ch % 32) * 4;
            rq->ints[(size_t)r * (size_t)channels + (size_t)ch] = (int32_t)npk_ld32le(w);
            rq->floats[(size_t)r * (size_t)channels + (size_t)ch] = npk_ldf32le(w);
        }
    const int32_t *row1 = rq->ints + channels;
    switch (rows) {
    case 2:
        rq->form = classify_two_rows(row1, channels);
        rq->form_from_values = true;
        break;
    case 3: rq->form = NPK_MGK_RQ_TWO_SLOPE; break;
    case 5: rq->form = NPK_MGK_RQ_FIVE_ROW; break;
    default: rq->form = NPK_MGK_RQ_UNKNOWN; break;
    }
    if (rq->form == NPK_MGK_RQ_FLOAT || rq->form == NPK_MGK_RQ_PACKED ||
        rq->form == NPK_MGK_RQ_TWO_SLOPE)
        rq->bias = rq->ints;
    if (rq->form == NPK_MGK_RQ_FLOAT || rq->form == NPK_MGK_RQ_TWO_SLOPE)
        rq->scale = rq->floats + channels;
    if (rq->form == NPK_MGK_RQ_PACKED) rq->mult = row1;
    if (rq->form == NPK_MGK_RQ_TWO_SLOPE) rq->slope2 = rq->floats + 2 * (size_t)channels;
    return NPK_OK;
}

npk_status npk_mgk_requant_read(const npk_mgk_model *m, const npk_mgk_conv *c, npk_mgk_requant *rq,
                                npk_error *err)
{
    memset(rq, 0, sizeof *rq);
    if (!c->requant_ok)
        return npk_fail(err, NPK_E_UNSUPPORTED, "layer %d: %s", c->id,
                        c->problem[0] ? c->problem : "no readable requant table");
    return npk_mgk_requant_parse(m->data + m->region_offset + c->requant_offset,
                                 (size_t)c->requant_bytes, c->n_ofp, c->m_bt, c->out_channels, rq,
                                 err);
}

void npk_mgk_requant_free(npk_mgk_requant *rq)
{
    free(rq->ints);
    free(rq->floats);
    memset(rq, 0, sizeof *rq);
}
