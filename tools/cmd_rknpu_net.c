/* npukit rknpu compile / run without --op: the whole model (npukit/rknpu_net.h).
 * compile writes the address map (regcmd.bin, tasks.bin, submit.bin,
 * weights.bin, plan.json) all or nothing and prints a one-screen summary
 * with an estimate of the time on the device; run compiles, binds to a
 * device, runs (the CPU segments on the interpreter) and writes the outputs
 * like `tflite run`; --check runs the interpreter on the same input. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_outdir.h"
#include "cli_tensor_io.h"
#include "cli_timing.h"
#include "cli_views.h"
#include "cmd_rknpu.h"
#include "npukit/image.h"
#include "npukit/rknpu_net.h"
#include "npukit/rknpu_netdir.h"
#include "npukit/rknpu_stream.h"

enum {
    OPT_CORES = 300,
    OPT_FORM,
    OPT_REQUANT,
    OPT_TASKS,
    OPT_INPUT,
    OPT_DEVICE,
    OPT_PATH,
    OPT_EMU_CORES,
    OPT_REPEAT,
    OPT_CHECK,
    OPT_THREADS
};

#define MAX_INPUTS 16

typedef struct loaded {
    const char *path;
    npk_mapped map;
    npk_tfl_model m;
    npk_rk_net net;
    bool compiled;
} loaded;

static void unload(loaded *l)
{
    if (l->compiled) npk_rk_net_free(&l->net);
    npk_tfl_free(&l->m);
    npk_unmap_file(&l->map);
}

static int load_compile(const char *path, const npk_rk_net_opts *o, loaded *l)
{
    npk_error err = {0};
    memset(l, 0, sizeof *l);
    l->path = path;
    if (npk_protect_path(path, &err) || npk_map_file(path, &l->map, &err))
        return cli_error(path, &err);
    if (npk_tfl_parse(l->map.data, l->map.size, &l->m, &err)) {
        npk_unmap_file(&l->map);
        return cli_error(path, &err);
    }
    if (npk_rk_net_compile(&l->m, o, &l->net, &err)) {
        npk_tfl_free(&l->m);
        npk_unmap_file(&l->map);
        return cli_error(path, &err);
    }
    l->compiled = true;
    return CLI_OK;
}

/* A directory `rknpu compile` wrote: the manifest, the model copy checked
 * against it, compiled again and compared with the NPU-side files
 * (npk_rk_netdir_load). Errors name the file at fault. */
static int load_dir(const char *dir, int threads, loaded *l)
{
    npk_error err = {0};
    memset(l, 0, sizeof *l);
    l->path = dir;
    int which;
    if (npk_rk_netdir_open(dir, threads, &l->map, &l->m, &l->net, &which, &err)) {
        if (which < 0) return cli_error(dir, &err);
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, npk_rk_netdir_name(which));
        return cli_error(p, &err);
    }
    l->compiled = true;
    return CLI_OK;
}

static const char *op_name(const npk_tfl_model *m, uint32_t i, char *buf, size_t len)
{
    return npk_tfl_op_name(m, &m->subgraphs[0].operators[i], buf, len);
}

/* Per layer: the estimated time, the slowest core's sum of its tasks. */
static double op_us(const npk_rk_net *net, size_t i, const npk_rk_net_estimate *e)
{
    const npk_rk_lplan *p = &net->ops[i].plan;
    double core[NPK_RKNPU_MAX_CORES] = {0}, worst = 0;
    for (size_t t = 0; t < p->count; t++) {
        int c = p->tasks[t].core;
        if (c < 0 || c >= NPK_RKNPU_MAX_CORES) c = 0;
        core[c] += npk_rk_net_task_us(net, i, t, e, NULL);
    }
    for (int c = 0; c < NPK_RKNPU_MAX_CORES; c++)
        if (core[c] > worst) worst = core[c];
    return worst;
}

/* A submit's estimate: each core runs its tasks of every layer in the
 * submit back to back, the submit ends with its slowest core. */
static double submit_us(const npk_rk_net *net, const npk_rk_net_submit_view *v,
                        const npk_rk_net_estimate *e, double core[NPK_RKNPU_MAX_CORES])
{
    double worst = 0;
    memset(core, 0, NPK_RKNPU_MAX_CORES * sizeof *core);
    for (size_t i = v->first_op; i < v->first_op + v->nops; i++)
        for (size_t t = 0; t < net->ops[i].plan.count; t++) {
            int c = net->ops[i].plan.tasks[t].core;
            if (c < 0 || c >= NPK_RKNPU_MAX_CORES) c = 0;
            core[c] += npk_rk_net_task_us(net, i, t, e, NULL);
        }
    for (int c = 0; c < NPK_RKNPU_MAX_CORES; c++)
        if (core[c] > worst) worst = core[c];
    return worst;
}

static void human(uint64_t b, char *buf, size_t len)
{
    if (b >= 10u << 20)
        snprintf(buf, len, "%.1f MiB", (double)b / (1 << 20));
    else if (b >= 10u << 10)
        snprintf(buf, len, "%.1f KiB", (double)b / (1 << 10));
    else
        snprintf(buf, len, "%" PRIu64 " B", b);
}

