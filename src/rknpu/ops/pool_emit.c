/* One PPU pooling task's descriptor -> its stream: PPU_RDMA reads the input
 * cube from memory, the PPU pools it and writes the output; the tail's
 * operation enable starts PPU and PPU_RDMA only. Field encodings follow
 * NVDLA's PDP, whose register set the PPU's matches (sizes, kernel and
 * stride minus one; strides and addresses in bytes) -- docs/rknpu.md. */
#include "npukit/rknpu_conv.h"
#include "npukit/rknpu_stream.h"

typedef struct pemit {
    uint64_t *out;
    size_t n, cap;
    npk_rk_field bad;
    uint64_t bad_value;
} pemit;

static uint32_t F(pemit *e, npk_rk_field f, uint64_t v)
{
    uint32_t out = 0;
    if (!npk_rk_field_pack(f, v, &out) && e->bad == NPK_RKF_NONE) {
        e->bad = f;
        e->bad_value = v;
    }
    return out;
}

static void put(pemit *e, uint64_t w)
{
    if (e->n < e->cap) e->out[e->n] = w;
    e->n++;
}

static void W(pemit *e, npk_rk_reg r, uint32_t v)
{
    put(e, npk_rk_write(r, v));
}

/* A byte address or stride in a [31:4] field (16-byte units). */
static uint32_t A(pemit *e, npk_rk_field f, uint32_t bytes)
{
    if (bytes % 16 && e->bad == NPK_RKF_NONE) {
        e->bad = f;
        e->bad_value = bytes;
    }
    return F(e, f, bytes / 16);
}

