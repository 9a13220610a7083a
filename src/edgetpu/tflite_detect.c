/* TFLite detection: a FlatBuffer whose file identifier (bytes 4..8) is "TFL3". */
#include <string.h>

#include "npukit/bytes.h"
#include "../core/formats.h"

bool npk_tflite_probe(const uint8_t *buf, size_t len)
{
    return len >= 8 && memcmp(buf + 4, "TFL3", 4) == 0;
}

static bool contains(const uint8_t *buf, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (buf[i] == (uint8_t)needle[0] && memcmp(buf + i, needle, n) == 0) return true;
    return false;
}

npk_status npk_tflite_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    uint32_t root = npk_ld32le(buf);
    if (root < 8 || root > len - 4)
        return npk_fail_at(err, NPK_E_FORMAT, 0, "tflite: root table offset 0x%x is out of range",
                           root);
    bool edgetpu = contains(buf, len, "edgetpu-custom-op");
    npk_sum_title(out, "TFLite model%s", edgetpu ? " with an Edge TPU custom op" : "");
    npk_sum_bool(out, "edgetpu", edgetpu);
    return NPK_OK;
}
