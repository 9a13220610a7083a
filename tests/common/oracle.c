/* Independent TFLite oracles for the tests: see oracle.h. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npk_test.h"
#include "npukit/bind.h"
#include "npukit/flatbuf.h"
#include "npukit/tflite_image.h"
#include "oracle.h"

#ifndef NPK_NODE
#define NPK_NODE ""
#endif
#ifndef NPK_LITERT_MODULES
#define NPK_LITERT_MODULES ""
#endif

enum { TFL_OP_DEQUANTIZE = 6 };
/* TFLite schema slots used by npk_oracle_prepare. */
enum { MODEL_SUBGRAPHS = 2, MODEL_SIGNATURE_DEFS = 7 };
enum { SUBGRAPH_TENSORS = 0, SUBGRAPH_INPUTS = 1, SUBGRAPH_OUTPUTS = 2, SUBGRAPH_OPERATORS = 3 };
enum { TENSOR_BUFFER = 2 };

const char *npk_oracle_name(npk_oracle_kind k)
{
    return k == NPK_ORACLE_LITERT ? "LiteRT.js" : "Arm NN CpuRef";
}

static const char *node_path(void)
{
    const char *e = getenv("NPK_NODE");
    return e && *e ? e : NPK_NODE;
}

static const char *modules_dir(void)
{
    const char *e = getenv("NPK_LITERT_MODULES");
    return e && *e ? e : NPK_LITERT_MODULES;
}

static void last_line(const char *text, char *out, size_t len)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) n--;
    size_t s = n;
    while (s && text[s - 1] != '\n') s--;
    snprintf(out, len, "%.*s", (int)(n - s), text + s);
}

bool npk_oracle_available(npk_oracle_kind k, char *why, size_t why_len)
{
    static int cached[NPK_ORACLE_COUNT] = {-1, -1};
    static char reason[NPK_ORACLE_COUNT][1024];
    if (cached[k] < 0) {
        cached[k] = 0;
#ifdef NPK_TEST_EMULATED
        snprintf(reason[k], sizeof reason[k], "oracles run in host builds only (not under qemu)");
#else
        if (k == NPK_ORACLE_LITERT) {
            char pkg[1024];
            snprintf(pkg, sizeof pkg, "%s/@litertjs/core/package.json", modules_dir());
            if (!*node_path() || access(node_path(), X_OK) != 0)
                snprintf(reason[k], sizeof reason[k], "node not found (Debian nodejs)");
            else if (access(pkg, R_OK) != 0)
                snprintf(reason[k], sizeof reason[k],
                         "@litertjs/core is not installed in %s (make check runs "
                         "scripts/oracle-deps.sh)",
                         modules_dir());
            else
                cached[k] = 1;
        } else {
            char *argv[] = {(char *)NPK_PYTHON, "-c",
                            "import numpy, pyarmnn; pyarmnn.ITfLiteParser; pyarmnn.BackendId",
                            NULL};
            npk_run r = npk_run_argv(argv);
            if (r.status == 0) {
                cached[k] = 1;
            } else {
                char line[300];
                last_line(r.err, line, sizeof line);
                snprintf(reason[k], sizeof reason[k],
                         "%s cannot load pyarmnn (Debian python3-pyarmnn, libarmnntfliteparser22, "
                         "libarmnn-cpuref-backend22): %s",
                         NPK_PYTHON, line);
            }
            npk_run_free(&r);
        }
#endif
    }
    if (why && why_len) snprintf(why, why_len, "%s", cached[k] ? "" : reason[k]);
    return cached[k] == 1;
}

void npk_oracle_require(npk_oracle_kind k)
{
    char why[512];
    if (npk_oracle_available(k, why, sizeof why)) return;
#ifndef NPK_TEST_EMULATED
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) fail_msg("%s is required under CI: %s", npk_oracle_name(k), why);
#endif
    print_message("[  SKIPPED ] %s: %s\n", npk_oracle_name(k), why);
    skip();
}

