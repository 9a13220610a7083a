/* The vendor driver's task and submit records: layout checks, byte images,
 * the amounts the driver derives, and stream chaining through the tail. */
#include <stddef.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_stream.h"
#include "npukit/rknpu_uapi.h"

/* The kernel reads these structs as laid out by its header; any drift breaks
 * the ioctl silently, so pin every size and offset. */
_Static_assert(sizeof(npk_rknpu_task) == NPK_RKNPU_TASK_SIZE, "rknpu_task is 40 bytes");
_Static_assert(offsetof(npk_rknpu_task, flags) == 0, "task.flags");
_Static_assert(offsetof(npk_rknpu_task, op_idx) == 4, "task.op_idx");
_Static_assert(offsetof(npk_rknpu_task, enable_mask) == 8, "task.enable_mask");
_Static_assert(offsetof(npk_rknpu_task, int_mask) == 12, "task.int_mask");
_Static_assert(offsetof(npk_rknpu_task, int_clear) == 16, "task.int_clear");
_Static_assert(offsetof(npk_rknpu_task, int_status) == 20, "task.int_status");
_Static_assert(offsetof(npk_rknpu_task, regcfg_amount) == 24, "task.regcfg_amount");
_Static_assert(offsetof(npk_rknpu_task, regcfg_offset) == 28, "task.regcfg_offset");
_Static_assert(offsetof(npk_rknpu_task, regcmd_addr) == 32, "task.regcmd_addr");
_Static_assert(sizeof(npk_rknpu_subcore_task) == 8, "rknpu_subcore_task is 8 bytes");
_Static_assert(sizeof(npk_rknpu_submit) == NPK_RKNPU_SUBMIT_SIZE, "rknpu_submit is 104 bytes");
_Static_assert(offsetof(npk_rknpu_submit, flags) == 0, "submit.flags");
_Static_assert(offsetof(npk_rknpu_submit, timeout) == 4, "submit.timeout");
_Static_assert(offsetof(npk_rknpu_submit, task_start) == 8, "submit.task_start");
_Static_assert(offsetof(npk_rknpu_submit, task_number) == 12, "submit.task_number");
_Static_assert(offsetof(npk_rknpu_submit, task_counter) == 16, "submit.task_counter");
_Static_assert(offsetof(npk_rknpu_submit, priority) == 20, "submit.priority");
_Static_assert(offsetof(npk_rknpu_submit, task_obj_addr) == 24, "submit.task_obj_addr");
_Static_assert(offsetof(npk_rknpu_submit, regcfg_obj_addr) == 32, "submit.regcfg_obj_addr");
_Static_assert(offsetof(npk_rknpu_submit, task_base_addr) == 40, "submit.task_base_addr");
_Static_assert(offsetof(npk_rknpu_submit, user_data) == 48, "submit.user_data");
_Static_assert(offsetof(npk_rknpu_submit, core_mask) == 56, "submit.core_mask");
_Static_assert(offsetof(npk_rknpu_submit, fence_fd) == 60, "submit.fence_fd");
_Static_assert(offsetof(npk_rknpu_submit, subcore_task) == 64, "submit.subcore_task");

_Static_assert(sizeof(npk_rknpu_action) == NPK_RKNPU_ACTION_SIZE, "rknpu_action is 8 bytes");
_Static_assert(offsetof(npk_rknpu_action, value) == 4, "action.value");
_Static_assert(sizeof(npk_rknpu_mem_create) == NPK_RKNPU_MEM_CREATE_SIZE, "mem_create is 40 bytes");
_Static_assert(offsetof(npk_rknpu_mem_create, flags) == 4, "mem_create.flags");
_Static_assert(offsetof(npk_rknpu_mem_create, size) == 8, "mem_create.size");
_Static_assert(offsetof(npk_rknpu_mem_create, obj_addr) == 16, "mem_create.obj_addr");
_Static_assert(offsetof(npk_rknpu_mem_create, dma_addr) == 24, "mem_create.dma_addr");
_Static_assert(offsetof(npk_rknpu_mem_create, sram_size) == 32, "mem_create.sram_size");
_Static_assert(sizeof(npk_rknpu_mem_map) == NPK_RKNPU_MEM_MAP_SIZE, "mem_map is 16 bytes");
_Static_assert(offsetof(npk_rknpu_mem_map, offset) == 8, "mem_map.offset");
_Static_assert(sizeof(npk_rknpu_mem_destroy) == NPK_RKNPU_MEM_DESTROY_SIZE, "mem_destroy");
_Static_assert(offsetof(npk_rknpu_mem_destroy, obj_addr) == 8, "mem_destroy.obj_addr");
_Static_assert(sizeof(npk_rknpu_mem_sync) == NPK_RKNPU_MEM_SYNC_SIZE, "mem_sync is 32 bytes");
_Static_assert(offsetof(npk_rknpu_mem_sync, obj_addr) == 8, "mem_sync.obj_addr");
_Static_assert(offsetof(npk_rknpu_mem_sync, offset) == 16, "mem_sync.offset");
_Static_assert(offsetof(npk_rknpu_mem_sync, size) == 24, "mem_sync.size");

