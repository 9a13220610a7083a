/* Whole TFLite networks on an RKNPU: subgraph 0 of a model partitioned into
 * NPU segments (runs of operators the layer front end lowers,
 * npukit/rknpu_tflite.h) and CPU segments (runs of the others, executed by
 * the interpreter, npukit/tflite_interp.h), compiled once into one address
 * map and run any number of times.
 *
 * Between two NPU operators a tensor stays in the device's activation buffer
 * in NC1HWC2 (16-byte atoms, the stored domain: uint8 as u - 128); at an
 * NPU <-> CPU boundary it is converted between NHWC and NC1HWC2 and nothing
 * else (both sides hold the model's quantised type). A RESHAPE or SQUEEZE
 * that keeps the innermost dimension is free on the NPU side: NC1HWC2 of
 * [.., W, C] depends on the pixel index only, so the output shares the input's
 * buffer. The activation buffer is planned by tensor lifetime (no two tensors
 * alive at one operator overlap, npk_rk_net_check_memory), the weights of
 * every layer are packed into one weight buffer, the register streams into
 * one regcmd buffer. docs/rknpu.md, "Whole networks". */
#ifndef NPUKIT_RKNPU_NET_H
#define NPUKIT_RKNPU_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_device.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_tflite.h"
#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npk_rk_net_opts {
    int cores; /* 1..3 */
    npk_rk_form form;
    npk_rk_rq_mode requant;
    /* Where the regions start (64-byte aligned; 0: 0x10000000 activations,
     * 0x20000000 weights, 0x40000000 regcmd). */
    uint32_t act_addr, weight_addr, regcmd_addr;
    int threads; /* interpreter threads of the CPU segments (<= 1: one) */
    /* Every device tensor keeps its own bytes (no reuse): all stay readable
     * after a run (npk_rk_net_read), for checking layer by layer. */
    bool keep_all;
    /* Plan every layer again at its addresses instead of moving the first
     * plan's streams there (slower; the tests compare the two). */
    bool replan;
} npk_rk_net_opts;

/* Where a tensor of the subgraph lives. */
enum {
    NPK_RK_NET_NONE = 0, /* constant, or unused */
    NPK_RK_NET_DEV = 1,  /* in the activation buffer (NC1HWC2) */
    NPK_RK_NET_HOST = 2, /* a host buffer (NHWC) */
    NPK_RK_NET_BOTH = 3  /* both (converted at a boundary) */
};

typedef struct npk_rk_net_tensor {
    uint8_t where;
    int32_t root;     /* tensor whose device buffer it shares (itself unless a free reshape) */
    uint32_t h, w, c; /* NPU geometry: c the innermost dimension, w the one before, h the rest */
    uint64_t dev_off; /* root tensors: offset in the activation buffer */
    uint64_t dev_bytes;
    int32_t first, last; /* root tensors: the operators where its device buffer is alive */
    /* Where in root's buffer it starts: a CONCATENATION input's channel
     * planes (net_concat.c), else 0. */
    uint64_t root_off;
    /* A QUANTIZE between uint8 and int8 of one scale, zero points 128 apart,
     * is free: the stored bytes are the same. Of a device tensor its output
     * shares the buffer; of a host tensor it is packed from that tensor's
     * host bytes (pack_from), else -1. */
    int32_t pack_from;
    size_t host_bytes; /* NHWC bytes */
    uint32_t ndim;     /* the host shape (an interpreter's output shape for CPU results) */
    int32_t dims[NPK_TFL_VIEW_MAX_DIMS];
} npk_rk_net_tensor;

