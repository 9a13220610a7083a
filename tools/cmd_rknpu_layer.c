/* npukit rknpu compile and run: operators of a TFLite model as RKNPU tasks.
 * A thin layer over the TFLite front end (npukit/rknpu_tflite.h), the
 * layer planner, the bundle (npukit/rknpu_bundle.h), the devices and the
 * interpreter (for --check). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_outdir.h"
#include "cli_progress.h"
#include "cmd_rknpu.h"
#include "npukit/rknpu_bundle.h"
#include "npukit/rknpu_device.h"
#include "npukit/rknpu_stream.h"
#include "npukit/rknpu_tflite.h"
#include "npukit/tflite_interp.h"

int rknpu_cmd_compile(int argc, char **argv);
int rknpu_cmd_run(int argc, char **argv);
/* Without --op: the whole model (cmd_rknpu_net.c). */

static bool has_op(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--op") || !strncmp(argv[i], "--op=", 5)) return true;
    }
    return false;
}

enum {
    OPT_OP = 256,
    OPT_CORES,
    OPT_FORM,
    OPT_REQUANT,
    OPT_JSON,
    OPT_ACT,
    OPT_WT,
    OPT_REG,
    OPT_INPUT,
    OPT_CHECK,
    OPT_DEVICE,
    OPT_PATH,
    OPT_EMU_CORES
};

#define MAX_OPS 1024

typedef struct model {
    const char *path;
    npk_mapped map;
    npk_tfl_model m;
} model;

static int model_load(const char *path, model *md)
{
    npk_error err = {0};
    memset(md, 0, sizeof *md);
    md->path = path;
    if (npk_protect_path(path, &err) || npk_map_file(path, &md->map, &err) ||
        npk_tfl_parse(md->map.data, md->map.size, &md->m, &err))
        return cli_error(path, &err);
    if (!md->m.nsubgraphs) {
        npk_tfl_free(&md->m);
        npk_unmap_file(&md->map);
        return cli_fail("%s: the model has no subgraph", path);
    }
    return CLI_OK;
}

static void model_free(model *md)
{
    npk_tfl_free(&md->m);
    npk_unmap_file(&md->map);
}

static int parse_ops(const char *cmd, const char *s, uint32_t *ops, size_t *n)
{
    char *dup = strdup(s), *save = NULL;
    if (!dup) return cli_fail("out of memory");
    int rc = CLI_OK;
    for (char *t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (!cli_parse_u64(t, &v) || v > UINT32_MAX)
            rc = cli_usage(cmd, "bad operator index '%s'", t);
        else if (*n >= MAX_OPS)
            rc = cli_usage(cmd, "at most %d operators", MAX_OPS);
        else
            ops[(*n)++] = (uint32_t)v;
    }
    free(dup);
    if (!rc && !*n) rc = cli_usage(cmd, "--op needs at least one index");
    return rc;
}

static const char *layer_shape(const npk_rk_layer *l, char *buf, size_t len)
{
    if (l->kind == NPK_RK_LAYER_ADD || l->kind == NPK_RK_LAYER_FC)
        snprintf(buf, len, "%ux%ux%u -> %ux%ux%u", l->in_h, l->in_w, l->in_c, l->out_h, l->out_w,
                 l->out_c);
    else
        snprintf(
            buf, len, "%ux%ux%u -> %ux%ux%u, %ux%u stride %ux%u dilation %ux%u pad %u,%u,%u,%u",
            l->in_h, l->in_w, l->in_c, l->out_h, l->out_w, l->out_c, l->k_h, l->k_w, l->stride_h,
            l->stride_w, l->dil_h, l->dil_w, l->pad_top, l->pad_left, l->pad_bottom, l->pad_right);
    return buf;
}

static int bound_steps(const npk_rk_lplan *p)
{
    double b = npk_rk_lplan_tflite_bound(p);
    if (b < 0) return -1;
    if (b == 0) return 0;
    int s = (int)b;
    return s < b ? s + 1 : s;
}

/* ---- compile ---- */

#ifdef NPK_HAVE_CJSON
static cJSON *json_buf(cJSON *parent, const char *name, uint32_t addr, uint64_t bytes)
{
    cJSON *x = cJSON_AddObjectToObject(parent, name);
    cli_json_hex(x, "addr", addr);
    cli_json_u64(x, "bytes", bytes);
    return x;
}

