/* One task from the registers: the convolution the CNA, CORE and DPU
 * registers describe, checked for consistency and for the combinations the
 * data path models (a 1x1 convolution: a matmul over the W x H pixels), with
 * every buffer it touches resolved in mapped memory. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"
#include "npukit/rknpu_matmul.h"

/* The value of field f in the core's registers. */
static uint32_t fv(const emu_core *c, npk_rk_field f)
{
    return npk_rk_field_extract(f, c->regs[npk_rk_field_get(f)->reg]);
}

/* "REG.FIELD = value <why>", pointing at the entry that wrote the register. */
static npk_status bad(const emu_core *c, const emu_where *w0, npk_rk_field f, npk_error *err,
                      const char *fmt, ...) NPK_PRINTF(5, 6);
static npk_status bad(const emu_core *c, const emu_where *w0, npk_rk_field f, npk_error *err,
                      const char *fmt, ...)
{
    emu_where w = *w0;
    npk_rk_reg r = npk_rk_field_get(f)->reg;
    w.entry = c->written[r] ? (long)c->entry[r] : -1;
    char why[160], fn[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return emu_fail(&w, err, NPK_E_UNSUPPORTED, "%s = %u %s", emu_field_name(f, fn, sizeof fn),
                    fv(c, f), why);
}

/* Field f must equal `want` (a value implied by other registers). */
static npk_status expect(const emu_core *c, const emu_where *w, npk_rk_field f, uint64_t want,
                         const char *what, npk_error *err)
{
    if (fv(c, f) == want) return NPK_OK;
    return bad(c, w, f, err, "does not match %s (%llu): not modelled", what,
               (unsigned long long)want);
}

typedef struct stage_fields {
    npk_rk_field bypass, alu_bypass, algo, mul_bypass, relu_bypass, relux_en;
    npk_rk_field alu_op, mul_op, shift, cmp, alu_src, mul_src;
} stage_fields;

static const stage_fields bs_fields = {NPK_RKF_DPU_BS_CFG_BS_BYPASS,
                                       NPK_RKF_DPU_BS_CFG_BS_ALU_BYPASS,
                                       NPK_RKF_DPU_BS_CFG_BS_ALU_ALGO,
                                       NPK_RKF_DPU_BS_CFG_BS_MUL_BYPASS,
                                       NPK_RKF_DPU_BS_CFG_BS_RELU_BYPASS,
                                       NPK_RKF_DPU_BS_CFG_BS_RELUX_EN,
                                       NPK_RKF_DPU_BS_ALU_CFG_BS_ALU_OPERAND,
                                       NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_OPERAND,
                                       NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE,
                                       NPK_RKF_DPU_BS_RELUX_CMP_VALUE_BS_RELUX_CMP_DAT,
                                       NPK_RKF_DPU_BS_CFG_BS_ALU_SRC,
                                       NPK_RKF_DPU_BS_MUL_CFG_BS_MUL_SRC};

static const stage_fields bn_fields = {NPK_RKF_DPU_BN_CFG_BN_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_ALU_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_ALU_ALGO,
                                       NPK_RKF_DPU_BN_CFG_BN_MUL_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_RELU_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_RELUX_EN,
                                       NPK_RKF_DPU_BN_ALU_CFG_BN_ALU_OPERAND,
                                       NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_OPERAND,
                                       NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE,
                                       NPK_RKF_DPU_BN_RELUX_CMP_VALUE_BN_RELUX_CMP_DAT,
                                       NPK_RKF_DPU_BN_CFG_BN_ALU_SRC,
                                       NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_SRC};

/* ALU algorithm codes as in NVDLA's SDP (0 max, 1 min, 2 sum); Mesa uses 2
 * for its bias add. Only the add is modelled. */
#define ALU_ADD 2

/* Per-channel operands from the DPU read DMA: BRDMA (BS) or NRDMA (BN).
 * DATA_USE bit 0 = the ALU operand (int32 or fp32 bits), bit 1 = the
 * multiplier (a 32-bit slot, int16 or fp16 bits in its low half); a
 * channel's record holds the used ones in that order, 4 bytes each
 * (docs/rknpu.md: bit 0 alone is Mesa's bias stream, pinned by the
 * capture; the rest is inferred). */
typedef struct rdma_src {
    npk_rk_field use, base;
    npk_rk_reg base_reg;
} rdma_src;

static const rdma_src brdma = {NPK_RKF_DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE,
                               NPK_RKF_DPU_RDMA_RDMA_BS_BASE_ADDR_BS_BASE_ADDR,
                               NPK_RKR_DPU_RDMA_RDMA_BS_BASE_ADDR};
static const rdma_src nrdma = {NPK_RKF_DPU_RDMA_RDMA_NRDMA_CFG_NRDMA_DATA_USE,
                               NPK_RKF_DPU_RDMA_RDMA_BN_BASE_ADDR_BN_BASE_ADDR,
                               NPK_RKR_DPU_RDMA_RDMA_BN_BASE_ADDR};

static npk_status decode_stage(npk_rk_emu *e, const emu_core *c, uint32_t enable,
                               const emu_where *w, const stage_fields *sf, const rdma_src *rs,
                               uint32_t channels, bool fp, emu_stage *s, npk_error *err)
{
    memset(s, 0, sizeof *s);
    bool rdma = enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN);
    uint32_t use = rdma ? fv(c, rs->use) : 0;
    s->on = !fv(c, sf->bypass);
    if (rdma && use > 3) return bad(c, w, rs->use, err, "is not modelled (0..3 are)");
    if (!s->on) {
        if (use) return bad(c, w, rs->use, err, "with its DPU stage bypassed: not modelled");
        if (fv(c, sf->alu_src))
            return bad(c, w, sf->alu_src, err, "with the stage bypassed: not modelled");
        if (fv(c, sf->mul_src))
            return bad(c, w, sf->mul_src, err, "with the stage bypassed: not modelled");
        return NPK_OK;
    }
    bool want_alu = false, want_mul = false;
    if (!fv(c, sf->alu_bypass)) {
        if (fv(c, sf->algo) != ALU_ADD)
            return bad(c, w, sf->algo, err, "is not modelled (only %d, add, is)", ALU_ADD);
        s->add = true;
        s->add_mem = fv(c, sf->alu_src) != 0;
        s->add_op = fv(c, sf->alu_op);
        want_alu = s->add_mem;
    } else if (fv(c, sf->alu_src))
        return bad(c, w, sf->alu_src, err, "with the ALU bypassed: not modelled");
    if (!fv(c, sf->mul_bypass)) {
        s->mul = true;
        s->mul_mem = fv(c, sf->mul_src) != 0;
        s->mul_op = fv(c, sf->mul_op);
        s->shift = fv(c, sf->shift);
        want_mul = s->mul_mem;
        if (fp && s->shift)
            return bad(c, w, sf->shift, err, "on the floating-point path is not modelled");
    } else if (fv(c, sf->mul_src))
        return bad(c, w, sf->mul_src, err, "with the multiplier bypassed: not modelled");
    uint32_t need = (want_alu ? 1u : 0u) | (want_mul ? 2u : 0u);
    if (need && !rdma)
        return bad(c, w, want_alu ? sf->alu_src : sf->mul_src, err,
                   "reads an operand stream, but the operation enable leaves DPU_RDMA off");
    if (rdma && use != need)
        return bad(c, w, rs->use, err,
                   "does not match the stage's operand sources (%u: bit 0 ALU, bit 1 multiplier)",
                   need);
    if (need) {
        if (!c->written[rs->base_reg])
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "%s is not written by this task's stream, but the stage reads it",
                            npk_rk_reg_get(rs->base_reg)->full_name);
        s->stream_rec = 4 * ((need & 1) + (need >> 1));
        s->mul_at = (need & 1) ? 4 : 0;
        uint32_t addr = fv(c, rs->base);
        s->stream = emu_span(e, addr, (uint64_t)channels * s->stream_rec);
        if (!s->stream)
            return emu_fail(w, err, NPK_E_FORMAT,
                            "the operand stream at %s 0x%08x (%llu bytes) is not in mapped memory",
                            npk_rk_reg_get(rs->base_reg)->full_name, addr,
                            (unsigned long long)channels * s->stream_rec);
    }
    s->relu = !fv(c, sf->relu_bypass);
    s->relux = fv(c, sf->relux_en) != 0;
    s->relux_cmp = fv(c, sf->cmp);
    return NPK_OK;
}

