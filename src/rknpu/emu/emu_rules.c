/* What the emulator models, register by register and field by field.
 *
 * Registers of the blocks a task runs fall in three classes: READ (the model
 * reads them, so the task's stream must write them), OPTIONAL (a stream may
 * write them; they do not change the result) and everything else (a write is
 * an error: the model does not know what it would do). Fields of a READ or
 * OPTIONAL register are USED (interpreted by emu_task.c, which checks their
 * values), ANY (no effect on the result, e.g. burst lengths), EQ (only one
 * value is modelled) or, when not listed at all, must be zero. Bits outside
 * every named field must be zero. */
#include <stdio.h>

#include "emu_internal.h"

enum { R_READ = 1, R_OPT = 2 };
enum { F_USED = 1, F_ANY, F_EQ };

typedef struct field_rule {
    uint8_t kind;
    uint32_t value; /* for F_EQ */
} field_rule;

/* Indexed by register and field identifier (designated initializers: a
 * register or field listed twice is a compile-time warning). */
#define RD(r)  [NPK_RKR_##r] = R_READ
#define OPT(r) [NPK_RKR_##r] = R_OPT

static const uint8_t reg_class[NPK_RKR_COUNT] = {
    /* CNA */
    OPT(CNA_S_POINTER),
    RD(CNA_CONV_CON1),
    RD(CNA_CONV_CON2),
    RD(CNA_CONV_CON3),
    RD(CNA_DATA_SIZE0),
    RD(CNA_DATA_SIZE1),
    RD(CNA_DATA_SIZE2),
    RD(CNA_DATA_SIZE3),
    RD(CNA_WEIGHT_SIZE0),
    RD(CNA_WEIGHT_SIZE1),
    RD(CNA_WEIGHT_SIZE2),
    RD(CNA_CBUF_CON0),
    RD(CNA_CBUF_CON1),
    RD(CNA_CVT_CON0),
    OPT(CNA_CVT_CON1),
    OPT(CNA_CVT_CON2),
    OPT(CNA_CVT_CON3),
    OPT(CNA_CVT_CON4),
    RD(CNA_FC_CON0),
    RD(CNA_FC_CON1),
    RD(CNA_PAD_CON0),
    RD(CNA_FEATURE_DATA_ADDR),
    RD(CNA_FC_CON2),
    OPT(CNA_DMA_CON0),
    RD(CNA_DMA_CON1),
    RD(CNA_DMA_CON2),
    RD(CNA_FC_DATA_SIZE0),
    RD(CNA_FC_DATA_SIZE1),
    OPT(CNA_CLK_GATE),
    RD(CNA_DCOMP_CTRL),
    RD(CNA_DCOMP_REGNUM),
    RD(CNA_DCOMP_ADDR0),
    OPT(CNA_DCOMP_AMOUNT0),
    OPT(CNA_DCOMP_AMOUNT1),
    OPT(CNA_DCOMP_AMOUNT2),
    OPT(CNA_DCOMP_AMOUNT3),
    OPT(CNA_DCOMP_AMOUNT4),
    OPT(CNA_DCOMP_AMOUNT5),
    OPT(CNA_DCOMP_AMOUNT6),
    OPT(CNA_DCOMP_AMOUNT7),
    OPT(CNA_DCOMP_AMOUNT8),
    OPT(CNA_DCOMP_AMOUNT9),
    OPT(CNA_DCOMP_AMOUNT10),
    OPT(CNA_DCOMP_AMOUNT11),
    OPT(CNA_DCOMP_AMOUNT12),
    OPT(CNA_DCOMP_AMOUNT13),
    OPT(CNA_DCOMP_AMOUNT14),
    OPT(CNA_DCOMP_AMOUNT15),
    RD(CNA_CVT_CON5),
    RD(CNA_PAD_CON1),
    /* CORE */
    OPT(CORE_S_POINTER),
    OPT(CORE_MAC_GATING),
    RD(CORE_MISC_CFG),
    RD(CORE_DATAOUT_SIZE_0),
    RD(CORE_DATAOUT_SIZE_1),
    RD(CORE_CLIP_TRUNCATE),
    OPT(CORE_UNDOC_3030),
    /* DPU */
    OPT(DPU_S_POINTER),
    RD(DPU_FEATURE_MODE_CFG),
    RD(DPU_DATA_FORMAT),
    RD(DPU_OFFSET_PEND),
    RD(DPU_DST_BASE_ADDR),
    RD(DPU_DST_SURF_STRIDE),
    RD(DPU_DATA_CUBE_WIDTH),
    RD(DPU_DATA_CUBE_HEIGHT),
    RD(DPU_DATA_CUBE_NOTCH_ADDR),
    RD(DPU_DATA_CUBE_CHANNEL),
    RD(DPU_BS_CFG),
    RD(DPU_BS_ALU_CFG),
    RD(DPU_BS_MUL_CFG),
    RD(DPU_BS_RELUX_CMP_VALUE),
    RD(DPU_BS_OW_CFG),
    RD(DPU_BS_OW_OP),
    RD(DPU_WDMA_SIZE_0),
    RD(DPU_WDMA_SIZE_1),
    RD(DPU_BN_CFG),
    RD(DPU_BN_ALU_CFG),
    RD(DPU_BN_MUL_CFG),
    RD(DPU_BN_RELUX_CMP_VALUE),
    RD(DPU_EW_CFG),
    OPT(DPU_EW_CVT_OFFSET_VALUE),
    OPT(DPU_EW_CVT_SCALE_VALUE),
    RD(DPU_EW_RELUX_CMP_VALUE),
    RD(DPU_OUT_CVT_OFFSET),
    RD(DPU_OUT_CVT_SCALE),
    RD(DPU_OUT_CVT_SHIFT),
    RD(DPU_EW_OP_VALUE_0),
    OPT(DPU_EW_OP_VALUE_1),
    OPT(DPU_EW_OP_VALUE_2),
    OPT(DPU_EW_OP_VALUE_3),
    OPT(DPU_EW_OP_VALUE_4),
    OPT(DPU_EW_OP_VALUE_5),
    OPT(DPU_EW_OP_VALUE_6),
    OPT(DPU_EW_OP_VALUE_7),
    RD(DPU_SURFACE_ADD),
    OPT(DPU_UNDOC_40C4),
    OPT(DPU_LUT_ACCESS_CFG),
    OPT(DPU_LUT_ACCESS_DATA),
    OPT(DPU_LUT_CFG),
    OPT(DPU_LUT_INFO),
    OPT(DPU_LUT_LE_START),
    OPT(DPU_LUT_LE_END),
    OPT(DPU_LUT_LO_START),
    OPT(DPU_LUT_LO_END),
    OPT(DPU_LUT_LE_SLOPE_SCALE),
    OPT(DPU_LUT_LE_SLOPE_SHIFT),
    OPT(DPU_LUT_LO_SLOPE_SCALE),
    OPT(DPU_LUT_LO_SLOPE_SHIFT),
    /* DPU_RDMA (checked only when the operation enable starts it) */
    OPT(DPU_RDMA_RDMA_S_POINTER),
    RD(DPU_RDMA_RDMA_DATA_CUBE_WIDTH),
    RD(DPU_RDMA_RDMA_DATA_CUBE_HEIGHT),
    RD(DPU_RDMA_RDMA_DATA_CUBE_CHANNEL),
    OPT(DPU_RDMA_RDMA_SRC_BASE_ADDR),
    RD(DPU_RDMA_RDMA_BRDMA_CFG),
    OPT(DPU_RDMA_RDMA_BS_BASE_ADDR),
    RD(DPU_RDMA_RDMA_NRDMA_CFG),
    OPT(DPU_RDMA_RDMA_BN_BASE_ADDR),
    RD(DPU_RDMA_RDMA_ERDMA_CFG),
    OPT(DPU_RDMA_RDMA_EW_BASE_ADDR),
    OPT(DPU_RDMA_RDMA_EW_SURF_STRIDE),
    RD(DPU_RDMA_RDMA_FEATURE_MODE_CFG),
    RD(DPU_RDMA_RDMA_SRC_DMA_CFG),
    OPT(DPU_RDMA_RDMA_SURF_NOTCH),
    OPT(DPU_RDMA_RDMA_PAD_CFG),
    OPT(DPU_RDMA_RDMA_WEIGHT),
    OPT(DPU_RDMA_RDMA_EW_SURF_NOTCH),
};

