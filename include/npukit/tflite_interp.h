/* The TFLite interpreter: runs one subgraph of a parsed model on the CPU,
 * with TFLite's reference-kernel integer semantics (docs/tflite.md).
 *
 * Life cycle: npk_tfl_interp_new() checks every operator against its tensors
 * (types, shapes, options), computes each op's fixed parameters (requantisation
 * multipliers, lookup tables, output shapes), and plans one activation arena by
 * tensor lifetime. After that, npk_tfl_interp_invoke() runs the ops in stored
 * order any number of times without allocating. Constant tensors are read in
 * place from the model's bytes (a converted copy is made at plan time only
 * where host byte order or alignment requires it), so the model's bytes must
 * outlive the interpreter.
 *
 * Errors name the operator ("operator 12 (CONV_2D): ...") and carry the file
 * offset of its table. */
#ifndef NPUKIT_TFLITE_INTERP_H
#define NPUKIT_TFLITE_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/tflite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensors the interpreter runs have at most this many dimensions. */
#define NPK_TFL_VIEW_MAX_DIMS 8

typedef struct npk_tfl_interp npk_tfl_interp;

/* A tensor as the interpreter holds it. data is in host byte order. For
 * constant tensors it is read-only; for activations it is valid from the
 * producing op until the arena reuses its bytes (after invoke: the subgraph
 * outputs always; every tensor when opts.keep_all). */
typedef struct npk_tfl_view {
    int32_t index; /* tensor index in the subgraph */
    const char *name;
    int8_t type; /* NPK_TFL_FLOAT32, ... */
    uint32_t ndim;
    int32_t dims[NPK_TFL_VIEW_MAX_DIMS];
    void *data;
    size_t bytes;
    float scale;            /* per-tensor quantisation (first entry if per-channel); 0 if none */
    int32_t zero_point;     /* idem */
    const npk_tfl_quant *q; /* the model's full quantisation, NULL if none */
    bool is_const;
} npk_tfl_view;

/* A handler for a custom operator (by custom code) or a replacement for a
 * builtin one: called by invoke with the op's input and output views (outputs
 * already sized and allocated in the arena). prepare (optional) is called once
 * at plan time and may refuse the op with an error. */
typedef struct npk_tfl_custom {
    const char *custom_code; /* e.g. "edgetpu-custom-op"; NULL with builtin >= 0 */
    int32_t builtin;         /* -1 unless replacing a builtin op */
    npk_status (*prepare)(void *user, const npk_tfl_model *m, uint32_t op_index, npk_error *err);
    npk_status (*eval)(void *user, uint32_t op_index, const npk_tfl_view *in, uint32_t nin,
                       npk_tfl_view *out, uint32_t nout, npk_error *err);
    void *user;
} npk_tfl_custom;

/* Called after each op runs (e.g. to dump intermediates). A non-OK return
 * stops invoke with that status. */
typedef npk_status (*npk_tfl_observer)(void *user, const npk_tfl_interp *it, uint32_t op_index,
                                       npk_error *err);

typedef struct npk_tfl_interp_opts {
    uint32_t subgraph; /* 0 */
    int threads;       /* worker threads for conv, depthwise and FC; <= 1: one (at most 64) */
    /* Handlers, tried before the built-in kernels; the array (and what its
     * user pointers point at) must outlive the interpreter. */
    const npk_tfl_custom *custom;
    uint32_t ncustom;
    /* Optional cut of the graph: when ninputs/noutputs are non-zero, these
     * tensor indices replace the subgraph's inputs/outputs and only the ops
     * needed to compute the outputs from the inputs are planned and run
     * (used to execute the part of a model an accelerator replaced). */
    const int32_t *inputs;
    uint32_t ninputs;
    const int32_t *outputs;
    uint32_t noutputs;
    /* Every tensor keeps its own buffer (no reuse), so all stay readable
     * after invoke (for --dump); larger arena. */
    bool keep_all;
} npk_tfl_interp_opts;

/* opts may be NULL (defaults). */
npk_status npk_tfl_interp_new(const npk_tfl_model *m, const npk_tfl_interp_opts *opts,
                              npk_tfl_interp **out, npk_error *err);
void npk_tfl_interp_free(npk_tfl_interp *it);

/* The model it runs. */
const npk_tfl_model *npk_tfl_interp_model(const npk_tfl_interp *it);

uint32_t npk_tfl_interp_ninputs(const npk_tfl_interp *it);
uint32_t npk_tfl_interp_noutputs(const npk_tfl_interp *it);
/* Input i's view; write the input values into view->data before invoke. */
npk_status npk_tfl_interp_input(const npk_tfl_interp *it, uint32_t i, npk_tfl_view *v,
                                npk_error *err);
npk_status npk_tfl_interp_output(const npk_tfl_interp *it, uint32_t i, npk_tfl_view *v,
                                 npk_error *err);
/* Any tensor by subgraph index (see npk_tfl_view for when data is valid). */
npk_status npk_tfl_interp_tensor(const npk_tfl_interp *it, int32_t index, npk_tfl_view *v,
                                 npk_error *err);
/* Tensor index by name, or -1. */
int32_t npk_tfl_interp_find(const npk_tfl_interp *it, const char *name);

void npk_tfl_interp_set_observer(npk_tfl_interp *it, npk_tfl_observer fn, void *user);

npk_status npk_tfl_interp_invoke(npk_tfl_interp *it, npk_error *err);

/* Memory figures of the plan: the arena's size, and the largest sum of
 * activation bytes alive at once (the lower bound any plan must reach). */
size_t npk_tfl_interp_arena_bytes(const npk_tfl_interp *it);
size_t npk_tfl_interp_peak_live_bytes(const npk_tfl_interp *it);
/* Memory the plan holds besides the arena for the operators' precomputed
 * parameters: multipliers, folded biases and the weights rearranged for the
 * vector kernels (the model's constants themselves are used in place). */
size_t npk_tfl_interp_param_bytes(const npk_tfl_interp *it);
/* Name of the 8-bit inner loops the plan uses: "avx2", "sse2", "neon" or
 * "portable" (the definition; docs/tflite.md). The best the CPU runs unless
 * the environment variable NPUKIT_TFL_KERNELS caps the choice when the
 * interpreter is made: "portable", "v128" (SSE2 or NEON at most) or "best". */
const char *npk_tfl_interp_kernels(const npk_tfl_interp *it);

/* Whether the interpreter has a kernel for this operator (by code, custom
 * name and tensor types; not a full check of its shapes); when not, why
 * (one line) is written to why. */
bool npk_tfl_op_supported(const npk_tfl_model *m, uint32_t subgraph, uint32_t op_index, char *why,
                          size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
