/* Internal: the interface between the TFLite interpreter (interp.c) and its
 * op kernels (op_*.c). Read this before adding an op.
 *
 * How an op runs
 *   npk_tfl_interp_new() walks the planned operators in stored order. For
 *   each one it finds the kernel registered for its builtin code (or custom
 *   code) in kernels.c and calls kernel->prepare(p, n) once. prepare checks
 *   everything eval will rely on (input count, tensor types, ranks, shapes,
 *   option values, quantisation, constant buffers), computes the output
 *   shapes and checks them against the model's (npk_tfl_k_output_shape),
 *   and precomputes fixed parameters (multipliers, lookup tables) into
 *   memory from npk_tfl_k_alloc(). It may ask for per-invoke scratch memory
 *   (n->scratch_bytes, per thread if it splits work); the planner gives the
 *   scratch a place in the arena alive only during this op. After planning,
 *   invoke calls kernel->eval(x, n) for each op: no allocation, no checks
 *   that prepare already made, no failure for well-formed data.
 *
 * Adding an op
 *   1. Write src/tflite/op_<family>.c with a prepare and an eval function and
 *      one `const npk_tfl_kernel npk_tfl_k_<name>` (builtin code, name, the
 *      input types it takes, prepare, eval). Fail in prepare through
 *      npk_tfl_k_fail()/npk_tfl_k_unsupported(), which name the operator
 *      ("operator 12 (CONV_2D): ...") and the offset of its table.
 *   2. Add the kernel to the table in kernels.c.
 *   3. If the op has builtin options, make sure its options table is in
 *      options.c; read options with npk_tfl_opt_int()/npk_tfl_opt_float()
 *      on n->opt (defaults apply when a field is not stored).
 *   4. Pin it with single-op models in tests/tflite (build them with
 *      tflite_build.h) and describe its definition in docs/tflite.md.
 *
 * Data: every tensor's bytes are in host order. Constant tensors point into
 * the model (read-only) or a converted copy; activations live in the arena
 * at addresses fixed at plan time. n->in[i] is NULL for an optional input
 * left out (-1). */
#ifndef NPK_TFL_KERNEL_H
#define NPK_TFL_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"
#include "npukit/tflite_quant.h"
#include "tflite/pool.h"
#include "tflite/qkern.h"

#define NPK_TFL_MAXD NPK_TFL_VIEW_MAX_DIMS

/* A tensor as the interpreter holds it. */
typedef struct npk_tfl_rt {
    int32_t index;
    const npk_tfl_tensor *t; /* the model's tensor */
    int8_t type;
    uint32_t ndim;
    int32_t dims[NPK_TFL_MAXD];
    size_t count, bytes; /* elements, bytes */
    uint8_t *data;       /* host order; NULL until planned */
    bool is_const, is_input, is_output;
    bool has_q;         /* quantisation with at least one scale */
    float scale;        /* first scale (0 without quantisation) */
    int32_t zero_point; /* first zero point */
    /* planning */
    bool planned;        /* has a buffer in this plan */
    int32_t producer;    /* plan position of the op writing it, -1 for inputs */
    int32_t first, last; /* plan positions where it must be alive */
    size_t offset;       /* in the arena */
} npk_tfl_rt;

struct npk_tfl_kernel;

/* One operator of the plan. */
typedef struct npk_tfl_node {
    uint32_t index; /* operator index in the subgraph */
    const npk_tfl_operator *op;
    const npk_tfl_options *opt;
    int32_t builtin;                     /* effective builtin code */
    const char *name;                    /* "CONV_2D" or the custom code, for messages */
    const struct npk_tfl_kernel *kernel; /* NULL when a user handler runs it */
    const npk_tfl_custom *custom;        /* the user handler, or NULL */
    uint32_t nin, nout;
    npk_tfl_rt **in, **out;
    npk_tfl_view *vin, *vout; /* views for a user handler (built at plan time) */
    void *params;             /* the kernel's precomputed data */
    size_t scratch_bytes;     /* per-invoke scratch the kernel asked for */
    uint8_t *scratch;         /* where it is (in the arena) */
    size_t scratch_offset;
} npk_tfl_node;

typedef struct npk_tfl_plan npk_tfl_plan; /* the planner (interp.c) */

/* What eval gets: the thread pool and an error for user handlers. */
typedef struct npk_tfl_exec {
    npk_tfl_pool *pool; /* never NULL; one thread when opts.threads <= 1 */
    npk_error *err;
} npk_tfl_exec;

/* Bit of a TensorType in npk_tfl_kernel.types. */
#define NPK_TFL_T(type) (1u << (type))

