/* TensorFlow Lite models: the one reader shared by the interpreter, the Edge TPU and RKNPU code.
 *
 * npk_tfl_parse() reads the whole model graph through the bounds-checked
 * FlatBuffers reader into plain structs. Arrays are copied into host order
 * (so the structs are correct on big-endian hosts); strings and buffer data
 * point into the caller's bytes, which must outlive the model. */
#ifndef NPUKIT_TFLITE_H
#define NPUKIT_TFLITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor element types (TFLite TensorType). */
enum {
    NPK_TFL_FLOAT32 = 0,
    NPK_TFL_FLOAT16 = 1,
    NPK_TFL_INT32 = 2,
    NPK_TFL_UINT8 = 3,
    NPK_TFL_INT64 = 4,
    NPK_TFL_STRING = 5,
    NPK_TFL_BOOL = 6,
    NPK_TFL_INT16 = 7,
    NPK_TFL_COMPLEX64 = 8,
    NPK_TFL_INT8 = 9
};
/* Builtin operator codes used by name in npukit. */
enum { NPK_TFL_OP_FULLY_CONNECTED = 9, NPK_TFL_OP_CUSTOM = 32, NPK_TFL_OP_QUANTIZE = 114 };

/* Limits on what one model may declare. */
#define NPK_TFL_MAX_DIMS 64

typedef struct npk_tfl_opcode {
    int32_t builtin; /* max(deprecated_builtin_code, builtin_code): the effective code */
    int8_t deprecated_builtin_code;
    int32_t builtin_code;
    const char *custom_code; /* NULL when absent */
    int32_t version;
} npk_tfl_opcode;

typedef struct npk_tfl_quant {
    uint32_t nmin, nmax, nscale, nzero;
    float *min, *max, *scale;
    int64_t *zero_point;
    int32_t quantized_dimension;
} npk_tfl_quant;

typedef struct npk_tfl_tensor {
    const char *name; /* "" when absent */
    uint32_t ndim;
    int32_t *shape;
    int8_t type;
    uint32_t buffer;
    bool is_variable;
    bool has_quant;
    npk_tfl_quant q;
    uint64_t offset; /* of its table in the file */
} npk_tfl_tensor;

typedef struct npk_tfl_operator {
    uint32_t opcode_index; /* 0 when absent (the schema default) */
    uint32_t ninputs, noutputs;
    int32_t *inputs, *outputs; /* tensor indices; -1 = optional input left out */
    uint8_t builtin_options_type;
    const uint8_t *custom_options; /* NULL when absent */
    size_t custom_options_len;
    uint64_t custom_options_offset; /* absolute file offset */
    uint64_t offset;
} npk_tfl_operator;

typedef struct npk_tfl_subgraph {
    const char *name;
    uint32_t ntensors, ninputs, noutputs, noperators;
    npk_tfl_tensor *tensors;
    int32_t *inputs, *outputs;
    npk_tfl_operator *operators;
} npk_tfl_subgraph;

typedef struct npk_tfl_buffer {
    const uint8_t *data; /* NULL when empty */
    size_t size;
    uint64_t offset; /* absolute file offset of the data */
    bool external;   /* stored after the flatbuffer (Buffer.offset/size) */
} npk_tfl_buffer;

typedef struct npk_tfl_model {
    const uint8_t *file;
    size_t file_size;
    uint32_t version;
    const char *description;
    uint32_t nopcodes, nsubgraphs, nbuffers;
    npk_tfl_opcode *opcodes;
    npk_tfl_subgraph *subgraphs;
    npk_tfl_buffer *buffers;
    void *arena; /* private: owns every array above */
} npk_tfl_model;

/* Parse a whole .tflite file held in memory (buf must outlive m). */
npk_status npk_tfl_parse(const uint8_t *buf, size_t len, npk_tfl_model *m, npk_error *err);
void npk_tfl_free(npk_tfl_model *m);

const char *npk_tfl_type_name(int type);        /* "UINT8", ...; "?" when unknown */
size_t npk_tfl_type_size(int type);             /* bytes per element; 0 for STRING/unknown */
const char *npk_tfl_builtin_name(int32_t code); /* NULL when not in npukit's table */
/* The operator's opcode (opcode_index was validated at parse time). */
const npk_tfl_opcode *npk_tfl_op_code(const npk_tfl_model *m, const npk_tfl_operator *op);

#ifdef __cplusplus
}
#endif
#endif
