/* The integer DPU for int8 outputs on AVX2, fused: every stage of a
 * 16-channel output atom in registers, atom by atom over the task's pixels
 * (the channels' operands loaded once per atom, each atom written as one
 * 16-byte store), instead of stage by stage over memory. The convolutions
 * call it on each block of output pixels right after the block's sums are
 * made (emu_conv8.c, emu_conv.c), so the sums are read from cache.
 *
 * The arithmetic is emu_exec.c's, step for step, on int64 lanes holding
 * int32 values. A saturation (or clamp) is left out only where the task's
 * bounds prove it cannot change a value: |sum| <= 2^14 x the products per
 * output, |window sum| <= 2^7 x the inputs per window, and each stage's
 * largest operands; the final clamp to int8 is the narrowing's own
 * saturation (packssdw, packsswb) when the value is proven to fit int32. */
#include <string.h>

#include "emu_internal.h"

#include "emu_avx2.h"
#include "emu_dpu8_fast.h"

#ifdef NPK_RK_EMU_AVX2
#define CAP ((uint64_t)1 << 62)
#define I32 ((uint64_t)INT32_MAX)

static uint64_t mul_cap(uint64_t a, uint64_t b)
{
    return a && b > CAP / a ? CAP : a * b > CAP ? CAP : a * b;
}

/* The largest |v[i]| (|INT32_MIN| = 2^31: vpabsd's result read unsigned). */
static AVX2 uint64_t max_abs(const int32_t *v, size_t n)
{
    __m256i m8 = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        m8 = _mm256_max_epu32(
            m8, _mm256_abs_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(v + i))));
    uint32_t l[8];
    _mm256_storeu_si256((__m256i *)(void *)l, m8);
    uint64_t m = 0;
    for (int j = 0; j < 8; j++) m = l[j] > m ? l[j] : m;
    for (; i < n; i++) {
        uint64_t a = v[i] < 0 ? (uint64_t)(-(int64_t)v[i]) : (uint64_t)v[i];
        m = a > m ? a : m;
    }
    return m;
}

typedef emu_dpu8_step step;
typedef emu_dpu8 plan;

/* Bounds through the stages; false when a stage is outside what is fused. */
static AVX2 bool make_plan(const emu_task *t, const int32_t *ops, plan *pl)
{
    size_t N = t->n, Ceff = t->dw ? 1 : t->c, taps = (size_t)t->kw * t->kh;
    uint64_t b = mul_cap((uint64_t)1 << 14, mul_cap(taps, Ceff));
    if (b > I32) b = I32 + 1; /* wrapped int32 sums: any int32 */
    pl->cpend = t->cpend, pl->dw = t->dw, pl->ow = t->ow_op, pl->start_sat = false;
    if (t->cpend) {
        uint64_t s = mul_cap((uint64_t)1 << 7, mul_cap(taps, Ceff));
        if (s > I32) s = I32 + 1;
        b += mul_cap(s, (uint64_t)(t->ow_op < 0 ? -(int64_t)t->ow_op : t->ow_op));
        if (b > I32) pl->start_sat = true, b = I32 + 1;
    }
    const emu_stage *sg[3] = {&t->bs, &t->bn, &t->ew};
    for (int k = 0; k < 3; k++) {
        const emu_stage *s = sg[k];
        step *p = &pl->st[k];
        memset(p, 0, sizeof *p);
        if (!s->on) continue;
        if (s->op_mem || (s->mul && s->shift > 62)) return false;
        p->on = true;
        p->addv = ops + 2 * k * N, p->mulv = ops + (2 * k + 1) * N;
        if (s->add) {
            p->add = true;
            b += max_abs(p->addv, N);
            if (b > I32) p->add_sat = true, b = I32 + 1;
        }
        if (s->mul) {
            p->mul = true, p->shift = s->shift;
            uint64_t m = mul_cap(b, max_abs(p->mulv, N));
            b = m >= CAP ? CAP : (m + ((uint64_t)1 << s->shift) - 1) >> s->shift;
            if (b > I32) p->mul_sat = true, b = I32 + 1;
        }
        p->relu = s->relu, p->relux = s->relux, p->cap = (int32_t)s->relux_cmp;
    }
    if (t->cvt_scale > INT32_MAX || t->cvt_shift > 62) return false;
    pl->scale = t->cvt_scale, pl->shift = t->cvt_shift, pl->offset = t->cvt_offset;
    pl->round = t->cvt_shift ? (int64_t)1 << (t->cvt_shift - 1) : 0;
    pl->cvt_in = b;
    uint64_t m = mul_cap(b, t->cvt_scale) + (uint64_t)pl->round;
    b = m >= CAP ? CAP : (m + ((uint64_t)1 << t->cvt_shift) - 1) >> t->cvt_shift;
    b += (uint64_t)(t->cvt_offset < 0 ? -(int64_t)t->cvt_offset : t->cvt_offset);
    pl->out_sat = b > I32;
    return true;
}

