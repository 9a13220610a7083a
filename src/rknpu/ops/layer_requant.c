/* Requantisation of a layer in the DPU: multipliers, shifts and clip
 * thresholds chosen so that the register arithmetic (as the emulator models
 * it, docs/rknpu.md "Requantisation") follows TFLite's
 * MultiplyByQuantizedMultiplier as closely as the register widths allow.
 *
 * Everything here works in the "stored" int8 domain the hardware sees: a
 * uint8 tensor is stored as u - 128 with zero point zp - 128 (Mesa's
 * convention), an int8 tensor as it is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"
#include "npukit/checked.h"
#include "npukit/tflite_quant.h"

/* (v + 2^(s-1)) >> s with floor, as OUT_CVT rounds (capture: round, not
 * truncate; ties up as modelled). */
int64_t rk_round_shift(int64_t v, unsigned s)
{
    if (!s) return v;
    if (s > 62) return 0;
    int64_t h = (int64_t)1 << (s - 1), x = v + h;
    return x >= 0 ? x >> s : -((-(x + 1)) >> s) - 1;
}

int64_t rk_floor_shift(int64_t v, unsigned s)
{
    if (!s) return v;
    if (s > 62) return v < 0 ? -1 : 0;
    return v >= 0 ? v >> s : -((-(v + 1)) >> s) - 1;
}

