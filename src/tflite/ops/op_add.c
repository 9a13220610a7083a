/* ADD and SUB with broadcasting: uint8, int8, float32, int32. Definition:
 * TFLite's reference_ops::Add / reference_integer_ops::Add (add.h) with the
 * parameters of add.cc's Prepare: both inputs shifted left by 20 bits and
 * rescaled to twice the larger input scale, summed, then the output
 * multiplier (each step MultiplyByQuantizedMultiplierSmallerThanOneExp).
 * SUB is the same sum with input 2's multiplier negated (sub.cc's
 * PrepareGeneralSubOp with op_sign -1, then the Add kernels): not the
 * negated result, as the rounding of SaturatingRoundingDoublingHighMul is
 * not symmetric. */
#include <string.h>

#include "tflite/broadcast.h"
#include "tflite/conv_util.h"
#include "tflite/kernel.h"
#include "tflite/qkern.h"
#include "tflite/qmath.h"

#define LEFT_SHIFT 20

typedef struct add {
    npk_tfl_arith h; /* first: npk_tfl_arith_prepare */
    bool sub;        /* SUB: a - b */
    int32_t m1, s1, m2, s2, mo, so;
    const npk_tfl_qkern *kern;
    /* eval */
    const uint8_t *a, *b;
    uint8_t *out;
} add;

static npk_status add_sub_prepare(npk_tfl_plan *p, npk_tfl_node *n, bool sub)
{
    npk_status st;
    if ((st = npk_tfl_arith_prepare(p, n, sizeof(add)))) return st;
    add *q = n->params;
    q->sub = sub;
    q->kern = npk_tfl_k_qkern(p);
    if (!npk_tfl_arith_q8(&q->h)) return NPK_OK;
    const float sa = q->h.s1, sb = q->h.s2, so = q->h.s_out;
    /* add.cc: 2 * max(float, float) is exact in float; the rest in double. */
    const float twice_max_f = 2.0f * (sa > sb ? sa : sb);
    const double twice_max = (double)twice_max_f;
    const float out_div = (float)(1 << LEFT_SHIFT) * so;
    const double r1 = (double)sa / twice_max, r2 = (double)sb / twice_max,
                 ro = twice_max / (double)out_div;
    if (!(ro < 1.0))
        return npk_tfl_k_unsupported(p, n, "output scale %g is too small for the inputs' %g, %g",
                                     (double)so, (double)sa, (double)sb);
    if ((st = npk_tfl_multiplier(p, n, r1, &q->m1, &q->s1)) ||
        (st = npk_tfl_multiplier(p, n, r2, &q->m2, &q->s2)) ||
        (st = npk_tfl_multiplier(p, n, ro, &q->mo, &q->so)))
        return st;
    if (q->s1 > 0 || q->s2 > 0 || q->so > 0) /* TFLite requires multipliers below one */
        return npk_tfl_k_unsupported(p, n, "a rescaling multiplier is not below one");
    if (sub) q->m2 = -q->m2;
    return NPK_OK;
}

static npk_status add_prepare(npk_tfl_plan *p, npk_tfl_node *n)
{
    return add_sub_prepare(p, n, false);
}

static npk_status sub_prepare(npk_tfl_plan *p, npk_tfl_node *n)
{
    return add_sub_prepare(p, n, true);
}

/* MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0). */
static inline int32_t mul_small(int32_t x, int32_t m, int32_t s)
{
    return npk_tfl_rdbpot(npk_tfl_srdhm(x, m), -s);
}

static inline uint8_t add_q(const add *q, int32_t x1, int32_t x2)
{
    const int32_t a = mul_small((x1 + q->h.off1) * (1 << LEFT_SHIFT), q->m1, q->s1);
    const int32_t b = mul_small((x2 + q->h.off2) * (1 << LEFT_SHIFT), q->m2, q->s2);
    const int32_t r = mul_small(a + b, q->mo, q->so) + q->h.out_zero;
    return (uint8_t)npk_tfl_clamp(r, q->h.act_min, q->h.act_max);
}

static void add_one(void *ctx, size_t o, size_t i1, size_t i2)
{
    const add *q = ctx;
    switch (q->h.type) {
    case NPK_TFL_FLOAT32: {
        float a, b, r;
        memcpy(&a, q->a + 4 * i1, 4);
        memcpy(&b, q->b + 4 * i2, 4);
        r = q->sub ? a - b : a + b;
        r = r < q->h.fmin ? q->h.fmin : r > q->h.fmax ? q->h.fmax : r;
        memcpy(q->out + 4 * o, &r, 4);
        break;
    }
    case NPK_TFL_INT32: {
        int32_t a, b, r;
        memcpy(&a, q->a + 4 * i1, 4);
        memcpy(&b, q->b + 4 * i2, 4);
        r = (int32_t)(q->sub ? (uint32_t)a - (uint32_t)b : (uint32_t)a + (uint32_t)b);
        r = npk_tfl_clamp(r, q->h.act_min, q->h.act_max);
        memcpy(q->out + 4 * o, &r, 4);
        break;
    }
    case NPK_TFL_INT8: q->out[o] = add_q(q, (int8_t)q->a[i1], (int8_t)q->b[i2]); break;
    default: q->out[o] = add_q(q, q->a[i1], q->b[i2]);
    }
}

static npk_status add_eval(npk_tfl_exec *x, const npk_tfl_node *n)
{
    (void)x;
    add *q = n->params;
    q->a = n->in[0]->data;
    q->b = n->in[1]->data;
    q->out = n->out[0]->data;
    const size_t count = n->out[0]->count;
    if (q->h.bc.same && npk_tfl_arith_q8(&q->h)) {
        /* the same arithmetic as add_q, vectorised (qkern.h) */
        const npk_tfl_qadd qa = {q->h.off1,    q->h.off2,    q->m1,
                                 q->s1,        q->m2,        q->s2,
                                 q->mo,        q->so,        q->h.out_zero,
                                 q->h.act_min, q->h.act_max, q->h.type == NPK_TFL_INT8};
        q->kern->add(&qa, q->a, q->b, q->out, count);
    } else if (q->h.bc.same) {
        for (size_t i = 0; i < count; i++) add_one(q, i, i, i);
    } else {
        npk_tfl_bcast_each(&q->h.bc, add_one, q);
    }
    return NPK_OK;
}

const npk_tfl_kernel npk_tfl_k_add = {NPK_TFL_OP_ADD, NULL,
                                      NPK_TFL_T(NPK_TFL_UINT8) | NPK_TFL_T(NPK_TFL_INT8) |
                                          NPK_TFL_T(NPK_TFL_FLOAT32) | NPK_TFL_T(NPK_TFL_INT32),
                                      add_prepare, add_eval};
const npk_tfl_kernel npk_tfl_k_sub = {NPK_TFL_OP_SUB, NULL,
                                      NPK_TFL_T(NPK_TFL_UINT8) | NPK_TFL_T(NPK_TFL_INT8) |
                                          NPK_TFL_T(NPK_TFL_FLOAT32) | NPK_TFL_T(NPK_TFL_INT32),
                                      sub_prepare, add_eval};
