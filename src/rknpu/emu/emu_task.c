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
    npk_rk_field alu_op, mul_op, shift, cmp;
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
                                       NPK_RKF_DPU_BS_RELUX_CMP_VALUE_BS_RELUX_CMP_DAT};

static const stage_fields bn_fields = {NPK_RKF_DPU_BN_CFG_BN_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_ALU_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_ALU_ALGO,
                                       NPK_RKF_DPU_BN_CFG_BN_MUL_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_RELU_BYPASS,
                                       NPK_RKF_DPU_BN_CFG_BN_RELUX_EN,
                                       NPK_RKF_DPU_BN_ALU_CFG_BN_ALU_OPERAND,
                                       NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_OPERAND,
                                       NPK_RKF_DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE,
                                       NPK_RKF_DPU_BN_RELUX_CMP_VALUE_BN_RELUX_CMP_DAT};

/* ALU algorithm codes as in NVDLA's SDP (0 max, 1 min, 2 sum); Mesa uses 2
 * for its bias add. Only the add is modelled. */
#define ALU_ADD 2

static npk_status decode_stage(const emu_core *c, const emu_where *w, const stage_fields *sf,
                               bool fp, emu_stage *s, npk_error *err)
{
    memset(s, 0, sizeof *s);
    s->on = !fv(c, sf->bypass);
    if (!s->on) return NPK_OK;
    if (!fv(c, sf->alu_bypass)) {
        if (fv(c, sf->algo) != ALU_ADD)
            return bad(c, w, sf->algo, err, "is not modelled (only %d, add, is)", ALU_ADD);
        s->add = true;
        s->add_op = fv(c, sf->alu_op);
    }
    if (!fv(c, sf->mul_bypass)) {
        s->mul = true;
        s->mul_op = fv(c, sf->mul_op);
        s->shift = fv(c, sf->shift);
        if (fp && s->shift)
            return bad(c, w, sf->shift, err, "on the floating-point path is not modelled");
    }
    s->relu = !fv(c, sf->relu_bypass);
    s->relux = fv(c, sf->relux_en) != 0;
    if (s->relux && !s->relu)
        return bad(c, w, sf->relux_en, err, "with the ReLU bypassed is not modelled");
    s->relux_cmp = fv(c, sf->cmp);
    return NPK_OK;
}