static int64_t sat(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The output the registers give for a (clamped) sum x of channel c. */
int32_t rk_requant_out(const npk_rk_requant *rq, int32_t a, int64_t x)
{
    int64_t y = sat(x, INT32_MIN, INT32_MAX);
    if (rq->per_channel) y = sat(rk_floor_shift(y * a, rq->mul_shift), INT32_MIN, INT32_MAX);
    int64_t o = rk_round_shift(y * (int64_t)rq->scale, rq->shift) + rq->offset;
    return (int32_t)sat(o, -128, 127);
}

/* Smallest x in [lo, hi] with f(x) >= target (f non-decreasing); hi + 1 if none. */
typedef struct thr_ctx {
    const npk_rk_requant *rq;
    int32_t a;
    bool y_domain; /* evaluate only the OUT_CVT part (x is y) */
} thr_ctx;

static int32_t eval(const thr_ctx *t, int64_t x)
{
    if (!t->y_domain) return rk_requant_out(t->rq, t->a, x);
    int64_t o = rk_round_shift(x * (int64_t)t->rq->scale, t->rq->shift) + t->rq->offset;
    return (int32_t)sat(o, -128, 127);
}

static int64_t first_at_least(const thr_ctx *t, int32_t target)
{
    int64_t lo = INT32_MIN, hi = (int64_t)INT32_MAX + 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (eval(t, mid) >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* real = mant * 2^-shift with mant in [2^14, 2^15). */
static bool split_mult(double m, uint32_t *mant, int *shift)
{
    int e;
    double f = frexp(m, &e); /* m = f * 2^e, f in [0.5, 1) */
    long q = lround(f * 32768.0);
    int s = 15 - e;
    if (q == 32768) q = 16384, s--;
    *mant = (uint32_t)q;
    *shift = s;
    return true;
}

/* A conv followed by ADD in one pass (docs/rknpu.md, "Add"): BS rounds the
 * sum to the intermediate tensor's integer steps (per channel: bias' plus a
 * rounding constant, then a[c] >> s1, from the BRDMA stream), BN scales them
 * to the output's fixed point (F fractional bits), EW adds the second input
 * through its operand conversion, OUT_CVT rounds. The intermediate is not
 * saturated to its type. */
static bool mantissa(double m, uint32_t *a, int *e)
{
    int x;
    double f = frexp(m, &x);
    long q = lround(f * 32768.0);
    int s = 15 - x;
    if (q == 32768) q = 16384, s--;
    *a = (uint32_t)q;
    *e = s;
    return s >= 0;
}

static npk_status requant_fused(const npk_rk_layer *l, rk_qparams *qp, npk_rk_requant *rq,
                                npk_error *err)
{
    uint32_t n = l->out_c;
    int32_t off = l->type == NPK_RK_LT_UINT8 ? 128 : 0;
    qp->zo = l->add_out.zero_point - off;
    qp->lo = l->act_min - off;
    qp->hi = l->act_max - off;
    qp->lower = qp->upper = false;
    rq->fused = true;
    rq->offset = qp->zo;
    double mmax = 0;
    for (uint32_t c = 0; c < n; c++) {
        double ws = l->w_scales ? l->w_scales[c] : l->w.scale;
        qp->m[c] = l->mults ? l->mults[c]
                            : l->in.scale * ws / l->out.scale; /* to the intermediate's steps */
        if (qp->m[c] > mmax) mmax = qp->m[c];
    }
    if (!(mmax > 0) || mmax >= 16384.0)
        return npk_fail(err, NPK_E_LIMIT, "fused add: convolution multiplier %g out of range",
                        mmax);
    int e;
    frexp(mmax, &e);
    int E = 15 - e;
    if (lround(ldexp(mmax, E)) > 32767) E--;
    if (E < 1 || E > 63)
        return npk_fail(err, NPK_E_LIMIT, "fused add: convolution shift %d outside 1..63", E);
    rq->mul_shift = (uint32_t)E;
    double worst = 0;
    for (uint32_t c = 0; c < n; c++) {
        long a = lround(ldexp(qp->m[c], E));
        if (a < 1) a = 1;
        qp->a[c] = (int32_t)a;
        /* floor((x + c) * a / 2^E) rounds x * a / 2^E half up when c * a = 2^(E-1). */
        qp->t_hi[c] = (int32_t)lround(ldexp(1.0, E - 1) / (double)a);
        double rel = fabs(ldexp((double)a, -E) - qp->m[c]) / qp->m[c];
        if (rel > worst) worst = rel;
    }
    uint32_t k, a2;
    int ek, e2;
    double mk = l->out.scale / l->add_out.scale, m2 = l->in2.scale / l->add_out.scale;
    if (!mantissa(mk, &k, &ek) || !mantissa(m2, &a2, &e2))
        return npk_fail(err, NPK_E_LIMIT,
                        "fused add: scale ratios %g (intermediate / output) and %g (second input "
                        "/ output) must be below 2^15",
                        mk, m2);
    int F = 12;
    if (ek < F) F = ek;
    if (e2 < F) F = e2;
    if (ek - F > 63 || e2 - F > 63)
        return npk_fail(err, NPK_E_LIMIT, "fused add: scale ratios %g and %g need shifts beyond 63",
                        mk, m2);
    rq->fused_mul = k;
    rq->fused_shift = (uint32_t)(ek - F);
    rq->ew_offset = -(l->in2.zero_point - off);
    rq->ew_scale = a2;
    rq->ew_shift = (uint32_t)(e2 - F);
    rq->scale = 1u << 14;
    rq->shift = (uint32_t)(14 + F);
    worst = fmax(worst, fabs(ldexp(k, -ek) - mk) / mk);
    rq->worst_rel = fmax(worst, fabs(ldexp(a2, -e2) - m2) / m2);
    /* The clip in EW, at multiples of 2^F whose outputs are the bounds:
     * below only at the zero point (ReLU), above anywhere (ReLU-X). */
    if (qp->lo > -128 && qp->lo != qp->zo)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "fused add with a clip from %d: only clips from the output zero point "
                        "(RELU, RELU6) or none are supported",
                        l->act_min);
    rq->ew_relu = qp->lo > -128;
    rq->ew_relux = qp->hi < 127;
    rq->ew_cmp = (int32_t)(((int64_t)qp->hi - qp->zo) * ((int64_t)1 << F));
    return NPK_OK;
}

/* Fractional bits of the output the exact mode keeps until OUT_CVT. */
#define EXACT_F 8
/* In-range values (|output - zero point| <= 257) keep |X| below 2^EXACT_X. */
#define EXACT_X 28
/* Multiplier pairs tried per channel. */
#define EXACT_SEARCH 512

/* The pair a, b <= 32767 (b <= bh) whose product is nearest T: b steps
 * down from bh through at most `window` values, a = T / b rounded. Where a
 * <= b, T = q b + r is carried from one b to the next without dividing (T
 * and the errors in units of 2^-16: T need not be an integer). Stops early
 * at an error <= target. */
#define PAIR_FRAC 16
void rk_best_pair_search(double T, int64_t bh, int32_t window, double target, int32_t *ob,
                         int32_t *oa)
{
    const int64_t Tf = llround(ldexp(T, PAIR_FRAC)), one = (int64_t)1 << PAIR_FRAC;
    int64_t best = INT64_MAX;
    target = ldexp(target, PAIR_FRAC);
    *ob = *oa = 0;
    if (T / (double)bh <= (double)bh) { /* b from bh down, a = round(T / b) */
        int64_t b = bh, B = b * one, q = Tf / B, r = Tf % B;
        for (int32_t k = 0; k < window; k++) {
            int64_t a = q + (2 * r >= B), e = r < B - r ? r : B - r;
            if (a > 32767) break;
            if (a >= 1 && e < best) {
                best = e, *ob = (int32_t)b, *oa = (int32_t)a;
                if ((double)e <= target) break;
            }
            if (b == 1) break;
            r += q * one;
            b--;
            B -= one;
            while (r >= B) r -= B, q++;
        }
    } else { /* a > b: still b from bh down (each b its nearest a), dividing */
        for (int64_t b = bh; b >= 1 && b > bh - window; b--) {
            double a = (double)(int64_t)(T / (double)b + 0.5); /* T / b > 0 */
            double e = fabs(a * (double)b - T) * (double)one;
            if (a > 32767) break;
            if (a >= 1 && e < (double)best) {
                best = (int64_t)e, *ob = (int32_t)b, *oa = (int32_t)a;
                if (e <= target) break;
            }
        }
    }
}

/* Which sign TFLite's second rounding is followed for in channel c (the
 * other sign cannot be told apart by the DPU, docs/rknpu.md), counted in
 * rq; delta: TFLite's offset in the channel. */
static int follow_sign(const npk_rk_layer *l, const rk_qparams *qp, npk_rk_requant *rq, uint32_t c,
                       double delta)
{
    int sigma = 1;
    if (l->tie_sign && l->tie_sign[c])
        sigma = l->tie_sign[c] > 0 ? 1 : -1;
    else if (qp->lo >= qp->zo)
        sigma = 1; /* negative values clip to the bound either way */
    else if (qp->hi <= qp->zo)
        sigma = -1;
    else
        sigma = qp->hi - qp->zo >= qp->zo - qp->lo ? 1 : -1;
    if (sigma < 0 && delta > 0) rq->ties_negative++;
    /* Values of the other sign the clip does not decide: TFLite's offset
     * is not followed for them. */
    bool open = sigma > 0 ? qp->lo < qp->zo : qp->hi > qp->zo;
    if (open && delta > rq->tie_open_max) rq->tie_open_max = delta;
    return sigma;
}

/* TFLite's requantisation of a sum x: MultiplyByQuantizedMultiplier, which
 * rounds twice (a rounding doubling high multiply, then a rounding shift
 * right by r). Exactly: out = floor(u + sign(u) * 2^(-r-1) + 0.5) with u = x *
 * q * 2^(shift - 31) (docs/rknpu.md, "Requantisation"). The exact mode
 * computes u + sigma * delta in fixed point with ~30-bit multipliers:
 * X = (x) * b[c] (BS), y = (X + k[c]) * a[c] >> s1 (BN) with EXACT_F
 * fractional bits, so that floor(y / 2^F + 0.5) is TFLite's result for
 * values of the chosen sign sigma. */
/* p[0..n) = v, 16 bytes a store (per-tensor layers fill thousands). */
static void fill32(int32_t *p, int32_t v, uint32_t n)
{
    const int32_t q[4] = {v, v, v, v};
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) memcpy(p + i, q, sizeof q);
    for (; i < n; i++) p[i] = v;
}

static npk_status requant_exact(const npk_rk_layer *l, rk_qparams *qp, npk_rk_requant *rq,
                                npk_error *err)
{
    uint32_t n = l->out_c;
    /* mq, xmax and delta: the per-channel block's scratch (qp_alloc) */
    double *mq = qp->scratch, *xmax = mq + n, *delta = mq + 2 * (size_t)n;
    npk_status st = NPK_OK;
    rq->exact = true;
    rq->per_channel = l->w_scales != NULL;
    rq->frac_bits = EXACT_F;
    /* S = s1 + F: the largest that keeps every channel's a[c] within int16
     * at its largest b[c]. */
    int S = 40;
    for (uint32_t c = 0; c < n; c = rk_same_run(qp->m, c, n)) { /* a multiplier again: below */
        int32_t q;
        int sh;
        npk_q_quantize_multiplier(qp->m[c], &q, &sh);
        if (q <= 0 || sh > 14) {
            st = npk_fail(err, NPK_E_LIMIT,
                          "channel %u: requantisation multiplier %g is outside what the DPU "
                          "scales by (2^-31 .. 2^15)",
                          c, qp->m[c]);
            goto out;
        }
        mq[c] = ldexp((double)q, sh - 31);
        delta[c] = sh < 0 ? ldexp(1.0, sh - 1) : 0.0; /* r = -shift >= 1 */
        /* The largest |sum| whose output is not clipped: precision matters
         * up to there. */
        xmax[c] = 257.0 / mq[c];
        if (xmax[c] < 1) xmax[c] = 1;
        double bh = fmin(32767.0, floor(ldexp(1.0, EXACT_X) / xmax[c]));
        if (bh < 1) bh = 1;
        qp->b[c] = (int32_t)bh;
        int s = (int)floor(log2(32767.0 * bh / mq[c]));
        if (s < S) S = s;
    }
    if (S < EXACT_F + 1 || S - EXACT_F > 63) {
        st = npk_fail(err, NPK_E_LIMIT,
                      "requantisation multipliers need DPU_BN_MUL_CFG shift %d: outside 1..63",
                      S - EXACT_F);
        goto out;
    }
    rq->mul_shift = (uint32_t)(S - EXACT_F);
    rq->scale = 1u << 14;
    rq->shift = 14 + EXACT_F;
    /* Clips in EW, in the output's fixed point (multiples of 2^F round to
     * exactly the bounds). */
    rq->clip_lower = qp->lo > -128;
    rq->clip_upper = qp->hi < 127;
    rq->clip_lo = rq->clip_lower ? (qp->lo - qp->zo) * (1 << EXACT_F) : 0;
    rq->clip_hi = (qp->hi - qp->zo) * (1 << EXACT_F);
    rq->offset = rq->clip_lower ? qp->lo : qp->zo;
    double worst_rel = 0, worst_abs = 0;
    /* Per tensor, one search serves every channel: it can afford more pairs. */
    int32_t window = rq->per_channel ? EXACT_SEARCH : 8 * EXACT_SEARCH, bh_prev = 0;
    const double two_s = ldexp(1.0, S); /* exact: the same value at every use */
    uint32_t rep = 0;                   /* the last channel with a multiplier of its own */
    for (uint32_t c = 0; c < n; c++) {
        if (c && qp->m[c] == qp->m[c - 1]) {
            /* Per tensor: the previous channel's pair and offset (what the
             * steps below give again), its errors already counted; without
             * tie signs, every channel of the run follows the same sign. */
            uint32_t e = l->tie_sign ? c + 1 : rk_same_run(qp->m, c, n);
            int32_t b = qp->b[c - 1], a = qp->a[c - 1], k = qp->k[c - 1];
            fill32(qp->b + c, b, e - c);
            fill32(qp->a + c, a, e - c);
            fill32(qp->k + c, k, e - c);
            if (follow_sign(l, qp, rq, c, delta[rep]) < 0 && delta[rep] > 0)
                rq->ties_negative += e - c - 1;
            c = e - 1;
            continue;
        }
        double T = ldexp(mq[c], S);
        int32_t bb = qp->b[c], ba = 0;
        if (c && mq[c] == mq[rep] && qp->b[c] == bh_prev) {
            bb = qp->b[c - 1];
            ba = qp->a[c - 1];
        } else {
            rk_best_pair(T, qp->b[c], window, ldexp(1.0, S - 22) / xmax[c], &bb, &ba);
        }
        bh_prev = qp->b[c];
        if (!ba) {
            st = npk_fail(err, NPK_E_LIMIT,
                          "channel %u: no 16-bit multiplier pair gives %g with shift %d", c, mq[c],
                          S);
            goto out;
        }
        qp->b[c] = bb;
        qp->a[c] = ba;
        window = rq->per_channel ? EXACT_SEARCH : 16 * EXACT_SEARCH;
        rep = c;
        int sigma = follow_sign(l, qp, rq, c, delta[c]);
        /* k rounded up: the DPU's value is never below TFLite's, so exact
         * half-way cases (power-of-two multipliers) round as TFLite's do. */
        double k = ceil(sigma * delta[c] * two_s / ba);
        qp->k[c] = (int32_t)k;
        /* The pair's own error moves a few sums across a rounding
         * boundary: k fitted to TFLite at every level of sign sigma. */
        if (c && qp->m[c] == qp->m[c - 1] && bb == qp->b[c - 1] && ba == qp->a[c - 1])
            qp->k[c] = qp->k[c - 1];
        else if (sigma > 0)
            qp->k[c] = rk_exact_fit_k(qp->m[c], bb, ba, qp->k[c], rq->mul_shift, EXACT_F, 1,
                                      qp->hi - qp->zo);
        else
            qp->k[c] = rk_exact_fit_k(qp->m[c], bb, ba, qp->k[c], rq->mul_shift, EXACT_F,
                                      qp->lo - qp->zo + 1, 0);
        double rel = fabs((double)ba * bb - T) / T;
        if (rel > worst_rel) worst_rel = rel;
        double ab = xmax[c] * fabs((double)ba * bb - T) / two_s + ba / two_s;
        if (ab > worst_abs) worst_abs = ab;
        if (delta[c] > rq->tie_offset_max) rq->tie_offset_max = delta[c];
    }
    rq->worst_rel = worst_rel;
    rq->worst_abs = worst_abs;
out:
    return st;
}

npk_status rk_requant_make(const npk_rk_layer *l, npk_rk_rq_mode mode, rk_qparams *qp,
                           npk_rk_requant *rq, npk_error *err)
{
    memset(rq, 0, sizeof *rq);
    uint32_t n = l->out_c;
    int32_t off = l->type == NPK_RK_LT_UINT8 ? 128 : 0;
    qp->zx = l->in.zero_point - off;
    qp->zw = l->w.zero_point - off;
    if (l->fused_add) return requant_fused(l, qp, rq, err);
    const npk_rk_lquant *outq = &l->out;
    qp->zo = outq->zero_point - off;
    qp->lo = l->act_min - off;
    qp->hi = l->act_max - off;
    rq->offset = qp->zo;
    rq->per_channel = l->w_scales != NULL;
    double mmax = 0;
    if (!l->w_scales && !l->mults) { /* per tensor: one multiplier */
        double m = l->in.scale * l->w.scale / outq->scale;
        for (uint32_t c = 0; c < n; c++) qp->m[c] = m;
        mmax = n && m > 0 ? m : 0;
    } else if (l->mults) {
        memcpy(qp->m, l->mults, n * sizeof *qp->m);
        for (uint32_t c = 0; c < n; c = rk_same_run(qp->m, c, n))
            if (qp->m[c] > mmax) mmax = qp->m[c];
    } else {
        for (uint32_t c = 0; c < n; c++) {
            qp->m[c] = l->in.scale * l->w_scales[c] / outq->scale;
            if (qp->m[c] > mmax) mmax = qp->m[c];
        }
    }
    if (!(mmax > 0) || mmax >= 32768.0)
        return npk_fail(err, NPK_E_LIMIT,
                        "requantisation multiplier %g (input scale x weight scale / output scale) "
                        "is outside what OUT_CVT can scale by (below 2^15)",
                        mmax);
    if (mode != NPK_RK_RQ_SIMPLE) return requant_exact(l, qp, rq, err);
    if (!rq->per_channel) {
        int s;
        split_mult(qp->m[0], &rq->scale, &s);
        if (s < 0 || s > 62)
            return npk_fail(err, NPK_E_LIMIT,
                            "requantisation multiplier %g needs OUT_CVT_SHIFT = %d: outside 0..62",
                            qp->m[0], s);
        rq->shift = (uint32_t)s;
        rq->worst_rel = fabs(ldexp(rq->scale, -s) - qp->m[0]) / qp->m[0];
        for (uint32_t c = 0; c < n; c++) qp->a[c] = 1;
    } else {
        /* a[c] = round(m[c] * 2^E) fills int16 for the largest channel;
         * y = floor(x * a / 2^s1) keeps F fractional bits of the output;
         * OUT_CVT rounds them away (scale 2^14, shift 14 + F). */
        int e;
        frexp(mmax, &e); /* mmax < 2^e */
        int E = 15 - e;  /* mmax * 2^E < 2^15 */
        if (lround(ldexp(mmax, E)) > 32767) E--;
        int F = 12;
        if (E < F) F = E;
        int s1 = E - F;
        if (F < 0 || s1 > 63)
            return npk_fail(err, NPK_E_LIMIT,
                            "per-channel multipliers up to %g need DPU_BN_MUL_CFG shift %d: "
                            "outside 0..63",
                            mmax, s1);
        rq->mul_shift = (uint32_t)s1;
        rq->scale = 1u << 14;
        rq->shift = (uint32_t)(14 + F);
        double worst = 0;
        for (uint32_t c = 0; c < n; c++) {
            long a = lround(ldexp(qp->m[c], E));
            if (a < 1) a = 1;
            qp->a[c] = (int32_t)a;
            double rel = fabs(ldexp((double)a, -E) - qp->m[c]) / qp->m[c];
            if (rel > worst) worst = rel;
        }
        rq->worst_rel = worst;
    }
    /* TFLite's second rounding moves values by up to 2^(-r-1) steps, which
     * the single rounding here does not follow (either sign). */
    for (uint32_t c = 0; c < n; c++) {
        if (c && qp->m[c] == qp->m[c - 1]) continue; /* the same d again */
        int32_t q;
        int sh;
        npk_q_quantize_multiplier(qp->m[c], &q, &sh);
        double d = sh < 0 ? ldexp(1.0, sh - 1) : 0.0;
        if (d > rq->tie_offset_max) rq->tie_offset_max = rq->tie_open_max = d;
    }
    /* Clip thresholds: the clamp is applied to the sum (per tensor) or to
     * y (per channel) where the output is monotonic in it, at a value whose
     * output is exactly the bound. */
    qp->lower = qp->lo > -128;
    qp->upper = qp->hi < 127;
    for (uint32_t c = 0; c < n; c++) {
        thr_ctx t = {rq, qp->a[c], false};
        if (qp->lower) {
            int64_t x = first_at_least(&t, qp->lo + 1) - 1;
            if (x < INT32_MIN / 2 || x > INT32_MAX / 2)
                return npk_fail(err, NPK_E_LIMIT,
                                "channel %u: the activation's lower bound maps to a sum of %lld, "
                                "outside the int32 the DPU adds",
                                c, (long long)x);
            qp->t_lo[c] = (int32_t)x;
        }
        if (qp->upper && !rq->per_channel) {
            int64_t x = first_at_least(&t, qp->hi);
            qp->t_hi[c] = (int32_t)sat(x, INT32_MIN, INT32_MAX);
        }
    }
    if (qp->upper && rq->per_channel) {
        thr_ctx t = {rq, 1, true};
        qp->y_hi = (int32_t)sat(first_at_least(&t, qp->hi), INT32_MIN, INT32_MAX);
    }
    return NPK_OK;
}