static npk_status decode_ew(npk_rk_emu *e, const emu_core *c, uint32_t enable, const emu_where *w,
                            const emu_task *t, emu_stage *s, npk_error *err)
{
    memset(s, 0, sizeof *s);
    bool rdma = enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN);
    bool erdma = rdma && !fv(c, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE);
    s->on = !fv(c, NPK_RKF_DPU_EW_CFG_EW_BYPASS);
    bool op = s->on && !fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_BYPASS);
    s->op_mem = op && fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_SRC);
    if (!s->op_mem && fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_SRC))
        return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_OP_SRC, err,
                   "with the element-wise operation bypassed: not modelled");
    if (erdma != s->op_mem)
        return bad(c, w, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, err,
                   "does not match DPU_EW_CFG.EW_OP_SRC (the element-wise operand from memory): "
                   "not modelled");
    s->cvt = op && !fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS);
    if (s->cvt && !s->op_mem)
        return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, err,
                   "with a register operand: not modelled");
    if (!s->op_mem &&
        (fv(c, NPK_RKF_DPU_EW_CFG_EW_DATA_MODE) || fv(c, NPK_RKF_DPU_EW_CFG_EDATA_SIZE)))
        return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_DATA_MODE, err,
                   "(or EDATA_SIZE) without an operand from memory: not modelled");
    if (!s->on) return NPK_OK;
    if (op) {
        /* EW_OP_TYPE: 0 ALU, 1 multiply (NVDLA's convention; unverified here). */
        if (fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_TYPE)) {
            if (s->op_mem)
                return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_OP_TYPE, err,
                           "with an operand from memory: not modelled");
            s->mul = true;
            s->mul_op = fv(c, NPK_RKF_DPU_EW_OP_VALUE_0_EW_OPERAND_0);
        } else {
            if (fv(c, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO) != ALU_ADD)
                return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_ALU_ALGO, err,
                           "is not modelled (only %d, add, is)", ALU_ADD);
            s->add = true;
            s->add_op = fv(c, NPK_RKF_DPU_EW_OP_VALUE_0_EW_OPERAND_0);
        }
    }
    if (s->op_mem) {
        /* Mesa's values for its fused add: a per-element operand with size
         * code 1, modelled as int8 elements in the output cube's layout;
         * size code 3 as int32 elements (4 channels per atom) added without
         * conversion, for int32 outputs (partial sums) only. */
        npk_status st;
        uint32_t size = fv(c, NPK_RKF_DPU_EW_CFG_EDATA_SIZE);
        /* Size code 2 (fp16 elements, 8 channels per atom) on the float path,
         * without conversion: the fp16 add (size code read as log2(bits) -
         * 2, a guess consistent with Mesa's 1 for int8). */
        if (size != 1 && size != 3 && !(size == 2 && t->fp))
            return bad(c, w, NPK_RKF_DPU_EW_CFG_EDATA_SIZE, err,
                       "is not modelled (1 int8, Mesa's; 3 int32 or fp32 and 2 fp16, guesses)");
        bool wide_out = t->fp ? !t->out_fp16 : t->out_int32;
        if (size == 3 && (s->cvt || !wide_out))
            return bad(c, w, NPK_RKF_DPU_EW_CFG_EDATA_SIZE, err,
                       "3 (32-bit operand) with the operand conversion or without a 32-bit output: "
                       "not modelled");
        if (size == 2 && s->cvt)
            return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_OP_CVT_BYPASS, err,
                       "0 with an fp16 operand: not modelled");
        if (t->fp && size == 1)
            return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_OP_SRC, err,
                       "on the floating-point path with EDATA_SIZE 1: not modelled (3, fp32 "
                       "partial sums, and 2, fp16, are)");
        s->ew_esize = size == 3 ? 4 : size;
        if ((st = expect(c, w, NPK_RKF_DPU_EW_CFG_EW_DATA_MODE, 1, "Mesa's per-element mode 1",
                         err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_MODE, 1,
                         "Mesa's per-element mode 1", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE, size,
                         "DPU_EW_CFG.EDATA_SIZE", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_EW_SURF_NOTCH_EW_SURF_NOTCH, 0,
                         "0 (dense surfaces)", err)))
            return st;
        uint64_t px = (uint64_t)t->ow * t->oh;
        uint32_t ss = fv(c, NPK_RKF_DPU_RDMA_RDMA_EW_SURF_STRIDE_EW_SURF_STRIDE);
        if (ss < px)
            return bad(c, w, NPK_RKF_DPU_RDMA_RDMA_EW_SURF_STRIDE_EW_SURF_STRIDE, err,
                       "(16-byte units) is smaller than a surface of %llu atoms: not modelled",
                       (unsigned long long)px);
        s->ew_surf = (uint64_t)ss * 16;
        uint32_t addr = fv(c, NPK_RKF_DPU_RDMA_RDMA_EW_BASE_ADDR_EW_BASE_ADDR);
        unsigned per_atom = 16 / s->ew_esize;
        uint64_t span = (uint64_t)((t->n + per_atom - 1) / per_atom - 1) * s->ew_surf + px * 16;
        if (!c->written[NPK_RKR_DPU_RDMA_RDMA_EW_BASE_ADDR] || addr % 16)
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "DPU_RDMA_RDMA_EW_BASE_ADDR is unwritten or not 16-byte aligned");
        s->ew_src = emu_span(e, addr, span);
        if (!s->ew_src)
            return emu_fail(w, err, NPK_E_FORMAT,
                            "the element-wise operand at DPU_RDMA_RDMA_EW_BASE_ADDR 0x%08x (%llu "
                            "bytes) is not in mapped memory",
                            addr, (unsigned long long)span);
        if (s->cvt) {
            s->cvt_off = (int32_t)fv(c, NPK_RKF_DPU_EW_CVT_OFFSET_VALUE_EW_OP_CVT_OFFSET);
            s->cvt_scale = fv(c, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE);
            s->cvt_shift = fv(c, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT);
            if (s->cvt_scale > 0x7FFF)
                return bad(c, w, NPK_RKF_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, err,
                           "has bit 15 set: whether the scale is signed is not known");
        }
    }
    s->relu = !fv(c, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS);
    s->relux = fv(c, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN) != 0;
    s->relux_cmp = fv(c, NPK_RKF_DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT);
    return NPK_OK;
}

