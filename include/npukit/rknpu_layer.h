/* RKNPU layers: convolution, depthwise convolution and fully-connected
 * layers described independently of any model format, planned into tasks
 * (register-command streams chained per core), with the buffers they read
 * and write.
 *
 * A layer is what a quantised network states about one operator: shapes,
 * stride, explicit padding, dilation, data type, zero points and scales
 * (per tensor, or per output channel for the weights), bias and the fused
 * activation as a clip range of the output. The planner turns it into
 * tasks the hardware runs as it is: inputs and outputs in NC1HWC2 with 16-byte
 * atoms, weights packed as the CNA reads them, biases and per-channel
 * multipliers as the DPU's read DMA fetches them. How each register is set
 * and why, and how closely the result follows TFLite's integer arithmetic,
 * is in docs/rknpu.md ("Layers"). */
#ifndef NPUKIT_RKNPU_LAYER_H
#define NPUKIT_RKNPU_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_uapi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npk_rk_layer_kind {
    NPK_RK_LAYER_CONV = 0,      /* CONV_2D */
    NPK_RK_LAYER_DEPTHWISE = 1, /* DEPTHWISE_CONV_2D, depth multiplier 1 */
    NPK_RK_LAYER_FC = 2,        /* FULLY_CONNECTED: a 1x1 convolution of one pixel */
    NPK_RK_LAYER_ADD = 3,       /* ADD of two tensors of one shape (in, in2) */
    NPK_RK_LAYER_AVGPOOL = 4,   /* AVERAGE_POOL_2D, unpadded: a depthwise convolution */
    NPK_RK_LAYER_MAXPOOL = 5    /* MAX_POOL_2D: PPU tasks */
} npk_rk_layer_kind;

typedef enum npk_rk_ltype {
    NPK_RK_LT_INT8 = 0,  /* int8 input, weights and output */
    NPK_RK_LT_UINT8 = 1, /* uint8 input, weights and output */
    NPK_RK_LT_FP16 = 2   /* fp16 input and weights, fp32 bias, fp16 output */
} npk_rk_ltype;

const char *npk_rk_layer_kind_name(npk_rk_layer_kind k);
const char *npk_rk_ltype_name(npk_rk_ltype t);

/* Quantisation of one tensor (ignored for fp16). */
typedef struct npk_rk_lquant {
    double scale;
    int32_t zero_point; /* in the tensor's own type: -128..127 or 0..255 */
} npk_rk_lquant;

typedef struct npk_rk_layer {
    npk_rk_layer_kind kind;
    npk_rk_ltype type;
    uint32_t in_h, in_w, in_c;    /* input (batch 1); FC: in_h = in_w = 1 */
    uint32_t out_h, out_w, out_c; /* output; must follow from the rest */
    uint32_t k_h, k_w;            /* kernel (1x1 for FC) */
    uint32_t stride_h, stride_w;  /* 1..7 */
    uint32_t dil_h, dil_w;        /* 1.. */
    uint32_t pad_top, pad_left, pad_bottom, pad_right;
    npk_rk_lquant in, w, out;
    npk_rk_lquant in2; /* ADD: the second input */
    /* ADD broadcasting: the second input's shape (0, 0, 0: the first
     * input's), each of in2_h, in2_w, in2_c 1 or the first input's. At run
     * time only [H, W, 1] (a channel broadcast) is planned; a constant second
     * input (in2_const: NHWC of its own shape, the layer's type) may
     * broadcast any way. */
    uint32_t in2_h, in2_w, in2_c;
    const void *in2_const;
    /* A conv, depthwise or FC layer followed by ADD(its result, in2), fused
     * into one DPU pass through the element-wise stage: `out` is then the
     * intermediate tensor's quantisation (never materialised, so its own
     * rounding is skipped), add_out the final output's, act_min/act_max the
     * ADD's clip range. */
    bool fused_add;
    npk_rk_lquant add_out;
    const double *w_scales; /* out_c per-channel weight scales, or NULL (per tensor) */
    /* out_c requantisation multipliers (input scale x weight scale / output
     * scale) exactly as the reference framework computes them (TFLite forms
     * some products in float), or NULL: computed in double from the scales. */
    const double *mults;
    /* Per output channel, which sign of value the requantisation follows
     * TFLite's rounding for where that depends on the sign (exact mode, no
     * clip deciding it): > 0 positive, < 0 negative, 0 or NULL: chosen from
     * the output range. */
    const int8_t *tie_sign;
    int32_t act_min, act_max; /* clip range of the output in its quantised type (the
                                 type's range when there is no activation) */
    /* Weights: conv and FC [out_c][k_h][k_w][in_c], depthwise [k_h][k_w][c]
     * (TFLite's orders); elements of the type (int8, uint8, fp16 bits). */
    const void *weights;
    /* Bias per output channel: int32 (quantised types) or float (fp16); NULL: none. */
    const int32_t *bias_i32;
    const float *bias_f32;
} npk_rk_layer;

