/* npukit edgetpu run: whole compiled models (and pipelines of segment
 * models) with their Edge TPU ops on an accelerator or the emulator and the
 * other operators on the interpreter; inputs from .npy files or a picture,
 * outputs to .npy / safetensors and as task views. A thin layer over
 * edgetpu_graph.h, edgetpu_usb.h, edgetpu_emu.h and vision.h. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"
#include "cli_tensor_io.h"
#include "cli_timing.h"
#include "cli_views.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_graph.h"
#include "npukit/edgetpu_usb.h"

int cmd_edgetpu_run(int argc, char **argv);

#define MAX_INPUT_ARGS 64
#define MAX_SEGMENTS   8 /* the emulator holds 8 models */

typedef struct segment {
    const char *path;
    npk_mapped map;
    npk_etpu_model m;
    bool parsed;
    npk_etpu_graph *g;
} segment;

typedef struct run_ctx {
    segment seg[MAX_SEGMENTS];
    uint32_t nseg;
    npk_etpu_pipeline *pipe;
    npk_tfl_view *in; /* pipeline inputs */
    uint32_t nin;
    int picture; /* pipeline input that takes --image, -1 */
    npk_mapped cpu_map, fw;
    npk_tfl_model cpu;
    bool cpu_parsed;
    npk_etpu_emu *emu;
    npk_etpu_transport *usb;
    npk_etpu_device *dev;
    cli_views views;
    bool raw, json;
#ifdef NPK_HAVE_CJSON
    cJSON *j;
#endif
} run_ctx;

static void run_free(run_ctx *r)
{
    npk_etpu_close(r->dev);
    npk_etpu_transport_close(r->usb);
    npk_etpu_emu_free(r->emu);
    npk_etpu_pipeline_free(r->pipe);
    for (uint32_t s = 0; s < r->nseg; s++) {
        npk_etpu_graph_free(r->seg[s].g);
        if (r->seg[s].parsed) npk_etpu_free(&r->seg[s].m);
        npk_unmap_file(&r->seg[s].map);
    }
    if (r->cpu_parsed) npk_tfl_free(&r->cpu);
    npk_unmap_file(&r->cpu_map);
    npk_unmap_file(&r->fw);
    free(r->in);
    cli_views_free(&r->views);
#ifdef NPK_HAVE_CJSON
    cJSON_Delete(r->j);
#endif
}

