/* Writing TFLite models: build one from scratch (tensors with type, shape,
 * quantisation and constant data; operators with builtin options from the
 * options table of tflite.h, or custom options; subgraph inputs and
 * outputs), or re-serialise a parsed model, optionally cut to other inputs
 * and outputs. Files are written with npukit's FlatBuffers builder and read
 * back by npk_tfl_parse() as the same graph. */
#ifndef NPUKIT_TFLITE_BUILD_H
#define NPUKIT_TFLITE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/tflite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- building from scratch (one subgraph) ---- */

typedef struct npk_tflb npk_tflb;

typedef struct npk_tflb_tensor {
    const char *name; /* NULL: "" */
    int8_t type;      /* NPK_TFL_* */
    uint32_t ndim;
    const int32_t *shape;
    const void *data; /* constant data in host order, or NULL for an activation */
    size_t data_bytes;
    /* Quantisation: nscale 0 for none; 1 per tensor; > 1 per channel along
     * quantized_dimension. zero_point NULL means zeros. */
    uint32_t nscale;
    const float *scale;
    const int64_t *zero_point;
    int32_t quantized_dimension;
} npk_tflb_tensor;

typedef struct npk_tflb_op {
    int32_t builtin;         /* NPK_TFL_OP_*; NPK_TFL_OP_CUSTOM with custom_code */
    const char *custom_code; /* custom ops only */
    int32_t version;         /* 0 means 1 */
    const int32_t *inputs;   /* -1 for an optional input left out */
    uint32_t ninputs;
    const int32_t *outputs;
    uint32_t noutputs;
    const npk_tfl_options *options; /* NULL: none (npk_tfl_options_init() makes them) */
    const uint8_t *custom_options;
    size_t custom_options_len;
} npk_tflb_op;

npk_tflb *npk_tflb_new(void);
void npk_tflb_free(npk_tflb *b);
/* Everything given is copied. Each returns the new index, or -1 after an
 * error (the first error is reported by npk_tflb_finish). */
int32_t npk_tflb_tensor_add(npk_tflb *b, const npk_tflb_tensor *t);
int32_t npk_tflb_op_add(npk_tflb *b, const npk_tflb_op *op);
void npk_tflb_io(npk_tflb *b, const int32_t *inputs, uint32_t ninputs, const int32_t *outputs,
                 uint32_t noutputs);
/* The model as a malloc'd .tflite image. */
npk_status npk_tflb_finish(npk_tflb *b, uint8_t **out, size_t *len, npk_error *err);

/* ---- re-serialising a parsed model ---- */

typedef struct npk_tfl_write_opts {
    /* Replace subgraph 0's inputs/outputs (tensor indices) when non-zero. */
    const int32_t *inputs;
    uint32_t ninputs;
    const int32_t *outputs;
    uint32_t noutputs;
    /* Keep only the operators subgraph 0's outputs need (from its inputs),
     * the tensors they use and, with one subgraph, the buffers and operator
     * codes those use; indices are renumbered. */
    bool prune;
} npk_tfl_write_opts;

/* Write m (all subgraphs; metadata and signatures are not copied). Options
 * tables not in npukit's table cannot be written: such an operator fails
 * unless pruned. opts may be NULL. */
npk_status npk_tfl_write(const npk_tfl_model *m, const npk_tfl_write_opts *opts, uint8_t **out,
                         size_t *len, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
