/* Multi-task matmul planning: tile sizes, buffer offsets, stream layout,
 * per-core task ranges, chaining and the driver records. */
#include <stdlib.h>
#include <string.h>

#include "npukit/checked.h"
#include "npukit/rknpu_layout.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_stream.h"
#include "ops_internal.h"

/* Split `units` into `parts` near-equal pieces (sizes differ by at most 1
 * unit); piece i starts at the returned unit. */
static uint32_t piece_start(uint32_t units, uint32_t parts, uint32_t i)
{
    return (uint32_t)((uint64_t)units * i / parts);
}

/* Contiguous ranges of tasks per core minimising the largest core's work. */
static npk_status split_cores(npk_rk_plan *p, int cores, npk_error *err)
{
    uint64_t *work = malloc(p->count * sizeof *work);
    int *core = malloc(p->count * sizeof *core);
    if (!work || !core) {
        free(work);
        free(core);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a plan of %zu tasks", p->count);
    }
    for (size_t i = 0; i < p->count; i++)
        work[i] = (uint64_t)p->tasks[i].mt * p->tasks[i].nt * p->opts.k;
    rk_split_ranges(work, p->count, cores, core, p->core_first, p->core_count, p->core_work);
    for (size_t i = 0; i < p->count; i++) p->tasks[i].core = core[i];
    free(work);
    free(core);
    return NPK_OK;
}

/* Tile counts: enough tiles for the limits, then (with several cores) more
 * until the task count divides evenly over the cores, if the shape allows. */
static void choose_tiles(const npk_rk_plan_opts *o, uint32_t max_m, uint32_t max_n, uint32_t *tm,
                         uint32_t *tn)
{
    uint32_t mu = o->m == 1 ? 1 : o->m / 4, mstep = o->m == 1 ? 1 : 4;
    uint32_t na = npk_rk_dtype_n_align(o->dtype), nu = o->n / na;
    uint32_t maxmu = max_m / mstep, maxnu = max_n / na;
    *tm = (mu + maxmu - 1) / maxmu;
    *tn = (nu + maxnu - 1) / maxnu;
    uint32_t c = (uint32_t)o->cores;
    if (c <= 1 || ((uint64_t)*tm * *tn) % c == 0) return;
    for (uint32_t a = *tm; a <= mu && a <= *tm + c; a++)
        for (uint32_t b = *tn; b <= nu && b <= *tn + c; b++)
            if (((uint64_t)a * b) % c == 0) {
                *tm = a;
                *tn = b;
                return;
            }
    while ((uint64_t)*tm * *tn < c && *tm < mu) (*tm)++;
    while ((uint64_t)*tm * *tn < c && *tn < nu) (*tn)++;
}

static npk_status check_opts(const npk_rk_plan_opts *o, uint32_t *max_m, uint32_t *max_n,
                             npk_error *err)
{
    if (o->cores < 1 || o->cores > NPK_RKNPU_MAX_CORES)
        return npk_fail(err, NPK_E_ARG, "cores = %d: must be 1, 2 or 3", o->cores);
    /* Alignment, K and N per task are the single-task rules with M = 1. */
    npk_rk_matmul probe = {o->m % 4 == 0 ? 4 : o->m, o->k, o->n, o->dtype, 0, 0, 0};
    npk_error e2 = {0};
    if (!o->m) return npk_fail(err, NPK_E_ARG, "M must be at least 1");
    uint32_t b = npk_rk_dtype_in_size(o->dtype);
    if (o->k && o->k % 32 == 0 && (uint64_t)o->k * b > NPK_RK_CBUF_BANK_SIZE)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "K = %u needs %llu weight bytes per kernel, more than one CBUF bank "
                        "(%u): splitting K would need partial sums accumulated across tasks, "
                        "which no reference shows for these streams; K <= %u for %s",
                        o->k, (unsigned long long)o->k * b, NPK_RK_CBUF_BANK_SIZE,
                        NPK_RK_CBUF_BANK_SIZE / b, npk_rk_dtype_name(o->dtype));
    *max_n = npk_rk_matmul_max_n(o->dtype);
    if (o->max_n && o->max_n < *max_n)
        *max_n = o->max_n - o->max_n % npk_rk_dtype_n_align(o->dtype);
    probe.n = o->n < *max_n ? o->n : *max_n;
    if (o->n % npk_rk_dtype_n_align(o->dtype)) probe.n = o->n; /* report misalignment */
    if (npk_rk_matmul_check(&probe, &e2)) return npk_fail(err, e2.status, "%s", e2.msg);
    *max_m = npk_rk_matmul_max_m(o->k, o->dtype);
    if (o->max_m && o->max_m < *max_m) *max_m = o->max_m;
    if (o->m > 1) *max_m &= ~3u;
    if (!*max_m || !*max_n)
        return npk_fail(err, NPK_E_ARG, "tile limits max_m = %u, max_n = %u leave no tile",
                        o->max_m, o->max_n);
    return NPK_OK;
}

