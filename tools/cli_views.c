/* Task views on the command line: options, picture input, printing,
 * drawing (cli_views.h). */
#include <stdlib.h>
#include <string.h>

#include "cli_views.h"

void cli_views_init(cli_views *v, const char *cmd)
{
    memset(v, 0, sizeof *v);
    v->cmd = cmd;
    v->top = 5;
}

void cli_views_free(cli_views *v)
{
    npk_image_free(&v->pic);
    npk_vis_labels_free(&v->labels);
#ifdef NPK_HAVE_CJSON
    cJSON_Delete(v->out);
    v->out = NULL;
#endif
}

static int set_task(cli_views *v, cli_task t, const char *labels)
{
    if (v->task != CLI_TASK_NONE && v->task != t)
        return cli_usage(v->cmd, "give one of --classify, --detect, --pose, --segment");
    v->task = t;
    if (labels) v->labels_path = labels;
    return CLI_OK;
}

int cli_views_option(cli_views *v, int c, const char *arg)
{
    switch (c) {
    case CLI_VOPT_IMAGE: v->image = arg; return CLI_OK;
    case CLI_VOPT_CLASSIFY: return set_task(v, CLI_TASK_CLASSIFY, arg);
    case CLI_VOPT_DETECT: return set_task(v, CLI_TASK_DETECT, arg);
    case CLI_VOPT_POSE: return set_task(v, CLI_TASK_POSE, NULL);
    case CLI_VOPT_SEGMENT: return set_task(v, CLI_TASK_SEGMENT, NULL);
    case CLI_VOPT_DRAW: v->draw = arg; return CLI_OK;
    case CLI_VOPT_JSON: v->json = true; return CLI_OK;
    case CLI_VOPT_LABELS: v->extra_labels = arg; return CLI_OK;
    case CLI_VOPT_TOP:
        if (!cli_parse_u64(arg, &v->top) || v->top < 1 || v->top > 1000)
            return cli_usage(v->cmd, "--top must be 1 .. 1000");
        return CLI_OK;
    case CLI_VOPT_THRESHOLD:
        if (!cli_parse_double(arg, &v->threshold) || !(v->threshold >= 0 && v->threshold <= 1))
            return cli_usage(v->cmd, "--threshold must be 0 .. 1");
        v->threshold_set = true;
        return CLI_OK;
    default: return -1;
    }
}

int cli_views_check(const cli_views *v)
{
    if (v->draw && !v->image) return cli_usage(v->cmd, "--draw needs the picture (--image)");
    if (v->draw && v->task == CLI_TASK_NONE)
        return cli_usage(v->cmd, "--draw needs a task: --classify, --detect, --pose or --segment");
    if (v->threshold_set && v->task != CLI_TASK_DETECT && v->task != CLI_TASK_POSE)
        return cli_usage(v->cmd, "--threshold is for --detect and --pose");
    if (v->extra_labels && v->task != CLI_TASK_SEGMENT)
        return cli_usage(v->cmd, "--labels is for --segment (--classify and --detect take theirs)");
    if (v->json && !cli_json_available()) return cli_no_json();
    if (v->draw && !npk_image_format_available(NPK_IMAGE_PNG))
        return cli_fail("--draw writes PNG, which needs libspng (not in this build)");
    return CLI_OK;
}

int cli_views_load(cli_views *v)
{
    npk_error err = {0};
    if (v->image && (npk_protect_path(v->image, &err) || npk_image_load(v->image, &v->pic, &err)))
        return cli_error(v->image, &err);
    if (v->extra_labels) v->labels_path = v->extra_labels;
    if (v->labels_path) {
        npk_mapped m = {0};
        npk_status st = npk_map_file(v->labels_path, &m, &err);
        if (!st) st = npk_vis_labels_parse(m.data, m.size, &v->labels, &err);
        npk_unmap_file(&m);
        if (st) return cli_error(v->labels_path, &err);
    }
    return CLI_OK;
}

int cli_views_picture_input(const cli_views *v, const npk_tfl_view *in, uint32_t n,
                            const char *model)
{
    (void)v;
    if (n == 1) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (in[i].ndim == 4 && in[i].dims[0] == 1 && (in[i].dims[3] == 3 || in[i].dims[3] == 1))
            return (int)i;
    cli_fail("%s: no input takes a picture ([1, H, W, 3])", model);
    return -1;
}

int cli_views_fill(cli_views *v, const npk_tfl_view *input, const char *model)
{
    npk_error err = {0};
    if (npk_vis_fill_input(&v->pic, input, &err)) return cli_error(model, &err);
    return CLI_OK;
}

/* ---- printing ---- */

static const char *task_name(cli_task t)
{
    switch (t) {
    case CLI_TASK_CLASSIFY: return "classify";
    case CLI_TASK_DETECT: return "detect";
    case CLI_TASK_POSE: return "pose";
    case CLI_TASK_SEGMENT: return "segment";
    default: return "none";
    }
}

/* The label of class id (printable; nothing when the labels do not name
 * it), then the end of the line. */
