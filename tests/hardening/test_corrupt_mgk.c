/* Corrupted MGK files through the CLI, on the vendor fixture and on files
 * `mgk synth` makes: truncation at every structural boundary the parser
 * knows (ELF header, program and section headers, each ELF section, the
 * weight region and each layer's weight and requant blocks, each `model`
 * record, the payload sections, the segment record, the section table and
 * the footer), the same boundaries as cuts that keep the footer (so every
 * table points past the shortened payload), and the structural fields set
 * to extreme values; `mgk graph` and `mgk export` run on every case too. */
#include "harden.h"
#include "npukit/mgk.h"
#include "npukit/mgk_graph.h"

static char layer_id[16];

static const hd_cmd cmds[] = {
    {"info @IN", 2, 0, 0, 0},
    {"mgk info --json --records --symbols @IN", 2, 0, 0, HD_JSON},
    {"mgk extract @IN -o @OUT/w.safetensors", 2, 0, 0, HD_JSON},
    {"mgk layer @IN @2 --weights", 2, 0, 0, 0},
    {"mgk replace @IN --weights @1 -o @OUT/new.mgk", 2, 0, 0, HD_JSON},
    {"mgk graph --json @IN", 2, 0, 0, HD_JSON},
    {"mgk graph --dot @IN", 2, 0, 0, 0},
    {"mgk export --allow-unknown @IN -o @OUT/m.onnx", 2, 0, 0, 0}, /* last: needs protobuf-c */
};
/* Every command, or all but the export in builds without ONNX support. */
#define NCMDS (sizeof cmds / sizeof cmds[0] - !npk_mgk_onnx_available())
#define NCUT  3 /* cuts: the first three commands (all of them read the whole file) */

/* buf[0, at) followed by the footer: tables keep their absolute offsets. */
static void cut_keep_footer(const char *label, const uint8_t *buf, size_t len, uint64_t footer,
                            size_t at)
{
    size_t n = at + (len - (size_t)footer);
    uint8_t *b = malloc(n);
    memcpy(b, buf, at);
    memcpy(b + at, buf + footer, len - (size_t)footer);
    char what[256];
    snprintf(what, sizeof what, "%s: bytes 0x%zx..0x%llx removed before the footer", label, at,
             (unsigned long long)footer);
    hd_case(what, b, n, "cut.mgk", cmds, NCUT);
    free(b);
}

/* vendor: the 650 KB fixture, whose 62 records are sampled (first and last
 * three, every convolution) and which is cut only before its footer and at
 * the ELF and footer boundaries (any other plain cut fails at the footer,
 * like the synthetic file's show). */