npk_status npk_rk_plan_make(const npk_rk_plan_opts *o, npk_rk_plan *p, npk_error *err)
{
    memset(p, 0, sizeof *p);
    p->opts = *o;
    uint32_t max_m = 0, max_n = 0, tm, tn;
    npk_status st = check_opts(o, &max_m, &max_n, err);
    if (st) return st;
    choose_tiles(o, max_m, max_n, &tm, &tn);
    uint64_t count = (uint64_t)tm * tn;
    if (count > NPK_RKNPU_MAX_SUBMIT_TASKS)
        return npk_fail(err, NPK_E_LIMIT, "%llu tasks exceed the driver's %u tasks per submit",
                        (unsigned long long)count, NPK_RKNPU_MAX_SUBMIT_TASKS);
    uint64_t b = npk_rk_dtype_in_size(o->dtype), ob = npk_rk_dtype_out_size(o->dtype);
    p->input_bytes = (uint64_t)o->m * o->k * b;
    p->weight_bytes = (uint64_t)o->k * o->n * b;
    p->output_bytes = (uint64_t)o->m * o->n * ob;
    if (o->form != NPK_RK_FORM_VENDOR && o->form != NPK_RK_FORM_ROCKET)
        return npk_fail(err, NPK_E_ARG, "unknown stream form %d", (int)o->form);
    size_t entries = npk_rk_form_entries(o->form);
    uint64_t stride =
        (entries * 8 + NPK_RK_STREAM_ALIGN - 1) & ~(uint64_t)(NPK_RK_STREAM_ALIGN - 1);
    const rk_buf bufs[] = {{"input", o->input_addr, p->input_bytes, 0},
                           {"weight", o->weight_addr, p->weight_bytes, 0},
                           {"output", o->output_addr, p->output_bytes, 0},
                           {"regcmd", o->regcmd_addr, stride * count, 0}};
    if ((st = rk_check_buffers(bufs, sizeof bufs / sizeof *bufs, err))) return st;
    if (o->regcmd_addr % NPK_RK_STREAM_ALIGN)
        return npk_fail(err, NPK_E_ARG, "regcmd address 0x%x is not %d-byte aligned",
                        o->regcmd_addr, NPK_RK_STREAM_ALIGN);

    p->count = (size_t)count;
    p->stream_entries = entries;
    p->regcmd_entries = (size_t)(stride / 8 * count);
    p->tasks = calloc(p->count, sizeof *p->tasks);
    p->records = calloc(p->count, sizeof *p->records);
    p->regcmd = calloc(p->regcmd_entries, 8);
    if (!p->tasks || !p->records || !p->regcmd) {
        npk_rk_plan_free(p);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for a plan of %zu tasks", p->count);
    }

    uint32_t mstep = o->m == 1 ? 1 : 4, mu = o->m / mstep;
    uint32_t na = npk_rk_dtype_n_align(o->dtype), nu = o->n / na;
    for (uint32_t i = 0; i < tm; i++)
        for (uint32_t j = 0; j < tn; j++) {
            npk_rk_plan_task *t = &p->tasks[(size_t)i * tn + j];
            t->m0 = piece_start(mu, tm, i) * mstep;
            t->mt = piece_start(mu, tm, i + 1) * mstep - t->m0;
            t->n0 = piece_start(nu, tn, j) * na;
            t->nt = piece_start(nu, tn, j + 1) * na - t->n0;
            t->input_off = (uint64_t)t->m0 * o->k * b;
            t->weight_off = (uint64_t)t->n0 * o->k * b;
            t->output_off = (uint64_t)t->m0 * o->n * ob + (uint64_t)t->n0 * t->mt * ob;
            t->regcmd_off = (uint32_t)(stride * ((size_t)i * tn + j));
            t->mm = (npk_rk_matmul){t->mt,
                                    o->k,
                                    t->nt,
                                    o->dtype,
                                    o->input_addr + (uint32_t)t->input_off,
                                    o->weight_addr + (uint32_t)t->weight_off,
                                    o->output_addr + (uint32_t)t->output_off};
            t->next = -1;
        }
    p->tiles_m = tm;
    p->tiles_n = tn;
    p->cores = p->count < (size_t)o->cores ? (int)p->count : o->cores;
    if ((st = split_cores(p, p->cores, err))) {
        npk_rk_plan_free(p);
        return st;
    }

    /* Streams, then the chain inside each core's range. */
    for (size_t i = 0; i < p->count; i++) {
        npk_rk_plan_task *t = &p->tasks[i];
        if ((st = npk_rk_matmul_stream_form(&t->mm, o->form, p->regcmd + t->regcmd_off / 8, err))) {
            npk_rk_plan_free(p);
            return st;
        }
    }
    for (size_t i = 0; i + 1 < p->count && o->form == NPK_RK_FORM_VENDOR; i++) {
        npk_rk_plan_task *t = &p->tasks[i], *n = &p->tasks[i + 1];
        if (t->core != n->core) continue;
        t->next = (int)(i + 1);
        st = npk_rk_stream_chain(p->regcmd + t->regcmd_off / 8, entries,
                                 o->regcmd_addr + n->regcmd_off, entries, err);
        if (st) {
            npk_rk_plan_free(p);
            return st;
        }
    }

    /* Driver records. */
    uint32_t int_mask = npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_MASK_DPU_0) |
                        npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_MASK_DPU_1);
    for (size_t i = 0; i < p->count; i++) {
        p->records[i] =
            rk_task_record(p->regcmd, p->tasks[i].regcmd_off, entries, int_mask, o->regcmd_addr);
    }
    rk_submit_fill(&p->submit, p->count, p->cores, p->core_first, p->core_count);
    return NPK_OK;
}