static void print_summary(const loaded *l, const char *dir, bool tasks)
{
    const npk_rk_net *net = &l->net;
    const npk_tfl_model *m = &l->m;
    npk_rk_net_estimate e;
    npk_rk_net_estimate_defaults(&e);
    char w[32], a[32], pk[32], r[32], nb[32];
    human(net->weight_bytes, w, sizeof w);
    human(net->act_bytes, a, sizeof a);
    human(net->peak_live, pk, sizeof pk);
    human((uint64_t)net->regcmd_entries * 8, r, sizeof r);
    printf("%s: %u operators: %u on the NPU (%zu tasks, %zu submits, %d core%s), %u free "
           "(reshape, quantize, concatenation), %u on the CPU; %zu segments\n",
           l->path, m->subgraphs[0].noperators, net->npu_ops, net->ntasks, npk_rk_net_submits(net),
           net->opts.cores, net->opts.cores == 1 ? "" : "s", net->free_ops, net->cpu_ops,
           net->nsegs);
    if (net->cpu_ops) {
        printf("  CPU:");
        int shown = 0;
        for (size_t k = 0; k < net->nsegs; k++) {
            const npk_rk_net_seg *s = &net->segs[k];
            for (uint32_t i = s->op_first; !s->npu && i < s->op_first + s->op_count; i++) {
                if (shown++ < 12) printf(" %u %s", i, op_name(m, i, nb, sizeof nb));
            }
        }
        printf(shown > 12 ? " ... (%d)\n" : "\n", shown);
    }
    printf("  weights %s, activations %s (largest live set %s), streams %s, %.1f GMAC\n", w, a, pk,
           r, (double)net->macs / 1e9);
    double total = 0, core_us[NPK_RKNPU_MAX_CORES];
    npk_rk_net_submit_view v;
    for (size_t k = 0; npk_rk_net_submit_at(net, k, &v); k++)
        total += submit_us(net, &v, &e, core_us);
    size_t slow[5] = {0};
    double slow_us[5] = {0};
    for (size_t i = 0; i < net->nops; i++) {
        double us = op_us(net, i, &e);
        for (int k = 0; k < 5; k++)
            if (us > slow_us[k]) {
                memmove(slow + k + 1, slow + k, (4 - (size_t)k) * sizeof *slow);
                memmove(slow_us + k + 1, slow_us + k, (4 - (size_t)k) * sizeof *slow_us);
                slow[k] = i, slow_us[k] = us;
                break;
            }
    }
    printf("  estimated NPU time %.2f ms per inference: per task max(MACs / (%.0f MACs/cycle x "
           "%.1f GHz), bytes / %.0f GB/s) + %.0f us,\n"
           "    depthwise, pools and adds at 1/%.0f of the MAC array; tasks on different cores "
           "overlap, submits do not\n",
           total / 1000, e.macs_per_cycle, e.clock_hz / 1e9, e.bytes_per_s / 1e9, e.task_us,
           1 / e.dw_efficiency);
    if (net->opts.cores > 1) {
        /* Each core's busy time: what spreading a segment's layers over the
         * cores without a barrier per layer could at best bring the total to. */
        double busy[NPK_RKNPU_MAX_CORES] = {0};
        for (size_t i = 0; i < net->nops; i++)
            for (size_t t = 0; t < net->ops[i].plan.count; t++) {
                int c = net->ops[i].plan.tasks[t].core;
                busy[c >= 0 && c < NPK_RKNPU_MAX_CORES ? c : 0] +=
                    npk_rk_net_task_us(net, i, t, &e, NULL);
            }
        printf("  per core busy:");
        for (int c = 0; c < net->opts.cores; c++)
            printf("%s core %d %.2f ms (%.0f%%)", c ? "," : "", c, busy[c] / 1000,
                   total > 0 ? 100 * busy[c] / total : 0);
        printf("; the rest waits for the slowest core of each submit\n");
    }
    if (net->opts.cores > 1) {
        /* Each submit: its layers (operators) and tasks per core. */
        printf("  submits (operators: tasks per core):");
        for (size_t k = 0; npk_rk_net_submit_at(net, k, &v); k++) {
            const npk_rk_net_op *f = &net->ops[v.first_op], *b = &net->ops[v.first_op + v.nops - 1];
            if (k) printf(",");
            if (v.nops > 1)
                printf(" %u-%u:", f->op_index, b->op_index);
            else
                printf(" %u:", f->op_index);
            for (int c = 0; c < v.cores; c++) printf("%s%u", c ? "+" : " ", v.core_count[c]);
        }
        printf("\n");
    }
    printf("  slowest layers:");
    for (int k = 0; k < 5 && k < (int)net->nops; k++)
        printf("%s %s %.0f us", k ? "," : "", net->ops[slow[k]].tl.name, slow_us[k]);
    printf("\n");
    if (tasks)
        for (size_t i = 0; i < net->nops; i++)
            for (size_t t = 0; t < net->ops[i].plan.count; t++) {
                uint64_t bytes;
                double us = npk_rk_net_task_us(net, i, t, &e, &bytes);
                const npk_rk_ltask *tk = &net->ops[i].plan.tasks[t];
                printf("  task %u: %s core %d: %" PRIu64 " MACs, %" PRIu64 " bytes: %.1f us\n",
                       net->task_rec[net->ops[i].task_first + t], net->ops[i].tl.name, tk->core,
                       tk->macs, bytes, us);
            }
    if (dir) printf("  written to %s\n", dir);
}

