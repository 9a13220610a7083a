/* Each op on a small model built here, against outputs worked out by hand
 * from the definitions in docs/tflite.md (TFLite's reference kernels).
 * The comments give the arithmetic. */
#include "tfl_test.h"

static const int32_t S1[] = {1};

/* ---- CONV_2D ---- */

/* uint8, multiplier exactly 1 (scales 1): x - zx = 0..8 on a 3x3 image,
 * filter 2x2 with w - zw = [1 0; 0 2], bias 5, output zero point 3. */
static tt_model conv_u8_model(int padding, int stride)
{
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 3, 3, 1}, ws[] = {1, 2, 2, 1};
    static const uint8_t w[] = {3, 2, 2, 4}; /* zw = 2 */
    static const int32_t bias[] = {5};
    const int32_t oh = padding == NPK_TFL_PAD_VALID ? 2 : (3 + stride - 1) / stride;
    const int32_t os[] = {1, oh, oh, 1};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 4, is, 1.0f, 1, NULL, 0);
    int32_t f = tt_add(b, "w", NPK_TFL_UINT8, 4, ws, 1.0f, 2, w, sizeof w);
    int32_t c = tt_add(b, "b", NPK_TFL_INT32, 1, S1, 1.0f, 0, bias, sizeof bias);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 4, os, 1.0f, 3, NULL, 0);
    static const char *const names[] = {"padding", "stride_w", "stride_h"};
    const double vals[] = {padding, stride, stride};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_CONV_2D, names, vals, 3);
    tt_op(b, NPK_TFL_OP_CONV_2D, (int32_t[]){x, f, c}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

static void test_conv_u8(void **state)
{
    (void)state;
    static const uint8_t x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}; /* zx = 1 */
    const void *in[] = {x};
    /* VALID, stride 1: acc = x(y,x) + 2 x(y+1,x+1) + 5 = 13 16 22 25, + 3. */
    tt_model tm = conv_u8_model(NPK_TFL_PAD_VALID, 1);
    npk_tfl_interp *it = tt_run(&tm, in, 1);
    tt_expect(it, 0, (uint8_t[]){16, 19, 25, 28}, 4);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    /* SAME, stride 2: 2x2 output, padding 0 before and 1 after (input zero
     * point there): 0+2*4+5, 2+0+5, 6+0+5, 8+0+5 = 13 7 11 13, + 3. */
    tm = conv_u8_model(NPK_TFL_PAD_SAME, 2);
    it = tt_run(&tm, in, 2);
    tt_expect(it, 0, (uint8_t[]){16, 10, 14, 16}, 4);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* int8 per channel with rounding multipliers: x - zx = [11, -19], filters
 * [1 2] and [-3 1], bias [4 -6]: acc = -23, -58. Multipliers 0.5*0.25/0.25
 * = 0.5 and 0.5*0.125/0.25 = 0.25: srdhm(-23, 2^30) = -11 (-11.5 toward
 * zero), srdhm(-58, 2^30) = -29 then -14.5 -> -15 (away from zero); + 5. */
static void test_conv_i8_per_channel(void **state)
{
    (void)state;
    for (int act = 0; act < 2; act++) {
        npk_tflb *b = npk_tflb_new();
        static const int32_t is[] = {1, 1, 1, 2}, ws[] = {2, 1, 1, 2}, os[] = {1, 1, 1, 2},
                             bs[] = {2};
        static const int8_t w[] = {1, 2, -3, 1};
        static const int32_t bias[] = {4, -6};
        static const float wsc[] = {0.25f, 0.125f};
        static const int64_t wzp[] = {0, 0};
        int32_t x = tt_add(b, "x", NPK_TFL_INT8, 4, is, 0.5f, -1, NULL, 0);
        npk_tflb_tensor wt = {"w", NPK_TFL_INT8, 4, ws, w, sizeof w, 2, wsc, wzp, 0};
        int32_t f = npk_tflb_tensor_add(b, &wt);
        int32_t c = tt_add(b, "b", NPK_TFL_INT32, 1, bs, 0.125f, 0, bias, sizeof bias);
        int32_t y = tt_add(b, "y", NPK_TFL_INT8, 4, os, 0.25f, 5, NULL, 0);
        static const char *const names[] = {"padding", "stride_w", "stride_h",
                                            "fused_activation_function"};
        const double vals[] = {NPK_TFL_PAD_VALID, 1, 1, act ? NPK_TFL_ACT_RELU : 0};
        npk_tfl_options o = tt_opts(NPK_TFL_OP_CONV_2D, names, vals, 4);
        tt_op(b, NPK_TFL_OP_CONV_2D, (int32_t[]){x, f, c}, 3, &y, 1, &o);
        npk_tflb_io(b, &x, 1, &y, 1);
        tt_model tm;
        tt_finish(b, &tm);
        const int8_t xin[] = {10, -20};
        npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 1);
        /* RELU: the clamp starts at the zero point 5. */
        const int8_t want[2][2] = {{-6, -10}, {5, 5}};
        tt_expect(it, 0, want[act], 2);
        npk_tfl_interp_free(it);
        tt_model_free(&tm);
    }
}

