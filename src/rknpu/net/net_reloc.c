/* Moving a layer plan to other buffer addresses without planning it again:
 * the streams hold buffer addresses only in the address registers listed
 * here, and each such value lies inside the buffer it points into (the
 * layer's input, second input, output, weights or streams), whose old and
 * new places are known. The task records hold their stream's address. A
 * test plans every layer of the real models both ways and compares the
 * bytes. */
#include "net_internal.h"

/* Register offsets (unique across blocks) of the address registers, each
 * in its slot of a perfect hash (a compare tree mispredicted on every
 * stream entry). A test relocates every layer of the real models and
 * compares the bytes with the plans made at the new addresses. */
#define SLOT(off) ((((uint32_t)(off)*81u) >> 9) & 15u)
static const uint16_t addr_regs[16] = {
    [SLOT(0x0010)] = 0x0010, /* PC_BASE_ADDRESS: the next task's stream */
    [SLOT(0x0034)] = 0x0034, /* PC_TASK_DMA_BASE_ADDR */
    [SLOT(0x1070)] = 0x1070, /* CNA_FEATURE_DATA_ADDR */
    [SLOT(0x1110)] = 0x1110, /* CNA_DCOMP_ADDR0: weights */
    [SLOT(0x4020)] = 0x4020, /* DPU_DST_BASE_ADDR */
    [SLOT(0x5018)] = 0x5018, /* DPU_RDMA_RDMA_SRC_BASE_ADDR */
    [SLOT(0x5020)] = 0x5020, /* DPU_RDMA_RDMA_BS_BASE_ADDR */
    [SLOT(0x502C)] = 0x502C, /* DPU_RDMA_RDMA_BN_BASE_ADDR */
    [SLOT(0x5038)] = 0x5038, /* DPU_RDMA_RDMA_EW_BASE_ADDR */
    [SLOT(0x6070)] = 0x6070, /* PPU_DST_BASE_ADDR */
    [SLOT(0x701C)] = 0x701C, /* PPU_RDMA_RDMA_SRC_BASE_ADDR */
};

static bool is_addr_reg(uint16_t off)
{
    return off && addr_regs[SLOT(off)] == off;
}

npk_status net_relocate_plan(npk_rk_lplan *p, const uint32_t from[NET_BUFS],
                             const uint32_t to[NET_BUFS], npk_error *err)
{
    uint64_t size[NET_BUFS] = {p->input_bytes, npk_rk_lplan_input2_bytes(p), p->output_bytes,
                               p->weight_bytes, (uint64_t)p->regcmd_entries * 8};
    for (size_t i = 0; i < p->regcmd_entries; i++) {
        uint64_t e = p->regcmd[i];
        uint16_t off = (uint16_t)e;
        uint16_t op = (uint16_t)(e >> 48);
        if (!op || !is_addr_reg(off)) continue;
        uint32_t v = (uint32_t)(e >> 16);
        int k = 0;
        for (; k < NET_BUFS; k++)
            if (size[k] && v >= from[k] && (uint64_t)v < (uint64_t)from[k] + size[k]) break;
        if (k == NET_BUFS) {
            if (!v) continue; /* an address register left 0 (unused) */
            return npk_fail(err, NPK_E_LIMIT,
                            "stream entry %zu: address 0x%08x in register 0x%04x is in none of "
                            "the layer's buffers",
                            i, v, off);
        }
        uint32_t nv = v - from[k] + to[k];
        p->regcmd[i] = (e & ~((uint64_t)0xffffffff << 16)) | ((uint64_t)nv << 16);
    }
    for (size_t t = 0; t < p->count; t++) {
        uint64_t a = p->records[t].regcmd_addr;
        if (a < from[NET_REG] || a >= (uint64_t)from[NET_REG] + size[NET_REG])
            return npk_fail(err, NPK_E_LIMIT, "task %zu: stream address 0x%llx outside the streams",
                            t, (unsigned long long)a);
        p->records[t].regcmd_addr = a - from[NET_REG] + to[NET_REG];
    }
    p->opts.input_addr = to[NET_IN];
    p->opts.input2_addr = to[NET_IN2];
    p->opts.output_addr = to[NET_OUT];
    p->opts.weight_addr = to[NET_WT];
    p->opts.regcmd_addr = to[NET_REG];
    return NPK_OK;
}
