/* Edge TPU: the Dense parameter-blob codec at N = 1024 (goal: >= 1 GB/s,
 * i.e. a 1 MiB blob in under 1 ms; the public NumPy generator takes about
 * 17.5 ms), against memcpy of the blob and a per-element loop of the layout
 * formula; and parsing every fixture model (goal: under 1 ms each). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "edgetpu/etpu_usb.h"
#include "npukit/edgetpu.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_usb.h"
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

/* ---- USB runtime on the emulated accelerator ---- */

struct run_arg {
    npk_etpu_device *dev;
    npk_etpu_plan *p;
    const uint8_t *const *in;
    uint8_t *const *out;
    bool forget; /* upload the parameters every time */
    npk_etpu_dense *d;
    const int8_t *w;
};

static void run_once(void *p)
{
    struct run_arg *a = p;
    if (a->forget) npk_etpu_forget_parameters(a->dev);
    npk_etpu_run(a->dev, a->p, a->in, a->out, NULL, NULL);
}

static void reference_once(void *p)
{
    struct run_arg *a = p;
    npk_etpu_dense_run_device(a->d, a->w, a->in[0], 1, a->out[0], NULL);
}

struct hash_arg {
    const uint8_t *data;
    size_t size;
    uint64_t h;
};

static void hash_once(void *p)
{
    struct hash_arg *a = p;
    a->h ^= etpu_hash64(a->data, a->size);
}

/* A Dense model run through the whole runtime (framing, hints, output
 * assembly) on the emulator, against the reference executor alone (the
 * emulator's own computation): the ratio is the share of the time spent
 * computing; the rest is the runtime and the emulator's protocol checks. */
static void bench_usb(npk_bench *b, const char *name, const uint8_t *file, size_t size)
{
    npk_etpu_model m;
    npk_etpu_plan p;
    npk_etpu_dense d;
    npk_etpu_emu *emu = NULL;
    npk_etpu_device *dev = NULL;
    npk_error err = {0};
    if (npk_etpu_parse(file, size, &m, &err)) return;
    if (npk_etpu_plan_init(&m, &p, &err) || npk_etpu_dense_init(&m, &d, &err)) {
        npk_bench_note(b, "%s: %s", name, err.msg);
        npk_etpu_free(&m);
        return;
    }
    int8_t *w = malloc(d.n * d.n);
    uint8_t *x = malloc(d.n), *y = malloc(d.n);
    for (size_t i = 0; i < d.n; i++) x[i] = (uint8_t)(i * 37);
    npk_etpu_dense_weights(&d, w, NULL);
    const uint8_t *in[1] = {x};
    uint8_t *out[1] = {y};
    if (npk_etpu_emu_new(NULL, &emu, &err) || npk_etpu_emu_add_model(emu, &m, &err) ||
        npk_etpu_open(npk_etpu_emu_transport(emu), NULL, &dev, &err) ||
        npk_etpu_run(dev, &p, in, out, NULL, &err)) {
        npk_bench_note(b, "%s: %s", name, err.msg);
    } else {
        struct run_arg a = {dev, &p, in, out, false, &d, w};
        char label[160];
        double tr = npk_bench_time(b, reference_once, &a);
        double tc = npk_bench_time(b, run_once, &a);
        snprintf(label, sizeof label, "edgetpu usb: %s run, parameters cached (emulator)", name);
        npk_bench_report_rate(b, label, 1, "runs/s", tc, "reference executor alone", tr, 0);
        a.forget = true;
        double tu = npk_bench_time(b, run_once, &a);
        snprintf(label, sizeof label, "edgetpu usb: %s run with parameter upload (emulator)", name);
        npk_bench_report_rate(b, label, 1, "runs/s", tu, "reference executor alone", tr, 0);
        size_t moved =
            p.pc->parameters_size + p.pc->bitstreams[0].size + p.eo->bitstreams[0].size + 2 * d.n;
        snprintf(label, sizeof label, "edgetpu usb: %s bytes moved per upload run", name);
        npk_bench_report_bytes(b, label, moved, tu, 0);
        if (npk_etpu_emu_violation(emu))
            npk_bench_note(b, "emulator: %s", npk_etpu_emu_violation(emu));
    }
    npk_etpu_close(dev);
    npk_etpu_emu_free(emu);
    free(w);
    free(x);
    free(y);
    npk_etpu_dense_free(&d);
    npk_etpu_plan_free(&p);
    npk_etpu_free(&m);
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
        if (i == 0) bench_usb(b, "dense_256", m.data, m.size);
        npk_unmap_file(&m);
    }
    if (!found) npk_bench_note(b, "no fixtures in %s (set NPUKIT_FIXTURES)", dir);
    npk_etpu_synth_opts o = {.n = 1024};
    uint8_t *s;
    size_t len;
    if (npk_etpu_synth_dense(&o, &s, &len, NULL) == NPK_OK) {
        bench_parse(b, "synthetic dense 1024", s, len, false);
        bench_usb(b, "synthetic dense 1024", s, len);
        free(s);
    }
    /* The parameter cache key: computed once per plan, not per run. */
    struct hash_arg h = {NULL, (size_t)1 << 20, 0};
    uint8_t *blob = malloc(h.size);
    if (blob) {
        for (size_t i = 0; i < h.size; i++) blob[i] = (uint8_t)(i * 131);
        h.data = blob;
        double th = npk_bench_time(b, hash_once, &h);
        npk_bench_report_bytes(b, "edgetpu usb: parameter hash (cache key) 1 MiB", h.size, th, 0);
        free(blob);
    }
}
