/* Corrupted RKNPU register-command streams through the CLI, binary and hex,
 * on the golden dumps and on streams `rknpu matmul` and `rknpu plan` write.
 *
 * A stream is a bare list of u64 entries: cut at an entry (or line)
 * boundary it is a shorter valid stream, which is accepted; cut inside an
 * entry (or line) it is an error at that entry. The boundaries are where
 * the decoder sees the stream's structure change: each block's first and
 * last write, the operation enable, and each task of a chained plan.
 * Entries set to extreme values (unknown op codes, unknown registers) are
 * problems the disassembler reports (exit 1) with the first one's offset;
 * malformed hex lines are errors (exit 2). */
#include "harden.h"
#include "npukit/rknpu_stream.h"

static const hd_cmd cut_cmds[] = {
    {"info @IN", 2, 0, 0, 0},
    {"rknpu disasm @IN", 2, 0, 0, 0},
    {"rknpu disasm --json @IN", 2, 0, 0, HD_JSON},
};
static const hd_cmd ok_cmds[] = {
    {"info @IN", 0, 0, 0, 0},
    {"rknpu disasm @IN", 0, 0, 0, 0},
};
static const hd_cmd flagged_cmds[] = {
    {"rknpu disasm @IN", 1, 0, 0, 0},
    {"rknpu disasm --json @IN", 1, 0, 0, HD_JSON},
};
static const hd_cmd unknown_op_cmds[] = {
    {"info @IN", 2, 0, 0, 0}, /* no longer recognised as a stream: unrecognised, offset 0 */
    {"rknpu disasm @IN", 1, 0, 0, 0},
};
static const hd_cmd unknown_op_hex_cmds[] = {
    {"info @IN", 0, 0, 0, 0}, /* not recognised as a stream: described as text */
    {"rknpu disasm @IN", 1, 0, 0, 0},
};
#define N(a) (sizeof a / sizeof a[0])

/* Entry indices where the stream's structure changes. */
static size_t boundaries(const npk_rk_stream *s, size_t *at, size_t cap)
{
    size_t n = 0;
    int prev = -1;
    for (size_t i = 0; i < s->count && n + 2 < cap; i++) {
        npk_rk_entry e;
        npk_rk_entry_decode(s->entries[i], &e);
        int block = e.kind == NPK_RK_WRITE ? (int)e.block : 100 + (int)e.kind;
        if (block != prev) {
            if (i) at[n++] = i - 1; /* last entry of the previous block */
            at[n++] = i;
            prev = block;
        }
    }
    if (s->count) at[n++] = s->count - 1;
    return n;
}

static void binary(const char *label, const char *path)
{
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    npk_rk_stream s;
    npk_error err = {0};
    if (npk_rk_stream_parse(buf, len, NPK_RK_ENC_BINARY, &s, &err))
        fail_msg("%s: %s", path, err.msg);
    size_t at[512], n = boundaries(&s, at, 512);
    for (size_t i = 0; i < n; i++) {
        size_t e = at[i] * 8;
        if (e >= 16) hd_truncated(label, buf, e, "cut.bin", ok_cmds, N(ok_cmds)); /* valid prefix */
        static const size_t inside[] = {1, 4, 7};
        for (size_t k = 0; k < 3; k++) {
            if (!hd_thorough() && k != 1) continue;
            hd_truncated(label, buf, e + inside[k], "cut.bin", cut_cmds, N(cut_cmds));
        }
        /* The entry's op and register fields set to extreme values. */
        char f[64];
        snprintf(f, sizeof f, "entry %zu op", at[i]);
        hd_field(label, f, buf, len, e + 6, HD_LE16, 0xffff, "field.bin", unknown_op_cmds,
                 N(unknown_op_cmds));
        snprintf(f, sizeof f, "entry %zu register", at[i]);
        hd_field(label, f, buf, len, e, HD_LE16, 0xffff, "field.bin", flagged_cmds,
                 N(flagged_cmds));
    }
    npk_rk_stream_free(&s);
    free(buf);
}

