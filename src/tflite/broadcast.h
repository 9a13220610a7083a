/* Internal: NumPy/TFLite broadcasting of two shapes (right-aligned, each
 * dimension equal or 1), for the elementwise binary ops. */
#ifndef NPK_TFL_BROADCAST_H
#define NPK_TFL_BROADCAST_H

#include "tflite/kernel.h"

typedef struct npk_tfl_bcast {
    uint32_t ndim;                             /* of the output */
    int32_t dims[NPK_TFL_MAXD];                /* output dimensions */
    size_t s1[NPK_TFL_MAXD], s2[NPK_TFL_MAXD]; /* element strides (0 where broadcast) */
    bool same;                                 /* both inputs have the output's shape */
} npk_tfl_bcast;

/* The output shape of a and b, or an error naming the op. */
npk_status npk_tfl_bcast_init(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *a,
                              const npk_tfl_rt *b, npk_tfl_bcast *bc);

/* What ADD, SUB and MUL prepare alike (add.cc, sub.cc, mul.cc): two inputs
 * and an output of one type (uint8, int8, float32, int32), the output shaped
 * by broadcasting the inputs, the fused activation as a range of that type,
 * and for the 8-bit types the inputs' offsets (minus their zero points), the
 * output's zero point and the three scales the op's multipliers come from. */
typedef struct npk_tfl_arith {
    npk_tfl_bcast bc;
    int8_t type;
    int32_t off1, off2, out_zero; /* 8-bit types */
    int32_t act_min, act_max;     /* int32 and 8-bit types */
    float fmin, fmax;             /* float32 */
    float s1, s2, s_out;          /* 8-bit types */
} npk_tfl_arith;

/* Checks the node, allocates the op's parameters (`bytes` of them, an
 * npk_tfl_arith first) as n->params and fills that head. */
npk_status npk_tfl_arith_prepare(npk_tfl_plan *p, npk_tfl_node *n, size_t bytes);

static inline bool npk_tfl_arith_q8(const npk_tfl_arith *h)
{
    return h->type == NPK_TFL_UINT8 || h->type == NPK_TFL_INT8;
}

/* Visit every output element: fn(ctx, out_index, index_in_a, index_in_b). */
static inline void npk_tfl_bcast_each(const npk_tfl_bcast *bc,
                                      void (*fn)(void *, size_t, size_t, size_t), void *ctx)
{
    size_t count = 1;
    for (uint32_t d = 0; d < bc->ndim; d++) count *= (size_t)bc->dims[d];
    if (count == 0) return;
    int32_t idx[NPK_TFL_MAXD] = {0};
    size_t i1 = 0, i2 = 0;
    for (size_t o = 0; o < count; o++) {
        fn(ctx, o, i1, i2);
        for (uint32_t d = bc->ndim; d-- > 0;) {
            idx[d]++;
            i1 += bc->s1[d];
            i2 += bc->s2[d];
            if (idx[d] < bc->dims[d]) break;
            i1 -= bc->s1[d] * (size_t)bc->dims[d];
            i2 -= bc->s2[d] * (size_t)bc->dims[d];
            idx[d] = 0;
        }
    }
}

#endif
