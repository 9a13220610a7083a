/* Row-major weights B[K][N] <-> the packed layout [N/G][K/32][G][32]: a
 * blocked transpose.
 *
 * The unit of work is a tile: one K block (32 rows of B) by 64 bytes of its
 * columns (one cache line of every row) when unpacking, 128 when packing.
 * Each 16-byte column strip of a tile (8 fp16 or 16 int8 kernels) is 512
 * contiguous packed bytes, the strip's kernels x 32 channels. Tiles go along
 * the rows of a K block, so B is read or written in 32 sequential streams,
 * and the packed side in runs of 512 bytes or more; the few pages touched at
 * a time stay in the TLB.
 *
 * What made the difference on large buffers (measured with
 * bench/bench_rknpu.c; docs/benchmarks.md has the figures): streaming stores
 * (x86) that always complete a whole cache line before moving on (partly
 * written lines cost more than the stores save), tiles aligned to the cache
 * lines of B, prefetching 128 bytes of B ahead, and, when packing, copying
 * the tile's rows to a local buffer first: rows N*es bytes apart fall into
 * the same L1 set, so the strips re-reading them would miss. AVX2 does two
 * transposes per instruction; it matters in cache and for int8, while large
 * fp16 conversions run about as fast on the 128-bit path. Bands of several
 * K blocks and tiles of 256 bytes or more were slower. */
#include <string.h>

#include "core/cpu.h"
#include "layout_internal.h"
#include "layout_simd.h"

#define KB NPK_RK_WEIGHT_KBLOCK

/* Kernels for one element size. A strip is 32 rows of 16 bytes on the plain
 * side (x, row stride xs) and 512 contiguous bytes on the packed side (y). */
typedef struct kn_kernels {
    void (*pack)(const uint8_t *x, size_t xs, uint8_t *y, bool nt);
    void (*unpack)(const uint8_t *y, uint8_t *x, size_t xs);
    /* A whole tile from its four strips, writing whole lines of B; if NULL,
     * strips go through a local tile. */
    void (*unpack_tile)(uint8_t *const y[4], uint8_t *x, size_t xs, bool nt);
} kn_kernels;

/* ---- portable ---- */

#define STRIP_PORTABLE(T, SUF)                                                                     \
    static void pack_##SUF(const uint8_t *x, size_t xs, uint8_t *y, bool nt)                       \
    {                                                                                              \
        (void)nt;                                                                                  \
        T t[16 / sizeof(T)][KB], row[16 / sizeof(T)];                                              \
        for (size_t k = 0; k < KB; k++) {                                                          \
            memcpy(row, x + k * xs, 16);                                                           \
            for (size_t n = 0; n < 16 / sizeof(T); n++) t[n][k] = row[n];                          \
        }                                                                                          \
        memcpy(y, t, sizeof t);                                                                    \
    }                                                                                              \
    static void unpack_##SUF(const uint8_t *y, uint8_t *x, size_t xs)                              \
    {                                                                                              \
        T t[16 / sizeof(T)][KB], row[16 / sizeof(T)];                                              \
        memcpy(t, y, sizeof t);                                                                    \
        for (size_t k = 0; k < KB; k++) {                                                          \
            for (size_t n = 0; n < 16 / sizeof(T); n++) row[n] = t[n][k];                          \
            memcpy(x + k * xs, row, 16);                                                           \
        }                                                                                          \
    }
STRIP_PORTABLE(uint16_t, u16)
STRIP_PORTABLE(uint8_t, u8)
static const kn_kernels portable[2] = {{pack_u8, unpack_u8, NULL}, {pack_u16, unpack_u16, NULL}};

/* ---- 128-bit vectors (SSE2, NEON): 8 x 8 and 16 x 16 register transposes ---- */

#ifdef LAYOUT_V128
/* fp16: four 8 x 8 transposes, one per 8 channels; packed line n is the
 * n-th result of each. */