/* An element-wise task (DPU and DPU_RDMA only): the DPU's input cube comes
 * through MRDMA (FLYING_MODE 1), int8 in NC1HWC2 with SURF_NOTCH extra atoms
 * between surfaces. */
static npk_status decode_mrdma(npk_rk_emu *e, const emu_core *c, const emu_where *w, emu_task *t,
                               npk_error *err)
{
    npk_status st;
    t->from_mem = true;
    t->in_size = 1;
    t->ow = t->w = fv(c, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH) + 1;
    t->oh = t->h = fv(c, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT) + 1;
    t->n = t->c = fv(c, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL) + 1;
    t->kw = t->kh = t->sx = t->sy = t->dx = t->dy = 1;
    /* int8 or fp16 input (the standalone add; fp16 8 channels per atom),
     * or int32 / fp32 partial sums (K-split: IN_PRECISION 4 or 5, 4
     * channels per atom; a guess). */
    uint32_t inp = fv(c, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION);
    if (inp != NPK_RK_PREC_INT8 && inp != NPK_RK_PREC_INT32 && inp != NPK_RK_PREC_FP32 &&
        inp != NPK_RK_PREC_FP16)
        return bad(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION, err,
                   "is not modelled (int8 %d, fp16 %d, int32 %d and fp32 %d are)", NPK_RK_PREC_INT8,
                   NPK_RK_PREC_FP16, NPK_RK_PREC_INT32, NPK_RK_PREC_FP32);
    t->fp = inp == NPK_RK_PREC_FP32 || inp == NPK_RK_PREC_FP16;
    t->group = t->fp ? 16 : 32;
    t->src_esize = inp == NPK_RK_PREC_INT8 ? 1 : inp == NPK_RK_PREC_FP16 ? 2 : 4;
    unsigned per_atom = 16 / t->src_esize, whole = t->src_esize == 2 ? 8 : 16;
    if (t->c % whole)
        return bad(c, w, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, err,
                   "+ 1 is not a whole number of %u-channel atoms: not modelled", whole);
    if ((st = expect(c, w, NPK_RKF_DPU_FEATURE_MODE_CFG_FLYING_MODE, 1,
                     "1 (input from memory) without CNA and CORE", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, 1,
                     "1 (input from memory)", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 0,
                     "0 (the input is read)", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_PROC_PRECISION,
                     t->fp ? NPK_RK_PREC_FP16 : NPK_RK_PREC_INT8, t->fp ? "fp16" : "int8", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE, 0, "0", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_FEATURE_MODE_CFG_CONV_MODE, 0, "0", err)))
        return st;
    uint64_t px = (uint64_t)t->w * t->h;
    t->src_surf = (px + fv(c, NPK_RKF_DPU_RDMA_RDMA_SURF_NOTCH_SURF_NOTCH_ADDR)) * 16;
    uint32_t addr = fv(c, NPK_RKF_DPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR);
    uint64_t span = (uint64_t)(t->c / per_atom - 1) * t->src_surf + px * 16;
    if (addr % 16)
        return bad(c, w, NPK_RKF_DPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR, err,
                   "is not 16-byte aligned: not modelled");
    t->src = emu_span(e, addr, span);
    if (!t->src)
        return emu_fail(w, err, NPK_E_FORMAT,
                        "the DPU input at DPU_RDMA_RDMA_SRC_BASE_ADDR 0x%08x (%llu bytes) is not "
                        "in mapped memory",
                        addr, (unsigned long long)span);
    return NPK_OK;
}

