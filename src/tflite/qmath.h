/* Internal: inline forms of TFLite's integer arithmetic (tflite_quant.h has
 * the definitions and the exported functions), for the kernels' inner loops. */
#ifndef NPK_TFL_QMATH_H
#define NPK_TFL_QMATH_H

#include <stdint.h>

/* SaturatingRoundingDoublingHighMul. */
static inline int32_t npk_tfl_srdhm(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN) return INT32_MAX;
    const int64_t ab = (int64_t)a * b;
    const int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* RoundingDivideByPOT for 0 <= e <= 31. */
static inline int32_t npk_tfl_rdbpot(int32_t x, int e)
{
    const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier for -31 <= shift <= 31 (prepare checks). */
static inline int32_t npk_tfl_mbqm(int32_t x, int32_t q, int shift)
{
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return npk_tfl_rdbpot(npk_tfl_srdhm((int32_t)((uint32_t)x << left), q), right);
}

#endif
