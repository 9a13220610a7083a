/* NMHWSOIB2 weights: [N_OFP, M_IFP, KH, KW, S, 32 out lanes, 32 in lanes].
 * One tap of one (out group, in group) pair is a tile of S planes of 256
 * bytes. In a plane, out lane co and in lane ci select byte co*8 + ci/4 and
 * the 2-bit field ci%4 (LSB first); plane s holds bits 2s+1:2s of the
 * offset-binary code, value = code - 2^(bits-1) (see mgk_table.c).
 *
 * The row kernels work on 64-bit words: one plane row (8 bytes) holds the
 * fields of 32 input lanes, and a "spread" turns 8 fields into 8 bytes. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "mgk_internal.h"

#define PLANE 256
#define LANES 32
#define MAX_DIM 4096

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* 8 two-bit fields (16 bits) -> one field in the low bits of each byte. */
static ALWAYS_INLINE uint64_t spread16(uint64_t x)
{
    x &= 0xFFFF;
    x = (x | (x << 24)) & 0x000000FF000000FFull;
    x = (x | (x << 12)) & 0x000F000F000F000Full;
    x = (x | (x << 6)) & 0x0303030303030303ull;
    return x;
}

/* The inverse: the low two bits of each byte -> 16 bits. */
static ALWAYS_INLINE uint64_t compress16(uint64_t x)
{
    x &= 0x0303030303030303ull;
    x = (x | (x >> 6)) & 0x000F000F000F000Full;
    x = (x | (x >> 12)) & 0x000000FF000000FFull;
    x = (x | (x >> 24)) & 0xFFFF;
    return x;
}

/* Per-bit-width constants for the byte-parallel code <-> value mapping. */
typedef struct wconst {
    int planes, bits;
    uint64_t flip;  /* code_offset in every byte: code ^ flip is the b-bit two's complement */
    uint64_t low;   /* 2^bits - 1 in every byte */
    uint64_t ext;   /* bits above the value's width, for sign extension */
} wconst;

static wconst make_const(int bits)
{
    wconst k;
    k.bits = bits;
    k.planes = bits / 2;
    uint64_t rep = 0x0101010101010101ull;
    k.flip = rep * (uint64_t)(1u << (bits - 1));
    k.low = rep * (uint64_t)((1u << bits) - 1);
    k.ext = (uint64_t)((0xFFu << bits) & 0xFFu);
    return k;
}

/* Decode the 32 input lanes of out lane co from one tile into 4 words of
 * 8 int8 values (lane order, little-endian byte order). */
static ALWAYS_INLINE void row_decode(const uint8_t *tile, int co, int planes, int bits,
                                     uint64_t flip, uint64_t ext, uint64_t out[4])
{
    uint64_t p[4] = {0, 0, 0, 0};
    for (int s = 0; s < planes; s++) p[s] = npk_ld64le(tile + s * PLANE + co * 8);
    for (int g = 0; g < 4; g++) {
        uint64_t c = 0;
        for (int s = 0; s < planes; s++) c |= spread16(p[s] >> (16 * g)) << (2 * s);
        uint64_t v = c ^ flip;
        if (bits < 8) v |= ((v & flip) >> (bits - 1)) * ext;
        out[g] = v;
    }
}

/* Encode 4 words of values into out lane co of one tile; only the fields
 * selected by `keep` (2 bits per input lane) are written. */
static ALWAYS_INLINE void row_encode(uint8_t *tile, int co, int planes, uint64_t flip,
                                     uint64_t low, const uint64_t in[4], uint64_t keep)
{
    uint64_t c[4];
    for (int g = 0; g < 4; g++) c[g] = (in[g] ^ flip) & low;
    for (int s = 0; s < planes; s++) {
        uint64_t p = 0;
        for (int g = 0; g < 4; g++) p |= compress16(c[g] >> (2 * s)) << (16 * g);
        uint8_t *q = tile + s * PLANE + co * 8;
        if (keep != ~0ull) p = (npk_ld64le(q) & ~keep) | (p & keep);
        npk_st64le(q, p);
    }
}

