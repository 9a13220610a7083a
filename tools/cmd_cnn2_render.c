/* npukit cnn2 render / pattern: run a CNN v2 model on a PNG, and make a
 * deterministic test PNG. Everything is computed and encoded before the
 * first output is written, so bad input never leaves an output file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"
#include "cmd_cnn2.h"
#include "npukit/cnn2_render.h"

static bool parse_size(const char *s, uint32_t *w, uint32_t *h)
{
    char buf[64];
    uint64_t a, b;
    snprintf(buf, sizeof buf, "%s", s);
    char *x = strchr(buf, 'x');
    if (!x) return false;
    *x = 0;
    if (!cli_parse_u64(buf, &a) || !cli_parse_u64(x + 1, &b) || a == 0 || b == 0 ||
        a > NPK_CNN2_MAX_SIDE || b > NPK_CNN2_MAX_SIDE)
        return false;
    *w = (uint32_t)a;
    *h = (uint32_t)b;
    return true;
}

/* A float32 [H, W, C] view of data (not owned) for npk_npy_write. */
static npk_tensor hwc_view(const float *data, uint32_t w, uint32_t h, int c)
{
    npk_tensor t = {.dtype = NPK_F32,
                    .ndim = 3,
                    .shape = {h, w, c},
                    .data = (void *)data,
                    .nbytes = (size_t)h * w * (size_t)c * 4};
    return t;
}

typedef struct render_args {
    const char *model, *input, *output, *depth, *raw, *dump;
    double blend;
    bool reference;
    npk_cnn2_render_opts opts;
} render_args;

static int parse_render(int argc, char **argv, render_args *a)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"depth", required_argument, NULL, 'd'},
                                         {"blend", required_argument, NULL, 'b'},
                                         {"border", required_argument, NULL, 'B'},
                                         {"activation", required_argument, NULL, 'a'},
                                         {"precision", required_argument, NULL, 'p'},
                                         {"raw", required_argument, NULL, 'r'},
                                         {"dump-layers", required_argument, NULL, 'D'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"reference", no_argument, NULL, 'R'},
                                         {0, 0, 0, 0}};
    const char *cmd = "cnn2 render";
    uint64_t threads;
    int c;
    memset(a, 0, sizeof *a);
    a->blend = 1.0;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 'd': a->depth = optarg; break;
        case 'r': a->raw = optarg; break;
        case 'D': a->dump = optarg; break;
        case 'R': a->reference = true; break;
        case 'b':
            if (!cli_parse_double(optarg, &a->blend)) return cli_usage(cmd, "bad --blend");
            break;
        case 'B':
            if (!strcmp(optarg, "clamp"))
                a->opts.border = NPK_CNN2_BORDER_CLAMP;
            else if (!strcmp(optarg, "zero"))
                a->opts.border = NPK_CNN2_BORDER_ZERO;
            else
                return cli_usage(cmd, "--border must be clamp or zero");
            break;
        case 'a':
            if (!strcmp(optarg, "default"))
                a->opts.activation = NPK_CNN2_ACT_DEFAULT;
            else if (!strcmp(optarg, "legacy-clamp"))
                a->opts.activation = NPK_CNN2_ACT_LEGACY_CLAMP;
            else
                return cli_usage(cmd, "--activation must be default or legacy-clamp");
            break;
        case 'p':
            if (!strcmp(optarg, "f16"))
                a->opts.precision = NPK_CNN2_PREC_F16;
            else if (!strcmp(optarg, "f32"))
                a->opts.precision = NPK_CNN2_PREC_F32;
            else
                return cli_usage(cmd, "--precision must be f16 or f32");
            break;
        case 't':
            if (!cli_parse_u64(optarg, &threads) || threads == 0 || threads > 64)
                return cli_usage(cmd, "--threads must be 1..64");
            a->opts.threads = (unsigned)threads;
            break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (!a->output) return cli_usage(cmd, "missing -o OUT.png");
    if (optind + 2 != argc) return cli_usage(cmd, "expected MODEL.bin and IN.png");
    a->model = argv[optind];
    a->input = argv[optind + 1];
    return CLI_OK;
}

