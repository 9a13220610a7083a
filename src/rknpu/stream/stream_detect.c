/* RKNPU register-command streams: binary little-endian u64 entries or hex
 * text (one 16-digit entry per line). The probe accepts a stream whose every
 * examined entry has an op code the decoder knows; the summary decodes all
 * entries: tasks, blocks, chaining, odd entries, and the shape of the first
 * task's convolution. */
#include <stdio.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_stream.h"
#include "core/formats.h"

#define STREAM_PROBE_MAX 65536 /* entries examined by the binary probe */

static bool known_op(uint64_t raw)
{
    npk_rk_entry e;
    npk_rk_entry_decode(raw, &e);
    return e.kind != NPK_RK_UNKNOWN_OP;
}

typedef struct probe_ctx {
    size_t writes, entries;
    bool bad;
} probe_ctx;

static void probe_entry(void *ctx, uint64_t raw, uint64_t off)
{
    probe_ctx *p = ctx;
    (void)off;
    if (!known_op(raw)) p->bad = true;
    if ((raw >> 48) & 1) p->writes++;
    p->entries++;
}

bool npk_rknpu_stream_probe(const uint8_t *buf, size_t len)
{
    probe_ctx p = {0, 0, false};
    if (len >= 16 && len % 8 == 0) {
        for (size_t i = 0; i < len / 8 && i < STREAM_PROBE_MAX; i++)
            probe_entry(&p, npk_ld64le(buf + 8 * i), 0);
        if (!p.bad && p.writes > 0) return true;
    }
    if (!npk_is_text(buf, len) || !npk_rk_is_hex_text(buf, len)) return false;
    /* The entries before a malformed line count: a stream cut inside a line
     * is still recognised, and its summary fails at that line's offset. */
    p = (probe_ctx){0, 0, false};
    npk_rk_stream_walk(buf, len, NPK_RK_ENC_HEX, probe_entry, &p, NULL, NULL, NULL);
    return !p.bad && p.entries >= 2 && p.writes > 0;
}

typedef struct sum_ctx {
    npk_rk_stream_stats st;
    bool first_task_done;
    bool set[NPK_RKR_COUNT];
    uint32_t val[NPK_RKR_COUNT]; /* last value written in the first task */
} sum_ctx;

static void sum_entry(void *ctx, uint64_t raw, uint64_t off)
{
    sum_ctx *s = ctx;
    (void)off;
    npk_rk_stream_stats_add(&s->st, raw);
    npk_rk_entry e;
    npk_rk_entry_decode(raw, &e);
    if (s->first_task_done) return;
    if (e.kind == NPK_RK_OP_EN)
        s->first_task_done = true;
    else if (e.kind == NPK_RK_WRITE && e.reg != NPK_RKR_NONE && !e.problems) {
        s->set[e.reg] = true;
        s->val[e.reg] = e.value;
    }
}

static uint32_t field(const sum_ctx *s, npk_rk_field f)
{
    return npk_rk_field_extract(f, s->val[npk_rk_field_get(f)->reg]);
}

static bool written(const sum_ctx *s, npk_rk_field f)
{
    return s->set[npk_rk_field_get(f)->reg];
}

static const char *prec_name(uint32_t p)
{
    switch (p) {
    case NPK_RK_PREC_INT8: return "int8";
    case NPK_RK_PREC_INT16: return "int16";
    case NPK_RK_PREC_FP16: return "fp16";
    case NPK_RK_PREC_BF16: return "bf16";
    case NPK_RK_PREC_INT32: return "int32";
    case NPK_RK_PREC_FP32: return "fp32";
    }
    return "?";
}

/* "CNA CORE DPU" from a bit mask of blocks. */
static void block_list(unsigned mask, char *buf, size_t len)
{
    buf[0] = 0;
    for (int b = 0; b < NPK_RKB_COUNT; b++)
        if (mask & (1u << b)) {
            size_t u = strlen(buf);
            snprintf(buf + u, len - u, "%s%s", u ? " " : "",
                     npk_rk_block_get((npk_rk_block)b)->name);
        }
}