static void pack_u16_v128(const uint8_t *x, size_t xs, uint8_t *y, bool nt)
{
    v128 v[4][8];
#pragma GCC unroll 16
    for (int q = 0; q < 4; q++) {
#pragma GCC unroll 16
        for (int i = 0; i < 8; i++) v[q][i] = ld16(x + (8 * q + i) * xs);
        tr8x8_u16(v[q]);
    }
#pragma GCC unroll 16
    for (int n = 0; n < 8; n++)
#pragma GCC unroll 16
        for (int q = 0; q < 4; q++) st16(y + n * 64 + q * 16, v[q][n], nt);
}
static void unpack_u16_v128(const uint8_t *y, uint8_t *x, size_t xs)
{
#pragma GCC unroll 16
    for (int q = 0; q < 4; q++) {
        v128 v[8];
#pragma GCC unroll 16
        for (int n = 0; n < 8; n++) v[n] = ld16(y + n * 64 + q * 16);
        tr8x8_u16(v);
#pragma GCC unroll 16
        for (int i = 0; i < 8; i++) st16(x + (8 * q + i) * xs, v[i], false);
    }
}
/* int8: two 16 x 16 transposes, one per 16 channels. */
static void pack_u8_v128(const uint8_t *x, size_t xs, uint8_t *y, bool nt)
{
    v128 v[2][16];
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) v[h][i] = ld16(x + (16 * h + i) * xs);
        tr16x16_u8(v[h]);
    }
#pragma GCC unroll 16
    for (int n = 0; n < 16; n++)
#pragma GCC unroll 16
        for (int h = 0; h < 2; h++) st16(y + n * 32 + h * 16, v[h][n], nt);
}
static void unpack_u8_v128(const uint8_t *y, uint8_t *x, size_t xs)
{
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        v128 v[16];
#pragma GCC unroll 16
        for (int n = 0; n < 16; n++) v[n] = ld16(y + n * 32 + h * 16);
        tr16x16_u8(v);
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) st16(x + (16 * h + i) * xs, v[i], false);
    }
}
static const kn_kernels v128k[2] = {{pack_u8_v128, unpack_u8_v128, NULL},
                                    {pack_u16_v128, unpack_u16_v128, NULL}};
#endif

/* ---- AVX2: the same transposes in both 128-bit lanes at once ---- */

#ifdef LAYOUT_AVX2
/* fp16 pack: plain rows k and k + 8 share a register, so the lane transposes
 * give 16 consecutive channels of a kernel, half a packed line. */
AVX2_FN static void pack_u16_avx2(const uint8_t *x, size_t xs, uint8_t *y, bool nt)
{
    __m256i v[2][8];
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
#pragma GCC unroll 16
        for (int i = 0; i < 8; i++)
            v[h][i] = ld_pair(x + (16 * h + i) * xs, x + (16 * h + i + 8) * xs);
        tr8x8_u16_lanes(v[h]);
    }
#pragma GCC unroll 16
    for (int n = 0; n < 8; n++)
#pragma GCC unroll 16
        for (int h = 0; h < 2; h++) st32(y + n * 64 + h * 32, v[h][n], nt);
}
AVX2_FN static void unpack_u16_avx2(const uint8_t *y, uint8_t *x, size_t xs)
{
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) {
        __m256i v[8];
#pragma GCC unroll 16
        for (int n = 0; n < 8; n++) v[n] = ld32(y + n * 64 + h * 32);
        tr8x8_u16_lanes(v);
#pragma GCC unroll 16
        for (int i = 0; i < 8; i++) st_pair(x + (16 * h + i) * xs, x + (16 * h + i + 8) * xs, v[i]);
    }
}
/* int8 pack: rows k and k + 16 share a register; each result is a packed row. */
AVX2_FN static void pack_u8_avx2(const uint8_t *x, size_t xs, uint8_t *y, bool nt)
{
    __m256i v[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) v[i] = ld_pair(x + i * xs, x + (i + 16) * xs);
    tr16x16_u8_lanes(v);
#pragma GCC unroll 16
    for (int n = 0; n < 16; n++) st32(y + n * 32, v[n], nt);
}
AVX2_FN static void unpack_u8_avx2(const uint8_t *y, uint8_t *x, size_t xs)
{
    __m256i v[16];
#pragma GCC unroll 16
    for (int n = 0; n < 16; n++) v[n] = ld32(y + n * 32);
    tr16x16_u8_lanes(v);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) st_pair(x + i * xs, x + (i + 16) * xs, v[i]);
}

