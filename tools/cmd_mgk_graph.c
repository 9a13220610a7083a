/* npukit mgk graph / export: the network of an MGK model as text, JSON, DOT
 * or a PNG rendered by Graphviz's `dot`, and as ONNX. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_mgk.h"
#include "npukit/mgk_graph.h"

extern char **environ;

static const char *qsrc_name(npk_mgk_qsrc s)
{
    switch (s) {
    case NPK_MGK_Q_FILE: return "file";
    case NPK_MGK_Q_DERIVED: return "derived";
    case NPK_MGK_Q_CODE: return "code units";
    default: return "float";
    }
}

static void print_shape(FILE *f, const int32_t *s, uint32_t n)
{
    fputc('[', f);
    for (uint32_t i = 0; i < n; i++) fprintf(f, "%s%d", i ? "," : "", s[i]);
    fputc(']', f);
}

/* A string from the file, printable ASCII only (for text and DOT). */
static void print_str(FILE *f, npk_mgk_str s, bool dot)
{
    for (uint32_t i = 0; i < s.len && i < 200; i++) {
        unsigned char ch = (unsigned char)s.s[i];
        if (ch < 0x20 || ch >= 0x7F ||
            (dot && (ch == '"' || ch == '\\' || ch == '<' || ch == '>' || ch == '{' || ch == '}' ||
                     ch == '|')))
            fprintf(f, "\\\\x%02x", ch);
        else
            fputc(ch, f);
    }
}

static void print_quant(FILE *f, const npk_mgk_gtensor *t)
{
    if (t->is_float) {
        fprintf(f, "float");
        return;
    }
    if (t->has_zp)
        fprintf(f, "zp %d", t->zp);
    else
        fprintf(f, "zp ?");
    fprintf(f, " scale %.6g (%s)", t->scale, qsrc_name(t->scale_src));
}

static void print_tensor(FILE *f, const npk_mgk_gtensor *t)
{
    fprintf(f, "t%-3d ", t->id);
    print_str(f, t->name, false);
    fputc(' ', f);
    print_str(f, t->format, false);
    fputc(' ', f);
    print_str(f, t->type, false);
    fputc(' ', f);
    if (t->rank)
        print_shape(f, t->shape, t->rank);
    else
        fputs("[?]", f);
    if (t->lrank && (t->lrank != t->rank || memcmp(t->lshape, t->shape, t->rank * 4))) {
        fputs(" logical ", f);
        print_shape(f, t->lshape, t->lrank);
    }
    fputc(' ', f);
    print_quant(f, t);
    fputc('\n', f);
}

static void print_text(const char *path, const npk_mgk_model *m, const npk_mgk_graph *g)
{
    size_t nin = 0, nout = 0;
    for (size_t i = 0; i < g->ntensors; i++) {
        nin += g->tensors[i].graph_input;
        nout += g->tensors[i].graph_output;
    }
    printf("%s: %zu nodes, %zu tensors (%zu inputs, %zu outputs)\ninputs:\n", path, g->nnodes,
           g->ntensors, nin, nout);
    for (size_t i = 0; i < g->ntensors; i++)
        if (g->tensors[i].graph_input) {
            printf("  ");
            print_tensor(stdout, &g->tensors[i]);
        }
    printf("nodes (topological order):\n");
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        const npk_mgk_record *r = &m->records[nd->record];
        printf("  #%-3zu %-13s %-10s %s%s\n", nd->record, npk_mgk_kind_name(nd->kind), nd->op,
               nd->established ? "" : "NOT ESTABLISHED: ", nd->note);
        (void)r;
        for (uint32_t k = 0; k < nd->nin; k++)
            if (nd->in[k] >= 0) printf("       in  t%d\n", g->tensors[nd->in[k]].id);
        for (uint32_t k = 0; k < nd->nout; k++)
            if (nd->out[k] >= 0) {
                printf("       out ");
                print_tensor(stdout, &g->tensors[nd->out[k]]);
            }
    }
    printf("outputs:\n");
    for (size_t i = 0; i < g->ntensors; i++)
        if (g->tensors[i].graph_output) {
            printf("  ");
            print_tensor(stdout, &g->tensors[i]);
        }
    for (size_t i = 0; i < g->nwarnings; i++)
        printf("warning: offset 0x%llx: %s\n", (unsigned long long)g->warnings[i].offset,
               g->warnings[i].msg);
}

