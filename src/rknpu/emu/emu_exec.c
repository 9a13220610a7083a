/* The data path of one decoded task: CNA reads (feature cube, packed
 * weights), the CORE multiply, the DPU stages and the output write. Device
 * memory is little-endian; every read and write goes through explicit byte
 * order so the model is the same on big-endian hosts. */
#include <string.h>

#include "emu_internal.h"
#include "npukit/bytes.h"
#include "npukit/half.h"

static bool host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* n little-endian fp16 values at src -> floats. */
static void halves_to_f32(const uint8_t *src, size_t n, uint16_t *tmp, float *dst)
{
    if (host_is_le())
        memcpy(tmp, src, n * 2);
    else
        for (size_t i = 0; i < n; i++) tmp[i] = npk_ld16le(src + 2 * i);
    npk_f16_to_f32_n(tmp, dst, n);
}

/* The C2-channel atoms of surface `cp` for every pixel, one after another
 * (P x C2 elements): contiguous when lines are packed, else line by line. */
static const uint8_t *surface_atoms(const emu_task *t, uint32_t cp, uint8_t *tmp)
{
    const uint8_t *s = t->in + (uint64_t)cp * t->surf_pitch;
    size_t line = (size_t)t->w * 16;
    if (t->line_pitch == line || t->h == 1) return s;
    for (uint32_t h = 0; h < t->h; h++) memcpy(tmp + h * line, s + h * t->line_pitch, line);
    return tmp;
}

/* ---- fp16 x fp16 -> fp32 ---- */

static npk_status run_fp(npk_rk_emu *e, const emu_task *t, float *c, const emu_where *w,
                         npk_error *err)
{
    size_t P = (size_t)t->w * t->h, K = t->c, N = t->n;
    size_t panels = (P + EMU_MR - 1) / EMU_MR;
    float *ap = emu_scratch_get(&e->a, panels * EMU_MR * K * sizeof(float));
    float *bp = emu_scratch_get(&e->b, K * N * sizeof(float));
    /* Staging for A (P x 8 halves, their floats, gathered lines) or for one
     * weight group (16 x K halves and their floats). */
    size_t tbytes = P * 64 > K * 96 ? P * 64 : K * 96;
    uint8_t *tmp = emu_scratch_get(&e->t, tbytes);
    if (!ap || !bp || !tmp) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");

    /* A: ceil(P/MR) panels of K x MR; rows past P are zero. */
    uint16_t *h16 = (uint16_t *)(void *)tmp;
    float *f = (float *)(void *)(tmp + P * 16);
    uint8_t *lines = tmp + P * 16 + P * 8 * sizeof(float);
    if (P % EMU_MR) {
        float *last = ap + (panels - 1) * K * EMU_MR;
        memset(last, 0, K * EMU_MR * sizeof(float));
    }
    for (uint32_t cp = 0; cp < K / 8; cp++) {
        halves_to_f32(surface_atoms(t, cp, lines), P * 8, h16, f);
        for (size_t p = 0; p < P; p++) {
            float *dst = ap + (p / EMU_MR) * K * EMU_MR + (size_t)cp * 8 * EMU_MR + p % EMU_MR;
            const float *src = f + p * 8;
            for (int j = 0; j < 8; j++) dst[j * EMU_MR] = src[j];
        }
    }

    /* B: the weight groups of 16 kernels are the NR = 16 panels; each
     * 16 x 32 block (kernel-major) is transposed to 32 rows of 16. */
    float *g = (float *)(void *)(tmp + 32 * K);
    for (size_t grp = 0; grp < N / 16; grp++) {
        halves_to_f32(t->wt + grp * 16 * K * 2, 16 * K, h16, g);
        float *panel = bp + grp * K * EMU_NR;
        for (size_t kb = 0; kb < K / 32; kb++) {
            const float *blk = g + kb * 512;
            for (int kk = 0; kk < 32; kk++)
                for (int n = 0; n < 16; n++) panel[(kb * 32 + kk) * EMU_NR + n] = blk[n * 32 + kk];
        }
    }
    emu_gemm_f32(e->simd, P, N, K, ap, bp, c);
    return NPK_OK;
}