static void print_label_line(const cli_views *v, int32_t id)
{
    const char *l = npk_vis_label(&v->labels, id);
    char *u = cli_utf8_dup(l ? l : "", true);
    fputs(u ? u : "?", stdout);
    free(u);
    putchar('\n');
}

#ifdef NPK_HAVE_CJSON
/* {"id": id, "label": its label (when the labels name it)}, added to arr;
 * the caller adds what it knows of the class. */
static cJSON *json_class(const cli_views *v, cJSON *arr, int32_t id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", id);
    const char *l = npk_vis_label(&v->labels, id);
    if (l) cli_json_str(o, "label", l);
    cJSON_AddItemToArray(arr, o);
    return o;
}
#endif

static int classify(cli_views *v, const npk_tfl_view *outs, uint32_t n, npk_image *canvas)
{
    npk_error err = {0};
    if (n != 1) return cli_fail("--classify: the model has %u outputs; expected one", n);
    npk_vis_class *c = calloc(v->top, sizeof *c);
    uint32_t got = 0;
    if (!c) return cli_fail("out of memory");
    if (npk_vis_classify(&outs[0], (uint32_t)v->top, c, &got, &err)) {
        free(c);
        return cli_error(NULL, &err);
    }
#ifdef NPK_HAVE_CJSON
    if (v->json) {
        v->out = cJSON_CreateArray();
        for (uint32_t i = 0; i < got; i++) {
            cJSON_AddNumberToObject(json_class(v, v->out, c[i].id), "score", c[i].score);
        }
    }
#endif
    if (!v->json) {
        printf("top %u of %zu classes:\n", got,
               (size_t)outs[0].bytes ? (size_t)outs[0].dims[outs[0].ndim - 1] : 0);
        for (uint32_t i = 0; i < got; i++) {
            printf("  %5d  %.5f  ", c[i].id, (double)c[i].score);
            print_label_line(v, c[i].id);
        }
    }
    if (canvas && got) {
        /* The best class written in the top-left corner. */
        npk_vis_box b = {0, 0, 0, 0, c[0].id, c[0].score};
        npk_vis_draw_boxes(canvas, &b, 1, &v->labels);
    }
    free(c);
    return CLI_OK;
}

static int detect(cli_views *v, const npk_tfl_view *outs, uint32_t n, npk_image *canvas)
{
    npk_error err = {0};
    enum { CAP = 1000 };
    npk_vis_box *b = calloc(CAP, sizeof *b);
    uint32_t got = 0;
    const float thr = v->threshold_set ? (float)v->threshold : 0.5f;
    if (!b) return cli_fail("out of memory");
    if (npk_vis_detect(outs, n, thr, b, CAP, &got, &err)) {
        free(b);
        return cli_error(NULL, &err);
    }
#ifdef NPK_HAVE_CJSON
    if (v->json) {
        v->out = cJSON_CreateArray();
        for (uint32_t i = 0; i < got; i++) {
            cJSON *o = json_class(v, v->out, b[i].id);
            cJSON_AddNumberToObject(o, "score", b[i].score);
            cJSON *box = cJSON_AddObjectToObject(o, "box");
            cJSON_AddNumberToObject(box, "ymin", b[i].ymin);
            cJSON_AddNumberToObject(box, "xmin", b[i].xmin);
            cJSON_AddNumberToObject(box, "ymax", b[i].ymax);
            cJSON_AddNumberToObject(box, "xmax", b[i].xmax);
        }
    }
#endif
    if (!v->json) {
        printf("%u detection%s with score >= %.2f:\n", got, got == 1 ? "" : "s", (double)thr);
        for (uint32_t i = 0; i < got; i++) {
            printf("  %4d  %.3f  box (y, x) %.3f, %.3f .. %.3f, %.3f", b[i].id, (double)b[i].score,
                   (double)b[i].ymin, (double)b[i].xmin, (double)b[i].ymax, (double)b[i].xmax);
            if (v->pic.rgb)
                printf(" = pixels x %.0f..%.0f y %.0f..%.0f", (double)b[i].xmin * v->pic.width,
                       (double)b[i].xmax * v->pic.width, (double)b[i].ymin * v->pic.height,
                       (double)b[i].ymax * v->pic.height);
            printf("  ");
            print_label_line(v, b[i].id);
        }
    }
    if (canvas) npk_vis_draw_boxes(canvas, b, got, &v->labels);
    free(b);
    return CLI_OK;
}

