/* Internals of the whole-network compiler (src/rknpu/net/). */
#ifndef NPK_RKNPU_NET_INTERNAL_H
#define NPK_RKNPU_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/rknpu_net.h"

/* SIDE_FOLDED: a PAD folded into the convolution that reads its output;
 * SIDE_CONCAT: a CONCATENATION its inputs' writers do (net_concat.c). */
enum { SIDE_CPU = 0, SIDE_NPU = 1, SIDE_FREE = 2, SIDE_FOLDED = 3, SIDE_CONCAT = 4 };

/* State while compiling. */
typedef struct net_build {
    npk_rk_net *net;
    uint8_t *side;   /* per operator */
    int32_t *npu_of; /* per operator: its index in net->ops, or -1 */
    bool *dev_made;  /* per tensor: written on the device (by a layer or a free reshape) */
    int32_t *fold;   /* per operator: the PAD folded into this convolution, or -1 */
    /* Layers are planned straight into net->weights (wt_cap bytes) at the
     * offsets the address map gives them: the next one at wt_used. */
    uint64_t wt_cap, wt_used;
} net_build;

/* A layer's buffers, in the order of net_relocate_plan's address arrays. */
enum { NET_IN, NET_IN2, NET_OUT, NET_WT, NET_REG, NET_BUFS };
/* Where the first plan of every layer puts its buffers (disjoint ranges of
 * 512 MiB, so every address in a stream names its buffer). */
#define NET_MARK_IN   0x10000000u
#define NET_MARK_IN2  0x30000000u
#define NET_MARK_OUT  0x50000000u
#define NET_MARK_WT   0x70000000u
#define NET_MARK_REG  0x90000000u
#define NET_MARK_SPAN 0x20000000u /* a layer's buffer must be smaller */

/* Move a plan's addresses from the buffers at `from` to `to` (streams and
 * task records patched in place). */
npk_status net_relocate_plan(npk_rk_lplan *p, const uint32_t from[NET_BUFS],
                             const uint32_t to[NET_BUFS], npk_error *err);

bool net_is_const(const npk_tfl_model *m, const npk_tfl_tensor *t);
npk_status net_partition(net_build *b, npk_error *err);
/* Operator i as a CONCATENATION along channels with no copy: its inputs
 * placed at their channel planes of the output (root, root_off). */
bool net_concat(net_build *b, uint32_t i);
/* QUANTIZE i between 8-bit types as a 1x1 depthwise layer (net_quantize.c),
 * and whether that saves a trip to the host. */
npk_status net_quantize_lower(const npk_tfl_model *m, uint32_t i, npk_rk_tfl_layer *tl,
                              npk_error *err);
bool net_quantize_worth(const net_build *b, uint32_t i);
/* 2-3 cores: consecutive layers in one submit where npk_rk_net_check_submit
 * allows it (net_runs.c); the record maps (rec_op, rec_task, task_rec). */
npk_status net_merge_runs(npk_rk_net *net, npk_error *err);
/* 2-3 cores: a row-local layer (1x1 window, stride 1) after a layer split
 * by rows is planned again with the same rows per core, so the two can
 * share a submit. Before the layers are placed. */
npk_status net_align_rows(npk_rk_net *net, npk_error *err);
/* Tensors a run of row-aligned layers reads stay alive to its last layer
 * (their bytes must not be reused by a layer of the same submit that
 * another core runs). After lifetimes, before the memory plan. */
void net_extend_lifetimes(npk_rk_net *net);
/* After placing: a layer given rows that did not join the previous layer's
 * submit (the check refused it) is planned again with its own split;
 * changed when any was (place again). */
npk_status net_unalign(npk_rk_net *net, bool *changed, npk_error *err);
/* Plan a layer again (other addresses) with the rows per core its plan
 * was given, if any. */
npk_status net_plan_layer(const npk_rk_net_op *o, const npk_rk_lplan_opts *po, npk_rk_lplan *p,
                          npk_error *err);

#endif
