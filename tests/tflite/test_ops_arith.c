/* Elementwise ops on small models built here: SUB, MUL, DIV, FLOOR_DIV,
 * SQRT, CAST, LOGISTIC, TANH. Expected values are worked out from the
 * definitions in docs/tflite.md (TFLite's kernels); the comments give the
 * arithmetic. srdhm(x, m) is SaturatingRoundingDoublingHighMul (ties
 * toward +infinity), rdbpot RoundingDivideByPOT (ties away from zero). */
#include "tfl_test.h"

static const int32_t S1[] = {1};

/* A two-input op a OP b -> y with per-tensor quantisation (scale 0: none). */
typedef struct qt {
    int8_t type;
    float scale;
    int64_t zp;
} qt;

static tt_model binary_model(int32_t builtin, const int32_t *as, uint32_t an, qt aq,
                             const int32_t *bs, uint32_t bn, qt bq, const int32_t *ys, uint32_t yn,
                             qt yq, int act)
{
    npk_tflb *b = npk_tflb_new();
    int32_t x = tt_add(b, "a", aq.type, an, as, aq.scale, aq.zp, NULL, 0);
    int32_t z = tt_add(b, "b", bq.type, bn, bs, bq.scale, bq.zp, NULL, 0);
    int32_t y = tt_add(b, "y", yq.type, yn, ys, yq.scale, yq.zp, NULL, 0);
    static const char *const names[] = {"fused_activation_function"};
    const double vals[] = {act};
    npk_tfl_options o;
    const bool has_act =
        npk_tfl_builtin_options_type(builtin) != 0 && builtin != NPK_TFL_OP_FLOOR_DIV;
    if (has_act) o = tt_opts(builtin, names, vals, 1);
    tt_op(b, builtin, (int32_t[]){x, z}, 2, &y, 1, has_act ? &o : NULL);
    npk_tflb_io(b, (int32_t[]){x, z}, 2, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

static void expect_binary(int32_t builtin, const int32_t *as, uint32_t an, qt aq, const void *a,
                          const int32_t *bs, uint32_t bn, qt bq, const void *bv, const int32_t *ys,
                          uint32_t yn, qt yq, int act, const void *want, size_t bytes)
{
    tt_model tm = binary_model(builtin, as, an, aq, bs, bn, bq, ys, yn, yq, act);
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){a, bv}, 1);
    tt_expect(it, 0, want, bytes);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- SUB ---- */

static void test_sub(void **state)
{
    (void)state;
    static const int32_t s4[] = {2, 2}, s2[] = {2};
    /* uint8 broadcast: a (0.5, zp 10) - b (0.25, zp 0) into (1, zp 100).
     * twice the larger scale is 1: multipliers 0.5 (2^30, shift 0), 0.25
     * (2^30, shift -1, negated for SUB) and 2^-20 (2^30, shift -19).
     * a = [14 11 10 9] -> v1 = 4 1 0 -1, scaled v1 * 2^20 / 2 = 2097152,
     * 524288, 0, -524288; b = 8 -> -(8 * 2^20 / 4) = -2097152. Sums 0,
     * -1572864, -2097152, -2621440 -> srdhm(., 2^30) = halves -> / 2^19:
     * 0, -1.5, -2, -2.5 -> 0, -2, -2, -3 (ties away from zero); + 100. */
    expect_binary(NPK_TFL_OP_SUB, s4, 2, (qt){NPK_TFL_UINT8, 0.5f, 10}, (uint8_t[]){14, 11, 10, 9},
                  S1, 1, (qt){NPK_TFL_UINT8, 0.25f, 0}, (uint8_t[]){8}, s4, 2,
                  (qt){NPK_TFL_UINT8, 1.0f, 100}, 0, (uint8_t[]){100, 98, 98, 97}, 4);
    /* RELU on the same: the clamp starts at the zero point 100. */
    expect_binary(NPK_TFL_OP_SUB, s4, 2, (qt){NPK_TFL_UINT8, 0.5f, 10}, (uint8_t[]){14, 11, 10, 9},
                  S1, 1, (qt){NPK_TFL_UINT8, 0.25f, 0}, (uint8_t[]){8}, s4, 2,
                  (qt){NPK_TFL_UINT8, 1.0f, 100}, NPK_TFL_ACT_RELU, (uint8_t[]){100, 100, 100, 100},
                  4);
    /* int8, where negating input 2's multiplier (TFLite's SUB) and
     * subtracting its rescaled value differ: scales 1 and 0.6f, output 2.
     * Multipliers 0.5 (2^30, 0), 0.3f / 1 -> 1288490240 shift -1 (negated),
     * 2^-20. a = -13: -13 * 2^19 = -6815744. b = -20: srdhm(-20971520,
     * -1288490240) = 12582912.5 -> 12582913, rdbpot(., 1) = 6291456.5 ->
     * 6291457. Sum -524287, srdhm(., 2^30) = -262143.5 -> -262143, / 2^19 =
     * -0.49999 -> 0 (subtracting the positive rescaling, -6291456, would give
     * -524288 -> -0.5 -> -1). Second element: 3 - 0.6 * 5 = 0 exactly -> 0. */
    expect_binary(NPK_TFL_OP_SUB, s2, 1, (qt){NPK_TFL_INT8, 1.0f, 0}, (int8_t[]){-13, 3}, s2, 1,
                  (qt){NPK_TFL_INT8, 0.6f, 0}, (int8_t[]){-20, 5}, s2, 1,
                  (qt){NPK_TFL_INT8, 2.0f, 0}, 0, (int8_t[]){0, 0}, 2);
    /* int32 and float32 with broadcasting: [7 -3] - [10] and RELU6. */
    expect_binary(NPK_TFL_OP_SUB, s2, 1, (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){7, -3}, S1, 1,
                  (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){-10}, s2, 1, (qt){NPK_TFL_INT32, 0, 0},
                  NPK_TFL_ACT_RELU6, (int32_t[]){6, 6}, 8);
    expect_binary(NPK_TFL_OP_SUB, s2, 1, (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){1.5f, -3.0f}, S1, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){0.25f}, s2, 1, (qt){NPK_TFL_FLOAT32, 0, 0},
                  0, (float[]){1.25f, -3.25f}, 8);
}