/* ---- models for the oracles ---- */

static int failf(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && len) vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Point the vector field slot of table t at a new int32 vector appended to
 * buf (4-byte aligned). */
static size_t append_i32_vector(uint8_t *buf, size_t end, const npk_fb_table *t, int slot,
                                const int32_t *v, uint32_t n)
{
    size_t at = (end + 3) & ~(size_t)3;
    memset(buf + end, 0, at - end);
    npk_st32le(buf + at, n);
    for (uint32_t i = 0; i < n; i++) npk_st32le(buf + at + 4 + 4 * i, (uint32_t)v[i]);
    size_t field = t->pos + npk_fb_field(t, slot);
    npk_st32le(buf + field, (uint32_t)(at - field));
    return at + 4 + 4 * (size_t)n;
}

int npk_oracle_prepare(const uint8_t *model, size_t len, const int32_t *inputs, uint32_t ninputs,
                       const int32_t *outputs, uint32_t noutputs, const char *out_path, char *why,
                       size_t why_len)
{
    npk_tfl_model m;
    npk_error err = {0};
    if (npk_tfl_parse(model, len, &m, &err)) return failf(why, why_len, "model: %s", err.msg);
    size_t cap = len + 16 + 4 * ((size_t)ninputs + noutputs);
    uint8_t *buf = malloc(cap), *keep = NULL, *avail = NULL;
    int32_t *stack = NULL, *producer = NULL;
    int rc = -1;
    memcpy(buf, model, len);
    size_t end = len;
    npk_fb_buf fb;
    npk_fb_table root, sg;
    npk_fb_vec v;
    if (npk_fb_init(&fb, buf, len, 0, &err) || npk_fb_root(&fb, NULL, &root, &err)) {
        failf(why, why_len, "model: %s", err.msg);
        goto done;
    }
    /* Signatures name tensors their own way (LiteRT.js uses those names). */
    if (npk_fb_present(&root, MODEL_SIGNATURE_DEFS)) {
        if (npk_fb_vector(&root, MODEL_SIGNATURE_DEFS, 4, &v, &err)) {
            failf(why, why_len, "signature_defs: %s", err.msg);
            goto done;
        }
        npk_st32le(buf + v.pos - 4, 0);
    }
    if (ninputs || noutputs) {
        const npk_tfl_subgraph *g = &m.subgraphs[0];
        if (npk_fb_vector(&root, MODEL_SUBGRAPHS, 4, &v, &err) ||
            npk_fb_vec_table(&v, 0, &sg, &err)) {
            failf(why, why_len, "subgraph 0: %s", err.msg);
            goto done;
        }
        if (!npk_fb_present(&sg, SUBGRAPH_INPUTS) || !npk_fb_present(&sg, SUBGRAPH_OUTPUTS)) {
            failf(why, why_len, "subgraph 0 has no inputs or outputs field");
            goto done;
        }
        const int32_t *in = ninputs ? inputs : g->inputs;
        uint32_t nin = ninputs ? ninputs : g->ninputs;
        const int32_t *out = noutputs ? outputs : g->outputs;
        uint32_t nout = noutputs ? noutputs : g->noutputs;
        keep = calloc(g->noperators + 1, 1);
        avail = calloc(g->ntensors + 1, 1);
        producer = malloc(sizeof *producer * (g->ntensors + 1));
        stack = malloc(sizeof *stack * (g->ntensors + 1));
        for (uint32_t t = 0; t < g->ntensors; t++) {
            producer[t] = -1;
            const npk_tfl_buffer *b = &m.buffers[g->tensors[t].buffer];
            avail[t] = b->data && b->size > 0; /* a constant */
        }
        for (uint32_t i = 0; i < nin; i++) {
            if (in[i] < 0 || (uint32_t)in[i] >= g->ntensors) {
                failf(why, why_len, "input tensor %d does not exist", in[i]);
                goto done;
            }
            /* A constant given as an input becomes a real one: its tensor
             * table points at buffer 0 (empty), the data comes at run time. */
            const npk_tfl_buffer *b = &m.buffers[g->tensors[in[i]].buffer];
            if (ninputs && b->data && b->size > 0) {
                npk_fb_vec tv;
                npk_fb_table tt;
                if (npk_fb_vector(&sg, SUBGRAPH_TENSORS, 4, &tv, &err) ||
                    npk_fb_vec_table(&tv, (uint32_t)in[i], &tt, &err)) {
                    failf(why, why_len, "tensor %d: %s", in[i], err.msg);
                    goto done;
                }
                size_t f = npk_fb_field(&tt, TENSOR_BUFFER);
                if (!f) {
                    failf(why, why_len, "tensor %d: no buffer field", in[i]);
                    goto done;
                }
                npk_st32le(buf + tt.pos + f, 0);
            }
            avail[in[i]] = 1;
        }
        for (uint32_t o = 0; o < g->noperators; o++)
            for (uint32_t k = 0; k < g->operators[o].noutputs; k++)
                producer[g->operators[o].outputs[k]] = (int32_t)o;
        /* Operators needed for the outputs, walking back to inputs and constants. */
        uint32_t sp = 0;
        uint8_t *seen = calloc(g->ntensors + 1, 1);
        for (uint32_t i = 0; i < nout; i++) {
            if (out[i] < 0 || (uint32_t)out[i] >= g->ntensors) {
                free(seen);
                failf(why, why_len, "output tensor %d does not exist", out[i]);
                goto done;
            }
            if (!seen[out[i]]) seen[out[i]] = 1, stack[sp++] = out[i];
        }
        while (sp) {
            int32_t t = stack[--sp];
            if (avail[t]) continue;
            int32_t p = producer[t];
            if (p < 0) {
                free(seen);
                failf(why, why_len, "tensor %d (%s) is neither an input, a constant nor computed",
                      t, g->tensors[t].name);
                goto done;
            }
            keep[p] = 1;
            for (uint32_t k = 0; k < g->operators[p].ninputs; k++) {
                int32_t x = g->operators[p].inputs[k];
                if (x >= 0 && !seen[x]) seen[x] = 1, stack[sp++] = x;
            }
        }
        free(seen);
        /* Keep those operators in place: element j of the vector takes the
         * table of the j-th kept operator, its offset rebased to its new
         * position (tables lie after the vector, so it stays positive). */
        if (npk_fb_vector(&sg, SUBGRAPH_OPERATORS, 4, &v, &err)) {
            failf(why, why_len, "operators: %s", err.msg);
            goto done;
        }
        uint32_t j = 0;
        for (uint32_t o = 0; o < v.count; o++) {
            if (!keep[o]) continue;
            size_t from = v.pos + 4 * (size_t)o, to = v.pos + 4 * (size_t)j++;
            uint32_t target = (uint32_t)from + npk_ld32le(buf + from);
            npk_st32le(buf + to, target - (uint32_t)to);
        }
        npk_st32le(buf + v.pos - 4, j);
        if (ninputs) end = append_i32_vector(buf, end, &sg, SUBGRAPH_INPUTS, inputs, ninputs);
        if (noutputs) end = append_i32_vector(buf, end, &sg, SUBGRAPH_OUTPUTS, outputs, noutputs);
    }
    if (npk_write_file(out_path, buf, end, &err)) {
        failf(why, why_len, "%s: %s", out_path, err.msg);
        goto done;
    }
    rc = 0;
done:
    free(keep);
    free(avail);
    free(producer);
    free(stack);
    free(buf);
    npk_tfl_free(&m);
    return rc;
}

