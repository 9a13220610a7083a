/* NC1HWC2 feature maps and packed matmul weights, both directions. The hot
 * loops move whole atoms (C2 channels) or whole 32-channel weight rows with
 * fixed-size copies; element-wise work is left to the transposing cases. */
#include <string.h>

#include "npukit/checked.h"
#include "npukit/rknpu_layout.h"
#include "layout_internal.h"
#include "layout_simd.h"

/* With 128-bit vectors the large conversions write through non-temporal
 * stores (x86) when the destination is aligned, like memcpy does for buffers
 * past the caches (no read-for-ownership of the destination). Loops are
 * ordered so that each stored run completes whole cache lines at once:
 * partly written lines cost more than streaming saves. */
static inline bool aligned16(const void *p, size_t stride)
{
    return (uintptr_t)p % 16 == 0 && stride % 16 == 0;
}

/* ---- feature maps ---- */

bool npk_rk_feature_native_count(const npk_rk_feature_shape *s, size_t *count)
{
    if (!s->c2) return false;
    size_t c1 = s->c / s->c2 + (s->c % s->c2 != 0);
    size_t f[] = {s->n, c1, s->h, s->w, s->c2};
    return npk_prod_sz(f, 5, count);
}

npk_status npk_rk_feature_check(const npk_rk_feature_shape *s, npk_error *err)
{
    if (s->c2 != 4 && s->c2 != 8 && s->c2 != 16)
        return npk_fail(err, NPK_E_ARG, "C2 = %zu: must be 4, 8 or 16", s->c2);
    if (s->esize != 1 && s->esize != 2 && s->esize != 4)
        return npk_fail(err, NPK_E_ARG, "element size %zu: must be 1, 2 or 4", s->esize);
    /* An empty map has nothing to convert, and the loops below walk its
     * dimensions: (2^63 - 1) x 0 would spin for ever. */
    if (!s->n || !s->c || !s->h || !s->w)
        return npk_fail(err, NPK_E_ARG,
                        "feature map of %zu x %zu x %zu x %zu (N x C x H x W) has no elements",
                        s->n, s->c, s->h, s->w);
    size_t n, plain, f[] = {s->n, s->c, s->h, s->w, s->esize};
    if (!npk_rk_feature_native_count(s, &n) || !npk_mul_sz(n, s->esize, &n) ||
        !npk_prod_sz(f, 5, &plain))
        return npk_fail(err, NPK_E_LIMIT, "feature map %zux%zux%zux%zu is too large", s->n, s->c,
                        s->h, s->w);
    return NPK_OK;
}

/* Copy one atom of `bytes` (fixed sizes become inline moves). */
static inline void copy_atom(uint8_t *d, const uint8_t *s, size_t bytes)
{
    switch (bytes) {
    case 16: memcpy(d, s, 16); break;
    case 8: memcpy(d, s, 8); break;
    case 32: memcpy(d, s, 32); break;
    case 64: memcpy(d, s, 64); break;
    default: memcpy(d, s, bytes); break;
    }
}

/* NHWC <-> NC1HWC2 for one batch, in tiles of TP pixels x TC planes so that
 * both sides move runs of TP (or TC) atoms: reads and writes stay within a
 * few pages per tile instead of touching one page per plane per pixel. */
#define TP 32
#define TC 32

static void nhwc_full_planes(size_t hw, size_t c1n, size_t atom, size_t row, const uint8_t *plain,
                             uint8_t *native, bool pack)
{
    size_t plane = hw * atom;
    for (size_t p0 = 0; p0 < hw; p0 += TP) {
        size_t p1 = p0 + TP < hw ? p0 + TP : hw;
        for (size_t c0 = 0; c0 < c1n; c0 += TC) {
            size_t c1e = c0 + TC < c1n ? c0 + TC : c1n;
            for (size_t c1 = c0; c1 < c1e; c1++) {
                uint8_t *nat = native + c1 * plane;
                const uint8_t *pl = plain + c1 * atom;
                if (pack)
                    for (size_t p = p0; p < p1; p++) copy_atom(nat + p * atom, pl + p * row, atom);
                else
                    for (size_t p = p0; p < p1; p++)
                        copy_atom((uint8_t *)pl + p * row, nat + p * atom, atom);
            }
        }
    }
}

