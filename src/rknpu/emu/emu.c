/* The emulator's machine: DMA mappings, per-core register files, the program
 * counter (fetch, execute register writes, start a task on the operation
 * enable, follow the tail to the next stream) and the vendor driver's
 * submit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "npukit/bytes.h"
#include "npukit/rknpu_stream.h"
#include "tflite/qkern.h"

npk_status emu_fail(const emu_where *w, npk_error *err, npk_status st, const char *fmt, ...)
{
    char msg[NPK_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!w) return npk_fail(err, st, "%s", msg);
    if (w->entry >= 0)
        return npk_fail(err, st, "core %d, task %u (stream 0x%08x, entry %ld): %s", w->core,
                        w->task, w->stream, w->entry, msg);
    return npk_fail(err, st, "core %d, task %u (stream 0x%08x): %s", w->core, w->task, w->stream,
                    msg);
}

const char *emu_field_name(npk_rk_field f, char *buf, size_t len)
{
    const npk_rk_field_info *fi = npk_rk_field_get(f);
    snprintf(buf, len, "%s.%s", npk_rk_reg_get(fi->reg)->full_name, fi->name);
    return buf;
}

void *emu_scratch_get(emu_scratch *s, size_t bytes)
{
    if (bytes <= s->cap) return s->p;
    void *p = NULL;
    size_t cap = bytes < 4096 ? 4096 : bytes;
    if (posix_memalign(&p, 64, cap)) return NULL;
    free(s->p);
    s->p = p;
    s->cap = cap;
    return p;
}

npk_status npk_rk_emu_create(const npk_rk_emu_opts *o, npk_rk_emu **out, npk_error *err)
{
    *out = NULL;
    if (o->cores != 1 && o->cores != NPK_RKNPU_MAX_CORES)
        return npk_fail(err, NPK_E_ARG, "emulator cores = %d: must be 1 or %d", o->cores,
                        NPK_RKNPU_MAX_CORES);
    npk_rk_emu *e = calloc(1, sizeof *e);
    if (!e) return npk_fail(err, NPK_E_NOMEM, "out of memory for the emulator");
    e->o = *o;
    e->simd = !o->portable && emu_gemm_simd_available();
    e->qk = o->portable ? &npk_tfl_qkern_portable : npk_tfl_qkern_get();
    *out = e;
    return NPK_OK;
}

void npk_rk_emu_destroy(npk_rk_emu *e)
{
    if (!e) return;
    free(e->a.p);
    free(e->b.p);
    free(e->c.p);
    free(e->t.p);
    free(e->s.p);
    free(e->ops.p);
    free(e->pb.p);
    free(e->work.p);
    free(e->im.p);
    free(e->s2.p);
    free(e->u.p);
    free(e->sf.p);
    emu_wcache_free(e);
    emu_opcache_free(e);
    emu_tcache_free(e);
    free(e->wr.p);
    free(e);
}

const char *npk_rk_emu_kernel(const npk_rk_emu *e)
{
    return e->simd ? "avx2-fma" : "portable";
}

static npk_status map(npk_rk_emu *e, uint32_t addr, void *host, size_t size, bool tracked,
                      npk_error *err)
{
    if (!size || !host) return npk_fail(err, NPK_E_ARG, "empty mapping at 0x%08x", addr);
    if ((uint64_t)addr + size > ((uint64_t)1 << 32))
        return npk_fail(err, NPK_E_ARG, "mapping of %zu bytes at 0x%08x passes 4 GiB", size, addr);
    if (e->nmaps == NPK_RK_EMU_MAX_MAPS)
        return npk_fail(err, NPK_E_LIMIT, "more than %d mappings", NPK_RK_EMU_MAX_MAPS);
    size_t i = 0;
    while (i < e->nmaps && e->maps[i].addr < addr) i++;
    if ((i > 0 && (uint64_t)e->maps[i - 1].addr + e->maps[i - 1].size > addr) ||
        (i < e->nmaps && (uint64_t)addr + size > e->maps[i].addr))
        return npk_fail(err, NPK_E_ARG, "mapping at 0x%08x (%zu bytes) overlaps another", addr,
                        size);
    memmove(&e->maps[i + 1], &e->maps[i], (e->nmaps - i) * sizeof e->maps[0]);
    e->maps[i] = (emu_map){addr, size, host, tracked ? ++e->gen : 0};
    e->nmaps++;
    e->map_epoch++;
    return NPK_OK;
}

npk_status npk_rk_emu_map(npk_rk_emu *e, uint32_t addr, void *host, size_t size, npk_error *err)
{
    return map(e, addr, host, size, false, err);
}

npk_status npk_rk_emu_map_tracked(npk_rk_emu *e, uint32_t addr, void *host, size_t size,
                                  npk_error *err)
{
    return map(e, addr, host, size, true, err);
}

/* The index of the mapping holding [addr, addr + len), else nmaps. */
static size_t find_map(const npk_rk_emu *e, uint32_t addr, uint64_t len)
{
    size_t i = 0;
    for (; i < e->nmaps; i++) {
        const emu_map *m = &e->maps[i];
        if (addr >= m->addr && addr - m->addr < m->size && len <= m->size - (addr - m->addr)) break;
    }
    return i;
}

