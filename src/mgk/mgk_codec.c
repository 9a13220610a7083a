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
#include "core/cpu.h"
#include "mgk_internal.h"

#define PLANE   256
#define LANES   32
#define MAX_DIM 4096

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif
#if defined(__clang__)
#define UNROLL8 _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define UNROLL8 _Pragma("GCC unroll 8")
#else
#define UNROLL8
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
    uint64_t flip; /* code_offset in every byte: code ^ flip is the b-bit two's complement */
    uint64_t low;  /* 2^bits - 1 in every byte */
    uint64_t ext;  /* bits above the value's width, for sign extension */
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
static ALWAYS_INLINE void row_encode(uint8_t *tile, int co, int planes, uint64_t flip, uint64_t low,
                                     const uint64_t in[4], uint64_t keep)
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
    if (!bw)
        return npk_fail(err, NPK_E_UNSUPPORTED, "%d-bit weights: expected 2, 4, 6 or 8", s->bits);
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

/* ---- two-row kernels: out lanes co and co + 1 of one tile ----
 *
 * With SSE2, the 4 plane bytes of one position j (= co*8 + ci/4) are
 * interleaved into a 32-bit lane; that lane is a 4x4 matrix of 2-bit
 * fields (plane s, field f) and transposing it (two delta swaps) gives the
 * 4 codes of ci = 4j..4j+3 in byte order. The transpose is its own inverse,
 * so encoding runs the same steps backwards. */
#if defined(__SSE2__)
#include <emmintrin.h>

static ALWAYS_INLINE __m128i transpose_fields(__m128i w)
{
    __m128i t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi32(w, 12), w), _mm_set1_epi32(0x0000F0F0));
    w = _mm_xor_si128(w, _mm_xor_si128(t, _mm_slli_epi32(t, 12)));
    t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi32(w, 6), w), _mm_set1_epi32(0x00CC00CC));
    return _mm_xor_si128(w, _mm_xor_si128(t, _mm_slli_epi32(t, 6)));
}

/* Codes -> values: flip the offset bit, then sign-extend below 8 bits. */
static ALWAYS_INLINE __m128i to_values(__m128i c, __m128i flip, __m128i ext, int bits)
{
    __m128i v = _mm_xor_si128(c, flip);
    if (bits < 8)
        v = _mm_or_si128(v, _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(v, flip), flip), ext));
    return v;
}

static ALWAYS_INLINE void dec2(const uint8_t *tile, int co, int planes, int bits, uint64_t flip64,
                               uint64_t ext64, uint8_t *d0, uint8_t *d1)
{
    const __m128i z = _mm_setzero_si128();
    __m128i p[4] = {z, z, z, z};
    for (int s = 0; s < planes; s++)
        p[s] = _mm_loadu_si128((const __m128i *)(tile + s * PLANE + co * 8));
    __m128i flip = _mm_set1_epi8((char)(flip64 & 0xFF)), ext = _mm_set1_epi8((char)ext64);
    __m128i ab0 = _mm_unpacklo_epi8(p[0], p[1]), ab1 = _mm_unpackhi_epi8(p[0], p[1]);
    __m128i cd0 = _mm_unpacklo_epi8(p[2], p[3]), cd1 = _mm_unpackhi_epi8(p[2], p[3]);
    __m128i w0 = transpose_fields(_mm_unpacklo_epi16(ab0, cd0));
    __m128i w1 = transpose_fields(_mm_unpackhi_epi16(ab0, cd0));
    __m128i w2 = transpose_fields(_mm_unpacklo_epi16(ab1, cd1));
    __m128i w3 = transpose_fields(_mm_unpackhi_epi16(ab1, cd1));
    _mm_storeu_si128((__m128i *)d0, to_values(w0, flip, ext, bits));
    _mm_storeu_si128((__m128i *)(d0 + 16), to_values(w1, flip, ext, bits));
    _mm_storeu_si128((__m128i *)d1, to_values(w2, flip, ext, bits));
    _mm_storeu_si128((__m128i *)(d1 + 16), to_values(w3, flip, ext, bits));
}

static ALWAYS_INLINE __m128i plane_bytes(__m128i t0, __m128i t1, __m128i t2, __m128i t3, int s)
{
    const __m128i ff = _mm_set1_epi32(0xFF);
    __m128i a = _mm_packs_epi32(_mm_and_si128(_mm_srli_epi32(t0, 8 * s), ff),
                                _mm_and_si128(_mm_srli_epi32(t1, 8 * s), ff));
    __m128i b = _mm_packs_epi32(_mm_and_si128(_mm_srli_epi32(t2, 8 * s), ff),
                                _mm_and_si128(_mm_srli_epi32(t3, 8 * s), ff));
    return _mm_packus_epi16(a, b);
}

