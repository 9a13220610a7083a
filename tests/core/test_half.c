/* Half precision: exhaustive over all 65,536 f16 and bf16 bit patterns.
 * The reference is independent of the code under test: values from the
 * IEEE definition via ldexp, and rounding checked at the exact midpoints
 * between neighbouring halves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The value of a finite f16 from the definition. */
static double f16_value(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static void test_f16_to_f32_all(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = npk_f16_to_f32(h);
        int e = (h >> 10) & 31, m = h & 1023;
        if (e == 31 && m == 0) {
            assert_true(isinf(f));
            assert_int_equal(signbit(f) != 0, h >> 15);
        } else if (e == 31) {
            uint32_t u = f2u(f);
            assert_true(isnan(f));
            assert_int_equal(u >> 31, h >> 15);
            assert_true(u & 0x00400000);                    /* quiet */
            assert_int_equal((u >> 13) & 0x1ff, m & 0x1ff); /* payload kept */
        } else {
            assert_true((double)f == f16_value(h));
            assert_int_equal(signbit(f) != 0, h >> 15); /* -0 stays -0 */
        }
    }
}

static void test_f32_to_f16_exact_and_midpoints(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 0x7c00; i++) { /* every finite positive half */
        for (int sgn = 0; sgn < 2; sgn++) {
            uint16_t h = (uint16_t)(i | (sgn << 15));
            double v = f16_value(h);
            assert_int_equal(npk_f32_to_f16((float)v), h);
            /* Midpoint to the next half up (towards larger magnitude). */
            double next =
                i + 1 < 0x7c00 ? f16_value((uint16_t)(h + 1)) : (sgn ? -65536.0 : 65536.0);
            double mid = (v + next) / 2; /* exact in f32: halves have 11 bits */
            float fm = (float)mid;
            assert_true((double)fm == mid);
            uint16_t want_mid = (i & 1) ? (uint16_t)(h + 1) : h;
            if (i + 1 == 0x7c00) want_mid = (uint16_t)(0x7c00 | (sgn << 15)); /* 65520 -> inf */
            assert_int_equal(npk_f32_to_f16(fm), want_mid);
            /* Just below and above the midpoint (one f32 ulp). */
            uint32_t um = f2u(fm);
            assert_int_equal(npk_f32_to_f16(u2f(um - 1)), h);
            uint16_t up = i + 1 < 0x7c00 ? (uint16_t)(h + 1) : (uint16_t)(0x7c00 | (sgn << 15));
            assert_int_equal(npk_f32_to_f16(u2f(um + 1)), up);
        }
    }
}

