/* CNN v2 reader and writer. The reader runs the validator first and fails
 * with its first error, so a parsed model always satisfies every rule; the
 * writer checks the model against the same rules and always writes the
 * u32-padded size. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/cnn2.h"
#include "npukit/file.h"

static npk_status problem_status(const npk_cnn2_problem *p)
{
    return p->check == NPK_CNN2_E_VERSION ? NPK_E_UNSUPPORTED : NPK_E_FORMAT;
}

npk_status npk_cnn2_parse(const uint8_t *buf, size_t len, npk_cnn2_model *m, npk_error *err)
{
    memset(m, 0, sizeof *m);
    npk_cnn2_report rep;
    npk_status st = npk_cnn2_validate(buf, len, &rep, err);
    if (st) {
        npk_cnn2_report_free(&rep);
        return st;
    }
    const npk_cnn2_problem *p = npk_cnn2_first_error(&rep);
    if (p) {
        st = npk_fail_at(err, problem_status(p), p->offset, "cnn2: %s", p->msg);
        npk_cnn2_report_free(&rep);
        return st;
    }
    npk_cnn2_report_free(&rep);
    /* Valid: every layer record and weight is inside buf. */
    uint32_t hs = npk_cnn2_header_size(npk_ld32le(buf + 4));
    m->version = npk_ld32le(buf + 4);
    m->num_layers = npk_ld32le(buf + 8);
    m->total_weights = npk_ld32le(buf + 12);
    m->mip_level = m->version >= 2 ? npk_ld32le(buf + 16) : 0;
    if (m->num_layers > NPK_CNN2_MAX_LAYERS)
        return npk_fail_at(err, NPK_E_LIMIT, 8, "cnn2: %u layers exceed npukit's limit of %u",
                           m->num_layers, NPK_CNN2_MAX_LAYERS);
    m->layers = calloc(m->num_layers, sizeof *m->layers);
    m->weights = malloc(m->total_weights ? (size_t)m->total_weights * 2 : 2);
    if (!m->layers || !m->weights) {
        npk_cnn2_free(m);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < m->num_layers; i++) {
        const uint8_t *r = buf + hs + (size_t)i * NPK_CNN2_LAYER_BYTES;
        npk_cnn2_layer *l = &m->layers[i];
        l->kernel_size = npk_ld32le(r);
        l->in_channels = npk_ld32le(r + 4);
        l->out_channels = npk_ld32le(r + 8);
        l->weight_offset = npk_ld32le(r + 12);
        l->weight_count = npk_ld32le(r + 16);
    }
    const uint8_t *w = buf + hs + (size_t)m->num_layers * NPK_CNN2_LAYER_BYTES;
    for (uint32_t j = 0; j < m->total_weights; j++) m->weights[j] = npk_ld16le(w + 2 * (size_t)j);
    return NPK_OK;
}

npk_status npk_cnn2_load(const char *path, npk_cnn2_model *m, npk_error *err)
{
    npk_mapped f;
    memset(m, 0, sizeof *m);
    npk_status st = npk_map_file(path, &f, err);
    if (st) return st;
    st = npk_cnn2_parse(f.data, f.size, m, err);
    npk_unmap_file(&f);
    return st;
}

void npk_cnn2_free(npk_cnn2_model *m)
{
    if (!m) return;
    free(m->layers);
    free(m->weights);
    memset(m, 0, sizeof *m);
}

npk_status npk_cnn2_check_model(const npk_cnn2_model *m, npk_error *err)
{
    if (!npk_cnn2_header_size(m->version))
        return npk_fail(err, NPK_E_ARG, "cnn2: version %u (only 1 and 2)", m->version);
    if (m->mip_level > NPK_CNN2_MAX_MIP)
        return npk_fail(err, NPK_E_ARG, "cnn2: mip_level %u is greater than 3", m->mip_level);
    if (m->version == 1 && m->mip_level != 0)
        return npk_fail(err, NPK_E_ARG, "cnn2: version 1 files cannot record mip_level %u",
                        m->mip_level);
    if (m->num_layers == 0) return npk_fail(err, NPK_E_ARG, "cnn2: no layers");
    if (m->num_layers > NPK_CNN2_MAX_LAYERS)
        return npk_fail(err, NPK_E_LIMIT, "cnn2: %u layers exceed npukit's limit of %u",
                        m->num_layers, NPK_CNN2_MAX_LAYERS);
    if (!m->layers || (m->total_weights && !m->weights))
        return npk_fail(err, NPK_E_ARG, "cnn2: model has no layer table or weights");
    uint64_t sum = 0;
    for (uint32_t i = 0; i < m->num_layers; i++) {
        const npk_cnn2_layer *l = &m->layers[i];
        uint32_t k = l->kernel_size;
        if (k == 0 || k % 2 == 0)
            return npk_fail(err, NPK_E_ARG, "cnn2: layer %u: kernel_size %u is not odd", i, k);
        if (l->in_channels == 0)
            return npk_fail(err, NPK_E_ARG, "cnn2: layer %u: in_channels is 0", i);
        if (l->out_channels == 0 || l->out_channels > NPK_CNN2_MAX_OUT)
            return npk_fail(err, NPK_E_ARG, "cnn2: layer %u: out_channels %u is outside 1..8", i,
                            l->out_channels);
        uint64_t want;
        if (!npk_mul_u64((uint64_t)l->out_channels * l->in_channels, (uint64_t)k * k, &want) ||
            want != l->weight_count)
            return npk_fail(err, NPK_E_ARG, "cnn2: layer %u: weight_count %u != out*in*k*k", i,
                            l->weight_count);
        if (l->weight_offset != sum)
            return npk_fail(err, NPK_E_ARG, "cnn2: layer %u: weight_offset %u, expected %llu", i,
                            l->weight_offset, (unsigned long long)sum);
        sum += l->weight_count;
    }
    if (sum != m->total_weights)
        return npk_fail(err, NPK_E_ARG, "cnn2: total_weights %u, layers sum to %llu",
                        m->total_weights, (unsigned long long)sum);
    return NPK_OK;
}

