/* Ingenic MGK ("Magik") models: a 32-bit little-endian MIPS ELF shared object
 * with an appended payload (weight region, `model` parameter blob, version
 * strings, a segment record, a section table and an 80-byte `IMGK` footer).
 *
 * The parser keeps pointers into the caller's buffer (strings are not
 * NUL-terminated: use npk_mgk_str's length), so the buffer must outlive the
 * model. Facts and their confidence are documented in docs/mgk.md; fields
 * whose meaning is unknown are exposed raw and labelled as such. */
#ifndef NPUKIT_MGK_H
#define NPUKIT_MGK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPK_MGK_FOOTER_SIZE      80
#define NPK_MGK_MAX_SECTIONS     64 /* payload section-table entries */
#define NPK_MGK_MAX_SEGMENTS     64 /* segment records */
#define NPK_MGK_MAX_ELF_SECTIONS 4096
#define NPK_MGK_MAX_SYMBOLS      (1u << 20)
#define NPK_MGK_MAX_RECORDS      65536 /* records in the `model` blob */
#define NPK_MGK_MAX_VEC          4096  /* items in one blob vector */
#define NPK_MGK_MAX_STR          4096  /* bytes in one blob string */
#define NPK_MGK_MAX_WARNINGS     32
#define NPK_MGK_WARNING_MAX      200

/* A string inside the input buffer (not NUL-terminated). */
typedef struct npk_mgk_str {
    const char *s;
    uint32_t len;
} npk_mgk_str;

/* True when str equals the NUL-terminated lit. */
bool npk_mgk_str_eq(npk_mgk_str str, const char *lit);

/* ---- the ELF part ---- */

typedef struct npk_mgk_elf_section {
    npk_mgk_str name;
    uint32_t type, flags, addr, offset, size, link, info, entsize;
} npk_mgk_elf_section;

typedef struct npk_mgk_symbol {
    npk_mgk_str name; /* as stored (C++ names are mangled) */
    uint32_t value, size;
    uint8_t bind, type; /* STB_*, STT_* */
    uint16_t shndx;
} npk_mgk_symbol;

typedef struct npk_mgk_elf {
    uint8_t osabi, abiversion;
    uint16_t type, machine;
    uint32_t entry, flags;
    uint32_t phoff, shoff;
    uint16_t phnum, shnum, shstrndx;
    uint64_t sh_end;   /* end of the section-header table (shoff + shnum * 40) */
    uint64_t load_end; /* end of the last file byte covered by a PT_LOAD segment */
    npk_mgk_elf_section *sections;
    size_t nsections;
    npk_mgk_symbol *symbols; /* defined (st_shndx != 0) named dynamic symbols */
    size_t nsymbols;
} npk_mgk_elf;

/* The plain identifier of a symbol: "create" stays "create", a mangled
 * "_Z22conv2d_int8_param_initPKv..." gives "conv2d_int8_param_init". Nested
 * or unusual names are returned as stored (truncated to n - 1 bytes). */
const char *npk_mgk_symbol_short(const npk_mgk_symbol *sym, char *buf, size_t n);

/* ---- the appended payload ---- */

typedef struct npk_mgk_section {
    uint8_t index;      /* entry +0 */
    uint8_t byte1;      /* entry +1, meaning unknown */
    uint8_t name_byte;  /* entry +2: name offset into .mlstrtab (0 for `model`) */
    npk_mgk_str name;   /* resolved name, or empty */
    bool name_inferred; /* name taken from the index-1 rule, not from .mlstrtab */
    uint64_t offset, size;
    uint64_t entry_offset; /* file offset of the table entry */
} npk_mgk_section;

typedef struct npk_mgk_version {
    uint8_t tag;        /* +0; bytes +1..+7 are ignored (uninitialised in the fixture) */
    uint64_t value;     /* +8 */
    npk_mgk_str string; /* the .verstr string at `value`, when resolvable */
    bool has_string;
    uint64_t entry_offset;
} npk_mgk_version;

