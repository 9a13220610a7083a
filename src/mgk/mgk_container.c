/* The appended payload: the 80-byte IMGK footer, its section table, the
 * segment record that gives the weight region, the version strings and the
 * layout cross-checks. Fields are read at their exact width because several
 * neighbouring bytes hold uninitialised garbage in vendor files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "mgk_internal.h"

#define SECT_ENTRY_MIN 24
#define SEG_RECORD_MIN 0x30
#define VERSION_ENTRY  16
#define MAX_VERSIONS   4096

void mgk_warn(npk_mgk_model *m, uint64_t offset, const char *fmt, ...)
{
    if (m->nwarnings >= NPK_MGK_MAX_WARNINGS) {
        m->warnings_dropped++;
        return;
    }
    npk_mgk_warning *w = &m->warnings[m->nwarnings++];
    w->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->msg, sizeof w->msg, fmt, ap);
    va_end(ap);
}

/* [off, off + size) lies inside a file of `len` bytes. */
static bool in_file(uint64_t off, uint64_t size, size_t len)
{
    uint64_t end;
    return npk_add_u64(off, size, &end) && end <= len;
}

static npk_status read_footer(npk_mgk_model *m, npk_error *err)
{
    const uint8_t *f = m->data + m->footer_offset;
    memcpy(m->footer_ident, f + 4, 4);
    m->sectab_offset = npk_ld64le(f + 0x18);
    m->segtab_offset = npk_ld64le(f + 0x20);
    m->footer_size = npk_ld16le(f + 0x28);
    m->sect_entsize = npk_ld16le(f + 0x2A);
    m->nsect = npk_ld16le(f + 0x2C);
    m->seg_size = npk_ld16le(f + 0x2E);
    m->nseg = npk_ld16le(f + 0x30);
    m->footer_region_offset = npk_ld64le(f + 0x38);
    m->footer_region_size = npk_ld64le(f + 0x40);
    uint64_t fo = m->footer_offset;
    if (m->footer_size != NPK_MGK_FOOTER_SIZE)
        mgk_warn(m, fo + 0x28, "footer says its size is %u, expected 80", m->footer_size);
    if (m->nsect == 0 || m->nsect > NPK_MGK_MAX_SECTIONS)
        return npk_fail_at(err, NPK_E_FORMAT, fo + 0x2C, "footer: %u sections (expected 1..%u)",
                           m->nsect, NPK_MGK_MAX_SECTIONS);
    if (m->sect_entsize < SECT_ENTRY_MIN)
        return npk_fail_at(err, NPK_E_FORMAT, fo + 0x2A,
                           "footer: section entry size %u, need at least 24", m->sect_entsize);
    if (m->nseg == 0 || m->nseg > NPK_MGK_MAX_SEGMENTS)
        return npk_fail_at(err, NPK_E_FORMAT, fo + 0x30,
                           "footer: %u segment records (expected 1..%u)", m->nseg,
                           NPK_MGK_MAX_SEGMENTS);
    if (m->seg_size < SEG_RECORD_MIN)
        return npk_fail_at(err, NPK_E_FORMAT, fo + 0x2E,
                           "footer: segment record size %u, need at least 48", m->seg_size);
    if (!in_file(m->sectab_offset, (uint64_t)m->nsect * m->sect_entsize, m->footer_offset))
        return npk_fail_at(err, NPK_E_FORMAT, fo + 0x18,
                           "footer: section table at 0x%llx (%u x %u bytes) is outside the file",
                           (unsigned long long)m->sectab_offset, m->nsect, m->sect_entsize);
    if (!in_file(m->segtab_offset, (uint64_t)m->nseg * m->seg_size, m->footer_offset))
        return npk_fail_at(err, NPK_E_FORMAT, fo + 0x20,
                           "footer: segment records at 0x%llx (%u x %u bytes) are outside the file",
                           (unsigned long long)m->segtab_offset, m->nseg, m->seg_size);
    return NPK_OK;
}

/* A NUL-terminated string at `off` inside section s; false if none. */
static bool sec_string(const npk_mgk_model *m, const npk_mgk_section *s, uint64_t off,
                       npk_mgk_str *out)
{
    if (off >= s->size) return false;
    const char *p = (const char *)m->data + s->offset + off;
    const char *nul = memchr(p, 0, (size_t)(s->size - off));
    if (!nul) return false;
    out->s = p;
    out->len = (uint32_t)(nul - p);
    return true;
}

