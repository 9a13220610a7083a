/* Ops that move or pick elements, on small models built here: PAD, PADV2,
 * TILE, PACK, UNPACK, SPLIT, GATHER_ND, RESIZE_BILINEAR,
 * RESIZE_NEAREST_NEIGHBOR, ARG_MAX. Expected values are worked out from the
 * definitions in docs/tflite.md; the comments give the arithmetic. */
#include "tfl_test.h"

/* Options of an op with integer fields (n pairs). */
static npk_tfl_options opts(int32_t builtin, const char *const *names, const double *vals, int n)
{
    return tt_opts(builtin, names, vals, n);
}

/* ---- PAD, PADV2 ---- */

static void test_pad(void **state)
{
    (void)state;
    /* int8 [1,2,2,1], paddings [[0,0],[1,0],[0,2],[0,0]]: one row before, two
     * columns after, filled with the output zero point -5. */
    npk_tflb *b = npk_tflb_new();
    static const int32_t is[] = {1, 2, 2, 1}, os[] = {1, 3, 4, 1}, ps[] = {4, 2};
    static const int32_t pads[] = {0, 0, 1, 0, 0, 2, 0, 0};
    int32_t x = tt_add(b, "x", NPK_TFL_INT8, 4, is, 0.5f, -5, NULL, 0);
    int32_t p = tt_add(b, "p", NPK_TFL_INT32, 2, ps, 0, 0, pads, sizeof pads);
    int32_t y = tt_add(b, "y", NPK_TFL_INT8, 4, os, 0.5f, -5, NULL, 0);
    tt_op(b, NPK_TFL_OP_PAD, (int32_t[]){x, p}, 2, &y, 1, NULL);
    /* PADV2 on float32 [2] with int64 paddings [[1,1]] and value 9.5; PAD of
     * the same without a value pads with 0. */
    static const int32_t f2[] = {2}, f4[] = {4}, p12[] = {1, 2}, one[] = {1};
    static const int64_t pads64[] = {1, 1};
    static const float c95[] = {9.5f};
    int32_t fx = tt_add(b, "fx", NPK_TFL_FLOAT32, 1, f2, 0, 0, NULL, 0);
    int32_t fp = tt_add(b, "fp", NPK_TFL_INT64, 2, p12, 0, 0, pads64, sizeof pads64);
    int32_t fc = tt_add(b, "fc", NPK_TFL_FLOAT32, 1, one, 0, 0, c95, sizeof c95);
    int32_t fy = tt_add(b, "fy", NPK_TFL_FLOAT32, 1, f4, 0, 0, NULL, 0);
    int32_t fz = tt_add(b, "fz", NPK_TFL_FLOAT32, 1, f4, 0, 0, NULL, 0);
    /* PADV2 without constant_values (two inputs, or -1) pads as PAD does:
     * with the output zero point -5 (TFLite's pad.cc; a fuzz finding). */
    int32_t y2 = tt_add(b, "y2", NPK_TFL_INT8, 4, os, 0.5f, -5, NULL, 0);
    int32_t y3 = tt_add(b, "y3", NPK_TFL_INT8, 4, os, 0.5f, -5, NULL, 0);
    tt_op(b, NPK_TFL_OP_PADV2, (int32_t[]){fx, fp, fc}, 3, &fy, 1, NULL);
    tt_op(b, NPK_TFL_OP_PAD, (int32_t[]){fx, fp}, 2, &fz, 1, NULL);
    tt_op(b, NPK_TFL_OP_PADV2, (int32_t[]){x, p}, 2, &y2, 1, NULL);
    tt_op(b, NPK_TFL_OP_PADV2, (int32_t[]){x, p, -1}, 3, &y3, 1, NULL);
    npk_tflb_io(b, (int32_t[]){x, fx}, 2, (int32_t[]){y, fy, fz, y2, y3}, 5);
    tt_model tm;
    tt_finish(b, &tm);
    npk_tfl_interp *it =
        tt_run(&tm, (const void *[]){(int8_t[]){1, 2, 3, 4}, (float[]){1.5f, -2}}, 1);
    tt_expect(it, 0, (int8_t[]){-5, -5, -5, -5, 1, 2, -5, -5, 3, 4, -5, -5}, 12);
    tt_expect(it, 1, (float[]){9.5f, 1.5f, -2, 9.5f}, 16);
    tt_expect(it, 2, (float[]){0, 1.5f, -2, 0}, 16);
    tt_expect(it, 3, (int8_t[]){-5, -5, -5, -5, 1, 2, -5, -5, 3, 4, -5, -5}, 12);
    tt_expect(it, 4, (int8_t[]){-5, -5, -5, -5, 1, 2, -5, -5, 3, 4, -5, -5}, 12);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    /* A negative amount is refused. */
    b = npk_tflb_new();
    static const int32_t neg[] = {0, -1};
    fx = tt_add(b, "fx", NPK_TFL_FLOAT32, 1, f2, 0, 0, NULL, 0);
    fp = tt_add(b, "fp", NPK_TFL_INT32, 2, p12, 0, 0, neg, sizeof neg);
    fy = tt_add(b, "fy", NPK_TFL_FLOAT32, 1, one, 0, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_PAD, (int32_t[]){fx, fp}, 2, &fy, 1, NULL);
    npk_tflb_io(b, &fx, 1, &fy, 1);
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_FORMAT, "operator 0 (PAD): padding 0, -1 of dimension 0");
    tt_model_free(&tm);
}