/* ---- DOT ---- */

static void dot_edge_label(FILE *f, const npk_mgk_gtensor *t)
{
    fputs(" [label=\"", f);
    if (t->rank) print_shape(f, t->shape, t->rank);
    fputc(' ', f);
    print_str(f, t->format, true);
    fputc(' ', f);
    print_str(f, t->type, true);
    fputs("\\n", f);
    print_quant(f, t);
    fputs("\"];\n", f);
}

static void write_dot(FILE *f, const npk_mgk_model *m, const npk_mgk_graph *g)
{
    fputs("digraph mgk {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", "
          "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
          f);
    for (size_t i = 0; i < g->ntensors; i++) {
        const npk_mgk_gtensor *t = &g->tensors[i];
        if (!t->graph_input && !t->graph_output) continue;
        fprintf(f, "  %s%d [shape=ellipse, style=filled, fillcolor=\"%s\", label=\"",
                t->graph_input ? "in" : "out", t->id, t->graph_input ? "#d8ecff" : "#dff5d8");
        print_str(f, t->name.len ? t->name : t->format, true);
        fputs("\\n", f);
        if (t->rank) print_shape(f, t->shape, t->rank);
        fputs("\"];\n", f);
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        bool heavy = nd->kind == NPK_MGK_K_CONV || nd->kind == NPK_MGK_K_GRU;
        fprintf(f, "  r%zu [label=\"#%zu %s\\n%s\\n", nd->record, nd->record,
                npk_mgk_kind_name(nd->kind), nd->op);
        for (const char *p = nd->note; *p; p++)
            if (*p == '"' || *p == '\\')
                fprintf(f, "\\%c", *p);
            else if ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7F)
                fputc(*p, f);
        fprintf(f, "\"%s%s];\n", heavy ? ", style=filled, fillcolor=\"#ffe9c7\"" : "",
                nd->established ? "" : ", color=red");
        (void)m;
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        for (uint32_t k = 0; k < nd->nin; k++) {
            if (nd->in[k] < 0) continue;
            const npk_mgk_gtensor *t = &g->tensors[nd->in[k]];
            if (t->producer >= 0)
                fprintf(f, "  r%d -> r%zu", t->producer, nd->record);
            else
                fprintf(f, "  in%d -> r%zu", t->id, nd->record);
            dot_edge_label(f, t);
        }
        for (uint32_t k = 0; k < nd->nout; k++) {
            if (nd->out[k] < 0 || !g->tensors[nd->out[k]].graph_output) continue;
            const npk_mgk_gtensor *t = &g->tensors[nd->out[k]];
            fprintf(f, "  r%zu -> out%d", nd->record, t->id);
            dot_edge_label(f, t);
        }
    }
    fputs("}\n", f);
}

