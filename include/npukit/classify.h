/* Classification results: label files and the top K of a score vector.
 * Shared by `npukit tflite classify` and the targets' runs on pictures
 * (docs/tflite.md, "classify").
 *
 * Label files (hostile input: lengths and counts are bounded) come in two
 * formats, told apart by their lines:
 *   plain    one label per line, line i = entry i (TF Hub's
 *            imagenet_labels.txt: 1001 lines, "background" first; Coral's
 *            coco_labels.txt: 90 lines, "n/a" for unused ids);
 *   indexed  every non-empty line is "ID LABEL" or "ID: LABEL" (Coral's
 *            "0  person"): the class index is the ID.
 * CR before LF is dropped; a UTF-8 byte-order mark at the start is
 * skipped; the label is the rest of the line with surrounding blanks
 * removed. */
#ifndef NPUKIT_CLASSIFY_H
#define NPUKIT_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on a label file. */
#define NPK_LABELS_MAX_COUNT 1000000u
#define NPK_LABELS_MAX_LINE  4096u

typedef struct npk_labels {
    uint32_t count; /* entries */
    bool indexed;   /* the file gives the class index of each entry */
    char **name;    /* name[i], NUL-terminated */
    int64_t *id;    /* id[i]: the file's index (indexed), else i */
    void *mem;      /* private */
} npk_labels;

npk_status npk_labels_parse(const uint8_t *buf, size_t len, npk_labels *l, npk_error *err);
npk_status npk_labels_load(const char *path, npk_labels *l, npk_error *err);
void npk_labels_free(npk_labels *l);

/* The label of class c of an output with nclasses classes, or NULL when the
 * file has none for it. Indexed files: the entry whose id is c. Plain files
 * are matched to the class count:
 *   count == nclasses      line c;
 *   count == nclasses - 1  the model has a background class 0 the file
 *                          leaves out: class 0 is "background", class c is
 *                          line c - 1 (a 1001-class model, a 1000-line file);
 *   count == nclasses + 1  the file has a background line the model leaves
 *                          out: class c is line c + 1 (a 1000-class model, a
 *                          1001-line file);
 *   otherwise              line c while there is one. */
const char *npk_labels_name(const npk_labels *l, uint32_t c, uint32_t nclasses);

/* One class of a result. */
typedef struct npk_class_score {
    uint32_t index; /* class index (position in the score vector) */
    int64_t raw;    /* the stored value (integers); 0 for floats */
    double score;   /* scale * (raw - zero_point) for quantised scores, else the value */
} npk_class_score;

/* The k highest of n scores (dtype U8, I8, I16, I32 or F32, host order),
 * highest first, equal scores by lower index; NaN ranks lowest. Quantised
 * integer scores are dequantised with scale and zero_point (scale > 0);
 * scale <= 0 gives the raw values. Returns min(k, n), or 0 with err filled
 * for an unsupported dtype. */
size_t npk_top_k(const void *data, npk_dtype dt, size_t n, double scale, int32_t zero_point,
                 size_t k, npk_class_score *out, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
