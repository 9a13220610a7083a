/* One convolution task's descriptor -> its register-command stream, in the
 * order Mesa's rocket driver writes (reference section 10.3): CNA, CORE,
 * DPU, DPU_RDMA, tail. Registers and fields are named through the table;
 * a value that does not fit its field is an error naming the field. */
#include <string.h>

#include "npukit/rknpu_conv.h"
#include "npukit/rknpu_stream.h"

typedef struct cemit {
    uint64_t *out;
    size_t n, cap;
    npk_rk_field bad;
    uint64_t bad_value;
    const uint64_t *heads; /* write_heads() */
} cemit;

/* Each register's write entry with value 0 (npk_rk_write: 0 where no
 * stream writes it), made once per thread: a plan writes thousands of
 * entries, each two dependent table loads through npk_rk_write. */
static const uint64_t *write_heads(void)
{
    static _Thread_local uint64_t heads[NPK_RKR_COUNT];
    static _Thread_local bool made;
    if (!made) {
        for (int r = 0; r < NPK_RKR_COUNT; r++) heads[r] = npk_rk_write((npk_rk_reg)r, 0);
        made = true;
    }
    return heads;
}

static uint32_t F(cemit *e, npk_rk_field f, uint64_t v)
{
    uint32_t out = 0;
    if (!npk_rk_field_pack(f, v, &out) && e->bad == NPK_RKF_NONE) {
        e->bad = f;
        e->bad_value = v;
    }
    return out;
}

/* A signed value in two's complement of the field's width. */
static uint32_t FS(cemit *e, npk_rk_field f, int64_t v)
{
    unsigned w = npk_rk_field_width(f);
    int64_t lo = w >= 64 ? INT64_MIN : -((int64_t)1 << (w - 1));
    if (v >= 0) return F(e, f, (uint64_t)v);
    if (v < lo) return F(e, f, UINT64_MAX);
    return F(e, f, (uint64_t)v & npk_rk_field_max(f));
}

static void put(cemit *e, uint64_t w)
{
    if (e->n < e->cap) e->out[e->n] = w;
    e->n++;
}

static void W(cemit *e, npk_rk_reg r, uint32_t v)
{
    uint64_t h = (unsigned)r < (unsigned)NPK_RKR_COUNT ? e->heads[r] : 0;
    put(e, h ? h | (uint64_t)v << 16 : 0); /* npk_rk_write(r, v) */
}

static uint32_t ptr_value(cemit *e, npk_rk_field mode, npk_rk_field exec, npk_rk_field ptr)
{
    return F(e, mode, 1) | F(e, exec, 1) | F(e, ptr, 1);
}

typedef struct stage_regs {
    npk_rk_reg cfg, alu_cfg, mul_cfg, relux;
    npk_rk_field algo, alu_src, relux_en, relu_bypass, mul_bypass, alu_bypass, bypass;
    npk_rk_field alu_operand, mul_operand, mul_shift, mul_src, cmp;
} stage_regs;

static const stage_regs bs_regs = {
    NPK_RKR_DPU_BS_CFG,
    NPK_RKR_DPU_BS_ALU_CFG,
    NPK_RKR_DPU_BS_MUL_CFG,
    NPK_RKR_DPU_BS_RELUX_CMP_VALUE,
    NPK_RKF_DPU_BS_CFG_BS_ALU_ALGO,
    NPK_RKF_DPU_BS_CFG_BS_ALU_SRC,
    NPK_RKF_DPU_BS_CFG_BS_RELUX_EN,
    NPK_RKF_DPU_BS_CFG_BS_RELU_BYPASS,
    NPK_RKF_DPU_BS_CFG_BS_MUL_BYPASS,
    NPK_RKF_DPU_BS_CFG_BS_ALU_BYPASS,
    NPK_RKF_DPU_BS_CFG_BS_BYPASS,
    NPK_RKF_DPU_BS_ALU_CFG_BS_ALU_OPERAND,
    NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_OPERAND,
    NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE,
    NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_SRC,
    NPK_RKF_DPU_BS_RELUX_CMP_VALUE_BS_RELUX_CMP_DAT,
};