/* Informational lines: not with --json (stdout then holds one JSON object). */
static void info(const run_ctx *r, const char *fmt, ...) NPK_PRINTF(2, 3);
static void info(const run_ctx *r, const char *fmt, ...)
{
    if (r->json) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static bool quantised_int(const npk_tfl_view *v)
{
    return v->q && v->scale > 0 &&
           (v->type == NPK_TFL_UINT8 || v->type == NPK_TFL_INT8 || v->type == NPK_TFL_INT16);
}

/* A tensor from a file into an input view: the view's own type as is, or
 * float values quantised with the view's quantisation (round half to even,
 * saturating). The element count must match. */
static int fill_input(const npk_tfl_view *v, const npk_tensor *t, const char *path)
{
    char want[128];
    cli_view_describe(v, want, sizeof want);
    const size_t n = npk_tensor_count(t), es = npk_tfl_type_size(v->type);
    if (!es || n * es != v->bytes)
        return cli_fail("%s: input \"%.120s\" is %s; the file holds %zu %s values", path, v->name,
                        want, n, npk_dtype_name(t->dtype));
    if (t->dtype == cli_npu_view_dtype(v->type)) {
        memcpy(v->data, t->data, v->bytes);
        return CLI_OK;
    }
    if (t->dtype != NPK_F32 && t->dtype != NPK_F64 && t->dtype != NPK_F16)
        return cli_fail("%s: input \"%.120s\" is %s: give %s values or float32", path, v->name,
                        want, npk_dtype_name(cli_npu_view_dtype(v->type)));
    npk_error err = {0};
    npk_tensor f;
    if (npk_tensor_alloc(&f, NULL, NPK_F32, t->ndim, t->shape, &err) ||
        npk_tensor_convert(t, &f, &err)) {
        npk_tensor_free(&f);
        return cli_error(path, &err);
    }
    const float *x = f.data;
    int rc = CLI_OK;
    if (v->type == NPK_TFL_FLOAT32) {
        memcpy(v->data, x, v->bytes);
    } else if (!quantised_int(v)) {
        rc = cli_fail("%s: input \"%.120s\" (%s) has no quantisation: give %s values", path,
                      v->name, want, npk_dtype_name(cli_npu_view_dtype(v->type)));
    } else {
        const double lo = v->type == NPK_TFL_UINT8  ? 0
                          : v->type == NPK_TFL_INT8 ? -128
                                                    : -32768,
                     hi = v->type == NPK_TFL_UINT8  ? 255
                          : v->type == NPK_TFL_INT8 ? 127
                                                    : 32767;
        for (size_t i = 0; i < n && !rc; i++) {
            if (!isfinite(x[i])) {
                rc = cli_fail("%s: value %zu is not a finite number", path, i);
                break;
            }
            double q = nearbyint((double)x[i] / (double)v->scale) + v->zero_point;
            q = q < lo ? lo : q > hi ? hi : q;
            if (v->type == NPK_TFL_UINT8)
                ((uint8_t *)v->data)[i] = (uint8_t)q;
            else if (v->type == NPK_TFL_INT8)
                ((int8_t *)v->data)[i] = (int8_t)q;
            else
                ((int16_t *)v->data)[i] = (int16_t)q;
        }
    }
    npk_tensor_free(&f);
    return rc;
}

/* --input X.npy (the next input not yet given) or --input NAME=X.npy. */
static int assign_inputs(run_ctx *r, char **args, int nargs)
{
    npk_error err = {0};
    const char **path = calloc(r->nin + 1, sizeof *path);
    int rc = path ? CLI_OK : cli_fail("out of memory");
    for (int a = 0; a < nargs && !rc; a++) {
        char *eq = strchr(args[a], '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            for (uint32_t i = 0; i < r->nin && k < 0; i++)
                if (!strcmp(r->in[i].name, args[a])) k = (int)i;
            if (k < 0) *eq = '='; /* not an input name: a path with '=' in it */
        }
        if (k >= 0) {
            if (path[k] || k == r->picture)
                rc = cli_fail("input \"%.120s\" is given twice", args[a]);
            path[k] = eq + 1;
            continue;
        }
        uint32_t i = 0;
        while (i < r->nin && (path[i] || (int)i == r->picture)) i++;
        if (i == r->nin)
            rc =
                cli_fail("%s: the model%s %u input%s", args[a],
                         r->nseg > 1 ? "s take only" : " has only", r->nin, r->nin == 1 ? "" : "s");
        else
            path[i] = args[a];
    }
    for (uint32_t i = 0; i < r->nin && !rc; i++) {
        if ((int)i == r->picture) continue;
        if (!path[i]) {
            char want[128];
            cli_view_describe(&r->in[i], want, sizeof want);
            const npk_etpu_pipe_port p = npk_etpu_pipeline_input_port(r->pipe, i);
            rc = p.segment > 0
                     ? cli_fail("no --input for \"%.120s\" (%s), an input of %s that no earlier "
                                "model produces",
                                r->in[i].name, want, r->seg[p.segment].path)
                     : cli_fail("no --input for \"%.120s\" (%s)", r->in[i].name, want);
            break;
        }
        npk_tensor t;
        if (npk_protect_path(path[i], &err) || npk_npy_load(path[i], &t, &err)) {
            rc = cli_error(path[i], &err);
            break;
        }
        rc = fill_input(&r->in[i], &t, path[i]);
        npk_tensor_free(&t);
    }
    free(path);
    return rc;
}

/* Several tensors as DIR/NAME.npy through the output-directory transaction
 * (file.h: all or nothing; names safe, short enough for the temporaries,
 * unique). */
static int write_npy_dir(const char *dir, const npk_tensor *ts, size_t n,
                         char (*names)[NPK_OUTDIR_NAME_MAX + 1])
{
    npk_error err = {0};
    npk_outdir *d;
    if (npk_outdir_open(&d, dir, &err)) return cli_error(dir, &err);
    npk_status st = NPK_OK;
    for (size_t i = 0; i < n && !st; i++)
        if (!(st = npk_outdir_name(d, ts[i].name ? ts[i].name : "", ".npy", names[i],
                                   sizeof names[i], &err)))
            st = npk_npy_save_in(d, names[i], &ts[i], &err);
    if (st) {
        npk_outdir_abort(d);
        return cli_error(dir, &err);
    }
    if (npk_outdir_commit(d, &err)) return cli_error(dir, &err);
    return CLI_OK;
}

/* An output view as a tensor: quantised integers dequantised to float32
 * unless raw, everything else in its own type. */
static int output_tensor(const run_ctx *r, const npk_tfl_view *v, npk_tensor *t)
{
    npk_error err = {0};
    int64_t shape[NPK_MAX_DIMS];
    for (uint32_t d = 0; d < v->ndim && d < NPK_MAX_DIMS; d++) shape[d] = v->dims[d];
    const bool deq = !r->raw && quantised_int(v);
    const npk_dtype dt = deq ? NPK_F32 : cli_npu_view_dtype(v->type);
    if (dt == NPK_DT_INVALID)
        return cli_fail("output \"%.120s\" has type %s, not writable as .npy", v->name,
                        npk_tfl_type_name(v->type));
    if (npk_tensor_alloc(t, v->name, dt, (int)v->ndim, shape, &err)) return cli_error(NULL, &err);
    const size_t n = npk_tensor_count(t);
    if (!deq) {
        memcpy(t->data, v->data, v->bytes);
        return CLI_OK;
    }
    for (size_t i = 0; i < n; i++) {
        const double q = v->type == NPK_TFL_UINT8  ? ((const uint8_t *)v->data)[i]
                         : v->type == NPK_TFL_INT8 ? ((const int8_t *)v->data)[i]
                                                   : ((const int16_t *)v->data)[i];
        ((float *)t->data)[i] = (float)((q - v->zero_point) * (double)v->scale);
    }
    return CLI_OK;
}

static int write_outputs(run_ctx *r, const char *out)
{
    npk_error err = {0};
    const uint32_t n = npk_etpu_pipeline_noutputs(r->pipe);
    npk_tensor *ts = calloc(n + 1, sizeof *ts);
    char(*names)[NPK_OUTDIR_NAME_MAX + 1] = calloc(n + 1, sizeof *names);
    uint32_t nt = 0;
    int rc = ts && names ? CLI_OK : cli_fail("out of memory");
    for (uint32_t i = 0; i < n && !rc; i++) {
        npk_tfl_view v;
        if (npk_etpu_pipeline_output(r->pipe, i, &v, &err))
            rc = cli_error(NULL, &err);
        else if (!(rc = output_tensor(r, &v, &ts[nt])))
            nt++;
    }
    const bool dir = !rc && !cli_ends_with(out, ".safetensors") && nt > 1;
    if (!rc) {
        if (cli_ends_with(out, ".safetensors")) {
            if (npk_st_save(out, ts, nt, &err)) rc = cli_error(out, &err);
        } else if (nt == 1) {
            if (npk_npy_save(out, &ts[0], &err)) rc = cli_error(out, &err);
        } else {
            rc = write_npy_dir(out, ts, nt, names);
        }
    }
#ifdef NPK_HAVE_CJSON
    cJSON *arr = !rc && r->json ? cJSON_AddArrayToObject(r->j, "outputs") : NULL;
#endif
    for (uint32_t i = 0; i < nt && !rc; i++) {
        char buf[128], file[4200];
        snprintf(file, sizeof file, "%s%s%s", out, dir && !cli_ends_with(out, "/") ? "/" : "",
                 dir ? names[i] : "");
        info(r, "output \"%.200s\" %s %s -> %s\n", ts[i].name,
             npk_shape_str(&ts[i], buf, sizeof buf), npk_dtype_name(ts[i].dtype), file);
#ifdef NPK_HAVE_CJSON
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cli_json_str(o, "name", ts[i].name);
            cJSON *sh = cJSON_AddArrayToObject(o, "shape");
            for (int d = 0; d < ts[i].ndim; d++)
                cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)ts[i].shape[d]));
            cJSON_AddStringToObject(o, "dtype", npk_dtype_name(ts[i].dtype));
            cli_json_str(o, "file", file);
            cJSON_AddItemToArray(arr, o);
        }
