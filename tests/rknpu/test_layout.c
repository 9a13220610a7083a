/* Layouts against every sample of golden/layout.txt (the public generator's
 * 1-based index functions): the index functions directly, and the bulk
 * pack converters (every plain order and element size) at every sampled
 * position. Then round trips and zero padding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/rknpu_layout.h"

typedef struct sample {
    int kind; /* 0 feature, 1 weight fp16, 2 weight int8 */
    size_t C, H, W, C2, c, h, w, idx;
} sample;

static sample *load_samples(size_t *n)
{
    npk_mapped m;
    npk_fixture_map("rknpu/golden/layout.txt", &m);
    char *text = malloc(m.size + 1);
    memcpy(text, m.data, m.size);
    text[m.size] = 0;
    npk_unmap_file(&m);
    sample *s = malloc(9000 * sizeof *s);
    *n = 0;
    char *save;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        sample x = {0};
        if (sscanf(line, "feature_data(%zu,%zu,%zu,%zu,c=%zu,h=%zu,w=%zu)=%zu", &x.C, &x.H, &x.W,
                   &x.C2, &x.c, &x.h, &x.w, &x.idx) == 8)
            x.kind = 0;
        else if (sscanf(line, "weight_fp16(%zu,n=%zu,k=%zu)=%zu", &x.C, &x.w, &x.c, &x.idx) == 4)
            x.kind = 1;
        else if (sscanf(line, "weight_int8(%zu,n=%zu,k=%zu)=%zu", &x.C, &x.w, &x.c, &x.idx) == 4)
            x.kind = 2;
        else
            fail_msg("unparsed layout line: %s", line);
        assert_true(*n < 9000);
        s[(*n)++] = x;
    }
    free(text);
    return s;
}

static void test_index_functions(void **state)
{
    (void)state;
    size_t n;
    sample *s = load_samples(&n);
    assert_int_equal(n, 8592);
    size_t counts[3] = {0};
    for (size_t i = 0; i < n; i++) {
        sample *x = &s[i];
        size_t got;
        if (x->kind == 0)
            got = npk_rk_feature_index(x->C, x->H, x->W, x->C2, x->c - 1, x->h - 1, x->w - 1);
        else /* w holds the kernel n, c the channel k */
            got = npk_rk_weight_index(x->C, x->kind == 1 ? 16 : 32, x->w - 1, x->c - 1);
        if (got != x->idx) fail_msg("sample %zu: got %zu want %zu", i, got, x->idx);
        counts[x->kind]++;
    }
    assert_int_equal(counts[0], 912);
    assert_int_equal(counts[1], 2560);
    assert_int_equal(counts[2], 5120);
    free(s);
}

/* Store a unique tag at every plain position, pack, and read each sample's
 * native index back. */
static uint32_t tag(size_t a, size_t b, size_t c)
{
    return (uint32_t)(1 + a * 131071 + b * 257 + c);
}

static void put_elem(uint8_t *p, size_t es, uint32_t v)
{
    if (es == 1)
        *p = (uint8_t)v;
    else if (es == 2)
        memcpy(p, &(uint16_t){(uint16_t)v}, 2);
    else
        memcpy(p, &v, 4);
}