static const stage_regs bn_regs = {
    NPK_RKR_DPU_BN_CFG,
    NPK_RKR_DPU_BN_ALU_CFG,
    NPK_RKR_DPU_BN_MUL_CFG,
    NPK_RKR_DPU_BN_RELUX_CMP_VALUE,
    NPK_RKF_DPU_BN_CFG_BN_ALU_ALGO,
    NPK_RKF_DPU_BN_CFG_BN_ALU_SRC,
    NPK_RKF_DPU_BN_CFG_BN_RELUX_EN,
    NPK_RKF_DPU_BN_CFG_BN_RELU_BYPASS,
    NPK_RKF_DPU_BN_CFG_BN_MUL_BYPASS,
    NPK_RKF_DPU_BN_CFG_BN_ALU_BYPASS,
    NPK_RKF_DPU_BN_CFG_BN_BYPASS,
    NPK_RKF_DPU_BN_ALU_CFG_BN_ALU_OPERAND,
    NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_OPERAND,
    NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE,
    NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_SRC,
    NPK_RKF_DPU_BN_RELUX_CMP_VALUE_BN_RELUX_CMP_DAT,
};

#define ALU_ADD 2 /* NVDLA's SDP code for sum, as Mesa uses */

/* CFG, ALU_CFG, MUL_CFG, RELUX_CMP of one stage. */
static void emit_stage(cemit *e, const stage_regs *r, const npk_rk_dpu_stage *s)
{
    bool on = s->alu || s->mul || s->relu || s->relux;
    uint32_t cfg = F(e, r->bypass, !on) | F(e, r->alu_bypass, !s->alu) |
                   F(e, r->mul_bypass, !s->mul) | F(e, r->relu_bypass, !s->relu) |
                   F(e, r->relux_en, s->relux);
    if (s->alu) cfg |= F(e, r->algo, ALU_ADD) | F(e, r->alu_src, s->alu == NPK_RK_OP_MEM);
    W(e, r->cfg, cfg);
    W(e, r->alu_cfg, s->alu == NPK_RK_OP_REG ? F(e, r->alu_operand, s->alu_op) : 0);
    uint32_t mul = 0;
    if (s->mul)
        mul = F(e, r->mul_shift, s->mul_shift) | F(e, r->mul_src, s->mul == NPK_RK_OP_MEM) |
              (s->mul == NPK_RK_OP_REG ? F(e, r->mul_operand, s->mul_op) : 0);
    W(e, r->mul_cfg, mul);
    W(e, r->relux, s->relux ? F(e, r->cmp, s->relux_cmp) : 0);
}

