/* CNN v2 detection: the magic "CNN2" (u32 0x324E4E43 little-endian). */
#include <string.h>

#include "npukit/bytes.h"
#include "../core/formats.h"

bool npk_cnn2_probe(const uint8_t *buf, size_t len)
{
    return len >= 4 && memcmp(buf, "CNN2", 4) == 0;
}

npk_status npk_cnn2_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    if (len < 16) return npk_fail_at(err, NPK_E_FORMAT, len, "cnn2: file shorter than 16 bytes");
    uint32_t version = npk_ld32le(buf + 4), layers = npk_ld32le(buf + 8),
             total = npk_ld32le(buf + 12);
    npk_sum_title(out, "CNN v2 weights, version %u, %u layers", version, layers);
    npk_sum_uint(out, "version", version);
    npk_sum_uint(out, "num_layers", layers);
    npk_sum_uint(out, "total_weights", total);
    return NPK_OK;
}