typedef struct npk_mgk_warning {
    uint64_t offset;
    char msg[NPK_MGK_WARNING_MAX];
} npk_mgk_warning;

typedef struct npk_mgk_range {
    uint64_t offset, size; /* relative to the weight region */
    bool all_zero;         /* every byte of the range is 0 */
} npk_mgk_range;

/* ---- the `model` blob ---- */

typedef struct npk_mgk_tensor_ref {
    npk_mgk_str name, format, type; /* e.g. "x.43", "NDHWC32", "UINT8" */
    int32_t id;
} npk_mgk_tensor_ref;

typedef struct npk_mgk_record {
    uint64_t offset, size; /* file offset and length, including the trailing length word */
    npk_mgk_str name;      /* the record's first string (the name of the tensor it produces) */
    npk_mgk_tensor_ref *inputs;
    uint32_t ninputs;
    npk_mgk_str *out_formats, *out_types;
    uint32_t nout;
    int32_t out_id;
    npk_mgk_str kernel;              /* kernel id, e.g. "Convolution/base_i8/2/0/0" */
    npk_mgk_str kind;                /* kernel id up to the first '/' */
    bool known_kind;                 /* kind is one the documentation lists */
    uint64_t body_offset, body_size; /* kind-specific bytes (raw) */
    int conv;                        /* index into npk_mgk_model.convs, or -1 */
} npk_mgk_record;

typedef struct npk_mgk_conv {
    size_t record; /* index into records; also the layer id */
    int id;        /* layer id used by extract/replace: layer_<id>.weight */
    /* The fixed block after the kernel id (113 bytes in the fixture). */
    uint8_t unknown_head[30]; /* 2 bytes + 7 x i32, meaning unknown */
    int32_t unknown_a;        /* 2 for 1x3/1x5, 1 for 1x1 layers in the fixture */
    int32_t cin, cout;        /* real channel counts as stored */
    int32_t pads[8], kernel[8], stride[8], dilation[8];
    uint32_t npads, nkernel, nstride, ndilation;
    int32_t unknown_b[2];
    uint8_t unknown_c[3];
    int32_t act;        /* 3 or -1 in the fixture; plausibly an activation kind (unverified) */
    npk_mgk_str layout; /* channel layout string ("BGRA") */
    uint8_t zero_points[5];
    int32_t unknown_d;        /* 6 in every fixture record */
    int32_t weight_shape[7];  /* [N_OFP, M_IFP, KH, KW, S, 32, 32] */
    int32_t requant_shape[5]; /* [N_OFP, M_BT, 1, 1, 32] */
    int32_t third_shape[8];
    uint32_t nthird;
    uint8_t has_third;
    int32_t counts[3];  /* element counts: weights (2-bit fields), requant words, third */
    int64_t offsets[3]; /* relative to the weight region */
    uint64_t shape_pos; /* file offset of the weight_shape count word */
    uint64_t tail_offset, tail_size; /* undecoded bytes before the trailer */
    /* Derived and checked. */
    bool usable;       /* the weights can be decoded */
    bool requant_ok;   /* the requantisation table can be read */
    char problem[160]; /* why not, or a note (e.g. all lanes used) */
    int bits, planes, n_ofp, m_ifp, kh, kw, m_bt;
    int out_channels, in_channels; /* used for unpadding */
    bool unpadded;                 /* false when Cin/Cout do not fit the shape (all lanes used) */
    uint64_t weight_offset, weight_bytes, requant_offset, requant_bytes;
} npk_mgk_conv;

