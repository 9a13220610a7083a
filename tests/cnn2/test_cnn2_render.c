/* CNN v2 inference semantics, checked against values computed by hand or by
 * independent code in this file (double-precision sigmoid, a separately
 * written mip/bilinear feature builder), on both renderers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/cnn2.h"
#include "npukit/cnn2_render.h"
#include "cnn2/cnn2_internal.h"

typedef npk_status (*render_fn)(const npk_cnn2_model *, const npk_cnn2_image *,
                                const npk_cnn2_render_opts *, float *, npk_error *);
static const render_fn renderers[2] = {npk_cnn2_render_ref, npk_cnn2_render};
static const char *renderer_names[2] = {"reference", "fast"};

static uint16_t h(float v)
{
    return npk_f32_to_f16(v);
}
static float r16(float v)
{
    return npk_f16_to_f32(npk_f32_to_f16(v));
}
/* Independent sigmoid: double exp, rounded to f16. */
static uint16_t sig16(double a)
{
    return npk_f32_to_f16((float)(1.0 / (1.0 + exp(-a))));
}

static void set_w(npk_cnn2_model *m, uint32_t l, uint32_t o, uint32_t i, uint32_t ky, uint32_t kx,
                  float v)
{
    m->weights[npk_cnn2_weight_index(&m->layers[l], o, i, ky, kx)] = npk_f32_to_f16(v);
}

static void build(npk_cnn2_model *m, uint32_t mip, uint32_t n, const uint32_t *ks)
{
    npk_cnn2_shape s[8];
    for (uint32_t i = 0; i < n; i++) s[i] = (npk_cnn2_shape){ks[i], 12, 4};
    npk_error err = {0};
    if (npk_cnn2_build(m, 2, mip, n, s, &err)) fail_msg("%s", err.msg);
}

static void image(npk_cnn2_image *img, uint32_t w, uint32_t hgt)
{
    if (npk_cnn2_image_alloc(img, w, hgt, NULL)) fail_msg("image alloc");
}

static void render_both(const npk_cnn2_model *m, const npk_cnn2_image *img,
                        const npk_cnn2_render_opts *o, float *out[2])
{
    size_t n = (size_t)img->width * img->height * 4;
    for (int r = 0; r < 2; r++) {
        out[r] = malloc(n * sizeof(float));
        npk_error err = {0};
        if (renderers[r](m, img, o, out[r], &err))
            fail_msg("%s renderer: %s", renderer_names[r], err.msg);
    }
}

/* The exp/sigmoid of cnn2_internal.h: the reference's handy values, and
 * agreement with a double-precision sigmoid after f16 rounding everywhere
 * except within 2 f32 ulps of an f16 rounding boundary. */
static void test_sigmoid(void **state)
{
    (void)state;
    assert_int_equal(h(cnn2_sigmoid(0.0f)), 0x3800);
    assert_int_equal(h(cnn2_sigmoid(0.25f)), 0x387F);
    assert_int_equal(h(cnn2_sigmoid(0.5f)), 0x38FB);
    assert_int_equal(h(cnn2_sigmoid(0.75f)), 0x396F);
    assert_int_equal(h(cnn2_sigmoid(1.0f)), 0x39D9);
    int checked = 0;
    for (uint32_t bits = 0; bits < 0x10000; bits++) {
        float a = npk_f16_to_f32((uint16_t)bits);
        if (!isfinite(a)) continue;
        double exact = 1.0 / (1.0 + exp(-(double)a));
        float got = cnn2_sigmoid(a);
        if (a < -86.0f) { /* e^-a saturates at e^86: tiny results, f16 zero either way */
            assert_true(got >= 0.0f && got < 1e-37f);
            assert_int_equal(h(got), 0);
            continue;
        }
        /* f32 accuracy: a few ulps. */
        double ulp = exact > 0 ? ldexp(1.0, ilogb(exact) - 23) : ldexp(1.0, -149);
        if (fabs((double)got - exact) > 4 * ulp)
            fail_msg("sigmoid(%g) = %.9g, exact %.9g", a, got, exact);
        uint16_t want = npk_f32_to_f16((float)exact);
        uint16_t lo = npk_f32_to_f16((float)(exact - 2 * ulp)),
                 hi = npk_f32_to_f16((float)(exact + 2 * ulp));
        if (lo == hi) {
            assert_int_equal(h(got), want);
            checked++;
        }
    }
    print_message("sigmoid: %d f16 inputs compared exactly\n", checked);
    assert_true(checked > 50000);
    /* Saturation and specials. */
    assert_true(cnn2_sigmoid(100.0f) == 1.0f);
    assert_true(cnn2_sigmoid(INFINITY) == 1.0f);
    assert_true(cnn2_sigmoid(-INFINITY) < 1e-37f && cnn2_sigmoid(-INFINITY) >= 0.0f);
    assert_int_equal(cnn2_f2u(cnn2_activate(NAN, CNN2_SIGMOID)), CNN2_CANON_NAN);
    assert_int_equal(cnn2_f2u(cnn2_activate(-NAN, CNN2_RELU)), CNN2_CANON_NAN);
    assert_true(cnn2_activate(-3.0f, CNN2_RELU) == 0.0f);
    assert_true(cnn2_activate(3.0f, CNN2_CLAMP01) == 1.0f);
    for (float x = CNN2_EXP_LO; x <= CNN2_EXP_HI; x += 0.37f) {
        double e = exp((double)x);
        assert_true(fabs(cnn2_expf(x) - e) <= 3 * ldexp(1.0, ilogb(e) - 23));
    }
}

