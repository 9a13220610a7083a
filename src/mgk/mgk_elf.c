/* The ELF32 little-endian MIPS image at the front of an MGK: header,
 * program headers (to find what is loaded), section headers with names and
 * the defined dynamic symbols. Used for sanity checks and listings only. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "mgk_internal.h"

#define EHDR_SIZE  52
#define SHDR_SIZE  40
#define PHDR_SIZE  32
#define SYM_SIZE   16
#define EM_MIPS    8
#define SHT_STRTAB 3
#define SHT_NOBITS 8
#define SHT_DYNSYM 11
#define PT_LOAD    1

/* A NUL-terminated name at `off` inside section `sec`. */
static npk_status sec_cstr(const uint8_t *buf, const npk_mgk_elf_section *sec, uint32_t off,
                           npk_mgk_str *out, npk_error *err)
{
    if (off >= sec->size)
        return npk_fail_at(err, NPK_E_FORMAT, sec->offset,
                           "ELF: name offset %u outside its string table (%u bytes)", off,
                           sec->size);
    const char *s = (const char *)buf + sec->offset + off;
    const char *nul = memchr(s, 0, sec->size - off);
    if (!nul)
        return npk_fail_at(err, NPK_E_FORMAT, (uint64_t)sec->offset + off,
                           "ELF: unterminated name in string table");
    out->s = s;
    out->len = (uint32_t)(nul - s);
    return NPK_OK;
}

static npk_status parse_phdrs(const uint8_t *buf, size_t len, npk_mgk_elf *e, uint16_t entsize,
                              npk_error *err)
{
    if (e->phnum == 0) return NPK_OK;
    if (entsize != PHDR_SIZE)
        return npk_fail_at(err, NPK_E_FORMAT, 42, "ELF: program header size %u, expected 32",
                           entsize);
    if ((uint64_t)e->phoff + (uint64_t)e->phnum * PHDR_SIZE > len)
        return npk_fail_at(err, NPK_E_FORMAT, 28, "ELF: program headers extend past the end");
    for (uint16_t i = 0; i < e->phnum; i++) {
        const uint8_t *p = buf + e->phoff + (size_t)i * PHDR_SIZE;
        if (npk_ld32le(p) != PT_LOAD) continue;
        uint64_t end = (uint64_t)npk_ld32le(p + 4) + npk_ld32le(p + 16);
        if (end > len)
            return npk_fail_at(err, NPK_E_FORMAT, e->phoff + (uint64_t)i * PHDR_SIZE,
                               "ELF: loadable segment %u extends past the end", i);
        if (end > e->load_end) e->load_end = end;
    }
    return NPK_OK;
}

static npk_status parse_shdrs(const uint8_t *buf, size_t len, npk_mgk_elf *e, uint16_t entsize,
                              npk_error *err)
{
    if (e->shnum == 0) return NPK_OK;
    if (entsize != SHDR_SIZE)
        return npk_fail_at(err, NPK_E_FORMAT, 46, "ELF: section header size %u, expected 40",
                           entsize);
    if (e->shnum > NPK_MGK_MAX_ELF_SECTIONS)
        return npk_fail_at(err, NPK_E_LIMIT, 48, "ELF: %u sections (limit %u)", e->shnum,
                           NPK_MGK_MAX_ELF_SECTIONS);
    if (e->sh_end > len)
        return npk_fail_at(err, NPK_E_FORMAT, 32,
                           "ELF: section headers (0x%x + %u x 40) extend past the end", e->shoff,
                           e->shnum);
    e->sections = calloc(e->shnum, sizeof *e->sections);
    if (!e->sections) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    e->nsections = e->shnum;
    for (uint16_t i = 0; i < e->shnum; i++) {
        const uint8_t *p = buf + e->shoff + (size_t)i * SHDR_SIZE;
        npk_mgk_elf_section *s = &e->sections[i];
        s->type = npk_ld32le(p + 4);
        s->flags = npk_ld32le(p + 8);
        s->addr = npk_ld32le(p + 12);
        s->offset = npk_ld32le(p + 16);
        s->size = npk_ld32le(p + 20);
        s->link = npk_ld32le(p + 24);
        s->info = npk_ld32le(p + 28);
        s->entsize = npk_ld32le(p + 36);
        if (s->type != SHT_NOBITS && (uint64_t)s->offset + s->size > len)
            return npk_fail_at(err, NPK_E_FORMAT, e->shoff + (uint64_t)i * SHDR_SIZE,
                               "ELF: section %u (0x%x + 0x%x) extends past the end", i, s->offset,
                               s->size);
    }
    if (e->shstrndx != 0) {
        if (e->shstrndx >= e->shnum || e->sections[e->shstrndx].type != SHT_STRTAB)
            return npk_fail_at(err, NPK_E_FORMAT, 50, "ELF: bad section-name table index %u",
                               e->shstrndx);
        const npk_mgk_elf_section *names = &e->sections[e->shstrndx];
        for (uint16_t i = 0; i < e->shnum; i++) {
            uint32_t off = npk_ld32le(buf + e->shoff + (size_t)i * SHDR_SIZE);
            if (sec_cstr(buf, names, off, &e->sections[i].name, err))
                return npk_fail_at(err, NPK_E_FORMAT, e->shoff + (uint64_t)i * SHDR_SIZE,
                                   "ELF: bad name of section %u", i);
        }
    }
    return NPK_OK;
}

