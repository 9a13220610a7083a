/* Stream entries: encoding, decoding against the register table, reading
 * binary or hex-text streams, writing them back, and per-stream facts. */
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/rknpu_stream.h"

uint16_t npk_rk_write_op(npk_rk_reg r)
{
    const npk_rk_reg_info *ri = npk_rk_reg_get(r);
    if (!ri) return 0;
    uint32_t code = npk_rk_block_get(ri->block)->code;
    return code > 0xFF00u ? 0 : (uint16_t)(code | NPK_RK_OP_WRITE);
}

uint64_t npk_rk_write(npk_rk_reg r, uint32_t value)
{
    uint16_t op = npk_rk_write_op(r);
    return op ? npk_rk_entry_encode(op, value, npk_rk_reg_get(r)->offset) : 0;
}

/* The bits some field of each register covers, at compile time (every
 * decoded entry is checked against them). */
#define FIELD_BITS(hi, lo) ((uint32_t)((2ull << (hi)) - (1ull << (lo))))
static const uint32_t covered_bits[NPK_RKR_COUNT] = {
#define NPK_RK_BLOCK(b, code, base)
#define NPK_RK_REG(b, off, name, undoc) [NPK_RKR_##b##_##name] = 0
#define NPK_RK_FLD(b, r, f, hi, lo)     | FIELD_BITS(hi, lo)
#define NPK_RK_END(b, r)                ,
#include "npukit/rknpu_regtab.h"
#undef NPK_RK_BLOCK
#undef NPK_RK_REG
#undef NPK_RK_FLD
#undef NPK_RK_END
};

/* Bits of v not covered by any field of register r. */
static uint32_t stray_bits(npk_rk_reg r, uint32_t v)
{
    return v & ~covered_bits[r];
}

void npk_rk_entry_decode(uint64_t raw, npk_rk_entry *e)
{
    e->raw = raw;
    e->op = (uint16_t)(raw >> 48);
    e->value = (uint32_t)(raw >> 16);
    e->offset = (uint16_t)raw;
    e->block = NPK_RKB_NONE;
    e->reg = NPK_RKR_NONE;
    e->layout = NPK_RKR_NONE;
    e->problems = 0;
    if (e->op == 0) {
        e->kind = NPK_RK_NOP;
        if (raw) e->problems |= NPK_RK_BAD_PAYLOAD;
        return;
    }
    if (e->op == NPK_RK_OP_MARKER) {
        e->kind = NPK_RK_MARKER;
        if (e->value || e->offset) e->problems |= NPK_RK_BAD_PAYLOAD;
        return;
    }
    if (e->op == NPK_RK_OP_ENABLE) {
        e->kind = NPK_RK_OP_EN;
        e->reg = NPK_RKR_PC_OPERATION_ENABLE;
        e->layout = NPK_RKR_GLOBAL_OPERATION_ENABLE;
        if (e->offset != npk_rk_reg_get(e->reg)->offset) {
            e->problems |= NPK_RK_BAD_ENABLE_REG;
            e->reg = npk_rk_reg_by_offset(e->offset);
        }
        if (stray_bits(e->layout, e->value)) e->problems |= NPK_RK_BAD_BITS;
        return;
    }
    npk_rk_block b = NPK_RKB_NONE;
    if ((e->op & 0xFFu) == NPK_RK_OP_WRITE) b = npk_rk_block_by_code(e->op & 0xFF00u);
    if (b == NPK_RKB_NONE) {
        e->kind = NPK_RK_UNKNOWN_OP;
        e->problems |= NPK_RK_BAD_OP;
        e->reg = npk_rk_reg_by_offset(e->offset);
        e->layout = e->reg;
        return;
    }
    e->kind = NPK_RK_WRITE;
    e->block = b;
    e->reg = npk_rk_reg_by_offset(e->offset);
    e->layout = e->reg;
    if (e->reg == NPK_RKR_NONE) {
        e->problems |= NPK_RK_BAD_REG;
        return;
    }
    if (npk_rk_reg_get(e->reg)->block != b) e->problems |= NPK_RK_BAD_BLOCK;
    if (stray_bits(e->reg, e->value)) e->problems |= NPK_RK_BAD_BITS;
}

