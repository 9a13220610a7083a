/* A functional model of the RK3588 NPU (one or three cores) that executes
 * register-command streams.
 *
 * The emulator sees only what the hardware sees: a DMA address space (host
 * buffers mapped at NPU addresses) and the register writes of each fetched
 * stream. A core's program counter fetches a stream, applies its writes to
 * the core's register file, and on the operation-enable entry runs one task
 * from the registers alone: a convolution (CNA reads the NC1HWC2 feature
 * cube, with padding, and the packed weights; CORE multiplies, fp16 with
 * fp32 accumulation or int8 with int32, direct or depthwise, any kernel,
 * stride and dilation; DPU applies CPEND, the BS/BN/EW stages with their
 * operand streams and the output conversion and writes the output cube), an
 * element-wise task (the DPU reading its input and a second operand through
 * its read DMA) or a max pooling (the PPU reading through PPU_RDMA). The tail's PC_BASE_ADDRESS and
 * PC_REGISTER_AMOUNTS chain to the next stream.
 *
 * Anything the model does not cover -- a register it does not know, a field
 * value or combination it does not model, an address outside mapped
 * memory -- is an error naming the register and field; a task is checked
 * completely before it writes anything. The interpretation of each register
 * and which parts are inferred rather than documented are in docs/rknpu.md. */
#ifndef NPUKIT_RKNPU_EMU_H
#define NPUKIT_RKNPU_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_uapi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPK_RK_EMU_MAX_MAPS 64

typedef struct npk_rk_emu npk_rk_emu;

typedef struct npk_rk_emu_opts {
    int cores;         /* 1 (a single-core SoC: the driver runs submit.task_start/number) or
                          3 (RK3588: the driver reads the subcore_task slots) */
    uint64_t max_macs; /* refuse a run that would multiply-accumulate more (0: no limit) */
    bool portable;     /* use the portable kernels even when SIMD ones are available */
} npk_rk_emu_opts;

typedef struct npk_rk_emu_stats {
    uint64_t tasks;           /* tasks executed */
    uint64_t macs;            /* multiply-accumulates */
    uint64_t fetched_entries; /* stream entries the program counters read */
    uint64_t decode_hits;     /* tasks whose decode and register checks were those kept from
                                 an earlier fetch of the same unchanged, tracked stream */
    uint64_t core_tasks[NPK_RKNPU_MAX_CORES];
    uint32_t int_status[NPK_RKNPU_MAX_CORES]; /* interrupt status after the core's last task,
                                                 folded pairwise as the driver reads it */
} npk_rk_emu_stats;

npk_status npk_rk_emu_create(const npk_rk_emu_opts *o, npk_rk_emu **out, npk_error *err);
void npk_rk_emu_destroy(npk_rk_emu *e);

/* Map `size` bytes of host memory at NPU address `addr` (no copy: the
 * emulator reads and writes `host` directly; device memory is little-endian
 * whatever the host). Mappings must not overlap or wrap the 32-bit space. */
npk_status npk_rk_emu_map(npk_rk_emu *e, uint32_t addr, void *host, size_t size, npk_error *err);
void npk_rk_emu_unmap(npk_rk_emu *e, uint32_t addr);
/* npk_rk_emu_map with a promise from the host: after any write of its own
 * to [host, host + size) it calls npk_rk_emu_touch on the mapping before
 * the next run. The emulator may then keep what it derives from the bytes
 * (the packed weights) without comparing them again each run; writes the
 * emulated tasks make are tracked by the emulator itself. A host that
 * cannot keep the promise (memory written through pointers it does not
 * control) uses npk_rk_emu_map: the emulator then compares the bytes. */
npk_status npk_rk_emu_map_tracked(npk_rk_emu *e, uint32_t addr, void *host, size_t size,
                                  npk_error *err);
/* The host wrote (some of) the tracked mapping holding addr. */
void npk_rk_emu_touch(npk_rk_emu *e, uint32_t addr);
/* Host pointer of [addr, addr + len) if one mapping holds it, else NULL.
 * The pointer may be written through, so a tracked mapping counts as
 * touched (npk_rk_emu_touch) when it is handed out. */
void *npk_rk_emu_host(npk_rk_emu *e, uint32_t addr, size_t len);

/* What the driver's MMIO writes start on one core: PC_DATA_ADDR = addr,
 * PC_DATA_AMOUNT = amount (128-bit units minus one), and TASK_NUMBER =
 * task_number tasks, the later ones reached through the stream tails. */
npk_status npk_rk_emu_run_core(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount,
                               uint32_t task_number, npk_error *err);

/* The vendor driver's RKNPU_SUBMIT in PC mode over this emulator's cores:
 * task records (the task buffer as the kernel maps it) are picked per core
 * as the driver picks them, each core's first task is started with the
 * driver's amount, and the job completes only if every core raised its last
 * task's int_mask. */
npk_status npk_rk_emu_submit(npk_rk_emu *e, const npk_rknpu_submit *s, const npk_rknpu_task *tasks,
                             size_t task_count, npk_error *err);

const npk_rk_emu_stats *npk_rk_emu_stats_get(const npk_rk_emu *e);
void npk_rk_emu_stats_clear(npk_rk_emu *e);
/* Name of the multiply kernel in use ("avx2-fma" or "portable"). */
const char *npk_rk_emu_kernel(const npk_rk_emu *e);

#ifdef __cplusplus
}
#endif
#endif
