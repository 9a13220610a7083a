/* Internal: orderings the custom ops need, defined so that results do not
 * depend on a C++ library's unspecified choices (docs/tflite.md). */
#ifndef NPK_TFL_ARGSORT_H
#define NPK_TFL_ARGSORT_H

#include <stddef.h>
#include <stdint.h>

/* idx = 0..n-1 ordered by v[] from largest to smallest, equal values in
 * index order: std::stable_sort with v[i] > v[j] (TFLite's
 * DecreasingArgSort). tmp holds n entries. */
void npk_tfl_argsort_desc(const float *v, int32_t *idx, int32_t *tmp, size_t n);

/* The index of the first largest value of v[0..n-1] (TFLite's
 * ArgMaxVector: a later value replaces the maximum only when greater). */
size_t npk_tfl_argmax_first(const float *v, size_t n);

/* The k largest of v[0..n-1] into idx[0..k-1], largest first, equal values
 * in index order (k <= n). */
void npk_tfl_topk_desc(const float *v, size_t n, int32_t *idx, size_t k);

#endif
