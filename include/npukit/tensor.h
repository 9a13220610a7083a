/* Tensors and their two interchange formats: NumPy .npy and safetensors.
 *
 * A tensor's data is held in host byte order, C (row-major) order. Readers
 * convert from the file's little-endian bytes; writers convert back, so the
 * same code is correct on big-endian hosts. */
#ifndef NPUKIT_TENSOR_H
#define NPUKIT_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/file.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npk_dtype {
    NPK_DT_INVALID = 0,
    NPK_F32,
    NPK_F16,
    NPK_BF16,
    NPK_F64,
    NPK_I8,
    NPK_U8,
    NPK_I16,
    NPK_U16,
    NPK_I32,
    NPK_U32,
    NPK_I64,
    NPK_U64,
    NPK_BOOL
} npk_dtype;

#define NPK_MAX_DIMS 8
/* Largest dimension of any tensor, also of an empty one (4 GiB of bytes at most). */
#define NPK_MAX_DIM ((int64_t)1 << 32)
/* Limits applied to every tensor read from a file. */
#define NPK_MAX_TENSORS     65536
#define NPK_MAX_TENSOR_NAME 1024

size_t npk_dtype_size(npk_dtype dt);
/* Short lowercase name: "f32", "f16", "bf16", "i8", ... */
const char *npk_dtype_name(npk_dtype dt);
/* Parse a short name as printed by npk_dtype_name(); NPK_DT_INVALID if unknown. */
npk_dtype npk_dtype_from_name(const char *name);

typedef struct npk_tensor {
    char *name; /* owned, may be NULL */
    npk_dtype dtype;
    int ndim;
    int64_t shape[NPK_MAX_DIMS];
    void *data; /* owned, host byte order; never NULL after alloc (even if empty) */
    size_t nbytes;
    /* Where a tensor read from a file came from (set by the readers; 0 when
     * unknown), so errors about its shape or values can name file offsets:
     * the shape's place in the header, and the first element's. */
    uint64_t src_shape_offset;
    uint64_t src_data_offset;
    bool src_fortran; /* the file held it in column-major order */
} npk_tensor;

/* Allocate a zeroed tensor. name may be NULL. */
npk_status npk_tensor_alloc(npk_tensor *t, const char *name, npk_dtype dt, int ndim,
                            const int64_t *shape, npk_error *err);
void npk_tensor_free(npk_tensor *t);
/* Number of elements (product of the shape; 1 for a scalar). */
size_t npk_tensor_count(const npk_tensor *t);
/* Element count and byte size of a shape, overflow-checked. */
npk_status npk_shape_size(npk_dtype dt, int ndim, const int64_t *shape, size_t *count,
                          size_t *nbytes, npk_error *err);
/* Convert src's elements into dst (same element count, any dtypes). Floats
 * to integers round half to even; NaN or a value outside dst's range is an
 * error naming the element. */
npk_status npk_tensor_convert(const npk_tensor *src, npk_tensor *dst, npk_error *err);

/* What else npk_tensor_convert_ex refuses (flags, or'ed). */
enum {
    NPK_CONVERT_EXACT = 1,  /* a value that an integer dst cannot hold exactly (0.4 -> int8) */
    NPK_CONVERT_FINITE = 2, /* a finite value that becomes inf (1e6 -> f16) */
    NPK_CONVERT_NO_NAN = 4  /* NaN or inf in src, whatever dst is */
};
/* npk_tensor_convert with extra checks. Every error names the first
 * offending element by value and index ("[0, 1] (element 1)") and, for a
 * tensor read from a file, gives that element's file offset. */
npk_status npk_tensor_convert_ex(const npk_tensor *src, npk_tensor *dst, unsigned flags,
                                 npk_error *err);
/* "[i, j, ...]" of the element at C-order index i of t, into buf. */
const char *npk_index_str(const npk_tensor *t, size_t i, char *buf, size_t len);
/* File offset of element i of a tensor read from a file (0 when unknown). */
uint64_t npk_tensor_src_offset(const npk_tensor *t, size_t i);
/* "[2, 3, 4]" into buf. */
const char *npk_shape_str(const npk_tensor *t, char *buf, size_t len);

/* ---- NumPy .npy (format versions 1.0, 2.0 and 3.0) ---- */

/* What a .npy header says (the data length already checked against len). */
typedef struct npk_npy_header {
    npk_dtype dtype;
    int ndim;
    int64_t shape[NPK_MAX_DIMS];
    bool fortran_order; /* data in column-major order (npk_npy_parse transposes it) */
    bool swap;          /* data bytes in the other byte order than the host's */
    uint8_t major, minor;
    uint64_t data_offset;  /* where the data starts in the file */
    uint64_t shape_offset; /* where the shape is declared in the header */
    size_t nbytes;
} npk_npy_header;

/* Parse only the header: for summaries that must not touch (or copy) the data. */
npk_status npk_npy_parse_header(const uint8_t *buf, size_t len, npk_npy_header *h, npk_error *err);
/* Parse a whole .npy file held in memory; t receives an owned copy in C
 * order (Fortran-order files, as np.save(a.T) writes them, are transposed). */
npk_status npk_npy_parse(const uint8_t *buf, size_t len, npk_tensor *t, npk_error *err);
npk_status npk_npy_load(const char *path, npk_tensor *t, npk_error *err);
/* Serialise t (version 1.0 header unless it needs 2.0) into a new buffer. */
npk_status npk_npy_encode(const npk_tensor *t, uint8_t **out, size_t *len, npk_error *err);
/* Write into an open output (a file, or a file of an output directory),
 * without a copy of the data on little-endian hosts. */
npk_status npk_npy_write(npk_out *o, const npk_tensor *t, npk_error *err);
/* Write atomically. */
npk_status npk_npy_save(const char *path, const npk_tensor *t, npk_error *err);
/* Write as file `name` of an output directory (see npk_outdir_name()). */
npk_status npk_npy_save_in(npk_outdir *d, const char *name, const npk_tensor *t, npk_error *err);

/* ---- safetensors ---- */

typedef struct npk_tensor_set {
    npk_tensor *items;
    size_t count;
    size_t cap;
} npk_tensor_set;

void npk_set_init(npk_tensor_set *s);
void npk_set_free(npk_tensor_set *s);
/* Append a tensor (ownership moves into the set; *t is zeroed). */
npk_status npk_set_add(npk_tensor_set *s, npk_tensor *t, npk_error *err);
npk_tensor *npk_set_find(const npk_tensor_set *s, const char *name);

/* True when this build has safetensors support (it needs the JSON library). */
bool npk_safetensors_available(void);
npk_status npk_st_parse(const uint8_t *buf, size_t len, npk_tensor_set *s, npk_error *err);
/* The same checks, but the tensors get no data (data NULL, nbytes set):
 * for listings and summaries that must not copy gigabytes. */
npk_status npk_st_parse_header(const uint8_t *buf, size_t len, npk_tensor_set *s, npk_error *err);
npk_status npk_st_load(const char *path, npk_tensor_set *s, npk_error *err);
npk_status npk_st_encode(const npk_tensor *ts, size_t n, uint8_t **out, size_t *len,
                         npk_error *err);
npk_status npk_st_save(const char *path, const npk_tensor *ts, size_t n, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
