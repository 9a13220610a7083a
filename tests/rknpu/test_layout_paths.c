/* The transposing layout conversions (row-major B[K][N] <-> packed weights,
 * NCHW <-> NC1HWC2) on every code path (AVX2, SSE2, portable), against a
 * reference written from the index formulas one element at a time: many
 * shapes (the smallest allowed, non-square, every strip count up to a few
 * tiles), buffers at every 16-byte alignment and unaligned, both directions,
 * and shapes large enough to take the streaming-store paths. Guard bytes
 * around every buffer must survive. */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/rknpu_layout.h"

#define GUARD 64

/* Element n of a buffer of es-byte elements. */
static uint32_t get(const uint8_t *p, size_t es, size_t i)
{
    uint32_t v = 0;
    memcpy(&v, p + i * es, es); /* same bytes both sides: byte order does not matter */
    return v;
}

/* Packed position of B[k][n]: [N/G][K/32][G][32]. */
static size_t weight_ref_index(size_t K, size_t G, size_t k, size_t n)
{
    return (n / G) * (K / 32) * G * 32 + (k / 32) * G * 32 + (n % G) * 32 + k % 32;
}

/* A buffer of `bytes` at offset `off` from a 64-byte boundary, with guard
 * bytes of 0xEE before and after. */
typedef struct gbuf {
    uint8_t *base, *p;
    size_t bytes, off;
} gbuf;

static gbuf gbuf_new(size_t bytes, size_t off)
{
    gbuf g = {NULL, NULL, bytes, off};
    g.base = aligned_alloc(64, (bytes + 2 * GUARD + 64 + 63) / 64 * 64);
    assert_non_null(g.base);
    memset(g.base, 0xEE, bytes + 2 * GUARD + 64);
    g.p = g.base + GUARD + off;
    return g;
}

static void gbuf_check_free(gbuf *g)
{
    for (size_t i = 0; i < GUARD + g->off; i++) assert_int_equal(g->base[i], 0xEE);
    for (size_t i = 0; i < GUARD; i++) assert_int_equal(g->p[g->bytes + i], 0xEE);
    free(g->base);
}

/* Force a path and check it is the one expected on this build and CPU. */
static void use_path(int level)
{
    npk_rk_layout_force(level);
    const char *p = npk_rk_layout_path();
#if defined(__x86_64__) && defined(__SSE2__)
    const char *v128 = "sse2";
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char *v128 = "neon";
#else
    const char *v128 = "portable";
#endif
    if (level == 2) assert_string_equal(p, "portable");
    if (level == 1) assert_string_equal(p, v128);
    if (level == 0 && strcmp(p, "avx2") != 0) assert_string_equal(p, v128);
}

/* One shape, one pair of alignments, on the current path: pack B and check
 * every packed element, then unpack the reference layout and check B. */
static void weight_case(size_t K, size_t N, size_t G, size_t es, size_t poff, size_t qoff,
                        uint64_t *rng)
{
    size_t bytes = K * N * es, count = K * N;
    gbuf b = gbuf_new(bytes, poff), q = gbuf_new(bytes, qoff), r = gbuf_new(bytes, 0);
    for (size_t i = 0; i < bytes; i++) b.p[i] = (uint8_t)npk_rand(rng);
    /* the reference packed buffer, one element at a time */
    for (size_t k = 0; k < K; k++)
        for (size_t n = 0; n < N; n++)
            memcpy(r.p + weight_ref_index(K, G, k, n) * es, b.p + (k * N + n) * es, es);
    npk_rk_weight_shape sh = {K, N, G, es};
    npk_error err = {0};
    memset(q.p, 0xA5, bytes);
    assert_int_equal(npk_rk_weight_pack(&sh, NPK_RK_KN, b.p, q.p, &err), NPK_OK);
    if (memcmp(q.p, r.p, bytes) != 0) {
        for (size_t i = 0; i < count; i++)
            if (get(q.p, es, i) != get(r.p, es, i))
                fail_msg("pack K=%zu N=%zu G=%zu es=%zu offsets %zu/%zu (%s): element %zu", K, N, G,
                         es, poff, qoff, npk_rk_layout_path(), i);
    }
    /* unpack from the reference into a fresh B at the same alignment */
    gbuf u = gbuf_new(bytes, poff);
    memset(u.p, 0x5A, bytes);
    assert_int_equal(npk_rk_weight_unpack(&sh, NPK_RK_KN, r.p, u.p, &err), NPK_OK);
    if (memcmp(u.p, b.p, bytes) != 0) {
        for (size_t i = 0; i < count; i++)
            if (get(u.p, es, i) != get(b.p, es, i))
                fail_msg("unpack K=%zu N=%zu G=%zu es=%zu offsets %zu/%zu (%s): B[%zu][%zu]", K, N,
                         G, es, poff, qoff, npk_rk_layout_path(), i / N, i % N);
    }
    gbuf_check_free(&b);
    gbuf_check_free(&q);
    gbuf_check_free(&r);
    gbuf_check_free(&u);
}

