/* The planner's one-pass weight packing (layer_weights.c) against an
 * independent oracle: every packed byte from the layouts' index formulas
 * ([Cout/G][Cin/32][taps][G][32] for convolutions, [C/G][taps][G] for
 * depthwise; padding zero) and each kernel's sum of stored values added up
 * one byte at a time. The vector builds (AVX2 where the CPU has it, SSE2 /
 * NEON), the portable definition and the oracle agree on shapes with partial 32-channel chunks,
 * padding kernels, partial depthwise groups and every byte value; a buffer
 * full of garbage beforehand shows that every byte is written. The fitted
 * BN offset (layer_requant_fit.c) equals its stepping definition, cached
 * (layer_requant_cache.c) or not. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/tflite_quant.h"
#include "rknpu/ops/layer_internal.h"

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint8_t next_byte(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint8_t)(rng >> 24);
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

/* Oracle of the convolution layout: byte i of the packed region. */
static void conv_oracle(const uint8_t *src, uint32_t out_c, uint32_t in_c, size_t taps,
                        uint32_t cin, uint32_t cout, uint32_t G, uint8_t flip, uint8_t *w,
                        int64_t *sums)
{
    memset(w, 0, (size_t)cout * cin * taps);
    for (uint32_t n = 0; n < out_c; n++) {
        int64_t s = 0;
        for (size_t t = 0; t < taps; t++)
            for (uint32_t c = 0; c < in_c; c++) {
                uint8_t v = src[((size_t)n * taps + t) * in_c + c] ^ flip;
                size_t i = (size_t)(n / G) * G * cin * taps + (size_t)(c / 32) * taps * G * 32 +
                           t * G * 32 + (size_t)(n % G) * 32 + c % 32;
                w[i] = v;
                s += (int8_t)v;
            }
        sums[n] = s;
    }
}

static void dw_oracle(const uint8_t *src, uint32_t c_real, size_t taps, uint32_t cpad, uint32_t G,
                      uint8_t flip, uint8_t *w, int64_t *sums)
{
    memset(w, 0, (size_t)cpad * taps);
    for (uint32_t c = 0; c < c_real; c++) {
        int64_t s = 0;
        for (size_t t = 0; t < taps; t++) {
            uint8_t v = src[t * c_real + c] ^ flip;
            w[(size_t)(c / G) * taps * G + t * G + c % G] = v;
            s += (int8_t)v;
        }
        sums[c] = s;
    }
}

static void check_conv(uint32_t out_c, uint32_t in_c, size_t taps, uint32_t G, uint8_t flip)
{
    uint32_t cin = align_up(in_c, 32), cout = align_up(out_c, G);
    size_t nsrc = (size_t)out_c * taps * in_c, nw = (size_t)cout * cin * taps;
    uint8_t *src = malloc(nsrc ? nsrc : 1), *w[4];
    int64_t *sums[4];
    for (size_t i = 0; i < nsrc; i++) src[i] = next_byte();
    if (nsrc > 2) src[0] = 0x80, src[1] = 0x7F, src[2] = 0xFF; /* the extremes */
    for (int v = 0; v < 4; v++) {
        w[v] = malloc(nw);
        memset(w[v], 0xA5, nw); /* every byte must be written */
        sums[v] = calloc(out_c + 1, sizeof *sums[v]);
    }
    conv_oracle(src, out_c, in_c, taps, cin, cout, G, flip, w[0], sums[0]);
    rk_pack_conv8(src, out_c, in_c, taps, cin, cout, G, flip, w[1], sums[1]);
    rk_pack_conv8_portable(src, out_c, in_c, taps, cin, cout, G, flip, w[2], sums[2]);
    rk_pack_conv8_v128(src, out_c, in_c, taps, cin, cout, G, flip, w[3], sums[3]);
    for (int v = 1; v < 4; v++) {
        assert_memory_equal(w[0], w[v], nw);
        assert_memory_equal(sums[0], sums[v], out_c * sizeof *sums[0]);
    }
    for (int v = 0; v < 4; v++) free(w[v]), free(sums[v]);
    free(src);
}