/* Render DOT text with Graphviz (`dot -Tpng`) into OUT atomically. */
static int render_png(const char *dottext, size_t len, const char *out)
{
    char tmpl[] = "/tmp/npukit-dot-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return cli_fail("--png: cannot create a temporary file: %s", strerror(errno));
    int token = npk_temp_register(tmpl, false); /* removed on SIGINT/SIGTERM too */
    bool ok = write(fd, dottext, len) == (ssize_t)len;
    close(fd);
    int pfd[2] = {-1, -1};
    if (!ok || pipe(pfd)) {
        unlink(tmpl);
        npk_temp_unregister(token);
        return cli_fail("--png: cannot write the DOT text");
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    char *argv[] = {"dot", "-Tpng", tmpl, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc) {
        close(pfd[0]);
        unlink(tmpl);
        npk_temp_unregister(token);
        return cli_fail("--png needs Graphviz's `dot` program (Debian package graphviz): %s",
                        strerror(rc));
    }
    npk_error err = {0};
    npk_out *o = NULL;
    npk_status st = npk_out_open(&o, out, &err);
    char buf[65536];
    ssize_t n;
    size_t total = 0;
    while ((n = read(pfd[0], buf, sizeof buf)) > 0)
        if (!st) {
            st = npk_out_write(o, buf, (size_t)n, &err);
            total += (size_t)n;
        }
    close(pfd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    unlink(tmpl);
    npk_temp_unregister(token);
    if (st) {
        if (o) npk_out_abort(o);
        return cli_error(out, &err);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && total == 0) {
        /* Where posix_spawnp cannot report a failed exec (qemu-user, some
           libcs), the child exits 127, as the shell does for "not found". */
        npk_out_abort(o);
        return cli_fail("--png needs Graphviz's `dot` program (Debian package graphviz): "
                        "not found");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || total == 0) {
        npk_out_abort(o);
        return cli_fail("--png: dot failed (status %d)", status);
    }
    if (npk_out_commit(o, &err)) return cli_error(out, &err);
    return CLI_OK;
}

#ifdef NPK_HAVE_CJSON
static cJSON *jshape(const int32_t *s, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(s[i]));
    return a;
}

static void print_json(const npk_mgk_model *m, const npk_mgk_graph *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *ns = cJSON_AddArrayToObject(o, "nodes");
    for (size_t i = 0; i < g->nnodes; i++) {
        const npk_mgk_gnode *nd = &g->nodes[i];
        const npk_mgk_record *r = &m->records[nd->record];
        cJSON *n = cJSON_CreateObject();
        cJSON_AddNumberToObject(n, "record", (double)nd->record);
        cli_json_u64(n, "offset", r->offset);
        cJSON_AddStringToObject(n, "kind", npk_mgk_kind_name(nd->kind));
        cJSON_AddItemToObject(n, "kernel", mgk_json_str(r->kernel));
        cJSON_AddItemToObject(n, "name", mgk_json_str(r->name));
        cJSON_AddStringToObject(n, "op", nd->op);
        cJSON_AddBoolToObject(n, "established", nd->established);
        cJSON_AddStringToObject(n, "note", nd->note);
        cJSON *in = cJSON_AddArrayToObject(n, "inputs"),
              *out = cJSON_AddArrayToObject(n, "outputs");
        for (uint32_t k = 0; k < nd->nin; k++)
            if (nd->in[k] >= 0)
                cJSON_AddItemToArray(in, cJSON_CreateNumber(g->tensors[nd->in[k]].id));
        for (uint32_t k = 0; k < nd->nout; k++)
            if (nd->out[k] >= 0)
                cJSON_AddItemToArray(out, cJSON_CreateNumber(g->tensors[nd->out[k]].id));
        cJSON_AddItemToArray(ns, n);
    }
    cJSON *ts = cJSON_AddArrayToObject(o, "tensors");
    cJSON *gi = cJSON_AddArrayToObject(o, "inputs"), *go = cJSON_AddArrayToObject(o, "outputs");
    for (size_t i = 0; i < g->ntensors; i++) {
        const npk_mgk_gtensor *t = &g->tensors[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "id", t->id);
        cJSON_AddItemToObject(x, "name", mgk_json_str(t->name));
        cJSON_AddItemToObject(x, "format", mgk_json_str(t->format));
        cJSON_AddItemToObject(x, "type", mgk_json_str(t->type));
        cJSON_AddItemToObject(x, "shape", jshape(t->shape, t->rank));
        cJSON_AddItemToObject(x, "logical_shape", jshape(t->lshape, t->lrank));
        cJSON_AddNumberToObject(x, "producer", t->producer);
        cJSON_AddNumberToObject(x, "consumers", t->nconsumers);
        if (!t->is_float) {
            if (t->has_zp) cJSON_AddNumberToObject(x, "zero_point", t->zp);
            cJSON_AddNumberToObject(x, "scale", t->scale);
        }
        cJSON_AddStringToObject(x, "scale_source", qsrc_name(t->scale_src));
        cJSON_AddItemToArray(ts, x);
        if (t->graph_input) cJSON_AddItemToArray(gi, cJSON_CreateNumber(t->id));
        if (t->graph_output) cJSON_AddItemToArray(go, cJSON_CreateNumber(t->id));
    }
    cJSON *ws = cJSON_AddArrayToObject(o, "warnings");
    for (size_t i = 0; i < g->nwarnings; i++) {
        cJSON *w = cJSON_CreateObject();
        cli_json_u64(w, "offset", g->warnings[i].offset);
        cJSON_AddStringToObject(w, "message", g->warnings[i].msg);
        cJSON_AddItemToArray(ws, w);
    }
    cli_print_json(o, false);
}
#endif

/* Map, parse and build the graph; on failure print the error. */
static int load_graph(const char *path, npk_mapped *map, npk_mgk_model *m, npk_mgk_graph *g)
{
    npk_error err = {0};
    if (npk_map_file(path, map, &err)) return cli_error(path, &err);
    if (npk_mgk_parse(map->data, map->size, m, &err)) {
        npk_unmap_file(map);
        return cli_error(path, &err);
    }
    if (g && npk_mgk_graph_build(m, g, &err)) {
        npk_mgk_free(m);
        npk_unmap_file(map);
        return cli_error(path, &err);
    }
    return CLI_OK;
}

int mgk_cmd_graph(int argc, char **argv)
{
    bool json = false, dot = false;
    const char *png = NULL;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"dot", no_argument, NULL, 'd'},
                                         {"png", required_argument, NULL, 'p'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'd')
            dot = true;
        else if (c == 'p')
            png = optarg;
        else
            return cli_bad_option("mgk graph", argv);
    }
    if (optind + 1 != argc) return cli_usage("mgk graph", "expected one FILE");
    if (json && dot) return cli_usage("mgk graph", "--json and --dot exclude each other");
    if (json && !cli_json_available()) return cli_no_json();
    const char *path = argv[optind];
    npk_mapped map;
    npk_mgk_model m;
    npk_mgk_graph g;
    int rc = load_graph(path, &map, &m, &g);
    if (rc) return rc;
    char *text = NULL;
    size_t len = 0;
    if (png) {
        FILE *f = open_memstream(&text, &len);
        if (!f) {
            rc = cli_fail("out of memory");
        } else {
            write_dot(f, &m, &g);
            fclose(f);
            rc = render_png(text, len, png);
        }
        free(text);
    }
    if (rc == CLI_OK && (!png || json || dot)) {
#ifdef NPK_HAVE_CJSON
        if (json)
            print_json(&m, &g);
        else
#endif
            if (dot)
            write_dot(stdout, &m, &g);
        else
            print_text(path, &m, &g);
    }
    npk_mgk_graph_free(&g);
    npk_mgk_free(&m);
    npk_unmap_file(&map);
    return rc;
}

