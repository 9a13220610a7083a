/* Several layer plans placed in one address map (npukit/rknpu_bundle.h):
 * every layer is planned twice, first at address 0 for its sizes, then at
 * the addresses its buffers get. */
#include <stdlib.h>
#include <string.h>

#include "npukit/rknpu_bundle.h"
#include "npukit/rknpu_plan.h"

#define ALIGN 64

static uint64_t up(uint64_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

static npk_status plan_one(const npk_rk_layer *l, const char *name, const npk_rk_lplan_opts *o,
                           npk_rk_lplan *p, npk_error *err)
{
    npk_error e = {0};
    npk_status st = npk_rk_lplan_make(l, o, p, &e);
    if (st && name) return npk_fail(err, st, "%s: %s", name, e.msg);
    if (st) return npk_fail(err, st, "%s", e.msg);
    return NPK_OK;
}

static npk_status place(uint64_t *cursor, uint64_t bytes, uint32_t base, const char *what,
                        uint32_t *addr, npk_error *err)
{
    if (*cursor + bytes > ((uint64_t)1 << 32) - base)
        return npk_fail(err, NPK_E_LIMIT,
                        "the %s region from 0x%08x would pass the 32-bit address space", what,
                        base);
    *addr = base + (uint32_t)*cursor;
    *cursor = up(*cursor + bytes);
    return NPK_OK;
}

/* The three regions (activations, weights, streams) as placed so far share
 * no byte: one layer's buffers can be apart while its activations run into
 * an earlier layer's weights, which only this check sees. */
static npk_status check_regions(const npk_rk_bundle_opts *o, uint64_t act, uint64_t wt,
                                uint64_t reg, npk_error *err)
{
    const struct {
        const char *name;
        uint64_t addr, bytes;
    } r[3] = {{"activation", o->act_addr, act},
              {"weight", o->weight_addr, wt},
              {"regcmd", o->regcmd_addr, reg}};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (r[i].bytes && r[j].bytes && r[i].addr < r[j].addr + r[j].bytes &&
                r[j].addr < r[i].addr + r[i].bytes)
                return npk_fail(err, NPK_E_ARG,
                                "the %s region 0x%08llx..0x%08llx (%llu bytes) overlaps the %s "
                                "region 0x%08llx..0x%08llx (%llu bytes): place the regions apart",
                                r[i].name, (unsigned long long)r[i].addr,
                                (unsigned long long)(r[i].addr + r[i].bytes - 1),
                                (unsigned long long)r[i].bytes, r[j].name,
                                (unsigned long long)r[j].addr,
                                (unsigned long long)(r[j].addr + r[j].bytes - 1),
                                (unsigned long long)r[j].bytes);
    return NPK_OK;
}

npk_status npk_rk_bundle_make(const npk_rk_layer *const *layers, const char *const *names, size_t n,
                              const npk_rk_bundle_opts *o, npk_rk_bundle *b, npk_error *err)
{
    memset(b, 0, sizeof *b);
    b->opts = *o;
    if (!b->opts.act_addr) b->opts.act_addr = 0x10000000;
    if (!b->opts.weight_addr) b->opts.weight_addr = 0x20000000;
    if (!b->opts.regcmd_addr) b->opts.regcmd_addr = 0x40000000;
    if ((b->opts.act_addr | b->opts.weight_addr | b->opts.regcmd_addr) % ALIGN)
        return npk_fail(err, NPK_E_ARG, "region addresses must be %d-byte aligned", ALIGN);
    b->ops = calloc(n ? n : 1, sizeof *b->ops);
    b->submits = calloc(n ? n : 1, sizeof *b->submits);
    if (!b->ops || !b->submits) {
        npk_rk_bundle_free(b);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    uint64_t act = 0, wt = 0, reg = 0;
    npk_status st = NPK_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const char *name = names ? names[i] : NULL;
        npk_rk_lplan_opts po = {o->cores, o->form, 0, 0, 0, 0, 0, 0, 0, o->requant};
        npk_rk_lplan sizes;
        if ((st = plan_one(layers[i], name, &po, &sizes, err))) break;
        uint64_t in2 = npk_rk_lplan_input2_bytes(&sizes);
        npk_rk_bundle_op *op = &b->ops[i];
        op->weight_off = wt;
        op->regcmd_off = reg;
        uint32_t raddr = 0;
        if (!(st = place(&act, sizes.input_bytes, b->opts.act_addr, "activation", &po.input_addr,
                         err)) &&
            !(st = place(&act, in2, b->opts.act_addr, "activation", &po.input2_addr, err)) &&
            !(st = place(&act, sizes.output_bytes, b->opts.act_addr, "activation", &po.output_addr,
                         err)) &&
            !(st = place(&wt, sizes.weight_bytes, b->opts.weight_addr, "weight", &po.weight_addr,
                         err)) &&
            !(st = place(&reg, (uint64_t)sizes.regcmd_entries * 8, b->opts.regcmd_addr, "regcmd",
                         &raddr, err))) {
            po.regcmd_addr = raddr;
            if (!in2) po.input2_addr = 0;
            st = check_regions(&b->opts, act, wt, reg, err);
            if (!st) st = plan_one(layers[i], name, &po, &op->plan, err);
        }
        npk_rk_lplan_free(&sizes);
        if (!st) b->nops = i + 1;
    }
    if (!st) {
        for (size_t i = 0; i < b->nops; i++) b->ntasks += b->ops[i].plan.count;
        b->weight_bytes = wt;
        b->regcmd_entries = (size_t)(reg / 8);
        b->act_bytes = act;
        b->records = calloc(b->ntasks ? b->ntasks : 1, sizeof *b->records);
        b->weights = calloc(1, wt ? (size_t)wt : 1);
        b->regcmd = calloc(b->regcmd_entries ? b->regcmd_entries : 1, 8);
        if (!b->records || !b->weights || !b->regcmd)
            st = npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    size_t t = 0;
    for (size_t i = 0; i < b->nops && !st; i++) {
        npk_rk_bundle_op *op = &b->ops[i];
        const npk_rk_lplan *p = &op->plan;
        op->task_first = t;
        memcpy(b->records + t, p->records, p->count * sizeof *p->records);
        if (p->weight_bytes) memcpy(b->weights + op->weight_off, p->wblob, p->weight_bytes);
        memcpy(b->regcmd + op->regcmd_off / 8, p->regcmd, p->regcmd_entries * 8);
        /* The submit counts tasks in the shared record array. */
        npk_rknpu_submit s = p->submit;
        s.task_start += (uint32_t)t;
        for (int c = 0; c < NPK_RKNPU_SUBCORE_SLOTS; c++)
            if (s.subcore_task[c].task_number) s.subcore_task[c].task_start += (uint32_t)t;
        b->submits[i] = s;
        t += p->count;
    }
    if (st) npk_rk_bundle_free(b);
    return st;
}

void npk_rk_bundle_free(npk_rk_bundle *b)
{
    for (size_t i = 0; b->ops && i < b->nops; i++) npk_rk_lplan_free(&b->ops[i].plan);
    free(b->ops);
    free(b->submits);
    free(b->records);
    free(b->weights);
    free(b->regcmd);
    memset(b, 0, sizeof *b);
}