static npk_status read_sections(npk_mgk_model *m, npk_error *err)
{
    m->nsections = m->nsect;
    for (size_t i = 0; i < m->nsections; i++) {
        npk_mgk_section *s = &m->sections[i];
        s->entry_offset = m->sectab_offset + i * m->sect_entsize;
        const uint8_t *p = m->data + s->entry_offset;
        s->index = p[0];
        s->byte1 = p[1];
        s->name_byte = p[2];
        s->offset = npk_ld64le(p + 8);
        s->size = npk_ld64le(p + 16);
        if (!in_file(s->offset, s->size, m->size))
            return npk_fail_at(err, NPK_E_FORMAT, s->entry_offset,
                               "section %u: 0x%llx + 0x%llx is outside the file", s->index,
                               (unsigned long long)s->offset, (unsigned long long)s->size);
    }
    /* The string table is the entry whose own name, looked up in itself, is ".mlstrtab". */
    for (size_t i = 0; i < m->nsections && m->sec_strtab < 0; i++) {
        npk_mgk_str nm;
        npk_mgk_section *s = &m->sections[i];
        if (s->name_byte && sec_string(m, s, s->name_byte, &nm) && npk_mgk_str_eq(nm, ".mlstrtab"))
            m->sec_strtab = (int)i;
    }
    if (m->sec_strtab < 0)
        mgk_warn(m, m->sectab_offset, "no .mlstrtab section found; section names unresolved");
    for (size_t i = 0; i < m->nsections; i++) {
        npk_mgk_section *s = &m->sections[i];
        if (s->name_byte && m->sec_strtab >= 0 &&
            !sec_string(m, &m->sections[m->sec_strtab], s->name_byte, &s->name))
            mgk_warn(m, s->entry_offset, "section %u: name offset %u not in .mlstrtab", s->index,
                     s->name_byte);
    }
    /* Entry 1's name byte is 0 in the only known file; it is the `model` blob. */
    bool have_model = false;
    for (size_t i = 0; i < m->nsections; i++)
        if (npk_mgk_str_eq(m->sections[i].name, "model")) have_model = true;
    for (size_t i = 0; i < m->nsections && !have_model; i++) {
        npk_mgk_section *s = &m->sections[i];
        if (s->index == 1 && s->name_byte == 0) {
            s->name.s = "model";
            s->name.len = 5;
            s->name_inferred = true;
            have_model = true;
        }
    }
    for (size_t i = 0; i < m->nsections; i++) {
        npk_mgk_str nm = m->sections[i].name;
        if (npk_mgk_str_eq(nm, "model") && m->sec_model < 0) m->sec_model = (int)i;
        if (npk_mgk_str_eq(nm, ".verstr") && m->sec_verstr < 0) m->sec_verstr = (int)i;
        if (npk_mgk_str_eq(nm, ".version") && m->sec_version < 0) m->sec_version = (int)i;
    }
    if (m->sec_model < 0)
        return npk_fail_at(err, NPK_E_FORMAT, m->sectab_offset,
                           "section table has no `model` section");
    return NPK_OK;
}

static npk_status read_segment(npk_mgk_model *m, npk_error *err)
{
    const uint8_t *p = m->data + m->segtab_offset;
    m->region_offset = npk_ld64le(p + 0x18);
    m->seg_unknown_20 = npk_ld64le(p + 0x20);
    m->region_size = npk_ld64le(p + 0x28);
    if (!in_file(m->region_offset, m->region_size, m->size))
        return npk_fail_at(err, NPK_E_FORMAT, m->segtab_offset + 0x18,
                           "weight region 0x%llx + 0x%llx is outside the file",
                           (unsigned long long)m->region_offset,
                           (unsigned long long)m->region_size);
    if (m->footer_region_offset != m->region_offset || m->footer_region_size != m->region_size)
        mgk_warn(m, m->footer_offset + 0x38,
                 "footer gives the weight region as 0x%llx + 0x%llx, the segment record as "
                 "0x%llx + 0x%llx",
                 (unsigned long long)m->footer_region_offset,
                 (unsigned long long)m->footer_region_size, (unsigned long long)m->region_offset,
                 (unsigned long long)m->region_size);
    return NPK_OK;
}

