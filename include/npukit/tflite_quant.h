/* TFLite's integer arithmetic (reference kernels, gemmlowp fixed point):
 * the definitions every "exact" result in npukit refers to. Shared by the
 * interpreter and by the NPU compilers that must reproduce it. */
#ifndef NPUKIT_TFLITE_QUANT_H
#define NPUKIT_TFLITE_QUANT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* QuantizeMultiplier: real = q * 2^(shift - 31), q in [2^30, 2^31) (or 0).
 * The mantissa is rounded half away from zero (TfLiteRound). */
void npk_q_quantize_multiplier(double real, int32_t *q, int *shift);

/* SaturatingRoundingDoublingHighMul(a, b) (gemmlowp). */
int32_t npk_q_srdhm(int32_t a, int32_t b);
/* RoundingDivideByPOT(x, exponent): round half away from zero. */
int32_t npk_q_rdbpot(int32_t x, int exponent);
/* MultiplyByQuantizedMultiplier(x, q, shift): shift > 0 multiplies first. */
int32_t npk_q_mul(int32_t x, int32_t q, int shift);

/* The fused-activation clamp range for an output of the given type and
 * quantisation (activation: 0 none, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6). */
void npk_q_activation_range(int activation, int8_t type, float scale, int32_t zero_point,
                            int32_t *lo, int32_t *hi);

#ifdef __cplusplus
}
#endif
#endif