static cJSON *json_requant(const npk_rk_lplan *p)
{
    const npk_rk_requant *rq = &p->rq;
    cJSON *j = cJSON_CreateObject();
    if (p->fp) {
        cJSON_AddStringToObject(j, "mode", "fp16");
        return j;
    }
    cJSON_AddStringToObject(j, "mode", rq->exact ? "exact" : rq->fused ? "fused-add" : "simple");
    cJSON_AddBoolToObject(j, "per_channel", rq->per_channel);
    cJSON *oc = cJSON_AddObjectToObject(j, "out_cvt");
    cJSON_AddNumberToObject(oc, "scale", rq->scale);
    cJSON_AddNumberToObject(oc, "shift", rq->shift);
    cJSON_AddNumberToObject(oc, "offset", rq->offset);
    if (rq->exact) {
        cJSON_AddNumberToObject(j, "bs_mul_shift", 0);
        cJSON_AddNumberToObject(j, "bn_mul_shift", rq->mul_shift);
        cJSON_AddNumberToObject(j, "fraction_bits", rq->frac_bits);
        cJSON *c = cJSON_AddObjectToObject(j, "ew_clip");
        cJSON_AddBoolToObject(c, "lower", rq->clip_lower);
        cJSON_AddBoolToObject(c, "upper", rq->clip_upper);
        cJSON_AddNumberToObject(c, "subtract", rq->clip_lo);
        cJSON_AddNumberToObject(c, "relux_cmp", rq->clip_hi - rq->clip_lo);
        cJSON_AddNumberToObject(j, "channels_following_negative_ties", rq->ties_negative);
        cJSON_AddNumberToObject(j, "sign_passes", rq->two_pass ? 2 : 1);
        if (rq->two_pass) {
            cJSON *s = cJSON_AddObjectToObject(j, "sign_scratch");
            cli_json_hex(s, "addr", p->opts.output_addr + p->sign_off);
            cli_json_u64(s, "bytes", p->sign_bytes);
        }
        cJSON_AddNumberToObject(j, "worst_abs_steps", rq->worst_abs);
    } else if (rq->per_channel || rq->fused) {
        cJSON_AddNumberToObject(j, "bn_mul_shift", rq->mul_shift);
    }
    cJSON_AddNumberToObject(j, "worst_multiplier_rel_error", rq->worst_rel);
    cJSON_AddNumberToObject(j, "tflite_tie_offset_max", rq->tie_offset_max);
    cJSON_AddNumberToObject(j, "tflite_tie_offset_unfollowed", rq->tie_open_max);
    double b = npk_rk_lplan_tflite_bound(p);
    if (b >= 0) {
        cJSON_AddNumberToObject(j, "bound_steps", b);
        cJSON_AddNumberToObject(j, "max_difference_from_tflite", bound_steps(p));
    }
    /* The per-channel records: where they are and what each holds. */
    cli_json_u64(j, "bias_offset", p->bias_off);
    cli_json_u64(j, "mul_offset", p->mul_off);
    return j;
}