/* The output size a kernel, stride, dilation and padding give along one axis
 * (0 if the kernel does not fit). */
uint32_t npk_rk_conv_out_size(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil,
                              uint32_t pad_before, uint32_t pad_after);
/* SAME padding of TFLite along one axis: total split with the extra row or
 * column after. */
void npk_rk_same_padding(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t *before,
                         uint32_t *after);
/* The clip range of a fused activation (0 none, 1 RELU, 2 RELU_N1_TO_1,
 * 3 RELU6) for an output of the given type and quantisation, as TFLite
 * computes it (round half away from zero, clamped to the type). */
void npk_rk_activation_range(int activation, npk_rk_ltype t, double scale, int32_t zero_point,
                             int32_t *lo, int32_t *hi);

/* Check a layer: every refusal names the rule or the register limit. */
npk_status npk_rk_layer_check(const npk_rk_layer *l, npk_error *err);

/* ---- requantisation ---- */

/* How the DPU turns a channel's int32 sum into the output (docs/rknpu.md,
 * "Requantisation"): x = acc + bias'; per-tensor: out = round(x * scale /
 * 2^shift) + offset; per-channel: y = floor(x * mul[c] / 2^mul_shift), out =
 * round(y * scale / 2^shift) + offset; both saturated to the output type. */
typedef struct npk_rk_requant {
    bool per_channel;
    uint32_t scale, shift; /* DPU_OUT_CVT_SCALE / _SHIFT */
    int32_t offset;        /* DPU_OUT_CVT_OFFSET: the output zero point (stored domain) */
    uint32_t mul_shift;    /* DPU_BN_MUL_CFG shift (per-channel) */
    double worst_rel;      /* largest relative error of a channel's multiplier */
    /* Fused ADD: the intermediate's scaling in BN (register multiplier and
     * shift), the second tensor's operand conversion and the clip in EW. */
    bool fused;
    uint32_t fused_mul, fused_shift;
    int32_t ew_offset;
    uint32_t ew_scale, ew_shift;
    bool ew_relu, ew_relux;
    int32_t ew_cmp;
    /* Exact mode (NPK_RK_RQ_EXACT): BS adds bias' and multiplies by b[c]
     * (shift 0), BN adds k[c] (TFLite's second-rounding offset) and
     * multiplies by a[c] >> mul_shift, giving frac_bits fractional bits of
     * the output; EW subtracts clip_lo with ReLU and caps at clip_hi with
     * ReLU-X; OUT_CVT (scale, shift) rounds the fraction off and adds
     * offset. */
    bool exact;
    uint32_t frac_bits;
    bool clip_lower, clip_upper;
    int32_t clip_lo, clip_hi;
    uint32_t ties_negative; /* channels whose offset follows TFLite for negative values */
    double tie_offset_max;  /* largest offset (output steps) TFLite's double rounding adds */
    double tie_open_max;    /* ... of those not followed for values the clip leaves in range */
    double worst_abs;       /* bound on |NPU value - TFLite value| before rounding (steps) */
    /* Exact mode, sign-following (NPK_RK_RQ_EXACT on a layer whose clip
     * leaves both signs open): every tile runs twice, pass 1 with TFLite's
     * offset for positive values clipped below at the zero point (into the
     * plan's sign scratch), pass 2 with the offset for negative values
     * clipped above at it (BN ReLU-X at 0), adding pass 1's output through
     * EW (docs/rknpu.md, "Sign-following rounding"). */
    bool two_pass;
    int32_t zero; /* the output zero point (stored domain) the passes clip at */
} npk_rk_requant;