/* 1x1 models on a 1x1 image: sigmoid of a known weighted sum. */
static void test_one_by_one(void **state)
{
    (void)state;
    npk_cnn2_model m;
    uint32_t k1 = 1;
    build(&m, 0, 1, &k1);
    set_w(&m, 0, 0, 11, 0, 0, 1.0f); /* o0 = bias = 1 */
    set_w(&m, 0, 1, 0, 0, 0, 0.25f); /* o1 = 0.25 R, R = 1 */
    set_w(&m, 0, 2, 1, 0, 0, 1.0f);  /* o2 = G = 0.5 */
    set_w(&m, 0, 3, 8, 0, 0, 0.5f);  /* o3 = 0.5 uv_x + uv_y = 0.25 + 0.5 */
    set_w(&m, 0, 3, 9, 0, 0, 1.0f);
    npk_cnn2_image img;
    image(&img, 1, 1);
    float px[4] = {1.0f, 0.5f, 0.25f, 0.75f};
    memcpy(img.rgbd, px, sizeof px);
    for (uint32_t mip = 0; mip <= 3; mip++) {
        m.mip_level = mip;
        for (int border = 0; border < 2; border++) {
            npk_cnn2_render_opts o = {0};
            o.border = (npk_cnn2_border)border;
            float *out[2];
            render_both(&m, &img, &o, out);
            for (int r = 0; r < 2; r++) {
                assert_int_equal(h(out[r][0]), 0x39D9);
                assert_int_equal(h(out[r][1]), 0x387F);
                assert_int_equal(h(out[r][2]), 0x38FB);
                assert_int_equal(h(out[r][3]), 0x396F);
                free(out[r]);
            }
            /* Legacy clamp: the sums themselves. */
            o.activation = NPK_CNN2_ACT_LEGACY_CLAMP;
            render_both(&m, &img, &o, out);
            for (int r = 0; r < 2; r++) {
                assert_true(out[r][0] == 1.0f && out[r][1] == 0.25f && out[r][2] == 0.5f &&
                            out[r][3] == 0.75f);
                free(out[r]);
            }
        }
    }
    /* Legacy clamp below 0 and above 1; the sin feature of a 1x1 image. */
    memset(m.weights, 0, m.total_weights * 2);
    set_w(&m, 0, 0, 11, 0, 0, -2.0f);
    set_w(&m, 0, 1, 11, 0, 0, 3.0f);
    set_w(&m, 0, 2, 10, 0, 0, -1.0f); /* -sin(10 * 0.5) = 0.9589 */
    set_w(&m, 0, 3, 3, 0, 0, 1.0f);   /* D */
    npk_cnn2_render_opts o = {0};
    o.activation = NPK_CNN2_ACT_LEGACY_CLAMP;
    float *out[2];
    render_both(&m, &img, &o, out);
    for (int r = 0; r < 2; r++) {
        assert_true(out[r][0] == 0.0f && out[r][1] == 1.0f && out[r][3] == 0.75f);
        assert_int_equal(h(out[r][2]), h(-r16((float)sin(5.0))));
        free(out[r]);
    }
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&m);
}

