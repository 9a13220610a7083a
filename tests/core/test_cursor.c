/* The bounded cursor and checked arithmetic. */
#include <string.h>

#include "npk_test.h"

static const uint8_t buf[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                              0x00, 0x00, 0x80, 0x3f, 'a',  'b',  0,    'z'};

static void test_reads(void **state)
{
    (void)state;
    npk_cursor c = npk_cur_init(buf, sizeof buf, 0x1000);
    npk_error err = {0};
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    assert_int_equal(npk_cur_u8(&c, &u8, &err), NPK_OK);
    assert_int_equal(u8, 1);
    assert_int_equal(npk_cur_u16le(&c, &u16, &err), NPK_OK);
    assert_int_equal(u16, 0x0302);
    assert_int_equal(npk_cur_u16be(&c, &u16, &err), NPK_OK);
    assert_int_equal(u16, 0x0405);
    assert_int_equal(npk_cur_offset(&c), 0x1005);
    assert_int_equal(npk_cur_seek(&c, 0, &err), NPK_OK);
    assert_int_equal(npk_cur_u64le(&c, &u64, &err), NPK_OK);
    assert_true(u64 == 0x0807060504030201ull);
    assert_int_equal(npk_cur_seek(&c, 0, &err), NPK_OK);
    assert_int_equal(npk_cur_u64be(&c, &u64, &err), NPK_OK);
    assert_true(u64 == 0x0102030405060708ull);
    assert_int_equal(npk_cur_f32le(&c, &f, &err), NPK_OK);
    assert_true(f == 1.0f);
    const char *s;
    size_t n;
    assert_int_equal(npk_cur_cstr(&c, 10, &s, &n, &err), NPK_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(s, "ab", 2);
    assert_int_equal(npk_cur_left(&c), 1);
    /* The next u32 does not fit: error at the exact absolute offset, position kept. */
    assert_int_equal(npk_cur_u32le(&c, &u32, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, 0x100f);
    assert_int_equal(npk_cur_left(&c), 1);
    assert_non_null(strstr(err.msg, "need 4 bytes, 1 left"));
}

static void test_bounds(void **state)
{
    (void)state;
    npk_cursor c = npk_cur_init(buf, sizeof buf, 0);
    npk_error err = {0};
    npk_cursor sub;
    assert_int_equal(npk_cur_slice(&c, 4, 8, &sub, &err), NPK_OK);
    assert_int_equal(sub.base, 4);
    assert_int_equal(sub.size, 8);
    /* Slices that overflow or run past the end fail, including size_t wrap-around. */
    assert_int_equal(npk_cur_slice(&c, 4, 13, &sub, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_slice(&c, 17, 0, &sub, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_slice(&c, 8, SIZE_MAX, &sub, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_skip(&c, SIZE_MAX, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_seek(&c, 16, &err), NPK_OK);
    assert_int_equal(npk_cur_seek(&c, 17, &err), NPK_E_FORMAT);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_seek(&c, 12, &err), NPK_OK);
    assert_int_equal(npk_cur_take(&c, 3, &sub, &err), NPK_OK);
    assert_int_equal(sub.base, 12);
    assert_int_equal(npk_cur_offset(&c), 15);
    /* u32-length strings: the limit and the data are both checked. */
    uint8_t s[8] = {3, 0, 0, 0, 'x', 'y', 'z', 0};
    npk_cursor cs = npk_cur_init(s, sizeof s, 0);
    const char *p;
    size_t n;
    assert_int_equal(npk_cur_str_u32(&cs, 2, &p, &n, &err), NPK_E_LIMIT);
    assert_int_equal(npk_cur_offset(&cs), 0);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_str_u32(&cs, 16, &p, &n, &err), NPK_OK);
    assert_int_equal(n, 3);
    uint8_t bad[6] = {0xff, 0xff, 0xff, 0xff, 'a', 'b'};
    npk_cursor cb = npk_cur_init(bad, sizeof bad, 0);
    assert_int_equal(npk_cur_str_u32(&cb, SIZE_MAX, &p, &n, &err), NPK_E_FORMAT);
    assert_int_equal(npk_cur_offset(&cb), 0);
    /* Unterminated C string. */
    npk_cursor cu = npk_cur_init("abc", 3, 0);
    npk_error_clear(&err);
    assert_int_equal(npk_cur_cstr(&cu, 100, &p, &n, &err), NPK_E_FORMAT);
}

static void test_first_error_wins(void **state)
{
    (void)state;
    npk_error err = {0};
    npk_fail_at(&err, NPK_E_FORMAT, 0x20, "first\nline");
    npk_fail(&err, NPK_E_IO, "second");
    assert_int_equal(err.status, NPK_E_FORMAT);
    assert_int_equal(err.offset, 0x20);
    assert_string_equal(err.msg, "first line"); /* messages stay on one line */
    assert_int_equal(npk_fail(NULL, NPK_E_ARG, "ignored"), NPK_E_ARG);
}

static void test_checked(void **state)
{
    (void)state;
    size_t r;
    assert_true(npk_add_sz(1, 2, &r) && r == 3);
    assert_false(npk_add_sz(SIZE_MAX, 1, &r));
    assert_false(npk_mul_sz(SIZE_MAX / 2 + 1, 2, &r));
    assert_true(npk_mul_sz(1u << 15, 1u << 15, &r) && r == (1u << 30));
    size_t f[3] = {1000, 1000, 1000};
    assert_true(npk_prod_sz(f, 3, &r) && r == 1000000000u);
    size_t g[3] = {SIZE_MAX, 2, 1};
    assert_false(npk_prod_sz(g, 3, &r));
    assert_true(npk_align_sz(13, 8, &r) && r == 16);
    assert_false(npk_align_sz(SIZE_MAX - 2, 8, &r));
    uint64_t u;
    assert_false(npk_mul_u64(1ull << 40, 1ull << 40, &u));
}

static void test_bytes(void **state)
{
    (void)state;
    uint8_t b[8];
    npk_st32le(b, 0x11223344);
    assert_int_equal(b[0], 0x44);
    assert_int_equal(npk_ld32be(b), 0x44332211);
    npk_st64le(b, 0x0102030405060708ull);
    assert_true(npk_ld64le(b) == 0x0102030405060708ull);
    assert_true(npk_ld64be(b) == 0x0807060504030201ull);
    npk_stf32le(b, -2.5f);
    assert_true(npk_ldf32le(b) == -2.5f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_checked),
        cmocka_unit_test(test_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