static npk_status parse_dynsym(const uint8_t *buf, npk_mgk_elf *e, npk_error *err)
{
    const npk_mgk_elf_section *sym = NULL;
    for (size_t i = 0; i < e->nsections; i++)
        if (e->sections[i].type == SHT_DYNSYM) {
            sym = &e->sections[i];
            break;
        }
    if (!sym) return NPK_OK;
    if (sym->entsize != SYM_SIZE)
        return npk_fail_at(err, NPK_E_FORMAT, sym->offset,
                           "ELF: .dynsym entry size %u, expected 16", sym->entsize);
    if (sym->link >= e->nsections || e->sections[sym->link].type != SHT_STRTAB)
        return npk_fail_at(err, NPK_E_FORMAT, sym->offset, "ELF: .dynsym links to no string table");
    const npk_mgk_elf_section *str = &e->sections[sym->link];
    size_t n = sym->size / SYM_SIZE;
    if (n > NPK_MGK_MAX_SYMBOLS)
        return npk_fail_at(err, NPK_E_LIMIT, sym->offset, "ELF: %zu dynamic symbols (limit %u)", n,
                           NPK_MGK_MAX_SYMBOLS);
    e->symbols = calloc(n ? n : 1, sizeof *e->symbols);
    if (!e->symbols) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = buf + sym->offset + i * SYM_SIZE;
        uint16_t shndx = npk_ld16le(p + 14);
        uint32_t name = npk_ld32le(p);
        if (shndx == 0 || name == 0) continue; /* undefined or unnamed */
        npk_mgk_symbol *s = &e->symbols[e->nsymbols];
        if (sec_cstr(buf, str, name, &s->name, err))
            return npk_fail_at(err, NPK_E_FORMAT, sym->offset + (uint64_t)i * SYM_SIZE,
                               "ELF: bad name of dynamic symbol %zu", i);
        s->value = npk_ld32le(p + 4);
        s->size = npk_ld32le(p + 8);
        s->bind = p[12] >> 4;
        s->type = p[12] & 15;
        s->shndx = shndx;
        e->nsymbols++;
    }
    return NPK_OK;
}

npk_status mgk_parse_elf(const uint8_t *buf, size_t len, npk_mgk_elf *e, npk_error *err)
{
    memset(e, 0, sizeof *e);
    if (len < EHDR_SIZE || memcmp(buf,
                                  "\x7f"
                                  "ELF",
                                  4) != 0)
        return npk_fail_at(err, NPK_E_FORMAT, 0, "not an ELF image");
    if (buf[4] != 1 || buf[5] != 1)
        return npk_fail_at(err, NPK_E_UNSUPPORTED, 4,
                           "ELF class %u / data %u: MGK images are 32-bit little-endian", buf[4],
                           buf[5]);
    e->osabi = buf[7];
    e->abiversion = buf[8];
    e->type = npk_ld16le(buf + 16);
    e->machine = npk_ld16le(buf + 18);
    if (e->machine != EM_MIPS)
        return npk_fail_at(err, NPK_E_UNSUPPORTED, 18, "ELF machine %u is not MIPS (8)",
                           e->machine);
    e->entry = npk_ld32le(buf + 24);
    e->phoff = npk_ld32le(buf + 28);
    e->shoff = npk_ld32le(buf + 32);
    e->flags = npk_ld32le(buf + 36);
    e->phnum = npk_ld16le(buf + 44);
    e->shnum = npk_ld16le(buf + 48);
    e->shstrndx = npk_ld16le(buf + 50);
    e->sh_end = (uint64_t)e->shoff + (uint64_t)e->shnum * SHDR_SIZE;
    npk_status st;
    if ((st = parse_phdrs(buf, len, e, npk_ld16le(buf + 42), err)) ||
        (st = parse_shdrs(buf, len, e, npk_ld16le(buf + 46), err)) ||
        (st = parse_dynsym(buf, e, err))) {
        mgk_free_elf(e);
        return st;
    }
    return NPK_OK;
}

void mgk_free_elf(npk_mgk_elf *e)
{
    free(e->sections);
    free(e->symbols);
    e->sections = NULL;
    e->symbols = NULL;
    e->nsections = e->nsymbols = 0;
}

const char *npk_mgk_symbol_short(const npk_mgk_symbol *sym, char *buf, size_t n)
{
    const char *s = sym->name.s;
    size_t len = sym->name.len;
    if (n == 0) return buf;
    /* "_Z<digits><identifier>...": a plain (non-nested) mangled function name. */
    if (len > 3 && s[0] == '_' && s[1] == 'Z' && s[2] >= '1' && s[2] <= '9') {
        size_t i = 2, idlen = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && idlen < 100000)
            idlen = idlen * 10 + (size_t)(s[i++] - '0');
        if (idlen > 0 && idlen <= len - i) {
            s += i;
            len = idlen;
        }
    }
    if (len >= n) len = n - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    return buf;
}
