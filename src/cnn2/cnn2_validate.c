/* The CNN v2 validator: every rule of the reference (docs/cnn2.md), each
 * problem recorded with the absolute offset of the offending bytes. Rules run
 * in the reference's order; the checks stop only where the next ones would
 * have nothing reliable to read (short header, unknown version, a layer table
 * that does not fit). All size arithmetic is 64-bit and overflow-checked. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/cnn2.h"

uint32_t npk_cnn2_header_size(uint32_t version)
{
    return version == 1 ? NPK_CNN2_HEADER_V1 : version == 2 ? NPK_CNN2_HEADER_V2 : 0;
}

/* Header + table; the counts are at most 2^32, so 64 bits never overflow. */
static uint64_t head_and_table(uint32_t version, uint64_t num_layers)
{
    return npk_cnn2_header_size(version) + NPK_CNN2_LAYER_BYTES * num_layers;
}

uint64_t npk_cnn2_exact_size(uint32_t version, uint64_t num_layers, uint64_t total_weights)
{
    return head_and_table(version, num_layers) + 2 * total_weights;
}

uint64_t npk_cnn2_padded_size(uint32_t version, uint64_t num_layers, uint64_t total_weights)
{
    return head_and_table(version, num_layers) + 4 * ((total_weights + 1) / 2);
}

static npk_status add(npk_cnn2_report *rep, npk_error *err, npk_cnn2_check check, uint64_t off,
                      int32_t layer, const char *fmt, ...) NPK_PRINTF(6, 7);

static npk_status add(npk_cnn2_report *rep, npk_error *err, npk_cnn2_check check, uint64_t off,
                      int32_t layer, const char *fmt, ...)
{
    bool warning = check >= NPK_CNN2_W_IN_FIRST;
    if (warning)
        rep->warnings++;
    else
        rep->errors++;
    if (rep->count >= NPK_CNN2_MAX_PROBLEMS) return NPK_OK;
    if (rep->count == rep->cap) {
        size_t cap = rep->cap ? rep->cap * 2 : 8;
        npk_cnn2_problem *p = realloc(rep->items, cap * sizeof *p);
        if (!p) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        rep->items = p;
        rep->cap = cap;
    }
    npk_cnn2_problem *p = &rep->items[rep->count++];
    memset(p, 0, sizeof *p);
    p->check = check;
    p->warning = warning;
    p->offset = off;
    p->layer = layer;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return NPK_OK;
}

#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (add(rep, err, __VA_ARGS__)) return NPK_E_NOMEM;                                        \
    } while (0)

static uint32_t field(const uint8_t *rec, int idx)
{
    return npk_ld32le(rec + 4 * idx);
}

/* Rule 5, one layer. */
static npk_status check_layer(npk_cnn2_report *rep, npk_error *err, const uint8_t *rec,
                              uint64_t off, int32_t i)
{
    uint32_t k = field(rec, 0), in = field(rec, 1), out = field(rec, 2), count = field(rec, 4);
    if (k == 0 || k % 2 == 0)
        ADD(NPK_CNN2_E_KERNEL, off, i, "layer %d: kernel_size %u is not odd and >= 1", i, k);
    if (in == 0) ADD(NPK_CNN2_E_IN, off + 4, i, "layer %d: in_channels is 0", i);
    if (out == 0 || out > NPK_CNN2_MAX_OUT)
        ADD(NPK_CNN2_E_OUT, off + 8, i, "layer %d: out_channels %u is outside 1..%u", i, out,
            NPK_CNN2_MAX_OUT);
    uint64_t want;
    bool fits = npk_mul_u64((uint64_t)out * in, (uint64_t)k * k, &want);
    if (!fits)
        ADD(NPK_CNN2_E_COUNT, off + 16, i,
            "layer %d: weight_count %u, but out*in*k*k = %u*%u*%u*%u overflows 64 bits", i, count,
            out, in, k, k);
    else if (want != count)
        ADD(NPK_CNN2_E_COUNT, off + 16, i,
            "layer %d: weight_count %u, expected out*in*k*k = %u*%u*%u*%u = %llu", i, count, out,
            in, k, k, (unsigned long long)want);
    return NPK_OK;
}

