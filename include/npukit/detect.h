/* Format detection and one-screen summaries, driven by one table
 * (src/core/formats.c): adding a format means adding one entry there. */
#ifndef NPUKIT_DETECT_H
#define NPUKIT_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A flat list of typed facts about a file, rendered by the CLI as text or JSON. */
typedef enum npk_kv_type {
    NPK_KV_STR,
    NPK_KV_INT,
    NPK_KV_UINT,
    NPK_KV_HEX,
    NPK_KV_FLOAT,
    NPK_KV_BOOL
} npk_kv_type;

#define NPK_SUMMARY_MAX 48
#define NPK_KV_KEY_MAX  40
#define NPK_KV_STR_MAX  160

typedef struct npk_kv {
    char key[NPK_KV_KEY_MAX];
    npk_kv_type type;
    union {
        int64_t i;
        uint64_t u; /* UINT and HEX */
        double f;
        bool b;
    } v;
    char s[NPK_KV_STR_MAX];
} npk_kv;

typedef struct npk_summary {
    char title[NPK_KV_STR_MAX]; /* one-line human description */
    npk_kv kv[NPK_SUMMARY_MAX];
    int count;
    /* Set by a summarizer that fails on a malformed file but still
     * described it (e.g. a CNN v2 file whose header reads but whose layer
     * table is wrong): `npukit info` prints the summary, then the error. */
    bool malformed;
} npk_summary;

void npk_sum_title(npk_summary *s, const char *fmt, ...) NPK_PRINTF(2, 3);
void npk_sum_str(npk_summary *s, const char *key, const char *fmt, ...) NPK_PRINTF(3, 4);
void npk_sum_int(npk_summary *s, const char *key, int64_t v);
void npk_sum_uint(npk_summary *s, const char *key, uint64_t v);
void npk_sum_hex(npk_summary *s, const char *key, uint64_t v);
void npk_sum_float(npk_summary *s, const char *key, double v);
void npk_sum_bool(npk_summary *s, const char *key, bool v);

typedef struct npk_format {
    const char *name;        /* stable identifier used in JSON, e.g. "mgk" */
    const char *description; /* e.g. "Ingenic MGK model" */
    /* Cheap test on the bytes; never reads out of bounds. */
    bool (*probe)(const uint8_t *buf, size_t len);
    /* Fill a summary; may fail on malformed input (with an offset). NULL: none. */
    npk_status (*summarize)(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err);
} npk_format;

/* True for formats whose probe and summary mean something on the first
 * bytes of an endless stream (plain text, CSV): `info` reads no further. */
bool npk_format_prefix_ok(const npk_format *f);

/* Bytes of a stream (pipe, device) `info` reads before it decides: enough
 * for every magic and header it probes. */
#define NPK_DETECT_PREFIX ((size_t)1 << 20)

/* The first format whose probe accepts buf, or NULL. */
const npk_format *npk_detect(const uint8_t *buf, size_t len);
/* All known formats, in probe order. */
const npk_format *npk_formats(size_t *count);
const npk_format *npk_format_by_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