static npk_status decode_cna(const emu_core *c, const emu_where *w, emu_task *t, npk_error *err)
{
    npk_status st;
    uint32_t in = fv(c, NPK_RKF_CNA_CONV_CON1_IN_PRECISION);
    if (in != NPK_RK_PREC_INT8 && in != NPK_RK_PREC_FP16)
        return bad(c, w, NPK_RKF_CNA_CONV_CON1_IN_PRECISION, err,
                   "is not modelled (int8 %d and fp16 %d are)", NPK_RK_PREC_INT8, NPK_RK_PREC_FP16);
    if ((st = expect(c, w, NPK_RKF_CNA_CONV_CON1_PROC_PRECISION, in, "IN_PRECISION", err)))
        return st;
    t->fp = in == NPK_RK_PREC_FP16;
    t->in_size = t->fp ? 2 : 1;
    uint32_t mode = fv(c, NPK_RKF_CNA_CONV_CON1_CONV_MODE);
    if (mode != 0 && mode != 3)
        return bad(c, w, NPK_RKF_CNA_CONV_CON1_CONV_MODE, err,
                   "is not modelled (0 direct and 3 depthwise are)");
    t->dw = mode == 3;
    t->w = fv(c, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH);
    t->h = fv(c, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT);
    t->c = fv(c, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL);
    if (!t->w) return bad(c, w, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH, err, "(an empty cube)");
    if (!t->h) return bad(c, w, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT, err, "(an empty cube)");
    if (!t->c) return bad(c, w, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, err, "(an empty cube)");
    /* Depthwise weights come in whole groups of 64 (int8) or 32 (fp16)
     * channels; direct weights in blocks of 32 channels. */
    unsigned cblock = t->dw ? (t->fp ? 32 : 64) : 32;
    if (t->c % cblock)
        return bad(c, w, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, err,
                   "is not a multiple of %u: the packed weights are modelled only in whole "
                   "%u-channel blocks",
                   cblock, cblock);
    if ((st = expect(c, w, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, t->c - 1,
                     "DATAIN_CHANNEL - 1", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_WIDTH, t->w, "DATAIN_WIDTH", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_HEIGHT, t->h, "DATAIN_HEIGHT", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_FC_DATA_SIZE1_DMA_CHANNEL, t->c, "DATAIN_CHANNEL", err)))
        return st;

    /* Kernel, stride, dilation (ATROUS = dilation - 1), padding. */
    t->kw = fv(c, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH);
    t->kh = fv(c, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT);
    t->sx = fv(c, NPK_RKF_CNA_CONV_CON3_CONV_X_STRIDE);
    t->sy = fv(c, NPK_RKF_CNA_CONV_CON3_CONV_Y_STRIDE);
    t->dx = fv(c, NPK_RKF_CNA_CONV_CON3_ATROUS_X_DILATION) + 1;
    t->dy = fv(c, NPK_RKF_CNA_CONV_CON3_ATROUS_Y_DILATION) + 1;
    t->pl = fv(c, NPK_RKF_CNA_PAD_CON0_PAD_LEFT);
    t->pt = fv(c, NPK_RKF_CNA_PAD_CON0_PAD_TOP);
    t->pad_value = c->regs[NPK_RKR_CNA_PAD_CON1];
    if (!t->kw) return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, err, "(no kernel)");
    if (!t->kh) return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, err, "(no kernel)");
    if (!t->sx) return bad(c, w, NPK_RKF_CNA_CONV_CON3_CONV_X_STRIDE, err, "is not modelled");
    if (!t->sy) return bad(c, w, NPK_RKF_CNA_CONV_CON3_CONV_Y_STRIDE, err, "is not modelled");
    uint64_t extx = (uint64_t)(t->kw - 1) * t->dx, exty = (uint64_t)(t->kh - 1) * t->dy;
    if (t->pl > extx)
        return bad(c, w, NPK_RKF_CNA_PAD_CON0_PAD_LEFT, err,
                   "reaches past the kernel's extent (%llu): not modelled",
                   (unsigned long long)extx);
    if (t->pt > exty)
        return bad(c, w, NPK_RKF_CNA_PAD_CON0_PAD_TOP, err,
                   "reaches past the kernel's extent (%llu): not modelled",
                   (unsigned long long)exty);
    /* The output: DATAOUT_WIDTH and DATAOUT_ATOMICS = width x height; the
     * padding right and below is implicit and must stay within one window. */
    t->ow = fv(c, NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH);
    uint32_t atoms = fv(c, NPK_RKF_CNA_DATA_SIZE3_DATAOUT_ATOMICS);
    if (!t->ow) return bad(c, w, NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH, err, "(an empty output)");
    if (!atoms || atoms % t->ow)
        return bad(c, w, NPK_RKF_CNA_DATA_SIZE3_DATAOUT_ATOMICS, err,
                   "is not a multiple of DATAOUT_WIDTH (%u): not modelled", t->ow);
    t->oh = atoms / t->ow;
    int64_t pr = (int64_t)(t->ow - 1) * t->sx + (int64_t)extx + 1 - t->pl - t->w;
    int64_t pb = (int64_t)(t->oh - 1) * t->sy + (int64_t)exty + 1 - t->pt - t->h;
    /* Negative: the last columns or rows are never read (a stride that does
     * not divide the input), as in TFLite's VALID padding. */
    if (pr > 0 && (uint64_t)pr > extx)
        return bad(c, w, NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH, err,
                   "needs %lld columns of padding on the right (0..%llu are modelled)",
                   (long long)pr, (unsigned long long)extx);
    if (pb > 0 && (uint64_t)pb > exty)
        return bad(c, w, NPK_RKF_CNA_DATA_SIZE3_DATAOUT_ATOMICS, err,
                   "gives %u output rows, which need %lld rows of padding below (up to %llu "
                   "are modelled)",
                   t->oh, (long long)pb, (unsigned long long)exty);
    t->direct1x1 = !t->dw && t->kw == 1 && t->kh == 1 && t->sx == 1 && t->sy == 1 && !t->pl &&
                   !t->pt && t->ow == t->w && t->oh == t->h;
    uint64_t b = t->in_size;

    /* Weights at DCOMP_ADDR0: direct [N/G][C/32][kh][kw][G][32]; depthwise
     * [C/Gd][kh][kw][Gd] with one "kernel". */
    t->kernels = fv(c, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS);
    if (!t->kernels) return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, err, "(no kernels)");
    if (t->dw) {
        t->group = cblock;
        if (t->kernels != 1)
            return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, err,
                       "is not 1 for a depthwise convolution: not modelled");
        t->n = t->c;
    } else {
        t->group = t->fp ? 16 : 32;
        t->n = t->kernels;
        if (t->n % t->group)
            return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, err,
                       "is not a multiple of the %u-kernel weight group of this precision: not "
                       "modelled",
                       t->group);
    }
    uint64_t per_kernel = (uint64_t)t->kw * t->kh * t->c * b;
    t->wt_span = per_kernel * t->kernels;
    if ((st = expect(c, w, NPK_RKF_CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL, per_kernel,
                     "kernel width x height x channels x element size", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_WEIGHT_SIZE0_WEIGHT_BYTES, t->wt_span,
                     "bytes per kernel x kernels", err)))
        return st;
    t->wt_addr = fv(c, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0);
    if (t->wt_addr % 16)
        return bad(c, w, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, err,
                   "is not 16-byte aligned: not modelled");

    /* The CBUF split must hold the whole cube and one kernel. */
    uint32_t c2 = 16 / t->in_size, c1 = (t->c + c2 - 1) / c2;
    uint64_t px = (uint64_t)t->w * t->h;
    uint32_t dbank = fv(c, NPK_RKF_CNA_CBUF_CON0_DATA_BANK);
    uint32_t wbank = fv(c, NPK_RKF_CNA_CBUF_CON0_WEIGHT_BANK);
    t->dbank = dbank;
    t->wbank = wbank;
    t->weight_reuse = fv(c, NPK_RKF_CNA_CBUF_CON0_WEIGHT_REUSE) != 0;
    uint64_t fbytes = (uint64_t)c1 * px * 16;
    if (!dbank || !wbank || dbank + wbank > NPK_RK_CBUF_BANKS)
        return bad(c, w, NPK_RKF_CNA_CBUF_CON0_DATA_BANK, err,
                   "with WEIGHT_BANK = %u is not a split of the %d CBUF banks", wbank,
                   NPK_RK_CBUF_BANKS);
    if (fbytes > (uint64_t)dbank * NPK_RK_CBUF_BANK_SIZE)
        return bad(c, w, NPK_RKF_CNA_CBUF_CON0_DATA_BANK, err,
                   "banks hold %llu bytes but the feature cube is %llu bytes",
                   (unsigned long long)dbank * NPK_RK_CBUF_BANK_SIZE, (unsigned long long)fbytes);
    if (per_kernel > (uint64_t)wbank * NPK_RK_CBUF_BANK_SIZE)
        return bad(c, w, NPK_RKF_CNA_CBUF_CON0_WEIGHT_BANK, err,
                   "banks hold %llu bytes but one kernel is %llu bytes",
                   (unsigned long long)wbank * NPK_RK_CBUF_BANK_SIZE,
                   (unsigned long long)per_kernel);
    uint64_t entries = ((uint64_t)t->w * ((t->c * b + 15) / 16) + 3) / 4;
    if ((st = expect(c, w, NPK_RKF_CNA_CBUF_CON1_DATA_ENTRIES, entries,
                     "the 64-byte CBUF entries of one input row", err)))
        return st;

    /* Feature addressing (docs/rknpu.md): a line is LINE_STRIDE x 4 bytes
     * (LINE_STRIDE counts 16-byte units of four lines), a surface of C2
     * channels is (SURF_STRIDE + LINE_STRIDE) x 16 bytes; SURF_STRIDE is
     * signed (-3 for a one-line cube). */
    uint32_t ls = fv(c, NPK_RKF_CNA_DMA_CON1_LINE_STRIDE);
    uint32_t ss_raw = fv(c, NPK_RKF_CNA_DMA_CON2_SURF_STRIDE);
    unsigned ssw = npk_rk_field_width(NPK_RKF_CNA_DMA_CON2_SURF_STRIDE);
    int64_t ss = (ss_raw & (1u << (ssw - 1))) ? (int64_t)ss_raw - ((int64_t)1 << ssw) : ss_raw;
    t->line_pitch = (uint64_t)ls * 4;
    if (t->line_pitch < (uint64_t)t->w * 16)
        return bad(c, w, NPK_RKF_CNA_DMA_CON1_LINE_STRIDE, err,
                   "makes %llu-byte lines, shorter than %u 16-byte atoms: not modelled",
                   (unsigned long long)t->line_pitch, t->w);
    int64_t sp = (ss + (int64_t)ls) * 16;
    uint64_t plane = (uint64_t)(t->h - 1) * t->line_pitch + (uint64_t)t->w * 16;
    if (sp < (int64_t)plane)
        return bad(c, w, NPK_RKF_CNA_DMA_CON2_SURF_STRIDE, err,
                   "makes %lld-byte surfaces, smaller than the %llu bytes of %u lines: not "
                   "modelled",
                   (long long)sp, (unsigned long long)plane, t->h);
    t->surf_pitch = (uint64_t)sp;
    t->in_span = (uint64_t)(c1 - 1) * t->surf_pitch + plane;
    t->in_addr = fv(c, NPK_RKF_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR);
    if (t->in_addr % 16)
        return bad(c, w, NPK_RKF_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, err,
                   "is not 16-byte aligned: not modelled");
    return NPK_OK;
}