void npk_rk_emu_touch(npk_rk_emu *e, uint32_t addr)
{
    size_t i = find_map(e, addr, 1);
    if (i < e->nmaps && e->maps[i].gen) e->maps[i].gen = ++e->gen;
}

uint8_t *emu_span_out(npk_rk_emu *e, uint32_t addr, uint64_t len)
{
    size_t i = find_map(e, addr, len);
    if (i == e->nmaps) return NULL;
    emu_map *m = &e->maps[i];
    if (m->gen) m->gen = ++e->gen;
    return m->host + (addr - m->addr);
}

uint64_t emu_host_gen(const npk_rk_emu *e, const uint8_t *p, uint64_t len)
{
    for (size_t i = 0; i < e->nmaps; i++) {
        const emu_map *m = &e->maps[i];
        if ((uintptr_t)p >= (uintptr_t)m->host && (uintptr_t)p - (uintptr_t)m->host < m->size &&
            len <= m->size - ((uintptr_t)p - (uintptr_t)m->host))
            return m->gen;
    }
    return 0;
}

uint64_t emu_span_gen(const npk_rk_emu *e, uint32_t addr, uint64_t len)
{
    size_t i = find_map(e, addr, len);
    return i < e->nmaps ? e->maps[i].gen : 0;
}

void npk_rk_emu_unmap(npk_rk_emu *e, uint32_t addr)
{
    for (size_t i = 0; i < e->nmaps; i++)
        if (e->maps[i].addr == addr) {
            memmove(&e->maps[i], &e->maps[i + 1], (e->nmaps - i - 1) * sizeof e->maps[0]);
            e->nmaps--;
            e->map_epoch++;
            return;
        }
}

uint8_t *emu_span(const npk_rk_emu *e, uint32_t addr, uint64_t len)
{
    size_t i = find_map(e, addr, len);
    return i < e->nmaps ? e->maps[i].host + (addr - e->maps[i].addr) : NULL;
}

void *npk_rk_emu_host(npk_rk_emu *e, uint32_t addr, size_t len)
{
    return emu_span_out(e, addr, len);
}

const npk_rk_emu_stats *npk_rk_emu_stats_get(const npk_rk_emu *e)
{
    return &e->st;
}

void npk_rk_emu_stats_clear(npk_rk_emu *e)
{
    memset(&e->st, 0, sizeof e->st);
}

/* ---- the program counter ---- */

static uint32_t int_done_bits(bool pool)
{
    if (pool)
        return npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_STATUS_PPU_0) |
               npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_STATUS_PPU_1);
    return npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_STATUS_DPU_0) |
           npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_STATUS_DPU_1);
}

/* The operation enable: which blocks start. The model runs a convolution
 * (CNA, CORE and DPU together; DPU_RDMA alongside for its operand streams)
 * or a pooling (PPU with PPU_RDMA reading from memory). */