/* The listed numbers are DRM_IOWR('d', DRM_COMMAND_BASE + n, struct). */
#define RW (NPK_IOC_READ | NPK_IOC_WRITE)
_Static_assert(NPK_RKNPU_IOCTL_ACTION ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 0, sizeof(npk_rknpu_action)),
               "RKNPU_ACTION");
_Static_assert(NPK_RKNPU_IOCTL_SUBMIT ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 1, sizeof(npk_rknpu_submit)),
               "RKNPU_SUBMIT");
_Static_assert(NPK_RKNPU_IOCTL_MEM_CREATE ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 2, sizeof(npk_rknpu_mem_create)),
               "RKNPU_MEM_CREATE");
_Static_assert(NPK_RKNPU_IOCTL_MEM_MAP ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 3, sizeof(npk_rknpu_mem_map)),
               "RKNPU_MEM_MAP");
_Static_assert(NPK_RKNPU_IOCTL_MEM_DESTROY ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 4, sizeof(npk_rknpu_mem_destroy)),
               "RKNPU_MEM_DESTROY");
_Static_assert(NPK_RKNPU_IOCTL_MEM_SYNC ==
                   NPK_IOC(RW, 'd', NPK_DRM_COMMAND_BASE + 5, sizeof(npk_rknpu_mem_sync)),
               "RKNPU_MEM_SYNC");
#undef RW

uint32_t npk_rknpu_regcfg_amount(size_t n)
{
    return n >= NPK_RK_TAIL_ENTRIES ? (uint32_t)(n - NPK_RK_TAIL_ENTRIES) : 0;
}

uint32_t npk_rknpu_pc_data_amount(uint32_t regcfg_amount)
{
    uint32_t s = NPK_RKNPU_PC_AMOUNT_SCALE;
    return (regcfg_amount + NPK_RKNPU_PC_DATA_EXTRA_AMOUNT + s - 1) / s - 1;
}

uint32_t npk_rknpu_chain_amount(size_t next_n)
{
    /* One unit for the PC however it was told where to go: the driver's
     * first fetch and a tail's chained fetch cover the whole stream. */
    return npk_rknpu_pc_data_amount(npk_rknpu_regcfg_amount(next_n));
}

int npk_rknpu_subcore_slot(uint32_t core_mask, int core)
{
    switch (core_mask) {
    case 0x1:
    case 0x2:
    case 0x4:
    case 0x3:
    case 0x7: break;
    default: return -1;
    }
    if (core < 0 || core >= NPK_RKNPU_MAX_CORES || !(core_mask & (1u << core))) return -1;
    return core_mask == 0x7 ? core + 2 : core;
}

void npk_rknpu_task_to_bytes(const npk_rknpu_task *t, uint8_t o[NPK_RKNPU_TASK_SIZE])
{
    npk_st32le(o + 0, t->flags);
    npk_st32le(o + 4, t->op_idx);
    npk_st32le(o + 8, t->enable_mask);
    npk_st32le(o + 12, t->int_mask);
    npk_st32le(o + 16, t->int_clear);
    npk_st32le(o + 20, t->int_status);
    npk_st32le(o + 24, t->regcfg_amount);
    npk_st32le(o + 28, t->regcfg_offset);
    npk_st64le(o + 32, t->regcmd_addr);
}

void npk_rknpu_task_from_bytes(const uint8_t in[NPK_RKNPU_TASK_SIZE], npk_rknpu_task *t)
{
    t->flags = npk_ld32le(in + 0);
    t->op_idx = npk_ld32le(in + 4);
    t->enable_mask = npk_ld32le(in + 8);
    t->int_mask = npk_ld32le(in + 12);
    t->int_clear = npk_ld32le(in + 16);
    t->int_status = npk_ld32le(in + 20);
    t->regcfg_amount = npk_ld32le(in + 24);
    t->regcfg_offset = npk_ld32le(in + 28);
    t->regcmd_addr = npk_ld64le(in + 32);
}

