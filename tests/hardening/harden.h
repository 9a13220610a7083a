/* The corrupted-input suite's engine (included by each tests/hardening/
 * test_corrupt_*.c program; static functions, one copy per program).
 *
 * A case is a buffer (a real or generated file, truncated or with a field
 * set to an extreme value) plus the CLI commands that read it. Each command
 * runs in an empty output directory and must
 *   - exit with the expected status (2 for bad input; 1 for commands that
 *     report problems, such as validators and disassemblers),
 *   - print exactly one line on stderr: "npukit: FILE: offset 0x<hex>: what",
 *     FILE being the corrupted file (validators that list problems on stdout
 *     instead: "FILE: offset 0x<hex>: ..." lines there, stderr empty),
 *   - leave the output directory empty (no output, no temporary file).
 * Every failure is listed (not only the first) before the test fails.
 *
 * Commands are templates split on spaces: @IN is the corrupted file, @OUT a
 * directory that must stay empty, and @1..@4 the test's helper files. */
#ifndef NPK_HARDEN_H
#define NPK_HARDEN_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/cnn2_render.h"
#include "npukit/tensor.h"

typedef struct hd_cmd {
    const char *tmpl;
    int want;          /* exit status: 2 bad input, 1 problems reported */
    int stdout_report; /* a validator listing problems on stdout ("FILE: offset 0x..: ...")
                          with nothing on stderr */
    size_t min_len;    /* run only on files at least this long: `info` detects formats by
                          their magic, and a file cut inside it is plain text or unknown */
    unsigned needs;    /* HD_JSON / HD_PNG: skipped in builds without libcjson / libspng */
} hd_cmd;

enum { HD_JSON = 1, HD_PNG = 2 };

static inline int hd_available(unsigned needs)
{
    return (!(needs & HD_JSON) || npk_safetensors_available()) &&
           (!(needs & HD_PNG) || npk_cnn2_png_available());
}

/* Set while running cases that pin specific findings: never sampled out. */
static int hd_every_case;

/* Helper files named @1..@4 in templates. */
static const char *hd_helper[5];
static size_t hd_cases, hd_runs, hd_failures;

/* Under qemu-user every run costs a process start in the emulator: sample
 * positions more sparsely there (the boundaries themselves are all kept). */
static inline int hd_emulated(void)
{
    const char *cli = getenv("NPK_CLI_OVERRIDE");
    return npk_test_light() || strstr(cli && *cli ? cli : NPK_CLI, "npukit-emu") != NULL;
}

/* Full position lists natively; under sanitizers or emulation, where each
 * run costs several times more, the boundaries without their neighbours and
 * the two most extreme values. */
static inline int hd_thorough(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 0;
#endif
#endif
    return !hd_emulated();
}

static const char *hd_out_dir(void)
{
    const char *d = npk_tmp("out");
    mkdir(d, 0700);
    return d;
}

/* Names left in the output directory (removed), or 0. */
static inline int hd_leftovers(char *names, size_t cap)
{
    DIR *d = opendir(hd_out_dir());
    int n = 0;
    struct dirent *e;
    names[0] = 0;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", hd_out_dir(), e->d_name);
        if (strlen(names) + strlen(e->d_name) + 2 < cap) {
            strcat(names, " ");
            strcat(names, e->d_name);
        }
        DIR *sub = opendir(p);
        if (sub) { /* --dump-layers makes a directory */
            struct dirent *f;
            while ((f = readdir(sub))) {
                char q[4096];
                snprintf(q, sizeof q, "%s/%s", p, f->d_name);
                if (f->d_name[0] != '.') unlink(q);
            }
            closedir(sub);
            rmdir(p);
        } else {
            unlink(p);
        }
        n++;
    }
    if (d) closedir(d);
    return n;
}

/* Is s exactly one line "npukit: FILE: offset 0x<hex>: <message>\n"? */
static inline int hd_error_line(const char *s, const char *file)
{
    char prefix[2048];
    snprintf(prefix, sizeof prefix, "npukit: %s: offset 0x", file);
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n)) return 0;
    const char *p = s + n;
    if (!strchr("0123456789abcdef", *p) || !*p) return 0;
    while (*p && strchr("0123456789abcdef", *p)) p++;
    if (strncmp(p, ": ", 2) || p[2] == '\n' || !p[2]) return 0;
    const char *nl = strchr(p, '\n');
    return nl && nl[1] == 0;
}

static inline void hd_report(const char *what, const char *cmd, const npk_run *r, const char *why)
{
    const char *lim = getenv("HD_MAX_REPORTS"); /* more (or fewer) failures listed */
    hd_failures++;
    if (hd_failures > (size_t)(lim ? atol(lim) : 40)) return;
    print_message("FAIL %s: npukit %s: %s (exit %d)\n  stderr: %.300s\n", what, cmd, why, r->status,
                  r->err);
}

