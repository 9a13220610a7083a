/* Coral Edge TPU (DarwiNN) models: the edgetpu-custom-op of a compiled
 * *_edgetpu.tflite, its DWN1 Package, MultiExecutable and Executables; the
 * parameter blob of Dense templates; field-offset patching; output
 * relayout; and a CPU reference of what the device computes for a Dense
 * template. Facts and their sources: docs/edgetpu.md.
 *
 * All structs point into the model file's bytes (bitstreams, parameters,
 * names), which must outlive them; arrays are host-order copies owned by
 * the model. Nothing here talks to a device: a runtime (e.g. a USB driver)
 * takes an npk_etpu_executable and follows its DMA hints. */
#ifndef NPUKIT_EDGETPU_H
#define NPUKIT_EDGETPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/tflite.h"
#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPK_ETPU_CUSTOM_CODE "edgetpu-custom-op"

/* Limits per executable (real models have tens of layers and hundreds of
 * hints); they keep hint validation, which matches hints to layers by
 * name, cheap on hostile files. */
#define NPK_ETPU_MAX_LAYERS 1024
#define NPK_ETPU_MAX_HINTS  16384

/* ---- schema enums (executable.fbs) ---- */

typedef enum npk_etpu_exec_type {
    NPK_ETPU_STAND_ALONE = 0,
    NPK_ETPU_PARAMETER_CACHING = 1,
    NPK_ETPU_EXECUTION_ONLY = 2
} npk_etpu_exec_type;

typedef enum npk_etpu_desc { /* FieldOffset/DMA Meta.desc: which base address */
                             NPK_ETPU_DESC_OUTPUT = 0,
                             NPK_ETPU_DESC_INPUT = 1,
                             NPK_ETPU_DESC_PARAMETER = 2,
                             NPK_ETPU_DESC_SCRATCH = 3
} npk_etpu_desc;

typedef enum npk_etpu_position {
    NPK_ETPU_LOWER_32BIT = 0,
    NPK_ETPU_UPPER_32BIT = 1
} npk_etpu_position;

typedef enum npk_etpu_hint_kind { /* the AnyHint union's type */
                                  NPK_ETPU_HINT_NONE = 0,
                                  NPK_ETPU_HINT_DMA = 1, /* DmaDescriptorHint */
                                  NPK_ETPU_HINT_INSTRUCTION = 2,
                                  NPK_ETPU_HINT_INTERRUPT = 3,
                                  NPK_ETPU_HINT_FENCE = 4
} npk_etpu_hint_kind;

typedef enum npk_etpu_direction { NPK_ETPU_INFEED = 0, NPK_ETPU_OUTFEED = 1 } npk_etpu_direction;

typedef enum npk_etpu_data_type {
    NPK_ETPU_FIXED_POINT8 = 0,
    NPK_ETPU_FIXED_POINT16 = 1,
    NPK_ETPU_SIGNED_FIXED_POINT32 = 2,
    NPK_ETPU_BFLOAT = 3,
    NPK_ETPU_HALF = 4,
    NPK_ETPU_SINGLE = 5,
    NPK_ETPU_SIGNED_FIXED_POINT8 = 8,
    NPK_ETPU_SIGNED_FIXED_POINT16 = 9
} npk_etpu_data_type;

const char *npk_etpu_exec_type_name(int type); /* "STAND_ALONE", ... or "?" */
const char *npk_etpu_desc_name(int desc);      /* "BASE_ADDRESS_OUTPUT_ACTIVATION", ... */
const char *npk_etpu_position_name(int pos);   /* "LOWER_32BIT" / "UPPER_32BIT" */
const char *npk_etpu_hint_name(int kind);      /* "DMA_DESCRIPTOR", "INSTRUCTION", ... */
const char *npk_etpu_direction_name(int dir);  /* "INFEED" / "OUTFEED" */
const char *npk_etpu_data_type_name(int dt);   /* "FIXED_POINT8", ... */
size_t npk_etpu_data_type_size(int dt);        /* bytes per element; 0 if unknown */

/* ---- executables ---- */

typedef struct npk_etpu_meta {
    int16_t desc; /* npk_etpu_desc */
    int32_t batch;
    const char *name; /* NULL when absent */
    int16_t position; /* npk_etpu_position */
} npk_etpu_meta;

