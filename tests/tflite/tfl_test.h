/* Helpers for the TFLite tests: build small models with tflite_build.h,
 * run them through the interpreter, load fixture models. */
#ifndef TFL_TEST_H
#define TFL_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/tflite.h"
#include "npukit/tflite_build.h"
#include "npukit/tflite_interp.h"
#include "npukit/tflite_quant.h"

/* A tensor: type, shape, per-tensor quantisation (scale 0: none), optional data. */
static inline int32_t tt_add(npk_tflb *b, const char *name, int8_t type, uint32_t ndim,
                             const int32_t *shape, float scale, int64_t zp, const void *data,
                             size_t bytes)
{
    npk_tflb_tensor t = {name, type, ndim, shape, data, bytes, scale > 0 ? 1u : 0u, &scale, &zp, 0};
    int32_t i = npk_tflb_tensor_add(b, &t);
    assert_true(i >= 0);
    return i;
}

/* An operator with options (NULL: none). */
static inline void tt_op(npk_tflb *b, int32_t builtin, const int32_t *in, uint32_t nin,
                         const int32_t *out, uint32_t nout, const npk_tfl_options *o)
{
    npk_tflb_op op = {builtin, NULL, 1, in, nin, out, nout, o, NULL, 0};
    assert_true(npk_tflb_op_add(b, &op) >= 0);
}

/* Options of an op's type with fields set from "name=value" pairs. */
static inline npk_tfl_options tt_opts(int32_t builtin, const char *const *names,
                                      const double *values, int n)
{
    npk_tfl_options o;
    npk_error err = {0};
    assert_int_equal(npk_tfl_options_init(&o, npk_tfl_builtin_options_type(builtin), &err), NPK_OK);
    for (int i = 0; i < n; i++)
        assert_int_equal(npk_tfl_options_set(&o, names[i], values[i], &err), NPK_OK);
    return o;
}

/* A finished model, parsed; free with tt_model_free. */
typedef struct tt_model {
    uint8_t *bytes;
    size_t len;
    npk_tfl_model m;
} tt_model;

static inline void tt_finish(npk_tflb *b, tt_model *tm)
{
    npk_error err = {0};
    if (npk_tflb_finish(b, &tm->bytes, &tm->len, &err)) fail_msg("finish: %s", err.msg);
    npk_tflb_free(b);
    if (npk_tfl_parse(tm->bytes, tm->len, &tm->m, &err)) fail_msg("parse: %s", err.msg);
}

static inline void tt_model_free(tt_model *tm)
{
    npk_tfl_free(&tm->m);
    free(tm->bytes);
}

/* Plan (expecting success), fill input 0..n-1 from the given bytes, invoke,
 * return the interpreter for reading outputs. */
static inline npk_tfl_interp *tt_run(const tt_model *tm, const void *const *inputs, int threads)
{
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    npk_tfl_interp_opts o = {.threads = threads};
    if (npk_tfl_interp_new(&tm->m, &o, &it, &err)) fail_msg("plan: %s", err.msg);
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_tfl_interp_input(it, i, &v, &err), NPK_OK);
        memcpy(v.data, inputs[i], v.bytes);
    }
    if (npk_tfl_interp_invoke(it, &err)) fail_msg("invoke: %s", err.msg);
    return it;
}

/* Output i's bytes must equal expected. */
static inline void tt_expect(npk_tfl_interp *it, uint32_t i, const void *expected, size_t bytes)
{
    npk_tfl_view v;
    npk_error err = {0};
    assert_int_equal(npk_tfl_interp_output(it, i, &v, &err), NPK_OK);
    assert_int_equal(v.bytes, bytes);
    assert_memory_equal(v.data, expected, bytes);
}

/* Planning must fail with status st and a message containing needle. */
static inline void tt_plan_fails(const tt_model *tm, npk_status st, const char *needle)
{
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    npk_status got = npk_tfl_interp_new(&tm->m, NULL, &it, &err);
    if (got != st || !strstr(err.msg, needle))
        fail_msg("expected status %d with \"%s\", got %d: %s", st, needle, got, err.msg);
    assert_null(it);
}

#endif
