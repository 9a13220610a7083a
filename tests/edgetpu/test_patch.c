/* Field-offset patching: 32-bit values LSB-first at arbitrary (unaligned)
 * bit offsets, checked against a bit-by-bit reference, and base addresses
 * split into LOWER/UPPER halves by each field offset's Position. */
#include "etpu_test.h"

static int get_bit(const uint8_t *b, size_t i)
{
    return (b[i / 8] >> (i % 8)) & 1;
}
static void set_bit(uint8_t *b, size_t i, int v)
{
    b[i / 8] = (uint8_t)((b[i / 8] & ~(1u << (i % 8))) | ((unsigned)v << (i % 8)));
}

static void test_every_bit_offset(void **state)
{
    (void)state;
    uint64_t seed = 7;
    uint8_t buf[40], ref[40];
    for (size_t off = 0; off + 32 <= sizeof buf * 8; off++) {
        for (size_t i = 0; i < sizeof buf; i++) buf[i] = ref[i] = (uint8_t)npk_rand(&seed);
        uint32_t v = (uint32_t)npk_rand(&seed), got;
        npk_error err = {0};
        assert_int_equal(npk_etpu_put_bits32(buf, sizeof buf, off, v, &err), NPK_OK);
        for (int k = 0; k < 32; k++) set_bit(ref, off + k, (v >> k) & 1);
        assert_memory_equal(buf, ref, sizeof buf); /* and every other bit untouched */
        assert_int_equal(npk_etpu_get_bits32(buf, sizeof buf, off, &got, &err), NPK_OK);
        assert_int_equal(got, v);
        uint32_t naive = 0;
        for (int k = 0; k < 32; k++) naive |= (uint32_t)get_bit(buf, off + k) << k;
        assert_int_equal(naive, v);
    }
    npk_error err = {0};
    uint32_t v;
    assert_int_equal(npk_etpu_put_bits32(buf, sizeof buf, sizeof buf * 8 - 31, 1, &err), NPK_E_ARG);
    npk_error_clear(&err);
    assert_int_equal(npk_etpu_get_bits32(buf, 3, 0, &v, &err), NPK_E_ARG);
    npk_error_clear(&err);
    assert_int_equal(npk_etpu_get_bits32(buf, sizeof buf, UINT64_MAX - 3, &v, &err), NPK_E_ARG);
}

/* Patch the dense_256 EO bitstream (offsets at bit 6 of a byte) with four
 * 64-bit addresses; read every entry back; nothing else changes. */
static void test_patch_dense_eo(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("dense_256_edgetpu.tflite", &f);
    const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
    const npk_etpu_bitstream *bs = &eo->bitstreams[0];
    const uint64_t addr[4] = {0x1122334455667788ull, 0xaabbccdd00112233ull, 0x0000000180000000ull,
                              0xdeadbeefcafef00dull};
    uint8_t *bits = malloc(bs->size);
    memcpy(bits, bs->data, bs->size);
    npk_error err = {0};
    assert_int_equal(npk_etpu_patch_bitstream(bs, bits, addr, &err), NPK_OK);
    size_t changed_bits = 0;
    for (size_t i = 0; i < bs->size * 8; i++) {
        if (get_bit(bits, i) == get_bit(bs->data, i)) continue;
        changed_bits++;
        bool inside = false;
        for (uint32_t k = 0; k < bs->nfields; k++)
            inside |=
                i >= (size_t)bs->fields[k].offset_bit && i < (size_t)bs->fields[k].offset_bit + 32;
        assert_true(inside);
    }
    assert_true(changed_bits > 0);
    for (uint32_t k = 0; k < bs->nfields; k++) {
        const npk_etpu_field_offset *fo = &bs->fields[k];
        uint32_t v;
        npk_etpu_get_bits32(bits, bs->size, (uint64_t)fo->offset_bit, &v, &err);
        uint64_t a = addr[fo->meta.desc];
        assert_int_equal(v, fo->meta.position == NPK_ETPU_UPPER_32BIT ? (uint32_t)(a >> 32)
                                                                      : (uint32_t)a);
    }
    /* Patching zeros restores the shipped bytes. */
    const uint64_t zero[4] = {0};
    assert_int_equal(npk_etpu_patch_bitstream(bs, bits, zero, &err), NPK_OK);
    assert_memory_equal(bits, bs->data, bs->size);
    free(bits);
    etpu_unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_bit_offset),
        cmocka_unit_test(test_patch_dense_eo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
