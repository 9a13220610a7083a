/* Internal: failing an op at invoke time, for the few ops whose data can be
 * invalid (a division by zero, a gather index out of range): the message
 * names the operator as plan-time errors do, with the offset of its table. */
#ifndef NPK_TFL_EVAL_FAIL_H
#define NPK_TFL_EVAL_FAIL_H

#include "tflite/kernel.h"

static inline npk_status npk_tfl_k_eval_fail(npk_tfl_exec *x, const npk_tfl_node *n,
                                             const char *what)
{
    return npk_fail_at(x->err, NPK_E_ARG, n->op->offset, "operator %u (%s): %s", n->index, n->name,
                       what);
}

#endif
