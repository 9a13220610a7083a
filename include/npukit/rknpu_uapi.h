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

/* ---- the vendor driver's ioctls (DRM GEM build, driver 0.9.x) ----
 *
 * Ioctl numbers in the asm-generic encoding (x86, Arm, AArch64 -- the only
 * places an RKNPU exists): dir << 30 | size << 16 | type << 8 | nr. They
 * are spelled out as the reference lists them and checked against the
 * structs' sizes in uapi.c. MIPS and PowerPC encode ioctls differently;
 * these numbers are meaningless there. */
#define NPK_IOC_NONE  0u
#define NPK_IOC_WRITE 1u
#define NPK_IOC_READ  2u
#define NPK_IOC(dir, type, nr, size)                                                               \
    ((unsigned long)(((dir) << 30) | ((uint32_t)(size) << 16) | ((uint32_t)(type) << 8) | (nr)))
#define NPK_DRM_COMMAND_BASE 0x40u

#define NPK_RKNPU_IOCTL_ACTION 0xC0086440ul
#define NPK_RKNPU_IOCTL_SUBMIT 0xC0686441ul
#define NPK_RKNPU_IOCTL_MEM_CREATE                                                                 \
    0xC0286442ul /* the 40-byte struct; newer drivers zero-extend                                  \
                  */
#define NPK_RKNPU_IOCTL_MEM_MAP     0xC0106443ul
#define NPK_RKNPU_IOCTL_MEM_DESTROY 0xC0106444ul
#define NPK_RKNPU_IOCTL_MEM_SYNC    0xC0206445ul

/* rknpu_action.flags */
#define NPK_RKNPU_GET_HW_VERSION  0u
#define NPK_RKNPU_GET_DRV_VERSION 1u
#define NPK_RKNPU_ACT_RESET       6u

/* rknpu_mem_create.flags */
#define NPK_RKNPU_MEM_CONTIGUOUS     0x0u
#define NPK_RKNPU_MEM_NON_CONTIGUOUS 0x1u
#define NPK_RKNPU_MEM_NON_CACHEABLE  0x0u
#define NPK_RKNPU_MEM_CACHEABLE      0x2u
#define NPK_RKNPU_MEM_WRITE_COMBINE  0x4u
#define NPK_RKNPU_MEM_KERNEL_MAPPING 0x8u
#define NPK_RKNPU_MEM_IOMMU          0x10u
#define NPK_RKNPU_MEM_ZEROING        0x20u

/* rknpu_mem_sync.flags */
#define NPK_RKNPU_MEM_SYNC_TO_DEVICE   0x1u
#define NPK_RKNPU_MEM_SYNC_FROM_DEVICE 0x2u

/* struct rknpu_action: RKNPU_ACTION. 8 bytes. */
typedef struct npk_rknpu_action {
    uint32_t flags;
    uint32_t value;
} npk_rknpu_action;

/* struct rknpu_mem_create (the older 40-byte form): RKNPU_MEM_CREATE. */
typedef struct npk_rknpu_mem_create {
    uint32_t handle; /* out */
    uint32_t flags;
    uint64_t size;
    uint64_t obj_addr; /* out: kernel object address (for SUBMIT, SYNC, DESTROY) */
    uint64_t dma_addr; /* out: NPU address */
    uint64_t sram_size;
} npk_rknpu_mem_create;

/* struct rknpu_mem_map: RKNPU_MEM_MAP gives the mmap offset of a handle. 16 bytes. */
typedef struct npk_rknpu_mem_map {
    uint32_t handle;
    uint32_t reserved;
    uint64_t offset; /* out */
} npk_rknpu_mem_map;

/* struct rknpu_mem_destroy. 16 bytes. */
typedef struct npk_rknpu_mem_destroy {
    uint32_t handle;
    uint32_t reserved;
    uint64_t obj_addr;
} npk_rknpu_mem_destroy;

/* struct rknpu_mem_sync. 32 bytes. */
typedef struct npk_rknpu_mem_sync {
    uint32_t flags;
    uint32_t reserved;
    uint64_t obj_addr;
    uint64_t offset;
    uint64_t size;
} npk_rknpu_mem_sync;

#define NPK_RKNPU_ACTION_SIZE      8
#define NPK_RKNPU_MEM_CREATE_SIZE  40
#define NPK_RKNPU_MEM_MAP_SIZE     16
#define NPK_RKNPU_MEM_DESTROY_SIZE 16
#define NPK_RKNPU_MEM_SYNC_SIZE    32

/* The driver's amounts. regcfg_amount for a stream of n entries (n - 4);
 * the PC fetch amount the driver programs for the first task of a core,
 * (regcfg_amount + 4 + scale - 1) / scale - 1 (108 entries -> 104 -> 53),
 * i.e. the stream's length in 128-bit units, minus one; and the amount a
 * stream's tail carries for the next chained stream of n entries, in the same
 * unit (108 -> 53). Mesa writes ALIGN((n - 4) / 2, 2) there, which equals
 * this for its own 130-entry streams (64) but would be 52 for 108 entries,
 * two entries short of the operation enable (see docs/rknpu.md). */
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
