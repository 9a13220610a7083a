#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- signals: no temporary file survives, a truncated input is an error ---- */

static void on_terminate(int sig)
{
    npk_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns: the usual exit status */
}

/* Async-signal-safe output helpers (no stdio in a handler). */
static void put_str(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void put_hex(uint64_t v)
{
    char b[17];
    int i = 16;
    b[i] = 0;
    do {
        b[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    put_str(b + i);
}

/* SIGBUS on a mapped input: another program cut the file short while it was
 * being read. One error line, temporaries removed, exit 2. */
static void on_bus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const char *path;
    uint64_t off;
    if (!si || !npk_mapped_fault(si->si_addr, &path, &off)) {
        npk_remove_temporaries();
        signal(sig, SIG_DFL);
        raise(sig); /* not an input mapping: a genuine fault */
        return;
    }
    put_str("npukit: ");
    put_str(path);
    put_str(": offset 0x");
    put_hex(off);
    put_str(": the file was cut short while it was being read (changed by another program?)\n");
    npk_remove_temporaries();
    _exit(CLI_FAIL);
}

void cli_install_signal_handlers(void)
{
    static const int terminate[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof terminate / sizeof *terminate; i++)
        sigaddset(&sa.sa_mask, terminate[i]); /* one cleanup at a time */
    for (size_t i = 0; i < sizeof terminate / sizeof *terminate; i++) {
        struct sigaction old;
        /* A signal ignored by whoever started us (nohup) stays ignored. */
        if (sigaction(terminate[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sa.sa_handler = on_terminate;
        sigaction(terminate[i], &sa, NULL);
    }
    struct sigaction bus;
    memset(&bus, 0, sizeof bus);
    sigemptyset(&bus.sa_mask);
    bus.sa_sigaction = on_bus;
    bus.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &bus, NULL);
}

/* Is `-o -` (or --output -) among the arguments? Then standard output
 * carries the data, and everything the command would print there goes to
 * standard error instead. */
void cli_route_stdout(int argc, char **argv)
{
    bool data = false;
    for (int i = 1; i < argc && !data; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) break;
        if (!strcmp(a, "-o-") || !strcmp(a, "--output=-"))
            data = true;
        else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc)
            data = !strcmp(argv[++i], "-");
    }
    if (!data) return;
    fflush(stdout);
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return; /* npk_out then writes fd 1 */
    npk_set_stdout_fd(fd);
}

int cli_error(const char *file, const npk_error *err)
{
    fputs("npukit: ", stderr);
    if (file) fprintf(stderr, "%s: ", file);
    if (err && err->has_offset) fprintf(stderr, "offset 0x%" PRIx64 ": ", err->offset);
    fprintf(stderr, "%s\n",
            err && err->msg[0] ? err->msg : npk_status_name(err ? err->status : NPK_OK));
    return CLI_FAIL;
}

int cli_tensor_fail(const char *file, const npk_tensor *t, const char *fmt, ...)
{
    npk_error err = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.msg, sizeof err.msg, fmt, ap);
    va_end(ap);
    err.status = NPK_E_ARG;
    err.has_offset = t && t->src_shape_offset;
    err.offset = t ? t->src_shape_offset : 0;
    return cli_error(file, &err);
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("npukit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("npukit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'npukit %s --help')\n", cmd);
    return CLI_FAIL;
}

void cli_getopt_reset(void)
{
    optind = 1;
    opterr = 0;
}

int cli_bad_option(const char *cmd, char **argv)
{
    const char *arg = argv[optind - 1];
    if (optopt && optopt != '?' && arg && arg[0] == '-' && arg[1] != '-')
        return cli_usage(cmd, "invalid option '-%c' or missing argument", optopt);
    return cli_usage(cmd, "invalid option '%s' or missing argument", arg ? arg : "?");
}

bool cli_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

bool cli_parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return false;
    errno = 0;
    char *end;
    unsigned long long r = strtoull(s, &end, 0);
    if (errno || *end) return false;
    *v = r;
    return true;
}

bool cli_parse_i64(const char *s, int64_t *v)
{
    if (!s || !*s || *s == ' ') return false;
    errno = 0;
    char *end;
    long long r = strtoll(s, &end, 0);
    if (errno || *end) return false;
    *v = r;
    return true;
}

bool cli_parse_double(const char *s, double *v)
{
    if (!s || !*s || *s == ' ') return false;
    errno = 0;
    char *end;
    double r = strtod(s, &end);
    if (errno || *end || !isfinite(r)) return false;
    *v = r;
    return true;
}

void cli_group_help(FILE *out, const char *group, const char *about, const cli_subcommand *subs,
                    int nsubs)
{
    fprintf(out, "usage: npukit %s <command> [options]\n\n%s\n\ncommands:\n", group, about);
    for (int i = 0; i < nsubs; i++)
        fprintf(out, "  npukit %s %s %s\n      %s\n", group, subs[i].name, subs[i].usage,
                subs[i].summary);
}