static npk_status decode_ew(const emu_core *c, const emu_where *w, emu_stage *s, npk_error *err)
{
    memset(s, 0, sizeof *s);
    s->on = !fv(c, NPK_RKF_DPU_EW_CFG_EW_BYPASS);
    if (!s->on) return NPK_OK;
    if (!fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_BYPASS)) {
        /* EW_OP_TYPE: 0 ALU, 1 multiply (NVDLA's convention; unverified here). */
        if (fv(c, NPK_RKF_DPU_EW_CFG_EW_OP_TYPE)) {
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
    s->relu = !fv(c, NPK_RKF_DPU_EW_CFG_EW_RELU_BYPASS);
    s->relux = fv(c, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN) != 0;
    if (s->relux && !s->relu)
        return bad(c, w, NPK_RKF_DPU_EW_CFG_EW_RELUX_EN, err,
                   "with the ReLU bypassed is not modelled");
    s->relux_cmp = fv(c, NPK_RKF_DPU_EW_RELUX_CMP_VALUE_EW_RELUX_CMP_DAT);
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
    t->w = fv(c, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH);
    t->h = fv(c, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT);
    t->c = fv(c, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL);
    if (!t->w) return bad(c, w, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH, err, "(an empty cube)");
    if (!t->h) return bad(c, w, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT, err, "(an empty cube)");
    if (!t->c) return bad(c, w, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, err, "(an empty cube)");
    if (t->c % 32)
        return bad(c, w, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, err,
                   "is not a multiple of 32: the packed weights are modelled only in whole "
                   "32-channel blocks");
    uint64_t px = (uint64_t)t->w * t->h, b = t->in_size;
    if ((st = expect(c, w, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, t->c - 1,
                     "DATAIN_CHANNEL - 1", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_DATA_SIZE2_DATAOUT_WIDTH, t->w,
                     "DATAIN_WIDTH (1x1, stride 1)", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_DATA_SIZE3_DATAOUT_ATOMICS, px, "width x height", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_WIDTH, t->w, "DATAIN_WIDTH", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_FC_DATA_SIZE0_DMA_HEIGHT, t->h, "DATAIN_HEIGHT", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_FC_DATA_SIZE1_DMA_CHANNEL, t->c, "DATAIN_CHANNEL", err)))
        return st;

    /* Weights: N kernels of 1x1xC in the packed layout at DCOMP_ADDR0. */
    t->n = fv(c, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS);
    t->group = t->fp ? 16 : 32;
    if (!t->n) return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, err, "(no kernels)");
    if (t->n % t->group)
        return bad(c, w, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, err,
                   "is not a multiple of the %u-kernel weight group of this precision: not "
                   "modelled",
                   t->group);
    uint64_t per_kernel = (uint64_t)t->c * b;
    t->wt_span = per_kernel * t->n;
    if ((st = expect(c, w, NPK_RKF_CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL, per_kernel,
                     "channels x element size", err)) ||
        (st = expect(c, w, NPK_RKF_CNA_WEIGHT_SIZE0_WEIGHT_BYTES, t->wt_span,
                     "bytes per kernel x kernels", err)))
        return st;
    t->wt_addr = fv(c, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0);
    if (t->wt_addr % 16)
        return bad(c, w, NPK_RKF_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, err,
                   "is not 16-byte aligned: not modelled");

    /* The CBUF split must hold the whole cube and one kernel. */
    uint32_t c2 = 16 / t->in_size, c1 = (t->c + c2 - 1) / c2;
    uint32_t dbank = fv(c, NPK_RKF_CNA_CBUF_CON0_DATA_BANK);
    uint32_t wbank = fv(c, NPK_RKF_CNA_CBUF_CON0_WEIGHT_BANK);
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

static npk_status decode_core_dpu(const emu_core *c, uint32_t enable, const emu_where *w,
                                  emu_task *t, npk_error *err)
{
    npk_status st;
    uint32_t p = t->fp ? NPK_RK_PREC_FP16 : NPK_RK_PREC_INT8;
    if ((st = expect(c, w, NPK_RKF_CORE_MISC_CFG_PROC_PRECISION, p, "the CNA precision", err)) ||
        (st = expect(c, w, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, t->h - 1,
                     "DATAIN_HEIGHT - 1", err)) ||
        (st = expect(c, w, NPK_RKF_CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, t->w - 1, "DATAIN_WIDTH - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, t->n - 1,
                     "WEIGHT_KERNELS - 1", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_FORMAT_IN_PRECISION, p, "the CNA precision", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_FORMAT_PROC_PRECISION, p, "the CNA precision", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_WIDTH_WIDTH, t->w - 1, "DATAIN_WIDTH - 1", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT, t->h - 1, "DATAIN_HEIGHT - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, t->n - 1, "WEIGHT_KERNELS - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, t->n - 1,
                     "WEIGHT_KERNELS - 1", err)) ||
        (st = expect(c, w, NPK_RKF_DPU_WDMA_SIZE_0_CHANNEL_WDMA, t->n - 1, "WEIGHT_KERNELS - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_DPU_WDMA_SIZE_1_HEIGHT_WDMA, t->h - 1, "DATAIN_HEIGHT - 1",
                     err)) ||
        (st = expect(c, w, NPK_RKF_DPU_WDMA_SIZE_1_WIDTH_WDMA, t->w - 1, "DATAIN_WIDTH - 1", err)))
        return st;
    if (enable & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN)) {
        if ((st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH, t->w - 1,
                         "the DPU cube width - 1", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT, t->h - 1,
                         "the DPU cube height - 1", err)) ||
            (st = expect(c, w, NPK_RKF_DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL, t->n - 1,
                         "the DPU cube channels - 1", err)))
            return st;
    }

    /* Output precision and conversion: fp32 processing writes fp32, or fp16
     * with FP32TOFP16_EN; int32 processing writes int32. */
    uint32_t out = fv(c, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION);
    bool ok =
        t->fp ? (out == NPK_RK_PREC_FP32 || out == NPK_RK_PREC_FP16) : out == NPK_RK_PREC_INT32;
    if (!ok)
        return bad(c, w, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION, err,
                   "is not modelled for %s input (only %s)", t->fp ? "fp16" : "int8",
                   t->fp ? "fp32 5 and fp16 2" : "int32 4");
    t->out_fp16 = out == NPK_RK_PREC_FP16;
    t->out_int32 = out == NPK_RK_PREC_INT32;
    t->out_size = t->out_fp16 ? 2 : 4;
    if ((st = expect(c, w, NPK_RKF_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, t->out_fp16,
                     "an fp16 OUT_PRECISION", err)))
        return st;

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
    uint64_t px = (uint64_t)t->w * t->h;
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
    t->out_span = (uint64_t)(t->n / t->group - 1) * t->surf_add +
                  (uint64_t)(surfaces - 1) * t->dst_surf + px * 16;
    t->dst_addr = fv(c, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR);
    if (t->dst_addr % 16)
        return bad(c, w, NPK_RKF_DPU_DST_BASE_ADDR_DST_BASE_ADDR, err,
                   "is not 16-byte aligned: not modelled");

    if ((st = decode_stage(c, w, &bs_fields, t->fp, &t->bs, err)) ||
        (st = decode_stage(c, w, &bn_fields, t->fp, &t->bn, err)) ||
        (st = decode_ew(c, w, &t->ew, err)))
        return st;
    return NPK_OK;
}

npk_status emu_decode_task(npk_rk_emu *e, const emu_core *c, uint32_t enable, const emu_where *w,
                           emu_task *t, npk_error *err)
{
    memset(t, 0, sizeof *t);
    npk_status st;
    if ((st = decode_cna(c, w, t, err)) || (st = decode_core_dpu(c, enable, w, t, err))) return st;
    t->in = emu_span(e, t->in_addr, t->in_span);
    t->wt = emu_span(e, t->wt_addr, t->wt_span);
    t->out = emu_span(e, t->dst_addr, t->out_span);
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
    uint64_t macs = (uint64_t)t->w * t->h * t->c * t->n;
    if (macs > e->budget)
        return emu_fail(w, err, NPK_E_LIMIT,
                        "the task needs %llu multiply-accumulates, over the emulator's limit",
                        (unsigned long long)macs);
    e->budget -= macs;
    return NPK_OK;
}
