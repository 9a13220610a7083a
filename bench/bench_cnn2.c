/* CNN v2 benchmarks.
 * - render: 1920x1080 RGBA, 3 layers of 3x3 12->4 (mip 0, default
 *   activations, clamp borders, faithful f16), the fast renderer on all
 *   CPUs. Goal: 40 M pixel-layers/s. The scalar reference renderer is
 *   reported beside it on a 480x270 crop (its cost per pixel-layer does not
 *   depend on the size) and the fast/reference ratio is printed.
 * - codec: parse + validate of a file, as throughput against memcpy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "npukit/cnn2.h"
#include "npukit/cnn2_render.h"
#include "npukit/half.h"

struct render_arg {
    npk_cnn2_renderer *fast;
    const npk_cnn2_model *m;
    npk_cnn2_image img;
    float *out;
};

static void run_fast(void *p)
{
    struct render_arg *a = p;
    npk_cnn2_renderer_run(a->fast, &a->img, a->out, NULL);
}

static void run_ref(void *p)
{
    struct render_arg *a = p;
    npk_cnn2_render_ref(a->m, &a->img, NULL, a->out, NULL);
}

/* The standard 3-layer network with weights uniform in +-0.5. */
static int make_model(npk_cnn2_model *m, uint32_t mip)
{
    npk_cnn2_shape s[3] = {{3, 12, 4}, {3, 12, 4}, {3, 12, 4}};
    if (npk_cnn2_build(m, 2, mip, 3, s, NULL)) return -1;
    uint64_t st = 12345;
    for (uint32_t i = 0; i < m->total_weights; i++) {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        m->weights[i] = npk_f32_to_f16((float)(st % 10000) / 10000.0f - 0.5f);
    }
    return 0;
}

static int make_image(npk_cnn2_image *img, uint32_t w, uint32_t h)
{
    uint8_t *rgba;
    if (npk_cnn2_pattern(w, h, 3, true, &rgba, NULL)) return -1;
    int rc = npk_cnn2_image_from_rgba8(img, rgba, w, h, true, NULL) ? -1 : 0;
    free(rgba);
    return rc;
}

struct parse_arg {
    const uint8_t *buf;
    size_t len;
};

static void run_parse(void *p)
{
    struct parse_arg *a = p;
    npk_cnn2_model m;
    npk_cnn2_parse(a->buf, a->len, &m, NULL);
    npk_cnn2_free(&m);
}

void bench_cnn2(npk_bench *b)
{
    npk_cnn2_model m;
    if (make_model(&m, 0)) return;
    struct render_arg big = {0}, small = {0};
    big.m = small.m = &m;
    if (make_image(&big.img, 1920, 1080) || make_image(&small.img, 480, 270)) return;
    big.out = malloc((size_t)1920 * 1080 * 4 * sizeof(float));
    small.out = malloc((size_t)480 * 270 * 4 * sizeof(float));
    if (!big.out || !small.out || npk_cnn2_renderer_new(&big.fast, &m, NULL, NULL)) return;

    double items_big = 1920.0 * 1080 * 3, items_small = 480.0 * 270 * 3;
    npk_bench_note(b,
                   "cnn2 render: 1920x1080, 3 layers 3x3 12->4, f16 faithful, clamp; "
                   "kernel path %s, all online CPUs",
                   npk_cnn2_render_path());
    double t_fast = npk_bench_time(b, run_fast, &big);
    double t_ref = npk_bench_time(b, run_ref, &small);
    double ref_per_item = t_ref / items_small;
    npk_bench_report_rate(b, "cnn2: render fast 1920x1080", items_big, "pixel-layers/s", t_fast,
                          NULL, 0, 40e6);
    npk_bench_report_rate(b, "cnn2: render scalar reference (480x270)", items_small,
                          "pixel-layers/s", t_ref, NULL, 0, 0);
    npk_bench_report_rate(b, "cnn2: render fast vs reference", items_big, "pixel-layers/s", t_fast,
                          "scalar reference", ref_per_item * items_big, 0);

    /* One thread, and the generic (non-AVX2) vector code. */
    npk_cnn2_renderer *one;
    npk_cnn2_render_opts o1 = {0};
    o1.threads = 1;
    if (!npk_cnn2_renderer_new(&one, &m, &o1, NULL)) {
        struct render_arg a1 = big;
        a1.fast = one;
        npk_bench_report_rate(b, "cnn2: render fast, 1 thread", items_big, "pixel-layers/s",
                              npk_bench_time(b, run_fast, &a1), NULL, 0, 0);
        npk_cnn2_renderer_free(one);
    }
    npk_cnn2_force_generic(1);
    npk_cnn2_renderer *gen;
    if (!npk_cnn2_renderer_new(&gen, &m, NULL, NULL)) {
        struct render_arg ag = big;
        ag.fast = gen;
        npk_bench_report_rate(b, "cnn2: render fast, generic vectors", items_big, "pixel-layers/s",
                              npk_bench_time(b, run_fast, &ag), NULL, 0, 0);
        npk_cnn2_renderer_free(gen);
    }
    npk_cnn2_force_generic(0);

    /* Codec: parse + validate a large (64-layer 7x7) file. */
    npk_cnn2_shape s[64];
    for (int i = 0; i < 64; i++) s[i] = (npk_cnn2_shape){7, 12, 4};
    npk_cnn2_model mm;
    uint8_t *buf;
    size_t len;
    if (!npk_cnn2_build(&mm, 2, 0, 64, s, NULL) && !npk_cnn2_encode(&mm, &buf, &len, NULL)) {
        struct parse_arg pa = {buf, len};
        npk_bench_report_bytes(b, "cnn2: parse + validate (64 layers 7x7)", len,
                               npk_bench_time(b, run_parse, &pa), 0);
        free(buf);
        npk_cnn2_free(&mm);
    }

    npk_cnn2_renderer_free(big.fast);
    free(big.out);
    free(small.out);
    npk_cnn2_image_free(&big.img);
    npk_cnn2_image_free(&small.img);
    npk_cnn2_free(&m);
}
