/* npukit tflite classify: a picture through a classification model, the top
 * K classes with their scores. A thin layer over image.h (decode, resize,
 * convert), tflite_image.h (the model's picture input), tflite_interp.h
 * (run) and classify.h (labels, top K). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npukit/classify.h"
#include "npukit/image.h"
#include "npukit/tflite.h"
#include "npukit/tflite_image.h"
#include "npukit/tflite_interp.h"

#define MAX_TOP 1000

typedef struct classify_args {
    const char *model, *image, *labels;
    uint64_t top, threads;
    bool json;
    npk_image_range range;
} classify_args;

static int parse(int argc, char **argv, classify_args *a)
{
    static const struct option opts[] = {{"image", required_argument, NULL, 'i'},
                                         {"labels", required_argument, NULL, 'l'},
                                         {"top", required_argument, NULL, 'k'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"range", required_argument, NULL, 'r'},
                                         {"json", no_argument, NULL, 'j'},
                                         {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->top = 5;
    a->threads = 1;
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'i': a->image = optarg; break;
        case 'l': a->labels = optarg; break;
        case 'k':
            if (!cli_parse_u64(optarg, &a->top) || a->top < 1 || a->top > MAX_TOP)
                return cli_usage("tflite classify", "--top must be 1 .. %d", MAX_TOP);
            break;
        case 't':
            if (!cli_parse_u64(optarg, &a->threads) || a->threads < 1 || a->threads > 64)
                return cli_usage("tflite classify", "--threads must be 1 .. 64");
            break;
        case 'r':
            if (!strcmp(optarg, "unit"))
                a->range = NPK_IMAGE_RANGE_UNIT;
            else if (!strcmp(optarg, "signed"))
                a->range = NPK_IMAGE_RANGE_SIGNED;
            else if (!strcmp(optarg, "pixel"))
                a->range = NPK_IMAGE_RANGE_PIXEL;
            else
                return cli_usage("tflite classify", "--range must be unit, signed or pixel");
            break;
        case 'j': a->json = true; break;
        default: return cli_bad_option("tflite classify", argv);
        }
    }
    if (optind + 1 != argc || !a->image)
        return cli_usage("tflite classify", "expected MODEL --image PICTURE");
    a->model = argv[optind];
    if (a->json && !cli_json_available()) return cli_no_json();
    return CLI_OK;
}

/* The output holding the scores: the first output with one row of at least
 * two classes ([N], [1, N], [1, 1, 1, N], ...). */
static int score_output(const npk_tfl_interp *it, npk_tfl_view *v, uint32_t *nclasses,
                        const char *path)
{
    npk_error err = {0};
    for (uint32_t o = 0; o < npk_tfl_interp_noutputs(it); o++) {
        if (npk_tfl_interp_output(it, o, v, &err)) return cli_error(path, &err);
        if (!v->ndim) continue;
        int64_t n = v->dims[v->ndim - 1], rest = 1;
        for (uint32_t d = 0; d + 1 < v->ndim; d++) rest *= v->dims[d];
        if (rest == 1 && n >= 2 && n <= UINT32_MAX) {
            *nclasses = (uint32_t)n;
            return CLI_OK;
        }
    }
    return cli_fail("%s: no output is one row of class scores", path);
}

static npk_dtype view_dtype(int8_t t)
{
    switch (t) {
    case NPK_TFL_UINT8: return NPK_U8;
    case NPK_TFL_INT8: return NPK_I8;
    case NPK_TFL_INT16: return NPK_I16;
    case NPK_TFL_INT32: return NPK_I32;
    case NPK_TFL_FLOAT32: return NPK_F32;
    default: return NPK_DT_INVALID;
    }
}

static void print_text(const classify_args *a, const npk_labels *lab, const npk_class_score *top,
                       size_t n, uint32_t nclasses)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = lab->count ? npk_labels_name(lab, top[i].index, nclasses) : NULL;
        char *u = name ? cli_utf8_dup(name, true) : NULL;
        printf("%8.5f  %4u  %s\n", top[i].score, top[i].index, u ? u : "");
        free(u);
    }
    (void)a;
}