#ifdef LAYOUT_V128
/* 4 x 4 atoms of 16 bytes: line i of d (stride ds) gets atom i of each of
 * the 4 lines of s (stride ss). Both sides move whole 64-byte runs. */
static inline void atoms4x4(uint8_t *d, size_t ds, const uint8_t *s, size_t ss, bool nt)
{
    v128 v[4][4];
#pragma GCC unroll 16
    for (int j = 0; j < 4; j++)
#pragma GCC unroll 16
        for (int i = 0; i < 4; i++) v[j][i] = ld16(s + j * ss + i * 16);
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++)
#pragma GCC unroll 16
        for (int j = 0; j < 4; j++) st16(d + i * ds + j * 16, v[j][i], nt);
}

/* 16-byte atoms (fp16 C2=8, int8 C2=16, fp32 C2=4) in blocks of 16 pixels x
 * 4 planes, pixels outer: each block reads and writes whole lines (4 per
 * plane, 1 per pixel row) once the first, narrower block row and column
 * reach line boundaries, so large conversions stream them. Measured: 4 x 4
 * blocks left unpacking at half the speed (one line per plane at a time). */
static void nhwc_atom16(size_t hw, size_t c1n, size_t row, const uint8_t *plain, uint8_t *native,
                        bool pack)
{
    enum { PIX = 16, AHEAD = 8 }; /* pixels per block; planes prefetched ahead */
    size_t plane = hw * 16;
    bool pl_lines = aligned16(plain, row) && row % 64 == 0;
    bool nat_lines = aligned16(native, plane) && plane % 64 == 0;
    size_t ph = nat_lines ? (64 - (uintptr_t)native % 64) % 64 / 16 : 0; /* head pixels */
    size_t ch = pl_lines ? (64 - (uintptr_t)plain % 64) % 64 / 16 : 0;   /* head planes */
    bool nt = (pack ? nat_lines : pl_lines) && hw * row >= RK_LAYOUT_STREAMED;
    size_t pn, cn;
    for (size_t p0 = 0; p0 < hw; p0 += pn) {
        pn = p0 == 0 && ph ? ph : hw - p0 < PIX ? hw - p0 : PIX;
        for (size_t c0 = 0; c0 < c1n; c0 += cn) {
            cn = c0 == 0 && ch ? ch : c1n - c0 < 4 ? c1n - c0 : 4;
            uint8_t *pl = (uint8_t *)plain + p0 * row + c0 * 16,
                    *nat = native + c0 * plane + p0 * 16;
            if (!pack) /* the planes are the strided side */
                for (size_t i = AHEAD; i < AHEAD + 4 && c0 + i < c1n; i++)
                    for (size_t l = 0; l < PIX * 16; l += 64)
                        __builtin_prefetch(nat + i * plane + l);
            if (pn == PIX && cn == 4) {
                for (size_t q = 0; q < PIX; q += 4) {
                    if (pack)
                        atoms4x4(nat + q * 16, plane, pl + q * row, row, nt);
                    else
                        atoms4x4(pl + q * row, row, nat + q * 16, plane, nt);
                }
                continue;
            }
            for (size_t i = 0; i < cn; i++)
                for (size_t j = 0; j < pn; j++) {
                    if (pack)
                        memcpy(nat + i * plane + j * 16, pl + j * row + i * 16, 16);
                    else
                        memcpy(pl + j * row + i * 16, nat + i * plane + j * 16, 16);
                }
        }
    }
    if (nt) stream_fence();
}
#endif

