/* The vector 8-bit kernels (AVX2, SSE2 or NEON: src/tflite/qkern_*.c)
 * against the portable definition (qkern_ref.c), byte for byte: gemm and
 * depthwise rows on random shapes (odd k, partial panels and tiles, strides
 * between rows), zero points, biases over the whole int32 range (sums that
 * wrap), per-channel multipliers and shifts, activation ranges, uint8 and
 * int8; the requantisation alone on edge values; depthwise windows with
 * padding, strides, dilations, channel tails and depth multipliers (the
 * portable fallback). Every path compiled in and supported by the CPU runs.
 * Guard bytes around every output must survive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "npk_test.h"
#include "npukit/file.h"
#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"
#include "tflite/qkern.h"

#define GUARD 32

static int32_t rnd(uint64_t *s, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(npk_rand(s) % (uint64_t)((int64_t)hi - lo + 1));
}

/* The vector kernels this machine can run. */
static size_t paths(const npk_tfl_qkern **k)
{
    size_t n = 0;
    if (npk_tfl_qkern_v128) k[n++] = npk_tfl_qkern_v128;
    if (npk_tfl_qkern_avx2 && npk_cpu_has(NPK_CPU_AVX2)) k[n++] = npk_tfl_qkern_avx2;
    return n;
}

/* The best path is what the interpreter picks; force() caps it. */
static void test_dispatch(void **state)
{
    (void)state;
    const npk_tfl_qkern *k[2];
    size_t n = paths(k);
    npk_tfl_qkern_force(2);
    assert_ptr_equal(npk_tfl_qkern_get(), &npk_tfl_qkern_portable);
    npk_tfl_qkern_force(1);
    assert_ptr_equal(npk_tfl_qkern_get(),
                     npk_tfl_qkern_v128 ? npk_tfl_qkern_v128 : &npk_tfl_qkern_portable);
    npk_tfl_qkern_force(0);
    assert_ptr_equal(npk_tfl_qkern_get(), n ? k[n - 1] : &npk_tfl_qkern_portable);
#if defined(__x86_64__)
    assert_non_null(npk_tfl_qkern_v128); /* SSE2 is the x86-64 baseline */
    assert_string_equal(npk_tfl_qkern_v128->name, "sse2");
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    assert_non_null(npk_tfl_qkern_v128);
    assert_string_equal(npk_tfl_qkern_v128->name, "neon");
#endif
    printf("kernels: %s (best of %zu vector paths)\n", npk_tfl_qkern_get()->name, n);
}

/* ---- gemm ---- */

typedef struct gcase {
    size_t m, n, k, lda, ldb, ldc;
    bool sgn;
    uint8_t *a, *b;
    int32_t *bias, *mult, *shift;
    int32_t b_zero, out_zero, act_min, act_max;
} gcase;

/* Runs kernel kern on g, columns in calls of `chunk` (a multiple of the
 * panel width, as FULLY_CONNECTED splits them), into c (ldc stride). */
static void run_gemm(const npk_tfl_qkern *kern, const gcase *t, size_t chunk, uint8_t *c)
{
    uint8_t *packed = NULL;
    void *work = NULL;
    if (kern->packed_b) {
        size_t bytes;
        assert_true(npk_tfl_qpack_bytes(t->n, t->k, &bytes));
        packed = malloc(bytes + 1);
        npk_tfl_qpack_b(t->b, t->n, t->k, t->ldb, t->bias, t->mult, t->shift, packed);
        work = malloc(kern->gemm_work(t->k) + 1);
    }
    for (size_t j0 = 0; j0 < t->n; j0 += chunk) {
        const size_t nj = t->n - j0 < chunk ? t->n - j0 : chunk;
        npk_tfl_qgemm g = {
            t->m,          nj,           t->k,
            t->a,          t->lda,       t->b + j0 * t->ldb,
            t->ldb,        t->bias + j0, t->mult + j0,
            t->shift + j0, t->b_zero,    t->out_zero,
            t->act_min,    t->act_max,   c + j0,
            t->ldc,        t->sgn,       packed ? npk_tfl_qpack_at(packed, j0, t->k) : NULL,
            work};
        kern->gemm(&g);
    }
    free(packed);
    free(work);
}

