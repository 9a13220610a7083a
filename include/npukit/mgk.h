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
    const char *why;       /* static explanation of an unassigned range, or NULL */
} npk_mgk_range;

/* ---- the `model` blob ---- */

typedef struct npk_mgk_tensor_ref {
    npk_mgk_str name, format, type; /* e.g. "x.43", "NDHWC32", "UINT8" */
    int32_t id;
} npk_mgk_tensor_ref;

/* ---- decoded record bodies ----
 * Every body is decoded into named fields (docs/mgk.md "Record bodies" gives
 * the evidence for each). A field the project cannot interpret is still
 * decoded by its type and flagged `known = false`; a body that does not
 * match its kind's layout is kept as one unknown BYTES field (and a warning). */

typedef enum npk_mgk_kind {
    NPK_MGK_K_UNKNOWN = 0,
    NPK_MGK_K_CONV,
    NPK_MGK_K_FORMAT_CONVERT,
    NPK_MGK_K_RESHAPE,
    NPK_MGK_K_CONCAT,
    NPK_MGK_K_GRU,
    NPK_MGK_K_NORMALIZE,
    NPK_MGK_K_ADD,
    NPK_MGK_K_UPSAMPLE,
    NPK_MGK_K_PERMUTE
} npk_mgk_kind;

typedef enum npk_mgk_ftype {
    NPK_MGK_F_U8,
    NPK_MGK_F_U16,
    NPK_MGK_F_I32,
    NPK_MGK_F_U32,
    NPK_MGK_F_I64,
    NPK_MGK_F_F32,
    NPK_MGK_F_IVEC,   /* u32 count, i32 items */
    NPK_MGK_F_I64VEC, /* u32 count, i64 items */
    NPK_MGK_F_F32VEC, /* u32 count, f32 items */
    NPK_MGK_F_IVEC3,  /* vector<vector<vector<int>>>: kept as bytes, `count` outer items */
    NPK_MGK_F_STR,    /* u32 length, bytes */
    NPK_MGK_F_BYTES   /* raw bytes of unknown meaning */
} npk_mgk_ftype;

typedef struct npk_mgk_field {
    const char *name;    /* static, e.g. "out_shape" */
    const char *meaning; /* static one-line meaning with its evidence tag, or "unknown" */
    npk_mgk_ftype type;
    bool known;      /* false: decoded by type only, meaning not established */
    uint64_t offset; /* file offset of the field */
    uint32_t size;   /* bytes */
    uint32_t count;  /* items of a vector, bytes of a string or raw field */
    uint64_t data;   /* file offset of the first item */
    int64_t i;       /* scalar value (integers); bits for F32 */
    double f;        /* F32 value */
} npk_mgk_field;

#define NPK_MGK_MAX_TB     8 /* inputs/outputs described by one tensor block */
#define NPK_MGK_MAX_RANK   8
#define NPK_MGK_MAX_INPUTS 8 /* inputs of Concat/Add records */

/* The tensor block that ends every body (read_tensor_param + its tail). */
typedef struct npk_mgk_tblock {
    bool present;
    uint8_t flag;
    uint32_t nshapes;
    int32_t shape[NPK_MGK_MAX_TB][NPK_MGK_MAX_RANK];
    uint32_t rank[NPK_MGK_MAX_TB];
    int32_t index, one;
    uint32_t nout_off, nin_off;
    int64_t out_off[NPK_MGK_MAX_TB], in_off[NPK_MGK_MAX_TB];
    bool has_tail; /* false for Gru bodies, which end after the output offsets */
} npk_mgk_tblock;

