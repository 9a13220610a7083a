/* The TFLite interpreter on fuzzed models: parse, plan (checking every op
 * against its tensors), fill the inputs with a fixed pattern, invoke twice
 * (with two threads, then a cut at the first operator's output). Must never
 * crash, hang or read out of bounds; models with large tensors or many
 * operators are skipped so that each input runs in milliseconds. */
#include <string.h>

#include "npukit/tflite.h"
#include "npukit/tflite_interp.h"

#define MAX_ELEMENTS 4096
#define MAX_OPS      16
#define MAX_TENSORS  64

static int small_enough(const npk_tfl_model *m)
{
    if (m->nsubgraphs == 0) return 0;
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    if (sg->noperators > MAX_OPS || sg->ntensors > MAX_TENSORS) return 0;
    for (uint32_t i = 0; i < sg->ntensors; i++) {
        uint64_t n = 1;
        for (uint32_t d = 0; d < sg->tensors[i].ndim; d++) {
            const int32_t v = sg->tensors[i].shape[d];
            if (v < 0 || v > MAX_ELEMENTS) return 0;
            n *= (uint64_t)v;
            if (n > MAX_ELEMENTS) return 0;
        }
    }
    /* Windows are bounded by the shapes, but not strides and dilations:
     * the kernels' loops are over outputs, which the shapes bound. */
    return 1;
}

static void run(const npk_tfl_model *m, const npk_tfl_interp_opts *o)
{
    npk_tfl_interp *it = NULL;
    npk_error err = {0};
    if (npk_tfl_interp_new(m, o, &it, &err)) return;
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        if (npk_tfl_interp_input(it, i, &v, &err)) __builtin_trap();
        uint8_t *p = v.data;
        for (size_t k = 0; k < v.bytes; k++) p[k] = (uint8_t)(k * 37 + i);
    }
    if (npk_tfl_interp_invoke(it, &err) == NPK_OK) {
        size_t sink = 0;
        for (uint32_t i = 0; i < npk_tfl_interp_noutputs(it); i++) {
            npk_tfl_view v;
            if (npk_tfl_interp_output(it, i, &v, &err)) __builtin_trap();
            for (size_t k = 0; k < v.bytes; k++) sink += ((const uint8_t *)v.data)[k];
        }
        (void)sink;
    }
    if (npk_tfl_interp_arena_bytes(it) < npk_tfl_interp_peak_live_bytes(it)) __builtin_trap();
    npk_tfl_interp_free(it);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tfl_model m;
    npk_error err = {0};
    if (npk_tfl_parse(data, size, &m, &err)) return 0;
    if (small_enough(&m)) {
        npk_tfl_interp_opts o = {.threads = 2};
        run(&m, &o);
        const npk_tfl_subgraph *sg = &m.subgraphs[0];
        if (sg->noperators && sg->operators[0].noutputs) {
            npk_tfl_interp_opts c = {
                .outputs = sg->operators[0].outputs, .noutputs = 1, .keep_all = true};
            run(&m, &c);
        }
    }
    npk_tfl_free(&m);
    return 0;
}