/* Unpacking a tile: strips j and j + 1 share registers, so each result is
 * 32 bytes of a plain row, and every line of B gets its two halves from two
 * consecutive stores. */
AVX2_FN static void unpack_tile_u16_avx2(uint8_t *const y[4], uint8_t *x, size_t xs, bool nt)
{
#pragma GCC unroll 16
    for (int q = 0; q < 4; q++) { /* channels 8q .. 8q + 7 */
        __m256i a[8], b[8];
#pragma GCC unroll 16
        for (int n = 0; n < 8; n++) {
            a[n] = ld_pair(y[0] + n * 64 + q * 16, y[1] + n * 64 + q * 16);
            b[n] = ld_pair(y[2] + n * 64 + q * 16, y[3] + n * 64 + q * 16);
        }
        tr8x8_u16_lanes(a);
        tr8x8_u16_lanes(b);
#pragma GCC unroll 16
        for (int i = 0; i < 8; i++) {
            st32(x + (8 * q + i) * xs, a[i], nt);
            st32(x + (8 * q + i) * xs + 32, b[i], nt);
        }
    }
}
AVX2_FN static void unpack_tile_u8_avx2(uint8_t *const y[4], uint8_t *x, size_t xs, bool nt)
{
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) { /* channels 16h .. 16h + 15 */
        __m256i a[16], b[16];
#pragma GCC unroll 16
        for (int n = 0; n < 16; n++) {
            a[n] = ld_pair(y[0] + n * 32 + h * 16, y[1] + n * 32 + h * 16);
            b[n] = ld_pair(y[2] + n * 32 + h * 16, y[3] + n * 32 + h * 16);
        }
        tr16x16_u8_lanes(a);
        tr16x16_u8_lanes(b);
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) {
            st32(x + (16 * h + i) * xs, a[i], nt);
            st32(x + (16 * h + i) * xs + 32, b[i], nt);
        }
    }
}
static const kn_kernels avx2[2] = {{pack_u8_avx2, unpack_u8_avx2, unpack_tile_u8_avx2},
                                   {pack_u16_avx2, unpack_u16_avx2, unpack_tile_u16_avx2}};

static bool have_avx2(void)
{
    return npk_cpu_has(NPK_CPU_AVX2);
}
#endif

/* Selection: AVX2 when the CPU has it, else SSE2 (x86-64 baseline) or NEON, else
 * portable C; npk_rk_layout_force caps it for tests and benchmarks. */
static int cap;

void npk_rk_layout_force(int level)
{
    cap = level;
}

bool rk_layout_vectors(void)
{
    return cap <= 1;
}

static const kn_kernels *kernels(size_t es)
{
#ifdef LAYOUT_AVX2
    if (cap == 0 && have_avx2()) return &avx2[es == 2];
#endif
#ifdef LAYOUT_V128
    if (cap <= 1) return &v128k[es == 2];
#endif
    return &portable[es == 2];
}

const char *npk_rk_layout_path(void)
{
    const kn_kernels *k = kernels(2);
#ifdef LAYOUT_AVX2
    if (k == &avx2[1]) return "avx2";
#endif
#ifdef LAYOUT_V128
    if (k == &v128k[1]) return LAYOUT_V128_NAME;
#endif
    (void)k;
    return "portable";
}

/* ---- the traversal ---- */

/* 32 rows of w bytes (a multiple of 16) from s to d. */
static void copy_rows(uint8_t *d, size_t ds, const uint8_t *s, size_t ss, size_t w, bool nt)
{
#ifdef LAYOUT_V128
    for (size_t r = 0; r < KB; r++)
        for (size_t i = 0; i < w; i += 16) st16(d + r * ds + i, ld16(s + r * ss + i), nt);
#else
    (void)nt;
    for (size_t r = 0; r < KB; r++) memcpy(d + r * ds, s + r * ss, w);
#endif
}