/* Three 1x1 layers: sigmoid, ReLU, sigmoid with f16 rounding in between,
 * followed step by step with the independent sigmoid. */
static void test_three_layers_by_hand(void **state)
{
    (void)state;
    npk_cnn2_model m;
    uint32_t ks[3] = {1, 1, 1};
    build(&m, 0, 3, ks);
    set_w(&m, 0, 0, 0, 0, 0, 1.0f);   /* L0 o0 = sig(R) */
    set_w(&m, 0, 1, 11, 0, 0, -1.0f); /* L0 o1 = sig(-1) */
    set_w(&m, 1, 0, 0, 0, 0, 2.0f);   /* L1 o0 = relu(2 * L0o0) */
    set_w(&m, 1, 1, 1, 0, 0, -4.0f);  /* L1 o1 = relu(-4 * L0o1) = 0 */
    set_w(&m, 1, 2, 11, 0, 0, 0.5f);  /* L1 o2 = 0.5 */
    set_w(&m, 2, 0, 0, 0, 0, 1.0f);   /* L2 o0 = sig(L1o0 - 1) */
    set_w(&m, 2, 0, 11, 0, 0, -1.0f);
    set_w(&m, 2, 1, 1, 0, 0, 1.0f); /* L2 o1 = sig(0) */
    set_w(&m, 2, 2, 2, 0, 0, 3.0f); /* L2 o2 = sig(1.5) */
    npk_cnn2_image img;
    image(&img, 1, 1);
    img.rgbd[0] = 0.25f;
    float l0o0 = npk_f16_to_f32(sig16(0.25)), l0o1 = npk_f16_to_f32(sig16(-1.0));
    float l1o0 = r16(2.0f * l0o0);
    assert_true(l0o1 > 0);
    float *layers[2][3], *out[2];
    for (int r = 0; r < 2; r++) {
        npk_cnn2_render_opts o = {0};
        for (int l = 0; l < 3; l++) layers[r][l] = calloc(4, sizeof(float));
        o.layer_out = layers[r];
        out[r] = malloc(4 * sizeof(float));
        assert_int_equal(renderers[r](&m, &img, &o, out[r], NULL), NPK_OK);
        assert_int_equal(h(layers[r][0][0]), h(l0o0));
        assert_int_equal(h(layers[r][0][1]), h(l0o1));
        assert_true(layers[r][1][0] == l1o0);
        assert_true(layers[r][1][1] == 0.0f);
        assert_true(layers[r][1][2] == 0.5f);
        assert_int_equal(h(out[r][0]), sig16((double)(l1o0 + -1.0f)));
        assert_int_equal(h(out[r][1]), 0x3800);
        assert_int_equal(h(out[r][2]), sig16(1.5));
        assert_memory_equal(out[r], layers[r][2], 4 * sizeof(float));
        for (int l = 0; l < 3; l++) free(layers[r][l]);
        free(out[r]);
    }
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&m);
}

/* ---- independent features: written from the reference text, separately ---- */

typedef struct {
    uint32_t w, h;
    float *t; /* 4 per texel */
} lvl;

static lvl down(lvl a)
{
    lvl b = {a.w / 2 ? a.w / 2 : 1, a.h / 2 ? a.h / 2 : 1, NULL};
    b.t = malloc((size_t)b.w * b.h * 16);
    for (uint32_t j = 0; j < b.h; j++)
        for (uint32_t i = 0; i < b.w; i++)
            for (int c = 0; c < 4; c++) {
                float s = 0;
                for (int q = 0; q < 4; q++) { /* (2i,2j), (2i+1,2j), (2i,2j+1), (2i+1,2j+1) */
                    uint32_t x = 2 * i + (q & 1), y = 2 * j + (q >> 1);
                    if (x >= a.w) x = a.w - 1;
                    if (y >= a.h) y = a.h - 1;
                    s += a.t[((size_t)y * a.w + x) * 4 + c];
                }
                b.t[((size_t)j * b.w + i) * 4 + c] = s * 0.25f;
            }
    return b;
}

