/* The standalone ADD's exact encoding (add_exact.c, docs/rknpu.md "Add"):
 * its proof, which bounds K per row from per-input tables, against a brute
 * force that evaluates every one of the 65,536 input pairs for every
 * candidate (the planner's earlier search, kept here as the oracle), on
 * random quantisations: the same answer (found or not, the multiplier
 * pairs, K) every time. TFLite's side of the brute force is the
 * interpreter's portable ADD kernel; the answer is also checked against it
 * pair by pair. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "rknpu/ops/add_exact.h"
#include "tflite/qkern.h"

/* TFLite's QuantizeMultiplier: q in [2^30, 2^31), real = q * 2^(e - 31). */
static void quantize(double r, int32_t *q, int *e)
{
    double f = frexp(r, e);
    int64_t v = (int64_t)llround(f * 2147483648.0);
    if (v == ((int64_t)1 << 31)) v /= 2, ++*e;
    *q = (int32_t)v;
}

typedef struct bcase {
    double s1, s2, so;
    int32_t z1, z2, zo, lo, hi; /* stored domain (int8) */
} bcase;

/* TFLite's output for every pair (x1 + 128) * 256 + (x2 + 128), from the
 * interpreter's kernel with add.cc's multipliers; false when add.cc's
 * multipliers are out of the kernel's range. */
static bool tfl_outputs(const bcase *c, int8_t *want, double *m1, double *m2)
{
    double tm = 2.0 * (c->s1 > c->s2 ? c->s1 : c->s2);
    double r1 = c->s1 / tm, r2 = c->s2 / tm, ro = tm / (1048576.0 * c->so);
    if (!(ro < 1.0)) return false;
    int32_t q1, q2, qo;
    int e1, e2, eo;
    quantize(r1, &q1, &e1);
    quantize(r2, &q2, &e2);
    quantize(ro, &qo, &eo);
    if (e1 > 0 || e2 > 0 || eo > 0 || e1 < -30 || e2 < -30 || eo < -30) return false;
    double mo = ldexp(qo, eo - 31) * 1048576.0;
    *m1 = ldexp(q1, e1 - 31) * mo, *m2 = ldexp(q2, e2 - 31) * mo;
    npk_tfl_qadd q = {-c->z1, -c->z2, q1, e1, q2, e2, qo, eo, c->zo, c->lo, c->hi, true};
    static uint8_t a[65536], b[65536];
    for (int i = 0; i < 65536; i++) a[i] = (uint8_t)(i >> 8 ^ 0x80), b[i] = (uint8_t)(i ^ 0x80);
    npk_tfl_qkern_portable.add(&q, a, b, (uint8_t *)want, 65536);
    return true;
}

/* The registers' model (the emulator's arithmetic, saturations included). */
static int64_t sat32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}

static int64_t floor_shift(int64_t v, int s)
{
    return v >= 0 ? v >> s : -((-v - 1) >> s) - 1;
}

static int64_t hw_eval(const rk_add_enc *h, int32_t d1, int32_t d2, int64_t K)
{
    int64_t X = sat32((int64_t)d1 * h->b1);
    int64_t Y = sat32(floor_shift(sat32(X + K) * h->a1, h->sa));
    int64_t E = sat32((int64_t)d2 * h->s2);
    int64_t S = sat32(Y + E);
    if (h->relu && S < 0) S = 0;
    if (h->relux && S > h->cap) S = h->cap;
    int64_t r = floor_shift(S * h->c + ((int64_t)1 << (h->k - 1)), h->k) + h->off;
    return r > 127 ? 127 : r < -128 ? -128 : r;
}

/* The candidate multiplier pairs, in the planner's order: the best six
 * values v in [2^14, 2^15) by the relative error of v * mant15(target / v). */