#define USED(f)  [NPK_RKF_##f] = {F_USED, 0}
#define ANY(f)   [NPK_RKF_##f] = {F_ANY, 0}
#define EQ(f, v) [NPK_RKF_##f] = {F_EQ, v}

static const field_rule field_rule_of[NPK_RKF_COUNT] = {
    /* Register-group ping-pong selects which copy of the registers a write
     * lands in; the model keeps one copy, which is exact when every task
     * writes every register it uses (required above). */
    ANY(CNA_S_POINTER_POINTER_PP_MODE),
    ANY(CNA_S_POINTER_EXECUTER_PP_EN),
    ANY(CNA_S_POINTER_POINTER_PP_EN),
    ANY(CORE_S_POINTER_POINTER_PP_MODE),
    ANY(CORE_S_POINTER_EXECUTER_PP_EN),
    ANY(CORE_S_POINTER_POINTER_PP_EN),
    ANY(DPU_S_POINTER_POINTER_PP_MODE),
    ANY(DPU_S_POINTER_EXECUTER_PP_EN),
    ANY(DPU_S_POINTER_POINTER_PP_EN),
    ANY(DPU_RDMA_RDMA_S_POINTER_POINTER_PP_MODE),
    ANY(DPU_RDMA_RDMA_S_POINTER_EXECUTER_PP_EN),
    ANY(DPU_RDMA_RDMA_S_POINTER_POINTER_PP_EN),

    /* CNA: direct or depthwise convolution, any kernel, stride, dilation, padding. */
    USED(CNA_CONV_CON1_PROC_PRECISION),
    USED(CNA_CONV_CON1_IN_PRECISION),
    USED(CNA_CONV_CON1_CONV_MODE),
    ANY(CNA_CONV_CON2_FEATURE_GRAINS), /* lines buffered before starting: timing only */
    USED(CNA_CONV_CON3_CONV_Y_STRIDE),
    USED(CNA_CONV_CON3_CONV_X_STRIDE),
    USED(CNA_CONV_CON3_ATROUS_Y_DILATION),
    USED(CNA_CONV_CON3_ATROUS_X_DILATION),
    USED(CNA_DATA_SIZE0_DATAIN_WIDTH),
    USED(CNA_DATA_SIZE0_DATAIN_HEIGHT),
    USED(CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL),
    USED(CNA_DATA_SIZE1_DATAIN_CHANNEL),
    USED(CNA_DATA_SIZE2_DATAOUT_WIDTH),
    USED(CNA_DATA_SIZE3_DATAOUT_ATOMICS),
    USED(CNA_WEIGHT_SIZE0_WEIGHT_BYTES),
    USED(CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL),
    USED(CNA_WEIGHT_SIZE2_WEIGHT_WIDTH),
    USED(CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT),
    USED(CNA_WEIGHT_SIZE2_WEIGHT_KERNELS),
    USED(CNA_CBUF_CON0_WEIGHT_BANK),
    USED(CNA_CBUF_CON0_DATA_BANK),
    USED(CNA_CBUF_CON1_DATA_ENTRIES),
    /* Input conversion bypassed: its scales, offsets and rounding do nothing. */
    EQ(CNA_CVT_CON0_CVT_BYPASS, 1),
    EQ(CNA_CVT_CON0_DATA_SIGN, 1),
    ANY(CNA_CVT_CON0_CVT_TYPE),
    ANY(CNA_CVT_CON0_ROUND_TYPE),
    ANY(CNA_CVT_CON0_CVT_TRUNCATE_0),
    ANY(CNA_CVT_CON0_CVT_TRUNCATE_1),
    ANY(CNA_CVT_CON0_CVT_TRUNCATE_2),
    ANY(CNA_CVT_CON0_CVT_TRUNCATE_3),
    ANY(CNA_CVT_CON1_CVT_SCALE0),
    ANY(CNA_CVT_CON1_CVT_OFFSET0),
    ANY(CNA_CVT_CON2_CVT_SCALE1),
    ANY(CNA_CVT_CON2_CVT_OFFSET1),
    ANY(CNA_CVT_CON3_CVT_SCALE2),
    ANY(CNA_CVT_CON3_CVT_OFFSET2),
    ANY(CNA_CVT_CON4_CVT_SCALE3),
    ANY(CNA_CVT_CON4_CVT_OFFSET3),
    USED(CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR),
    ANY(CNA_DMA_CON0_OV4K_BYPASS),
    ANY(CNA_DMA_CON0_WEIGHT_BURST_LEN),
    ANY(CNA_DMA_CON0_DATA_BURST_LEN),
    USED(CNA_DMA_CON1_LINE_STRIDE),
    USED(CNA_DMA_CON2_SURF_STRIDE),
    USED(CNA_FC_DATA_SIZE0_DMA_WIDTH),
    USED(CNA_FC_DATA_SIZE0_DMA_HEIGHT),
    USED(CNA_FC_DATA_SIZE1_DMA_CHANNEL),
    ANY(CNA_CLK_GATE_CBUF_CS_DISABLE_CLKGATE),
    ANY(CNA_CLK_GATE_CSC_DISABLE_CLKGATE),
    ANY(CNA_CLK_GATE_CNA_WEIGHT_DISABLE_CLKGATE),
    ANY(CNA_CLK_GATE_CNA_FEATURE_DISABLE_CLKGATE),
    USED(CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0),
    USED(CNA_PAD_CON0_PAD_LEFT),
    USED(CNA_PAD_CON0_PAD_TOP),
    USED(CNA_PAD_CON1_PAD_VALUE),

    /* CORE */
    USED(CORE_MISC_CFG_PROC_PRECISION),
    ANY(CORE_MISC_CFG_QD_EN),
    USED(CORE_MISC_CFG_DW_EN),
    ANY(CORE_MISC_CFG_SOFT_GATING),
    ANY(CORE_MAC_GATING_SLCG_OP_EN),
    USED(CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT),
    USED(CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH),
    USED(CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL),
    ANY(CORE_CLIP_TRUNCATE_ROUND_TYPE), /* no truncation to round */

    /* DPU */
    ANY(DPU_FEATURE_MODE_CFG_BURST_LEN),
    EQ(DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2),
    USED(DPU_FEATURE_MODE_CFG_CONV_MODE),
    USED(DPU_DATA_FORMAT_OUT_PRECISION),
    USED(DPU_DATA_FORMAT_IN_PRECISION),
    USED(DPU_DATA_FORMAT_PROC_PRECISION),
    USED(DPU_DST_BASE_ADDR_DST_BASE_ADDR),
    USED(DPU_DST_SURF_STRIDE_DST_SURF_STRIDE),
    USED(DPU_DATA_CUBE_WIDTH_WIDTH),
    USED(DPU_DATA_CUBE_HEIGHT_HEIGHT),
    USED(DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL),
    USED(DPU_DATA_CUBE_CHANNEL_CHANNEL),
    USED(DPU_BS_CFG_BS_ALU_ALGO),
    USED(DPU_BS_CFG_BS_ALU_SRC),
    USED(DPU_BS_MUL_CFG_BS_MUL_SRC),
    USED(DPU_BS_CFG_BS_RELUX_EN),
    USED(DPU_BS_CFG_BS_RELU_BYPASS),
    USED(DPU_BS_CFG_BS_MUL_BYPASS),
    USED(DPU_BS_CFG_BS_ALU_BYPASS),
    USED(DPU_BS_CFG_BS_BYPASS),
    USED(DPU_BS_ALU_CFG_BS_ALU_OPERAND),
    USED(DPU_BS_MUL_CFG_BS_MUL_OPERAND),
    USED(DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE),
    USED(DPU_BS_RELUX_CMP_VALUE_BS_RELUX_CMP_DAT),
    USED(DPU_BS_OW_CFG_SIZE_E_2),
    USED(DPU_BS_OW_CFG_SIZE_E_1),
    USED(DPU_BS_OW_CFG_SIZE_E_0),
    USED(DPU_BS_OW_CFG_OD_BYPASS),
    USED(DPU_BS_OW_OP_OW_OP),
    USED(DPU_WDMA_SIZE_0_CHANNEL_WDMA),
    USED(DPU_WDMA_SIZE_1_HEIGHT_WDMA),
    USED(DPU_WDMA_SIZE_1_WIDTH_WDMA),
    USED(DPU_BN_CFG_BN_ALU_ALGO),
    USED(DPU_BN_CFG_BN_ALU_SRC),
    USED(DPU_BN_MUL_CFG_BN_MUL_SRC),
    USED(DPU_BN_CFG_BN_RELUX_EN),
    USED(DPU_BN_CFG_BN_RELU_BYPASS),
    USED(DPU_BN_CFG_BN_MUL_BYPASS),
    USED(DPU_BN_CFG_BN_ALU_BYPASS),
    USED(DPU_BN_CFG_BN_BYPASS),
    USED(DPU_BN_ALU_CFG_BN_ALU_OPERAND),
    USED(DPU_BN_MUL_CFG_BN_MUL_OPERAND),
    USED(DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE),
    USED(DPU_BN_RELUX_CMP_VALUE_BN_RELUX_CMP_DAT),
    USED(DPU_EW_CFG_EW_ALU_ALGO),
    USED(DPU_EW_CFG_EW_RELUX_EN),
    USED(DPU_EW_CFG_EW_RELU_BYPASS),
    EQ(DPU_EW_CFG_EW_OP_CVT_BYPASS, 1),
    EQ(DPU_EW_CFG_EW_LUT_BYPASS, 1),
    USED(DPU_EW_CFG_EW_OP_TYPE),
    USED(DPU_EW_CFG_EW_OP_BYPASS),
    USED(DPU_EW_CFG_EW_BYPASS),
    /* Element-wise operand conversion is bypassed (EQ above). */
    ANY(DPU_EW_CVT_OFFSET_VALUE_EW_OP_CVT_OFFSET),
    ANY(DPU_EW_CVT_SCALE_VALUE_EW_TRUNCATE),
    ANY(DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT),
    ANY(DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE),
    USED(DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT),
    USED(DPU_OUT_CVT_OFFSET_OUT_CVT_OFFSET),
    USED(DPU_OUT_CVT_SCALE_FP32TOFP16_EN),
    USED(DPU_OUT_CVT_SCALE_OUT_CVT_SCALE),
    USED(DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT),
    USED(DPU_EW_OP_VALUE_0_EW_OPERAND_0),
    ANY(DPU_EW_OP_VALUE_1_EW_OPERAND_1),
    ANY(DPU_EW_OP_VALUE_2_EW_OPERAND_2),
    ANY(DPU_EW_OP_VALUE_3_EW_OPERAND_3),
    ANY(DPU_EW_OP_VALUE_4_EW_OPERAND_4),
    ANY(DPU_EW_OP_VALUE_5_EW_OPERAND_5),
    ANY(DPU_EW_OP_VALUE_6_EW_OPERAND_6),
    ANY(DPU_EW_OP_VALUE_7_EW_OPERAND_7),
    USED(DPU_SURFACE_ADD_SURF_ADD),
    /* The LUT is bypassed (EW_LUT_BYPASS = 1): its contents do nothing. */
    ANY(DPU_LUT_ACCESS_CFG_LUT_ACCESS_TYPE),
    ANY(DPU_LUT_ACCESS_CFG_LUT_TABLE_ID),
    ANY(DPU_LUT_ACCESS_CFG_LUT_ADDR),
    ANY(DPU_LUT_ACCESS_DATA_LUT_ACCESS_DATA),
    ANY(DPU_LUT_CFG_LUT_CAL_SEL),
    ANY(DPU_LUT_CFG_LUT_HYBRID_PRIORITY),
    ANY(DPU_LUT_CFG_LUT_OFLOW_PRIORITY),
    ANY(DPU_LUT_CFG_LUT_UFLOW_PRIORITY),
    ANY(DPU_LUT_CFG_LUT_LO_LE_MUX),
    ANY(DPU_LUT_CFG_LUT_EXPAND_EN),
    ANY(DPU_LUT_CFG_LUT_ROAD_SEL),
    ANY(DPU_LUT_INFO_LUT_LO_INDEX_SELECT),
    ANY(DPU_LUT_INFO_LUT_LE_INDEX_SELECT),
    ANY(DPU_LUT_LE_START_LUT_LE_START),
    ANY(DPU_LUT_LE_END_LUT_LE_END),
    ANY(DPU_LUT_LO_START_LUT_LO_START),
    ANY(DPU_LUT_LO_END_LUT_LO_END),
    ANY(DPU_LUT_LE_SLOPE_SCALE_LUT_LE_SLOPE_OFLOW_SCALE),
    ANY(DPU_LUT_LE_SLOPE_SCALE_LUT_LE_SLOPE_UFLOW_SCALE),
    ANY(DPU_LUT_LE_SLOPE_SHIFT_LUT_LE_SLOPE_OFLOW_SHIFT),
    ANY(DPU_LUT_LE_SLOPE_SHIFT_LUT_LE_SLOPE_UFLOW_SHIFT),
    ANY(DPU_LUT_LO_SLOPE_SCALE_LUT_LO_SLOPE_OFLOW_SCALE),
    ANY(DPU_LUT_LO_SLOPE_SCALE_LUT_LO_SLOPE_UFLOW_SCALE),
    ANY(DPU_LUT_LO_SLOPE_SHIFT_LUT_LO_SLOPE_OFLOW_SHIFT),
    ANY(DPU_LUT_LO_SLOPE_SHIFT_LUT_LO_SLOPE_UFLOW_SHIFT),

    /* DPU_RDMA: the BS and BN operand streams; the element-wise and main
     * read paths off (their addresses and strides are unread). */
    USED(DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE),
    USED(DPU_RDMA_RDMA_NRDMA_CFG_NRDMA_DATA_USE),
    USED(DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE),
    USED(DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH),
    USED(DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT),
    USED(DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL),
    ANY(DPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR),
    USED(DPU_RDMA_RDMA_BS_BASE_ADDR_BS_BASE_ADDR),
    USED(DPU_RDMA_RDMA_BN_BASE_ADDR_BN_BASE_ADDR),
    EQ(DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1),
    ANY(DPU_RDMA_RDMA_ERDMA_CFG_OV4K_BYPASS),
    ANY(DPU_RDMA_RDMA_EW_BASE_ADDR_EW_BASE_ADDR),
    ANY(DPU_RDMA_RDMA_EW_SURF_STRIDE_EW_SURF_STRIDE),
    EQ(DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1),
    ANY(DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN),
    ANY(DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION),
    ANY(DPU_RDMA_RDMA_FEATURE_MODE_CFG_PROC_PRECISION),
    ANY(DPU_RDMA_RDMA_SURF_NOTCH_SURF_NOTCH_ADDR),
    ANY(DPU_RDMA_RDMA_PAD_CFG_PAD_VALUE),
    ANY(DPU_RDMA_RDMA_WEIGHT_E_WEIGHT),
    ANY(DPU_RDMA_RDMA_WEIGHT_N_WEIGHT),
    ANY(DPU_RDMA_RDMA_WEIGHT_B_WEIGHT),
    ANY(DPU_RDMA_RDMA_WEIGHT_M_WEIGHT),
    ANY(DPU_RDMA_RDMA_EW_SURF_NOTCH_EW_SURF_NOTCH),
};