/* ---- DEPTHWISE_CONV_2D ---- */

/* uint8, depth multiplier 2, dilation 2, VALID: the taps are (0,0), (0,2),
 * (2,0), (2,2) of x - zx = 0..8; w - zw = [1 0 0 1] and [0 2 1 0] (zw 2),
 * bias [1 -2]: 0+8+1 = 9 and 2*2+6-2 = 8. */
static void test_depthwise_u8(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 3, 3, 1}, ws[] = {1, 2, 2, 2}, os[] = {1, 1, 1, 2}, bs[] = {2};
    static const uint8_t w[] = {3, 2, 2, 4, 2, 3, 3, 2}; /* [ky][kx][oc] */
    static const int32_t bias[] = {1, -2};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 4, is, 1.0f, 1, NULL, 0);
    int32_t f = tt_add(b, "w", NPK_TFL_UINT8, 4, ws, 1.0f, 2, w, sizeof w);
    int32_t c = tt_add(b, "b", NPK_TFL_INT32, 1, bs, 1.0f, 0, bias, sizeof bias);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 4, os, 1.0f, 0, NULL, 0);
    static const char *const names[] = {"padding",           "stride_w",
                                        "stride_h",          "depth_multiplier",
                                        "dilation_w_factor", "dilation_h_factor"};
    const double vals[] = {NPK_TFL_PAD_VALID, 1, 1, 2, 2, 2};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_DEPTHWISE_CONV_2D, names, vals, 6);
    tt_op(b, NPK_TFL_OP_DEPTHWISE_CONV_2D, (int32_t[]){x, f, c}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    static const uint8_t xin[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 1);
    tt_expect(it, 0, (uint8_t[]){9, 8}, 2);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- FULLY_CONNECTED ---- */

/* uint8, keep_num_dims, no bias input (-1): x [1,2,3] = [[1 2 3] [4 5 6]]
 * (zx 0), w - zw = [[1 0 0] [0 1 0]] (zw 1): [[1 2] [4 5]]. */
static void test_fully_connected(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 2, 3}, ws[] = {2, 3}, os[] = {1, 2, 2};
    static const uint8_t w[] = {2, 1, 1, 1, 2, 1};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 3, is, 1.0f, 0, NULL, 0);
    int32_t f = tt_add(b, "w", NPK_TFL_UINT8, 2, ws, 1.0f, 1, w, sizeof w);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 3, os, 1.0f, 0, NULL, 0);
    static const char *const names[] = {"keep_num_dims"};
    const double vals[] = {1};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_FULLY_CONNECTED, names, vals, 1);
    tt_op(b, NPK_TFL_OP_FULLY_CONNECTED, (int32_t[]){x, f, -1}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    static const uint8_t xin[] = {1, 2, 3, 4, 5, 6};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 1);
    tt_expect(it, 0, (uint8_t[]){1, 2, 4, 5}, 4);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- ADD ---- */

/* uint8 with broadcasting: a (scale 0.5, zp 10) = [14 11 10 9] = 2, 0.5, 0,
 * -0.5; b (scale 0.25) = [8] = 2; output scale 1. Multipliers 0.5, 0.25 and
 * 2^-20 (left shift 20): sums 4, 2.5, 2, 1.5 -> 4, 3, 2, 2 (half away from
 * zero in the last divide). */