#define CANDS 6
static int best_pairs(double target, uint32_t v[CANDS], uint32_t a[CANDS], int e[CANDS])
{
    double err[CANDS];
    int n = 0;
    for (uint32_t x = 1u << 14; x < (1u << 15); x++) {
        int ex;
        double f = frexp(target / x, &ex);
        long m = lround(f * 32768.0);
        int s = 15 - ex;
        if (m == 32768) m = 16384, s--;
        if (s < 1 || s > 62) continue;
        double r = fabs((double)x * ldexp((double)m, -s) - target) / target;
        int at = n < CANDS ? n : CANDS;
        while (at > 0 && err[at - 1] > r) at--;
        if (at >= CANDS) continue;
        int last = n < CANDS ? n : CANDS - 1;
        for (int j = last; j > at; j--)
            err[j] = err[j - 1], v[j] = v[j - 1], a[j] = a[j - 1], e[j] = e[j - 1];
        err[at] = r, v[at] = x, a[at] = (uint32_t)m, e[at] = s;
        if (n < CANDS) n++;
    }
    return n;
}

/* Smallest K in [lo, hi] with output >= want (hi + 1 if none). */
static int64_t kmin(const rk_add_enc *h, int32_t d1, int32_t d2, int32_t want, int64_t lo,
                    int64_t hi)
{
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (hw_eval(h, d1, d2, mid) >= want)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The brute force: every candidate, every pair bounding K on both sides. */
static bool brute(const bcase *c, const int8_t *want, double m1, double m2, rk_add_enc *out)
{
    uint32_t s2v[CANDS], cv[CANDS];
    int kv[CANDS];
    int n2 = best_pairs(m2, s2v, cv, kv);
    for (int i = 0; i < n2; i++) {
        rk_add_enc h;
        memset(&h, 0, sizeof h);
        h.s2 = s2v[i], h.c = cv[i], h.k = kv[i];
        if (h.k > 63) continue;
        uint32_t b1v[CANDS], a1v[CANDS];
        int sav[CANDS];
        int n1 = best_pairs(m1 * ldexp(1.0, h.k) / h.c, b1v, a1v, sav);
        for (int j = 0; j < n1; j++) {
            h.b1 = b1v[j], h.a1 = a1v[j], h.sa = sav[j];
            h.relu = c->lo > -128;
            h.off = h.relu ? c->lo : c->zo;
            h.relux = c->hi < 127;
            if (h.relux) {
                int64_t top = ((int64_t)(c->hi - h.off) + 1) * ((int64_t)1 << h.k) -
                              ((int64_t)1 << (h.k - 1));
                int64_t cap = (top + (int64_t)h.c - 1) / (int64_t)h.c - 1;
                if (top <= 0 || cap > INT32_MAX) continue;
                h.cap = (int32_t)cap;
            }
            double step = ldexp(1.0, h.k) / h.c * ldexp(1.0, h.sa) / h.a1;
            int64_t span = (int64_t)(2 * step) + 2;
            double k0 = (double)(c->zo - h.off) * step;
            if (span > ((int64_t)1 << 30) || fabs(k0) > (double)((int64_t)1 << 30)) continue;
            int64_t c0 = (int64_t)k0, klo = c0 - span, khi = c0 + span;
            for (int p = 0; p < 65536 && klo <= khi; p++) {
                int32_t d1 = (p >> 8) - 128 - c->z1, d2 = (p & 255) - 128 - c->z2, w = want[p];
                if (hw_eval(&h, d1, d2, klo) < w) klo = kmin(&h, d1, d2, w, klo, khi);
                if (klo <= khi && hw_eval(&h, d1, d2, khi) > w)
                    khi = kmin(&h, d1, d2, w + 1, klo, khi) - 1;
            }
            if (klo > khi) continue;
            h.K = (int32_t)(klo + (khi - klo) / 2);
            *out = h;
            return true;
        }
    }
    return false;
}

static int32_t rnd(uint64_t *r, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(npk_rand(r) % (uint64_t)(hi - lo + 1));
}

/* One case: the proof and the brute force agree, and a found encoding
 * gives the kernel's output for every pair. Returns whether one was found. */
static bool check_case(const bcase *c, int8_t *want)
{
    double m1, m2;
    rk_add_enc fast, slow;
    memset(&fast, 0, sizeof fast);
    memset(&slow, 0, sizeof slow);
    bool ff = rk_add_exact_find(c->s1, c->s2, c->so, c->z1, c->z2, c->zo, c->lo, c->hi, &fast);
    if (!tfl_outputs(c, want, &m1, &m2)) {
        assert_false(ff);
        return false;
    }
    bool fs = brute(c, want, m1, m2, &slow);
    if (ff != fs || (ff && memcmp(&fast, &slow, sizeof fast)))
        fail_msg("scales %.9g %.9g -> %.9g, zero points %d %d %d, clip %d..%d: proof %d (K %d, "
                 "b1 %u, s2 %u), brute force %d (K %d, b1 %u, s2 %u)",
                 c->s1, c->s2, c->so, c->z1, c->z2, c->zo, c->lo, c->hi, ff, fast.K, fast.b1,
                 fast.s2, fs, slow.K, slow.b1, slow.s2);
    if (ff)
        for (int p = 0; p < 65536; p++)
            assert_int_equal(
                hw_eval(&fast, (p >> 8) - 128 - c->z1, (p & 255) - 128 - c->z2, fast.K), want[p]);
    return ff;
}

static void test_random_quantisations(void **state)
{
    (void)state;
    int8_t *want = malloc(65536);
    assert_non_null(want);
    uint64_t r = 0x5EED0ADDull;
    const int n = npk_test_light() ? 12 : 64;
    int found = 0, clipped = 0;
    for (int i = 0; i < n; i++) {
        bcase c;
        c.s1 = 0.002 * pow(100.0, npk_randf(&r));
        c.s2 = i % 4 == 0 ? c.s1 : 0.002 * pow(100.0, npk_randf(&r));
        c.so = (c.s1 > c.s2 ? c.s1 : c.s2) * (0.5 + 2.0 * npk_randf(&r));
        c.s1 = (float)c.s1, c.s2 = (float)c.s2, c.so = (float)c.so; /* a model's scales */
        c.z1 = rnd(&r, -128, 127), c.z2 = rnd(&r, -128, 127), c.zo = rnd(&r, -128, 127);
        c.lo = -128, c.hi = 127;
        if (i % 3 == 1) /* ReLU, or ReLU6 */
            c.lo = c.zo, c.hi = i % 2 ? 127 : (int32_t)fmin(127.0, c.zo + round(6.0 / c.so));
        if (i % 5 == 2) c.lo = rnd(&r, -128, 0), c.hi = rnd(&r, 1, 127); /* any clip */
        clipped += c.lo > -128 || c.hi < 127;
        found += check_case(&c, want);
    }
    printf("%d random quantisations: %d exact encodings (%d clipped), the same as the brute "
           "force\n",
           n, found, clipped);
    assert_true(found >= n / 2); /* the search finds most */
    free(want);
}

/* Quantisations that stress the proof's shortcuts (a row's columns from
 * B's line, proved only away from a column's edge; K's bounds by division;
 * rows computed as the K search needs them), each against the brute force:
 * equal scales and exact halves (add.cc's multipliers 1/2 and shift 1:
 * its roundings meet ties), an output scale a fraction of the inputs'
 * (most of every row saturated), one many times theirs (rows of one or two
 * levels), inputs two decades apart (many columns per level, or a level
 * per few columns), zero points at the ends of the range. */
static void test_stress_quantisations(void **state)
{
    (void)state;
    int8_t *want = malloc(65536);
    assert_non_null(want);
    uint64_t r = 0x57E55ADDull;
    const int n = npk_test_light() ? 8 : 32;
    int found = 0;
    for (int i = 0; i < n; i++) {
        bcase c;
        c.s1 = 0.002 * pow(100.0, npk_randf(&r));
        switch (i % 8) {
        case 0: c.s2 = c.s1; break;
        case 1: c.s2 = c.s1 / 2; break;
        case 2: c.s2 = c.s1 * 2; break;
        case 3: c.s2 = c.s1 * 0.01 * (1.0 + npk_randf(&r)); break;
        case 4: c.s2 = c.s1 * 60.0 * (1.0 + npk_randf(&r)); break;
        default: c.s2 = 0.002 * pow(100.0, npk_randf(&r)); break;
        }
        const double mx = c.s1 > c.s2 ? c.s1 : c.s2;
        c.so = i % 8 == 5   ? mx * (0.2 + 0.3 * npk_randf(&r))
               : i % 8 == 6 ? mx * (4.0 + 30.0 * npk_randf(&r))
                            : mx * (0.5 + 2.0 * npk_randf(&r));
        c.s1 = (float)c.s1, c.s2 = (float)c.s2, c.so = (float)c.so;
        c.z1 = rnd(&r, -128, 127), c.z2 = rnd(&r, -128, 127), c.zo = rnd(&r, -128, 127);
        if (i % 4 == 3) c.z1 = -128, c.z2 = 127;
        if (i % 4 == 1) c.z1 = 127, c.zo = -128;
        c.lo = -128, c.hi = 127;
        if (i % 3 == 1) c.lo = c.zo > 100 ? 100 : c.zo, c.hi = 127; /* ReLU */
        if (i % 5 == 2) c.lo = rnd(&r, -128, 0), c.hi = rnd(&r, 1, 127);
        found += check_case(&c, want);
    }
    printf("%d stress quantisations: %d exact encodings, the same as the brute force\n", n, found);
    assert_true(found >= n / 4);
    free(want);
}

/* Quantisations that stress the rows' walk (add_exact.c, yb_walk and
 * walk_gather: a row's extremes from the levels sorted by their fraction on
 * B's line): output steps equal to an input's or a simple multiple of it
 * (every level's fraction the same or one of two: ties all along the
 * sorted order, more levels at an end than are kept), an output scale a
 * fraction of the inputs' (most of every row saturated, rows of few
 * levels), scales a few units of the float's last place apart (fractions
 * close to the ends of a column), zero points at both ends (the stored
 * domain of int8 and of uint8 models: uint8's zero points minus 128), and
 * ReLU, ReLU6 and arbitrary clips. */
static void test_walk_quantisations(void **state)
{
    (void)state;
    int8_t *want = malloc(65536);
    assert_non_null(want);
    uint64_t r = 0x3A1CADDull;
    const int n = npk_test_light() ? 8 : 32;
    int found = 0;
    for (int i = 0; i < n; i++) {
        bcase c;
        c.s1 = 0.002 * pow(100.0, npk_randf(&r));
        c.s2 = 0.002 * pow(100.0, npk_randf(&r));
        switch (i % 8) {
        case 0: c.so = c.s2; break;
        case 1: c.so = 2.0 * c.s2; break;
        case 2: c.so = c.s1; break;
        case 3: c.so = 0.5 * (c.s1 > c.s2 ? c.s1 : c.s2); break;
        case 4: c.so = 0.15 * (c.s1 > c.s2 ? c.s1 : c.s2); break;
        case 5: c.s2 = c.s1, c.so = 3.0 * c.s1; break;
        case 6: c.s2 = nextafterf((float)c.s1, 1.0f), c.so = c.s1 * (1.0 + npk_randf(&r)); break;
        default: c.so = (c.s1 + c.s2) * (0.5 + npk_randf(&r)); break;
        }
        c.s1 = (float)c.s1, c.s2 = (float)c.s2, c.so = (float)c.so;
        c.z1 = rnd(&r, -128, 127), c.z2 = rnd(&r, -128, 127), c.zo = rnd(&r, -128, 127);
        if (i % 4 == 1) c.z1 = -128, c.z2 = -128, c.zo = -128; /* uint8's zero point 0 */
        if (i % 4 == 2) c.z1 = 127, c.z2 = 0, c.zo = 127;
        c.lo = -128, c.hi = 127;
        if (i % 3 == 1)
            c.lo = c.zo, c.hi = i % 2 ? 127 : (int32_t)fmin(127.0, c.zo + round(6.0 / c.so));
        if (i % 5 == 3) c.lo = rnd(&r, -128, 0), c.hi = rnd(&r, 1, 127);
        found += check_case(&c, want);
    }
    printf("%d walk quantisations: %d exact encodings, the same as the brute force\n", n, found);
    assert_true(found >= n / 4);
    free(want);
}

/* The planner's candidate search (a filter, then the scan's evaluation of
 * the values it passes) against the scan itself, above: the same pairs in
 * the same order for random multipliers over the registers' whole range of
 * shifts, and for ones where target / v changes exponent inside the range
 * (target a power of two times a value in [2^28, 2^30)), exact products
 * (ties in the error) and the edges. */
static void check_pairs(double t)
{
    uint32_t v0[CANDS], a0[CANDS], v1[RK_ADD_CANDS], a1[RK_ADD_CANDS];
    int e0[CANDS], e1[RK_ADD_CANDS];
    const int n0 = best_pairs(t, v0, a0, e0);
    for (int path = 0; path < 2; path++) { /* the SIMD filter (on AVX2 hosts), the portable one */
        const int n1 =
            path ? rk_add_best_pairs_portable(t, v1, a1, e1) : rk_add_best_pairs(t, v1, a1, e1);
        if (n0 != n1) fail_msg("target %.17g (path %d): %d pairs, the scan %d", t, path, n1, n0);
        for (int i = 0; i < n0; i++)
            if (v0[i] != v1[i] || a0[i] != a1[i] || e0[i] != e1[i])
                fail_msg("target %.17g (path %d), pair %d: %u * %u / 2^%d, the scan %u * %u / 2^%d",
                         t, path, i, v1[i], a1[i], e1[i], v0[i], a0[i], e0[i]);
    }
}

static void test_best_pairs(void **state)
{
    (void)state;
    uint64_t r = 0xBE57BA125ull;
    const int n = npk_test_light() ? 200 : 2000;
    for (int i = 0; i < n; i++) {
        double t;
        switch (i % 5) {
        case 0: /* any shift the registers take, and beyond */
            t = ldexp(1.0 + npk_randf(&r), rnd(&r, -36, 50));
            break;
        case 1: /* the exponent of t / v changes inside [2^14, 2^15) */
            t = ldexp((double)rnd(&r, 1 << 14, (1 << 15) - 1) * 16384.0 + npk_randf(&r),
                      -rnd(&r, 0, 30));
            break;
        case 2: /* an exact product v * a: a zero error, ties */
            t = ldexp((double)rnd(&r, 1 << 14, (1 << 15) - 1) * rnd(&r, 1 << 14, 1 << 15),
                      -rnd(&r, 1, 60));
            break;
        case 3: /* a model's float multiplier */
            t = (float)ldexp(1.0 + npk_randf(&r), rnd(&r, -10, 10));
            break;
        default: /* a few bits: many equal errors */
            t = ldexp((double)rnd(&r, 1, 4096), rnd(&r, -40, 20));
            break;
        }
        check_pairs(t);
    }
    const double edge[] = {1.0,
                           0.5,
                           2.0,
                           ldexp(1.0, 29),
                           ldexp(1.0, 30),
                           ldexp(1.0, -32),
                           ldexp(1.0, 47),
                           ldexp(1.0, 48),
                           ldexp(1.0, -34),
                           DBL_MIN,
                           DBL_MAX};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) check_pairs(edge[i]);
    printf("%d random multipliers and %zu edges: the same candidate pairs as the scan\n", n,
           sizeof edge / sizeof edge[0]);
}