int mgk_cmd_export(int argc, char **argv)
{
    const char *out = NULL;
    npk_mgk_onnx_opts o = {false, false};
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"qdq", no_argument, NULL, 'q'},
                                         {"allow-unknown", no_argument, NULL, 'u'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'q')
            o.qdq = true;
        else if (c == 'u')
            o.allow_unknown = true;
        else
            return cli_bad_option("mgk export", argv);
    }
    if (!out) return cli_usage("mgk export", "missing -o OUT.onnx");
    if (optind + 1 != argc) return cli_usage("mgk export", "expected one FILE");
    if (!npk_mgk_onnx_available())
        return cli_fail("mgk export: this build has no ONNX support (needs libprotobuf-c, "
                        "protobuf-c-compiler and the ONNX schema of python3-onnx at build time)");
    const char *path = argv[optind];
    npk_mapped map;
    npk_mgk_model m;
    int rc = load_graph(path, &map, &m, NULL);
    if (rc) return rc;
    npk_error err = {0};
    uint8_t *buf = NULL;
    size_t len = 0;
    if (npk_mgk_export_onnx(&m, &o, &buf, &len, &err))
        rc = cli_error(path, &err);
    else if (npk_write_file(out, buf, len, &err))
        rc = cli_error(out, &err);
    free(buf);
    npk_mgk_free(&m);
    npk_unmap_file(&map);
    return rc;
}
