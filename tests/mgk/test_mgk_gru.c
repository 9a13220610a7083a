/* GRU layers of the vendor file: located through the constructor's
 * gru_param_init calls, decoded into W and R per direction and gate, their
 * biases, scales and hidden quantisation; replace writes them back; damaged
 * immediates or shapes make the layer unusable with a reason, and the graph
 * reports it with the record and its offset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/mgk.h"
#include "npukit/mgk_graph.h"

static npk_mapped map;
static npk_mgk_model model;
static bool have;

static int setup(void **state)
{
    (void)state;
    const char *p = npk_fixture_path("mgk/AEC_T41_16K_NS_OUT_UC.mgk");
    npk_error err = {0};
    if (!p || npk_map_file(p, &map, &err)) return 0;
    have = npk_mgk_parse(map.data, map.size, &model, &err) == NPK_OK;
    return have ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (have) {
        npk_mgk_free(&model);
        npk_unmap_file(&map);
    }
    return 0;
}

#define NEED()                                                                                     \
    do {                                                                                           \
        if (!have) {                                                                               \
            NPK_FIXTURE("mgk/AEC_T41_16K_NS_OUT_UC.mgk");                                          \
            return;                                                                                \
        }                                                                                          \
    } while (0)

static void test_located(void **state)
{
    (void)state;
    NEED();
    assert_int_equal(model.ngrus, 2);
    const npk_mgk_gru *a = npk_mgk_find_gru(&model, 19), *b = npk_mgk_find_gru(&model, 34);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a->located && a->usable && b->located && b->usable);
    /* The calls in DerivedMagikModel's constructor and their immediates. */
    assert_int_equal(a->call_addr, 0x17740);
    assert_int_equal(b->call_addr, 0x1b3b0);
    assert_int_equal(a->arg_out_id, 36);
    assert_int_equal(b->arg_out_id, 53);
    assert_int_equal(a->weight_offset, 0xB780);
    assert_int_equal(a->table_offset, 0xE780);
    assert_int_equal(b->weight_offset, 0xFE40);
    assert_int_equal(b->table_offset, 0x11640);
    /* Geometry from the record shapes. */
    assert_int_equal(a->ndir, 2);
    assert_int_equal(a->batch, 1);
    assert_int_equal(a->seq, 64);
    assert_int_equal(b->ndir, 1);
    assert_int_equal(b->batch, 64);
    assert_int_equal(b->seq, 1);
    assert_int_equal(a->input, 32);
    assert_int_equal(a->hidden, 32);
    assert_int_equal(a->n_ofp, 6);
    assert_int_equal(a->m_ifp, 2);
    assert_int_equal(a->weight_bytes, 12288);
    assert_int_equal(a->table_bytes, 802 * 4);
    assert_int_equal(b->table_bytes, 417 * 4);
    assert_int_equal(a->in_zp, 57);
    assert_int_equal(b->in_zp, 103);
    assert_int_equal(a->h_zp, 127);
    /* The hidden size immediate and the table's zero points agree. */
    assert_int_equal(a->arg_hidden, 32);
}

static double corr(const double *x, const double *y, int n)
{
    double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxy / sqrt(sxx * syy);
}