static void nhwc_batch(const npk_rk_feature_shape *s, const uint8_t *plain, uint8_t *native,
                       bool pack)
{
    size_t es = s->esize, c2 = s->c2, hw = s->h * s->w;
    size_t atom = c2 * es, full = s->c / c2, rem = s->c % c2;
    size_t row = s->c * es, plane = hw * atom;
    /* Fixed atom sizes let copy_atom become single moves. */
    switch (atom) {
    case 16:
#ifdef LAYOUT_V128
        if (rk_layout_vectors()) {
            nhwc_atom16(hw, full, row, plain, native, pack);
            break;
        }
#endif
        nhwc_full_planes(hw, full, 16, row, plain, native, pack);
        break;
    case 8: nhwc_full_planes(hw, full, 8, row, plain, native, pack); break;
    case 32: nhwc_full_planes(hw, full, 32, row, plain, native, pack); break;
    case 64: nhwc_full_planes(hw, full, 64, row, plain, native, pack); break;
    default: nhwc_full_planes(hw, full, atom, row, plain, native, pack); break;
    }
    if (!rem) return;
    uint8_t *nat = native + full * plane; /* the last, zero-padded plane */
    for (size_t p = 0; p < hw; p++) {
        if (pack) {
            memcpy(nat + p * atom, plain + p * row + full * atom, rem * es);
            memset(nat + p * atom + rem * es, 0, atom - rem * es);
        } else {
            memcpy((uint8_t *)plain + p * row + full * atom, nat + p * atom, rem * es);
        }
    }
}

/* NCHW <-> NC1HWC2 for one full plane group: interleave C2 channel planes
 * of hw elements into hw atoms. Constant C2 and element type let the
 * compiler unroll and vectorise the interleave. */
#define INTERLEAVE(NAME, T, C2)                                                                    \
    static void NAME(uint8_t *plain, uint8_t *nat, size_t hw, bool pack)                           \
    {                                                                                              \
        for (size_t p0 = 0; p0 < hw; p0 += 256) {                                                  \
            size_t p1 = p0 + 256 < hw ? p0 + 256 : hw;                                             \
            for (size_t p = p0; p < p1; p++)                                                       \
                for (size_t i = 0; i < C2; i++) {                                                  \
                    uint8_t *a = nat + (p * C2 + i) * sizeof(T);                                   \
                    uint8_t *b = plain + (i * hw + p) * sizeof(T);                                 \
                    if (pack)                                                                      \
                        memcpy(a, b, sizeof(T));                                                   \
                    else                                                                           \
                        memcpy(b, a, sizeof(T));                                                   \
                }                                                                                  \
        }                                                                                          \
    }
INTERLEAVE(il_u8_4, uint8_t, 4)
INTERLEAVE(il_u8_8, uint8_t, 8)
INTERLEAVE(il_u8_16, uint8_t, 16)
INTERLEAVE(il_u16_4, uint16_t, 4)
INTERLEAVE(il_u16_8, uint16_t, 8)
INTERLEAVE(il_u16_16, uint16_t, 16)
INTERLEAVE(il_u32_4, uint32_t, 4)
INTERLEAVE(il_u32_8, uint32_t, 8)
INTERLEAVE(il_u32_16, uint32_t, 16)

#ifdef LAYOUT_V128
static void nchw_simd(size_t es, size_t c1n, size_t hw, uint8_t *plain, uint8_t *native, bool pack);
#endif

static void nchw_batch(const npk_rk_feature_shape *s, const uint8_t *plain, uint8_t *native,
                       bool pack)
{
    static void (*const kern[3][3])(uint8_t *, uint8_t *, size_t,
                                    bool) = {{il_u8_4, il_u8_8, il_u8_16},
                                             {il_u16_4, il_u16_8, il_u16_16},
                                             {il_u32_4, il_u32_8, il_u32_16}};
    size_t es = s->esize, c2 = s->c2, hw = s->h * s->w;
    size_t full = s->c / c2, rem = s->c % c2;
    void (*k)(uint8_t *, uint8_t *, size_t, bool) = kern[es == 1   ? 0
                                                         : es == 2 ? 1
                                                                   : 2][c2 == 4   ? 0
                                                                        : c2 == 8 ? 1
                                                                                  : 2];
#ifdef LAYOUT_V128
    if (c2 * es == 16 && es != 4 && rk_layout_vectors()) { /* fp16 C2=8, int8 C2=16 */
        nchw_simd(es, full, hw, (uint8_t *)plain, native, pack);
        full = 0;
    }
#endif
    for (size_t c1 = 0; c1 < full; c1++)
        k((uint8_t *)plain + c1 * c2 * hw * es, native + c1 * hw * c2 * es, hw, pack);
    if (!rem) return;
    full = s->c / c2;
    uint8_t *nat = native + full * hw * c2 * es; /* the last, zero-padded plane */
    for (size_t p = 0; p < hw; p++) {
        uint8_t *atom = nat + p * c2 * es;
        for (size_t i = 0; i < rem; i++) {
            uint8_t *pl = (uint8_t *)plain + ((full * c2 + i) * hw + p) * es;
            if (pack)
                memcpy(atom + i * es, pl, es);
            else
                memcpy(pl, atom + i * es, es);
        }
        if (pack) memset(atom + rem * es, 0, (c2 - rem) * es);
    }
}

