/* Internal: the inner loops of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * on 8-bit data, behind a small table of functions that a SIMD version
 * (AVX2, NEON) can replace wholesale. The portable version (qkern_ref.c)
 * is the definition: any replacement must give the same bytes.
 *
 * Arithmetic is TFLite's (docs/tflite.md): 32-bit accumulators (wrapping,
 * like TFLite's int32 sums on every real machine), then
 * MultiplyByQuantizedMultiplier per output channel, the output zero point,
 * and the clamp of the fused activation. */
#ifndef NPK_TFL_QKERN_H
#define NPK_TFL_QKERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* C = requantise(A . B^T): for every row i < m and column j < n,
 *   acc  = sum_k A[i][k] * B[j][k] - b_zero * sum_k A[i][k] + bias[j]
 *   C[i][j] = clamp(MBQM(acc, mult[j], shift[j]) + out_zero, act_min, act_max)
 * A holds activations (m rows of k bytes, row stride lda), B weights (n rows
 * of k bytes, stride ldb), C the output (m rows of n bytes, stride ldc).
 * The input zero point is folded into bias by the caller (bias[j] =
 * b[j] - a_zero * sum_k B[j][k] + k * a_zero * b_zero), padding is filled
 * with a_zero, so the sums are exact. */
typedef struct npk_tfl_qgemm {
    size_t m, n, k;
    const uint8_t *a;
    size_t lda;
    const uint8_t *b;
    size_t ldb;
    const int32_t *bias;
    const int32_t *mult;
    const int32_t *shift;
    int32_t b_zero;
    int32_t out_zero, act_min, act_max;
    uint8_t *c;
    size_t ldc;
    bool is_signed; /* int8 A, B and C (else uint8) */
} npk_tfl_qgemm;

/* One output row of a depthwise convolution (NHWC, filter [1, kh, kw, oc]):
 *   acc[o] = bias[o] + sum over taps inside the input of (x - in_zero) * (w - w_zero)
 * for output channel o = ic * dm + m, then requantised like qgemm. */
typedef struct npk_tfl_qdw {
    int32_t in_h, in_w, in_c, out_w, out_c, dm;
    int32_t kh, kw, sh, sw, dh, dw, pad_h, pad_w;
    const uint8_t *w;     /* [kh][kw][out_c] */
    const int32_t *bias;  /* out_c */
    const int32_t *mult;  /* out_c */
    const int32_t *shift; /* out_c */
    int32_t in_zero, w_zero, out_zero, act_min, act_max;
    bool is_signed;
} npk_tfl_qdw;

typedef struct npk_tfl_qkern {
    const char *name;
    void (*gemm)(const npk_tfl_qgemm *g);
    /* Output row oy of one image: in points at the image (in_h * in_w *
     * in_c bytes), out at the row (out_w * out_c bytes); acc is scratch of
     * out_c int32. */
    void (*dw_row)(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, uint8_t *out, int32_t *acc);
} npk_tfl_qkern;

extern const npk_tfl_qkern npk_tfl_qkern_portable;

/* The kernels the interpreter uses on this machine. */
const npk_tfl_qkern *npk_tfl_qkern_get(void);

#endif