/* ---- TILE ---- */

static void test_tile(void **state)
{
    (void)state;
    /* int8 [2,2] x [1,2] -> [2,4]; int32 [1,2,1] x [2,1,3] (int64) -> [2,2,3]. */
    npk_tflb *b = npk_tflb_new();
    static const int32_t s22[] = {2, 2}, s24[] = {2, 4}, two[] = {2}, three[] = {3},
                         s121[] = {1, 2, 1}, s223[] = {2, 2, 3}, m12[] = {1, 2};
    static const int64_t m213[] = {2, 1, 3};
    int32_t x = tt_add(b, "x", NPK_TFL_INT8, 2, s22, 1.0f, 0, NULL, 0);
    int32_t m = tt_add(b, "m", NPK_TFL_INT32, 1, two, 0, 0, m12, sizeof m12);
    int32_t y = tt_add(b, "y", NPK_TFL_INT8, 2, s24, 1.0f, 0, NULL, 0);
    int32_t u = tt_add(b, "u", NPK_TFL_INT32, 3, s121, 0, 0, NULL, 0);
    int32_t n = tt_add(b, "n", NPK_TFL_INT64, 1, three, 0, 0, m213, sizeof m213);
    int32_t v = tt_add(b, "v", NPK_TFL_INT32, 3, s223, 0, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_TILE, (int32_t[]){x, m}, 2, &y, 1, NULL);
    tt_op(b, NPK_TFL_OP_TILE, (int32_t[]){u, n}, 2, &v, 1, NULL);
    npk_tflb_io(b, (int32_t[]){x, u}, 2, (int32_t[]){y, v}, 2);
    tt_model tm;
    tt_finish(b, &tm);
    npk_tfl_interp *it =
        tt_run(&tm, (const void *[]){(int8_t[]){1, 2, 3, 4}, (int32_t[]){5, -6}}, 1);
    tt_expect(it, 0, (int8_t[]){1, 2, 1, 2, 3, 4, 3, 4}, 8);
    tt_expect(it, 1, (int32_t[]){5, 5, 5, -6, -6, -6, 5, 5, 5, -6, -6, -6}, 48);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

/* ---- PACK, UNPACK, SPLIT ---- */

static void test_pack_unpack_split(void **state)
{
    (void)state;
    npk_tflb *b = npk_tflb_new();
    static const int32_t s2[] = {2}, s32[] = {3, 2}, s23[] = {2, 3}, s24[] = {2, 4}, s22[] = {2, 2};
    static const int32_t axis1[] = {1};
    int32_t in[3];
    for (int i = 0; i < 3; i++) in[i] = tt_add(b, NULL, NPK_TFL_INT8, 1, s2, 0.5f, 3, NULL, 0);
    int32_t p0 = tt_add(b, "p0", NPK_TFL_INT8, 2, s32, 0.5f, 3, NULL, 0);
    int32_t p1 = tt_add(b, "p1", NPK_TFL_INT8, 2, s23, 0.5f, 3, NULL, 0);
    static const char *const pn[] = {"values_count", "axis"};
    npk_tfl_options o0 = opts(NPK_TFL_OP_PACK, pn, (double[]){3, 0}, 2);
    npk_tfl_options o1 = opts(NPK_TFL_OP_PACK, pn, (double[]){3, -1}, 2);
    tt_op(b, NPK_TFL_OP_PACK, in, 3, &p0, 1, &o0);
    tt_op(b, NPK_TFL_OP_PACK, in, 3, &p1, 1, &o1);
    /* UNPACK int32 [2,3] along axis 1 (3 outputs of [2]) and axis 0. */
    int32_t u = tt_add(b, "u", NPK_TFL_INT32, 2, s23, 0, 0, NULL, 0);
    int32_t c[3], r[2];
    for (int i = 0; i < 3; i++) c[i] = tt_add(b, NULL, NPK_TFL_INT32, 1, s2, 0, 0, NULL, 0);
    static const int32_t s3[] = {3};
    for (int i = 0; i < 2; i++) r[i] = tt_add(b, NULL, NPK_TFL_INT32, 1, s3, 0, 0, NULL, 0);
    static const char *const un[] = {"num", "axis"};
    npk_tfl_options ou1 = opts(NPK_TFL_OP_UNPACK, un, (double[]){3, 1}, 2);
    npk_tfl_options ou0 = opts(NPK_TFL_OP_UNPACK, un, (double[]){2, 0}, 2);
    tt_op(b, NPK_TFL_OP_UNPACK, &u, 1, c, 3, &ou1);
    tt_op(b, NPK_TFL_OP_UNPACK, &u, 1, r, 2, &ou0);
    /* SPLIT uint8 [2,4] in two along axis 1 (a scalar int32 constant). */
    int32_t sx = tt_add(b, "sx", NPK_TFL_UINT8, 2, s24, 0, 0, NULL, 0);
    int32_t ax = tt_add(b, "ax", NPK_TFL_INT32, 0, NULL, 0, 0, axis1, sizeof axis1);
    int32_t sp[2];
    for (int i = 0; i < 2; i++) sp[i] = tt_add(b, NULL, NPK_TFL_UINT8, 2, s22, 0, 0, NULL, 0);
    static const char *const sn[] = {"num_splits"};
    npk_tfl_options os = opts(NPK_TFL_OP_SPLIT, sn, (double[]){2}, 1);
    tt_op(b, NPK_TFL_OP_SPLIT, (int32_t[]){ax, sx}, 2, sp, 2, &os);
    npk_tflb_io(b, (int32_t[]){in[0], in[1], in[2], u, sx}, 5,
                (int32_t[]){p0, p1, c[0], c[1], c[2], r[0], r[1], sp[0], sp[1]}, 9);
    tt_model tm;
    tt_finish(b, &tm);
    npk_tfl_interp *it =
        tt_run(&tm,
               (const void *[]){(int8_t[]){1, 2}, (int8_t[]){3, 4}, (int8_t[]){5, 6},
                                (int32_t[]){1, 2, 3, 4, 5, 6}, (uint8_t[]){1, 2, 3, 4, 5, 6, 7, 8}},
               1);
    tt_expect(it, 0, (int8_t[]){1, 2, 3, 4, 5, 6}, 6);
    tt_expect(it, 1, (int8_t[]){1, 3, 5, 2, 4, 6}, 6);
    tt_expect(it, 2, (int32_t[]){1, 4}, 8);
    tt_expect(it, 3, (int32_t[]){2, 5}, 8);
    tt_expect(it, 4, (int32_t[]){3, 6}, 8);
    tt_expect(it, 5, (int32_t[]){1, 2, 3}, 12);
    tt_expect(it, 6, (int32_t[]){4, 5, 6}, 12);
    tt_expect(it, 7, (uint8_t[]){1, 2, 5, 6}, 4);
    tt_expect(it, 8, (uint8_t[]){3, 4, 7, 8}, 4);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    /* PACK of differently quantised int8 inputs is refused (as TFLite). */
    b = npk_tflb_new();
    in[0] = tt_add(b, NULL, NPK_TFL_INT8, 1, s2, 0.5f, 3, NULL, 0);
    in[1] = tt_add(b, NULL, NPK_TFL_INT8, 1, s2, 0.25f, 3, NULL, 0);
    static const int32_t s22b[] = {2, 2};
    p0 = tt_add(b, "p0", NPK_TFL_INT8, 2, s22b, 0.5f, 3, NULL, 0);
    npk_tfl_options o2 = opts(NPK_TFL_OP_PACK, pn, (double[]){2, 0}, 2);
    tt_op(b, NPK_TFL_OP_PACK, in, 2, &p0, 1, &o2);
    npk_tflb_io(b, in, 2, &p0, 1);
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_FORMAT,
                  "operator 0 (PACK): input 1 is quantised differently from the output");
    tt_model_free(&tm);
}

