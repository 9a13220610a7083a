/* npukit tflite: TFLite models: inspect, run on the CPU interpreter,
 * classify a picture (cmd_tflite_classify.c), cut.
 * A thin layer over tflite.h, tflite_interp.h and tflite_build.h. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "cli_progress.h"
#include "cli_tensor_io.h"
#include "cli_timing.h"
#include "cli_views.h"
#include "commands.h"
#include "npukit/bind.h"
#include "npukit/tflite.h"
#include "npukit/tflite_build.h"
#include "npukit/tflite_interp.h"

static int t_info(int argc, char **argv);
static int t_run(int argc, char **argv);
static int t_cut(int argc, char **argv);
/* cmd_tflite_classify.c */
int cmd_tflite_classify(int argc, char **argv);

static const cli_subcommand subs[] = {
    {"info", "MODEL [--json]",
     "subgraphs, tensors (shape, type, quantisation incl. per-channel, buffer, constant or\n"
     "      not), operators (name, decoded options, inputs, outputs, whether the interpreter\n"
     "      supports them), inputs and outputs",
     t_info},
    {"run",
     "MODEL (--input [NAME=]X.npy ... | --image PICTURE) [-o OUT] [--dump DIR] [--repeat N]\n"
     "      [--threads N] " CLI_VIEW_USAGE,
     "run the model on the CPU interpreter (TFLite's integer reference semantics). Inputs are\n"
     "      .npy files of the input tensors' exact type and shape, by name or in order. OUT:\n"
     "      a .npy file for one output, else a directory of NAME.npy or one .safetensors.\n"
     "      --dump DIR writes every tensor the run computes as NAME.npy; --repeat N runs N\n"
     "      times and prints the latency (min, median); --threads N splits conv, depthwise\n"
     "      and fully-connected work (same results). --image: a picture resized into the\n"
     "      picture input; task views: --classify LABELS (--top K), --detect LABELS, --pose,\n"
     "      --segment (--draw OUT.png draws them on the picture), --json.\n"
     "      NPUKIT_TFL_KERNELS=portable in the environment runs the portable 8-bit loops\n"
     "      instead of the vector ones (same results)",
     t_run},
    {"classify",
     "MODEL --image PICTURE [--labels FILE] [--top K] [--json] [--threads N] [--range R]",
     "decode the picture (BMP, PNG, JPEG), resize it to the input (bilinear), convert it to\n"
     "      the input's type, run, and print the K highest classes (default 5): score\n"
     "      (dequantised: probabilities after a softmax), class index, label. Labels: one per\n"
     "      line, or \"ID LABEL\" lines; a file one line short of the classes is taken to leave\n"
     "      out class 0 (background). --range unit|signed|pixel: float inputs without\n"
     "      quantisation get [0, 1] (default), [-1, 1] or [0, 255]",
     cmd_tflite_classify},
    {"cut", "MODEL --outputs NAME[,NAME] [--inputs NAME[,NAME]] -o OUT.tflite",
     "write a model whose subgraph computes the given tensors (by name or index) from the\n"
     "      given inputs (default: the model's); operators, tensors and buffers nothing needs\n"
     "      are dropped",
     t_cut},
};

void cmd_tflite_help(FILE *out)
{
    cli_group_help(out, "tflite", "TFLite models: inspect, run on the CPU, cut.", subs,
                   (int)(sizeof subs / sizeof subs[0]));
}

int cmd_tflite(int argc, char **argv)
{
    return cli_dispatch("tflite", subs, (int)(sizeof subs / sizeof subs[0]), argc, argv);
}

typedef struct loaded {
    const char *path;
    npk_mapped map;
    npk_tfl_model m;
} loaded;

static int load(const char *path, loaded *l)
{
    npk_error err = {0};
    memset(l, 0, sizeof *l);
    l->path = path;
    if (npk_map_file(path, &l->map, &err) || npk_tfl_parse(l->map.data, l->map.size, &l->m, &err))
        return cli_error(path, &err);
    return CLI_OK;
}

static void unload(loaded *l)
{
    npk_tfl_free(&l->m);
    npk_unmap_file(&l->map);
}

/* ---- info ---- */

static size_t buffer_bytes(const npk_tfl_model *m, const npk_tfl_tensor *t)
{
    return t->buffer < m->nbuffers ? m->buffers[t->buffer].size : 0;
}