/* ---- running ---- */

void npk_oracle_sanitize(const char *name, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < len; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out[n++] = ok ? c : '_';
    }
    out[n] = 0;
    if (!n || !strcmp(out, ".") || !strcmp(out, "..")) snprintf(out, len, "_");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[2048];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static void load_outputs(const char *outdir, const char *const *out_names, size_t noutputs,
                         npk_tensor *outs, npk_oracle_result *res);

npk_oracle_status npk_oracle_run(npk_oracle_kind k, const char *model_path,
                                 const npk_tensor *inputs, size_t ninputs,
                                 const char *const *out_names, size_t noutputs, npk_tensor *outs,
                                 npk_oracle_result *res)
{
    static unsigned counter;
    memset(res, 0, sizeof *res);
    memset(outs, 0, sizeof *outs * noutputs);
    char dir[1024], outdir[1100], name[64];
    snprintf(name, sizeof name, "oracle-%u", counter++);
    snprintf(dir, sizeof dir, "%s", npk_tmp(name));
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    npk_error err = {0};
    if (npk_make_dir(dir, &err)) fail_msg("%s", err.msg);

    enum { MAXARG = 64 };
    char *argv[MAXARG + 8], inpaths[MAXARG][1100];
    int n = 0;
    if (k == NPK_ORACLE_LITERT) {
        argv[n++] = (char *)node_path();
        argv[n++] = NPK_SOURCE_DIR "/tests/oracle/litert_run.mjs";
    } else {
        argv[n++] = (char *)NPK_PYTHON;
        argv[n++] = NPK_SOURCE_DIR "/tests/oracle/armnn_run.py";
    }
    argv[n++] = (char *)model_path;
    assert_true(ninputs <= (MAXARG - 8) / 2);
    for (size_t i = 0; i < ninputs; i++) {
        snprintf(inpaths[i], sizeof inpaths[i], "%s/in%zu.npy", dir, i);
        if (npk_npy_save(inpaths[i], &inputs[i], &err)) fail_msg("%s", err.msg);
        argv[n++] = "--input";
        argv[n++] = inpaths[i];
    }
    argv[n++] = "--outdir";
    argv[n++] = outdir;
    if (k == NPK_ORACLE_LITERT) {
        argv[n++] = "--modules";
        argv[n++] = (char *)modules_dir();
    }
    argv[n] = NULL;

    double t0 = now_ms();
    npk_run r = npk_run_argv(argv);
    res->wall_ms = now_ms() - t0;
    res->status = r.status == 0   ? NPK_ORACLE_OK
                  : r.status == 3 ? NPK_ORACLE_CANNOT
                  : r.status == 4 ? NPK_ORACLE_MISSING
                                  : NPK_ORACLE_FAILED;
    if (res->status != NPK_ORACLE_OK) {
        last_line(*r.err ? r.err : r.out, res->why, sizeof res->why);
        if (!*res->why) snprintf(res->why, sizeof res->why, "exit status %d", r.status);
    }
    npk_run_free(&r);

    if (res->status == NPK_ORACLE_OK) load_outputs(outdir, out_names, noutputs, outs, res);
    remove_dir(outdir);
    remove_dir(dir);
    return res->status;
}

