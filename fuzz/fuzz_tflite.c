/* The TFLite reader on its own (CPU models and the container of compiled
 * Edge TPU models): the graph, every name and table it exposes, and the
 * probe and summary of `npukit info`. Invariant: everything the model
 * points at lies inside the input. */
#include <string.h>

#include "npukit/tflite.h"
#include "core/formats.h"

static const uint8_t *lo, *hi;

static void inside(const void *p, size_t n)
{
    const uint8_t *b = p;
    if (!p) return;
    if (b < lo || b > hi || n > (size_t)(hi - b)) __builtin_trap();
}

static void walk(const npk_tfl_model *m)
{
    size_t sink = 0;
    for (uint32_t i = 0; i < m->nopcodes; i++) {
        const char *n = npk_tfl_builtin_name(m->opcodes[i].builtin);
        sink += n ? strlen(n) : 0;
    }
    for (uint32_t i = 0; i < m->nbuffers; i++) inside(m->buffers[i].data, m->buffers[i].size);
    for (uint32_t s = 0; s < m->nsubgraphs; s++) {
        const npk_tfl_subgraph *sg = &m->subgraphs[s];
        for (uint32_t t = 0; t < sg->ntensors; t++) {
            sink += npk_tfl_type_size(sg->tensors[t].type) +
                    strlen(npk_tfl_type_name(sg->tensors[t].type));
            if (sg->tensors[t].name) sink += strlen(sg->tensors[t].name);
        }
        for (uint32_t o = 0; o < sg->noperators; o++) {
            const npk_tfl_operator *op = &sg->operators[o];
            inside(op->custom_options, op->custom_options_len);
            const npk_tfl_opcode *oc = npk_tfl_op_code(m, op);
            if (oc && oc->custom_code) sink += strlen(oc->custom_code);
            for (uint32_t k = 0; k < op->ninputs; k++)
                if (op->inputs[k] < -1 || op->inputs[k] >= (int32_t)sg->ntensors) __builtin_trap();
        }
    }
    if (m->description) sink += strlen(m->description);
    __asm__ volatile("" : : "r"(sink));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tfl_model m;
    npk_error err = {0};
    lo = data;
    hi = data + size;
    if (npk_tfl_parse(data, size, &m, &err) == NPK_OK) {
        walk(&m);
        npk_tfl_free(&m);
    }
    if (npk_tflite_probe(data, size)) {
        npk_summary sum = {0};
        npk_error_clear(&err);
        npk_tflite_summarize(data, size, &sum, &err);
    }
    return 0;
}
