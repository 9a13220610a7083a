/* Detection of the JSON sidecar files that accompany Edge TPU templates:
 * a JSON object carrying the template's input and output quantisation. */
#include <string.h>

#include "../core/formats.h"

static bool has_key(const uint8_t *buf, size_t len, const char *key)
{
    size_t n = strlen(key);
    for (size_t i = 0; i + n + 2 <= len; i++)
        if (buf[i] == '"' && memcmp(buf + i + 1, key, n) == 0 && buf[i + 1 + n] == '"') return true;
    return false;
}

bool npk_edgetpu_sidecar_probe(const uint8_t *buf, size_t len)
{
    return npk_json_probe(buf, len) && has_key(buf, len, "input_scale") &&
           has_key(buf, len, "output_scale") && has_key(buf, len, "input_zero_point");
}

npk_status npk_edgetpu_sidecar_summarize(const uint8_t *buf, size_t len, npk_summary *out,
                                         npk_error *err)
{
    (void)err;
    npk_sum_title(out, "Edge TPU template sidecar%s",
                  has_key(buf, len, "param_overhead") ? " with parameter overhead" : "");
    return NPK_OK;
}
