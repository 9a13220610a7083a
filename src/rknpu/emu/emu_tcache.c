/* Fetched streams kept decoded and checked across runs of one emulator.
 *
 * A fetch's work before the data path — decoding every stream entry,
 * checking every register and field, decoding the task and resolving its
 * spans — is a function of: the stream's bytes, the core's register file
 * before the fetch (a task may leave optional registers unwritten and read
 * what an earlier task left), the fetch's address and amount, and the
 * mapping table (which host bytes an address names). Nothing else: the
 * decode reads no device memory but the stream. So a fetch whose inputs
 * are all equal to those of a fetch that passed every check passes them
 * again with the same result, and that result is reused:
 * - the stream lies in a tracked mapping (npk_rk_emu_map_tracked) whose
 *   generation is the one it had at the kept fetch. A generation is renewed
 *   by every host write the emulator is told of (npk_rk_emu_touch,
 *   npk_rk_emu_host) and by every task whose output lies in the mapping, at
 *   its decode, before it writes; the kept generation is read at the fetch,
 *   before the fetch's own task is decoded, so that task's write into the
 *   stream's mapping (if any) also makes the entry miss. Equal generation:
 *   no write since the bytes were read. Untracked streams (the host may
 *   write them unseen) are decoded every time;
 * - the stream's host address, the fetch's address and amount, and the
 *   core's whole register file are compared in full; the mapping table's
 *   epoch (renewed by every map and unmap) guards the host pointers the
 *   decoded task holds.
 * A hit replays the fetch's effects on the machine exactly: the register
 * writes with their entry indices, the fetched-entries count, the budget the
 * decode took (a hit that would overrun it is decoded again, to fail as
 * before) and the renewal of the output's mapping. What depends on the state
 * of the run and not on the decode (WEIGHT_REUSE against the core's CBUF,
 * the data path) runs every time. */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define TCACHE_MAX 4096 /* kept fetches (a network's tasks) */

static bool same_fetch(const emu_tentry *h, int core, uint32_t addr, uint32_t amount)
{
    return h->core == core && h->addr == addr && h->amount == amount;
}

static emu_tentry *slot_of(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount)
{
    /* runs repeat their fetches in order: the entry after the last one
     * found comes first */
    if (e->tc_next < e->ntc && same_fetch(&e->tc[e->tc_next], core, addr, amount))
        return &e->tc[e->tc_next];
    for (size_t i = 0; i < e->ntc; i++)
        if (same_fetch(&e->tc[i], core, addr, amount)) return &e->tc[i];
    return NULL;
}

emu_tentry *emu_tcache_find(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount,
                            const uint8_t *host, uint64_t gen, const uint32_t *regs)
{
    if (!gen) return NULL;
    emu_tentry *h = slot_of(e, core, addr, amount);
    if (!h || h->host != host || h->gen != gen || h->epoch != e->map_epoch ||
        memcmp(h->pre, regs, sizeof h->pre))
        return NULL;
    e->tc_next = (size_t)(h - e->tc) + 1;
    return h;
}

void emu_tcache_put(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount, const uint8_t *host,
                    uint64_t gen, const uint32_t *pre, const emu_write *wr, size_t nwr,
                    const emu_fetch *fr, const emu_decoded *d)
{
    emu_tentry *h = slot_of(e, core, addr, amount); /* a fetch with other inputs: replaced */
    if (!h) {
        emu_tentry *g = emu_cache_grow(e->tc, e->ntc, &e->cap_tc, TCACHE_MAX, sizeof *g, 64);
        if (!g) return;
        e->tc = g, h = &g[e->ntc++];
    }
    if (h->cap_wr < nwr) {
        emu_write *n = realloc(h->wr, nwr * sizeof *n);
        if (!n) {
            h->gen = 0; /* never found */
            return;
        }
        h->wr = n, h->cap_wr = nwr;
    }
    if (nwr) memcpy(h->wr, wr, nwr * sizeof *wr);
    h->nwr = nwr;
    h->core = core, h->addr = addr, h->amount = amount, h->host = host;
    h->gen = gen, h->epoch = e->map_epoch;
    memcpy(h->pre, pre, sizeof h->pre);
    h->fr = *fr;
    h->d = *d;
    e->tc_next = (size_t)(h - e->tc) + 1;
}

void emu_tcache_free(npk_rk_emu *e)
{
    for (size_t i = 0; i < e->ntc; i++) free(e->tc[i].wr);
    free(e->tc);
    e->tc = NULL, e->ntc = e->cap_tc = e->tc_next = 0;
}
