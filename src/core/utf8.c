/* UTF-8 well-formedness (RFC 3629, Unicode table 3-7) and repair. */
#include <stdlib.h>
#include <string.h>

#include "npukit/utf8.h"

size_t npk_utf8_seq(const unsigned char *s, size_t n)
{
    if (!n) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlongs */
        else if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* no overlongs */
        else if (c == 0xf4)
            hi = 0x8f; /* nothing past U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return len;
}

bool npk_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = npk_utf8_seq(p + i, n - i);
        if (!k) return false;
        i += k;
    }
    return true;
}

char *npk_utf8_sanitize(const char *s, size_t n, size_t *replaced)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t bad = 0;
    if (n > (((size_t)-1) - 1) / 3) return NULL;
    char *out = malloc(3 * n + 1), *o = out; /* U+FFFD is 3 bytes per replaced byte */
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        size_t k = npk_utf8_seq(p + i, n - i);
        if (k) {
            memcpy(o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            bad++;
        }
    }
    *o = 0;
    if (replaced) *replaced = bad;
    return out;
}