/* The 16 channels of one atom, four lanes per vector. */
static AVX2 void atom_rows(const plan *pl, const emu_task *t, const uint32_t *c,
                           const int32_t *sums, size_t ch0, uint8_t *dst, size_t P)
{
    const size_t N = t->n;
    const __m256i lo32 = _mm256_set1_epi64x(INT32_MIN), hi32 = _mm256_set1_epi64x(INT32_MAX);
    const __m256i lo8 = _mm256_set1_epi64x(-128), hi8 = _mm256_set1_epi64x(127);
    const __m256i zero = _mm256_setzero_si256(), owv = _mm256_set1_epi64x(pl->ow);
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i scale = _mm256_set1_epi64x(pl->scale), round = _mm256_set1_epi64x(pl->round);
    const __m256i offset = _mm256_set1_epi64x(pl->offset);
    const __m128i osh = _mm_cvtsi32_si128((int)pl->shift);
    __m256i add[3][4], mul[3][4], cap[3];
    __m128i sh[3];
    for (int k = 0; k < 3; k++) {
        const step *s = &pl->st[k];
        for (int q = 0; q < 4; q++) {
            add[k][q] = s->add ? ld32x4(s->addv + ch0 + 4 * q) : zero;
            mul[k][q] = s->mul ? ld32x4(s->mulv + ch0 + 4 * q) : zero;
        }
        cap[k] = _mm256_set1_epi64x(s->cap);
        sh[k] = _mm_cvtsi32_si128((int)s->shift);
    }
    for (size_t p = 0; p < P; p++, dst += 16) {
        const int32_t *cp = (const int32_t *)(const void *)(c + p * N + ch0);
        __m256i v[4];
        __m256i s0 = zero;
        if (pl->cpend && !pl->dw) s0 = _mm256_set1_epi64x(pl->ow * sums[p]);
        for (int q = 0; q < 4; q++) {
            __m256i x = ld32x4(cp + 4 * q);
            if (pl->cpend) {
                __m256i a = pl->dw ? _mm256_mul_epi32(owv, ld32x4(sums + p * N + ch0 + 4 * q)) : s0;
                x = _mm256_add_epi64(x, a);
                if (pl->start_sat) x = clamp64(x, lo32, hi32);
            }
            for (int k = 0; k < 3; k++) {
                const step *s = &pl->st[k];
                if (!s->on) continue;
                if (s->add) {
                    x = _mm256_add_epi64(x, add[k][q]);
                    if (s->add_sat) x = clamp64(x, lo32, hi32);
                }
                if (s->mul) {
                    x = _mm256_mul_epi32(x, mul[k][q]);
                    if (s->shift) x = sar64(x, sh[k]);
                    if (s->mul_sat) x = clamp64(x, lo32, hi32);
                }
                if (s->relu) x = _mm256_blendv_epi8(x, zero, _mm256_cmpgt_epi64(zero, x));
                if (s->relux) x = _mm256_blendv_epi8(x, cap[k], _mm256_cmpgt_epi64(x, cap[k]));
            }
            x = _mm256_mul_epi32(x, scale);
            if (pl->shift) x = sar64(_mm256_add_epi64(x, round), osh);
            x = _mm256_add_epi64(x, offset);
            if (pl->out_sat) x = clamp64(x, lo8, hi8);
            v[q] = _mm256_permutevar8x32_epi32(x, idx); /* low halves in lanes 0-3 */
        }
        const __m128i w0 =
            _mm_packs_epi32(_mm256_castsi256_si128(v[0]), _mm256_castsi256_si128(v[1]));
        const __m128i w1 =
            _mm_packs_epi32(_mm256_castsi256_si128(v[2]), _mm256_castsi256_si128(v[3]));
        _mm_storeu_si128((__m128i *)(void *)dst, _mm_packs_epi16(w0, w1));
    }
}

