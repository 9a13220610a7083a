/* An exact encoding of the standalone int8/uint8 ADD (docs/rknpu.md,
 * "Add", exact encoding): the planner searches register values for
 *   BS  X = (x1 - z1) * b1                      (shift 0)
 *   BN  Y = floor((X + K) * a1 / 2^sa)           (the pair b1*a1: ~30 bits)
 *   EW  E = (x2 - z2) * s2                       (operand conversion, shift 0)
 *   OUT_CVT round((Y + E) * c / 2^k) + zo        (s2*c: ~30 bits)
 * and proves that the outputs equal TFLite's add.cc (left shift 20, three
 * MultiplyByQuantizedMultiplierSmallerThanOneExp, each a double rounding)
 * for all 65,536 input pairs. Both sides are nondecreasing functions of a
 * sum of one term per input, so the proof works on rows: TFLite's row x1 is
 * a run of levels (tfl_rows; the columns where they start from B's line,
 * proved away from a column's edge), the registers' row must change level
 * at the same columns, which bounds BN's output Y per row (yb_row: from
 * the extremes of a few levels near the ends of the row's fractions on B's
 * line, yb_walk / walk_gather, without visiting every level), and Y
 * is nondecreasing in K, so each row bounds K from both sides (k_interval,
 * computing rows' bounds as it needs them and stopping a failing candidate
 * at its first bad row; a row that provably stays inside bounds from the
 * layer's two levels next to its start is not computed, k_near); a
 * nonempty intersection is an exact encoding.
 * test_add_exact compares the answers with a brute force over every pair. */
#include "add_exact.h"
#include "memo.h"

#include "core/cpu.h"
#include "npukit/bytes.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* TFLite's QuantizeMultiplier (double): q in [2^30, 2^31), real = q*2^(e-31). */
static void tfl_quantize(double r, int32_t *q, int *e)
{
    double f = frexp(r, e);
    int64_t v = (int64_t)llround(f * 2147483648.0);
    if (v == ((int64_t)1 << 31)) v /= 2, ++*e;
    *q = (int32_t)v;
}

static int32_t srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30);
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31)); /* truncates, as gemmlowp */
}

static int64_t floor_shift(int64_t v, int s)
{
    return v >= 0 ? v >> s : -((-v - 1) >> s) - 1;
}

static int32_t rdbpot(int32_t x, int e)
{
    int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    int32_t rem = x & mask;
    int32_t thr = (mask >> 1) + (x < 0 ? 1 : 0);
    int32_t fl = (int32_t)floor_shift((int64_t)x - rem, e); /* exact: x - rem is a multiple */
    return fl + (rem > thr ? 1 : 0);
}

typedef struct tfl_add {
    int32_t q1, q2, qo;
    int e1, e2, eo;
} tfl_add;

static int64_t sat32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}

/* The best `n` values v in [2^14, 2^15) for v * (mant of target / v),
 * by relative error: fills v[], a[], e[]. The mantissa of target / v is
 * rounded to 15 bits (half up: the value is positive), a = mant * 2^e;
 * ties in the error keep the smaller v. */
#define CANDS RK_ADD_CANDS
#define BLOCK 1024