static ALWAYS_INLINE void enc2(uint8_t *tile, int co, int planes, uint64_t flip64, uint64_t low64,
                               const uint8_t *s0, const uint8_t *s1)
{
    __m128i flip = _mm_set1_epi8((char)(flip64 & 0xFF)), low = _mm_set1_epi8((char)(low64 & 0xFF));
#define CODES(p)                                                                                   \
    transpose_fields(_mm_and_si128(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(p)), flip), low))
    __m128i t0 = CODES(s0), t1 = CODES(s0 + 16), t2 = CODES(s1), t3 = CODES(s1 + 16);
#undef CODES
    for (int s = 0; s < planes; s++)
        _mm_storeu_si128((__m128i *)(tile + s * PLANE + co * 8), plane_bytes(t0, t1, t2, t3, s));
}
#else
static ALWAYS_INLINE void dec2(const uint8_t *tile, int co, int planes, int bits, uint64_t flip,
                               uint64_t ext, uint8_t *d0, uint8_t *d1)
{
    uint64_t v[4];
    row_decode(tile, co, planes, bits, flip, ext, v);
    for (int g = 0; g < 4; g++) npk_st64le(d0 + 8 * g, v[g]);
    row_decode(tile, co + 1, planes, bits, flip, ext, v);
    for (int g = 0; g < 4; g++) npk_st64le(d1 + 8 * g, v[g]);
}

static ALWAYS_INLINE void enc2(uint8_t *tile, int co, int planes, uint64_t flip, uint64_t low,
                               const uint8_t *s0, const uint8_t *s1)
{
    uint64_t v[4];
    for (int g = 0; g < 4; g++) v[g] = npk_ld64le(s0 + 8 * g);
    row_encode(tile, co, planes, flip, low, v, ~0ull);
    for (int g = 0; g < 4; g++) v[g] = npk_ld64le(s1 + 8 * g);
    row_encode(tile, co + 1, planes, flip, low, v, ~0ull);
}
#endif

/* With SSSE3, [taps][32] <-> [32][taps] for full rows by byte shuffles:
 * each 16-byte output chunk is the OR of one shuffle per tap. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && defined(__SSE2__)
#define MGK_HAVE_SSSE3_PATH 1
#define MAX_SHUF_TAPS       16
#include <tmmintrin.h>

static int cpu_has_ssse3(void) { return npk_cpu_has(NPK_CPU_SSSE3); }

/* out: chunk k of an interleaved half (16 ci x T taps) takes, from tap t's
 * 16 bytes, position p = 16k + i when p % T == t. in: the inverse. */
static void make_masks(int T, uint8_t *out, uint8_t *in)
{
    for (int k = 0; k < T; k++)
        for (int t = 0; t < T; t++)
            for (int i = 0; i < 16; i++) {
                int p = 16 * k + i;
                out[(k * T + t) * 16 + i] = p % T == t ? (uint8_t)(p / T) : 0x80;
                int q = i * T + t; /* ci = i of tap t sits at interleaved position q */
                in[(t * T + k) * 16 + i] = q / 16 == k ? (uint8_t)(q % 16) : 0x80;
            }
}

__attribute__((target("ssse3"))) static void taps_out_ssse3(uint8_t *dst, const uint8_t *rb, int T,
                                                            const uint8_t *mask)
{
    for (int h = 0; h < 2; h++) {
        __m128i src[MAX_SHUF_TAPS];
        for (int t = 0; t < T; t++)
            src[t] = _mm_loadu_si128((const __m128i *)(rb + t * LANES + 16 * h));
        for (int k = 0; k < T; k++) {
            __m128i acc = _mm_setzero_si128();
            for (int t = 0; t < T; t++)
                acc = _mm_or_si128(
                    acc, _mm_shuffle_epi8(
                             src[t], _mm_loadu_si128((const __m128i *)(mask + (k * T + t) * 16))));
            _mm_storeu_si128((__m128i *)(dst + 16 * h * T + 16 * k), acc);
        }
    }
}

