/* "CNN v2" weight files (magic "CNN2"): model, validator, reader and writer.
 *
 * Layout (little-endian, no padding between parts):
 *   header      16 bytes (version 1) or 20 bytes (version 2, adds mip_level)
 *   layer table 20 bytes per layer: kernel_size, in_channels, out_channels,
 *               weight_offset (f16 units), weight_count
 *   weights     f16, two per u32 (low half = even index), OIHW order per layer
 * Readers accept the exact size (2 bytes per weight) and the size padded to a
 * whole u32; the writer always pads. See docs/cnn2.md. */
#ifndef NPUKIT_CNN2_H
#define NPUKIT_CNN2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- format facts (the single table of this target) ---- */
#define NPK_CNN2_MAGIC       0x324E4E43u /* bytes "CNN2" */
#define NPK_CNN2_HEADER_V1   16u
#define NPK_CNN2_HEADER_V2   20u
#define NPK_CNN2_LAYER_BYTES 20u
#define NPK_CNN2_MAX_MIP     3u
#define NPK_CNN2_MAX_OUT     8u
#define NPK_CNN2_STATIC      8u  /* static features appended to every layer's input */
#define NPK_CNN2_DYNAMIC     4u  /* R, G, B, D (layer 0) or the previous outputs */
#define NPK_CNN2_STD_IN      12u /* in_channels of the standard network */
#define NPK_CNN2_STD_OUT     4u  /* out_channels of the standard network */
/* npukit limits (not format rules): layers held in memory by the parser. */
#define NPK_CNN2_MAX_LAYERS 4096u
/* At most this many problems are recorded by the validator (the rest are counted). */
#define NPK_CNN2_MAX_PROBLEMS 1000u

typedef struct npk_cnn2_layer {
    uint32_t kernel_size;   /* k, odd, >= 1 */
    uint32_t in_channels;   /* 12 in the standard network */
    uint32_t out_channels;  /* 1..8; 4 in the standard network */
    uint32_t weight_offset; /* index of the first weight, f16 units */
    uint32_t weight_count;  /* out * in * k * k */
} npk_cnn2_layer;

typedef struct npk_cnn2_model {
    uint32_t version; /* 1 or 2 */
    uint32_t num_layers;
    uint32_t total_weights;
    uint32_t mip_level;     /* 0..3; always 0 for version 1 */
    npk_cnn2_layer *layers; /* owned, num_layers entries */
    uint16_t *weights;      /* owned, total_weights f16 bit patterns (host order) */
} npk_cnn2_model;

/* Header length of a version (0 for an unknown version). */
uint32_t npk_cnn2_header_size(uint32_t version);
/* Exact and u32-padded file sizes for a header (overflow-free in 64 bits). */
uint64_t npk_cnn2_exact_size(uint32_t version, uint64_t num_layers, uint64_t total_weights);
uint64_t npk_cnn2_padded_size(uint32_t version, uint64_t num_layers, uint64_t total_weights);
/* Global index of weight (o, i, ky, kx) of a layer: OIHW, ky = row. */
static inline size_t npk_cnn2_weight_index(const npk_cnn2_layer *l, uint32_t o, uint32_t i,
                                           uint32_t ky, uint32_t kx)
{
    size_t k = l->kernel_size;
    return (size_t)l->weight_offset + (((size_t)o * l->in_channels + i) * k + ky) * k + kx;
}

/* ---- validation: every problem, with its absolute file offset ---- */

typedef enum npk_cnn2_check {
    /* errors, in the order of the reference's validation rules */
    NPK_CNN2_E_SHORT, /* file shorter than the header */
    NPK_CNN2_E_MAGIC,
    NPK_CNN2_E_VERSION,
    NPK_CNN2_E_MIP,
    NPK_CNN2_E_NO_LAYERS,
    NPK_CNN2_E_TABLE,  /* the layer table runs past the end of the file */
    NPK_CNN2_E_KERNEL, /* kernel_size even or 0 */
    NPK_CNN2_E_IN,     /* in_channels == 0 */
    NPK_CNN2_E_OUT,    /* out_channels 0 or > 8 */
    NPK_CNN2_E_COUNT,  /* weight_count != out * in * k^2 */
    NPK_CNN2_E_OFFSET, /* weight_offset != running sum */
    NPK_CNN2_E_TOTAL,  /* sum of weight_count != total_weights */
    NPK_CNN2_E_SIZE,   /* file size is neither the exact nor the padded size */
    /* warnings: a valid file outside the standard network */
    NPK_CNN2_W_IN_FIRST, /* layer 0 in_channels != 12 */
    NPK_CNN2_W_IN_CHAIN, /* in_channels != previous out_channels + 8 */
    NPK_CNN2_W_OUT_LAST, /* last layer out_channels != 4 */
    NPK_CNN2_W_NONFINITE /* a weight is NaN or infinite */
} npk_cnn2_check;