static npk_status read_versions(npk_mgk_model *m, npk_error *err)
{
    if (m->sec_version < 0) return NPK_OK;
    const npk_mgk_section *vs = &m->sections[m->sec_version];
    const npk_mgk_section *str = m->sec_verstr >= 0 ? &m->sections[m->sec_verstr] : NULL;
    size_t n = (size_t)(vs->size / VERSION_ENTRY);
    if (n > MAX_VERSIONS)
        return npk_fail_at(err, NPK_E_LIMIT, vs->offset, ".version: %zu entries (limit %d)", n,
                           MAX_VERSIONS);
    if (vs->size % VERSION_ENTRY)
        mgk_warn(m, vs->offset, ".version size %llu is not a multiple of 16",
                 (unsigned long long)vs->size);
    m->versions = calloc(n ? n : 1, sizeof *m->versions);
    if (!m->versions) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        npk_mgk_version *v = &m->versions[m->nversions++];
        v->entry_offset = vs->offset + i * VERSION_ENTRY;
        v->tag = m->data[v->entry_offset];
        v->value = npk_ld64le(m->data + v->entry_offset + 8);
        if (v->tag == 0) break; /* terminator */
        if (v->tag == 1) {
            if (str && v->value != str->offset)
                mgk_warn(m, v->entry_offset, ".version tag 1 gives 0x%llx, .verstr is at 0x%llx",
                         (unsigned long long)v->value, (unsigned long long)str->offset);
            continue;
        }
        if (str) v->has_string = sec_string(m, str, v->value, &v->string);
        if (!v->has_string)
            mgk_warn(m, v->entry_offset, ".version tag %u: value %llu names no .verstr string",
                     v->tag, (unsigned long long)v->value);
    }
    return NPK_OK;
}

static int cmp_sec(const void *a, const void *b)
{
    const npk_mgk_section *x = *(const npk_mgk_section *const *)a;
    const npk_mgk_section *y = *(const npk_mgk_section *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Layout facts that hold on the known file; a mismatch is a warning. */
static void cross_check(npk_mgk_model *m)
{
    const npk_mgk_section *model = &m->sections[m->sec_model];
    if (m->elf.nsections && m->region_offset != m->elf.sh_end)
        mgk_warn(m, m->segtab_offset + 0x18,
                 "weight region starts at 0x%llx, not at the end of the ELF section headers "
                 "(0x%llx)",
                 (unsigned long long)m->region_offset, (unsigned long long)m->elf.sh_end);
    if (m->region_offset + m->region_size != model->offset)
        mgk_warn(m, m->segtab_offset + 0x28,
                 "weight region ends at 0x%llx, but `model` starts at 0x%llx",
                 (unsigned long long)(m->region_offset + m->region_size),
                 (unsigned long long)model->offset);
    if (m->region_offset < m->elf.load_end)
        mgk_warn(m, m->segtab_offset + 0x18,
                 "weight region 0x%llx overlaps loadable ELF data (up to 0x%llx)",
                 (unsigned long long)m->region_offset, (unsigned long long)m->elf.load_end);
    const npk_mgk_section *order[NPK_MGK_MAX_SECTIONS];
    for (size_t i = 0; i < m->nsections; i++) order[i] = &m->sections[i];
    qsort(order, m->nsections, sizeof order[0], cmp_sec);
    for (size_t i = 0; i + 1 < m->nsections; i++)
        if (order[i]->offset + order[i]->size != order[i + 1]->offset)
            mgk_warn(m, order[i + 1]->entry_offset,
                     "section %u ends at 0x%llx but section %u starts at 0x%llx", order[i]->index,
                     (unsigned long long)(order[i]->offset + order[i]->size), order[i + 1]->index,
                     (unsigned long long)order[i + 1]->offset);
    const npk_mgk_section *last = order[m->nsections - 1];
    if (last->offset + last->size != m->segtab_offset)
        mgk_warn(m, m->footer_offset + 0x20, "segment records at 0x%llx do not follow section %u",
                 (unsigned long long)m->segtab_offset, last->index);
    if (m->segtab_offset + (uint64_t)m->nseg * m->seg_size != m->sectab_offset)
        mgk_warn(m, m->footer_offset + 0x18,
                 "section table at 0x%llx does not follow the segment records",
                 (unsigned long long)m->sectab_offset);
    if (m->sectab_offset + (uint64_t)m->nsect * m->sect_entsize != m->footer_offset)
        mgk_warn(m, m->footer_offset, "footer does not follow the section table");
}

npk_status mgk_parse_container(npk_mgk_model *m, npk_error *err)
{
    if (m->size < 52 + NPK_MGK_FOOTER_SIZE)
        return npk_fail_at(err, NPK_E_FORMAT, 0, "too short for an MGK file (%zu bytes)", m->size);
    m->footer_offset = m->size - NPK_MGK_FOOTER_SIZE;
    if (memcmp(m->data + m->footer_offset, "IMGK", 4) != 0)
        return npk_fail_at(err, NPK_E_FORMAT, m->footer_offset, "no IMGK footer");
    m->sec_model = m->sec_strtab = m->sec_verstr = m->sec_version = -1;
    npk_status st;
    if ((st = read_footer(m, err)) || (st = read_sections(m, err)) || (st = read_segment(m, err)) ||
        (st = read_versions(m, err)))
        return st;
    cross_check(m);
    return NPK_OK;
}