__attribute__((target("ssse3"))) static void taps_in_ssse3(uint8_t *rb, const uint8_t *src, int T,
                                                           const uint8_t *mask)
{
    for (int h = 0; h < 2; h++) {
        __m128i chunk[MAX_SHUF_TAPS];
        for (int k = 0; k < T; k++)
            chunk[k] = _mm_loadu_si128((const __m128i *)(src + 16 * h * T + 16 * k));
        for (int t = 0; t < T; t++) {
            __m128i acc = _mm_setzero_si128();
            for (int k = 0; k < T; k++)
                acc = _mm_or_si128(
                    acc,
                    _mm_shuffle_epi8(chunk[k],
                                     _mm_loadu_si128((const __m128i *)(mask + (t * T + k) * 16))));
            _mm_storeu_si128((__m128i *)(rb + t * LANES + 16 * h), acc);
        }
    }
}
#endif

static int force_portable;

void npk_mgk_codec_force_portable(int on)
{
    force_portable = on;
}

/* 0: portable, 1: SSE2, 2: SSE2 + SSSE3 tap shuffles. */
static int simd_level(void)
{
    if (force_portable) return 0;
#if defined(MGK_HAVE_SSSE3_PATH)
    static int has = -1;
    if (has < 0) has = cpu_has_ssse3();
    return has ? 2 : 1;
#elif defined(__SSE2__)
    return 1;
#else
    return 0;
#endif
}

const char *npk_mgk_codec_path(void)
{
    static const char *names[] = {"portable", "sse2", "sse2+ssse3"};
    return names[simd_level()];
}

typedef struct walk {
    int n_ofp, m_ifp, taps, cout, cin;
    int *tapmap;                 /* logical tap (kh*KW+kw) -> stored tap */
    uint8_t *rowbuf;             /* 2 rows x taps x 32 bytes */
    int simd;                    /* simd_level() */
    uint8_t *mask_out, *mask_in; /* tap shuffles (SSSE3), or NULL */
} walk;

/* Between [taps][32] tap-major rows and the OIHW layout [ci][taps]. A
 * constant tap count lets the compiler unroll the inner loop. */
static ALWAYS_INLINE void taps_out_t(uint8_t *dst, const uint8_t *rb, int cim, int T)
{
    for (int ci = 0; ci < cim; ci++)
        for (int t = 0; t < T; t++) dst[ci * T + t] = rb[t * LANES + ci];
}
#if defined(__SSE2__)
/* 16x16 byte transpose by four rounds of unpacks; row c of the result
 * ends up in v[bitrev4[c]]. Used for kernels of 6 to 16 taps. */
#define SSE2_TAPS_MIN 6
#define SSE2_TAPS_MAX 16
static const uint8_t bitrev4[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};

static ALWAYS_INLINE void transpose16(__m128i v[16])
{
    __m128i t[16];
    UNROLL8
    for (int i = 0; i < 8; i++) {
        t[i] = _mm_unpacklo_epi8(v[2 * i], v[2 * i + 1]);
        t[i + 8] = _mm_unpackhi_epi8(v[2 * i], v[2 * i + 1]);
    }
    UNROLL8
    for (int i = 0; i < 8; i++) {
        v[i] = _mm_unpacklo_epi16(t[2 * i], t[2 * i + 1]);
        v[i + 8] = _mm_unpackhi_epi16(t[2 * i], t[2 * i + 1]);
    }
    UNROLL8
    for (int i = 0; i < 8; i++) {
        t[i] = _mm_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
        t[i + 8] = _mm_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
    }
    UNROLL8
    for (int i = 0; i < 8; i++) {
        v[i] = _mm_unpacklo_epi64(t[2 * i], t[2 * i + 1]);
        v[i + 8] = _mm_unpackhi_epi64(t[2 * i], t[2 * i + 1]);
    }
}

/* Full rows: 16-byte stores per input lane, in order, so each one's tail is
 * overwritten by the next; the last ones go through a buffer to stay inside. */
static void taps_out_sse2(uint8_t *dst, const uint8_t *rb, int T)
{
    for (int h = 0; h < 2; h++) {
        __m128i v[16];
        for (int t = 0; t < 16; t++)
            v[t] = t < T ? _mm_loadu_si128((const __m128i *)(rb + t * LANES + 16 * h))
                         : _mm_setzero_si128();
        transpose16(v);
        for (int c = 0; c < 16; c++) {
            int ci = 16 * h + c;
            if (ci * T + 16 <= LANES * T) {
                _mm_storeu_si128((__m128i *)(dst + ci * T), v[bitrev4[c]]);
            } else {
                uint8_t tmp[16];
                _mm_storeu_si128((__m128i *)tmp, v[bitrev4[c]]);
                memcpy(dst + ci * T, tmp, (size_t)T);
            }
        }
    }
}