static cJSON *json_op(const npk_rk_bundle *b, size_t i, const npk_rk_tfl_layer *tl)
{
    const npk_rk_bundle_op *op = &b->ops[i];
    const npk_rk_lplan *p = &op->plan;
    const npk_rk_layer *l = &tl->layer;
    cJSON *j = cJSON_CreateObject();
    char nb[32];
    cJSON_AddNumberToObject(j, "index", tl->op_index);
    cJSON_AddStringToObject(j, "op",
                            npk_tfl_builtin_name(tl->builtin)
                                ? npk_tfl_builtin_name(tl->builtin)
                                : (snprintf(nb, sizeof nb, "%d", tl->builtin), nb));
    cJSON_AddStringToObject(j, "kind", npk_rk_layer_kind_name(l->kind));
    cJSON_AddStringToObject(j, "type", npk_rk_ltype_name(l->type));
    cJSON *sh = cJSON_AddObjectToObject(j, "shape");
    const uint32_t v[] = {l->in_h,    l->in_w,     l->in_c,       l->out_h,    l->out_w, l->out_c,
                          l->k_h,     l->k_w,      l->stride_h,   l->stride_w, l->dil_h, l->dil_w,
                          l->pad_top, l->pad_left, l->pad_bottom, l->pad_right};
    const char *names[] = {"in_h",     "in_w",     "in_c",       "out_h",
                           "out_w",    "out_c",    "kernel_h",   "kernel_w",
                           "stride_h", "stride_w", "dilation_h", "dilation_w",
                           "pad_top",  "pad_left", "pad_bottom", "pad_right"};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) cJSON_AddNumberToObject(sh, names[k], v[k]);
    cJSON *tn = cJSON_AddObjectToObject(j, "tensors");
    cJSON_AddNumberToObject(tn, "input", tl->inputs[0]);
    if (tl->inputs[1] >= 0) cJSON_AddNumberToObject(tn, "input2", tl->inputs[1]);
    cJSON_AddNumberToObject(tn, "output", tl->output);
    cJSON *bu = cJSON_AddObjectToObject(j, "buffers");
    json_buf(bu, "input", p->opts.input_addr, p->input_bytes);
    uint64_t in2 = npk_rk_lplan_input2_bytes(p);
    if (in2) json_buf(bu, "input2", p->opts.input2_addr, in2);
    json_buf(bu, "output", p->opts.output_addr, p->output_bytes);
    cJSON *w = json_buf(bu, "weights", p->opts.weight_addr, p->weight_bytes);
    cli_json_u64(w, "offset_in_weights_bin", op->weight_off);
    cJSON *r = json_buf(bu, "regcmd", b->opts.regcmd_addr + (uint32_t)op->regcmd_off,
                        (uint64_t)p->regcmd_entries * 8);
    cli_json_u64(r, "offset_in_regcmd_bin", op->regcmd_off);
    cJSON *tl_ = cJSON_AddArrayToObject(j, "tiles");
    cJSON_AddItemToArray(tl_, cJSON_CreateNumber(p->tiles_h));
    cJSON_AddItemToArray(tl_, cJSON_CreateNumber(p->tiles_c));
    cJSON_AddNumberToObject(j, "cores", p->cores);
    cJSON *ts = cJSON_AddArrayToObject(j, "tasks");
    for (size_t k = 0; k < p->count; k++) {
        const npk_rk_ltask *t = &p->tasks[k];
        const npk_rknpu_task *rec = &b->records[op->task_first + k];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "record", (double)(op->task_first + k));
        cJSON_AddNumberToObject(x, "core", t->core);
        cJSON_AddNumberToObject(x, "out_row", t->oy0);
        cJSON_AddNumberToObject(x, "rows", t->oh);
        cJSON_AddNumberToObject(x, "in_row", t->iy0);
        cJSON_AddNumberToObject(x, "in_rows", t->ih);
        cJSON_AddNumberToObject(x, "channel", t->oc0);
        cJSON_AddNumberToObject(x, "channels", t->ocn);
        cli_json_hex(x, "regcmd_addr", rec->regcmd_addr);
        cJSON_AddNumberToObject(x, "entries", (double)t->entries);
        cJSON_AddNumberToObject(x, "regcfg_amount", rec->regcfg_amount);
        cJSON_AddNumberToObject(x, "next", t->next < 0 ? -1 : (double)(op->task_first + t->next));
        cli_json_u64(x, "macs", t->macs);
        cJSON_AddItemToArray(ts, x);
    }
    const npk_rknpu_submit *s = &b->submits[i];
    cJSON *su = cJSON_AddObjectToObject(j, "submit");
    cli_json_u64(su, "offset_in_submit_bin", (uint64_t)i * NPK_RKNPU_SUBMIT_SIZE);
    cli_json_hex(su, "flags", s->flags);
    cJSON_AddNumberToObject(su, "task_start", s->task_start);
    cJSON_AddNumberToObject(su, "task_number", s->task_number);
    cli_json_hex(su, "core_mask", s->core_mask);
    cJSON *sc = cJSON_AddArrayToObject(su, "subcore_task");
    for (int c = 0; c < NPK_RKNPU_SUBCORE_SLOTS; c++) {
        cJSON *x = cJSON_CreateArray();
        cJSON_AddItemToArray(x, cJSON_CreateNumber(s->subcore_task[c].task_start));
        cJSON_AddItemToArray(x, cJSON_CreateNumber(s->subcore_task[c].task_number));
        cJSON_AddItemToArray(sc, x);
    }
    cJSON_AddItemToObject(j, "requant", json_requant(p));
    return j;
}

