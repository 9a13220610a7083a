/* NMHWSOIB2 codec against an independent per-element reference written from
 * the format description (plane formula, LSB-first fields, offset-binary
 * codes), for every bit width, several kernel shapes, more than one output
 * group and channel counts that leave padding lanes; on both the SIMD and
 * the portable paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/mgk.h"

/* The value of (co, ci, kh, kw) of tile group (n, m), straight from the
 * description: tile t = ((n*M + m)*KH + kh)*KW + kw, plane s at (t*S + s)*256,
 * byte (co>>3)*64 + (co&7)*8 + (ci>>2), field ci&3 at bits 2f+1:2f. */
static int ref_value(const uint8_t *blk, int M, int KH, int KW, int S, int n, int m, int kh, int kw,
                     int co, int ci)
{
    size_t t =
        (((size_t)n * (size_t)M + (size_t)m) * (size_t)KH + (size_t)kh) * (size_t)KW + (size_t)kw;
    int code = 0;
    for (int s = 0; s < S; s++) {
        uint8_t byte = blk[(t * (size_t)S + (size_t)s) * 256 + (size_t)((co >> 3) * 64) +
                           (size_t)((co & 7) * 8) + (size_t)(ci >> 2)];
        code |= ((byte >> (2 * (ci & 3))) & 3) << (2 * s);
    }
    return code - (1 << (2 * S - 1));
}

/* Stored tap of a logical 3x3 tap under the native (middle row reversed) order. */
static int native_tap(int kh, int kw)
{
    return 3 * kh + (kh == 1 ? 2 - kw : kw);
}

static void random_bytes(uint8_t *p, size_t n, uint64_t *st)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(npk_rand(st) >> 56);
}

typedef struct shape_case {
    int cout, cin, kh, kw;
} shape_case;

static const shape_case shapes[] = {
    {2, 2, 1, 1}, {32, 32, 1, 1}, {33, 70, 1, 1},  {64, 128, 1, 3},
    {7, 5, 3, 3}, {40, 33, 3, 3}, {96, 64, 1, 5},  {65, 31, 2, 2},
    {1, 1, 5, 5}, {31, 97, 1, 7}, {128, 40, 3, 1}, {3, 130, 4, 4},
};

