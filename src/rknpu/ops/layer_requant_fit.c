/* The exact mode's BN offset k fitted to TFLite at every output level
 * (issue 15). The 16-bit pair a*b misses TFLite's multiplier q*2^(sh-31)
 * by up to ~3e-8 of it: a sum whose TFLite output lies within that error
 * of a rounding boundary comes out one step off (mobilenet_v2's
 * expanded_conv_7 depthwise: sum 3159 gives 192.4999968 for TFLite's
 * 192.5000026). Both the DPU arithmetic and TFLite's are non-decreasing
 * step functions of the sum, so they agree on every sum of one sign iff
 * they change level at the same sums: k is moved until they do. */
#include <math.h>
#include <stdbool.h>

#include "layer_internal.h"
#include "npukit/tflite_quant.h"

/* The exact mode's output (before offset and clip) for sum x. */
static int64_t dpu_level(int64_t x, int32_t b, int32_t a, int64_t k, unsigned s1, unsigned f)
{
    return rk_round_shift(rk_floor_shift((x * b + k) * a, s1), f);
}

static int64_t tfl_level(int64_t x, int32_t q, int sh)
{
    if (x > INT32_MAX) x = INT32_MAX;
    if (x < INT32_MIN) x = INT32_MIN;
    return npk_q_mul((int32_t)x, q, sh);
}

/* Smallest sum whose TFLite level is >= n (from a double estimate, then
 * walked: the estimate is off by at most a few sums); *walked: whether the
 * walk found it (level >= n there, < n one below), from the levels the
 * walk computed where it can, else computed. */
static int64_t tfl_first(int64_t n, double m, int32_t q, int sh, bool *walked)
{
    double e = ceil(((double)n - 0.5) / m);
    if (e > 2147483647.0) e = 2147483647.0;
    if (e < -2147483647.0) e = -2147483647.0;
    int64_t x = (int64_t)e;
    bool below = false, above = false; /* level(x - 1) < n, level(x) >= n known */
    for (int i = 0; i < 64 && x > INT32_MIN; i++) {
        if (tfl_level(x - 1, q, sh) < n) {
            below = true;
            break;
        }
        x--;
    }
    for (int i = 0; i < 64 && x < INT32_MAX; i++) {
        if (tfl_level(x, q, sh) >= n) {
            above = true;
            break;
        }
        x++;
        below = true; /* the sum just passed was below n */
    }
    *walked = (above || tfl_level(x, q, sh) >= n) && (below || tfl_level(x - 1, q, sh) < n);
    return x;
}

/* ceil(p / d), d > 0. */
static int64_t ceil_div(int64_t p, int64_t d)
{
    int64_t q = p / d; /* truncated toward zero */
    return q + (p % d > 0);
}

/* Up to this many levels get their TFLite boundary taken once, before k
 * moves (every 8-bit range has at most 256); beyond, each step takes them
 * again. */
#define FIT_LEVELS 512

int32_t rk_exact_fit_k_search(double m, int32_t b, int32_t a, int32_t k, unsigned s1, unsigned f,
                              int32_t n_lo, int32_t n_hi)
{
    int32_t q;
    int sh;
    npk_q_quantize_multiplier(m, &q, &sh);
    if (q <= 0 || m <= 0 || n_lo > n_hi) return k;
    const double mq = ldexp((double)q, sh - 31);
    /* The sum where TFLite reaches level n, or INT64_MIN where the walk
     * did not find it (that level is skipped). */
    int64_t first[FIT_LEVELS];
    const bool kept = (int64_t)n_hi - n_lo < FIT_LEVELS;
    for (int64_t n = n_lo; kept && n <= n_hi; n++) {
        bool walked;
        int64_t t = tfl_first(n, mq, q, sh, &walked);
        first[n - n_lo] = walked ? t : INT64_MIN;
    }
    /* Where the arithmetic stays within int64 (every real layer), each
     * level's conditions are a range of k (the DPU's level does not
     * decrease with k): level(t) >= n from k_lo on, level(t - 1) < n up to
     * k_hi; k moves as below with up = k < max k_lo, down = k > min k_hi. */
    if (kept && a >= 1 && a <= 32768 && b >= -65536 && b <= 65536 && f <= 16 && s1 + f <= 50 &&
        n_lo >= -1024 && n_hi <= 1024) {
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        for (int64_t n = n_lo; n <= n_hi; n++) {
            int64_t t = first[n - n_lo];
            if (t == INT64_MIN) continue;
            /* level(x) >= n iff (x b + k) a >= v 2^s1 iff x b + k >= ceil(v 2^s1 / a) */
            int64_t v = n * ((int64_t)1 << f) - (f ? (int64_t)1 << (f - 1) : 0);
            int64_t need = ceil_div(v * ((int64_t)1 << s1), a);
            int64_t klo = need - t * b, khi = need - (t - 1) * b - 1;
            if (klo > lo) lo = klo;
            if (khi < hi) hi = khi;
        }
        int64_t kk = k;
        for (int iter = 0; iter < 64; iter++) {
            bool up = kk<lo, down = kk> hi;
            if (!up && !down) return (int32_t)kk;
            if (up && down) break;
            kk += up ? 1 : -1;
            if (kk > INT32_MAX || kk < INT32_MIN) break;
        }
        return k;
    }
    int64_t kk = k;
    for (int iter = 0; iter < 64; iter++) {
        bool up = false, down = false;
        for (int64_t n = n_lo; n <= n_hi; n++) {
            int64_t t;
            if (kept) {
                t = first[n - n_lo];
                if (t == INT64_MIN) continue;
            } else {
                bool walked;
                t = tfl_first(n, mq, q, sh, &walked);
                if (!walked) continue;
            }
            if (dpu_level(t, b, a, kk, s1, f) < n) up = true;
            if (dpu_level(t - 1, b, a, kk, s1, f) >= n) down = true;
        }
        if (!up && !down) return (int32_t)kk;
        if (up && down) break; /* no k fits: keep the rounded-up one */
        kk += up ? 1 : -1;
        if (kk > INT32_MAX || kk < INT32_MIN) break;
    }
    return k;
}
