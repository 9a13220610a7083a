/* The fast renderer returns exactly the reference renderer's bits: random
 * models and images of odd sizes (1x1, 7x3, 33x17, ...), every kernel size
 * 1..7, 1 to 5 layers, every mip level, both border modes, both activation
 * modes, both precisions, 1..4 threads, the AVX2 and the generic kernels.
 * The final output, every layer's output and the features are compared
 * with memcmp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/cnn2.h"
#include "npukit/cnn2_render.h"

#define MAXL 24

typedef struct config {
    uint32_t w, h, mip, nlayers, ks[MAXL];
    npk_cnn2_render_opts o;
    int generic;
} config;

static void describe(const config *c, char *buf, size_t n)
{
    int at = snprintf(buf, n, "%ux%u mip %u border %s act %s prec %s threads %u %s k=", c->w, c->h,
                      c->mip, c->o.border ? "zero" : "clamp",
                      c->o.activation ? "legacy" : "default", c->o.precision ? "f32" : "f16",
                      c->o.threads, c->generic ? "generic" : npk_cnn2_render_path());
    for (uint32_t i = 0; i < c->nlayers && at > 0 && (size_t)at < n; i++)
        at += snprintf(buf + at, n - (size_t)at, "%u%s", c->ks[i], i + 1 < c->nlayers ? "," : "");
}

/* Weights uniform in +-0.6 as f16, a few exact zeros; nonfinite adds inf/NaN. */
static void random_model(npk_cnn2_model *m, const config *c, uint64_t *s, bool nonfinite)
{
    npk_cnn2_shape sh[MAXL];
    for (uint32_t i = 0; i < c->nlayers; i++) sh[i] = (npk_cnn2_shape){c->ks[i], 12, 4};
    if (npk_cnn2_build(m, 2, c->mip, c->nlayers, sh, NULL)) fail_msg("build");
    for (uint32_t j = 0; j < m->total_weights; j++) {
        double u = npk_randf(s);
        m->weights[j] = u < 0.05 ? 0 : npk_f32_to_f16((float)(npk_randf(s) * 1.2 - 0.6));
    }
    if (nonfinite) {
        m->weights[npk_rand(s) % m->total_weights] = 0x7C00;
        m->weights[npk_rand(s) % m->total_weights] = 0xFC00;
        m->weights[npk_rand(s) % m->total_weights] = 0x7E13;
    }
}

static void run_case(const config *c, uint64_t *s, bool nonfinite)
{
    npk_cnn2_model m;
    random_model(&m, c, s, nonfinite);
    npk_cnn2_image img;
    if (npk_cnn2_image_alloc(&img, c->w, c->h, NULL)) fail_msg("image");
    bool bytes = npk_rand(s) & 1;
    for (size_t i = 0; i < (size_t)c->w * c->h * 4; i++)
        img.rgbd[i] = bytes ? (float)(npk_rand(s) % 256) / 255.0f : (float)npk_randf(s);
    size_t npix = (size_t)c->w * c->h;
    float *out[2], *feat[2], *layers[2][MAXL];
    for (int r = 0; r < 2; r++) {
        out[r] = malloc(npix * 16);
        feat[r] = malloc(npix * 48);
        for (uint32_t l = 0; l < c->nlayers; l++) layers[r][l] = malloc(npix * 16);
        npk_cnn2_render_opts o = c->o;
        o.features = feat[r];
        o.layer_out = layers[r];
        npk_error err = {0};
        npk_cnn2_force_generic(c->generic);
        npk_status st = r ? npk_cnn2_render(&m, &img, &o, out[r], &err)
                          : npk_cnn2_render_ref(&m, &img, &o, out[r], &err);
        npk_cnn2_force_generic(0);
        if (st) fail_msg("render: %s", err.msg);
    }
    char what[256];
    describe(c, what, sizeof what);
    if (memcmp(feat[0], feat[1], npix * 48)) fail_msg("features differ: %s", what);
    for (uint32_t l = 0; l < c->nlayers; l++)
        for (size_t i = 0; i < npix * 4; i++)
            if (memcmp(&layers[0][l][i], &layers[1][l][i], 4))
                fail_msg("layer %u pixel %zu channel %zu: reference %a, fast %a (%s)", l, i / 4,
                         i % 4, layers[0][l][i], layers[1][l][i], what);
    assert_memory_equal(out[0], out[1], npix * 16);
    for (int r = 0; r < 2; r++) {
        free(out[r]);
        free(feat[r]);
        for (uint32_t l = 0; l < c->nlayers; l++) free(layers[r][l]);
    }
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&m);
}