void npk_rknpu_submit_to_bytes(const npk_rknpu_submit *s, uint8_t o[NPK_RKNPU_SUBMIT_SIZE])
{
    npk_st32le(o + 0, s->flags);
    npk_st32le(o + 4, s->timeout);
    npk_st32le(o + 8, s->task_start);
    npk_st32le(o + 12, s->task_number);
    npk_st32le(o + 16, s->task_counter);
    npk_st32le(o + 20, (uint32_t)s->priority);
    npk_st64le(o + 24, s->task_obj_addr);
    npk_st64le(o + 32, s->regcfg_obj_addr);
    npk_st64le(o + 40, s->task_base_addr);
    npk_st64le(o + 48, s->user_data);
    npk_st32le(o + 56, s->core_mask);
    npk_st32le(o + 60, (uint32_t)s->fence_fd);
    for (int i = 0; i < NPK_RKNPU_SUBCORE_SLOTS; i++) {
        npk_st32le(o + 64 + 8 * i, s->subcore_task[i].task_start);
        npk_st32le(o + 68 + 8 * i, s->subcore_task[i].task_number);
    }
}

void npk_rknpu_submit_from_bytes(const uint8_t in[NPK_RKNPU_SUBMIT_SIZE], npk_rknpu_submit *s)
{
    s->flags = npk_ld32le(in + 0);
    s->timeout = npk_ld32le(in + 4);
    s->task_start = npk_ld32le(in + 8);
    s->task_number = npk_ld32le(in + 12);
    s->task_counter = npk_ld32le(in + 16);
    s->priority = (int32_t)npk_ld32le(in + 20);
    s->task_obj_addr = npk_ld64le(in + 24);
    s->regcfg_obj_addr = npk_ld64le(in + 32);
    s->task_base_addr = npk_ld64le(in + 40);
    s->user_data = npk_ld64le(in + 48);
    s->core_mask = npk_ld32le(in + 56);
    s->fence_fd = (int32_t)npk_ld32le(in + 60);
    for (int i = 0; i < NPK_RKNPU_SUBCORE_SLOTS; i++) {
        s->subcore_task[i].task_start = npk_ld32le(in + 64 + 8 * i);
        s->subcore_task[i].task_number = npk_ld32le(in + 68 + 8 * i);
    }
}

npk_status npk_rk_stream_chain(uint64_t *s, size_t n, uint32_t next_addr, size_t next_n,
                               npk_error *err)
{
    if (n < NPK_RK_TAIL_ENTRIES || next_n < NPK_RK_TAIL_ENTRIES)
        return npk_fail(err, NPK_E_ARG, "stream too short for a tail");
    npk_rk_entry e[NPK_RK_TAIL_ENTRIES];
    for (int i = 0; i < NPK_RK_TAIL_ENTRIES; i++) npk_rk_entry_decode(s[n - 4 + i], &e[i]);
    bool slot = e[0].kind == NPK_RK_NOP || e[0].reg == NPK_RKR_PC_BASE_ADDRESS;
    if (!slot || e[1].reg != NPK_RKR_PC_REGISTER_AMOUNTS || e[2].kind != NPK_RK_MARKER ||
        e[3].kind != NPK_RK_OP_EN)
        return npk_fail(err, NPK_E_FORMAT, "stream does not end in the 4-entry tail");
    uint32_t addr, amount;
    if (!npk_rk_field_pack(NPK_RKF_PC_BASE_ADDRESS_PC_SOURCE_ADDR, next_addr >> 4, &addr) ||
        (next_addr & 15))
        return npk_fail(err, NPK_E_ARG, "next stream address 0x%x is not 16-byte aligned",
                        next_addr);
    if (!npk_rk_field_pack(NPK_RKF_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT,
                           npk_rknpu_chain_amount(next_n), &amount))
        return npk_fail(err, NPK_E_LIMIT, "next stream of %zu entries is too long to chain",
                        next_n);
    s[n - 4] = npk_rk_write(NPK_RKR_PC_BASE_ADDRESS, addr);
    s[n - 3] = npk_rk_write(NPK_RKR_PC_REGISTER_AMOUNTS, amount);
    return NPK_OK;
}
