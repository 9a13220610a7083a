/* RK3588 NPU register database: identifiers and lookups.
 *
 * Everything here is derived from the one table in npukit/rknpu_regtab.h:
 *   - npk_rk_block: the ten blocks (NPK_RKB_CNA, ...);
 *   - npk_rk_reg: one identifier per register, NPK_RKR_<BLOCK>_<NAME>
 *     (e.g. NPK_RKR_CNA_CONV_CON2), in table order (blocks, then offsets);
 *   - npk_rk_field: one identifier per bitfield, NPK_RKF_<BLOCK>_<NAME>_<FIELD>
 *     (e.g. NPK_RKF_CNA_CONV_CON2_FEATURE_GRAINS).
 * Code that programs or interprets registers names them through these
 * identifiers; offsets and bit ranges come from the table at run time. */
#ifndef NPUKIT_RKNPU_REGS_H
#define NPUKIT_RKNPU_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npk_rk_block {
#define NPK_RK_BLOCK(b, code, base) NPK_RKB_##b,
#define NPK_RK_REG(b, off, name, undoc)
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
    NPK_RKB_COUNT,
    NPK_RKB_NONE = -1
} npk_rk_block;

typedef enum npk_rk_reg {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc) NPK_RKR_##b##_##name,
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
    NPK_RKR_COUNT,
    NPK_RKR_NONE = -1
} npk_rk_reg;

typedef enum npk_rk_field {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)
#define NPK_RK_FLD(b, r, f, hi, lo) NPK_RKF_##b##_##r##_##f,
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
    NPK_RKF_COUNT,
    NPK_RKF_NONE = -1
} npk_rk_field;

typedef struct npk_rk_block_info {
    const char *name; /* "CNA" */
    uint32_t code;    /* target code in a stream entry's op (only < 0x10000 fit) */
    uint16_t base;    /* MMIO base of the block's registers */
} npk_rk_block_info;

typedef struct npk_rk_reg_info {
    npk_rk_block block;
    uint16_t offset;       /* full MMIO offset, e.g. 0x100C */
    bool undocumented;     /* written by known streams but absent from the XML */
    const char *name;      /* "CONV_CON1" */
    const char *full_name; /* "CNA_CONV_CON1" */
    npk_rk_field first_field;
    unsigned field_count;
} npk_rk_reg_info;

typedef struct npk_rk_field_info {
    npk_rk_reg reg;
    const char *name; /* "FEATURE_GRAINS" */
    uint8_t hi, lo;   /* bit range, inclusive */
} npk_rk_field_info;

/* The tables themselves (regdb.c), indexed by the identifiers above. */
extern const npk_rk_block_info npk_rk_block_table[NPK_RKB_COUNT];
extern const npk_rk_reg_info npk_rk_reg_table[NPK_RKR_COUNT];
extern const npk_rk_field_info npk_rk_field_table[NPK_RKF_COUNT];

/* Table access; NULL for an identifier out of range. */
static inline const npk_rk_block_info *npk_rk_block_get(npk_rk_block b)
{
    return (unsigned)b < (unsigned)NPK_RKB_COUNT ? &npk_rk_block_table[b] : NULL;
}
static inline const npk_rk_reg_info *npk_rk_reg_get(npk_rk_reg r)
{
    return (unsigned)r < (unsigned)NPK_RKR_COUNT ? &npk_rk_reg_table[r] : NULL;
}
static inline const npk_rk_field_info *npk_rk_field_get(npk_rk_field f)
{
    return (unsigned)f < (unsigned)NPK_RKF_COUNT ? &npk_rk_field_table[f] : NULL;
}

/* Lookups by offset and by name; NPK_RKR_NONE / NPK_RKF_NONE / NPK_RKB_NONE
 * when there is no such register. Names are "CNA_CONV_CON1" (full) and, for
 * fields, "FEATURE_GRAINS" inside a given register. */
npk_rk_reg npk_rk_reg_by_offset(uint16_t offset);
npk_rk_reg npk_rk_reg_by_name(const char *full_name);
npk_rk_field npk_rk_field_by_name(npk_rk_reg r, const char *name);
npk_rk_block npk_rk_block_by_name(const char *name);
/* The block whose op code is exactly `code` (0x0200 -> CNA). */
npk_rk_block npk_rk_block_by_code(uint32_t code);
/* The block whose MMIO window (base .. base+0xFFF) holds `offset`. */
npk_rk_block npk_rk_block_of_offset(uint16_t offset);

/* Field accessors (inline: the generator packs dozens per stream). Width is
 * hi-lo+1 (1..32); an invalid identifier behaves as a zero-width field. */
static inline unsigned npk_rk_field_width(npk_rk_field f)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    return fi ? (unsigned)(fi->hi - fi->lo + 1) : 0;
}
/* Largest value that fits. */
static inline uint32_t npk_rk_field_max(npk_rk_field f)
{
    unsigned w = npk_rk_field_width(f);
    return (uint32_t)((1ull << w) - 1);
}
/* The field's bits in place, e.g. 0x3FF0. */
static inline uint32_t npk_rk_field_mask(npk_rk_field f)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    return fi ? npk_rk_field_max(f) << fi->lo : 0;
}
/* The field's value inside a register value. */
static inline uint32_t npk_rk_field_extract(npk_rk_field f, uint32_t reg_value)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    return fi ? (reg_value >> fi->lo) & npk_rk_field_max(f) : 0;
}
/* v placed at the field's position; false (and *out untouched) if v does
 * not fit in the field. */
static inline bool npk_rk_field_pack(npk_rk_field f, uint64_t v, uint32_t *out)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    if (!fi || v > npk_rk_field_max(f)) return false;
    *out = (uint32_t)v << fi->lo;
    return true;
}
/* reg_value with the field replaced by v (v masked to the field width). */
static inline uint32_t npk_rk_field_insert(npk_rk_field f, uint32_t reg_value, uint32_t v)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    if (!fi) return reg_value;
    uint32_t m = npk_rk_field_mask(f);
    return (reg_value & ~m) | ((v << fi->lo) & m);
}

#ifdef __cplusplus
}
#endif
#endif