static void check_gemm(const gcase *t, const char *what)
{
    const npk_tfl_qkern *k[2];
    const size_t np = paths(k), cbytes = (t->m - 1) * t->ldc + t->n + 2 * GUARD;
    uint8_t *want = malloc(cbytes), *got = malloc(cbytes);
    memset(want, 0xA5, cbytes);
    run_gemm(&npk_tfl_qkern_portable, t, t->n, want + GUARD);
    for (size_t p = 0; p < np; p++)
        for (size_t chunk = NPK_TFL_QPANEL; chunk <= t->n + NPK_TFL_QPANEL; chunk *= 4) {
            memset(got, 0xA5, cbytes);
            run_gemm(k[p], t, chunk, got + GUARD);
            if (memcmp(want, got, cbytes)) {
                size_t i = 0;
                while (want[i] == got[i]) i++;
                fail_msg("%s: %s gemm m %zu n %zu k %zu %s b_zero %d: byte %ld (row %zu col "
                         "%zu) is %u, portable %u",
                         what, k[p]->name, t->m, t->n, t->k, t->sgn ? "int8" : "uint8", t->b_zero,
                         (long)i - GUARD, (i - GUARD) / t->ldc, (i - GUARD) % t->ldc, got[i],
                         want[i]);
            }
        }
    free(want);
    free(got);
}

static void gcase_alloc(gcase *t)
{
    t->a = malloc((t->m - 1) * t->lda + t->k);
    t->b = malloc((t->n - 1) * t->ldb + t->k);
    t->bias = malloc(t->n * sizeof(int32_t));
    t->mult = malloc(t->n * sizeof(int32_t));
    t->shift = malloc(t->n * sizeof(int32_t));
}

static void gcase_free(gcase *t)
{
    free(t->a);
    free(t->b);
    free(t->bias);
    free(t->mult);
    free(t->shift);
}

/* A multiplier as QuantizeMultiplier makes them, or an edge value. */
static int32_t rnd_mult(uint64_t *s)
{
    switch (npk_rand(s) % 8) {
    case 0: return 0;
    case 1: return INT32_MAX;
    case 2: return 1 << 30;
    case 3: return rnd(s, 0, INT32_MAX);
    default: return rnd(s, 1 << 30, INT32_MAX);
    }
}

static void test_gemm_random(void **state)
{
    (void)state;
    uint64_t s = 0x9E3779B97F4A7C15u;
    const int cases = npk_test_light() ? 150 : 1500;
    for (int c = 0; c < cases; c++) {
        gcase t;
        t.m = (size_t)rnd(&s, 1, 20);
        t.n = (size_t)rnd(&s, 1, c % 10 ? 70 : 300);
        t.k = (size_t)rnd(&s, 1, c % 7 ? 80 : 1100);
        t.lda = t.k + (size_t)(c % 3 ? 0 : rnd(&s, 1, 17));
        t.ldb = t.k + (size_t)(c % 5 ? 0 : rnd(&s, 1, 9));
        t.ldc = t.n + (size_t)(c % 4 ? 0 : rnd(&s, 1, 13));
        t.sgn = c % 2;
        gcase_alloc(&t);
        for (size_t i = 0; i < (t.m - 1) * t.lda + t.k; i++) t.a[i] = (uint8_t)npk_rand(&s);
        for (size_t i = 0; i < (t.n - 1) * t.ldb + t.k; i++) t.b[i] = (uint8_t)npk_rand(&s);
        /* biases: small (typical) or anything (sums that wrap) */
        const bool wide_bias = c % 3 == 0;
        for (size_t j = 0; j < t.n; j++) {
            t.bias[j] = wide_bias ? (int32_t)(uint32_t)npk_rand(&s) : rnd(&s, -100000, 100000);
            t.mult[j] = rnd_mult(&s);
            t.shift[j] = c % 5 == 1 ? rnd(&s, -31, 30) : rnd(&s, -12, 1);
        }
        const int32_t qmin = t.sgn ? -128 : 0, qmax = t.sgn ? 127 : 255;
        t.b_zero = c % 4 == 0 ? 0 : rnd(&s, qmin, qmax);
        t.out_zero = rnd(&s, qmin, qmax);
        t.act_min = c % 2 ? qmin : rnd(&s, qmin, qmax);
        t.act_max = c % 3 ? qmax : rnd(&s, t.act_min, qmax);
        check_gemm(&t, "random");
        gcase_free(&t);
    }
}