typedef struct npk_mgk_model {
    const uint8_t *data;
    size_t size;
    npk_mgk_elf elf;
    /* Footer (exact-width fields only). */
    uint64_t footer_offset;
    uint8_t footer_ident[4];
    uint64_t sectab_offset, segtab_offset;
    uint16_t footer_size, sect_entsize, nsect, seg_size, nseg;
    uint64_t footer_region_offset, footer_region_size;
    /* Segment record 0. */
    uint64_t region_offset, region_size;
    uint64_t seg_unknown_20; /* +0x20, meaning unknown (0x12800 in the fixture) */
    npk_mgk_section sections[NPK_MGK_MAX_SECTIONS];
    size_t nsections;
    int sec_model, sec_strtab, sec_verstr, sec_version; /* indices into sections, or -1 */
    npk_mgk_version *versions;
    size_t nversions;
    npk_mgk_record *records;
    size_t nrecords;
    npk_mgk_conv *convs;
    size_t nconvs;
    npk_mgk_range *unassigned;
    size_t nunassigned;
    npk_mgk_warning warnings[NPK_MGK_MAX_WARNINGS];
    size_t nwarnings, warnings_dropped;
} npk_mgk_model;

/* Parse a whole MGK file held in memory. On failure the model is freed. */
npk_status npk_mgk_parse(const uint8_t *buf, size_t len, npk_mgk_model *m, npk_error *err);
void npk_mgk_free(npk_mgk_model *m);
/* The convolution with layer id `id`, or NULL. */
const npk_mgk_conv *npk_mgk_find_layer(const npk_mgk_model *m, int id);
const npk_mgk_record *npk_mgk_conv_record(const npk_mgk_model *m, const npk_mgk_conv *c);

/* ---- NMHWSOIB2 weight codec ---- */

/* One row of the bit-width table (src/mgk/mgk_table.c). */
typedef struct npk_mgk_bitwidth {
    int bits;        /* 2, 4, 6, 8 */
    int planes;      /* S_BIT2 = bits / 2 */
    int tile_bytes;  /* planes * 256 */
    int code_offset; /* value = code - code_offset */
    bool verified;   /* checked on real data (8-bit only) */
} npk_mgk_bitwidth;
const npk_mgk_bitwidth *npk_mgk_bitwidth_by_bits(int bits);
const npk_mgk_bitwidth *npk_mgk_bitwidth_by_planes(int planes);

/* Codec flags. */
#define NPK_MGK_ALL_LANES  1u /* ignore cout/cin: use all 32*N x 32*M lanes */
#define NPK_MGK_NATIVE_3X3 2u /* 3x3 taps with the middle row stored reversed (unverified) */

typedef struct npk_mgk_wshape {
    int n_ofp, m_ifp, kh, kw, bits;
    int cout, cin; /* real channels; ignored with NPK_MGK_ALL_LANES */
    unsigned flags;
} npk_mgk_wshape;

/* Check a shape; give the encoded size and the OIHW element count. */
npk_status npk_mgk_wshape_check(const npk_mgk_wshape *s, size_t *block_bytes, size_t *oihw_count,
                                npk_error *err);
/* Decode an NMHWSOIB2 block into OIHW int8 values [cout][cin][kh][kw]. */
npk_status npk_mgk_nmhw_decode(const npk_mgk_wshape *s, const uint8_t *block, size_t block_len,
                               int8_t *oihw, npk_error *err);
/* Encode OIHW values into an existing block in place: only the fields of
 * real lanes are written, so padding-lane bytes keep their original values.
 * A value outside the bit width's range is NPK_E_ARG (message gives its
 * index); the block is then unchanged. */
npk_status npk_mgk_nmhw_encode(const npk_mgk_wshape *s, const int8_t *oihw, uint8_t *block,
                               size_t block_len, npk_error *err);
/* The codec path in use ("sse2+ssse3", "sse2" or "portable"); force the
 * portable path (1) or restore automatic selection (0), for tests and
 * benchmarks. */
const char *npk_mgk_codec_path(void);
void npk_mgk_codec_force_portable(int on);
/* Decode / re-encode one layer of a parsed model. */
npk_status npk_mgk_layer_wshape(const npk_mgk_conv *c, unsigned flags, npk_mgk_wshape *s,
                                npk_error *err);
npk_status npk_mgk_decode_layer(const npk_mgk_model *m, const npk_mgk_conv *c, unsigned flags,
                                int8_t *oihw, npk_error *err);

/* ---- requantisation tables ---- */