static void test_add_broadcast(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t as[] = {1, 2, 2, 1};
    int32_t x = tt_add(b, "a", NPK_TFL_UINT8, 4, as, 0.5f, 10, NULL, 0);
    int32_t z = tt_add(b, "b", NPK_TFL_UINT8, 1, S1, 0.25f, 0, NULL, 0);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 4, as, 1.0f, 0, NULL, 0);
    npk_tfl_options o = tt_opts(NPK_TFL_OP_ADD, NULL, NULL, 0);
    tt_op(b, NPK_TFL_OP_ADD, (int32_t[]){x, z}, 2, &y, 1, &o);
    npk_tflb_io(b, (int32_t[]){x, z}, 2, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    static const uint8_t a[] = {14, 11, 10, 9}, c[] = {8};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){a, c}, 1);
    tt_expect(it, 0, (uint8_t[]){4, 3, 2, 2}, 4);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- pools ---- */

static tt_model pool_model(int32_t builtin, int padding, int size, int stride, int act)
{
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 2, 3, 1};
    const int32_t ow =
        padding == NPK_TFL_PAD_SAME ? (3 + stride - 1) / stride : (3 + stride - size) / stride;
    const int32_t oh =
        padding == NPK_TFL_PAD_SAME ? (2 + stride - 1) / stride : (2 + stride - size) / stride;
    const int32_t os[] = {1, oh, ow, 1};
    int32_t x = tt_add(b, "x", NPK_TFL_INT8, 4, is, 1.0f, 0, NULL, 0);
    int32_t y = tt_add(b, "y", NPK_TFL_INT8, 4, os, 1.0f, 0, NULL, 0);
    static const char *const names[] = {"padding",       "stride_w",
                                        "stride_h",      "filter_width",
                                        "filter_height", "fused_activation_function"};
    const double vals[] = {padding, stride, stride, size, size, act};
    npk_tfl_options o = tt_opts(builtin, names, vals, 6);
    tt_op(b, builtin, &x, 1, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

static void test_pools(void **state)
{
    (void)state;
    static const int8_t x[] = {1, 2, 3, 4, 6, -8};
    /* Average, SAME 2x2 stride 2: windows {1 2 4 6} = 13/4 -> (13+2)/4 = 3,
     * {3 -8} (padding not counted) = -5/2 -> (-5-1)/2 = -3. */
    tt_model tm = pool_model(NPK_TFL_OP_AVERAGE_POOL_2D, NPK_TFL_PAD_SAME, 2, 2, 0);
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){x}, 1);
    tt_expect(it, 0, (int8_t[]){3, -3}, 2);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    /* Max, VALID 2x2 stride 1, RELU6 (clamp 0..6 at scale 1): max{1 2 4 6} =
     * 6, max{2 3 6 -8} = 6. */
    tm = pool_model(NPK_TFL_OP_MAX_POOL_2D, NPK_TFL_PAD_VALID, 2, 1, NPK_TFL_ACT_RELU6);
    it = tt_run(&tm, (const void *[]){x}, 1);
    tt_expect(it, 0, (int8_t[]){6, 6}, 2);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    /* Max, SAME 2x2 stride 2, no activation: max{1 2 4 6} = 6, max{3 -8} = 3. */
    tm = pool_model(NPK_TFL_OP_MAX_POOL_2D, NPK_TFL_PAD_SAME, 2, 2, 0);
    it = tt_run(&tm, (const void *[]){x}, 1);
    tt_expect(it, 0, (int8_t[]){6, 3}, 2);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- RESHAPE, SQUEEZE ---- */

static void test_reshape_squeeze(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 2, 1, 3}, ms[] = {3, 2}, os[] = {2, 3}, shape[] = {-1, 2},
                         two[] = {2};
    int32_t x = tt_add(b, "x", NPK_TFL_FLOAT32, 4, is, 0, 0, NULL, 0);
    int32_t s = tt_add(b, "shape", NPK_TFL_INT32, 1, two, 0, 0, shape, sizeof shape);
    int32_t m = tt_add(b, "m", NPK_TFL_FLOAT32, 2, ms, 0, 0, NULL, 0);
    int32_t y = tt_add(b, "y", NPK_TFL_FLOAT32, 2, os, 0, 0, NULL, 0);
    int32_t z = tt_add(b, "z", NPK_TFL_FLOAT32, 2, os, 0, 0, NULL, 0);
    npk_tfl_options ro = tt_opts(NPK_TFL_OP_RESHAPE, NULL, NULL, 0);
    tt_op(b, NPK_TFL_OP_RESHAPE, (int32_t[]){x, s}, 2, &m, 1, &ro);
    npk_tfl_options so;
    npk_error err = {0};
    static const int32_t dims[] = {0, -2};
    assert_int_equal(
        npk_tfl_options_init(&so, npk_tfl_builtin_options_type(NPK_TFL_OP_SQUEEZE), &err), NPK_OK);
    assert_int_equal(npk_tfl_options_set_vec(&so, "squeeze_dims", dims, 2, &err), NPK_OK);
    tt_op(b, NPK_TFL_OP_SQUEEZE, &x, 1, &y, 1, &so);
    tt_op(b, NPK_TFL_OP_SQUEEZE, &x, 1, &z, 1, NULL); /* no dims: every 1 goes */
    npk_tflb_io(b, &x, 1, (int32_t[]){m, y, z}, 3);
    tt_model tm;
    tt_finish(b, &tm);
    static const float xin[] = {1, 2, 3, 4, 5, 6};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 1);
    for (uint32_t i = 0; i < 3; i++) tt_expect(it, i, xin, sizeof xin);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- SOFTMAX ---- */