/* The outputs a runner wrote into outdir (its manifest says how long a run
 * took); res->status becomes FAILED when one is missing or unreadable. */
static void load_outputs(const char *outdir, const char *const *out_names, size_t noutputs,
                         npk_tensor *outs, npk_oracle_result *res)
{
    npk_error err = {0};
    {
        char path[1400];
        snprintf(path, sizeof path, "%s/manifest.json", outdir);
        size_t mlen;
        char *man = (char *)npk_slurp(path, &mlen);
        const char *ms = man ? strstr(man, "\"median_ms\":") : NULL;
        res->run_ms = ms ? strtod(ms + 12, NULL) : 0;
        free(man);
        /* Same names as the runners: sanitized, cut to 120 bytes + ".<index>"
         * when longer, ".<index>" on a clash. */
        char(*files)[300] = calloc(noutputs ? noutputs : 1, sizeof *files);
        for (size_t i = 0; i < noutputs && res->status == NPK_ORACLE_OK; i++) {
            char base[256];
            npk_oracle_sanitize(out_names[i], base, sizeof base);
            if (strlen(base) > 120) /* long fused names: cut, made unique by the index */
                snprintf(base + 120, sizeof base - 120, ".%u", (unsigned)(i & 0xffff));
            snprintf(files[i], sizeof files[i], "%s", base);
            for (size_t j = 0; j < i; j++)
                if (!strcmp(files[i], files[j])) {
                    snprintf(files[i], sizeof files[i], "%.255s.%u", base, (unsigned)(i & 0xffff));
                    break;
                }
            snprintf(path, sizeof path, "%s/%s.npy", outdir, files[i]);
            npk_error_clear(&err);
            if (npk_npy_load(path, &outs[i], &err)) {
                res->status = NPK_ORACLE_FAILED;
                snprintf(res->why, sizeof res->why, "output %s: %s", out_names[i], err.msg);
            }
        }
        free(files);
        if (res->status != NPK_ORACLE_OK)
            for (size_t i = 0; i < noutputs; i++) npk_tensor_free(&outs[i]);
    }
}