static float sample(lvl L, uint32_t x, uint32_t y, uint32_t W, uint32_t H, int c)
{
    double fx = (x + 0.5) / W * L.w - 0.5, fy = (y + 0.5) / H * L.h - 0.5;
    long x0 = (long)floor(fx), y0 = (long)floor(fy);
    double ax = fx - x0, ay = fy - y0;
    double t[2][2];
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
            long xx = x0 + dx, yy = y0 + dy;
            xx = xx < 0 ? 0 : xx >= (long)L.w ? (long)L.w - 1 : xx;
            yy = yy < 0 ? 0 : yy >= (long)L.h ? (long)L.h - 1 : yy;
            t[dy][dx] = L.t[((size_t)yy * L.w + (size_t)xx) * 4 + c];
        }
    double top = t[0][0] + (t[0][1] - t[0][0]) * ax, bot = t[1][0] + (t[1][1] - t[1][0]) * ax;
    return (float)(top + (bot - top) * ay);
}

static void independent_features(const npk_cnn2_image *img, uint32_t mip, float *f)
{
    uint32_t W = img->width, H = img->height;
    lvl L = {W, H, img->rgbd};
    lvl chain[4] = {L};
    for (uint32_t i = 1; i <= mip; i++) chain[i] = down(chain[i - 1]);
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            float *o = f + ((size_t)y * W + x) * 12;
            const float *p = img->rgbd + ((size_t)y * W + x) * 4;
            float ux = ((float)x + 0.5f) / (float)W;
            for (int c = 0; c < 4; c++) {
                o[c] = r16(p[c]);
                o[4 + c] = r16(mip ? sample(chain[mip], x, y, W, H, c) : p[c]);
            }
            o[8] = r16(ux);
            o[9] = r16(((float)y + 0.5f) / (float)H);
            o[10] = r16(sinf(10.0f * ux));
            o[11] = 1.0f;
        }
    for (uint32_t i = 1; i <= mip; i++) free(chain[i].t);
}

static void random_image(npk_cnn2_image *img, uint32_t w, uint32_t hgt, uint64_t *s, bool bytes)
{
    image(img, w, hgt);
    for (size_t i = 0; i < (size_t)w * hgt * 4; i++)
        img->rgbd[i] = bytes ? (float)(npk_rand(s) % 256) / 255.0f : (float)npk_randf(s);
}

static void test_features_independent(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{1, 1}, {2, 3},   {4, 4},   {7, 5}, {5, 1},
                                        {1, 9}, {33, 17}, {64, 64}, {13, 2}};
    uint64_t s = 99;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        if (npk_test_light() && sizes[z][0] * sizes[z][1] > 600) continue;
        npk_cnn2_image img;
        random_image(&img, sizes[z][0], sizes[z][1], &s, z % 2);
        size_t n = (size_t)img.width * img.height * 12;
        float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
        for (uint32_t mip = 0; mip <= 3; mip++) {
            independent_features(&img, mip, a);
            assert_int_equal(npk_cnn2_features(&img, mip, NPK_CNN2_PREC_F16, b, NULL), NPK_OK);
            assert_memory_equal(a, b, n * 4);
            /* The fast renderer's layer-0 input is the same. */
            npk_cnn2_model m;
            uint32_t k = 1;
            build(&m, mip, 1, &k);
            npk_cnn2_render_opts o = {0};
            o.features = c;
            float *out = malloc(n / 3 * 4);
            assert_int_equal(npk_cnn2_render(&m, &img, &o, out, NULL), NPK_OK);
            assert_memory_equal(a, c, n * 4);
            free(out);
            npk_cnn2_free(&m);
            /* At mip 0, p0..p3 equal channels 0..3 bit for bit. */
            for (size_t p = 0; mip == 0 && p < n / 12; p++)
                assert_memory_equal(b + p * 12, b + p * 12 + 4, 16);
        }
        free(a);
        free(b);
        free(c);
        npk_cnn2_image_free(&img);
    }
}

/* Hand-computed values: uv and sin for W = 4 (from the reference), and a
 * 4x2 image at mip 1 (2x1 level): box means and bilinear weights. */