static void print_str(const char *s)
{
    char *u = cli_utf8_dup(s, true);
    fputs(u ? u : "?", stdout);
    free(u);
}

static void print_ints(const int32_t *v, uint32_t n)
{
    putchar('[');
    for (uint32_t i = 0; i < n; i++) printf("%s%d", i ? ", " : "", v[i]);
    putchar(']');
}

static void print_option_value(const npk_tfl_opt_field *f, const npk_tfl_opt_value *v)
{
    const char *e = npk_tfl_opt_enum_name(f->kind, v->i);
    switch (f->kind) {
    case NPK_TFL_OPT_BOOL: fputs(v->i ? "true" : "false", stdout); break;
    case NPK_TFL_OPT_FLOAT: printf("%.9g", (double)v->f); break;
    case NPK_TFL_OPT_INT32_VEC: print_ints(v->vec, v->n); break;
    default:
        if (e)
            fputs(e, stdout);
        else
            printf("%" PRId64, v->i);
    }
}

static void print_options(const npk_tfl_options *o)
{
    if (o->type == 0) return;
    const char *name = npk_tfl_options_name(o->type);
    if (!o->table) {
        printf("\n      %s (options type %u, not decoded) at 0x%" PRIx64, name ? name : "?",
               o->type, o->offset);
        return;
    }
    printf("\n      %s", o->table->name);
    for (int i = 0; i < o->table->nfields; i++) {
        /* An absent type field means "not set", not FLOAT32 (its 0). */
        if (o->table->fields[i].kind == NPK_TFL_OPT_TYPE && !o->v[i].present) continue;
        printf(" %s=", o->table->fields[i].name);
        print_option_value(&o->table->fields[i], &o->v[i]);
    }
}

static void print_quant(const npk_tfl_quant *q)
{
    if (q->nscale == 1) {
        printf(", scale %.9g zero point %" PRId64, (double)q->scale[0],
               q->nzero ? q->zero_point[0] : 0);
    } else if (q->nscale > 1) {
        printf(", per-channel (dimension %d): %u scales [", q->quantized_dimension, q->nscale);
        for (uint32_t k = 0; k < q->nscale && k < 3; k++)
            printf("%s%.6g", k ? ", " : "", (double)q->scale[k]);
        printf("%s], zero points [", q->nscale > 3 ? ", ..." : "");
        for (uint32_t k = 0; k < q->nzero && k < 3; k++)
            printf("%s%" PRId64, k ? ", " : "", q->zero_point[k]);
        printf("%s]", q->nzero > 3 ? ", ..." : "");
    }
    if (q->nmin == 1 && q->nmax == 1)
        printf(", range [%.6g, %.6g]", (double)q->min[0], (double)q->max[0]);
}

static void print_model(const char *path, const npk_tfl_model *m)
{
    print_str(path);
    printf(": TFLite version %u, \"", m->version);
    print_str(m->description);
    printf("\", %u operator codes, %u subgraphs, %u buffers\n", m->nopcodes, m->nsubgraphs,
           m->nbuffers);
    for (uint32_t s = 0; s < m->nsubgraphs; s++) {
        const npk_tfl_subgraph *sg = &m->subgraphs[s];
        printf("subgraph %u \"", s);
        print_str(sg->name);
        printf("\": %u tensors, %u operators\n  inputs:", sg->ntensors, sg->noperators);
        for (uint32_t i = 0; i < sg->ninputs; i++) {
            printf(" %d \"", sg->inputs[i]);
            print_str(sg->tensors[sg->inputs[i]].name);
            putchar('"');
        }
        printf("\n  outputs:");
        for (uint32_t i = 0; i < sg->noutputs; i++) {
            printf(" %d \"", sg->outputs[i]);
            print_str(sg->tensors[sg->outputs[i]].name);
            putchar('"');
        }
        putchar('\n');
        for (uint32_t i = 0; i < sg->ntensors; i++) {
            const npk_tfl_tensor *t = &sg->tensors[i];
            const size_t bytes = buffer_bytes(m, t);
            printf("  tensor %u \"", i);
            print_str(t->name);
            printf("\" %s ", npk_tfl_type_name(t->type));
            print_ints(t->shape, t->ndim);
            if (bytes)
                printf(" constant (buffer %u, %zu bytes)", t->buffer, bytes);
            else
                printf(" %s", t->is_variable ? "variable" : "activation");
            if (t->has_quant) print_quant(&t->q);
            putchar('\n');
        }
        for (uint32_t i = 0; i < sg->noperators; i++) {
            const npk_tfl_operator *op = &sg->operators[i];
            const npk_tfl_opcode *oc = npk_tfl_op_code(m, op);
            char buf[32], why[160];
            printf("  operator %u ", i);
            print_str(npk_tfl_op_name(m, op, buf, sizeof buf));
            printf(" (v%d, offset 0x%" PRIx64 "): inputs ", oc->version, op->offset);
            print_ints(op->inputs, op->ninputs);
            printf(" outputs ");
            print_ints(op->outputs, op->noutputs);
            if (op->custom_options) printf(", %zu bytes of custom options", op->custom_options_len);
            if (npk_tfl_op_supported(m, s, i, why, sizeof why))
                printf(", supported");
            else
                printf(", not supported: %s", why);
            print_options(&op->options);
            putchar('\n');
        }
    }
}

