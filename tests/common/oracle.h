/* Independent TFLite oracles for the tests (docs/tflite-oracles.md).
 *
 * Two runtimes that share no code with npukit or with each other run a model
 * on given inputs: LiteRT.js (npm @litertjs/core under Node, XNNPACK kernels;
 * tests/oracle/litert_run.mjs) and Arm NN 20.08's reference backend (Debian
 * python3-pyarmnn, CpuRef; tests/oracle/armnn_run.py). This file drives them
 * from cmocka tests: prepare a model for them (signatures removed, optionally
 * cut to chosen input and output tensors), make seeded inputs, run, load the
 * outputs, and compare two results element by element.
 *
 * A missing oracle fails the test under CI=true and skips it elsewhere
 * (npk_oracle_require); an oracle that cannot run a model says why and the
 * test records it. */
#ifndef NPK_ORACLE_H
#define NPK_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/image.h"
#include "npukit/tensor.h"
#include "npukit/tflite.h"

typedef enum npk_oracle_kind { NPK_ORACLE_LITERT = 0, NPK_ORACLE_ARMNN = 1 } npk_oracle_kind;
#define NPK_ORACLE_COUNT 2

/* "LiteRT.js" or "Arm NN CpuRef". */
const char *npk_oracle_name(npk_oracle_kind k);

/* Whether the oracle is installed here; why (one line) when not. */
bool npk_oracle_available(npk_oracle_kind k, char *why, size_t why_len);
/* Fail the running test under CI=true, skip it elsewhere, when not available. */
void npk_oracle_require(npk_oracle_kind k);

/* ---- models for the oracles ---- */

/* A copy of model (TFLite bytes) written to out_path with its signature
 * definitions removed (so both oracles name inputs and outputs by tensor
 * name) and, when ninputs or noutputs is non-zero, its subgraph 0 cut: these
 * tensors become the inputs and outputs, and only the operators needed to
 * compute the outputs from the inputs and the constants are kept, in stored
 * order. The file is patched in place (vector lengths, operator offsets) and
 * the new input/output vectors are appended; nothing else changes. A
 * constant tensor listed among the inputs becomes a real input (its table
 * points at the empty buffer 0): the caller then gives its values, e.g. to
 * make a runtime treat weights as dynamic. Returns 0,
 * or -1 with why filled (an output that cannot be computed, a malformed
 * model). */
int npk_oracle_prepare(const uint8_t *model, size_t len, const int32_t *inputs, uint32_t ninputs,
                       const int32_t *outputs, uint32_t noutputs, const char *out_path, char *why,
                       size_t why_len);

/* ---- running ---- */

typedef enum npk_oracle_status {
    NPK_ORACLE_OK = 0,
    NPK_ORACLE_CANNOT = 3,  /* the oracle refuses this model (why says why) */
    NPK_ORACLE_MISSING = 4, /* the oracle is not installed */
    NPK_ORACLE_FAILED = 5   /* anything else: a bug in the harness or the oracle */
} npk_oracle_status;

typedef struct npk_oracle_result {
    npk_oracle_status status;
    char why[512];  /* the oracle's last line on stderr when not OK */
    double run_ms;  /* one inference as the oracle timed it (median of its runs) */
    double wall_ms; /* the whole call: start-up, load, compile, run, write */
} npk_oracle_result;

/* Run model_path on inputs (in the model's input order) and load the outputs
 * named out_names (tensor names of the model's outputs, in order) into outs
 * (noutputs tensors, freed by the caller with npk_tensor_free). */
npk_oracle_status npk_oracle_run(npk_oracle_kind k, const char *model_path,
                                 const npk_tensor *inputs, size_t ninputs,
                                 const char *const *out_names, size_t noutputs, npk_tensor *outs,
                                 npk_oracle_result *res);

/* Many runs in one oracle process (the start-up of Node or Python and the
 * loading of the runtime once, not per model): each job names a model and
 * its inputs as .npy files already written (in the model's input order), and
 * receives its outputs and result as npk_oracle_run gives them; res.wall_ms
 * is the batch's wall time shared out evenly. A job the oracle cannot run
 * does not stop the others. */
typedef struct npk_oracle_job {
    const char *model_path;
    const char *const *inputs;
    size_t ninputs;
    const char *const *out_names;
    size_t noutputs;
    npk_tensor *outs; /* noutputs tensors, filled when res.status is OK */
    npk_oracle_result res;
} npk_oracle_job;
void npk_oracle_run_jobs(npk_oracle_kind k, npk_oracle_job *jobs, size_t njobs);

/* The file name an oracle runner gives an output: every byte outside
 * [A-Za-z0-9._-] becomes '_' ("" and dot names become "_"). */
void npk_oracle_sanitize(const char *name, char *out, size_t len);

/* ---- inputs ---- */

/* A zeroed tensor shaped and typed as subgraph 0's tensor index, named as it. */
void npk_oracle_alloc_like(const npk_tfl_model *m, int32_t index, npk_tensor *t);

/* Seeded inputs. Generator: xorshift64* (npk_rand), state = seed, one 64-bit
 * draw per element in C order. Integer types: lo + draw % (hi - lo + 1),
 * uniform over [lo, hi] (bias below 2^-32 for the ranges used); bool: draw & 1;
 * floats: lo + (hi - lo) * (draw >> 11) * 2^-53, uniform over [lo, hi).
 * npk_oracle_fill uses the type's whole range for integers and [-1, 1) for
 * floats. */
void npk_oracle_fill(npk_tensor *t, uint64_t seed);
void npk_oracle_fill_range(npk_tensor *t, uint64_t seed, double lo, double hi);

/* How a picture enters subgraph 0's tensor index (npukit/image.h), or false
 * when the tensor is not a picture ([1,H,W,1|3] or [H,W,1|3] of u8/i8/f32). */
bool npk_oracle_image_input(const npk_tfl_model *m, int32_t index, npk_image_input *in);

/* ---- comparison ---- */

typedef struct npk_cmp {
    bool same_shape; /* dtype and shape equal (nothing else is counted otherwise) */
    size_t count, exact, off1, worse;
    double max_diff;  /* in unit */
    const char *unit; /* "LSB" (integers), "LSB" of the given scale (floats), or "ulp" */
    size_t worst_index;
    /* top-1 over the last dimension, per row (when asked for) */
    size_t rows, top1_agree;
    int64_t top1_a, top1_b; /* of the first row */
} npk_cmp;

/* Compare a with b. Float tensors: in units of scale when scale > 0 (the
 * quantisation step the values come from: |diff| <= 1 step is "off by one"),
 * else in ulps. top1: also compare the index of the largest value of each
 * row (the last dimension), first index on ties. */
npk_cmp npk_oracle_compare(const npk_tensor *a, const npk_tensor *b, double scale, bool top1);
/* One line: "NAME: 1001 elements: 998 exact, 3 off by 1, 0 worse (max |diff| 1 LSB); top-1
 * agrees (282)". */
const char *npk_cmp_summary(const npk_cmp *c, const char *name, char *buf, size_t len);

/* The quantisation step behind a float output: its own scale, else the scale
 * of the DEQUANTIZE input that produced it, else 0 (compare in ulps). */
double npk_oracle_float_scale(const npk_tfl_model *m, int32_t index);

#endif