/* ---- GATHER_ND ---- */

static void test_gather_nd(void **state)
{
    (void)state;
    /* params int8 [2,3,2] = 0..11. indices int32 [[1,2],[0,1]] pick rows
     * params[1,2,:] = [10 11] and params[0,1,:] = [2 3]; int64 [[1,0,1]]
     * picks the element params[1,0,1] = 7. */
    npk_tflb *b = npk_tflb_new();
    static const int32_t ps[] = {2, 3, 2}, s22[] = {2, 2}, s13[] = {1, 3}, s1[] = {1};
    int32_t p = tt_add(b, "p", NPK_TFL_INT8, 3, ps, 0.1f, -3, NULL, 0);
    int32_t i32 = tt_add(b, "i32", NPK_TFL_INT32, 2, s22, 0, 0, NULL, 0);
    int32_t i64 = tt_add(b, "i64", NPK_TFL_INT64, 2, s13, 0, 0, NULL, 0);
    int32_t y0 = tt_add(b, "y0", NPK_TFL_INT8, 2, s22, 0.1f, -3, NULL, 0);
    int32_t y1 = tt_add(b, "y1", NPK_TFL_INT8, 1, s1, 0.1f, -3, NULL, 0);
    tt_op(b, NPK_TFL_OP_GATHER_ND, (int32_t[]){p, i32}, 2, &y0, 1, NULL);
    tt_op(b, NPK_TFL_OP_GATHER_ND, (int32_t[]){p, i64}, 2, &y1, 1, NULL);
    npk_tflb_io(b, (int32_t[]){p, i32, i64}, 3, (int32_t[]){y0, y1}, 2);
    tt_model tm;
    tt_finish(b, &tm);
    static const int8_t params[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    npk_tfl_interp *it =
        tt_run(&tm, (const void *[]){params, (int32_t[]){1, 2, 0, 1}, (int64_t[]){1, 0, 1}}, 1);
    tt_expect(it, 0, (int8_t[]){10, 11, 2, 3}, 4);
    tt_expect(it, 1, (int8_t[]){7}, 1);
    npk_tfl_interp_free(it);
    /* As TFLite checks only the flat position: [0, 4] reads at 0 * 6 + 4 * 2
     * = 8, params[1,1,:]. */
    it = tt_run(&tm, (const void *[]){params, (int32_t[]){0, 4, 1, 0}, (int64_t[]){0, 0, 0}}, 1);
    tt_expect(it, 0, (int8_t[]){8, 9, 6, 7}, 4);
    npk_tfl_interp_free(it);
    /* A slice ending past params ([2, 0]: 12) or a negative index fails. */
    static const struct {
        int32_t idx[4];
        const char *msg;
    } bad[] = {{{2, 0, 0, 0}, "operator 0 (GATHER_ND): index out of bounds"},
               {{0, 0, 0, -1}, "operator 0 (GATHER_ND): negative index"}};
    for (int k = 0; k < 2; k++) {
        npk_error err = {0};
        assert_int_equal(npk_tfl_interp_new(&tm.m, NULL, &it, &err), NPK_OK);
        const void *ins[] = {params, bad[k].idx, (int64_t[]){0, 0, 0}};
        for (uint32_t i = 0; i < 3; i++) {
            npk_tfl_view v;
            assert_int_equal(npk_tfl_interp_input(it, i, &v, &err), NPK_OK);
            memcpy(v.data, ins[i], v.bytes);
        }
        assert_int_equal(npk_tfl_interp_invoke(it, &err), NPK_E_ARG);
        assert_string_equal(err.msg, bad[k].msg);
        npk_tfl_interp_free(it);
    }
    tt_model_free(&tm);
}

/* ---- RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR ---- */

static tt_model resize_model(int32_t builtin, int8_t type, const int32_t *is, const int32_t *os,
                             int align, int half)
{
    npk_tflb *b = npk_tflb_new();
    const int32_t size[] = {os[1], os[2]};
    static const int32_t two[] = {2};
    int32_t x = tt_add(b, "x", type, 4, is, type == NPK_TFL_FLOAT32 ? 0 : 0.5f, 0, NULL, 0);
    int32_t s = tt_add(b, "size", NPK_TFL_INT32, 1, two, 0, 0, size, sizeof size);
    int32_t y = tt_add(b, "y", type, 4, os, type == NPK_TFL_FLOAT32 ? 0 : 0.5f, 0, NULL, 0);
    static const char *const names[] = {"align_corners", "half_pixel_centers"};
    npk_tfl_options o = opts(builtin, names, (double[]){align, half}, 2);
    tt_op(b, builtin, (int32_t[]){x, s}, 2, &y, 1, &o);
    npk_tflb_io(b, &x, 1, &y, 1);
    tt_model tm;
    tt_finish(b, &tm);
    return tm;
}

static void expect_resize(int32_t builtin, int8_t type, const int32_t *is, const int32_t *os,
                          int align, int half, const void *in, const void *want, size_t bytes)
{
    tt_model tm = resize_model(builtin, type, is, os, align, half);
    npk_tfl_interp *it = tt_run(&tm, (const void *[]){in}, 1);
    tt_expect(it, 0, want, bytes);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
}

static void test_resize_bilinear(void **state)
{
    (void)state;
    /* int8 [1,2,2,2] -> 3x3, no flags: scale (2048 + 1) / 3 = 683 (10-bit);
     * positions 0, 683, 1366 -> neighbours (0,0) f 0, (0,1) f 683, (1,1) f
     * 342. Channel 0 = [[0 10] [20 30]]: (0,1) = 10 * 1024 * 683 / 2^20 =
     * 6.67 -> 7; (1,1) = (20*683*341 + 10*341*683 + 30*683*683) / 2^20 =
     * 20.01 -> 20; (1,2) = (10*341 + 30*683) / 1024 = 23.34 -> 23; (2,1) =
     * (20*341 + 30*683) / 1024 = 26.67 -> 27. Channel 1 is channel 0
     * negated: the rounding is symmetric (half away from zero). */
    static const int32_t i2[] = {1, 2, 2, 2}, o3[] = {1, 3, 3, 2};
    expect_resize(
        NPK_TFL_OP_RESIZE_BILINEAR, NPK_TFL_INT8, i2, o3, 0, 0,
        (int8_t[]){0, 0, 10, -10, 20, -20, 30, -30},
        (int8_t[]){0, 0, 7, -7, 10, -10, 13, -13, 20, -20, 23, -23, 20, -20, 27, -27, 30, -30}, 18);
    /* int8 half-pixel centres [1,1,2,1] -> [1,1,4,1]: scale 512, positions
     * x * 512 + 256 - 512 = -256, 256, 768, 1280 -> first and last clamp to
     * one pixel; (10*768 + 51*256) / 1024 = 20.25 -> 20, (10*256 + 51*768) /
     * 1024 = 40.75 -> 41. */
    static const int32_t i12[] = {1, 1, 2, 1}, o14[] = {1, 1, 4, 1};
    expect_resize(NPK_TFL_OP_RESIZE_BILINEAR, NPK_TFL_INT8, i12, o14, 0, 1, (int8_t[]){10, 51},
                  (int8_t[]){10, 20, 41, 51}, 4);
    /* uint8 align_corners [1,2,1,1] -> [1,3,1,1]: scale (1024 + 1) / 2 = 512:
     * the middle row is (100 + 201) / 2 = 150.5 -> 151. */
    static const int32_t i21[] = {1, 2, 1, 1}, o31[] = {1, 3, 1, 1};
    expect_resize(NPK_TFL_OP_RESIZE_BILINEAR, NPK_TFL_UINT8, i21, o31, 1, 0, (uint8_t[]){100, 201},
                  (uint8_t[]){100, 151, 201}, 3);
    /* float32 [1,2,2,1] -> 4x4: scale 0.5, rows at 0, 0.5, 1, 1.5 (clamped). */
    static const int32_t i22[] = {1, 2, 2, 1}, o44[] = {1, 4, 4, 1};
    expect_resize(NPK_TFL_OP_RESIZE_BILINEAR, NPK_TFL_FLOAT32, i22, o44, 0, 0,
                  (float[]){0, 1, 2, 3},
                  (float[]){0, 0.5f, 1, 1, 1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 2, 2.5f, 3, 3}, 64);
    /* float32 half-pixel: positions -0.25 (weights 1.25 and -0.25 on the
     * first pixel), 0.25, 0.75, 1.25 (clamped). */
    expect_resize(NPK_TFL_OP_RESIZE_BILINEAR, NPK_TFL_FLOAT32, i12, o14, 0, 1, (float[]){4, 8},
                  (float[]){4, 5, 7, 8}, 16);
    /* Both flags at once are refused (as TFLite). */
    tt_model tm = resize_model(NPK_TFL_OP_RESIZE_BILINEAR, NPK_TFL_INT8, i12, o14, 1, 1);
    tt_plan_fails(&tm, NPK_E_FORMAT, "align_corners and half_pixel_centers are both set");
    tt_model_free(&tm);
}

/* TFLite's ResizeBilinearInteger written out directly (four products in
 * 64 bits per element): the oracle for the interpreter's 8-bit kernels, which
 * blend rows first. Weights may be negative (half-pixel centres at the
 * border) and values span the whole type. */
static void oracle_axis(int32_t in, int32_t out, int align, int half, int32_t *lo, int32_t *hi,
                        int32_t *f)
{
    int32_t s = (int32_t)((((int64_t)in << 10) + out / 2) / out);
    if (align && out > 1) s = (int32_t)((((int64_t)(in - 1) << 10) + (out - 1) / 2) / (out - 1));
    for (int32_t v = 0; v < out; v++) {
        const int32_t pos = half ? v * s + s / 2 - 512 : v * s;
        int32_t l = pos / 1024, u = (pos + 1023) / 1024;
        l = l < 0 ? 0 : l > in - 1 ? in - 1 : l;
        u = u < 0 ? 0 : u > in - 1 ? in - 1 : u;
        lo[v] = l;
        hi[v] = u;
        f[v] = pos - 1024 * l;
    }
}

/* Element (y, x, c) of the image at base: uint8 (signed 0) or int8. */
static int64_t at(const uint8_t *in, int is_signed, size_t base, const int32_t *sh, int32_t y,
                  int32_t x, int32_t c)
{
    const uint8_t b = in[base + (size_t)((y * sh[1] + x) * sh[2] + c)];
    return is_signed ? (int64_t)(int8_t)b : (int64_t)b;
}

static void test_resize_bilinear_oracle(void **state)
{
    (void)state;
    static const int32_t shapes[][5] = {
        /* ih, iw, depth, oh, ow */
        {5, 7, 3, 11, 4},  {1, 1, 2, 3, 5},     {4, 4, 21, 17, 17}, {9, 2, 1, 2, 9},
        {3, 6, 8, 24, 48}, {33, 33, 5, 65, 65}, {2, 3, 16, 7, 1},
    };
    uint32_t seed = 12345;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int type = 0; type < 2; type++)
            for (int mode = 0; mode < 3; mode++) {
                const int32_t *sh = shapes[k];
                const int32_t is[] = {2, sh[0], sh[1], sh[2]}, os[] = {2, sh[3], sh[4], sh[2]};
                const int align = mode == 1, half = mode == 2;
                const int8_t t = type ? NPK_TFL_INT8 : NPK_TFL_UINT8;
                const size_t nin = 2u * (size_t)(sh[0] * sh[1] * sh[2]);
                const size_t nout = 2u * (size_t)(sh[3] * sh[4] * sh[2]);
                uint8_t *in = malloc(nin), *want = malloc(nout);
                for (size_t i = 0; i < nin; i++) {
                    seed = seed * 1103515245u + 12345u;
                    /* Extremes often: the sums' range is what matters. */
                    const uint32_t r = seed >> 16;
                    in[i] = (uint8_t)(r % 4 == 0   ? 0
                                      : r % 4 == 1 ? 255
                                      : r % 4 == 2 ? 127
                                                   : r >> 4);
                }
                int32_t y0[65], y1[65], fy[65], x0[65], x1[65], fx[65];
                oracle_axis(sh[0], sh[3], align, half, y0, y1, fy);
                oracle_axis(sh[1], sh[4], align, half, x0, x1, fx);
                size_t o = 0;
                for (int32_t b = 0; b < 2; b++)
                    for (int32_t y = 0; y < sh[3]; y++)
                        for (int32_t x = 0; x < sh[4]; x++)
                            for (int32_t c = 0; c < sh[2]; c++) {
                                const size_t base = (size_t)b * (size_t)(sh[0] * sh[1] * sh[2]);
                                const int64_t v =
                                    at(in, type, base, sh, y0[y], x0[x], c) * (1024 - fy[y]) *
                                        (1024 - fx[x]) +
                                    at(in, type, base, sh, y1[y], x0[x], c) * fy[y] *
                                        (1024 - fx[x]) +
                                    at(in, type, base, sh, y0[y], x1[x], c) * (1024 - fy[y]) *
                                        fx[x] +
                                    at(in, type, base, sh, y1[y], x1[x], c) * fy[y] * fx[x];
                                const int64_t q = (v + (v > 0 ? 1 << 19 : -(1 << 19))) / (1 << 20);
                                want[o++] = (uint8_t)q;
                            }
                tt_model tm = resize_model(NPK_TFL_OP_RESIZE_BILINEAR, t, is, os, align, half);
                npk_tfl_interp *it = tt_run(&tm, (const void *[]){in}, 1);
                tt_expect(it, 0, want, nout);
                npk_tfl_interp_free(it);
                tt_model_free(&tm);
                free(in);
                free(want);
            }
}