/* uint8, beta 1, input scale 1: three equal inputs: each exp is 1, the Q12
 * sum 3 (1572864), its reciprocal ~1/3 in Q0.31, >> 24: 85. [0 100]: the
 * -100 difference is below diff_min (-15 here) and gives 0, the maximum
 * 256 clamped to 255. */
static void test_softmax_u8(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t s3[] = {2, 3};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 2, s3, 1.0f, 0, NULL, 0);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 2, s3, 1.0f / 256, 0, NULL, 0);
    static const char *const names[] = {"beta"};
    const double vals[] = {1.0};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_SOFTMAX, names, vals, 1);
    tt_op(b, NPK_TFL_OP_SOFTMAX, &x, 1, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    static const uint8_t xin[] = {5, 5, 5, 0, 100, 0};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 1);
    tt_expect(it, 0, (uint8_t[]){85, 85, 85, 0, 255, 0}, 6);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- QUANTIZE, DEQUANTIZE ---- */

static void test_quantize(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t s6[] = {6}, s5[] = {5}, s4[] = {4};
    int32_t f = tt_add(b, "f", NPK_TFL_FLOAT32, 1, s6, 0, 0, NULL, 0);
    int32_t q = tt_add(b, "q", NPK_TFL_UINT8, 1, s6, 0.5f, 10, NULL, 0);
    int32_t u = tt_add(b, "u", NPK_TFL_UINT8, 1, s5, 1.0f, 128, NULL, 0);
    int32_t r = tt_add(b, "r", NPK_TFL_INT8, 1, s5, 2.0f, 0, NULL, 0);
    int32_t i8 = tt_add(b, "i8", NPK_TFL_INT8, 1, s4, 0.1f, -3, NULL, 0);
    int32_t d = tt_add(b, "d", NPK_TFL_FLOAT32, 1, s4, 0, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_QUANTIZE, &f, 1, &q, 1, NULL);
    tt_op(b, NPK_TFL_OP_QUANTIZE, &u, 1, &r, 1, NULL);
    tt_op(b, NPK_TFL_OP_DEQUANTIZE, &i8, 1, &d, 1, NULL);
    npk_tflb_io(b, (int32_t[]){f, u, i8}, 3, (int32_t[]){q, r, d}, 3);
    tt_model tm;
    tt_finish(b, &tm);
    static const float fin[] = {0.0f, 1.25f, -1.25f, 1000.0f, -1000.0f, 0.75f};
    static const uint8_t uin[] = {128, 131, 125, 255, 0};
    static const int8_t iin[] = {-3, 7, -128, 127};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){fin, uin, iin}, 1);
    /* 10 + round(x / 0.5): 0, 2.5 -> 3, -2.5 -> -3, saturated, 1.5 -> 2. */
    tt_expect(it, 0, (uint8_t[]){10, 13, 7, 255, 0, 12}, 6);
    /* (x - 128) * 0.5 by srdhm(., 2^30): 0, 1.5 -> 2, -1.5 -> -1, 63.5 -> 64, -64. */
    tt_expect(it, 1, (int8_t[]){0, 2, -1, 64, -64}, 5);
    /* float(double(0.1f) * (q + 3)). */
    const float want[] = {0.0f, (float)((double)0.1f * 10), (float)((double)0.1f * -125),
                          (float)((double)0.1f * 130)};
    tt_expect(it, 2, want, sizeof want);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- CONCATENATION ---- */