/* A JSON string of s (paths: quotes, backslashes and control bytes escaped). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void npk_oracle_run_jobs(npk_oracle_kind k, npk_oracle_job *jobs, size_t njobs)
{
    static unsigned counter;
    if (!njobs) return;
    char dir[1024], name[64], list[1100];
    snprintf(name, sizeof name, "oracle-jobs-%u", counter++);
    snprintf(dir, sizeof dir, "%s", npk_tmp(name));
    snprintf(list, sizeof list, "%s/jobs.txt", dir);
    npk_error err = {0};
    if (npk_make_dir(dir, &err)) fail_msg("%s", err.msg);
    FILE *f = fopen(list, "w");
    if (!f) fail_msg("%s: cannot write", list);
    for (size_t j = 0; j < njobs; j++) {
        npk_oracle_job *jb = &jobs[j];
        memset(&jb->res, 0, sizeof jb->res);
        memset(jb->outs, 0, sizeof *jb->outs * jb->noutputs);
        char outdir[1200];
        snprintf(outdir, sizeof outdir, "%s/j%zu", dir, j);
        fputc('[', f);
        json_str(f, jb->model_path);
        for (size_t i = 0; i < jb->ninputs; i++) {
            fputs(",\"--input\",", f);
            json_str(f, jb->inputs[i]);
        }
        fputs(",\"--outdir\",", f);
        json_str(f, outdir);
        fputs("]\n", f);
    }
    if (fclose(f)) fail_msg("%s: cannot write", list);

    char *argv[8];
    int n = 0;
    if (k == NPK_ORACLE_LITERT) {
        argv[n++] = (char *)node_path();
        argv[n++] = NPK_SOURCE_DIR "/tests/oracle/litert_run.mjs";
    } else {
        argv[n++] = (char *)NPK_PYTHON;
        argv[n++] = NPK_SOURCE_DIR "/tests/oracle/armnn_run.py";
    }
    argv[n++] = "--jobs";
    argv[n++] = list;
    if (k == NPK_ORACLE_LITERT) {
        argv[n++] = "--modules";
        argv[n++] = (char *)modules_dir();
    }
    argv[n] = NULL;
    double t0 = now_ms();
    npk_run r = npk_run_argv(argv);
    double wall = (now_ms() - t0) / (double)njobs;
    char stopped[512] = "";
    if (r.status != 0) {
        last_line(*r.err ? r.err : r.out, stopped, sizeof stopped);
        if (r.status == 4) { /* not installed: every job says so */
            for (size_t j = 0; j < njobs; j++) {
                jobs[j].res.status = NPK_ORACLE_MISSING;
                snprintf(jobs[j].res.why, sizeof jobs[j].res.why, "%s", stopped);
            }
        }
    }
    npk_run_free(&r);

    for (size_t j = 0; j < njobs; j++) {
        npk_oracle_job *jb = &jobs[j];
        char outdir[1200], path[1300];
        snprintf(outdir, sizeof outdir, "%s/j%zu", dir, j);
        jb->res.wall_ms = wall;
        if (jb->res.status == NPK_ORACLE_MISSING) {
            remove_dir(outdir);
            continue;
        }
        snprintf(path, sizeof path, "%s/status.json", outdir);
        size_t len;
        char *st = (char *)npk_slurp(path, &len);
        if (st) {
            const char *c = strstr(st, "\"status\":");
            int code = c ? atoi(c + 9) : 1;
            jb->res.status = code == 3 ? NPK_ORACLE_CANNOT : NPK_ORACLE_FAILED;
            const char *w = strstr(st, "\"why\": \"");
            size_t skip = 8;
            if (!w) w = strstr(st, "\"why\":\""), skip = 7;
            snprintf(jb->res.why, sizeof jb->res.why, "%s", w ? w + skip : "?");
            char *q = strrchr(jb->res.why, '"'); /* the closing quote */
            if (q) *q = 0;
            free(st);
        } else {
            snprintf(path, sizeof path, "%s/manifest.json", outdir);
            if (access(path, R_OK) == 0) {
                jb->res.status = NPK_ORACLE_OK;
                load_outputs(outdir, jb->out_names, jb->noutputs, jb->outs, &jb->res);
            } else {
                jb->res.status = NPK_ORACLE_FAILED;
                snprintf(jb->res.why, sizeof jb->res.why, "no result: the runner stopped (%.400s)",
                         stopped[0] ? stopped : "no message");
            }
        }
        remove_dir(outdir);
    }
    unlink(list);
    remove_dir(dir);
}