static void test_resize_nearest(void **state)
{
    (void)state;
    /* [1,1,2,1] -> [1,1,5,1]: scale 0.4. No flags: floor(x * 0.4) = 0 0 0 1
     * 1; half-pixel: floor((x + 0.5) * 0.4) = 0 0 1 1 1; align_corners
     * (scale 1/4): round(x / 4) = 0 0 1 1 1 (0.5 rounds away from zero). */
    static const int32_t i12[] = {1, 1, 2, 1}, o15[] = {1, 1, 5, 1};
    expect_resize(NPK_TFL_OP_RESIZE_NEAREST_NEIGHBOR, NPK_TFL_INT8, i12, o15, 0, 0,
                  (int8_t[]){-7, 9}, (int8_t[]){-7, -7, -7, 9, 9}, 5);
    expect_resize(NPK_TFL_OP_RESIZE_NEAREST_NEIGHBOR, NPK_TFL_INT8, i12, o15, 0, 1,
                  (int8_t[]){-7, 9}, (int8_t[]){-7, -7, 9, 9, 9}, 5);
    expect_resize(NPK_TFL_OP_RESIZE_NEAREST_NEIGHBOR, NPK_TFL_INT8, i12, o15, 1, 0,
                  (int8_t[]){-7, 9}, (int8_t[]){-7, -7, 9, 9, 9}, 5);
    /* float32 [1,2,2,1] -> 3x3 (scale 2/3): rows and columns 0 0 1. */
    static const int32_t i22[] = {1, 2, 2, 1}, o33[] = {1, 3, 3, 1};
    expect_resize(NPK_TFL_OP_RESIZE_NEAREST_NEIGHBOR, NPK_TFL_FLOAT32, i22, o33, 0, 0,
                  (float[]){1, 2, 3, 4}, (float[]){1, 1, 2, 1, 1, 2, 3, 3, 4}, 36);
}