#ifdef NPK_HAVE_CJSON
static cJSON *json_ints(const int32_t *v, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static cJSON *json_options(const npk_tfl_options *o)
{
    cJSON *j = cJSON_CreateObject();
    const char *name = npk_tfl_options_name(o->type);
    cJSON_AddNumberToObject(j, "type", o->type);
    cJSON_AddStringToObject(j, "name", name ? name : "?");
    cli_json_u64(j, "offset", o->offset);
    cJSON_AddBoolToObject(j, "decoded", o->table != NULL);
    if (!o->table) return j;
    cJSON *f = cJSON_AddObjectToObject(j, "fields");
    for (int i = 0; i < o->table->nfields; i++) {
        const npk_tfl_opt_field *fd = &o->table->fields[i];
        const npk_tfl_opt_value *v = &o->v[i];
        const char *e = npk_tfl_opt_enum_name(fd->kind, v->i);
        if (fd->kind == NPK_TFL_OPT_TYPE && !v->present) continue;
        switch (fd->kind) {
        case NPK_TFL_OPT_BOOL: cJSON_AddBoolToObject(f, fd->name, v->i != 0); break;
        case NPK_TFL_OPT_FLOAT: cJSON_AddNumberToObject(f, fd->name, v->f); break;
        case NPK_TFL_OPT_INT32_VEC:
            cJSON_AddItemToObject(f, fd->name, json_ints(v->vec, v->n));
            break;
        default:
            if (e)
                cJSON_AddStringToObject(f, fd->name, e);
            else
                cJSON_AddNumberToObject(f, fd->name, (double)v->i);
        }
    }
    return j;
}

static cJSON *json_floats(const float *v, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static cJSON *json_model(const char *path, const npk_tfl_model *m)
{
    cJSON *o = cJSON_CreateObject();
    cli_json_str(o, "file", path);
    cJSON_AddNumberToObject(o, "version", m->version);
    cli_json_str(o, "description", m->description);
    cJSON_AddNumberToObject(o, "buffers", m->nbuffers);
    cJSON *sga = cJSON_AddArrayToObject(o, "subgraphs");
    for (uint32_t s = 0; s < m->nsubgraphs; s++) {
        const npk_tfl_subgraph *sg = &m->subgraphs[s];
        cJSON *so = cJSON_CreateObject();
        cli_json_str(so, "name", sg->name);
        cJSON_AddItemToObject(so, "inputs", json_ints(sg->inputs, sg->ninputs));
        cJSON_AddItemToObject(so, "outputs", json_ints(sg->outputs, sg->noutputs));
        cJSON *ta = cJSON_AddArrayToObject(so, "tensors");
        for (uint32_t i = 0; i < sg->ntensors; i++) {
            const npk_tfl_tensor *t = &sg->tensors[i];
            cJSON *to = cJSON_CreateObject();
            cJSON_AddNumberToObject(to, "index", i);
            cli_json_str(to, "name", t->name);
            cJSON_AddStringToObject(to, "type", npk_tfl_type_name(t->type));
            cJSON_AddItemToObject(to, "shape", json_ints(t->shape, t->ndim));
            cJSON_AddNumberToObject(to, "buffer", t->buffer);
            cli_json_u64(to, "buffer_bytes", buffer_bytes(m, t));
            cJSON_AddBoolToObject(to, "constant", buffer_bytes(m, t) > 0);
            cJSON_AddBoolToObject(to, "variable", t->is_variable);
            if (t->has_quant) {
                cJSON *q = cJSON_AddObjectToObject(to, "quantization");
                cJSON_AddItemToObject(q, "scale", json_floats(t->q.scale, t->q.nscale));
                cJSON *za = cJSON_AddArrayToObject(q, "zero_point");
                for (uint32_t k = 0; k < t->q.nzero; k++)
                    cJSON_AddItemToArray(za, cJSON_CreateNumber((double)t->q.zero_point[k]));
                cJSON_AddNumberToObject(q, "quantized_dimension", t->q.quantized_dimension);
                if (t->q.nmin) cJSON_AddItemToObject(q, "min", json_floats(t->q.min, t->q.nmin));
                if (t->q.nmax) cJSON_AddItemToObject(q, "max", json_floats(t->q.max, t->q.nmax));
            }
            cJSON_AddItemToArray(ta, to);
        }
        cJSON *opa = cJSON_AddArrayToObject(so, "operators");
        for (uint32_t i = 0; i < sg->noperators; i++) {
            const npk_tfl_operator *op = &sg->operators[i];
            const npk_tfl_opcode *oc = npk_tfl_op_code(m, op);
            char buf[32], why[160];
            cJSON *oo = cJSON_CreateObject();
            cJSON_AddNumberToObject(oo, "index", i);
            cli_json_str(oo, "op", npk_tfl_op_name(m, op, buf, sizeof buf));
            cJSON_AddNumberToObject(oo, "builtin_code", oc->builtin);
            if (oc->custom_code) cli_json_str(oo, "custom_code", oc->custom_code);
            cJSON_AddNumberToObject(oo, "version", oc->version);
            cli_json_u64(oo, "offset", op->offset);
            cJSON_AddItemToObject(oo, "inputs", json_ints(op->inputs, op->ninputs));
            cJSON_AddItemToObject(oo, "outputs", json_ints(op->outputs, op->noutputs));
            if (op->options.type) cJSON_AddItemToObject(oo, "options", json_options(&op->options));
            if (op->custom_options)
                cli_json_u64(oo, "custom_options_bytes", op->custom_options_len);
            const bool ok = npk_tfl_op_supported(m, s, i, why, sizeof why);
            cJSON_AddBoolToObject(oo, "supported", ok);
            if (!ok) cli_json_str(oo, "unsupported", why);
            cJSON_AddItemToArray(opa, oo);
        }
        cJSON_AddItemToArray(sga, so);
    }
    return o;
}
#endif

static int t_info(int argc, char **argv)
{
    bool json = false;
    if (cli_args_json("tflite info", argc, argv, &json)) return CLI_FAIL;
    if (optind + 1 != argc) return cli_usage("tflite info", "expected one MODEL");
    if (json && !cli_json_available()) return cli_no_json();
    loaded l;
    int rc = load(argv[optind], &l);
    if (rc) return rc;
#ifdef NPK_HAVE_CJSON
    if (json)
        cli_print_json(json_model(l.path, &l.m), false);
    else
#endif
        print_model(l.path, &l.m);
    unload(&l);
    return CLI_OK;
}

/* ---- run ---- */

#define MAX_INPUT_ARGS 64

/* Every tensor into DIR/<file name>.npy, all or nothing, through the shared
 * output-directory transaction (file.h): nothing appears under DIR until all
 * files are written, and a failure or a signal leaves nothing. */
static int write_npy_dir(const char *dir, const npk_tensor *ts, size_t n, const char **names)
{
    npk_error err = {0};
    npk_outdir *d;
    if (npk_outdir_open(&d, dir, &err)) return cli_error(dir, &err);
    npk_status st = NPK_OK;
    for (size_t i = 0; i < n && !st; i++) st = npk_npy_save_in(d, names[i], &ts[i], &err);
    if (st) {
        npk_outdir_abort(d);
        return cli_error(dir, &err);
    }
    return npk_outdir_commit(d, &err) ? cli_error(dir, &err) : CLI_OK;
}

/* Distinct file names for tensors (a clash gets the tensor index added). */
static const char **file_names(const npk_tensor *ts, const int32_t *index, size_t n, bool strict)
{
    const char **names = calloc(n + 1, sizeof *names);
    if (!names) return NULL;
    for (size_t i = 0; i < n; i++) {
        char name[256];
        cli_npy_file_name(ts[i].name ? ts[i].name : "", name, sizeof name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[j], name)) {
                if (strict) {
                    cli_fail("outputs \"%s\" and \"%s\" map to the same file name: use "
                             "-o OUT.safetensors",
                             ts[j].name, ts[i].name);
                    for (size_t k = 0; k < i; k++) free((char *)names[k]);
                    free(names);
                    return NULL;
                }
                name[strlen(name) - 4] = 0;
                char tmp[256];
                snprintf(tmp, sizeof tmp, "%.200s_%d.npy", name, index[i]);
                strcpy(name, tmp);
                break;
            }
        names[i] = strdup(name);
    }
    return names;
}

typedef struct run_ctx {
    loaded l;
    npk_tfl_interp *it;
    cli_views views;
    int picture; /* input that takes --image, -1 */
    npk_tensor *in;
    uint32_t nin;
    int32_t *order; /* tensors in the order the run computes them (for --dump) */
    uint32_t norder, cap;
} run_ctx;

static npk_status record(void *user, const npk_tfl_interp *it, uint32_t op_index, npk_error *err)
{
    run_ctx *r = user;
    const npk_tfl_model *m = npk_tfl_interp_model(it);
    (void)err;
    (void)m;
    const npk_tfl_operator *op = &r->l.m.subgraphs[0].operators[op_index];
    for (uint32_t j = 0; j < op->noutputs && r->norder < r->cap; j++)
        r->order[r->norder++] = op->outputs[j];
    return NPK_OK;
}

static int assign_inputs(run_ctx *r, char **args, int nargs)
{
    npk_error err = {0};
    const uint32_t n = npk_tfl_interp_ninputs(r->it);
    const char **path = calloc(n + 1, sizeof *path);
    npk_tfl_view *views = calloc(n + 1, sizeof *views);
    int rc = CLI_OK;
    if (!path || !views) {
        rc = cli_fail("out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < n && !rc; i++)
        if (npk_tfl_interp_input(r->it, i, &views[i], &err)) rc = cli_error(r->l.path, &err);
    for (int a = 0; a < nargs && !rc; a++) {
        char *eq = strchr(args[a], '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!strcmp(views[i].name, args[a])) k = (int)i;
            if (k < 0) *eq = '='; /* not an input name: a path with '=' in it */
        }
        if (k >= 0) {
            if (path[k] || k == r->picture) {
                rc = cli_fail("input \"%s\" is given twice", args[a]);
                break;
            }
            path[k] = eq + 1;
            continue;
        }
        uint32_t i = 0;
        while (i < n && (path[i] || (int)i == r->picture)) i++;
        if (i == n) {
            rc = cli_fail("%s: the model has only %u inputs", args[a], n);
            break;
        }
        path[i] = args[a];
    }
    for (uint32_t i = 0; i < n && !rc; i++) {
        const npk_tfl_view *v = &views[i];
        if ((int)i == r->picture) { /* filled from the picture */
            r->nin = i + 1;
            continue;
        }
        char want[128], got[128];
        npk_tensor *t = &r->in[i];
        cli_view_describe(v, want, sizeof want);
        if (!path[i]) {
            rc = cli_fail("no --input for \"%s\" (%s)", v->name, want);
            break;
        }
        if (npk_protect_path(path[i], &err) || npk_npy_load(path[i], t, &err)) {
            rc = cli_error(path[i], &err);
            break;
        }
        r->nin = i + 1;
        bool ok = t->dtype == npk_bind_tfl_dtype(v->type) && t->ndim == (int)v->ndim;
        for (uint32_t d = 0; ok && d < v->ndim; d++) ok = t->shape[d] == v->dims[d];
        if (!ok) {
            snprintf(got, sizeof got, "%s %s", npk_dtype_name(t->dtype),
                     npk_shape_str(t, (char[96]){0}, 96));
            rc = cli_fail("%s: input \"%s\" must be %s, the file holds %s", path[i], v->name, want,
                          got);
            break;
        }
        memcpy(v->data, t->data, v->bytes);
    }
done:
    free(path);
    free(views);
    return rc;
}

static int write_outputs(run_ctx *r, const char *out, bool quiet)
{
    npk_error err = {0};
    const uint32_t n = npk_tfl_interp_noutputs(r->it);
    npk_tensor *ts = calloc(n + 1, sizeof *ts);
    int32_t *idx = calloc(n + 1, sizeof *idx);
    size_t nt = 0;
    int rc = CLI_OK;
    if (!ts || !idx) rc = cli_fail("out of memory");
    for (uint32_t i = 0; i < n && !rc; i++) {
        npk_tfl_view v;
        if (npk_tfl_interp_output(r->it, i, &v, &err) ||
            cli_view_tensor(&v, npk_bind_tfl_dtype(v.type), &ts[nt], &err))
            rc = cli_error(r->l.path, &err);
        else
            idx[nt++] = v.index;
    }
    if (!rc) {
        if (cli_ends_with(out, ".safetensors")) {
            if (npk_st_save(out, ts, nt, &err)) rc = cli_error(out, &err);
        } else if (nt == 1) {
            if (npk_npy_save(out, &ts[0], &err)) rc = cli_error(out, &err);
        } else {
            const char **names = file_names(ts, idx, nt, true);
            rc = names ? write_npy_dir(out, ts, nt, names) : CLI_FAIL;
            for (size_t i = 0; names && i < nt; i++) free((char *)names[i]);
            free(names);
        }
    }
    for (size_t i = 0; !rc && !quiet && i < nt; i++) {
        char buf[96];
        printf("output \"");
        print_str(ts[i].name);
        printf("\" %s %s\n", npk_shape_str(&ts[i], buf, sizeof buf), npk_dtype_name(ts[i].dtype));
    }
    for (size_t i = 0; i < nt; i++) npk_tensor_free(&ts[i]);
    free(ts);
    free(idx);
    return rc;
}

static int write_dump(run_ctx *r, const char *dir)
{
    npk_error err = {0};
    const uint32_t total = npk_tfl_interp_ninputs(r->it) + r->norder;
    npk_tensor *ts = calloc(total + 1, sizeof *ts);
    int32_t *idx = calloc(total + 1, sizeof *idx);
    size_t nt = 0;
    int rc = CLI_OK;
    if (!ts || !idx) rc = cli_fail("out of memory");
    for (uint32_t i = 0; i < total && !rc; i++) {
        npk_tfl_view v;
        int32_t t =
            i < npk_tfl_interp_ninputs(r->it) ? -1 : r->order[i - npk_tfl_interp_ninputs(r->it)];
        npk_status st = t < 0 ? npk_tfl_interp_input(r->it, i, &v, &err)
                              : npk_tfl_interp_tensor(r->it, t, &v, &err);
        if (st || cli_view_tensor(&v, npk_bind_tfl_dtype(v.type), &ts[nt], &err))
            rc = cli_error(r->l.path, &err);
        else
            idx[nt++] = v.index;
    }
    if (!rc) {
        const char **names = file_names(ts, idx, nt, false);
        rc = names ? write_npy_dir(dir, ts, nt, names) : cli_fail("out of memory");
        for (size_t i = 0; names && i < nt; i++) free((char *)names[i]);
        free(names);
        if (!rc) printf("dumped %zu tensors to %s\n", nt, dir);
    }
    for (size_t i = 0; i < nt; i++) npk_tensor_free(&ts[i]);
    free(ts);
    free(idx);
    return rc;
}

static int t_run(int argc, char **argv)
{
    const char *out = NULL, *dump = NULL;
    char *inputs[MAX_INPUT_ARGS];
    int ninputs = 0;
    uint64_t repeat = 0, threads = 1;
    run_ctx r;
    memset(&r, 0, sizeof r);
    r.picture = -1;
    cli_views_init(&r.views, "tflite run");
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"input", required_argument, NULL, 'i'},
                                         {"dump", required_argument, NULL, 'd'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"threads", required_argument, NULL, 't'},
                                         CLI_VIEW_OPTIONS,
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:i:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'i':
            if (ninputs == MAX_INPUT_ARGS) return cli_usage("tflite run", "too many --input");
            inputs[ninputs++] = optarg;
            break;
        case 'd': dump = optarg; break;
        case 'r':
            if (!cli_parse_u64(optarg, &repeat) || repeat < 1 || repeat > 1000000)
                return cli_usage("tflite run", "--repeat must be 1 .. 1000000");
            break;
        case 't':
            if (!cli_parse_u64(optarg, &threads) || threads < 1 || threads > 64)
                return cli_usage("tflite run", "--threads must be 1 .. 64");
            break;
        default: {
            const int v = cli_views_option(&r.views, c, optarg);
            if (v < 0) return cli_bad_option("tflite run", argv);
            if (v) return v;
        }
        }
    }
    if (optind + 1 != argc || (!out && r.views.task == CLI_TASK_NONE))
        return cli_usage("tflite run",
                         "expected MODEL (--input X.npy | --image PICTURE) and -o OUT or a task "
                         "view");
    int rc = cli_views_check(&r.views);
    if (rc) return rc;
    const bool json = r.views.json;
    npk_error err = {0};
    npk_tfl_view pic_view;
    double *ms = NULL;
#ifdef NPK_HAVE_CJSON
    cJSON *j = NULL;
#endif
    if ((rc = load(argv[optind], &r.l))) return rc;
    npk_tfl_interp_opts io = {.threads = (int)threads, .keep_all = dump != NULL};
    if (npk_tfl_interp_new(&r.l.m, &io, &r.it, &err)) {
        rc = cli_error(r.l.path, &err);
        goto done;
    }
    r.in = calloc(npk_tfl_interp_ninputs(r.it) + 1, sizeof *r.in);
    r.cap = r.l.m.subgraphs[0].ntensors;
    r.order = calloc(r.cap + 1, sizeof *r.order);
    if (!r.in || !r.order) {
        rc = cli_fail("out of memory");
        goto done;
    }
    if ((rc = cli_views_load(&r.views))) goto done;
    if (r.views.image) { /* the picture into its input */
        const uint32_t n = npk_tfl_interp_ninputs(r.it);
        npk_tfl_view *vs = calloc(n + 1, sizeof *vs);
        if (!vs) rc = cli_fail("out of memory");
        for (uint32_t i = 0; i < n && !rc; i++)
            if (npk_tfl_interp_input(r.it, i, &vs[i], &err)) rc = cli_error(r.l.path, &err);
        if (!rc && (r.picture = cli_views_picture_input(&r.views, vs, n, r.l.path)) < 0)
            rc = CLI_FAIL;
        if (!rc) {
            pic_view = vs[r.picture];
            rc = cli_views_fill(&r.views, &pic_view, r.l.path);
        }
        free(vs);
        if (rc) goto done;
    }
    if ((rc = assign_inputs(&r, inputs, ninputs))) goto done;
    if (dump) npk_tfl_interp_set_observer(r.it, record, &r);
    const uint64_t runs = repeat ? repeat : 1;
    if (!(ms = calloc(runs, sizeof *ms))) {
        rc = cli_fail("out of memory");
        goto done;
    }
    cli_progress pr;
    cli_progress_start(&pr, "tflite run");
    for (uint64_t k = 0; k < runs && !rc; k++) {
        const double t0 = cli_now_ms();
        if (npk_tfl_interp_invoke(r.it, &err)) {
            cli_progress_end(&pr, false);
            rc = cli_error(r.l.path, &err);
        }
        ms[k] = cli_now_ms() - t0;
        if (dump) npk_tfl_interp_set_observer(r.it, NULL, NULL); /* record the first run only */
        if (!rc) cli_progress_update(&pr, "run", k + 1, runs);
    }
    if (!rc) cli_progress_end(&pr, true);
#ifdef NPK_HAVE_CJSON
    if (json && !rc) {
        j = cJSON_CreateObject();
        cJSON *a = cJSON_AddArrayToObject(j, "runs_ms");
        for (uint64_t k = 0; k < runs; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ms[k]));
    }