/* uint8 along the last axis: input 0 has the output's quantisation and is
 * copied; input 1 (scale 0.5, zp 4) is requantised: round(q * 0.5 - 2):
 * 8 -> 2, 9 -> 2.5 -> 3. */
static void test_concat(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t s0[] = {1, 1, 2}, s1[] = {1, 1, 2}, so[] = {1, 1, 4};
    int32_t a = tt_add(b, "a", NPK_TFL_UINT8, 3, s0, 1.0f, 0, NULL, 0);
    int32_t c = tt_add(b, "c", NPK_TFL_UINT8, 3, s1, 0.5f, 4, NULL, 0);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 3, so, 1.0f, 0, NULL, 0);
    static const char *const names[] = {"axis"};
    const double vals[] = {-1};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_CONCATENATION, names, vals, 1);
    tt_op(b, NPK_TFL_OP_CONCATENATION, (int32_t[]){a, c}, 2, &y, 1, &o);
    npk_tflb_io(b, (int32_t[]){a, c}, 2, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    static const uint8_t ain[] = {10, 20}, cin[] = {8, 9};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){ain, cin}, 1);
    tt_expect(it, 0, (uint8_t[]){10, 20, 2, 3}, 4);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- MEAN ---- */

/* int8 over axes 1, 2 with keep_dims: sums 11 and -11 over 4 elements;
 * multiplier 1 (2^30, shift 1) with 1/4 folded in: 2^30 and shift -1:
 * srdhm(11, 2^30) = 6 then 3; srdhm(-11, 2^30) = -5 then -2.5 -> -3. */
static void test_mean(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 2, 2, 2}, os[] = {1, 1, 1, 2}, two[] = {2}, axes[] = {1, 2};
    int32_t x = tt_add(b, "x", NPK_TFL_INT8, 4, is, 1.0f, 0, NULL, 0);
    int32_t ax = tt_add(b, "axes", NPK_TFL_INT32, 1, two, 0, 0, axes, sizeof axes);
    int32_t y = tt_add(b, "y", NPK_TFL_INT8, 4, os, 1.0f, 0, NULL, 0);
    static const char *const names[] = {"keep_dims"};
    const double vals[] = {1};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_MEAN, names, vals, 1);
    tt_op(b, NPK_TFL_OP_MEAN, (int32_t[]){x, ax}, 2, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    static const int8_t xin[] = {1, -1, 2, -2, 3, -3, 5, -5};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 1);
    tt_expect(it, 0, (int8_t[]){3, -3}, 2);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- float32 paths ---- */

/* One float graph through every float kernel (two threads), values exact
 * in binary. x [1,2,2,1] = [1 2 3 4]:
 * conv 2x2 VALID, w = [1 0 0 -1], bias 0.5: 1 - 4 + 0.5 = -2.5;
 * depthwise 1x1 with multiplier 2, w = [2 -1], bias [0 1]: 2x and 1 - x;
 * FC of x flattened, w = [[1 1 1 1] [0 0 0 1]]: [10 4];
 * average pool 2x2 VALID: 2.5; max pool: 4; ADD x + x with RELU_N1_TO_1: 1;
 * MEAN over axis 1 (no keep_dims): [2 3]; SOFTMAX of [0 0]: 0.5 0.5. */