/* Everything the render produces, held in memory until all of it is ready. */
typedef struct render_out {
    float *cnn, *features, **layers;
    uint32_t nlayers;
    uint8_t *png;
    size_t png_len;
} render_out;

static void free_out(render_out *o)
{
    free(o->cnn);
    free(o->features);
    for (uint32_t i = 0; o->layers && i < o->nlayers; i++) free(o->layers[i]);
    free(o->layers);
    free(o->png);
}

/* All outputs are written in full before any is committed: a failure leaves
 * none of them (the PNG, --raw, and the --dump-layers directory as a set). */
static int write_outputs(const render_args *a, const render_out *o, const npk_cnn2_image *img)
{
    npk_error err = {0};
    uint32_t W = img->width, H = img->height;
    npk_out *png = NULL, *raw = NULL;
    npk_outdir *dump = NULL;
    const char *bad = a->output;
    npk_tensor t;
    if (npk_out_open(&png, a->output, &err) || npk_out_write(png, o->png, o->png_len, &err))
        goto fail;
    bad = a->raw;
    t = hwc_view(o->cnn, W, H, 4);
    if (a->raw && (npk_out_open(&raw, a->raw, &err) || npk_npy_write(raw, &t, &err))) goto fail;
    bad = a->dump;
    if (a->dump) {
        if (npk_outdir_open(&dump, a->dump, &err)) goto fail;
        t = hwc_view(o->features, W, H, NPK_CNN2_CHANNELS);
        if (npk_npy_save_in(dump, "features.npy", &t, &err)) goto fail;
        for (uint32_t i = 0; i < o->nlayers; i++) {
            char name[32];
            snprintf(name, sizeof name, "layer_%u.npy", i);
            t = hwc_view(o->layers[i], W, H, 4);
            if (npk_npy_save_in(dump, name, &t, &err)) goto fail;
        }
    }
    bad = a->dump;
    if (dump && npk_outdir_commit(dump, &err)) {
        dump = NULL;
        goto fail;
    }
    dump = NULL;
    bad = a->raw;
    if (raw && npk_out_commit(raw, &err)) {
        raw = NULL;
        goto fail;
    }
    raw = NULL;
    bad = a->output;
    if (npk_out_commit(png, &err)) {
        png = NULL;
        goto fail;
    }
    return CLI_OK;
fail:
    npk_out_abort(png);
    npk_out_abort(raw);
    npk_outdir_abort(dump);
    return cli_error(bad, &err);
}