/* The common case, with its steps fixed at compile time (no branches in
 * the loop): CPEND without saturation (or, depthwise, none: emu_conv.c
 * folds it into the weights), BS add (unsaturated) and multiply,
 * BN add and multiply by 2^-shift (shift <= 32, proven within int32), no
 * ReLU, no EW, OUT_CVT with shift <= 32 proven within int32. Where a step's
 * value is proven to fit int32 the shift is a logical one (its low 32 bits
 * are the arithmetic shift's), and the next step reads only those bits
 * (vpmuldq, the narrowing). */
static bool is_common(const plan *pl)
{
    const step *bs = &pl->st[0], *bn = &pl->st[1];
    return (pl->cpend || pl->dw) && !pl->start_sat && bs->on && bs->add && !bs->add_sat &&
           bs->mul && !bs->relu && !bs->relux && bn->on && bn->add && bn->mul && !bn->mul_sat &&
           bn->shift <= 32 && !bn->relu && !bn->relux && !pl->st[2].on && !pl->out_sat &&
           pl->shift <= 32;
}

static AVX2 inline __attribute__((always_inline)) void
common_rows(const plan *pl, const emu_task *t, const uint32_t *c, size_t ldc, size_t coff,
            const int32_t *sums, size_t ch0, uint8_t *dst, const bool dw, const bool cp, size_t p0,
            size_t P)
{
    const size_t N = t->n;
    const __m256i lo32 = _mm256_set1_epi64x(INT32_MIN), hi32 = _mm256_set1_epi64x(INT32_MAX);
    const __m256i owv = _mm256_set1_epi64x(pl->ow);
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i scale = _mm256_set1_epi64x(pl->scale), round = _mm256_set1_epi64x(pl->round);
    const __m128i offset = _mm_set1_epi32((int32_t)pl->offset);
    const __m128i osh = _mm_cvtsi32_si128((int)pl->shift);
    const step *bs = &pl->st[0], *bn = &pl->st[1];
    const __m128i bssh = _mm_cvtsi32_si128((int)bs->shift),
                  bnsh = _mm_cvtsi32_si128((int)bn->shift);
    __m256i a0[4], m0[4], a1[4], m1[4];
    for (int q = 0; q < 4; q++) {
        a0[q] = ld32x4(bs->addv + ch0 + 4 * q), m0[q] = ld32x4(bs->mulv + ch0 + 4 * q);
        a1[q] = ld32x4(bn->addv + ch0 + 4 * q), m1[q] = ld32x4(bn->mulv + ch0 + 4 * q);
    }
    for (size_t p = p0; p < P; p++, dst += 16) {
        const int32_t *cr = (const int32_t *)(const void *)(c + p * ldc + coff);
        const __m256i s0 = dw || !cp ? owv : _mm256_set1_epi64x(pl->ow * sums[p] + 0);
        __m128i v[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            __m256i x = ld32x4(cr + 4 * q);
            if (cp)
                x = _mm256_add_epi64(
                    x, dw ? _mm256_mul_epi32(s0, ld32x4(sums + p * N + ch0 + 4 * q)) : s0);
            x = _mm256_mul_epi32(_mm256_add_epi64(x, a0[q]), m0[q]);
            if (bs->shift) x = sar64(x, bssh);
            x = clamp64(x, lo32, hi32);
            x = clamp64(_mm256_add_epi64(x, a1[q]), lo32, hi32);
            x = _mm256_srl_epi64(_mm256_mul_epi32(x, m1[q]), bnsh);
            x = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(x, scale), round), osh);
            v[q] = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x, idx));
        }
        const __m128i w0 =
            _mm_packs_epi32(_mm_add_epi32(v[0], offset), _mm_add_epi32(v[1], offset));
        const __m128i w1 =
            _mm_packs_epi32(_mm_add_epi32(v[2], offset), _mm_add_epi32(v[3], offset));
        _mm_storeu_si128((__m128i *)(void *)dst, _mm_packs_epi16(w0, w1));
    }
}

/* The common case again, eight int32 lanes per vector, where the values
 * stay within int32 (checked per pixel instead of clamped per lane; a pixel
 * that fails the check goes through common_rows): the BS product and the
 * BN add when |x| <= (INT32_MAX - |BN add|) / |BS multiplier| per channel
 * (then vpmulld is exact and both saturations idle). The BN product takes int64 lanes (vpmuldq on
 * the even and odd lanes), its shift a logical one (the result is proven within int32). OUT_CVT
 * with scale 2^a and shift s > a rounds as floor((x + 2^(s-a-1)) / 2^(s-a)) = (x >> (s-a)) + bit
 * (s-a-1) of x. */