/* Warnings: the standard network's channel chain and finite weights. */
static npk_status check_warnings(npk_cnn2_report *rep, npk_error *err, const uint8_t *buf,
                                 size_t len, uint32_t hs, uint32_t n)
{
    uint32_t prev_out = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *rec = buf + hs + (size_t)i * NPK_CNN2_LAYER_BYTES;
        uint64_t off = hs + (uint64_t)i * NPK_CNN2_LAYER_BYTES;
        uint32_t in = field(rec, 1), out = field(rec, 2);
        if (i == 0 && in != NPK_CNN2_STD_IN)
            ADD(NPK_CNN2_W_IN_FIRST, off + 4, 0,
                "layer 0: in_channels %u, the standard network has 4 + 8 = 12", in);
        if (i > 0 && (uint64_t)in != (uint64_t)prev_out + NPK_CNN2_STATIC)
            ADD(NPK_CNN2_W_IN_CHAIN, off + 4, (int32_t)i,
                "layer %u: in_channels %u, expected previous out_channels %u + 8", i, in, prev_out);
        if (i + 1 == n && out != NPK_CNN2_STD_OUT)
            ADD(NPK_CNN2_W_OUT_LAST, off + 8, (int32_t)i,
                "layer %u (last): out_channels %u, the standard network has 4", i, out);
        prev_out = out;
    }
    /* Non-finite weights, as far as the weight data is present. */
    uint64_t wstart = hs + (uint64_t)n * NPK_CNN2_LAYER_BYTES;
    uint64_t avail = wstart < len ? (len - wstart) / 2 : 0;
    uint64_t nw = rep->total_weights < avail ? rep->total_weights : avail;
    uint64_t bad = 0, first = 0;
    for (uint64_t j = 0; j < nw; j++) {
        uint16_t h = npk_ld16le(buf + wstart + 2 * j);
        if ((h & 0x7c00) == 0x7c00) {
            if (!bad) first = j;
            bad++;
        }
    }
    if (bad) {
        uint16_t h = npk_ld16le(buf + wstart + 2 * first);
        ADD(NPK_CNN2_W_NONFINITE, wstart + 2 * first, -1,
            "%llu weight(s) are NaN or infinite (first: weight %llu = 0x%04x, %s)",
            (unsigned long long)bad, (unsigned long long)first, h,
            (h & 0x3ff) ? "NaN" : "infinity");
    }
    return NPK_OK;
}