static cJSON *json_bundle(const char *path, const npk_rk_bundle *b, const npk_rk_tfl_layer *ls)
{
    cJSON *j = cJSON_CreateObject();
    cli_json_str(j, "model", path);
    cJSON_AddNumberToObject(j, "cores", b->opts.cores);
    cJSON_AddStringToObject(j, "form", npk_rk_form_name(b->opts.form));
    cJSON *bu = cJSON_AddObjectToObject(j, "buffers");
    json_buf(bu, "activations", b->opts.act_addr, b->act_bytes);
    json_buf(bu, "weights", b->opts.weight_addr, b->weight_bytes);
    json_buf(bu, "regcmd", b->opts.regcmd_addr, (uint64_t)b->regcmd_entries * 8);
    cJSON *t = cJSON_AddObjectToObject(bu, "tasks");
    cli_json_u64(t, "bytes", (uint64_t)b->ntasks * NPK_RKNPU_TASK_SIZE);
    cJSON *s = cJSON_AddObjectToObject(bu, "submits");
    cli_json_u64(s, "bytes", (uint64_t)b->nops * NPK_RKNPU_SUBMIT_SIZE);
    cJSON *ops = cJSON_AddArrayToObject(j, "ops");
    for (size_t i = 0; i < b->nops; i++) cJSON_AddItemToArray(ops, json_op(b, i, &ls[i]));
    return j;
}
#endif

static int write_bundle(const char *dir, const char *path, const npk_rk_bundle *b,
                        const npk_rk_tfl_layer *ls)
{
    size_t rb = b->regcmd_entries * 8, tb = b->ntasks * NPK_RKNPU_TASK_SIZE,
           sb = b->nops * NPK_RKNPU_SUBMIT_SIZE;
    uint8_t *reg = malloc(rb ? rb : 1), *tasks = malloc(tb ? tb : 1), *subs = malloc(sb ? sb : 1);
    char *json = NULL;
    int rc = CLI_OK;
    if (!reg || !tasks || !subs) {
        rc = cli_fail("out of memory");
        goto done;
    }
    npk_rk_stream_to_bin(b->regcmd, b->regcmd_entries, reg);
    for (size_t i = 0; i < b->ntasks; i++)
        npk_rknpu_task_to_bytes(&b->records[i], tasks + i * NPK_RKNPU_TASK_SIZE);
    for (size_t i = 0; i < b->nops; i++)
        npk_rknpu_submit_to_bytes(&b->submits[i], subs + i * NPK_RKNPU_SUBMIT_SIZE);
    cli_out_file f[5] = {{"regcmd.bin", reg, rb},
                         {"tasks.bin", tasks, tb},
                         {"submit.bin", subs, sb},
                         {"weights.bin", b->weights, (size_t)b->weight_bytes},
                         {"plan.json", NULL, 0}};
    size_t nf = 4;
#ifdef NPK_HAVE_CJSON
    cJSON *j = json_bundle(path, b, ls);
    char *s = cli_json_text(j, false); /* UTF-8 repaired: names from the model */
    cJSON_Delete(j);
    if (!s) {
        rc = cli_fail("out of memory");
        goto done;
    }
    size_t len = strlen(s);
    json = realloc(s, len + 2);
    if (!json) {
        free(s);
        rc = cli_fail("out of memory");
        goto done;
    }
    json[len] = '\n';
    f[4].data = json;
    f[4].len = len + 1;
    nf = 5;
#else
    (void)path, (void)ls;
    fprintf(stderr, "npukit: built without libcjson: plan.json is not written\n");
#endif
    rc = cli_write_dir(dir, f, nf);
done:
    free(reg);
    free(tasks);
    free(subs);
    free(json);
    return rc;
}