/* ---- DPU ---- */

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A stage's operands for channel ch: the register's, or the channel's
 * record in the read-DMA stream (little-endian). */
static uint32_t alu_operand(const emu_stage *s, size_t ch)
{
    return s->add_mem ? npk_ld32le(s->stream + ch * s->stream_rec) : s->add_op;
}

static uint32_t mul_operand(const emu_stage *s, size_t ch)
{
    return s->mul_mem ? npk_ld32le(s->stream + ch * s->stream_rec + s->mul_at) & 0xFFFFu
                      : s->mul_op;
}

static float stage_fp(const emu_stage *s, bool ew, float x, size_t ch, size_t p)
{
    if (!s->on) return x;
    if (s->op_mem && s->ew_esize == 2) /* fp16 elements (the fp16 add), 8 channels per atom */
        x += npk_f16_to_f32(npk_ld16le(s->ew_src + (ch / 8) * s->ew_surf + p * 16 + (ch % 8) * 2));
    else if (s->op_mem) /* fp32 partial sums (K-split), 4 channels per atom */
        x += bits_f32(npk_ld32le(s->ew_src + (ch / 4) * s->ew_surf + p * 16 + (ch % 4) * 4));
    else if (s->add)
        x += bits_f32(alu_operand(s, ch));
    if (s->mul) x *= ew ? bits_f32(s->mul_op) : npk_f16_to_f32((uint16_t)mul_operand(s, ch));
    if (s->relu && x < 0.0f) x = 0.0f;
    if (s->relux && x > bits_f32(s->relux_cmp)) x = bits_f32(s->relux_cmp);
    return x;
}

static inline int64_t sat32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}

/* Arithmetic shift right (floor division by 2^s) without relying on how
 * the compiler shifts negative numbers. */
static inline int64_t sar(int64_t v, unsigned s)
{
    if (s > 62) return v < 0 ? -1 : 0;
    /* For v < 0, ~v = -v - 1 >= 0 and floor(v / 2^s) = -((-v - 1) >> s) - 1;
     * computed without branches on the sign (a conditional move). */
    uint64_t m = v < 0 ? ~(uint64_t)0 : 0;
    int64_t q = (int64_t)(((uint64_t)v ^ m) >> s);
    return v < 0 ? -q - 1 : q;
}

/* The element-wise operand of pixel p, channel ch from ERDMA, through the
 * operand conversion (x + offset) * scale >> shift (floor; guessed). */
static int64_t ew_operand(const emu_stage *s, size_t p, size_t ch)
{
    if (s->ew_esize == 4) /* int32 partial sums (K-split), no conversion */
        return (int32_t)npk_ld32le(s->ew_src + (ch / 4) * s->ew_surf + p * 16 + (ch % 4) * 4);
    int64_t v = (int8_t)s->ew_src[(ch / 16) * s->ew_surf + p * 16 + ch % 16];
    if (s->cvt) v = sat32(sar((v + s->cvt_off) * (int64_t)s->cvt_scale, s->cvt_shift));
    return v;
}

/* A stage's register or per-channel operands, loaded once per task: the
 * ALU operand and the multiplier of every channel. */
static void stage_operands(const emu_stage *s, bool ew, size_t n, int32_t *add, int32_t *mul)
{
    /* one loop per case (the flags tested once, not per channel); nothing
     * for a step that does not run: every reader tests on, add and mul
     * first (stage_row, stage_row_avx2, emu_dpu8.c) */
    if (s->on && s->add && s->add_mem)
        for (size_t ch = 0; ch < n; ch++)
            add[ch] = (int32_t)npk_ld32le(s->stream + ch * s->stream_rec);
    else if (s->on && s->add)
        for (size_t ch = 0; ch < n; ch++) add[ch] = (int32_t)s->add_op;
    if (s->on && s->mul && !ew && s->mul_mem)
        for (size_t ch = 0; ch < n; ch++)
            mul[ch] = (int16_t)(npk_ld32le(s->stream + ch * s->stream_rec + s->mul_at) & 0xFFFFu);
    else if (s->on && s->mul)
        for (size_t ch = 0; ch < n; ch++) mul[ch] = ew ? (int32_t)s->mul_op : (int16_t)s->mul_op;
}

