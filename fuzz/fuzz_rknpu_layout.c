/* The transposing layout conversions on arbitrary shapes, buffer alignments
 * and code paths: pack then unpack must give the input back, and every
 * packed element must sit where the index formula puts it. Input: 6 bytes
 * of parameters, then element bytes (repeated to fill the matrix). */
#include <stdlib.h>
#include <string.h>

#include "npukit/rknpu_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 7) return 0;
    size_t es = 1 + (data[0] & 1), g = data[0] & 2 ? 32 : 16;
    size_t k = 32 * (1 + data[1] % 8), n = g * (1 + data[2] % 12);
    size_t poff = data[3] % 64, qoff = data[4] % 64;
    int level = data[5] % 3;
    const uint8_t *fill = data + 6;
    size_t nfill = size - 6, bytes = k * n * es;
    uint8_t *b = malloc(bytes + 64), *q = malloc(bytes + 64), *u = malloc(bytes + 64);
    if (!b || !q || !u) abort();
    uint8_t *bp = b + poff, *qp = q + qoff, *up = u + poff;
    for (size_t i = 0; i < bytes; i++) bp[i] = (uint8_t)(fill[i % nfill] + i / nfill);
    npk_rk_layout_force(level);
    npk_rk_weight_shape sh = {k, n, g, es};
    if (npk_rk_weight_pack(&sh, NPK_RK_KN, bp, qp, NULL) ||
        npk_rk_weight_unpack(&sh, NPK_RK_KN, qp, up, NULL))
        abort();
    if (memcmp(bp, up, bytes) != 0) abort();
    for (size_t kk = 0; kk < k; kk++)
        for (size_t nn = 0; nn < n; nn++)
            if (memcmp(qp + npk_rk_weight_index(k, g, nn, kk) * es, bp + (kk * n + nn) * es, es))
                abort();
    npk_rk_layout_force(0);
    free(b);
    free(q);
    free(u);
    return 0;
}