static npk_status check_enable(uint32_t v, const emu_where *w, bool *pool, npk_error *err)
{
    const npk_rk_reg_info *ri = npk_rk_reg_get(NPK_RKR_GLOBAL_OPERATION_ENABLE);
    uint32_t known = 0;
    char fn[96];
    *pool = (v & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_PPU_OP_EN)) != 0;
    /* DPU with its read DMA and neither CNA nor CORE: an element-wise task. */
    bool eltwise = !*pool &&
                   !(v & (npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_CNA_OP_EN) |
                          npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_CORE_OP_EN))) &&
                   (v & npk_rk_field_mask(NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN));
    for (unsigned i = 0; i < ri->field_count; i++) {
        npk_rk_field f = (npk_rk_field)(ri->first_field + i);
        known |= npk_rk_field_mask(f);
        bool on = npk_rk_field_extract(f, v) != 0;
        bool needed, optional = false;
        if (*pool)
            needed = f == NPK_RKF_GLOBAL_OPERATION_ENABLE_PPU_OP_EN ||
                     f == NPK_RKF_GLOBAL_OPERATION_ENABLE_PPU_RDMA_OP_EN;
        else if (eltwise)
            needed = f == NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_OP_EN ||
                     f == NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN;
        else {
            needed = f == NPK_RKF_GLOBAL_OPERATION_ENABLE_CNA_OP_EN ||
                     f == NPK_RKF_GLOBAL_OPERATION_ENABLE_CORE_OP_EN ||
                     f == NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_OP_EN;
            optional = f == NPK_RKF_GLOBAL_OPERATION_ENABLE_DPU_RDMA_OP_EN;
        }
        if (needed && !on)
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "operation enable 0x%x leaves %s = 0: the emulator models only "
                            "convolutions (CNA, CORE and DPU together), element-wise tasks (DPU "
                            "with DPU_RDMA) and pooling (PPU with PPU_RDMA)",
                            v, emu_field_name(f, fn, sizeof fn));
        if (on && !needed && !optional)
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "operation enable 0x%x sets %s: the emulator does not model that block "
                            "in this combination",
                            v, emu_field_name(f, fn, sizeof fn));
    }
    if (v & ~known)
        return emu_fail(w, err, NPK_E_UNSUPPORTED,
                        "operation enable 0x%x sets bits 0x%x outside %s's fields", v, v & ~known,
                        ri->full_name);
    return NPK_OK;
}

/* The decode of a task: its operation enable, its registers, its fields
 * (what emu_tcache.c keeps). */
static npk_status decode(npk_rk_emu *e, emu_core *c, uint32_t enable, const emu_where *w,
                         emu_decoded *d, npk_error *err)
{
    npk_status st;
    const uint64_t budget = e->budget;
    if ((st = check_enable(enable, w, &d->pool, err)) ||
        (st = emu_check_registers(c, enable, w, err)))
        return st;
    if (d->pool) {
        if ((st = emu_decode_pool(e, c, w, &d->p, err))) return st;
        d->out_addr = d->p.dst_addr, d->out_len = d->p.out_span;
    } else {
        if ((st = emu_decode_task(e, c, enable, w, &d->t, err))) return st;
        d->out_addr = d->t.dst_addr, d->out_len = d->t.out_span;
    }
    d->work = budget - e->budget;
    return NPK_OK;
}

/* The run of a decoded task: what depends on the machine's state (the
 * core's CBUF) and the data path. */
static npk_status execute(npk_rk_emu *e, emu_core *c, emu_decoded *d, const emu_where *w,
                          npk_error *err)
{
    npk_status st;
    if (d->pool) {
        if ((st = emu_execute_pool(e, &d->p, w, err))) return st;
        c->cbuf_valid = false;
    } else {
        const emu_task *t = &d->t;
        /* WEIGHT_REUSE (Mesa sets it on a layer's later height slices when
         * all weights fit): the weights must be those this core's previous
         * task left in the CBUF, in the same bank split (inferred). */
        bool cna = !t->from_mem;
        if (cna && t->weight_reuse &&
            !(c->cbuf_valid && c->cbuf_wt_addr == t->wt_addr && c->cbuf_wt_span == t->wt_span &&
              c->cbuf_wbank == t->wbank && c->cbuf_dbank == t->dbank))
            return emu_fail(w, err, NPK_E_UNSUPPORTED,
                            "CNA_CBUF_CON0.WEIGHT_REUSE = 1 (entry %u), but the previous task on "
                            "this core left %s in the CBUF",
                            c->entry[NPK_RKR_CNA_CBUF_CON0],
                            c->cbuf_valid ? "other weights or another bank split" : "no weights");
        if ((st = emu_execute(e, t, &d->plan, w, err))) return st;
        c->cbuf_valid = cna;
        c->cbuf_wt_addr = t->wt_addr;
        c->cbuf_wt_span = t->wt_span;
        c->cbuf_wbank = t->wbank;
        c->cbuf_dbank = t->dbank;
    }
    e->st.tasks++;
    e->st.core_tasks[w->core]++;
    e->st.int_status[w->core] |= int_done_bits(d->pool);
    return NPK_OK;
}

