/* RKNPU matmul task generation: C[M x N] = A[M x K] . B[K x N] programmed as
 * a 1x1 direct convolution (input cube width 1, height M, K channels; N
 * kernels). Shapes are validated against the register fields and the CBUF
 * instead of being silently truncated; every accepted shape produces the
 * same 108-entry stream as the public generator this reproduces. */
#ifndef NPUKIT_RKNPU_MATMUL_H
#define NPUKIT_RKNPU_MATMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Precision codes of the CONV_CON1, MISC_CFG and DATA_FORMAT fields. */
typedef enum npk_rk_precision {
    NPK_RK_PREC_INT8 = 0,
    NPK_RK_PREC_INT16 = 1, /* claimed from hardware probing, unverified */
    NPK_RK_PREC_FP16 = 2,
    NPK_RK_PREC_BF16 = 3, /* claimed, unverified */
    NPK_RK_PREC_INT32 = 4,
    NPK_RK_PREC_FP32 = 5
} npk_rk_precision;

/* The supported data paths. */
typedef enum npk_rk_dtype {
    NPK_RK_FP16 = 0,      /* fp16 x fp16 -> fp32 ("fp16") */
    NPK_RK_FP16_FP16 = 1, /* fp16 x fp16 -> fp16 ("fp16-fp16") */
    NPK_RK_INT8 = 2       /* int8 x int8 -> int32 ("int8") */
} npk_rk_dtype;

const char *npk_rk_dtype_name(npk_rk_dtype dt);
bool npk_rk_dtype_parse(const char *name, npk_rk_dtype *dt);
unsigned npk_rk_dtype_in_size(npk_rk_dtype dt);  /* bytes per input/weight element */
unsigned npk_rk_dtype_out_size(npk_rk_dtype dt); /* bytes per output element */
/* Channels per 16-byte atom of the input (8 fp16, 16 int8) and output
 * (4 fp32/int32, 8 fp16) feature layouts (NC1HWC2's C2). */
unsigned npk_rk_dtype_in_c2(npk_rk_dtype dt);
unsigned npk_rk_dtype_out_c2(npk_rk_dtype dt);
/* Kernels per weight group (16 fp16, 32 int8): N must be a multiple. */
unsigned npk_rk_dtype_n_align(npk_rk_dtype dt);

typedef struct npk_rk_matmul {
    uint32_t m, k, n;
    npk_rk_dtype dtype;
    uint32_t input_addr, weight_addr, output_addr; /* NPU DMA addresses */
} npk_rk_matmul;

#define NPK_RK_MATMUL_ENTRIES 108
/* The two stream forms: the vendor driver's (the public demo's 108 entries,
 * operation enable 0x0D) and the mainline rocket driver's (Mesa's form: the
 * same registers plus DPU_RDMA_S_POINTER and a 17-register DPU_RDMA block
 * with every read path disabled, operation enable 0x1D; 126 entries). */
typedef enum npk_rk_form { NPK_RK_FORM_VENDOR = 0, NPK_RK_FORM_ROCKET = 1 } npk_rk_form;
#define NPK_RK_MATMUL_ROCKET_ENTRIES 126
#define NPK_RK_MATMUL_MAX_ENTRIES    126
size_t npk_rk_form_entries(npk_rk_form form);
const char *npk_rk_form_name(npk_rk_form form); /* "vendor", "rocket" */
#define NPK_RK_CBUF_BANKS     12
#define NPK_RK_CBUF_BANK_SIZE 32768

/* Descriptors: the values programmed into each block, in natural units
 * (sizes marked _m1 are "minus one" as the hardware takes them). */
