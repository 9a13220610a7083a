/* MUL with broadcasting: uint8, int8, int32, float32, fused activations.
 * Definition: TFLite's reference_ops::Mul / reference_integer_ops::Mul
 * (mul.h) with mul.cc's Prepare: the product of the zero-point-corrected
 * inputs, MultiplyByQuantizedMultiplier with QuantizeMultiplier(double(s1)
 * * double(s2) / double(s_out)), + the output zero point, clamped. int32
 * multiplies wrap (TFLite leaves overflow undefined); float32 multiplies in
 * float. */
#include <string.h>

#include "tflite/broadcast.h"
#include "tflite/conv_util.h"
#include "tflite/kernel.h"
#include "tflite/qmath.h"

typedef struct mul {
    npk_tfl_arith h; /* first: npk_tfl_arith_prepare */
    int32_t mult, shift;
    /* eval */
    const uint8_t *a, *b;
    uint8_t *out;
} mul;

static npk_status mul_prepare(npk_tfl_plan *p, npk_tfl_node *n)
{
    npk_status st;
    if ((st = npk_tfl_arith_prepare(p, n, sizeof(mul)))) return st;
    mul *q = n->params;
    if (!npk_tfl_arith_q8(&q->h)) return NPK_OK;
    const double real = (double)q->h.s1 * (double)q->h.s2 / (double)q->h.s_out;
    return npk_tfl_multiplier(p, n, real, &q->mult, &q->shift);
}

static inline uint8_t mul_q(const mul *q, int32_t x1, int32_t x2)
{
    /* |x - z| <= 255, so the product fits in int32. */
    const int32_t prod = (x1 + q->h.off1) * (x2 + q->h.off2);
    const int32_t r = npk_tfl_mbqm(prod, q->mult, q->shift) + q->h.out_zero;
    return (uint8_t)npk_tfl_clamp(r, q->h.act_min, q->h.act_max);
}

static void mul_one(void *ctx, size_t o, size_t i1, size_t i2)
{
    const mul *q = ctx;
    switch (q->h.type) {
    case NPK_TFL_FLOAT32: {
        float a, b, r;
        memcpy(&a, q->a + 4 * i1, 4);
        memcpy(&b, q->b + 4 * i2, 4);
        r = a * b;
        r = r < q->h.fmin ? q->h.fmin : r > q->h.fmax ? q->h.fmax : r;
        memcpy(q->out + 4 * o, &r, 4);
        break;
    }
    case NPK_TFL_INT32: {
        int32_t a, b, r;
        memcpy(&a, q->a + 4 * i1, 4);
        memcpy(&b, q->b + 4 * i2, 4);
        r = (int32_t)((uint32_t)a * (uint32_t)b);
        r = npk_tfl_clamp(r, q->h.act_min, q->h.act_max);
        memcpy(q->out + 4 * o, &r, 4);
        break;
    }
    case NPK_TFL_INT8: q->out[o] = mul_q(q, (int8_t)q->a[i1], (int8_t)q->b[i2]); break;
    default: q->out[o] = mul_q(q, q->a[i1], q->b[i2]);
    }
}

static npk_status mul_eval(npk_tfl_exec *x, const npk_tfl_node *n)
{
    (void)x;
    mul *q = n->params;
    q->a = n->in[0]->data;
    q->b = n->in[1]->data;
    q->out = n->out[0]->data;
    const size_t count = n->out[0]->count;
    if (q->h.bc.same && q->h.type == NPK_TFL_UINT8) {
        for (size_t i = 0; i < count; i++) q->out[i] = mul_q(q, q->a[i], q->b[i]);
    } else if (q->h.bc.same && q->h.type == NPK_TFL_INT8) {
        for (size_t i = 0; i < count; i++) q->out[i] = mul_q(q, (int8_t)q->a[i], (int8_t)q->b[i]);
    } else if (q->h.bc.same) {
        for (size_t i = 0; i < count; i++) mul_one(q, i, i, i);
    } else {
        npk_tfl_bcast_each(&q->h.bc, mul_one, q);
    }
    return NPK_OK;
}

const npk_tfl_kernel npk_tfl_k_mul = {NPK_TFL_OP_MUL, NULL,
                                      NPK_TFL_T(NPK_TFL_UINT8) | NPK_TFL_T(NPK_TFL_INT8) |
                                          NPK_TFL_T(NPK_TFL_FLOAT32) | NPK_TFL_T(NPK_TFL_INT32),
                                      mul_prepare, mul_eval};
