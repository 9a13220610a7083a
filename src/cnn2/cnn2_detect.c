/* CNN v2 detection and the `npukit info` summary, from the real validator:
 * header fields, layer shapes and whether the file is valid; an invalid file
 * is still described, and the summary fails with its first problem. */
#include <stdio.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/cnn2.h"
#include "../core/formats.h"

bool npk_cnn2_probe(const uint8_t *buf, size_t len)
{
    return len >= 4 && memcmp(buf, "CNN2", 4) == 0;
}

npk_status npk_cnn2_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    npk_cnn2_report rep;
    npk_status st = npk_cnn2_validate(buf, len, &rep, err);
    if (st) return st;
    if (!rep.header_read) {
        const npk_cnn2_problem *p = npk_cnn2_first_error(&rep);
        st =
            npk_fail_at(err, p && p->check == NPK_CNN2_E_VERSION ? NPK_E_UNSUPPORTED : NPK_E_FORMAT,
                        p ? p->offset : 0, "cnn2: %s", p ? p->msg : "unreadable header");
        npk_cnn2_report_free(&rep);
        return st;
    }
    bool valid = rep.errors == 0;
    npk_sum_title(out, "CNN v2 weights, version %u, %u layer%s, %u weights, mip %u%s", rep.version,
                  rep.num_layers, rep.num_layers == 1 ? "" : "s", rep.total_weights, rep.mip_level,
                  valid ? "" : " (INVALID)");
    npk_sum_uint(out, "version", rep.version);
    npk_sum_uint(out, "num_layers", rep.num_layers);
    npk_sum_uint(out, "total_weights", rep.total_weights);
    npk_sum_uint(out, "mip_level", rep.mip_level);
    npk_sum_bool(out, "valid", valid);
    npk_sum_uint(out, "errors", rep.errors);
    npk_sum_uint(out, "warnings", rep.warnings);
    const npk_cnn2_problem *p = npk_cnn2_first_error(&rep);
    if (p)
        npk_sum_str(out, "first_error", "offset 0x%llx: %s", (unsigned long long)p->offset, p->msg);
    /* Layer shapes, as far as the table is inside the file (a few lines). */
    uint32_t hs = npk_cnn2_header_size(rep.version);
    for (uint32_t i = 0; i < rep.num_layers && i < 16; i++) {
        uint64_t off = hs + (uint64_t)i * NPK_CNN2_LAYER_BYTES;
        if (off + NPK_CNN2_LAYER_BYTES > len) break;
        const uint8_t *r = buf + off;
        char key[32];
        snprintf(key, sizeof key, "layer%u", i);
        npk_sum_str(out, key, "k=%u in=%u out=%u offset=%u count=%u", npk_ld32le(r),
                    npk_ld32le(r + 4), npk_ld32le(r + 8), npk_ld32le(r + 12), npk_ld32le(r + 16));
    }
    /* An invalid file is described (above) and fails with its first problem. */
    if (p) {
        out->malformed = true;
        st = npk_fail_at(err, NPK_E_FORMAT, p->offset, "cnn2: %s", p->msg);
    }
    npk_cnn2_report_free(&rep);
    return st;
}
