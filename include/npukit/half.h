/* Half-precision conversions: IEEE binary16 (f16) and bfloat16 (bf16).
 *
 * f32 -> f16/bf16 rounds to nearest, ties to even; overflow gives infinity;
 * f16 subnormals are produced and read exactly. A NaN keeps its sign and the
 * top bits of its payload and is always returned quiet (the behaviour of x86
 * F16C and Arm FCVT), so scalar and vector paths agree bit for bit. */
#ifndef NPUKIT_HALF_H
#define NPUKIT_HALF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

float npk_f16_to_f32(uint16_t h);
uint16_t npk_f32_to_f16(float f);
float npk_bf16_to_f32(uint16_t h);
uint16_t npk_f32_to_bf16(float f);

/* Bulk converters; pick F16C on x86 or NEON on AArch64 at run time when
 * available, the portable loop otherwise. Buffers must not overlap. */
void npk_f16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void npk_f32_to_f16_n(const float *src, uint16_t *dst, size_t n);
void npk_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void npk_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n);

/* Name of the bulk path in use ("f16c", "neon" or "portable"). */
const char *npk_half_path(void);
/* Force the portable path (1) or restore automatic selection (0); for tests
 * and benchmarks. */
void npk_half_force_portable(int on);

#ifdef __cplusplus
}
#endif
#endif
