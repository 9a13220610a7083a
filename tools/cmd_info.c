/* npukit info FILE... [--json]: detect each file's format from its bytes. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "commands.h"

void cmd_info_help(FILE *out)
{
    size_t n;
    const npk_format *f = npk_formats(&n);
    fprintf(out, "usage: npukit info FILE... [--json]\n\n"
                 "Detects the format of each FILE from its bytes (never its name) and prints a\n"
                 "short summary. --json prints one JSON object per file and line, with at least\n"
                 "\"path\", \"format\" and \"size\".\n\nformats:\n");
    for (size_t i = 0; i < n; i++) fprintf(out, "  %-16s %s\n", f[i].name, f[i].description);
}

static void print_text(const char *path, size_t size, bool partial, const npk_format *f,
                       const npk_summary *s)
{
    printf("%s: %s", path, f->name);
    if (s->title[0]) printf(" - %s%s", s->title, partial ? " (in the first bytes)" : "");
    if (partial)
        printf("\n  size: more than %zu bytes (a stream: only its first %zu bytes were read)\n",
               size, size);
    else
        printf("\n  size: %zu bytes\n", size);
    for (int i = 0; i < s->count; i++) {
        const npk_kv *kv = &s->kv[i];
        printf("  %s: ", kv->key);
        switch (kv->type) {
        case NPK_KV_STR: printf("%s", kv->s); break;
        case NPK_KV_INT: printf("%lld", (long long)kv->v.i); break;
        case NPK_KV_UINT: printf("%llu", (unsigned long long)kv->v.u); break;
        case NPK_KV_HEX: printf("0x%llx", (unsigned long long)kv->v.u); break;
        case NPK_KV_FLOAT: printf("%.9g", kv->v.f); break;
        case NPK_KV_BOOL: printf("%s", kv->v.b ? "yes" : "no"); break;
        }
        printf("\n");
    }
}

static int info_one(const char *path, bool json)
{
    npk_error err = {0};
    npk_mapped m;
    /* A regular file is mapped (pages read on demand); a stream such as a
     * pipe or /dev/zero is read only as far as needed to recognise it. */
    if (npk_map_prefix(path, &m, NPK_DETECT_PREFIX, &err)) return cli_error(path, &err);
    int rc = CLI_OK;
    const npk_format *f = npk_detect(m.data, m.size);
    bool partial = !m.complete;
    if (partial && f && !npk_format_prefix_ok(f)) {
        /* A format that needs the whole file: read the rest (bounded by the
         * input limit). */
        if (npk_map_rest(&m, &err)) {
            npk_unmap_file(&m);
            return cli_error(path, &err);
        }
        f = npk_detect(m.data, m.size);
        partial = false;
    }
    npk_summary s;
    memset(&s, 0, sizeof s);
    if (!f) {
        if (partial)
            npk_fail_at(&err, NPK_E_FORMAT, 0,
                        "unrecognised format (no format npukit knows starts like the first %zu "
                        "bytes of this stream; the rest was not read)",
                        m.size);
        else
            npk_fail_at(&err, NPK_E_FORMAT, 0, "unrecognised format");
        rc = CLI_FAIL;
    } else if (f->summarize && f->summarize(m.data, m.size, &s, &err)) {
        rc = CLI_FAIL; /* the error line comes after any summary */
    }
    bool described = rc == CLI_OK || s.malformed;
#ifdef NPK_HAVE_CJSON
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddStringToObject(o, "format", f ? f->name : "unknown");
        cli_json_u64(o, "size", m.size);
        if (partial) cJSON_AddBoolToObject(o, "size_is_prefix", true);
        if (f) cJSON_AddStringToObject(o, "description", f->description);
        if (described) {
            if (s.title[0]) cJSON_AddStringToObject(o, "summary", s.title);
            cJSON_AddItemToObject(o, "details", cli_summary_json(&s));
        }
        if (rc != CLI_OK) {
            cJSON_AddStringToObject(o, "error", err.msg);
            if (err.has_offset) cli_json_u64(o, "error_offset", err.offset);
        }
        cli_print_json(o, true);
    } else
#endif
        if (described)
        print_text(path, m.size, partial, f, &s);
    (void)json;
    if (rc != CLI_OK) {
        fflush(stdout);
        cli_error(path, &err);
    }
    npk_unmap_file(&m);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    bool json = false;
    if (cli_args_json("info", argc, argv, &json)) return CLI_FAIL;
    if (optind >= argc) return cli_usage("info", "no FILE given");
    if (json && !cli_json_available()) return cli_no_json();
    int rc = CLI_OK;
    for (int i = optind; i < argc; i++) {
        int r = info_one(argv[i], json);
        if (r > rc) rc = r;
    }
    return rc;
}
