/* 1x1 int8 convolutions with the DPU fused into the product's tiles
 * (emu_gemm8.c, AVX2): the output of the SIMD emulator equals the portable
 * emulator's byte for byte, on a first run and on a run from the kept
 * kernels, for pixel counts that end in every kind of tile (7x7: 6 x 7 + 4
 * + 3; 1, 5, 13, 15 pixels), uint8 and int8, and for inputs extreme enough
 * that the BS product leaves int32, so pixels fail the int32-lane check and
 * take the int64 steps (their outputs saturate: the test checks both kinds
 * of pixel occur). */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

#define IN_ADDR  0x10000000u
#define WT_ADDR  0x20000000u
#define OUT_ADDR 0x30000000u
#define REG_ADDR 0x40000000u

typedef struct bufs {
    uint8_t *in, *wt, *out, *reg;
} bufs;

/* Two submits on one emulator (the second from the kept kernels); the
 * output of the second, which must equal the first's. */
static uint8_t *run_twice(const npk_rk_lplan *p, bool portable, const bufs *b)
{
    npk_rk_emu_opts eo = {1, 0, portable};
    npk_rk_emu *e = NULL;
    npk_error err = {0};
    assert_int_equal(npk_rk_emu_create(&eo, &e, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, IN_ADDR, b->in, p->input_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map_tracked(e, WT_ADDR, b->wt, p->weight_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, OUT_ADDR, b->out, p->output_bytes, &err), NPK_OK);
    assert_int_equal(npk_rk_emu_map(e, REG_ADDR, b->reg, p->regcmd_entries * 8, &err), NPK_OK);
    uint8_t *o[2];
    for (int r = 0; r < 2; r++) {
        memset(b->out, 0x5A, p->output_bytes);
        if (npk_rk_emu_submit(e, &p->submit, p->records, p->count, &err)) fail_msg("%s", err.msg);
        o[r] = malloc(p->output_bytes);
        assert_non_null(o[r]);
        memcpy(o[r], b->out, p->output_bytes);
    }
    assert_memory_equal(o[0], o[1], p->output_bytes);
    free(o[1]);
    npk_rk_emu_destroy(e);
    return o[0];
}

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
    npk_rk_lplan_opts o = {1, NPK_RK_FORM_VENDOR, IN_ADDR, WT_ADDR, OUT_ADDR, REG_ADDR, 0, 0,
                           0, NPK_RK_RQ_EXACT};
    npk_rk_lplan p;
    npk_error err = {0};
    if (npk_rk_lplan_make(&l, &o, &p, &err)) fail_msg("%s", err.msg);
    bufs b = {calloc(1, p.input_bytes), malloc(p.weight_bytes), calloc(1, p.output_bytes),
              calloc(p.regcmd_entries, 8)};
    assert_true(b.in && b.wt && b.out && b.reg);
    memcpy(b.wt, p.wblob, p.weight_bytes);
    npk_rk_lplan_pack_input(&p, x, b.in);
    npk_rk_stream_to_bin(p.regcmd, p.regcmd_entries, b.reg);
    uint8_t *simd = run_twice(&p, false, &b), *port = run_twice(&p, true, &b);
    if (memcmp(simd, port, p.output_bytes)) {
        size_t i = 0;
        while (simd[i] == port[i]) i++;
        fail_msg("%ux%ux%u -> %u: byte %zu: SIMD 0x%02x, portable 0x%02x", h, w, c, n, i, simd[i],
                 port[i]);
    }
    size_t limits = 0;
    uint8_t *y = malloc((size_t)h * w * n);
    assert_non_null(y);
    npk_rk_lplan_unpack_output(&p, simd, y);
    for (size_t i = 0; i < (size_t)h * w * n; i++)
        limits += u8 ? y[i] == 0 || y[i] == 255 : y[i] == 0x80 || y[i] == 0x7F;
    free(y), free(simd), free(port);
    free(b.in), free(b.wt), free(b.out), free(b.reg);
    npk_rk_lplan_free(&p);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_equals_portable),
        cmocka_unit_test(test_fused_int64_pixels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