static void test_features_by_hand(void **state)
{
    (void)state;
    npk_cnn2_image img;
    image(&img, 4, 2);
    /* R: row 0 = 0, 0.25, 0.5, 1; row 1 = 0.5, 0.25, 1, 1. */
    float R[8] = {0, 0.25f, 0.5f, 1, 0.5f, 0.25f, 1, 1};
    for (int i = 0; i < 8; i++) img.rgbd[i * 4] = R[i];
    float f[8 * 12];
    assert_int_equal(npk_cnn2_features(&img, 0, NPK_CNN2_PREC_F16, f, NULL), NPK_OK);
    static const uint16_t uvx[4] = {0x3000, 0x3600, 0x3900, 0x3B00};
    for (int x = 0; x < 4; x++) assert_int_equal(h(f[x * 12 + 8]), uvx[x]);
    assert_int_equal(h(f[0 * 12 + 10]), 0x3B98); /* sin(1.25) */
    assert_true(f[9] == 0.25f && f[4 * 12 + 9] == 0.75f && f[11] == 1.0f);
    /* mip 1: level 2x1 = [(0 + 0.25 + 0.5 + 0.25) / 4, (0.5 + 1 + 1 + 1) / 4] = [0.25, 0.875]
     * x = 0: fx = -0.25 -> clamped to texel 0 -> 0.25
     * x = 1: fx = 0.25  -> 0.25 + 0.25 (0.875 - 0.25) = 0.40625
     * x = 2: fx = 0.75  -> 0.25 + 0.75 (0.625) = 0.71875
     * x = 3: fx = 1.25  -> clamped to texel 1 -> 0.875 (same for both rows). */
    assert_int_equal(npk_cnn2_features(&img, 1, NPK_CNN2_PREC_F16, f, NULL), NPK_OK);
    static const float want[4] = {0.25f, 0.40625f, 0.71875f, 0.875f};
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 4; x++) assert_true(f[(y * 4 + x) * 12 + 4] == want[x]);
    /* mip 2 and 3 of a 4x2 image: 1x1 levels, the mean of everything. */
    assert_int_equal(npk_cnn2_features(&img, 3, NPK_CNN2_PREC_F16, f, NULL), NPK_OK);
    for (int p = 0; p < 8; p++) assert_true(f[p * 12 + 4] == 0.5625f);
    npk_cnn2_image_free(&img);
}

/* Borders: a 3x3 layer reading off-centre taps, in both modes, against
 * explicit per-pixel expectations (legacy clamp keeps the sums exact). */
static void test_borders(void **state)
{
    (void)state;
    npk_cnn2_model m;
    uint32_t k3 = 3;
    build(&m, 0, 1, &k3);
    set_w(&m, 0, 0, 0, 0, 0, 1.0f); /* o0 = R(x-1, y-1) */
    for (uint32_t ky = 0; ky < 3; ky++)
        for (uint32_t kx = 0; kx < 3; kx++) set_w(&m, 0, 1, 11, ky, kx, 0.0625f); /* bias */
    set_w(&m, 0, 2, 8, 1, 0, 1.0f); /* o2 = uv_x(x-1, y) */
    set_w(&m, 0, 3, 3, 2, 2, 1.0f); /* o3 = D(x+1, y+1) */
    npk_cnn2_image img;
    uint64_t s = 5;
    random_image(&img, 5, 4, &s, true);
    long W = 5, H = 4;
    for (int zero = 0; zero < 2; zero++) {
        npk_cnn2_render_opts o = {0};
        o.border = zero ? NPK_CNN2_BORDER_ZERO : NPK_CNN2_BORDER_CLAMP;
        o.activation = NPK_CNN2_ACT_LEGACY_CLAMP;
        float *out[2];
        render_both(&m, &img, &o, out);
        for (long y = 0; y < H; y++)
            for (long x = 0; x < W; x++) {
                float want[4];
                long xm = x - 1, ym = y - 1, xp = x + 1, yp = y + 1;
                bool in0 = xm >= 0 && ym >= 0, in3 = xp < W && yp < H;
                long cx = xm < 0 ? 0 : xm, cy = ym < 0 ? 0 : ym;
                long px = xp >= W ? W - 1 : xp, py = yp >= H ? H - 1 : yp;
                want[0] = zero && !in0 ? 0.0f : r16(img.rgbd[(cy * W + cx) * 4 + 0]);
                int taps = 0;
                for (long dy = -1; dy <= 1; dy++)
                    for (long dx = -1; dx <= 1; dx++)
                        taps += x + dx >= 0 && x + dx < W && y + dy >= 0 && y + dy < H;
                want[1] = 0.0625f * (float)(zero ? taps : 9);
                want[2] = zero && xm < 0 ? 0.0f : r16(((float)cx + 0.5f) / (float)W);
                want[3] = zero && !in3 ? 0.0f : r16(img.rgbd[(py * W + px) * 4 + 3]);
                for (int r = 0; r < 2; r++)
                    for (int c = 0; c < 4; c++)
                        if (out[r][(y * W + x) * 4 + c] != want[c])
                            fail_msg("%s %s border: (%ld,%ld) channel %d = %g, want %g",
                                     renderer_names[r], zero ? "zero" : "clamp", x, y, c,
                                     out[r][(y * W + x) * 4 + c], want[c]);
            }
        free(out[0]);
        free(out[1]);
    }
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&m);
}