static void check_dw(uint32_t c_real, size_t taps, uint32_t G, uint8_t flip)
{
    uint32_t cpad = align_up(c_real, G);
    size_t nsrc = taps * c_real, nw = (size_t)cpad * taps;
    uint8_t *src = malloc(nsrc), *w[2];
    int64_t *sums[2];
    for (size_t i = 0; i < nsrc; i++) src[i] = next_byte();
    for (int v = 0; v < 2; v++) {
        w[v] = malloc(nw);
        memset(w[v], 0x5A, nw);
        sums[v] = calloc(c_real, sizeof *sums[v]);
    }
    dw_oracle(src, c_real, taps, cpad, G, flip, w[0], sums[0]);
    rk_pack_dw8(src, c_real, taps, cpad, G, flip, w[1], sums[1]);
    assert_memory_equal(w[0], w[1], nw);
    assert_memory_equal(sums[0], sums[1], c_real * sizeof *sums[0]);
    for (int v = 0; v < 2; v++) free(w[v]), free(sums[v]);
    free(src);
}

static void test_conv_layouts(void **state)
{
    (void)state;
    static const uint32_t in_cs[] = {1, 3, 31, 32, 33, 64, 96, 320};
    static const uint32_t out_cs[] = {1, 16, 31, 32, 33, 70};
    static const size_t tapss[] = {1, 9, 25};
    for (int flip = 0; flip < 2; flip++)
        for (size_t a = 0; a < sizeof in_cs / sizeof *in_cs; a++)
            for (size_t b = 0; b < sizeof out_cs / sizeof *out_cs; b++)
                for (size_t t = 0; t < sizeof tapss / sizeof *tapss; t++) {
                    check_conv(out_cs[b], in_cs[a], tapss[t], 32, flip ? 0x80 : 0);
                    check_conv(out_cs[b], in_cs[a], tapss[t], 16, flip ? 0x80 : 0);
                }
    check_conv(40, 64, 1, 64, 0); /* groups wider than the vector path takes */
}

static void test_depthwise_layouts(void **state)
{
    (void)state;
    static const uint32_t cs[] = {1, 8, 16, 63, 64, 65, 144, 960};
    static const size_t tapss[] = {1, 9, 49, 255, 256};
    for (int flip = 0; flip < 2; flip++)
        for (size_t a = 0; a < sizeof cs / sizeof *cs; a++)
            for (size_t t = 0; t < sizeof tapss / sizeof *tapss; t++)
                check_dw(cs[a], tapss[t], 64, flip ? 0x80 : 0);
    check_dw(40, 9, 32, 0);
    check_dw(40, 9, 24, 0x80); /* a group size the vector path does not take */
}

/* The largest sums: every stored value -128 (or 127) in a long kernel. */
static void test_sum_extremes(void **state)
{
    (void)state;
    const uint32_t in_c = 4096, out_c = 2;
    uint8_t *src = malloc((size_t)in_c * out_c * 9), *w = malloc((size_t)in_c * 32 * 9);
    int64_t sums[2];
    memset(src, 0x80, (size_t)in_c * 9);
    memset(src + (size_t)in_c * 9, 0x7F, (size_t)in_c * 9);
    rk_pack_conv8(src, out_c, in_c, 9, in_c, 32, 32, 0, w, sums);
    assert_int_equal(sums[0], -128 * (int64_t)in_c * 9);
    assert_int_equal(sums[1], 127 * (int64_t)in_c * 9);
    rk_pack_conv8(src, out_c, in_c, 9, in_c, 32, 32, 0x80, w, sums); /* uint8: 0x80 is 0 */
    assert_int_equal(sums[0], 0);
    assert_int_equal(sums[1], -1 * (int64_t)in_c * 9);
    int64_t dws[64];
    uint8_t dsrc[255 * 64], dw[255 * 64];
    memset(dsrc, 0x80, sizeof dsrc);
    rk_pack_dw8(dsrc, 64, 255, 64, 64, 0, dw, dws);
    for (int c = 0; c < 64; c++) assert_int_equal(dws[c], -128 * 255);
    free(src);
    free(w);
}

/* The fitted BN offset by its definition: k stepped one at a time until
 * the DPU's level changes at every TFLite level boundary, each boundary
 * found by scanning sums from an estimate (layer_requant_fit.c computes
 * the boundaries once and k's range in closed form). */
static int64_t ref_tfl(int64_t x, int32_t q, int sh)
{
    return npk_q_mul((int32_t)(x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : x), q, sh);
}