static void check_case(const shape_case *c, int bits, unsigned flags, uint64_t seed)
{
    const int S = bits / 2, N = (c->cout + 31) / 32, M = (c->cin + 31) / 32;
    npk_mgk_wshape s = {N, M, c->kh, c->kw, bits, c->cout, c->cin, flags};
    size_t bb, count;
    npk_error err = {0};
    assert_int_equal(npk_mgk_wshape_check(&s, &bb, &count, &err), NPK_OK);
    assert_int_equal(bb, (size_t)N * M * c->kh * c->kw * S * 256);
    assert_int_equal(count, (size_t)c->cout * c->cin * c->kh * c->kw);
    uint8_t *blk = malloc(bb), *orig = malloc(bb);
    int8_t *w = malloc(count), *w2 = malloc(count);
    uint64_t st = seed;
    random_bytes(blk, bb, &st);
    memcpy(orig, blk, bb);

    /* Decode equals the reference for every real element. */
    assert_int_equal(npk_mgk_nmhw_decode(&s, blk, bb, w, &err), NPK_OK);
    const int T = c->kh * c->kw;
    for (int oc = 0; oc < c->cout; oc++)
        for (int ic = 0; ic < c->cin; ic++)
            for (int kh = 0; kh < c->kh; kh++)
                for (int kw = 0; kw < c->kw; kw++) {
                    int skh = kh, skw = kw;
                    if (flags & NPK_MGK_NATIVE_3X3) {
                        skh = native_tap(kh, kw) / 3;
                        skw = native_tap(kh, kw) % 3;
                    }
                    int want = ref_value(blk, M, c->kh, c->kw, S, oc / 32, ic / 32, skh, skw,
                                         oc % 32, ic % 32);
                    int got = w[((size_t)oc * c->cin + ic) * T + kh * c->kw + kw];
                    if (want != got)
                        fail_msg("%d-bit %dx%d %dx%d: w[%d][%d][%d][%d] = %d, reference %d", bits,
                                 c->cout, c->cin, c->kh, c->kw, oc, ic, kh, kw, got, want);
                }

    /* Encoding the decoded values back gives the original bytes, padding included. */
    memset(blk, 0x5A, bb);
    memcpy(blk, orig, bb);
    assert_int_equal(npk_mgk_nmhw_encode(&s, w, blk, bb, &err), NPK_OK);
    assert_memory_equal(blk, orig, bb);

    /* New random values: decode returns them; bytes of padding lanes keep their values. */
    int lo = -(1 << (bits - 1)), span = 1 << bits;
    for (size_t i = 0; i < count; i++) w[i] = (int8_t)(lo + (int)(npk_rand(&st) % (uint64_t)span));
    assert_int_equal(npk_mgk_nmhw_encode(&s, w, blk, bb, &err), NPK_OK);
    assert_int_equal(npk_mgk_nmhw_decode(&s, blk, bb, w2, &err), NPK_OK);
    assert_memory_equal(w, w2, count);
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++)
            for (int t = 0; t < T; t++)
                for (int co = 0; co < 32; co++)
                    for (int ci = 0; ci < 32; ci++) {
                        if (32 * n + co < c->cout && 32 * m + ci < c->cin) continue;
                        int a =
                            ref_value(blk, M, c->kh, c->kw, S, n, m, t / c->kw, t % c->kw, co, ci);
                        int b =
                            ref_value(orig, M, c->kh, c->kw, S, n, m, t / c->kw, t % c->kw, co, ci);
                        if (a != b) fail_msg("padding lane (%d, %d) of tile %d changed", co, ci, t);
                    }
    /* All lanes: 32N x 32M values, real ones equal to the unpadded decode. */
    npk_mgk_wshape all = s;
    all.flags |= NPK_MGK_ALL_LANES;
    size_t acount;
    assert_int_equal(npk_mgk_wshape_check(&all, NULL, &acount, &err), NPK_OK);
    int8_t *wa = malloc(acount);
    assert_int_equal(npk_mgk_nmhw_decode(&all, blk, bb, wa, &err), NPK_OK);
    for (int oc = 0; oc < c->cout; oc++)
        for (int ic = 0; ic < c->cin; ic++)
            for (int t = 0; t < T; t++)
                assert_int_equal(wa[((size_t)oc * 32 * M + ic) * T + t],
                                 w[((size_t)oc * c->cin + ic) * T + t]);
    free(wa);
    free(blk);
    free(orig);
    free(w);
    free(w2);
}

static void run_all(int portable)
{
    npk_mgk_codec_force_portable(portable);
    uint64_t seed = 1;
    for (int bits = 2; bits <= 8; bits += 2)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            check_case(&shapes[i], bits, 0, seed++);
    npk_mgk_codec_force_portable(0);
}

static void test_round_trips_simd(void **state)
{
    (void)state;
    run_all(0);
}

static void test_round_trips_portable(void **state)
{
    (void)state;
    run_all(1);
    assert_string_equal(npk_mgk_codec_path(), npk_mgk_codec_path()); /* restored, stable */
}

