/* Edge TPU: the Dense parameter-blob codec at N = 1024 (goal: >= 1 GB/s,
 * i.e. a 1 MiB blob in under 1 ms; the public NumPy generator takes about
 * 17.5 ms), against memcpy of the blob and a per-element loop of the layout
 * formula; and parsing every fixture model (goal: under 1 ms each). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "npukit/edgetpu.h"
#include "npukit/file.h"

#define N 1024

struct blob_arg {
    int8_t *w;
    uint8_t *overhead, *blob;
    size_t size;
};

static void encode(void *p)
{
    struct blob_arg *a = p;
    npk_etpu_blob_encode(a->w, N, N, a->overhead, a->blob, a->size, NULL);
}
static void decode(void *p)
{
    struct blob_arg *a = p;
    npk_etpu_blob_decode(a->blob, a->size, N, N, a->w, a->overhead, NULL);
}
/* The layout formula one element at a time (what a straightforward port of
 * the NumPy generator does). */
static void encode_naive(void *p)
{
    struct blob_arg *a = p;
    const size_t stride = 512 + 64 * N;
    for (size_t g = 0; g < N / 64; g++) memcpy(a->blob + g * stride, a->overhead + g * 512, 512);
    for (size_t r = 0; r < N; r++)
        for (size_t c = 0; c < N; c++)
            a->blob[(r / 64) * stride + 512 + (c / 4) * 256 + (r % 64) * 4 + (c % 4)] =
                (uint8_t)a->w[r * N + c] ^ 0x80;
}

struct parse_arg {
    const uint8_t *data;
    size_t size;
};

static void parse(void *p)
{
    struct parse_arg *a = p;
    npk_etpu_model m;
    if (npk_etpu_parse(a->data, a->size, &m, NULL) == NPK_OK) npk_etpu_free(&m);
}

/* The fixture folder: $NPUKIT_FIXTURES, else ../shared/data next to the source tree. */
static const char *fixture_dir(char *buf, size_t n)
{
    const char *e = getenv("NPUKIT_FIXTURES");
    if (e && *e) return e;
    snprintf(buf, n, "%s", __FILE__);
    for (int up = 0; up < 2; up++) {
        char *s = strrchr(buf, '/');
        if (s) *s = 0;
    }
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "/../shared/data");
    return buf;
}

static void bench_parse(npk_bench *b, const char *name, const uint8_t *data, size_t size,
                        bool bytes)
{
    struct parse_arg a = {data, size};
    npk_etpu_model m;
    npk_error err = {0};
    if (npk_etpu_parse(data, size, &m, &err)) {
        npk_bench_note(b, "%s does not parse: %s", name, err.msg);
        return;
    }
    npk_etpu_free(&m);
    char label[160];
    snprintf(label, sizeof label, "edgetpu: parse %s", name);
    double t = npk_bench_time(b, parse, &a);
    npk_bench_report_rate(b, label, 1, "parses/s", t, NULL, 0, 1000); /* < 1 ms */
    /* Parsing reads the structure, not the bitstreams and parameters it
     * points to, so this ratio can exceed 1 for parameter-heavy files. */
    snprintf(label, sizeof label, "edgetpu: parse %s (bytes)", name);
    if (bytes) npk_bench_report_bytes(b, label, size, t, 0);
}

void bench_edgetpu(npk_bench *b)
{
    struct blob_arg a = {malloc((size_t)N * N), malloc(N / 64 * 512), NULL,
                         npk_etpu_blob_size(N, N)};
    a.blob = malloc(a.size);
    for (size_t i = 0; i < (size_t)N * N; i++) a.w[i] = (int8_t)(i * 2654435761u >> 24);
    for (size_t i = 0; i < N / 64 * 512; i++) a.overhead[i] = (uint8_t)i;
    npk_bench_note(b, "Dense %dx%d parameter blob: %zu bytes; goal >= 1 GB/s (< 1 ms)", N, N,
                   a.size);
    double tn = npk_bench_time(b, encode_naive, &a);
    double te = npk_bench_time(b, encode, &a);
    npk_bench_report_rate(b, "edgetpu: blob encode 1024x1024", (double)a.size, "B/s", te, NULL, 0,
                          1e9);
    npk_bench_report_bytes(b, "edgetpu: blob encode 1024x1024", a.size, te, 0);
    npk_bench_report_rate(b, "edgetpu: blob encode vs per-element loop", (double)a.size, "B/s", te,
                          "per-element loop", tn, 0);
    double td = npk_bench_time(b, decode, &a);
    npk_bench_report_rate(b, "edgetpu: blob decode 1024x1024", (double)a.size, "B/s", td, NULL, 0,
                          1e9);
    npk_bench_report_bytes(b, "edgetpu: blob decode 1024x1024", a.size, td, 0);
    free(a.w);
    free(a.overhead);
    free(a.blob);

    static const char *const models[] = {
        "dense_256_edgetpu.tflite",         "gabor_64x64_p4_edgetpu.tflite",
        "looming_64x64_3x3_edgetpu.tflite", "keras_lstm_mnist_ptq_edgetpu.tflite",
        "split_concat_edgetpu.tflite",      "dense_256.tflite",
        "keras_lstm_mnist_ptq.tflite"};
    char dirbuf[1024], path[1200];
    const char *dir = fixture_dir(dirbuf, sizeof dirbuf);
    int found = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        npk_mapped m;
        npk_error err = {0};
        snprintf(path, sizeof path, "%s/edgetpu/%s", dir, models[i]);
        if (npk_map_file(path, &m, &err)) continue;
        found++;
        bench_parse(b, models[i], m.data, m.size, true);
        npk_unmap_file(&m);
    }
    if (!found) npk_bench_note(b, "no fixtures in %s (set NPUKIT_FIXTURES)", dir);
    npk_etpu_synth_opts o = {.n = 1024};
    uint8_t *s;
    size_t len;
    if (npk_etpu_synth_dense(&o, &s, &len, NULL) == NPK_OK) {
        bench_parse(b, "synthetic dense 1024", s, len, false);
        free(s);
    }
}
