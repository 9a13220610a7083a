/* Records of the vendor rknpu driver's uAPI (driver 0.9.x, LP64 and 32-bit
 * layouts are identical) that describe work: the task and submit records,
 * plus the amounts the driver derives from them. In-memory structs are in
 * host order, as the ioctl takes them; the *_to_bytes / *_from_bytes
 * functions give the little-endian byte images written to files. */
#ifndef NPUKIT_RKNPU_UAPI_H
#define NPUKIT_RKNPU_UAPI_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Job flags (rknpu_submit.flags). */
#define NPK_RKNPU_JOB_SLAVE     0x0u
#define NPK_RKNPU_JOB_PC        0x1u
#define NPK_RKNPU_JOB_BLOCK     0x0u
#define NPK_RKNPU_JOB_NONBLOCK  0x2u
#define NPK_RKNPU_JOB_PINGPONG  0x4u
#define NPK_RKNPU_JOB_FENCE_IN  0x8u
#define NPK_RKNPU_JOB_FENCE_OUT 0x10u

/* Core masks (rknpu_submit.core_mask). */
#define NPK_RKNPU_CORE_AUTO 0x0u
#define NPK_RKNPU_CORE0     0x1u
#define NPK_RKNPU_CORE1     0x2u
#define NPK_RKNPU_CORE2     0x4u
#define NPK_RKNPU_MAX_CORES 3

#define NPK_RKNPU_INT_CLEAR            0x1FFFFu /* all interrupt status bits */
#define NPK_RKNPU_PC_DATA_EXTRA_AMOUNT 4u       /* tail entries the driver adds */
#define NPK_RKNPU_PC_AMOUNT_SCALE      2u       /* RK3588: amounts in 128-bit units */
#define NPK_RKNPU_MAX_SUBMIT_TASKS     4095u    /* task_number cap per submit */
#define NPK_RKNPU_SUBCORE_SLOTS        5
#define NPK_RKNPU_TIMEOUT_MS           6000u /* what the public demo uses */

#if defined(__GNUC__)
#define NPK_RKNPU_PACKED __attribute__((packed))
#else
#define NPK_RKNPU_PACKED
#endif

/* struct rknpu_task: one register-command stream to run. 40 bytes, packed. */
typedef struct NPK_RKNPU_PACKED npk_rknpu_task {
    uint32_t flags;
    uint32_t op_idx;
    uint32_t enable_mask;
    uint32_t int_mask;
    uint32_t int_clear;
    uint32_t int_status;
    uint32_t regcfg_amount; /* stream entries minus the 4-entry tail */
    uint32_t regcfg_offset;
    uint64_t regcmd_addr; /* NPU DMA address of the stream */
} npk_rknpu_task;

/* struct rknpu_subcore_task: the task range one core runs. */
typedef struct npk_rknpu_subcore_task {
    uint32_t task_start;
    uint32_t task_number;
} npk_rknpu_subcore_task;

/* struct rknpu_submit: the RKNPU_SUBMIT ioctl argument. 104 bytes. */
typedef struct npk_rknpu_submit {
    uint32_t flags;
    uint32_t timeout; /* ms */
    uint32_t task_start;
    uint32_t task_number;
    uint32_t task_counter;
    int32_t priority;
    uint64_t task_obj_addr;   /* kernel object address of the task buffer */
    uint64_t regcfg_obj_addr; /* newer headers: u32 iommu_domain_id + u32 reserved */
    uint64_t task_base_addr;  /* programmed into PC_TASK_DMA_BASE_ADDR */
    uint64_t user_data;       /* newer headers: s64 hw_elapse_time */
    uint32_t core_mask;
    int32_t fence_fd;
    npk_rknpu_subcore_task subcore_task[NPK_RKNPU_SUBCORE_SLOTS];
} npk_rknpu_submit;

#define NPK_RKNPU_TASK_SIZE   40
#define NPK_RKNPU_SUBMIT_SIZE 104

/* The driver's amounts. regcfg_amount for a stream of n entries (n - 4);
 * the PC fetch amount the driver programs for the first task of a core,
 * (regcfg_amount + 4 + scale - 1) / scale - 1 (108 entries -> 104 -> 53);
 * and the amount a stream's tail carries for the next chained stream of n
 * entries, ALIGN((n - 4) / 2, 2) as Mesa writes it. */
uint32_t npk_rknpu_regcfg_amount(size_t stream_entries);
uint32_t npk_rknpu_pc_data_amount(uint32_t regcfg_amount);
uint32_t npk_rknpu_chain_amount(size_t next_stream_entries);

/* Which subcore_task slot the driver reads for `core` (0..2) under
 * core_mask: slot core + 2 when all three cores are in the mask, else slot
 * core. -1 for a mask the driver refuses or a core outside the mask. */
int npk_rknpu_subcore_slot(uint32_t core_mask, int core);

void npk_rknpu_task_to_bytes(const npk_rknpu_task *t, uint8_t out[NPK_RKNPU_TASK_SIZE]);
void npk_rknpu_task_from_bytes(const uint8_t in[NPK_RKNPU_TASK_SIZE], npk_rknpu_task *t);
void npk_rknpu_submit_to_bytes(const npk_rknpu_submit *s, uint8_t out[NPK_RKNPU_SUBMIT_SIZE]);
void npk_rknpu_submit_from_bytes(const uint8_t in[NPK_RKNPU_SUBMIT_SIZE], npk_rknpu_submit *s);

/* Patch the tail of stream (n entries) to continue with the stream of
 * next_n entries at next_addr: entry n-4 becomes PC_BASE_ADDRESS = next_addr,
 * entry n-3 PC_REGISTER_AMOUNTS = npk_rknpu_chain_amount(next_n). The stream
 * must end in the 4-entry tail; next_addr must be 16-byte aligned. */
npk_status npk_rk_stream_chain(uint64_t *stream, size_t n, uint32_t next_addr, size_t next_n,
                               npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