/* ---- plan.json ---- */

#ifdef NPK_HAVE_CJSON
static cJSON *json_tensor(const loaded *l, int32_t t)
{
    const npk_rk_net *net = &l->net;
    const npk_rk_net_tensor *g = &net->tensors[t];
    const npk_rk_net_tensor *r = &net->tensors[g->root];
    cJSON *j = cJSON_CreateObject();
    cli_json_u64(j, "tensor", (uint64_t)t);
    cli_json_str(j, "name", l->m.subgraphs[0].tensors[t].name);
    cJSON *shape = cJSON_AddArrayToObject(j, "hwc");
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(g->h));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(g->w));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(g->c));
    if (r->where & NPK_RK_NET_DEV) {
        cli_json_hex(j, "addr", net->opts.act_addr + r->dev_off + g->root_off);
        cli_json_u64(j, "bytes", g->root_off ? g->dev_bytes : r->dev_bytes);
        if (g->root != t) cli_json_u64(j, "shares", (uint64_t)g->root);
        if (g->root_off) cli_json_u64(j, "offset_in_shared", g->root_off);
        cJSON *alive = cJSON_AddArrayToObject(j, "alive");
        cJSON_AddItemToArray(alive, cJSON_CreateNumber(r->first));
        cJSON_AddItemToArray(alive, cJSON_CreateNumber(r->last));
    }
    return j;
}

