/* Descriptors -> the 108-entry matmul stream. Registers and fields are named
 * by their table identifiers; every value is checked against its field's
 * width (taken from the table) instead of being masked. */
#include <stdio.h>
#include <string.h>

#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_stream.h"

/* A compile-time expansion of the register table for this hot path: the
 * compiler folds every field position and register word into constants. */
enum {
#define NPK_RK_BLOCK(b, code, base) CODE_##b = code,
#define NPK_RK_REG(b, off, name, undoc)
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

static const struct {
    uint8_t hi, lo;
    npk_rk_reg reg;
} fbits[NPK_RKF_COUNT] = {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)
#define NPK_RK_FLD(b, r, f, hi, lo) {hi, lo, NPK_RKR_##b##_##r},
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

/* op << 48 | offset of a write to each register (only meaningful for blocks
 * whose code fits the op field; the matmul stream uses no others). */
static const uint64_t rword[NPK_RKR_COUNT] = {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)                                                            \
    ((uint64_t)((CODE_##b | NPK_RK_OP_WRITE) & 0xFFFFu) << 48) | (off),
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

typedef struct emitter {
    uint64_t *out;
    size_t n, cap;
    npk_rk_reg pending; /* register of the fields packed since the last write */
    npk_rk_field bad;   /* first field whose value did not fit */
    uint64_t bad_value;
    bool mixed; /* fields of two registers packed into one write */
} emitter;

/* v at field f's position; records the first overflow. */
static inline uint32_t F(emitter *e, npk_rk_field f, uint64_t v)
{
    unsigned w = (unsigned)(fbits[f].hi - fbits[f].lo + 1);
    uint64_t max = (1ull << w) - 1;
    if (e->pending == NPK_RKR_NONE)
        e->pending = fbits[f].reg;
    else if (e->pending != fbits[f].reg)
        e->mixed = true;
    if (v > max) {
        if (e->bad == NPK_RKF_NONE) {
            e->bad = f;
            e->bad_value = v;
        }
        return 0;
    }
    return (uint32_t)(v << fbits[f].lo);
}

/* A signed value in two's complement of the field's width. */
static uint32_t FS(emitter *e, npk_rk_field f, int64_t v)
{
    unsigned w = (unsigned)(fbits[f].hi - fbits[f].lo + 1);
    int64_t lo = -((int64_t)1 << (w - 1));
    if (v >= 0) return F(e, f, (uint64_t)v);
    if (v < lo) return F(e, f, UINT64_MAX); /* records the overflow */
    return F(e, f, (uint64_t)v & (((uint64_t)1 << w) - 1));
}

static inline void put(emitter *e, uint64_t word)
{
    if (e->n < e->cap) e->out[e->n] = word;
    e->n++;
}

/* A register write; the matmul stream only addresses blocks whose codes
 * fit the op field (PC, CNA, CORE, DPU), so the op is the block code | 1. */
static inline void W(emitter *e, npk_rk_reg r, uint32_t value)
{
    if (e->pending != NPK_RKR_NONE && e->pending != r) e->mixed = true;
    e->pending = NPK_RKR_NONE;
    put(e, rword[r] | (uint64_t)value << 16);
}

size_t npk_rk_form_entries(npk_rk_form form)
{
    return form == NPK_RK_FORM_ROCKET ? NPK_RK_MATMUL_ROCKET_ENTRIES : NPK_RK_MATMUL_ENTRIES;
}

const char *npk_rk_form_name(npk_rk_form form)
{
    return form == NPK_RK_FORM_ROCKET ? "rocket" : "vendor";
}

/* The DPU_RDMA block of the rocket form, in Mesa's order: the cube the DPU
 * writes, every read path off (no bias, no BN operand, no element-wise
 * input, MRDMA disabled), arbitration weights 1. Whether the precision
 * fields matter with MRDMA disabled is not known; they carry the DPU's. */
static void emit_dpu_rdma(emitter *E, const npk_rk_dpu_desc *d)
{
    W(E, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_WIDTH,
      F(E, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH, d->width_m1));
    W(E, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT,
      F(E, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT, d->height_m1));
    W(E, NPK_RKR_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL,
      F(E, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL, d->channel_m1));
    W(E, NPK_RKR_DPU_RDMA_RDMA_SRC_BASE_ADDR, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_BRDMA_CFG, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_BS_BASE_ADDR, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_NRDMA_CFG, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_BN_BASE_ADDR, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_ERDMA_CFG, F(E, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1));
    W(E, NPK_RKR_DPU_RDMA_RDMA_EW_BASE_ADDR, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_STRIDE, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_FEATURE_MODE_CFG,
      F(E, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION, d->in_precision) |
          F(E, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, d->burst_len) |
          F(E, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_PROC_PRECISION, d->proc_precision) |
          F(E, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1));
    W(E, NPK_RKR_DPU_RDMA_RDMA_SRC_DMA_CFG, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_SURF_NOTCH, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_PAD_CFG, 0);
    W(E, NPK_RKR_DPU_RDMA_RDMA_WEIGHT,
      F(E, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_E_WEIGHT, 1) |
          F(E, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_N_WEIGHT, 1) |
          F(E, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_B_WEIGHT, 1) |
          F(E, NPK_RKF_DPU_RDMA_RDMA_WEIGHT_M_WEIGHT, 1));
    W(E, NPK_RKR_DPU_RDMA_RDMA_EW_SURF_NOTCH, 0);
}

npk_status npk_rk_descs_emit(const npk_rk_cna_desc *c, const npk_rk_core_desc *k,
                             const npk_rk_dpu_desc *d, uint64_t out[NPK_RK_MATMUL_ENTRIES],
                             npk_error *err)
{
    return npk_rk_descs_emit_form(c, k, d, NPK_RK_FORM_VENDOR, out, err);
}

npk_status npk_rk_descs_emit_form(const npk_rk_cna_desc *c, const npk_rk_core_desc *k,
                                  const npk_rk_dpu_desc *d, npk_rk_form form, uint64_t *out,
                                  npk_error *err)
{
    bool rocket = form == NPK_RK_FORM_ROCKET;
    size_t want = npk_rk_form_entries(form);
    emitter e = {out, 0, want, NPK_RKR_NONE, NPK_RKF_NONE, 0, false};
    emitter *E = &e;

    W(E, NPK_RKR_DPU_S_POINTER,
      F(E, NPK_RKF_DPU_S_POINTER_POINTER_PP_MODE, 1) |
          F(E, NPK_RKF_DPU_S_POINTER_EXECUTER_PP_EN, 1) |
          F(E, NPK_RKF_DPU_S_POINTER_POINTER_PP_EN, 1));
    if (rocket)
        W(E, NPK_RKR_DPU_RDMA_RDMA_S_POINTER,
          F(E, NPK_RKF_DPU_RDMA_RDMA_S_POINTER_POINTER_PP_MODE, 1) |
              F(E, NPK_RKF_DPU_RDMA_RDMA_S_POINTER_EXECUTER_PP_EN, 1) |
              F(E, NPK_RKF_DPU_RDMA_RDMA_S_POINTER_POINTER_PP_EN, 1));

    /* CNA: convolution setup */
    W(E, NPK_RKR_CNA_CONV_CON1,
      F(E, NPK_RKF_CNA_CONV_CON1_PROC_PRECISION, c->proc_precision) |
          F(E, NPK_RKF_CNA_CONV_CON1_IN_PRECISION, c->in_precision) |
          F(E, NPK_RKF_CNA_CONV_CON1_CONV_MODE, c->conv_mode));
    W(E, NPK_RKR_CNA_CONV_CON2,
      F(E, NPK_RKF_CNA_CONV_CON2_KERNEL_GROUP, c->kernel_groups) |
          F(E, NPK_RKF_CNA_CONV_CON2_FEATURE_GRAINS, c->feature_grains));
    W(E, NPK_RKR_CNA_CONV_CON3,
      F(E, NPK_RKF_CNA_CONV_CON3_CONV_Y_STRIDE, c->conv_y_stride) |
          F(E, NPK_RKF_CNA_CONV_CON3_CONV_X_STRIDE, c->conv_x_stride));
    W(E, NPK_RKR_CNA_DATA_SIZE0,
      F(E, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH, c->datain_width) |
          F(E, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT, c->datain_height));
    W(E, NPK_RKR_CNA_DATA_SIZE1,
      F(E, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, (uint64_t)c->datain_channel - 1) |
          F(E, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, c->datain_channel));
    W(E, NPK_RKR_CNA_DATA_SIZE2, F(E, NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH, c->dataout_width));
    W(E, NPK_RKR_CNA_DATA_SIZE3, F(E, NPK_RKF_CNA_DATA_SIZE3_DATAOUT_ATOMICS, c->dataout_atomics));
    W(E, NPK_RKR_CNA_WEIGHT_SIZE0, F(E, NPK_RKF_CNA_WEIGHT_SIZE0_WEIGHT_BYTES, c->weight_bytes));
    W(E, NPK_RKR_CNA_WEIGHT_SIZE1,
      F(E, NPK_RKF_CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL, c->weight_bytes_per_kernel));
    W(E, NPK_RKR_CNA_WEIGHT_SIZE2,
      F(E, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, c->weight_width) |
          F(E, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, c->weight_height) |
          F(E, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, c->weight_kernels));
    W(E, NPK_RKR_CNA_CBUF_CON0,
      F(E, NPK_RKF_CNA_CBUF_CON0_WEIGHT_BANK, c->weight_bank) |
          F(E, NPK_RKF_CNA_CBUF_CON0_DATA_BANK, c->data_bank));
    W(E, NPK_RKR_CNA_CBUF_CON1, F(E, NPK_RKF_CNA_CBUF_CON1_DATA_ENTRIES, c->data_entries));
    W(E, NPK_RKR_CNA_CVT_CON0,
      F(E, NPK_RKF_CNA_CVT_CON0_DATA_SIGN, c->data_sign) |
          F(E, NPK_RKF_CNA_CVT_CON0_CVT_TYPE, c->cvt_type) |
          F(E, NPK_RKF_CNA_CVT_CON0_CVT_BYPASS, c->cvt_bypass));
    W(E, NPK_RKR_CNA_CVT_CON1, F(E, NPK_RKF_CNA_CVT_CON1_CVT_SCALE0, c->cvt_scale[0]));
    W(E, NPK_RKR_CNA_CVT_CON2, F(E, NPK_RKF_CNA_CVT_CON2_CVT_SCALE1, c->cvt_scale[1]));
    W(E, NPK_RKR_CNA_CVT_CON3, F(E, NPK_RKF_CNA_CVT_CON3_CVT_SCALE2, c->cvt_scale[2]));
    W(E, NPK_RKR_CNA_CVT_CON4, F(E, NPK_RKF_CNA_CVT_CON4_CVT_SCALE3, c->cvt_scale[3]));
    W(E, NPK_RKR_CNA_FC_CON0, F(E, NPK_RKF_CNA_FC_CON0_FC_SKIP_EN, c->fc_skip_en));
    W(E, NPK_RKR_CNA_FC_CON1, F(E, NPK_RKF_CNA_FC_CON1_DATA_OFFSET, c->data_offset));
    W(E, NPK_RKR_CNA_PAD_CON0,
      F(E, NPK_RKF_CNA_PAD_CON0_PAD_LEFT, c->pad_left) |
          F(E, NPK_RKF_CNA_PAD_CON0_PAD_TOP, c->pad_top));
    W(E, NPK_RKR_CNA_FEATURE_DATA_ADDR,
      F(E, NPK_RKF_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, c->feature_base_addr));
    W(E, NPK_RKR_CNA_FC_CON2, F(E, NPK_RKF_CNA_FC_CON2_WEIGHT_OFFSET, c->weight_offset));
    W(E, NPK_RKR_CNA_DMA_CON0,
      F(E, NPK_RKF_CNA_DMA_CON0_WEIGHT_BURST_LEN, c->weight_burst_len) |
          F(E, NPK_RKF_CNA_DMA_CON0_DATA_BURST_LEN, c->data_burst_len));
    W(E, NPK_RKR_CNA_DMA_CON1, F(E, NPK_RKF_CNA_DMA_CON1_LINE_STRIDE, c->line_stride));
    W(E, NPK_RKR_CNA_DMA_CON2, FS(E, NPK_RKF_CNA_DMA_CON2_SURF_STRIDE, c->surf_stride));
    W(E, NPK_RKR_CNA_FC_DATA_SIZE0,
      F(E, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_WIDTH, c->dma_width) |
          F(E, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_HEIGHT, c->dma_height));
    W(E, NPK_RKR_CNA_FC_DATA_SIZE1, F(E, NPK_RKF_CNA_FC_DATA_SIZE1_DMA_CHANNEL, c->dma_channel));

    /* CNA: weight decompression (off; the weight address goes in ADDR0) */
    W(E, NPK_RKR_CNA_DCOMP_CTRL, 0);
    W(E, NPK_RKR_CNA_DCOMP_REGNUM, 0);
    W(E, NPK_RKR_CNA_DCOMP_ADDR0,
      F(E, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, c->decompress_addr0));
    for (int i = 0; i < 16; i++) W(E, (npk_rk_reg)(NPK_RKR_CNA_DCOMP_AMOUNT0 + i), 0);
    W(E, NPK_RKR_CNA_CVT_CON5, 0);
    W(E, NPK_RKR_CNA_PAD_CON1, 0);

    /* CORE */
    W(E, NPK_RKR_CORE_MISC_CFG,
      F(E, NPK_RKF_CORE_MISC_CFG_PROC_PRECISION, k->proc_precision) |
          F(E, NPK_RKF_CORE_MISC_CFG_QD_EN, k->qd_en));
    W(E, NPK_RKR_CORE_DATAOUT_SIZE_0,
      F(E, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, k->dataout_height_m1) |
          F(E, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, k->dataout_width_m1));
    W(E, NPK_RKR_CORE_DATAOUT_SIZE_1,
      F(E, NPK_RKF_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, k->dataout_channel_m1));
    W(E, NPK_RKR_CORE_CLIP_TRUNCATE, 0);
    W(E, NPK_RKR_CORE_UNDOC_3030, 0);

    /* DPU */
    W(E, NPK_RKR_DPU_FEATURE_MODE_CFG,
      F(E, NPK_RKF_DPU_FEATURE_MODE_CFG_BURST_LEN, d->burst_len) |
          F(E, NPK_RKF_DPU_FEATURE_MODE_CFG_CONV_MODE, d->conv_mode) |
          F(E, NPK_RKF_DPU_FEATURE_MODE_CFG_OUTPUT_MODE, d->output_mode) |
          F(E, NPK_RKF_DPU_FEATURE_MODE_CFG_FLYING_MODE, d->flying_mode));
    W(E, NPK_RKR_DPU_DATA_FORMAT,
      F(E, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION, d->out_precision) |
          F(E, NPK_RKF_DPU_DATA_FORMAT_IN_PRECISION, d->in_precision) |
          F(E, NPK_RKF_DPU_DATA_FORMAT_PROC_PRECISION, d->proc_precision));
    W(E, NPK_RKR_DPU_OFFSET_PEND, 0);
    W(E, NPK_RKR_DPU_DST_BASE_ADDR,
      F(E, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR, d->dst_base_addr));
    W(E, NPK_RKR_DPU_DST_SURF_STRIDE,
      F(E, NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, d->dst_surf_stride));
    W(E, NPK_RKR_DPU_DATA_CUBE_WIDTH, F(E, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH, d->width_m1));
    W(E, NPK_RKR_DPU_DATA_CUBE_HEIGHT, F(E, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT, d->height_m1));
    W(E, NPK_RKR_DPU_DATA_CUBE_NOTCH_ADDR, 0);
    W(E, NPK_RKR_DPU_DATA_CUBE_CHANNEL,
      F(E, NPK_RKF_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, d->channel_m1) |
          F(E, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, d->channel_m1));
    W(E, NPK_RKR_DPU_BS_CFG,
      F(E, NPK_RKF_DPU_BS_CFG_BS_RELU_BYPASS, d->bs_relu_bypass) |
          F(E, NPK_RKF_DPU_BS_CFG_BS_MUL_BYPASS, d->bs_mul_bypass) |
          F(E, NPK_RKF_DPU_BS_CFG_BS_ALU_BYPASS, d->bs_alu_bypass) |
          F(E, NPK_RKF_DPU_BS_CFG_BS_BYPASS, d->bs_bypass));
    W(E, NPK_RKR_DPU_BS_ALU_CFG, 0);
    W(E, NPK_RKR_DPU_BS_MUL_CFG, 0);
    W(E, NPK_RKR_DPU_BS_RELUX_CMP_VALUE, 0);
    W(E, NPK_RKR_DPU_BS_OW_CFG,
      F(E, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_2, d->size_e[2]) |
          F(E, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_1, d->size_e[1]) |
          F(E, NPK_RKF_DPU_BS_OW_CFG_SIZE_E_0, d->size_e[0]) |
          F(E, NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS, d->od_bypass));
    W(E, NPK_RKR_DPU_BS_OW_OP, 0);
    W(E, NPK_RKR_DPU_WDMA_SIZE_0, F(E, NPK_RKF_DPU_WDMA_SIZE_0_CHANNEL_WDMA, d->channel_wdma_m1));
    W(E, NPK_RKR_DPU_WDMA_SIZE_1,
      F(E, NPK_RKF_DPU_WDMA_SIZE_1_HEIGHT_WDMA, d->height_wdma_m1) |
          F(E, NPK_RKF_DPU_WDMA_SIZE_1_WIDTH_WDMA, d->width_wdma_m1));
    W(E, NPK_RKR_DPU_BN_CFG,
      F(E, NPK_RKF_DPU_BN_CFG_BN_RELU_BYPASS, d->bn_relu_bypass) |
          F(E, NPK_RKF_DPU_BN_CFG_BN_MUL_BYPASS, d->bn_mul_bypass) |
          F(E, NPK_RKF_DPU_BN_CFG_BN_ALU_BYPASS, d->bn_alu_bypass) |
          F(E, NPK_RKF_DPU_BN_CFG_BN_BYPASS, d->bn_bypass));
    W(E, NPK_RKR_DPU_BN_ALU_CFG, 0);
    W(E, NPK_RKR_DPU_BN_MUL_CFG, 0);
    W(E, NPK_RKR_DPU_BN_RELUX_CMP_VALUE, 0);
    W(E, NPK_RKR_DPU_EW_CFG,
      F(E, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS, d->ew_relu_bypass) |
          F(E, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, d->ew_op_cvt_bypass) |
          F(E, NPK_RKF_DPU_EW_CFG_EW_LUT_BYPASS, d->ew_lut_bypass) |
          F(E, NPK_RKF_DPU_EW_CFG_EW_OP_BYPASS, d->ew_op_bypass) |
          F(E, NPK_RKF_DPU_EW_CFG_EW_BYPASS, d->ew_bypass));
    W(E, NPK_RKR_DPU_EW_CVT_OFFSET_VALUE, 0);
    W(E, NPK_RKR_DPU_EW_CVT_SCALE_VALUE, F(E, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, 1));
    W(E, NPK_RKR_DPU_EW_RELUX_CMP_VALUE, 0);
    W(E, NPK_RKR_DPU_OUT_CVT_OFFSET, 0);
    W(E, NPK_RKR_DPU_OUT_CVT_SCALE,
      F(E, NPK_RKF_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, d->fp32tofp16_en) |
          F(E, NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, d->out_cvt_scale));
    W(E, NPK_RKR_DPU_OUT_CVT_SHIFT, 0);
    for (int i = 0; i < 8; i++) W(E, (npk_rk_reg)(NPK_RKR_DPU_EW_OP_VALUE_0 + i), 0);
    W(E, NPK_RKR_DPU_SURFACE_ADD, F(E, NPK_RKF_DPU_SURFACE_ADD_SURF_ADD, d->surf_add));
    W(E, NPK_RKR_DPU_UNDOC_40C4, 0);
    for (int r = NPK_RKR_DPU_LUT_ACCESS_CFG; r <= NPK_RKR_DPU_LUT_LO_SLOPE_SHIFT; r++)
        W(E, (npk_rk_reg)r, 0);
    if (rocket) emit_dpu_rdma(E, d);

    /* Tail: next-stream slots (unchained here), marker, operation enable. */
    put(E, 0);
    W(E, NPK_RKR_PC_REGISTER_AMOUNTS, 0);
    put(E, npk_rk_entry_encode(NPK_RK_OP_MARKER, 0, 0));
    uint32_t enable = d->enable_mask;
    if (rocket) enable |= npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN);
    put(E, npk_rk_entry_encode(NPK_RK_OP_ENABLE, enable,
                               npk_rk_reg_get(NPK_RKR_PC_OPERATION_ENABLE)->offset));

    if (e.bad != NPK_RKF_NONE) {
        const npk_rk_field_info *fi = npk_rk_field_get(e.bad);
        return npk_fail(err, NPK_E_LIMIT, "value %llu does not fit %s.%s (%u bits, max %lu)",
                        (unsigned long long)e.bad_value, npk_rk_reg_get(fi->reg)->full_name,
                        fi->name, npk_rk_field_width(e.bad),
                        (unsigned long)npk_rk_field_max(e.bad));
    }
    if (e.mixed || e.n != want)
        return npk_fail(err, NPK_E_ARG, "internal: matmul stream layout broken (%zu entries)", e.n);
    return NPK_OK;
}