static npk_status decode_core_dpu(npk_rk_emu *e, const emu_core *c, uint32_t enable,
                                  const emu_where *w, emu_task *t, npk_error *err)
{
    npk_status st;
    uint32_t p = t->fp ? NPK_RK_PREC_FP16 : NPK_RK_PREC_INT8;
    uint32_t mode = t->dw ? 3 : 0;
    bool rdma = enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN);
    if (!t->from_mem) {
        /* The DPU takes the CORE's output: no main read. */
        if ((st = expect(c, w, NPK_RKF_DPU_FEATURE_MODE_CFG_FLYING_MODE, 0, "0 (the CORE's output)",
                         err)))
            return st;
        if (rdma && ((st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1,
                                  "1 (no main read beside the CORE)", err)) ||
                     (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, 0,
                                  "0 (the CORE's output)", err))))
            return st;
    }
    if (!t->from_mem &&
        ((st = expect(c, w, NPK_RKF_CORE_MISC_CFG_PROC_PRECISION, p, "the CNA precision", err)) ||
         (st = expect(c, w, NPK_RKF_CORE_MISC_CFG_DW_EN, t->dw, "CNA_CONV_CON1.CONV_MODE", err)) ||
         (st = expect(c, w, NPK_RKF_DPU_FEATURE_MODE_CFG_CONV_MODE, mode, "CNA_CONV_CON1.CONV_MODE",
                      err)) ||
         (st = expect(c, w, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, t->oh - 1,
                      "the output height - 1", err)) ||
         (st = expect(c, w, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, t->ow - 1,
                      "DATAOUT_WIDTH - 1", err)) ||
         (st = expect(c, w, NPK_RKF_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, t->n - 1,
                      "the output channels - 1", err))))
        return st;
    uint32_t pin = !t->from_mem || t->src_esize <= 2 ? p
                   : t->fp                           ? NPK_RK_PREC_FP32
                                                     : NPK_RK_PREC_INT32;
    if ((st = expect(c, w, NPK_RKF_DPU_DATA_FORMAT_IN_PRECISION, pin,
                     t->from_mem ? "DPU_RDMA's IN_PRECISION" : "the CNA precision", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_FORMAT_PROC_PRECISION, p, "the CNA precision", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH, t->ow - 1, "DATAOUT_WIDTH - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT, t->oh - 1, "the output height - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, t->n - 1,
                     "the output channels - 1", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, t->n - 1,
                     "the output channels - 1", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_WDMA_SIZE_0_CHANNEL_WDMA, t->n - 1,
                     "the output channels - 1", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_WDMA_SIZE_1_HEIGHT_WDMA, t->oh - 1, "the output height - 1",
                     err)) ||
        (st =
             expect(c, w, NPK_RKF_DPU_WDMA_SIZE_1_WIDTH_WDMA, t->ow - 1, "DATAOUT_WIDTH - 1", err)))
        return st;
    if (enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN)) {
        if ((st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH, t->ow - 1,
                         "the DPU cube width - 1", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT, t->oh - 1,
                         "the DPU cube height - 1", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL, t->n - 1,
                         "the DPU cube channels - 1", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE, mode,
                         "CNA_CONV_CON1.CONV_MODE", err)))
            return st;
    }

    /* Output precision and conversion: fp32 processing writes fp32, or fp16
     * with FP32TOFP16_EN; int32 processing writes int32 or int8. */
    uint32_t out = fv(c, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION);
    bool ok = t->fp ? (out == NPK_RK_PREC_FP32 || out == NPK_RK_PREC_FP16)
                    : (out == NPK_RK_PREC_INT32 || out == NPK_RK_PREC_INT8);
    if (!ok)
        return bad(c, w, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION, err,
                   "is not modelled for %s input (only %s)", t->fp ? "fp16" : "int8",
                   t->fp ? "fp32 5 and fp16 2" : "int32 4 and int8 0");
    t->out_fp16 = out == NPK_RK_PREC_FP16;
    t->out_int32 = out == NPK_RK_PREC_INT32;
    t->out_int8 = !t->fp && out == NPK_RK_PREC_INT8;
    t->out_size = t->out_fp16 ? 2 : t->out_int8 ? 1 : 4;
    if ((st = expect(c, w, NPK_RKF_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, t->out_fp16,
                     "an fp16 OUT_PRECISION", err)))
        return st;
    t->cvt_offset = (int32_t)fv(c, NPK_RKF_DPU_OUT_CVT_OFFSET_OUT_CVT_OFFSET);
    t->cvt_scale = fv(c, NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE);
    t->cvt_shift = fv(c, NPK_RKF_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT);
    if (t->fp) {
        /* The floating-point output conversion is modelled as the identity. */
        if ((st = expect(c, w, NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 1,
                         "the identity (floating-point path)", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, 0,
                         "the identity (floating-point path)", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_OUT_CVT_OFFSET_OUT_CVT_OFFSET, 0,
                         "the identity (floating-point path)", err)))
            return st;
    } else if (t->cvt_shift > 62)
        return bad(c, w, NPK_RKF_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, err,
                   "is not modelled (0..62 are)");
    if (t->cvt_scale > 0x7FFF)
        return bad(c, w, NPK_RKF_DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, err,
                   "has bit 15 set: whether the scale is signed is not known, so not modelled");
    /* CPEND (DPU_BS_OW_CFG.OD_BYPASS = 0): adds OW_OP x the window sum. */
    t->cpend = !fv(c, NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS);
    t->ow_op = (int16_t)fv(c, NPK_RKF_DPU_BS_OW_OP_OW_OP);
    if (t->cpend && t->from_mem)
        return bad(c, w, NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS, err,
                   "on an element-wise task (no convolution window): not modelled");
    if (t->cpend && t->fp)
        return bad(c, w, NPK_RKF_DPU_BS_OW_CFG_OD_BYPASS, err,
                   "on the floating-point path is not modelled");
    if (!t->cpend && t->ow_op)
        return bad(c, w, NPK_RKF_DPU_BS_OW_OP_OW_OP, err,
                   "with CPEND bypassed (DPU_BS_OW_CFG.OD_BYPASS = 1): not modelled");

    /* Output addressing (docs/rknpu.md): channels go out in groups of
     * `group`, each SIZE_E + 1 surfaces of 16-byte atoms; surfaces of a
     * group are DST_SURF_STRIDE x 16 bytes apart, groups SURF_ADD x 16. */
    unsigned c2o = 16 / t->out_size, surfaces = t->group / c2o;
    static const npk_rk_field size_e[3] = {NPK_RKF_DPU_BS_OW_CFG_SIZE_E_0,
                                           NPK_RKF_DPU_BS_OW_CFG_SIZE_E_1,
                                           NPK_RKF_DPU_BS_OW_CFG_SIZE_E_2};
    for (int i = 0; i < 3; i++)
        if (fv(c, size_e[i]) != surfaces - 1)
            return bad(c, w, size_e[i], err,
                       "is not %u: the emulator models %u-channel output groups of %u surfaces",
                       surfaces - 1, t->group, surfaces);
    uint64_t px = (uint64_t)t->ow * t->oh;
    uint32_t ds = fv(c, NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE);
    uint32_t sa = fv(c, NPK_RKF_DPU_SURFACE_ADD_SURF_ADD);
    if (ds < px)
        return bad(c, w, NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, err,
                   "(16-byte units) is smaller than a surface of %llu atoms: not modelled",
                   (unsigned long long)px);
    if ((uint64_t)sa < (uint64_t)surfaces * ds)
        return bad(c, w, NPK_RKF_DPU_SURFACE_ADD_SURF_ADD, err,
                   "(16-byte units) is smaller than a group of %u surfaces of %u: not modelled",
                   surfaces, ds);
    t->dst_surf = (uint64_t)ds * 16;
    t->surf_add = (uint64_t)sa * 16;
    uint32_t groups = (t->n + t->group - 1) / t->group;
    uint32_t last = t->n - (groups - 1) * t->group;
    t->out_span = (uint64_t)(groups - 1) * t->surf_add +
                  (uint64_t)((last + c2o - 1) / c2o - 1) * t->dst_surf + px * 16;
    t->dst_addr = fv(c, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR);
    if (t->dst_addr % 16)
        return bad(c, w, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR, err,
                   "is not 16-byte aligned: not modelled");

    if ((st = decode_stage(e, c, enable, w, &bs_fields, &brdma, t->n, t->fp, &t->bs, err)) ||
        (st = decode_stage(e, c, enable, w, &bn_fields, &nrdma, t->n, t->fp, &t->bn, err)) ||
        (st = decode_ew(e, c, enable, w, t, &t->ew, err)))
        return st;
    return NPK_OK;
}