static cJSON *json_plan(const loaded *l)
{
    const npk_rk_net *net = &l->net;
    const npk_tfl_model *m = &l->m;
    npk_rk_net_estimate e;
    npk_rk_net_estimate_defaults(&e);
    cJSON *j = cJSON_CreateObject();
    cli_json_str(j, "model", l->path);
    /* The copy DIR runs from (net.bin checks it by size and hash). */
    cJSON *mc = cJSON_AddObjectToObject(j, "model_copy");
    cli_json_str(mc, "file", NPK_RK_NETDIR_MODEL_NAME);
    cli_json_u64(mc, "bytes", (uint64_t)l->map.size);
    char hx[20];
    snprintf(hx, sizeof hx, "%016" PRIx64, npk_rk_netdir_hash(l->map.data, l->map.size));
    cli_json_str(mc, "fnv1a64", hx);
    cli_json_u64(j, "cores", (uint64_t)net->opts.cores);
    cli_json_str(j, "form", npk_rk_form_name(net->opts.form));
    cli_json_str(j, "requant", npk_rk_rq_mode_name(net->opts.requant));
    cJSON *reg = cJSON_AddObjectToObject(j, "regions");
    struct {
        const char *n;
        uint32_t a;
        uint64_t b;
    } rg[3] = {{"activations", net->opts.act_addr, net->act_bytes},
               {"weights", net->opts.weight_addr, net->weight_bytes},
               {"regcmd", net->opts.regcmd_addr, (uint64_t)net->regcmd_entries * 8}};
    for (int i = 0; i < 3; i++) {
        cJSON *o = cJSON_AddObjectToObject(reg, rg[i].n);
        cli_json_hex(o, "addr", rg[i].a);
        cli_json_u64(o, "bytes", rg[i].b);
    }
    cli_json_u64(j, "largest_live_set", net->peak_live);
    cJSON *est = cJSON_AddObjectToObject(j, "estimate");
    cJSON_AddNumberToObject(est, "macs_per_cycle", e.macs_per_cycle);
    cJSON_AddNumberToObject(est, "clock_hz", e.clock_hz);
    cJSON_AddNumberToObject(est, "bytes_per_s", e.bytes_per_s);
    cJSON_AddNumberToObject(est, "task_us", e.task_us);
    cJSON_AddNumberToObject(est, "depthwise_efficiency", e.dw_efficiency);
    cJSON *segs = cJSON_AddArrayToObject(j, "segments");
    char nb[32];
    for (size_t k = 0; k < net->nsegs; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        cJSON *o = cJSON_CreateObject();
        cli_json_str(o, "on", s->npu ? "npu" : "cpu");
        cJSON *ops = cJSON_AddArrayToObject(o, "ops");
        for (uint32_t i = s->op_first; i < s->op_first + s->op_count; i++) {
            cJSON *x = cJSON_CreateObject();
            cli_json_u64(x, "op", i);
            cli_json_str(x, "code", op_name(m, i, nb, sizeof nb));
            cJSON_AddItemToArray(ops, x);
        }
        cJSON *in = cJSON_AddArrayToObject(o, s->npu ? "packed" : "inputs");
        for (uint32_t t = 0; t < s->nin; t++) cJSON_AddItemToArray(in, json_tensor(l, s->in[t]));
        cJSON *out = cJSON_AddArrayToObject(o, s->npu ? "unpacked" : "outputs");
        for (uint32_t t = 0; t < s->nout; t++) cJSON_AddItemToArray(out, json_tensor(l, s->out[t]));
        cJSON_AddItemToArray(segs, o);
    }
    cli_json_u64(j, "submits", npk_rk_net_submits(net));
    /* Each submit: its layers (indices in npu_ops), records and per-core
     * ranges in them (records of a submit over several layers and cores
     * are grouped by core). */
    cJSON *sl = cJSON_AddArrayToObject(j, "submit_list");
    npk_rk_net_submit_view v;
    for (size_t k = 0; npk_rk_net_submit_at(net, k, &v); k++) {
        cJSON *x = cJSON_CreateObject();
        cli_json_u64(x, "first_layer", v.first_op);
        cli_json_u64(x, "layers", v.nops);
        cli_json_u64(x, "first_record", v.task_first);
        cli_json_u64(x, "records", v.task_count);
        cJSON *cs = cJSON_AddArrayToObject(x, "cores");
        for (int c = 0; c < v.cores; c++) {
            cJSON *y = cJSON_CreateObject();
            cli_json_u64(y, "first_record", v.task_first + v.core_first[c]);
            cli_json_u64(y, "records", v.core_count[c]);
            cJSON_AddItemToArray(cs, y);
        }
        cJSON_AddItemToArray(sl, x);
    }
    cJSON *layers = cJSON_AddArrayToObject(j, "npu_ops");
    size_t submit = 0, seg = 0;
    for (size_t i = 0; i < net->nops; i++) {
        const npk_rk_net_op *op = &net->ops[i];
        while (seg < net->nsegs &&
               (!net->segs[seg].npu || i >= net->segs[seg].npu_first + net->segs[seg].npu_count))
            seg++;
        const npk_rk_net_seg *sg = &net->segs[seg];
        if (i > 0 && !(sg->merged && i != sg->npu_first) && op->run) submit++;
        const npk_rk_lplan *p = &op->plan;
        cJSON *o = cJSON_CreateObject();
        cli_json_u64(o, "op", op->op_index);
        cli_json_str(o, "name", op->tl.name);
        cli_json_str(o, "kind", npk_rk_layer_kind_name(p->layer.kind));
        cli_json_str(o, "type", npk_rk_ltype_name(p->layer.type));
        if (op->widened) cJSON_AddBoolToObject(o, "input_channels_widened", true);
        cJSON_AddItemToObject(o, "input", json_tensor(l, op->in[0]));
        if (op->in[1] >= 0) cJSON_AddItemToObject(o, "input2", json_tensor(l, op->in[1]));
        cJSON_AddItemToObject(o, "output", json_tensor(l, op->out));
        if (p->rq.two_pass) { /* pass 1's output, inside the output tensor's bytes */
            cJSON *s = cJSON_AddObjectToObject(o, "sign_scratch");
            cli_json_hex(s, "addr",
                         net->opts.act_addr + net->tensors[op->out].dev_off + p->sign_off);
            cli_json_u64(s, "bytes", p->sign_bytes);
        }
        cJSON *wt = cJSON_AddObjectToObject(o, "weights");
        cli_json_hex(wt, "addr", net->opts.weight_addr + op->weight_off);
        cli_json_u64(wt, "bytes", p->weight_bytes);
        cli_json_u64(o, "submit", submit);
        cli_json_u64(o, "cores", (uint64_t)p->cores);
        cJSON *ts = cJSON_AddArrayToObject(o, "tasks");
        for (size_t t = 0; t < p->count; t++) {
            const npk_rk_ltask *tk = &p->tasks[t];
            uint64_t bytes;
            double us = npk_rk_net_task_us(net, i, t, &e, &bytes);
            cJSON *x = cJSON_CreateObject();
            cli_json_u64(x, "index", net->task_rec[op->task_first + t]);
            cli_json_u64(x, "core", (uint64_t)tk->core);
            cli_json_u64(x, "row", tk->oy0);
            cli_json_u64(x, "rows", tk->oh);
            cli_json_u64(x, "channel", tk->oc0);
            cli_json_u64(x, "channels", tk->ocn);
            cli_json_hex(x, "regcmd", net->opts.regcmd_addr + op->regcmd_off + tk->regcmd_off);
            cli_json_u64(x, "entries", tk->entries);
            cli_json_u64(x, "macs", tk->macs);
            cli_json_u64(x, "bytes", bytes);
            cJSON_AddNumberToObject(x, "estimate_us", round(us * 10) / 10);
            cJSON_AddItemToArray(ts, x);
        }
        cJSON_AddItemToArray(layers, o);
    }
    cJSON *cpu = cJSON_AddArrayToObject(j, "cpu_ops");
    for (size_t k = 0; k < net->nsegs; k++) {
        const npk_rk_net_seg *s = &net->segs[k];
        for (uint32_t i = s->op_first; !s->npu && i < s->op_first + s->op_count; i++) {
            cJSON *x = cJSON_CreateObject();
            cli_json_u64(x, "op", i);
            cli_json_str(x, "code", op_name(m, i, nb, sizeof nb));
            cJSON_AddItemToArray(cpu, x);
        }
    }
    return j;
}
#endif