static void test_tensors(void **state)
{
    (void)state;
    NEED();
    npk_mgk_gru_tensors t;
    npk_error err = {0};
    assert_int_equal(npk_mgk_gru_read(&model, npk_mgk_find_gru(&model, 19), &t, &err), NPK_OK);
    static const int8_t w0[4] = {35, -3, 15, -4}, r0[4] = {-7, -5, -79, 2};
    assert_memory_equal(t.w, w0, 4);
    assert_memory_equal(t.r, r0, 4);
    assert_int_equal(t.w[(96 + 5) * 32 + 7], -14);  /* direction 1, row 5, input 7 */
    assert_int_equal(t.r[(96 + 95) * 32 + 31], 50); /* direction 1, last row and column */
    assert_int_equal(t.wb[0], 868);
    assert_int_equal(t.wb[3], 18586);
    assert_int_equal(t.rb[0], 30268);
    uint32_t bits;
    memcpy(&bits, &t.ws[0], 4);
    assert_int_equal(bits, 965607221u); /* 0.0002708, the same in all 96 rows */
    memcpy(&bits, &t.ws[96], 4);
    assert_int_equal(bits, 965607597u);
    assert_true(fabs(t.rs[0] - 8.694e-5) < 1e-8);
    assert_true(fabs(t.rs[96] - 1.082e-4) < 1e-7);
    assert_true(fabs(t.h_scale[0] - 0.0078425) < 1e-7);
    assert_int_equal(t.h_zp[0], 127);
    assert_int_equal(t.h_zp[1], 127);
    /* Evidence for the W | R split: each bias folds minus the zero point of
     * its own operand times its row sum (input zp 57, hidden zp 127). */
    for (int d = 0; d < 2; d++) {
        double sw[96], sr[96], wb[96], rb[96];
        for (int j = 0; j < 96; j++) {
            sw[j] = sr[j] = 0;
            for (int i = 0; i < 32; i++) {
                sw[j] += t.w[(d * 96 + j) * 32 + i];
                sr[j] += t.r[(d * 96 + j) * 32 + i];
            }
            wb[j] = t.wb[d * 96 + j];
            rb[j] = t.rb[d * 96 + j];
        }
        assert_true(corr(wb, sw, 96) < -0.99);
        assert_true(corr(rb, sr, 96) < -0.99);
        assert_true(fabs(corr(wb, sr, 96)) < 0.3);
    }
    npk_mgk_gru_tensors_free(&t);
    assert_int_equal(npk_mgk_gru_read(&model, npk_mgk_find_gru(&model, 34), &t, &err), NPK_OK);
    static const int8_t w34[4] = {-20, -33, -4, 84};
    assert_memory_equal(t.w, w34, 4);
    assert_int_equal(t.r[95 * 32 + 30], -21);
    assert_int_equal(t.wb[0], -37011);
    assert_int_equal(t.rb[0], -6038);
    assert_true(fabs(t.ws[0] - 0.000194348) < 1e-9);
    assert_true(fabs(t.rs[0] - 0.00018405) < 1e-9);
    assert_true(fabs(t.h_scale[0] - 0.0077521) < 1e-7);
    npk_mgk_gru_tensors_free(&t);
}

/* Change one W and one R value of GRU 19: only its weight bytes move, and
 * they read back. */
static void test_replace(void **state)
{
    (void)state;
    NEED();
    npk_tensor_set set;
    npk_error err = {0};
    assert_int_equal(npk_mgk_extract(&model, &set, &err), NPK_OK);
    npk_tensor *w = npk_set_find(&set, "layer_19.W"), *r = npk_set_find(&set, "layer_19.R");
    assert_non_null(w);
    assert_non_null(r);
    ((int8_t *)w->data)[(96 + 5) * 32 + 7] = 99;
    ((int8_t *)r->data)[0] = -128;
    uint8_t *out;
    size_t len;
    npk_mgk_replace_stats st;
    assert_int_equal(npk_mgk_replace(&model, &set, &out, &len, &st, &err), NPK_OK);
    assert_true(st.bytes_changed > 0 && st.bytes_changed <= 8);
    uint64_t lo = model.region_offset + 0xB780, hi = lo + 12288;
    for (size_t i = 0; i < len; i++)
        if (out[i] != map.data[i] && (i < lo || i >= hi)) fail_msg("byte 0x%zx changed", i);
    npk_mgk_model m2;
    assert_int_equal(npk_mgk_parse(out, len, &m2, &err), NPK_OK);
    npk_mgk_gru_tensors t;
    assert_int_equal(npk_mgk_gru_read(&m2, npk_mgk_find_gru(&m2, 19), &t, &err), NPK_OK);
    assert_int_equal(t.w[(96 + 5) * 32 + 7], 99);
    assert_int_equal(t.r[0], -128);
    assert_int_equal(t.w[0], 35);
    npk_mgk_gru_tensors_free(&t);
    npk_mgk_free(&m2);
    free(out);
    /* Wrong shape and dtype: errors naming the tensor and the layer. */
    npk_set_free(&set);
    npk_set_init(&set);
    npk_tensor bad;
    int64_t shape[3] = {1, 96, 32};
    assert_int_equal(npk_tensor_alloc(&bad, "layer_19.W", NPK_I8, 3, shape, &err), NPK_OK);
    assert_int_equal(npk_set_add(&set, &bad, &err), NPK_OK);
    npk_error e2 = {0};
    assert_int_equal(npk_mgk_replace(&model, &set, &out, &len, NULL, &e2), NPK_E_ARG);
    assert_non_null(strstr(e2.msg, "layer_19.W"));
    assert_non_null(strstr(e2.msg, "layer 19"));
    npk_set_free(&set);
    npk_set_init(&set);
    assert_int_equal(npk_tensor_alloc(&bad, "layer_20.R", NPK_I8, 3, shape, &err), NPK_OK);
    assert_int_equal(npk_set_add(&set, &bad, &err), NPK_OK);
    assert_int_equal(npk_mgk_replace(&model, &set, &out, &len, NULL, &e2), NPK_E_NOTFOUND);
    npk_set_free(&set);
}