const char *npk_rk_problem_text(unsigned p)
{
    if (p & NPK_RK_BAD_OP) return "unknown op code";
    if (p & NPK_RK_BAD_REG) return "unknown register";
    if (p & NPK_RK_BAD_BLOCK) return "register belongs to another block than the op";
    if (p & NPK_RK_BAD_ENABLE_REG) return "operation enable not aimed at PC_OPERATION_ENABLE";
    if (p & NPK_RK_BAD_PAYLOAD) return "value or register set on a marker or zero op";
    if (p & NPK_RK_BAD_BITS) return "value sets bits outside every named field";
    return "";
}

/* ---- reading ---- */

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Parse one line [a, b) of hex text. Returns 1 with *v for an entry, 0 for a
 * blank or comment line, -1 (with *bad = offending position) otherwise. */
static int hex_line(const uint8_t *buf, size_t a, size_t b, uint64_t *v, size_t *bad)
{
    while (a < b && is_space(buf[a])) a++;
    while (b > a && is_space(buf[b - 1])) b--;
    if (a == b || buf[a] == '#') return 0;
    if (b - a == 18 && buf[a] == '0' && (buf[a + 1] == 'x' || buf[a + 1] == 'X')) a += 2;
    uint64_t r = 0;
    for (size_t k = a; k < b; k++) {
        int h = hexval(buf[k]);
        if (h < 0 || k - a >= 16) {
            *bad = k;
            return -1;
        }
        r = (r << 4) | (uint64_t)h;
    }
    if (b - a != 16) {
        *bad = a;
        return -1;
    }
    *v = r;
    return 1;
}

bool npk_rk_is_hex_text(const uint8_t *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && buf[e] != '\n') e++;
        uint64_t v;
        size_t bad;
        int r = hex_line(buf, i, e, &v, &bad);
        if (r) return r > 0; /* the first entry line decides */
        i = e + 1;
    }
    return false;
}

static npk_status alloc_entries(npk_rk_stream *s, size_t n, npk_error *err)
{
    size_t bytes;
    if (n > NPK_RK_STREAM_MAX_ENTRIES || !npk_mul_sz(n ? n : 1, 8, &bytes))
        return npk_fail(err, NPK_E_LIMIT, "stream of %zu entries exceeds the limit of %u", n,
                        NPK_RK_STREAM_MAX_ENTRIES);
    s->entries = malloc(bytes);
    s->src_off = malloc(bytes);
    if (!s->entries || !s->src_off) {
        npk_rk_stream_free(s);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for %zu stream entries", n);
    }
    return NPK_OK;
}

/* Walk hex text, calling fn per entry; stops at the first malformed line. */
static npk_status walk_hex(const uint8_t *buf, size_t len, npk_rk_entry_fn fn, void *ctx,
                           size_t *count, npk_error *err)
{
    size_t i = 0, n = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && buf[e] != '\n') e++;
        uint64_t v;
        size_t bad;
        int r = hex_line(buf, i, e, &v, &bad);
        if (r < 0)
            return npk_fail_at(err, NPK_E_FORMAT, bad,
                               "hex stream: expected one 16-digit hex word per line");
        if (r) {
            if (fn) fn(ctx, v, i);
            n++;
        }
        i = e + 1;
    }
    if (n == 0) return npk_fail_at(err, NPK_E_FORMAT, 0, "hex stream has no entries");
    *count = n;
    return NPK_OK;
}

static npk_status walk_bin(const uint8_t *buf, size_t len, npk_rk_entry_fn fn, void *ctx,
                           size_t *count, npk_error *err)
{
    if (len == 0) return npk_fail_at(err, NPK_E_FORMAT, 0, "empty stream");
    if (len % 8)
        return npk_fail_at(err, NPK_E_FORMAT, len - len % 8,
                           "binary stream length %zu is not a multiple of 8 (trailing %zu bytes)",
                           len, len % 8);
    if (fn)
        for (size_t i = 0; i < len / 8; i++) fn(ctx, npk_ld64le(buf + 8 * i), 8 * (uint64_t)i);
    *count = len / 8;
    return NPK_OK;
}