static void test_float_kernels(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t xs[] = {1, 2, 2, 1}, ws[] = {1, 2, 2, 1}, o1[] = {1, 1, 1, 1},
                         dws[] = {1, 1, 1, 2}, d2[] = {1, 2, 2, 2}, fws[] = {2, 4}, f2[] = {1, 2},
                         two[] = {2}, one[] = {1}, ms[] = {1, 2, 1}, sm[] = {1, 2};
    static const float w[] = {1, 0, 0, -1}, cb[] = {0.5f}, dw[] = {2, -1}, db[] = {0, 1},
                       fw[] = {1, 1, 1, 1, 0, 0, 0, 1}, zero2[] = {0, 0};
    static const int32_t axis[] = {1};
    int32_t x = tt_add(b, "x", NPK_TFL_FLOAT32, 4, xs, 0, 0, NULL, 0);
    int32_t W = tt_add(b, "w", NPK_TFL_FLOAT32, 4, ws, 0, 0, w, sizeof w);
    int32_t CB = tt_add(b, "cb", NPK_TFL_FLOAT32, 1, one, 0, 0, cb, sizeof cb);
    int32_t conv = tt_add(b, "conv", NPK_TFL_FLOAT32, 4, o1, 0, 0, NULL, 0);
    int32_t DW = tt_add(b, "dw", NPK_TFL_FLOAT32, 4, dws, 0, 0, dw, sizeof dw);
    int32_t DB = tt_add(b, "db", NPK_TFL_FLOAT32, 1, two, 0, 0, db, sizeof db);
    int32_t dwo = tt_add(b, "dwo", NPK_TFL_FLOAT32, 4, d2, 0, 0, NULL, 0);
    int32_t FW = tt_add(b, "fw", NPK_TFL_FLOAT32, 2, fws, 0, 0, fw, sizeof fw);
    int32_t fc = tt_add(b, "fc", NPK_TFL_FLOAT32, 2, f2, 0, 0, NULL, 0);
    int32_t avg = tt_add(b, "avg", NPK_TFL_FLOAT32, 4, o1, 0, 0, NULL, 0);
    int32_t mx = tt_add(b, "max", NPK_TFL_FLOAT32, 4, o1, 0, 0, NULL, 0);
    int32_t add = tt_add(b, "add", NPK_TFL_FLOAT32, 4, xs, 0, 0, NULL, 0);
    int32_t AX = tt_add(b, "axis", NPK_TFL_INT32, 1, one, 0, 0, axis, sizeof axis);
    int32_t mean = tt_add(b, "mean", NPK_TFL_FLOAT32, 3, ms, 0, 0, NULL, 0);
    int32_t z = tt_add(b, "z", NPK_TFL_FLOAT32, 2, sm, 0, 0, zero2, sizeof zero2);
    int32_t soft = tt_add(b, "soft", NPK_TFL_FLOAT32, 2, sm, 0, 0, NULL, 0);
    static const char *const cn[] = {"padding", "stride_w", "stride_h"};
    const double cv[] = {NPK_TFL_PAD_VALID, 1, 1};
    npk_tfl_options co = tt_opts(NPK_TFL_OP_CONV_2D, cn, cv, 3);
    tt_op(b, NPK_TFL_OP_CONV_2D, (int32_t[]){x, W, CB}, 3, &conv, 1, &co);
    npk_tfl_options dwop = tt_opts(NPK_TFL_OP_DEPTHWISE_CONV_2D, cn, cv, 3);
    tt_op(b, NPK_TFL_OP_DEPTHWISE_CONV_2D, (int32_t[]){x, DW, DB}, 3, &dwo, 1, &dwop);
    npk_tfl_options fo = tt_opts(NPK_TFL_OP_FULLY_CONNECTED, NULL, NULL, 0);
    tt_op(b, NPK_TFL_OP_FULLY_CONNECTED, (int32_t[]){x, FW}, 2, &fc, 1, &fo);
    static const char *const pn[] = {"padding", "stride_w", "stride_h", "filter_width",
                                     "filter_height"};
    const double pv[] = {NPK_TFL_PAD_VALID, 1, 1, 2, 2};
    npk_tfl_options po = tt_opts(NPK_TFL_OP_AVERAGE_POOL_2D, pn, pv, 5);
    tt_op(b, NPK_TFL_OP_AVERAGE_POOL_2D, &x, 1, &avg, 1, &po);
    tt_op(b, NPK_TFL_OP_MAX_POOL_2D, &x, 1, &mx, 1, &po);
    static const char *const an[] = {"fused_activation_function"};
    const double av[] = {NPK_TFL_ACT_RELU_N1_TO_1};
    npk_tfl_options ao = tt_opts(NPK_TFL_OP_ADD, an, av, 1);
    tt_op(b, NPK_TFL_OP_ADD, (int32_t[]){x, x}, 2, &add, 1, &ao);
    npk_tfl_options mo = tt_opts(NPK_TFL_OP_MEAN, NULL, NULL, 0);
    tt_op(b, NPK_TFL_OP_MEAN, (int32_t[]){x, AX}, 2, &mean, 1, &mo);
    static const char *const sn[] = {"beta"};
    const double sv[] = {1.0};
    npk_tfl_options so = tt_opts(NPK_TFL_OP_SOFTMAX, sn, sv, 1);
    tt_op(b, NPK_TFL_OP_SOFTMAX, &z, 1, &soft, 1, &so);
    npk_tflb_io(b, &x, 1, (int32_t[]){conv, dwo, fc, avg, mx, add, mean, soft}, 8);
    tt_model tm;
    tt_finish(b, &tm);
    static const float xin[] = {1, 2, 3, 4};
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){xin}, 2);
    tt_expect(it, 0, (float[]){-2.5f}, 4);
    tt_expect(it, 1, (float[]){2, 0, 4, -1, 6, -2, 8, -3}, 32);
    tt_expect(it, 2, (float[]){10, 4}, 8);
    tt_expect(it, 3, (float[]){2.5f}, 4);
    tt_expect(it, 4, (float[]){4}, 4);
    tt_expect(it, 5, (float[]){1, 1, 1, 1}, 16);
    tt_expect(it, 6, (float[]){2, 3}, 8);
    tt_expect(it, 7, (float[]){0.5f, 0.5f}, 8);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- plan-time errors name the operator ---- */

