/* 1x1 int8 convolutions with the DPU fused into the product's tiles
 * (emu_gemm8.c, AVX2): the output of the SIMD emulator equals the portable
 * emulator's byte for byte, on a first run and on a run from the kept
 * kernels, for pixel counts that end in every kind of tile (7x7: 6 x 7 + 4
 * + 3; 1, 5, 13, 15 pixels), uint8 and int8, and for inputs extreme enough
 * that the BS product leaves int32, so pixels fail the int32-lane check and
 * take the int64 steps (their outputs saturate: the test checks both kinds
 * of pixel occur).
 *
 * The int32-lane DPU those tiles feed (emu_dpu8_fast.h) is also checked
 * on its own against a scalar model of the DPU's steps, for an OUT_CVT
 * whose rounding and offset cannot fold into one add before the shift
 * (the plan's bound leaves no room: the layers above never take that
 * branch) and for one where they can, both ways. */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "rk_emu_bufs.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"
#include "rknpu/emu/emu_dpu8_fast.h"
#include "rknpu/emu/emu_internal.h"

/* One layer h x w x c -> n; extreme: inputs and weights at the top of
 * their range with a small output scale (large multipliers). Returns the
 * number of outputs at the type's limits. */
static size_t check_layer(npk_rk_ltype type, uint32_t h, uint32_t w, uint32_t c, uint32_t n,
                          bool extreme, uint32_t seed)
{
    const bool u8 = type == NPK_RK_LT_UINT8;
    uint8_t *wt = malloc((size_t)n * c), *x = malloc((size_t)h * w * c);
    int32_t *bias = malloc(n * sizeof *bias);
    assert_true(wt && x && bias);
    uint32_t r = seed;
    for (size_t i = 0; i < (size_t)n * c; i++) {
        r = r * 1103515245u + 12345u;
        wt[i] = extreme ? (u8 ? 255 : 127) : (uint8_t)(r >> 24);
    }
    for (size_t i = 0; i < (size_t)h * w * c; i++) {
        r = r * 1103515245u + 12345u;
        /* extreme: most pixels at the top, some random (within the check) */
        x[i] = extreme && (i / c) % 3 ? (u8 ? 255 : 127) : (uint8_t)(r >> 24);
    }
    for (uint32_t i = 0; i < n; i++) {
        r = r * 1103515245u + 12345u;
        bias[i] = (int32_t)(r >> 18) - 8192;
    }
    npk_rk_layer l = {0};
    l.kind = NPK_RK_LAYER_CONV;
    l.type = type;
    l.in_h = l.out_h = h, l.in_w = l.out_w = w, l.in_c = c, l.out_c = n;
    l.k_h = l.k_w = l.stride_h = l.stride_w = l.dil_h = l.dil_w = 1;
    l.in = (npk_rk_lquant){0.0235, u8 ? 128 : 0};
    l.w = (npk_rk_lquant){extreme ? 0.02 : 0.0021, u8 ? 120 : 0};
    l.out = (npk_rk_lquant){extreme ? 0.05 : 0.0235, u8 ? 0 : -128};
    l.act_min = u8 ? 0 : -128, l.act_max = u8 ? 255 : 127;
    l.weights = wt;
    l.bias_i32 = bias;
    rk_both r2;
    ptrdiff_t d = rk_bufs_both(&l, x, &r2);
    if (d >= 0)
        fail_msg("%ux%ux%u -> %u: byte %td: SIMD 0x%02x, portable 0x%02x", h, w, c, n, d,
                 r2.simd[d], r2.port[d]);
    size_t limits = 0;
    uint8_t *y = malloc((size_t)h * w * n);
    assert_non_null(y);
    npk_rk_lplan_unpack_output(&r2.p, r2.simd, y);
    for (size_t i = 0; i < (size_t)h * w * n; i++)
        limits += u8 ? y[i] == 0 || y[i] == 255 : y[i] == 0x80 || y[i] == 0x7F;
    free(y);
    rk_both_free(&r2);
    free(wt), free(x), free(bias);
    return limits;
}

static void test_fused_equals_portable(void **state)
{
    (void)state;
    static const uint32_t hw[][2] = {{7, 7}, {1, 1}, {1, 5}, {13, 1}, {3, 5}, {4, 4}};
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
        check_layer(NPK_RK_LT_UINT8, hw[i][0], hw[i][1], 320, 64, false, 7 + (uint32_t)i);
        check_layer(NPK_RK_LT_INT8, hw[i][0], hw[i][1], 64, 48, false, 11 + (uint32_t)i);
    }
}

static void test_fused_int64_pixels(void **state)
{
    (void)state;
    /* the extreme pixels saturate, the others do not */
    size_t at = check_layer(NPK_RK_LT_UINT8, 7, 7, 1024, 32, true, 3);
    assert_true(at > 0 && at < 7 * 7 * 32);
    at = check_layer(NPK_RK_LT_INT8, 5, 3, 1024, 16, true, 5);
    assert_true(at > 0 && at < 5 * 3 * 16);
}

/* ---- the int32-lane DPU against a scalar model ---- */

#ifdef NPK_RK_EMU_AVX2
#define DN 16 /* one output atom */

static int64_t sat32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}

/* floor(v / 2^s) */
static int64_t floor_shift(int64_t v, unsigned s)
{
    return v >= 0 ? v >> s : -((-v - 1) >> s) - 1;
}

