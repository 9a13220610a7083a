/* Internal: the inner loops of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * on 8-bit data, behind a small table of functions with one version per
 * instruction set: AVX2 (x86, chosen at run time), 128-bit vectors (SSE2 on
 * x86-64, NEON on little-endian AArch64) and portable C. The portable
 * version (qkern_ref.c) is the definition: every other gives the same bytes.
 *
 * Arithmetic is TFLite's (docs/tflite.md): 32-bit accumulators (wrapping,
 * like TFLite's int32 sums on every real machine), then
 * MultiplyByQuantizedMultiplier per output channel, the output zero point,
 * and the clamp of the fused activation. Multipliers are those of
 * QuantizeMultiplier: 0 <= mult <= INT32_MAX, -31 <= shift <= 30 (the SIMD
 * versions rely on mult never being INT32_MIN, the one saturating case).
 *
 * Weights are rearranged once at plan time for the vector kernels (packed
 * B, packed depthwise filters); the memory is the operator's parameters. */
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
    const uint8_t *b; /* B as stored (kernels without packed_b) */
    size_t ldb;
    const int32_t *bias;
    const int32_t *mult;
    const int32_t *shift;
    int32_t b_zero;
    int32_t out_zero, act_min, act_max;
    uint8_t *c;
    size_t ldc;
    bool is_signed; /* int8 A, B and C (else uint8) */
    /* Kernels with packed_b: B packed by npk_tfl_qpack_b with bias, mult
     * and shift (which they may read from there instead), at the panel of
     * column 0 of this call (npk_tfl_qpack_at), and work space of
     * gemm_work(k) bytes. */
    const uint8_t *bp;
    void *work;
} npk_tfl_qgemm;

/* Packed B: panels of NPK_TFL_QPANEL columns. Each panel starts with its
 * columns' requantisation constants, NPK_TFL_QC_N rows of NPK_TFL_QPANEL
 * int32 (host order; 0 for columns past n):
 *   bias, mult, mult_odd (lane 2i: mult of column 2i + 1, lane 2i + 1: 0,
 *   for 64-bit multiplies of the odd lanes), left = max(shift, 0),
 *   right = max(-shift, 0), mask = 2^right - 1, half = mask >> 1,
 * then holds for every pair of k (kp < ceil(k / 2)) the panel's columns by
 * 2 bytes:
 *   byte NPK_TFL_QPANEL_HEAD + kp * 2 * NPK_TFL_QPANEL + 2 * c + q = B[p * NPK_TFL_QPANEL + c][2 *
 * kp + q] and 0 outside B. Every vector kernel multiplies pairs of k (x86 pmaddwd, NEON umull +
 * uadalp), so one layout serves them all. */
#define NPK_TFL_QPANEL 16
enum {
    NPK_TFL_QC_BIAS,
    NPK_TFL_QC_MULT,
    NPK_TFL_QC_MULT_ODD,
    NPK_TFL_QC_LEFT,
    NPK_TFL_QC_RIGHT,
    NPK_TFL_QC_MASK,
    NPK_TFL_QC_HALF,
    NPK_TFL_QC_N
};
#define NPK_TFL_QPANEL_HEAD (NPK_TFL_QC_N * NPK_TFL_QPANEL * 4)

/* Bytes of packed B; false on overflow. */
bool npk_tfl_qpack_bytes(size_t n, size_t k, size_t *bytes);
/* Packs B (n rows of k bytes, stride ldb) with the per-column bias, mult
 * and shift of the gemm. */
void npk_tfl_qpack_b(const uint8_t *b, size_t n, size_t k, size_t ldb, const int32_t *bias,
                     const int32_t *mult, const int32_t *shift, uint8_t *packed);
/* The panel holding column j (a multiple of NPK_TFL_QPANEL). */
static inline const uint8_t *npk_tfl_qpack_at(const uint8_t *packed, size_t j, size_t k)
{
    return packed + j / NPK_TFL_QPANEL * (NPK_TFL_QPANEL_HEAD + (k + 1) / 2 * 2 * NPK_TFL_QPANEL);
}

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
    const uint8_t *packed; /* the kernel's dw_pack of these parameters, or NULL */
} npk_tfl_qdw;

/* ADD of two 8-bit tensors of the same shape (TFLite's quantised Add,
 * add.h, with add.cc's parameters): for each element
 *   a = MBQM((x1 + off1) << 20, m1, s1), b = MBQM((x2 + off2) << 20, m2, s2)
 *   out = clamp(MBQM(a + b, mo, so) + out_zero, act_min, act_max)
 * with shifts s <= 0 (MultiplyByQuantizedMultiplierSmallerThanOneExp);
 * a multiplier may be negative (SUB), never INT32_MIN. */