/* The text with line `line` replaced by `repl` (NULL: cut at `cut` bytes into the line). */
static void hex_case(const char *label, const uint8_t *buf, size_t len, const size_t *lines,
                     size_t nlines, size_t line, const char *repl, const hd_cmd *cmds, size_t ncmds)
{
    size_t a = lines[line], b = line + 1 < nlines ? lines[line + 1] - 1 : len; /* [a, b) w/o \n */
    while (b > a && (buf[b - 1] == '\n' || buf[b - 1] == '\r')) b--;
    size_t rl = strlen(repl), n = a + rl + (len - b);
    uint8_t *t = malloc(n);
    memcpy(t, buf, a);
    memcpy(t + a, repl, rl);
    memcpy(t + a + rl, buf + b, len - b);
    char what[256];
    snprintf(what, sizeof what, "%s: line %zu is \"%s\"", label, line + 1, repl);
    hd_case(what, t, n, "field.txt", cmds, ncmds);
    free(t);
}

static void hex(const char *label, const char *path)
{
    size_t len;
    uint8_t *buf = npk_slurp(path, &len);
    npk_rk_stream s;
    npk_error err = {0};
    if (npk_rk_stream_parse(buf, len, NPK_RK_ENC_HEX, &s, &err)) fail_msg("%s: %s", path, err.msg);
    assert_true(len == s.count * 17); /* one 16-digit word and '\n' per line */
    size_t *lines = malloc(s.count * sizeof *lines);
    for (size_t i = 0; i < s.count; i++) lines[i] = i * 17;
    size_t at[512], n = boundaries(&s, at, 512);
    for (size_t i = 0; i < n; i++) {
        size_t l = at[i] * 17;
        if (at[i] >= 2) hd_truncated(label, buf, l, "cut.txt", ok_cmds, N(ok_cmds));
        static const size_t inside[] = {1, 8, 15};
        if (at[i] >= 2) /* `info` needs two entries to recognise a stream */
            for (size_t k = 0; k < 3; k++) {
                if (!hd_thorough() && k != 1) continue;
                hd_truncated(label, buf, l + inside[k], "cut.txt", cut_cmds, N(cut_cmds));
            }
        if (at[i] < 2) continue;
        hex_case(label, buf, len, lines, s.count, at[i], "ffffffffffffffff", unknown_op_hex_cmds,
                 N(unknown_op_hex_cmds));
        hex_case(label, buf, len, lines, s.count, at[i], "0x0201ffffffffffff", flagged_cmds,
                 N(flagged_cmds));
        hex_case(label, buf, len, lines, s.count, at[i], "7fffffff", cut_cmds, N(cut_cmds));
        hex_case(label, buf, len, lines, s.count, at[i], "fffffffffffffffff", cut_cmds,
                 N(cut_cmds));
        hex_case(label, buf, len, lines, s.count, at[i], "02010000000g1044", cut_cmds, N(cut_cmds));
    }
    free(lines);
    npk_rk_stream_free(&s);
    free(buf);
}

static void test_golden(void **state)
{
    (void)state;
    static const char *const files[] = {"rknpu/golden/fp16_4x64x64.txt",
                                        "rknpu/golden/int8_64x64x64.txt"};
    for (size_t i = 0; i < N(files); i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s", NPK_FIXTURE(files[i]));
        hex(files[i], p);
    }
    hd_summary("rknpu golden hex");
}

static void test_generated(void **state)
{
    (void)state;
    hd_make("rknpu matmul -m 64 -k 64 -n 64 --dtype int8 -o %s", npk_tmp("mm.bin"));
    hd_make("rknpu matmul -m 4 -k 64 -n 64 --format hex -o %s", npk_tmp("mm.txt"));
    hd_make("rknpu plan -m 2048 -k 64 -n 64 --max-m 1000 -o %s", npk_tmp("plan"));
    binary("matmul binary", npk_tmp("mm.bin"));
    hex("matmul hex", npk_tmp("mm.txt"));
    binary("plan regcmd", npk_tmp("plan/regcmd.bin"));
    hd_summary("rknpu generated");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden),
                                       cmocka_unit_test(test_generated)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