static uint32_t get_elem(const uint8_t *p, size_t es)
{
    if (es == 1) return *p;
    if (es == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint32_t trunc_tag(uint32_t v, size_t es)
{
    return es == 4 ? v : v & ((1u << (8 * es)) - 1);
}

static void test_bulk_against_samples(void **state)
{
    (void)state;
    size_t n;
    sample *s = load_samples(&n);
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && s[i].kind == s[i - 1].kind && s[i].C == s[i - 1].C && s[i].H == s[i - 1].H &&
            s[i].W == s[i - 1].W && s[i].C2 == s[i - 1].C2)
            continue; /* one conversion per shape, then check all its samples */
        const sample *x = &s[i];
        if (x->kind == 0) {
            for (size_t es = 1; es <= 4; es *= 2)
                for (int order = NPK_RK_NHWC; order <= NPK_RK_NCHW; order++) {
                    npk_rk_feature_shape sh = {1, x->C, x->H, x->W, x->C2, es};
                    size_t nat;
                    assert_true(npk_rk_feature_native_count(&sh, &nat));
                    uint8_t *plain = malloc(x->C * x->H * x->W * es), *native = malloc(nat * es);
                    memset(native, 0xAB, nat * es);
                    for (size_t c = 0; c < x->C; c++)
                        for (size_t h = 0; h < x->H; h++)
                            for (size_t w = 0; w < x->W; w++) {
                                size_t p = order == NPK_RK_NHWC ? (h * x->W + w) * x->C + c
                                                                : (c * x->H + h) * x->W + w;
                                put_elem(plain + p * es, es, tag(c, h, w));
                            }
                    npk_error err = {0};
                    assert_int_equal(
                        npk_rk_feature_pack(&sh, (npk_rk_order)order, plain, native, &err), NPK_OK);
                    for (size_t j = i; j < n && s[j].kind == 0 && s[j].C == x->C &&
                                       s[j].H == x->H && s[j].W == x->W && s[j].C2 == x->C2;
                         j++) {
                        const sample *y = &s[j];
                        uint32_t want = trunc_tag(tag(y->c - 1, y->h - 1, y->w - 1), es);
                        assert_int_equal(get_elem(native + y->idx * es, es), want);
                        checked++;
                    }
                    free(plain);
                    free(native);
                }
        } else {
            size_t g = x->kind == 1 ? 16 : 32, es = x->kind == 1 ? 2 : 1, K = x->C;
            size_t N = 0; /* kernels: the largest sampled n of this shape */
            for (size_t j = i; j < n && s[j].kind == x->kind && s[j].C == K; j++)
                if (s[j].w > N) N = s[j].w;
            for (int order = NPK_RK_KN; order <= NPK_RK_NK; order++) {
                npk_rk_weight_shape sh = {K, N, g, es};
                uint8_t *plain = malloc(K * N * es), *packed = malloc(K * N * es);
                for (size_t k = 0; k < K; k++)
                    for (size_t nn = 0; nn < N; nn++)
                        put_elem(plain + (order == NPK_RK_KN ? k * N + nn : nn * K + k) * es, es,
                                 tag(k, nn, 0));
                npk_error err = {0};
                assert_int_equal(npk_rk_weight_pack(&sh, (npk_rk_order)order, plain, packed, &err),
                                 NPK_OK);
                for (size_t j = i; j < n && s[j].kind == x->kind && s[j].C == K; j++) {
                    const sample *y = &s[j];
                    assert_int_equal(get_elem(packed + y->idx * es, es),
                                     trunc_tag(tag(y->c - 1, y->w - 1, 0), es));
                    checked++;
                }
                free(plain);
                free(packed);
            }
        }
    }
    assert_int_equal(checked, 912 * 6 + (2560 + 5120) * 2);
    free(s);
}