/* Known layers: the aarch64 model of test_tflite_layers' broadcasting family
 * (no one-pass encoding), its x86 one, tf2_mobilenet_v2's layer without
 * one; the search's per-thread table gives the same answer again. */
static void test_known_layers(void **state)
{
    (void)state;
    int8_t *want = malloc(65536);
    assert_non_null(want);
    const bcase none = {
        0.020580422133207321, 0.027945103123784065, 0.033441513776779175, -18, -17, 21, -128, 127};
    const bcase x86 = {
        0.020580422133207321, 0.027945103123784065, 0.04626217857003212, -18, -17, -26, -128, 127};
    assert_false(check_case(&none, want));
    assert_true(check_case(&x86, want));
    rk_add_enc a, b;
    assert_true(
        rk_add_exact_find(x86.s1, x86.s2, x86.so, x86.z1, x86.z2, x86.zo, x86.lo, x86.hi, &a));
    rk_add_exact_forget();
    assert_true(
        rk_add_exact_find(x86.s1, x86.s2, x86.so, x86.z1, x86.z2, x86.zo, x86.lo, x86.hi, &b));
    assert_memory_equal(&a, &b, sizeof a);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_quantisations), cmocka_unit_test(test_stress_quantisations),
        cmocka_unit_test(test_walk_quantisations),   cmocka_unit_test(test_known_layers),
        cmocka_unit_test(test_best_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
