/* Multi-task matmul plans: a matmul too large for one task (or spread over
 * several cores) becomes a grid of M x N tiles, each an ordinary single-task
 * stream. Streams sit 64-byte aligned in one regcmd buffer; each core runs a
 * contiguous range of tasks chained through the stream tails, and the
 * submit record gives each core its range in the slot the driver reads.
 *
 * Buffers (all offsets in bytes from the buffer's DMA address):
 *   input   the M-tiles one after another, each in the NC1HWC2 input layout
 *           of its rows (tile at m0 starts at m0*K*b);
 *   weights B in the packed weight layout of the whole matrix; an N-tile
 *           starting at n0 is the contiguous range at n0*K*b;
 *   output  per M-tile, the NC1HWC2 output layout of its rows (tile at m0
 *           starts at m0*N*ob); an N-tile writes channels n0.. inside it.
 * K is never split: the streams have no way to accumulate partial sums
 * that the references show, so a K beyond one task's limit is refused. */
#ifndef NPUKIT_RKNPU_PLAN_H
#define NPUKIT_RKNPU_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_uapi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPK_RK_STREAM_ALIGN 64

typedef struct npk_rk_plan_opts {
    uint32_t m, k, n;
    npk_rk_dtype dtype;
    int cores; /* 1, 2 or 3 (core masks 0x1, 0x3, 0x7) */
    uint32_t input_addr, weight_addr, output_addr, regcmd_addr;
    uint32_t max_m, max_n; /* 0: the hardware limits; smaller values force more tiles */
    npk_rk_form form;      /* stream form; rocket plans are not chained (the rocket
                              driver starts every task itself) */
} npk_rk_plan_opts;

typedef struct npk_rk_plan_task {
    uint32_t m0, mt, n0, nt; /* the output tile: rows m0.., columns n0.. */
    int core;
    uint64_t input_off, weight_off, output_off; /* byte offsets in the buffers */
    uint32_t regcmd_off;                        /* byte offset of the stream */
    npk_rk_matmul mm;                           /* the task's shape and addresses */
    int next;                                   /* index of the chained task, -1 */
} npk_rk_plan_task;

typedef struct npk_rk_plan {
    npk_rk_plan_opts opts;
    size_t count;
    npk_rk_plan_task *tasks; /* M-tile major: task i*tiles_n + j */
    uint32_t tiles_m, tiles_n;
    int cores;               /* cores used (fewer than asked when tasks are fewer) */
    npk_rknpu_task *records; /* one per task, for the task buffer */
    npk_rknpu_submit submit; /* task_obj_addr left 0: the device backend fills it */
    size_t stream_entries;   /* entries per task's stream (108 vendor, 126 rocket) */
    uint64_t *regcmd;        /* the regcmd buffer as entries (host order) */
    size_t regcmd_entries;   /* its length in entries (padding included) */
    uint32_t core_first[NPK_RKNPU_MAX_CORES], core_count[NPK_RKNPU_MAX_CORES];
    uint64_t core_work[NPK_RKNPU_MAX_CORES]; /* multiply-accumulates per core */
    uint64_t input_bytes, weight_bytes, output_bytes;
} npk_rk_plan;

/* Refused (NPK_E_LIMIT / NPK_E_ARG, the buffers and ranges named): a buffer
 * past the 32-bit DMA address space, or two buffers (input, weight, output,
 * regcmd) that share a byte. All four addresses 0 means the buffers are not
 * placed yet (a plan made only for its sizes): the overlap check is skipped. */
npk_status npk_rk_plan_make(const npk_rk_plan_opts *o, npk_rk_plan *p, npk_error *err);
void npk_rk_plan_free(npk_rk_plan *p);

/* Byte offsets of single elements in the plan's buffers (0-based indices):
 * A[m][k] in the input, B[k][n] in the weights, C[m][n] in the output. */
uint64_t npk_rk_plan_input_offset(const npk_rk_plan *p, uint32_t m, uint32_t k);
uint64_t npk_rk_plan_weight_offset(const npk_rk_plan *p, uint32_t k, uint32_t n);
uint64_t npk_rk_plan_output_offset(const npk_rk_plan *p, uint32_t m, uint32_t n);

/* Fill the buffers from row-major host matrices and read the result back:
 * A is M x K, B is K x N (elements of the input size, fp16 bits or int8),
 * C is M x N of the output size. Buffers are the sizes in the plan. */
void npk_rk_plan_pack_input(const npk_rk_plan *p, const void *a, void *input);
void npk_rk_plan_pack_weights(const npk_rk_plan *p, const void *b, void *weights);
void npk_rk_plan_unpack_output(const npk_rk_plan *p, const void *output, void *c);

#ifdef __cplusplus
}
#endif
#endif