/* ---- MUL ---- */

static void test_mul(void **state)
{
    (void)state;
    static const int32_t s4[] = {1, 4}, s2[] = {2};
    /* uint8 broadcast: a (0.5, zp 128) = [130 124 129 127] -> v1 = 2 -4 1
     * -1; b (0.25, zp 0) = 10. Multiplier 0.5 * 0.25 / 0.5 = 0.25 (2^30,
     * shift -1): products 20 -40 10 -10 -> srdhm halves 10 -20 5 -5 ->
     * rdbpot 1: 5 -10 2.5 -2.5 -> 5 -10 3 -3; + 10. */
    expect_binary(NPK_TFL_OP_MUL, s4, 2, (qt){NPK_TFL_UINT8, 0.5f, 128},
                  (uint8_t[]){130, 124, 129, 127}, S1, 1, (qt){NPK_TFL_UINT8, 0.25f, 0},
                  (uint8_t[]){10}, s4, 2, (qt){NPK_TFL_UINT8, 0.5f, 10}, 0,
                  (uint8_t[]){15, 0, 13, 7}, 4);
    /* RELU: at least the zero point 10. */
    expect_binary(NPK_TFL_OP_MUL, s4, 2, (qt){NPK_TFL_UINT8, 0.5f, 128},
                  (uint8_t[]){130, 124, 129, 127}, S1, 1, (qt){NPK_TFL_UINT8, 0.25f, 0},
                  (uint8_t[]){10}, s4, 2, (qt){NPK_TFL_UINT8, 0.5f, 10}, NPK_TFL_ACT_RELU,
                  (uint8_t[]){15, 10, 13, 10}, 4);
    /* int8 with a multiplier above one: (0.5, zp -1) * (0.5, zp -1) into
     * (0.125, zp 3): 0.25 / 0.125 = 2 (2^30, shift 2): v = -2, 6, 11 ->
     * products 4, 36, 121 -> 8, 72, 242 -> + 3 = 11, 75, 127 (clamped). */
    static const int32_t s3[] = {3};
    expect_binary(NPK_TFL_OP_MUL, s3, 1, (qt){NPK_TFL_INT8, 0.5f, -1}, (int8_t[]){-3, 5, 10}, s3, 1,
                  (qt){NPK_TFL_INT8, 0.5f, -1}, (int8_t[]){-3, 5, 10}, s3, 1,
                  (qt){NPK_TFL_INT8, 0.125f, 3}, 0, (int8_t[]){11, 75, 127}, 3);
    /* int32 (RELU6) and float32. */
    expect_binary(NPK_TFL_OP_MUL, s2, 1, (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){3, -4}, S1, 1,
                  (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){5}, s2, 1, (qt){NPK_TFL_INT32, 0, 0},
                  NPK_TFL_ACT_RELU6, (int32_t[]){6, 0}, 8);
    expect_binary(NPK_TFL_OP_MUL, s2, 1, (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){1.5f, -3.0f}, s2, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){0.5f, 2.0f}, s2, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, 0, (float[]){0.75f, -6.0f}, 8);
}