static bool block_checked(npk_rk_block b, uint32_t enable)
{
    switch (b) {
    case NPK_RKB_CNA:
    case NPK_RKB_CORE:
    case NPK_RKB_DPU: return true;
    case NPK_RKB_DPU_RDMA:
        return (enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN)) != 0;
    default: return false;
    }
}

static npk_status check_fields(const emu_core *c, npk_rk_reg r, const emu_where *w0, npk_error *err)
{
    const npk_rk_reg_info *ri = npk_rk_reg_get(r);
    uint32_t v = c->regs[r], named = 0;
    emu_where w = *w0;
    w.entry = c->written[r] ? (long)c->entry[r] : -1;
    char fn[96];
    for (unsigned i = 0; i < ri->field_count; i++) {
        npk_rk_field f = (npk_rk_field)(ri->first_field + i);
        uint32_t fv = npk_rk_field_extract(f, v);
        named |= npk_rk_field_mask(f);
        switch (field_rule_of[f].kind) {
        case F_USED:
        case F_ANY: break;
        case F_EQ:
            if (fv != field_rule_of[f].value)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "%s = %u is not modelled (the emulator models only %u)",
                                emu_field_name(f, fn, sizeof fn), fv, field_rule_of[f].value);
            break;
        default:
            if (fv)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "%s = %u is not modelled (the emulator models only 0)",
                                emu_field_name(f, fn, sizeof fn), fv);
        }
    }
    if (v & ~named)
        return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                        "%s = 0x%08x sets bits 0x%08x outside its named fields", ri->full_name, v,
                        v & ~named);
    return NPK_OK;
}

npk_status emu_check_registers(const emu_core *c, uint32_t enable, const emu_where *w,
                               npk_error *err)
{
    for (int r = 0; r < NPK_RKR_COUNT; r++) {
        const npk_rk_reg_info *ri = npk_rk_reg_get((npk_rk_reg)r);
        if (!block_checked(ri->block, enable)) continue;
        npk_status st;
        if (c->written[r] && !reg_class[r]) {
            emu_where at = *w;
            at.entry = (long)c->entry[r];
            return emu_fail(&at, err, NPK_E_UNSUPPORTED,
                            "%s = 0x%08x: the emulator does not model this register", ri->full_name,
                            c->regs[r]);
        }
        if (reg_class[r] == R_READ && !c->written[r])
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "%s is not written by this task's stream (the emulator models only "
                            "tasks that program every register they use)",
                            ri->full_name);
        if (c->written[r] && (st = check_fields(c, (npk_rk_reg)r, w, err))) return st;
    }
    return NPK_OK;
}