npk_status npk_mgk_wshape_check(const npk_mgk_wshape *s, size_t *block_bytes, size_t *oihw_count,
                                npk_error *err)
{
    const npk_mgk_bitwidth *bw = npk_mgk_bitwidth_by_bits(s->bits);
    if (!bw) return npk_fail(err, NPK_E_UNSUPPORTED, "%d-bit weights: expected 2, 4, 6 or 8", s->bits);
    if (s->n_ofp < 1 || s->m_ifp < 1 || s->kh < 1 || s->kw < 1 || s->n_ofp > MAX_DIM ||
        s->m_ifp > MAX_DIM || s->kh > MAX_DIM || s->kw > MAX_DIM)
        return npk_fail(err, NPK_E_ARG, "weight shape [%d, %d, %d, %d] out of range", s->n_ofp,
                        s->m_ifp, s->kh, s->kw);
    if ((s->flags & NPK_MGK_NATIVE_3X3) && (s->kh != 3 || s->kw != 3))
        return npk_fail(err, NPK_E_ARG, "the native 3x3 tap order needs a 3x3 kernel");
    int cout = s->cout, cin = s->cin;
    if (s->flags & NPK_MGK_ALL_LANES) {
        cout = LANES * s->n_ofp;
        cin = LANES * s->m_ifp;
    } else if (cout <= LANES * (s->n_ofp - 1) || cout > LANES * s->n_ofp ||
               cin <= LANES * (s->m_ifp - 1) || cin > LANES * s->m_ifp) {
        return npk_fail(err, NPK_E_ARG, "%d x %d channels do not fit %d x %d lane groups", cout,
                        cin, s->n_ofp, s->m_ifp);
    }
    size_t f[] = {(size_t)s->n_ofp, (size_t)s->m_ifp, (size_t)s->kh, (size_t)s->kw,
                  (size_t)bw->tile_bytes};
    size_t g[] = {(size_t)cout, (size_t)cin, (size_t)s->kh, (size_t)s->kw};
    size_t bb, oc;
    if (!npk_prod_sz(f, 5, &bb) || !npk_prod_sz(g, 4, &oc))
        return npk_fail(err, NPK_E_LIMIT, "weight shape too large");
    if (block_bytes) *block_bytes = bb;
    if (oihw_count) *oihw_count = oc;
    return NPK_OK;
}

typedef struct walk {
    int n_ofp, m_ifp, taps, cout, cin;
    int *tapmap; /* logical tap (kh*KW+kw) -> stored tap */
    uint8_t *rowbuf; /* taps x 32 bytes, for kernels larger than 1x1 */
} walk;