static void test_native_3x3(void **state)
{
    (void)state;
    static const shape_case c3[] = {{7, 5, 3, 3}, {40, 33, 3, 3}, {64, 64, 3, 3}};
    for (int bits = 2; bits <= 8; bits += 2)
        for (size_t i = 0; i < 3; i++) check_case(&c3[i], bits, NPK_MGK_NATIVE_3X3, 99 + i);
    /* The flag changes which stored tap a value comes from. */
    npk_mgk_wshape s = {1, 1, 3, 3, 8, 1, 1, 0}, r = s;
    r.flags = NPK_MGK_NATIVE_3X3;
    uint8_t blk[9 * 1024];
    for (int t = 0; t < 9; t++) {
        memset(blk + t * 1024, 0, 1024);
        /* lane (0, 0) of tap t: code 128 + t, i.e. value t. */
        int code = 128 + t;
        for (int p = 0; p < 4; p++) blk[t * 1024 + p * 256] = (uint8_t)((code >> (2 * p)) & 3);
    }
    int8_t a[9], b[9];
    npk_error err = {0};
    assert_int_equal(npk_mgk_nmhw_decode(&s, blk, sizeof blk, a, &err), NPK_OK);
    assert_int_equal(npk_mgk_nmhw_decode(&r, blk, sizeof blk, b, &err), NPK_OK);
    static const int8_t want_native[9] = {0, 1, 2, 5, 4, 3, 6, 7, 8};
    for (int t = 0; t < 9; t++) {
        assert_int_equal(a[t], t);
        assert_int_equal(b[t], want_native[t]);
    }
}

static void test_known_bytes(void **state)
{
    (void)state;
    /* Hand-made tile: lane (co=0, ci=0) code 0xC6 = fields 2,1,0,3 (plane 0..3);
     * lane (co=9, ci=6) code 0x1B = fields 3,2,1,0. Everything else code 0x80. */
    uint8_t blk[1024];
    for (int p = 0; p < 4; p++) memset(blk + p * 256, p == 3 ? 0xAA : 0x00, 256);
    blk[0 * 256 + 0] = (blk[0 * 256 + 0] & ~3) | 2;
    blk[1 * 256 + 0] = (blk[1 * 256 + 0] & ~3) | 1;
    blk[2 * 256 + 0] = (blk[2 * 256 + 0] & ~3) | 0;
    blk[3 * 256 + 0] = (uint8_t)((blk[3 * 256 + 0] & ~3) | 3);
    int byte = (9 >> 3) * 64 + (9 & 7) * 8 + (6 >> 2), sh = 2 * (6 & 3);
    blk[0 * 256 + byte] = (uint8_t)((blk[0 * 256 + byte] & ~(3 << sh)) | (3 << sh));
    blk[1 * 256 + byte] = (uint8_t)((blk[1 * 256 + byte] & ~(3 << sh)) | (2 << sh));
    blk[2 * 256 + byte] = (uint8_t)((blk[2 * 256 + byte] & ~(3 << sh)) | (1 << sh));
    blk[3 * 256 + byte] = (uint8_t)((blk[3 * 256 + byte] & ~(3 << sh)) | (0 << sh));
    npk_mgk_wshape s = {1, 1, 1, 1, 8, 32, 32, 0};
    int8_t w[1024];
    npk_error err = {0};
    for (int portable = 0; portable < 2; portable++) {
        npk_mgk_codec_force_portable(portable);
        assert_int_equal(npk_mgk_nmhw_decode(&s, blk, sizeof blk, w, &err), NPK_OK);
        assert_int_equal(w[0], 0xC6 - 128);
        assert_int_equal(w[9 * 32 + 6], 0x1B - 128);
        for (int i = 0; i < 1024; i++)
            if (i != 0 && i != 9 * 32 + 6) assert_int_equal(w[i], 0);
    }
    npk_mgk_codec_force_portable(0);
}