/* A copy of the file with `n` bytes at `off` replaced. */
static uint8_t *patched(uint64_t off, const void *bytes, size_t n)
{
    uint8_t *b = malloc(map.size);
    memcpy(b, map.data, map.size);
    memcpy(b + off, bytes, n);
    return b;
}

/* File offset of the constructor word `w` in the 256 bytes before a call. */
static uint64_t code_word_before(uint32_t call, uint32_t w)
{
    for (uint32_t a = call - 256; a < call; a += 4) /* .text: address = file offset */
        if (npk_ld32le(map.data + a) == w) return a;
    fail_msg("word 0x%08x not found", w);
    return 0;
}

static void expect_unusable(uint8_t *buf, const char *needle)
{
    npk_mgk_model m;
    npk_error err = {0};
    assert_int_equal(npk_mgk_parse(buf, map.size, &m, &err), NPK_OK);
    const npk_mgk_gru *g = npk_mgk_find_gru(&m, 19);
    assert_false(g->usable);
    if (!strstr(g->problem, needle)) fail_msg("problem '%s', expected '%s'", g->problem, needle);
    assert_true(npk_mgk_find_gru(&m, 34)->usable);
    npk_tensor_set set;
    assert_int_equal(npk_mgk_extract(&m, &set, &err), NPK_OK); /* the layer is skipped */
    assert_null(npk_set_find(&set, "layer_19.W"));
    assert_non_null(npk_set_find(&set, "layer_34.W"));
    npk_set_free(&set);
    /* The graph names the record and its offset. */
    npk_mgk_graph g2;
    assert_int_equal(npk_mgk_graph_build(&m, &g2, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    assert_int_equal(err.offset, m.records[19].offset);
    assert_non_null(strstr(err.msg, "record #19 (Gru)"));
    npk_mgk_free(&m);
    free(buf);
}

static void test_damage(void **state)
{
    (void)state;
    NEED();
    /* The table offset immediate (li a0, 0xe780) moved away: the weights no
     * longer fit their byte range. */
    uint8_t w[4];
    npk_st32le(w, 0x3404ff00);
    expect_unusable(patched(code_word_before(0x17740, 0x3404e780), w, 4), "do not fit");
    /* The weight offset moved so that the table would overlap the weights. */
    npk_st32le(w, 0x3404e000);
    expect_unusable(patched(code_word_before(0x17740, 0x3404b780), w, 4), "do not fit");
    /* The output id immediate of the call (li t4, 36) changed: no call of this record. */
    npk_st32le(w, 0x240c0063);
    expect_unusable(patched(code_word_before(0x17740, 0x240c0024), w, 4), "output id");
    /* The record's hidden size (out_shape [1, 64, 2, 32]) disagrees with the call. */
    const npk_mgk_field *f = npk_mgk_field_get(&model.records[19], "out_shape");
    assert_non_null(f);
    npk_st32le(w, 64);
    expect_unusable(patched(f->data + 12, w, 4), "hidden size 32 in the constructor, 64");
    npk_st32le(w, 3);
    expect_unusable(patched(f->data + 8, w, 4), "shapes do not chain");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_located),
        cmocka_unit_test(test_tensors),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_damage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