static npk_status feature_convert(const npk_rk_feature_shape *s, npk_rk_order order,
                                  const uint8_t *plain, uint8_t *native, bool pack, npk_error *err)
{
    npk_status st = npk_rk_feature_check(s, err);
    if (st) return st;
    if (order != NPK_RK_NHWC && order != NPK_RK_NCHW)
        return npk_fail(err, NPK_E_ARG, "feature maps are NHWC or NCHW");
    size_t native_batch, plain_batch = s->c * s->h * s->w * s->esize;
    npk_rk_feature_shape one = *s;
    one.n = 1;
    npk_rk_feature_native_count(&one, &native_batch);
    native_batch *= s->esize;
    for (size_t b = 0; b < s->n; b++) {
        if (order == NPK_RK_NHWC)
            nhwc_batch(s, plain + b * plain_batch, native + b * native_batch, pack);
        else
            nchw_batch(s, plain + b * plain_batch, native + b * native_batch, pack);
    }
    return NPK_OK;
}

npk_status npk_rk_feature_pack(const npk_rk_feature_shape *s, npk_rk_order from, const void *src,
                               void *dst, npk_error *err)
{
    return feature_convert(s, from, src, dst, true, err);
}

npk_status npk_rk_feature_unpack(const npk_rk_feature_shape *s, npk_rk_order to, const void *src,
                                 void *dst, npk_error *err)
{
    return feature_convert(s, to, (const uint8_t *)dst, (uint8_t *)src, false, err);
}

/* ---- weights ---- */

#define KB NPK_RK_WEIGHT_KBLOCK

npk_status npk_rk_weight_check(const npk_rk_weight_shape *s, npk_error *err)
{
    if (s->group != 16 && s->group != 32)
        return npk_fail(err, NPK_E_ARG, "weight group %zu: must be 16 or 32", s->group);
    if (s->esize != 1 && s->esize != 2)
        return npk_fail(err, NPK_E_ARG, "weight element size %zu: must be 1 or 2", s->esize);
    if (!s->k || !s->n || s->k % KB || s->n % s->group)
        return npk_fail(err, NPK_E_ARG,
                        "weights K x N = %zu x %zu: K must be a multiple of 32 and N of %zu", s->k,
                        s->n, s->group);
    size_t t, f[] = {s->k, s->n, s->esize};
    if (!npk_prod_sz(f, 3, &t)) return npk_fail(err, NPK_E_LIMIT, "weights too large");
    return NPK_OK;
}

#ifdef LAYOUT_V128
/* t rows of 16 bytes (t = 8 u16 or 16 u8 elements) at s, stride ss -> t rows
 * at d, stride ds. (Called with constant t, so the loops unroll.) */
static inline void tr_rows(size_t t, const uint8_t *s, size_t ss, uint8_t *d, size_t ds, bool nt)
{
    v128 v[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < t; i++) v[i] = ld16(s + i * ss);
    if (t == 8)
        tr8x8_u16(v);
    else
        tr16x16_u8(v);
#pragma GCC unroll 16
    for (size_t i = 0; i < t; i++) st16(d + i * ds, v[i], nt);
}

static void tr_tile(size_t es, const uint8_t *s, size_t ss, uint8_t *d, size_t ds, bool nt)
{
    if (es == 2)
        tr_rows(8, s, ss, d, ds, nt);
    else
        tr_rows(16, s, ss, d, ds, nt);
}

/* Unpacking 4t pixels: 64 bytes of each of the t planes at once, so that
 * each line of a plane is written whole by consecutive streaming stores. */