#endif
    if (!rc && repeat && !json) {
        cli_sort_ms(ms, runs);
        const size_t arena = npk_tfl_interp_arena_bytes(r.it),
                     peak = npk_tfl_interp_peak_live_bytes(r.it);
        printf("%" PRIu64 " runs, %" PRIu64 " thread%s: min %.3f ms, median %.3f ms; arena %zu "
               "bytes, largest live set %zu bytes (%.3fx); %s kernels\n",
               runs, threads, threads > 1 ? "s" : "", ms[0], ms[runs / 2], arena, peak,
               peak ? (double)arena / (double)peak : 0.0, npk_tfl_interp_kernels(r.it));
    }
    if (!rc && out) rc = write_outputs(&r, out, json);
    if (!rc && dump) rc = write_dump(&r, dump);
    if (!rc && r.views.task != CLI_TASK_NONE) {
        const uint32_t n = npk_tfl_interp_noutputs(r.it);
        npk_tfl_view *ov = calloc(n + 1, sizeof *ov);
        if (!ov) rc = cli_fail("out of memory");
        for (uint32_t i = 0; i < n && !rc; i++)
            if (npk_tfl_interp_output(r.it, i, &ov[i], &err)) rc = cli_error(r.l.path, &err);
        if (!rc) rc = cli_views_show(&r.views, ov, n, r.picture >= 0 ? &pic_view : NULL);
        free(ov);
    }
