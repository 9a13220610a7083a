/* Whole networks: the layout conversion at NPU <-> CPU boundaries and the
 * per-task time estimate. */
#include <string.h>

#include "net_internal.h"

void npk_rk_net_pack(const uint8_t *x, bool u8, int32_t zero_point, uint32_t h, uint32_t w,
                     uint32_t c, uint32_t planes, uint8_t *dst)
{
    size_t px_n = (size_t)h * w;
    uint8_t flip = u8 ? 0x80 : 0; /* stored domain: uint8 u as u - 128 */
    uint8_t zp = (uint8_t)((uint8_t)zero_point ^ flip);
    for (uint32_t p = 0; p < planes; p++) {
        uint32_t c0 = p * 16, n = c0 >= c ? 0 : c - c0 < 16 ? c - c0 : 16;
        uint8_t *d = dst + (size_t)p * px_n * 16;
        if (n == 16 && !flip) {
            for (size_t px = 0; px < px_n; px++) memcpy(d + px * 16, x + px * c + c0, 16);
            continue;
        }
        if (n == 0) { /* a plane of padding channels only */
            memset(d, zp, px_n * 16);
            continue;
        }
        /* each atom: 16 bytes of the zero point stored whole, then the
         * channels over them (a byte loop up to 16 became a memset call per
         * pixel; bytes gathered in a local and loaded whole stall the load) */
        uint8_t zs[16];
        memset(zs, zp, sizeof zs);
        for (size_t px = 0; px < px_n; px++) {
            const uint8_t *s = x + px * c + c0;
            uint8_t *o = d + px * 16;
            memcpy(o, zs, sizeof zs);
            for (uint32_t k = 0; k < n; k++) o[k] = s[k] ^ flip;
        }
    }
}

void npk_rk_net_unpack(const uint8_t *src, bool u8, uint32_t h, uint32_t w, uint32_t c, uint8_t *y)
{
    size_t px_n = (size_t)h * w;
    uint8_t flip = u8 ? 0x80 : 0;
    for (uint32_t c0 = 0; c0 < c; c0 += 16) {
        uint32_t n = c - c0 < 16 ? c - c0 : 16;
        const uint8_t *s = src + (size_t)(c0 / 16) * px_n * 16;
        for (size_t px = 0; px < px_n; px++) {
            uint8_t *o = y + px * c + c0;
            const uint8_t *i = s + px * 16;
            if (!flip)
                memcpy(o, i, n);
            else
                for (uint32_t k = 0; k < n; k++) o[k] = i[k] ^ flip;
        }
    }
}

void npk_rk_net_estimate_defaults(npk_rk_net_estimate *e)
{
    e->macs_per_cycle = 1024;
    e->clock_hz = 1e9;
    e->bytes_per_s = 8e9;
    e->task_us = 10;
    e->dw_efficiency = 1.0 / 32;
}

double npk_rk_net_task_us(const npk_rk_net *net, size_t op, size_t task,
                          const npk_rk_net_estimate *e, uint64_t *bytes)
{
    const npk_rk_net_op *o = &net->ops[op];
    const npk_rk_lplan *p = &o->plan;
    const npk_rk_layer *l = &p->layer;
    const npk_rk_ltask *t = &p->tasks[task];
    bool chan = p->depthwise || l->kind == NPK_RK_LAYER_AVGPOOL || l->kind == NPK_RK_LAYER_MAXPOOL;
    uint64_t ich = chan ? t->ocn : p->cin;
    uint64_t rows = l->kind == NPK_RK_LAYER_ADD ? t->oh * 2u : t->ih ? t->ih : t->oh;
    uint64_t in = rows * l->in_w * ((ich + 15) / 16 * 16);
    uint64_t wt = p->cout ? p->wt_bytes * t->ocn / p->cout : 0;
    uint64_t out = (uint64_t)t->oh * l->out_w * ((t->ocn + 15) / 16 * 16);
    /* Sign-following pass 2: reads pass 1's output; in the vendor form the
     * weights stay in the CBUF (WEIGHT_REUSE). */
    if (t->pass == 2 && p->opts.form == NPK_RK_FORM_VENDOR && !t->requant_only) wt = 0;
    uint64_t b = in + wt + out + (t->pass == 2 ? out : 0);
    if (bytes) *bytes = b;
    double eff = chan || l->kind == NPK_RK_LAYER_ADD ? e->dw_efficiency : 1.0;
    double compute = (double)t->macs / (e->macs_per_cycle * eff * e->clock_hz);
    double mem = (double)b / e->bytes_per_s;
    return e->task_us + 1e6 * (compute > mem ? compute : mem);
}