#endif
    }
    for (uint32_t i = 0; i < nt; i++) npk_tensor_free(&ts[i]);
    free(ts);
    free(names);
    return rc;
}

/* Models, pipeline, CPU model and inputs: everything before the device. */
static int prepare(run_ctx *r, char **models, uint32_t nmodels, const char *cpu_path,
                   uint64_t threads, char **inputs, int ninputs)
{
    npk_error err = {0};
    npk_etpu_graph *gs[MAX_SEGMENTS];
    const npk_etpu_graph_opts go = {.threads = (int)threads};
    for (uint32_t s = 0; s < nmodels; s++) {
        segment *sg = &r->seg[r->nseg++];
        sg->path = models[s];
        if (npk_map_file(sg->path, &sg->map, &err) ||
            npk_etpu_parse(sg->map.data, sg->map.size, &sg->m, &err))
            return cli_error(sg->path, &err);
        sg->parsed = true;
        if (sg->m.nops == 0)
            return cli_fail("%s: no Edge TPU op (run it with `npukit tflite run`)", sg->path);
        if (npk_etpu_graph_new(&sg->m, &go, &sg->g, &err)) return cli_error(sg->path, &err);
        gs[s] = sg->g;
    }
    if (npk_etpu_pipeline_new(gs, nmodels, &r->pipe, &err)) return cli_error(NULL, &err);
    r->nin = npk_etpu_pipeline_ninputs(r->pipe);
    if (!(r->in = calloc(r->nin + 1, sizeof *r->in))) return cli_fail("out of memory");
    for (uint32_t i = 0; i < r->nin; i++)
        if (npk_etpu_pipeline_input(r->pipe, i, &r->in[i], &err)) return cli_error(NULL, &err);
    int rc;
    r->picture = -1;
    if ((rc = cli_views_load(&r->views))) return rc;
    if (r->views.image) {
        if ((r->picture = cli_views_picture_input(&r->views, r->in, r->nin, models[0])) < 0)
            return CLI_FAIL;
        if ((rc = cli_views_fill(&r->views, &r->in[r->picture], models[0]))) return rc;
    }
    if ((rc = assign_inputs(r, inputs, ninputs))) return rc;
    if (cpu_path) {
        if (npk_map_file(cpu_path, &r->cpu_map, &err) ||
            npk_tfl_parse(r->cpu_map.data, r->cpu_map.size, &r->cpu, &err))
            return cli_error(cpu_path, &err);
        r->cpu_parsed = true;
    }
    return CLI_OK;
}