npk_status npk_rk_pool_emit(const npk_rk_pool_desc *d, uint64_t *out, size_t cap, size_t *n,
                            npk_error *err)
{
    pemit e0 = {out, 0, cap, NPK_RKF_NONE, 0}, *e = &e0;
    uint32_t prec = d->fp ? 2 : 0;
    W(e, NPK_RKR_PPU_S_POINTER,
      F(e, NPK_RKF_PPU_S_POINTER_POINTER_PP_MODE, 1) |
          F(e, NPK_RKF_PPU_S_POINTER_EXECUTER_PP_EN, 1) |
          F(e, NPK_RKF_PPU_S_POINTER_POINTER_PP_EN, 1));
    W(e, NPK_RKR_PPU_RDMA_RDMA_S_POINTER,
      F(e, NPK_RKF_PPU_RDMA_RDMA_S_POINTER_POINTER_PP_MODE, 1) |
          F(e, NPK_RKF_PPU_RDMA_RDMA_S_POINTER_EXECUTER_PP_EN, 1) |
          F(e, NPK_RKF_PPU_RDMA_RDMA_S_POINTER_POINTER_PP_EN, 1));
    W(e, NPK_RKR_PPU_DATA_CUBE_IN_WIDTH,
      F(e, NPK_RKF_PPU_DATA_CUBE_IN_WIDTH_CUBE_IN_WIDTH, (uint64_t)d->in_w - 1));
    W(e, NPK_RKR_PPU_DATA_CUBE_IN_HEIGHT,
      F(e, NPK_RKF_PPU_DATA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT, (uint64_t)d->in_h - 1));
    W(e, NPK_RKR_PPU_DATA_CUBE_IN_CHANNEL,
      F(e, NPK_RKF_PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL, (uint64_t)d->c - 1));
    W(e, NPK_RKR_PPU_DATA_CUBE_OUT_WIDTH,
      F(e, NPK_RKF_PPU_DATA_CUBE_OUT_WIDTH_CUBE_OUT_WIDTH, (uint64_t)d->out_w - 1));
    W(e, NPK_RKR_PPU_DATA_CUBE_OUT_HEIGHT,
      F(e, NPK_RKF_PPU_DATA_CUBE_OUT_HEIGHT_CUBE_OUT_HEIGHT, (uint64_t)d->out_h - 1));
    W(e, NPK_RKR_PPU_DATA_CUBE_OUT_CHANNEL,
      F(e, NPK_RKF_PPU_DATA_CUBE_OUT_CHANNEL_CUBE_OUT_CHANNEL, (uint64_t)d->c - 1));
    W(e, NPK_RKR_PPU_OPERATION_MODE_CFG,
      F(e, NPK_RKF_PPU_OPERATION_MODE_CFG_FLYING_MODE, 1) |
          F(e, NPK_RKF_PPU_OPERATION_MODE_CFG_POOLING_METHOD, d->method));
    W(e, NPK_RKR_PPU_POOLING_KERNEL_CFG,
      F(e, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH, (uint64_t)d->k_w - 1) |
          F(e, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT, (uint64_t)d->k_h - 1) |
          F(e, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH, (uint64_t)d->stride_x - 1) |
          F(e, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT, (uint64_t)d->stride_y - 1));
    W(e, NPK_RKR_PPU_RECIP_KERNEL_WIDTH,
      F(e, NPK_RKF_PPU_RECIP_KERNEL_WIDTH_RECIP_KERNEL_WIDTH, d->k_w ? 65536 / d->k_w : 0));
    W(e, NPK_RKR_PPU_RECIP_KERNEL_HEIGHT,
      F(e, NPK_RKF_PPU_RECIP_KERNEL_HEIGHT_RECIP_KERNEL_HEIGHT, d->k_h ? 65536 / d->k_h : 0));
    W(e, NPK_RKR_PPU_POOLING_PADDING_CFG,
      F(e, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_LEFT, d->pad_left) |
          F(e, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_TOP, d->pad_top) |
          F(e, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_RIGHT, d->pad_right) |
          F(e, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_BOTTOM, d->pad_bottom));
    W(e, NPK_RKR_PPU_PADDING_VALUE_1_CFG,
      F(e, NPK_RKF_PPU_PADDING_VALUE_1_CFG_PAD_VALUE_0, d->pad_value));
    W(e, NPK_RKR_PPU_PADDING_VALUE_2_CFG, 0);
    W(e, NPK_RKR_PPU_DST_BASE_ADDR, A(e, NPK_RKF_PPU_DST_BASE_ADDR_DST_BASE_ADDR, d->dst_addr));
    W(e, NPK_RKR_PPU_DST_SURF_STRIDE,
      A(e, NPK_RKF_PPU_DST_SURF_STRIDE_DST_SURF_STRIDE, d->dst_surf));
    W(e, NPK_RKR_PPU_DATA_FORMAT, F(e, NPK_RKF_PPU_DATA_FORMAT_PROC_PRECISION, prec));
    W(e, NPK_RKR_PPU_MISC_CTRL, F(e, NPK_RKF_PPU_MISC_CTRL_BURST_LEN, 3));
    W(e, NPK_RKR_PPU_RDMA_RDMA_CUBE_IN_WIDTH,
      F(e, NPK_RKF_PPU_RDMA_RDMA_CUBE_IN_WIDTH_CUBE_IN_WIDTH, (uint64_t)d->in_w - 1));
    W(e, NPK_RKR_PPU_RDMA_RDMA_CUBE_IN_HEIGHT,
      F(e, NPK_RKF_PPU_RDMA_RDMA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT, (uint64_t)d->in_h - 1));
    W(e, NPK_RKR_PPU_RDMA_RDMA_CUBE_IN_CHANNEL,
      F(e, NPK_RKF_PPU_RDMA_RDMA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL, (uint64_t)d->c - 1));
    W(e, NPK_RKR_PPU_RDMA_RDMA_SRC_BASE_ADDR,
      F(e, NPK_RKF_PPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR, d->src_addr));
    W(e, NPK_RKR_PPU_RDMA_RDMA_SRC_LINE_STRIDE,
      A(e, NPK_RKF_PPU_RDMA_RDMA_SRC_LINE_STRIDE_SRC_LINE_STRIDE, d->src_line));
    W(e, NPK_RKR_PPU_RDMA_RDMA_SRC_SURF_STRIDE,
      A(e, NPK_RKF_PPU_RDMA_RDMA_SRC_SURF_STRIDE_SRC_SURF_STRIDE, d->src_surf));
    W(e, NPK_RKR_PPU_RDMA_RDMA_DATA_FORMAT,
      F(e, NPK_RKF_PPU_RDMA_RDMA_DATA_FORMAT_IN_PRECISION, prec));
    put(e, 0);
    W(e, NPK_RKR_PC_REGISTER_AMOUNTS, 0);
    put(e, npk_rk_entry_encode(NPK_RK_OP_MARKER, 0, 0));
    uint32_t en = npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_PPU_OP_EN) |
                  npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_PPU_RDMA_OP_EN);
    put(e, npk_rk_entry_encode(NPK_RK_OP_ENABLE, en,
                               npk_rk_reg_get(NPK_RKR_PC_OPERATION_ENABLE)->offset));
    if (e->bad != NPK_RKF_NONE) {
        const npk_rk_field_info *fi = npk_rk_field_get(e->bad);
        return npk_fail(err, NPK_E_LIMIT, "value %lld does not fit %s.%s (%u bits%s)",
                        (long long)e->bad_value, npk_rk_reg_get(fi->reg)->full_name, fi->name,
                        npk_rk_field_width(e->bad), fi->lo == 4 ? ", 16-byte units" : "");
    }
    if (e->n > cap)
        return npk_fail(err, NPK_E_LIMIT, "pool stream of %zu entries exceeds %zu", e->n, cap);
    *n = e->n;
    return NPK_OK;
}