/* gemm_s32 (the raw sums the RKNPU emulator's DPU requantises itself):
 * every kernel, portable included, against sums taken here in 64 bits and
 * wrapped to 32; columns past n (ldc > n) and guard words untouched. Long k
 * with extreme bytes reaches sums past int32 (the wrap). */
static void test_gemm_s32_random(void **state)
{
    (void)state;
    uint64_t s = 0x5851F42D4C957F2Du;
    const npk_tfl_qkern *k[3];
    size_t np = paths(k);
    k[np++] = &npk_tfl_qkern_portable;
    const int cases = npk_test_light() ? 60 : 600;
    for (int c = 0; c < cases; c++) {
        const size_t m = (size_t)rnd(&s, 1, 20), n = (size_t)rnd(&s, 1, c % 8 ? 70 : 200);
        const size_t kk = c % 11 == 0 ? (size_t)rnd(&s, 140000, 150000) : (size_t)rnd(&s, 1, 300);
        const size_t lda = kk + (size_t)(c % 3 ? 0 : rnd(&s, 1, 17)), ldc = n + (c % 4 ? 0 : 5);
        const bool sgn = c % 2, extreme = c % 11 == 0;
        uint8_t *a = malloc((m - 1) * lda + kk), *b = malloc(n * kk);
        for (size_t i = 0; i < (m - 1) * lda + kk; i++)
            a[i] = extreme ? (sgn ? 0x80 : 0xFF) : (uint8_t)npk_rand(&s);
        for (size_t i = 0; i < n * kk; i++)
            b[i] = extreme ? (sgn ? 0x80 : 0xFF) : (uint8_t)npk_rand(&s);
        int32_t *want = malloc(m * ldc * sizeof *want);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < ldc; j++) {
                int64_t sum = 0;
                for (size_t t = 0; j < n && t < kk; t++)
                    sum += sgn ? (int64_t)(int8_t)a[i * lda + t] * (int8_t)b[j * kk + t]
                               : (int64_t)a[i * lda + t] * b[j * kk + t];
                want[i * ldc + j] = j < n ? (int32_t)(uint32_t)(uint64_t)sum : 0x5A5A5A5A;
            }
        const size_t cw = m * ldc + 2 * GUARD;
        int32_t *got = malloc(cw * sizeof *got);
        for (size_t p = 0; p < np; p++) {
            uint8_t *packed = NULL;
            void *work = NULL;
            npk_tfl_qgemm g;
            memset(&g, 0, sizeof g);
            g.m = m, g.n = n, g.k = kk, g.a = a, g.lda = lda, g.b = b, g.ldb = kk;
            g.is_signed = sgn;
            if (k[p]->packed_b) {
                size_t bytes;
                int32_t *zero = calloc(n, sizeof *zero);
                assert_true(npk_tfl_qpack_bytes(n, kk, &bytes));
                packed = malloc(bytes);
                npk_tfl_qpack_b(b, n, kk, kk, zero, zero, zero, packed);
                work = malloc(k[p]->gemm_work(kk) + 1);
                g.bp = packed, g.work = work;
                free(zero);
            }
            for (size_t i = 0; i < cw; i++) got[i] = 0x5A5A5A5A;
            k[p]->gemm_s32(&g, got + GUARD, ldc);
            for (size_t i = 0; i < GUARD; i++) {
                assert_int_equal(got[i], 0x5A5A5A5A);
                assert_int_equal(got[GUARD + m * ldc + i], 0x5A5A5A5A);
            }
            for (size_t i = 0; i < m * ldc; i++)
                if (got[GUARD + i] != want[i])
                    fail_msg("%s gemm_s32 m %zu n %zu k %zu %s: [%zu][%zu] is %d, want %d",
                             k[p]->name, m, n, kk, sgn ? "int8" : "uint8", i / ldc, i % ldc,
                             got[GUARD + i], want[i]);
            free(packed);
            free(work);
        }
        free(got);
        free(want);
        free(a);
        free(b);
    }
}

/* gemm_s32_blocks (A read in 16-byte blocks ks apart, as the RKNPU
 * emulator reads its NC1HWC2 input) against each kernel's own gemm_s32 on
 * the rows gathered, and the row sums against sums taken here; partial last
 * blocks, the NC1HWC2 case (lda 16, ks a plane) and other strides, long k
 * with extreme bytes (the wrap). */
