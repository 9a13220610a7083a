/* The TFLite front end of the RKNPU layers: one operator of a parsed model,
 * with its tensors as the model defines them, lowered to the layer
 * description of npukit/rknpu_layer.h (and from there planned into tasks).
 *
 * CONV_2D, DEPTHWISE_CONV_2D (depth multiplier 1), FULLY_CONNECTED,
 * ADD (same-shape inputs), AVERAGE_POOL_2D and MAX_POOL_2D on uint8, int8
 * (per-tensor or per-channel weights along the model's quantized_dimension)
 * or float16 tensors: SAME/VALID become explicit padding, the fused
 * activation a clip range of the output, weights and biases come from the
 * model's constant buffers, the requantisation multipliers are computed
 * exactly as the interpreter computes them. Whatever the NPU cannot do is
 * refused with an error that names the operator ("operator 12 (CONV_2D):
 * ...") at the operator's file offset.
 *
 * The whole-network compiler calls this per operator; nothing here depends
 * on the rest of the graph. */
#ifndef NPUKIT_RKNPU_TFLITE_H
#define NPUKIT_RKNPU_TFLITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_layer.h"
#include "npukit/tflite.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npk_rk_tfl_layer {
    npk_rk_layer layer; /* its pointers point into this struct's storage or the model's bytes */
    uint32_t subgraph, op_index;
    int32_t builtin; /* NPK_TFL_OP_* */
    uint64_t offset; /* the operator's table in the file (for errors) */
    char name[48];   /* "operator 12 (CONV_2D)" */
    /* The tensors the layer reads at run time (in order: input, then the
     * second input of an ADD; -1 when absent) and writes. An input that is
     * a constant of the model has its bytes in const_data (host order, the
     * layer's type); the caller feeds those itself. */
    int32_t inputs[2];
    const void *const_data[2];
    int32_t output;
    /* Storage behind the layer's pointers (private). */
    void *own_weights;
    int32_t *own_bias;
    double *own_scales, *own_mults;
} npk_rk_tfl_layer;

/* Lower operator op_index of subgraph `subgraph`. On failure nothing is
 * allocated and the error names the operator. */
npk_status npk_rk_tfl_lower(const npk_tfl_model *m, uint32_t subgraph, uint32_t op_index,
                            npk_rk_tfl_layer *out, npk_error *err);
void npk_rk_tfl_layer_free(npk_rk_tfl_layer *l);

/* Whether the operator's code is one the front end lowers (a cheap test
 * before npk_rk_tfl_lower, which checks everything else). */
bool npk_rk_tfl_op_kind(int32_t builtin);

/* npk_rk_lplan_make on a lowered layer, with a planner error prefixed by the
 * operator's name and carrying its file offset. */
npk_status npk_rk_tfl_plan(const npk_rk_tfl_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                           npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