static void corrupt(const char *label, const char *path, int vendor)
{
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    assert_non_null(buf);
    npk_mgk_model m;
    npk_error err = {0};
    if (npk_mgk_parse(buf, len, &m, &err)) fail_msg("%s: %s", path, err.msg);
    assert_true(m.nconvs > 0);
    snprintf(layer_id, sizeof layer_id, "%d", m.convs[0].id);
    hd_helper[2] = layer_id;
    hd_helper[1] = npk_tmp("weights.safetensors");
    if (npk_safetensors_available()) hd_make("mgk extract %s -o %s", path, hd_helper[1]);

    hd_cuts cuts = {0};
    static const size_t elf_fields[] = {0, 4, 16, 24, 28, 32, 36, 40, 44, 48, 52};
    for (size_t i = 0; i < sizeof elf_fields / sizeof elf_fields[0]; i++)
        hd_cut_add(&cuts, elf_fields[i]);
    hd_cut_add(&cuts, m.elf.phoff);
    hd_cut_add(&cuts, m.elf.phoff + 32ull * m.elf.phnum);
    for (uint32_t i = 0; i <= m.elf.shnum; i++) hd_cut_add(&cuts, m.elf.shoff + 40ull * i);
    for (size_t i = 0; i < m.elf.nsections; i++)
        if (m.elf.sections[i].type != 8 && m.elf.sections[i].size) /* not SHT_NOBITS */
            hd_cut_add(&cuts, m.elf.sections[i].offset);
    hd_cut_add(&cuts, m.region_offset);
    for (size_t i = 0; i < m.nconvs; i++) {
        hd_cut_add(&cuts, m.region_offset + m.convs[i].weight_offset);
        hd_cut_add(&cuts, m.region_offset + m.convs[i].requant_offset);
    }
    for (size_t i = 0; i < m.nrecords; i++) {
        if (vendor && i >= 3 && i + 3 < m.nrecords && m.records[i].conv < 0) continue;
        hd_cut_add(&cuts, m.records[i].offset);
        hd_cut_add(&cuts, m.records[i].body_offset);
        hd_cut_add(&cuts, m.records[i].offset + m.records[i].size - 8); /* length word */
    }
    for (size_t i = 0; i < m.nsections; i++) hd_cut_add(&cuts, m.sections[i].offset);
    for (size_t i = 0; i < m.nversions; i++) hd_cut_add(&cuts, m.versions[i].entry_offset);
    hd_cut_add(&cuts, m.segtab_offset);
    for (size_t i = 0; i <= m.nsect; i++) hd_cut_add(&cuts, m.sectab_offset + 24ull * i);
    for (uint64_t o = 0; o < NPK_MGK_FOOTER_SIZE; o += 8) hd_cut_add(&cuts, m.footer_offset + o);
    hd_cut_add(&cuts, len - 1);
    hd_cuts_done(&cuts, len, 0);
    for (size_t i = 0; i < cuts.n; i++) {
        size_t at = cuts.at[i];
        if (!vendor || at <= 52 || at >= m.footer_offset)
            hd_truncated(label, buf, at, "cut.mgk", cmds, NCUT);
        if (at >= m.region_offset && at < m.footer_offset)
            cut_keep_footer(label, buf, len, m.footer_offset, at);
    }
    free(cuts.at);

    /* Extreme values. ELF header: program/section header tables, counts,
     * entry sizes, the section-name table. The ELF serves only checks and
     * listings, so header tables at offset 0 or 1 (inside the file), no
     * program or section headers, and no section-name table (index 0) are
     * tolerated (names and symbols are then not listed); anything pointing
     * outside the file, the wrong entry size, or a name table that is not a
     * string table is an error. */
    enum { V0 = 1, V1 = 2 }; /* bits of hd_extremes32: 0 and 1 */
    static const struct {
        const char *name;
        uint64_t off;
        hd_width w;
        unsigned ok;
    } elf[] = {{"e_phoff", 28, HD_LE32, V0 | V1}, {"e_shoff", 32, HD_LE32, 0},
               {"e_phentsize", 42, HD_LE16, 0},   {"e_phnum", 44, HD_LE16, V0 | V1},
               {"e_shentsize", 46, HD_LE16, 0},   {"e_shnum", 48, HD_LE16, V0},
               {"e_shstrndx", 50, HD_LE16, V0}};
    for (size_t i = 0; i < sizeof elf / sizeof elf[0]; i++)
        hd_field_ok(label, elf[i].name, buf, len, elf[i].off, elf[i].w, elf[i].ok, "field.mgk",
                    cmds, NCMDS);
    /* Each ELF section's offset and size. */
    for (size_t i = 1; i < m.elf.nsections; i++) {
        char f[64];
        if (m.elf.sections[i].type == 8 || !m.elf.sections[i].size) continue;
        snprintf(f, sizeof f, "ELF section %zu sh_offset", i);
        hd_field(label, f, buf, len, m.elf.shoff + 40 * i + 16, HD_LE32, 0xffffffff, "field.mgk",
                 cmds, NCMDS);
        snprintf(f, sizeof f, "ELF section %zu sh_size", i);
        hd_field(label, f, buf, len, m.elf.shoff + 40 * i + 20, HD_LE32, 0x7fffffff, "field.mgk",
                 cmds, NCMDS);
    }
    /* Footer: table offsets (u64) and the u16 sizes and counts. Its own
     * size field is not needed to read it (the footer is the last 80 bytes)
     * and one section (`model`, inferred) is enough. */
    static const struct {
        const char *name;
        uint64_t off;
        hd_width w;
        unsigned ok;
    } foot[] = {{"footer section-table offset", 0x18, HD_LE64, 0},
                {"footer segment-table offset", 0x20, HD_LE64, 0},
                {"footer size", 0x28, HD_LE16, 0xf},
                {"footer section entry size", 0x2A, HD_LE16, 0},
                {"footer section count", 0x2C, HD_LE16, V1},
                {"footer segment record size", 0x2E, HD_LE16, 0},
                {"footer segment count", 0x30, HD_LE16, 0}};
    for (size_t i = 0; i < sizeof foot / sizeof foot[0]; i++)
        hd_field_ok(label, foot[i].name, buf, len, m.footer_offset + foot[i].off, foot[i].w,
                    foot[i].ok, "field.mgk", cmds, NCMDS);
    /* Section table entries: offset and size of every payload section. The
     * string and version sections are only listed: at offset 0 or 1 their
     * bytes are garbage and give warnings, not errors; `model` must fit. */
    for (size_t i = 0; i < m.nsections; i++) {
        char f[64];
        snprintf(f, sizeof f, "section %zu offset", i);
        hd_field_ok(label, f, buf, len, m.sections[i].entry_offset + 8, HD_LE64,
                    (int)i == m.sec_model ? 0 : V0 | V1, "field.mgk", cmds, NCMDS);
        snprintf(f, sizeof f, "section %zu size", i);
        hd_field(label, f, buf, len, m.sections[i].entry_offset + 16, HD_LE64, ~0ull, "field.mgk",
                 cmds, NCMDS);
        hd_field(label, f, buf, len, m.sections[i].entry_offset + 16, HD_LE64, 0x7fffffff,
                 "field.mgk", cmds, NCMDS);
    }
    /* Segment record 0: the weight region. Where it starts inside the file
     * is only cross-checked (a warning): weights are then read from there. */
    hd_field_ok(label, "region offset", buf, len, m.segtab_offset + 0x18, HD_LE64, V0 | V1,
                "field.mgk", cmds, NCMDS);
    hd_field(label, "region size", buf, len, m.segtab_offset + 0x28, HD_LE64, ~0ull, "field.mgk",
             cmds, NCMDS);
    hd_field(label, "region size", buf, len, m.segtab_offset + 0x28, HD_LE64, 0x7fffffff,
             "field.mgk", cmds, NCMDS);
    /* Every record's trailing length word (records are framed by them). */
    for (size_t i = 0; i < m.nrecords; i++) {
        char f[64];
        snprintf(f, sizeof f, "record %zu length", i);
        if (vendor && i >= 3 && i + 3 < m.nrecords && m.records[i].conv < 0) continue;
        hd_field_all(label, f, buf, len, m.records[i].offset + m.records[i].size - 8, HD_LE64,
                     "field.mgk", cmds, NCMDS);
    }
    /* Was: a damaged layer record (its weight shape) made `mgk replace` name
     * the valid weights file, without an offset, in 306 of 3,495 damaged
     * models. The error now names the model and the record's offset. */
    static const hd_cmd replace_cmd[] = {
        {"mgk replace @IN --weights @1 -o @OUT/new.mgk", 2, 0, 0, HD_JSON}};
    static const uint64_t wsv[] = {0, 31, 0x7fffffff, 0xffffffff};
    hd_every_case = 1;
    for (size_t i = 0; i < m.nconvs && (!vendor || i < 1); i++)
        for (int k = 0; k < 7; k++)
            for (size_t v = 0; v < sizeof wsv / sizeof *wsv; v++) {
                char f[64];
                snprintf(f, sizeof f, "layer %d weight_shape[%d]", m.convs[i].id, k);
                hd_field(label, f, buf, len, m.convs[i].shape_pos + 4 + 4 * (uint64_t)k, HD_LE32,
                         wsv[v], "field.mgk", replace_cmd, 1);
            }
    hd_every_case = 0;
    npk_mgk_free(&m);
    free(buf);
}

static void test_synthetic(void **state)
{
    (void)state;
    const char *p = npk_tmp("synth.mgk");
    hd_make("mgk synth --layer 16,8,3,3,8 --layer 8,4,1,5,4 --extra-records --garbage -o %s", p);
    corrupt("synth", p, 0);
    hd_summary("mgk synth");
}

static void test_fixture(void **state)
{
    (void)state;
    char p[2048];
    snprintf(p, sizeof p, "%s", NPK_FIXTURE("mgk/AEC_T41_16K_NS_OUT_UC.mgk"));
    corrupt("vendor", p, 1);
    hd_summary("mgk vendor fixture");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_synthetic),
                                       cmocka_unit_test(test_fixture)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