static void load_fixture(const char *rel, npk_cnn2_model *m)
{
    npk_error err = {0};
    if (npk_cnn2_load(NPK_FIXTURE(rel), m, &err)) fail_msg("%s: %s", rel, err.msg);
}

/* Identity fixtures: output_c = sigmoid(input_c), both borders; legacy clamp
 * reproduces the (f16-rounded) input exactly. */
static void test_identity_fixtures(void **state)
{
    (void)state;
    static const char *files[] = {"cnn2/synthetic_identity_1x1_v2.bin",
                                  "cnn2/synthetic_identity_1x1_v1.bin",
                                  "cnn2/synthetic_identity_3x3_v2.bin"};
    uint64_t s = 17;
    npk_cnn2_image img;
    random_image(&img, 13, 7, &s, true);
    img.rgbd[0] = 1.0f;
    img.rgbd[1] = 0.0f;
    for (size_t f = 0; f < 3; f++) {
        npk_cnn2_model m;
        load_fixture(files[f], &m);
        for (int border = 0; border < 2; border++)
            for (int legacy = 0; legacy < 2; legacy++) {
                npk_cnn2_render_opts o = {0};
                o.border = (npk_cnn2_border)border;
                o.activation = legacy ? NPK_CNN2_ACT_LEGACY_CLAMP : NPK_CNN2_ACT_DEFAULT;
                float *out[2];
                render_both(&m, &img, &o, out);
                for (int r = 0; r < 2; r++) {
                    for (size_t i = 0; i < 13 * 7 * 4; i++) {
                        float in = r16(img.rgbd[i]);
                        uint16_t want = legacy ? h(in) : sig16(in);
                        assert_int_equal(h(out[r][i]), want);
                    }
                    assert_int_equal(h(out[r][0]), legacy ? 0x3C00 : 0x39D9); /* 1.0 */
                    assert_int_equal(h(out[r][1]), legacy ? 0x0000 : 0x3800); /* 0 */
                    free(out[r]);
                }
            }
        npk_cnn2_free(&m);
    }
    npk_cnn2_image_free(&img);
}

/* Mix fixture (mip 2): a uniform image gives the identity result; on a
 * random image, legacy clamp gives exactly 0.5 in_c + 0.5 p_c (f32) with
 * p_c from the independent mip code. */
static void test_mix_fixture(void **state)
{
    (void)state;
    npk_cnn2_model mix, id;
    load_fixture("cnn2/synthetic_mix_1x1_v2_mip2.bin", &mix);
    load_fixture("cnn2/synthetic_identity_1x1_v2.bin", &id);
    npk_cnn2_image img;
    image(&img, 19, 11);
    for (size_t i = 0; i < 19 * 11; i++) {
        img.rgbd[i * 4 + 0] = 0.2f;
        img.rgbd[i * 4 + 1] = 0.6f;
        img.rgbd[i * 4 + 2] = 1.0f;
        img.rgbd[i * 4 + 3] = 0.0f;
    }
    float *a[2], *b[2];
    render_both(&mix, &img, NULL, a);
    render_both(&id, &img, NULL, b);
    for (int r = 0; r < 2; r++) {
        assert_memory_equal(a[r], b[r], 19 * 11 * 16);
        free(a[r]);
        free(b[r]);
    }
    npk_cnn2_image_free(&img);
    uint64_t s = 3;
    random_image(&img, 23, 14, &s, false);
    float *f = malloc(23 * 14 * 12 * 4);
    independent_features(&img, 2, f);
    npk_cnn2_render_opts o = {0};
    o.activation = NPK_CNN2_ACT_LEGACY_CLAMP;
    render_both(&mix, &img, &o, a);
    for (int r = 0; r < 2; r++) {
        for (size_t p = 0; p < 23 * 14; p++)
            for (int c = 0; c < 4; c++) {
                float acc = 0.5f * f[p * 12 + c];
                acc = acc + 0.5f * f[p * 12 + 4 + c];
                assert_true(a[r][p * 4 + c] == r16(acc > 1.0f ? 1.0f : acc));
            }
        free(a[r]);
    }
    free(f);
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&mix);
    npk_cnn2_free(&id);
}

