/* Matmul shape validation and descriptors. Limits are read from the register
 * table (field widths), so a field's width is stated in one place only. */
#include <stdio.h>
#include <string.h>

#include "npukit/rknpu_matmul.h"

const char *npk_rk_dtype_name(npk_rk_dtype dt)
{
    switch (dt) {
    case NPK_RK_FP16: return "fp16";
    case NPK_RK_FP16_FP16: return "fp16-fp16";
    case NPK_RK_INT8: return "int8";
    }
    return "?";
}

bool npk_rk_dtype_parse(const char *name, npk_rk_dtype *dt)
{
    for (int i = NPK_RK_FP16; i <= NPK_RK_INT8; i++)
        if (strcmp(name, npk_rk_dtype_name((npk_rk_dtype)i)) == 0) {
            *dt = (npk_rk_dtype)i;
            return true;
        }
    return false;
}

unsigned npk_rk_dtype_in_size(npk_rk_dtype dt)
{
    return dt == NPK_RK_INT8 ? 1 : 2;
}

unsigned npk_rk_dtype_out_size(npk_rk_dtype dt)
{
    return dt == NPK_RK_FP16_FP16 ? 2 : 4;
}

unsigned npk_rk_dtype_in_c2(npk_rk_dtype dt)
{
    return 16 / npk_rk_dtype_in_size(dt);
}

unsigned npk_rk_dtype_out_c2(npk_rk_dtype dt)
{
    return 16 / npk_rk_dtype_out_size(dt);
}

unsigned npk_rk_dtype_n_align(npk_rk_dtype dt)
{
    return dt == NPK_RK_INT8 ? 32 : 16;
}

static const char *fname(npk_rk_field f, char *buf, size_t len)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    snprintf(buf, len, "%s.%s", npk_rk_reg_get(fi->reg)->full_name, fi->name);
    return buf;
}

/* Each register field a shape variable enters, as var + delta. */
typedef struct field_use {
    npk_rk_field f;
    int delta;
    const char *what, *var;
} field_use;

static const field_use field_uses[] = {
    {NPK_RKF_CNA_CONV_CON2_FEATURE_GRAINS, 1, "feature grains M+1", "M"},
    {NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT, 0, "data-in height M", "M"},
    {NPK_RKF_DPU_DATA_CUBE_HEIGHT_HEIGHT, -1, "output height M-1", "M"},
    {NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, -1, "channels K-1", "K"},
    {NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL, 0, "channels K", "K"},
    {NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, 0, "weight kernels N", "N"},
    {NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL, -1, "output channels N-1", "N"},
    {NPK_RKF_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, -1, "output channels N-1", "N"},
};

/* Refuse a value of `var` beyond any field it enters, naming the field
 * that gives the tightest bound (the limit that applies), not merely the
 * first one overflowed. */
static npk_status field_limits(const char *var, uint64_t x, npk_error *err)
{
    const field_use *tight = NULL;
    uint64_t bound = UINT64_MAX;
    for (size_t i = 0; i < sizeof field_uses / sizeof *field_uses; i++) {
        const field_use *u = &field_uses[i];
        if (strcmp(u->var, var)) continue;
        uint64_t b = npk_rk_field_max(u->f) - (uint64_t)(int64_t)u->delta;
        if (b < bound) {
            bound = b;
            tight = u;
        }
    }
    if (!tight || x <= bound) return NPK_OK;
    char b[96];
    uint64_t v = x + (uint64_t)(int64_t)tight->delta;
    return npk_fail(err, NPK_E_LIMIT,
                    "%s = %llu: %s = %llu overflows %s (%u bits, max %llu), so %s <= %llu", var,
                    (unsigned long long)x, tight->what, (unsigned long long)v,
                    fname(tight->f, b, sizeof b), npk_rk_field_width(tight->f),
                    (unsigned long long)npk_rk_field_max(tight->f), var, (unsigned long long)bound);
}