static void test_gemm_s32_blocks(void **state)
{
    (void)state;
    uint64_t s = 0x2545F4914F6CDD1Du;
    const npk_tfl_qkern *k[3];
    size_t np = paths(k);
    k[np++] = &npk_tfl_qkern_portable;
    const int cases = npk_test_light() ? 60 : 400;
    for (int c = 0; c < cases; c++) {
        const size_t m = (size_t)rnd(&s, 1, 30), n = (size_t)rnd(&s, 1, c % 8 ? 70 : 200);
        const bool extreme = c % 13 == 0, sgn = c % 2;
        const size_t kk = extreme
                              ? (size_t)rnd(&s, 140000, 150000) / 16 * 16
                              : (size_t)rnd(&s, 1, 300) + (c % 3 ? 0 : 16 - (size_t)rnd(&s, 1, 16));
        const size_t nb = (kk + 15) / 16;
        /* NC1HWC2 (rows 16 bytes apart, a plane of m rows or more between
         * blocks) or rows lda apart with blocks ks apart */
        const bool planes = c % 4 != 3;
        const size_t lda = planes ? 16 : (size_t)rnd(&s, 1, 40);
        const size_t ks = planes ? 16 * (m + (size_t)rnd(&s, 0, 3)) : 16 + (size_t)rnd(&s, 0, 50);
        const size_t abytes = (m - 1) * lda + (nb - 1) * ks + 16, ldc = n + (c % 4 ? 0 : 3);
        uint8_t *a = malloc(abytes), *rows = malloc(m * kk), *b = malloc(n * kk);
        for (size_t i = 0; i < abytes; i++)
            a[i] = extreme ? (sgn ? 0x80 : 0xFF) : (uint8_t)npk_rand(&s);
        for (size_t i = 0; i < n * kk; i++)
            b[i] = extreme ? (sgn ? 0x80 : 0xFF) : (uint8_t)npk_rand(&s);
        uint32_t want_rs[30];
        for (size_t i = 0; i < m; i++) {
            uint64_t rs = 0;
            for (size_t t = 0; t < kk; t++) {
                rows[i * kk + t] = a[i * lda + t / 16 * ks + t % 16];
                rs += sgn ? (uint64_t)(int64_t)(int8_t)rows[i * kk + t] : rows[i * kk + t];
            }
            want_rs[i] = (uint32_t)rs;
        }
        const size_t cw = m * ldc + 2 * GUARD;
        int32_t *want = malloc(cw * sizeof *want), *got = malloc(cw * sizeof *got);
        for (size_t p = 0; p < np; p++) {
            uint8_t *packed = NULL;
            void *work = NULL;
            npk_tfl_qgemm g;
            memset(&g, 0, sizeof g);
            g.m = m, g.n = n, g.k = kk, g.b = b, g.ldb = kk, g.is_signed = sgn;
            if (k[p]->packed_b) {
                size_t bytes;
                int32_t *zero = calloc(n, sizeof *zero);
                assert_true(npk_tfl_qpack_bytes(n, kk, &bytes));
                packed = malloc(bytes);
                npk_tfl_qpack_b(b, n, kk, kk, zero, zero, zero, packed);
                work = malloc(k[p]->gemm_work(kk) + 1);
                g.bp = packed, g.work = work;
                free(zero);
            }
            for (size_t i = 0; i < cw; i++) want[i] = got[i] = 0x5A5A5A5A;
            g.a = rows, g.lda = kk;
            k[p]->gemm_s32(&g, want + GUARD, ldc);
            uint32_t rs[30 + 2];
            for (size_t i = 0; i < m + 2; i++) rs[i] = 0xA5A5A5A5u;
            g.a = a, g.lda = lda;
            k[p]->gemm_s32_blocks(&g, ks, got + GUARD, ldc, c % 5 ? rs + 1 : NULL);
            if (memcmp(want, got, cw * sizeof *got))
                for (size_t i = 0; i < cw; i++)
                    if (want[i] != got[i])
                        fail_msg("%s gemm_s32_blocks m %zu n %zu k %zu lda %zu ks %zu %s: word %zu "
                                 "is %d, want %d",
                                 k[p]->name, m, n, kk, lda, ks, sgn ? "int8" : "uint8", i, got[i],
                                 want[i]);
            assert_int_equal(rs[0], 0xA5A5A5A5u);
            assert_int_equal(rs[m + 1], 0xA5A5A5A5u);
            for (size_t i = 0; i < m && c % 5; i++)
                if (rs[1 + i] != want_rs[i])
                    fail_msg("%s gemm_s32_blocks k %zu: row %zu sum %u, want %u", k[p]->name, kk, i,
                             rs[1 + i], want_rs[i]);
            free(packed);
            free(work);
        }
        free(got);
        free(want);
        free(a);
        free(rows);
        free(b);
    }
}