/* A fetch kept by emu_tcache.c, its effects replayed: the register writes,
 * the count of fetched entries, the budget and the output mapping's renewal
 * the decode made, then the task. */
static npk_status run_kept(npk_rk_emu *e, emu_core *c, emu_tentry *h, uint32_t entries,
                           emu_where *w, emu_fetch *fr, npk_error *err)
{
    e->st.fetched_entries += entries;
    e->st.decode_hits++;
    memset(c->written, 0, sizeof c->written);
    for (size_t i = 0; i < h->nwr; i++) {
        const emu_write *x = &h->wr[i];
        c->regs[x->reg] = x->value;
        c->written[x->reg] = true;
        c->entry[x->reg] = x->index;
    }
    e->budget -= h->d.work;
    emu_span_out(e, h->d.out_addr, h->d.out_len);
    *fr = h->fr;
    w->entry = -1;
    return execute(e, c, &h->d, w, err);
}

/* Fetch `entries` entries at addr and execute them. */
static npk_status fetch_and_run(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount,
                                uint32_t task, emu_fetch *fr, npk_error *err)
{
    emu_core *c = &e->core[core];
    emu_where w = {core, task, addr, -1};
    uint32_t entries = (amount + 1) * 2;
    const uint8_t *s = emu_span(e, addr, (uint64_t)entries * 8);
    if (addr % 16)
        return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                        "stream address 0x%08x is not 16-byte aligned (the PC fetches 128-bit "
                        "units)",
                        addr);
    if (!s)
        return emu_fail(&w, err, NPK_E_FORMAT,
                        "the PC fetch of %u entries (amount %u) at 0x%08x leaves mapped memory",
                        entries, amount, addr);
    /* unchanged since a fetch that passed every check: its result */
    const uint64_t gen = emu_span_gen(e, addr, (uint64_t)entries * 8);
    emu_tentry *h = emu_tcache_find(e, core, addr, amount, s, gen, c->regs);
    if (h && h->d.work <= e->budget) return run_kept(e, c, h, entries, &w, fr, err);
    /* else decoded and checked here; kept if the stream is tracked */
    uint32_t pre[NPK_RKR_COUNT];
    emu_write *wr = gen ? emu_scratch_get(&e->wr, (size_t)entries * sizeof *wr) : NULL;
    size_t nwr = 0;
    if (wr) memcpy(pre, c->regs, sizeof pre);
    emu_decoded d;
    memset(&d, 0, sizeof d);
    e->st.fetched_entries += entries;
    memset(c->written, 0, sizeof c->written);
    memset(fr, 0, sizeof *fr);
    bool amount_set = false, done = false;
    long marker = -2;
    char fn[96];
    for (uint32_t i = 0; i < entries; i++) {
        npk_rk_entry en;
        npk_rk_entry_decode(npk_ld64le(s + 8 * (size_t)i), &en);
        w.entry = (long)i;
        switch (en.kind) {
        case NPK_RK_NOP: continue;
        case NPK_RK_UNKNOWN_OP:
            return emu_fail(&w, err, NPK_E_UNSUPPORTED, "op 0x%04x is not modelled", en.op);
        case NPK_RK_MARKER:
            if (en.problems & NPK_RK_BAD_PAYLOAD)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "0x0041 marker with a value or register is not modelled");
            if (done)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "marker after the operation enable is not modelled");
            marker = (long)i;
            continue;
        case NPK_RK_OP_EN:
            if (en.problems & NPK_RK_BAD_ENABLE_REG)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "operation enable aimed at 0x%04x, not PC_OPERATION_ENABLE",
                                en.offset);
            if (done)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "a second operation enable in one fetch is not modelled");
            if (marker != (long)i - 1)
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "operation enable without the 0x0041 marker right before it "
                                "(which the TRM requires)");
            w.entry = -1;
            npk_status st = decode(e, c, en.value, &w, &d, err);
            if (st || (st = execute(e, c, &d, &w, err))) return st;
            done = true;
            continue;
        case NPK_RK_WRITE: break;
        }
        if (en.problems & (NPK_RK_BAD_REG | NPK_RK_BAD_BLOCK))
            return emu_fail(&w, err, NPK_E_UNSUPPORTED, "write 0x%016llx: %s",
                            (unsigned long long)en.raw, npk_rk_problem_text(en.problems));
        if (done)
            return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                            "register write after the operation enable is not modelled");
        if (en.block == NPK_RKB_PC) {
            if (en.reg == NPK_RKR_PC_BASE_ADDRESS) {
                if (npk_rk_field_extract(NPK_RKF_PC_BASE_ADDRESS_PC_SEL, en.value))
                    return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                    "%s = 1 in a stream is not modelled",
                                    emu_field_name(NPK_RKF_PC_BASE_ADDRESS_PC_SEL, fn, sizeof fn));
                fr->next_addr =
                    npk_rk_field_extract(NPK_RKF_PC_BASE_ADDRESS_PC_SOURCE_ADDR, en.value) << 4;
                fr->chain = fr->next_addr != 0;
            } else if (en.reg == NPK_RKR_PC_REGISTER_AMOUNTS) {
                if (en.value & ~npk_rk_field_mask(NPK_RKF_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT))
                    return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                    "PC_REGISTER_AMOUNTS = 0x%x sets bits outside PC_DATA_AMOUNT",
                                    en.value);
                fr->next_amount = en.value;
                amount_set = true;
            } else
                return emu_fail(&w, err, NPK_E_UNSUPPORTED,
                                "%s written from a stream is not modelled",
                                npk_rk_reg_get(en.reg)->full_name);
            continue;
        }
        c->regs[en.reg] = en.value;
        c->written[en.reg] = true;
        c->entry[en.reg] = i;
        if (wr) wr[nwr++] = (emu_write){(uint32_t)en.reg, en.value, i};
    }
    w.entry = -1;
    if (!done)
        return emu_fail(&w, err, NPK_E_FORMAT,
                        "the PC fetched %u entries (amount %u) and none is an operation enable: "
                        "the task never starts",
                        entries, amount);
    if (fr->chain && !amount_set)
        return emu_fail(&w, err, NPK_E_FORMAT,
                        "PC_BASE_ADDRESS chains to 0x%08x without PC_REGISTER_AMOUNTS",
                        fr->next_addr);
    if (wr) emu_tcache_put(e, core, addr, amount, s, gen, pre, wr, nwr, fr, &d);
    return NPK_OK;
}