static int open_device(run_ctx *r, bool emu, uint64_t vanish, const char *fw_path,
                       const char *cpu_path, uint64_t threads, uint64_t timeout)
{
    npk_error err = {0};
    npk_etpu_transport *t = NULL;
    if (fw_path && npk_map_file(fw_path, &r->fw, &err)) return cli_error(fw_path, &err);
    if (emu) {
        /* The emulator starts in DFU mode when given firmware, to exercise the upload. */
        npk_etpu_emu_opts eo = {.dfu = fw_path != NULL, .vanish_at = vanish};
        if (npk_etpu_emu_new(&eo, &r->emu, &err)) return cli_error(NULL, &err);
        for (uint32_t s = 0; s < r->nseg; s++) {
            if (npk_etpu_emu_add_model(r->emu, &r->seg[s].m, &err))
                return cli_error(r->seg[s].path, &err);
            if (cpu_path &&
                npk_etpu_emu_set_cpu_model(r->emu, &r->seg[s].m, &r->cpu, (int)threads, &err))
                return cli_error(cpu_path, &err);
        }
        t = npk_etpu_emu_transport(r->emu);
    } else if (npk_etpu_usb_open(-1, &r->usb, &err)) {
        return cli_error(NULL, &err);
    } else {
        t = r->usb;
    }
    npk_etpu_open_opts oo = {.firmware = fw_path ? r->fw.data : NULL,
                             .firmware_size = fw_path ? r->fw.size : 0,
                             .timeout_ms = (unsigned)timeout};
    const bool dfu = npk_etpu_transport_is_dfu(t);
    const double t0 = cli_now_ms();
    if (npk_etpu_open(t, &oo, &r->dev, &err)) return cli_error(NULL, &err);
    info(r, "%s: opened in %.3f ms%s\n", t->name, cli_now_ms() - t0,
         dfu       ? " (firmware uploaded over DFU)"
         : fw_path ? " (already in application mode: --firmware not used)"
                   : "");
    return CLI_OK;
}

