/* The DPU stages' per-channel operands of a task (emu_exec.c's ops: add and
 * multiply of BS, BN, EW per channel, with room after them), kept across
 * runs where the emulator can tell their source bytes did not change: each
 * operand stream must lie in a tracked mapping (npk_rk_emu_map_tracked)
 * still at the generation it had when the operands were read, and the
 * task's own output must not go into that mapping (its write comes after
 * the read and renews nothing). Everything else that decides the operands
 * (the stages' switches, register operands, record layout, stream host
 * addresses, the channel count) is compared in full. Untracked streams are
 * read every run, as before. */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define OPCACHE_MAX 1024 /* entries (a network's tasks) */

/* What decides a task's operands. */
static void make_key(const npk_rk_emu *e, const emu_task *t, emu_opkey *k)
{
    memset(k, 0, sizeof *k);
    const emu_stage *sg[3] = {&t->bs, &t->bn, &t->ew};
    k->n = t->n;
    const uint64_t out_gen = emu_span_gen(e, t->dst_addr, t->out_span);
    for (int i = 0; i < 3; i++) {
        const emu_stage *s = sg[i];
        k->flags[i] =
            (uint8_t)(s->on | s->add << 1 | s->add_mem << 2 | s->mul << 3 | s->mul_mem << 4);
        k->add_op[i] = s->add_op, k->mul_op[i] = s->mul_op;
        k->rec[i] = s->stream_rec, k->mul_at[i] = s->mul_at;
        if (s->on && ((s->add && s->add_mem) || (s->mul && s->mul_mem))) {
            k->stream[i] = s->stream;
            const uint64_t g = emu_host_gen(e, s->stream, (uint64_t)t->n * s->stream_rec);
            k->gen[i] = g && g != out_gen ? g : 0;
            if (!k->gen[i]) k->untracked = true;
        }
    }
}

int32_t *emu_opcache_find(npk_rk_emu *e, const emu_task *t, uint64_t *stamp)
{
    emu_opkey k;
    make_key(e, t, &k);
    if (k.untracked) return NULL;
    for (size_t i = 0; i < e->nopc; i++)
        if (!memcmp(&e->opc[i].key, &k, sizeof k)) {
            *stamp = e->opc[i].stamp;
            return e->opc[i].ops;
        }
    return NULL;
}

int32_t *emu_opcache_add(npk_rk_emu *e, const emu_task *t, size_t bytes, uint64_t *stamp)
{
    emu_opkey k;
    make_key(e, t, &k);
    if (k.untracked) return NULL;
    /* an entry for the same streams and shape at an older generation goes */
    emu_opentry *p = NULL;
    for (size_t i = 0; i < e->nopc && !p; i++) {
        emu_opkey o; /* copied bytewise: the padding stays zero */
        memcpy(&o, &e->opc[i].key, sizeof o);
        memcpy(o.gen, k.gen, sizeof o.gen);
        if (!memcmp(&o, &k, sizeof k)) p = &e->opc[i];
    }
    if (!p) {
        emu_opentry *g = emu_cache_grow(e->opc, e->nopc, &e->cap_opc, OPCACHE_MAX, sizeof *g, 32);
        if (!g) return NULL;
        e->opc = g, p = &g[e->nopc++];
    }
    if (p->bytes < bytes) {
        int32_t *n = realloc(p->ops, bytes);
        if (!n) {
            free(p->ops);
            *p = e->opc[--e->nopc]; /* the last entry takes the empty slot */
            return NULL;
        }
        p->ops = n, p->bytes = bytes;
    }
    memcpy(&p->key, &k, sizeof k);
    p->stamp = *stamp = ++e->opc_stamp;
    return p->ops;
}

void emu_opcache_free(npk_rk_emu *e)
{
    for (size_t i = 0; i < e->nopc; i++) free(e->opc[i].ops);
    free(e->opc);
    e->opc = NULL, e->nopc = e->cap_opc = 0;
}