npk_status npk_cnn2_build(npk_cnn2_model *m, uint32_t version, uint32_t mip_level,
                          uint32_t num_layers, const npk_cnn2_shape *shapes, npk_error *err)
{
    memset(m, 0, sizeof *m);
    if (num_layers == 0 || num_layers > NPK_CNN2_MAX_LAYERS)
        return npk_fail(err, NPK_E_ARG, "cnn2: %u layers (1..%u allowed)", num_layers,
                        NPK_CNN2_MAX_LAYERS);
    m->layers = calloc(num_layers, sizeof *m->layers);
    if (!m->layers) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    m->version = version;
    m->mip_level = mip_level;
    m->num_layers = num_layers;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < num_layers; i++) {
        npk_cnn2_layer *l = &m->layers[i];
        l->kernel_size = shapes[i].kernel_size;
        l->in_channels = shapes[i].in_channels;
        l->out_channels = shapes[i].out_channels;
        uint64_t c;
        if (!npk_mul_u64((uint64_t)l->out_channels * l->in_channels,
                         (uint64_t)l->kernel_size * l->kernel_size, &c) ||
            c > UINT32_MAX || sum + c > UINT32_MAX) {
            npk_cnn2_free(m);
            return npk_fail(err, NPK_E_LIMIT, "cnn2: layer %u has too many weights", i);
        }
        l->weight_offset = (uint32_t)sum;
        l->weight_count = (uint32_t)c;
        sum += c;
    }
    m->total_weights = (uint32_t)sum;
    size_t nbytes;
    if (!npk_mul_sz((size_t)sum, 2, &nbytes) || !(m->weights = calloc(1, nbytes ? nbytes : 2))) {
        npk_cnn2_free(m);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    npk_status st = npk_cnn2_check_model(m, err);
    if (st) npk_cnn2_free(m);
    return st;
}

npk_status npk_cnn2_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err)
{
    npk_status st = npk_cnn2_check_model(m, err);
    if (st) return st;
    uint64_t size64 = npk_cnn2_padded_size(m->version, m->num_layers, m->total_weights);
    size_t size;
    if (!npk_u64_to_sz(size64, &size)) return npk_fail(err, NPK_E_LIMIT, "cnn2: file too large");
    uint8_t *b = calloc(1, size); /* the unused half of an odd count stays 0x0000 */
    if (!b) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_st32le(b, NPK_CNN2_MAGIC);
    npk_st32le(b + 4, m->version);
    npk_st32le(b + 8, m->num_layers);
    npk_st32le(b + 12, m->total_weights);
    uint32_t hs = npk_cnn2_header_size(m->version);
    if (m->version >= 2) npk_st32le(b + 16, m->mip_level);
    for (uint32_t i = 0; i < m->num_layers; i++) {
        uint8_t *r = b + hs + (size_t)i * NPK_CNN2_LAYER_BYTES;
        const npk_cnn2_layer *l = &m->layers[i];
        npk_st32le(r, l->kernel_size);
        npk_st32le(r + 4, l->in_channels);
        npk_st32le(r + 8, l->out_channels);
        npk_st32le(r + 12, l->weight_offset);
        npk_st32le(r + 16, l->weight_count);
    }
    uint8_t *w = b + hs + (size_t)m->num_layers * NPK_CNN2_LAYER_BYTES;
    for (uint32_t j = 0; j < m->total_weights; j++) npk_st16le(w + 2 * (size_t)j, m->weights[j]);
    *out = b;
    *len = size;
    return NPK_OK;
}

npk_status npk_cnn2_save(const char *path, const npk_cnn2_model *m, npk_error *err)
{
    uint8_t *b;
    size_t n;
    npk_status st = npk_cnn2_encode(m, &b, &n, err);
    if (st) return st;
    st = npk_write_file(path, b, n, err);
    free(b);
    return st;
}