npk_status npk_rk_conv_emit(const npk_rk_conv_desc *d, uint64_t *out, size_t cap, size_t *n,
                            npk_error *err)
{
    cemit e0 = {out, 0, cap, NPK_RKF_NONE, 0, write_heads()}, *e = &e0;
    uint32_t prec = d->fp ? NPK_RK_PREC_FP16 : NPK_RK_PREC_INT8;
    uint32_t mode = d->depthwise ? 3 : 0;
    /* K-split sums: int32, or fp32 on the floating-point path. */
    uint32_t wide = d->fp ? NPK_RK_PREC_FP32 : NPK_RK_PREC_INT32;

    uint32_t con0 = F(e, NPK_RKF_CNA_CBUF_CON0_WEIGHT_BANK, d->weight_bank) |
                    F(e, NPK_RKF_CNA_CBUF_CON0_DATA_BANK, d->data_bank) |
                    F(e, NPK_RKF_CNA_CBUF_CON0_WEIGHT_REUSE, d->weight_reuse);
    uint32_t con1 = F(e, NPK_RKF_CNA_CONV_CON1_PROC_PRECISION, prec) |
                    F(e, NPK_RKF_CNA_CONV_CON1_IN_PRECISION, prec) |
                    F(e, NPK_RKF_CNA_CONV_CON1_CONV_MODE, mode);
    if (!d->dpu_only) {
        W(e, NPK_RKR_CNA_CBUF_CON0, con0);
        W(e, NPK_RKR_CNA_DCOMP_REGNUM, 0);
        W(e, NPK_RKR_CNA_DCOMP_CTRL, 0);
        W(e, NPK_RKR_CNA_CONV_CON1, con1);
    }
    W(e, NPK_RKR_DPU_S_POINTER,
      ptr_value(e, NPK_RKF_DPU_S_POINTER_POINTER_PP_MODE, NPK_RKF_DPU_S_POINTER_EXECUTER_PP_EN,
                NPK_RKF_DPU_S_POINTER_POINTER_PP_EN));
    W(e, NPK_RKR_DPU_RDMA_RDMA_S_POINTER,
      ptr_value(e, NPK_RKF_DPU_RDMA_RDMA_S_POINTER_POINTER_PP_MODE,
                NPK_RKF_DPU_RDMA_RDMA_S_POINTER_EXECUTER_PP_EN,
                NPK_RKF_DPU_RDMA_RDMA_S_POINTER_POINTER_PP_EN));
    if (!d->dpu_only) {
        W(e, NPK_RKR_CNA_CONV_CON1, con1);
        W(e, NPK_RKR_CNA_CONV_CON2, F(e, NPK_RKF_CNA_CONV_CON2_FEATURE_GRAINS, d->feature_grains));
        W(e, NPK_RKR_CNA_CONV_CON3,
          F(e, NPK_RKF_CNA_CONV_CON3_CONV_X_STRIDE, d->stride_x) |
              F(e, NPK_RKF_CNA_CONV_CON3_CONV_Y_STRIDE, d->stride_y) |
              F(e, NPK_RKF_CNA_CONV_CON3_ATROUS_X_DILATION, d->dil_x ? d->dil_x - 1 : 0) |
              F(e, NPK_RKF_CNA_CONV_CON3_ATROUS_Y_DILATION, d->dil_y ? d->dil_y - 1 : 0));
        W(e, NPK_RKR_CNA_DATA_SIZE0,
          F(e, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH, d->in_w) |
              F(e, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT, d->in_h));
        W(e, NPK_RKR_CNA_DATA_SIZE1,
          F(e, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, (uint64_t)d->in_c_real - 1) |
              F(e, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, d->in_c));
        W(e, NPK_RKR_CNA_DATA_SIZE2, F(e, NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH, d->out_w));
        W(e, NPK_RKR_CNA_DATA_SIZE3,
          F(e, NPK_RKF_CNA_DATA_SIZE3_DATAOUT_ATOMICS, (uint64_t)d->out_w * d->out_h));
        W(e, NPK_RKR_CNA_WEIGHT_SIZE0,
          F(e, NPK_RKF_CNA_WEIGHT_SIZE0_WEIGHT_BYTES, d->weight_bytes));
        W(e, NPK_RKR_CNA_WEIGHT_SIZE1,
          F(e, NPK_RKF_CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL, d->weight_bytes_per_kernel));
        W(e, NPK_RKR_CNA_WEIGHT_SIZE2,
          F(e, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, d->k_w) |
              F(e, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, d->k_h) |
              F(e, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, d->kernels));
        W(e, NPK_RKR_CNA_CBUF_CON0, con0);
        W(e, NPK_RKR_CNA_CBUF_CON1, F(e, NPK_RKF_CNA_CBUF_CON1_DATA_ENTRIES, d->data_entries));
        W(e, NPK_RKR_CNA_CVT_CON0,
          F(e, NPK_RKF_CNA_CVT_CON0_DATA_SIGN, 1) | F(e, NPK_RKF_CNA_CVT_CON0_CVT_TYPE, 1) |
              F(e, NPK_RKF_CNA_CVT_CON0_CVT_BYPASS, 1));
        W(e, NPK_RKR_CNA_CVT_CON1, F(e, NPK_RKF_CNA_CVT_CON1_CVT_SCALE0, 1));
        W(e, NPK_RKR_CNA_CVT_CON2, F(e, NPK_RKF_CNA_CVT_CON2_CVT_SCALE1, 1));
        W(e, NPK_RKR_CNA_CVT_CON3, F(e, NPK_RKF_CNA_CVT_CON3_CVT_SCALE2, 1));
        W(e, NPK_RKR_CNA_CVT_CON4, F(e, NPK_RKF_CNA_CVT_CON4_CVT_SCALE3, 1));
        W(e, NPK_RKR_CNA_FC_CON0, 0);
        W(e, NPK_RKR_CNA_FC_CON1, 0);
        W(e, NPK_RKR_CNA_PAD_CON0,
          F(e, NPK_RKF_CNA_PAD_CON0_PAD_LEFT, d->pad_left) |
              F(e, NPK_RKF_CNA_PAD_CON0_PAD_TOP, d->pad_top));
        W(e, NPK_RKR_CNA_FEATURE_DATA_ADDR,
          F(e, NPK_RKF_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, d->in_addr));
        W(e, NPK_RKR_CNA_FC_CON2, 0);
        W(e, NPK_RKR_CNA_DMA_CON0,
          F(e, NPK_RKF_CNA_DMA_CON0_WEIGHT_BURST_LEN, 15) |
              F(e, NPK_RKF_CNA_DMA_CON0_DATA_BURST_LEN, 15));
        W(e, NPK_RKR_CNA_DMA_CON1, F(e, NPK_RKF_CNA_DMA_CON1_LINE_STRIDE, d->line_stride));
        W(e, NPK_RKR_CNA_DMA_CON2, FS(e, NPK_RKF_CNA_DMA_CON2_SURF_STRIDE, d->surf_stride));
        W(e, NPK_RKR_CNA_FC_DATA_SIZE0,
          F(e, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_WIDTH, d->dma_width) |
              F(e, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_HEIGHT, d->in_h));
        W(e, NPK_RKR_CNA_FC_DATA_SIZE1, F(e, NPK_RKF_CNA_FC_DATA_SIZE1_DMA_CHANNEL, d->in_c));
        W(e, NPK_RKR_CNA_DCOMP_CTRL, 0);
        W(e, NPK_RKR_CNA_DCOMP_REGNUM, 0);
        W(e, NPK_RKR_CNA_DCOMP_ADDR0, F(e, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, d->wt_addr));
        for (int i = 0; i < 16; i++) W(e, (npk_rk_reg)(NPK_RKR_CNA_DCOMP_AMOUNT0 + i), 0);
        W(e, NPK_RKR_CNA_CVT_CON5, 0);
        W(e, NPK_RKR_CNA_PAD_CON1, F(e, NPK_RKF_CNA_PAD_CON1_PAD_VALUE, d->pad_value));

        /* CORE */
        W(e, NPK_RKR_CORE_MISC_CFG,
          F(e, NPK_RKF_CORE_MISC_CFG_PROC_PRECISION, prec) | F(e, NPK_RKF_CORE_MISC_CFG_QD_EN, 1) |
              F(e, NPK_RKF_CORE_MISC_CFG_DW_EN, d->depthwise));
        W(e, NPK_RKR_CORE_DATAOUT_SIZE_0,
          F(e, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, (uint64_t)d->out_h - 1) |
              F(e, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, (uint64_t)d->out_w - 1));
        W(e, NPK_RKR_CORE_DATAOUT_SIZE_1,
          F(e, NPK_RKF_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, (uint64_t)d->out_c - 1));
        W(e, NPK_RKR_CORE_CLIP_TRUNCATE, 0);
        W(e, NPK_RKR_CORE_UNDOC_3030, 0);
    }

    /* DPU */
    W(e, NPK_RKR_DPU_FEATURE_MODE_CFG,
      F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_BURST_LEN, 15) |
          F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2) |
          F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_FLYING_MODE, d->dpu_only) |
          F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_CONV_MODE, mode));
    W(e, NPK_RKR_DPU_DATA_FORMAT,
      F(e, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION, d->out_int32 ? wide : prec) |
          F(e, NPK_RKF_DPU_DATA_FORMAT_IN_PRECISION, d->dpu_only ? wide : prec) |
          F(e, NPK_RKF_DPU_DATA_FORMAT_PROC_PRECISION, prec));
    W(e, NPK_RKR_DPU_OFFSET_PEND, 0);
    W(e, NPK_RKR_DPU_DST_BASE_ADDR, F(e, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR, d->out_addr));
    W(e, NPK_RKR_DPU_DST_SURF_STRIDE,
      F(e, NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, d->dst_surf_stride));
    W(e, NPK_RKR_DPU_DATA_CUBE_WIDTH, F(e, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH, d->out_w - 1));
    W(e, NPK_RKR_DPU_DATA_CUBE_HEIGHT, F(e, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT, d->out_h - 1));
    W(e, NPK_RKR_DPU_DATA_CUBE_NOTCH_ADDR, 0);
    W(e, NPK_RKR_DPU_DATA_CUBE_CHANNEL,
      F(e, NPK_RKF_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, (uint64_t)d->out_c_real - 1) |
          F(e, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, (uint64_t)d->out_c - 1));
    emit_stage(e, &bs_regs, &d->bs);
    W(e, NPK_RKR_DPU_BS_OW_CFG,
      F(e, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_2, d->size_e) |
          F(e, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_1, d->size_e) |
          F(e, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_0, d->size_e) |
          F(e, NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS, !d->cpend || d->dpu_only));
    W(e, NPK_RKR_DPU_BS_OW_OP, FS(e, NPK_RKF_DPU_BS_OW_OP_OW_OP, d->ow_op));
    W(e, NPK_RKR_DPU_WDMA_SIZE_0,
      F(e, NPK_RKF_DPU_WDMA_SIZE_0_CHANNEL_WDMA, (uint64_t)d->out_c - 1));
    W(e, NPK_RKR_DPU_WDMA_SIZE_1,
      F(e, NPK_RKF_DPU_WDMA_SIZE_1_HEIGHT_WDMA, (uint64_t)d->out_h - 1) |
          F(e, NPK_RKF_DPU_WDMA_SIZE_1_WIDTH_WDMA, (uint64_t)d->out_w - 1));
    emit_stage(e, &bn_regs, &d->bn);
    if (d->ew_add32) {
        /* The previous partial sums, int32 per element, added unconverted. */
        W(e, NPK_RKR_DPU_EW_CFG,
          F(e, NPK_RKF_DPU_EW_CFG_EW_DATA_MODE, 1) | F(e, NPK_RKF_DPU_EW_CFG_EDATA_SIZE, 3) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO, ALU_ADD) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, 1) | F(e, NPK_RKF_DPU_EW_CFG_EW_OP_SRC, 1));
        W(e, NPK_RKR_DPU_EW_CVT_OFFSET_VALUE, 0);
        W(e, NPK_RKR_DPU_EW_CVT_SCALE_VALUE,
          F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, 1));
        W(e, NPK_RKR_DPU_EW_RELUX_CMP_VALUE, 0);
    } else if (d->ew_add) {
        /* int8 operand through the conversion; fp16 (size 2) added as is. */
        W(e, NPK_RKR_DPU_EW_CFG,
          F(e, NPK_RKF_DPU_EW_CFG_EW_DATA_MODE, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EDATA_SIZE, d->fp ? 2 : 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO, ALU_ADD) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN, d->ew_relux) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, !d->ew_relu) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, d->fp) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, 1) | F(e, NPK_RKF_DPU_EW_CFG_EW_OP_SRC, 1));
        W(e, NPK_RKR_DPU_EW_CVT_OFFSET_VALUE,
          FS(e, NPK_RKF_DPU_EW_CVT_OFFSET_VALUE_EW_OP_CVT_OFFSET, d->ew_cvt_offset));
        W(e, NPK_RKR_DPU_EW_CVT_SCALE_VALUE,
          F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT, d->ew_cvt_shift) |
              F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, d->ew_cvt_scale));
        W(e, NPK_RKR_DPU_EW_RELUX_CMP_VALUE,
          d->ew_relux ? F(e, NPK_RKF_DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT, d->ew_relux_cmp) : 0);
    } else if (d->ew_clip) {
        /* A register operand added by the ALU (EW_OP_SRC 0, EW_OP_TYPE 0),
         * then ReLU / ReLU-X; no conversion, no LUT. */
        W(e, NPK_RKR_DPU_EW_CFG,
          F(e, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO, ALU_ADD) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN, d->ew_relux) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, !d->ew_relu) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_OP_BYPASS, d->ew_clip_add == 0));
        W(e, NPK_RKR_DPU_EW_CVT_OFFSET_VALUE, 0);
        W(e, NPK_RKR_DPU_EW_CVT_SCALE_VALUE,
          F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, 1));
        W(e, NPK_RKR_DPU_EW_RELUX_CMP_VALUE,
          d->ew_relux ? F(e, NPK_RKF_DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT, d->ew_relux_cmp) : 0);
    } else {
        W(e, NPK_RKR_DPU_EW_CFG,
          F(e, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, 1) | F(e, NPK_RKF_DPU_EW_CFG_EW_OP_BYPASS, 1) |
              F(e, NPK_RKF_DPU_EW_CFG_EW_BYPASS, 1));
        W(e, NPK_RKR_DPU_EW_CVT_OFFSET_VALUE, 0);
        W(e, NPK_RKR_DPU_EW_CVT_SCALE_VALUE,
          F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, 1));
        W(e, NPK_RKR_DPU_EW_RELUX_CMP_VALUE, 0);
    }
    W(e, NPK_RKR_DPU_OUT_CVT_OFFSET,
      FS(e, NPK_RKF_DPU_OUT_CVT_OFFSET_OUT_CVT_OFFSET, d->out_cvt_offset));
    W(e, NPK_RKR_DPU_OUT_CVT_SCALE,
      F(e, NPK_RKF_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, d->fp && !d->out_int32) |
          F(e, NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, d->out_cvt_scale));
    W(e, NPK_RKR_DPU_OUT_CVT_SHIFT,
      F(e, NPK_RKF_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, d->out_cvt_shift));
    W(e, NPK_RKR_DPU_EW_OP_VALUE_0,
      d->ew_clip && !d->ew_add ? FS(e, NPK_RKF_DPU_EW_OP_VALUE_0_EW_OPERAND_0, d->ew_clip_add) : 0);
    for (int i = 1; i < 8; i++) W(e, (npk_rk_reg)(NPK_RKR_DPU_EW_OP_VALUE_0 + i), 0);
    W(e, NPK_RKR_DPU_SURFACE_ADD, F(e, NPK_RKF_DPU_SURFACE_ADD_SURF_ADD, d->surf_add));
    W(e, NPK_RKR_DPU_UNDOC_40C4, 0);
    for (int r = NPK_RKR_DPU_LUT_ACCESS_CFG; r <= NPK_RKR_DPU_LUT_LO_SLOPE_SHIFT; r++)
        W(e, (npk_rk_reg)r, 0);

    /* DPU_RDMA: the same cube; the bias (and multiplier) streams. */
    W(e, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_WIDTH,
      F(e, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH, d->out_w - 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT,
      F(e, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT, d->out_h - 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL,
      F(e, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL, (uint64_t)d->out_c - 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_SRC_BASE_ADDR,
      d->dpu_only ? F(e, NPK_RKF_DPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR, d->src_addr) : 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_BRDMA_CFG,
      F(e, NPK_RKF_DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE, d->brdma_use));
    W(e, NPK_RKR_DPU_RDMA_RDMA_BS_BASE_ADDR,
      F(e, NPK_RKF_DPU_RDMA_RDMA_BS_BASE_ADDR_BS_BASE_ADDR, d->brdma_use ? d->bs.base_addr : 0));
    W(e, NPK_RKR_DPU_RDMA_RDMA_NRDMA_CFG,
      F(e, NPK_RKF_DPU_RDMA_RDMA_NRDMA_CFG_NRDMA_DATA_USE, d->nrdma_use));
    W(e, NPK_RKR_DPU_RDMA_RDMA_BN_BASE_ADDR,
      F(e, NPK_RKF_DPU_RDMA_RDMA_BN_BASE_ADDR_BN_BASE_ADDR, d->nrdma_use ? d->bn.base_addr : 0));
    if (d->ew_add || d->ew_add32) {
        W(e, NPK_RKR_DPU_RDMA_RDMA_ERDMA_CFG,
          F(e, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_MODE, 1) |
              F(e, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE,
                d->ew_add32 ? 3
                : d->fp     ? 2
                            : 1));
        W(e, NPK_RKR_DPU_RDMA_RDMA_EW_BASE_ADDR,
          F(e, NPK_RKF_DPU_RDMA_RDMA_EW_BASE_ADDR_EW_BASE_ADDR, d->ew_addr));
        W(e, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_STRIDE,
          F(e, NPK_RKF_DPU_RDMA_RDMA_EW_SURF_STRIDE_EW_SURF_STRIDE, d->ew_surf_atoms));
    } else {
        W(e, NPK_RKR_DPU_RDMA_RDMA_ERDMA_CFG,
          F(e, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1));
        W(e, NPK_RKR_DPU_RDMA_RDMA_EW_BASE_ADDR, 0);
        W(e, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_STRIDE, 0);
    }
    W(e, NPK_RKR_DPU_RDMA_RDMA_FEATURE_MODE_CFG,
      F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 15) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, !d->dpu_only) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION, d->dpu_only ? wide : 0) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_PROC_PRECISION, d->dpu_only ? prec : 0) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, d->dpu_only) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE, mode));
    W(e, NPK_RKR_DPU_RDMA_RDMA_SRC_DMA_CFG, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_SURF_NOTCH,
      d->dpu_only ? F(e, NPK_RKF_DPU_RDMA_RDMA_SURF_NOTCH_SURF_NOTCH_ADDR,
                      (uint64_t)d->src_surf_atoms - (uint64_t)d->out_w * d->out_h)
                  : 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_PAD_CFG, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_WEIGHT,
      F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_E_WEIGHT, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_N_WEIGHT, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_B_WEIGHT, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_M_WEIGHT, 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_NOTCH, 0);

    /* Tail: next-stream slots (patched when chained), marker, enable. */
    if (d->rocket_tail)
        W(e, NPK_RKR_PC_BASE_ADDRESS, 0);
    else
        put(e, 0);
    W(e, NPK_RKR_PC_REGISTER_AMOUNTS, 0);
    put(e, npk_rk_entry_encode(NPK_RK_OP_MARKER, 0, 0));
    uint32_t en = npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_OP_EN) |
                  npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN);
    if (!d->dpu_only)
        en |= npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_CNA_OP_EN) |
              npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_CORE_OP_EN);
    put(e, npk_rk_entry_encode(NPK_RK_OP_ENABLE, en,
                               npk_rk_reg_get(NPK_RKR_PC_OPERATION_ENABLE)->offset));

    if (e->bad != NPK_RKF_NONE) {
        const npk_rk_field_info *fi = npk_rk_field_get(e->bad);
        return npk_fail(err, NPK_E_LIMIT, "value %lld does not fit %s.%s (%u bits)",
                        (long long)e->bad_value, npk_rk_reg_get(fi->reg)->full_name, fi->name,
                        npk_rk_field_width(e->bad));
    }
    if (e->n > cap)
        return npk_fail(err, NPK_E_LIMIT, "conv stream of %zu entries exceeds %zu", e->n, cap);
    *n = e->n;
    return NPK_OK;
}