/* One stage on the n channels of pixel p (x[ch]), with the channels'
 * operands at hand: each sub-step as its own loop over the channels, in the
 * order the hardware applies them (operand add, multiply and shift, ReLU,
 * ReLU-X), so the per-element arithmetic is the same and the flags are
 * tested once per pixel, not once per element. */
static void stage_row(const emu_stage *s, int64_t *x, size_t n, const int32_t *add,
                      const int32_t *mul, size_t p)
{
    if (s->op_mem)
        for (size_t ch = 0; ch < n; ch++) x[ch] = sat32(x[ch] + ew_operand(s, p, ch));
    else if (s->add)
        for (size_t ch = 0; ch < n; ch++) x[ch] = sat32(x[ch] + add[ch]);
    if (s->mul) {
        unsigned sh = s->shift;
        for (size_t ch = 0; ch < n; ch++) x[ch] = sat32(sar(x[ch] * mul[ch], sh));
    }
    if (s->relu)
        for (size_t ch = 0; ch < n; ch++) x[ch] = x[ch] < 0 ? 0 : x[ch];
    if (s->relux) {
        int64_t cap = (int32_t)s->relux_cmp;
        for (size_t ch = 0; ch < n; ch++) x[ch] = x[ch] > cap ? cap : x[ch];
    }
}

/* OUT_CVT on the integer path: round(x * scale / 2^shift) + offset (ties
 * up, docs/rknpu.md), saturated to the output type. */
typedef struct out_conv {
    uint32_t scale, shift;
    int32_t offset;
    bool out_int8;
} out_conv;

static inline int64_t out_cvt(const out_conv *t, int64_t x)
{
    int64_t v = x * (int64_t)t->scale;
    if (t->shift) v = sar(v + ((int64_t)1 << (t->shift - 1)), t->shift);
    v += t->offset;
    if (t->out_int8) return v > 127 ? 127 : v < -128 ? -128 : v;
    return sat32(v);
}

/* ---- the integer DPU on AVX2: the same steps on four int64 lanes ----
 *
 * Every value between steps is an int32 held in an int64 lane, so the
 * signed 32 x 32 -> 64 multiply (vpmuldq, the low half of each lane) gives
 * the exact product; floor shifts as in sar(); saturation as compares. */
#include "emu_avx2.h"
#ifdef NPK_RK_EMU_AVX2
#define HAVE_AVX2_DPU 1

static AVX2 inline __m256i ld64(const int64_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

static AVX2 inline void st64(int64_t *p, __m256i v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, v);
}

/* x = the sums, then + OW_OP x the window sums (sums: one per channel for
 * depthwise, else s0 for every channel), saturated. */
static AVX2 void row_start_avx2(int64_t *x, const uint32_t *c, size_t n, bool cpend, int64_t ow,
                                const int32_t *sums, bool per_channel)
{
    const __m256i lo = _mm256_set1_epi64x(INT32_MIN), hi = _mm256_set1_epi64x(INT32_MAX);
    const __m256i owv = _mm256_set1_epi64x(ow);
    __m256i s0 = _mm256_set1_epi64x(cpend && !per_channel ? ow * sums[0] : 0);
    for (size_t ch = 0; ch < n; ch += 4) {
        __m256i v = ld32x4((const int32_t *)(const void *)(c + ch));
        if (cpend) {
            __m256i a = per_channel ? _mm256_mul_epi32(owv, ld32x4(sums + ch)) : s0;
            v = clamp64(_mm256_add_epi64(v, a), lo, hi);
        }
        st64(x + ch, v);
    }
}

