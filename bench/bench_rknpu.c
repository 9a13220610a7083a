/* RKNPU: stream generation rate, stream decoding, and the layout conversions
 * against memcpy of the same bytes (buffers well past the caches). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "npukit/rknpu_layout.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_stream.h"

/* ---- stream generation ---- */

#define GEN_BATCH 1024

struct gen_arg {
    npk_rk_matmul shapes[GEN_BATCH];
    uint64_t out[NPK_RK_MATMUL_ENTRIES];
    uint64_t sink;
};

static void gen(void *p)
{
    struct gen_arg *a = p;
    for (int i = 0; i < GEN_BATCH; i++) {
        npk_rk_matmul_stream(&a->shapes[i], a->out, NULL);
        a->sink += a->out[11];
    }
}

static void decode(void *p)
{
    struct gen_arg *a = p;
    for (int r = 0; r < GEN_BATCH / 16; r++)
        for (int i = 0; i < NPK_RK_MATMUL_ENTRIES; i++) {
            npk_rk_entry e;
            npk_rk_entry_decode(a->out[i], &e);
            a->sink += (uint64_t)e.reg;
        }
}

/* ---- layouts ---- */

struct lay_arg {
    npk_rk_feature_shape fs;
    npk_rk_weight_shape ws;
    npk_rk_order order;
    bool weight, pack;
    uint8_t *plain, *native;
};

static void lay(void *p)
{
    struct lay_arg *a = p;
    if (a->weight) {
        if (a->pack)
            npk_rk_weight_pack(&a->ws, a->order, a->plain, a->native, NULL);
        else
            npk_rk_weight_unpack(&a->ws, a->order, a->native, a->plain, NULL);
    } else {
        if (a->pack)
            npk_rk_feature_pack(&a->fs, a->order, a->plain, a->native, NULL);
        else
            npk_rk_feature_unpack(&a->fs, a->order, a->native, a->plain, NULL);
    }
}

static void run_layout(npk_bench *b, const char *name, struct lay_arg *a, size_t bytes, double goal)
{
    a->plain = malloc(bytes);
    a->native = malloc(bytes + 64);
    memset(a->plain, 0x3C, bytes);
    memset(a->native, 0x3C, bytes + 64);
    npk_bench_report_bytes(b, name, bytes, npk_bench_time(b, lay, a), goal);
    free(a->plain);
    free(a->native);
}

void bench_rknpu(npk_bench *b)
{
    struct gen_arg *g = calloc(1, sizeof *g);
    uint64_t rng = 1;
    for (int i = 0; i < GEN_BATCH; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        npk_rk_dtype dt = (npk_rk_dtype)((rng >> 33) % 3);
        uint32_t m = 4 * (1 + (uint32_t)(rng >> 40) % 64),
                 k = 32 * (1 + (uint32_t)(rng >> 20) % 32);
        uint32_t n = 32 * (1 + (uint32_t)(rng >> 50) % 64);
        g->shapes[i] = (npk_rk_matmul){m, k, n, dt, 0x10000000, 0x20000000, 0x30000000};
    }
    npk_bench_note(b,
                   "rknpu: 1024 different valid shapes (all dtypes), 108 entries each; one core");
    npk_bench_report_rate(b, "rknpu: single-task matmul streams", GEN_BATCH, "streams/s",
                          npk_bench_time(b, gen, g), NULL, 0, 1e6);
    npk_bench_report_rate(b, "rknpu: stream entry decode", GEN_BATCH / 16 * NPK_RK_MATMUL_ENTRIES,
                          "entries/s", npk_bench_time(b, decode, g), NULL, 0, 0);
    free(g);

    npk_bench_note(b, "rknpu layouts: 64 MiB plain buffers (twice the L3 here); bytes = the plain "
                      "buffer (the native one is the same size)");
    const size_t MiB64 = (size_t)64 << 20;
    struct lay_arg a;
    memset(&a, 0, sizeof a);
    a.order = NPK_RK_NHWC;
    a.pack = true;
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096 / 2, 1, 8, 2};
    run_layout(b, "rknpu: feature pack fp16 MxK -> NC1HWC2 (C2=8)", &a, MiB64, 0.5);
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096, 1, 16, 1};
    run_layout(b, "rknpu: feature pack int8 MxK -> NC1HWC2 (C2=16)", &a, MiB64, 0.5);
    a.pack = false;
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096 / 4, 1, 4, 4};
    run_layout(b, "rknpu: feature unpack fp32 NC1HWC2 (C2=4) -> MxN", &a, MiB64, 0.5);
    a.fs = (npk_rk_feature_shape){1, 4096, MiB64 / 4096 / 2, 1, 8, 2};
    run_layout(b, "rknpu: feature unpack fp16 NC1HWC2 (C2=8) -> MxN", &a, MiB64, 0.5);
    a.fs = (npk_rk_feature_shape){1, 64, 1024, MiB64 / 64 / 1024 / 2, 8, 2};
    a.order = NPK_RK_NCHW;
    a.pack = true;
    run_layout(b, "rknpu: feature pack fp16 NCHW 64x1024x512 -> NC1HWC2", &a, MiB64, 0.5);
    a.pack = false;
    run_layout(b, "rknpu: feature unpack fp16 NC1HWC2 -> NCHW 64x1024x512", &a, MiB64, 0.5);

    a.weight = true;
    a.pack = true;
    a.ws = (npk_rk_weight_shape){4096, MiB64 / 4096 / 2, 16, 2};
    a.order = NPK_RK_KN;
    run_layout(b, "rknpu: weight pack fp16 B[KxN] -> [N/16][K/32][16][32]", &a, MiB64, 0.5);
    a.order = NPK_RK_NK;
    run_layout(b, "rknpu: weight pack fp16 W[NxK] -> [N/16][K/32][16][32]", &a, MiB64, 0.5);
    a.order = NPK_RK_KN;
    a.pack = false;
    run_layout(b, "rknpu: weight unpack fp16 -> B[KxN]", &a, MiB64, 0.5);
    a.pack = true;
    a.ws = (npk_rk_weight_shape){8192, MiB64 / 8192, 32, 1};
    run_layout(b, "rknpu: weight pack int8 B[KxN] -> [N/32][K/32][32][32]", &a, MiB64, 0.5);
    a.pack = false;
    run_layout(b, "rknpu: weight unpack int8 -> B[KxN]", &a, MiB64, 0.5);
}