/* Typed view of the decoded fields (what the graph and the export use). */
typedef struct npk_mgk_params {
    npk_mgk_kind kind;
    bool decoded; /* the body matched its layout */
    npk_mgk_tblock tb;
    int32_t q; /* first word: zero points (kind-specific, see docs) */
    /* FormatConvert */
    int32_t fc_channels, fc_direction; /* direction 0: NHWC -> NDHWC32, 1: back */
    /* Normalize (per-channel y = x * scale + bias in code units) */
    int32_t nz_bias_count, nz_scale_count;
    int64_t nz_bias_offset, nz_scale_offset; /* relative to the weight region */
    /* Add */
    int32_t add_mode;
    uint32_t add_ninputs;
    int32_t add_w[NPK_MGK_MAX_INPUTS];
    float add_mult, add_bias;
    /* Concat */
    float cat_inv_scale;
    uint32_t cat_ninputs;
    int32_t cat_zp[NPK_MGK_MAX_INPUTS];
    float cat_scale[NPK_MGK_MAX_INPUTS];
    /* UpSample */
    int32_t up_mode;
    uint32_t up_nscales;
    float up_scales[NPK_MGK_MAX_RANK];
} npk_mgk_params;

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
    int gru;                         /* index into npk_mgk_model.grus, or -1 */
    npk_mgk_field *fields;           /* the decoded body */
    uint32_t nfields;
    npk_mgk_params p;
} npk_mgk_record;

typedef struct npk_mgk_conv {
    size_t record; /* index into records; also the layer id */
    int id;        /* layer id used by extract/replace: layer_<id>.weight */
    /* read_layer_param (18 bytes), then the fixed fields, in the read order
     * of conv2d_int8_param_init (docs/mgk.md "Convolution"). */
    int32_t zp_word;     /* ConvOp +0x9C: low 16 bits input zero point, high 16 output's */
    uint16_t rq_code;    /* +0xA4: requant-mode code (1 or 2 in the fixture) */
    uint64_t clamp_word; /* +0xA8: clamp/zero-point word (0 or 0xffff in the fixture) */
    uint32_t mode;     /* +0xB0: & 7 = 1 float (MXU) requant, 2 hardware packed; bit 3 two-slope */
    int32_t rows_flag; /* +0xE4 */
    uint32_t nrows_a, nrows_b; /* two vectors whose first items overwrite +0xE0/+0xE4 (empty) */
    int32_t unknown_a;         /* +0xFC: 2 for 1x3/1x5, 1 for 1x1 layers in the fixture */
    int32_t cin, cout;         /* real channel counts as stored */
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
    int32_t counts[3];    /* element counts: weights (2-bit fields), requant words, third */
    int64_t offsets[3];   /* relative to the weight region */
    uint32_t nfourth;     /* a fourth tensor: shape items, element count, offset */
    int32_t fourth_count; /* (empty, 0, 0 in the fixture) */
    int64_t fourth_offset;
    uint64_t shape_pos;              /* file offset of the weight_shape count word */
    uint64_t tail_offset, tail_size; /* undecoded bytes before the trailer (0 when decoded) */
    /* Derived and checked. */
    bool usable;       /* the weights can be decoded */
    bool requant_ok;   /* the requantisation table can be read */
    char problem[160]; /* why not, or a note (e.g. all lanes used) */
    int bits, planes, n_ofp, m_ifp, kh, kw, m_bt;
    int out_channels, in_channels; /* used for unpadding */
    bool unpadded;                 /* false when Cin/Cout do not fit the shape (all lanes used) */
    uint64_t weight_offset, weight_bytes, requant_offset, requant_bytes;
} npk_mgk_conv;

/* A GRU layer. Its weight and table offsets are not in the blob: the
 * generated constructor passes them to gru_param_init as immediates, and
 * npukit reads them from that call (docs/mgk.md "GRU"). */