/* The random 3-layer fixture (no reference output): deterministic, thread
 * count independent, fast == reference; clamp and zero borders agree in the
 * interior (at least 1 + 2 + 1 pixels from every edge) and differ on the
 * border band; f32 precision stays close to f16 but is not identical. */
static void test_random_fixture(void **state)
{
    (void)state;
    npk_cnn2_model m;
    load_fixture("cnn2/synthetic_random_3layer_v2.bin", &m);
    uint64_t s = 11;
    npk_cnn2_image img;
    random_image(&img, 37, 29, &s, true);
    size_t n = 37 * 29 * 4;
    float *base[2];
    render_both(&m, &img, NULL, base);
    assert_memory_equal(base[0], base[1], n * 4);
    float *again = malloc(n * 4);
    for (unsigned t = 1; t <= 5; t++) {
        npk_cnn2_render_opts o = {0};
        o.threads = t;
        assert_int_equal(npk_cnn2_render(&m, &img, &o, again, NULL), NPK_OK);
        assert_memory_equal(again, base[0], n * 4);
    }
    npk_cnn2_render_opts oz = {0};
    oz.border = NPK_CNN2_BORDER_ZERO;
    float *zero[2];
    render_both(&m, &img, &oz, zero);
    assert_memory_equal(zero[0], zero[1], n * 4);
    int interior_diff = 0, band_diff = 0;
    for (int y = 0; y < 29; y++)
        for (int x = 0; x < 37; x++)
            for (int c = 0; c < 4; c++) {
                size_t i = ((size_t)y * 37 + x) * 4 + c;
                bool inner = x >= 4 && y >= 4 && x < 37 - 4 && y < 29 - 4;
                bool d = base[0][i] != zero[0][i];
                if (inner)
                    interior_diff += d;
                else
                    band_diff += d;
            }
    assert_int_equal(interior_diff, 0);
    assert_true(band_diff > 0);
    npk_cnn2_render_opts o32 = {0};
    o32.precision = NPK_CNN2_PREC_F32;
    float *p32[2];
    render_both(&m, &img, &o32, p32);
    assert_memory_equal(p32[0], p32[1], n * 4);
    double maxd = 0;
    /* A plain compare, not fmax(): gcc 12's aarch64 vectoriser crashes (ICE)
     * on an fmax reduction here. */
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)p32[0][i] - base[0][i]);
        if (d > maxd) maxd = d;
    }
    print_message("f32 vs f16 precision: max difference %g\n", maxd);
    assert_true(maxd > 0 && maxd < 0.01);
    for (int r = 0; r < 2; r++) {
        free(base[r]);
        free(zero[r]);
        free(p32[r]);
    }
    free(again);
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&m);
}

static void test_shape_checks(void **state)
{
    (void)state;
    npk_cnn2_shape s[2] = {{3, 12, 4}, {3, 12, 3}};
    npk_cnn2_model m;
    assert_int_equal(npk_cnn2_build(&m, 2, 0, 2, s, NULL), NPK_OK);
    npk_cnn2_image img;
    image(&img, 4, 4);
    float out[64];
    npk_error err = {0};
    assert_int_equal(npk_cnn2_render(&m, &img, NULL, out, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "unsupported network shape"));
    npk_error_clear(&err);
    assert_int_equal(npk_cnn2_render_ref(&m, &img, NULL, out, &err), NPK_E_UNSUPPORTED);
    npk_cnn2_free(&m);
    s[0] = (npk_cnn2_shape){65, 12, 4};
    assert_int_equal(npk_cnn2_build(&m, 2, 0, 1, s, NULL), NPK_OK);
    npk_error_clear(&err);
    assert_int_equal(npk_cnn2_render(&m, &img, NULL, out, &err), NPK_E_UNSUPPORTED);
    npk_cnn2_free(&m);
    npk_cnn2_image_free(&img);
    assert_int_equal(npk_cnn2_image_alloc(&img, 0, 4, NULL), NPK_E_LIMIT);
    assert_int_equal(npk_cnn2_image_alloc(&img, 40000, 1, NULL), NPK_E_LIMIT);
    assert_int_equal(npk_cnn2_image_alloc(&img, 8192, 8192, NULL), NPK_E_LIMIT);
}

