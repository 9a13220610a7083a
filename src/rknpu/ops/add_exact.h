/* The standalone ADD's exact encoding (add_exact.c). */
#ifndef NPK_RK_ADD_EXACT_H
#define NPK_RK_ADD_EXACT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rk_add_enc {
    uint32_t b1, a1, s2, c; /* BS and BN multipliers, EW operand scale, OUT_CVT scale */
    int sa, k;              /* BN shift, OUT_CVT shift */
    int32_t K;              /* BN operand (added before its multiply) */
    int32_t off;            /* OUT_CVT offset: the output zero point, or lo when clipped below */
    bool relu, relux;       /* EW clips: below at 0, above at cap */
    int32_t cap;
} rk_add_enc;

/* Stored-domain zero points and clip [lo, hi] (int8: as is; uint8: minus
 * 128). True with *out when the encoding equals TFLite's ADD for all 65,536
 * input pairs; false when none was found. */
bool rk_add_exact_find(double s1, double s2, double so, int32_t z1, int32_t z2, int32_t zo,
                       int32_t lo, int32_t hi, rk_add_enc *out);

/* The candidate multiplier pairs of a real multiplier target: the best
 * RK_ADD_CANDS values v in [2^14, 2^15) by the error of v * a / 2^e, a the
 * 15-bit mantissa of target / v rounded half up (ties: the smaller v
 * first). Returns how many (0 for a target that is not finite and > 0). */
#define RK_ADD_CANDS 6
int rk_add_best_pairs(double target, uint32_t v[RK_ADD_CANDS], uint32_t a[RK_ADD_CANDS],
                      int e[RK_ADD_CANDS]);
/* The same without the SIMD filter (what hosts without AVX2 run; tests). */
int rk_add_best_pairs_portable(double target, uint32_t v[RK_ADD_CANDS], uint32_t a[RK_ADD_CANDS],
                               int e[RK_ADD_CANDS]);

/* Forget the searches this thread has kept (a later compile searches
 * again, as a first one does: the cold-compile benchmark). */
void rk_add_exact_forget(void);

#endif