/* One operator on the NPU: the lowered layer and its plan at its addresses. */
typedef struct npk_rk_net_op {
    uint32_t op_index;
    npk_rk_tfl_layer tl;
    bool widened; /* input channels padded to the programmed count (weights at zw) */
    void *wide_w; /* the widened weights */
    npk_rk_lplan plan;
    uint32_t addr[5];  /* where the plan's buffers are: input, input2, output, weights, streams */
    size_t task_first; /* its first record in the shared array */
    uint64_t weight_off, regcmd_off;
    int32_t in[2], out; /* root tensors (in[1] -1 unless ADD) */
    /* 2-3 cores: consecutive layers share a submit where no core's task
     * touches what another core's task writes in it (net_runs.c,
     * npk_rk_net_check_submit); the records of such a run are grouped by
     * core. The run's first layer holds its layer count, submit, cores and
     * per-core task ranges (counted from its task_first), the others 0; 1:
     * a submit of its own. */
    uint32_t run;
    npk_rknpu_submit run_submit;
    int run_cores;
    /* Planned with the previous layer's rows per core (net_align_rows) and
     * kept though not in its submit: faster on its own. */
    bool rows_kept;
    npk_rk_lplan own; /* while compiling: the planner's own split of a layer given rows */
    uint32_t run_core_first[NPK_RKNPU_MAX_CORES], run_core_count[NPK_RKNPU_MAX_CORES];
} npk_rk_net_op;

typedef struct npk_rk_net_seg {
    bool npu;
    uint32_t op_first, op_count; /* operators of the model, in stored order */
    /* NPU: npu ops [npu_first, npu_first + npu_count); tensors packed from
     * the host before the segment runs, unpacked to the host after it. CPU:
     * the interpreter's cut inputs and outputs. */
    size_t npu_first, npu_count;
    int32_t *in, *out;
    uint32_t nin, nout;
    npk_tfl_interp *it; /* CPU segments: the interpreter of the cut (made at compile time) */
    /* One core: the segment's layers chained into one submit (vendor form:
     * each layer's last stream continues with the next layer's first; rocket:
     * one job), records task_first .. + task_count of the shared array; the
     * submit counts them from 0. With more cores: a submit per layer or per
     * run of layers no core of which touches what another core writes in it
     * (npk_rk_net_op.run, npk_rk_net_check_submit). */
    bool merged;
    size_t task_first, task_count;
    npk_rknpu_submit submit;
} npk_rk_net_seg;

typedef struct npk_rk_net {
    npk_rk_net_opts opts;
    const npk_tfl_model *m;
    uint32_t ntensors;
    npk_rk_net_tensor *tensors;
    size_t nops;
    npk_rk_net_op *ops;
    size_t nsegs;
    npk_rk_net_seg *segs;
    uint32_t npu_ops, free_ops, cpu_ops; /* operators on each side (free: reshapes, concats) */
    /* The address map. */
    npk_rknpu_task *records;
    size_t ntasks;
    /* Per record: its layer and task; per task in layer order (task_first +
     * t): its record. The identity but in runs over several cores, whose
     * records are grouped by core. */
    uint32_t *rec_op, *rec_task, *task_rec;
    uint8_t *weights;
    uint64_t weight_bytes;
    uint64_t *regcmd; /* host order */
    size_t regcmd_entries;
    uint64_t act_bytes; /* the activation buffer */
    uint64_t peak_live; /* the largest sum of device tensors alive at one operator */
    uint64_t macs;
} npk_rk_net;

/* Partition, lower, plan the memory and every layer. A model whose operator
 * neither the NPU nor the interpreter runs is refused with an error naming
 * it. The model (and its bytes) must outlive the net. */
npk_status npk_rk_net_compile(const npk_tfl_model *m, const npk_rk_net_opts *o, npk_rk_net *net,
                              npk_error *err);
void npk_rk_net_free(npk_rk_net *net);

/* Plan every layer again at other region addresses (a device's buffers). */
npk_status npk_rk_net_relocate(npk_rk_net *net, uint32_t act_addr, uint32_t weight_addr,
                               uint32_t regcmd_addr, npk_error *err);

/* No two device tensors alive at one operator share a byte, each lies in
 * the activation buffer, every layer's buffers are its tensors'. */
npk_status npk_rk_net_check_memory(const npk_rk_net *net, npk_error *err);

/* Layers first .. first+count-1 as one submit: no byte one core's task
 * writes is read or written by another core's task (the cores do not wait
 * for each other inside a submit). The ranges come from the task
 * descriptors and the layers' buffers; the refusal names both tasks and the
 * bytes. Compile runs it on every submit it emits. */
npk_status npk_rk_net_check_submit(const npk_rk_net *net, size_t first, size_t count,
                                   npk_error *err);