#ifdef NPK_HAVE_CJSON
    if (j && !rc) {
        cli_views_json(&r.views, j);
        cli_print_json(j, false);
        j = NULL;
    }
#endif
done:
#ifdef NPK_HAVE_CJSON
    cJSON_Delete(j);
#endif
    free(ms);
    for (uint32_t i = 0; i < r.nin; i++) npk_tensor_free(&r.in[i]);
    free(r.in);
    free(r.order);
    npk_tfl_interp_free(r.it);
    cli_views_free(&r.views);
    unload(&r.l);
    return rc;
}

/* ---- cut ---- */

/* Tensor indices from "NAME,NAME" (names or decimal indices) of MODEL. */
static int parse_tensors(const char *model, const npk_tfl_subgraph *sg, const char *list,
                         int32_t **out, uint32_t *n)
{
    char *copy = strdup(list);
    if (!copy) return cli_fail("out of memory");
    uint32_t cap = 1;
    for (const char *p = list; *p; p++) cap += *p == ',';
    *out = calloc(cap, sizeof **out);
    *n = 0;
    int rc = *out ? CLI_OK : cli_fail("out of memory");
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        int64_t idx = -1;
        for (uint32_t i = 0; i < sg->ntensors; i++)
            if (!strcmp(sg->tensors[i].name, tok)) {
                idx = i;
                break;
            }
        if (idx < 0 && (!cli_parse_i64(tok, &idx) || idx < 0 || idx >= sg->ntensors))
            rc = cli_fail("%s: no tensor named \"%s\" in subgraph 0", model, tok);
        else
            (*out)[(*n)++] = (int32_t)idx;
    }
    free(copy);
    return rc;
}

