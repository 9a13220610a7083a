/* A CPU reference for a matmul result: sums in double (exact for fp16
 * inputs up to K = 2^21 terms of 22-bit products) or int64, and per-element
 * bounds for what fp32 accumulation and the output conversion may change. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/checked.h"
#include "npukit/half.h"
#include "npukit/rknpu_device.h"

npk_status npk_rk_check_matmul(const npk_rk_run_opts *o, const void *a, const void *b,
                               const void *c, npk_rk_check *out, npk_error *err)
{
    memset(out, 0, sizeof *out);
    size_t m = o->m, k = o->k, n = o->n, mn, kn;
    if (!npk_mul_sz(m, n, &mn) || !npk_mul_sz(k, n, &kn) || mn > SIZE_MAX / sizeof(double) ||
        kn > SIZE_MAX / sizeof(double))
        return npk_fail(err, NPK_E_LIMIT, "result too large to check");
    double *ref = calloc(mn + 1, sizeof(double)), *mag = calloc(mn + 1, sizeof(double));
    double *arow = malloc((k + 1) * sizeof(double)), *bv = malloc((kn + 1) * sizeof(double));
    if (!ref || !mag || !arow || !bv) {
        free(ref), free(mag), free(arow), free(bv);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for the reference");
    }
    bool i8 = o->dtype == NPK_RK_INT8;
    const int8_t *a8 = a, *b8 = b;
    const uint16_t *a16 = a, *b16 = b;
    for (size_t i = 0; i < kn; i++) {
        bv[i] = i8 ? b8[i] : npk_f16_to_f32(b16[i]);
        if (!isfinite(bv[i]) && !out->nonfinite_b++) out->first_nonfinite_b = i;
    }
    for (size_t i = 0; i < m; i++) {
        for (size_t kk = 0; kk < k; kk++) {
            arow[kk] = i8 ? a8[i * k + kk] : npk_f16_to_f32(a16[i * k + kk]);
            if (!isfinite(arow[kk]) && !out->nonfinite_a++) out->first_nonfinite_a = i * k + kk;
        }
        double *r = ref + i * n, *g = mag + i * n;
        for (size_t kk = 0; kk < k; kk++) {
            double av = arow[kk];
            if (av == 0) continue;
            const double *br = bv + kk * n;
            for (size_t j = 0; j < n; j++) {
                double p = av * br[j];
                r[j] += p;
                g[j] += fabs(p);
            }
        }
    }
    double worst_excess = -1;
    for (size_t i = 0; i < mn; i++) {
        double got, bound;
        if (i8) {
            got = ((const int32_t *)c)[i];
            bound = 0;
        } else {
            got = o->dtype == NPK_RK_FP16_FP16 ? npk_f16_to_f32(((const uint16_t *)c)[i])
                                               : ((const float *)c)[i];
            bound = (double)(k + 2) * ldexp(1.0, -24) * mag[i];
            if (o->dtype == NPK_RK_FP16_FP16) bound += ldexp(fabs(ref[i]), -10);
        }
        if (!isfinite(ref[i]) || !isfinite(mag[i])) {
            out->unchecked++; /* NaN/inf inputs: no reference to compare with */
            continue;
        }
        if (!isfinite(got)) { /* the reference is finite: always wrong */
            if (!out->nonfinite_c++) out->first_nonfinite_c = i;
            if (!out->bad++ || worst_excess < INFINITY) {
                worst_excess = INFINITY;
                out->worst = i;
            }
            continue;
        }
        double e = fabs(got - ref[i]);
        if (e > out->max_abs) out->max_abs = e;
        if (ref[i] != 0 && e / fabs(ref[i]) > out->max_rel) out->max_rel = e / fabs(ref[i]);
        if (e > bound) {
            out->bad++;
            if (e - bound > worst_excess) {
                worst_excess = e - bound;
                out->worst = i;
            }
        }
    }
    free(ref), free(mag), free(arow), free(bv);
    return NPK_OK;
}