/* The NPU side (npk_rk_netdir_files), plan.json, and what makes DIR
 * runnable on its own: a copy of the model and the manifest naming it. */
static int write_compiled(const char *dir, const loaded *l)
{
    const npk_rk_net *net = &l->net;
    npk_rk_netdir_blob nf[NPK_RK_NETDIR_FILES];
    npk_error err = {0};
    if (npk_rk_netdir_files(net, nf, &err)) return cli_error(NULL, &err);
    uint8_t manifest[NPK_RK_NETDIR_MANIFEST_SIZE];
    npk_rk_netdir_manifest_write(net, nf, l->map.data, l->map.size, manifest);
    char *json = NULL;
    int rc = CLI_OK;
    cli_out_file f[8];
    size_t n = 0;
    for (int i = 0; i < NPK_RK_NETDIR_FILES; i++)
        f[n++] = (cli_out_file){npk_rk_netdir_name(i), nf[i].data, nf[i].len};
    f[n++] = (cli_out_file){NPK_RK_NETDIR_MODEL_NAME, l->map.data, l->map.size};
    f[n++] = (cli_out_file){NPK_RK_NETDIR_MANIFEST_NAME, manifest, sizeof manifest};
#ifdef NPK_HAVE_CJSON
    cJSON *j = json_plan(l);
    char *s = j ? cli_json_text(j, false) : NULL; /* UTF-8 repaired: names from the model */
    cJSON_Delete(j);
    size_t len = s ? strlen(s) : 0;
    json = s ? realloc(s, len + 2) : NULL;
    if (!json) {
        free(s);
        rc = cli_fail("out of memory");
    } else {
        json[len] = '\n';
        f[n++] = (cli_out_file){"plan.json", json, len + 1};
    }
#else
    fprintf(stderr, "npukit: built without libcjson: plan.json is not written\n");
#endif
    if (rc == CLI_OK) rc = cli_write_dir(dir, f, n);
    npk_rk_netdir_files_free(nf);
    free(json);
    return rc;
}

int rknpu_net_compile(int argc, char **argv)
{
    const char *cmd = "rknpu compile", *dir = NULL;
    npk_rk_net_opts no = {1, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    bool tasks = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"form", required_argument, NULL, OPT_FORM},
                                         {"requant", required_argument, NULL, OPT_REQUANT},
                                         {"tasks", no_argument, NULL, OPT_TASKS},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': dir = optarg; break;
        case OPT_TASKS: tasks = true; break;
        case OPT_CORES:
            if (rknpu_opt_cores(cmd, optarg, &no.cores)) return CLI_FAIL;
            break;
        case OPT_FORM:
            if (rknpu_opt_form(cmd, optarg, &no.form)) return CLI_FAIL;
            break;
        case OPT_REQUANT:
            if (rknpu_opt_requant(cmd, optarg, &no.requant)) return CLI_FAIL;
            break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (argc - optind != 1) return cli_usage(cmd, "expected one MODEL.tflite");
    if (!dir) return cli_usage(cmd, "need -o DIR (or --op INDEX for single operators)");
    loaded l;
    int rc = load_compile(argv[optind], &no, &l);
    if (rc) return rc;
    rc = write_compiled(dir, &l);
    if (!rc) print_summary(&l, dir, tasks);
    unload(&l);
    return rc;
}

/* ---- run ---- */

/* --image PICTURE into the input that takes a picture (cli_views, as `tflite
 * run` fills it), then --input [NAME=]X.npy ... into the others. */
static int assign_inputs(npk_rk_net_exec *x, char **args, int nargs, cli_views *pv,
                         npk_tfl_view *pic_view, const char *model)
{
    npk_error err = {0};
    uint32_t n = npk_rk_net_ninputs(x);
    const char *path[MAX_INPUTS] = {0};
    npk_tfl_view views[MAX_INPUTS];
    int picture = -1;
    if (n > MAX_INPUTS) return cli_fail("the model has %u inputs (at most %d)", n, MAX_INPUTS);
    for (uint32_t i = 0; i < n; i++)
        if (npk_rk_net_input(x, i, &views[i], &err)) return cli_error(NULL, &err);
    if (pv->image) {
        if ((picture = cli_views_picture_input(pv, views, n, model)) < 0) return CLI_FAIL;
        *pic_view = views[picture];
        int rc = cli_views_fill(pv, pic_view, model);
        if (rc) return rc;
        path[picture] = pv->image;
    }
    for (int a = 0; a < nargs; a++) {
        char *eq = strchr(args[a], '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!strcmp(views[i].name, args[a])) k = (int)i;
            if (k < 0) *eq = '=';
        }
        if (k >= 0) {
            if (k == picture) return cli_fail("input \"%s\" takes the picture (--image)", args[a]);
            if (path[k]) return cli_fail("input \"%s\" is given twice", args[a]);
            path[k] = eq + 1;
            continue;
        }
        uint32_t i = 0;
        while (i < n && path[i]) i++;
        if (i == n) return cli_fail("%s: the model has only %u inputs", args[a], n);
        path[i] = args[a];
    }
    for (uint32_t i = 0; i < n; i++) {
        const npk_tfl_view *v = &views[i];
        char want[128], got[160];
        if ((int)i == picture) continue;
        cli_view_describe(v, want, sizeof want);
        if (!path[i]) return cli_fail("no --input for \"%s\" (%s)", v->name, want);
        npk_tensor t;
        if (npk_protect_path(path[i], &err) || npk_npy_load(path[i], &t, &err))
            return cli_error(path[i], &err);
        bool ok = t.dtype == cli_npu_view_dtype(v->type) && t.ndim == (int)v->ndim;
        for (uint32_t d = 0; ok && d < v->ndim; d++) ok = t.shape[d] == v->dims[d];
        if (!ok) {
            char sh[96];
            snprintf(got, sizeof got, "%s %s", npk_dtype_name(t.dtype),
                     npk_shape_str(&t, sh, sizeof sh));
            npk_tensor_free(&t);
            return cli_fail("%s: input \"%s\" must be %s, the file holds %s", path[i], v->name,
                            want, got);
        }
        memcpy(v->data, t.data, v->bytes);
        npk_tensor_free(&t);
    }
    return CLI_OK;
}