/* Requantisation alone: k = 1 and A = 0, so each sum is its bias; every
 * column one combination of an edge accumulator, multiplier and shift. */
static void test_requant_edges(void **state)
{
    (void)state;
    static const int32_t accs[] = {INT32_MIN,  INT32_MIN + 1,
                                   -(1 << 30), -65536,
                                   -32769,     -257,
                                   -129,       -3,
                                   -2,         -1,
                                   0,          1,
                                   2,          3,
                                   127,        128,
                                   255,        32767,
                                   65535,      (1 << 30) - 1,
                                   1 << 30,    INT32_MAX - 1,
                                   INT32_MAX};
    static const int32_t mults[] = {
        0, 1, 3, (1 << 30) - 1, 1 << 30, (1 << 30) + 1, 1518500250, INT32_MAX - 1, INT32_MAX};
    const size_t na = sizeof accs / sizeof accs[0], nm = sizeof mults / sizeof mults[0];
    for (int sgn = 0; sgn < 2; sgn++)
        for (int32_t shift = -31; shift <= 30; shift++) {
            gcase t = {0};
            t.m = 1, t.k = 1, t.n = na * nm, t.lda = 1, t.ldb = 1, t.ldc = t.n, t.sgn = sgn;
            gcase_alloc(&t);
            t.a[0] = 0;
            for (size_t j = 0; j < t.n; j++) {
                t.b[j] = (uint8_t)(j * 37);
                t.bias[j] = accs[j % na];
                t.mult[j] = mults[j / na];
                t.shift[j] = shift;
            }
            t.b_zero = sgn ? -5 : 7;
            t.out_zero = sgn ? -3 : 100;
            t.act_min = sgn ? -128 : 0;
            t.act_max = sgn ? 127 : 255;
            check_gemm(&t, "requantisation edges");
            gcase_free(&t);
        }
}

/* ---- depthwise ---- */

typedef struct dcase {
    npk_tfl_qdw d;
    uint8_t *in;
    int32_t out_h;
} dcase;

static void run_dw(const npk_tfl_qkern *kern, dcase *t, uint8_t *out)
{
    npk_tfl_qdw d = t->d;
    uint8_t *packed = NULL;
    const size_t bytes = kern->dw_pack_bytes ? kern->dw_pack_bytes(&d) : 0;
    if (bytes) {
        packed = malloc(bytes);
        kern->dw_pack(&d, packed);
        d.packed = packed;
    }
    int32_t *acc = malloc((size_t)d.out_c * sizeof *acc);
    const size_t row = (size_t)d.out_w * d.out_c;
    for (int32_t oy = 0; oy < t->out_h; oy++) kern->dw_row(&d, t->in, oy, out + oy * row, acc);
    free(acc);
    free(packed);
}

static void check_dw(dcase *t)
{
    const npk_tfl_qkern *k[2];
    const size_t np = paths(k);
    const size_t bytes = (size_t)t->out_h * t->d.out_w * t->d.out_c + 2 * GUARD;
    uint8_t *want = malloc(bytes), *got = malloc(bytes);
    memset(want, 0x5A, bytes);
    run_dw(&npk_tfl_qkern_portable, t, want + GUARD);
    for (size_t p = 0; p < np; p++) {
        memset(got, 0x5A, bytes);
        run_dw(k[p], t, got + GUARD);
        if (memcmp(want, got, bytes)) {
            size_t i = 0;
            while (want[i] == got[i]) i++;
            const npk_tfl_qdw *d = &t->d;
            fail_msg("%s depthwise in %dx%dx%d dm %d k %dx%d s %d,%d d %d,%d pad %d,%d %s: "
                     "byte %ld is %u, portable %u",
                     k[p]->name, d->in_h, d->in_w, d->in_c, d->dm, d->kh, d->kw, d->sh, d->sw,
                     d->dh, d->dw, d->pad_h, d->pad_w, d->is_signed ? "int8" : "uint8",
                     (long)i - GUARD, got[i], want[i]);
        }
    }
    free(want);
    free(got);
}

