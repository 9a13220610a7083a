/* Immediate arguments of calls in the generated MIPS code. The vendor
 * compiler emits the constructor of an MGK model as straight-line o32 code
 * that stores each call's stack arguments with `sw reg, off(sp)` after
 * loading constants with lui/ori/addiu; some layer parameters (the GRU's
 * weight offsets) exist only there. This reads, for every call to one
 * function, which outgoing argument words hold a constant and its value. It
 * is a bounded, forward-only evaluation of a few instructions: anything it
 * does not model makes the registers it writes unknown. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "mgk_internal.h"

#define MAX_INSNS (1u << 22) /* a function larger than 16 MB is refused */
#define REG_SP    29
#define REG_S8    30
#define REG_GP    28
#define REG_T9    25

typedef struct regs {
    uint32_t v[32];
    uint32_t known; /* bit r: v[r] is a known constant */
} regs;

/* A defined symbol named `name` (or starting with it, if prefix). */
static const npk_mgk_symbol *find_symbol(const npk_mgk_elf *e, const char *name, bool prefix)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < e->nsymbols; i++) {
        npk_mgk_str s = e->symbols[i].name;
        if (prefix ? s.len >= n && !memcmp(s.s, name, n) : npk_mgk_str_eq(s, name))
            return &e->symbols[i];
    }
    return NULL;
}

static const npk_mgk_elf_section *find_section(const npk_mgk_elf *e, const char *name)
{
    for (size_t i = 0; i < e->nsections; i++)
        if (npk_mgk_str_eq(e->sections[i].name, name)) return &e->sections[i];
    return NULL;
}

/* The allocated section holding [addr, addr + size) with file bytes. */
static const npk_mgk_elf_section *section_of(const npk_mgk_elf *e, uint32_t addr, uint32_t size)
{
    for (size_t i = 0; i < e->nsections; i++) {
        const npk_mgk_elf_section *s = &e->sections[i];
        if (!(s->flags & 2) || s->type == 8 /* NOBITS */) continue;
        if (addr >= s->addr && size <= s->size && addr - s->addr <= s->size - size) return s;
    }
    return NULL;
}

static void set_reg(regs *r, unsigned n, uint32_t v, bool known)
{
    if (n == 0) return;
    r->v[n] = v;
    if (known)
        r->known |= 1u << n;
    else
        r->known &= ~(1u << n);
}

static bool reg_known(const regs *r, unsigned n)
{
    return n == 0 || (r->known >> n) & 1u;
}

static uint32_t reg(const regs *r, unsigned n)
{
    return n == 0 ? 0 : r->v[n];
}

/* Registers a call leaves undefined (o32: everything but s0-s8, sp, gp). */
static void clobber(regs *r)
{
    r->known &= (0xFFu << 16) | (1u << REG_SP) | (1u << REG_S8) | (1u << REG_GP);
}

typedef struct got_view {
    uint32_t addr, size;
    const uint8_t *bytes;
    uint32_t gp;
} got_view;