/* One output: OUT.npy; several: OUT.safetensors or a directory of .npy
 * named after the tensors (as `tflite run`). All or nothing. */
static int write_outputs(npk_rk_net_exec *x, const char *out, bool quiet)
{
    npk_error err = {0};
    uint32_t n = npk_rk_net_noutputs(x);
    npk_tensor *ts = calloc(n + 1, sizeof *ts);
    cli_out_file *f = calloc(n + 1, sizeof *f);
    char(*names)[136] = calloc(n + 1, sizeof *names);
    uint8_t **bufs = calloc(n + 1, sizeof *bufs);
    uint32_t nt = 0;
    int rc = CLI_OK;
    if (!ts || !f || !names || !bufs) rc = cli_fail("out of memory");
    for (uint32_t i = 0; i < n && !rc; i++) {
        npk_tfl_view v;
        if (npk_rk_net_output(x, i, &v, &err) ||
            cli_view_tensor(&v, cli_npu_view_dtype(v.type), &ts[i], &err))
            rc = cli_error(NULL, &err);
        else
            nt = i + 1;
        cli_npy_file_name(ts[i].name ? ts[i].name : "", names[i], sizeof names[i]);
        for (uint32_t j = 0; j < i && !rc; j++)
            if (!strcmp(names[j], names[i]) && !cli_ends_with(out, ".safetensors") && n > 1)
                rc = cli_fail("outputs \"%s\" and \"%s\" map to the same file name: use "
                              "-o OUT.safetensors",
                              ts[j].name, ts[i].name);
    }
    if (!rc) {
        if (cli_ends_with(out, ".safetensors")) {
            if (npk_st_save(out, ts, nt, &err)) rc = cli_error(out, &err);
        } else if (nt == 1) {
            if (npk_npy_save(out, &ts[0], &err)) rc = cli_error(out, &err);
        } else {
            for (uint32_t i = 0; i < nt && !rc; i++) {
                if (npk_npy_encode(&ts[i], &bufs[i], &f[i].len, &err)) rc = cli_error(out, &err);
                f[i].name = names[i];
                f[i].data = bufs[i];
            }
            if (!rc) rc = cli_write_dir(out, f, nt);
        }
    }
    for (uint32_t i = 0; !rc && !quiet && i < nt; i++) {
        char buf[96];
        printf("output \"%s\" %s %s%s%s\n", ts[i].name ? ts[i].name : "",
               npk_shape_str(&ts[i], buf, sizeof buf), npk_dtype_name(ts[i].dtype),
               nt > 1 && !cli_ends_with(out, ".safetensors") ? " -> " : "",
               nt > 1 && !cli_ends_with(out, ".safetensors") ? names[i] : "");
    }
    for (uint32_t i = 0; i < nt; i++) {
        npk_tensor_free(&ts[i]);
        free(bufs[i]);
    }
    free(ts);
    free(f);
    free(names);
    free(bufs);
    return rc;
}

static double value_at(const npk_tfl_view *v, size_t i)
{
    const uint8_t *d = v->data;
    float f;
    int32_t i32;
    int64_t i64;
    switch (v->type) {
    case NPK_TFL_UINT8: return d[i];
    case NPK_TFL_INT8: return (int8_t)d[i];
    case NPK_TFL_FLOAT32: memcpy(&f, d + 4 * i, 4); return f;
    case NPK_TFL_INT32: memcpy(&i32, d + 4 * i, 4); return i32;
    case NPK_TFL_INT64: memcpy(&i64, d + 8 * i, 8); return (double)i64;
    default: return 0;
    }
}

/* Per output: exact / off by one / worse, and the top-1 class of outputs
 * with one non-1 dimension. Exit 1 when a top-1 differs. */