static void print_summary(const npk_rk_bundle *b, const npk_rk_tfl_layer *ls, const char *dir)
{
    for (size_t i = 0; i < b->nops; i++) {
        const npk_rk_lplan *p = &b->ops[i].plan;
        const npk_rk_layer *l = &ls[i].layer;
        char shape[160];
        int steps = bound_steps(p);
        printf("%s: %s %s, %s: %zu task%s on %d core%s (tiles %u x %u), weights %" PRIu64
               " B, requantisation %s",
               ls[i].name, npk_rk_layer_kind_name(l->kind), npk_rk_ltype_name(l->type),
               layer_shape(l, shape, sizeof shape), p->count, p->count == 1 ? "" : "s", p->cores,
               p->cores == 1 ? "" : "s", p->tiles_h, p->tiles_c, p->weight_bytes,
               p->fp         ? "fp16"
               : p->rq.exact ? (p->rq.two_pass ? "exact, two passes" : "exact")
               : p->rq.fused ? "fused-add"
                             : "simple");
        if (steps >= 0) printf(", at most %d step%s from TFLite", steps, steps == 1 ? "" : "s");
        putchar('\n');
    }
    printf("%zu operator%s, %zu tasks, weights %" PRIu64 " B, activations %" PRIu64
           " B, regcmd %zu B%s%s\n",
           b->nops, b->nops == 1 ? "" : "s", b->ntasks, b->weight_bytes, b->act_bytes,
           b->regcmd_entries * 8, dir ? " -> " : "", dir ? dir : "");
}

int rknpu_cmd_compile(int argc, char **argv)
{
    if (!has_op(argc, argv)) return rknpu_net_compile(argc, argv);
    const char *cmd = "rknpu compile", *dir = NULL, *opstr = NULL;
    npk_rk_bundle_opts bo = {1, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0};
    bool json = false;
    static const struct option opts[] = {{"op", required_argument, NULL, OPT_OP},
                                         {"output", required_argument, NULL, 'o'},
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"form", required_argument, NULL, OPT_FORM},
                                         {"requant", required_argument, NULL, OPT_REQUANT},
                                         {"act-addr", required_argument, NULL, OPT_ACT},
                                         {"weight-addr", required_argument, NULL, OPT_WT},
                                         {"regcmd-addr", required_argument, NULL, OPT_REG},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {0, 0, 0, 0}};
    int c;
    uint64_t v;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': dir = optarg; break;
        case OPT_OP: opstr = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_CORES:
            if (rknpu_opt_cores(cmd, optarg, &bo.cores)) return CLI_FAIL;
            break;
        case OPT_FORM:
            if (rknpu_opt_form(cmd, optarg, &bo.form)) return CLI_FAIL;
            break;
        case OPT_REQUANT:
            if (rknpu_opt_requant(cmd, optarg, &bo.requant)) return CLI_FAIL;
            break;
        case OPT_ACT:
        case OPT_WT:
        case OPT_REG:
            if (!cli_parse_u64(optarg, &v) || v > UINT32_MAX || v % 64)
                return cli_usage(cmd, "bad address '%s' (32 bits, 64-byte aligned)", optarg);
            *(c == OPT_ACT  ? &bo.act_addr
              : c == OPT_WT ? &bo.weight_addr
                            : &bo.regcmd_addr) = (uint32_t)v;
            break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (argc - optind != 1) return cli_usage(cmd, "expected one MODEL.tflite");
    if (!opstr) return cli_usage(cmd, "need --op INDEX[,INDEX...]");
    if (!dir && !json) return cli_usage(cmd, "need -o DIR (or --json)");
    if (json && !cli_json_available()) return cli_no_json();
    uint32_t *idx = malloc(MAX_OPS * sizeof *idx);
    if (!idx) return cli_fail("out of memory");
    size_t n = 0;
    int rc = parse_ops(cmd, opstr, idx, &n);
    if (rc) {
        free(idx);
        return rc;
    }
    const char *path = argv[optind];
    model md;
    if ((rc = model_load(path, &md))) {
        free(idx);
        return rc;
    }
    npk_rk_tfl_layer *ls = calloc(n, sizeof *ls);
    const npk_rk_layer **lp = calloc(n, sizeof *lp);
    const char **names = calloc(n, sizeof *names);
    npk_rk_bundle b = {0};
    npk_error err = {0};
    size_t lowered = 0;
    if (!ls || !lp || !names) {
        rc = cli_fail("out of memory");
        goto done;
    }
    /* Progress: the layers lowered, then the planner's time in the final line. */
    cli_progress pr;
    cli_progress_start(&pr, "rknpu compile");
    for (size_t i = 0; i < n; i++) {
        if (npk_rk_tfl_lower(&md.m, 0, idx[i], &ls[i], &err)) {
            cli_progress_end(&pr, false);
            rc = cli_error(path, &err);
            goto done;
        }
        lowered = i + 1;
        lp[i] = &ls[i].layer;
        names[i] = ls[i].name;
        cli_progress_update(&pr, "layer", i + 1, n);
    }
    const npk_status planned = npk_rk_bundle_make(lp, names, n, &bo, &b, &err);
    cli_progress_end(&pr, planned == NPK_OK);
    if (planned) {
        /* The planner's error names the operator; its offset is the operator's. */
        for (size_t i = 0; i < n; i++)
            if (!strncmp(err.msg, ls[i].name, strlen(ls[i].name)) &&
                err.msg[strlen(ls[i].name)] == ':') {
                err.has_offset = true;
                err.offset = ls[i].offset;
            }
        rc = cli_error(path, &err);
        goto done;
    }
    if (dir && (rc = write_bundle(dir, path, &b, ls))) goto done;
