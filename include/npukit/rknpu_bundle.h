/* Several layer plans in one address map: one regcmd buffer holding every
 * stream, one task-record array, one submit record per layer (its task
 * ranges counted in the shared array), one weight buffer, and each layer's
 * own input, second input and output buffers in an activation region (no
 * buffer is shared or reused: memory planning across layers is the
 * whole-network compiler's job). What `npukit rknpu compile --op` writes. */
#ifndef NPUKIT_RKNPU_BUNDLE_H
#define NPUKIT_RKNPU_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_layer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npk_rk_bundle_opts {
    int cores; /* 1..3 */
    npk_rk_form form;
    npk_rk_rq_mode requant;
    /* Where the regions start (64-byte aligned; 0: 0x10000000, 0x20000000,
     * 0x40000000). */
    uint32_t act_addr, weight_addr, regcmd_addr;
} npk_rk_bundle_opts;

typedef struct npk_rk_bundle_op {
    npk_rk_lplan plan;   /* at the addresses below */
    size_t task_first;   /* its first record in the shared array */
    uint64_t weight_off; /* its weight blob in the weight buffer */
    uint64_t regcmd_off; /* its streams in the regcmd buffer */
} npk_rk_bundle_op;

typedef struct npk_rk_bundle {
    npk_rk_bundle_opts opts;
    size_t nops;
    npk_rk_bundle_op *ops;
    npk_rknpu_task *records; /* ntasks */
    size_t ntasks;
    npk_rknpu_submit *submits; /* nops */
    uint8_t *weights;          /* weight_bytes, as the NPU reads them */
    uint64_t weight_bytes;
    uint64_t *regcmd; /* regcmd_entries (host order; npk_rk_stream_to_bin for the bytes) */
    size_t regcmd_entries;
    uint64_t act_bytes; /* the activation region's extent */
} npk_rk_bundle;

/* Plan each layer at its place in the map. names (optional, one per layer)
 * prefix a planner error ("operator 12 (CONV_2D): ..."). */
npk_status npk_rk_bundle_make(const npk_rk_layer *const *layers, const char *const *names, size_t n,
                              const npk_rk_bundle_opts *o, npk_rk_bundle *b, npk_error *err);
void npk_rk_bundle_free(npk_rk_bundle *b);

#ifdef __cplusplus
}
#endif
#endif
