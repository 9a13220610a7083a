/* Sign-following rounding for linear layers in the exact mode
 * (docs/rknpu.md, "Sign-following rounding").
 *
 * TFLite's double rounding adds delta = 2^(shift-1) output steps toward the
 * sign of the value before its last rounding; the DPU's exact path adds one
 * constant k[c] per channel, so one pass follows one sign. Where the clip
 * leaves both signs in range, every tile runs twice:
 *   pass 1: the offset for positive values, clipped below at the output
 *           zero point zo (and above at the layer's upper bound), written to
 *           the plan's sign scratch: A' = clamp(round(u + delta), zo, hi);
 *   pass 2: the offset for negative values, y clipped above at 0 in BN
 *           (ReLU-X, i.e. at zo), then EW adds (A' - base) * 2^F read through
 *           ERDMA and applies the layer's clip, OUT_CVT adds base (lo with a
 *           lower clip, else zo).
 * A value x > 0 has u > 0, so pass 2's own part rounds to 0 (|u - delta|
 * stays below 1/2 when it is negative: delta <= 1/4) and the sum is A'; x < 0
 * makes A' = zo and the sum pass 2's value; x = 0 gives zo from both. The
 * clip commutes with the monotone rounding at multiples of 2^F, the sum is
 * an integer count of 2^F steps added before OUT_CVT's rounding, and it
 * stays within [lo, hi]: exact, integer, never saturating. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"
#include "npukit/bytes.h"
#include "npukit/tflite_quant.h"

const char *npk_rk_rq_mode_name(npk_rk_rq_mode m)
{
    switch (m) {
    case NPK_RK_RQ_EXACT: return "exact";
    case NPK_RK_RQ_SIMPLE: return "simple";
    case NPK_RK_RQ_EXACT1: return "exact1";
    }
    return "?";
}

bool rk_sign_split_wanted(const npk_rk_layer *l, npk_rk_rq_mode mode, const npk_rk_requant *rq)
{
    /* tie_open_max > 0: some channel's TFLite offset is not followed for
     * values the clip leaves in range (both sides of the zero point open). */
    return mode == NPK_RK_RQ_EXACT && rq->exact && !rq->fused && l->type != NPK_RK_LT_FP16 &&
           rq->tie_open_max > 0;
}

void rk_sign_split_offsets(const npk_rk_layer *l, rk_qparams *qp, npk_rk_requant *rq)
{
    double two_s = ldexp(1.0, (int)(rq->mul_shift + rq->frac_bits));
    for (uint32_t c = 0; c < l->out_c; c++) {
        /* The previous channel's offsets again (per tensor). */
        if (c && qp->m[c] == qp->m[c - 1] && qp->b[c] == qp->b[c - 1] && qp->a[c] == qp->a[c - 1]) {
            qp->k[c] = qp->k[c - 1];
            qp->k2[c] = qp->k2[c - 1];
            continue;
        }
        int32_t q;
        int sh;
        npk_q_quantize_multiplier(qp->m[c], &q, &sh);
        double delta = sh < 0 ? ldexp(1.0, sh - 1) : 0.0;
        /* Rounded up, as the one-pass offsets (layer_requant.c). */
        qp->k[c] = (int32_t)ceil(delta * two_s / qp->a[c]);
        qp->k2[c] = (int32_t)ceil(-delta * two_s / qp->a[c]);
        /* Fitted to TFLite at every level of each pass's sign (layer_requant_fit.c). */
        qp->k[c] = rk_exact_fit_k(qp->m[c], qp->b[c], qp->a[c], qp->k[c], rq->mul_shift,
                                  rq->frac_bits, 1, qp->hi - qp->zo);
        qp->k2[c] = rk_exact_fit_k(qp->m[c], qp->b[c], qp->a[c], qp->k2[c], rq->mul_shift,
                                   rq->frac_bits, qp->lo - qp->zo + 1, 0);
    }
    rq->two_pass = true;
    rq->zero = qp->zo;
    rq->ties_negative = 0;
    rq->tie_open_max = 0; /* both signs followed */
}

npk_status rk_sign_split_blob(npk_rk_lplan *p, const rk_qparams *qp, uint32_t rec_n, npk_error *err)
{
    uint64_t off = (p->weight_bytes + 63) & ~(uint64_t)63;
    uint64_t total = off + (uint64_t)p->cout * rec_n;
    if (total > UINT32_MAX)
        return npk_fail(err, NPK_E_LIMIT, "weights of %llu bytes exceed the 32-bit address space",
                        (unsigned long long)total);
    uint8_t *nb = rk_blob_grow(p, total);
    if (!nb) return npk_fail(err, NPK_E_NOMEM, "out of memory for the weight buffer");
    memset(nb + p->weight_bytes, 0, (size_t)(total - p->weight_bytes));
    for (uint32_t c = 0; c < p->layer.out_c; c++) {
        npk_st32le(nb + off + (size_t)rec_n * c, (uint32_t)qp->k2[c]);
        npk_st32le(nb + off + (size_t)rec_n * c + 4, (uint32_t)qp->a[c]);
    }
    p->wblob = nb;
    p->mul2_off = off;
    p->weight_bytes = total;
    return NPK_OK;
}

void rk_sign_split_desc(const npk_rk_lplan *p, const npk_rk_ltask *t, uint32_t rec_n,
                        npk_rk_conv_desc *d)
{
    const npk_rk_requant *rq = &p->rq;
    const npk_rk_lplan_opts *o = &p->opts;
    /* The tile's place in the sign scratch: its place in the output. */
    uint32_t at = o->output_addr + (uint32_t)p->sign_off + (d->out_addr - o->output_addr);
    if (t->pass == 1) {
        /* Clip at [zo, hi] in the output's fixed point: ReLU after adding 0,
         * OUT_CVT adds zo back. */
        d->out_addr = at;
        d->ew_add = false;
        d->ew_clip = true;
        d->ew_clip_add = 0;
        d->ew_relu = true;
        d->ew_relux = rq->clip_upper;
        d->ew_relux_cmp = (uint32_t)rq->clip_hi;
        d->out_cvt_offset = rq->zero;
        return;
    }
    /* Pass 2: [k2, a] from the second NRDMA stream, y capped at 0 (zo). */
    d->bn.base_addr = o->weight_addr + (uint32_t)p->mul2_off + t->oc0 * rec_n;
    d->bn.relux = true;
    d->bn.relux_cmp = 0;
    d->ew_clip = false;
    d->ew_clip_add = 0;
    d->ew_add = true;
    d->ew_addr = at;
    d->ew_surf_atoms = d->dst_surf_stride;
    d->ew_cvt_offset = -rq->offset; /* A' - base */
    d->ew_cvt_scale = 1u << rq->frac_bits;
    d->ew_cvt_shift = 0;
    d->ew_relu = rq->clip_lower;
    d->ew_relux = rq->clip_upper;
    d->ew_relux_cmp = (uint32_t)(rq->clip_hi - rq->clip_lo);
}