npk_status npk_cnn2_validate(const uint8_t *buf, size_t len, npk_cnn2_report *rep, npk_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->file_size = len;
    /* Rule 1. */
    if (len < NPK_CNN2_HEADER_V1) {
        ADD(NPK_CNN2_E_SHORT, len, -1, "file is %zu bytes, shorter than the 16-byte header", len);
        return NPK_OK;
    }
    uint32_t magic = npk_ld32le(buf);
    if (magic != NPK_CNN2_MAGIC)
        ADD(NPK_CNN2_E_MAGIC, 0, -1,
            "magic is 0x%08X (bytes %02x %02x %02x %02x), expected "
            "0x324E4E43 (\"CNN2\")",
            magic, buf[0], buf[1], buf[2], buf[3]);
    /* Rule 2: the header length comes from the version, never the file size. */
    uint32_t version = npk_ld32le(buf + 4);
    uint32_t hs = npk_cnn2_header_size(version);
    if (!hs) {
        ADD(NPK_CNN2_E_VERSION, 4, -1, "version %u is not supported (only 1 and 2)", version);
        return NPK_OK;
    }
    /* Rule 3. */
    if (len < hs) {
        ADD(NPK_CNN2_E_SHORT, len, -1,
            "file is %zu bytes, shorter than the %u-byte version %u header", len, hs, version);
        return NPK_OK;
    }
    rep->version = version;
    rep->num_layers = npk_ld32le(buf + 8);
    rep->total_weights = npk_ld32le(buf + 12);
    rep->mip_level = version >= 2 ? npk_ld32le(buf + 16) : 0;
    rep->header_read = true;
    if (rep->mip_level > NPK_CNN2_MAX_MIP)
        ADD(NPK_CNN2_E_MIP, 16, -1, "mip_level %u is greater than 3", rep->mip_level);
    /* Rule 4. */
    uint32_t n = rep->num_layers;
    if (n == 0) ADD(NPK_CNN2_E_NO_LAYERS, 8, -1, "num_layers is 0");
    uint64_t table_end = head_and_table(version, n);
    if (table_end > len) {
        uint64_t whole = (len - hs) / NPK_CNN2_LAYER_BYTES;
        ADD(NPK_CNN2_E_TABLE, hs + whole * NPK_CNN2_LAYER_BYTES, -1,
            "layer table of %u x 20 bytes at 0x%x ends at %llu, past the end of the file (%zu "
            "bytes)",
            n, hs, (unsigned long long)table_end, len);
        return NPK_OK;
    }
    /* Rule 5, then 6 and 7 over the whole table. */
    for (uint32_t i = 0; i < n; i++) {
        uint64_t off = hs + (uint64_t)i * NPK_CNN2_LAYER_BYTES;
        npk_status st = check_layer(rep, err, buf + off, off, (int32_t)i);
        if (st) return st;
    }
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t off = hs + (uint64_t)i * NPK_CNN2_LAYER_BYTES;
        uint32_t wo = field(buf + off, 3), wc = field(buf + off, 4);
        if (wo != sum)
            ADD(NPK_CNN2_E_OFFSET, off + 12, (int32_t)i,
                "layer %u: weight_offset %u, expected %llu (the sum of the previous counts)", i, wo,
                (unsigned long long)sum);
        sum += wc;
    }
    if (sum != rep->total_weights)
        ADD(NPK_CNN2_E_TOTAL, 12, -1, "total_weights %u, but the layers' counts sum to %llu",
            rep->total_weights, (unsigned long long)sum);
    /* Rule 8. */
    uint64_t exact = npk_cnn2_exact_size(version, n, rep->total_weights);
    uint64_t padded = npk_cnn2_padded_size(version, n, rep->total_weights);
    if (len != exact && len != padded) {
        uint64_t off = len < exact ? len : len < padded ? exact : padded; /* first bad byte */
        if (exact == padded)
            ADD(NPK_CNN2_E_SIZE, off, -1,
                "file is %zu bytes, expected %llu (header %u + layer table %llu + weights %llu)",
                len, (unsigned long long)exact, hs, (unsigned long long)n * NPK_CNN2_LAYER_BYTES,
                (unsigned long long)rep->total_weights * 2);
        else
            ADD(NPK_CNN2_E_SIZE, off, -1,
                "file is %zu bytes, expected %llu (exact) or %llu (padded to a whole u32)", len,
                (unsigned long long)exact, (unsigned long long)padded);
    }
    return check_warnings(rep, err, buf, len, hs, n);
}

void npk_cnn2_report_free(npk_cnn2_report *rep)
{
    if (!rep) return;
    free(rep->items);
    rep->items = NULL;
    rep->count = rep->cap = 0;
}

const npk_cnn2_problem *npk_cnn2_first_error(const npk_cnn2_report *rep)
{
    for (size_t i = 0; i < rep->count; i++)
        if (!rep->items[i].warning) return &rep->items[i];
    return NULL;
}

const char *npk_cnn2_check_name(npk_cnn2_check check)
{
    switch (check) {
    case NPK_CNN2_E_SHORT: return "short";
    case NPK_CNN2_E_MAGIC: return "magic";
    case NPK_CNN2_E_VERSION: return "version";
    case NPK_CNN2_E_MIP: return "mip_level";
    case NPK_CNN2_E_NO_LAYERS: return "num_layers";
    case NPK_CNN2_E_TABLE: return "layer_table";
    case NPK_CNN2_E_KERNEL: return "kernel_size";
    case NPK_CNN2_E_IN: return "in_channels";
    case NPK_CNN2_E_OUT: return "out_channels";
    case NPK_CNN2_E_COUNT: return "weight_count";
    case NPK_CNN2_E_OFFSET: return "offset";
    case NPK_CNN2_E_TOTAL: return "total_weights";
    case NPK_CNN2_E_SIZE: return "size";
    case NPK_CNN2_W_IN_FIRST: return "first_in_channels";
    case NPK_CNN2_W_IN_CHAIN: return "in_channels_chain";
    case NPK_CNN2_W_OUT_LAST: return "last_out_channels";
    case NPK_CNN2_W_NONFINITE: return "nonfinite_weight";
    }
    return "unknown";
}
