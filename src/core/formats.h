/* Probe and summary functions of every format in the table (formats.c).
 * Each is implemented next to its format's parser. */
#ifndef NPK_FORMATS_H
#define NPK_FORMATS_H

#include "npukit/detect.h"

#define NPK_FORMAT_DECL(prefix)                                                                    \
    bool prefix##_probe(const uint8_t *buf, size_t len);                                           \
    npk_status prefix##_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err);

NPK_FORMAT_DECL(npk_mgk)
NPK_FORMAT_DECL(npk_tflite)
NPK_FORMAT_DECL(npk_cnn2)
NPK_FORMAT_DECL(npk_npy)
NPK_FORMAT_DECL(npk_st)
NPK_FORMAT_DECL(npk_rknpu_stream)
NPK_FORMAT_DECL(npk_rknpu_regdb)
NPK_FORMAT_DECL(npk_edgetpu_sidecar)

bool npk_json_probe(const uint8_t *buf, size_t len);
bool npk_csv_probe(const uint8_t *buf, size_t len);
bool npk_text_probe(const uint8_t *buf, size_t len);
npk_status npk_text_summarize(const uint8_t *buf, size_t len, npk_summary *out, npk_error *err);

/* Shared text helpers for probes. */
bool npk_is_text(const uint8_t *buf, size_t len);
size_t npk_count_lines(const uint8_t *buf, size_t len);

#endif