int cnn2_cmd_render(int argc, char **argv)
{
    render_args a;
    int rc = parse_render(argc, argv, &a);
    if (rc) return rc;
    if (!npk_cnn2_png_available())
        return cli_fail("cnn2 render: this build has no PNG support (rebuild with libspng)");
    npk_error err = {0};
    npk_mapped fm = {0}, fi = {0}, fd = {0};
    npk_cnn2_model m = {0};
    npk_cnn2_image img = {0};
    render_out o = {0};
    /* Inputs stay mapped until the outputs are written: npk_out_open then
     * refuses to write over any of them. */
    const char *bad = a.model;
    if (npk_map_file(a.model, &fm, &err) || npk_cnn2_parse(fm.data, fm.size, &m, &err) ||
        npk_cnn2_render_check(&m, NULL, &err))
        goto fail;
    bad = a.input;
    if (npk_map_file(a.input, &fi, &err) || npk_cnn2_png_decode(fi.data, fi.size, &img, &err))
        goto fail;
    bad = a.depth;
    if (a.depth &&
        (npk_map_file(a.depth, &fd, &err) || npk_cnn2_png_depth(&img, fd.data, fd.size, &err)))
        goto fail;
    bad = NULL;
    size_t npix = (size_t)img.width * img.height;
    o.nlayers = m.num_layers;
    o.cnn = malloc(npix * 4 * sizeof(float));
    o.features = a.dump ? malloc(npix * NPK_CNN2_CHANNELS * sizeof(float)) : NULL;
    o.layers = a.dump ? calloc(m.num_layers, sizeof *o.layers) : NULL;
    uint8_t *rgba = malloc(npix * 4);
    float *blended = malloc(npix * 4 * sizeof(float));
    bool nomem = !o.cnn || !rgba || !blended || (a.dump && (!o.features || !o.layers));
    for (uint32_t i = 0; !nomem && a.dump && i < m.num_layers; i++)
        nomem = !(o.layers[i] = malloc(npix * 4 * sizeof(float)));
    if (nomem) {
        free(rgba);
        free(blended);
        npk_fail(&err, NPK_E_NOMEM, "out of memory");
        goto fail;
    }
    a.opts.features = o.features;
    a.opts.layer_out = o.layers;
    cli_progress pr;
    cli_progress_start(&pr, "cnn2 render");
    a.opts.progress = &pr.p;
    npk_status st = a.reference ? npk_cnn2_render_ref(&m, &img, &a.opts, o.cnn, &err)
                                : npk_cnn2_render(&m, &img, &a.opts, o.cnn, &err);
    cli_progress_end(&pr, st == NPK_OK);
    if (!st) {
        npk_cnn2_blend(img.rgbd, o.cnn, npix, (float)a.blend, blended);
        npk_cnn2_to_rgba8(blended, npix, rgba);
        st = npk_cnn2_png_encode(rgba, img.width, img.height, 4, &o.png, &o.png_len, &err);
    }
    free(rgba);
    free(blended);
    if (st) goto fail;
    rc = write_outputs(&a, &o, &img);
    goto done;
fail:
    rc = cli_error(bad, &err);
done:
    free_out(&o);
    npk_cnn2_image_free(&img);
    npk_cnn2_free(&m);
    npk_unmap_file(&fm);
    npk_unmap_file(&fi);
    npk_unmap_file(&fd);
    return rc;
}

int cnn2_cmd_pattern(int argc, char **argv)
{
    const char *out = NULL;
    uint32_t w = 0, h = 0;
    uint64_t seed = 1;
    bool alpha = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"size", required_argument, NULL, 's'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"alpha", no_argument, NULL, 'a'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 's') {
            if (!parse_size(optarg, &w, &h))
                return cli_usage("cnn2 pattern", "--size must be WxH (1..%u each)",
                                 NPK_CNN2_MAX_SIDE);
        } else if (c == 'S') {
            if (!cli_parse_u64(optarg, &seed)) return cli_usage("cnn2 pattern", "bad --seed");
        } else if (c == 'a')
            alpha = true;
        else
            return cli_bad_option("cnn2 pattern", argv);
    }
    if (!out || !w) return cli_usage("cnn2 pattern", "need --size WxH and -o OUT.png");
    if (optind != argc) return cli_usage("cnn2 pattern", "unexpected argument '%s'", argv[optind]);
    npk_error err = {0};
    uint8_t *pix = NULL, *png = NULL;
    size_t len;
    int rc = CLI_OK;
    if (!npk_cnn2_pattern(w, h, seed, alpha, &pix, &err) && !alpha)
        for (size_t i = 0; i < (size_t)w * h; i++) memmove(pix + 3 * i, pix + 4 * i, 3); /* RGB */
    if (!pix || npk_cnn2_png_encode(pix, w, h, alpha ? 4 : 3, &png, &len, &err))
        rc = cli_error(NULL, &err);
    else if (npk_write_file(out, png, len, &err))
        rc = cli_error(out, &err);
    free(pix);
    free(png);
    return rc;
}
