/* Binding object: a TFLite model, its bytes and its interpreter. */
#include <stdlib.h>

#include "bind_internal.h"
#include "npukit/tflite.h"

struct npk_bind_tfl {
    bind_src src;
    npk_tfl_model m;
    bool parsed;
    npk_tfl_interp *it;
};

void npk_bind_tfl_free(npk_bind_tfl *b)
{
    if (!b) return;
    npk_tfl_interp_free(b->it);
    if (b->parsed) npk_tfl_free(&b->m);
    bind_src_close(&b->src);
    free(b);
}

npk_status npk_bind_tfl_open(const char *path, const uint8_t *buf, size_t len, int threads,
                             npk_bind_tfl **out, npk_error *err)
{
    *out = NULL;
    npk_bind_tfl *b = calloc(1, sizeof *b);
    if (!b) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    npk_status st = bind_src_open(&b->src, path, buf, len, err);
    if (!st) st = npk_tfl_parse(b->src.data, b->src.size, &b->m, err);
    if (!st) {
        b->parsed = true;
        npk_tfl_interp_opts o = {.threads = threads};
        st = npk_tfl_interp_new(&b->m, &o, &b->it, err);
    }
    if (st) {
        npk_bind_tfl_free(b);
        return st;
    }
    *out = b;
    return NPK_OK;
}

npk_tfl_interp *npk_bind_tfl_interp(npk_bind_tfl *b)
{
    return b->it;
}

npk_dtype npk_bind_tfl_dtype(int type)
{
    switch (type) {
    case NPK_TFL_FLOAT32: return NPK_F32;
    case NPK_TFL_FLOAT16: return NPK_F16;
    case NPK_TFL_INT32: return NPK_I32;
    case NPK_TFL_UINT8: return NPK_U8;
    case NPK_TFL_INT64: return NPK_I64;
    case NPK_TFL_BOOL: return NPK_BOOL;
    case NPK_TFL_INT16: return NPK_I16;
    case NPK_TFL_INT8: return NPK_I8;
    case 10: return NPK_F64; /* FLOAT64 */
    case 12: return NPK_U64; /* UINT64 */
    case 15: return NPK_U32; /* UINT32 */
    case 16: return NPK_U16; /* UINT16 */
    default: return NPK_DT_INVALID;
    }
}

npk_status npk_bind_tfl_run(npk_bind_tfl *b, uint64_t repeat, const npk_progress *progress,
                            npk_error *err)
{
    if (repeat < 1) return npk_fail(err, NPK_E_ARG, "repeat must be at least 1");
    for (uint64_t k = 0; k < repeat; k++) {
        npk_status st = npk_tfl_interp_invoke(b->it, err);
        if (!st) st = npk_progress_report(progress, "run", k + 1, repeat, err);
        if (st) return st;
    }
    return NPK_OK;
}