/* ---- ARG_MAX ---- */

static void test_arg_max(void **state)
{
    (void)state;
    /* uint8 [2,3]: along axis 1 (int32 axis) into int32, ties give the first
     * index: [[1 5 5] [7 2 7]] -> [1 0]; along axis -2 (int64 axis) into
     * int64: [1 0 1]. int8 (signed order: 5 above -3 and -128) and float32
     * along their last axis. */
    npk_tflb *b = npk_tflb_new();
    static const int32_t s23[] = {2, 3}, s2[] = {2}, s3[] = {3}, s13[] = {1, 3}, s1[] = {1};
    static const int32_t ax1[] = {1};
    static const int64_t axm2[] = {-2};
    int32_t x = tt_add(b, "x", NPK_TFL_UINT8, 2, s23, 1.0f, 0, NULL, 0);
    int32_t a1 = tt_add(b, "a1", NPK_TFL_INT32, 0, NULL, 0, 0, ax1, sizeof ax1);
    int32_t a2 = tt_add(b, "a2", NPK_TFL_INT64, 1, s1, 0, 0, axm2, sizeof axm2);
    int32_t y1 = tt_add(b, "y1", NPK_TFL_INT32, 1, s2, 0, 0, NULL, 0);
    int32_t y2 = tt_add(b, "y2", NPK_TFL_INT64, 1, s3, 0, 0, NULL, 0);
    int32_t xi = tt_add(b, "xi", NPK_TFL_INT8, 2, s13, 1.0f, 0, NULL, 0);
    int32_t yi = tt_add(b, "yi", NPK_TFL_INT32, 1, s1, 0, 0, NULL, 0);
    int32_t xf = tt_add(b, "xf", NPK_TFL_FLOAT32, 2, s13, 0, 0, NULL, 0);
    int32_t yf = tt_add(b, "yf", NPK_TFL_INT64, 1, s1, 0, 0, NULL, 0);
    static const char *const names[] = {"output_type"};
    npk_tfl_options o32 = opts(NPK_TFL_OP_ARG_MAX, names, (double[]){NPK_TFL_INT32}, 1);
    npk_tfl_options o64 = opts(NPK_TFL_OP_ARG_MAX, names, (double[]){NPK_TFL_INT64}, 1);
    tt_op(b, NPK_TFL_OP_ARG_MAX, (int32_t[]){x, a1}, 2, &y1, 1, &o32);
    tt_op(b, NPK_TFL_OP_ARG_MAX, (int32_t[]){x, a2}, 2, &y2, 1, &o64);
    tt_op(b, NPK_TFL_OP_ARG_MAX, (int32_t[]){xi, a1}, 2, &yi, 1, &o32);
    tt_op(b, NPK_TFL_OP_ARG_MAX, (int32_t[]){xf, a1}, 2, &yf, 1, &o64);
    npk_tflb_io(b, (int32_t[]){x, xi, xf}, 3, (int32_t[]){y1, y2, yi, yf}, 4);
    tt_model tm;
    tt_finish(b, &tm);
    npk_tfl_interp *it =
        tt_run(&tm,
               (const void *[]){(uint8_t[]){1, 5, 5, 7, 2, 7}, (int8_t[]){-3, 5, -128},
                                (float[]){0.5f, -1, 2.5f}},
               1);
    tt_expect(it, 0, (int32_t[]){1, 0}, 8);
    tt_expect(it, 1, (int64_t[]){1, 0, 1}, 24);
    tt_expect(it, 2, (int32_t[]){1}, 4);
    tt_expect(it, 3, (int64_t[]){2}, 8);
    npk_tfl_interp_free(it);
    tt_model_free(&tm);
    /* output_type must be the output's type. */
    b = npk_tflb_new();
    x = tt_add(b, "x", NPK_TFL_UINT8, 2, s23, 1.0f, 0, NULL, 0);
    a1 = tt_add(b, "a1", NPK_TFL_INT32, 0, NULL, 0, 0, ax1, sizeof ax1);
    y1 = tt_add(b, "y1", NPK_TFL_INT32, 1, s2, 0, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_ARG_MAX, (int32_t[]){x, a1}, 2, &y1, 1, &o64);
    npk_tflb_io(b, &x, 1, &y1, 1);
    tt_finish(b, &tm);
    tt_plan_fails(&tm, NPK_E_FORMAT,
                  "operator 0 (ARG_MAX): output_type INT64 but the output is INT32");
    tt_model_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_tile),
        cmocka_unit_test(test_pack_unpack_split),
        cmocka_unit_test(test_gather_nd),
        cmocka_unit_test(test_resize_bilinear),
        cmocka_unit_test(test_resize_bilinear_oracle),
        cmocka_unit_test(test_resize_nearest),
        cmocka_unit_test(test_arg_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