static void test_round_trips_and_padding(void **state)
{
    (void)state;
    uint64_t rng = 3;
    for (int iter = 0; iter < 300; iter++) {
        size_t es = (size_t)1 << (npk_rand(&rng) % 3), c2 = (size_t)4 << (npk_rand(&rng) % 3);
        npk_rk_feature_shape sh = {1 + npk_rand(&rng) % 3,
                                   1 + npk_rand(&rng) % 70,
                                   1 + npk_rand(&rng) % 9,
                                   1 + npk_rand(&rng) % 9,
                                   c2,
                                   es};
        int order = (int)(npk_rand(&rng) % 2);
        size_t plain_n = sh.n * sh.c * sh.h * sh.w * es, nat;
        assert_true(npk_rk_feature_native_count(&sh, &nat));
        uint8_t *a = malloc(plain_n), *b = malloc(plain_n), *nv = malloc(nat * es);
        for (size_t i = 0; i < plain_n; i++) a[i] = (uint8_t)(npk_rand(&rng) | 1);
        memset(nv, 0xCC, nat * es);
        npk_error err = {0};
        assert_int_equal(npk_rk_feature_pack(&sh, (npk_rk_order)order, a, nv, &err), NPK_OK);
        assert_int_equal(npk_rk_feature_unpack(&sh, (npk_rk_order)order, nv, b, &err), NPK_OK);
        assert_memory_equal(a, b, plain_n);
        /* Padding channels of the last plane are zero; nothing is left 0xCC. */
        size_t c1 = (sh.c + c2 - 1) / c2;
        for (size_t bt = 0; bt < sh.n; bt++)
            for (size_t p = 0; p < sh.h * sh.w; p++)
                for (size_t c = sh.c; c < c1 * c2; c++) {
                    size_t idx = bt * c1 * sh.h * sh.w * c2 +
                                 npk_rk_feature_index(sh.c, sh.h, sh.w, c2, c, p / sh.w, p % sh.w);
                    for (size_t k = 0; k < es; k++) assert_int_equal(nv[idx * es + k], 0);
                }
        for (size_t i = 0; i < nat * es; i++) assert_int_not_equal(nv[i], 0xCC);
        free(a);
        free(b);
        free(nv);
    }
    for (int iter = 0; iter < 100; iter++) {
        size_t g = npk_rand(&rng) % 2 ? 16 : 32, es = npk_rand(&rng) % 2 ? 1 : 2;
        /* one draw per statement: C leaves the order of an initializer list's calls open */
        size_t k = 32 * (1 + npk_rand(&rng) % 6);
        size_t n = g * (1 + npk_rand(&rng) % 5);
        npk_rk_weight_shape sh = {k, n, g, es};
        int order = NPK_RK_KN + (int)(npk_rand(&rng) % 2);
        size_t bytes = sh.k * sh.n * es;
        uint8_t *a = malloc(bytes), *b = malloc(bytes), *p = malloc(bytes);
        for (size_t i = 0; i < bytes; i++) a[i] = (uint8_t)npk_rand(&rng);
        npk_error err = {0};
        assert_int_equal(npk_rk_weight_pack(&sh, (npk_rk_order)order, a, p, &err), NPK_OK);
        assert_int_equal(npk_rk_weight_unpack(&sh, (npk_rk_order)order, p, b, &err), NPK_OK);
        assert_memory_equal(a, b, bytes);
        /* Element placement matches the index function. */
        for (size_t k = 0; k < sh.k; k++)
            for (size_t n = 0; n < sh.n; n++) {
                size_t src = order == NPK_RK_KN ? k * sh.n + n : n * sh.k + k;
                assert_memory_equal(p + npk_rk_weight_index(sh.k, g, n, k) * es, a + src * es, es);
            }
        free(a);
        free(b);
        free(p);
    }
}

static void test_layout_rejections(void **state)
{
    (void)state;
    uint8_t buf[64] = {0};
    npk_error err = {0};
    npk_rk_feature_shape f = {1, 4, 1, 1, 5, 2};
    assert_int_equal(npk_rk_feature_pack(&f, NPK_RK_NHWC, buf, buf, &err), NPK_E_ARG);
    f.c2 = 8;
    f.esize = 3;
    assert_int_equal(npk_rk_feature_pack(&f, NPK_RK_NHWC, buf, buf, &err), NPK_E_ARG);
    npk_rk_feature_shape huge = {SIZE_MAX / 2, 16, 16, 16, 8, 2};
    assert_int_equal(npk_rk_feature_check(&huge, &err), NPK_E_LIMIT);
    npk_rk_weight_shape w = {48, 16, 16, 2};
    assert_int_equal(npk_rk_weight_pack(&w, NPK_RK_KN, buf, buf, &err), NPK_E_ARG);
    w.k = 32;
    w.n = 24;
    assert_int_equal(npk_rk_weight_pack(&w, NPK_RK_KN, buf, buf, &err), NPK_E_ARG);
    w.n = 16;
    assert_int_equal(npk_rk_weight_pack(&w, NPK_RK_NHWC, buf, buf, &err), NPK_E_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_functions),
        cmocka_unit_test(test_bulk_against_samples),
        cmocka_unit_test(test_round_trips_and_padding),
        cmocka_unit_test(test_layout_rejections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