static int32_t ref_fit(double m, int32_t b, int32_t a, int32_t k, unsigned s1, unsigned f,
                       int32_t n_lo, int32_t n_hi)
{
    int32_t q;
    int sh;
    npk_q_quantize_multiplier(m, &q, &sh);
    double mq = ldexp((double)q, sh - 31);
    int64_t kk = k;
    for (int iter = 0; iter < 64; iter++) {
        bool up = false, down = false;
        for (int64_t n = n_lo; n <= n_hi; n++) {
            int64_t t = (int64_t)ceil(((double)n - 0.5) / mq);
            for (int i = 0; i < 64 && ref_tfl(t - 1, q, sh) >= n; i++) t--;
            for (int i = 0; i < 64 && ref_tfl(t, q, sh) < n; i++) t++;
            if (ref_tfl(t, q, sh) < n || ref_tfl(t - 1, q, sh) >= n) continue;
            if (rk_round_shift(rk_floor_shift((t * b + kk) * a, s1), f) < n) up = true;
            if (rk_round_shift(rk_floor_shift(((t - 1) * b + kk) * a, s1), f) >= n) down = true;
        }
        if (!up && !down) return (int32_t)kk;
        if (up && down) break;
        kk += up ? 1 : -1;
    }
    return k;
}

static void test_fit_reference(void **state)
{
    (void)state;
    /* The exact mode's pairs for a sweep of multipliers (as requant_exact
     * chooses them), k from 80 below to 80 above its rounded-up value: k
     * moves up, down, finds no fit or keeps its value. */
    int moved = 0;
    for (int i = 0; i < 40; i++) {
        double m = 0.0003 + 0.00097 * i;
        int32_t q, b, a;
        int sh;
        npk_q_quantize_multiplier(m, &q, &sh);
        double mq = ldexp((double)q, sh - 31);
        double bh = fmin(32767.0, floor(ldexp(1.0, 28) / (257.0 / mq)));
        int S = (int)floor(log2(32767.0 * bh / mq));
        unsigned s1 = (unsigned)(S - 8), f = 8;
        rk_best_pair_search(ldexp(mq, S), (int64_t)bh, 512, 0, &b, &a);
        double delta = sh < 0 ? ldexp(1.0, sh - 1) : 0;
        int32_t kc = (int32_t)ceil(delta * ldexp(1.0, S) / a);
        for (int32_t dk = -80; dk <= 80; dk += 3) {
            int32_t k = kc + dk, want = ref_fit(m, b, a, k, s1, f, 1, 100 + 3 * i);
            assert_int_equal(rk_exact_fit_k_search(m, b, a, k, s1, f, 1, 100 + 3 * i), want);
            moved += want != k;
            want = ref_fit(m, b, a, -k, s1, f, -254 + 2 * i, 0);
            assert_int_equal(rk_exact_fit_k_search(m, b, a, -k, s1, f, -254 + 2 * i, 0), want);
            moved += want != -k;
        }
    }
    assert_true(moved > 300); /* the cases move k, not only keep it */
}

static void test_fit_cache(void **state)
{
    (void)state;
    /* mobilenet_v2-like multipliers and pairs, each asked twice (the
     * second from the cache), against the uncached search. */
    for (int i = 0; i < 200; i++) {
        double m = 0.0005 + 0.00037 * i;
        int32_t b = 20000 + 37 * i, a = (int32_t)((m * 1099511627776.0) / b) + (i % 5) - 2;
        int32_t k = (i % 7) * 100 - 300;
        for (int rep = 0; rep < 2; rep++) {
            assert_int_equal(rk_exact_fit_k(m, b, a, k, 32, 8, 1, 127 + i % 100),
                             rk_exact_fit_k_search(m, b, a, k, 32, 8, 1, 127 + i % 100));
            assert_int_equal(rk_exact_fit_k(m, b, a, k, 32, 8, -200 + i, 0),
                             rk_exact_fit_k_search(m, b, a, k, 32, 8, -200 + i, 0));
        }
    }
}

/* The exact records' fast path (layer_exact_rec.c) against the records'
 * definition: what it writes equals [bias - zx (ws - zsum) - lo, b] and
 * [k, a] as little-endian words, it writes nothing past the channels it
 * reports, and on AVX2 hosts it stops only at the 4-channel block of the
 * first channel whose product or bias leaves int32. */