/* How the DPU requantises int8 convolutions (docs/rknpu.md,
 * "Requantisation"). */
typedef enum npk_rk_rq_mode {
    /* BS/BN multipliers with ~30 bits of precision and TFLite's
     * double-rounding offset, clips in EW: exact except where TFLite's
     * rounding depends on the sign of the value (relies on inferred BS/BN
     * semantics). */
    NPK_RK_RQ_EXACT = 0,
    /* Phase A's: OUT_CVT alone per tensor (the path the hardware capture
     * pins), BN's 15-bit multiplier per channel. */
    NPK_RK_RQ_SIMPLE = 1,
    /* The exact mode in one pass per tile: TFLite's double rounding followed
     * for one sign of value only where no clip decides it (linear layers
     * then miss about 2 delta of the other sign's values; fewer tasks). */
    NPK_RK_RQ_EXACT1 = 2
} npk_rk_rq_mode;

/* "exact", "simple", "exact1". */
const char *npk_rk_rq_mode_name(npk_rk_rq_mode m);

/* ---- plans ---- */

typedef struct npk_rk_lplan_opts {
    int cores;        /* 1..3 */
    npk_rk_form form; /* streams always carry DPU_RDMA (biases); vendor or rocket tail
                         conventions as for matmul plans */
    uint32_t input_addr, weight_addr, output_addr, regcmd_addr;
    /* Test knobs (0: the hardware limits): at most this many output rows or
     * output channels per task, forcing the tiling modes on small shapes. */
    uint32_t max_rows, max_channels;
    uint32_t input2_addr; /* ADD and fused ADD: the second input */
    npk_rk_rq_mode requant;
} npk_rk_lplan_opts;

typedef struct npk_rk_ltask {
    uint32_t oy0, oh; /* output rows oy0 .. oy0+oh-1 */
    uint32_t iy0, ih; /* input rows read */
    uint32_t pad_top, pad_bottom;
    uint32_t oc0, ocn; /* output channels (programmed, aligned) */
    int core;
    uint32_t regcmd_off; /* byte offset of the stream in the regcmd buffer */
    size_t entries;      /* stream length */
    int next;            /* index of the chained task, -1 */
    uint64_t macs;
    /* Columns (column tiling: one output row per task; otherwise the whole
     * width): output columns ox0 .. ox0+ow-1 from input columns ix0 ..
     * ix0+iw-1, with pad_left columns of padding before them. */
    uint32_t ox0, ow, ix0, iw, pad_left;
    uint32_t region; /* padded average pooling: the window-count class (0 otherwise) */
    /* K-split: a partial task sums input channels ic0 .. ic0+icn-1 into
     * int32 (adding the previous partial sums); the unit's last task is
     * DPU-only (requant_only) and requantises the total. icn 0: no split. */
    uint32_t ic0, icn;
    bool requant_only;
    /* The partial's index in its unit (K-split slice or window piece), and
     * for an average pool beyond 31 taps per axis the window piece it sums:
     * rows wy0 .. wy0+wkh-1, columns wx0 .. wx0+wkw-1 (wkh 0: the whole
     * window). */
    uint32_t part;
    uint32_t wy0, wx0, wkh, wkw;
    /* Sign-following (rq.two_pass): 1 for the pass of positive values (writes
     * the sign scratch), 2 for the pass of negative values (adds it, writes
     * the output); 0 for every other task. */
    uint8_t pass;
} npk_rk_ltask;

