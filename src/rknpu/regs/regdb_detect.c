/* Detection of the RKNPU register database in its TSV form: lines of
 * BLOCK <tab> 0xOFFSET <tab> NAME <tab> FIELDS. */
#include <stdio.h>
#include <string.h>

#include "npukit/rknpu_regs.h"

#include "core/formats.h"

static const char *const blocks[] = {"PC",  "CNA",      "CORE", "DPU",  "DPU_RDMA",
                                     "PPU", "PPU_RDMA", "DDMA", "SDMA", "GLOBAL"};

static bool regdb_line(const uint8_t *p, size_t n)
{
    size_t t = 0;
    while (t < n && p[t] != '\t') t++;
    if (t == n) return false;
    bool known = false;
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        if (strlen(blocks[i]) == t && memcmp(blocks[i], p, t) == 0) known = true;
    if (!known) return false;
    return n - t > 7 && p[t + 1] == '0' && p[t + 2] == 'x';
}

bool npk_rknpu_regdb_probe(const uint8_t *buf, size_t len)
{
    if (!npk_is_text(buf, len)) return false;
    if (len > NPK_DETECT_PREFIX) { /* the whole lines of the first MiB: bounded detection */
        size_t cut = NPK_DETECT_PREFIX;
        while (cut > 0 && buf[cut - 1] != '\n') cut--;
        len = cut;
    }
    size_t i = 0, lines = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && buf[e] != '\n') e++;
        if (e > i) {
            if (!regdb_line(buf + i, e - i)) return false;
            lines++;
        }
        i = e + 1;
    }
    return lines > 0;
}

/* Does line [p, p+n) name a register exactly as the built-in table does
 * (block, offset, name)? Fields are compared by the tests, not here. */
static bool matches_table(const uint8_t *p, size_t n)
{
    char line[256]; /* the first three columns are enough */
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, p, n);
    line[n] = 0;
    char block[32], name[96];
    unsigned off;
    if (sscanf(line, "%31[^\t]\t0x%x\t%95[^\t]", block, &off, name) != 3 || off > 0xFFFF)
        return false;
    const npk_rk_reg_info *ri = npk_rk_reg_get(npk_rk_reg_by_offset((uint16_t)off));
    return ri && strcmp(ri->name, name) == 0 &&
           strcmp(npk_rk_block_get(ri->block)->name, block) == 0;
}

npk_status npk_rknpu_regdb_summarize(const uint8_t *buf, size_t len, npk_summary *out,
                                     npk_error *err)
{
    (void)err;
    size_t lines = 0, match = 0;
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && buf[e] != '\n') e++;
        if (e > i) {
            lines++;
            match += matches_table(buf + i, e - i);
        }
        i = e + 1;
    }
    npk_sum_title(out, "%zu registers, %zu as in npukit's table", lines, match);
    npk_sum_uint(out, "registers", lines);
    npk_sum_uint(out, "matching_builtin", match);
    npk_sum_uint(out, "builtin_registers", NPK_RKR_COUNT);
    return NPK_OK;
}