static void test_range_and_shape_errors(void **state)
{
    (void)state;
    npk_error err = {0};
    for (int bits = 2; bits < 8; bits += 2) {
        npk_mgk_wshape s = {1, 1, 1, 3, bits, 4, 5, 0};
        size_t bb, count;
        assert_int_equal(npk_mgk_wshape_check(&s, &bb, &count, &err), NPK_OK);
        uint8_t *blk = calloc(1, bb), *copy = malloc(bb);
        int8_t *w = calloc(1, count);
        w[count - 1] = (int8_t)(1 << (bits - 1)); /* one above the maximum */
        memcpy(copy, blk, bb);
        npk_error e = {0};
        assert_int_equal(npk_mgk_nmhw_encode(&s, w, blk, bb, &e), NPK_E_ARG);
        assert_non_null(strstr(e.msg, "outside"));
        assert_memory_equal(blk, copy, bb);              /* unchanged on error */
        w[count - 1] = (int8_t)(-(1 << (bits - 1)) - 1); /* one below the minimum */
        assert_int_equal(npk_mgk_nmhw_encode(&s, w, blk, bb, NULL), NPK_E_ARG);
        w[count - 1] = (int8_t)(-(1 << (bits - 1)));
        assert_int_equal(npk_mgk_nmhw_encode(&s, w, blk, bb, NULL), NPK_OK);
        free(blk);
        free(copy);
        free(w);
    }
    /* A bad value inside a long run (the checker works in chunks) is found exactly. */
    npk_mgk_wshape big = {2, 3, 3, 3, 4, 64, 70, 0};
    size_t bbytes, bcount;
    assert_int_equal(npk_mgk_wshape_check(&big, &bbytes, &bcount, &err), NPK_OK);
    uint8_t *bblk = calloc(1, bbytes);
    int8_t *bw = calloc(1, bcount);
    bw[5000] = -9;
    npk_error be = {0};
    assert_int_equal(npk_mgk_nmhw_encode(&big, bw, bblk, bbytes, &be), NPK_E_ARG);
    assert_non_null(strstr(be.msg, "value -9 at index 5000"));
    bw[5000] = 0;
    bw[bcount - 1] = 8;
    assert_int_equal(npk_mgk_nmhw_encode(&big, bw, bblk, bbytes, &be), NPK_E_ARG);
    bw[bcount - 1] = 7;
    assert_int_equal(npk_mgk_nmhw_encode(&big, bw, bblk, bbytes, &be), NPK_OK);
    free(bblk);
    free(bw);
    npk_mgk_wshape bad = {1, 1, 1, 1, 5, 2, 2, 0};
    assert_int_equal(npk_mgk_wshape_check(&bad, NULL, NULL, &err), NPK_E_UNSUPPORTED);
    npk_mgk_wshape wide = {1, 1, 1, 1, 8, 33, 2, 0}; /* 33 channels need 2 groups */
    assert_int_equal(npk_mgk_wshape_check(&wide, NULL, NULL, &err), NPK_E_ARG);
    npk_mgk_wshape narrow = {2, 1, 1, 1, 8, 32, 2, 0}; /* 32 channels fit 1 group */
    assert_int_equal(npk_mgk_wshape_check(&narrow, NULL, NULL, &err), NPK_E_ARG);
    npk_mgk_wshape not3 = {1, 1, 1, 3, 8, 2, 2, NPK_MGK_NATIVE_3X3};
    assert_int_equal(npk_mgk_wshape_check(&not3, NULL, NULL, &err), NPK_E_ARG);
    npk_mgk_wshape ok = {1, 1, 1, 1, 8, 2, 2, 0};
    uint8_t small[1023];
    int8_t w[4];
    assert_int_equal(npk_mgk_nmhw_decode(&ok, small, sizeof small, w, &err), NPK_E_FORMAT);
}

static void test_bitwidth_table(void **state)
{
    (void)state;
    for (int bits = 2; bits <= 8; bits += 2) {
        const npk_mgk_bitwidth *b = npk_mgk_bitwidth_by_bits(bits);
        assert_non_null(b);
        assert_int_equal(b->planes, bits / 2);
        assert_int_equal(b->tile_bytes, 128 * bits);
        assert_int_equal(b->code_offset, 1 << (bits - 1));
        assert_ptr_equal(npk_mgk_bitwidth_by_planes(bits / 2), b);
        assert_int_equal(b->verified, bits == 8);
    }
    assert_null(npk_mgk_bitwidth_by_bits(3));
    assert_null(npk_mgk_bitwidth_by_planes(5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips_simd),
        cmocka_unit_test(test_round_trips_portable),
        cmocka_unit_test(test_native_3x3),
        cmocka_unit_test(test_known_bytes),
        cmocka_unit_test(test_range_and_shape_errors),
        cmocka_unit_test(test_bitwidth_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