static void test_blend_and_bytes(void **state)
{
    (void)state;
    float orig[8] = {0.0f, 0.2f, 1.0f, 0.5f, 1.0f, 1.0f, 0.0f, 0.25f};
    float cnn[8] = {1.0f, 0.6f, 0.0f, 0.5f, 0.5f, 0.0f, 1.0f, 0.75f};
    float out[8];
    npk_cnn2_blend(orig, cnn, 2, 1.0f, out);
    assert_memory_equal(out, cnn, sizeof out);
    npk_cnn2_blend(orig, cnn, 2, 7.0f, out); /* clamped to 1 */
    assert_memory_equal(out, cnn, sizeof out);
    npk_cnn2_blend(orig, cnn, 2, 0.0f, out);
    assert_memory_equal(out, orig, sizeof out);
    npk_cnn2_blend(orig, cnn, 2, 0.5f, out);
    for (int i = 0; i < 8; i++) assert_true(out[i] == orig[i] * 0.5f + cnn[i] * 0.5f);
    float v[8] = {-1.0f, 0.0f, 0.5f / 255, 1.5f / 255, 0.5f, 1.0f, 2.0f, NAN};
    uint8_t b[8];
    npk_cnn2_to_rgba8(v, 2, b);
    static const uint8_t want[8] = {0, 0, 1, 2, 128, 255, 255, 0};
    assert_memory_equal(b, want, 8);
    /* 8-bit in -> blend 0 -> 8-bit out is the identity on every byte value. */
    uint8_t px[256 * 4], back[256 * 4];
    for (int i = 0; i < 256 * 4; i++) px[i] = (uint8_t)(i / 4);
    npk_cnn2_image img;
    assert_int_equal(npk_cnn2_image_from_rgba8(&img, px, 16, 16, true, NULL), NPK_OK);
    npk_cnn2_to_rgba8(img.rgbd, 256, back);
    assert_memory_equal(back, px, sizeof px);
    npk_cnn2_image_free(&img);
}

static void test_pattern(void **state)
{
    (void)state;
    uint8_t *a, *b;
    assert_int_equal(npk_cnn2_pattern(31, 17, 4, true, &a, NULL), NPK_OK);
    assert_int_equal(npk_cnn2_pattern(31, 17, 4, true, &b, NULL), NPK_OK);
    assert_memory_equal(a, b, 31 * 17 * 4);
    char hex[65];
    npk_sha256_hex(a, 31 * 17 * 4, hex);
    print_message("pattern 31x17 seed 4: %s\n", hex);
    /* Corners: R is the x ramp, alpha the diagonal ramp. */
    assert_int_equal(a[0], 0);
    assert_int_equal(a[(30) * 4], 255);
    assert_int_equal(a[3], 0);
    assert_int_equal(a[(31 * 17 - 1) * 4 + 3], 255);
    free(b);
    assert_int_equal(npk_cnn2_pattern(31, 17, 5, false, &b, NULL), NPK_OK);
    assert_memory_not_equal(a, b, 31 * 17 * 4);
    for (int i = 0; i < 31 * 17; i++) assert_int_equal(b[i * 4 + 3], 255);
    free(a);
    free(b);
    assert_int_equal(npk_cnn2_pattern(1, 1, 0, true, &a, NULL), NPK_OK);
    free(a);
    assert_int_equal(npk_cnn2_pattern(0, 1, 0, true, &a, NULL), NPK_E_LIMIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigmoid),
        cmocka_unit_test(test_one_by_one),
        cmocka_unit_test(test_three_layers_by_hand),
        cmocka_unit_test(test_features_independent),
        cmocka_unit_test(test_features_by_hand),
        cmocka_unit_test(test_borders),
        cmocka_unit_test(test_identity_fixtures),
        cmocka_unit_test(test_mix_fixture),
        cmocka_unit_test(test_random_fixture),
        cmocka_unit_test(test_shape_checks),
        cmocka_unit_test(test_blend_and_bytes),
        cmocka_unit_test(test_pattern),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