#ifdef NPK_HAVE_CJSON
static void print_json(const classify_args *a, const npk_labels *lab, const npk_class_score *top,
                       size_t n, uint32_t nclasses, const npk_image_input *in,
                       const npk_tfl_view *out)
{
    cJSON *j = cJSON_CreateObject();
    cli_json_str(j, "model", a->model);
    cli_json_str(j, "image", a->image);
    cJSON *shape = cJSON_AddArrayToObject(j, "input_shape");
    for (int d = 0; d < in->ndim; d++)
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)in->shape[d]));
    cli_json_str(j, "output", out->name);
    cJSON_AddNumberToObject(j, "classes", nclasses);
    cJSON *arr = cJSON_AddArrayToObject(j, "top");
    for (size_t i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", top[i].index);
        const char *name = lab->count ? npk_labels_name(lab, top[i].index, nclasses) : NULL;
        if (name)
            cli_json_str(e, "label", name);
        else
            cJSON_AddNullToObject(e, "label");
        cJSON_AddNumberToObject(e, "score", top[i].score);
        if (out->type != NPK_TFL_FLOAT32) cJSON_AddNumberToObject(e, "raw", (double)top[i].raw);
        cJSON_AddItemToArray(arr, e);
    }
    cli_print_json(j, false);
}
#endif

int cmd_tflite_classify(int argc, char **argv)
{
    classify_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    npk_error err = {0};
    npk_mapped map = {0};
    npk_tfl_model m = {0};
    npk_tfl_interp *it = NULL;
    npk_image img = {0};
    npk_tensor x = {0};
    npk_labels lab = {0};
    npk_class_score *top = NULL;
    bool parsed = false;

    if (a.labels && npk_labels_load(a.labels, &lab, &err)) {
        rc = cli_error(a.labels, &err);
        goto done;
    }
    if (npk_map_file(a.model, &map, &err) || npk_tfl_parse(map.data, map.size, &m, &err)) {
        rc = cli_error(a.model, &err);
        goto done;
    }
    parsed = true;
    npk_tfl_interp_opts io = {.threads = (int)a.threads};
    if (npk_tfl_interp_new(&m, &io, &it, &err)) {
        rc = cli_error(a.model, &err);
        goto done;
    }
    if (npk_tfl_interp_ninputs(it) != 1) {
        rc = cli_fail("%s: the model has %u inputs; classify feeds one picture", a.model,
                      npk_tfl_interp_ninputs(it));
        goto done;
    }
    npk_tfl_view in;
    npk_image_input spec;
    if (npk_tfl_interp_input(it, 0, &in, &err) ||
        npk_tfl_image_input(&m, 0, in.index, &spec, &err)) {
        rc = cli_error(a.model, &err);
        goto done;
    }
    spec.range = a.range;
    if (npk_image_load(a.image, &img, &err)) {
        rc = cli_error(a.image, &err);
        goto done;
    }
    if (npk_image_to_tensor(&img, &spec, in.name, &x, &err)) {
        rc = cli_error(a.image, &err);
        goto done;
    }
    if (x.nbytes != in.bytes) {
        rc = cli_fail("%s: the picture gives %zu bytes, input %s takes %zu", a.model, x.nbytes,
                      in.name, in.bytes);
        goto done;
    }
    memcpy(in.data, x.data, x.nbytes);
    if (npk_tfl_interp_invoke(it, &err)) {
        rc = cli_error(a.model, &err);
        goto done;
    }
    npk_tfl_view out;
    uint32_t nclasses = 0;
    if ((rc = score_output(it, &out, &nclasses, a.model))) goto done;
    npk_dtype dt = view_dtype(out.type);
    size_t k = a.top < nclasses ? (size_t)a.top : nclasses;
    top = calloc(k, sizeof *top);
    if (!top) {
        rc = cli_fail("out of memory");
        goto done;
    }
    double scale = out.q && out.q->nscale == 1 ? (double)out.scale : 0;
    size_t n = npk_top_k(out.data, dt, nclasses, scale, out.zero_point, k, top, &err);
    if (!n) {
        rc = cli_error(a.model, &err);
        goto done;
    }
#ifdef NPK_HAVE_CJSON
    if (a.json)
        print_json(&a, &lab, top, n, nclasses, &spec, &out);
    else
#endif
        print_text(&a, &lab, top, n, nclasses);
    rc = CLI_OK;
done:
    free(top);
    npk_labels_free(&lab);
    npk_tensor_free(&x);
    npk_image_free(&img);
    npk_tfl_interp_free(it);
    if (parsed) npk_tfl_free(&m);
    if (map.data) npk_unmap_file(&map);
    return rc;
}