/* ---- DIV, FLOOR_DIV ---- */

/* Invoking must fail with a message containing needle. */
static void expect_invoke_fails(const tt_model *tm, const void *const *inputs, const char *needle)
{
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_new(&tm->m, NULL, &it, &err), NPK_OK);
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_input(it, i, &v, &err), NPK_OK);
        memcpy(v.data, inputs[i], v.bytes);
    }
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_E_ARG);
    if (!strstr(err.msg, needle)) fail_msg("\"%s\" does not say \"%s\"", err.msg, needle);
    npk_tfl_interp_free(it);
}

static void test_div(void **state)
{
    (void)state;
    static const int32_t s2[] = {2}, s3[] = {3}, s6[] = {6};
    /* float32: a zero divisor gives the float range's end (TFLite clamps the
     * infinity to its activation range). */
    const float big = 3.4028235e38f;
    expect_binary(NPK_TFL_OP_DIV, s3, 1, (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){1, -3, 2}, s3, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){2, 2, 0}, s3, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, 0, (float[]){0.5f, -1.5f, big}, 12);
    expect_binary(NPK_TFL_OP_DIV, s3, 1, (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){1, -3, 2}, S1, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){2}, s3, 1, (qt){NPK_TFL_FLOAT32, 0, 0},
                  NPK_TFL_ACT_RELU, (float[]){0.5f, 0, 1}, 12);
    /* int32: truncation toward zero. */
    expect_binary(NPK_TFL_OP_DIV, s2, 1, (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){7, -7}, S1, 1,
                  (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){2}, s2, 1, (qt){NPK_TFL_INT32, 0, 0}, 0,
                  (int32_t[]){3, -3}, 8);
    /* int8, scales 1: multiplier 1 (2^30, shift 1). 7 / 2: reciprocal of 2
     * is 2^31 - 1 with 1 bit over one, 7 has 28 leading sign bits: srdhm(7
     * << 28, 2^31 - 1) = 1879048192, total shift 1 - 1 - 28 = -28,
     * srdhm(., 2^30) = 939524096, / 2^28 = 3.5 -> 4. -7 / 2: -1879048192
     * -> -939524096 -> -3.5 -> -3 (srdhm rounds the product's tie up, so
     * the value is just above -3.5). 9 / -4: both negated, -9 / 4 = -2.25
     * -> -2. 5 / 3 -> 2, 1 / 3 -> 0, 100 / 7 -> 14 (14.29). */
    expect_binary(NPK_TFL_OP_DIV, s6, 1, (qt){NPK_TFL_INT8, 1.0f, 0},
                  (int8_t[]){7, -7, 9, 5, 1, 100}, s6, 1, (qt){NPK_TFL_INT8, 1.0f, 0},
                  (int8_t[]){2, 2, -4, 3, 3, 7}, s6, 1, (qt){NPK_TFL_INT8, 1.0f, 0}, 0,
                  (int8_t[]){4, -3, -2, 2, 0, 14}, 6);
    /* uint8 with zero points: (x - 100) / (y - 50) with the same values. */
    expect_binary(NPK_TFL_OP_DIV, s6, 1, (qt){NPK_TFL_UINT8, 1.0f, 100},
                  (uint8_t[]){107, 93, 109, 105, 101, 200}, s6, 1, (qt){NPK_TFL_UINT8, 1.0f, 50},
                  (uint8_t[]){52, 52, 46, 53, 53, 57}, s6, 1, (qt){NPK_TFL_UINT8, 1.0f, 10}, 0,
                  (uint8_t[]){14, 7, 8, 12, 10, 24}, 6);
    /* FLOOR_DIV: floor of the quotient; int32 and float32. */
    static const int32_t s4[] = {4};
    expect_binary(NPK_TFL_OP_FLOOR_DIV, s4, 1, (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){7, -7, 6, -6},
                  S1, 1, (qt){NPK_TFL_INT32, 0, 0}, (int32_t[]){2}, s4, 1,
                  (qt){NPK_TFL_INT32, 0, 0}, 0, (int32_t[]){3, -4, 3, -3}, 16);
    expect_binary(NPK_TFL_OP_FLOOR_DIV, s2, 1, (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){7.5f, -7.5f},
                  S1, 1, (qt){NPK_TFL_FLOAT32, 0, 0}, (float[]){-2}, s2, 1,
                  (qt){NPK_TFL_FLOAT32, 0, 0}, 0, (float[]){-4, 3}, 8);
    /* Zero divisors fail the invocation (naming the operator). */
    tt_model tm = binary_model(NPK_TFL_OP_FLOOR_DIV, s2, 1, (qt){NPK_TFL_INT32, 0, 0}, s2, 1,
                               (qt){NPK_TFL_INT32, 0, 0}, s2, 1, (qt){NPK_TFL_INT32, 0, 0}, 0);
    expect_invoke_fails(&tm, (const void *[]){(int32_t[]){1, 2}, (int32_t[]){3, 0}},
                        "operator 0 (FLOOR_DIV): division by zero");
    tt_model_free(&tm);
    tm = binary_model(NPK_TFL_OP_DIV, s2, 1, (qt){NPK_TFL_UINT8, 1.0f, 0}, s2, 1,
                      (qt){NPK_TFL_UINT8, 1.0f, 7}, s2, 1, (qt){NPK_TFL_UINT8, 1.0f, 0}, 0);
    expect_invoke_fails(&tm, (const void *[]){(uint8_t[]){1, 2}, (uint8_t[]){3, 7}},
                        "operator 0 (DIV): division by zero");
    tt_model_free(&tm);
}