#ifdef NPK_HAVE_CJSON
    if (json) {
        cli_print_json(json_bundle(path, &b, ls), false);
        goto done;
    }
#endif
    print_summary(&b, ls, dir);
done:
    npk_rk_bundle_free(&b);
    for (size_t i = 0; i < lowered; i++) npk_rk_tfl_layer_free(&ls[i]);
    free(ls);
    free(lp);
    free(names);
    free(idx);
    model_free(&md);
    return rc;
}

/* ---- run ---- */

static npk_dtype npy_dtype(npk_rk_ltype t)
{
    return t == NPK_RK_LT_UINT8 ? NPK_U8 : t == NPK_RK_LT_INT8 ? NPK_I8 : NPK_F16;
}

/* An input .npy: the tensor's type, and its shape (leading 1s aside). */
static int load_input(const char *file, const npk_tfl_tensor *t, npk_rk_ltype lt, npk_tensor *x)
{
    npk_error err = {0};
    if (npk_protect_path(file, &err) || npk_npy_load(file, x, &err)) return cli_error(file, &err);
    int a = 0, b = 0;
    while (a < x->ndim && x->shape[a] == 1 && x->ndim - a > (int)t->ndim - b) a++;
    while (b < (int)t->ndim && t->shape[b] == 1 && (int)t->ndim - b > x->ndim - a) b++;
    bool ok = x->dtype == npy_dtype(lt) && x->ndim - a == (int)t->ndim - b;
    for (; ok && a < x->ndim; a++, b++) ok = x->shape[a] == t->shape[b];
    if (!ok) {
        char want[128], got[96];
        size_t k = (size_t)snprintf(want, sizeof want, "%s [", npk_dtype_name(npy_dtype(lt)));
        for (uint32_t d = 0; d < t->ndim && k < sizeof want; d++)
            k += (size_t)snprintf(want + k, sizeof want - k, "%s%d", d ? ", " : "", t->shape[d]);
        if (k < sizeof want) snprintf(want + k, sizeof want - k, "]");
        int r =
            cli_fail("%s: the operator's input \"%s\" is %s, the file holds %s %s", file, t->name,
                     want, npk_dtype_name(x->dtype), npk_shape_str(x, got, sizeof got));
        npk_tensor_free(x);
        return r;
    }
    return CLI_OK;
}

/* The interpreter on the operator alone (the graph cut at its inputs and
 * output); out receives the output bytes. */