npk_status npk_rk_ew_emit(const npk_rk_ew_desc *d, uint64_t *out, size_t cap, size_t *n,
                          npk_error *err)
{
    cemit e0 = {out, 0, cap, NPK_RKF_NONE, 0, write_heads()}, *e = &e0;
    W(e, NPK_RKR_DPU_S_POINTER,
      ptr_value(e, NPK_RKF_DPU_S_POINTER_POINTER_PP_MODE, NPK_RKF_DPU_S_POINTER_EXECUTER_PP_EN,
                NPK_RKF_DPU_S_POINTER_POINTER_PP_EN));
    W(e, NPK_RKR_DPU_RDMA_RDMA_S_POINTER,
      ptr_value(e, NPK_RKF_DPU_RDMA_RDMA_S_POINTER_POINTER_PP_MODE,
                NPK_RKF_DPU_RDMA_RDMA_S_POINTER_EXECUTER_PP_EN,
                NPK_RKF_DPU_RDMA_RDMA_S_POINTER_POINTER_PP_EN));
    W(e, NPK_RKR_DPU_FEATURE_MODE_CFG,
      F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_BURST_LEN, 15) |
          F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2) |
          F(e, NPK_RKF_DPU_FEATURE_MODE_CFG_FLYING_MODE, 1));
    /* int8 in, proc and out (0), or fp16 (2) */
    uint32_t prec = d->fp ? NPK_RK_PREC_FP16 : NPK_RK_PREC_INT8, esize = d->fp ? 2 : 1;
    W(e, NPK_RKR_DPU_DATA_FORMAT,
      F(e, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION, prec) |
          F(e, NPK_RKF_DPU_DATA_FORMAT_IN_PRECISION, prec) |
          F(e, NPK_RKF_DPU_DATA_FORMAT_PROC_PRECISION, prec));
    W(e, NPK_RKR_DPU_OFFSET_PEND, 0);
    W(e, NPK_RKR_DPU_DST_BASE_ADDR, F(e, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR, d->out_addr));
    W(e, NPK_RKR_DPU_DST_SURF_STRIDE,
      F(e, NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, d->surf_atoms));
    W(e, NPK_RKR_DPU_DATA_CUBE_WIDTH, F(e, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH, d->w - 1));
    W(e, NPK_RKR_DPU_DATA_CUBE_HEIGHT, F(e, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT, d->h - 1));
    W(e, NPK_RKR_DPU_DATA_CUBE_NOTCH_ADDR, 0);
    W(e, NPK_RKR_DPU_DATA_CUBE_CHANNEL,
      F(e, NPK_RKF_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, (uint64_t)d->c - 1) |
          F(e, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, (uint64_t)d->c - 1));
    emit_stage(e, &bs_regs, &d->bs);
    W(e, NPK_RKR_DPU_BS_OW_CFG,
      F(e, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_2, 1) | F(e, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_1, 1) |
          F(e, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_0, 1) | F(e, NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS, 1));
    W(e, NPK_RKR_DPU_BS_OW_OP, 0);
    W(e, NPK_RKR_DPU_WDMA_SIZE_0, F(e, NPK_RKF_DPU_WDMA_SIZE_0_CHANNEL_WDMA, (uint64_t)d->c - 1));
    W(e, NPK_RKR_DPU_WDMA_SIZE_1,
      F(e, NPK_RKF_DPU_WDMA_SIZE_1_HEIGHT_WDMA, (uint64_t)d->h - 1) |
          F(e, NPK_RKF_DPU_WDMA_SIZE_1_WIDTH_WDMA, (uint64_t)d->w - 1));
    emit_stage(e, &bn_regs, &d->bn);
    W(e, NPK_RKR_DPU_EW_CFG,
      F(e, NPK_RKF_DPU_EW_CFG_EW_DATA_MODE, 1) | F(e, NPK_RKF_DPU_EW_CFG_EDATA_SIZE, esize) |
          F(e, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO, ALU_ADD) |
          F(e, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN, d->ew_relux) |
          F(e, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, !d->ew_relu) |
          F(e, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, d->fp) |
          F(e, NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, 1) | F(e, NPK_RKF_DPU_EW_CFG_EW_OP_SRC, 1));
    W(e, NPK_RKR_DPU_EW_CVT_OFFSET_VALUE,
      FS(e, NPK_RKF_DPU_EW_CVT_OFFSET_VALUE_EW_OP_CVT_OFFSET, d->ew_cvt_offset));
    W(e, NPK_RKR_DPU_EW_CVT_SCALE_VALUE,
      F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT, d->ew_cvt_shift) |
          F(e, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, d->ew_cvt_scale));
    W(e, NPK_RKR_DPU_EW_RELUX_CMP_VALUE,
      d->ew_relux ? F(e, NPK_RKF_DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT, d->ew_relux_cmp) : 0);
    W(e, NPK_RKR_DPU_OUT_CVT_OFFSET,
      FS(e, NPK_RKF_DPU_OUT_CVT_OFFSET_OUT_CVT_OFFSET, d->out_cvt_offset));
    W(e, NPK_RKR_DPU_OUT_CVT_SCALE,
      F(e, NPK_RKF_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, d->fp) |
          F(e, NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, d->out_cvt_scale));
    W(e, NPK_RKR_DPU_OUT_CVT_SHIFT,
      F(e, NPK_RKF_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, d->out_cvt_shift));
    for (int i = 0; i < 8; i++) W(e, (npk_rk_reg)(NPK_RKR_DPU_EW_OP_VALUE_0 + i), 0);
    W(e, NPK_RKR_DPU_SURFACE_ADD,
      F(e, NPK_RKF_DPU_SURFACE_ADD_SURF_ADD, 2 * (uint64_t)d->surf_atoms));
    W(e, NPK_RKR_DPU_UNDOC_40C4, 0);
    for (int r = NPK_RKR_DPU_LUT_ACCESS_CFG; r <= NPK_RKR_DPU_LUT_LO_SLOPE_SHIFT; r++)
        W(e, (npk_rk_reg)r, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_WIDTH,
      F(e, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH, d->w - 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT,
      F(e, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT, d->h - 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL,
      F(e, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL, (uint64_t)d->c - 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_SRC_BASE_ADDR,
      F(e, NPK_RKF_DPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR, d->src_addr));
    W(e, NPK_RKR_DPU_RDMA_RDMA_BRDMA_CFG, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_BS_BASE_ADDR, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_NRDMA_CFG, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_BN_BASE_ADDR, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_ERDMA_CFG,
      F(e, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_MODE, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE, esize));
    W(e, NPK_RKR_DPU_RDMA_RDMA_EW_BASE_ADDR,
      F(e, NPK_RKF_DPU_RDMA_RDMA_EW_BASE_ADDR_EW_BASE_ADDR, d->ew_addr));
    W(e, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_STRIDE,
      F(e, NPK_RKF_DPU_RDMA_RDMA_EW_SURF_STRIDE_EW_SURF_STRIDE, d->surf_atoms));
    W(e, NPK_RKR_DPU_RDMA_RDMA_FEATURE_MODE_CFG,
      F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 15) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION, prec) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_PROC_PRECISION, prec) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_SRC_DMA_CFG, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_SURF_NOTCH,
      F(e, NPK_RKF_DPU_RDMA_RDMA_SURF_NOTCH_SURF_NOTCH_ADDR,
        (uint64_t)d->surf_atoms - (uint64_t)d->w * d->h));
    W(e, NPK_RKR_DPU_RDMA_RDMA_PAD_CFG, 0);
    W(e, NPK_RKR_DPU_RDMA_RDMA_WEIGHT,
      F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_E_WEIGHT, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_N_WEIGHT, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_B_WEIGHT, 1) |
          F(e, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_M_WEIGHT, 1));
    W(e, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_NOTCH, 0);
    put(e, 0);
    W(e, NPK_RKR_PC_REGISTER_AMOUNTS, 0);
    put(e, npk_rk_entry_encode(NPK_RK_OP_MARKER, 0, 0));
    uint32_t en = npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_OP_EN) |
                  npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN);
    put(e, npk_rk_entry_encode(NPK_RK_OP_ENABLE, en,
                               npk_rk_reg_get(NPK_RKR_PC_OPERATION_ENABLE)->offset));
    if (e->bad != NPK_RKF_NONE) {
        const npk_rk_field_info *fi = npk_rk_field_get(e->bad);
        return npk_fail(err, NPK_E_LIMIT, "value %lld does not fit %s.%s (%u bits)",
                        (long long)e->bad_value, npk_rk_reg_get(fi->reg)->full_name, fi->name,
                        npk_rk_field_width(e->bad));
    }
    if (e->n > cap)
        return npk_fail(err, NPK_E_LIMIT, "element-wise stream of %zu entries exceeds %zu", e->n,
                        cap);
    *n = e->n;
    return NPK_OK;
}