static void test_errors_name_the_op(void **state)
{
    (void)state;
    /* A conv whose declared output shape is not the one it computes. */
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 3, 3, 1}, ws[] = {1, 2, 2, 1}, bad[] = {1, 3, 3, 1};
    static const uint8_t w[4] = {0};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 4, is, 1.0f, 0, NULL, 0);
    int32_t f = tt_add(b, "w", NPK_TFL_UINT8, 4, ws, 1.0f, 0, w, sizeof w);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 4, bad, 1.0f, 0, NULL, 0);
    static const char *const names[] = {"padding", "stride_w", "stride_h"};
    const double vals[] = {NPK_TFL_PAD_VALID, 1, 1};
    npk_tfl_options o = tt_opts(NPK_TFL_OP_CONV_2D, names, vals, 3);
    tt_op(b, NPK_TFL_OP_CONV_2D, (int32_t[]){x, f, -1}, 3, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_FORMAT,
                  "operator 0 (CONV_2D): output 0 (tensor 2 \"y\") is [1, 3, 3, 1] in the model "
                  "but the op computes [1, 2, 2, 1]");
    tt_model_free(&tm);
    /* Zero strides (options left out). */
    b = npk_tflb_new();
    x = tt_add(b, "x", NPK_TFL_UINT8, 4, is, 1.0f, 0, NULL, 0);
    f = tt_add(b, "w", NPK_TFL_UINT8, 4, ws, 1.0f, 0, w, sizeof w);
    y = tt_add(b, "y", NPK_TFL_UINT8, 4, bad, 1.0f, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_CONV_2D, (int32_t[]){x, f}, 2, &y, 1, NULL);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_FORMAT, "operator 0 (CONV_2D): strides 0 x 0");
    tt_model_free(&tm);
    /* An input nothing computes. */
    b = npk_tflb_new();
    x = tt_add(b, "x", NPK_TFL_UINT8, 1, S1, 1.0f, 0, NULL, 0);
    int32_t h = tt_add(b, "hole", NPK_TFL_UINT8, 1, S1, 1.0f, 0, NULL, 0);
    y = tt_add(b, "y", NPK_TFL_UINT8, 1, S1, 1.0f, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_ADD, (int32_t[]){x, h}, 2, &y, 1, NULL);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_FORMAT,
                  "operator 0 (ADD): input 1 (tensor 1 \"hole\") is neither a model input, a "
                  "constant nor computed by an earlier operator");
    tt_model_free(&tm);
    /* An op without a kernel. */
    b = npk_tflb_new();
    x = tt_add(b, "x", NPK_TFL_FLOAT32, 1, S1, 0, 0, NULL, 0);
    y = tt_add(b, "y", NPK_TFL_FLOAT32, 1, S1, 0, 0, NULL, 0);
    tt_op(b, 126 /* BATCH_MATMUL */, &x, 1, &y, 1, NULL);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_UNSUPPORTED, "operator 0 (BATCH_MATMUL): no kernel");
    char why[128];
    assert_false(npk_tfl_op_supported(&tm.m, 0, 0, why, sizeof why));
    assert_string_equal(why, "no kernel for BATCH_MATMUL");
    tt_model_free(&tm);
}

/* ---- custom handlers, observer, cuts, keep_all ---- */

static npk_status twice(void *user, uint32_t op_index, const npk_tfl_view *in, uint32_t nin,
                        npk_tfl_view *out, uint32_t nout, npk_error *err)
{
    (void)op_index, (void)nin, (void)nout, (void)err;
    int *calls = user;
    ++*calls;
    const uint8_t *x = in[0].data;
    uint8_t *y = out[0].data;
    for (size_t i = 0; i < out[0].bytes; i++) y[i] = (uint8_t)(2 * x[i]);
    return NPK_OK;
}

