/* RKNPU register-command streams: 64-bit entries and whole streams.
 *
 * An entry is a little-endian u64: op (bits 63:48, block code | flags),
 * 32-bit value (47:16), 16-bit register offset (15:0). Decoding classifies
 * each entry and resolves its register through the register table; nothing
 * is dropped: entries that do not make sense are returned with flags saying
 * why. */
#ifndef NPUKIT_RKNPU_STREAM_H
#define NPUKIT_RKNPU_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/rknpu_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags in the low byte of an op. */
#define NPK_RK_OP_WRITE     0x0001u /* register write to the block in the high byte */
#define NPK_RK_OP_MARKER    0x0041u /* must precede the operation-enable entry */
#define NPK_RK_OP_ENABLE    0x0081u /* operation enable: value = block mask */
#define NPK_RK_TAIL_ENTRIES 4       /* next-address, amounts, marker, enable */

typedef enum npk_rk_kind {
    NPK_RK_NOP,       /* a raw zero word */
    NPK_RK_WRITE,     /* register write */
    NPK_RK_MARKER,    /* 0x0041 entry */
    NPK_RK_OP_EN,     /* 0x0081 operation enable */
    NPK_RK_UNKNOWN_OP /* an op code no known stream uses */
} npk_rk_kind;

/* Problems found in one entry (bit set). */
enum {
    NPK_RK_BAD_OP = 1u << 0,         /* unknown op code */
    NPK_RK_BAD_REG = 1u << 1,        /* register offset not in the table */
    NPK_RK_BAD_BLOCK = 1u << 2,      /* register belongs to another block than the op's */
    NPK_RK_BAD_PAYLOAD = 1u << 3,    /* marker/zero op with a non-zero value or register */
    NPK_RK_BAD_ENABLE_REG = 1u << 4, /* operation enable not aimed at 0x0008 */
    NPK_RK_BAD_BITS = 1u << 5        /* value has bits outside every named field */
};

typedef struct npk_rk_entry {
    uint64_t raw;
    uint16_t op;
    uint32_t value;
    uint16_t offset; /* register offset (bits 15:0) */
    npk_rk_kind kind;
    npk_rk_block block; /* from the op (writes), else NPK_RKB_NONE */
    npk_rk_reg reg;     /* the register written, NPK_RKR_NONE if unknown */
    npk_rk_reg layout;  /* the register whose fields describe value (differs
                           from reg for operation enable: GLOBAL_OPERATION_ENABLE) */
    unsigned problems;  /* NPK_RK_BAD_* */
} npk_rk_entry;

static inline uint64_t npk_rk_entry_encode(uint16_t op, uint32_t value, uint16_t offset)
{
    return ((uint64_t)op << 48) | ((uint64_t)value << 16) | offset;
}
/* A register write entry; 0 (a NOP) if the register's block cannot be
 * addressed from a stream (DDMA, SDMA, GLOBAL) or r is invalid. */
uint64_t npk_rk_write(npk_rk_reg r, uint32_t value);
/* The op of a write to register r (block code | NPK_RK_OP_WRITE), 0 if none. */
uint16_t npk_rk_write_op(npk_rk_reg r);

void npk_rk_entry_decode(uint64_t raw, npk_rk_entry *e);
/* One-line description of an entry's problems ("unknown register 0x1234"). */
const char *npk_rk_problem_text(unsigned problems);

/* ---- whole streams ---- */

#define NPK_RK_STREAM_MAX_ENTRIES (1u << 24) /* 128 MiB of entries */

typedef enum npk_rk_encoding { NPK_RK_ENC_AUTO, NPK_RK_ENC_BINARY, NPK_RK_ENC_HEX } npk_rk_encoding;

typedef struct npk_rk_stream {
    uint64_t *entries; /* raw words, host order */
    uint64_t *src_off; /* file offset of each entry (for messages) */
    size_t count;
    npk_rk_encoding encoding; /* what was read: BINARY or HEX */
} npk_rk_stream;

/* True when buf is meant as hex text: its first line that is neither blank
 * nor a '#' comment is one 16-digit word. (A later malformed line, e.g. in a
 * cut file, is then an error at its offset rather than a reason to read the
 * text as binary entries.) */
bool npk_rk_is_hex_text(const uint8_t *buf, size_t len);
/* Read a stream from bytes: binary (length a multiple of 8) or hex text.
 * AUTO picks hex text when npk_rk_is_hex_text() says so. */
npk_status npk_rk_stream_parse(const uint8_t *buf, size_t len, npk_rk_encoding enc,
                               npk_rk_stream *s, npk_error *err);
void npk_rk_stream_free(npk_rk_stream *s);
/* Visit every entry without storing the stream (fn may be NULL to only
 * validate and count). `used` receives the encoding that was read. */
typedef void (*npk_rk_entry_fn)(void *ctx, uint64_t raw, uint64_t file_offset);
npk_status npk_rk_stream_walk(const uint8_t *buf, size_t len, npk_rk_encoding enc,
                              npk_rk_entry_fn fn, void *ctx, size_t *count, npk_rk_encoding *used,
                              npk_error *err);

/* Serialise entries: binary (8 bytes each, little-endian) or hex text
 * (16 lowercase digits and '\n' each, 17 bytes). */
void npk_rk_stream_to_bin(const uint64_t *e, size_t n, uint8_t *out);
void npk_rk_stream_to_hex(const uint64_t *e, size_t n, char *out);

/* Facts about a stream, for summaries and checks. */
typedef struct npk_rk_stream_stats {
    size_t entries, writes, nops, markers, op_enables, unknown_ops;
    size_t unknown_regs;     /* writes to offsets not in the table */
    size_t block_mismatch;   /* writes whose register is in another block */
    size_t undocumented;     /* writes to the undocumented registers */
    size_t chain_links;      /* PC_BASE_ADDRESS writes with a non-zero address */
    unsigned blocks_written; /* bit per npk_rk_block */
    uint32_t enable_masks;   /* OR of all operation-enable values */
    size_t first_problem;    /* index of the first entry with problems, or SIZE_MAX */
} npk_rk_stream_stats;

void npk_rk_stream_stats_of(const uint64_t *e, size_t n, npk_rk_stream_stats *st);
/* Incremental form: clear once, then add entries in order. */
void npk_rk_stream_stats_init(npk_rk_stream_stats *st);
void npk_rk_stream_stats_add(npk_rk_stream_stats *st, uint64_t raw);

/* ---- disassembly ---- */

/* Short names: "nop", "write", "marker", "op-enable", "unknown-op". */
const char *npk_rk_kind_name(npk_rk_kind k);
/* Names of the problem bits set in `problems`, one per call: pass the bit. */
const char *npk_rk_problem_name(unsigned bit); /* "unknown-register", ... */
/* One text line for entry `index` (no newline): index, raw word, block,
 * register offset and name, value, every field of the value's layout as
 * NAME=value, and "!! problem" for anything odd. Returns the length it
 * needed (like snprintf). */
size_t npk_rk_disasm_entry(size_t index, const npk_rk_entry *e, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
