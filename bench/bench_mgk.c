/* MGK NMHWSOIB2 weight codec: decode to OIHW int8 and encode back, in bytes
 * of encoded weights per second, against memcpy of the same bytes. Goal:
 * >= 1 GB/s for 8-bit weights on one core. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "npukit/mgk.h"

struct mgk_arg {
    npk_mgk_wshape s;
    uint8_t *block;
    int8_t *oihw;
    size_t block_bytes;
};

static void dec(void *p)
{
    struct mgk_arg *a = p;
    npk_mgk_nmhw_decode(&a->s, a->block, a->block_bytes, a->oihw, NULL);
}

static void enc(void *p)
{
    struct mgk_arg *a = p;
    npk_mgk_nmhw_encode(&a->s, a->oihw, a->block, a->block_bytes, NULL);
}

static void run(npk_bench *b, const char *what, npk_mgk_wshape s, bool goal)
{
    struct mgk_arg a = {s, NULL, NULL, 0};
    size_t count;
    if (npk_mgk_wshape_check(&s, &a.block_bytes, &count, NULL)) return;
    a.block = malloc(a.block_bytes);
    a.oihw = malloc(count);
    if (!a.block || !a.oihw) goto out;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < a.block_bytes; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a.block[i] = (uint8_t)x;
    }
    dec(&a); /* valid values for the encoder */
    char name[96];
    double g = 0;
    if (goal) {
        /* The goal is absolute (1 GB/s); expressed as a memcpy ratio of this run. */
        g = npk_bench_memcpy_time(b, a.block_bytes) * 1e9 / (double)a.block_bytes;
    }
    snprintf(name, sizeof name, "mgk: %s decode", what);
    npk_bench_report_bytes(b, name, a.block_bytes, npk_bench_time(b, dec, &a), g);
    snprintf(name, sizeof name, "mgk: %s encode", what);
    npk_bench_report_bytes(b, name, a.block_bytes, npk_bench_time(b, enc, &a), g);
out:
    free(a.block);
    free(a.oihw);
}

void bench_mgk(npk_bench *b)
{
    npk_bench_note(b,
                   "codec path: %s; bytes = encoded NMHWSOIB2 weight bytes (1 per 8-bit "
                   "weight); goal for 8-bit: >= 1 GB/s, shown as the equivalent memcpy ratio "
                   "of this run",
                   npk_mgk_codec_path());
    run(b, "8-bit 1x1 1024x1024", (npk_mgk_wshape){32, 32, 1, 1, 8, 1024, 1024, 0}, true);
    run(b, "8-bit 3x3 352x352", (npk_mgk_wshape){11, 11, 3, 3, 8, 352, 352, 0}, true);
    run(b, "8-bit 1x5 1000x250", (npk_mgk_wshape){32, 8, 1, 5, 8, 1000, 250, 0}, true);
    run(b, "8-bit 1x5 1024x256", (npk_mgk_wshape){32, 8, 1, 5, 8, 1024, 256, 0}, true);
    run(b, "8-bit 1x3 1024x256", (npk_mgk_wshape){32, 8, 1, 3, 8, 1024, 256, 0}, true);
    run(b, "4-bit 1x1 1024x1024", (npk_mgk_wshape){32, 32, 1, 1, 4, 1024, 1024, 0}, false);
    run(b, "6-bit 3x3 352x352", (npk_mgk_wshape){11, 11, 3, 3, 6, 352, 352, 0}, false);
    run(b, "2-bit 1x1 1024x1024", (npk_mgk_wshape){32, 32, 1, 1, 2, 1024, 1024, 0}, false);
    npk_mgk_codec_force_portable(1); /* the path of MIPS and Arm builds */
    run(b, "portable 8-bit 1x1 1024x1024", (npk_mgk_wshape){32, 32, 1, 1, 8, 1024, 1024, 0}, false);
    run(b, "portable 8-bit 3x3 352x352", (npk_mgk_wshape){11, 11, 3, 3, 8, 352, 352, 0}, false);
    npk_mgk_codec_force_portable(0);
}
