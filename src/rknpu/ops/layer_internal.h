/* Internals of the layer planner: requantisation parameters per channel. */
#ifndef NPK_RKNPU_LAYER_INTERNAL_H
#define NPK_RKNPU_LAYER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "npukit/rknpu_conv.h"
#include "npukit/rknpu_layer.h"

typedef struct rk_qparams {
    int32_t zx, zw, zo, lo, hi; /* stored domain (uint8 minus 128) */
    bool lower, upper;          /* clamps needed beyond the int8 saturation */
    double *m;                  /* real multiplier per output channel */
    int32_t *a;                 /* per-channel BN multiplier (1 per tensor) */
    int32_t *t_lo, *t_hi;       /* per channel: clamp thresholds of the sum */
    int32_t y_hi;               /* per-channel path: upper clamp of y */
    int32_t *b, *k;             /* exact mode: BS multiplier, BN offset per channel */
    int32_t *k2;                /* two passes: pass 2's BN offset (negative values) */
    int64_t *wsum;              /* per output channel: sum of its stored weights w */
    double *scratch;            /* 3 per channel for the exact search */
} rk_qparams;

/* 8-bit weights packed (b ^ flip) in one pass that also sums each kernel's
 * stored values into sums[] (layer_weights.c); every byte of the packed
 * region is written, padding as zeros. Convolutions: out_c kernels of taps x
 * in_c bytes into [cout/G][cin/32][taps][G][32]; depthwise: taps x c_real
 * bytes into [cpad/G][taps][G]. rk_pack_conv8 takes the AVX2 build where
 * the CPU has it, else _v128 (SSE2, NEON or 64-bit words); _portable: the
 * definition the vector builds follow. */
void rk_pack_conv8(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps, uint32_t cin,
                   uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w, int64_t *sums);
void rk_pack_conv8_v128(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps,
                        uint32_t cin, uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w,
                        int64_t *sums);
void rk_pack_conv8_portable(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps,
                            uint32_t cin, uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w,
                            int64_t *sums);
void rk_pack_dw8(const uint8_t *src, uint32_t c_real, size_t taps, uint32_t cpad, uint32_t G,
                 uint8_t flip, uint8_t *w, int64_t *sums);
void rk_plan_keep_layer(npk_rk_lplan *p, const npk_rk_layer *l, const npk_rk_lplan_opts *o);

/* The end of the run of channels from c whose multipliers have v[c]'s
 * bits (for the positive finite multipliers the layer check admits, the
 * same value): the first e > c with other bits, or n. Per-tensor layers
 * are one run; compared four at a time. */
static inline uint32_t rk_same_run(const double *v, uint32_t c, uint32_t n)
{
    uint64_t x, y0, y1, y2, y3;
    memcpy(&x, &v[c], 8);
    c++;
#if defined(__SSE2__)
    /* Eight at a time: equal 32-bit halves throughout, then the rest. */
    const __m128i xx = _mm_set1_epi64x((long long)x);
    for (; c + 8 <= n; c += 8) {
        const __m128i *p = (const __m128i *)(const void *)(v + c);
        __m128i e = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi32(_mm_loadu_si128(p), xx),
                                                _mm_cmpeq_epi32(_mm_loadu_si128(p + 1), xx)),
                                  _mm_and_si128(_mm_cmpeq_epi32(_mm_loadu_si128(p + 2), xx),
                                                _mm_cmpeq_epi32(_mm_loadu_si128(p + 3), xx)));
        if (_mm_movemask_epi8(e) != 0xFFFF) break;
    }
#endif
    for (; c + 4 <= n; c += 4) {
        memcpy(&y0, &v[c], 8);
        memcpy(&y1, &v[c + 1], 8);
        memcpy(&y2, &v[c + 2], 8);
        memcpy(&y3, &v[c + 3], 8);
        if ((y0 ^ x) | (y1 ^ x) | (y2 ^ x) | (y3 ^ x)) break;
    }
    for (; c < n; c++) {
        memcpy(&y0, &v[c], 8);
        if (y0 != x) break;
    }
    return c;
}

/* The exact mode's record sources per channel (bi, lo may be NULL). */
typedef struct rk_exact_src {
    const int32_t *bi, *lo, *qb, *qk, *qa;
    const int64_t *ws;
    int64_t zsum, zx;
} rk_exact_src;
/* The records of the first channels written four at a time where the host
 * has the vectors for it (layer_exact_rec.c): how many (0..n), the rest
 * for the caller's loop. */
uint32_t rk_exact_records_fast(const rk_exact_src *s, uint32_t n, uint8_t *bias, uint8_t *mul);

/* npk_rk_lplan_make_rows with the weight buffer built in wbuf when it fits
 * in wcap bytes (p->wblob_lent), else allocated (wbuf NULL: always). */