/* Expand a template into a command line. */
static inline void hd_expand(const char *tmpl, const char *in, char *line, size_t cap)
{
    line[0] = 0;
    size_t n = 0;
    for (const char *p = tmpl; *p && n + 1 < cap;) {
        const char *sub = NULL;
        size_t skip = 1;
        if (!strncmp(p, "@IN", 3)) {
            sub = in;
            skip = 3;
        } else if (!strncmp(p, "@OUT", 4)) {
            sub = hd_out_dir();
            skip = 4;
        } else if (p[0] == '@' && p[1] >= '1' && p[1] <= '4') {
            sub = hd_helper[p[1] - '0'];
            skip = 2;
        }
        if (sub) {
            n += (size_t)snprintf(line + n, cap - n, "%s", sub);
            p += skip;
        } else {
            line[n++] = *p++;
            line[n] = 0;
        }
    }
}

/* Run every command on buf (written to a file named like `name`). */
static inline void hd_case(const char *what, const uint8_t *buf, size_t len, const char *name,
                           const hd_cmd *cmds, size_t ncmds)
{
    /* Under sanitizers or qemu (several times slower per run) one case in
     * HD_SAMPLE (default 4) runs; $HD_SAMPLE=1 runs them all. */
    static unsigned long seq;
    const char *sample = getenv("HD_SAMPLE");
    unsigned long every = sample ? strtoul(sample, NULL, 10) : hd_thorough() ? 1 : 4;
    if (every > 1 && strcmp(what, "baseline") && !hd_every_case && seq++ % every) return;
    const char *in = npk_tmp(name);
    FILE *f = fopen(in, "wb"); /* plain stdio: no fsync per case */
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) fail_msg("cannot write %s", in);
    hd_cases++;
    for (size_t i = 0; i < ncmds; i++) {
        char line[4096], left[512];
        if (len < cmds[i].min_len || !hd_available(cmds[i].needs)) continue;
        hd_expand(cmds[i].tmpl, in, line, sizeof line);
        npk_run r = npk_cli("%s", line);
        hd_runs++;
        if (cmds[i].want == 0) { /* a corruption the format tolerates by design */
            if (r.status != 0)
                hd_report(what, cmds[i].tmpl, &r, "rejected, but tolerated by design");
            hd_leftovers(left, sizeof left);
            npk_run_free(&r);
            continue;
        }
        if (r.status != cmds[i].want) {
            char why[64];
            snprintf(why, sizeof why, "exit %d, expected %d", r.status, cmds[i].want);
            hd_report(what, cmds[i].tmpl, &r, why);
        } else if (cmds[i].stdout_report) {
            char want[2048];
            snprintf(want, sizeof want, "%s: offset 0x", in);
            if (r.err[0] || !strstr(r.out, want))
                hd_report(what, cmds[i].tmpl, &r, "no 'FILE: offset 0x..' problem on stdout");
        } else if (!hd_error_line(r.err, in)) {
            hd_report(what, cmds[i].tmpl, &r,
                      "stderr is not one 'npukit: FILE: offset 0x..: ' line");
        }
        if (hd_leftovers(left, sizeof left)) hd_report(what, cmds[i].tmpl, &r, "files left behind");
        npk_run_free(&r);
    }
}

/* The file cut to `len` bytes. */
static inline void hd_truncated(const char *label, const uint8_t *buf, size_t len, const char *name,
                                const hd_cmd *cmds, size_t ncmds)
{
    char what[256];
    snprintf(what, sizeof what, "%s cut to %zu bytes", label, len);
    uint8_t *b = malloc(len ? len : 1);
    memcpy(b, buf, len);
    hd_case(what, b, len, name, cmds, ncmds);
    free(b);
}

/* Extreme values for 32-bit fields. */
static const uint64_t hd_extremes32[] = {0, 1, 0x7fffffffu, 0xffffffffu};
#define HD_N32 (sizeof hd_extremes32 / sizeof hd_extremes32[0])

typedef enum hd_width {
    HD_LE8 = 1,
    HD_LE16 = 2,
    HD_LE32 = 4,
    HD_LE64 = 8,
    HD_BE32 = 0x104
} hd_width;

static inline void hd_store(uint8_t *p, hd_width w, uint64_t v)
{
    switch (w) {
    case HD_LE8: p[0] = (uint8_t)v; break;
    case HD_LE16: npk_st16le(p, (uint16_t)v); break;
    case HD_LE32: npk_st32le(p, (uint32_t)v); break;
    case HD_LE64: npk_st64le(p, v); break;
    case HD_BE32: npk_st32be(p, (uint32_t)v); break;
    }
}

static inline uint64_t hd_load(const uint8_t *p, hd_width w)
{
    switch (w) {
    case HD_LE8: return p[0];
    case HD_LE16: return npk_ld16le(p);
    case HD_LE32: return npk_ld32le(p);
    case HD_LE64: return npk_ld64le(p);
    case HD_BE32: return npk_ld32be(p);
    }
    return 0;
}

