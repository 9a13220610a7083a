/* Whole compiled models on the Edge TPU: every edgetpu-custom-op runs on an
 * accelerator (USB or the emulator, edgetpu_usb.h / edgetpu_emu.h), every
 * other operator on the TFLite interpreter (tflite_interp.h), in graph
 * order. Values cross each Edge TPU op's boundary as the graph states them:
 * the op's TFLite tensors are matched to the executable's layers by name,
 * uint8 / int8 / int16 values travel as the device's unsigned bytes (signed
 * ones with the sign bit flipped), outputs are de-tiled.
 *
 * Typical use (open a device once, load several models, run many times):
 *   npk_etpu_graph_new(&model_a, NULL, &ga, err);   // checks everything: no device yet
 *   npk_etpu_graph_new(&model_b, NULL, &gb, err);
 *   npk_etpu_open(transport, &oo, &dev, err);
 *   npk_tfl_interp_input(npk_etpu_graph_interp(ga), 0, &view, err);  // write view.data
 *   npk_etpu_graph_invoke(ga, dev, &info, err);      // any number of times, any order
 *   npk_etpu_graph_invoke(gb, dev, &info, err);
 * The device keeps the parameters of one caching token (co-compiled models
 * share one and keep each other's parameters): switching models uploads
 * parameters only when the token changes (edgetpu_usb.h).
 *
 * Pipelines chain segment models (the compiler's segment_K_of_N files) by
 * tensor name: a segment's input takes the output of the same name of an
 * earlier segment. */
#ifndef NPUKIT_EDGETPU_GRAPH_H
#define NPUKIT_EDGETPU_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/edgetpu.h"
#include "npukit/edgetpu_usb.h"
#include "npukit/error.h"
#include "npukit/tflite_interp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npk_etpu_graph npk_etpu_graph;

typedef struct npk_etpu_graph_opts {
    int threads;   /* interpreter worker threads for the CPU operators (<= 1: one) */
    bool keep_all; /* every tensor stays readable after invoke (for dumps) */
    /* Optional cut of the graph (as in npk_tfl_interp_opts): tensor indices
     * that replace subgraph 0's inputs / outputs; only the operators between
     * them are planned and run. */
    const int32_t *inputs;
    uint32_t ninputs;
    const int32_t *outputs;
    uint32_t noutputs;
} npk_etpu_graph_opts;

typedef struct npk_etpu_graph_info {
    uint32_t device_runs;       /* Edge TPU ops executed */
    uint32_t parameter_uploads; /* runs that uploaded parameters first */
    double device_ms;           /* wall time inside Edge TPU ops (transfers included) */
    uint64_t bytes_out, bytes_in;
} npk_etpu_graph_info;

/* Plan a compiled model (m must outlive the graph): each Edge TPU op's
 * executables (npk_etpu_plan_init_op), its tensors against its layers (by
 * name, type and size; every output must be transferred by the hints) and
 * the interpreter's plan of the whole subgraph 0, so an operator the
 * interpreter lacks is reported here ("operator 3 (ARG_MAX): no kernel for
 * this operator"), before anything is sent to a device. opts may be NULL. */
npk_status npk_etpu_graph_new(const npk_etpu_model *m, const npk_etpu_graph_opts *opts,
                              npk_etpu_graph **out, npk_error *err);
void npk_etpu_graph_free(npk_etpu_graph *g);

/* The interpreter that runs the graph: inputs, outputs and tensors
 * (npk_tfl_interp_input / _output / _tensor / _find). */
npk_tfl_interp *npk_etpu_graph_interp(const npk_etpu_graph *g);
const npk_etpu_model *npk_etpu_graph_model(const npk_etpu_graph *g);
/* The plans of its Edge TPU ops (in model->ops order). */
uint32_t npk_etpu_graph_nops(const npk_etpu_graph *g);
const npk_etpu_plan *npk_etpu_graph_plan(const npk_etpu_graph *g, uint32_t k);

/* Run the whole graph once; the Edge TPU ops on dev (an opened device).
 * info (may be NULL) receives what this invocation did on the device. */
npk_status npk_etpu_graph_invoke(npk_etpu_graph *g, npk_etpu_device *dev, npk_etpu_graph_info *info,
                                 npk_error *err);

/* ---- pipelines of segment models ---- */

typedef struct npk_etpu_pipeline npk_etpu_pipeline;

/* Connect segments in order: an input of segment s > 0 takes the output of
 * the same name of the latest earlier segment that has one (type, shape and
 * quantisation must agree); inputs no earlier segment produces are the
 * pipeline's inputs, and outputs no later segment takes its outputs. A
 * segment that takes nothing from the segments before it is an error (the
 * models are not in pipeline order). The graphs must outlive the pipeline. */
npk_status npk_etpu_pipeline_new(npk_etpu_graph *const *segments, uint32_t n,
                                 npk_etpu_pipeline **out, npk_error *err);
void npk_etpu_pipeline_free(npk_etpu_pipeline *p);

typedef struct npk_etpu_pipe_port {
    uint32_t segment; /* index into segments */
    uint32_t index;   /* that graph's interpreter input / output index */
} npk_etpu_pipe_port;

uint32_t npk_etpu_pipeline_ninputs(const npk_etpu_pipeline *p);
uint32_t npk_etpu_pipeline_noutputs(const npk_etpu_pipeline *p);
npk_etpu_pipe_port npk_etpu_pipeline_input_port(const npk_etpu_pipeline *p, uint32_t i);
npk_etpu_pipe_port npk_etpu_pipeline_output_port(const npk_etpu_pipeline *p, uint32_t i);
/* Views of the pipeline's inputs (write them before invoke) and outputs. */
npk_status npk_etpu_pipeline_input(const npk_etpu_pipeline *p, uint32_t i, npk_tfl_view *v,
                                   npk_error *err);
npk_status npk_etpu_pipeline_output(const npk_etpu_pipeline *p, uint32_t i, npk_tfl_view *v,
                                    npk_error *err);
/* Run every segment in order, passing tensors between them; info sums them. */
npk_status npk_etpu_pipeline_invoke(npk_etpu_pipeline *p, npk_etpu_device *dev,
                                    npk_etpu_graph_info *info, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