static inline void tr_line(size_t t, const uint8_t *nat, uint8_t *pl, size_t ps)
{
    v128 v[4][16];
#pragma GCC unroll 16
    for (size_t q = 0; q < 4; q++) {
#pragma GCC unroll 16
        for (size_t i = 0; i < t; i++) v[q][i] = ld16(nat + (q * t + i) * 16);
        if (t == 8)
            tr8x8_u16(v[q]);
        else
            tr16x16_u8(v[q]);
    }
#pragma GCC unroll 16
    for (size_t i = 0; i < t; i++)
#pragma GCC unroll 16
        for (size_t q = 0; q < 4; q++) st16(pl + i * ps + q * 16, v[q][i], true);
}

static void tr_line_unpack(size_t es, const uint8_t *nat, uint8_t *pl, size_t ps)
{
    if (es == 2)
        tr_line(8, nat, pl, ps);
    else
        tr_line(16, nat, pl, ps);
}

/* NCHW <-> NC1HWC2 for 16-byte atoms: C2 channel planes transpose with the
 * pixels, t pixels at a time (t = C2); the few trailing pixels go one by one.
 * Large unpacks stream whole lines of the planes once the pixel index puts
 * them on a line boundary. */
static void nchw_simd(size_t es, size_t c1n, size_t hw, uint8_t *plain, uint8_t *native, bool pack)
{
    size_t t = 16 / es, ps = hw * es, tail = hw - hw % t;
    bool nt = (pack ? aligned16(native, 16) : aligned16(plain, ps) && ps % 64 == 0) &&
              c1n * t * ps >= RK_LAYOUT_STREAMED;
    for (size_t c1 = 0; c1 < c1n; c1++) {
        uint8_t *pl = plain + c1 * t * ps, *nat = native + c1 * hw * 16;
        size_t p = 0;
        if (!pack && nt) {
            size_t head = (64 - (uintptr_t)pl % 64) % 64 / es, line = 64 / es;
            for (; p < head && p < tail; p += t)
                tr_tile(es, nat + p * 16, 16, pl + p * es, ps, false);
            for (; p + line <= hw; p += line) {
                tr_line_unpack(es, nat + p * 16, pl + p * es, ps);
            }
        }
        for (; p < tail; p += t) {
            if (pack)
                tr_tile(es, pl + p * es, ps, nat + p * 16, 16, nt);
            else
                tr_tile(es, nat + p * 16, 16, pl + p * es, ps, false);
        }
        for (p = tail; p < hw; p++)
            for (size_t i = 0; i < t; i++) {
                if (pack)
                    memcpy(nat + p * 16 + i * es, pl + i * ps + p * es, es);
                else
                    memcpy(pl + i * ps + p * es, nat + p * 16 + i * es, es);
            }
    }
    if (nt) stream_fence();
}
#endif

static npk_status weight_convert(const npk_rk_weight_shape *s, npk_rk_order order, uint8_t *plain,
                                 uint8_t *packed, bool pack, npk_error *err)
{
    npk_status st = npk_rk_weight_check(s, err);
    if (st) return st;
    size_t es = s->esize, g = s->group, kbs = s->k / KB;
    size_t blk = g * KB * es;
    if (order == NPK_RK_KN) {
        rk_weight_kn_convert(s, plain, packed, pack);
    } else if (order == NPK_RK_NK) {
        size_t row = KB * es, ld = s->k * es;
        for (size_t gi = 0; gi < s->n / g; gi++)
            for (size_t kb = 0; kb < kbs; kb++) {
                uint8_t *b = packed + (gi * kbs + kb) * blk;
                uint8_t *p = plain + gi * g * ld + kb * row;
                for (size_t ni = 0; ni < g; ni++) {
                    if (pack)
                        copy_atom(b + ni * row, p + ni * ld, row);
                    else
                        copy_atom(p + ni * ld, b + ni * row, row);
                }
            }
    } else {
        return npk_fail(err, NPK_E_ARG, "weights are KN or NK");
    }
    return NPK_OK;
}

npk_status npk_rk_weight_pack(const npk_rk_weight_shape *s, npk_rk_order from, const void *src,
                              void *dst, npk_error *err)
{
    return weight_convert(s, from, (uint8_t *)src, dst, true, err);
}

npk_status npk_rk_weight_unpack(const npk_rk_weight_shape *s, npk_rk_order to, const void *src,
                                void *dst, npk_error *err)
{
    return weight_convert(s, to, dst, (uint8_t *)src, false, err);
}