int cmd_edgetpu_run(int argc, char **argv)
{
    const char *out = NULL, *device = "usb", *fw_path = NULL, *cpu_path = NULL;
    char *inputs[MAX_INPUT_ARGS];
    int ninputs = 0;
    uint64_t repeat = 1, timeout = 0, vanish = 0, threads = 1;
    run_ctx r;
    memset(&r, 0, sizeof r);
    cli_views_init(&r.views, "edgetpu run");
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"input", required_argument, NULL, 'i'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"firmware", required_argument, NULL, 'f'},
                                         {"cpu-model", required_argument, NULL, 'c'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"threads", required_argument, NULL, 'T'},
                                         {"raw", no_argument, NULL, 'R'},
                                         {"emu-vanish", required_argument, NULL, 'V'},
                                         CLI_VIEW_OPTIONS,
                                         {0, 0, 0, 0}};
    int c, rc = CLI_OK;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:i:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'i':
            if (ninputs == MAX_INPUT_ARGS) return cli_usage("edgetpu run", "too many --input");
            inputs[ninputs++] = optarg;
            break;
        case 'd': device = optarg; break;
        case 'f': fw_path = optarg; break;
        case 'c': cpu_path = optarg; break;
        case 'R': r.raw = true; break;
        case 'r':
            if (!cli_parse_u64(optarg, &repeat) || repeat < 1 || repeat > 1000000)
                return cli_usage("edgetpu run", "--repeat must be 1 .. 1000000");
            break;
        case 't':
            if (!cli_parse_u64(optarg, &timeout) || timeout < 1 || timeout > 600000)
                return cli_usage("edgetpu run", "--timeout must be 1 .. 600000 ms");
            break;
        case 'T':
            if (!cli_parse_u64(optarg, &threads) || threads < 1 || threads > 64)
                return cli_usage("edgetpu run", "--threads must be 1 .. 64");
            break;
        case 'V':
            if (!cli_parse_u64(optarg, &vanish) || vanish < 1)
                return cli_usage("edgetpu run", "--emu-vanish must be a transfer number >= 1");
            break;
        default: {
            const int v = cli_views_option(&r.views, c, optarg);
            if (v < 0) return cli_bad_option("edgetpu run", argv);
            if (v) return v;
        }
        }
    }
    const uint32_t nmodels = (uint32_t)(argc - optind);
    if (nmodels < 1 || (!out && r.views.task == CLI_TASK_NONE))
        return cli_usage("edgetpu run",
                         "expected MODEL [MODEL ...] (--input X.npy | --image PICTURE) and -o OUT "
                         "or a task view");
    if (nmodels > MAX_SEGMENTS)
        return cli_usage("edgetpu run", "at most %d models in a pipeline", MAX_SEGMENTS);
    const bool emu = !strcmp(device, "emu");
    if (!emu && strcmp(device, "usb"))
        return cli_usage("edgetpu run", "--device must be usb or emu");
    if (vanish && !emu) return cli_usage("edgetpu run", "--emu-vanish needs --device emu");
    if (cpu_path && !emu)
        return cli_usage("edgetpu run", "--cpu-model answers for the emulator: needs --device emu");
    if ((rc = cli_views_check(&r.views))) return rc;
    r.json = r.views.json;