/* Evaluate one instruction; returns 1 for a call (its delay slot follows). */
static int step(uint32_t w, uint32_t pc, regs *r, mgk_callsite *cur, const got_view *got,
                uint32_t *target)
{
    unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31, rd = (w >> 11) & 31;
    unsigned funct = w & 63;
    uint32_t imm = w & 0xFFFF;
    int32_t simm = (int16_t)imm;
    switch (op) {
    case 0x00:               /* SPECIAL */
        if (funct == 0x09) { /* jalr rd, rs */
            *target = reg_known(r, rs) ? reg(r, rs) : 0;
            set_reg(r, rd, 0, false);
            return 1;
        }
        if (funct == 0x25 || funct == 0x21) { /* or / addu */
            bool k = reg_known(r, rs) && reg_known(r, rt);
            uint32_t v = funct == 0x25 ? (reg(r, rs) | reg(r, rt)) : reg(r, rs) + reg(r, rt);
            set_reg(r, rd, v, k);
        } else if (funct != 0x08 && funct != 0x0F && funct != 0x0C && funct != 0x0D &&
                   !(funct >= 0x18 && funct <= 0x1B)) {
            set_reg(r, rd, 0, false); /* any other R-type writes rd */
        }
        return 0;
    case 0x01:                          /* REGIMM */
        if (rt == 0x11 || rt == 0x10) { /* bal / bltzal */
            *target = pc + 4 + (uint32_t)(simm * 4);
            set_reg(r, 31, 0, false);
            return 1;
        }
        return 0;
    case 0x03: /* jal */
        *target = ((pc + 4) & 0xF0000000u) | ((w & 0x03FFFFFFu) << 2);
        set_reg(r, 31, 0, false);
        return 1;
    case 0x09: set_reg(r, rt, reg(r, rs) + (uint32_t)simm, reg_known(r, rs)); return 0; /* addiu */
    case 0x0C: set_reg(r, rt, reg(r, rs) & imm, reg_known(r, rs)); return 0;            /* andi */
    case 0x0D: set_reg(r, rt, reg(r, rs) | imm, reg_known(r, rs)); return 0;            /* ori */
    case 0x0F: set_reg(r, rt, imm << 16, true); return 0;                               /* lui */
    case 0x23:                                                                          /* lw */
        if (rs == REG_GP && got->bytes) {
            uint32_t a = got->gp + (uint32_t)simm;
            if (a >= got->addr && a - got->addr <= got->size - 4 && a % 4 == 0) {
                set_reg(r, rt, npk_ld32le(got->bytes + (a - got->addr)), true);
                return 0;
            }
        }
        set_reg(r, rt, 0, false);
        return 0;
    case 0x2B: /* sw rt, simm(base) */
        if ((rs == REG_SP || rs == REG_S8) && simm >= 0 && simm % 4 == 0 &&
            simm / 4 < MGK_CALL_SLOTS) {
            unsigned s = (unsigned)simm / 4;
            cur->slot[s] = (int32_t)reg(r, rt);
            if (reg_known(r, rt))
                cur->known |= 1ull << s;
            else
                cur->known &= ~(1ull << s);
        }
        return 0;
    default:
        /* Branches, jumps, stores and cache ops write no general register. */
        if ((op >= 0x04 && op <= 0x07) || op == 0x02 || (op >= 0x28 && op <= 0x2F) ||
            (op >= 0x38 && op <= 0x3F && op != 0x3B))
            return 0;
        if (op == 0x1C || op == 0x1F || op == 0x00) set_reg(r, rd, 0, false);
        set_reg(r, rt, 0, false); /* I-type results, mfc1/mfc2, SPECIAL2/3 */
        return 0;
    }
}

/* Where the code and the GOT are: from the section headers, or, when those
 * are missing or damaged, from the program headers and the dynamic segment
 * (what the runtime loader uses). */
typedef struct code_map {
    uint32_t from, from_size, to;
    const uint8_t *code; /* the caller's bytes */
    got_view got;
} code_map;

static bool from_sections(const npk_mgk_model *m, const char *caller, const char *callee,
                          code_map *cm)
{
    const npk_mgk_elf *e = &m->elf;
    const npk_mgk_symbol *from = find_symbol(e, caller, true), *to = find_symbol(e, callee, false);
    const npk_mgk_elf_section *gs = find_section(e, ".got");
    if (!from || !to || !gs) return false;
    const npk_mgk_elf_section *text = section_of(e, from->value, from->size);
    if (!text || gs->type == 8 || gs->size < 4 || gs->offset > m->size ||
        gs->size > m->size - gs->offset)
        return false;
    cm->from = from->value;
    cm->from_size = from->size;
    cm->to = to->value;
    cm->code = m->data + text->offset + (from->value - text->addr);
    cm->got = (got_view){gs->addr, gs->size, m->data + gs->offset, gs->addr + 0x7FF0};
    return true;
}

/* File bytes of [addr, addr + n) through the PT_LOAD segments, or NULL. */
static const uint8_t *load_ptr(const npk_mgk_model *m, uint32_t addr, uint32_t n)
{
    const npk_mgk_elf *e = &m->elf;
    for (uint32_t i = 0; i < e->phnum; i++) {
        uint64_t ph = e->phoff + 32ull * i;
        if (ph + 32 > m->size) return NULL;
        const uint8_t *p = m->data + ph;
        uint32_t type = npk_ld32le(p), off = npk_ld32le(p + 4), va = npk_ld32le(p + 8),
                 fsz = npk_ld32le(p + 16);
        if (type != 1 || addr < va || n > fsz || addr - va > fsz - n) continue;
        uint64_t at = (uint64_t)off + (addr - va);
        if (at > m->size || n > m->size - at) return NULL;
        return m->data + at;
    }
    return NULL;
}

