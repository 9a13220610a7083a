/* Internal: reading a TFLite custom op's options, a FlexBuffer map in the
 * operator's custom_options (TFLite_Detection_PostProcess, PosenetDecoderOp).
 * The bytes are hostile: every key is looked up through the bounds-checked
 * FlexBuffers reader and its type checked; errors name the operator and the
 * key, at the offset of the value. Unknown keys are ignored, as TFLite does. */
#ifndef NPK_TFL_CUSTOM_OPTS_H
#define NPK_TFL_CUSTOM_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "npukit/flatbuf.h"
#include "tflite/kernel.h"

typedef struct npk_tfl_copts {
    npk_tfl_plan *p;
    const npk_tfl_node *n;
    npk_flex_vec map;
} npk_tfl_copts;

/* The options map of the operator (missing or malformed options fail). */
npk_status npk_tfl_copts_open(npk_tfl_plan *p, const npk_tfl_node *n, npk_tfl_copts *o);

/* One option. A key that is absent or null takes def, or fails when
 * required. Integers (INT, UINT or BOOL values) must lie in [lo, hi]; floats
 * (FLOAT, INT or UINT values, rounded to float32 as TFLite's AsFloat does)
 * must be finite; booleans are BOOL, INT or UINT values (non-zero is true). */
npk_status npk_tfl_copts_int(npk_tfl_copts *o, const char *key, bool required, int32_t def,
                             int32_t lo, int32_t hi, int32_t *v);
npk_status npk_tfl_copts_float(npk_tfl_copts *o, const char *key, bool required, float def,
                               float *v);
npk_status npk_tfl_copts_bool(npk_tfl_copts *o, const char *key, bool required, bool def, bool *v);

#endif