static void test_weights_kn_all_paths(void **state)
{
    (void)state;
    static const size_t ks[] = {32, 64, 96, 160, 256};
    /* N in groups: 1..9 and 17 groups cover 1..34 strips of 16 bytes (every
     * tile width, head and tail) for both element sizes and group sizes */
    static const size_t gs[] = {1, 2, 3, 4, 5, 7, 9, 17};
    static const size_t offs[][2] = {{0, 0}, {16, 48}, {32, 16}, {48, 32}, {1, 2}, {2, 7}};
    bool light = npk_test_light();
    uint64_t rng = 11;
    size_t cases = 0;
    for (int level = 0; level <= 2; level++) {
        use_path(level);
        for (size_t es = 1; es <= 2; es++)
            for (size_t G = 16; G <= 32; G += 16)
                for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                    for (size_t gi = 0; gi < sizeof gs / sizeof gs[0]; gi++)
                        for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++) {
                            if (light && (ki + gi + oi + es) % 5 != 0) continue;
                            weight_case(ks[ki], gs[gi] * G, G, es, offs[oi][0], offs[oi][1], &rng);
                            cases++;
                        }
    }
    npk_rk_layout_force(0);
    assert_true(cases >= (light ? 100 : 1400));
}

/* Buffers of 8 MiB and more take the streaming-store paths (x86). */
static void test_weights_kn_large(void **state)
{
    (void)state;
    uint64_t rng = 12;
    bool light = npk_test_light();
    for (int level = 0; level <= 1; level++) {
        use_path(level);
        weight_case(2048, 2048 + 16, 16, 2, 16, 16, &rng); /* row stride not a line multiple */
        if (light) continue;
        weight_case(2048, 2048, 16, 2, 16, 0, &rng);
        weight_case(1024, 4096, 32, 2, 0, 48, &rng);
        weight_case(4096, 2048, 32, 1, 48, 16, &rng);
        weight_case(2048, 4096, 16, 1, 32, 32, &rng);
    }
    npk_rk_layout_force(0);
}

/* NCHW <-> NC1HWC2 against npk_rk_feature_index's formula, element by element. */
static void feature_case(size_t C, size_t H, size_t W, size_t C2, size_t es, size_t off,
                         uint64_t *rng)
{
    size_t hw = H * W, c1 = (C + C2 - 1) / C2;
    size_t pbytes = C * hw * es, nbytes = c1 * hw * C2 * es;
    gbuf a = gbuf_new(pbytes, off), nat = gbuf_new(nbytes, (off * 3) % 64),
         u = gbuf_new(pbytes, off);
    for (size_t i = 0; i < pbytes; i++) a.p[i] = (uint8_t)npk_rand(rng);
    npk_rk_feature_shape sh = {1, C, H, W, C2, es};
    npk_error err = {0};
    memset(nat.p, 0xA5, nbytes);
    assert_int_equal(npk_rk_feature_pack(&sh, NPK_RK_NCHW, a.p, nat.p, &err), NPK_OK);
    for (size_t c = 0; c < c1 * C2; c++)
        for (size_t p = 0; p < hw; p++) {
            size_t i = (c / C2) * hw * C2 + p * C2 + c % C2;
            uint32_t want = c < C ? get(a.p, es, c * hw + p) : 0;
            if (get(nat.p, es, i) != want)
                fail_msg("feature pack C=%zu H=%zu W=%zu C2=%zu es=%zu off %zu (%s): c %zu p %zu",
                         C, H, W, C2, es, off, npk_rk_layout_path(), c, p);
        }
    memset(u.p, 0x5A, pbytes);
    assert_int_equal(npk_rk_feature_unpack(&sh, NPK_RK_NCHW, nat.p, u.p, &err), NPK_OK);
    if (memcmp(u.p, a.p, pbytes) != 0)
        fail_msg("feature unpack C=%zu H=%zu W=%zu C2=%zu es=%zu off %zu (%s)", C, H, W, C2, es,
                 off, npk_rk_layout_path());
    gbuf_check_free(&a);
    gbuf_check_free(&nat);
    gbuf_check_free(&u);
}

static void test_features_nchw_all_paths(void **state)
{
    (void)state;
    uint64_t rng = 13;
    bool light = npk_test_light();
    for (int level = 0; level <= 2; level++) {
        use_path(level);
        for (size_t es = 1; es <= 2; es++) {
            size_t c2 = 16 / es; /* the 16-byte atoms take the register transposes */
            feature_case(c2, 1, 1, c2, es, 0, &rng);
            feature_case(2 * c2 + 3, 7, 13, c2, es, 16, &rng);
            feature_case(c2, 16, 64, c2, es, 48, &rng);
            feature_case(3 * c2, 9, 67, c2, es, 5, &rng);
            /* 8 MiB of planes: the streaming unpack, a head before the first
             * line boundary and a tail of single pixels */
            if (!light || level == 0)
                feature_case(2 * c2, 1, (8 << 20) / (2 * c2 * es) + 37, c2, es, 16, &rng);
            if (!light) feature_case(c2, 1024, 1024 / es, c2, es, 0, &rng);
        }
    }
    npk_rk_layout_force(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_kn_all_paths),
        cmocka_unit_test(test_weights_kn_large),
        cmocka_unit_test(test_features_nchw_all_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