/* ---- inputs ---- */

void npk_oracle_alloc_like(const npk_tfl_model *m, int32_t index, npk_tensor *t)
{
    const npk_tfl_tensor *x = &m->subgraphs[0].tensors[index];
    npk_dtype dt = npk_bind_tfl_dtype(x->type);
    if (dt == NPK_DT_INVALID) fail_msg("tensor %s: type %s", x->name, npk_tfl_type_name(x->type));
    if (x->ndim > NPK_MAX_DIMS) fail_msg("tensor %s: %u dimensions", x->name, x->ndim);
    int64_t shape[NPK_MAX_DIMS];
    for (uint32_t i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
    npk_error err = {0};
    if (npk_tensor_alloc(t, x->name, dt, (int)x->ndim, shape, &err)) fail_msg("%s", err.msg);
}

static void type_range(npk_dtype dt, double *lo, double *hi)
{
    switch (dt) {
    case NPK_U8: *lo = 0, *hi = 255; break;
    case NPK_I8: *lo = -128, *hi = 127; break;
    case NPK_U16: *lo = 0, *hi = 65535; break;
    case NPK_I16: *lo = -32768, *hi = 32767; break;
    case NPK_U32: *lo = 0, *hi = 4294967295.0; break;
    case NPK_I32: *lo = -2147483648.0, *hi = 2147483647.0; break;
    case NPK_BOOL: *lo = 0, *hi = 1; break;
    case NPK_I64: *lo = -9007199254740992.0, *hi = 9007199254740992.0; break; /* +-2^53 */
    case NPK_U64: *lo = 0, *hi = 9007199254740992.0; break;
    default: *lo = -1, *hi = 1;
    }
}

void npk_oracle_fill(npk_tensor *t, uint64_t seed)
{
    double lo, hi;
    type_range(t->dtype, &lo, &hi);
    npk_oracle_fill_range(t, seed, lo, hi);
}

void npk_oracle_fill_range(npk_tensor *t, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed;
    size_t n = npk_tensor_count(t);
    bool integer =
        t->dtype != NPK_F32 && t->dtype != NPK_F64 && t->dtype != NPK_F16 && t->dtype != NPK_BF16;
    uint64_t span = integer ? (uint64_t)((int64_t)hi - (int64_t)lo) + 1 : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = npk_rand(&s);
        if (integer) {
            int64_t v = (int64_t)lo + (int64_t)(span ? d % span : d);
            switch (t->dtype) {
            case NPK_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
            case NPK_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
            case NPK_U16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
            case NPK_I16: ((int16_t *)t->data)[i] = (int16_t)v; break;
            case NPK_U32: ((uint32_t *)t->data)[i] = (uint32_t)v; break;
            case NPK_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
            case NPK_U64: ((uint64_t *)t->data)[i] = (uint64_t)v; break;
            case NPK_I64: ((int64_t *)t->data)[i] = v; break;
            case NPK_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(d & 1); break;
            default: fail_msg("fill: dtype %s", npk_dtype_name(t->dtype));
            }
        } else {
            double f = lo + (hi - lo) * (double)(d >> 11) * 0x1p-53;
            if (t->dtype == NPK_F32)
                ((float *)t->data)[i] = (float)f;
            else if (t->dtype == NPK_F64)
                ((double *)t->data)[i] = f;
            else if (t->dtype == NPK_F16)
                ((uint16_t *)t->data)[i] = npk_f32_to_f16((float)f);
            else
                ((uint16_t *)t->data)[i] = npk_f32_to_bf16((float)f);
        }
    }
}