npk_status rk_lplan_make_in(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                            const uint32_t *core_rows, uint8_t *wbuf, uint64_t wcap,
                            npk_rk_lplan *p, npk_error *err);
/* The weight buffer grown to `bytes` (its contents kept): in place while
 * lent memory allows, else moved to an allocation of its own. */
uint8_t *rk_blob_grow(npk_rk_lplan *p, uint64_t bytes);

/* mode: NPK_RK_RQ_EXACT or _SIMPLE (fused adds have their own scheme). */
npk_status rk_requant_make(const npk_rk_layer *l, npk_rk_rq_mode mode, rk_qparams *qp,
                           npk_rk_requant *rq, npk_error *err);
/* The exact mode's search for the 16-bit multiplier pair b <= bh, a whose
 * product is nearest T (layer_requant.c), and the same through a cache of
 * its results (layer_requant_cache.c): a pure function of its arguments,
 * repeated for every layer and compile with the same multiplier. */
void rk_best_pair_search(double T, int64_t bh, int32_t window, double target, int32_t *ob,
                         int32_t *oa);
void rk_best_pair(double T, int64_t bh, int32_t window, double target, int32_t *ob, int32_t *oa);
/* The exact mode's BN offset k moved (from the rounded-up one) until the
 * DPU's level changes at the same sums as TFLite's for every level n in
 * [n_lo, n_hi] relative to the zero point (layer_requant_fit.c); k itself
 * when no k fits. */
int32_t rk_exact_fit_k(double m, int32_t b, int32_t a, int32_t k, unsigned s1, unsigned f,
                       int32_t n_lo, int32_t n_hi);
/* The same without the per-thread cache of its results (layer_requant_cache.c). */
int32_t rk_exact_fit_k_search(double m, int32_t b, int32_t a, int32_t k, unsigned s1, unsigned f,
                              int32_t n_lo, int32_t n_hi);
int32_t rk_requant_out(const npk_rk_requant *rq, int32_t a, int64_t x);
int64_t rk_round_shift(int64_t v, unsigned s);
int64_t rk_floor_shift(int64_t v, unsigned s);

/* Sign-following rounding (sign_split.c): whether the layer gets two
 * passes in this mode, and then both passes' BN offsets (qp->k for
 * positive values, qp->k2 for negative ones). */
bool rk_sign_split_wanted(const npk_rk_layer *l, npk_rk_rq_mode mode, const npk_rk_requant *rq);
void rk_sign_split_offsets(const npk_rk_layer *l, rk_qparams *qp, npk_rk_requant *rq);
/* Pass 2's NRDMA stream appended to the weight buffer (p->mul2_off). */
npk_status rk_sign_split_blob(npk_rk_lplan *p, const rk_qparams *qp, uint32_t rec_n,
                              npk_error *err);
/* A task descriptor turned into its pass (t->pass 1 or 2). */
void rk_sign_split_desc(const npk_rk_lplan *p, const npk_rk_ltask *t, uint32_t rec_n,
                        npk_rk_conv_desc *d);

/* MAX_POOL_2D: PPU tasks (pool_plan.c). */
npk_status rk_pool_plan(const npk_rk_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                        npk_error *err);

/* ADD: element-wise DPU tasks (add_plan.c). */
npk_status rk_add_plan(const npk_rk_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                       npk_error *err);

/* AVERAGE_POOL_2D windows beyond 31 taps per axis (pool_avg.c): pieces of
 * at most RK_AVG_PIECE_TAPS taps (their identity weights fill at most 10
 * CBUF banks), at most RK_AVG_MAX_PIECES of them per window. */
#define RK_AVG_PIECE_TAPS 320
#define RK_AVG_MAX_PIECES 64
bool rk_avg_big(const npk_rk_layer *l);
/* Pieces per axis (refusals: fp16, padding, too many pieces). */
npk_status rk_avg_pieces(const npk_rk_layer *l, uint32_t *npy, uint32_t *npx, npk_error *err);
/* Piece k (row-major) of the window: rows wy0..+wkh, columns wx0..+wkw. */
void rk_avg_piece(const npk_rk_layer *l, uint32_t npy, uint32_t npx, uint32_t k, uint32_t *wy0,
                  uint32_t *wkh, uint32_t *wx0, uint32_t *wkw);
/* The weight buffer (identity weights of kph x kpw taps, [bias', b] and
 * [0, a] records for cout channels), the DPU stages and p->rq of the
 * exact division by the window's taps. */
npk_status rk_avg_big_blob(const npk_rk_layer *l, uint32_t kph, uint32_t kpw, uint32_t cout,
                           npk_rk_lplan *p, rk_qparams *qp, npk_rk_dpu_stage *bs,
                           npk_rk_dpu_stage *bn, npk_error *err);

#endif