/* ---- SQRT, CAST ---- */

static tt_model unary_model(int32_t builtin, int8_t tin, qt qin, int8_t tout, qt qout,
                            const int32_t *shape, uint32_t nd)
{
    npk_tflb *b = npk_tflb_new();
    int32_t x = tt_add(b, "x", tin, nd, shape, qin.scale, qin.zp, NULL, 0);
    int32_t y = tt_add(b, "y", tout, nd, shape, qout.scale, qout.zp, NULL, 0);
    tt_op(b, builtin, &x, 1, &y, 1, NULL);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

static void expect_unary(int32_t builtin, int8_t tin, qt qin, const void *in, int8_t tout, qt qout,
                         const void *want, size_t n)
{
    const int32_t shape[] = {(int32_t)n};
    tt_model tm = unary_model(builtin, tin, qin, tout, qout, shape, 1);
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){in}, 1);
    tt_expect(it, 0, want, n * npk_tfl_type_size(tout));
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

static void test_sqrt_cast(void **state)
{
    (void)state;
    const qt none = {0, 0, 0};
    expect_unary(NPK_TFL_OP_SQRT, NPK_TFL_FLOAT32, none, (float[]){0, 2.25f, 16}, NPK_TFL_FLOAT32,
                 none, (float[]){0, 1.5f, 4}, 3);
    /* uint8 -> float32: raw values, the quantisation is ignored. */
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_UINT8, (qt){0, 0.5f, 3}, (uint8_t[]){0, 7, 255},
                 NPK_TFL_FLOAT32, none, (float[]){0, 7, 255}, 3);
    /* int32 -> float32 rounds to nearest (2^24 + 1 -> 2^24). */
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_INT32, none, (int32_t[]){-5, 16777217}, NPK_TFL_FLOAT32,
                 none, (float[]){-5, 16777216.0f}, 2);
    /* float32 -> int32 truncates toward zero; out of range saturates, NaN
     * gives 0. */
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_FLOAT32, none, (float[]){2.9f, -2.9f, 3e9f, NAN},
                 NPK_TFL_INT32, none, (int32_t[]){2, -2, INT32_MAX, 0}, 4);
    /* int32 -> uint8 and int8 wrap; -> bool is "not zero"; int64 <-> int32. */
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_INT32, none, (int32_t[]){300, -1, 0}, NPK_TFL_UINT8, none,
                 (uint8_t[]){44, 255, 0}, 3);
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_INT32, none, (int32_t[]){200, -1, 0}, NPK_TFL_INT8, none,
                 (int8_t[]){-56, -1, 0}, 3);
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_FLOAT32, none, (float[]){0.5f, 0, -0.0f}, NPK_TFL_BOOL,
                 none, (uint8_t[]){1, 0, 0}, 3);
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_INT64, none, (int64_t[]){-2, 4294967297LL}, NPK_TFL_INT32,
                 none, (int32_t[]){-2, 1}, 2);
    expect_unary(NPK_TFL_OP_CAST, NPK_TFL_BOOL, none, (uint8_t[]){1, 0}, NPK_TFL_INT64, none,
                 (int64_t[]){1, 0}, 2);
}