static void test_dw_random(void **state)
{
    (void)state;
    uint64_t s = 0xD1B54A32D192ED03u;
    const int cases = npk_test_light() ? 100 : 800;
    for (int c = 0; c < cases; c++) {
        dcase t;
        npk_tfl_qdw *d = &t.d;
        memset(&t, 0, sizeof t);
        d->is_signed = c % 2;
        d->dm = c % 9 == 0 ? rnd(&s, 2, 3) : 1;
        d->in_c = c % 4 == 0 ? rnd(&s, 1, 70) : 8 * rnd(&s, 1, 12);
        d->out_c = d->in_c * d->dm;
        d->kh = c % 13 == 0 ? rnd(&s, 1, 9) : rnd(&s, 1, 5);
        d->kw = c % 13 == 0 ? rnd(&s, 1, 9) : rnd(&s, 1, 5);
        d->sh = rnd(&s, 1, 3), d->sw = rnd(&s, 1, 3);
        d->dh = c % 5 == 0 ? 2 : 1, d->dw = c % 6 == 0 ? 2 : 1;
        d->in_h = rnd(&s, 1, 12), d->in_w = rnd(&s, 1, 12);
        d->pad_h = rnd(&s, 0, d->kh), d->pad_w = rnd(&s, 0, d->kw);
        const int32_t eh = (d->kh - 1) * d->dh + 1, ew = (d->kw - 1) * d->dw + 1;
        t.out_h = (d->in_h + 2 * d->pad_h - eh) / d->sh + 1;
        d->out_w = (d->in_w + 2 * d->pad_w - ew) / d->sw + 1;
        if (t.out_h < 1) t.out_h = 1;
        if (d->out_w < 1) d->out_w = 1;
        const size_t nin = (size_t)d->in_h * d->in_w * d->in_c,
                     nw = (size_t)d->kh * d->kw * d->out_c;
        t.in = malloc(nin);
        uint8_t *w = malloc(nw);
        int32_t *bias = malloc((size_t)d->out_c * 4), *mult = malloc((size_t)d->out_c * 4),
                *shift = malloc((size_t)d->out_c * 4);
        for (size_t i = 0; i < nin; i++) t.in[i] = (uint8_t)npk_rand(&s);
        for (size_t i = 0; i < nw; i++) w[i] = (uint8_t)npk_rand(&s);
        for (int32_t o = 0; o < d->out_c; o++) {
            bias[o] = c % 3 ? rnd(&s, -50000, 50000) : (int32_t)(uint32_t)npk_rand(&s);
            mult[o] = rnd_mult(&s);
            shift[o] = c % 5 == 1 ? rnd(&s, -31, 30) : rnd(&s, -12, 1);
        }
        const int32_t qmin = d->is_signed ? -128 : 0, qmax = d->is_signed ? 127 : 255;
        d->w = w, d->bias = bias, d->mult = mult, d->shift = shift;
        d->in_zero = rnd(&s, qmin, qmax);
        d->w_zero = d->is_signed ? 0 : rnd(&s, 0, 255);
        d->out_zero = rnd(&s, qmin, qmax);
        d->act_min = c % 2 ? qmin : rnd(&s, qmin, qmax);
        d->act_max = c % 3 ? qmax : rnd(&s, d->act_min, qmax);
        check_dw(&t);
        free(t.in);
        free(w);
        free(bias);
        free(mult);
        free(shift);
    }
}

/* ---- ADD ---- */

