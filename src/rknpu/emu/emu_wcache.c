/* The B operand of direct int8 convolutions (the kernels packed for
 * gemm_s32, with the list of channels some weight uses), kept across tasks
 * and runs of one emulator.
 *
 * Why it stays correct when device memory changes between runs: the host
 * writes mapped memory through its own pointers, unseen by the emulator, so
 * nothing is invalidated on writes. Instead every entry keeps a copy of the
 * exact weight bytes it was packed from, and a task uses the entry only when
 * its weight span (address, shape, length) matches and memcmp finds the
 * bytes equal: the packing is a function of those bytes and that shape
 * alone, so an equal input gives the equal result. The compare reads the
 * weights once, sequentially; the packing it saves writes them two bytes at
 * a time in a scattered order and scans every channel for zero kernels. */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* Cache no more than this much (raw copies + packed operands). */
#define WCACHE_MAX_BYTES   ((size_t)256 << 20)
#define WCACHE_MAX_ENTRIES 4096

static bool same_shape(const emu_wpack *p, const emu_task *t, bool packed, size_t raw)
{
    return p->wt_addr == t->wt_addr && p->n == t->n && p->c == t->c && p->kw == t->kw &&
           p->kh == t->kh && p->group == t->group && p->packed == packed && p->raw_bytes == raw;
}

emu_wpack *emu_wcache_find(npk_rk_emu *e, const emu_task *t, bool packed, size_t raw)
{
    for (size_t i = 0; i < e->nwp; i++) {
        emu_wpack *p = &e->wp[i];
        if (same_shape(p, t, packed, raw) && memcmp(p->raw, t->wt, raw) == 0) return p;
    }
    return NULL;
}

static void drop(npk_rk_emu *e, emu_wpack *p)
{
    e->wp_bytes -= p->raw_bytes + p->b_bytes;
    free(p->raw);
    free(p->b);
    free(p->use);
    free(p->uni);
    free(p->wabs);
    memset(p, 0, sizeof *p);
}

emu_wpack *emu_wcache_add(npk_rk_emu *e, const emu_task *t, bool packed, size_t raw, size_t b_bytes)
{
    /* An entry for the same span with other bytes is replaced. */
    emu_wpack *p = NULL;
    for (size_t i = 0; i < e->nwp && !p; i++)
        if (same_shape(&e->wp[i], t, packed, raw)) p = &e->wp[i], drop(e, p);
    if (!p) {
        if (e->nwp == WCACHE_MAX_ENTRIES) return NULL;
        if (e->nwp == e->cap_wp) {
            size_t cap = e->cap_wp ? 2 * e->cap_wp : 64;
            emu_wpack *n = realloc(e->wp, cap * sizeof *n);
            if (!n) return NULL;
            e->wp = n, e->cap_wp = cap;
        }
        p = &e->wp[e->nwp++];
        memset(p, 0, sizeof *p);
    }
    if (raw + b_bytes > WCACHE_MAX_BYTES - e->wp_bytes || !(p->raw = malloc(raw ? raw : 1)) ||
        !(p->b = malloc(b_bytes ? b_bytes : 1)) ||
        !(p->use = malloc((t->c ? t->c : 1) * sizeof *p->use)) ||
        !(p->uni = malloc(t->c ? t->c : 1)) ||
        !(p->wabs = malloc((t->n ? t->n : 1) * sizeof *p->wabs))) {
        free(p->raw), free(p->b), free(p->use), free(p->uni), free(p->wabs);
        *p = e->wp[--e->nwp]; /* the last entry takes the empty slot */
        return NULL;
    }
    memcpy(p->raw, t->wt, raw);
    p->wt_addr = t->wt_addr, p->n = t->n, p->c = t->c, p->kw = t->kw, p->kh = t->kh;
    p->group = t->group, p->packed = packed, p->raw_bytes = raw, p->b_bytes = b_bytes;
    e->wp_bytes += raw + b_bytes;
    return p;
}

void emu_wcache_free(npk_rk_emu *e)
{
    for (size_t i = 0; i < e->nwp; i++) drop(e, &e->wp[i]);
    free(e->wp);
    e->wp = NULL, e->nwp = e->cap_wp = 0;
}