#ifdef NPK_HAVE_CJSON
    if (r.json) r.j = cJSON_CreateObject();
#endif
    npk_error err = {0};
    /* Everything is read and checked before the device is touched. */
    if ((rc = prepare(&r, argv + optind, nmodels, cpu_path, threads, inputs, ninputs)) ||
        (rc = open_device(&r, emu, vanish, fw_path, cpu_path, threads, timeout)))
        goto done;
#ifdef NPK_HAVE_CJSON
    cJSON *runs = r.json ? cJSON_AddArrayToObject(r.j, "runs") : NULL;
#endif
    cli_progress pr;
    cli_progress_start(&pr, "edgetpu run");
    for (uint64_t k = 1; k <= repeat; k++) {
        npk_etpu_graph_info gi;
        const double t0 = cli_now_ms();
        if (npk_etpu_pipeline_invoke(r.pipe, r.dev, &gi, &err)) {
            cli_progress_end(&pr, false);
            rc = cli_error(NULL, &err);
            goto done;
        }
        cli_progress_update(&pr, "run", k, repeat);
        const double ms = cli_now_ms() - t0;
        info(&r, "run %" PRIu64 ": %.3f ms (Edge TPU %.3f ms in %u op%s%s)\n", k, ms, gi.device_ms,
             gi.device_runs, gi.device_runs == 1 ? "" : "s",
             gi.parameter_uploads ? "; parameters uploaded" : "");
#ifdef NPK_HAVE_CJSON
        if (runs) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "ms", ms);
            cJSON_AddNumberToObject(o, "edgetpu_ms", gi.device_ms);
            cJSON_AddNumberToObject(o, "edgetpu_ops", gi.device_runs);
            cJSON_AddNumberToObject(o, "parameter_uploads", gi.parameter_uploads);
            cJSON_AddItemToArray(runs, o);
        }
#endif
    }
    cli_progress_end(&pr, true);
    if (out && (rc = write_outputs(&r, out))) goto done;
    if (r.views.task != CLI_TASK_NONE) {
        const uint32_t n = npk_etpu_pipeline_noutputs(r.pipe);
        npk_tfl_view *ov = calloc(n + 1, sizeof *ov);
        if (!ov) {
            rc = cli_fail("out of memory");
            goto done;
        }
        for (uint32_t i = 0; i < n && !rc; i++)
            if (npk_etpu_pipeline_output(r.pipe, i, &ov[i], &err)) rc = cli_error(NULL, &err);
        if (!rc) rc = cli_views_show(&r.views, ov, n, r.picture >= 0 ? &r.in[r.picture] : NULL);
        free(ov);
    }
#ifdef NPK_HAVE_CJSON
    if (!rc && r.json) {
        cli_views_json(&r.views, r.j);
        cli_print_json(r.j, false);
        r.j = NULL;
    }
#endif
done:
    run_free(&r);
    return rc;
}
