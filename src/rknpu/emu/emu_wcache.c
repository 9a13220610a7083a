/* The B operand of direct int8 convolutions (the kernels packed for
 * gemm_s32, with the list of channels some weight uses), and depthwise
 * tasks' re-laid weights with their bounds (emu_conv.c), kept across tasks
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
 * a time in a scattered order and scans every channel for zero kernels.
 *
 * The compare is skipped only where the emulator sees every write: a
 * mapping made with npk_rk_emu_map_tracked, whose host promised to call
 * npk_rk_emu_touch after each write of its own, gets a new generation
 * (unique over all mappings and their states) on every touch, and on every
 * task that writes into it (at the task's decode, before it writes). An
 * entry read from such a mapping keeps the generation and host address it
 * saw; while the mapping still has both, no write has happened since and
 * the bytes are the ones packed. The one write after that point the
 * generation does not show is the packing task's own output, when it lies
 * in the weights' mapping: such an entry records no generation (compared
 * every time). Untracked mappings (plain npk_rk_emu_map: the host writes
 * unseen, e.g. through npk_rk_emu_host) are always compared. */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* Cache no more than this much (raw copies + packed operands). */
#define WCACHE_MAX_BYTES   ((size_t)256 << 20)
#define WCACHE_MAX_ENTRIES 4096

static bool same_shape(const emu_wpack *p, const emu_task *t, bool packed, size_t raw)
{
    return p->wt_addr == t->wt_addr && p->n == t->n && p->c == t->c && p->kw == t->kw &&
           p->kh == t->kh && p->group == t->group && p->packed == packed && p->dw == t->dw &&
           p->raw_bytes == raw;
}

/* The generation of the mapping the task's weights are read from, unless
 * the task's own output goes into that mapping after them: 0. */
static uint64_t read_gen(const npk_rk_emu *e, const emu_task *t, size_t raw)
{
    const uint64_t gen = emu_span_gen(e, t->wt_addr, raw);
    return gen && emu_span_gen(e, t->dst_addr, t->out_span) != gen ? gen : 0;
}

emu_wpack *emu_wcache_find(npk_rk_emu *e, const emu_task *t, bool packed, size_t raw)
{
    for (size_t i = 0; i < e->nwp; i++) {
        emu_wpack *p = &e->wp[i];
        if (!same_shape(p, t, packed, raw)) continue;
        if (p->gen && p->host == t->wt && p->gen == emu_span_gen(e, t->wt_addr, raw)) return p;
        if (memcmp(p->raw, t->wt, raw) == 0) {
            p->gen = read_gen(e, t, raw), p->host = t->wt; /* unchanged since this */
            return p;
        }
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
    free(p->b16);
    e->wp_bytes -= p->b16_bytes;
    memset(p, 0, sizeof *p);
}

void *emu_cache_grow(void *arr, size_t n, size_t *cap, size_t max, size_t elem, size_t first)
{
    if (n == max) return NULL;
    if (n == *cap) {
        size_t c = *cap ? 2 * *cap : first;
        void *g = realloc(arr, c * elem);
        if (!g) return NULL;
        arr = g, *cap = c;
    }
    memset((uint8_t *)arr + n * elem, 0, elem);
    return arr;
}

emu_wpack *emu_wcache_add(npk_rk_emu *e, const emu_task *t, bool packed, size_t raw, size_t b_bytes)
{
    /* An entry for the same span with other bytes is replaced. */
    emu_wpack *p = NULL;
    for (size_t i = 0; i < e->nwp && !p; i++)
        if (same_shape(&e->wp[i], t, packed, raw)) p = &e->wp[i], drop(e, p);
    if (!p) {
        emu_wpack *g = emu_cache_grow(e->wp, e->nwp, &e->cap_wp, WCACHE_MAX_ENTRIES, sizeof *g, 64);
        if (!g) return NULL;
        e->wp = g, p = &g[e->nwp++];
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
    p->gen = read_gen(e, t, raw), p->host = t->wt;
    p->wt_addr = t->wt_addr, p->n = t->n, p->c = t->c, p->kw = t->kw, p->kh = t->kh;
    p->group = t->group, p->packed = packed, p->dw = t->dw, p->raw_bytes = raw,
    p->b_bytes = b_bytes;
    e->wp_bytes += raw + b_bytes;
    return p;
}

bool emu_wcache_b16(npk_rk_emu *e, emu_wpack *p, size_t bytes)
{
    if (p->b16) return p->b16_bytes == bytes;
    if (bytes > WCACHE_MAX_BYTES - e->wp_bytes || !(p->b16 = malloc(bytes ? bytes : 1)))
        return false;
    p->b16_bytes = bytes;
    e->wp_bytes += bytes;
    return true;
}

void emu_wcache_free(npk_rk_emu *e)
{
    for (size_t i = 0; i < e->nwp; i++) drop(e, &e->wp[i]);
    free(e->wp);
    e->wp = NULL, e->nwp = e->cap_wp = 0;
}