bool npk_oracle_image_input(const npk_tfl_model *m, int32_t index, npk_image_input *in)
{
    return npk_tfl_image_input(m, 0, index, in, NULL) == NPK_OK;
}

/* ---- comparison ---- */

static bool is_float(npk_dtype dt)
{
    return dt == NPK_F32 || dt == NPK_F64 || dt == NPK_F16 || dt == NPK_BF16;
}

static double get_f(const npk_tensor *t, size_t i)
{
    switch (t->dtype) {
    case NPK_F32: return ((const float *)t->data)[i];
    case NPK_F64: return ((const double *)t->data)[i];
    case NPK_F16: return npk_f16_to_f32(((const uint16_t *)t->data)[i]);
    default: return npk_bf16_to_f32(((const uint16_t *)t->data)[i]);
    }
}

static int64_t get_i(const npk_tensor *t, size_t i)
{
    switch (t->dtype) {
    case NPK_U8:
    case NPK_BOOL: return ((const uint8_t *)t->data)[i];
    case NPK_I8: return ((const int8_t *)t->data)[i];
    case NPK_U16: return ((const uint16_t *)t->data)[i];
    case NPK_I16: return ((const int16_t *)t->data)[i];
    case NPK_U32: return ((const uint32_t *)t->data)[i];
    case NPK_I32: return ((const int32_t *)t->data)[i];
    case NPK_U64: return (int64_t)((const uint64_t *)t->data)[i];
    default: return ((const int64_t *)t->data)[i];
    }
}

/* Distance in float32 ulps (monotonic mapping of the bit patterns). */
static double ulps(float a, float b)
{
    uint32_t ua, ub;
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    int64_t ia = ua & 0x80000000u ? -(int64_t)(ua & 0x7fffffffu) : (int64_t)ua;
    int64_t ib = ub & 0x80000000u ? -(int64_t)(ub & 0x7fffffffu) : (int64_t)ub;
    return (double)(ia > ib ? ia - ib : ib - ia);
}