static uint32_t ceil_div(uint64_t a, uint64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

npk_status npk_rk_matmul_check(const npk_rk_matmul *mm, npk_error *err)
{
    npk_rk_dtype dt = mm->dtype;
    if ((unsigned)dt > NPK_RK_INT8) return npk_fail(err, NPK_E_ARG, "unknown matmul dtype %d", dt);
    uint64_t m = mm->m, k = mm->k, n = mm->n, b = npk_rk_dtype_in_size(dt);
    if (!m || !k || !n)
        return npk_fail(err, NPK_E_ARG, "shape %llux%llux%llu: M, K and N must be at least 1",
                        (unsigned long long)m, (unsigned long long)k, (unsigned long long)n);
    if (m % 4 && m != 1)
        return npk_fail(err, NPK_E_ARG, "M = %llu is misaligned: M must be a multiple of 4 (or 1)",
                        (unsigned long long)m);
    if (k % 32)
        return npk_fail(err, NPK_E_ARG, "K = %llu is misaligned: K must be a multiple of 32",
                        (unsigned long long)k);
    if (n % npk_rk_dtype_n_align(dt))
        return npk_fail(err, NPK_E_ARG, "N = %llu is misaligned: N must be a multiple of %u for %s",
                        (unsigned long long)n, npk_rk_dtype_n_align(dt), npk_rk_dtype_name(dt));
    if (k * b > NPK_RK_CBUF_BANK_SIZE)
        return npk_fail(err, NPK_E_LIMIT,
                        "K = %llu: %llu weight bytes per kernel exceed one CBUF bank (%u bytes): "
                        "K <= %u for %s",
                        (unsigned long long)k, (unsigned long long)(k * b), NPK_RK_CBUF_BANK_SIZE,
                        (unsigned)(NPK_RK_CBUF_BANK_SIZE / b), npk_rk_dtype_name(dt));
    uint64_t fbytes = m * k * b;
    uint32_t banks = ceil_div(fbytes, NPK_RK_CBUF_BANK_SIZE);
    if (banks > NPK_RK_CBUF_BANKS - 1)
        return npk_fail(err, NPK_E_LIMIT,
                        "shape %llux%llux%llu: %llu bytes of feature data need %u CBUF banks, more "
                        "than the %u available (12 banks of %u bytes, one kept for weights)",
                        (unsigned long long)m, (unsigned long long)k, (unsigned long long)n,
                        (unsigned long long)fbytes, banks, NPK_RK_CBUF_BANKS - 1,
                        NPK_RK_CBUF_BANK_SIZE);
    npk_status st;
    if ((st = field_limits("M", m, err)) || (st = field_limits("K", k, err)) ||
        (st = field_limits("N", n, err)))
        return st;
    return NPK_OK;
}

npk_status npk_rk_matmul_descs(const npk_rk_matmul *mm, npk_rk_cna_desc *c, npk_rk_core_desc *core,
                               npk_rk_dpu_desc *d, npk_error *err)
{
    npk_status st = npk_rk_matmul_check(mm, err);
    if (st) return st;
    npk_rk_dtype dt = mm->dtype;
    uint32_t b = npk_rk_dtype_in_size(dt);
    uint32_t p = dt == NPK_RK_INT8 ? NPK_RK_PREC_INT8 : NPK_RK_PREC_FP16;

    memset(c, 0, sizeof *c);
    c->conv_mode = 0; /* direct convolution */
    c->in_precision = c->proc_precision = p;
    c->feature_grains = mm->m + 1;
    c->conv_x_stride = c->conv_y_stride = 1;
    c->datain_width = 1;
    c->datain_height = mm->m;
    c->datain_channel = mm->k;
    c->dataout_width = 1;
    c->dataout_atomics = c->dataout_width * mm->m;
    c->weight_width = c->weight_height = 1;
    c->weight_kernels = mm->n;
    c->weight_bytes_per_kernel = mm->k * b;
    c->weight_bytes = c->weight_bytes_per_kernel * mm->n;
    c->data_bank = ceil_div((uint64_t)mm->m * mm->k * b, NPK_RK_CBUF_BANK_SIZE);
    c->weight_bank = NPK_RK_CBUF_BANKS - c->data_bank;
    c->data_entries = ceil_div((uint64_t)c->datain_width * mm->k * b, 64); /* 64-byte units */
    c->data_sign = c->cvt_type = c->cvt_bypass = 1;
    for (int i = 0; i < 4; i++) c->cvt_scale[i] = 1;
    c->feature_base_addr = mm->input_addr;
    c->weight_burst_len = c->data_burst_len = 15;
    c->line_stride = c->datain_width * 4;
    /* The reference generator's surface stride; negative (-3) for M = 1. */
    int32_t ss = (int32_t)c->line_stride * ((int32_t)(mm->m / 4) - 1);
    c->surf_stride = ss < 0 ? ss + 1 : ss;
    c->dma_width = c->datain_width;
    c->dma_height = c->datain_height;
    c->dma_channel = c->datain_channel;
    c->decompress_addr0 = mm->weight_addr;

    memset(core, 0, sizeof *core);
    core->proc_precision = p;
    core->qd_en = dt == NPK_RK_INT8 ? 0 : 1;
    core->dataout_height_m1 = mm->m - 1;
    core->dataout_width_m1 = c->dataout_width - 1;
    core->dataout_channel_m1 = mm->n - 1;

    memset(d, 0, sizeof *d);
    d->burst_len = 15;
    d->output_mode = 2;
    d->out_precision = dt == NPK_RK_FP16   ? NPK_RK_PREC_FP32
                       : dt == NPK_RK_INT8 ? NPK_RK_PREC_INT32
                                           : NPK_RK_PREC_FP16;
    d->in_precision = d->proc_precision = p;
    d->dst_base_addr = mm->output_addr;
    d->dst_surf_stride = mm->m * c->dataout_width;
    d->width_m1 = core->dataout_width_m1;
    d->height_m1 = core->dataout_height_m1;
    d->channel_m1 = core->dataout_channel_m1;
    d->bs_bypass = d->bs_alu_bypass = d->bs_mul_bypass = d->bs_relu_bypass = 1;
    d->bn_bypass = d->bn_alu_bypass = d->bn_mul_bypass = d->bn_relu_bypass = 1;
    d->ew_bypass = d->ew_op_bypass = d->ew_lut_bypass = d->ew_op_cvt_bypass = d->ew_relu_bypass = 1;
    d->fp32tofp16_en = dt == NPK_RK_FP16_FP16;
    d->out_cvt_scale = 1;
    /* Output element size code and surface-add multiplier, as emitted by the
     * reference generator (int32 uses 8, unexplained by the sources). */
    uint32_t e = dt == NPK_RK_FP16 ? 3 : dt == NPK_RK_INT8 ? 7 : 1;
    uint32_t u = dt == NPK_RK_FP16 ? 4 : dt == NPK_RK_INT8 ? 8 : 2;
    d->size_e[0] = d->size_e[1] = d->size_e[2] = e;
    d->od_bypass = 1;
    d->width_wdma_m1 = d->width_m1;
    d->height_wdma_m1 = d->height_m1;
    d->channel_wdma_m1 = d->channel_m1;
    d->surf_add = d->dst_surf_stride * u;
    d->enable_mask = (1u << npk_rk_field_get(NPK_RKF_GLOBAL_OPERATION_ENABLE_CNA_OP_EN)->lo) |
                     (1u << npk_rk_field_get(NPK_RKF_GLOBAL_OPERATION_ENABLE_CORE_OP_EN)->lo) |
                     (1u << npk_rk_field_get(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_OP_EN)->lo);
    return NPK_OK;
}

npk_status npk_rk_matmul_stream(const npk_rk_matmul *mm, uint64_t out[NPK_RK_MATMUL_ENTRIES],
                                npk_error *err)
{
    npk_rk_cna_desc c;
    npk_rk_core_desc core;
    npk_rk_dpu_desc d;
    npk_status st = npk_rk_matmul_descs(mm, &c, &core, &d, err);
    return st ? st : npk_rk_descs_emit(&c, &core, &d, out, err);
}

npk_status npk_rk_matmul_stream_form(const npk_rk_matmul *mm, npk_rk_form form, uint64_t *out,
                                     npk_error *err)
{
    npk_rk_cna_desc c;
    npk_rk_core_desc core;
    npk_rk_dpu_desc d;
    npk_status st = npk_rk_matmul_descs(mm, &c, &core, &d, err);
    return st ? st : npk_rk_descs_emit_form(&c, &core, &d, form, out, err);
}

uint32_t npk_rk_matmul_max_m(uint32_t k, npk_rk_dtype dt)
{
    if (!k) return 0;
    uint64_t by_grains = npk_rk_field_max(NPK_RKF_CNA_CONV_CON2_FEATURE_GRAINS) - 1;
    uint64_t by_height = npk_rk_field_max(NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT);
    uint64_t by_cbuf = (uint64_t)(NPK_RK_CBUF_BANKS - 1) * NPK_RK_CBUF_BANK_SIZE /
                       ((uint64_t)k * npk_rk_dtype_in_size(dt));
    uint64_t m = by_grains < by_height ? by_grains : by_height;
    if (by_cbuf < m) m = by_cbuf;
    if (m >= 4) return (uint32_t)(m & ~3ull);
    return m >= 1 ? 1 : 0;
}

uint32_t npk_rk_matmul_max_n(npk_rk_dtype dt)
{
    uint64_t n = npk_rk_field_max(NPK_RKF_DPU_DATA_CUBE_CHANNEL_CHANNEL) + 1ull;
    uint64_t kern = npk_rk_field_max(NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS);
    if (kern < n) n = kern;
    return (uint32_t)(n - n % npk_rk_dtype_n_align(dt));
}