static void taps_in_sse2(uint8_t *rb, const uint8_t *src, int T)
{
    for (int h = 0; h < 2; h++) {
        __m128i v[16];
        for (int c = 0; c < 16; c++) {
            int ci = 16 * h + c;
            if (ci * T + 16 <= LANES * T) {
                v[c] = _mm_loadu_si128((const __m128i *)(src + ci * T));
            } else {
                uint8_t tmp[16] = {0};
                memcpy(tmp, src + ci * T, (size_t)T);
                v[c] = _mm_loadu_si128((const __m128i *)tmp);
            }
        }
        transpose16(v);
        for (int t = 0; t < T; t++)
            _mm_storeu_si128((__m128i *)(rb + t * LANES + 16 * h), v[bitrev4[t]]);
    }
}
#endif

static void taps_out(const walk *w, uint8_t *dst, const uint8_t *rb, int cim, int T)
{
    (void)w; /* only the SIMD paths need it */
#if defined(__SSE2__)
    if (w->simd && cim == LANES && T >= SSE2_TAPS_MIN && T <= SSE2_TAPS_MAX) {
        taps_out_sse2(dst, rb, T);
        return;
    }
#endif
#if defined(MGK_HAVE_SSSE3_PATH)
    if (w->mask_out && cim == LANES) {
        taps_out_ssse3(dst, rb, T, w->mask_out);
        return;
    }
#endif
    switch (T) {
    case 2: taps_out_t(dst, rb, cim, 2); break;
    case 3: taps_out_t(dst, rb, cim, 3); break;
    case 4: taps_out_t(dst, rb, cim, 4); break;
    case 5: taps_out_t(dst, rb, cim, 5); break;
    case 9: taps_out_t(dst, rb, cim, 9); break;
    default: taps_out_t(dst, rb, cim, T); break;
    }
}
static ALWAYS_INLINE void taps_in_t(uint8_t *rb, const uint8_t *src, int cim, int T)
{
    for (int ci = 0; ci < cim; ci++)
        for (int t = 0; t < T; t++) rb[t * LANES + ci] = src[ci * T + t];
}
static void taps_in(const walk *w, uint8_t *rb, const uint8_t *src, int cim, int T)
{
    (void)w; /* only the SIMD paths need it */
#if defined(__SSE2__)
    if (w->simd && cim == LANES && T >= SSE2_TAPS_MIN && T <= SSE2_TAPS_MAX) {
        taps_in_sse2(rb, src, T);
        return;
    }
#endif
#if defined(MGK_HAVE_SSSE3_PATH)
    if (w->mask_in && cim == LANES) {
        taps_in_ssse3(rb, src, T, w->mask_in);
        return;
    }
#endif
    switch (T) {
    case 2: taps_in_t(rb, src, cim, 2); break;
    case 3: taps_in_t(rb, src, cim, 3); break;
    case 4: taps_in_t(rb, src, cim, 4); break;
    case 5: taps_in_t(rb, src, cim, 5); break;
    case 9: taps_in_t(rb, src, cim, 9); break;
    default: taps_in_t(rb, src, cim, T); break;
    }
}

