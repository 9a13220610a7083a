/* Windowed int8 convolutions of few input channels (a network's first
 * layer: 3 channels, 3x3 stride 2, padded), emu_conv8.c: the rows of A
 * padded to 16 bytes (27 -> 32), the window sums computed a few input rows
 * ahead, the pixels whose taps all lie inside copied a row at a time (a
 * path of its own for 9 taps of 3 channels). The SIMD emulator's output
 * equals the portable emulator's byte for byte, on a first run and from
 * the kept kernels, and equals TFLite's reference (rk_tfl_ref.h), uint8 and int8, for shapes whose
 * rows start and end with padded pixels or not, odd and even sizes, and other kernels (5x5: K 75,
 * 1x3: K 9 -> 16). */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "rk_emu_bufs.h"
#include "rk_tfl_ref.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

/* One layer h x w x c -> n, kernel kh x kw, stride s, padding p (every
 * side; the output size follows). The channels are widened to 32 as the
 * network compiler does (net_partition.c): the weights of channels c..31
 * the weight zero point (uint8: one common weight other than 0 once
 * stored, the emulator's term of the channels left out), their inputs
 * random. */
static void check_layer(npk_rk_ltype type, uint32_t h, uint32_t w, uint32_t c, uint32_t n,
                        uint32_t kh, uint32_t kw, uint32_t s, uint32_t p, uint32_t seed)
{
    const bool u8 = type == NPK_RK_LT_UINT8;
    const uint32_t cr = c;
    c = (c + 31) / 32 * 32;
    const size_t nw = (size_t)n * kh * kw * c;
    uint8_t *wt = malloc(nw), *x = malloc((size_t)h * w * c);
    int32_t *bias = malloc(n * sizeof *bias);
    assert_true(wt && x && bias);
    uint32_t r = seed;
    for (size_t i = 0; i < nw; i++) {
        r = r * 1103515245u + 12345u;
        wt[i] = i % c < cr ? (uint8_t)(r >> 24) : (u8 ? 120 : 0);
    }
    for (size_t i = 0; i < (size_t)h * w * c; i++) {
        r = r * 1103515245u + 12345u;
        x[i] = (uint8_t)(r >> 24);
    }
    for (uint32_t i = 0; i < n; i++) {
        r = r * 1103515245u + 12345u;
        bias[i] = (int32_t)(r >> 18) - 8192;
    }
    npk_rk_layer l = {0};
    l.kind = NPK_RK_LAYER_CONV;
    l.type = type;
    l.in_h = h, l.in_w = w, l.in_c = c, l.out_c = n;
    l.k_h = kh, l.k_w = kw, l.stride_h = l.stride_w = s, l.dil_h = l.dil_w = 1;
    l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = p;
    l.out_h = (h + 2 * p - kh) / s + 1, l.out_w = (w + 2 * p - kw) / s + 1;
    l.in = (npk_rk_lquant){0.0078, u8 ? 128 : 0};
    l.w = (npk_rk_lquant){0.0021, u8 ? 120 : 0};
    l.out = (npk_rk_lquant){0.0235, u8 ? 0 : -128};
    l.act_min = u8 ? 0 : -128, l.act_max = u8 ? 255 : 127;
    l.weights = wt;
    l.bias_i32 = bias;
    rk_both r2;
    ptrdiff_t d = rk_bufs_both(&l, x, &r2);
    if (d >= 0)
        fail_msg("%ux%ux%u -> %u (%ux%u /%u pad %u): byte %td: SIMD 0x%02x, portable 0x%02x", h, w,
                 cr, n, kh, kw, s, p, d, r2.simd[d], r2.port[d]);
    /* TFLite's semantics (the portable emulator shares this file's im2col):
     * the channels past c add (x - zx)(zw - zw) = 0 */
    const size_t ny = (size_t)l.out_h * l.out_w * n;
    uint8_t *y = malloc(ny), *yr = malloc(ny);
    assert_true(y && yr);
    npk_rk_lplan_unpack_output(&r2.p, r2.simd, y);
    rk_ref_conv(&l, x, yr);
    size_t differ = 0;
    for (size_t i = 0; i < ny; i++) {
        if (y[i] != yr[i])
            fail_msg("%ux%ux%u -> %u (%ux%u /%u pad %u): output %zu: 0x%02x, TFLite 0x%02x", h, w,
                     cr, n, kh, kw, s, p, i, y[i], yr[i]);
        differ += y[i] != y[0];
    }
    assert_true(differ > 0); /* not a constant output */
    free(y), free(yr);
    rk_both_free(&r2);
    free(wt), free(x), free(bias);
}

static void test_first_layer_equals_portable(void **state)
{
    (void)state;
    static const uint32_t hw[][2] = {{32, 32}, {17, 23}, {1, 9}, {9, 1}, {4, 40}, {3, 3}};
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
        for (uint32_t p = 0; p < 2; p++) {
            const uint32_t seed = 7 + (uint32_t)i * 2 + p;
            if (hw[i][0] + 2 * p < 3 || hw[i][1] + 2 * p < 3) continue;
            check_layer(NPK_RK_LT_UINT8, hw[i][0], hw[i][1], 3, 32, 3, 3, 2, p, seed);
            check_layer(NPK_RK_LT_INT8, hw[i][0], hw[i][1], 3, 32, 3, 3, 2, p, seed + 100);
            check_layer(NPK_RK_LT_INT8, hw[i][0], hw[i][1], 3, 24, 3, 3, 1, p, seed + 200);
        }
}

static void test_other_windows_equal_portable(void **state)
{
    (void)state;
    check_layer(NPK_RK_LT_UINT8, 21, 19, 3, 16, 5, 5, 2, 2, 31);
    check_layer(NPK_RK_LT_INT8, 21, 19, 3, 16, 1, 3, 1, 0, 32);
    check_layer(NPK_RK_LT_INT8, 12, 13, 5, 32, 3, 3, 2, 1, 33);
    check_layer(NPK_RK_LT_UINT8, 12, 13, 2, 48, 3, 3, 1, 1, 34);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_layer_equals_portable),
        cmocka_unit_test(test_other_windows_equal_portable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