int cli_dispatch(const char *group, const cli_subcommand *subs, int nsubs, int argc, char **argv)
{
    const cli_command *cmd = cli_find_command(group);
    if (argc < 2) {
        if (cmd && cmd->help) cmd->help(stderr);
        return CLI_FAIL;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        if (argc >= 3 && strcmp(argv[1], "help") == 0) {
            for (int i = 0; i < nsubs; i++)
                if (strcmp(subs[i].name, argv[2]) == 0) {
                    printf("usage: npukit %s %s %s\n\n%s\n", group, subs[i].name, subs[i].usage,
                           subs[i].summary);
                    return CLI_OK;
                }
        }
        if (cmd && cmd->help) cmd->help(stdout);
        return CLI_OK;
    }
    for (int i = 0; i < nsubs; i++) {
        if (strcmp(subs[i].name, argv[1]) != 0) continue;
        for (int a = 2; a < argc; a++) {
            if (strcmp(argv[a], "--") == 0) break;
            if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
                printf("usage: npukit %s %s %s\n\n%s\n", group, subs[i].name, subs[i].usage,
                       subs[i].summary);
                return CLI_OK;
            }
        }
        return subs[i].run(argc - 1, argv + 1);
    }
    return cli_usage(group, "%s: unknown command '%s'", group, argv[1]);
}

char *cli_utf8_dup(const char *s, bool printable)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)p);
    char *out = malloc(3 * len + 1); /* an invalid byte becomes 3 bytes (U+FFFD) */
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        size_t n = npk_utf8_seq(p + i, len - i); /* the library's UTF-8 rules */
        if (n == 0) {
            memcpy(out + k, "\xef\xbf\xbd", 3);
            k += 3;
            i++;
        } else if (printable && n == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
            out[k++] = '?';
            i++;
        } else {
            memcpy(out + k, p + i, n);
            k += n;
            i += n;
        }
    }
    out[k] = 0;
    return out;
}

#ifdef NPK_HAVE_CJSON
bool cli_json_available(void)
{
    return true;
}

/* Replace every string (values and keys) that is not well-formed UTF-8 by
 * its repaired copy (invalid bytes -> U+FFFD); returns the bytes replaced. */
static size_t json_fix_utf8(cJSON *j)
{
    size_t total = 0;
    for (; j; j = j->next) {
        size_t bad;
        char *fixed;
        if (cJSON_IsString(j) && j->valuestring &&
            !npk_utf8_valid(j->valuestring, strlen(j->valuestring)) &&
            (fixed = npk_utf8_sanitize(j->valuestring, strlen(j->valuestring), &bad))) {
            cJSON_free(j->valuestring);
            j->valuestring = cJSON_malloc(strlen(fixed) + 1);
            if (j->valuestring) strcpy(j->valuestring, fixed);
            free(fixed);
            total += bad;
        }
        if (j->string && !(j->type & cJSON_StringIsConst) &&
            !npk_utf8_valid(j->string, strlen(j->string)) &&
            (fixed = npk_utf8_sanitize(j->string, strlen(j->string), &bad))) {
            cJSON_free(j->string);
            j->string = cJSON_malloc(strlen(fixed) + 1);
            if (j->string) strcpy(j->string, fixed);
            free(fixed);
            total += bad;
        }
        total += json_fix_utf8(j->child);
    }
    return total;
}

char *cli_json_text(cJSON *j, bool compact)
{
    size_t bad = json_fix_utf8(j);
    if (bad)
        fprintf(stderr,
                "npukit: warning: %zu byte%s in strings of the input %s not UTF-8: replaced "
                "by U+FFFD in the JSON output\n",
                bad, bad == 1 ? "" : "s", bad == 1 ? "is" : "are");
    return compact ? cJSON_PrintUnformatted(j) : cJSON_Print(j);
}

/* Added as is: cli_print_json / cli_json_text repair it (and say so) with
 * every other string of the output, in one place. */
cJSON *cli_json_str(cJSON *obj, const char *key, const char *s)
{
    return cJSON_AddStringToObject(obj, key, s ? s : "");
}

void cli_print_json(cJSON *j, bool compact)
{
    char *s = cli_json_text(j, compact);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    }
    cJSON_Delete(j);
}

cJSON *cli_json_u64(cJSON *obj, const char *key, uint64_t v)
{
    if (v <= (1ull << 53)) return cJSON_AddNumberToObject(obj, key, (double)v);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_AddStringToObject(obj, key, buf);
}

cJSON *cli_json_hex(cJSON *obj, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return cJSON_AddStringToObject(obj, key, buf);
}

cJSON *cli_summary_json(const npk_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < s->count; i++) {
        const npk_kv *kv = &s->kv[i];
        switch (kv->type) {
        case NPK_KV_STR: cJSON_AddStringToObject(o, kv->key, kv->s); break;
        case NPK_KV_INT: cJSON_AddNumberToObject(o, kv->key, (double)kv->v.i); break;
        case NPK_KV_UINT: cli_json_u64(o, kv->key, kv->v.u); break;
        case NPK_KV_HEX: cli_json_hex(o, kv->key, kv->v.u); break;
        case NPK_KV_FLOAT: cJSON_AddNumberToObject(o, kv->key, kv->v.f); break;
        case NPK_KV_BOOL: cJSON_AddBoolToObject(o, kv->key, kv->v.b); break;
        }
    }
    return o;
}
#else
bool cli_json_available(void)
{
    return false;
}
#endif

int cli_no_json(void)
{
    return cli_fail("this build has no JSON support (rebuild with libcjson for --json)");
}