static int check(npk_rk_net_exec *x, const loaded *l, int threads)
{
    npk_error err = {0};
    npk_tfl_interp *it;
    npk_tfl_interp_opts io = {0};
    io.threads = threads;
    if (npk_tfl_interp_new(&l->m, &io, &it, &err)) return cli_error(l->path, &err);
    int rc = CLI_OK;
    for (uint32_t i = 0; i < npk_rk_net_ninputs(x) && !rc; i++) {
        npk_tfl_view a, b;
        if (npk_rk_net_input(x, i, &a, &err) || npk_tfl_interp_input(it, i, &b, &err))
            rc = cli_error(l->path, &err);
        else
            memcpy(b.data, a.data, b.bytes);
    }
    if (!rc && npk_tfl_interp_invoke(it, &err)) rc = cli_error(l->path, &err);
    for (uint32_t i = 0; i < npk_rk_net_noutputs(x) && !rc; i++) {
        npk_tfl_view a, b;
        if (npk_rk_net_output(x, i, &a, &err) || npk_tfl_interp_output(it, i, &b, &err)) {
            rc = cli_error(l->path, &err);
            break;
        }
        size_t es = npk_tfl_type_size(b.type), n = es ? b.bytes / es : 0;
        size_t exact = 0, off1 = 0, worse = 0, ta = 0, tb = 0;
        double maxd = 0;
        for (size_t k = 0; k < n && a.bytes == b.bytes; k++) {
            double va = value_at(&a, k), vb = value_at(&b, k), d = fabs(va - vb);
            exact += d == 0;
            off1 += d > 0 && d <= 1;
            worse += d > 1;
            if (d > maxd) maxd = d;
            if (va > value_at(&a, ta)) ta = k;
            if (vb > value_at(&b, tb)) tb = k;
        }
        int big = 0;
        for (uint32_t d = 0; d < b.ndim; d++) big += b.dims[d] > 1;
        printf("check \"%s\": %zu elements, %zu exact (%.4f%%), %zu off by one, %zu worse (max "
               "difference %g)",
               b.name, n, exact, n ? 100.0 * (double)exact / (double)n : 100.0, off1, worse, maxd);
        if (big == 1 && n > 1) {
            printf("; top-1 %zu, interpreter %zu: %s", ta, tb, ta == tb ? "equal" : "DIFFERENT");
            if (ta != tb) rc = CLI_PROBLEMS;
        }
        printf("\n");
    }
    npk_tfl_interp_free(it);
    return rc;
}

/* The task view of the outputs (cli_views: the same text as `tflite run`). */
static int show_views(npk_rk_net_exec *x, cli_views *pv, const npk_tfl_view *pic_view,
                      const char *model)
{
    npk_error err = {0};
    const uint32_t n = npk_rk_net_noutputs(x);
    npk_tfl_view *ov = calloc(n + 1, sizeof *ov);
    int rc = ov ? CLI_OK : cli_fail("out of memory");
    for (uint32_t i = 0; i < n && !rc; i++)
        if (npk_rk_net_output(x, i, &ov[i], &err)) rc = cli_error(model, &err);
    if (!rc) rc = cli_views_show(pv, ov, n, pv->image ? pic_view : NULL);
    free(ov);
    return rc;
}

int rknpu_net_run(int argc, char **argv)
{
    const char *cmd = "rknpu run", *out = NULL, *devpath = NULL;
    char *inputs[MAX_INPUTS];
    int nin = 0, emu_cores = 3;
    uint64_t repeat = 1, v;
    bool do_check = false, cores_set = false, requant_set = false;
    npk_rk_devkind kind = NPK_RK_DEV_EMU;
    npk_rk_net_opts no = {1, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    static const struct option opts[] = {{"input", required_argument, NULL, OPT_INPUT},
                                         {"output", required_argument, NULL, 'o'},
                                         {"check", no_argument, NULL, OPT_CHECK},
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"repeat", required_argument, NULL, OPT_REPEAT},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"device", required_argument, NULL, OPT_DEVICE},
                                         {"device-path", required_argument, NULL, OPT_PATH},
                                         {"emu-cores", required_argument, NULL, OPT_EMU_CORES},
                                         {"requant", required_argument, NULL, OPT_REQUANT},
                                         CLI_VIEW_OPTIONS,
                                         {0, 0, 0, 0}};
    int c;
    cli_views views;
    cli_views_init(&views, cmd);
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_INPUT:
            if (nin == MAX_INPUTS) return cli_usage(cmd, "too many --input");
            inputs[nin++] = optarg;
            break;
        case OPT_CHECK: do_check = true; break;
        case OPT_CORES:
            if (rknpu_opt_cores(cmd, optarg, &no.cores)) return CLI_FAIL;
            cores_set = true;
            break;
        case OPT_REPEAT:
            if (!cli_parse_u64(optarg, &v) || v < 1 || v > 100000)
                return cli_usage(cmd, "--repeat is 1..100000");
            repeat = v;
            break;
        case OPT_THREADS:
            if (!cli_parse_u64(optarg, &v) || v < 1 || v > 64)
                return cli_usage(cmd, "--threads is 1..64");
            no.threads = (int)v;
            break;
        case OPT_EMU_CORES:
            if (rknpu_opt_emu_cores(cmd, optarg, &emu_cores)) return CLI_FAIL;
            break;
        case OPT_DEVICE:
            if (rknpu_opt_device(cmd, optarg, &kind)) return CLI_FAIL;
            break;
        case OPT_PATH: devpath = optarg; break;
        case OPT_REQUANT:
            if (rknpu_opt_requant(cmd, optarg, &no.requant)) return CLI_FAIL;
            requant_set = true;
            break;
        default: {
            const int r = cli_views_option(&views, c, optarg);
            if (r < 0) return cli_bad_option(cmd, argv);
            if (r) return r;
        }
        }
    }
    if (argc - optind != 1) return cli_usage(cmd, "expected one MODEL.tflite or DIR");
    if ((!nin && !views.image) || (!out && views.task == CLI_TASK_NONE))
        return cli_usage(cmd, "need --input [NAME=]X.npy (or --image PICTURE) and -o OUT or a "
                              "task view");
    int rc = cli_views_check(&views);
    if (rc) return rc;
    if (views.json && do_check) return cli_usage(cmd, "--check prints text: not with --json");
    struct stat sb;
    bool is_dir = !stat(argv[optind], &sb) && S_ISDIR(sb.st_mode);
    if (is_dir && cores_set)
        return cli_usage(cmd, "--cores: %s was compiled for a core count (rknpu compile --cores)",
                         argv[optind]);
    if (is_dir && requant_set)
        return cli_usage(cmd, "--requant: %s was compiled in one mode (rknpu compile --requant)",
                         argv[optind]);
    if (kind == NPK_RK_DEV_ROCKET) no.form = NPK_RK_FORM_ROCKET;
    if ((rc = cli_views_load(&views))) {
        cli_views_free(&views);
        return rc;
    }
    loaded l;
    rc = is_dir ? load_dir(argv[optind], no.threads, &l) : load_compile(argv[optind], &no, &l);
    if (!rc && is_dir && kind == NPK_RK_DEV_ROCKET && l.net.opts.form != NPK_RK_FORM_ROCKET) {
        rc = cli_fail("%s: compiled in the vendor form; --device rocket needs `rknpu compile "
                      "--form rocket`",
                      argv[optind]);
        unload(&l);
    }
    if (rc) {
        cli_views_free(&views);
        return rc;
    }
    npk_error err = {0};
    npk_rk_device *d = NULL;
    npk_rk_net_exec *x = NULL;
    npk_tfl_view pic_view;
    memset(&pic_view, 0, sizeof pic_view);
    double *ms = NULL;
