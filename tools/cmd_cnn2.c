/* npukit cnn2: CNN v2 weight files: validate, inspect, pack, unpack (render and
 * pattern are in cmd_cnn2_render.c). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "cmd_cnn2.h"
#include "commands.h"
#include "npukit/cnn2.h"

static int c_validate(int argc, char **argv);
static int c_info(int argc, char **argv);
static int c_pack(int argc, char **argv);
static int c_unpack(int argc, char **argv);

static const cli_subcommand subs[] = {
    {"validate", "FILE... [--json] [--strict]",
     "check every rule of the format; exit 0 when valid, 1 listing every problem with its\n"
     "      file offset (warnings do not fail unless --strict)",
     c_validate},
    {"info", "FILE [--json]", "header, layer table and warnings of a valid file", c_info},
    {"pack", "IN.safetensors -o OUT.bin [--mip N] [--format-version 1|2]",
     "tensors layer.<i>.weight [out, in, k, k] (float32 or float16) to a CNN v2 file;\n"
     "      defaults come from the file's metadata (as written by unpack), else version 2, mip 0",
     c_pack},
    {"unpack", "IN.bin -o OUT.safetensors",
     "CNN v2 file to float32 tensors layer.<i>.weight (version and mip_level in metadata)",
     c_unpack},
    {"render",
     "MODEL.bin IN.png -o OUT.png [--depth D.png] [--blend F] [--border clamp|zero]\n"
     "      [--activation default|legacy-clamp] [--precision f16|f32] [--raw OUT.npy]\n"
     "      [--dump-layers DIR] [--threads N] [--reference]",
     "run the network on an image (CPU). Any PNG in (8-bit RGB/RGBA; grey, palette and\n"
     "      16-bit are converted), RGBA PNG out. --raw: network output before blending,\n"
     "      float32 [H, W, 4]; --dump-layers: features.npy [H, W, 12] and layer_<i>.npy",
     cnn2_cmd_render},
    {"pattern", "--size WxH -o OUT.png [--seed N] [--alpha]",
     "write a deterministic test picture (gradients, rings, checkerboard; --alpha adds a\n"
     "      diagonal alpha ramp, i.e. a D channel)",
     cnn2_cmd_pattern},
};
#define NSUBS ((int)(sizeof subs / sizeof subs[0]))

void cmd_cnn2_help(FILE *out)
{
    cli_group_help(out, "cnn2",
                   "CNN v2 weight files (\"CNN2\" .bin, versions 1 and 2): validate, inspect,\n"
                   "pack, unpack and render on the CPU (docs/cnn2.md).",
                   subs, NSUBS);
}

int cmd_cnn2(int argc, char **argv)
{
    return cli_dispatch("cnn2", subs, NSUBS, argc, argv);
}

/* ---- validate ---- */

static void print_problem(const char *path, const npk_cnn2_problem *p)
{
    printf("%s: offset 0x%" PRIx64 ": %s: %s\n", path, p->offset, p->warning ? "warning" : "error",
           p->msg);
}

#ifdef NPK_HAVE_CJSON
static cJSON *report_json(const char *path, const npk_cnn2_report *rep)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddBoolToObject(o, "valid", rep->errors == 0);
    cli_json_u64(o, "errors", rep->errors);
    cli_json_u64(o, "warnings", rep->warnings);
    if (rep->header_read) {
        cJSON_AddNumberToObject(o, "version", rep->version);
        cJSON_AddNumberToObject(o, "num_layers", rep->num_layers);
        cJSON_AddNumberToObject(o, "total_weights", rep->total_weights);
        cJSON_AddNumberToObject(o, "mip_level", rep->mip_level);
    }
    cJSON *arr = cJSON_AddArrayToObject(o, "problems");
    for (size_t i = 0; i < rep->count; i++) {
        const npk_cnn2_problem *p = &rep->items[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "severity", p->warning ? "warning" : "error");
        cJSON_AddStringToObject(e, "check", npk_cnn2_check_name(p->check));
        cli_json_u64(e, "offset", p->offset);
        if (p->layer >= 0) cJSON_AddNumberToObject(e, "layer", p->layer);
        cJSON_AddStringToObject(e, "message", p->msg);
        cJSON_AddItemToArray(arr, e);
    }
    return o;
}
#endif

