/* Probes for plain text, CSV and JSON, the fallbacks of the format table. */
#include <string.h>

#include "formats.h"

#define TEXT_SCAN_MAX (1u << 20)

/* Printable ASCII/UTF-8 with ordinary whitespace; no NUL or control bytes. */
bool npk_is_text(const uint8_t *buf, size_t len)
{
    if (len == 0) return false;
    size_t n = len < TEXT_SCAN_MAX ? len : TEXT_SCAN_MAX;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = buf[i];
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
        if (c == 0x7f) return false;
    }
    return true;
}

size_t npk_count_lines(const uint8_t *buf, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n') n++;
    if (len && buf[len - 1] != '\n') n++;
    return n;
}

bool npk_text_probe(const uint8_t *buf, size_t len)
{
    return npk_is_text(buf, len);
}

bool npk_json_probe(const uint8_t *buf, size_t len)
{
    if (!npk_is_text(buf, len)) return false;
    size_t i = 0, j = len;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) i++;
    while (j > i &&
           (buf[j - 1] == ' ' || buf[j - 1] == '\n' || buf[j - 1] == '\r' || buf[j - 1] == '\t'))
        j--;
    if (j - i < 2) return false;
    return (buf[i] == '{' && buf[j - 1] == '}') || (buf[i] == '[' && buf[j - 1] == ']');
}

/* Every non-empty line has the same number of commas, at least one (the
 * lines that end in the first TEXT_SCAN_MAX bytes: detection stays bounded). */
bool npk_csv_probe(const uint8_t *buf, size_t len)
{
    if (!npk_is_text(buf, len)) return false;
    if (len > TEXT_SCAN_MAX) {
        size_t cut = TEXT_SCAN_MAX;
        while (cut > 0 && buf[cut - 1] != '\n') cut--;
        len = cut;
    }
    long want = -1;
    size_t lines = 0;
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        long commas = 0;
        while (e < len && buf[e] != '\n') commas += buf[e++] == ',';
        if (e > i && !(e - i == 1 && buf[i] == '\r')) {
            if (want < 0) want = commas;
            if (commas != want || commas == 0) return false;
            lines++;
        }
        i = e + 1;
    }
    return lines >= 2;
}

npk_status npk_text_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err)
{
    (void)err;
    npk_sum_title(out, "%zu lines", npk_count_lines(buf, len));
    npk_sum_uint(out, "lines", npk_count_lines(buf, len));
    return NPK_OK;
}
