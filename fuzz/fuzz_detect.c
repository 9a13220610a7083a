/* Every probe and summary of the format table on arbitrary bytes. */
#include "npukit/detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n;
    const npk_format *f = npk_formats(&n);
    for (size_t i = 0; i < n; i++) {
        if (!f[i].probe(data, size) || !f[i].summarize) continue;
        npk_summary s = {0};
        npk_error err = {0};
        f[i].summarize(data, size, &s, &err);
    }
    return 0;
}