static int validate_one(const char *path, bool json, bool strict)
{
    npk_error err = {0};
    npk_mapped m;
    if (npk_map_file(path, &m, &err)) return cli_error(path, &err);
    npk_cnn2_report rep;
    if (npk_cnn2_validate(m.data, m.size, &rep, &err)) {
        npk_unmap_file(&m);
        return cli_error(path, &err);
    }
    npk_unmap_file(&m);
    bool ok = rep.errors == 0 && !(strict && rep.warnings);
#ifdef NPK_HAVE_CJSON
    if (json) {
        cli_print_json(report_json(path, &rep), true);
    } else
#endif
    {
        for (size_t i = 0; i < rep.count; i++) print_problem(path, &rep.items[i]);
        size_t shown = rep.count, total = rep.errors + rep.warnings;
        if (total > shown) printf("%s: ... and %zu more problems\n", path, total - shown);
        if (rep.errors == 0)
            printf("%s: valid%s (CNN v2 version %u, %u layer%s, %u weights, mip_level %u)\n", path,
                   rep.warnings ? " with warnings" : "", rep.version, rep.num_layers,
                   rep.num_layers == 1 ? "" : "s", rep.total_weights, rep.mip_level);
        else
            printf("%s: INVALID (%zu error%s, %zu warning%s)\n", path, rep.errors,
                   rep.errors == 1 ? "" : "s", rep.warnings, rep.warnings == 1 ? "" : "s");
    }
    (void)json;
    npk_cnn2_report_free(&rep);
    return ok ? CLI_OK : CLI_PROBLEMS;
}

static int c_validate(int argc, char **argv)
{
    bool json = false, strict = false;
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"strict", no_argument, NULL, 's'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 's')
            strict = true;
        else
            return cli_bad_option("cnn2 validate", argv);
    }
    if (optind >= argc) return cli_usage("cnn2 validate", "no FILE given");
    if (json && !cli_json_available()) return cli_no_json();
    int rc = CLI_OK;
    for (int i = optind; i < argc; i++) {
        int r = validate_one(argv[i], json, strict);
        if (r > rc) rc = r;
    }
    return rc;
}

/* ---- info ---- */

static int c_info(int argc, char **argv)
{
    bool json = false;
    if (cli_args_json("cnn2 info", argc, argv, &json)) return CLI_FAIL;
    if (optind + 1 != argc) return cli_usage("cnn2 info", "expected one FILE");
    if (json && !cli_json_available()) return cli_no_json();
    const char *path = argv[optind];
    npk_error err = {0};
    npk_mapped f;
    if (npk_map_file(path, &f, &err)) return cli_error(path, &err);
    npk_cnn2_model m;
    npk_cnn2_report rep;
    if (npk_cnn2_parse(f.data, f.size, &m, &err) || npk_cnn2_validate(f.data, f.size, &rep, &err)) {
        npk_unmap_file(&f);
        npk_cnn2_free(&m);
        return cli_error(path, &err);
    }
    size_t size = f.size;
    npk_unmap_file(&f);
#ifdef NPK_HAVE_CJSON
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", path);
        cli_json_u64(o, "size", size);
        cJSON_AddNumberToObject(o, "version", m.version);
        cJSON_AddNumberToObject(o, "num_layers", m.num_layers);
        cJSON_AddNumberToObject(o, "total_weights", m.total_weights);
        cJSON_AddNumberToObject(o, "mip_level", m.mip_level);
        cJSON_AddNumberToObject(o, "header_size", npk_cnn2_header_size(m.version));
        cJSON *layers = cJSON_AddArrayToObject(o, "layers");
        for (uint32_t i = 0; i < m.num_layers; i++) {
            const npk_cnn2_layer *l = &m.layers[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "kernel_size", l->kernel_size);
            cJSON_AddNumberToObject(e, "in_channels", l->in_channels);
            cJSON_AddNumberToObject(e, "out_channels", l->out_channels);
            cJSON_AddNumberToObject(e, "weight_offset", l->weight_offset);
            cJSON_AddNumberToObject(e, "weight_count", l->weight_count);
            cJSON_AddItemToArray(layers, e);
        }
        cJSON *warn = cJSON_AddArrayToObject(o, "warnings");
        for (size_t i = 0; i < rep.count; i++)
            cJSON_AddItemToArray(warn, cJSON_CreateString(rep.items[i].msg));
        cli_print_json(o, false);
    } else
