/* RKNPU data layouts.
 *
 * Feature maps: NC1HWC2 ("planes of C2 channels"): for each batch, C1 =
 * ceil(C / C2) planes, each H x W pixels of C2 consecutive channels; the
 * last plane is zero-padded when C2 does not divide C. C2 = 8 for fp16 and
 * 16 for int8 inputs (16-byte atoms), 4 for fp32/int32 and 8 for fp16 outputs.
 *
 * Weights of a matmul B[K][N] (N kernels of K channels): groups of G kernels
 * (G = 16 fp16, 32 int8), and inside a group blocks of 32 channels, each block
 * G x 32 with the channel fastest: [N/G][K/32][G][32]. K must be a multiple of
 * 32 and N of G.
 *
 * All indices here are 0-based element indices (the public generator's
 * formulas are 1-based; the tests check these against its samples). */
#ifndef NPUKIT_RKNPU_LAYOUT_H
#define NPUKIT_RKNPU_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPK_RK_WEIGHT_KBLOCK 32 /* channels per weight block */

/* Element index of channel c, row h, column w in one NC1HWC2 batch. */
static inline size_t npk_rk_feature_index(size_t C, size_t H, size_t W, size_t C2, size_t c,
                                          size_t h, size_t w)
{
    (void)C;
    return (c / C2) * H * W * C2 + C2 * (h * W + w) + c % C2;
}

/* Element index of B[k][n] (kernel n, channel k) with K channels and G
 * kernels per group. */
static inline size_t npk_rk_weight_index(size_t K, size_t G, size_t n, size_t k)
{
    return (n / G) * G * K + (k / NPK_RK_WEIGHT_KBLOCK) * NPK_RK_WEIGHT_KBLOCK * G +
           (n % G) * NPK_RK_WEIGHT_KBLOCK + k % NPK_RK_WEIGHT_KBLOCK;
}

/* Order of the plain (host) side of a conversion. */
typedef enum npk_rk_order {
    NPK_RK_NHWC, /* channels fastest; a row-major M x K matrix is H = M, W = 1, C = K */
    NPK_RK_NCHW, /* planes of one channel */
    NPK_RK_KN,   /* weights: B[K][N], row-major (the matmul's right operand) */
    NPK_RK_NK    /* weights: W[N][K], kernel-major (convolution order) */
} npk_rk_order;

typedef struct npk_rk_feature_shape {
    size_t n, c, h, w; /* batches, channels, height, width */
    size_t c2;         /* 4, 8 or 16 */
    size_t esize;      /* bytes per element: 1, 2 or 4 */
} npk_rk_feature_shape;

/* Elements of the native (padded) buffer; false on overflow. */
bool npk_rk_feature_native_count(const npk_rk_feature_shape *s, size_t *count);
/* Check a shape (c2, esize, overflow of the sizes). */
npk_status npk_rk_feature_check(const npk_rk_feature_shape *s, npk_error *err);

/* plain (NHWC or NCHW) -> NC1HWC2, padding channels with zeros. */
npk_status npk_rk_feature_pack(const npk_rk_feature_shape *s, npk_rk_order from, const void *src,
                               void *dst, npk_error *err);
/* NC1HWC2 -> plain (the padding is dropped). */
npk_status npk_rk_feature_unpack(const npk_rk_feature_shape *s, npk_rk_order to, const void *src,
                                 void *dst, npk_error *err);

typedef struct npk_rk_weight_shape {
    size_t k, n;  /* channels (multiple of 32), kernels (multiple of group) */
    size_t group; /* kernels per group: 16 (fp16) or 32 (int8) */
    size_t esize; /* 1 or 2 */
} npk_rk_weight_shape;

npk_status npk_rk_weight_check(const npk_rk_weight_shape *s, npk_error *err);
/* plain (KN or NK) <-> packed [N/G][K/32][G][32]; both buffers K*N elements. */
npk_status npk_rk_weight_pack(const npk_rk_weight_shape *s, npk_rk_order from, const void *src,
                              void *dst, npk_error *err);
npk_status npk_rk_weight_unpack(const npk_rk_weight_shape *s, npk_rk_order to, const void *src,
                                void *dst, npk_error *err);

/* The code path of the transposing conversions ("avx2", "sse2" or
 * "portable"). npk_rk_layout_force(level) caps it, for tests and benchmarks:
 * 0 automatic, 1 at most SSE2, 2 portable C. Results are the same on every
 * path. */
const char *npk_rk_layout_path(void);
void npk_rk_layout_force(int level);

#ifdef __cplusplus
}
#endif
#endif