static npk_status walk_init(const npk_mgk_wshape *s, walk *w, npk_error *err)
{
    w->n_ofp = s->n_ofp;
    w->m_ifp = s->m_ifp;
    w->taps = s->kh * s->kw;
    w->cout = (s->flags & NPK_MGK_ALL_LANES) ? LANES * s->n_ofp : s->cout;
    w->cin = (s->flags & NPK_MGK_ALL_LANES) ? LANES * s->m_ifp : s->cin;
    w->tapmap = NULL;
    w->rowbuf = NULL;
    if (w->taps == 1) return NPK_OK;
    w->tapmap = malloc((size_t)w->taps * sizeof *w->tapmap);
    w->rowbuf = malloc((size_t)w->taps * LANES);
    if (!w->tapmap || !w->rowbuf) {
        free(w->tapmap);
        free(w->rowbuf);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (int t = 0; t < w->taps; t++) w->tapmap[t] = t;
    if (s->flags & NPK_MGK_NATIVE_3X3) /* middle row stored right to left */
        for (int col = 0; col < 3; col++) w->tapmap[3 + col] = 3 + (2 - col);
    return NPK_OK;
}

static void walk_free(walk *w)
{
    free(w->tapmap);
    free(w->rowbuf);
}

static ALWAYS_INLINE void decode_all(const walk *w, const uint8_t *block, int8_t *oihw,
                                     int planes, int bits, uint64_t flip, uint64_t ext)
{
    const size_t tile_bytes = (size_t)planes * PLANE;
    const int T = w->taps;
    uint8_t *out = (uint8_t *)oihw;
    for (int n = 0; n < w->n_ofp; n++) {
        int co_end = w->cout - LANES * n < LANES ? w->cout - LANES * n : LANES;
        for (int m = 0; m < w->m_ifp; m++) {
            int cim = w->cin - LANES * m < LANES ? w->cin - LANES * m : LANES;
            const uint8_t *group = block + (size_t)(n * w->m_ifp + m) * (size_t)T * tile_bytes;
            for (int co = 0; co < co_end; co++) {
                uint8_t *dst = out + ((size_t)(LANES * n + co) * (size_t)w->cin + (size_t)LANES * m) *
                                         (size_t)T;
                uint64_t v[4];
                if (T == 1) {
                    row_decode(group, co, planes, bits, flip, ext, v);
                    if (cim == LANES) {
                        for (int g = 0; g < 4; g++) npk_st64le(dst + 8 * g, v[g]);
                    } else {
                        uint8_t tmp[LANES];
                        for (int g = 0; g < 4; g++) npk_st64le(tmp + 8 * g, v[g]);
                        memcpy(dst, tmp, (size_t)cim);
                    }
                    continue;
                }
                for (int t = 0; t < T; t++) {
                    row_decode(group + (size_t)w->tapmap[t] * tile_bytes, co, planes, bits, flip,
                               ext, v);
                    for (int g = 0; g < 4; g++) npk_st64le(w->rowbuf + t * LANES + 8 * g, v[g]);
                }
                for (int ci = 0; ci < cim; ci++)
                    for (int t = 0; t < T; t++) dst[ci * T + t] = w->rowbuf[t * LANES + ci];
            }
        }
    }
}

static ALWAYS_INLINE void encode_all(const walk *w, const int8_t *oihw, uint8_t *block, int planes,
                                     uint64_t flip, uint64_t low)
{
    const size_t tile_bytes = (size_t)planes * PLANE;
    const int T = w->taps;
    const uint8_t *in = (const uint8_t *)oihw;
    for (int n = 0; n < w->n_ofp; n++) {
        int co_end = w->cout - LANES * n < LANES ? w->cout - LANES * n : LANES;
        for (int m = 0; m < w->m_ifp; m++) {
            int cim = w->cin - LANES * m < LANES ? w->cin - LANES * m : LANES;
            uint64_t keep = cim == LANES ? ~0ull : (1ull << (2 * cim)) - 1;
            uint8_t *group = block + (size_t)(n * w->m_ifp + m) * (size_t)T * tile_bytes;
            for (int co = 0; co < co_end; co++) {
                const uint8_t *src = in + ((size_t)(LANES * n + co) * (size_t)w->cin +
                                           (size_t)LANES * m) *
                                              (size_t)T;
                uint64_t v[4];
                if (T == 1) {
                    if (cim == LANES) {
                        for (int g = 0; g < 4; g++) v[g] = npk_ld64le(src + 8 * g);
                    } else {
                        uint8_t tmp[LANES] = {0};
                        memcpy(tmp, src, (size_t)cim);
                        for (int g = 0; g < 4; g++) v[g] = npk_ld64le(tmp + 8 * g);
                    }
                    row_encode(group, co, planes, flip, low, v, keep);
                    continue;
                }
                memset(w->rowbuf, 0, (size_t)T * LANES);
                for (int ci = 0; ci < cim; ci++)
                    for (int t = 0; t < T; t++) w->rowbuf[t * LANES + ci] = src[ci * T + t];
                for (int t = 0; t < T; t++) {
                    for (int g = 0; g < 4; g++) v[g] = npk_ld64le(w->rowbuf + t * LANES + 8 * g);
                    row_encode(group + (size_t)w->tapmap[t] * tile_bytes, co, planes, flip, low, v,
                               keep);
                }
            }
        }
    }
}

npk_status npk_mgk_nmhw_decode(const npk_mgk_wshape *s, const uint8_t *block, size_t block_len,
                               int8_t *oihw, npk_error *err)
{
    size_t need;
    npk_status st = npk_mgk_wshape_check(s, &need, NULL, err);
    if (st) return st;
    if (block_len < need)
        return npk_fail(err, NPK_E_FORMAT, "weight block of %zu bytes, the shape needs %zu",
                        block_len, need);
    walk w;
    if ((st = walk_init(s, &w, err))) return st;
    wconst k = make_const(s->bits);
    /* Constant arguments let the compiler specialise each bit width. */
    switch (s->bits) {
    case 8: decode_all(&w, block, oihw, 4, 8, 0x8080808080808080ull, 0); break;
    case 6: decode_all(&w, block, oihw, 3, 6, k.flip, k.ext); break;
    case 4: decode_all(&w, block, oihw, 2, 4, k.flip, k.ext); break;
    default: decode_all(&w, block, oihw, 1, 2, k.flip, k.ext); break;
    }
    walk_free(&w);
    return NPK_OK;
}

npk_status npk_mgk_nmhw_encode(const npk_mgk_wshape *s, const int8_t *oihw, uint8_t *block,
                               size_t block_len, npk_error *err)
{
    size_t need, count;
    npk_status st = npk_mgk_wshape_check(s, &need, &count, err);
    if (st) return st;
    if (block_len < need)
        return npk_fail(err, NPK_E_ARG, "weight block of %zu bytes, the shape needs %zu",
                        block_len, need);
    if (s->bits < 8) {
        int lo = -(1 << (s->bits - 1)), hi = (1 << (s->bits - 1)) - 1;
        for (size_t i = 0; i < count; i++)
            if (oihw[i] < lo || oihw[i] > hi)
                return npk_fail(err, NPK_E_ARG,
                                "value %d at index %zu is outside the %d-bit range [%d, %d]",
                                oihw[i], i, s->bits, lo, hi);
    }
    walk w;
    if ((st = walk_init(s, &w, err))) return st;
    wconst k = make_const(s->bits);
    switch (s->bits) {
    case 8: encode_all(&w, oihw, block, 4, 0x8080808080808080ull, ~0ull); break;
    case 6: encode_all(&w, oihw, block, 3, k.flip, k.low); break;
    case 4: encode_all(&w, oihw, block, 2, k.flip, k.low); break;
    default: encode_all(&w, oihw, block, 1, k.flip, k.low); break;
    }
    walk_free(&w);
    return NPK_OK;
}

npk_status npk_mgk_layer_wshape(const npk_mgk_conv *c, unsigned flags, npk_mgk_wshape *s,
                                npk_error *err)
{
    if (!c->usable)
        return npk_fail(err, NPK_E_UNSUPPORTED, "layer %d: %s", c->id,
                        c->problem[0] ? c->problem : "weights not decodable");
    s->n_ofp = c->n_ofp;
    s->m_ifp = c->m_ifp;
    s->kh = c->kh;
    s->kw = c->kw;
    s->bits = c->bits;
    s->cout = c->out_channels;
    s->cin = c->in_channels;
    s->flags = flags | (c->unpadded ? 0u : NPK_MGK_ALL_LANES);
    return NPK_OK;
}

npk_status npk_mgk_decode_layer(const npk_mgk_model *m, const npk_mgk_conv *c, unsigned flags,
                                int8_t *oihw, npk_error *err)
{
    npk_mgk_wshape s;
    npk_status st = npk_mgk_layer_wshape(c, flags, &s, err);
    if (st) return st;
    return npk_mgk_nmhw_decode(&s, m->data + m->region_offset + c->weight_offset,
                               (size_t)c->weight_bytes, oihw, err);
}