/* ---- LOGISTIC, TANH ---- */

static void test_logistic_tanh(void **state)
{
    (void)state;
    /* int8 logistic, input (0.5, zp 0), output (1/256, -128): x = 0 -> 0.5
     * -> 128 - 128 = 0; x = 0.5 -> 0.622459 * 256 = 159.35 -> 159 - 128 =
     * 31; x = -0.5 -> 0.377541 * 256 = 96.65 -> 97 - 128 = -31; x = 63.5 ->
     * 1 (in float) -> 256 - 128 -> 127; x = -64 -> 1.6e-28 -> -128. */
    expect_unary(NPK_TFL_OP_LOGISTIC, NPK_TFL_INT8, (qt){0, 0.5f, 0},
                 (int8_t[]){0, 1, -1, 127, -128}, NPK_TFL_INT8, (qt){0, 1.0f / 256, -128},
                 (int8_t[]){0, 31, -31, 127, -128}, 5);
    /* uint8 logistic with zero points: input (0.25, zp 100), output (1/256,
     * 0): q = 100 -> 128; 102 (x = 0.5) -> 159; 98 -> 97; 104 (x = 1) ->
     * 0.731059 * 256 = 187.15 -> 187; 0 (x = -25) -> 0; 255 (x = 38.75) ->
     * 1 -> 256 -> 255. */
    expect_unary(NPK_TFL_OP_LOGISTIC, NPK_TFL_UINT8, (qt){0, 0.25f, 100},
                 (uint8_t[]){100, 102, 98, 104, 0, 255}, NPK_TFL_UINT8, (qt){0, 1.0f / 256, 0},
                 (uint8_t[]){128, 159, 97, 187, 0, 255}, 6);
    /* int8 tanh, input (0.5, zp 0), output (1/128, 0): tanh(1) = 0.761594 *
     * 128 = 97.48 -> 97; tanh(-1) -> -97; tanh(0.5) = 0.462117 * 128 =
     * 59.15 -> 59; large -> 128 -> 127 and -128. */
    expect_unary(NPK_TFL_OP_TANH, NPK_TFL_INT8, (qt){0, 0.5f, 0},
                 (int8_t[]){0, 2, -2, 1, 127, -128}, NPK_TFL_INT8, (qt){0, 1.0f / 128, 0},
                 (int8_t[]){0, 97, -97, 59, 127, -128}, 6);
    /* uint8 tanh, output (1/128, 128): tanh(x) * 128 + 128. */
    expect_unary(NPK_TFL_OP_TANH, NPK_TFL_UINT8, (qt){0, 0.5f, 128}, (uint8_t[]){128, 130, 126},
                 NPK_TFL_UINT8, (qt){0, 1.0f / 128, 128}, (uint8_t[]){128, 225, 31}, 3);
    /* Float: 1 / (1 + e^-x) and tanh(x) (values exact in float). */
    expect_unary(NPK_TFL_OP_LOGISTIC, NPK_TFL_FLOAT32, (qt){0}, (float[]){0, 200, -200},
                 NPK_TFL_FLOAT32, (qt){0}, (float[]){0.5f, 1, 0}, 3);
    expect_unary(NPK_TFL_OP_TANH, NPK_TFL_FLOAT32, (qt){0}, (float[]){0, 20, -20}, NPK_TFL_FLOAT32,
                 (qt){0}, (float[]){0, 1, -1}, 3);
    /* LOGISTIC needs an output scale of 1/256 (as TFLite). */
    const int32_t s1[] = {1};
    tt_model tm = unary_model(NPK_TFL_OP_LOGISTIC, NPK_TFL_INT8, (qt){0, 0.5f, 0}, NPK_TFL_INT8,
                              (qt){0, 1.0f / 128, -128}, s1, 1);
    tt_plan_fails(&tm, NPK_E_UNSUPPORTED, "operator 0 (LOGISTIC): output scale 0.0078125");
    tt_model_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sub),           cmocka_unit_test(test_mul),
        cmocka_unit_test(test_div),           cmocka_unit_test(test_sqrt_cast),
        cmocka_unit_test(test_logistic_tanh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
