/* Detection of the RKNPU register database in its TSV form: lines of
 * BLOCK <tab> 0xOFFSET <tab> NAME <tab> FIELDS. */
#include <string.h>

#include "../core/formats.h"

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

npk_status npk_rknpu_regdb_summarize(const uint8_t *buf, size_t len, npk_summary *out,
                                     npk_error *err)
{
    (void)err;
    size_t n = npk_count_lines(buf, len);
    npk_sum_title(out, "%zu registers", n);
    npk_sum_uint(out, "registers", n);
    return NPK_OK;
}
