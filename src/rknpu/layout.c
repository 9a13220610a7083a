/* NC1HWC2 feature maps and packed matmul weights, both directions. The hot
 * loops move whole atoms (C2 channels) or whole 32-channel weight rows with
 * fixed-size copies; element-wise work is left to the transposing cases. */
#include <string.h>

#include "npukit/checked.h"
#include "npukit/rknpu_layout.h"

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

/* NHWC <-> NC1HWC2 for one batch. Pixels go in blocks so that each plane
 * receives (or yields) at least a cache line per visit. */
static void nhwc_batch(const npk_rk_feature_shape *s, const uint8_t *plain, uint8_t *native,
                       bool pack)
{
    size_t es = s->esize, c2 = s->c2, hw = s->h * s->w;
    size_t atom = c2 * es, full = s->c / c2, rem = s->c % c2;
    size_t row = s->c * es, plane = hw * atom;
    size_t pb = atom >= 64 ? 1 : 64 / atom;
    for (size_t p0 = 0; p0 < hw; p0 += pb) {
        size_t p1 = p0 + pb < hw ? p0 + pb : hw;
        for (size_t c1 = 0; c1 < full; c1++) {
            uint8_t *nat = native + c1 * plane;
            const size_t off = c1 * atom;
            if (pack)
                for (size_t p = p0; p < p1; p++) copy_atom(nat + p * atom, plain + p * row + off, atom);
            else
                for (size_t p = p0; p < p1; p++)
                    copy_atom((uint8_t *)plain + p * row + off, nat + p * atom, atom);
        }
        if (rem) { /* the last, zero-padded plane */
            uint8_t *nat = native + full * plane;
            for (size_t p = p0; p < p1; p++) {
                if (pack) {
                    memcpy(nat + p * atom, plain + p * row + full * atom, rem * es);
                    memset(nat + p * atom + rem * es, 0, atom - rem * es);
                } else {
                    memcpy((uint8_t *)plain + p * row + full * atom, nat + p * atom, rem * es);
                }
            }
        }
    }
}

static inline void copy_elem(uint8_t *d, const uint8_t *s, size_t es)
{
    switch (es) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    default: memcpy(d, s, 4); break;
    }
}

/* NCHW <-> NC1HWC2 for one batch: an element-wise interleave of C2 planes. */
static void nchw_batch(const npk_rk_feature_shape *s, const uint8_t *plain, uint8_t *native,
                       bool pack)
{
    size_t es = s->esize, c2 = s->c2, hw = s->h * s->w;
    size_t c1n = s->c / c2 + (s->c % c2 != 0);
    for (size_t c1 = 0; c1 < c1n; c1++) {
        size_t cn = s->c - c1 * c2 < c2 ? s->c - c1 * c2 : c2;
        uint8_t *nat = native + c1 * hw * c2 * es;
        for (size_t p = 0; p < hw; p++) {
            uint8_t *atom = nat + p * c2 * es;
            for (size_t i = 0; i < cn; i++) {
                uint8_t *pl = (uint8_t *)plain + ((c1 * c2 + i) * hw + p) * es;
                if (pack) copy_elem(atom + i * es, pl, es);
                else copy_elem(pl, atom + i * es, es);
            }
            if (pack && cn < c2) memset(atom + cn * es, 0, (c2 - cn) * es);
        }
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
                        "weights K x N = %zu x %zu: K must be a multiple of 32 and N of %zu",
                        s->k, s->n, s->group);
    size_t t, f[] = {s->k, s->n, s->esize};
    if (!npk_prod_sz(f, 3, &t)) return npk_fail(err, NPK_E_LIMIT, "weights too large");
    return NPK_OK;
}

/* One G x 32 block <-> the 32 x G sub-matrix of B[K][N] at (k0, n0). The
 * fixed-size variants let the compiler keep the tile in registers. */
#define TRANSPOSE_BLOCK(NAME, T, G)                                                                \
    static void NAME(uint8_t *blk, uint8_t *b, size_t ld, bool pack)                               \
    {                                                                                              \
        T tile[KB][G];                                                                             \
        if (pack) {                                                                                \
            for (size_t ki = 0; ki < KB; ki++) memcpy(tile[ki], b + ki * ld, sizeof tile[ki]);     \
            T out[G][KB];                                                                          \
            for (size_t ni = 0; ni < G; ni++)                                                      \
                for (size_t ki = 0; ki < KB; ki++) out[ni][ki] = tile[ki][ni];                     \
            memcpy(blk, out, sizeof out);                                                          \
        } else {                                                                                   \
            T in[G][KB];                                                                           \
            memcpy(in, blk, sizeof in);                                                            \
            for (size_t ki = 0; ki < KB; ki++)                                                     \
                for (size_t ni = 0; ni < G; ni++) tile[ki][ni] = in[ni][ki];                       \
            for (size_t ki = 0; ki < KB; ki++) memcpy(b + ki * ld, tile[ki], sizeof tile[ki]);     \
        }                                                                                          \
    }
TRANSPOSE_BLOCK(block_u16_g16, uint16_t, 16)
TRANSPOSE_BLOCK(block_u16_g32, uint16_t, 32)
TRANSPOSE_BLOCK(block_u8_g16, uint8_t, 16)
TRANSPOSE_BLOCK(block_u8_g32, uint8_t, 32)

static npk_status weight_convert(const npk_rk_weight_shape *s, npk_rk_order order, uint8_t *plain,
                                 uint8_t *packed, bool pack, npk_error *err)
{
    npk_status st = npk_rk_weight_check(s, err);
    if (st) return st;
    size_t es = s->esize, g = s->group, kbs = s->k / KB;
    size_t blk = g * KB * es;
    if (order == NPK_RK_KN) {
        void (*fn)(uint8_t *, uint8_t *, size_t, bool) =
            es == 2 ? (g == 16 ? block_u16_g16 : block_u16_g32)
                    : (g == 16 ? block_u8_g16 : block_u8_g32);
        size_t ld = s->n * es;
        for (size_t kb = 0; kb < kbs; kb++)
            for (size_t gi = 0; gi < s->n / g; gi++)
                fn(packed + (gi * kbs + kb) * blk, plain + kb * KB * ld + gi * g * es, ld, pack);
    } else if (order == NPK_RK_NK) {
        size_t row = KB * es, ld = s->k * es;
        for (size_t gi = 0; gi < s->n / g; gi++)
            for (size_t kb = 0; kb < kbs; kb++) {
                uint8_t *b = packed + (gi * kbs + kb) * blk;
                uint8_t *p = plain + gi * g * ld + kb * row;
                for (size_t ni = 0; ni < g; ni++) {
                    if (pack) copy_atom(b + ni * row, p + ni * ld, row);
                    else copy_atom(p + ni * ld, b + ni * row, row);
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