/* Tall ones are split into several bands per thread. */
static const uint32_t sizes[][2] = {{1, 1},  {7, 3},   {33, 17}, {1, 9},  {9, 1},  {2, 2},
                                    {16, 5}, {17, 33}, {40, 23}, {3, 31}, {5, 70}, {3, 130}};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Every size x mip x border x activation, with random layer stacks. */
static void test_random_sweep(void **state)
{
    (void)state;
    uint64_t s = 2024;
    int cases = 0, kseen[8] = {0};
    for (size_t z = 0; z < NSIZES; z++)
        for (uint32_t mip = 0; mip <= 3; mip++)
            for (int border = 0; border < 2; border++)
                for (int act = 0; act < 2; act++) {
                    config c = {0};
                    c.w = sizes[z][0];
                    c.h = sizes[z][1];
                    c.mip = mip;
                    c.nlayers = 1 + (uint32_t)(npk_rand(&s) % 5);
                    for (uint32_t l = 0; l < c.nlayers; l++) {
                        c.ks[l] = 1 + 2 * (uint32_t)(npk_rand(&s) % 4);
                        kseen[c.ks[l]]++;
                    }
                    c.o.border = (npk_cnn2_border)border;
                    c.o.activation = (npk_cnn2_activation)act;
                    c.o.precision = (npk_cnn2_precision)(npk_rand(&s) % 4 == 0);
                    c.o.threads = 1 + (unsigned)(npk_rand(&s) % 4);
                    c.generic = (int)(npk_rand(&s) % 3 == 0);
                    if (npk_test_light() && (z * 16 + mip * 4 + (uint32_t)border * 2 + (uint32_t)act) % 8) {
                        for (uint32_t l = 0; l < c.nlayers; l++) kseen[c.ks[l]]--;
                        continue; /* under emulation: one case in eight */
                    }
                    run_case(&c, &s, false);
                    cases++;
                }
    print_message("%d random cases; kernel sizes used: 1:%d 3:%d 5:%d 7:%d\n", cases, kseen[1],
                  kseen[3], kseen[5], kseen[7]);
    assert_true(kseen[1] && kseen[3] && kseen[5] && kseen[7]);
}

/* Every kernel size 1..7 alone and as a 5-layer stack, at every mip level,
 * on both kernel paths. */
static void test_every_kernel(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (uint32_t k = 1; k <= 7; k += 2)
        for (uint32_t mip = 0; mip <= 3; mip++)
            for (uint32_t n = 1; n <= 5; n += 4)
                for (int generic = 0; generic < 2; generic++) {
                    config c = {0};
                    c.w = 33;
                    c.h = 17;
                    c.mip = mip;
                    c.nlayers = n;
                    for (uint32_t l = 0; l < n; l++) c.ks[l] = k;
                    c.o.border = (npk_cnn2_border)(mip & 1);
                    c.o.activation = (npk_cnn2_activation)(n == 5 && k == 3);
                    c.o.threads = 2;
                    c.generic = generic;
                    if (npk_test_light() && (mip + n + (uint32_t)generic) % 4) continue;
                    run_case(&c, &s, false);
                }
}

/* Deep networks run in stages (at most 8 layers / 24 rows of halo each),
 * the largest kernel the renderer takes, and tall images in many bands. */
