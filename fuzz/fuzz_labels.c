/* Label files (npukit/classify.h): both formats, then every class looked up
 * against class counts around the entry count, and the top K of the bytes
 * as u8 scores. Invariants: parse gives at least one entry or an error and
 * nothing; every name is a NUL-terminated string inside the copy; a lookup
 * past every rule gives NULL; the top K is sorted. */
#include <stdlib.h>
#include <string.h>

#include "npukit/classify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_labels l;
    npk_error err = {0};
    if (npk_labels_parse(data, size, &l, &err) == NPK_OK) {
        if (!l.count || l.count > NPK_LABELS_MAX_COUNT) abort();
        for (uint32_t i = 0; i < l.count; i++)
            if (strlen(l.name[i]) > NPK_LABELS_MAX_LINE) abort();
        for (int d = -1; d <= 1; d++) {
            uint32_t n = (uint32_t)((int64_t)l.count + d);
            for (uint32_t c = 0; c < n + 2 && c < 4096; c++) {
                const char *s = npk_labels_name(&l, c, n);
                if (s) (void)strlen(s);
            }
        }
        if (!l.indexed && npk_labels_name(&l, l.count + 5, 3)) abort();
        npk_labels_free(&l);
    } else if (l.count || l.mem || l.name) {
        abort(); /* a failure leaves nothing */
    }
    npk_class_score top[16];
    size_t k = npk_top_k(data, NPK_U8, size, 1.0 / 256, 0, 16, top, NULL);
    if (k != (size < 16 ? size : 16)) abort();
    for (size_t i = 1; i < k; i++)
        if (top[i].raw > top[i - 1].raw ||
            (top[i].raw == top[i - 1].raw && top[i].index < top[i - 1].index))
            abort();
    return 0;
}
