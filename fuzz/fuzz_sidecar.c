/* Edge TPU template sidecars (JSON): the parser (numbers, zero points,
 * base64 parameter overhead and its consistency with matrix_size) and the
 * format probe and summary `npukit info` uses. */
#include "npukit/edgetpu.h"
#include "core/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_etpu_sidecar s;
    npk_error err = {0};
    if (npk_etpu_sidecar_parse(data, size, &s, &err) == NPK_OK) {
        if (s.param_overhead_size && !s.param_overhead) __builtin_trap();
        npk_etpu_sidecar_free(&s);
    }
    if (npk_edgetpu_sidecar_probe(data, size)) {
        npk_summary sum = {0};
        npk_error_clear(&err);
        npk_edgetpu_sidecar_summarize(data, size, &sum, &err);
    }
    return 0;
}
