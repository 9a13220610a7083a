/* The RKNPU stream decoder on hostile bytes: both readers, every entry's
 * decode/encode identity and disassembly, statistics, probe and summary. */
#include <stdint.h>
#include <stdlib.h>

#include "npukit/rknpu_stream.h"
#include "core/formats.h"

static void check(const npk_rk_stream *s)
{
    char line[2048];
    for (size_t i = 0; i < s->count; i++) {
        npk_rk_entry e;
        npk_rk_entry_decode(s->entries[i], &e);
        if (npk_rk_entry_encode(e.op, e.value, e.offset) != s->entries[i]) __builtin_trap();
        if (e.kind == NPK_RK_WRITE && !e.problems && npk_rk_write(e.reg, e.value) != e.raw)
            __builtin_trap();
        if (npk_rk_disasm_entry(i, &e, line, sizeof line) >= sizeof line) __builtin_trap();
    }
    npk_rk_stream_stats st;
    npk_rk_stream_stats_of(s->entries, s->count, &st);
    if (st.entries != s->count) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const npk_rk_encoding encs[] = {NPK_RK_ENC_AUTO, NPK_RK_ENC_BINARY, NPK_RK_ENC_HEX};
    for (size_t k = 0; k < 3; k++) {
        npk_rk_stream s;
        npk_error err = {0};
        if (npk_rk_stream_parse(data, size, encs[k], &s, &err) == NPK_OK) {
            check(&s);
            npk_rk_stream_free(&s);
        }
    }
    if (npk_rknpu_stream_probe(data, size)) {
        npk_summary sum = {0};
        npk_error err = {0};
        npk_rknpu_stream_summarize(data, size, &sum, &err);
    }
    return 0;
}