typedef enum npk_mgk_rq_form {
    NPK_MGK_RQ_UNKNOWN = 0,
    NPK_MGK_RQ_FLOAT,     /* 2 rows: int32 bias, fp32 scale */
    NPK_MGK_RQ_PACKED,    /* 2 rows: int32 bias, int32 multiplier */
    NPK_MGK_RQ_TWO_SLOPE, /* 3 rows: int32 bias, fp32 scale, fp32 second slope */
    NPK_MGK_RQ_FIVE_ROW   /* 5 int32 rows, meaning unknown */
} npk_mgk_rq_form;
const char *npk_mgk_rq_form_name(npk_mgk_rq_form f);

typedef struct npk_mgk_requant {
    int rows, channels; /* channels: real output channels (or all lanes) */
    int32_t *ints;      /* rows x channels, row r at ints + r * channels */
    float *floats;      /* the same words read as fp32 */
    npk_mgk_rq_form form;
    bool form_from_values; /* 2-row float/packed told apart by a value heuristic */
    /* Views into ints/floats, NULL where the form does not give them. */
    const int32_t *bias, *mult;
    const float *scale, *slope2;
} npk_mgk_requant;

/* Read a table of `rows` rows for n_ofp groups of 32 lanes from `table`
 * (n_ofp * rows * 128 bytes), keeping the first `channels` lanes. */
npk_status npk_mgk_requant_parse(const uint8_t *table, size_t len, int n_ofp, int rows,
                                 int channels, npk_mgk_requant *rq, npk_error *err);
npk_status npk_mgk_requant_read(const npk_mgk_model *m, const npk_mgk_conv *c, npk_mgk_requant *rq,
                                npk_error *err);
void npk_mgk_requant_free(npk_mgk_requant *rq);

/* ---- export and weight replacement ---- */

/* Tensors of every usable convolution: layer_<id>.weight int8 [Cout, Cin,
 * KH, KW]; layer_<id>.bias int32 [Cout], .scale float32 [Cout] (float and
 * two-slope tables), .mult int32 [Cout] (packed tables), and
 * layer_<id>.requant int32 [rows, Cout] (the raw table rows). */
npk_status npk_mgk_extract(const npk_mgk_model *m, npk_tensor_set *out, npk_error *err);

typedef struct npk_mgk_replace_stats {
    size_t layers;        /* layers re-encoded */
    size_t bytes_changed; /* bytes that differ from the input */
    size_t ignored;       /* tensors that are not layer_<id>.weight */
} npk_mgk_replace_stats;

/* Re-encode every layer whose layer_<id>.weight is in `w` into a copy of the
 * file (*out, malloc'd). Shapes must match exactly; integer dtypes only;
 * values must fit the layer's bit width. Every other byte is unchanged.
 * Errors about the model (a layer that cannot be re-encoded) carry the
 * layer record's offset and err->input 0; errors about the weights (no such
 * layer, shape, dtype, a value out of range) err->input 1. */
npk_status npk_mgk_replace(const npk_mgk_model *m, const npk_tensor_set *w, uint8_t **out,
                           size_t *out_len, npk_mgk_replace_stats *stats, npk_error *err);

/* ---- synthetic test files ---- */

/* A generator of small, structurally valid MGK files for tests and demos.
 * It follows the layout npukit parses; it is NOT a vendor-compatible
 * compiler and its files will not run on a device. */
typedef struct npk_mgk_synth_layer {
    int cin, cout, kh, kw, bits;
    int stride_h, stride_w; /* 0 means 1 */
    const int8_t *weights;  /* OIHW [cout][cin][kh][kw], or NULL for random values */
} npk_mgk_synth_layer;

typedef struct npk_mgk_synth_spec {
    const npk_mgk_synth_layer *layers;
    size_t nlayers;
    uint64_t seed;
    bool garbage;       /* fill the unused footer/table bytes like the vendor files do */
    bool extra_records; /* add a FormatConvert record and one of an unknown kind */
} npk_mgk_synth_spec;

npk_status npk_mgk_synth(const npk_mgk_synth_spec *spec, uint8_t **out, size_t *len,
                         npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