/* 2^e for a normal e (|e| < 1000 here): the bits, as ldexp(1.0, e) without the call. */
static double pow2(int e)
{
    const uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* One value v exactly as the first scan did it: the 15-bit mantissa m and
 * shift s of target / v, and the error |v * m / 2^s - target| (exact: both
 * within a factor 2). False when s is out of the registers' range. */
static bool pair_at(double target, uint32_t v, int32_t *raw, int32_t *m, int *s, double *d)
{
    int ex;
    const double f = frexp(target / v, &ex);
    *raw = *m = (int32_t)(f * 32768.0 + 0.5);
    *s = 15 - ex;
    if (*s < 1 || *s > 63) return false; /* out of range after the adjustment too */
    *d = fabs((double)v * (double)*m * pow2(-*s) - target);
    if (*m == 32768) *m = 16384, --*s;
    return *s >= 1 && *s <= 62;
}

/* Keep v if it is among the best CANDS so far (the kept ones in order of
 * error, an equal error after the earlier v): the scan's insertion. */
typedef struct pair_list {
    double dev[CANDS]; /* absolute errors of the kept ones */
    uint32_t *v, *a;
    int *e, n;
    double target;
    uint32_t ulo[2], uhi[2]; /* values not scanned: [ulo, uhi) (mirrors, best_pairs) */
    double dmax;             /* the filter's bound before six are kept (HUGE_VAL: none) */
} pair_list;

/* Whether (d, x) comes before (d', x'): the scan's order (by error, an
 * equal error after the smaller v), whatever order the values come in. */
static bool pair_before(double d, uint32_t x, double d2, uint32_t x2)
{
    return d < d2 || (d == d2 && x < x2);
}

static void pair_offer(pair_list *l, double target, uint32_t x);

/* A value kept with its 15-bit quotient m (before the 32768 adjustment):
 * its mirror m, the value whose quotient is x with the same
 * product and error, is offered when it is among the values not scanned. */
static void pair_mirror(pair_list *l, uint32_t x, int32_t m)
{
    for (int r = 0; r < 2; r++)
        if ((uint32_t)m >= l->ulo[r] && (uint32_t)m < l->uhi[r] && (uint32_t)m != x)
            pair_offer(l, l->target, (uint32_t)m);
}

/* Keep x if it is among the best CANDS so far (by pair_before); raw is
 * its quotient before the 32768 adjustment (for its mirror). */
static void pair_insert(pair_list *l, uint32_t x, int32_t raw, int32_t m, int s, double d)
{
    if (l->n == CANDS && !pair_before(d, x, l->dev[CANDS - 1], l->v[CANDS - 1])) return;
    for (int j = 0; j < l->n; j++)
        if (l->v[j] == x) return; /* offered again as a mirror */
    int at = l->n;
    while (at > 0 && pair_before(d, x, l->dev[at - 1], l->v[at - 1]))
        at--; /* the relative error d / target orders the same */
    int last = l->n < CANDS ? l->n : CANDS - 1;
    for (int j = last; j > at; j--)
        l->dev[j] = l->dev[j - 1], l->v[j] = l->v[j - 1], l->a[j] = l->a[j - 1],
        l->e[j] = l->e[j - 1];
    l->dev[at] = d, l->v[at] = x, l->a[at] = (uint32_t)m, l->e[at] = s;
    if (l->n < CANDS) l->n++;
    pair_mirror(l, x, raw);
}

static void pair_offer(pair_list *l, double target, uint32_t x)
{
    int32_t raw, m;
    int s;
    double d;
    if (pair_at(target, x, &raw, &m, &s, &d)) pair_insert(l, x, raw, m, s, d);
}

/* Once CANDS are kept, only a v whose error is below the last kept one's
 * (dev) can enter. Over values [x0, x0 + len) where target / v has one
 * exponent ea, with N = target * 2^(15 - ea) and q = N / v in [2^14, 2^15):
 * such a v has |v * round(q) - N| < D = dev * 2^(15 - ea); when D <= 7500,
 * q lies within 7500 / 2^14 < 0.458 of the integer m = round(q), so an
 * approximate quotient q' (|q' - q| < 2^-8 below) rounds to the same
 * m, and v * m (an exact int32) lies within D of N. The filter passes every
 * v the scan would keep; the few it passes are offered with the scan's error
 * |v * m / 2^s - target| (a v whose q' rounds otherwise has an error above
 * D with either m). */
#define FILTER_D 7500.0

/* The filter's loop over values v = x0 + i, len a multiple of 8: m =
 * round(q') of nf / v, and bit i % 8 of bits[i / 8] set when v * m is in
 * (pmin, pmax); returns whether any is. Portable: the float division (an
 * error of 2^-8 here), branch-free so that the compiler vectorises it. */
typedef uint32_t (*filter_kern)(int32_t x0, int len, float nf, int32_t pmin, int32_t pmax,
                                int32_t *mv, uint8_t *bits);
static uint32_t filter_plain(int32_t x0, int len, float nf, int32_t pmin, int32_t pmax, int32_t *mv,
                             uint8_t *bits)
{
    uint8_t hit[BLOCK];
    uint32_t any = 0;
    for (int i = 0; i < len; i++) {
        const int32_t v = x0 + i;
        const int32_t m = (int32_t)(nf / (float)v + 0.5f);
        const int32_t p = v * m; /* <= 2^30 */
        mv[i] = m;
        hit[i] = (uint8_t)((p > pmin) & (p < pmax));
        any |= hit[i];
    }
    if (any)
        for (int g = 0; g < len / 8; g++) {
            unsigned b = 0;
            for (int j = 0; j < 8; j++) b |= (unsigned)hit[8 * g + j] << j;
            bits[g] = (uint8_t)b;
        }
    return any;
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
/* 8 lanes on AVX2 hosts, the quotient by a float division as the portable
 * loop (faster here than the reciprocal estimate and a Newton step): nf's
 * rounding and the division's, each 2^-24 relative, so |q' - q| < 2^15 *
 * 2^-23 = 2^-8. */
__attribute__((target("avx2"))) static uint32_t
filter_avx2(int32_t x0, int len, float nf, int32_t pmin, int32_t pmax, int32_t *mv, uint8_t *bits)
{
    const __m256 n8 = _mm256_set1_ps(nf), half = _mm256_set1_ps(0.5f);
    const __m256i lo = _mm256_set1_epi32(pmin), hi = _mm256_set1_epi32(pmax),
                  eight = _mm256_set1_epi32(8);
    __m256i v = _mm256_add_epi32(_mm256_set1_epi32(x0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    uint32_t any = 0;
    for (int i = 0; i < len; i += 8) {
        const __m256 vf = _mm256_cvtepi32_ps(v);
        const __m256i m = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_div_ps(n8, vf), half));
        const __m256i p = _mm256_mullo_epi32(v, m);
        const __m256i h = _mm256_and_si256(_mm256_cmpgt_epi32(p, lo), _mm256_cmpgt_epi32(hi, p));
        _mm256_storeu_si256((__m256i *)(void *)(mv + i), m);
        const uint32_t b = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(h));
        bits[i / 8] = (uint8_t)b;
        any |= b;
        v = _mm256_add_epi32(v, eight);
    }
    return any;
}
static filter_kern filter_fn(void)
{
    return npk_cpu_has(NPK_CPU_AVX2) ? filter_avx2 : filter_plain;
}
#else
static filter_kern filter_fn(void)
{
    return filter_plain;
}
#endif

/* The index of the lowest set bit of w != 0. */
static int lowest_bit(uint64_t w)
{
#if defined(__GNUC__)
    return __builtin_ctzll(w);
#else
    int i = 0;
    while (!(w >> i & 1)) i++;
    return i;
#endif
}

typedef enum { FILTERED, SPLIT, SINGLE } filter_res;
static filter_res pair_filter(pair_list *l, filter_kern kern, double target, uint32_t x0, int len)
{
    if (l->n < CANDS && l->dmax == HUGE_VAL) return SINGLE;
    int ea, eb;
    (void)frexp(target / x0, &ea);
    const double last = target / (x0 + (uint32_t)len - 1);
    (void)frexp(last, &eb);
    if (ea != eb) return SPLIT;
    const double dv = l->n == CANDS && l->dev[CANDS - 1] < l->dmax ? l->dev[CANDS - 1] : l->dmax;
    if (15 - ea > 62 || 15 - ea < 2 || last < DBL_MIN) return SINGLE;
    const double sc = pow2(15 - ea), N = target * sc, D = dv * sc;
    if (!(D <= FILTER_D)) return SINGLE;
    /* an integer p with |p - N| < D is in (pmin, pmax); the margin covers
     * the rounding of N -+ D (N < 2^30: an error <= 2^-22); N - D > 2^27,
     * so floor and ceil by truncation */
    const double nlo = N - D - 0x1p-12, nhi = N + D + 0x1p-12;
    const int32_t pmin = (int32_t)nlo, t = (int32_t)nhi, pmax = t + ((double)t < nhi);
    int32_t mv[BLOCK];
    uint8_t bits[BLOCK / 8 + 8];
    /* the kernel in whole groups of 8; the bits past len cleared (their
     * values may have another exponent: v m stays below 2^31) */
    const int n8 = (len + 7) & ~7;
    if (!kern((int32_t)x0, n8, (float)N, pmin, pmax, mv, bits)) return FILTERED;
    if (len & 7) bits[len / 8] &= (uint8_t)((1u << (len & 7)) - 1);
    memset(bits + n8 / 8, 0, 8); /* the last word's bytes past the block */
    const double lo = pow2(ea - 15);
    /* the few set bits, eight bytes at a time */
    for (int g = 0; g < n8 / 8; g += 8) {
        for (uint64_t word = npk_ld64le(bits + g); word; word &= word - 1) {
            const int i = 8 * g + lowest_bit(word);
            const double d = fabs((double)(x0 + (uint32_t)i) * mv[i] * lo - target);
            if (mv[i] == 32768)
                pair_insert(l, x0 + (uint32_t)i, 32768, 16384, 14 - ea, d);
            else
                pair_insert(l, x0 + (uint32_t)i, mv[i], mv[i], 15 - ea, d);
        }
    }
    return FILTERED;
}

/* Values [x, end) as the scan reaches them: the filter over the longest
 * block that qualifies (a change of exponent splits one), else one value
 * exactly. */
static void pairs_scan(pair_list *l, filter_kern kern, uint32_t x, uint32_t end)
{
    /* blocks grow as the bound tightens (a bound of the first few passes
     * many); whole blocks from the start under a bound given beforehand */
    int grow = l->dmax < HUGE_VAL ? BLOCK : 16;
    while (x < end) {
        int len = (int)(end - x < (uint32_t)grow ? end - x : (uint32_t)grow);
        filter_res r = SINGLE;
        while (len >= 8 && (r = pair_filter(l, kern, l->target, x, len)) == SPLIT)
            len = len / 2 & ~7;
        if (len >= 8 && r == FILTERED) {
            x += (uint32_t)len;
            grow = grow < BLOCK ? 2 * grow : BLOCK;
        } else {
            pair_offer(l, l->target, x);
            x++;
        }
    }
}

/* Half the scan from the symmetry of v * m: within the values whose
 * target / v has one exponent, [lo, hi) with N = target 2^(15 - e), a value
 * v and its quotient m = round(N / v) are each other's quotient when the
 * error |v m - N| is below m / 2 (>= 8192 units; the kept ones are far
 * below), with the same product and error, and the range maps onto itself
 * about sqrt(N). So the values [sqrt(N) + MIRROR_C, hi - MIRROR_E) are not
 * scanned: each one whose error is small has its quotient, at least
 * MIRROR_E / 2 - 1 above lo, in the part scanned, which offers it when kept
 * (pair_mirror). At the end, a sixth error of 4096 units or more (never
 * seen) makes it scan everything. */
#define DMAX_UNITS 32.0
#define MIRROR_C   16
#define MIRROR_E   32
static int best_pairs(filter_kern kern, double target, uint32_t v[CANDS], uint32_t a[CANDS],
                      int e[CANDS])
{
    if (!(target > 0) || !isfinite(target)) return 0;
    pair_list l = {{0}, v, a, e, 0, target, {0, 0}, {0, 0}, HUGE_VAL};
    const uint32_t lo = 1u << 14, end = 1u << 15;
    /* the values' exponent regions: [lo, vb) and [vb, end) */
    int e0, ex;
    (void)frexp(target / lo, &e0);
    /* the first value whose exponent is below e0 (end if none): target / v
     * (rounded) is nonincreasing in v, so a bisection finds it, in a
     * bracket of a few values about the real boundary target / 2^(e0 - 1)
     * when that bracket holds (else the whole range) */
    uint32_t vb = end, a0 = lo;
    const double gb = ldexp(target, 1 - e0);
    if (gb > lo + 4.0 && gb < end - 4.0) {
        const uint32_t g = (uint32_t)gb;
        if ((void)frexp(target / (g - 2), &ex), ex >= e0) a0 = g - 2;
        if ((void)frexp(target / (g + 3), &ex), ex < e0) vb = g + 3;
    }
    while (a0 + 1 < vb) {
        const uint32_t mid = a0 + (vb - a0) / 2;
        (void)frexp(target / mid, &ex);
        if (ex < e0)
            vb = mid;
        else
            a0 = mid;
    }
    const uint32_t rlo[2] = {lo, vb}, rhi[2] = {vb, end};
    double unit = 0; /* the largest 2^(15 - e) of a region with values not scanned */
    for (int r = 0; r < 2; r++) {
        const double N = ldexp(target, 15 - (e0 - r));
        const double c = floor(sqrt(N));
        if (!(c >= rlo[r] && c < rhi[r]) || 15 - (e0 - r) > 62 || 15 - (e0 - r) < 2) continue;
        const uint32_t ua = (uint32_t)c + MIRROR_C, ub = rhi[r] - MIRROR_E;
        if (ua + 64 < ub) {
            l.ulo[r] = ua, l.uhi[r] = ub;
            const double u = ldexp(1.0, 15 - (e0 - r));
            unit = u > unit ? u : unit;
        }
    }
    /* First with a fixed bound of DMAX_UNITS (of the first region's units;
     * ~20 values pass it): the values it lets through are every value with
     * a smaller error, so when six of them are kept with errors below it,
     * the list is the scan's; else again without it. */
    l.dmax = ldexp(DMAX_UNITS, e0 - 15);
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < 2; r++) {
            if (l.uhi[r] > l.ulo[r]) {
                pairs_scan(&l, kern, rlo[r], l.ulo[r]);
                pairs_scan(&l, kern, l.uhi[r], rhi[r]);
            } else {
                pairs_scan(&l, kern, rlo[r], rhi[r]);
            }
        }
        if (l.dmax == HUGE_VAL || (l.n == CANDS && l.dev[CANDS - 1] < l.dmax)) break;
        l.n = 0, l.dmax = HUGE_VAL;
    }
    if (unit > 0 && !(l.n == CANDS && l.dev[CANDS - 1] * unit < 4096.0)) {
        l.n = 0, l.ulo[0] = l.uhi[0] = l.ulo[1] = l.uhi[1] = 0, l.dmax = HUGE_VAL;
        pairs_scan(&l, kern, lo, end);
    }
    return l.n;
}

