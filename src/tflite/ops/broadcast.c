/* Broadcasting two shapes (broadcast.h). */
#include "tflite/broadcast.h"

npk_status npk_tfl_bcast_init(npk_tfl_plan *p, const npk_tfl_node *n, const npk_tfl_rt *a,
                              const npk_tfl_rt *b, npk_tfl_bcast *bc)
{
    const uint32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    bc->ndim = nd;
    bc->same = a->ndim == b->ndim;
    size_t st1 = 1, st2 = 1;
    for (uint32_t k = 0; k < nd; k++) {
        const uint32_t d = nd - 1 - k;
        const int32_t da = k < a->ndim ? a->dims[a->ndim - 1 - k] : 1;
        const int32_t db = k < b->ndim ? b->dims[b->ndim - 1 - k] : 1;
        if (da != db && da != 1 && db != 1) {
            char x[96], y[96];
            return npk_tfl_k_fail(p, n, "shapes %s and %s do not broadcast",
                                  npk_tfl_k_shape_str(a->dims, a->ndim, x, sizeof x),
                                  npk_tfl_k_shape_str(b->dims, b->ndim, y, sizeof y));
        }
        if (da != db) bc->same = false;
        bc->dims[d] = da == 1 ? db : da;
        bc->s1[d] = da == 1 ? 0 : st1;
        bc->s2[d] = db == 1 ? 0 : st2;
        st1 *= (size_t)da;
        st2 *= (size_t)db;
    }
    return NPK_OK;
}

npk_status npk_tfl_arith_prepare(npk_tfl_plan *p, npk_tfl_node *n, size_t bytes)
{
    npk_status st;
    if ((st = npk_tfl_k_io(p, n, 2, 2, 2, 1))) return st;
    const npk_tfl_rt *a = n->in[0], *b = n->in[1], *out = n->out[0];
    const int8_t type = a->type;
    if (type != NPK_TFL_UINT8 && type != NPK_TFL_INT8 && type != NPK_TFL_FLOAT32 &&
        type != NPK_TFL_INT32)
        return npk_tfl_k_unsupported(p, n, "input type %s", npk_tfl_type_name(type));
    if ((st = npk_tfl_k_type(p, n, b, "input 1", type)) ||
        (st = npk_tfl_k_type(p, n, out, "output", type)))
        return st;
    npk_tfl_arith *h = npk_tfl_k_alloc(p, n, bytes);
    if (!h) return NPK_E_NOMEM;
    n->params = h;
    h->type = type;
    if ((st = npk_tfl_bcast_init(p, n, a, b, &h->bc)) ||
        (st = npk_tfl_k_output_shape(p, n, 0, h->bc.ndim, h->bc.dims)))
        return st;
    int act;
    if ((st = npk_tfl_k_activation(p, n, &act))) return st;
    if (type == NPK_TFL_FLOAT32) {
        npk_tfl_k_act_range_f(act, &h->fmin, &h->fmax);
        return NPK_OK;
    }
    if (type == NPK_TFL_INT32) {
        npk_q_activation_range(act, NPK_TFL_INT32, 1.0f, 0, &h->act_min, &h->act_max);
        return NPK_OK;
    }
    int32_t za, zb;
    if ((st = npk_tfl_k_quant(p, n, a, "input 0", &h->s1, &za)) ||
        (st = npk_tfl_k_quant(p, n, b, "input 1", &h->s2, &zb)) ||
        (st = npk_tfl_k_quant(p, n, out, "output", &h->s_out, &h->out_zero)))
        return st;
    h->off1 = -za;
    h->off2 = -zb;
    npk_tfl_k_act_range(out, act, &h->act_min, &h->act_max);
    return NPK_OK;
}