static bool is_fast(const plan *pl)
{
    const step *bs = &pl->st[0], *bn = &pl->st[1];
    if (!is_common(pl) || bs->shift || bn->shift > 32 || pl->scale <= 0 ||
        (pl->scale & (pl->scale - 1)))
        return false;
    unsigned a = 0;
    while (((int64_t)1 << a) < pl->scale) a++;
    return pl->shift > a;
}

static AVX2 inline __attribute__((always_inline)) void
fast_rows(const plan *pl, const emu_task *t, const uint32_t *c, const int32_t *sums, size_t ch0,
          uint8_t *dst, const bool dw, const bool cp, const bool chk, size_t P)
{
    const size_t N = t->n;
    emu_fast_atom k;
    emu_fast_task(pl, &k);
    emu_fast_atom_load(pl, ch0, &k);
    for (size_t p = 0; p < P; p++, dst += 16) {
        const __m256i *cr = (const __m256i *)(const void *)(c + p * N + ch0);
        const __m256i s0 = _mm256_set1_epi32(dw || !cp ? 0 : (int32_t)(pl->ow * sums[p]));
        __m256i x[2];
        for (int q = 0; q < 2; q++) {
            x[q] = _mm256_loadu_si256(cr + q);
            if (cp)
                x[q] = _mm256_add_epi32(
                    x[q],
                    dw ? _mm256_mullo_epi32(
                             k.owv, _mm256_loadu_si256(
                                        (const __m256i *)(const void *)(sums + p * N + ch0) + q))
                       : s0);
        }
        if (!emu_fast_pixel(&k, x[0], x[1], chk, false, dst))
            common_rows(pl, t, c, N, ch0, sums, ch0, dst, dw, cp, p, p + 1);
    }
}

#define ROWS(NAME, BODY)                                                                           \
    static AVX2 void NAME(const plan *pl, const emu_task *t, const uint32_t *c,                    \
                          const int32_t *sums, size_t ch0, uint8_t *dst, size_t P)                 \
    {                                                                                              \
        BODY;                                                                                      \
    }
ROWS(fast_rows_dw, fast_rows(pl, t, c, sums, ch0, dst, true, true, true, P))
ROWS(fast_rows_dw0, fast_rows(pl, t, c, sums, ch0, dst, true, false, true, P))
ROWS(fast_rows_direct, fast_rows(pl, t, c, sums, ch0, dst, false, true, true, P))
/* the same where every channel of the atom is proven safe (emu_dpu8_safe) */
ROWS(fast_rows_dw0_safe, fast_rows(pl, t, c, sums, ch0, dst, true, false, false, P))
ROWS(fast_rows_direct_safe, fast_rows(pl, t, c, sums, ch0, dst, false, true, false, P))
ROWS(common_rows_dw, common_rows(pl, t, c, t->n, ch0, sums, ch0, dst, true, true, 0, P))
ROWS(common_rows_dw0, common_rows(pl, t, c, t->n, ch0, sums, ch0, dst, true, false, 0, P))
ROWS(common_rows_direct, common_rows(pl, t, c, t->n, ch0, sums, ch0, dst, false, true, 0, P))

AVX2 void emu_dpu8_pixel(const emu_dpu8 *d, const emu_task *t, const uint32_t *c16, int32_t sum,
                         size_t ch0, uint8_t *dst)
{
    common_rows(d, t, c16, 0, 0, &sum, ch0, dst, false, d->cpend, 0, 1);
}

typedef void rows_fn(const plan *, const emu_task *, const uint32_t *, const int32_t *, size_t,
                     uint8_t *, size_t);