static int interpret(const model *md, const npk_rk_tfl_layer *tl, const void *const *x,
                     uint8_t *out, size_t bytes)
{
    npk_error err = {0};
    int32_t ins[2];
    uint32_t nin = 0;
    for (int k = 0; k < 2; k++)
        if (tl->inputs[k] >= 0 && !tl->const_data[k]) ins[nin++] = tl->inputs[k];
    npk_tfl_interp_opts io = {0};
    io.inputs = ins;
    io.ninputs = nin;
    io.outputs = &tl->output;
    io.noutputs = 1;
    npk_tfl_interp *it = NULL;
    if (npk_tfl_interp_new(&md->m, &io, &it, &err)) return cli_error(md->path, &err);
    int rc = CLI_OK;
    for (uint32_t i = 0, k = 0; i < nin && !rc; i++, k++) {
        while (tl->const_data[k]) k++;
        npk_tfl_view v;
        if (npk_tfl_interp_input(it, i, &v, &err)) {
            rc = cli_error(md->path, &err);
            break;
        }
        memcpy(v.data, x[k], v.bytes);
    }
    npk_tfl_view o;
    if (!rc && (npk_tfl_interp_invoke(it, &err) || npk_tfl_interp_output(it, 0, &o, &err)))
        rc = cli_error(md->path, &err);
    if (!rc && o.bytes != bytes)
        rc = cli_fail("%s: the interpreter's output has %zu bytes, the NPU's %zu", md->path,
                      o.bytes, bytes);
    if (!rc) memcpy(out, o.data, bytes);
    npk_tfl_interp_free(it);
    return rc;
}

