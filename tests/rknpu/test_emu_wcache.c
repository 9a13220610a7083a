/* The emulator keeps the packed kernels of direct int8 convolutions across
 * runs (emu_wcache.c): an emulator that ran a layer with one set of weight
 * bytes, run again after the host changed those bytes in place (a kernel
 * negated, an input channel's weights zero in one set and not in the other),
 * gives exactly what a fresh emulator gives, and going back to the first
 * bytes gives the first output again; SIMD and portable kernels. The same
 * with the weights mapped tracked (npk_rk_emu_map_tracked), each host write
 * followed by npk_rk_emu_touch; writes through npk_rk_emu_host's pointer
 * need no touch; and a broken promise (a write with no touch) shows the
 * kept kernels are then used without a compare. The same for a depthwise
 * layer (its re-laid weights and bounds kept). */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "rk_emu_bufs.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

static void weights_changed_between_runs(npk_rk_layer_kind kind)
{
    enum { H = 9, W = 8, C = 64, K = 3 };
    const size_t N = kind == NPK_RK_LAYER_DEPTHWISE ? C : 48;
    int8_t *w1 = malloc((size_t)N * K * K * C), *w2 = malloc((size_t)N * K * K * C);
    int8_t *x = malloc((size_t)H * W * C);
    assert_true(w1 && w2 && x);
    uint32_t r = 12345;
    for (size_t i = 0; i < (size_t)N * K * K * C; i++) {
        r = r * 1103515245u + 12345u;
        size_t ch = i % C, k = i / (K * K * C);
        w1[i] = ch == 5 ? 0 : (int8_t)(r >> 24); /* channel 5 unused in w1 */
        w2[i] = k == 0 ? (int8_t) - (w1[i] / 2) : ch == 5 ? (int8_t)(r >> 20) : w1[i];
    }
    for (size_t i = 0; i < (size_t)H * W * C; i++) {
        r = r * 1103515245u + 12345u;
        x[i] = (int8_t)(r >> 24);
    }
    npk_rk_layer l = {0};
    l.kind = kind;
    l.type = NPK_RK_LT_INT8;
    l.in_h = l.out_h = H, l.in_w = l.out_w = W, l.in_c = C, l.out_c = (uint32_t)N;
    l.k_h = l.k_w = K, l.stride_h = l.stride_w = l.dil_h = l.dil_w = 1;
    l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = 1;
    l.in.scale = 0.02, l.in.zero_point = 3, l.w.scale = 0.01, l.out.scale = 0.25;
    l.act_min = -128, l.act_max = 127;
    npk_rk_lplan_opts o = rk_bufs_opts();
    npk_rk_lplan p1, p2;
    npk_error err = {0};
    l.weights = w1;
    assert_int_equal(npk_rk_lplan_make(&l, &o, &p1, &err), NPK_OK);
    l.weights = w2;
    assert_int_equal(npk_rk_lplan_make(&l, &o, &p2, &err), NPK_OK);
    /* Same streams (the weight sums live in the weight buffer): only the
     * weight bytes differ between the two runs. */
    assert_int_equal(p1.weight_bytes, p2.weight_bytes);
    assert_int_equal(p1.regcmd_entries, p2.regcmd_entries);
    assert_int_not_equal(memcmp(p1.wblob, p2.wblob, p1.weight_bytes), 0);
    bufs b = rk_bufs_make(&p1, x); /* weights: p1's, written again per mode below */
    uint8_t *reg2 = calloc(p2.regcmd_entries, 8);
    assert_non_null(reg2);
    npk_rk_stream_to_bin(p2.regcmd, p2.regcmd_entries, reg2);
    assert_memory_equal(b.reg, reg2, p1.regcmd_entries * 8);
    for (int mode = 0; mode < 4; mode++) {
        const bool portable = mode & 1, tracked = mode & 2;
        npk_rk_emu *warm = rk_bufs_emu(&p1, portable, tracked, &b);
        memcpy(b.wt, p1.wblob, p1.weight_bytes);
        if (tracked) npk_rk_emu_touch(warm, WT_ADDR + 100);
        uint8_t *a1 = rk_bufs_run(warm, &p1, &b, 0);
        uint8_t *a1again = rk_bufs_run(warm, &p1, &b, 0); /* from the kept kernels */
        assert_memory_equal(a1, a1again, p1.output_bytes);
        memcpy(b.wt, p2.wblob, p1.weight_bytes); /* the host changes the weights in place */
        uint8_t *stale = NULL;
        if (tracked) {
            /* a broken promise: no touch, so the kept kernels (of w1) stay
             * (with w2's operand streams): not what a fresh emulator gives */
            stale = rk_bufs_run(warm, &p1, &b, 0);
            npk_rk_emu_touch(warm, WT_ADDR + 100);
        }
        uint8_t *a2 = rk_bufs_run(warm, &p1, &b, 0);
        npk_rk_emu *fresh = rk_bufs_emu(&p1, portable, tracked, &b);
        uint8_t *f2 = rk_bufs_run(fresh, &p1, &b, 0);
        npk_rk_emu_destroy(fresh);
        assert_memory_equal(a2, f2, p1.output_bytes);
        if (stale) assert_memory_not_equal(stale, f2, p1.output_bytes);
        free(stale);
        assert_int_not_equal(memcmp(a1, a2, p1.output_bytes), 0);
        /* and back, through the emulator's pointer (a touch by itself) */
        uint8_t *wt = npk_rk_emu_host(warm, WT_ADDR, p1.weight_bytes);
        assert_ptr_equal(wt, b.wt);
        memcpy(wt, p1.wblob, p1.weight_bytes);
        uint8_t *a3 = rk_bufs_run(warm, &p1, &b, 0);
        assert_memory_equal(a1, a3, p1.output_bytes);
        npk_rk_emu_destroy(warm);
        free(a1), free(a1again), free(a2), free(f2), free(a3);
    }
    rk_bufs_free(&b);
    free(reg2);
    npk_rk_lplan_free(&p1);
    npk_rk_lplan_free(&p2);
    free(w1), free(w2), free(x);
}

static void test_weights_changed_between_runs(void **state)
{
    (void)state;
    weights_changed_between_runs(NPK_RK_LAYER_CONV);
}

/* Depthwise tasks keep their re-laid weights and bounds the same way. */
static void test_depthwise_weights_changed_between_runs(void **state)
{
    (void)state;
    weights_changed_between_runs(NPK_RK_LAYER_DEPTHWISE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_changed_between_runs),
        cmocka_unit_test(test_depthwise_weights_changed_between_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