static void test_f32_to_f16_specials(void **state)
{
    (void)state;
    assert_int_equal(npk_f32_to_f16(0.0f), 0x0000);
    assert_int_equal(npk_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(npk_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(npk_f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(npk_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(npk_f32_to_f16(65519.99f), 0x7bff);
    assert_int_equal(npk_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(npk_f32_to_f16(1e10f), 0x7c00);
    assert_int_equal(npk_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(npk_f32_to_f16(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
    assert_int_equal(npk_f32_to_f16(ldexpf(1, -25)), 0x0000); /* tie -> even (0) */
    assert_int_equal(npk_f32_to_f16(ldexpf(3, -26)), 0x0001); /* 0.75 ulp -> 1 */
    assert_int_equal(npk_f32_to_f16(ldexpf(3, -25)), 0x0002); /* 1.5 ulp -> 2 (even) */
    assert_int_equal(npk_f32_to_f16(ldexpf(1, -14)), 0x0400); /* smallest normal */
    assert_int_equal(npk_f32_to_f16(ldexpf(1023, -24) + ldexpf(1, -25)), 0x0400); /* carry */
    assert_int_equal(npk_f32_to_f16(1e-30f), 0x0000);
    /* NaNs: sign and top payload kept, always quiet. */
    assert_int_equal(npk_f32_to_f16(u2f(0x7fc00000)), 0x7e00);
    assert_int_equal(npk_f32_to_f16(u2f(0xffc00000)), 0xfe00);
    assert_int_equal(npk_f32_to_f16(u2f(0x7f802000)), 0x7e01); /* signalling -> quiet */
    assert_int_equal(npk_f32_to_f16(u2f(0x7f800001)), 0x7e00); /* payload below f16 bits */
    /* Sigmoid values quoted by the CNN v2 reference. */
    assert_int_equal(npk_f32_to_f16(1.0f / (1.0f + expf(-1.0f))), 0x39d9);
    assert_int_equal(npk_f32_to_f16(254.0f / 255.0f), 0x3bf8);
}

static void test_bf16_all(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t b = (uint16_t)i;
        float f = npk_bf16_to_f32(b);
        uint32_t u = f2u(f);
        if ((b & 0x7fff) > 0x7f80) {
            assert_true(isnan(f));
            assert_int_equal(u >> 16, b | 0x40);
            assert_int_equal(npk_f32_to_bf16(f), b | 0x40);
            continue;
        }
        assert_int_equal(u, (uint32_t)b << 16);
        assert_int_equal(npk_f32_to_bf16(f), b);
        if ((b & 0x7fff) >= 0x7f80) continue;
        /* Midpoint to the next bf16 (upwards in magnitude): ties to even. */
        uint32_t mid = ((uint32_t)b << 16) | 0x8000;
        uint16_t want = (b & 1) ? (uint16_t)(b + 1) : b;
        assert_int_equal(npk_f32_to_bf16(u2f(mid)), want);
        assert_int_equal(npk_f32_to_bf16(u2f(mid - 1)), b);
        assert_int_equal(npk_f32_to_bf16(u2f(mid + 1)), (uint16_t)(b + 1));
    }
}

/* The bulk paths (F16C/NEON when present, portable otherwise) agree with
 * the scalar functions bit for bit, on all halves and on many f32s. */
static void check_bulk(void)
{
    uint16_t *h = malloc(65536 * 2), *h2 = malloc(65536 * 2);
    float *f = malloc(65536 * 4);
    for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    npk_f16_to_f32_n(h, f, 65536);
    for (uint32_t i = 0; i < 65536; i++) assert_int_equal(f2u(f[i]), f2u(npk_f16_to_f32(h[i])));

    /* f32 -> f16 over a spread of bit patterns, odd lengths for the tails. */
    uint64_t s = 42;
    float *in = malloc((1 << 20) * 4);
    uint16_t *out = malloc((1 << 20) * 2);
    for (uint32_t i = 0; i < (1u << 20); i++) {
        uint32_t u = (uint32_t)npk_rand(&s);
        if (i & 1) u = (u & 0x80000000u) | (0x33000000u + (u % 0x14800000u)); /* f16 range */
        in[i] = u2f(u);
    }
    for (size_t n = (1 << 20) - 7; n > 0; n = n > 64 ? n / 3 : n - 1) {
        npk_f32_to_f16_n(in, out, n);
        for (size_t i = 0; i < n; i++) {
            if (out[i] != npk_f32_to_f16(in[i]))
                fail_msg("bulk f32->f16 mismatch at %zu: 0x%08x -> 0x%04x, scalar 0x%04x", i,
                         f2u(in[i]), out[i], npk_f32_to_f16(in[i]));
        }
        if (n < 64) break;
    }
    npk_f32_to_f16_n(f, h2, 65536); /* every half survives the round trip */
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t want =
            ((i & 0x7c00) == 0x7c00 && (i & 0x3ff)) ? (uint16_t)(i | 0x200) : (uint16_t)i;
        assert_int_equal(h2[i], want);
    }
    free(h);
    free(h2);
    free(f);
    free(in);
    free(out);
}

static void test_bulk_auto(void **state)
{
    (void)state;
    npk_half_force_portable(0);
    print_message("bulk path: %s\n", npk_half_path());
    check_bulk();
}

static void test_bulk_portable(void **state)
{
    (void)state;
    npk_half_force_portable(1);
    assert_string_equal(npk_half_path(), "portable");
    check_bulk();
    npk_half_force_portable(0);
}

static void test_bf16_bulk(void **state)
{
    (void)state;
    uint16_t h[1000], h2[1000];
    float f[1000];
    for (int i = 0; i < 1000; i++) h[i] = (uint16_t)(i * 65.537);
    npk_bf16_to_f32_n(h, f, 1000);
    npk_f32_to_bf16_n(f, h2, 1000);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(f2u(f[i]), f2u(npk_bf16_to_f32(h[i])));
        assert_int_equal(h2[i], npk_f32_to_bf16(f[i]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_to_f32_all),
        cmocka_unit_test(test_f32_to_f16_exact_and_midpoints),
        cmocka_unit_test(test_f32_to_f16_specials),
        cmocka_unit_test(test_bf16_all),
        cmocka_unit_test(test_bulk_auto),
        cmocka_unit_test(test_bulk_portable),
        cmocka_unit_test(test_bf16_bulk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