static npk_status count_ops(void *user, const npk_tfl_interp *it, uint32_t op, npk_error *err)
{
    (void)it, (void)err;
    uint32_t *seen = user;
    seen[op]++;
    return NPK_OK;
}

static void test_custom_observer_cut(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t s3[] = {3};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 1, s3, 1.0f, 0, NULL, 0);
    int32_t m = tt_add(b, "m", NPK_TFL_UINT8, 1, s3, 1.0f, 0, NULL, 0);
    int32_t y = tt_add(b, "y", NPK_TFL_UINT8, 1, s3, 1.0f, 0, NULL, 0);
    npk_tflb_op op = {NPK_TFL_OP_CUSTOM, "Twice", 1, &x, 1, &m, 1, NULL, (const uint8_t *)"opt", 3};
    assert_true(npk_tflb_op_add(b, &op) >= 0);
    tt_op(b, NPK_TFL_OP_ADD, (int32_t[]){m, m}, 2, &y, 1, NULL);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    assert_string_equal(tm.m.opcodes[0].custom_code, "Twice");
    assert_int_equal(tm.m.subgraphs[0].operators[0].custom_options_len, 3);
    tt_plan_fails(&tm, NPK_E_UNSUPPORTED,
                  "operator 0 (Twice): no kernel for this operator (a "
                  "custom op needs a handler)");
    int calls = 0;
    npk_tfl_custom h = {"Twice", -1, NULL, twice, &calls};
    npk_tfl_interp_opts o = {.custom = &h, .ncustom = 1, .keep_all = true};
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_new(&tm.m, &o, &it, &err), NPK_OK);
    uint32_t seen[2] = {0};
    npk_tfl_interp_set_observer(it, count_ops, seen);
    npk_tfl_view v;
    assert_int_equal(npk_tfl_interp_input(it, 0, &v, &err), NPK_OK);
    memcpy(v.data, (uint8_t[]){1, 2, 3}, 3);
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_OK);
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_OK);
    assert_int_equal(calls, 2);
    assert_int_equal(seen[0], 2);
    assert_int_equal(seen[1], 2);
    tt_expect(it, 0, (uint8_t[]){4, 8, 12}, 3);
    /* keep_all: the intermediate stays readable, by name too. */
    assert_int_equal(npk_tfl_interp_find(it, "m"), m);
    assert_int_equal(npk_tfl_interp_tensor(it, m, &v, &err), NPK_OK);
    assert_memory_equal(v.data, ((uint8_t[]){2, 4, 6}), 3);
    npk_tfl_interp_free(it);
    /* A builtin replaced by a handler, on a cut that starts at m. */
    calls = 0;
    npk_tfl_custom r = {NULL, NPK_TFL_OP_ADD, NULL, twice, &calls};
    npk_tfl_interp_opts c = {
        .custom = &r, .ncustom = 1, .inputs = &m, .ninputs = 1, .outputs = &y, .noutputs = 1};
    assert_int_equal(npk_tfl_interp_new(&tm.m, &c, &it, &err), NPK_OK);
    assert_int_equal(npk_tfl_interp_input(it, 0, &v, &err), NPK_OK);
    assert_int_equal(v.index, m);
    memcpy(v.data, (uint8_t[]){5, 6, 7}, 3);
    assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_OK);
    assert_int_equal(calls, 1); /* only the ADD ran: the custom op is not needed */
    tt_expect(it, 0, (uint8_t[]){10, 12, 14}, 3);
    /* x is not part of this plan. */
    assert_int_equal(npk_tfl_interp_tensor(it, x, &v, &err), NPK_E_NOTFOUND);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_u8),
        cmocka_unit_test(test_conv_i8_per_channel),
        cmocka_unit_test(test_depthwise_u8),
        cmocka_unit_test(test_fully_connected),
        cmocka_unit_test(test_add_broadcast),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_reshape_squeeze),
        cmocka_unit_test(test_softmax_u8),
        cmocka_unit_test(test_quantize),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_mean),
        cmocka_unit_test(test_float_kernels),
        cmocka_unit_test(test_errors_name_the_op),
        cmocka_unit_test(test_custom_observer_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
