#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_error(const char *file, const npk_error *err)
{
    fputs("npukit: ", stderr);
    if (file) fprintf(stderr, "%s: ", file);
    if (err && err->has_offset) fprintf(stderr, "offset 0x%" PRIx64 ": ", err->offset);
    fprintf(stderr, "%s\n",
            err && err->msg[0] ? err->msg : npk_status_name(err ? err->status : NPK_OK));
    return CLI_FAIL;
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

/* Length of the valid UTF-8 sequence at s (1..4), 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
    const unsigned c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

char *cli_utf8_dup(const char *s, bool printable)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)p);
    char *out = malloc(3 * len + 1); /* an invalid byte becomes 3 bytes (U+FFFD) */
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_len(p + i);
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

cJSON *cli_json_str(cJSON *obj, const char *key, const char *s)
{
    char *u = cli_utf8_dup(s, false);
    cJSON *r = cJSON_AddStringToObject(obj, key, u ? u : "");
    free(u);
    return r;
}

void cli_print_json(cJSON *j, bool compact)
{
    char *s = compact ? cJSON_PrintUnformatted(j) : cJSON_Print(j);
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
