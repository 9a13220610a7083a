/* Text disassembly of stream entries: every field of the value by name, and
 * a visible mark on anything odd. Names and fields come from the table. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "npukit/rknpu_stream.h"

const char *npk_rk_kind_name(npk_rk_kind k)
{
    switch (k) {
    case NPK_RK_NOP: return "nop";
    case NPK_RK_WRITE: return "write";
    case NPK_RK_MARKER: return "marker";
    case NPK_RK_OP_EN: return "op-enable";
    case NPK_RK_UNKNOWN_OP: return "unknown-op";
    }
    return "?";
}

const char *npk_rk_problem_name(unsigned bit)
{
    switch (bit) {
    case NPK_RK_BAD_OP: return "unknown-op";
    case NPK_RK_BAD_REG: return "unknown-register";
    case NPK_RK_BAD_BLOCK: return "block-mismatch";
    case NPK_RK_BAD_PAYLOAD: return "payload-on-marker";
    case NPK_RK_BAD_ENABLE_REG: return "enable-not-at-0x0008";
    case NPK_RK_BAD_BITS: return "bits-outside-fields";
    }
    return "?";
}

/* Append to buf like snprintf, tracking the length needed. */
typedef struct line {
    char *buf;
    size_t len, used;
} line;

static void add(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = l->used < l->len ? l->len - l->used : 0;
    int n = vsnprintf(room ? l->buf + l->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) l->used += (size_t)n;
}

size_t npk_rk_disasm_entry(size_t index, const npk_rk_entry *e, char *buf, size_t len)
{
    line l = {buf, len, 0};
    if (len) buf[0] = 0;
    const npk_rk_reg_info *ri = npk_rk_reg_get(e->reg);
    const npk_rk_block_info *bi = npk_rk_block_get(ri ? ri->block : e->block);
    add(&l, "%5zu  %016" PRIx64 "  %-8s ", index, e->raw, bi ? bi->name : "-");
    switch (e->kind) {
    case NPK_RK_NOP: add(&l, "-       (nop)"); break;
    case NPK_RK_MARKER: add(&l, "-       (marker before op-enable)"); break;
    default:
        add(&l, "0x%04x  %-28s 0x%08" PRIx32, e->offset, ri ? ri->full_name : "?", e->value);
        if (e->kind == NPK_RK_OP_EN) add(&l, "  (op-enable)");
        const npk_rk_reg_info *lay = npk_rk_reg_get(e->layout);
        for (unsigned i = 0; lay && i < lay->field_count; i++) {
            npk_rk_field f = (npk_rk_field)(lay->first_field + i);
            uint32_t v = npk_rk_field_extract(f, e->value);
            if (v < 1024)
                add(&l, " %s=%" PRIu32, npk_rk_field_get(f)->name, v);
            else
                add(&l, " %s=0x%" PRIx32, npk_rk_field_get(f)->name, v);
        }
        break;
    }
    for (unsigned bit = 1; bit <= NPK_RK_BAD_BITS; bit <<= 1)
        if (e->problems & bit) add(&l, "  !! %s", npk_rk_problem_name(bit));
    return l.used;
}