/* stage_row with no element-wise operand and shift <= 62. */
static AVX2 void stage_row_avx2(const emu_stage *s, int64_t *x, size_t n, const int32_t *add,
                                const int32_t *mul)
{
    const __m256i lo = _mm256_set1_epi64x(INT32_MIN), hi = _mm256_set1_epi64x(INT32_MAX);
    const __m256i rlo = s->relu ? _mm256_setzero_si256() : lo;
    const __m256i rhi = s->relux ? _mm256_set1_epi64x((int32_t)s->relux_cmp) : hi;
    const __m128i sh = _mm_cvtsi32_si128((int)s->shift);
    bool relu = s->relu || s->relux;
    for (size_t ch = 0; ch < n; ch += 4) {
        __m256i v = ld64(x + ch);
        if (s->add) v = clamp64(_mm256_add_epi64(v, ld32x4(add + ch)), lo, hi);
        if (s->mul) v = clamp64(sar64(_mm256_mul_epi32(v, ld32x4(mul + ch)), sh), lo, hi);
        if (relu) v = clamp64(v, rlo, rhi);
        st64(x + ch, v);
    }
}

/* out_cvt for scale <= INT32_MAX and shift <= 62. */
static AVX2 void row_out_avx2(const out_conv *q, int64_t *x, size_t n)
{
    const __m256i scale = _mm256_set1_epi64x(q->scale);
    const __m256i round = _mm256_set1_epi64x(q->shift ? (int64_t)1 << (q->shift - 1) : 0);
    const __m256i off = _mm256_set1_epi64x(q->offset);
    const __m256i lo = _mm256_set1_epi64x(q->out_int8 ? -128 : INT32_MIN);
    const __m256i hi = _mm256_set1_epi64x(q->out_int8 ? 127 : INT32_MAX);
    const __m128i sh = _mm_cvtsi32_si128((int)q->shift);
    for (size_t ch = 0; ch < n; ch += 4) {
        __m256i v = _mm256_mul_epi32(ld64(x + ch), scale);
        if (q->shift) v = sar64(_mm256_add_epi64(v, round), sh);
        st64(x + ch, clamp64(_mm256_add_epi64(v, off), lo, hi));
    }
}
#endif

/* Byte offset in the output of channel n of pixel p. */
static uint64_t out_offset(const emu_task *t, size_t p, size_t n)
{
    unsigned c2o = 16 / t->out_size;
    return (n / t->group) * t->surf_add + ((n % t->group) / c2o) * t->dst_surf + p * 16 +
           (n % c2o) * t->out_size;
}

/* The stages' operands per channel (add and multiply of BS, BN, EW), a
 * row of N for the fused DPU's thresholds, then N int64 of scratch; kept
 * across runs where emu_opcache.c can tell the streams are unchanged. */
static int32_t *emu_ops(npk_rk_emu *e, const emu_task *t, uint64_t *stamp)
{
    const size_t N = t->n, bytes = 7 * N * sizeof(int32_t) + (N + 1) * sizeof(int64_t);
    int32_t *ops = emu_opcache_find(e, t, stamp); /* unchanged since an earlier run */
    if (ops) return ops;
    *stamp = 0; /* scratch: filled again by every task */
    if (!(ops = emu_opcache_add(e, t, bytes, stamp)) && !(ops = emu_scratch_get(&e->ops, bytes)))
        return NULL;
    stage_operands(&t->bs, false, N, ops, ops + N);
    stage_operands(&t->bn, false, N, ops + 2 * N, ops + 3 * N);
    stage_operands(&t->ew, true, N, ops + 4 * N, ops + 5 * N);
    return ops;
}

/* emu_dpu8_plan, or the plan kept in memo: it is a function of the task
 * and of the operands (its thresholds are written after them, in the same
 * buffer), so it holds while the task reads the same filling of the kept
 * operands (stamp; 0: scratch, filled by every task). */