npk_status npk_rk_stream_walk(const uint8_t *buf, size_t len, npk_rk_encoding enc,
                              npk_rk_entry_fn fn, void *ctx, size_t *count, npk_rk_encoding *used,
                              npk_error *err)
{
    if (enc == NPK_RK_ENC_AUTO)
        enc = npk_rk_is_hex_text(buf, len) ? NPK_RK_ENC_HEX : NPK_RK_ENC_BINARY;
    if (used) *used = enc;
    size_t dummy;
    if (!count) count = &dummy;
    return enc == NPK_RK_ENC_HEX ? walk_hex(buf, len, fn, ctx, count, err)
                                 : walk_bin(buf, len, fn, ctx, count, err);
}

static void fill_entry(void *ctx, uint64_t raw, uint64_t off)
{
    npk_rk_stream *s = ctx;
    s->entries[s->count] = raw;
    s->src_off[s->count++] = off;
}

npk_status npk_rk_stream_parse(const uint8_t *buf, size_t len, npk_rk_encoding enc,
                               npk_rk_stream *s, npk_error *err)
{
    memset(s, 0, sizeof *s);
    size_t n;
    npk_rk_encoding used;
    npk_status st = npk_rk_stream_walk(buf, len, enc, NULL, NULL, &n, &used, err);
    if (st || (st = alloc_entries(s, n, err))) return st;
    npk_rk_stream_walk(buf, len, used, fill_entry, s, &n, NULL, err);
    s->encoding = used;
    return NPK_OK;
}

void npk_rk_stream_free(npk_rk_stream *s)
{
    free(s->entries);
    free(s->src_off);
    s->entries = NULL;
    s->src_off = NULL;
    s->count = 0;
}

/* ---- writing ---- */

void npk_rk_stream_to_bin(const uint64_t *e, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) npk_st64le(out + 8 * i, e[i]);
}

void npk_rk_stream_to_hex(const uint64_t *e, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++, out += 17) {
        uint64_t v = e[i];
        for (int k = 15; k >= 0; k--, v >>= 4) out[k] = digits[v & 15];
        out[16] = '\n';
    }
}

/* ---- facts ---- */

void npk_rk_stream_stats_init(npk_rk_stream_stats *st)
{
    memset(st, 0, sizeof *st);
    st->first_problem = SIZE_MAX;
}

void npk_rk_stream_stats_add(npk_rk_stream_stats *st, uint64_t raw)
{
    npk_rk_entry d;
    npk_rk_entry_decode(raw, &d);
    if (d.problems && st->first_problem == SIZE_MAX) st->first_problem = st->entries;
    st->entries++;
    switch (d.kind) {
    case NPK_RK_NOP: st->nops++; break;
    case NPK_RK_MARKER: st->markers++; break;
    case NPK_RK_OP_EN:
        st->op_enables++;
        st->enable_masks |= d.value;
        break;
    case NPK_RK_UNKNOWN_OP: st->unknown_ops++; break;
    case NPK_RK_WRITE:
        st->writes++;
        st->blocks_written |= 1u << d.block;
        if (d.problems & NPK_RK_BAD_REG) st->unknown_regs++;
        if (d.problems & NPK_RK_BAD_BLOCK) st->block_mismatch++;
        if (d.reg != NPK_RKR_NONE && npk_rk_reg_get(d.reg)->undocumented) st->undocumented++;
        if (d.reg == NPK_RKR_PC_BASE_ADDRESS && d.value) st->chain_links++;
        break;
    }
}

void npk_rk_stream_stats_of(const uint64_t *e, size_t n, npk_rk_stream_stats *st)
{
    npk_rk_stream_stats_init(st);
    for (size_t i = 0; i < n; i++) npk_rk_stream_stats_add(st, e[i]);
}
