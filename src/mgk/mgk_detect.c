/* MGK detection: an ELF image that ends in an 80-byte footer starting "IMGK". */
#include <string.h>

#include "npukit/bytes.h"
#include "../core/formats.h"

#define MGK_FOOTER_SIZE 80

bool npk_mgk_probe(const uint8_t *buf, size_t len)
{
    return len >= 52 + MGK_FOOTER_SIZE && memcmp(buf, "\x7f" "ELF", 4) == 0 &&
           memcmp(buf + len - MGK_FOOTER_SIZE, "IMGK", 4) == 0;
}

npk_status npk_mgk_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    (void)err;
    uint64_t footer = len - MGK_FOOTER_SIZE;
    npk_sum_title(out, "MGK model, footer at 0x%llx", (unsigned long long)footer);
    npk_sum_hex(out, "footer_offset", footer);
    npk_sum_str(out, "elf_class", "%s", buf[4] == 1 ? "ELF32" : buf[4] == 2 ? "ELF64" : "?");
    npk_sum_str(out, "elf_data", "%s", buf[5] == 1 ? "little-endian" : buf[5] == 2 ? "big-endian" : "?");
    return NPK_OK;
}
