/* Task views on the command line (--image, --classify, --detect, --pose,
 * --segment, --draw, --top, --threshold, --json), shared by `tflite run` and
 * `edgetpu run` (and any run command whose outputs are interpreter views).
 * The work is libnpukit's (vision.h); this file parses, prints and writes. */
#ifndef NPK_CLI_VIEWS_H
#define NPK_CLI_VIEWS_H

#include <getopt.h>

#include "cli.h"
#include "npukit/vision.h"

enum {
    CLI_VOPT_IMAGE = 0x1000,
    CLI_VOPT_CLASSIFY,
    CLI_VOPT_DETECT,
    CLI_VOPT_POSE,
    CLI_VOPT_SEGMENT,
    CLI_VOPT_DRAW,
    CLI_VOPT_TOP,
    CLI_VOPT_THRESHOLD,
    CLI_VOPT_JSON,
    CLI_VOPT_LABELS
};

/* Entries for a getopt_long option table. */
/* clang-format off */
#define CLI_VIEW_OPTIONS \
    {"image", required_argument, NULL, CLI_VOPT_IMAGE}, \
    {"classify", required_argument, NULL, CLI_VOPT_CLASSIFY}, \
    {"detect", required_argument, NULL, CLI_VOPT_DETECT}, \
    {"pose", no_argument, NULL, CLI_VOPT_POSE}, \
    {"segment", no_argument, NULL, CLI_VOPT_SEGMENT}, \
    {"labels", required_argument, NULL, CLI_VOPT_LABELS}, \
    {"draw", required_argument, NULL, CLI_VOPT_DRAW}, \
    {"top", required_argument, NULL, CLI_VOPT_TOP}, \
    {"threshold", required_argument, NULL, CLI_VOPT_THRESHOLD}, \
    {"json", no_argument, NULL, CLI_VOPT_JSON}
/* clang-format on */

/* Usage text of the options, for help screens. */
#define CLI_VIEW_USAGE                                                                             \
    "[--classify LABELS | --detect LABELS | --pose | --segment [--labels LABELS]]\n"               \
    "      [--draw OUT.png] [--top K] [--threshold T] [--json]"

typedef enum {
    CLI_TASK_NONE,
    CLI_TASK_CLASSIFY,
    CLI_TASK_DETECT,
    CLI_TASK_POSE,
    CLI_TASK_SEGMENT
} cli_task;

typedef struct cli_views {
    const char *cmd; /* for usage messages */
    const char *image, *labels_path, *draw;
    cli_task task;
    bool json;
    uint64_t top;     /* classify: how many (5) */
    double threshold; /* detect / pose: minimum score (0.5 / 0.2) */
    bool threshold_set;
    const char *extra_labels; /* --labels (for --segment) */
    /* loaded */
    npk_image pic;
    npk_vis_labels labels;
#ifdef NPK_HAVE_CJSON
    cJSON *out; /* --json: the view's object */
#endif
} cli_views;

void cli_views_init(cli_views *v, const char *cmd);
void cli_views_free(cli_views *v);
/* One getopt code: CLI_OK when handled, CLI_FAIL on a bad value, -1 when
 * it is not a view option. */
int cli_views_option(cli_views *v, int c, const char *arg);
/* After parsing: combinations that make no sense (two tasks, --draw
 * without --image, ...). */
int cli_views_check(const cli_views *v);
/* Read the picture and the labels (one error line naming the file). */
int cli_views_load(cli_views *v);
/* Which of the inputs takes the picture: the only one, else the first
 * [1, H, W, 1|3] one; -1 (after an error message) when none fits. */
int cli_views_picture_input(const cli_views *v, const npk_tfl_view *in, uint32_t n,
                            const char *model);
/* Write the picture into that input view. */
int cli_views_fill(cli_views *v, const npk_tfl_view *input, const char *model);
/* The task view of the outputs: printed (text), or kept for the JSON object
 * (cli_views_json), and drawn to --draw. picture_input: the input the
 * picture went into (its size normalises PoseNet's pixels), may be NULL. */
int cli_views_show(cli_views *v, const npk_tfl_view *outs, uint32_t n,
                   const npk_tfl_view *picture_input);
#ifdef NPK_HAVE_CJSON
/* Move the view's JSON (if any) into obj under the task's name. */
void cli_views_json(cli_views *v, cJSON *obj);
#endif

#endif