typedef struct npk_etpu_field_offset {
    npk_etpu_meta meta;
    int32_t offset_bit; /* bit position in the bitstream of a 32-bit immediate */
} npk_etpu_field_offset;

typedef struct npk_etpu_bitstream {
    const uint8_t *data;
    size_t size;
    uint64_t offset; /* absolute file offset */
    uint32_t nfields;
    npk_etpu_field_offset *fields;
} npk_etpu_bitstream;

typedef struct npk_etpu_dma_hint {
    uint8_t kind;      /* npk_etpu_hint_kind */
    uint8_t direction; /* npk_etpu_direction */
    /* DMA descriptor */
    npk_etpu_meta meta;
    int32_t offset_in_bytes, size_in_bytes;
    /* instruction */
    int32_t instruction_chunk_index;
    /* interrupt */
    int32_t interrupt_type;
    uint64_t offset; /* absolute file offset of the hint's table (for errors) */
} npk_etpu_dma_hint;

typedef struct npk_etpu_output_layout {
    /* Byte index of (y, x, z): tile = y_tile[y] + x_tile[x];
     * tile_byte_offset[tile] + y_local[y] * x_row_size[x] + x_local_byte[x] + z * elem. */
    uint32_t ny_tile, nx_tile, ntile_byte_offset, nx_local_byte, ny_local, nx_row_size;
    int32_t *y_tile, *x_tile, *tile_byte_offset, *x_local_byte, *y_local, *x_row_size;
} npk_etpu_output_layout;

typedef struct npk_etpu_range {
    int32_t start, end; /* inclusive */
} npk_etpu_range;

typedef struct npk_etpu_layer {
    const char *name;
    int32_t size_bytes, y_dim, x_dim, z_dim;
    bool has_numerics;
    int32_t zero_point;
    float dequantization_factor;
    int16_t data_type;  /* npk_etpu_data_type */
    uint8_t layer_kind; /* AnyLayer union: 0 none, 1 output, 2 input */
    bool has_layout;    /* output layers: the tiled layout below is present */
    npk_etpu_output_layout layout;
    uint32_t nslices; /* OutputShapeInfo.slice_layout count (0: not given) */
    int32_t execution_count_per_inference;
    bool cache_on_dram;
    uint32_t ndims; /* TensorShape dimensions */
    npk_etpu_range *shape;
} npk_etpu_layer;

typedef struct npk_etpu_executable {
    int32_t version;
    const char *name;
    const uint8_t *serialized_model;
    size_t serialized_model_size;
    int32_t batch_size;
    int32_t scratch_size_bytes;
    uint32_t nbitstreams;
    npk_etpu_bitstream *bitstreams;
    const uint8_t *parameters; /* NULL when there are none */
    size_t parameters_size;
    uint64_t parameters_offset; /* absolute file offset */
    bool has_dma_hints;
    bool fully_deterministic;
    uint32_t nhints;
    npk_etpu_dma_hint *hints;
    uint32_t ninputs, noutputs;
    npk_etpu_layer *inputs, *outputs;
    const char *chip;
    int32_t estimated_cycles;
    int32_t used_narrow_memory_bytes_per_tile;
    int16_t type; /* npk_etpu_exec_type */
    uint64_t parameter_caching_token;
    bool use_tpu_dram_for_parameters;
    int64_t estimated_cycles_64bit;
    uint64_t offset; /* absolute file offset of the serialized executable */
    size_t size;
} npk_etpu_executable;

typedef struct npk_etpu_package {
    int32_t min_runtime_version;
    int32_t keypair_version;
    int32_t virtual_chip_id;
    const char *compiler_version;
    const char *model_identifier;
    size_t signature_size;
    uint32_t nexecutables;
    npk_etpu_executable *executables; /* in file order (fixtures: [EO, PC]) */
    uint32_t nmulti_chip;
    struct npk_etpu_package *multi_chip; /* nested packages for other chips */
    uint64_t offset;                     /* absolute file offset of the DWN1 buffer */
    size_t size;
} npk_etpu_package;