static npk_status walk_init(const npk_mgk_wshape *s, walk *w, npk_error *err)
{
    w->n_ofp = s->n_ofp;
    w->m_ifp = s->m_ifp;
    w->taps = s->kh * s->kw;
    w->cout = (s->flags & NPK_MGK_ALL_LANES) ? LANES * s->n_ofp : s->cout;
    w->cin = (s->flags & NPK_MGK_ALL_LANES) ? LANES * s->m_ifp : s->cin;
    w->tapmap = malloc((size_t)w->taps * sizeof *w->tapmap);
    w->rowbuf = malloc((size_t)w->taps * 2 * LANES);
    if (!w->tapmap || !w->rowbuf) {
        free(w->tapmap);
        free(w->rowbuf);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    for (int t = 0; t < w->taps; t++) w->tapmap[t] = t;
    if (s->flags & NPK_MGK_NATIVE_3X3) /* middle row stored right to left */
        for (int col = 0; col < 3; col++) w->tapmap[3 + col] = 3 + (2 - col);
    w->simd = simd_level();
    w->mask_out = w->mask_in = NULL;
#if defined(MGK_HAVE_SSSE3_PATH)
    if (w->simd == 2 && w->taps > 1 && w->taps < SSE2_TAPS_MIN) {
        size_t n = (size_t)w->taps * (size_t)w->taps * 16;
        w->mask_out = malloc(2 * n);
        if (w->mask_out) {
            w->mask_in = w->mask_out + n;
            make_masks(w->taps, w->mask_out, w->mask_in);
        }
    }
#endif
    return NPK_OK;
}

static void walk_free(walk *w)
{
    free(w->tapmap);
    free(w->rowbuf);
    free(w->mask_out);
}

/* Decode out lanes [co, co + rows) (rows = 1 or 2) of in group m into OIHW. */
static ALWAYS_INLINE void decode_rows(const walk *w, const uint8_t *group, uint8_t *d0, uint8_t *d1,
                                      int co, int rows, int cim, int planes, int bits,
                                      uint64_t flip, uint64_t ext)
{
    const size_t tile_bytes = (size_t)planes * PLANE;
    const int T = w->taps;
    uint8_t *rb = w->rowbuf;
    uint64_t v[4];
    if (T == 1 && rows == 2 && cim == LANES && w->simd) {
        dec2(group, co, planes, bits, flip, ext, d0, d1);
        return;
    }
    for (int t = 0; t < T; t++) {
        const uint8_t *tile = group + (size_t)w->tapmap[t] * tile_bytes;
        if (rows == 2 && w->simd) {
            dec2(tile, co, planes, bits, flip, ext, rb + t * LANES, rb + (T + t) * LANES);
        } else {
            for (int r = 0; r < rows; r++) {
                row_decode(tile, co + r, planes, bits, flip, ext, v);
                for (int g = 0; g < 4; g++) npk_st64le(rb + (r * T + t) * LANES + 8 * g, v[g]);
            }
        }
    }
    if (T == 1) {
        memcpy(d0, rb, (size_t)cim);
        if (rows == 2) memcpy(d1, rb + LANES, (size_t)cim);
        return;
    }
    taps_out(w, d0, rb, cim, T);
    if (rows == 2) taps_out(w, d1, rb + T * LANES, cim, T);
}

static ALWAYS_INLINE void encode_rows(const walk *w, uint8_t *group, const uint8_t *s0,
                                      const uint8_t *s1, int co, int rows, int cim, int planes,
                                      int bits, uint64_t flip, uint64_t low, uint64_t ext)
{
    const size_t tile_bytes = (size_t)planes * PLANE;
    const int T = w->taps;
    uint8_t *rb = w->rowbuf;
    const bool pair = rows == 2 && w->simd;
    if (T == 1 && pair && cim == LANES) {
        enc2(group, co, planes, flip, low, s0, s1);
        return;
    }
    if (pair && cim < LANES) {
        /* Start from the current values so padding lanes re-encode to their own bytes. */
        for (int t = 0; t < T; t++)
            dec2(group + (size_t)w->tapmap[t] * tile_bytes, co, planes, bits, flip, ext,
                 rb + t * LANES, rb + (T + t) * LANES);
    } else if (cim < LANES) {
        memset(rb, 0, (size_t)T * 2 * LANES);
    }
    if (T == 1) {
        memcpy(rb, s0, (size_t)cim);
        if (rows == 2) memcpy(rb + LANES, s1, (size_t)cim);
    } else {
        taps_in(w, rb, s0, cim, T);
        if (rows == 2) taps_in(w, rb + T * LANES, s1, cim, T);
    }
    uint64_t keep = cim == LANES ? ~0ull : (1ull << (2 * cim)) - 1;
    for (int t = 0; t < T; t++) {
        uint8_t *tile = group + (size_t)w->tapmap[t] * tile_bytes;
        if (pair) {
            enc2(tile, co, planes, flip, low, rb + t * LANES, rb + (T + t) * LANES);
            continue;
        }
        for (int r = 0; r < rows; r++) {
            uint64_t v[4];
            for (int g = 0; g < 4; g++) v[g] = npk_ld64le(rb + (r * T + t) * LANES + 8 * g);
            row_encode(tile, co + r, planes, flip, low, v, keep);
        }
    }
}

static ALWAYS_INLINE void decode_all(const walk *w, const uint8_t *block, int8_t *oihw, int planes,
                                     int bits, uint64_t flip, uint64_t ext)
{
    const size_t tile_bytes = (size_t)planes * PLANE;
    const size_t T = (size_t)w->taps, cin = (size_t)w->cin;
    uint8_t *out = (uint8_t *)oihw;
    for (int n = 0; n < w->n_ofp; n++) {
        int co_end = w->cout - LANES * n < LANES ? w->cout - LANES * n : LANES;
        for (int m = 0; m < w->m_ifp; m++) {
            int cim = w->cin - LANES * m < LANES ? w->cin - LANES * m : LANES;
            const uint8_t *group = block + (size_t)(n * w->m_ifp + m) * T * tile_bytes;
            for (int co = 0; co < co_end; co += 2) {
                int rows = co + 1 < co_end ? 2 : 1;
                uint8_t *d0 = out + ((size_t)(LANES * n + co) * cin + (size_t)LANES * m) * T;
                decode_rows(w, group, d0, d0 + cin * T, co, rows, cim, planes, bits, flip, ext);
            }
        }
    }
}

static ALWAYS_INLINE void encode_all(const walk *w, const int8_t *oihw, uint8_t *block, int planes,
                                     int bits, uint64_t flip, uint64_t low, uint64_t ext)
{
    const size_t tile_bytes = (size_t)planes * PLANE;
    const size_t T = (size_t)w->taps, cin = (size_t)w->cin;
    const uint8_t *in = (const uint8_t *)oihw;
    for (int n = 0; n < w->n_ofp; n++) {
        int co_end = w->cout - LANES * n < LANES ? w->cout - LANES * n : LANES;
        for (int m = 0; m < w->m_ifp; m++) {
            int cim = w->cin - LANES * m < LANES ? w->cin - LANES * m : LANES;
            uint8_t *group = block + (size_t)(n * w->m_ifp + m) * T * tile_bytes;
            for (int co = 0; co < co_end; co += 2) {
                int rows = co + 1 < co_end ? 2 : 1;
                const uint8_t *s0 = in + ((size_t)(LANES * n + co) * cin + (size_t)LANES * m) * T;
                encode_rows(w, group, s0, s0 + cin * T, co, rows, cim, planes, bits, flip, low,
                            ext);
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

/* Index of the first value outside [lo, hi], or n. Checks in branch-free
 * chunks so the common (valid) case vectorises. */
static size_t first_out_of_range(const int8_t *v, size_t n, int lo, int hi)
{
    enum { CHUNK = 4096 };
    const uint8_t span = (uint8_t)(hi - lo), ulo = (uint8_t)lo;
    size_t i = 0;
    for (; i + CHUNK <= n; i += CHUNK) { /* constant trip count: vectorised at -O2 */
        const uint8_t *p = (const uint8_t *)v + i;
        uint8_t bad = 0;
        for (int k = 0; k < CHUNK; k++) bad |= (uint8_t)((uint8_t)(p[k] - ulo) > span);
        if (bad) break;
    }
    for (; i < n; i++)
        if (v[i] < lo || v[i] > hi) return i;
    return n;
}

npk_status npk_mgk_nmhw_encode(const npk_mgk_wshape *s, const int8_t *oihw, uint8_t *block,
                               size_t block_len, npk_error *err)
{
    size_t need, count;
    npk_status st = npk_mgk_wshape_check(s, &need, &count, err);
    if (st) return st;
    if (block_len < need)
        return npk_fail(err, NPK_E_ARG, "weight block of %zu bytes, the shape needs %zu", block_len,
                        need);
    if (s->bits < 8) {
        int lo = -(1 << (s->bits - 1)), hi = (1 << (s->bits - 1)) - 1;
        size_t bad = first_out_of_range(oihw, count, lo, hi);
        if (bad < count)
            return npk_fail(err, NPK_E_ARG,
                            "value %d at index %zu is outside the %d-bit range [%d, %d]", oihw[bad],
                            bad, s->bits, lo, hi);
    }
    walk w;
    if ((st = walk_init(s, &w, err))) return st;
    wconst k = make_const(s->bits);
    switch (s->bits) {
    case 8: encode_all(&w, oihw, block, 4, 8, 0x8080808080808080ull, ~0ull, 0); break;
    case 6: encode_all(&w, oihw, block, 3, 6, k.flip, k.low, k.ext); break;
    case 4: encode_all(&w, oihw, block, 2, 4, k.flip, k.low, k.ext); break;
    default: encode_all(&w, oihw, block, 1, 2, k.flip, k.low, k.ext); break;
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