npk_cmp npk_oracle_compare(const npk_tensor *a, const npk_tensor *b, double scale, bool top1)
{
    npk_cmp c = {0};
    bool fl = is_float(a->dtype);
    c.unit = fl && !(scale > 0) ? "ulp" : "LSB";
    c.same_shape = a->dtype == b->dtype && a->ndim == b->ndim &&
                   !memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->ndim);
    if (!c.same_shape) return c;
    c.count = npk_tensor_count(a);
    for (size_t i = 0; i < c.count; i++) {
        double d;
        if (fl) {
            double x = get_f(a, i), y = get_f(b, i);
            if (isnan(x) || isnan(y))
                d = isnan(x) && isnan(y) ? 0 : INFINITY;
            else if (x == y)
                d = 0;
            else
                d = scale > 0 ? fabs(x - y) / scale : ulps((float)x, (float)y);
        } else {
            int64_t x = get_i(a, i), y = get_i(b, i);
            d = x > y ? (double)((uint64_t)x - (uint64_t)y) : (double)((uint64_t)y - (uint64_t)x);
        }
        if (d == 0)
            c.exact++;
        else if (d <= 1 + (fl ? 1e-3 : 0)) /* float steps: allow rounding in the division */
            c.off1++;
        else
            c.worse++;
        if (d > c.max_diff) c.max_diff = d, c.worst_index = i;
    }
    if (top1 && a->ndim >= 1 && a->shape[a->ndim - 1] >= 2) {
        size_t cls = (size_t)a->shape[a->ndim - 1];
        c.rows = c.count / cls;
        for (size_t r = 0; r < c.rows; r++) {
            size_t ba = r * cls, bb = r * cls;
            for (size_t j = r * cls; j < (r + 1) * cls; j++) {
                if (fl ? get_f(a, j) > get_f(a, ba) : get_i(a, j) > get_i(a, ba)) ba = j;
                if (fl ? get_f(b, j) > get_f(b, bb) : get_i(b, j) > get_i(b, bb)) bb = j;
            }
            if (ba == bb) c.top1_agree++;
            if (r == 0) c.top1_a = (int64_t)(ba - r * cls), c.top1_b = (int64_t)(bb - r * cls);
        }
    }
    return c;
}

const char *npk_cmp_summary(const npk_cmp *c, const char *name, char *buf, size_t len)
{
    if (!c->same_shape) {
        snprintf(buf, len, "%s: dtype or shape differ", name);
        return buf;
    }
    int n = snprintf(buf, len,
                     "%s: %zu elements: %zu exact, %zu off by 1, %zu worse (max |diff| %g %s)",
                     name, c->count, c->exact, c->off1, c->worse, c->max_diff, c->unit);
    if (c->rows && n > 0 && (size_t)n < len) {
        if (c->rows == 1)
            snprintf(buf + n, len - (size_t)n, "; top-1 %s (%lld vs %lld)",
                     c->top1_agree ? "agrees" : "DIFFERS", (long long)c->top1_a,
                     (long long)c->top1_b);
        else
            snprintf(buf + n, len - (size_t)n, "; top-1 agrees in %zu of %zu rows", c->top1_agree,
                     c->rows);
    }
    return buf;
}

double npk_oracle_float_scale(const npk_tfl_model *m, int32_t index)
{
    const npk_tfl_subgraph *g = &m->subgraphs[0];
    const npk_tfl_tensor *t = &g->tensors[index];
    if (t->has_quant && t->q.nscale >= 1 && t->q.scale[0] > 0) return t->q.scale[0];
    for (uint32_t o = 0; o < g->noperators; o++) {
        const npk_tfl_operator *op = &g->operators[o];
        if (op->noutputs < 1 || op->outputs[0] != index || op->ninputs < 1) continue;
        if (npk_tfl_op_code(m, op)->builtin != TFL_OP_DEQUANTIZE || op->inputs[0] < 0) return 0;
        const npk_tfl_tensor *x = &g->tensors[op->inputs[0]];
        return x->has_quant && x->q.nscale >= 1 ? x->q.scale[0] : 0;
    }
    return 0;
}