static void test_add_random(void **state)
{
    (void)state;
    uint64_t s = 0xA0761D6478BD642Fu;
    const npk_tfl_qkern *k[2];
    const size_t np = paths(k);
    for (int c = 0; c < 400; c++) {
        const size_t count = (size_t)(c % 5 ? rnd(&s, 0, 70) : rnd(&s, 71, 3000));
        uint8_t *a = malloc(count + 1), *b = malloc(count + 1);
        uint8_t *want = malloc(count + 2 * GUARD), *got = malloc(count + 2 * GUARD);
        for (size_t i = 0; i < count; i++)
            a[i] = (uint8_t)npk_rand(&s), b[i] = (uint8_t)npk_rand(&s);
        npk_tfl_qadd q;
        q.is_signed = c % 2;
        const int32_t qmin = q.is_signed ? -128 : 0, qmax = q.is_signed ? 127 : 255;
        q.off1 = -rnd(&s, qmin, qmax), q.off2 = -rnd(&s, qmin, qmax);
        /* add.cc: input multipliers below 1/2 (the scale over twice the larger), the output's below
         * one */
        q.m1 = rnd(&s, 1 << 30, INT32_MAX), q.s1 = rnd(&s, c % 7 ? -3 : -31, -1);
        q.m2 = rnd(&s, 1 << 30, INT32_MAX), q.s2 = rnd(&s, c % 7 ? -3 : -31, -1);
        if (c % 3 == 0) q.m2 = -q.m2; /* SUB */
        q.mo = rnd(&s, 1 << 30, INT32_MAX), q.so = rnd(&s, c % 11 ? -22 : -31, c % 13 ? -14 : 0);
        q.out_zero = rnd(&s, qmin, qmax);
        q.act_min = c % 2 ? qmin : rnd(&s, qmin, qmax);
        q.act_max = c % 3 ? qmax : rnd(&s, q.act_min, qmax);
        memset(want, 0x77, count + 2 * GUARD);
        npk_tfl_qkern_portable.add(&q, a, b, want + GUARD, count);
        for (size_t p = 0; p < np; p++) {
            memset(got, 0x77, count + 2 * GUARD);
            k[p]->add(&q, a, b, got + GUARD, count);
            if (memcmp(want, got, count + 2 * GUARD)) {
                size_t i = 0;
                while (want[i] == got[i]) i++;
                fail_msg("%s add of %zu %s: byte %ld is %u, portable %u", k[p]->name, count,
                         q.is_signed ? "int8" : "uint8", (long)i - GUARD, got[i], want[i]);
            }
        }
        free(a);
        free(b);
        free(want);
        free(got);
    }
}

/* ---- whole models, layer by layer ---- */

/* Every tensor of a fixture model's subgraph after one run on input
 * i * 7 mod 256 (keep_all: none reused), on force level `level` with
 * `threads` threads. */
typedef struct tensors {
    uint32_t n;
    npk_tfl_view *v; /* views into the interpreter */
    npk_tfl_interp *it;
} tensors;

static void model_tensors(const npk_tfl_model *m, int level, int threads, tensors *t)
{
    npk_error err = {0};
    npk_tfl_interp_opts o = {.threads = threads, .keep_all = true};
    npk_tfl_qkern_force(level);
    const npk_status st = npk_tfl_interp_new(m, &o, &t->it, &err);
    npk_tfl_qkern_force(0);
    if (st) fail_msg("%s", err.msg);
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(t->it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_input(t->it, i, &v, &err), NPK_OK);
        for (size_t k = 0; k < v.bytes; k++) ((uint8_t *)v.data)[k] = (uint8_t)(k * 7);
    }
    if (npk_tfl_interp_invoke(t->it, &err)) fail_msg("%s", err.msg);
    t->n = m->subgraphs[0].ntensors;
    t->v = calloc(t->n, sizeof *t->v);
    assert_non_null(t->v);
    for (uint32_t i = 0; i < t->n; i++)
        assert_int_equal(npk_tfl_interp_tensor(t->it, (int32_t)i, &t->v[i], &err), NPK_OK);
}

static void tensors_free(tensors *t)
{
    free(t->v);
    npk_tfl_interp_free(t->it);
}

/* Every path computes every tensor of real networks as the portable kernels
 * do (test_models pins the outputs' hashes on the best and the portable
 * path), with 1 and 3 threads: uint8 per-tensor (MobileNet v1 and v2, with
 * ADD) and int8 per-channel networks (MobileNet v2 PTQ, MoveNet). A
 * difference names the first tensor (so the layer) where the paths part. */