bool emu_dpu8_plan(const emu_task *t, const int32_t *ops, int32_t *th, emu_dpu8 *d)
{
    if (t->fp || !t->out_int8 || t->out_size != 1 || t->group % 16 || !make_plan(t, ops, d))
        return false;
    d->loop = is_fast(d) ? 2 : is_common(d) ? 1 : 0;
    d->th = th;
    d->safe = NULL;
    /* th = floor((INT32_MAX - |a1|) / |m0|): |x| <= th keeps the BS product
     * x m0 and the BN add x m0 + a1 within int32. Through a double division:
     * exact for the int16 multipliers (the rounded quotient is within 2^-22
     * of the true one, which is an integer or at least 2^-15 from the next);
     * per-tensor layers repeat one pair, computed once. */
    if (d->loop == 2)
        for (size_t ch = 0; ch < t->n; ch++) {
            const int32_t m = d->st[0].mulv[ch], a1 = d->st[1].addv[ch];
            if (ch && m == d->st[0].mulv[ch - 1] && a1 == d->st[1].addv[ch - 1]) {
                th[ch] = th[ch - 1];
                continue;
            }
            const double a = m < 0 ? -(double)m : (double)m;
            const double r = (double)INT32_MAX - (a1 < 0 ? -(double)a1 : (double)a1);
            th[ch] = r < 0 ? -1 : a > 0 ? (int32_t)(r / a) : INT32_MAX;
        }
    return true;
}

void emu_dpu8_safe(emu_dpu8 *d, const emu_task *t, const uint64_t *bound, uint8_t *safe)
{
    if (d->loop != 2) return;
    const emu_dpu8_step *bs = &d->st[0], *bn = &d->st[1];
    for (size_t a = 0; a < (t->n + 15) / 16; a++) {
        bool ok = 16 * a + 16 <= t->n; /* a partial atom (not seen) stays checked */
        for (size_t ch = 16 * a; ch < 16 * a + 16 && ok; ch++) {
            /* |x| <= th after the BS add: the BS product is exact in int32 */
            const uint64_t x =
                bound[ch] + (uint64_t)(bs->addv[ch] < 0 ? -(int64_t)bs->addv[ch] : bs->addv[ch]);
            const uint64_t m = (uint64_t)(bs->mulv[ch] < 0 ? -(int64_t)bs->mulv[ch] : bs->mulv[ch]);
            const uint64_t a1 =
                (uint64_t)(bn->addv[ch] < 0 ? -(int64_t)bn->addv[ch] : bn->addv[ch]);
            /* and the BN add does not leave int32 */
            ok = x <= (uint64_t)d->th[ch] && x * m + a1 <= (uint64_t)INT32_MAX;
        }
        safe[a] = ok;
    }
    d->safe = safe;
}

void emu_dpu8_rows(const emu_dpu8 *d, const emu_task *t, const uint32_t *c, const int32_t *sums,
                   size_t p0, size_t np)
{
    const bool dw = t->dw, dw0 = dw && !d->cpend;
    rows_fn *rows = d->loop == 2   ? dw0  ? fast_rows_dw0
                                     : dw ? fast_rows_dw
                                          : fast_rows_direct
                    : d->loop == 1 ? dw0  ? common_rows_dw0
                                     : dw ? common_rows_dw
                                          : common_rows_direct
                                   : atom_rows;
    rows_fn *safe = d->loop != 2 || !d->safe || (dw && !dw0) ? rows
                    : dw0                                    ? fast_rows_dw0_safe
                                                             : fast_rows_direct_safe;
    for (size_t g0 = 0, gi = 0; g0 < t->n; g0 += t->group, gi++)
        for (size_t sub = 0, ai = 0; sub < t->group && g0 + sub < t->n; sub += 16, ai++)
            (d->safe && d->safe[(g0 + sub) / 16] ? safe : rows)(
                d, t, c, sums, g0 + sub, t->out + gi * t->surf_add + ai * t->dst_surf + p0 * 16,
                np);
}
#else
void emu_dpu8_pixel(const emu_dpu8 *d, const emu_task *t, const uint32_t *c16, int32_t sum,
                    size_t ch0, uint8_t *dst)
{
    (void)d, (void)t, (void)c16, (void)sum, (void)ch0, (void)dst;
}

void emu_dpu8_safe(emu_dpu8 *d, const emu_task *t, const uint64_t *bound, uint8_t *safe)
{
    (void)d, (void)t, (void)bound, (void)safe;
}

bool emu_dpu8_plan(const emu_task *t, const int32_t *ops, int32_t *th, emu_dpu8 *d)
{
    (void)t, (void)ops, (void)th, (void)d;
    return false;
}

void emu_dpu8_rows(const emu_dpu8 *d, const emu_task *t, const uint32_t *c, const int32_t *sums,
                   size_t p0, size_t np)
{
    (void)d, (void)t, (void)c, (void)sums, (void)p0, (void)np;
}
#endif