static int pose(cli_views *v, const npk_tfl_view *outs, uint32_t n, const npk_tfl_view *in,
                npk_image *canvas)
{
    npk_error err = {0};
    enum { CAP = 100 };
    npk_vis_pose *p = calloc(CAP, sizeof *p);
    uint32_t got = 0;
    const float thr = v->threshold_set ? (float)v->threshold : 0.2f;
    const uint32_t h = in && in->ndim == 4 ? (uint32_t)in->dims[1] : 0,
                   w = in && in->ndim == 4 ? (uint32_t)in->dims[2] : 0;
    if (!p) return cli_fail("out of memory");
    if (npk_vis_find_poses(outs, n, h, w, thr, p, CAP, &got, &err)) {
        free(p);
        return cli_error(NULL, &err);
    }
#ifdef NPK_HAVE_CJSON
    if (v->json) {
        v->out = cJSON_CreateArray();
        for (uint32_t i = 0; i < got; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "score", p[i].score);
            cJSON *ks = cJSON_AddArrayToObject(o, "keypoints");
            for (int k = 0; k < NPK_VIS_KEYPOINTS; k++) {
                cJSON *kp = cJSON_CreateObject();
                cJSON_AddStringToObject(kp, "name", npk_vis_keypoint_name(k));
                cJSON_AddNumberToObject(kp, "y", p[i].y[k]);
                cJSON_AddNumberToObject(kp, "x", p[i].x[k]);
                cJSON_AddNumberToObject(kp, "score", p[i].kscore[k]);
                cJSON_AddItemToArray(ks, kp);
            }
            cJSON_AddItemToArray(v->out, o);
        }
    }
#endif
    if (!v->json) {
        printf("%u pose%s with score >= %.2f (keypoints y, x normalised):\n", got,
               got == 1 ? "" : "s", (double)thr);
        for (uint32_t i = 0; i < got; i++) {
            printf("  pose %u: score %.3f\n", i, (double)p[i].score);
            for (int k = 0; k < NPK_VIS_KEYPOINTS; k++)
                printf("    %-15s %.3f, %.3f  %.3f\n", npk_vis_keypoint_name(k), (double)p[i].y[k],
                       (double)p[i].x[k], (double)p[i].kscore[k]);
        }
    }
    if (canvas) npk_vis_draw_poses(canvas, p, got, thr);
    free(p);
    return CLI_OK;
}

static int segment(cli_views *v, const npk_tfl_view *outs, uint32_t n, npk_image *canvas)
{
    npk_error err = {0};
    npk_vis_segmap map;
    if (n != 1) return cli_fail("--segment: the model has %u outputs; expected one", n);
    if (npk_vis_segment(&outs[0], &map, &err)) return cli_error(NULL, &err);
    const uint32_t nc = map.nclass;
    uint64_t *counts = calloc(nc ? nc : 1, sizeof *counts);
    if (!counts) {
        npk_vis_segmap_free(&map);
        return cli_fail("out of memory");
    }
    npk_vis_segmap_counts(&map, counts, nc);
    const double total = (double)map.width * map.height;
#ifdef NPK_HAVE_CJSON
    if (v->json) {
        v->out = cJSON_CreateObject();
        cJSON_AddNumberToObject(v->out, "width", map.width);
        cJSON_AddNumberToObject(v->out, "height", map.height);
        cJSON *cs = cJSON_AddArrayToObject(v->out, "classes");
        for (uint32_t c = 0; c < nc; c++) {
            if (!counts[c]) continue;
            cJSON *o = json_class(v, cs, (int32_t)c);
            cJSON_AddNumberToObject(o, "pixels", (double)counts[c]);
            cJSON_AddNumberToObject(o, "fraction", (double)counts[c] / total);
        }
    }
#endif
    if (!v->json) {
        printf("%u x %u class map:\n", map.width, map.height);
        for (uint32_t c = 0; c < nc; c++) {
            if (!counts[c]) continue;
            printf("  %4u  %6.2f%%  ", c, 100.0 * (double)counts[c] / total);
            print_label_line(v, (int32_t)c);
        }
    }
    if (canvas) npk_vis_draw_segmap(canvas, &map, 0.5f, &v->labels);
    free(counts);
    npk_vis_segmap_free(&map);
    return CLI_OK;
}

int cli_views_show(cli_views *v, const npk_tfl_view *outs, uint32_t n,
                   const npk_tfl_view *picture_input)
{
    if (v->task == CLI_TASK_NONE) return CLI_OK;
    npk_error err = {0};
    npk_image canvas = {0};
    if (v->draw) {
        if (npk_image_alloc(&canvas, v->pic.width, v->pic.height, &err))
            return cli_error(v->draw, &err);
        memcpy(canvas.rgb, v->pic.rgb, (size_t)v->pic.width * v->pic.height * 3);
    }
    npk_image *cv = v->draw ? &canvas : NULL;
    int rc;
    switch (v->task) {
    case CLI_TASK_CLASSIFY: rc = classify(v, outs, n, cv); break;
    case CLI_TASK_DETECT: rc = detect(v, outs, n, cv); break;
    case CLI_TASK_POSE: rc = pose(v, outs, n, picture_input, cv); break;
    default: rc = segment(v, outs, n, cv); break;
    }
    if (!rc && v->draw) {
        if (npk_image_save_png(v->draw, &canvas, &err))
            rc = cli_error(v->draw, &err);
        else if (!v->json)
            printf("%s drawn on %s -> %s\n", task_name(v->task), v->image, v->draw);
    }
    npk_image_free(&canvas);
    return rc;
}

#ifdef NPK_HAVE_CJSON
void cli_views_json(cli_views *v, cJSON *obj)
{
    if (!v->out) return;
    cJSON_AddItemToObject(obj, task_name(v->task), v->out);
    v->out = NULL;
    if (v->draw) cli_json_str(obj, "drawing", v->draw);
}
#endif