static npk_status run_core(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount,
                           uint32_t task_number, npk_error *err)
{
    if (core < 0 || core >= e->o.cores)
        return npk_fail(err, NPK_E_ARG, "core %d: this emulator has %d core%s", core, e->o.cores,
                        e->o.cores == 1 ? "" : "s");
    uint32_t max_tasks = npk_rk_field_max(NPK_RKF_PC_TASK_CON_TASK_NUMBER);
    if (task_number < 1 || task_number > max_tasks)
        return npk_fail(err, NPK_E_ARG,
                        "core %d: task number %u (PC_TASK_CON.TASK_NUMBER is 1..%u)", core,
                        task_number, max_tasks);
    if (amount > npk_rk_field_max(NPK_RKF_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT))
        return npk_fail(err, NPK_E_ARG, "core %d: PC data amount %u does not fit PC_DATA_AMOUNT",
                        core, amount);
    e->st.int_status[core] = 0;
    for (uint32_t t = 0; t < task_number; t++) {
        emu_fetch fr;
        npk_status st = fetch_and_run(e, core, addr, amount, t, &fr, err);
        if (st) return st;
        if (t + 1 == task_number) break;
        if (!fr.chain)
            return npk_fail(err, NPK_E_FORMAT,
                            "core %d, task %u (stream 0x%08x): the stream does not chain to a next "
                            "one (no PC_BASE_ADDRESS), but the core was given %u tasks",
                            core, t, addr, task_number);
        addr = fr.next_addr;
        amount = fr.next_amount;
    }
    return NPK_OK;
}

static void budget_start(npk_rk_emu *e)
{
    e->budget = e->o.max_macs ? e->o.max_macs : UINT64_MAX;
}

npk_status npk_rk_emu_run_core(npk_rk_emu *e, int core, uint32_t addr, uint32_t amount,
                               uint32_t task_number, npk_error *err)
{
    budget_start(e);
    for (int i = 0; i < NPK_RKNPU_MAX_CORES; i++) e->core[i].cbuf_valid = false;
    return run_core(e, core, addr, amount, task_number, err);
}

/* ---- the vendor driver's submit (rknpu_job.c, PC mode) ---- */

