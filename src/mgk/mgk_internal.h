/* Private helpers shared by the MGK parser, codec and writers. */
#ifndef NPK_MGK_INTERNAL_H
#define NPK_MGK_INTERNAL_H

#include "npukit/cursor.h"
#include "npukit/mgk.h"

/* Known record kinds (the kernel-id prefix), from mgk_table.c. */
typedef struct mgk_kind_info {
    const char *kind;
    const char *note;
} mgk_kind_info;
const mgk_kind_info *mgk_kind_lookup(npk_mgk_str kind);

/* Blob primitives: u32-length strings and counted vectors, capped. */
npk_status mgk_read_str(npk_cursor *c, npk_mgk_str *s, npk_error *err);
npk_status mgk_read_count(npk_cursor *c, uint32_t *n, size_t item_min, npk_error *err);
/* A vector<int> of at most `cap` items kept (more items are an error). */
npk_status mgk_read_ivec(npk_cursor *c, int32_t *v, uint32_t cap, uint32_t *n, npk_error *err);

/* Field readers for record bodies (mgk_fields.c): each appends a named field. */
typedef struct mgk_fdec {
    const npk_mgk_model *m;
    npk_mgk_record *r;
    npk_cursor *c;
    npk_error *err;
    npk_status st; /* first failure; later reads do nothing */
    uint32_t cap;  /* allocated fields */
} mgk_fdec;
int64_t mgk_f_int(mgk_fdec *d, npk_mgk_ftype t, const char *name, const char *meaning, bool known);
float mgk_f_f32(mgk_fdec *d, const char *name, const char *meaning, bool known);
uint32_t mgk_f_ivec(mgk_fdec *d, const char *name, const char *meaning, bool known, int32_t *out,
                    uint32_t cap);
uint32_t mgk_f_i64vec(mgk_fdec *d, const char *name, const char *meaning, bool known, int64_t *out,
                      uint32_t cap);
uint32_t mgk_f_f32vec(mgk_fdec *d, const char *name, const char *meaning, bool known, float *out,
                      uint32_t cap);
npk_mgk_str mgk_f_str(mgk_fdec *d, const char *name, const char *meaning, bool known);
void mgk_f_ivec3(mgk_fdec *d, const char *name, const char *meaning, bool known);
void mgk_f_bytes(mgk_fdec *d, size_t n, const char *name, const char *meaning, bool known);

/* Decode the body of record `idx` (cursor at the body, excluding the
 * trailer). Convolutions also fill m->convs. A body that does not match its
 * layout becomes one unknown field and a warning; only damage to the
 * convolution fields npukit needs is an error. */
npk_status mgk_decode_body(npk_mgk_model *m, size_t idx, npk_cursor *c, npk_error *err);
npk_mgk_kind mgk_kind_of(npk_mgk_str kind);
/* A file string as printable ASCII for messages (others become '?'). */
const char *mgk_printable(npk_mgk_str s, char *buf, size_t n);

/* GRU layers: locate their data through the constructor's calls (mgk_gru.c). */
npk_status mgk_find_grus(npk_mgk_model *m, npk_error *err);
/* Re-encode a GRU's W [ndir][3H][I] and R [ndir][3H][H] into a file copy. */
npk_status mgk_gru_encode(const npk_mgk_model *m, const npk_mgk_gru *g, const int8_t *w,
                          const int8_t *r, uint8_t *file, npk_error *err);

/* Immediate arguments of calls to a function, read from MIPS code (mgk_mips.c). */
#define MGK_CALL_SLOTS 64 /* outgoing argument words sp+0 .. sp+252 */
typedef struct mgk_callsite {
    uint32_t addr; /* address of the jalr */
    int32_t slot[MGK_CALL_SLOTS];
    uint64_t known; /* bit i: slot[i] holds an immediate stored by the caller */
} mgk_callsite;
/* Calls from the first function whose name starts with `caller` to the one
 * named `callee` (mangled names), located through the section headers or,
 * failing those, the dynamic segment. */
npk_status mgk_call_sites(const npk_mgk_model *m, const char *caller, const char *callee,
                          mgk_callsite **out, size_t *n, npk_error *err);

/* Add a warning to the model (never fails; extra warnings are counted). */
void mgk_warn(npk_mgk_model *m, uint64_t offset, const char *fmt, ...) NPK_PRINTF(3, 4);

npk_status mgk_parse_elf(const uint8_t *buf, size_t len, npk_mgk_elf *e, npk_error *err);
void mgk_free_elf(npk_mgk_elf *e);
npk_status mgk_parse_container(npk_mgk_model *m, npk_error *err);
npk_status mgk_parse_blob(npk_mgk_model *m, npk_error *err);
npk_status mgk_find_unassigned(npk_mgk_model *m, npk_error *err);

/* The fast 8-bit row kernels of the codec (mgk_codec.c). */
#endif