int rk_add_best_pairs(double target, uint32_t v[CANDS], uint32_t a[CANDS], int e[CANDS])
{
    return best_pairs(filter_fn(), target, v, a, e);
}

int rk_add_best_pairs_portable(double target, uint32_t v[CANDS], uint32_t a[CANDS], int e[CANDS])
{
    return best_pairs(filter_plain, target, v, a, e);
}

/* The smallest x in [a, b] with f(x) >= want (b + 1 if none), f
 * nondecreasing: a bracket grown from the guess g, then bisection. */
typedef int64_t (*mono_fn)(const void *cx, int64_t x);
static int64_t first_at_least(mono_fn f, const void *cx, int64_t want, int64_t a, int64_t b,
                              int64_t g)
{
    if (a > b) return b + 1;
    g = g < a ? a : g > b ? b : g;
    int64_t lo, hi, step = 1; /* f(lo) < want or lo = a - 1; f(hi) >= want or hi = b + 1 */
    if (f(cx, g) >= want) {
        for (hi = g;; step *= 2) {
            lo = hi - step;
            if (lo < a) {
                lo = a - 1;
                break;
            }
            if (f(cx, lo) < want) break;
            hi = lo;
        }
    } else {
        for (lo = g;; step *= 2) {
            hi = lo + step;
            if (hi > b) {
                hi = b + 1;
                break;
            }
            if (f(cx, hi) >= want) break;
            lo = hi;
        }
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (f(cx, mid) >= want)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* TFLite's clamped output from the sum T of the two per-input terms. */
typedef struct tfl_out_cx {
    const tfl_add *t;
    int32_t zo, lo, hi;
} tfl_out_cx;

static int64_t tfl_out(const void *p, int64_t T)
{
    const tfl_out_cx *c = p;
    int64_t r = (int64_t)rdbpot(srdhm((int32_t)T, c->t->qo), -c->t->eo) + c->zo;
    r = r < c->lo ? c->lo : r > c->hi ? c->hi : r;
    return r > 127 ? 127 : r < -128 ? -128 : r;
}

/* The modelled registers' output from the sum S = Y + E (saturated). */
static int64_t hw_out(const void *p, int64_t S)
{
    const rk_add_enc *h = p;
    S = sat32(S);
    if (h->relu && S < 0) S = 0;
    if (h->relux && S > h->cap) S = h->cap;
    int64_t r = floor_shift(S * h->c + ((int64_t)1 << (h->k - 1)), h->k) + h->off;
    return r > 127 ? 127 : r < -128 ? -128 : r;
}

/* BN's output Y for one row's X as a function of K. */
typedef struct hw_y_cx {
    const rk_add_enc *h;
    int64_t X;
} hw_y_cx;

static int64_t hw_y(const void *p, int64_t K)
{
    const hw_y_cx *c = p;
    return sat32(floor_shift(sat32(c->X + K) * c->h->a1, c->h->sa));
}

#define NO_SUM ((int64_t)1 << 60) /* a threshold no sum reaches (+) or every sum does (-) */

/* TFLite's side of a layer, computed once for all candidates. Row x1,
 * column x2; the output is a nondecreasing function of A[x1] + B[x2], so
 * each row is runs of levels: the row starts at level wmin, ends at wmax,
 * and reaches level w (wmin < w <= wmax) first at column p(x1, w). The
 * columns are written only for the rows that need them (tfl_row_cols):
 * the others are bounded from the levels sorted by their position on B's
 * line (yb_walk). */
#define WALK_NB    256 /* buckets of the levels' fractions */
#define WALK_C     4   /* levels kept per row and end (walk_gather) */
#define WALK_CROWD 8   /* more levels in one bucket: no walk (tfl_rows_fill) */
typedef struct tfl_rows {
    int16_t wmin[256], wmax[256];
    uint32_t at[257];    /* row x1's p values: p[at[x1] + w - wmin - 1] */
    uint8_t have_p[256]; /* rows whose p values are written */
    int32_t A[256], B[256];
    int64_t tF[257]; /* tF[w - w0]: the smallest sum at level w (w0 < w <= w1) */
    int32_t tB[257]; /* tF - B[0] */
    int w0, w1;
    bool line; /* the float row kernel applies (inv, E) */
    float inv, E;
    /* yb_walk's model: B[x] within dev of B[0] + x / invd (reals), a level
     * whose column position mu = (tF - A - B[0]) invd has a fraction in
     * (eps, 1 - eps) starts at column floor(mu) + 1; the levels sorted by
     * the fraction phi of th = (tF - B[0]) invd, first[k] the first with
     * phi >= k / WALK_NB */
    bool walk;
    double invd, eps;
    double th[257];    /* th[w - w0] */
    double phi_s[256]; /* sorted */
    int16_t w_s[256];  /* their levels */
    int16_t first[WALK_NB + 1];
    /* per row, what yb_walk reaches whatever the EW/OUT_CVT pair
     * (walk_gather): the levels taken down from f = 1 [0] and up from f = 0
     * [1] with their columns, and the fraction of the first not taken */
    uint8_t wr_state[256]; /* 0: not gathered, 1: gathered, 2: too many (walk) */
    uint8_t wr_n[256][2];
    int16_t wr_w[256][2][WALK_C];
    uint8_t wr_p[256][2][WALK_C];
    double wr_f[256][2];
    /* per row, the fractions of the levels next to its start in the sorted
     * order, whether in the row or not (walk_near): every level of the row
     * has f in [near_f[1], near_f[0]]; near_ok when all are proved then */
    double near_sig[256], near_f[256][2];
    uint8_t near_ok[256];
    uint8_t p[256 * 256]; /* 1..255 */
} tfl_rows;

/* A row's columns from B's line instead of a walk over B: with inv > 0 a
 * float and B[x] within dev of B[0] + x / inv (reals), the first column
 * whose B reaches need is ceil(mu) for the real mu = (need - B[0]) * inv
 * whenever mu is farther than dev * inv from an integer; the float mu' of
 * the loop below is within 2^-14 of mu (mu < 2^8 + 1, three roundings of
 * 2^-24), so a fraction of mu' in (E, 1 - E), E = dev * inv + 2^-14 and a
 * margin, proves p = trunc(mu') + 1. The loop writes that for every level
 * (t[i] = tF - B[0] > A, so mu' > 0 and truncation is floor), 0 for a
 * level not proved, and returns whether there was one; the caller finds
 * those columns exactly. Portable, and compiled for AVX2 where the host has it. */
typedef bool (*cols_kern)(const int32_t *t, int n, int32_t A, float inv, float E, uint8_t *p);
#define COLS_BODY                                                                                  \
    int32_t open = 0;                                                                              \
    for (int i = 0; i < n; i++) {                                                                  \
        const float mu = (float)(t[i] - A) * inv;                                                  \
        const int32_t j = (int32_t)mu;                                                             \
        const float f = mu - (float)j;                                                             \
        const int32_t o = (f <= E) | (f >= 1.0f - E);                                              \
        open |= o;                                                                                 \
        p[i] = (uint8_t)((j + 1) & (o - 1)); /* 0: not proved */                                   \
    }                                                                                              \
    return open != 0;
static bool cols_plain(const int32_t *t, int n, int32_t A, float inv, float E, uint8_t *p)
{
    COLS_BODY
}
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
__attribute__((target("avx2"))) static bool cols_avx2(const int32_t *t, int n, int32_t A, float inv,
                                                      float E, uint8_t *p)
{
    COLS_BODY
}
static cols_kern cols_fn(void)
{
    return npk_cpu_has(NPK_CPU_AVX2) ? cols_avx2 : cols_plain;
}
#else
static cols_kern cols_fn(void)
{
    return cols_plain;
}
#endif

static void tfl_rows_fill(const tfl_add *t, int32_t z1, int32_t z2, int32_t zo, int32_t lo,
                          int32_t hi, tfl_rows *r)
{
    int32_t *A = r->A, *B = r->B;
    for (int x = 0; x < 256; x++) {
        A[x] = rdbpot(srdhm((x - 128 - z1) * (1 << 20), t->q1), -t->e1);
        B[x] = rdbpot(srdhm((x - 128 - z2) * (1 << 20), t->q2), -t->e2);
    }
    const tfl_out_cx cx = {t, zo, lo, hi};
    const int64_t Tmin = (int64_t)A[0] + B[0], Tmax = (int64_t)A[255] + B[255];
    const int w0 = (int)tfl_out(&cx, Tmin), w1 = (int)tfl_out(&cx, Tmax);
    r->w0 = w0, r->w1 = w1;
    /* tF[w - w0]: the smallest sum at level w (w0 < w <= w1). Between w0
     * and w1 the clamps do not act (lo <= w0 < w <= w1 <= hi), so tF(w) is
     * the smallest T with rdbpot(srdhm(T)) >= v = w - zo: srdhm(T) >= xs,
     * xs the smallest x rounding to v (half of a step below v 2^e, rounded
     * away from zero: one more when negative). For qo > 0, srdhm(T) >= xs
     * exactly when T qo >= xs 2^31 - 2^30 (either sign of the product: its
     * nudge and truncation give the same bound), so T is that bound's
     * ceiling over qo, kept in (tF(w - 1), Tmax] (srdhm is nondecreasing in
     * T; an xs beyond int32 is never or always reached). */
    int64_t *tF = r->tF;
    const int e = -t->eo;
    const int64_t qo = t->qo;
    int64_t prev = Tmin;
    for (int w = w0 + 1; w <= w1; w++) {
        const int64_t v = (int64_t)w - zo;
        int64_t xs = e ? v * ((int64_t)1 << e) - ((int64_t)1 << (e - 1)) : v;
        xs += e && xs < 0 ? 1 : 0;
        int64_t g;
        if (xs > INT32_MAX)
            g = Tmax;
        else if (xs <= INT32_MIN)
            g = prev + 1;
        else {
            const int64_t N = xs * ((int64_t)1 << 31) - ((int64_t)1 << 30);
            g = N / qo + (N % qo > 0);
            g = g < prev + 1 ? prev + 1 : g > Tmax ? Tmax : g;
        }
        if (prev + 1 > Tmax) g = prev + 1;
        tF[w - w0] = prev = g;
    }
    /* B's line for the row kernel: the slope's reciprocal as a float, the
     * largest distance of B from the line, and the bound E (no line when B
     * is too far from it to prove much: every row walks) */
    const float inv = B[255] > B[0] ? (float)(255.0 / ((double)B[255] - B[0])) : 0.0f;
    const double invd = B[255] > B[0] ? 255.0 / ((double)B[255] - B[0]) : 0.0;
    /* (the lines' points by a product with the slope: a relative error
     * of 2^-52, far below the margins of E and eps) */
    double dev = 0, devd = 0;
    const double sl = inv > 0 ? 1.0 / (double)inv : 0, sld = invd > 0 ? 1.0 / invd : 0;
    for (int x = 0; x < 256 && inv > 0; x++) {
        const double d = fabs((double)B[x] - B[0] - x * sl);
        dev = d > dev ? d : dev;
        const double dd = fabs((double)B[x] - B[0] - x * sld);
        devd = dd > devd ? dd : devd;
    }
    const double Ed = dev * inv + 0x1p-14 + 0x1p-16;
    r->line = inv > 0 && Ed < 0.25;
    r->inv = inv, r->E = (float)Ed;
    /* the thresholds less B[0] (int32: |A|, |B| < 2^28 by add.cc's shift 20) */
    for (int w = w0 + 1; w <= w1; w++) r->tB[w - w0] = (int32_t)(tF[w - w0] - B[0]);
    /* a row's first and last levels from the thresholds: the level at a
     * sum T is w0 and one per threshold tF <= T; A is nondecreasing, so the
     * counts only grow from row to row */
    uint32_t n = 0;
    int a = w0, b = w0;
    for (int x1 = 0; x1 < 256; x1++) {
        while (a < w1 && tF[a + 1 - w0] <= (int64_t)A[x1] + B[0]) a++;
        while (b < w1 && tF[b + 1 - w0] <= (int64_t)A[x1] + B[255]) b++;
        r->wmin[x1] = (int16_t)a, r->wmax[x1] = (int16_t)b, r->at[x1] = n;
        n += (uint32_t)(b - a);
    }
    r->at[256] = n;
    memset(r->have_p, 0, sizeof r->have_p);
    memset(r->wr_state, 0, sizeof r->wr_state);
    /* the walk's table: each level's position th on the line, sorted by
     * its fraction (a counting sort by bucket, then insertion within) */
    r->invd = invd, r->eps = devd * invd + 0x1p-20;
    const int nl = w1 - w0;
    r->walk = invd > 0 && r->eps < 0.25 && nl > 0;
    if (!r->walk) return;
    int16_t cnt[WALK_NB + 1] = {0};
    int16_t bk[256];
    double ph[256];
    for (int i = 0; i < nl; i++) {
        const double th = (double)r->tB[i + 1] * invd;
        r->th[i + 1] = th;
        ph[i] = th - floor(th);
        int k = (int)(ph[i] * WALK_NB);
        k = k < 0 ? 0 : k >= WALK_NB ? WALK_NB - 1 : k;
        bk[i] = (int16_t)k;
        cnt[k + 1]++;
    }
    /* levels crowding one bucket (an output step a simple multiple of an
     * input's: every level at one of a few fractions) would send every
     * walk past all of them: the layer takes the columns */
    int most = 0;
    for (int k = 1; k <= WALK_NB; k++) most = cnt[k] > most ? cnt[k] : most;
    if (most > WALK_CROWD) {
        r->walk = false;
        return;
    }
    for (int k = 0; k < WALK_NB; k++) cnt[k + 1] = (int16_t)(cnt[k + 1] + cnt[k]);
    memcpy(r->first, cnt, sizeof r->first);
    for (int i = 0; i < nl; i++) {
        const int k = bk[i];
        int j = cnt[k]++;
        while (j > r->first[k] && r->phi_s[j - 1] > ph[i]) {
            r->phi_s[j] = r->phi_s[j - 1], r->w_s[j] = r->w_s[j - 1];
            j--;
        }
        r->phi_s[j] = ph[i], r->w_s[j] = (int16_t)(w0 + 1 + i);
    }
}

/* Row x1's columns p(x1, w), written once when a row needs them. */
static const uint8_t *tfl_row_cols(tfl_rows *r, int x1)
{
    uint8_t *p = r->p + r->at[x1];
    if (r->have_p[x1]) return p;
    r->have_p[x1] = 1;
    const int32_t *A = r->A, *B = r->B;
    const int64_t *tF = r->tF;
    const int w0 = r->w0, a = r->wmin[x1], b = r->wmax[x1];
    if (r->line) {
        if (!cols_fn()(r->tB + (a + 1 - w0), b - a, A[x1], r->inv, r->E, p)) return p;
        /* a level or a few near a column's edge (0): the first column
         * whose B reaches it, from the level before's (p is
         * nondecreasing; B[0] < need <= B[255]) */
        for (int i = 0; i < b - a; i++) {
            if (p[i]) continue;
            const int64_t need = tF[a + 1 + i - w0] - A[x1];
            int j = i > 0 ? p[i - 1] : 1;
            while (B[j] < need) j++;
            p[i] = (uint8_t)j;
        }
        return p;
    }
    int j = 0;
    uint8_t *q = p;
    for (int w = a + 1; w <= b; w++) {
        const int64_t need = tF[w - w0] - A[x1];
        while (B[j] < need) j++; /* stops at 255 at the latest: B[255] >= need, w <= b */
        *q++ = (uint8_t)j;
    }
    return p;
}

/* The largest and smallest t[i] - s * p[i] over i < n (INT32_MIN and
 * INT32_MAX for none): y_bounds' inner loop over a row's levels, each
 * value within int32. Portable, and compiled for AVX2 where the host has
 * it (8 lanes with vpmulld; the same integers). */
typedef void (*range_kern)(const int32_t *t, const uint8_t *p, int n, int32_t s, int32_t *mx,
                           int32_t *mn);
#define RANGE_BODY                                                                                 \
    int32_t hi = INT32_MIN, lo = INT32_MAX;                                                        \
    for (int i = 0; i < n; i++) {                                                                  \
        const int32_t v = t[i] - s * (int32_t)p[i];                                                \
        hi = v > hi ? v : hi;                                                                      \
        lo = v < lo ? v : lo;                                                                      \
    }                                                                                              \
    *mx = hi, *mn = lo;
static void range_plain(const int32_t *t, const uint8_t *p, int n, int32_t s, int32_t *mx,
                        int32_t *mn)
{
    RANGE_BODY
}
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
__attribute__((target("avx2"))) static void range_avx2(const int32_t *t, const uint8_t *p, int n,
                                                       int32_t s, int32_t *mx, int32_t *mn)
{
    RANGE_BODY
}
static range_kern range_fn(void)
{
    return npk_cpu_has(NPK_CPU_AVX2) ? range_avx2 : range_plain;
}
#else
static range_kern range_fn(void)
{
    return range_plain;
}
#endif

/* floor(n / d) for d > 0 */
static int64_t floor_div(int64_t n, int64_t d)
{
    const int64_t q = n / d;
    return q - (n % d != 0 && n < 0);
}

/* An EW/OUT_CVT pair's thresholds for the rows' bounds (yb_row). */
typedef struct yb_ctx {
    int64_t tG[257]; /* tG[w + 128] for w in -127..127 */
    int32_t t32[257];
    int16_t far[258];
    int64_t s2, E0;
    range_kern range;
    bool walk;         /* yb_walk applies */
    bool t32_done;     /* t32, far computed (yb_t32) */
    double Tmax, Tmin; /* the extremes of tG(w) - s2 th(w) over the levels */
} yb_ctx;

static void yb_prep(const rk_add_enc *h, int32_t z2, const tfl_rows *r, yb_ctx *c)
{
    int64_t *tG = c->tG;
    tG[0] = -NO_SUM;  /* the ends are never a row's bound, but the int32 copy */
    tG[256] = NO_SUM; /* below reads them */
    /* Between the ends (gmin < w <= gmax) the smallest S at level w is
     * unclipped and unsaturated (a clip below puts gmin at S = 0, one
     * above gmax at the cap), so it is the smallest S with S c + 2^(k-1)
     * >= (w - off) 2^k: S = ceil(u 2^(k-1) / c) for the odd u = 2 (w - off)
     * - 1, with 2^(k-1) = Q c + R, u Q + ceil(u R / c) (|u| < 2^9, Q <
     * 2^48: within int64). */
    const int64_t gmin = hw_out(h, INT32_MIN), gmax = hw_out(h, INT32_MAX);
    const int64_t half = (int64_t)1 << (h->k - 1), cc = h->c, Q = half / cc, R = half % cc;
    int64_t q = 0, rem = 0; /* ceil(u R / c) = q with u R = q c - rem, 0 <= rem < c */
    bool started = false;
    for (int w = -127; w <= 127; w++) {
        if (gmin >= w)
            tG[w + 128] = -NO_SUM;
        else if (gmax < w)
            tG[w + 128] = NO_SUM;
        else {
            const int64_t u = 2 * ((int64_t)w - h->off) - 1;
            if (!started) {
                q = -floor_div(-u * R, cc), rem = q * cc - u * R, started = true;
            } else { /* u grew by 2: u R by 2 R < 2 c */
                rem -= 2 * R;
                while (rem < 0) rem += cc, q++;
            }
            tG[w + 128] = u * Q + q;
        }
    }
    c->t32_done = false;
    c->s2 = h->s2, c->E0 = (int64_t)(0 - 128 - z2) * c->s2;
    c->range = range_fn();
    /* the walk's bound needs every level's threshold finite (no clip or
     * saturation of the registers inside TFLite's levels) */
    c->walk = r->walk;
    if (!c->walk) return;
    /* (two of each extreme: independent chains; Tmax, Tmin only matter
     * with the walk) */
    const double s2d = (double)h->s2;
    const int n = r->w1 - r->w0;
    const int64_t *g = tG + (r->w0 + 129);
    const double *th = r->th + 1;
    double mx0 = -HUGE_VAL, mx1 = -HUGE_VAL, mn0 = HUGE_VAL, mn1 = HUGE_VAL;
    int far = 0;
    int i = 0;
    for (; i + 1 < n; i += 2) {
        far |= (g[i] <= -((int64_t)1 << 40)) | (g[i] >= (int64_t)1 << 40) |
               (g[i + 1] <= -((int64_t)1 << 40)) | (g[i + 1] >= (int64_t)1 << 40);
        const double T0 = (double)g[i] - s2d * th[i], T1 = (double)g[i + 1] - s2d * th[i + 1];
        mx0 = T0 > mx0 ? T0 : mx0, mn0 = T0 < mn0 ? T0 : mn0;
        mx1 = T1 > mx1 ? T1 : mx1, mn1 = T1 < mn1 ? T1 : mn1;
    }
    for (; i < n; i++) {
        far |= (g[i] <= -((int64_t)1 << 40)) | (g[i] >= (int64_t)1 << 40);
        const double T0 = (double)g[i] - s2d * th[i];
        mx0 = T0 > mx0 ? T0 : mx0, mn0 = T0 < mn0 ? T0 : mn0;
    }
    c->walk = !far;
    c->Tmax = mx0 > mx1 ? mx0 : mx1, c->Tmin = mn0 < mn1 ? mn0 : mn1;
}

/* The thresholds in int32 where a row's thresholds are within 2^30 (then
 * |tG - s2 p| < 2^31): the loop the compiler vectorises; far[] counts the
 * levels below w that are not. Only for rows that take their columns. */
static void yb_t32(yb_ctx *c)
{
    const int64_t *tG = c->tG;
    c->far[0] = 0;
    for (int i = 0; i < 257; i++) {
        const bool near = tG[i] >= -((int64_t)1 << 30) && tG[i] <= (int64_t)1 << 30;
        c->t32[i] = near ? (int32_t)tG[i] : 0;
        c->far[i + 1] = (int16_t)(c->far[i] + !near);
    }
    c->t32_done = true;
}

/* Row x1's largest and smallest v(w) = tG(w) - s2 p(x1, w) over its levels
 * without visiting them all. With th(w) = (tF(w) - B[0]) invd, s = A[x1]
 * invd and f(w) the fraction of th(w) - s, a level with f in (eps, 1 - eps)
 * starts at column floor(th - s) + 1 (yb_walk's model, tfl_rows), so
 *   v(w) = T(w) + s2 (s - 1 + f(w)),  T(w) = tG(w) - s2 th(w)  (reals),
 * and T varies by a few units where s2 f spans s2. The levels sorted by
 * the fraction of th are the levels sorted by f, starting where that
 * fraction reaches s's: one walk down from f = 1 evaluates levels exactly
 * (their column from B) until the bound Tmax + s2 (s - 1 + f) falls below
 * the largest v found, one walk up from f = 0 the same for the smallest;
 * each walk takes every level within eps of its end (their column may be
 * the one before), so a level neither walk reaches is bounded by both.
 * The bounds are in doubles with 4 units of margin (their rounding is
 * below 2^-10 units). Levels outside the row's (wmin, wmax] are skipped. */
/* The first column whose B reaches need (B[0] < need <= B[255]), from
 * B's line and a step or two. */
static int walk_col(const tfl_rows *r, int64_t need)
{
    const int32_t *B = r->B;
    int x = (int)((double)(need - B[0]) * r->invd) + 1;
    x = x < 1 ? 1 : x > 255 ? 255 : x;
    while (x > 1 && B[x - 1] >= need) x--;
    while (B[x] < need) x++;
    return x;
}

/* Where row x1's walks start: the first sorted level whose fraction is at
 * least s's (sf), with s = A[x1] invd. */
static int walk_start(const tfl_rows *r, int x1, double *sig, double *sf)
{
    *sig = (double)r->A[x1] * r->invd; /* |sig| < 2^37 */
    const double t = (double)(int64_t)*sig;
    *sf = *sig - (t > *sig ? t - 1.0 : t); /* the fraction (floor without a libm call) */
    int k = (int)(*sf * WALK_NB);
    k = k < 0 ? 0 : k >= WALK_NB ? WALK_NB - 1 : k;
    int j0 = r->first[k];
    while (j0 < r->first[k + 1] && r->phi_s[j0] < *sf) j0++;
    return j0;
}

/* Row x1's walk start and the fractions of the two levels around it, the
 * largest and smallest f of all the layer's levels (k_near). */
static void walk_near(tfl_rows *r, int x1)
{
    const int n = r->w1 - r->w0;
    double sig, sf;
    const int j0 = walk_start(r, x1, &sig, &sf);
    double ft = r->phi_s[j0 > 0 ? j0 - 1 : n - 1] - sf, fb = r->phi_s[j0 < n ? j0 : 0] - sf;
    ft += ft < 0 ? 1.0 : 0.0;
    fb += fb < 0 ? 1.0 : 0.0;
    r->near_sig[x1] = sig, r->near_f[x1][0] = ft, r->near_f[x1][1] = fb;
    r->near_ok[x1] = ft < 1.0 - r->eps && fb > r->eps;
}

static void yb_walk(const yb_ctx *c, const tfl_rows *r, int x1, int64_t *vmax, int64_t *vmin)
{
    const int a = r->wmin[x1], b = r->wmax[x1], n = r->w1 - r->w0;
    const int64_t A = r->A[x1], s2 = c->s2;
    double sig, sf;
    const int j0 = walk_start(r, x1, &sig, &sf);
    const double s2d = (double)s2, eps = r->eps;
    const double up = s2d * (sig - 1.0) + c->Tmax + 4.0, dn = s2d * (sig - 1.0) + c->Tmin - 4.0;
    int64_t hi = INT64_MIN, lo = INT64_MAX;
#define WALK_EVAL                                                                                  \
    const int w = r->w_s[j];                                                                       \
    if (w <= a || w > b) continue;                                                                 \
    const int64_t v = c->tG[w + 128] - s2 * walk_col(r, r->tF[w - r->w0] - A);                     \
    hi = v > hi ? v : hi;                                                                          \
    lo = v < lo ? v : lo;
    for (int i = 1; i <= n; i++) { /* down from f = 1 */
        int j = j0 - i;
        j += j < 0 ? n : 0;
        double f = r->phi_s[j] - sf;
        f += f < 0 ? 1.0 : 0.0;
        if (hi != INT64_MIN && f < 1.0 - eps && up + s2d * f < (double)hi) break;
        WALK_EVAL
    }
    for (int i = 0; i < n; i++) { /* up from f = 0 */
        int j = j0 + i;
        j -= j >= n ? n : 0;
        double f = r->phi_s[j] - sf;
        f += f < 0 ? 1.0 : 0.0;
        if (lo != INT64_MAX && f > eps && dn + s2d * f > (double)lo) break;
        WALK_EVAL
    }
#undef WALK_EVAL
    *vmax = hi, *vmin = lo;
}

/* What yb_walk reaches in row x1 whatever the EW/OUT_CVT pair: down from
 * f = 1 every level within eps of 1, then proved levels while the fraction
 * stays within WALK_GAP of the first (a pair's T varies by a few units, so
 * s2 WALK_GAP, >= 16 units, separates the largest v from the rest), and the
 * fraction of the next level; up from f = 0 the same. More than WALK_C
 * levels at an end, or more than WALK_STEPS visited (levels tied or
 * clustered, the row's far in the sorted order): the row takes its columns
 * (state 2). */
#define WALK_GAP   0x1p-10
#define WALK_STEPS 24
static void walk_gather(tfl_rows *r, int x1)
{
    const int a = r->wmin[x1], b = r->wmax[x1], n = r->w1 - r->w0;
    const int64_t A = r->A[x1];
    double sig, sf;
    const int j0 = walk_start(r, x1, &sig, &sf);
    const double eps = r->eps;
    r->wr_state[x1] = 2;
    for (int end = 0; end < 2; end++) {
        int cnt = 0;
        double f1 = -1.0; /* the first proved level's distance from the end */
        r->wr_f[x1][end] = end ? HUGE_VAL : -HUGE_VAL;
        for (int i = 0; i < n; i++) {
            if (i == WALK_STEPS) return; /* the row's levels far in the order */
            int j = end ? j0 + i : j0 - 1 - i;
            j += j < 0 ? n : j >= n ? -n : 0;
            double f = r->phi_s[j] - sf;
            f += f < 0 ? 1.0 : 0.0;
            const int w = r->w_s[j];
            if (w <= a || w > b) continue;
            const double d = end ? f : 1.0 - f; /* distance from the end */
            if (d > eps) {
                if (f1 >= 0 && d - f1 > WALK_GAP) {
                    r->wr_f[x1][end] = f;
                    break;
                }
                if (f1 < 0) f1 = d;
            }
            if (cnt == WALK_C) return;
            r->wr_w[x1][end][cnt] = (int16_t)w;
            /* a proved level's column is floor(mu) + 1 (mu = th - s, its
             * rounding far below eps); the others' from B */
            r->wr_p[x1][end][cnt] = (uint8_t)(d > eps ? (int)(r->th[w - r->w0] - sig) + 1
                                                      : walk_col(r, r->tF[w - r->w0] - A));
            cnt++;
        }
        r->wr_n[x1][end] = (uint8_t)cnt;
    }
    r->wr_state[x1] = 1;
}

/* yb_walk from what walk_gather kept: the levels' v exactly, and the
 * walks' stops at the next levels; false when a stop does not hold for
 * this pair (then the row walks). */
static bool walk_kept(const yb_ctx *c, const tfl_rows *r, int x1, int64_t *vmax, int64_t *vmin)
{
    const int64_t s2 = c->s2;
    int64_t hi = INT64_MIN, lo = INT64_MAX;
    for (int end = 0; end < 2; end++)
        for (int i = 0; i < r->wr_n[x1][end]; i++) {
            const int64_t v = c->tG[r->wr_w[x1][end][i] + 128] - s2 * r->wr_p[x1][end][i];
            hi = v > hi ? v : hi;
            lo = v < lo ? v : lo;
        }
    const double s2d = (double)s2, sig = (double)r->A[x1] * r->invd;
    const double up = s2d * (sig - 1.0) + c->Tmax + 4.0, dn = s2d * (sig - 1.0) + c->Tmin - 4.0;
    if (hi == INT64_MIN || !(up + s2d * r->wr_f[x1][0] < (double)hi) ||
        !(dn + s2d * r->wr_f[x1][1] > (double)lo))
        return false;
    *vmax = hi, *vmin = lo;
    return true;
}

/* The interval [L, H] BN's output Y must lie in, per row x1, for the
 * outputs to equal TFLite's across the row: for every level w the row
 * reaches at column p,
 *   Y + E[p] >= tG(w)  and  Y + E[p-1] < tG(w),
 * with E[x2] = E0 + s2 x2 EW's term and tG(w) the smallest sum the
 * registers put at level w (OUT_CVT, clips); the row's first level bounds
 * Y from below alone, one past its last from above. Only EW and OUT_CVT
 * enter (s2, c, k, clips), so a pair of them that leaves a row empty fails
 * with every BS/BN pair. False then (row x1 alone, yb_row). */
/* Rows that walk: 16 levels or more, and at least a quarter of the layer's
 * (a walk skips the levels outside its row: ~3 per level taken at most);
 * the others take their columns, O(levels) and few. */
#define WALK_MIN 16
static bool walk_row(const tfl_rows *r, int x1)
{
    const int m = r->wmax[x1] - r->wmin[x1];
    return m >= WALK_MIN && 4 * m >= r->w1 - r->w0;
}
static bool yb_row(yb_ctx *c, tfl_rows *r, int x1, int64_t *L, int64_t *H)
{
    const int64_t *tG = c->tG, s2 = c->s2, E0 = c->E0;
    const int a = r->wmin[x1], b = r->wmax[x1];
    int64_t lo = a > -128 ? tG[a + 128] - E0 : -NO_SUM;
    int64_t hi = b < 127 ? tG[b + 129] - (E0 + 255 * s2) - 1 : NO_SUM;
    int64_t vmax = -2 * NO_SUM, vmin = 2 * NO_SUM;
    /* the walk where its ends were gathered; a row with more levels at an
     * end (ties: an output step equal to an input's puts every level at
     * one fraction) takes its columns, a walk would visit them all */
    bool walk = c->walk && walk_row(r, x1);
    if (walk && !r->wr_state[x1]) walk_gather(r, x1);
    walk = walk && r->wr_state[x1] == 1;
    if (!walk && !c->t32_done) yb_t32(c);
    if (walk) {
        if (!walk_kept(c, r, x1, &vmax, &vmin)) yb_walk(c, r, x1, &vmax, &vmin);
    } else if (c->far[b + 129] == c->far[a + 129]) {
        const uint8_t *p = tfl_row_cols(r, x1);
        int32_t mx, mn;
        c->range(c->t32 + (a + 129), p, b - a, (int32_t)s2, &mx, &mn);
        if (b > a) vmax = mx, vmin = mn;
    } else {
        const int64_t *t = tG + (a + 129);
        const uint8_t *p = tfl_row_cols(r, x1);
        for (int i = 0; i < b - a; i++) {
            const int64_t v = t[i] - s2 * p[i];
            vmax = v > vmax ? v : vmax;
            vmin = v < vmin ? v : vmin;
        }
    }
    if (b > a) {
        lo = vmax - E0 > lo ? vmax - E0 : lo;
        hi = vmin + s2 - 1 - E0 < hi ? vmin + s2 - 1 - E0 : hi;
    }
    if (lo > hi || lo > INT32_MAX || hi < INT32_MIN) return false;
    *L = lo, *H = hi;
    return true;
}

/* Narrow [*klo, *khi] to the K where every row's Y(x1, K) lies in its
 * [L, H] (Y is nondecreasing in K); false when nothing is left. The result
 * is the intersection of the rows' intervals, whatever the order, and a row
 * taken twice changes nothing: so the rows that narrowed the range or
 * emptied it for the previous candidate (seen[]) go first. A row's [L, H]
 * is computed when first needed (yb_row; kept in L, H for the BS/BN pairs
 * after), so a failing candidate (most are) stops at its first bad row
 * without the rows after it; an empty [L, H] fails every BS/BN pair of
 * this EW/OUT_CVT pair (*dead). Where X + K stays within int32 over the
 * range and sa <= 31, Y(K) is floor((X + K) a1 / 2^sa) without saturation
 * (L, H within int32), so Y >= L is (X + K) a1 >= L 2^sa (products <
 * 2^62): a product per row and a division where a row narrows the range;
 * else bracketed searches. */
typedef struct k_rows {
    const rk_add_enc *h;
    yb_ctx *yc;
    tfl_rows *r;
    int64_t *L, *H;
    uint8_t *have; /* rows whose L, H are computed */
    int32_t z1;
    bool direct, dead;
    int64_t lo, hi;
} k_rows;

/* Row x1's [L, H], computed once; false (and dead) when it is empty. */
static bool k_have(k_rows *k, int x1)
{
    if (k->have[x1]) return true;
    if (!yb_row(k->yc, k->r, x1, &k->L[x1], &k->H[x1])) {
        k->dead = true;
        return false;
    }
    k->have[x1] = 1;
    return true;
}

/* One row: bit 0 set when it raised lo, bit 1 when it lowered hi; -1 when
 * the range is empty. */
static int k_row(k_rows *k, int x1)
{
    const rk_add_enc *h = k->h;
    if (!k_have(k, x1)) return -1;
    const int64_t L = k->L[x1], H = k->H[x1];
    int moved = 0;
    if (k->direct) {
        const int64_t X = (int64_t)(x1 - 128 - k->z1) * h->b1, a1 = h->a1,
                      one = (int64_t)1 << h->sa;
        if (L > INT32_MIN && (X + k->lo) * a1 < L * one) {
            k->lo = -floor_div(-L * one, a1) - X; /* the smallest K with Y >= L */
            moved |= 1;
        }
        if (H < INT32_MAX && (X + k->hi) * a1 >= (H + 1) * one) {
            k->hi = floor_div((H + 1) * one - 1, a1) - X; /* the largest with Y <= H */
            moved |= 2;
        }
        return k->lo > k->hi ? -1 : moved;
    }
    const double ky = ldexp(1.0, h->sa) / h->a1; /* K units per unit of Y */
    const hw_y_cx yc = {h, sat32((int64_t)(x1 - 128 - k->z1) * h->b1)};
    if (L > INT32_MIN && hw_y(&yc, k->lo) < L) {
        double g = (double)L * ky - (double)yc.X;
        g = g < (double)k->lo ? (double)k->lo : g > (double)k->hi ? (double)k->hi : g;
        k->lo = first_at_least(hw_y, &yc, L, k->lo, k->hi, (int64_t)g);
        if (k->lo > k->hi) return -1;
        moved |= 1;
    }
    if (H < INT32_MAX && hw_y(&yc, k->hi) > H) {
        double g = (double)(H + 1) * ky - (double)yc.X;
        g = g < (double)k->lo ? (double)k->lo : g > (double)k->hi ? (double)k->hi : g;
        k->hi = first_at_least(hw_y, &yc, H + 1, k->lo, k->hi, (int64_t)g) - 1;
        if (k->lo > k->hi) return -1;
        moved |= 2;
    }
    return moved;
}

/* Whether row x1 keeps Y(x1, K) inside its [L, H] over the whole range
 * without computing them: in the direct case with every level of the row
 * proved (near_ok), each level's v is within the walk's bounds at the two
 * fractions next to the row's start (the extremes of all the layer's
 * levels, walk_near), which give an upper bound of L and a lower bound of
 * H. True only when Y at lo and hi lies inside those; then the row moves
 * nothing, as k_row would find (its [L, H] is wider); false: k_row. */
static bool k_near(const k_rows *k, int x1)
{
    const tfl_rows *r = k->r;
    const yb_ctx *c = k->yc;
    const int a = r->wmin[x1], b = r->wmax[x1];
    if (!r->near_ok[x1] || b <= a) return false;
    const int64_t s2 = c->s2, E0 = c->E0;
    const double s2d = (double)s2, base = s2d * (r->near_sig[x1] - 1.0);
    const double vM = base + c->Tmax + 4.0 + s2d * r->near_f[x1][0],
                 vm = base + c->Tmin - 4.0 + s2d * r->near_f[x1][1];
    int64_t ceil_vM = (int64_t)vM, floor_vm = (int64_t)vm; /* |v| < 2^53 (c->walk) */
    ceil_vM += (double)ceil_vM < vM;
    floor_vm -= (double)floor_vm > vm;
    int64_t L = ceil_vM - E0, H = floor_vm + s2 - 1 - E0;
    if (a > -128 && c->tG[a + 128] - E0 > L) L = c->tG[a + 128] - E0;
    if (b < 127 && c->tG[b + 129] - (E0 + 255 * s2) - 1 < H)
        H = c->tG[b + 129] - (E0 + 255 * s2) - 1;
    if (L > INT32_MAX || H < INT32_MIN) return false;
    const rk_add_enc *h = k->h;
    const int64_t X = (int64_t)(x1 - 128 - k->z1) * h->b1, one = (int64_t)1 << h->sa;
    return (L <= INT32_MIN || (X + k->lo) * h->a1 >= L * one) &&
           (H >= INT32_MAX || (X + k->hi) * h->a1 < (H + 1) * one);
}

static bool k_interval(k_rows *k, int64_t *klo, int64_t *khi, uint8_t seen[2])
{
    const rk_add_enc *h = k->h;
    const int64_t X0 = (int64_t)(0 - 128 - k->z1) * h->b1,
                  X1 = (int64_t)(255 - 128 - k->z1) * h->b1;
    k->direct = h->sa <= 31 && X0 + *klo >= INT32_MIN && X1 + *khi <= INT32_MAX;
    k->lo = *klo, k->hi = *khi;
    for (int i = 0; i < 2; i++)
        if (k_row(k, seen[i]) < 0) return false;
    const bool near = k->direct && k->yc->walk;
    for (int x1 = 0; x1 < 256; x1++) {
        if (near && !k->have[x1] && k_near(k, x1)) continue;
        const int m = k_row(k, x1);
        if (m < 0) {
            seen[0] = seen[1], seen[1] = (uint8_t)x1;
            return false;
        }
        if (m & 1) seen[0] = (uint8_t)x1;
        if (m & 2) seen[1] = (uint8_t)x1;
    }
    *klo = k->lo, *khi = k->hi;
    return true;
}

static bool add_exact_search(double sc1, double sc2, double sco, int32_t z1, int32_t z2, int32_t zo,
                             int32_t lo, int32_t hi, rk_add_enc *out);

/* The search costs a fraction of a millisecond a layer (docs/rknpu.md,
 * "Add"); it is a pure function of its arguments, so its result is kept in
 * a per-thread memo table (memo.h) and compiles give the same bytes with or
 * without it. */
#define ADD_SLOTS 256
typedef struct add_key {
    uint64_t s1, s2, so;              /* the doubles' bits */
    int32_t z1, z2, zo, lo, hi, zero; /* zero: no padding in the compared bytes */
} add_key;
typedef struct add_entry {
    add_key key;
    bool found;
    rk_add_enc enc;
} add_entry;
static _Thread_local add_entry add_table[ADD_SLOTS];
static _Thread_local bool add_used[ADD_SLOTS];
static _Thread_local uint8_t add_clock[ADD_SLOTS / RK_MEMO_WAYS];

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

void rk_add_exact_forget(void)
{
    memset(add_used, 0, sizeof add_used);
}

bool rk_add_exact_find(double sc1, double sc2, double sco, int32_t z1, int32_t z2, int32_t zo,
                       int32_t lo, int32_t hi, rk_add_enc *out)
{
    const add_key key = {dbits(sc1), dbits(sc2), dbits(sco), z1, z2, zo, lo, hi, 0};
    const rk_memo m = {add_table,         add_used,  add_clock, ADD_SLOTS / RK_MEMO_WAYS,
                       sizeof(add_entry), sizeof key};
    bool hit;
    add_entry *e = rk_memo_slot(&m, &key, &hit);
    if (!hit) {
        memset(&e->enc, 0, sizeof e->enc);
        e->found = add_exact_search(sc1, sc2, sco, z1, z2, zo, lo, hi, &e->enc);
    }
    if (e->found) *out = e->enc;
    return e->found;
}

static bool add_exact_search(double sc1, double sc2, double sco, int32_t z1, int32_t z2, int32_t zo,
                             int32_t lo, int32_t hi, rk_add_enc *out)
{
    /* add.cc's Prepare (its float products by 2 and 2^20 are exact, so
     * double gives the same multipliers for a model's float scales). */
    double tm = 2.0 * (sc1 > sc2 ? sc1 : sc2);
    double r1 = sc1 / tm, r2 = sc2 / tm, ro = tm / (1048576.0 * sco);
    if (!(ro < 1.0) || !(r1 > 0) || !(r2 > 0) || !(ro > 0)) return false;
    tfl_add t;
    tfl_quantize(r1, &t.q1, &t.e1);
    tfl_quantize(r2, &t.q2, &t.e2);
    tfl_quantize(ro, &t.qo, &t.eo);
    if (t.e1 > 0 || t.e2 > 0 || t.eo > 0 || t.e1 < -30 || t.e2 < -30 || t.eo < -30) return false;
    /* the effective real multipliers of the two inputs */
    double mo = ldexp(t.qo, t.eo - 31) * 1048576.0;
    double m1 = ldexp(t.q1, t.e1 - 31) * mo, m2 = ldexp(t.q2, t.e2 - 31) * mo;
    tfl_rows rows;
    tfl_rows_fill(&t, z1, z2, zo, lo, hi, &rows);
    /* every row's levels next to its start at once (k_near checks every
     * row of a pair that succeeds; the walks' ends are gathered only for
     * the rows computed, yb_row) */
    if (rows.walk)
        for (int x1 = 0; x1 < 256; x1++) walk_near(&rows, x1);
    uint32_t s2v[CANDS], cv[CANDS];
    int kv[CANDS];
    int n2 = rk_add_best_pairs(m2, s2v, cv, kv);
    uint8_t seen[2] = {0, 255}; /* k_interval's rows to try first */
    for (int i = 0; i < n2; i++) {
        rk_add_enc h;
        memset(&h, 0, sizeof h);
        h.s2 = s2v[i], h.c = cv[i], h.k = kv[i];
        if (h.k > 63) continue;
        /* A clip below: EW's ReLU at the threshold, OUT_CVT adds lo back,
         * so K also moves the sum by zo - lo steps. A clip above: ReLU-X at
         * the largest sum that rounds to at most hi. */
        h.relu = lo > -128;
        h.off = h.relu ? lo : zo;
        h.relux = hi < 127;
        if (h.relux) {
            int64_t top = ((int64_t)(hi - h.off) + 1) * ((int64_t)1 << h.k) -
                          ((int64_t)1 << (h.k - 1)); /* S * c < top */
            int64_t cap = (top + (int64_t)h.c - 1) / (int64_t)h.c - 1;
            if (top <= 0 || cap > INT32_MAX) continue;
            h.cap = (int32_t)cap;
        }
        /* the rows' [L, H] as k_interval needs them; the rows that bound
         * K for the pair before, and the ends, before the BS/BN pairs */
        yb_ctx yc;
        yb_prep(&h, z2, &rows, &yc);
        int64_t L[256], H[256];
        uint8_t have[256] = {0};
        k_rows kr = {&h, &yc, &rows, L, H, have, z1, false, false, 0, 0};
        if (!k_have(&kr, seen[0]) || !k_have(&kr, seen[1]) || !k_have(&kr, 0) || !k_have(&kr, 255))
            continue;
        /* Y per unit of d1: m1 in output steps times 2^k / c */
        double V = m1 * ldexp(1.0, h.k) / h.c;
        uint32_t b1v[CANDS], a1v[CANDS];
        int sav[CANDS];
        int n1 = rk_add_best_pairs(V, b1v, a1v, sav);
        for (int j = 0; j < n1; j++) {
            h.b1 = b1v[j], h.a1 = a1v[j], h.sa = sav[j];
            /* one output step in K units, and the search range around the
             * shift by zo - off steps */
            double step = ldexp(1.0, h.k) / h.c * ldexp(1.0, h.sa) / h.a1;
            int64_t span = (int64_t)(2 * step) + 2;
            double k0 = (double)(zo - h.off) * step;
            if (span > ((int64_t)1 << 30) || fabs(k0) > (double)((int64_t)1 << 30)) continue;
            int64_t c0 = (int64_t)k0, klo = c0 - span, khi = c0 + span;
            if (!k_interval(&kr, &klo, &khi, seen)) {
                if (kr.dead) break; /* a row is empty: no BS/BN pair works */
                continue;
            }
            h.K = (int32_t)(klo + (khi - klo) / 2);
            *out = h;
            return true;
        }
    }
    return false;
}