static void test_deep_and_tall(void **state)
{
    (void)state;
    uint64_t s = 31;
    static const struct {
        uint32_t n, k, w, h;
    } nets[] = {{12, 3, 9, 40}, {9, 7, 6, 50}, {24, 1, 13, 7}, {17, 5, 4, 90},
                {1, 63, 5, 70}, {2, 63, 3, 3}, {10, 3, 1, 200}};
    for (size_t t = 0; t < sizeof nets / sizeof nets[0]; t++)
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            config c = {0};
            c.w = nets[t].w;
            c.h = nets[t].h;
            c.mip = (uint32_t)t % 4;
            c.nlayers = nets[t].n;
            for (uint32_t l = 0; l < c.nlayers; l++)
                c.ks[l] = nets[t].k == 3 && l % 3 == 1 ? 5 : nets[t].k;
            c.o.border = (npk_cnn2_border)(t & 1);
            c.o.activation = (npk_cnn2_activation)((t >> 1) & 1);
            c.o.threads = threads;
            if (npk_test_light() && (t + threads) % 2) continue;
            run_case(&c, &s, false);
        }
}

/* Infinite and NaN weights: both renderers give the same (canonical NaN) bits. */
static void test_nonfinite_weights(void **state)
{
    (void)state;
    uint64_t s = 77;
    for (int i = 0; i < 8; i++) {
        config c = {0};
        c.w = 11;
        c.h = 6;
        c.mip = (uint32_t)i % 4;
        c.nlayers = 1 + (uint32_t)i % 3;
        for (uint32_t l = 0; l < c.nlayers; l++) c.ks[l] = 1 + 2 * (uint32_t)(i % 3);
        c.o.activation = (npk_cnn2_activation)(i & 1);
        c.o.border = (npk_cnn2_border)((i >> 1) & 1);
        c.o.precision = (npk_cnn2_precision)(i >= 6);
        c.generic = i & 1;
        run_case(&c, &s, true);
    }
}

/* One renderer object over frames of different sizes (buffers reallocated
 * and reused) matches fresh reference renders. */
static void test_renderer_reuse(void **state)
{
    (void)state;
    npk_cnn2_shape sh[3] = {{5, 12, 4}, {1, 12, 4}, {3, 12, 4}};
    npk_cnn2_model m;
    assert_int_equal(npk_cnn2_build(&m, 2, 1, 3, sh, NULL), NPK_OK);
    uint64_t s = 1;
    for (uint32_t j = 0; j < m.total_weights; j++)
        m.weights[j] = npk_f32_to_f16((float)npk_randf(&s) - 0.5f);
    npk_cnn2_render_opts o = {0};
    o.threads = 3;
    npk_cnn2_renderer *r;
    assert_int_equal(npk_cnn2_renderer_new(&r, &m, &o, NULL), NPK_OK);
    static const uint32_t frames[][2] = {{8, 8}, {8, 8}, {21, 4}, {1, 1}, {8, 8}, {64, 3}};
    for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
        npk_cnn2_image img;
        assert_int_equal(npk_cnn2_image_alloc(&img, frames[f][0], frames[f][1], NULL), NPK_OK);
        size_t n = (size_t)frames[f][0] * frames[f][1] * 4;
        for (size_t i = 0; i < n; i++) img.rgbd[i] = (float)npk_randf(&s);
        float *a = malloc(n * 4), *b = malloc(n * 4);
        assert_int_equal(npk_cnn2_renderer_run(r, &img, a, NULL), NPK_OK);
        assert_int_equal(npk_cnn2_render_ref(&m, &img, &o, b, NULL), NPK_OK);
        assert_memory_equal(a, b, n * 4);
        free(a);
        free(b);
        npk_cnn2_image_free(&img);
    }
    npk_cnn2_renderer_free(r);
    npk_cnn2_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_sweep),   cmocka_unit_test(test_every_kernel),
        cmocka_unit_test(test_deep_and_tall),  cmocka_unit_test(test_nonfinite_weights),
        cmocka_unit_test(test_renderer_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