void npk_rk_plan_free(npk_rk_plan *p)
{
    free(p->tasks);
    free(p->records);
    free(p->regcmd);
    p->tasks = NULL;
    p->records = NULL;
    p->regcmd = NULL;
    p->count = 0;
}

/* ---- element placement ---- */

/* The first task of the M-tile row holding row m (tiles are a row-major grid). */
static const npk_rk_plan_task *row_of(const npk_rk_plan *p, uint32_t m)
{
    size_t lo = 0, hi = p->tiles_m;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (p->tasks[mid * p->tiles_n].m0 <= m)
            lo = mid;
        else
            hi = mid;
    }
    return &p->tasks[lo * p->tiles_n];
}

uint64_t npk_rk_plan_input_offset(const npk_rk_plan *p, uint32_t m, uint32_t k)
{
    const npk_rk_plan_task *t = row_of(p, m);
    size_t b = npk_rk_dtype_in_size(p->opts.dtype), c2 = npk_rk_dtype_in_c2(p->opts.dtype);
    return t->input_off + npk_rk_feature_index(p->opts.k, t->mt, 1, c2, k, m - t->m0, 0) * b;
}

uint64_t npk_rk_plan_weight_offset(const npk_rk_plan *p, uint32_t k, uint32_t n)
{
    size_t b = npk_rk_dtype_in_size(p->opts.dtype), g = npk_rk_dtype_n_align(p->opts.dtype);
    return npk_rk_weight_index(p->opts.k, g, n, k) * b;
}

uint64_t npk_rk_plan_output_offset(const npk_rk_plan *p, uint32_t m, uint32_t n)
{
    const npk_rk_plan_task *t = row_of(p, m);
    size_t ob = npk_rk_dtype_out_size(p->opts.dtype), c2 = npk_rk_dtype_out_c2(p->opts.dtype);
    return (uint64_t)t->m0 * p->opts.n * ob +
           npk_rk_feature_index(p->opts.n, t->mt, 1, c2, n, m - t->m0, 0) * ob;
}

/* One M-tile's rows of a row-major matrix <-> its NC1HWC2 block. */
static void tiles_convert(const npk_rk_plan *p, size_t cols, size_t es, size_t c2, uint8_t *plain,
                          uint8_t *native, bool pack)
{
    for (size_t i = 0; i < p->count; i += p->tiles_n) {
        const npk_rk_plan_task *t = &p->tasks[i];
        npk_rk_feature_shape s = {1, cols, t->mt, 1, c2, es};
        size_t off = (size_t)t->m0 * cols * es;
        if (pack)
            npk_rk_feature_pack(&s, NPK_RK_NHWC, plain + off, native + off, NULL);
        else
            npk_rk_feature_unpack(&s, NPK_RK_NHWC, native + off, plain + off, NULL);
    }
}

void npk_rk_plan_pack_input(const npk_rk_plan *p, const void *a, void *input)
{
    tiles_convert(p, p->opts.k, npk_rk_dtype_in_size(p->opts.dtype),
                  npk_rk_dtype_in_c2(p->opts.dtype), (uint8_t *)a, input, true);
}

void npk_rk_plan_pack_weights(const npk_rk_plan *p, const void *b, void *weights)
{
    npk_rk_weight_shape s = {p->opts.k, p->opts.n, npk_rk_dtype_n_align(p->opts.dtype),
                             npk_rk_dtype_in_size(p->opts.dtype)};
    npk_rk_weight_pack(&s, NPK_RK_KN, b, weights, NULL);
}

void npk_rk_plan_unpack_output(const npk_rk_plan *p, const void *output, void *c)
{
    tiles_convert(p, p->opts.n, npk_rk_dtype_out_size(p->opts.dtype),
                  npk_rk_dtype_out_c2(p->opts.dtype), c, (uint8_t *)output, false);
}
