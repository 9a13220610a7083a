/* npk_mgk_parse: ELF image, payload container, `model` records and the map
 * of the weight region, in that order. */
#include <stdlib.h>
#include <string.h>

#include "mgk_internal.h"

npk_status npk_mgk_parse(const uint8_t *buf, size_t len, npk_mgk_model *m, npk_error *err)
{
    memset(m, 0, sizeof *m);
    m->data = buf;
    m->size = len;
    npk_status st;
    if (len < 52 + NPK_MGK_FOOTER_SIZE)
        return npk_fail_at(err, NPK_E_FORMAT, 0, "too short for an MGK file (%zu bytes)", len);
    if ((st = mgk_parse_elf(buf, len, &m->elf, err)) || (st = mgk_parse_container(m, err)) ||
        (st = mgk_parse_blob(m, err)) || (st = mgk_find_grus(m, err)) ||
        (st = mgk_find_unassigned(m, err))) {
        npk_mgk_free(m);
        return st;
    }
    return NPK_OK;
}

void npk_mgk_free(npk_mgk_model *m)
{
    if (!m) return;
    mgk_free_elf(&m->elf);
    for (size_t i = 0; i < m->nrecords; i++) {
        free(m->records[i].inputs);
        free(m->records[i].out_formats);
        free(m->records[i].out_types);
        free(m->records[i].fields);
    }
    free(m->records);
    free(m->convs);
    free(m->grus);
    free(m->versions);
    free(m->unassigned);
    memset(m, 0, sizeof *m);
}

const npk_mgk_conv *npk_mgk_find_layer(const npk_mgk_model *m, int id)
{
    for (size_t i = 0; i < m->nconvs; i++)
        if (m->convs[i].id == id) return &m->convs[i];
    return NULL;
}

const npk_mgk_record *npk_mgk_conv_record(const npk_mgk_model *m, const npk_mgk_conv *c)
{
    return c->record < m->nrecords ? &m->records[c->record] : NULL;
}