typedef struct npk_rk_lplan {
    npk_rk_layer layer; /* shapes and quantisation (pointers not kept) */
    npk_rk_lplan_opts opts;
    bool fp; /* fp16 data path */
    bool depthwise;
    uint32_t cin, cout; /* programmed channel counts (aligned) */
    uint32_t kernels;   /* WEIGHT_KERNELS per full task */
    uint32_t group;     /* output channels per DPU output group */
    /* Buffers (bytes). The weight buffer holds the packed weights, then the
     * bias stream (BRDMA) and the multiplier stream (NRDMA) at the offsets. */
    uint64_t input_bytes, weight_bytes, output_bytes;
    uint64_t input2_bytes; /* ADD: the second input's buffer (0: a constant, in the weights) */
    uint64_t bias_off, mul_off, wt_bytes;
    npk_rk_requant rq;
    size_t count;
    npk_rk_ltask *tasks;
    uint32_t tiles_h, tiles_c;
    uint32_t tiles_w; /* column tiles per output row (1: whole rows) */
    uint32_t ksplit;  /* input-channel slices per output tile (1: none) */
    /* K-split: two int32 partial-sum tensors (programmed channels, NC1HWC2
     * with 4 channels per atom) in the output buffer from scratch_off on,
     * after the output itself (output_bytes includes them). */
    uint64_t scratch_off, scratch_bytes;
    /* rq.two_pass: pass 1's int8 output (the output's layout) at sign_off in
     * the output buffer (after the output, or in the K-split area no longer
     * needed); pass 2's NRDMA records [k, a] at mul2_off in the weights. */
    uint64_t sign_off, sign_bytes, mul2_off;
    int cores;
    uint64_t *regcmd; /* all streams, 64-byte aligned (entries, host order) */
    size_t regcmd_entries;
    npk_rknpu_task *records;
    npk_rknpu_submit submit;
    uint32_t core_first[NPK_RKNPU_MAX_CORES], core_count[NPK_RKNPU_MAX_CORES];
    uint64_t core_work[NPK_RKNPU_MAX_CORES];
    uint32_t core_rows[NPK_RKNPU_MAX_CORES]; /* rows per core when given, else 0 */
    uint8_t *wblob;                          /* the weight buffer's contents (weight_bytes) */
    /* wblob lies in memory the planner was lent (a whole network's weight
     * buffer, which it plans straight into): not freed with the plan;
     * wblob_cap bytes there are the plan's to use. */
    bool wblob_lent;
    uint64_t wblob_cap;
} npk_rk_lplan;

npk_status npk_rk_lplan_make(const npk_rk_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                             npk_error *err);
/* The same with each core's output rows given (core_rows[k] rows for core k,
 * in order, summing to out_h; trailing 0s), so a layer can follow another's
 * row split (whole networks: one submit over several layers, net_runs.c).
 * Honoured by convolutions, depthwise layers and unpadded average pools
 * planned with one channel tile and whole rows (core_rows in the plan then
 * says so); otherwise the planner's own split, as npk_rk_lplan_make. */
npk_status npk_rk_lplan_make_rows(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                                  const uint32_t *core_rows, npk_rk_lplan *p, npk_error *err);
void npk_rk_lplan_free(npk_rk_lplan *p);

/* A bound on how far the plan's value before the final rounding can be from
 * TFLite's (integer layers, in output steps): the outputs differ from
 * TFLite's by at most ceil(bound) steps. 0 for the layers that are exact by
 * construction (pools), -1 for fp16 layers. */
double npk_rk_lplan_tflite_bound(const npk_rk_lplan *p);

/* Host tensors <-> the plan's buffers. The input is NHWC (h, w, c) of the
 * layer's type (fp16 as bits); the output likewise. */
void npk_rk_lplan_pack_input(const npk_rk_lplan *p, const void *x, uint8_t *input);
/* ADD: the second input (its own zero point pads the channels); fused add:
 * the second tensor, of the output's shape. */
void npk_rk_lplan_pack_input2(const npk_rk_lplan *p, const void *x, uint8_t *input2);
/* Bytes of the second input's buffer (0 when the layer has none). */
uint64_t npk_rk_lplan_input2_bytes(const npk_rk_lplan *p);
void npk_rk_lplan_unpack_output(const npk_rk_lplan *p, const uint8_t *output, void *y);

#ifdef __cplusplus
}
#endif
#endif