static int t_cut(int argc, char **argv)
{
    const char *out = NULL, *outs = NULL, *ins = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"outputs", required_argument, NULL, 'O'},
                                         {"inputs", required_argument, NULL, 'I'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'O': outs = optarg; break;
        case 'I': ins = optarg; break;
        default: return cli_bad_option("tflite cut", argv);
        }
    }
    if (optind + 1 != argc || !out || !outs)
        return cli_usage("tflite cut", "expected MODEL --outputs NAME[,NAME] -o OUT.tflite");
    loaded l;
    int rc = load(argv[optind], &l);
    if (rc) return rc;
    npk_error err = {0};
    int32_t *oi = NULL, *ii = NULL;
    uint32_t no = 0, ni = 0;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (l.m.nsubgraphs == 0) {
        rc = cli_fail("%s: the model has no subgraph", l.path);
        goto done;
    }
    if ((rc = parse_tensors(l.path, &l.m.subgraphs[0], outs, &oi, &no)) ||
        (ins && (rc = parse_tensors(l.path, &l.m.subgraphs[0], ins, &ii, &ni))))
        goto done;
    npk_tfl_write_opts wo = {
        .inputs = ii, .ninputs = ni, .outputs = oi, .noutputs = no, .prune = true};
    if (npk_tfl_write(&l.m, &wo, &buf, &len, &err)) {
        rc = cli_error(l.path, &err);
        goto done;
    }
    {
        /* Read back before writing: the file must parse. */
        npk_tfl_model cut;
        if (npk_tfl_parse(buf, len, &cut, &err)) {
            rc = cli_error(out, &err);
            goto done;
        }
        printf("%s: %u tensors, %u operators, %u buffers, %zu bytes\n", out,
               cut.subgraphs[0].ntensors, cut.subgraphs[0].noperators, cut.nbuffers, len);
        npk_tfl_free(&cut);
    }
    if (npk_write_file(out, buf, len, &err)) rc = cli_error(out, &err);
done:
    free(buf);
    free(oi);
    free(ii);
    unload(&l);
    return rc;
}