static bool from_dynamic(const npk_mgk_model *m, const char *caller, const char *callee,
                         code_map *cm)
{
    const npk_mgk_elf *e = &m->elf;
    const uint8_t *dyn = NULL;
    uint32_t dyn_size = 0;
    for (uint32_t i = 0; i < e->phnum && !dyn; i++) {
        uint64_t ph = e->phoff + 32ull * i;
        if (ph + 32 > m->size) return false;
        const uint8_t *p = m->data + ph;
        if (npk_ld32le(p) != 2) continue; /* PT_DYNAMIC */
        uint32_t off = npk_ld32le(p + 4), fsz = npk_ld32le(p + 16);
        if (off > m->size || fsz > m->size - off) return false;
        dyn = m->data + off;
        dyn_size = fsz;
    }
    if (!dyn) return false;
    uint32_t strtab = 0, symtab = 0, strsz = 0, pltgot = 0, local = 0, gotsym = 0, nsym = 0;
    for (uint32_t k = 0; k + 8 <= dyn_size; k += 8) {
        uint32_t tag = npk_ld32le(dyn + k), val = npk_ld32le(dyn + k + 4);
        if (tag == 0) break;
        if (tag == 5) strtab = val;
        if (tag == 6) symtab = val;
        if (tag == 10) strsz = val;
        if (tag == 3) pltgot = val;
        if (tag == 0x7000000A) local = val;  /* DT_MIPS_LOCAL_GOTNO */
        if (tag == 0x70000011) nsym = val;   /* DT_MIPS_SYMTABNO */
        if (tag == 0x70000013) gotsym = val; /* DT_MIPS_GOTSYM */
    }
    if (!strtab || !symtab || !strsz || !pltgot || !nsym || nsym > NPK_MGK_MAX_SYMBOLS ||
        gotsym > nsym || local > NPK_MGK_MAX_SYMBOLS)
        return false;
    const uint8_t *syms = load_ptr(m, symtab, nsym * 16), *str = load_ptr(m, strtab, strsz);
    uint32_t got_size = (local + nsym - gotsym) * 4;
    const uint8_t *got = load_ptr(m, pltgot, got_size);
    if (!syms || !str || !got) return false;
    bool have_from = false, have_to = false;
    size_t lf = strlen(caller), lt = strlen(callee);
    for (uint32_t i = 1; i < nsym; i++) {
        const uint8_t *sy = syms + 16 * (size_t)i;
        uint32_t name = npk_ld32le(sy), value = npk_ld32le(sy + 4), size = npk_ld32le(sy + 8);
        if (name >= strsz || !npk_ld16le(sy + 14)) continue; /* undefined */
        const char *nm = (const char *)str + name;
        size_t room = strsz - name;
        if (!have_from && room > lf && !memcmp(nm, caller, lf)) {
            cm->from = value;
            cm->from_size = size;
            have_from = true;
        }
        if (!have_to && room > lt && !memcmp(nm, callee, lt) && nm[lt] == 0) {
            cm->to = value;
            have_to = true;
        }
    }
    if (!have_from || !have_to || cm->from_size % 4 || cm->from_size / 4 > MAX_INSNS) return false;
    cm->code = load_ptr(m, cm->from, cm->from_size);
    cm->got = (got_view){pltgot, got_size, got, pltgot + 0x7FF0};
    return cm->code != NULL;
}

npk_status mgk_call_sites(const npk_mgk_model *m, const char *caller, const char *callee,
                          mgk_callsite **out, size_t *n, npk_error *err)
{
    *out = NULL;
    *n = 0;
    code_map cm;
    memset(&cm, 0, sizeof cm);
    if (!from_sections(m, caller, callee, &cm) && !from_dynamic(m, caller, callee, &cm))
        return NPK_OK; /* nothing to find */
    if (cm.from_size % 4 || cm.from_size / 4 > MAX_INSNS)
        return npk_fail(err, NPK_E_FORMAT, "%s: code of %u bytes", caller, cm.from_size);
    const got_view got = cm.got;
    const uint8_t *code = cm.code;
    size_t cap = 0;
    mgk_callsite *v = NULL, cur;
    memset(&cur, 0, sizeof cur);
    regs r;
    memset(&r, 0, sizeof r);
    r.known = 1u << REG_GP;
    r.v[REG_GP] = got.gp;
    uint32_t count = cm.from_size / 4;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t pc = cm.from + 4 * i, target = 0;
        if (!step(npk_ld32le(code + 4 * (size_t)i), pc, &r, &cur, &got, &target)) continue;
        /* The delay slot runs before the callee. */
        if (i + 1 < count) {
            uint32_t t2;
            step(npk_ld32le(code + 4 * (size_t)(i + 1)), pc + 4, &r, &cur, &got, &t2);
            i++;
        }
        if (target == cm.to) {
            if (*n == cap) {
                size_t nc = cap ? 2 * cap : 8;
                mgk_callsite *nv = realloc(v, nc * sizeof *nv);
                if (!nv) {
                    free(v);
                    return npk_fail(err, NPK_E_NOMEM, "out of memory");
                }
                v = nv;
                cap = nc;
            }
            cur.addr = pc;
            v[(*n)++] = cur;
        }
        memset(&cur, 0, sizeof cur);
        clobber(&r);
    }
    *out = v;
    return NPK_OK;
}