/* Blocks enabled by an operation-enable mask, named by the GLOBAL fields. */
static void enable_list(uint32_t v, char *buf, size_t len)
{
    const npk_rk_reg_info *ri = npk_rk_reg_get(NPK_RKR_GLOBAL_OPERATION_ENABLE);
    buf[0] = 0;
    for (unsigned i = ri->field_count; i-- > 0;) {
        npk_rk_field f = (npk_rk_field)(ri->first_field + i);
        if (!npk_rk_field_extract(f, v)) continue;
        const char *n = npk_rk_field_get(f)->name;
        size_t u = strlen(buf), l = strlen(n) - strlen("_OP_EN");
        snprintf(buf + u, len - u, "%s%.*s", u ? " " : "", (int)l, n);
    }
}

npk_status npk_rknpu_stream_summarize(const uint8_t *buf, size_t len, npk_summary *out,
                                      npk_error *err)
{
    sum_ctx s;
    memset(&s, 0, sizeof s);
    npk_rk_stream_stats_init(&s.st);
    npk_rk_encoding used;
    size_t n;
    npk_status st = npk_rk_stream_walk(buf, len, NPK_RK_ENC_AUTO, sum_entry, &s, &n, &used, err);
    if (st) return st;
    const npk_rk_stream_stats *t = &s.st;
    const char *enc = used == NPK_RK_ENC_HEX ? "hex" : "binary";
    char shape[96] = "";
    if (written(&s, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT) &&
        written(&s, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS) &&
        written(&s, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION)) {
        uint32_t w = field(&s, NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH);
        uint32_t h = field(&s, NPK_RKF_CNA_DATA_SIZE0_DATAIN_HEIGHT);
        uint32_t c = field(&s, NPK_RKF_CNA_DATA_SIZE1_DATAIN_CHANNEL);
        uint32_t k = field(&s, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS);
        uint32_t kw = field(&s, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH);
        uint32_t kh = field(&s, NPK_RKF_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT);
        const char *pi = prec_name(field(&s, NPK_RKF_DPU_DATA_FORMAT_IN_PRECISION));
        const char *po = prec_name(field(&s, NPK_RKF_DPU_DATA_FORMAT_OUT_PRECISION));
        if (w == 1 && kw == 1 && kh == 1)
            snprintf(shape, sizeof shape, "matmul %ux%ux%u %s->%s", h, c, k, pi, po);
        else
            snprintf(shape, sizeof shape, "conv %ux%ux%u -> %u kernels %ux%u %s->%s", w, h, c, k,
                     kw, kh, pi, po);
    }
    npk_sum_title(out, "%zu entries (%s), %zu task%s%s%s", n, enc, t->op_enables,
                  t->op_enables == 1 ? "" : "s", shape[0] ? ", first: " : "", shape);
    npk_sum_str(out, "encoding", "%s", enc);
    npk_sum_uint(out, "entries", n);
    npk_sum_uint(out, "writes", t->writes);
    npk_sum_uint(out, "tasks", t->op_enables);
    char list[160];
    block_list(t->blocks_written, list, sizeof list);
    npk_sum_str(out, "blocks_written", "%s", list);
    enable_list(t->enable_masks, list, sizeof list);
    npk_sum_str(out, "blocks_enabled", "%s", list);
    if (shape[0]) npk_sum_str(out, "first_task", "%s", shape);
    if (t->chain_links) npk_sum_uint(out, "chain_links", t->chain_links);
    if (s.set[NPK_RKR_CNA_FEATURE_DATA_ADDR])
        npk_sum_hex(out, "input_addr", s.val[NPK_RKR_CNA_FEATURE_DATA_ADDR]);
    if (s.set[NPK_RKR_CNA_DCOMP_ADDR0])
        npk_sum_hex(out, "weight_addr", s.val[NPK_RKR_CNA_DCOMP_ADDR0]);
    if (s.set[NPK_RKR_DPU_DST_BASE_ADDR])
        npk_sum_hex(out, "output_addr", s.val[NPK_RKR_DPU_DST_BASE_ADDR]);
    npk_sum_uint(out, "undocumented_writes", t->undocumented);
    npk_sum_uint(out, "unknown_registers", t->unknown_regs);
    npk_sum_uint(out, "unknown_ops", t->unknown_ops);
    npk_sum_uint(out, "block_mismatches", t->block_mismatch);
    if (t->first_problem != SIZE_MAX) npk_sum_uint(out, "first_flagged_entry", t->first_problem);
    return NPK_OK;
}
