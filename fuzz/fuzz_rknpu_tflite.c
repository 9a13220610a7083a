/* The RKNPU TFLite front end on arbitrary models: every operator lowered
 * (or refused with a message naming it), each lowered layer planned at its
 * place in a bundle (or refused with a message). Invariants: a lowered
 * layer's weights lie inside the input; an error always has a message that
 * names the operator; the bundle's records, submits and streams agree. */
#include <string.h>

#include "npukit/rknpu_bundle.h"
#include "npukit/rknpu_stream.h"
#include "npukit/rknpu_tflite.h"

#define MAX_OPS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tfl_model m;
    if (npk_tfl_parse(data, size, &m, NULL) != NPK_OK) return 0;
    npk_rk_tfl_layer ls[MAX_OPS];
    const npk_rk_layer *lp[MAX_OPS];
    const char *names[MAX_OPS];
    size_t n = 0;
    for (uint32_t s = 0; s < m.nsubgraphs && s < 2; s++)
        for (uint32_t i = 0; i < m.subgraphs[s].noperators && n < MAX_OPS; i++) {
            npk_error err = {0};
            if (npk_rk_tfl_lower(&m, s, i, &ls[n], &err) != NPK_OK) {
                if (!err.msg[0]) __builtin_trap();
                continue;
            }
            const npk_rk_layer *l = &ls[n].layer;
            /* Weights in place: inside the model's bytes. */
            if (l->weights &&
                ((const uint8_t *)l->weights < data || (const uint8_t *)l->weights >= data + size))
                __builtin_trap();
            if (strncmp(ls[n].name, "operator ", 9)) __builtin_trap();
            /* Keep the planner's work small: skip layers with huge cubes. */
            uint64_t work = (uint64_t)l->out_h * l->out_w * l->out_c * l->k_h * l->k_w;
            if (work > (1u << 22) || (uint64_t)l->in_h * l->in_w * l->in_c > (1u << 22)) {
                npk_rk_tfl_layer_free(&ls[n]);
                continue;
            }
            lp[n] = l;
            names[n] = ls[n].name;
            n++;
        }
    for (size_t i = 0; i < n; i++) {
        npk_rk_bundle b;
        npk_rk_bundle_opts o = {(int)(i % 3) + 1,
                                i % 2 ? NPK_RK_FORM_ROCKET : NPK_RK_FORM_VENDOR,
                                i % 4 ? NPK_RK_RQ_EXACT : NPK_RK_RQ_SIMPLE,
                                0,
                                0,
                                0};
        npk_error err = {0};
        if (npk_rk_bundle_make(&lp[i], &names[i], 1, &o, &b, &err) != NPK_OK) {
            if (!err.msg[0] || strncmp(err.msg, "operator ", 9)) __builtin_trap();
            continue;
        }
        size_t t = 0;
        for (size_t k = 0; k < b.nops; k++) {
            const npk_rk_lplan *p = &b.ops[k].plan;
            if (b.ops[k].task_first != t) __builtin_trap();
            for (size_t j = 0; j < p->count; j++) {
                const npk_rknpu_task *r = &b.records[t + j];
                uint64_t off = r->regcmd_addr - b.opts.regcmd_addr;
                if (r->regcmd_addr < b.opts.regcmd_addr ||
                    off + (uint64_t)p->tasks[j].entries * 8 > (uint64_t)b.regcmd_entries * 8)
                    __builtin_trap();
                for (size_t e = 0; e < p->tasks[j].entries; e++) {
                    npk_rk_entry en;
                    npk_rk_entry_decode(b.regcmd[off / 8 + e], &en);
                    if (en.problems) __builtin_trap();
                }
            }
            if (b.submits[k].task_number != p->count) __builtin_trap();
            t += p->count;
        }
        if (t != b.ntasks) __builtin_trap();
        npk_rk_bundle_free(&b);
    }
    for (size_t i = 0; i < n; i++) npk_rk_tfl_layer_free(&ls[i]);
    npk_tfl_free(&m);
    return 0;
}