/* Where a K block's strips live: strip j (16 bytes of B's columns) holds
 * kernels j * 16 / es onwards, inside their group's run of blocks. */
typedef struct kn_blocks {
    uint8_t *base; /* this K block's first block */
    size_t es, g, group_bytes;
} kn_blocks;

static inline uint8_t *strip_at(const kn_blocks *b, size_t j)
{
    size_t n = j * 16 / b->es;
    return b->base + n / b->g * b->group_bytes + n % b->g * KB * b->es;
}

void rk_weight_kn_convert(const npk_rk_weight_shape *s, uint8_t *plain, uint8_t *packed, bool pack)
{
    const kn_kernels *k = kernels(s->esize);
    size_t es = s->esize, ld = s->n * es, strips = ld / 16;
    kn_blocks blk = {packed, es, s->group, s->k * s->group * es};
    /* The first tile is narrower when that puts the others on lines of B. */
    bool lines = (uintptr_t)plain % 16 == 0 && ld % 64 == 0;
    size_t head = lines ? (64 - (uintptr_t)plain % 64) % 64 / 16 : 0;
    /* Streaming stores for buffers past the caches, when every store can be
     * aligned and (unpacking) whole lines of B are written at once. */
    bool nt = s->k * ld >= RK_LAYOUT_STREAMED && (pack ? (uintptr_t)packed % 16 == 0 : lines);
#ifndef LAYOUT_V128
    nt = false;
#endif
    /* Tiles: 128 bytes of every row when packing, 64 when unpacking. */
    size_t tw = pack ? 8 : 4;
    _Alignas(64) uint8_t tile[KB * 128];
    for (size_t kb = 0; kb < s->k / KB; kb++) {
        uint8_t *rows = plain + kb * KB * ld;
        blk.base = packed + kb * s->group * KB * es;
        size_t w;
        for (size_t s0 = 0; s0 < strips; s0 += w) {
            w = s0 == 0 && head ? head : strips - s0 < tw ? strips - s0 : tw;
            uint8_t *x = rows + s0 * 16, *y[8];
            for (size_t j = 0; j < w; j++) y[j] = strip_at(&blk, s0 + j);
            /* Fetch what comes 128 bytes of B further on: packing, both
             * lines of each row together (one DRAM page visit), to L2 only
             * (the 32 rows share one L1 set); unpacking, the packed strips.
             * (In line: GCC removed a helper that did nothing but prefetch.) */
            size_t p = s0 + 8;
            if (pack)
                for (size_t r = 0; r < KB; r++)
                    for (size_t i = p; i < p + 8 && i < strips; i += 4)
                        __builtin_prefetch(rows + r * ld + i * 16, 0, 2);
            else
                for (size_t j = p; j < p + 4 && j < strips; j++)
                    for (size_t i = 0; i < 512; i += 64) __builtin_prefetch(strip_at(&blk, j) + i);
            if (pack && nt) {
                copy_rows(tile, 128, x, ld, w * 16, false);
                for (size_t j = 0; j < w; j++) k->pack(tile + j * 16, 128, y[j], true);
            } else if (pack) {
                for (size_t j = 0; j < w; j++) k->pack(x + j * 16, ld, y[j], false);
            } else if (w == 4 && k->unpack_tile) {
                k->unpack_tile(y, x, ld, nt);
            } else if (nt && w == 4) {
                for (size_t j = 0; j < w; j++) k->unpack(y[j], tile + j * 16, 64);
                copy_rows(x, ld, tile, 64, w * 16, true);
            } else {
                for (size_t j = 0; j < w; j++) k->unpack(y[j], x + j * 16, ld);
            }
        }
    }
#ifdef LAYOUT_V128
    if (nt) stream_fence();
#endif
}
