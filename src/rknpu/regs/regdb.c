/* The register database: the X-macro table of npukit/rknpu_regtab.h expanded
 * into constant arrays of blocks, registers and fields, plus lookups. */
#include <string.h>

#include "npukit/rknpu_regs.h"

/* First and one-past-last field index of every register, as constants. */
enum {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)                                                            \
    FIRST_##b##_##name, FIRSTX_##b##_##name = FIRST_##b##_##name - 1,
#define NPK_RK_FLD(b, r, f, hi, lo) FLD_##b##_##r##_##f,
#define NPK_RK_END(b, r)            END_##b##_##r, ENDX_##b##_##r = END_##b##_##r - 1,
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
    FIELD_TOTAL
};
_Static_assert((int)FIELD_TOTAL == (int)NPK_RKF_COUNT, "field enumerations disagree");

const npk_rk_block_info npk_rk_block_table[NPK_RKB_COUNT] = {
#define NPK_RK_BLOCK(b, code, base) {#b, code, base},
#define NPK_RK_REG(b, off, name, undoc)
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

const npk_rk_reg_info npk_rk_reg_table[NPK_RKR_COUNT] = {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)                                                            \
    {NPK_RKB_##b,                                                                                  \
     off,                                                                                          \
     undoc,                                                                                        \
     #name,                                                                                        \
     #b "_" #name,                                                                                 \
     (npk_rk_field)FIRST_##b##_##name,                                                             \
     (unsigned)(END_##b##_##name - FIRST_##b##_##name)},
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

const npk_rk_field_info npk_rk_field_table[NPK_RKF_COUNT] = {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)
#define NPK_RK_FLD(b, r, f, hi, lo) {NPK_RKR_##b##_##r, #f, hi, lo},
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

/* Register by offset as one load: a slot per 4 bytes of the first 512
 * of each 4 KiB block (every register lies there: checked below), holding
 * the register + 1 (0: none). 4 KiB, where a bisection of the records
 * is a chain of eight dependent loads for every stream entry decoded. */
#define REG_SLOT(off) ((((off) >> 12) << 7) | (((off)&0xFFF) >> 2))
enum {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc)                                                            \
    SLOT_OK_##b##_##name = 1 / ((off) % 4 == 0 && ((off)&0xFFF) < 512),
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};
static const uint16_t reg_slots[16 << 7] = {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc) [REG_SLOT(off)] = NPK_RKR_##b##_##name + 1,
#define NPK_RK_FLD(b, r, f, hi, lo)
#define NPK_RK_END(b, r)
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};
_Static_assert(NPK_RKR_COUNT < UINT16_MAX, "register numbers fit the slots");

#define blocks npk_rk_block_table
#define regs   npk_rk_reg_table
#define fields npk_rk_field_table

npk_rk_reg npk_rk_reg_by_offset(uint16_t offset)
{
    if (offset % 4 || (offset & 0xFFF) >= 512) return NPK_RKR_NONE;
    const unsigned v = reg_slots[REG_SLOT(offset)];
    return v ? (npk_rk_reg)(v - 1) : NPK_RKR_NONE;
}

npk_rk_reg npk_rk_reg_by_name(const char *full_name)
{
    for (int i = 0; i < NPK_RKR_COUNT; i++)
        if (strcmp(regs[i].full_name, full_name) == 0) return (npk_rk_reg)i;
    return NPK_RKR_NONE;
}

npk_rk_field npk_rk_field_by_name(npk_rk_reg r, const char *name)
{
    const npk_rk_reg_info *ri = npk_rk_reg_get(r);
    if (!ri) return NPK_RKF_NONE;
    for (unsigned i = 0; i < ri->field_count; i++)
        if (strcmp(fields[ri->first_field + i].name, name) == 0)
            return (npk_rk_field)(ri->first_field + i);
    return NPK_RKF_NONE;
}

npk_rk_block npk_rk_block_by_name(const char *name)
{
    for (int i = 0; i < NPK_RKB_COUNT; i++)
        if (strcmp(blocks[i].name, name) == 0) return (npk_rk_block)i;
    return NPK_RKB_NONE;
}

npk_rk_block npk_rk_block_by_code(uint32_t code)
{
    for (int i = 0; i < NPK_RKB_COUNT; i++)
        if (blocks[i].code == code) return (npk_rk_block)i;
    return NPK_RKB_NONE;
}

npk_rk_block npk_rk_block_of_offset(uint16_t offset)
{
    for (int i = 0; i < NPK_RKB_COUNT; i++)
        if ((offset & 0xF000u) == blocks[i].base) return (npk_rk_block)i;
    return NPK_RKB_NONE;
}
