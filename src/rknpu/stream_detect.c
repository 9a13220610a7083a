/* RKNPU register-command streams: binary little-endian u64 entries or hex
 * text (one 16-digit entry per line). Recognised by their op codes (bits
 * 63:48): block writes, the op-enable marker pair, and zero words. */
#include <string.h>

#include "npukit/bytes.h"
#include "../core/formats.h"

#define STREAM_PROBE_MAX 65536 /* entries examined by the probe */

static bool known_op(uint16_t op)
{
    switch (op) {
    case 0x0000: case 0x0041: case 0x0081: case 0x0101: case 0x0201: case 0x0801:
    case 0x1001: case 0x2001: case 0x4001: case 0x8001:
        return true;
    default:
        return false;
    }
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Count entries of a hex stream; -1 if the text is not one. */
static long hex_entries(const uint8_t *buf, size_t len, size_t *writes)
{
    long n = 0;
    size_t i = 0;
    *writes = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && buf[e] != '\n') e++;
        size_t a = i, b = e;
        while (a < b && (buf[a] == ' ' || buf[a] == '\t')) a++;
        while (b > a && (buf[b - 1] == ' ' || buf[b - 1] == '\t' || buf[b - 1] == '\r')) b--;
        if (b > a && buf[a] != '#') {
            if (b - a == 18 && buf[a] == '0' && (buf[a + 1] == 'x' || buf[a + 1] == 'X')) a += 2;
            if (b - a != 16) return -1;
            uint64_t v = 0;
            for (size_t k = a; k < b; k++) {
                int h = hexval(buf[k]);
                if (h < 0) return -1;
                v = (v << 4) | (uint64_t)h;
            }
            uint16_t op = (uint16_t)(v >> 48);
            if (!known_op(op)) return -1;
            if (op & 1) (*writes)++;
            n++;
        }
        i = e + 1;
    }
    return n;
}

static bool binary_stream(const uint8_t *buf, size_t len, size_t *writes)
{
    if (len < 16 || len % 8) return false;
    size_t n = len / 8;
    *writes = 0;
    for (size_t i = 0; i < n && i < STREAM_PROBE_MAX; i++) {
        uint16_t op = (uint16_t)(npk_ld64le(buf + 8 * i) >> 48);
        if (!known_op(op)) return false;
        if (op & 1) (*writes)++;
    }
    return *writes > 0;
}

bool npk_rknpu_stream_probe(const uint8_t *buf, size_t len)
{
    size_t w;
    if (binary_stream(buf, len, &w)) return true;
    if (!npk_is_text(buf, len)) return false;
    long n = hex_entries(buf, len, &w);
    return n >= 2 && w > 0;
}

npk_status npk_rknpu_stream_summarize(const uint8_t *buf, size_t len, npk_summary *out,
                                      npk_error *err)
{
    (void)err;
    size_t w;
    bool bin = binary_stream(buf, len, &w);
    size_t n = bin ? len / 8 : (size_t)hex_entries(buf, len, &w);
    npk_sum_title(out, "%zu entries (%s), %zu register writes", n, bin ? "binary" : "hex text", w);
    npk_sum_str(out, "encoding", "%s", bin ? "binary" : "hex");
    npk_sum_uint(out, "entries", n);
    npk_sum_uint(out, "writes", w);
    return NPK_OK;
}