typedef struct npk_rk_cna_desc {
    uint32_t conv_mode, in_precision, proc_precision;
    uint32_t kernel_groups, feature_grains, conv_x_stride, conv_y_stride;
    uint32_t datain_width, datain_height, datain_channel;
    uint32_t dataout_width, dataout_atomics;
    uint32_t weight_bytes, weight_bytes_per_kernel;
    uint32_t weight_width, weight_height, weight_kernels;
    uint32_t weight_bank, data_bank, data_entries;
    uint32_t data_sign, cvt_type, cvt_bypass, cvt_scale[4];
    uint32_t fc_skip_en, data_offset, pad_left, pad_top;
    uint32_t feature_base_addr, weight_offset;
    uint32_t weight_burst_len, data_burst_len;
    uint32_t line_stride;
    int32_t surf_stride; /* negative for M = 1, written in two's complement */
    uint32_t dma_width, dma_height, dma_channel;
    uint32_t decompress_addr0;
} npk_rk_cna_desc;

typedef struct npk_rk_core_desc {
    uint32_t proc_precision, qd_en;
    uint32_t dataout_height_m1, dataout_width_m1, dataout_channel_m1;
} npk_rk_core_desc;

typedef struct npk_rk_dpu_desc {
    uint32_t burst_len, conv_mode, output_mode, flying_mode;
    uint32_t out_precision, in_precision, proc_precision;
    uint32_t dst_base_addr, dst_surf_stride;
    uint32_t width_m1, height_m1, channel_m1;
    uint32_t bs_bypass, bs_alu_bypass, bs_mul_bypass, bs_relu_bypass;
    uint32_t bn_bypass, bn_alu_bypass, bn_mul_bypass, bn_relu_bypass;
    uint32_t ew_bypass, ew_op_bypass, ew_lut_bypass, ew_op_cvt_bypass, ew_relu_bypass;
    uint32_t fp32tofp16_en, out_cvt_scale;
    uint32_t size_e[3], od_bypass;
    uint32_t width_wdma_m1, height_wdma_m1, channel_wdma_m1;
    uint32_t surf_add;
    uint32_t enable_mask; /* operation-enable block mask (CNA | CORE | DPU) */
} npk_rk_dpu_desc;

/* Check a shape: every rejection names the limit (alignment, the register
 * field that would overflow, or the CBUF capacity). */
npk_status npk_rk_matmul_check(const npk_rk_matmul *mm, npk_error *err);
/* Validate and compute the descriptors. */
npk_status npk_rk_matmul_descs(const npk_rk_matmul *mm, npk_rk_cna_desc *cna,
                               npk_rk_core_desc *core, npk_rk_dpu_desc *dpu, npk_error *err);
/* Pack descriptors into the 108-entry stream; a value that does not fit its
 * register field is an error naming the field. */
npk_status npk_rk_descs_emit(const npk_rk_cna_desc *cna, const npk_rk_core_desc *core,
                             const npk_rk_dpu_desc *dpu, uint64_t out[NPK_RK_MATMUL_ENTRIES],
                             npk_error *err);
/* Both steps: one task's stream. */
npk_status npk_rk_matmul_stream(const npk_rk_matmul *mm, uint64_t out[NPK_RK_MATMUL_ENTRIES],
                                npk_error *err);
/* The same in either form; out holds npk_rk_form_entries(form) entries. */
npk_status npk_rk_descs_emit_form(const npk_rk_cna_desc *cna, const npk_rk_core_desc *core,
                                  const npk_rk_dpu_desc *dpu, npk_rk_form form, uint64_t *out,
                                  npk_error *err);
npk_status npk_rk_matmul_stream_form(const npk_rk_matmul *mm, npk_rk_form form, uint64_t *out,
                                     npk_error *err);

/* Largest M tile for which one task can hold the feature data of K columns
 * in the CBUF (and the other M limits), respecting M alignment. 0 if none. */
uint32_t npk_rk_matmul_max_m(uint32_t k, npk_rk_dtype dt);
/* Largest N per task (register field limits), a multiple of the N alignment. */
uint32_t npk_rk_matmul_max_n(npk_rk_dtype dt);

#ifdef __cplusplus
}
#endif
#endif