typedef struct npk_tfl_kernel {
    int32_t builtin;    /* builtin code; NPK_TFL_OP_CUSTOM with custom set */
    const char *custom; /* custom code, or NULL */
    uint32_t types;     /* types of input 0 it handles (NPK_TFL_T bits), for op_supported */
    npk_status (*prepare)(npk_tfl_plan *p, npk_tfl_node *n);
    npk_status (*eval)(npk_tfl_exec *x, const npk_tfl_node *n);
} npk_tfl_kernel;

/* The kernel for an opcode, or NULL (kernels.c). */
const npk_tfl_kernel *npk_tfl_kernel_find(int32_t builtin, const char *custom);

/* ---- helpers for prepare (interp.c) ---- */

/* Fail naming the operator: "operator 12 (CONV_2D): <message>" at the
 * operator's offset; NPK_E_FORMAT for a malformed graph. */
npk_status npk_tfl_k_fail(npk_tfl_plan *p, const npk_tfl_node *n, const char *fmt, ...)
    NPK_PRINTF(3, 4);
/* The same with NPK_E_UNSUPPORTED: well-formed but not handled. */
npk_status npk_tfl_k_unsupported(npk_tfl_plan *p, const npk_tfl_node *n, const char *fmt, ...)
    NPK_PRINTF(3, 4);
/* Zeroed memory owned by the interpreter (freed with it); NULL sets NPK_E_NOMEM. */
void *npk_tfl_k_alloc(npk_tfl_plan *p, const npk_tfl_node *n, size_t bytes);
/* The 8-bit kernels of the plan (qkern.h), chosen once per interpreter. */
const npk_tfl_qkern *npk_tfl_k_qkern(const npk_tfl_plan *p);
/* Worker threads of the plan (>= 1), for sizing per-thread scratch. */
int npk_tfl_k_threads(const npk_tfl_plan *p);
/* Input/output counts in [min, max]; inputs 0..required-1 must be present. */
npk_status npk_tfl_k_io(npk_tfl_plan *p, const npk_tfl_node *n, uint32_t min_in, uint32_t max_in,
                        uint32_t required_in, uint32_t nout);
/* The shape the op computes for output i must equal the model's. */
npk_status npk_tfl_k_output_shape(npk_tfl_plan *p, const npk_tfl_node *n, uint32_t i, uint32_t ndim,
                                  const int32_t *dims);
/* The same for an output whose shape the op defines at plan time, as
 * TFLite's custom ops do (TFLite_Detection_PostProcess, PosenetDecoderOp):
 * when the model leaves the shape empty ([], as converters write such
 * outputs) the tensor takes the computed shape (size checked); any other
 * stored shape must equal it. */
npk_status npk_tfl_k_output_shape_set(npk_tfl_plan *p, const npk_tfl_node *n, uint32_t i,
                                      uint32_t ndim, const int32_t *dims);
/* npk_tfl_k_fail with the error at another file offset (e.g. of a value in
 * the op's custom options). */
npk_status npk_tfl_k_fail_at(npk_tfl_plan *p, const npk_tfl_node *n, uint64_t offset,
                             const char *fmt, ...) NPK_PRINTF(4, 5);
/* A tensor of the op must have this type. what: "input 0", "filter", ... */
npk_status npk_tfl_k_type(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *t,
                          const char *what, int8_t type);
/* ... this rank. */
npk_status npk_tfl_k_rank(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *t,
                          const char *what, uint32_t ndim);
/* ... per-tensor quantisation (one scale > 0, finite); *scale, *zp. */
npk_status npk_tfl_k_quant(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *t,
                           const char *what, float *scale, int32_t *zp);
/* ... be constant. */
npk_status npk_tfl_k_const(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *t,
                           const char *what);
/* The fused activation option must be NONE, RELU, RELU_N1_TO_1 or RELU6. */
npk_status npk_tfl_k_activation(npk_tfl_plan *p, const npk_tfl_node *n, int *act);
/* The quantised clamp of an output for an activation. */
void npk_tfl_k_act_range(const npk_tfl_rt *out, int act, int32_t *lo, int32_t *hi);
/* The float clamp of an activation. */
void npk_tfl_k_act_range_f(int act, float *lo, float *hi);
/* "[1, 224, 224, 3]" */
const char *npk_tfl_k_shape_str(const int32_t *dims, uint32_t ndim, char *buf, size_t len);

/* Type ranges. */
static inline int32_t npk_tfl_qmin(int8_t type)
{
    return type == NPK_TFL_UINT8 ? 0 : type == NPK_TFL_INT8 ? -128 : -32768;
}
static inline int32_t npk_tfl_qmax(int8_t type)
{
    return type == NPK_TFL_UINT8 ? 255 : type == NPK_TFL_INT8 ? 127 : 32767;
}
static inline int32_t npk_tfl_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}
/* Element i of an 8-bit quantised tensor as int32. */
static inline int32_t npk_tfl_ld8(const uint8_t *p, size_t i, bool is_signed)
{
    return is_signed ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

#endif