/* A rough on-device time of one task (microseconds) from the work it does:
 * npk_rk_net_estimate documents the assumptions. */
typedef struct npk_rk_net_estimate {
    double macs_per_cycle; /* per core: 1024 int8 MACs (2 TOPS at 1 GHz, RK3588's figure) */
    double clock_hz;       /* 1e9 */
    double bytes_per_s;    /* DDR bandwidth one core sees: 8e9 */
    double task_us;        /* fixed cost per task (fetch of the stream, start): 10 */
    double dw_efficiency;  /* depthwise and pools use this share of the MAC array: 1/32 */
} npk_rk_net_estimate;
void npk_rk_net_estimate_defaults(npk_rk_net_estimate *e);
/* Bytes a task moves (input rows read, its weights, its outputs) and its time. */
double npk_rk_net_task_us(const npk_rk_net *net, size_t op, size_t task,
                          const npk_rk_net_estimate *e, uint64_t *bytes);

/* ---- running ---- */

typedef struct npk_rk_net_exec npk_rk_net_exec;

/* Bind a compiled net to a device: allocate its three buffers once, plan the
 * layers at their addresses, load weights and streams, create the CPU
 * segments' interpreters and host buffers. After this a run allocates
 * nothing. The net must outlive the executor. Binding relocates the net's
 * streams to the device's buffers; an earlier executor keeps its own copy.
 * The CPU segments' interpreters belong to the net: executors of one net
 * must not run at the same time. */
npk_status npk_rk_net_exec_new(npk_rk_net *net, npk_rk_device *d, npk_rk_net_exec **out,
                               npk_error *err);
void npk_rk_net_exec_free(npk_rk_net_exec *x);

uint32_t npk_rk_net_ninputs(const npk_rk_net_exec *x);
uint32_t npk_rk_net_noutputs(const npk_rk_net_exec *x);
/* The subgraph's input/output i as a host tensor (NHWC, the model's type):
 * write inputs before a run, read outputs after. */
npk_status npk_rk_net_input(const npk_rk_net_exec *x, uint32_t i, npk_tfl_view *v, npk_error *err);
npk_status npk_rk_net_output(const npk_rk_net_exec *x, uint32_t i, npk_tfl_view *v, npk_error *err);

typedef struct npk_rk_net_timing {
    double npu_ms, cpu_ms, convert_ms; /* wall time of the last run by part */
    size_t submits;
} npk_rk_net_timing;

/* Submits per run (one per merged segment, else one per layer or run of
 * layers, npk_rk_net_op.run). */
size_t npk_rk_net_submits(const npk_rk_net *net);

/* Submit k of a run (0 .. npk_rk_net_submits - 1, in order): its layers
 * (net->ops), its records and each core's range in them (counted from
 * task_first); false past the last. */
typedef struct npk_rk_net_submit_view {
    size_t first_op, nops;
    size_t task_first, task_count;
    int cores;
    uint32_t core_first[NPK_RKNPU_MAX_CORES], core_count[NPK_RKNPU_MAX_CORES];
    const npk_rknpu_submit *submit;
} npk_rk_net_submit_view;
bool npk_rk_net_submit_at(const npk_rk_net *net, size_t k, npk_rk_net_submit_view *v);

npk_status npk_rk_net_run(npk_rk_net_exec *x, npk_rk_net_timing *t, npk_error *err);

/* A tensor the last run wrote on the device, as NHWC into y (host_bytes):
 * valid for every device tensor when compiled with keep_all, else only
 * while its buffer was not reused. */
npk_status npk_rk_net_read(npk_rk_net_exec *x, int32_t tensor, void *y, npk_error *err);

/* ---- layout at the boundaries ---- */

/* NHWC (uint8 or int8 of the model) -> NC1HWC2 stored bytes of `planes`
 * planes, channels past c set to the zero point; and back. */
void npk_rk_net_pack(const uint8_t *x, bool u8, int32_t zero_point, uint32_t h, uint32_t w,
                     uint32_t c, uint32_t planes, uint8_t *dst);
void npk_rk_net_unpack(const uint8_t *src, bool u8, uint32_t h, uint32_t w, uint32_t c, uint8_t *y);

#ifdef __cplusplus
}
#endif
#endif
