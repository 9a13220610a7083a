/* MGK detection (an ELF image that ends in an 80-byte footer starting
 * "IMGK") and the one-screen summary of `npukit info`, from the real parser. */
#include <stdio.h>
#include <string.h>

#include "npukit/mgk.h"
#include "../core/formats.h"

bool npk_mgk_probe(const uint8_t *buf, size_t len)
{
    return len >= 52 + NPK_MGK_FOOTER_SIZE &&
           memcmp(buf,
                  "\x7f"
                  "ELF",
                  4) == 0 &&
           memcmp(buf + len - NPK_MGK_FOOTER_SIZE, "IMGK", 4) == 0;
}

npk_status npk_mgk_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    npk_mgk_model m;
    npk_status st = npk_mgk_parse(buf, len, &m, err);
    if (st) return st;
    size_t usable = 0, unassigned = 0, bits_mask = 0;
    for (size_t i = 0; i < m.nconvs; i++)
        if (m.convs[i].usable) {
            usable++;
            bits_mask |= 1u << m.convs[i].bits;
        }
    for (size_t i = 0; i < m.nunassigned; i++) unassigned += (size_t)m.unassigned[i].size;
    npk_sum_title(out, "MGK model, %zu convolution layers, weight region %llu bytes", m.nconvs,
                  (unsigned long long)m.region_size);
    npk_sum_hex(out, "footer_offset", m.footer_offset);
    npk_sum_hex(out, "weight_region_offset", m.region_offset);
    npk_sum_uint(out, "weight_region_size", m.region_size);
    const npk_mgk_section *model = &m.sections[m.sec_model];
    npk_sum_hex(out, "model_offset", model->offset);
    npk_sum_uint(out, "model_size", model->size);
    npk_sum_uint(out, "records", m.nrecords);
    npk_sum_uint(out, "conv_records", m.nconvs);
    if (usable != m.nconvs) npk_sum_uint(out, "conv_records_undecodable", m.nconvs - usable);
    char bits[32] = "";
    for (int b = 2; b <= 8; b += 2)
        if (bits_mask & (1u << b)) {
            size_t l = strlen(bits);
            snprintf(bits + l, sizeof bits - l, "%s%d", l ? "," : "", b);
        }
    if (bits[0]) npk_sum_str(out, "weight_bits", "%s", bits);
    if (m.ngrus) {
        size_t ok = 0;
        for (size_t i = 0; i < m.ngrus; i++) ok += m.grus[i].usable;
        npk_sum_uint(out, "gru_layers", m.ngrus);
        if (ok != m.ngrus) npk_sum_uint(out, "gru_layers_undecodable", m.ngrus - ok);
    }
    char vers[NPK_KV_STR_MAX] = "";
    for (size_t i = 0; i < m.nversions; i++) {
        const npk_mgk_version *v = &m.versions[i];
        size_t l = strlen(vers);
        if (v->has_string && l + v->string.len + 2 < sizeof vers)
            snprintf(vers + l, sizeof vers - l, "%s%.*s", l ? " " : "", (int)v->string.len,
                     v->string.s);
    }
    npk_sum_str(out, "versions", "%s", vers);
    npk_sum_uint(out, "unassigned_ranges", m.nunassigned);
    npk_sum_uint(out, "unassigned_bytes", unassigned);
    npk_sum_uint(out, "elf_sections", m.elf.nsections);
    npk_sum_uint(out, "elf_dynamic_symbols", m.elf.nsymbols);
    npk_sum_uint(out, "warnings", m.nwarnings + m.warnings_dropped);
    npk_mgk_free(&m);
    return NPK_OK;
}