/* One edgetpu-custom-op operator and its FlexBuffer options. */
typedef struct npk_etpu_op {
    uint32_t subgraph, op;
    int64_t version;              /* key "1" (0 when absent) */
    int64_t execution_preference; /* key "5" (-1 when absent) */
    const char *chip_name;        /* key "2" (deprecated), NULL when absent */
    uint32_t nchips;
    int64_t *chips;     /* key "6": one chip id per package */
    bool has_legacy_pc; /* key "3" present (deprecated, ignored) */
    uint32_t npackages; /* key "4" plus every string of key "7" */
    npk_etpu_package *packages;
} npk_etpu_op;

typedef struct npk_etpu_model {
    npk_tfl_model tfl;
    uint32_t nops;
    npk_etpu_op *ops;
    void *arena; /* private */
} npk_etpu_model;

/* Parse a .tflite file and every Edge TPU custom op in it (a model without
 * one parses with nops = 0). buf must outlive m. */
npk_status npk_etpu_parse(const uint8_t *buf, size_t len, npk_etpu_model *m, npk_error *err);
void npk_etpu_free(npk_etpu_model *m);

/* DMA hints (validated by the parser with npk_etpu_check_hints): instruction
 * chunks name existing bitstreams, parameter DMAs lie inside the parameters,
 * input/output DMAs name an existing layer (outputs stay inside it). */
npk_status npk_etpu_check_hints(const npk_etpu_executable *e, npk_error *err);
/* The input or output layer a DMA hint transfers (by Meta name; the only
 * layer when unnamed), or NULL. */
const npk_etpu_layer *npk_etpu_hint_layer(const npk_etpu_executable *e, const npk_etpu_dma_hint *h);

/* ---- parameter blob of a Dense (fully connected) template ---- */

#define NPK_ETPU_GROUP_ROWS     64    /* output channels per group */
#define NPK_ETPU_GROUP_OVERHEAD 512   /* bytes before each group's weights */
#define NPK_ETPU_MAX_DENSE      16384 /* largest N npukit accepts */

/* Bytes of the blob for W[rows][cols] (rows % 64 == 0, cols % 4 == 0), or 0. */
size_t npk_etpu_blob_size(size_t rows, size_t cols);
/* Encode int8 W[rows][cols] (row = output channel) with the per-group
 * overhead (rows / 64 * 512 bytes) into blob. */
npk_status npk_etpu_blob_encode(const int8_t *w, size_t rows, size_t cols, const uint8_t *overhead,
                                uint8_t *blob, size_t blob_size, npk_error *err);
/* Decode a blob into W and the overhead (either may be NULL). */
npk_status npk_etpu_blob_decode(const uint8_t *blob, size_t blob_size, size_t rows, size_t cols,
                                int8_t *w, uint8_t *overhead, npk_error *err);
/* The float32 requantisation multipliers of every row from the overhead. */
void npk_etpu_overhead_multipliers(const uint8_t *overhead, size_t rows, float *mult);

/* Quantise float W[rows][cols] per row: q = round_half_even(w / scale[r]),
 * clipped to [-128, 127]; *clipped counts clipped values. NaN/inf fail. */
npk_status npk_etpu_quantize_rows(const float *w, size_t rows, size_t cols, const float *scale,
                                  int8_t *q, size_t *clipped, npk_error *err);

/* A recognised Dense N x N template: the edgetpu op's executables and the
 * quantisation it implies. */
typedef struct npk_etpu_dense {
    size_t n;
    const npk_etpu_executable *pc; /* executable holding the weight blob */
    const npk_etpu_executable *eo; /* executable that runs (== pc when stand-alone) */
    const uint8_t *blob;
    size_t blob_size;
    uint64_t blob_offset; /* absolute file offset of the blob */
    float in_scale, out_scale;
    int32_t in_zero_point, out_zero_point;
    int in_type, out_type; /* TFLite types of the op's input and output (UINT8/INT8) */
    float *multiplier;     /* [n] from the overhead */
    float *w_scale;        /* [n] = multiplier * out_scale / in_scale */
    uint8_t *overhead;     /* [n / 64 * 512] */
} npk_etpu_dense;

/* Recognise a Dense template in a parsed model (one edgetpu op, one input,
 * one output of N elements, a parameter blob of npk_etpu_blob_size(N, N)). */