#define NPK_TFL_QADD_LEFT 20
typedef struct npk_tfl_qadd {
    int32_t off1, off2, m1, s1, m2, s2, mo, so;
    int32_t out_zero, act_min, act_max;
    bool is_signed;
} npk_tfl_qadd;

typedef struct npk_tfl_qkern {
    const char *name;
    bool packed_b; /* gemm reads g->bp and g->work, not g->b */
    /* Bytes of g->work a gemm call with this k needs (when packed_b);
     * SIZE_MAX when that is not representable. */
    size_t (*gemm_work)(size_t k);
    void (*gemm)(const npk_tfl_qgemm *g);
    /* Plan time: bytes of the packed depthwise parameters (0: none needed,
     * or the case is not vectorised), and filling them (d->packed unused). */
    size_t (*dw_pack_bytes)(const npk_tfl_qdw *d);
    void (*dw_pack)(const npk_tfl_qdw *d, uint8_t *packed);
    /* Output row oy of one image: in points at the image (in_h * in_w *
     * in_c bytes), out at the row (out_w * out_c bytes); acc is scratch of
     * out_c int32. */
    void (*dw_row)(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, uint8_t *out, int32_t *acc);
    /* count elements of a and b to out. */
    void (*add)(const npk_tfl_qadd *q, const uint8_t *a, const uint8_t *b, uint8_t *out,
                size_t count);
    /* The raw sums of gemm, for callers with their own output stages (the
     * RKNPU emulator's DPU): c[i * ldc + j] = sum_k A[i][k] * B[j][k],
     * wrapping modulo 2^32; reads m, n, k, a, lda, is_signed and B as gemm
     * does (bp and work, or b and ldb), nothing else. */
    void (*gemm_s32)(const npk_tfl_qgemm *g, int32_t *c, size_t ldc);
    /* gemm_s32 on A stored in blocks of 16 bytes: bytes 16j .. 16j + 15 of
     * row i at a + i * lda + j * ks (the RKNPU's NC1HWC2 cube read in place:
     * lda 16, ks the plane pitch; the last block may be partial), and each
     * row's sum of A (int8 or uint8 as is_signed, wrapping modulo 2^32) in
     * rowsum[i] when rowsum is not NULL. Same sums as gemm_s32 on the rows
     * gathered. */
    void (*gemm_s32_blocks)(const npk_tfl_qgemm *g, size_t ks, int32_t *c, size_t ldc,
                            uint32_t *rowsum);
} npk_tfl_qkern;

extern const npk_tfl_qkern npk_tfl_qkern_portable;
/* NULL where the instruction set is not compiled in. */
extern const npk_tfl_qkern *const npk_tfl_qkern_v128; /* SSE2 or NEON */
extern const npk_tfl_qkern *const npk_tfl_qkern_avx2;

/* The kernels the interpreter uses on this machine: AVX2 when the CPU has
 * it, else the 128-bit ones, else portable; npk_tfl_qkern_force caps the
 * choice (0 best, 1 at most 128-bit, 2 portable) for tests and benchmarks,
 * and so does the environment variable NPUKIT_TFL_KERNELS ("portable",
 * "v128"; the lower choice of the two wins). An interpreter keeps the
 * kernels chosen when it was made (npk_tfl_k_qkern). */
const npk_tfl_qkern *npk_tfl_qkern_get(void);
void npk_tfl_qkern_force(int level);

/* Exact scalar pieces shared by the vector versions' edges. */
uint8_t npk_tfl_qrequant(uint32_t acc, int32_t mult, int32_t shift, int32_t zero, int32_t lo,
                         int32_t hi);
/* Output channels [o0, out_c) of output pixel (oy, ox), as dw_row does. */
void npk_tfl_qdw_pixel_ref(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, int32_t ox,
                           int32_t o0, uint8_t *out_px);
/* The window of output pixel (oy, ox) for the packed dw_row loops: tp[t]
 * (t = ky * kw + kx) points at the input pixel under tap t, or at zrow (in_c
 * bytes of in_zero) where the tap falls in the padding. Inline: the vector
 * loops call it once per output pixel. */
static inline void npk_tfl_qdw_taps(const npk_tfl_qdw *d, const uint8_t *in, int32_t oy, int32_t ox,
                                    const uint8_t *zrow, const uint8_t **tp)
{
    const int32_t y0 = oy * d->sh - d->pad_h, x0 = ox * d->sw - d->pad_w;
    for (int32_t ky = 0, t = 0; ky < d->kh; ky++) {
        const int32_t y = y0 + ky * d->dh;
        for (int32_t kx = 0; kx < d->kw; kx++, t++) {
            const int32_t x = x0 + kx * d->dw;
            tp[t] = y < 0 || y >= d->in_h || x < 0 || x >= d->in_w
                        ? zrow
                        : in + ((size_t)y * d->in_w + x) * d->in_c;
        }
    }
}

#endif