typedef struct npk_cnn2_problem {
    npk_cnn2_check check;
    bool warning;
    uint64_t offset; /* absolute file offset of the offending bytes */
    int32_t layer;   /* layer index, or -1 */
    char msg[160];
} npk_cnn2_problem;

typedef struct npk_cnn2_report {
    /* Header fields as far as they could be read (header_read says whether
     * version, num_layers, total_weights and mip_level are meaningful). */
    bool header_read;
    uint32_t version, num_layers, total_weights, mip_level;
    uint64_t file_size;
    size_t errors, warnings; /* totals, including unrecorded ones */
    npk_cnn2_problem *items; /* owned; at most NPK_CNN2_MAX_PROBLEMS */
    size_t count, cap;
} npk_cnn2_report;

/* Check buf against every rule. Problems go to rep (free with
 * npk_cnn2_report_free); the return value is not about the file: only
 * NPK_E_NOMEM can fail. A file is valid when rep->errors == 0. */
npk_status npk_cnn2_validate(const uint8_t *buf, size_t len, npk_cnn2_report *rep, npk_error *err);
void npk_cnn2_report_free(npk_cnn2_report *rep);
/* Short stable name of a check ("magic", "offset", "size", ...), for JSON. */
const char *npk_cnn2_check_name(npk_cnn2_check check);
/* The first error of a report (NULL when valid). */
const npk_cnn2_problem *npk_cnn2_first_error(const npk_cnn2_report *rep);

/* ---- reading and writing ---- */

/* Parse a whole file held in memory. On any validation error, fails with the
 * first one (its offset and message); warnings do not fail. */
npk_status npk_cnn2_parse(const uint8_t *buf, size_t len, npk_cnn2_model *m, npk_error *err);
npk_status npk_cnn2_load(const char *path, npk_cnn2_model *m, npk_error *err);
void npk_cnn2_free(npk_cnn2_model *m);

/* A model with the given layer shapes (k, in, out per layer), contiguous
 * offsets and zeroed weights. */
typedef struct npk_cnn2_shape {
    uint32_t kernel_size, in_channels, out_channels;
} npk_cnn2_shape;
npk_status npk_cnn2_build(npk_cnn2_model *m, uint32_t version, uint32_t mip_level,
                          uint32_t num_layers, const npk_cnn2_shape *shapes, npk_error *err);
/* Check a model in memory against the same rules as files (errors only). */
npk_status npk_cnn2_check_model(const npk_cnn2_model *m, npk_error *err);

/* Serialise (always the u32-padded size; the unused half is 0x0000). */
npk_status npk_cnn2_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err);
npk_status npk_cnn2_save(const char *path, const npk_cnn2_model *m, npk_error *err);

/* ---- tensors: layer.<i>.weight, shape [out, in, k, k] ---- */

/* One float32 tensor per layer (exact f16 -> f32). */
npk_status npk_cnn2_to_tensors(const npk_cnn2_model *m, npk_tensor_set *set, npk_error *err);
/* Build a model from float32 or float16 tensors named layer.0.weight ...
 * layer.<L-1>.weight (f32 rounds to nearest even f16). Other names fail. */
npk_status npk_cnn2_from_tensors(const npk_tensor_set *set, uint32_t version, uint32_t mip_level,
                                 npk_cnn2_model *m, npk_error *err);

/* safetensors with the header fields kept in "__metadata__"
 * ("cnn2.version", "cnn2.mip_level"), so unpack + pack reproduces a file. */
npk_status npk_cnn2_st_encode(const npk_cnn2_model *m, uint8_t **out, size_t *len, npk_error *err);
/* The same bytes, written to an open output a chunk at a time (memory: the
 * model plus a few KiB); the output size is checked before the first byte. */
npk_status npk_cnn2_st_write(const npk_cnn2_model *m, npk_out *o, npk_error *err);
/* Parse a safetensors file into a set; *version / *mip_level get the
 * metadata values, or 0 when absent. */
npk_status npk_cnn2_st_decode(const uint8_t *buf, size_t len, npk_tensor_set *set,
                              uint32_t *version, uint32_t *mip_level, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
