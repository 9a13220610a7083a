/* npukit edgetpu devices / run: the USB runtime from the command line (a
 * thin layer over edgetpu_usb.h and edgetpu_emu.h). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_progress.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_usb.h"

int cmd_edgetpu_devices(int argc, char **argv);
int cmd_edgetpu_run(int argc, char **argv);

static const char *speed_name(int s)
{
    switch (s) {
    case 1: return "USB 1 low speed";
    case 2: return "USB 1 full speed";
    case 3: return "USB 2 high speed";
    case 4: return "USB 3 SuperSpeed";
    case 5: return "USB 3 SuperSpeed+";
    default: return "speed unknown";
    }
}

int cmd_edgetpu_devices(int argc, char **argv)
{
    bool json = false;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else
            return cli_bad_option("edgetpu devices", argv);
    }
    if (optind != argc) return cli_usage("edgetpu devices", "no arguments expected");
    if (json && !cli_json_available()) return cli_no_json();
    npk_etpu_usb_info devs[16];
    size_t n = 0;
    npk_error err = {0};
    if (npk_etpu_usb_list(devs, 16, &n, &err)) return cli_error(NULL, &err);
#ifdef NPK_HAVE_CJSON
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            char id[16];
            snprintf(id, sizeof id, "%04x:%04x", devs[i].vid, devs[i].pid);
            cJSON_AddStringToObject(o, "port", devs[i].port);
            cJSON_AddNumberToObject(o, "bus", devs[i].bus);
            cJSON_AddNumberToObject(o, "address", devs[i].address);
            cJSON_AddStringToObject(o, "id", id);
            cJSON_AddStringToObject(o, "mode", devs[i].dfu ? "dfu" : "application");
            cJSON_AddStringToObject(o, "speed", speed_name(devs[i].speed));
            cJSON_AddItemToArray(arr, o);
        }
        cli_print_json(arr, false);
        return CLI_OK;
    }
#endif
    if (n == 0) printf("no Edge TPU accelerator found\n");
    for (size_t i = 0; i < n; i++)
        printf("%zu: usb %s (bus %u address %u): %04x:%04x, %s, %s\n", i, devs[i].port, devs[i].bus,
               devs[i].address, devs[i].vid, devs[i].pid,
               devs[i].dfu ? "DFU (bootloader) mode: runs need --firmware PATH"
                           : "application mode",
               speed_name(devs[i].speed));
    return CLI_OK;
}

/* ---- run ---- */

#define MAX_INPUT_ARGS 64

typedef struct run_ctx {
    npk_mapped map, fw;
    npk_etpu_model m;
    npk_etpu_plan p;
    npk_tensor *in_t; /* per input layer */
    uint8_t **in, **out;
    npk_etpu_emu *emu;
    npk_etpu_transport *usb;
    npk_etpu_device *dev;
} run_ctx;

static void run_free(run_ctx *r)
{
    for (uint32_t i = 0; r->in_t && i < r->p.ninputs; i++) npk_tensor_free(&r->in_t[i]);
    for (uint32_t i = 0; r->in && i < r->p.ninputs; i++) free(r->in[i]);
    for (uint32_t i = 0; r->out && i < r->p.noutputs; i++) free(r->out[i]);
    free(r->in_t);
    free(r->in);
    free(r->out);
    npk_etpu_close(r->dev);
    npk_etpu_transport_close(r->usb);
    npk_etpu_emu_free(r->emu);
    npk_etpu_plan_free(&r->p);
    npk_etpu_free(&r->m);
    npk_unmap_file(&r->map);
    npk_unmap_file(&r->fw);
}