int rknpu_cmd_run(int argc, char **argv)
{
    if (!has_op(argc, argv)) return rknpu_net_run(argc, argv);
    const char *cmd = "rknpu run", *out = NULL, *devpath = NULL, *inputs[2] = {NULL, NULL};
    int64_t op = -1;
    int cores = 1, emu_cores = 3, nin = 0;
    bool check = false;
    npk_rk_devkind kind = NPK_RK_DEV_EMU;
    static const struct option opts[] = {{"op", required_argument, NULL, OPT_OP},
                                         {"input", required_argument, NULL, OPT_INPUT},
                                         {"output", required_argument, NULL, 'o'},
                                         {"check", no_argument, NULL, OPT_CHECK},
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"device", required_argument, NULL, OPT_DEVICE},
                                         {"device-path", required_argument, NULL, OPT_PATH},
                                         {"emu-cores", required_argument, NULL, OPT_EMU_CORES},
                                         {0, 0, 0, 0}};
    int c;
    uint64_t v;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_OP:
            if (!cli_parse_u64(optarg, &v) || v > UINT32_MAX)
                return cli_usage(cmd, "bad operator index '%s'", optarg);
            op = (int64_t)v;
            break;
        case OPT_INPUT:
            if (nin == 2) return cli_usage(cmd, "at most two --input (ADD)");
            inputs[nin++] = optarg;
            break;
        case OPT_CHECK: check = true; break;
        case OPT_CORES:
            if (rknpu_opt_cores(cmd, optarg, &cores)) return CLI_FAIL;
            break;
        case OPT_EMU_CORES:
            if (rknpu_opt_emu_cores(cmd, optarg, &emu_cores)) return CLI_FAIL;
            break;
        case OPT_DEVICE:
            if (rknpu_opt_device(cmd, optarg, &kind)) return CLI_FAIL;
            break;
        case OPT_PATH: devpath = optarg; break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (argc - optind != 1) return cli_usage(cmd, "expected one MODEL.tflite");
    if (op < 0) return cli_usage(cmd, "need --op INDEX");
    if (!nin || !out) return cli_usage(cmd, "need --input X.npy and -o Y.npy");
    model md;
    int rc = model_load(argv[optind], &md);
    if (rc) return rc;
    npk_rk_tfl_layer tl;
    npk_error err = {0};
    npk_tensor x[2];
    memset(x, 0, sizeof x);
    npk_tensor y = {0};
    uint8_t *ref = NULL;
    npk_rk_device *d = NULL;
    if (npk_rk_tfl_lower(&md.m, 0, (uint32_t)op, &tl, &err)) {
        rc = cli_error(md.path, &err);
        model_free(&md);
        return rc;
    }
    const npk_tfl_subgraph *sg = &md.m.subgraphs[0];
    /* The activation inputs in order; constants come from the model. */
    const void *data[2] = {tl.const_data[0], tl.const_data[1]};
    int need = 0, used = 0;
    for (int k = 0; k < 2; k++) need += tl.inputs[k] >= 0 && !tl.const_data[k];
    if (nin != need) {
        rc = cli_usage(cmd, "%s reads %d input tensor%s from outside the model, %d --input given",
                       tl.name, need, need == 1 ? "" : "s", nin);
        goto done;
    }
    for (int k = 0; k < 2 && !rc; k++) {
        if (tl.inputs[k] < 0 || tl.const_data[k]) continue;
        rc = load_input(inputs[used], &sg->tensors[tl.inputs[k]], tl.layer.type, &x[used]);
        if (!rc) data[k] = x[used].data;
        used++;
    }
    if (rc) goto done;
    const npk_tfl_tensor *ot = &sg->tensors[tl.output];
    int64_t shape[NPK_TFL_MAX_DIMS];
    for (uint32_t k = 0; k < ot->ndim && k < NPK_TFL_MAX_DIMS; k++) shape[k] = ot->shape[k];
    if (npk_tensor_alloc(&y, ot->name, npy_dtype(tl.layer.type), (int)ot->ndim, shape, &err)) {
        rc = cli_error(md.path, &err);
        goto done;
    }
    npk_rk_open_opts oo = {NULL, devpath, NULL, emu_cores};
    npk_rk_run_info info;
    if (npk_rk_device_open(kind, &oo, &d, &err)) {
        rc = cli_error(NULL, &err);
        goto done;
    }
    if (npk_rk_run_layer(d, &tl.layer, cores, data[0], data[1], y.data, &info, &err)) {
        if (err.msg[0] && strncmp(err.msg, "operator", 8)) {
            npk_error e2 = {0};
            npk_fail_at(&e2, err.status, tl.offset, "%s: %s", tl.name, err.msg);
            err = e2;
        }
        rc = cli_error(md.path, &err);
        goto done;
    }
    if (npk_npy_save(out, &y, &err)) {
        rc = cli_error(out, &err);
        goto done;
    }
    printf("%s (%s %s) on %s: %zu task%s on %d core%s (%s streams) -> %s\n", tl.name,
           npk_rk_layer_kind_name(tl.layer.kind), npk_rk_ltype_name(tl.layer.type),
           npk_rk_device_name(d), info.tasks, info.tasks == 1 ? "" : "s", info.cores,
           info.cores == 1 ? "" : "s", npk_rk_form_name(info.form), out);
    if (check) {
        size_t bytes = y.nbytes;
        ref = malloc(bytes ? bytes : 1);
        if (!ref) {
            rc = cli_fail("out of memory");
            goto done;
        }
        if ((rc = interpret(&md, &tl, data, ref, bytes))) goto done;
        bool u8 = tl.layer.type == NPK_RK_LT_UINT8;
        size_t exact = 0, off1 = 0, worse = 0, first = SIZE_MAX;
        int maxd = 0;
        const uint8_t *yy = y.data;
        for (size_t i = 0; i < bytes; i++) {
            int a = u8 ? yy[i] : (int8_t)yy[i], bb = u8 ? ref[i] : (int8_t)ref[i];
            int dd = abs(a - bb);
            exact += dd == 0;
            off1 += dd == 1;
            if (dd > 1 && worse++ == 0) first = i;
            if (dd > maxd) maxd = dd;
        }
        printf("check against the interpreter: %zu elements, %zu exact (%.4f%%), %zu off by one, "
               "%zu worse (max difference %d)\n",
               bytes, exact, bytes ? 100.0 * (double)exact / (double)bytes : 100.0, off1, worse,
               maxd);
        if (worse) {
            printf("check: FAILED: element %zu is %d, the interpreter's %d\n", first,
                   u8 ? yy[first] : (int8_t)yy[first], u8 ? ref[first] : (int8_t)ref[first]);
            rc = CLI_PROBLEMS;
        }
    }
done:
    npk_rk_device_close(d);
    free(ref);
    npk_tensor_free(&x[0]);
    npk_tensor_free(&x[1]);
    npk_tensor_free(&y);
    npk_rk_tfl_layer_free(&tl);
    model_free(&md);
    return rc;
}