#endif
    {
        printf("%s: CNN v2 version %u (%u-byte header), %zu bytes\n", path, m.version,
               npk_cnn2_header_size(m.version), size);
        printf("  num_layers:    %u\n  total_weights: %u\n  mip_level:     %u\n", m.num_layers,
               m.total_weights, m.mip_level);
        printf("  layer  kernel  in  out  weight_offset  weight_count\n");
        for (uint32_t i = 0; i < m.num_layers; i++) {
            const npk_cnn2_layer *l = &m.layers[i];
            printf("  %5u  %3ux%-3u %3u  %3u  %13u  %12u\n", i, l->kernel_size, l->kernel_size,
                   l->in_channels, l->out_channels, l->weight_offset, l->weight_count);
        }
        for (size_t i = 0; i < rep.count; i++)
            printf("  warning: offset 0x%" PRIx64 ": %s\n", rep.items[i].offset, rep.items[i].msg);
    }
    npk_cnn2_report_free(&rep);
    npk_cnn2_free(&m);
    return CLI_OK;
}

/* ---- pack / unpack ---- */

static int c_pack(int argc, char **argv)
{
    const char *out = NULL;
    uint64_t mip = 0, version = 0;
    bool have_mip = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"mip", required_argument, NULL, 'm'},
                                         {"format-version", required_argument, NULL, 'v'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'm') {
            if (!cli_parse_u64(optarg, &mip) || mip > NPK_CNN2_MAX_MIP)
                return cli_usage("cnn2 pack", "--mip must be 0..3");
            have_mip = true;
        } else if (c == 'v') {
            if (!cli_parse_u64(optarg, &version) || (version != 1 && version != 2))
                return cli_usage("cnn2 pack", "--format-version must be 1 or 2");
        } else
            return cli_bad_option("cnn2 pack", argv);
    }
    if (!out) return cli_usage("cnn2 pack", "missing -o OUT.bin");
    if (optind + 1 != argc) return cli_usage("cnn2 pack", "expected one IN.safetensors");
    if (version == 1 && have_mip && mip != 0)
        return cli_usage("cnn2 pack", "version 1 files cannot record a mip level");
    const char *in = argv[optind];
    npk_error err = {0};
    npk_mapped f;
    if (npk_map_file(in, &f, &err)) return cli_error(in, &err);
    npk_tensor_set set;
    uint32_t meta_version, meta_mip;
    if (npk_cnn2_st_decode(f.data, f.size, &set, &meta_version, &meta_mip, &err)) {
        npk_unmap_file(&f);
        return cli_error(in, &err);
    }
    if (!version) version = meta_version ? meta_version : 2;
    if (!have_mip) mip = version == 1 ? 0 : meta_mip;
    npk_cnn2_model m;
    int rc = CLI_OK;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (npk_cnn2_from_tensors(&set, (uint32_t)version, (uint32_t)mip, &m, &err) ||
        npk_cnn2_encode(&m, &buf, &len, &err)) {
        rc = cli_error(in, &err);
    } else {
        /* Warnings of the file as written (non-standard shapes, inf/NaN). */
        npk_cnn2_report rep;
        if (!npk_cnn2_validate(buf, len, &rep, &err))
            for (size_t i = 0; i < rep.count; i++)
                fprintf(stderr, "npukit: %s: warning: %s\n", out, rep.items[i].msg);
        npk_cnn2_report_free(&rep);
        if (npk_write_file(out, buf, len, &err)) rc = cli_error(out, &err);
    }
    free(buf);
    npk_cnn2_free(&m);
    npk_set_free(&set);
    npk_unmap_file(&f);
    return rc;
}

static int c_unpack(int argc, char **argv)
{
    const char *out = NULL;
    if (cli_args_output("cnn2 unpack", argc, argv, &out)) return CLI_FAIL;
    if (!out) return cli_usage("cnn2 unpack", "missing -o OUT.safetensors");
    if (optind + 1 != argc) return cli_usage("cnn2 unpack", "expected one IN.bin");
    const char *in = argv[optind];
    npk_error err = {0};
    npk_mapped f;
    if (npk_map_file(in, &f, &err)) return cli_error(in, &err);
    npk_cnn2_model m;
    int rc = CLI_OK;
    npk_out *o = NULL;
    /* Streamed: memory is the model, not the (twice as large) float32 copy. */
    if (npk_cnn2_parse(f.data, f.size, &m, &err)) {
        rc = cli_error(in, &err);
    } else if (npk_out_open(&o, out, &err) || npk_cnn2_st_write(&m, o, &err)) {
        npk_out_abort(o);
        rc = cli_error(out, &err);
    } else if (npk_out_commit(o, &err)) {
        rc = cli_error(out, &err);
    }
    npk_cnn2_free(&m);
    npk_unmap_file(&f);
    return rc;
}