npk_status emu_decode_task(npk_rk_emu *e, const emu_core *c, uint32_t enable, const emu_where *w,
                           emu_task *t, npk_error *err)
{
    memset(t, 0, sizeof *t);
    npk_status st;
    bool cna = enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_CNA_OP_EN);
    if ((st = cna ? decode_cna(c, w, t, err) : decode_mrdma(e, c, w, t, err)) ||
        (st = decode_core_dpu(e, c, enable, w, t, err)))
        return st;
    if (t->from_mem) {
        t->out = emu_span_out(e, t->dst_addr, t->out_span);
        if (!t->out)
            return emu_fail(w, err, NPK_E_FORMAT,
                            "the output at DPU_DST_BASE_ADDR 0x%08x (%llu bytes) is not in mapped "
                            "memory",
                            t->dst_addr, (unsigned long long)t->out_span);
        uint64_t ops = (uint64_t)t->ow * t->oh * t->n;
        if (ops > e->budget)
            return emu_fail(w, err, NPK_E_LIMIT, "the task needs %llu operations, over the limit",
                            (unsigned long long)ops);
        e->budget -= ops;
        return NPK_OK;
    }
    t->in = emu_span(e, t->in_addr, t->in_span);
    t->wt = emu_span(e, t->wt_addr, t->wt_span);
    t->out = emu_span_out(e, t->dst_addr, t->out_span);
    if (!t->in)
        return emu_fail(w, err, NPK_E_FORMAT,
                        "the feature cube at CNA_FEATURE_DATA_ADDR 0x%08x (%llu bytes) is not in "
                        "mapped memory",
                        t->in_addr, (unsigned long long)t->in_span);
    if (!t->wt)
        return emu_fail(w, err, NPK_E_FORMAT,
                        "the weights at CNA_DCOMP_ADDR0 0x%08x (%llu bytes) are not in mapped "
                        "memory",
                        t->wt_addr, (unsigned long long)t->wt_span);
    if (!t->out)
        return emu_fail(w, err, NPK_E_FORMAT,
                        "the output at DPU_DST_BASE_ADDR 0x%08x (%llu bytes) is not in mapped "
                        "memory",
                        t->dst_addr, (unsigned long long)t->out_span);
    uint64_t macs = (uint64_t)t->ow * t->oh * t->kw * t->kh * t->n * (t->dw ? 1 : t->c);
    if (macs > e->budget)
        return emu_fail(w, err, NPK_E_LIMIT,
                        "the task needs %llu multiply-accumulates, over the emulator's limit",
                        (unsigned long long)macs);
    e->budget -= macs;
    return NPK_OK;
}