/* The file with the field at `off` set to v (skipped when v is its value). */
static inline void hd_field(const char *label, const char *field, const uint8_t *buf, size_t len,
                            uint64_t off, hd_width w, uint64_t v, const char *name,
                            const hd_cmd *cmds, size_t ncmds)
{
    size_t bytes = (size_t)w & 0xff;
    if (off + bytes > len || hd_load(buf + off, w) == v) return;
    char what[256];
    snprintf(what, sizeof what, "%s: %s (at 0x%llx) = 0x%llx", label, field,
             (unsigned long long)off, (unsigned long long)v);
    uint8_t *b = malloc(len);
    memcpy(b, buf, len);
    hd_store(b + off, w, v);
    hd_case(what, b, len, name, cmds, ncmds);
    free(b);
}

/* The same commands expecting success (for values a format tolerates). */
static inline hd_cmd *hd_succeeding(const hd_cmd *cmds, size_t ncmds)
{
    static hd_cmd ok[16];
    for (size_t i = 0; i < ncmds && i < 16; i++)
        ok[i] = (hd_cmd){cmds[i].tmpl, 0, 0, 0, cmds[i].needs};
    return ok;
}

/* Every extreme value for one field; the values whose bit is set in `ok`
 * (1 << index in hd_extremes32) are tolerated by the format: the commands
 * must then succeed. */
static inline void hd_field_ok(const char *label, const char *field, const uint8_t *buf, size_t len,
                               uint64_t off, hd_width w, unsigned ok, const char *name,
                               const hd_cmd *cmds, size_t ncmds)
{
    for (size_t i = 0; i < HD_N32; i++) {
        uint64_t v = hd_extremes32[i];
        if (!hd_thorough() && (i == 1 || i == 2)) continue;
        if (w == HD_LE16) v &= 0xffff;
        if (w == HD_LE8) v &= 0xff;
        if (w == HD_LE64 && v == 0x7fffffffu) v = 0x7fffffffffffffffull;
        if (w == HD_LE64 && v == 0xffffffffu) v = ~0ull;
        hd_field(label, field, buf, len, off, w, v, name,
                 ok >> i & 1 ? hd_succeeding(cmds, ncmds) : cmds, ncmds);
    }
}

/* Every extreme 32-bit value for one field, each one an error. */
static inline void hd_field_all(const char *label, const char *field, const uint8_t *buf,
                                size_t len, uint64_t off, hd_width w, const char *name,
                                const hd_cmd *cmds, size_t ncmds)
{
    hd_field_ok(label, field, buf, len, off, w, 0, name, cmds, ncmds);
}

/* Sorted, de-duplicated boundary list with +-1 neighbours, clipped to [0, len). */
typedef struct hd_cuts {
    size_t *at;
    size_t n, cap;
} hd_cuts;

static inline void hd_cut_add(hd_cuts *c, uint64_t at)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->at = realloc(c->at, c->cap * sizeof *c->at);
    }
    c->at[c->n++] = (size_t)at;
}

static inline int hd_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Finish: add neighbours (1: the next byte, 2: both sides; natively
 * only), keep positions < len, sort, unique. */
static inline void hd_cuts_done(hd_cuts *c, size_t len, int neighbours)
{
    size_t n0 = c->n;
    for (size_t i = 0; neighbours && hd_thorough() && i < n0; i++) {
        hd_cut_add(c, c->at[i] + 1);
        if (c->at[i] && neighbours > 1) hd_cut_add(c, c->at[i] - 1);
    }
    qsort(c->at, c->n, sizeof *c->at, hd_cmp);
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->at[i] < len && (k == 0 || c->at[k - 1] != c->at[i])) c->at[k++] = c->at[i];
    c->n = k;
}

/* Finish the cuts and run `cmds` on `buf` cut at each position (written as
 * `name`); frees the positions. */
static inline void hd_cuts_run(hd_cuts *c, size_t len, int neighbours, const char *label,
                               const uint8_t *buf, const char *name, const hd_cmd *cmds,
                               size_t ncmds)
{
    hd_cuts_done(c, len, neighbours);
    for (size_t i = 0; i < c->n; i++) hd_truncated(label, buf, c->at[i], name, cmds, ncmds);
    free(c->at);
    c->at = NULL;
    c->n = c->cap = 0;
}

static inline void hd_summary(const char *what)
{
    print_message("%s: %zu corrupted files, %zu CLI runs, %zu failures\n", what, hd_cases, hd_runs,
                  hd_failures);
    size_t failures = hd_failures;
    hd_cases = hd_runs = hd_failures = 0;
    if (failures) fail_msg("%zu failures (listed above, at most $HD_MAX_REPORTS or 40)", failures);
}

/* Run a CLI command that must succeed (making the helper files). */
static inline void hd_make(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void hd_make(const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    npk_run r = npk_cli("%s", line);
    if (r.status != 0) fail_msg("npukit %s: exit %d: %s", line, r.status, r.err);
    npk_run_free(&r);
}

#endif
