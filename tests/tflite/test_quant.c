/* TFLite's integer arithmetic (tflite_quant.h) against values derived by
 * hand from the definitions (quantization_util.cc, gemmlowp fixedpoint.h):
 * the rounding of the multiplier, the nudge of the doubling high multiply
 * (asymmetric for negative products), round half away from zero in the
 * divide by a power of two, saturation, and activation ranges. */
#include "tfl_test.h"

static void test_quantize_multiplier(void **state)
{
    (void)state;
    int32_t q;
    int s;
    npk_q_quantize_multiplier(0.5, &q, &s); /* 0.5 * 2^0 */
    assert_int_equal(q, 1 << 30);
    assert_int_equal(s, 0);
    npk_q_quantize_multiplier(1.0, &q, &s); /* frexp: 0.5 * 2^1 */
    assert_int_equal(q, 1 << 30);
    assert_int_equal(s, 1);
    npk_q_quantize_multiplier(0.75, &q, &s); /* 0.75 * 2^31 */
    assert_int_equal(q, 1610612736);
    assert_int_equal(s, 0);
    npk_q_quantize_multiplier(3.0, &q, &s); /* 0.75 * 2^2 */
    assert_int_equal(q, 1610612736);
    assert_int_equal(s, 2);
    /* Mantissa * 2^31 = 2^30 + 0.5: rounded half away from zero. */
    npk_q_quantize_multiplier(0.5 + ldexp(1.0, -32), &q, &s);
    assert_int_equal(q, (1 << 30) + 1);
    assert_int_equal(s, 0);
    /* Rounds up to 2^31: halved, exponent + 1. */
    npk_q_quantize_multiplier(1.0 - ldexp(1.0, -33), &q, &s);
    assert_int_equal(q, 1 << 30);
    assert_int_equal(s, 1);
    /* Below 2^-32 every product would be shifted out: flushed to zero. */
    npk_q_quantize_multiplier(ldexp(1.0, -40), &q, &s);
    assert_int_equal(q, 0);
    assert_int_equal(s, 0);
    npk_q_quantize_multiplier(ldexp(1.0, -32), &q, &s); /* 0.5 * 2^-31: kept */
    assert_int_equal(q, 1 << 30);
    assert_int_equal(s, -31);
    npk_q_quantize_multiplier(0.0, &q, &s);
    assert_int_equal(q, 0);
    assert_int_equal(s, 0);
    npk_q_quantize_multiplier(NAN, &q, &s);
    assert_int_equal(q, 0);
}

static void test_srdhm(void **state)
{
    (void)state;
    /* The one overflow: -1 * -1 saturates. */
    assert_int_equal(npk_q_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
    assert_int_equal(npk_q_srdhm(INT32_MIN, INT32_MAX), -INT32_MAX);
    /* 3 * 0.5 = 1.5: the nudge 2^30 rounds up to 2. */
    assert_int_equal(npk_q_srdhm(3, 1 << 30), 2);
    /* -3 * 0.5 = -1.5: the nudge 1 - 2^30 and truncation give -1. */
    assert_int_equal(npk_q_srdhm(-3, 1 << 30), -1);
    assert_int_equal(npk_q_srdhm(-23, 1 << 30), -11); /* -11.5 */
    assert_int_equal(npk_q_srdhm(-25, 1 << 30), -12); /* -12.5 */
    assert_int_equal(npk_q_srdhm(1 << 30, 1 << 30), 1 << 29);
    assert_int_equal(npk_q_srdhm(100, 1610612736), 75);
    assert_int_equal(npk_q_srdhm(0, INT32_MIN), 0);
}

static void test_rdbpot(void **state)
{
    (void)state;
    assert_int_equal(npk_q_rdbpot(5, 1), 3);   /* 2.5 */
    assert_int_equal(npk_q_rdbpot(-5, 1), -3); /* -2.5: away from zero */
    assert_int_equal(npk_q_rdbpot(-4, 1), -2);
    assert_int_equal(npk_q_rdbpot(7, 2), 2);   /* 1.75 */
    assert_int_equal(npk_q_rdbpot(6, 2), 2);   /* 1.5 */
    assert_int_equal(npk_q_rdbpot(-6, 2), -2); /* -1.5 */
    assert_int_equal(npk_q_rdbpot(-7, 2), -2); /* -1.75 */
    assert_int_equal(npk_q_rdbpot(-5, 2), -1); /* -1.25 */
    assert_int_equal(npk_q_rdbpot(INT32_MAX, 31), 1);
    assert_int_equal(npk_q_rdbpot(INT32_MIN, 31), -1);
    assert_int_equal(npk_q_rdbpot(12345, 0), 12345);
}

static void test_multiply(void **state)
{
    (void)state;
    /* 100 * 0.75 / 2 = 37.5 -> 75 then 38; -100 -> -75 then -38. */
    assert_int_equal(npk_q_mul(100, 1610612736, -1), 38);
    assert_int_equal(npk_q_mul(-100, 1610612736, -1), -38);
    /* A positive shift multiplies first: 3 * 2 * 0.5. */
    assert_int_equal(npk_q_mul(3, 1 << 30, 1), 3);
    assert_int_equal(npk_q_mul(-7, 1 << 30, 1), -7);
    /* Saturation of the high multiply passes through. */
    assert_int_equal(npk_q_mul(INT32_MIN, INT32_MIN, 0), INT32_MAX);
    /* Double rounding: 11 * 0.25 = 2.75: srdhm(11, 2^30) = 6 (5.5), then 6 / 2 = 3. */
    assert_int_equal(npk_q_mul(11, 1 << 30, -1), 3);
    /* -11 * 0.25: srdhm gives -5 (-5.5 toward zero), then -2.5 -> -3. */
    assert_int_equal(npk_q_mul(-11, 1 << 30, -1), -3);
    /* Left shifts wrap like TFLite's int32 arithmetic: 2^30 << 2 = 0. */
    assert_int_equal(npk_q_mul(1 << 30, 1 << 30, 2), 0);
}

static void test_activation_range(void **state)
{
    (void)state;
    int32_t lo, hi;
    npk_q_activation_range(NPK_TFL_ACT_RELU6, NPK_TFL_UINT8, 0.1f, 10, &lo, &hi);
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 70);
    npk_q_activation_range(NPK_TFL_ACT_RELU_N1_TO_1, NPK_TFL_UINT8, 0.1f, 10, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 20);
    npk_q_activation_range(NPK_TFL_ACT_RELU, NPK_TFL_INT8, 0.05f, -20, &lo, &hi);
    assert_int_equal(lo, -20);
    assert_int_equal(hi, 127);
    npk_q_activation_range(NPK_TFL_ACT_RELU6, NPK_TFL_UINT8, 0.01f, 0, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 255); /* 600 clamped to the type */
    npk_q_activation_range(NPK_TFL_ACT_NONE, NPK_TFL_INT8, 1.0f, 3, &lo, &hi);
    assert_int_equal(lo, -128);
    assert_int_equal(hi, 127);
    /* RELU6 at scale 0.04: 6 / 0.04f = 150 (149.99999 in float rounds to 150). */
    npk_q_activation_range(NPK_TFL_ACT_RELU6, NPK_TFL_INT8, 0.04f, -128, &lo, &hi);
    assert_int_equal(lo, -128);
    assert_int_equal(hi, 22);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantize_multiplier),
        cmocka_unit_test(test_srdhm),
        cmocka_unit_test(test_rdbpot),
        cmocka_unit_test(test_multiply),
        cmocka_unit_test(test_activation_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