static void test_models_every_path(void **state)
{
    (void)state;
    static const char *const models[] = {
        "models/mobilenet_v1_0.5_160_quant.tflite",
        "models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite",
        "models/mobilenet_v2_1.0_224_quant.tflite",
        "models/tf2_mobilenet_v2_1.0_224_ptq.tflite",
        "models/movenet_single_pose_lightning_ptq.tflite",
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        if (npk_test_light() && i > 0) break; /* under an emulator: the smallest */
        npk_mapped map;
        npk_tfl_model m;
        npk_error err = {0};
        npk_fixture_map(models[i], &map);
        if (npk_tfl_parse(map.data, map.size, &m, &err)) fail_msg("%s: %s", models[i], err.msg);
        tensors ref;
        model_tensors(&m, 2, 1, &ref);
        assert_string_equal(npk_tfl_interp_kernels(ref.it), "portable");
        size_t layers = 0;
        for (int level = 0; level <= 1; level++)
            for (int threads = 1; threads <= 3; threads += 2) {
                tensors got;
                model_tensors(&m, level, threads, &got);
                for (uint32_t k = 0; k < ref.n; k++) {
                    const npk_tfl_view *a = &ref.v[k], *b = &got.v[k];
                    if (a->is_const || !a->data) continue;
                    assert_int_equal(a->bytes, b->bytes);
                    if (memcmp(a->data, b->data, a->bytes))
                        fail_msg("%s: tensor %u \"%s\" differs from the portable kernels' "
                                 "(%s kernels, %d threads)",
                                 models[i], k, a->name, npk_tfl_interp_kernels(got.it), threads);
                    layers += level == 0 && threads == 1;
                }
                tensors_free(&got);
            }
        printf("%s: %zu tensors equal on every path\n", models[i], layers);
        tensors_free(&ref);
        npk_tfl_free(&m);
        npk_unmap_file(&map);
    }
}

/* ---- packing ---- */

static void test_pack_layout(void **state)
{
    (void)state;
    uint64_t s = 5;
    for (size_t n = 1; n <= 40; n += 3)
        for (size_t k = 1; k <= 9; k++) {
            const size_t ldb = k + n % 3;
            uint8_t *b = malloc(n * ldb), *p;
            int32_t bias[40], mult[40], shift[40];
            for (size_t i = 0; i < n * ldb; i++) b[i] = (uint8_t)(1 + npk_rand(&s) % 255);
            for (size_t j = 0; j < n; j++)
                bias[j] = (int32_t)npk_rand(&s), mult[j] = rnd_mult(&s),
                shift[j] = rnd(&s, -31, 30);
            size_t bytes;
            assert_true(npk_tfl_qpack_bytes(n, k, &bytes));
            assert_int_equal(bytes, (n + 15) / 16 * (NPK_TFL_QPANEL_HEAD + (k + 1) / 2 * 32));
            p = malloc(bytes);
            npk_tfl_qpack_b(b, n, k, ldb, bias, mult, shift, p);
            for (size_t j = 0; j < (n + 15) / 16 * 16; j++) {
                const uint8_t *panel = npk_tfl_qpack_at(p, j / 16 * 16, k);
                int32_t qc[NPK_TFL_QC_N][16];
                memcpy(qc, panel, sizeof qc);
                const int32_t sh = j < n ? shift[j] : 0, right = sh < 0 ? -sh : 0;
                assert_int_equal(qc[NPK_TFL_QC_BIAS][j % 16], j < n ? bias[j] : 0);
                assert_int_equal(qc[NPK_TFL_QC_MULT][j % 16], j < n ? mult[j] : 0);
                assert_int_equal(qc[NPK_TFL_QC_MULT_ODD][j % 16],
                                 j % 2 || j + 1 >= n ? 0 : mult[j + 1]);
                assert_int_equal(qc[NPK_TFL_QC_LEFT][j % 16], sh > 0 ? sh : 0);
                assert_int_equal(qc[NPK_TFL_QC_RIGHT][j % 16], right);
                assert_int_equal(qc[NPK_TFL_QC_MASK][j % 16], (1ll << right) - 1);
                assert_int_equal(qc[NPK_TFL_QC_HALF][j % 16], ((1ll << right) - 1) >> 1);
                for (size_t t = 0; t < (k + 1) / 2 * 2; t++) {
                    const uint8_t v = panel[NPK_TFL_QPANEL_HEAD + t / 2 * 32 + j % 16 * 2 + t % 2];
                    assert_int_equal(v, j < n && t < k ? b[j * ldb + t] : 0);
                }
            }
            free(b);
            free(p);
        }
    size_t bytes;
    assert_false(npk_tfl_qpack_bytes(SIZE_MAX, 4, &bytes));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch),          cmocka_unit_test(test_pack_layout),
        cmocka_unit_test(test_requant_edges),     cmocka_unit_test(test_gemm_random),
        cmocka_unit_test(test_gemm_s32_random),   cmocka_unit_test(test_gemm_s32_blocks),
        cmocka_unit_test(test_dw_random),         cmocka_unit_test(test_add_random),
        cmocka_unit_test(test_models_every_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
