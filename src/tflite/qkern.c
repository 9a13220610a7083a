/* Choosing the 8-bit kernels (qkern.h) and packing B for the vector ones. */
#include <string.h>

#include "core/cpu.h"
#include "npukit/checked.h"
#include "tflite/qkern.h"

bool npk_tfl_qpack_bytes(size_t n, size_t k, size_t *bytes)
{
    const size_t panels = n / NPK_TFL_QPANEL + (n % NPK_TFL_QPANEL != 0);
    const size_t k2 = k / 2 + (k % 2);
    return npk_mul_sz(panels, k2, bytes) && npk_mul_sz(*bytes, 2 * NPK_TFL_QPANEL, bytes);
}

void npk_tfl_qpack_b(const uint8_t *b, size_t n, size_t k, size_t ldb, uint8_t *packed)
{
    const size_t k2 = (k + 1) / 2;
    for (size_t j0 = 0; j0 < n; j0 += NPK_TFL_QPANEL) {
        uint8_t *p = packed + j0 / NPK_TFL_QPANEL * k2 * 2 * NPK_TFL_QPANEL;
        memset(p, 0, k2 * 2 * NPK_TFL_QPANEL);
        for (size_t c = 0; c < NPK_TFL_QPANEL && j0 + c < n; c++) {
            const uint8_t *row = b + (j0 + c) * ldb;
            for (size_t t = 0; t < k; t++) p[t / 2 * 2 * NPK_TFL_QPANEL + 2 * c + t % 2] = row[t];
        }
    }
}

static int cap;

void npk_tfl_qkern_force(int level)
{
    cap = level;
}

const npk_tfl_qkern *npk_tfl_qkern_get(void)
{
    if (cap == 0 && npk_tfl_qkern_avx2 && npk_cpu_has(NPK_CPU_AVX2)) return npk_tfl_qkern_avx2;
    if (cap <= 1 && npk_tfl_qkern_v128) return npk_tfl_qkern_v128;
    return &npk_tfl_qkern_portable;
}
