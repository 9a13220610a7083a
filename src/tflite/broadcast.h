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