static npk_status run_range(npk_rk_emu *e, int core, const npk_rknpu_task *tasks, size_t count,
                            uint32_t start, uint32_t number, npk_error *err)
{
    /* The driver commits at most 4095 tasks at a time and recommits the rest. */
    for (uint32_t done = 0; done < number;) {
        uint32_t n = number - done;
        if (n > NPK_RKNPU_MAX_SUBMIT_TASKS) n = NPK_RKNPU_MAX_SUBMIT_TASKS;
        uint64_t first = (uint64_t)start + done, last = first + n - 1;
        if (last >= count)
            return npk_fail(err, NPK_E_ARG,
                            "core %d: tasks %llu..%llu are outside the task buffer (%zu tasks)",
                            core, (unsigned long long)first, (unsigned long long)last, count);
        const npk_rknpu_task *f = &tasks[first], *l = &tasks[last];
        if (f->regcmd_addr > UINT32_MAX)
            return npk_fail(err, NPK_E_ARG, "task %llu: regcmd_addr 0x%llx is beyond 32 bits",
                            (unsigned long long)first, (unsigned long long)f->regcmd_addr);
        uint32_t amount = npk_rknpu_pc_data_amount(f->regcfg_amount);
        npk_status st = run_core(e, core, (uint32_t)f->regcmd_addr, amount, n, err);
        if (st) return st;
        /* The driver writes INT_MASK = the last task's int_mask, reads the
         * masked INT_STATUS (not INT_RAW_STATUS), folds it pairwise and waits
         * for that mask: done bits of other kinds of task earlier in the chain
         * (a PPU task before a DPU one) are masked off. */
        const uint32_t status = e->st.int_status[core] & l->int_mask;
        if (status != l->int_mask)
            return npk_fail(err, NPK_E_TIMEOUT,
                            "core %d: the tasks raised interrupt status 0x%x but task %llu waits "
                            "for int_mask 0x%x: the job would time out",
                            core, e->st.int_status[core], (unsigned long long)last, l->int_mask);
        done += n;
    }
    return NPK_OK;
}

npk_status npk_rk_emu_submit(npk_rk_emu *e, const npk_rknpu_submit *s, const npk_rknpu_task *tasks,
                             size_t count, npk_error *err)
{
    budget_start(e);
    for (int i = 0; i < NPK_RKNPU_MAX_CORES; i++) e->core[i].cbuf_valid = false;
    if (!(s->flags & NPK_RKNPU_JOB_PC))
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "submit flags 0x%x lack PC: the driver does not implement slave mode",
                        s->flags);
    if (!s->task_number) return npk_fail(err, NPK_E_ARG, "submit with task_number 0");
    uint32_t mask = s->core_mask;
    if (mask > 0x7) return npk_fail(err, NPK_E_ARG, "core_mask 0x%x: at most 3 cores", mask);
    if (e->o.cores == 1) {
        /* A single-IRQ NPU runs task_start/task_number on its one core. */
        if (mask > NPK_RKNPU_CORE0)
            return npk_fail(err, NPK_E_ARG, "core_mask 0x%x on a single-core NPU", mask);
        return run_range(e, 0, tasks, count, s->task_start, s->task_number, err);
    }
    if (mask == NPK_RKNPU_CORE_AUTO) mask = NPK_RKNPU_CORE0; /* the least loaded: all idle */
    if (mask != 0x1 && mask != 0x2 && mask != 0x4 && mask != 0x3 && mask != 0x7)
        return npk_fail(err, NPK_E_TIMEOUT,
                        "core_mask 0x%x: the driver commits nothing for it (it runs masks 0x1, "
                        "0x2, 0x4, 0x3 and 0x7), so the job would time out",
                        mask);
    int used = (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1);
    for (int core = 0; core < NPK_RKNPU_MAX_CORES; core++) {
        if (!(mask & (1u << core))) continue;
        int slot = used == 3 ? core + 2 : core;
        const npk_rknpu_subcore_task *sc = &s->subcore_task[slot];
        if (!sc->task_number)
            return npk_fail(err, NPK_E_TIMEOUT,
                            "core %d: subcore_task[%d] gives it no tasks, so it would never "
                            "raise its interrupt",
                            core, slot);
        npk_status st = run_range(e, core, tasks, count, sc->task_start, sc->task_number, err);
        if (st) return st;
    }
    return NPK_OK;
}