#ifdef NPK_HAVE_CJSON
    cJSON *j = NULL;
#endif
    npk_rk_open_opts oo = {NULL, devpath, NULL, emu_cores};
    if (npk_rk_device_open(kind, &oo, &d, &err)) {
        rc = cli_error(NULL, &err);
        goto done;
    }
    if (npk_rk_net_exec_new(&l.net, d, &x, &err)) {
        rc = cli_error(l.path, &err);
        goto done;
    }
    if ((rc = assign_inputs(x, inputs, nin, &views, &pic_view, l.path))) goto done;
    ms = calloc(repeat, sizeof *ms);
    if (!ms) {
        rc = cli_fail("out of memory");
        goto done;
    }
    npk_rk_net_timing tm = {0};
    for (uint64_t r = 0; r < repeat; r++) {
        const double t0 = cli_now_ms();
        if (npk_rk_net_run(x, &tm, &err)) {
            rc = cli_error(l.path, &err);
            goto done;
        }
        ms[r] = cli_now_ms() - t0;
    }
    if (out && (rc = write_outputs(x, out, views.json))) goto done;
#ifdef NPK_HAVE_CJSON
    if (views.json) {
        j = cJSON_CreateObject();
        cli_json_str(j, "model", l.path);
        cli_json_str(j, "device", npk_rk_device_name(d));
        cJSON *a = cJSON_AddArrayToObject(j, "runs_ms");
        for (uint64_t r = 0; r < repeat; r++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ms[r]));
        cJSON_AddNumberToObject(j, "npu_ms", tm.npu_ms);
        cJSON_AddNumberToObject(j, "cpu_ms", tm.cpu_ms);
        cJSON_AddNumberToObject(j, "layout_ms", tm.convert_ms);
    }
#endif
    cli_sort_ms(ms, repeat);
    if (!views.json)
        printf("%s on %s: %u ops on the NPU (%zu submits, %zu tasks), %u on the CPU; %s%.2f ms "
               "(NPU %.2f, CPU %.2f, layout %.2f)\n",
               l.path, npk_rk_device_name(d), l.net.npu_ops, tm.submits, l.net.ntasks,
               l.net.cpu_ops, repeat > 1 ? "median " : "", ms[repeat / 2], tm.npu_ms, tm.cpu_ms,
               tm.convert_ms);
    if (views.task != CLI_TASK_NONE && (rc = show_views(x, &views, &pic_view, l.path))) goto done;
#ifdef NPK_HAVE_CJSON
    if (j) {
        cli_views_json(&views, j);
        cli_print_json(j, false);
        j = NULL;
    }
#endif
    if (do_check) rc = check(x, &l, no.threads);
done:
#ifdef NPK_HAVE_CJSON
    cJSON_Delete(j);
#endif
    free(ms);
    npk_rk_net_exec_free(x);
    npk_rk_device_close(d);
    unload(&l);
    cli_views_free(&views);
    return rc;
}