/* The DPU's steps as docs/rknpu.md gives them, on int64 with int32
 * saturation after each: x (the sum with CPEND's term) + BS add, x BS
 * multiplier (no shift), + BN add, x BN multiplier >> BN shift, then
 * OUT_CVT round(x scale / 2^shift) + offset to int8. */
static int8_t dpu_model(const emu_task *t, const int32_t *ops, size_t ch, int32_t x)
{
    int64_t v = sat32((int64_t)x + ops[ch]);
    v = sat32(v * ops[DN + ch]);
    v = sat32(v + ops[2 * DN + ch]);
    v = sat32(floor_shift(v * ops[3 * DN + ch], t->bn.shift));
    v = floor_shift(v * (int64_t)t->cvt_scale + ((int64_t)1 << (t->cvt_shift - 1)), t->cvt_shift);
    v += t->cvt_offset;
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

/* One pixel through emu_fast_pixel (radd: rounding and offset as one add);
 * false when the pixel fails the int32-lane check. */
static AVX2 bool fast_pixel(const emu_dpu8 *d, const int32_t *x, bool radd, uint8_t *out)
{
    emu_fast_atom k;
    emu_fast_task(d, &k);
    emu_fast_atom_load(d, 0, &k);
    const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)x);
    const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(x + 8));
    return radd ? emu_fast_pixel(&k, x0, x1, true, true, out)
                : emu_fast_pixel(&k, x0, x1, true, false, out);
}

/* A 1x1 task of K channels with CPEND (OW_OP 0), BS add and multiply, BN
 * add a1 (+ a few units per channel) and multiply by 2 >> 1, OUT_CVT
 * scale 1, shift rs, offset off; fold: whether emu_fast_radd must hold.
 * Sums within the plan's bound (2^14 K) go through the int32-lane form
 * both ways where allowed, and through the int64 steps. */
static void check_fast(int32_t a1, unsigned rs, int32_t off, bool fold, uint32_t seed)
{
    const uint32_t K = 64;
    emu_task t;
    memset(&t, 0, sizeof t);
    t.c = K, t.n = DN, t.kw = t.kh = 1, t.w = t.h = t.ow = t.oh = 1;
    t.cpend = true, t.out_int8 = true, t.out_size = 1, t.group = 32;
    t.bs.on = t.bs.add = t.bs.mul = true;
    t.bn.on = t.bn.add = t.bn.mul = true, t.bn.shift = 1;
    t.cvt_scale = 1, t.cvt_shift = rs, t.cvt_offset = off;
    int32_t ops[6 * DN] = {0}, th[DN];
    uint32_t r = seed;
    for (size_t ch = 0; ch < DN; ch++) {
        r = r * 1103515245u + 12345u;
        ops[ch] = (int32_t)(r >> 21) - 1024;             /* BS add */
        ops[DN + ch] = 100 + (int32_t)(r >> 25);         /* BS multiplier */
        ops[2 * DN + ch] = a1 + (int32_t)(r >> 28) * 16; /* BN add */
        ops[3 * DN + ch] = 2;                            /* BN multiplier */
    }
    emu_dpu8 d;
    assert_true(emu_dpu8_plan(&t, ops, th, &d));
    assert_int_equal(d.loop, 2);
    assert_int_equal(emu_fast_radd(&d), fold);
    size_t passed = 0, inside = 0;
    for (int i = 0; i < 2000; i++) {
        _Alignas(32) int32_t x[DN];
        for (size_t ch = 0; ch < DN; ch++) {
            r = r * 1103515245u + 12345u;
            /* mostly sums of realistic size, some at the bound */
            const int32_t lim = i % 8 ? 1 << 17 : (1 << 14) * (int32_t)K;
            x[ch] = (int32_t)(r % (2u * (uint32_t)lim + 1)) - lim;
        }
        uint8_t want[DN], got[DN];
        for (size_t ch = 0; ch < DN; ch++) {
            want[ch] = (uint8_t)dpu_model(&t, ops, ch, x[ch]);
            inside += want[ch] != 0x80 && want[ch] != 0x7F;
        }
        memset(got, 0x5A, sizeof got);
        emu_dpu8_pixel(&d, &t, (const uint32_t *)(const void *)x, 0, 0, got);
        assert_memory_equal(got, want, DN);
        for (int way = 0; way < 1 + fold; way++) {
            memset(got, 0x5A, sizeof got);
            if (!fast_pixel(&d, x, way == 1, got)) continue;
            assert_memory_equal(got, want, DN);
            passed++;
        }
    }
    /* most pixels take the int32-lane form, and its outputs spread */
    assert_true(passed > 1500 && inside > 2000 * DN / 2);
}
#endif

static void test_fast_dpu_branches(void **state)
{
    (void)state;
#ifdef NPK_RK_EMU_AVX2
    if (!__builtin_cpu_supports("avx2")) skip();
    /* BN add near -2^30, OUT_CVT shift 20 and offset 1024 recentring it:
     * the bound on OUT_CVT's input plus 1024 x 2^20 leaves int32, so the
     * rounding and the offset are separate steps */
    check_fast(-(1 << 30), 20, 1024, false, 3);
    check_fast(-(1 << 30) + (1 << 24), 20, 1008, false, 5);
    /* a small BN add: one add before the shift */
    check_fast(-5000, 18, -3, true, 7);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_equals_portable),
        cmocka_unit_test(test_fused_int64_pixels),
        cmocka_unit_test(test_fast_dpu_branches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
