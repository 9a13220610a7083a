/* UTF-8 checks for strings taken from files (tensor and layer names,
 * symbols) before they go into JSON, which must be valid UTF-8. */
#ifndef NPUKIT_UTF8_H
#define NPUKIT_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length of the well-formed UTF-8 sequence at s[0..n) (1..4), or 0 when
 * s[0] does not start one (stray continuation byte, overlong form,
 * surrogate, beyond U+10FFFF, or cut short). */
size_t npk_utf8_seq(const unsigned char *s, size_t n);
/* True when all n bytes are well-formed UTF-8. */
bool npk_utf8_valid(const char *s, size_t n);
/* A malloc'd, NUL-terminated copy of s[0..n) in which every byte that is
 * not part of a well-formed sequence is replaced by U+FFFD; *replaced (may
 * be NULL) receives how many were. NULL when out of memory. */
char *npk_utf8_sanitize(const char *s, size_t n, size_t *replaced);

#ifdef __cplusplus
}
#endif
#endif