typedef struct npk_mgk_gru {
    size_t record; /* index into records; also the layer id */
    int id;
    bool located;          /* the gru_param_init call of this record was found */
    bool usable;           /* weights and tables can be decoded */
    char problem[160];     /* why not */
    uint32_t call_addr;    /* address of the call in the constructor */
    int32_t arg_out_id;    /* argument 6, must equal the record's output id */
    int32_t arg_hidden;    /* argument 9: hidden size */
    int32_t arg_zps;       /* argument 16: low 16 bits input zero point, high hidden's */
    int64_t weight_offset; /* argument 21, relative to the weight region */
    int64_t table_offset;  /* argument 22: biases, scales, hidden quantisation */
    int batch, seq, ndir, hidden, input;
    int n_ofp, m_ifp, planes, bits; /* the NMHWSOIB2 block: [3H*ndir/32, (I+H)/32, 1, 1, S] */
    uint64_t weight_bytes, table_bytes;
    int in_zp, h_zp;
} npk_mgk_gru;

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
    npk_mgk_gru *grus;
    size_t ngrus;
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
/* The GRU with layer id `id`, or NULL. */
const npk_mgk_gru *npk_mgk_find_gru(const npk_mgk_model *m, int id);
/* Kind of a record and its name ("Convolution", ..., "unknown"). */
const char *npk_mgk_kind_name(npk_mgk_kind k);
/* A field of a record by name, or NULL. */
const npk_mgk_field *npk_mgk_field_get(const npk_mgk_record *r, const char *name);
/* A field's value as text (vectors show at most max_items items); returns
 * the length it needed. Strings are escaped to printable ASCII. */
size_t npk_mgk_field_format(const npk_mgk_model *m, const npk_mgk_field *f, char *buf, size_t n,
                            uint32_t max_items);
const char *npk_mgk_ftype_name(npk_mgk_ftype t);
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

/* ---- GRU weights ---- */

/* A GRU's tensors, gate order z, r, h within each direction (docs/mgk.md). */
typedef struct npk_mgk_gru_tensors {
    int ndir, hidden, input;
    int8_t *w;        /* [ndir][3H][I] input weights */
    int8_t *r;        /* [ndir][3H][H] recurrent weights */
    int32_t *wb, *rb; /* [ndir][3H] int32 biases of the input and recurrent products */
    float *ws, *rs;   /* [ndir][3H] fp32 scales of the same */
    float *h_scale;   /* [H] scale of the quantised hidden state */
    int32_t *h_zp;    /* [ndir] zero point of the hidden state */
} npk_mgk_gru_tensors;

npk_status npk_mgk_gru_read(const npk_mgk_model *m, const npk_mgk_gru *g, npk_mgk_gru_tensors *t,
                            npk_error *err);
void npk_mgk_gru_tensors_free(npk_mgk_gru_tensors *t);

/* ---- export and weight replacement ---- */

/* Tensors of every usable convolution: layer_<id>.weight int8 [Cout, Cin,
 * KH, KW]; layer_<id>.bias int32 [Cout], .scale float32 [Cout] (float and
 * two-slope tables), .mult int32 [Cout] (packed tables), and
 * layer_<id>.requant int32 [rows, Cout] (the raw table rows). Every usable
 * GRU: layer_<id>.W int8 [ndir, 3H, I], .R int8 [ndir, 3H, H], .Wb/.Rb int32
 * [ndir, 3H], .Ws/.Rs float32 [ndir, 3H], .h_scale float32 [H], .h_zp int32
 * [ndir]. */
npk_status npk_mgk_extract(const npk_mgk_model *m, npk_tensor_set *out, npk_error *err);

typedef struct npk_mgk_replace_stats {
    size_t layers;        /* layers re-encoded */
    size_t bytes_changed; /* bytes that differ from the input */
    size_t ignored;       /* tensors that are not layer_<id>.weight */
} npk_mgk_replace_stats;

/* Re-encode every layer whose layer_<id>.weight (convolutions) or
 * layer_<id>.W / .R (GRUs) is in `w` into a copy of the file (*out,
 * malloc'd). Shapes must match exactly; integer dtypes only; values must fit
 * the layer's bit width. Every other byte is unchanged.
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
    int height, width;  /* input feature map (0: 8 x 8) */
} npk_mgk_synth_spec;

npk_status npk_mgk_synth(const npk_mgk_synth_spec *spec, uint8_t **out, size_t *len,
                         npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