static uint32_t records_check(const rk_exact_src *s, uint32_t n)
{
    uint8_t *bias = malloc(8 * (size_t)n + 8), *mul = malloc(8 * (size_t)n + 8);
    assert_non_null(bias);
    assert_non_null(mul);
    memset(bias, 0xA5, 8 * (size_t)n + 8);
    memset(mul, 0x5A, 8 * (size_t)n + 8);
    uint32_t done = rk_exact_records_fast(s, n, bias, mul);
    assert_true(done <= n);
    for (uint32_t c = 0; c < done; c++) {
        int64_t b = (s->bi ? s->bi[c] : 0) - s->zx * (s->ws[c] - s->zsum) - (s->lo ? s->lo[c] : 0);
        assert_true(b >= INT32_MIN && b <= INT32_MAX);
        assert_int_equal(npk_ld32le(bias + 8 * (size_t)c), (uint32_t)(int32_t)b);
        assert_int_equal(npk_ld32le(bias + 8 * (size_t)c + 4), (uint32_t)s->qb[c]);
        assert_int_equal(npk_ld32le(mul + 8 * (size_t)c), (uint32_t)s->qk[c]);
        assert_int_equal(npk_ld32le(mul + 8 * (size_t)c + 4), (uint32_t)s->qa[c]);
    }
    for (size_t i = 8 * (size_t)done; i < 8 * (size_t)n + 8; i++) {
        assert_int_equal(bias[i], 0xA5);
        assert_int_equal(mul[i], 0x5A);
    }
    free(bias);
    free(mul);
    return done;
}

static void test_exact_records(void **state)
{
    (void)state;
    enum { N = 203 };
    int32_t bi[N], lo[N], qb[N], qk[N], qa[N];
    int64_t ws[N];
    bool avx2 = npk_cpu_has(NPK_CPU_AVX2);
    for (int round = 0; round < 200; round++) {
        for (int c = 0; c < N; c++) {
            bi[c] = (int32_t)(next_byte() << 16 | next_byte() << 8 | next_byte()) - (1 << 23);
            lo[c] = (int32_t)next_byte() - 128;
            qb[c] = (int32_t)(next_byte() << 8 | next_byte()) - 32768;
            qk[c] =
                (int32_t)((uint32_t)next_byte() << 24 | (uint32_t)next_byte() << 16 | next_byte());
            qa[c] = (int32_t)next_byte() - 100;
            ws[c] = (int64_t)(next_byte() << 16 | next_byte() << 8 | next_byte()) - (1 << 23);
        }
        rk_exact_src s = {round % 3 ? bi : NULL,
                          round % 2 ? lo : NULL,
                          qb,
                          qk,
                          qa,
                          ws,
                          (int64_t)next_byte() * 1000 - 128000,
                          (int64_t)next_byte() - 128};
        uint32_t n = N - (uint32_t)(round % 7);
        uint32_t bad = n;     /* the first channel out of range, if any */
        if (round % 4 == 1) { /* a product past int32 */
            bad = (uint32_t)next_byte() % n;
            ws[bad] = s.zsum + ((int64_t)1 << 31) + round;
        } else if (round % 4 == 2) { /* a bias past int32 */
            bad = (uint32_t)next_byte() % n;
            s.zx = 1;
            ws[bad] = s.zsum - ((int64_t)INT32_MAX - 10);
            if (s.bi) bi[bad] = 100;
            if (s.lo) lo[bad] = -100;
            if (!s.bi && !s.lo) ws[bad] = s.zsum + ((int64_t)1 << 31) + 5;
        }
        uint32_t done = records_check(&s, n);
        if (avx2) assert_int_equal(done, bad == n ? n / 4 * 4 : bad / 4 * 4);
    }
    rk_exact_src wide = {NULL, NULL, qb, qk, qa, ws, 0, (int64_t)1 << 40}; /* zx past int32 */
    assert_int_equal(records_check(&wide, N), 0);
}

/* rk_same_run (eight, four, then one at a time) against its definition:
 * runs of every length up to 40 from every start, ended by a value that
 * differs in its low or its high 32 bits, or by the array's end. */
static void test_same_run(void **state)
{
    (void)state;
    double v[48];
    for (uint32_t len = 1; len <= 40; len++)
        for (int kind = 0; kind < 3; kind++) {
            for (uint32_t i = 0; i < 48; i++) v[i] = 0.75;
            uint64_t u;
            memcpy(&u, &v[0], 8);
            u ^= kind == 0 ? 1ull : kind == 1 ? 1ull << 40 : 0;
            if (kind < 2) memcpy(&v[len], &u, 8); /* kind 2: the run reaches n */
            uint32_t n = kind < 2 ? 48 : len;
            for (uint32_t c = 0; c < len; c++) {
                uint32_t e = c + 1;
                while (e < n && !memcmp(&v[e], &v[c], 8)) e++;
                assert_int_equal(rk_same_run(v, c, n), e);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_layouts), cmocka_unit_test(test_depthwise_layouts),
        cmocka_unit_test(test_sum_extremes), cmocka_unit_test(test_fit_reference),
        cmocka_unit_test(test_fit_cache),    cmocka_unit_test(test_exact_records),
        cmocka_unit_test(test_same_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
