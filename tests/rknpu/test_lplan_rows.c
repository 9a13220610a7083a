/* Layers planned with each core's output rows given (npk_rk_lplan_make_rows,
 * what the whole-network compiler uses to put a 1x1 layer in the same
 * submit as the layer before it): core k's tasks cover exactly its rows, in
 * order, and the output is byte-identical to the planner's own split on the
 * emulator. Rows that do not add up to the output height, or a layer kind
 * that does not take them, give the planner's own split. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_emu_util.h"
#include "rk_lplan_emu.h"

enum { H = 23, W = 9, CI = 40, CO = 48 };

static void make(npk_rk_layer *l, npk_rk_layer_kind kind, uint32_t k, int8_t *w, int32_t *bias)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->type = NPK_RK_LT_INT8;
    l->in_h = l->out_h = H;
    l->in_w = l->out_w = W;
    l->in_c = CI;
    l->out_c = kind == NPK_RK_LAYER_DEPTHWISE ? CI : CO;
    l->k_h = l->k_w = k;
    l->pad_top = l->pad_bottom = l->pad_left = l->pad_right = k / 2;
    l->stride_h = l->stride_w = l->dil_h = l->dil_w = 1;
    l->in = (npk_rk_lquant){0.05, -3};
    l->w = (npk_rk_lquant){0.02, 0};
    l->out = (npk_rk_lquant){0.11, 5};
    l->act_min = -128;
    l->act_max = 127;
    uint64_t rng = 0x70ee5 + k;
    size_t nw = (size_t)k * k * CI * (kind == NPK_RK_LAYER_DEPTHWISE ? 1 : CO);
    for (size_t i = 0; i < nw; i++) w[i] = (int8_t)(npk_rand(&rng) % 255 - 127);
    for (int c = 0; c < CO; c++) bias[c] = (int32_t)(npk_rand(&rng) % 2001) - 1000;
    l->weights = w;
    l->bias_i32 = bias;
}

static void check(const npk_rk_layer *l, const uint32_t rows[NPK_RKNPU_MAX_CORES], int cores,
                  bool honoured)
{
    static int8_t x[H * W * CI], want[H * W * CO], got[H * W * CO];
    uint64_t rng = 0x5eed;
    for (size_t i = 0; i < sizeof x; i++) x[i] = (int8_t)npk_rand(&rng);
    npk_rk_lplan_opts o = {cores,       NPK_RK_FORM_VENDOR, 0x10000000u, 0x20000000u,
                           0x30000000u, 0x40000000u,        0,           0,
                           0x50000000u, NPK_RK_RQ_EXACT};
    npk_error err = {0};
    if (rk_lplan_emu_run(l, &o, x, NULL, want, NULL, &err)) fail_msg("%s", err.msg);
    memset(got, 0x55, sizeof got);
    if (rk_lplan_emu_run_rows(l, &o, rows, x, NULL, got, NULL, &err)) fail_msg("%s", err.msg);
    assert_memory_equal(got, want, (size_t)H * W * l->out_c);
    npk_rk_lplan p;
    assert_int_equal(npk_rk_lplan_make_rows(l, &o, rows, &p, &err), NPK_OK);
    assert_int_equal(p.core_rows[0] != 0, honoured);
    if (honoured) {
        int n = 0;
        while (n < NPK_RKNPU_MAX_CORES && rows[n]) n++;
        assert_int_equal(p.cores, n);
        /* Core c's tasks (several per slice with two passes or a K-split)
         * lie in its rows, and every row is some task's. */
        bool seen[H] = {false};
        for (int c = 0, y0 = 0; c < n; y0 += (int)rows[c++]) {
            assert_int_equal(p.core_rows[c], rows[c]);
            for (uint32_t t = p.core_first[c]; t < p.core_first[c] + p.core_count[c]; t++) {
                assert_int_equal(p.tasks[t].core, c);
                assert_true((int)p.tasks[t].oy0 >= y0);
                assert_true(p.tasks[t].oy0 + p.tasks[t].oh <= y0 + rows[c]);
                for (uint32_t y = p.tasks[t].oy0; y < p.tasks[t].oy0 + p.tasks[t].oh; y++)
                    seen[y] = true;
            }
        }
        for (int y = 0; y < H; y++) assert_true(seen[y]);
    }
    npk_rk_lplan_free(&p);
}

static void test_rows_given(void **state)
{
    (void)state;
    static int8_t w[3 * 3 * CI * CO];
    int32_t bias[CO];
    npk_rk_layer l;
    const uint32_t r2[NPK_RKNPU_MAX_CORES] = {7, 16, 0}, r3[NPK_RKNPU_MAX_CORES] = {1, 20, 2};
    make(&l, NPK_RK_LAYER_CONV, 1, w, bias); /* the 1x1 case the compiler uses */
    check(&l, r2, 2, true);
    check(&l, r3, 3, true);
    make(&l, NPK_RK_LAYER_CONV, 3, w, bias); /* halo rows read by both neighbours */
    check(&l, r3, 3, true);
    make(&l, NPK_RK_LAYER_DEPTHWISE, 3, w, bias);
    check(&l, r2, 3, true);
    /* Not a split of the 23 rows, more cores than planned, a gap: ignored. */
    const uint32_t bad1[NPK_RKNPU_MAX_CORES] = {7, 15, 0}, bad2[NPK_RKNPU_MAX_CORES] = {0, 23, 0};
    check(&l, bad1, 3, false);
    check(&l, r3, 2, false);
    check(&l, bad2, 3, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows_given)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