npk_status npk_etpu_dense_init(const npk_etpu_model *m, npk_etpu_dense *d, npk_error *err);
void npk_etpu_dense_free(npk_etpu_dense *d);
/* The template's int8 weights [n][n]. */
npk_status npk_etpu_dense_weights(const npk_etpu_dense *d, int8_t *w, npk_error *err);
/* A complete new model file in which only the blob's bytes differ: w int8 [n][n]. */
npk_status npk_etpu_dense_set_weights(const npk_etpu_dense *d, const uint8_t *file, size_t len,
                                      const int8_t *w, uint8_t **out, npk_error *err);

/* Reference execution as the device computes it: int8 weights, int32
 * accumulation of w * (x - in_zp), per-channel requantisation with the
 * overhead multiplier, + out_zp, saturation. x and y hold `batch` rows of n
 * quantised values in the TFLite types (uint8 or int8). */
npk_status npk_etpu_dense_run(const npk_etpu_dense *d, const int8_t *w, const uint8_t *x,
                              size_t batch, uint8_t *y, npk_error *err);
/* The same on device bytes: int8 tensors travel XOR 0x80 (the device's uint8). */
npk_status npk_etpu_dense_run_device(const npk_etpu_dense *d, const int8_t *w, const uint8_t *x,
                                     size_t batch, uint8_t *y, npk_error *err);
/* Float in, float out: quantise x with the input parameters, run, dequantise. */
npk_status npk_etpu_dense_matmul(const npk_etpu_dense *d, const int8_t *w, const float *x,
                                 size_t batch, float *y, npk_error *err);

/* ---- template sidecars (libredgetpu's dense_N_edgetpu.json and friends) ---- */

typedef struct npk_etpu_sidecar {
    int kind; /* 1 dense (matrix_size), 2 conv/gabor (ksize), 3 looming (zones), 0 other */
    double input_scale, output_scale, weight_scale; /* weight_scale: channel 0 only */
    int64_t input_zero_point, output_zero_point, weight_zero_point;
    int64_t matrix_size, param_size, height, width, output_count;
    bool use_bias;
    uint8_t *param_overhead; /* decoded base64, NULL when absent */
    size_t param_overhead_size;
} npk_etpu_sidecar;

/* Parse a sidecar (needs libcjson: NPK_E_UNSUPPORTED without it). */
npk_status npk_etpu_sidecar_parse(const uint8_t *buf, size_t len, npk_etpu_sidecar *s,
                                  npk_error *err);
void npk_etpu_sidecar_free(npk_etpu_sidecar *s);

/* ---- bitstreams and outputs ---- */

/* Write/read a 32-bit value LSB-first at an arbitrary bit offset. */
npk_status npk_etpu_put_bits32(uint8_t *bits, size_t size, uint64_t bit_offset, uint32_t value,
                               npk_error *err);
npk_status npk_etpu_get_bits32(const uint8_t *bits, size_t size, uint64_t bit_offset,
                               uint32_t *value, npk_error *err);
/* Patch base addresses into a copy of a bitstream: addr[desc] (64-bit) goes
 * to every field offset of that description, the LOWER_32BIT entry taking
 * the low half and UPPER_32BIT the high half. bits holds bs->size bytes. */
npk_status npk_etpu_patch_bitstream(const npk_etpu_bitstream *bs, uint8_t *bits,
                                    const uint64_t addr[4], npk_error *err);

/* Device output bytes of an output layer in Y, X, Z order (y_dim * x_dim *
 * z_dim * element size bytes into out). Untiled layers are copied. */
npk_status npk_etpu_relayout(const npk_etpu_layer *l, const uint8_t *dev, size_t dev_size,
                             uint8_t *out, size_t out_size, npk_error *err);

/* ---- synthetic models (tests, demo) ---- */

/* A synthetic N x N Dense model in the layout of a compiled template: TFLite
 * with one edgetpu-custom-op whose DWN1 package holds an EO and a PC
 * executable (zero-filled bitstreams with field offsets, DMA hints, layers)
 * and a parameter blob of W[r][c] = ((7r + 13c) mod 256) - 128. It is NOT
 * compiler output and cannot run on a device. flex_width: 0 = automatic. */
typedef struct npk_etpu_synth_opts {
    size_t n;
    int flex_width;
    const int8_t *weights; /* NULL: the pattern above */
    bool chip_keys;        /* add keys "6" = [18] and "7" = [] as newer compilers do */
} npk_etpu_synth_opts;
npk_status npk_etpu_synth_dense(const npk_etpu_synth_opts *o, uint8_t **out, size_t *len,
                                npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