static bool plan(const emu_task *t, int32_t *ops, uint64_t stamp, emu_plan_memo *memo, emu_dpu8 *d)
{
    if (memo && memo->made && stamp && memo->stamp == stamp && memo->ops == ops) {
        *d = memo->d;
        return memo->ok;
    }
    const bool ok = emu_dpu8_plan(t, ops, ops + 6 * t->n, d);
    if (memo) {
        memo->made = stamp != 0, memo->ok = ok, memo->ops = ops, memo->stamp = stamp;
        if (ok) memo->d = *d;
    }
    return ok;
}

npk_status emu_execute(npk_rk_emu *e, const emu_task *t, emu_plan_memo *memo, const emu_where *w,
                       npk_error *err)
{
    size_t P = (size_t)t->ow * t->oh, N = t->n;
    emu_dpu8 dpu;
    int32_t *sums = NULL;
    npk_status st;
    uint64_t stamp = 0;
    if (!t->fp && !t->from_mem && e->simd) {
        /* The DPU fused into the convolution, block by block, when it can be. */
        int32_t *ops = emu_ops(e, t, &stamp);
        if (!ops) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        if (plan(t, ops, stamp, memo, &dpu)) {
            st = emu_conv_int(e, t, NULL, NULL, &dpu, w, err);
            if (!st) e->st.macs += (uint64_t)P * t->kw * t->kh * (t->dw ? 1 : t->c) * N;
            return st;
        }
    }
    void *cbuf = emu_scratch_get(&e->c, P * N * 4);
    if (!cbuf) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
    if (t->from_mem) {
        /* The DPU's input through MRDMA: int8, int32 or fp32 (as bits)
         * elements, pixel-major here. */
        int32_t *x = cbuf;
        float *xf = cbuf;
        for (size_t p = 0; p < P; p++)
            for (size_t n = 0; n < N; n++) {
                unsigned per = 16 / t->src_esize;
                const uint8_t *at =
                    t->src + (n / per) * t->src_surf + p * 16 + (n % per) * t->src_esize;
                if (t->fp)
                    xf[p * N + n] = t->src_esize == 2 ? npk_f16_to_f32(npk_ld16le(at))
                                                      : bits_f32(npk_ld32le(at));
                else
                    x[p * N + n] = t->src_esize == 4 ? (int32_t)npk_ld32le(at) : (int8_t)*at;
            }
        st = NPK_OK;
    } else if (t->fp)
        st = t->direct1x1 ? run_fp(e, t, cbuf, w, err) : emu_conv_fp(e, t, cbuf, w, err);
    else {
        if (t->cpend) {
            sums = emu_scratch_get(&e->s, (t->dw ? P * N : P) * sizeof(int32_t));
            if (!sums) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        }
        st = emu_conv_int(e, t, cbuf, sums, NULL, w, err);
    }
    if (st) return st;
    if (!t->from_mem) e->st.macs += (uint64_t)P * t->kw * t->kh * (t->dw ? 1 : t->c) * N;
    bool stages = t->bs.on || t->bn.on || t->ew.on;
    unsigned c2o = 16 / t->out_size;
    if (t->fp) {
        float *c = cbuf;
        if (stages)
            for (size_t i = 0; i < P * N; i++) {
                size_t ch = i % N, p = i / N;
                c[i] = stage_fp(
                    &t->ew, true,
                    stage_fp(&t->bn, false, stage_fp(&t->bs, false, c[i], ch, p), ch, p), ch, p);
            }
        for (size_t p = 0; p < P; p++)
            for (size_t n = 0; n < N; n += c2o) {
                uint8_t *d = t->out + out_offset(t, p, n);
                const float *src = c + p * N + n;
                for (unsigned j = 0; j < c2o; j++) {
                    if (t->out_fp16)
                        npk_st16le(d + 2 * j, npk_f32_to_f16(src[j]));
                    else {
                        uint32_t u;
                        memcpy(&u, &src[j], 4);
                        npk_st32le(d + 4 * j, u);
                    }
                }
            }
    } else {
        uint32_t *c = cbuf;
        int32_t *ops = emu_ops(e, t, &stamp);
        if (!ops) return emu_fail(w, err, NPK_E_NOMEM, "out of memory for the task");
        int64_t *x = (int64_t *)(void *)(ops + 7 * N + (N & 1)); /* 8-byte aligned */
        out_conv q = {t->cvt_scale, t->cvt_shift, t->cvt_offset, t->out_int8};
        bool simd = false;
#ifdef HAVE_AVX2_DPU
        simd = e->simd;
#endif
        const emu_stage *stg[3] = {&t->bs, &t->bn, &t->ew};
        bool vec_stage[3];
        for (int k = 0; k < 3; k++)
            vec_stage[k] = simd && !stg[k]->op_mem && (!stg[k]->mul || stg[k]->shift <= 62);
        bool vec_out = simd && q.scale <= INT32_MAX && q.shift <= 62;
        if (simd && (!t->cpend || sums) && plan(t, ops, stamp, memo, &dpu)) {
            emu_dpu8_rows(&dpu, t, c, sums, 0, P);
            return NPK_OK;
        }
        bool out_int8 = t->out_int8;
        /* An atom is 16 bytes: 16 int8 or 4 int32 channels. */
        if (c2o * t->out_size != 16 || t->group % c2o || (!out_int8 && t->out_size != 4))
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "output atoms of %u x %u bytes: not modelled", c2o, t->out_size);
        for (size_t p = 0; p < P; p++) {
            const uint32_t *cp = c + p * N;
            /* CPEND: OW_OP x the window sum of the CNA's input, added to
             * the convolution's sum before the BS stage. */
#ifdef HAVE_AVX2_DPU
            if (simd)
                row_start_avx2(x, cp, N, t->cpend, t->ow_op,
                               sums ? sums + (t->dw ? p * N : p) : NULL, t->dw);
            else
#endif
            {
                for (size_t ch = 0; ch < N; ch++) x[ch] = (int32_t)cp[ch];
                if (t->cpend) {
                    int64_t ow = t->ow_op;
                    if (t->dw)
                        for (size_t ch = 0; ch < N; ch++)
                            x[ch] = sat32(x[ch] + ow * sums[p * N + ch]);
                    else {
                        int64_t sp = ow * sums[p];
                        for (size_t ch = 0; ch < N; ch++) x[ch] = sat32(x[ch] + sp);
                    }
                }
            }
            for (int k = 0; k < 3; k++) {
                if (!stg[k]->on) continue;
                const int32_t *add = ops + 2 * k * N, *mul = ops + (2 * k + 1) * N;
#ifdef HAVE_AVX2_DPU
                if (vec_stage[k]) {
                    stage_row_avx2(stg[k], x, N, add, mul);
                    continue;
                }
#endif
                stage_row(stg[k], x, N, add, mul, p);
            }
#ifdef HAVE_AVX2_DPU
            if (vec_out)
                row_out_avx2(&q, x, N);
            else
#endif
                for (size_t ch = 0; ch < N; ch++) x[ch] = out_cvt(&q, x[ch]);
            /* 16 bytes per atom, assembled in a local block (byte stores
             * to the output could alias x) and written at once; the atom
             * offsets by counting groups and atoms instead of dividing. */
            for (size_t g0 = 0, gi = 0; g0 < N; g0 += t->group, gi++)
                for (size_t sub = 0, ai = 0; sub < t->group && g0 + sub < N; sub += c2o, ai++) {
                    const int64_t *xv = x + g0 + sub;
                    uint8_t blk[16];
                    if (out_int8)
                        for (unsigned j = 0; j < 16; j++) blk[j] = (uint8_t)(int8_t)xv[j];
                    else
                        for (unsigned j = 0; j < 4; j++) /* c2o == 4 (checked above) */
                            npk_st32le(blk + 4 * j, (uint32_t)(int32_t)xv[j]);
                    memcpy(t->out + gi * t->surf_add + ai * t->dst_surf + p * 16, blk, 16);
                }
        }
        (void)vec_stage, (void)vec_out;
    }
    return NPK_OK;
}
