/* Output relayout through the output layout tables of real compiled models:
 * every element lands where the reference formula says, and the tables of
 * each layer map the Y, X, Z elements to distinct device bytes. */
#include "etpu_test.h"

/* libedgetpu's GetBufferIndex, written out for the test. */
static long long formula(const npk_etpu_layer *l, int y, int x, int z)
{
    const npk_etpu_output_layout *t = &l->layout;
    int tile = t->y_tile[y] + t->x_tile[x];
    return (long long)t->tile_byte_offset[tile] + (long long)t->y_local[y] * t->x_row_size[x] +
           t->x_local_byte[x] + z;
}

static void check_layer(const npk_etpu_layer *l)
{
    size_t n = (size_t)l->y_dim * l->x_dim * l->z_dim, dev_size = (size_t)l->size_bytes;
    assert_true(l->has_layout);
    assert_true(n <= dev_size);
    uint8_t *dev = malloc(dev_size), *out = malloc(n), *seen = calloc(dev_size, 1);
    for (size_t i = 0; i < dev_size; i++) dev[i] = (uint8_t)(i * 131 + 17);
    npk_error err = {0};
    assert_int_equal(npk_etpu_relayout(l, dev, dev_size, out, n, &err), NPK_OK);
    size_t k = 0;
    for (int y = 0; y < l->y_dim; y++)
        for (int x = 0; x < l->x_dim; x++)
            for (int z = 0; z < l->z_dim; z++, k++) {
                long long idx = formula(l, y, x, z);
                assert_true(idx >= 0 && idx < (long long)dev_size);
                assert_int_equal(out[k], dev[idx]);
                assert_int_equal(seen[idx], 0); /* a permutation into the device buffer */
                seen[idx] = 1;
            }
    /* Too small an output buffer, or a short device buffer, are refused. */
    assert_int_equal(npk_etpu_relayout(l, dev, dev_size, out, n - 1, &err), NPK_E_ARG);
    npk_error_clear(&err);
    assert_int_equal(npk_etpu_relayout(l, dev, dev_size / 4, out, n, &err), NPK_E_FORMAT);
    free(dev);
    free(out);
    free(seen);
}

static void test_fixture_layouts(void **state)
{
    (void)state;
    static const char *const files[] = {"split_concat_edgetpu.tflite",
                                        "gabor_64x64_p4_edgetpu.tflite", "dense_256_edgetpu.tflite",
                                        "looming_64x64_3x3_edgetpu.tflite"};
    size_t tiled = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        etpu_fx f;
        etpu_load(files[i], &f);
        const npk_etpu_executable *eo = etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY);
        for (uint32_t o = 0; o < eo->noutputs; o++) {
            check_layer(&eo->outputs[o]);
            tiled += eo->outputs[o].layout.ntile_byte_offset > 1;
        }
        etpu_unload(&f);
    }
    assert_true(tiled >= 6); /* split_concat's five and gabor's are really tiled */
}

/* split_concat's 8x8x1 output in a 256-byte layer: (y, x) = (1, 3) sits in
 * tile 1 (x 2..3), local row 1, byte 4: 16 + 8 + 4 = 28. */
static void test_split_concat_point(void **state)
{
    (void)state;
    etpu_fx f;
    etpu_load("split_concat_edgetpu.tflite", &f);
    const npk_etpu_layer *l = &etpu_exec(&f.m, NPK_ETPU_EXECUTION_ONLY)->outputs[0];
    assert_int_equal(formula(l, 1, 3, 0), 28);
    uint8_t dev[256] = {0}, out[64];
    dev[28] = 0x5a;
    npk_error err = {0};
    assert_int_equal(npk_etpu_relayout(l, dev, 256, out, 64, &err), NPK_OK);
    assert_int_equal(out[1 * 8 + 3], 0x5a);
    /* A tile table entry out of range is an error, not a read. */
    npk_etpu_layer bad = *l;
    int32_t ytile[8];
    memcpy(ytile, l->layout.y_tile, sizeof ytile);
    ytile[5] = 1000;
    bad.layout.y_tile = ytile;
    assert_int_equal(npk_etpu_relayout(&bad, dev, 256, out, 64, &err), NPK_E_FORMAT);
    assert_non_null(strstr(err.msg, "tile"));
    /* Untiled layers are copied as they are. */
    npk_etpu_layer flat = *l;
    flat.has_layout = false;
    npk_error_clear(&err);
    assert_int_equal(npk_etpu_relayout(&flat, dev, 256, out, 64, &err), NPK_OK);
    assert_memory_equal(out, dev, 64);
    etpu_unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_layouts),
        cmocka_unit_test(test_split_concat_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
