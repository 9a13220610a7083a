/* Task views of a vision model's outputs: what people look at instead of
 * raw tensors. Classification (top-k with labels), detection (boxes,
 * classes, scores of an SSD post-processing op), pose (keypoints of the
 * PoseNet decoder or MoveNet) and segmentation (a class per pixel), each
 * with a drawing on the picture. Used by `tflite run` and `edgetpu run`
 * (and any runtime whose outputs can be described as npk_tfl_view).
 *
 * Inputs are the model's output views (tflite_interp.h: type, shape, host-
 * order data, per-tensor quantisation); quantised integer outputs are
 * dequantised as (q - zero_point) * scale. Nothing here allocates except
 * where a function says so; errors name the tensor and what was expected.
 * Definitions and examples: docs/vision.md. */
#ifndef NPUKIT_VISION_H
#define NPUKIT_VISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npukit/error.h"
#include "npukit/image.h"
#include "npukit/tflite_interp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- labels ---- */

/* A label file: one label per line (line k is class k), or lines "ID label"
 * / "ID: label" with explicit integer ids (Coral's format). Empty lines keep
 * their number; "\r\n" endings and surrounding blanks are dropped. */
typedef struct npk_vis_labels {
    uint32_t count; /* ids 0 .. count-1 */
    char **name;    /* NULL where no label is given */
} npk_vis_labels;

#define NPK_VIS_MAX_LABELS 100000

npk_status npk_vis_labels_parse(const uint8_t *buf, size_t len, npk_vis_labels *l, npk_error *err);
void npk_vis_labels_free(npk_vis_labels *l);
/* The label of a class id, or NULL. */
const char *npk_vis_label(const npk_vis_labels *l, int64_t id);

/* ---- pictures into a model ---- */

/* How a picture enters an input view (its type, [1, H, W, C] shape and
 * quantisation), for npk_image_to_tensor(). */
npk_status npk_vis_image_input(const npk_tfl_view *input, npk_image_input *in, npk_error *err);
/* Resize and convert the picture, written into the input view's data. */
npk_status npk_vis_fill_input(const npk_image *img, const npk_tfl_view *input, npk_error *err);

/* ---- classification ---- */

typedef struct npk_vis_class {
    int32_t id;
    float score; /* the output's (dequantised) value */
} npk_vis_class;

/* The k highest scores of a [N], [1, N] or [1, 1, 1, N] output, best first
 * (ties: lower id first). *n = min(k, N). */
npk_status npk_vis_classify(const npk_tfl_view *scores, uint32_t k, npk_vis_class *out, uint32_t *n,
                            npk_error *err);

/* ---- detection ---- */

typedef struct npk_vis_box {
    float ymin, xmin, ymax, xmax; /* normalised to [0, 1] of the picture */
    int32_t id;                   /* class */
    float score;
} npk_vis_box;

/* The outputs of TFLite_Detection_PostProcess: boxes [1, N, 4] (ymin, xmin,
 * ymax, xmax), classes [1, N], scores [1, N] and the count [1], in that
 * order (as the op writes them). Detections with score >= threshold, in the
 * op's order (best first), at most cap. */
npk_status npk_vis_detect(const npk_tfl_view *outs, uint32_t nouts, float threshold,
                          npk_vis_box *out, uint32_t cap, uint32_t *n, npk_error *err);

/* ---- pose ---- */

#define NPK_VIS_KEYPOINTS 17 /* COCO order: nose, eyes, ears, shoulders, ... ankles */

typedef struct npk_vis_pose {
    float score;
    float y[NPK_VIS_KEYPOINTS], x[NPK_VIS_KEYPOINTS]; /* normalised to [0, 1] */
    float kscore[NPK_VIS_KEYPOINTS];
} npk_vis_pose;

/* Keypoint names in COCO order ("nose", "left_eye", ...). */
const char *npk_vis_keypoint_name(int k);
/* Poses with score >= threshold, from either
 *   MoveNet: one output [1, 1, 17, 3] of (y, x, score), normalised; or
 *   the PoseNet decoder: keypoints [1, P, 17, 2] (y, x in input pixels),
 *   keypoint scores [1, P, 17], pose scores [1, P], count [1];
 * in_h / in_w: the model input's height and width (to normalise pixels). */
npk_status npk_vis_find_poses(const npk_tfl_view *outs, uint32_t nouts, uint32_t in_h,
                              uint32_t in_w, float threshold, npk_vis_pose *out, uint32_t cap,
                              uint32_t *n, npk_error *err);

/* ---- segmentation ---- */

typedef struct npk_vis_segmap {
    uint32_t width, height;
    int32_t *cls;    /* [height * width] class per pixel (owned) */
    uint32_t nclass; /* largest class + 1 */
} npk_vis_segmap;

/* A class map from [1, H, W] / [H, W] integer classes (an ARG_MAX output),
 * or the arg-max over C of [1, H, W, C] scores (ties: lower class). */
npk_status npk_vis_segment(const npk_tfl_view *out, npk_vis_segmap *map, npk_error *err);
void npk_vis_segmap_free(npk_vis_segmap *map);
/* Pixels of each class: counts[c] for c < ncounts. */
void npk_vis_segmap_counts(const npk_vis_segmap *map, uint64_t *counts, uint32_t ncounts);

/* ---- drawing on the picture (in place) ---- */

/* The colour of a class: PASCAL VOC's colour map (bits of the id spread
 * over R, G, B), which also serves detection classes. */
void npk_vis_color(int32_t id, uint8_t rgb[3]);
/* Each box as a rectangle in its class colour (lines of about 1/200 of the
 * picture's size), with its label or id above it when labels are given. */
void npk_vis_draw_boxes(npk_image *img, const npk_vis_box *boxes, uint32_t n,
                        const npk_vis_labels *labels);
/* Each pose's skeleton (COCO limb pairs) and keypoints; parts with a
 * keypoint score below threshold are left out. */
void npk_vis_draw_poses(npk_image *img, const npk_vis_pose *poses, uint32_t n, float threshold);
/* The class map stretched over the picture (nearest neighbour), every class
 * but 0 (background) blended in its colour with weight alpha, and a legend
 * of those classes (colour, then label or id) in the top-left corner. */
void npk_vis_draw_segmap(npk_image *img, const npk_vis_segmap *map, float alpha,
                         const npk_vis_labels *labels);

#ifdef __cplusplus
}
#endif
#endif