/* --input X.npy (the next unassigned input layer) or --input NAME=X.npy. */
static int assign_inputs(run_ctx *r, const char *model, char **args, int nargs)
{
    npk_error err = {0};
    const char *path[NPK_ETPU_MAX_LAYERS] = {0};
    if (r->p.ninputs > NPK_ETPU_MAX_LAYERS)
        return cli_fail("%s: %u input layers, more than %d", model, r->p.ninputs,
                        NPK_ETPU_MAX_LAYERS);
    for (int a = 0; a < nargs; a++) {
        char *eq = strchr(args[a], '=');
        int k = -1;
        if (eq) {
            *eq = 0;
            k = npk_etpu_plan_input(&r->p, args[a]);
            if (k < 0) *eq = '='; /* not a layer name: a path with '=' in it */
        }
        if (k >= 0) {
            if (path[k]) return cli_fail("input \"%s\" is given twice", args[a]);
            path[k] = eq + 1;
            continue;
        }
        uint32_t i = 0;
        while (i < r->p.ninputs && path[i]) i++;
        if (i == r->p.ninputs)
            return cli_fail("%s: the model has only %u inputs", args[a], r->p.ninputs);
        path[i] = args[a];
    }
    for (uint32_t i = 0; i < r->p.ninputs; i++) {
        const npk_etpu_layer *l = &r->p.eo->inputs[i];
        if (!path[i])
            return cli_fail("no --input for \"%s\" (%d x %d x %d %s)", l->name, l->y_dim, l->x_dim,
                            l->z_dim, npk_etpu_data_type_name(l->data_type));
        /* Read whole and closed again: keep it protected from being overwritten. */
        if (npk_protect_path(path[i], &err) || npk_npy_load(path[i], &r->in_t[i], &err))
            return cli_error(path[i], &err);
        if (npk_etpu_layer_from_tensor(l, &r->in_t[i], r->in[i], (size_t)l->size_bytes, &err))
            return cli_error(path[i], &err);
    }
    return CLI_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Several outputs as DIR/NAME.npy, all or nothing. Names come from the layer
 * names (npk_outdir_name: safe, short enough, unique). */
static int write_output_dir(const npk_tensor *ts, size_t nt, const char *out)
{
    npk_error err = {0};
    npk_outdir *d;
    if (npk_outdir_open(&d, out, &err)) return cli_error(out, &err);
    char(*names)[NPK_OUTDIR_NAME_MAX + 1] = calloc(nt ? nt : 1, sizeof *names);
    npk_status st = names ? NPK_OK : npk_fail(&err, NPK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < nt && !st; i++)
        if (!(st = npk_outdir_name(d, ts[i].name, ".npy", names[i], sizeof names[i], &err)))
            st = npk_npy_save_in(d, names[i], &ts[i], &err);
    if (st) {
        npk_outdir_abort(d);
        free(names);
        return cli_error(out, &err);
    }
    if (npk_outdir_commit(d, &err)) {
        free(names);
        return cli_error(out, &err);
    }
    char buf[128];
    for (size_t i = 0; i < nt; i++)
        printf("output \"%s\" %s %s -> %s/%s\n", ts[i].name, npk_shape_str(&ts[i], buf, sizeof buf),
               npk_dtype_name(ts[i].dtype), out, names[i]);
    free(names);
    return CLI_OK;
}

/* One .npy for a single output; a directory of NAME.npy, or one
 * .safetensors with a tensor per output name, for several. */
static int write_outputs(run_ctx *r, const char *model, const char *out, bool raw)
{
    npk_error err = {0};
    npk_tensor *ts = calloc(r->p.noutputs ? r->p.noutputs : 1, sizeof *ts);
    size_t nt = 0;
    int rc = CLI_OK;
    if (!ts) return cli_fail("out of memory");
    for (uint32_t k = 0; k < r->p.noutputs && !rc; k++) {
        const npk_etpu_layer *l = &r->p.eo->outputs[k];
        if (!r->p.output_steps[k]) {
            fprintf(stderr,
                    "npukit: output \"%s\" is not transferred by the model's DMA hints "
                    "(not written)\n",
                    l->name);
            continue;
        }
        const npk_tfl_tensor *tt = npk_etpu_layer_tensor(&r->m, l);
        int64_t shape[NPK_MAX_DIMS];
        int nd = 0;
        for (uint32_t d = 0; tt && d < tt->ndim && d < NPK_MAX_DIMS; d++)
            shape[nd++] = tt->shape[d];
        if (npk_etpu_layer_to_tensor(l, r->out[k], (size_t)l->size_bytes, raw, tt ? shape : NULL,
                                     nd, &ts[nt], &err))
            rc = cli_error(model, &err); /* the model's description of the layer */
        else
            nt++;
    }
    if (!rc && nt == 0) {
        fprintf(stderr, "npukit: no output was transferred; nothing written\n");
        rc = CLI_PROBLEMS;
    }
    if (!rc) {
        char buf[128];
        if (ends_with(out, ".safetensors")) {
            if (npk_st_save(out, ts, nt, &err)) rc = cli_error(out, &err);
        } else if (r->p.noutputs == 1) {
            if (npk_npy_save(out, &ts[0], &err)) rc = cli_error(out, &err);
        } else {
            rc = write_output_dir(ts, nt, out);
        }
        if (!rc && (ends_with(out, ".safetensors") || r->p.noutputs == 1))
            for (size_t i = 0; i < nt; i++)
                printf("output \"%s\" %s %s -> %s\n", ts[i].name,
                       npk_shape_str(&ts[i], buf, sizeof buf), npk_dtype_name(ts[i].dtype), out);
    }
    for (size_t i = 0; i < nt; i++) npk_tensor_free(&ts[i]);
    free(ts);
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cmd_edgetpu_run(int argc, char **argv)
{
    const char *out = NULL, *device = "usb", *fw_path = NULL;
    char *inputs[MAX_INPUT_ARGS];
    int ninputs = 0;
    uint64_t repeat = 1, timeout = 0, vanish = 0;
    bool raw = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"input", required_argument, NULL, 'i'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"firmware", required_argument, NULL, 'f'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"raw", no_argument, NULL, 'R'},
                                         {"emu-vanish", required_argument, NULL, 'V'},
                                         {0, 0, 0, 0}};
    int c;
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
        case 'R': raw = true; break;
        case 'r':
            if (!cli_parse_u64(optarg, &repeat) || repeat < 1 || repeat > 1000000)
                return cli_usage("edgetpu run", "--repeat must be 1 .. 1000000");
            break;
        case 't':
            if (!cli_parse_u64(optarg, &timeout) || timeout < 1 || timeout > 600000)
                return cli_usage("edgetpu run", "--timeout must be 1 .. 600000 ms");
            break;
        case 'V':
            if (!cli_parse_u64(optarg, &vanish) || vanish < 1)
                return cli_usage("edgetpu run", "--emu-vanish must be a transfer number >= 1");
            break;
        default: return cli_bad_option("edgetpu run", argv);
        }
    }
    if (optind + 1 != argc || !out)
        return cli_usage("edgetpu run", "expected MODEL --input X.npy -o OUT");
    const bool emu = !strcmp(device, "emu");
    if (!emu && strcmp(device, "usb"))
        return cli_usage("edgetpu run", "--device must be usb or emu");
    if (vanish && !emu) return cli_usage("edgetpu run", "--emu-vanish needs --device emu");
    const char *model = argv[optind];
    run_ctx r;
    memset(&r, 0, sizeof r);
    npk_error err = {0};
    int rc = CLI_OK;
    /* Everything is read and checked before the device is touched. */
    if (npk_map_file(model, &r.map, &err) || npk_etpu_parse(r.map.data, r.map.size, &r.m, &err) ||
        npk_etpu_plan_init(&r.m, &r.p, &err)) {
        rc = cli_error(model, &err);
        goto done;
    }
    r.in_t = calloc(r.p.ninputs + 1, sizeof *r.in_t);
    r.in = calloc(r.p.ninputs + 1, sizeof *r.in);
    r.out = calloc(r.p.noutputs + 1, sizeof *r.out);
    if (!r.in_t || !r.in || !r.out) {
        rc = cli_fail("out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < r.p.ninputs; i++)
        if (!(r.in[i] = calloc((size_t)r.p.eo->inputs[i].size_bytes, 1)))
            rc = cli_fail("out of memory");
    for (uint32_t i = 0; i < r.p.noutputs; i++)
        if (!(r.out[i] = calloc((size_t)r.p.eo->outputs[i].size_bytes, 1)))
            rc = cli_fail("out of memory");
    if (rc || (rc = assign_inputs(&r, model, inputs, ninputs))) goto done;
    if (fw_path && npk_map_file(fw_path, &r.fw, &err)) {
        rc = cli_error(fw_path, &err);
        goto done;
    }
    npk_etpu_transport *t = NULL;
    if (emu) {
        /* The emulator starts in DFU mode when given firmware, to exercise the upload. */
        npk_etpu_emu_opts eo = {.dfu = fw_path != NULL, .vanish_at = vanish};
        if (npk_etpu_emu_new(&eo, &r.emu, &err) || npk_etpu_emu_add_model(r.emu, &r.m, &err)) {
            rc = cli_error(model, &err);
            goto done;
        }
        t = npk_etpu_emu_transport(r.emu);
    } else if (npk_etpu_usb_open(-1, &r.usb, &err)) {
        rc = cli_error(NULL, &err);
        goto done;
    } else {
        t = r.usb;
    }
    npk_etpu_open_opts oo = {.firmware = fw_path ? r.fw.data : NULL,
                             .firmware_size = fw_path ? r.fw.size : 0,
                             .timeout_ms = (unsigned)timeout};
    const bool dfu = npk_etpu_transport_is_dfu(t);
    double t0 = now_ms();
    if (npk_etpu_open(t, &oo, &r.dev, &err)) {
        rc = cli_error(NULL, &err);
        goto done;
    }
    printf("%s: opened in %.3f ms%s\n", t->name, now_ms() - t0,
           dfu       ? " (firmware uploaded over DFU)"
           : fw_path ? " (already in application mode: --firmware not used)"
                     : "");
    cli_progress pr;
    cli_progress_start(&pr, "edgetpu run");
    for (uint64_t k = 1; k <= repeat; k++) {
        npk_etpu_run_info info;
        t0 = now_ms();
        if (npk_etpu_run(r.dev, &r.p, (const uint8_t *const *)r.in, r.out, &info, &err)) {
            cli_progress_end(&pr, false);
            rc = cli_error(NULL, &err);
            goto done;
        }
        printf("run %" PRIu64 ": %.3f ms%s\n", k, now_ms() - t0,
               info.parameters_uploaded ? " (parameters uploaded)" : "");
        cli_progress_update(&pr, "run", k, repeat);
    }
    cli_progress_end(&pr, true);
    rc = write_outputs(&r, model, out, raw);
done:
    run_free(&r);
    return rc;
}
