/* PNG chunk CRC (ISO 3309, as in the PNG spec), for tests and fuzz targets
 * that damage a PNG's fields and must re-seal a chunk so the damage reaches
 * the decoder instead of stopping at the checksum. Bitwise: inputs are small. */
#ifndef NPK_TEST_PNG_CRC_H
#define NPK_TEST_PNG_CRC_H

#include <stddef.h>
#include <stdint.h>

#include "npukit/bytes.h"

static inline uint32_t npk_png_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

/* Rewrite the CRC of the chunk starting at `chunk` (its length field) in a
 * buffer of `n` bytes; returns 0 when the chunk does not fit. */
static inline int npk_png_seal_chunk(uint8_t *p, size_t n, size_t chunk)
{
    if (chunk > n || n - chunk < 12) return 0;
    size_t len = npk_ld32be(p + chunk);
    if (len > n - chunk - 12) return 0;
    npk_st32be(p + chunk + 8 + len, npk_png_crc(p + chunk + 4, len + 4));
    return 1;
}

#endif
