/* Task views: top-k classes, detections, poses and class maps from a
 * model's output views. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/vision.h"

/* Element i of a view as a real number (quantised integers dequantised). */
static double value(const npk_tfl_view *v, size_t i)
{
    double q;
    switch (v->type) {
    case NPK_TFL_FLOAT32: return ((const float *)v->data)[i];
    case NPK_TFL_UINT8: q = ((const uint8_t *)v->data)[i]; break;
    case NPK_TFL_INT8: q = ((const int8_t *)v->data)[i]; break;
    case NPK_TFL_INT16: q = ((const int16_t *)v->data)[i]; break;
    case NPK_TFL_INT32: q = ((const int32_t *)v->data)[i]; break;
    case NPK_TFL_INT64: q = (double)((const int64_t *)v->data)[i]; break;
    default: return 0;
    }
    return v->scale > 0 ? (q - v->zero_point) * (double)v->scale : q;
}

static bool readable(int8_t type)
{
    return type == NPK_TFL_FLOAT32 || type == NPK_TFL_UINT8 || type == NPK_TFL_INT8 ||
           type == NPK_TFL_INT16 || type == NPK_TFL_INT32 || type == NPK_TFL_INT64;
}

static size_t count(const npk_tfl_view *v)
{
    size_t n = 1;
    for (uint32_t d = 0; d < v->ndim; d++) n *= v->dims[d] > 0 ? (size_t)v->dims[d] : 0;
    return n;
}

/* The dimensions other than leading 1s, e.g. [1, 1, 1, 1001] -> 1 dim of 1001. */
static uint32_t core_dims(const npk_tfl_view *v, int32_t *dims)
{
    uint32_t d = 0, k = 0;
    while (d + 1 < v->ndim && v->dims[d] == 1) d++;
    for (; d < v->ndim; d++) dims[k++] = v->dims[d];
    return k;
}

static npk_status check_view(const npk_tfl_view *v, const char *what, npk_error *err)
{
    if (!v || !v->data || !readable(v->type) || count(v) == 0)
        return npk_fail(err, NPK_E_ARG, "%s: output \"%.80s\" is %s with %zu elements", what,
                        v && v->name ? v->name : "?", v ? npk_tfl_type_name(v->type) : "?",
                        v ? count(v) : 0);
    return NPK_OK;
}

/* ---- pictures ---- */

npk_status npk_vis_image_input(const npk_tfl_view *input, npk_image_input *in, npk_error *err)
{
    memset(in, 0, sizeof *in);
    switch (input->type) {
    case NPK_TFL_UINT8: in->dtype = NPK_U8; break;
    case NPK_TFL_INT8: in->dtype = NPK_I8; break;
    case NPK_TFL_FLOAT32: in->dtype = NPK_F32; break;
    default:
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "input \"%.80s\" is %s: pictures go into uint8, int8 or float32 inputs",
                        input->name, npk_tfl_type_name(input->type));
    }
    if (input->ndim < 3 || input->ndim > 4)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "input \"%.80s\" has %u dimensions: a picture needs [1, H, W, C]",
                        input->name, input->ndim);
    in->ndim = (int)input->ndim;
    for (uint32_t d = 0; d < input->ndim; d++) in->shape[d] = input->dims[d];
    in->has_quant = input->q != NULL && input->scale > 0;
    in->scale = input->scale;
    in->zero_point = input->zero_point;
    in->range = NPK_IMAGE_RANGE_UNIT;
    return NPK_OK;
}

npk_status npk_vis_fill_input(const npk_image *img, const npk_tfl_view *input, npk_error *err)
{
    npk_image_input in;
    npk_tensor t;
    npk_status st = npk_vis_image_input(input, &in, err);
    if (st || (st = npk_image_to_tensor(img, &in, NULL, &t, err))) return st;
    if (t.nbytes != input->bytes)
        st = npk_fail(err, NPK_E_ARG, "input \"%.80s\": %zu bytes for %zu", input->name, t.nbytes,
                      input->bytes);
    else
        memcpy(input->data, t.data, t.nbytes);
    npk_tensor_free(&t);
    return st;
}

/* ---- classification ---- */

npk_status npk_vis_classify(const npk_tfl_view *scores, uint32_t k, npk_vis_class *out, uint32_t *n,
                            npk_error *err)
{
    int32_t dims[NPK_TFL_VIEW_MAX_DIMS];
    *n = 0;
    npk_status st = check_view(scores, "classification", err);
    if (st) return st;
    if (core_dims(scores, dims) != 1)
        return npk_fail(err, NPK_E_ARG,
                        "classification: output \"%.80s\" is not a vector of scores ([1, N])",
                        scores->name);
    const size_t total = (size_t)dims[0];
    /* Insertion into the sorted top k: k is small. */
    for (size_t i = 0; i < total; i++) {
        const float s = (float)value(scores, i);
        uint32_t at = *n;
        while (at > 0 && out[at - 1].score < s) at--;
        if (at >= k) continue;
        uint32_t last = *n < k ? *n : k - 1;
        memmove(out + at + 1, out + at, (last - at) * sizeof *out);
        out[at] = (npk_vis_class){(int32_t)i, s};
        if (*n < k) (*n)++;
    }
    return NPK_OK;
}

/* ---- detection ---- */

npk_status npk_vis_detect(const npk_tfl_view *outs, uint32_t nouts, float threshold,
                          npk_vis_box *out, uint32_t cap, uint32_t *n, npk_error *err)
{
    *n = 0;
    if (nouts != 4)
        return npk_fail(err, NPK_E_ARG,
                        "detection: the model has %u outputs; expected 4 (boxes, classes, "
                        "scores, count of TFLite_Detection_PostProcess)",
                        nouts);
    for (uint32_t i = 0; i < 4; i++) {
        npk_status st = check_view(&outs[i], "detection", err);
        if (st) return st;
    }
    const npk_tfl_view *b = &outs[0], *c = &outs[1], *s = &outs[2];
    const size_t nb = count(b) / 4;
    if (count(b) % 4 || b->dims[b->ndim - 1] != 4 || count(c) != nb || count(s) != nb ||
        count(&outs[3]) != 1)
        return npk_fail(err, NPK_E_ARG,
                        "detection: outputs are not boxes [1, N, 4], classes [1, N], scores [1, "
                        "N] and a count [1]");
    double total = value(&outs[3], 0);
    size_t m = total > 0 ? (total < (double)nb ? (size_t)total : nb) : 0;
    for (size_t i = 0; i < m && *n < cap; i++) {
        const float score = (float)value(s, i);
        if (!(score >= threshold)) continue;
        npk_vis_box *o = &out[(*n)++];
        o->ymin = (float)value(b, 4 * i);
        o->xmin = (float)value(b, 4 * i + 1);
        o->ymax = (float)value(b, 4 * i + 2);
        o->xmax = (float)value(b, 4 * i + 3);
        const double id = value(c, i);
        o->id = id >= 0 && id < 1e9 ? (int32_t)lround(id) : -1;
        o->score = score;
    }
    return NPK_OK;
}

/* ---- pose ---- */

static const char *const KEYPOINTS[NPK_VIS_KEYPOINTS] = {
    "nose",           "left_eye",   "right_eye",   "left_ear",   "right_ear",   "left_shoulder",
    "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip",
    "right_hip",      "left_knee",  "right_knee",  "left_ankle", "right_ankle"};

const char *npk_vis_keypoint_name(int k)
{
    return k >= 0 && k < NPK_VIS_KEYPOINTS ? KEYPOINTS[k] : "?";
}

npk_status npk_vis_find_poses(const npk_tfl_view *outs, uint32_t nouts, uint32_t in_h,
                              uint32_t in_w, float threshold, npk_vis_pose *out, uint32_t cap,
                              uint32_t *n, npk_error *err)
{
    *n = 0;
    for (uint32_t i = 0; i < nouts; i++) {
        npk_status st = check_view(&outs[i], "pose", err);
        if (st) return st;
    }
    const uint32_t K = NPK_VIS_KEYPOINTS;
    if (nouts == 1 && count(&outs[0]) % (3 * K) == 0 && outs[0].dims[outs[0].ndim - 1] == 3) {
        /* MoveNet: [1, P, 17, 3] of (y, x, score), normalised; the pose's
         * score is the mean of its keypoint scores. */
        const size_t np = count(&outs[0]) / (3 * K);
        for (size_t p = 0; p < np && *n < cap; p++) {
            npk_vis_pose ps = {0};
            double sum = 0;
            for (uint32_t k = 0; k < K; k++) {
                const size_t at = (p * K + k) * 3;
                ps.y[k] = (float)value(&outs[0], at);
                ps.x[k] = (float)value(&outs[0], at + 1);
                ps.kscore[k] = (float)value(&outs[0], at + 2);
                sum += ps.kscore[k];
            }
            ps.score = (float)(sum / K);
            if (ps.score >= threshold) out[(*n)++] = ps;
        }
        return NPK_OK;
    }
    if (nouts == 4 && count(&outs[0]) % (2 * K) == 0 && outs[0].dims[outs[0].ndim - 1] == 2) {
        const size_t np = count(&outs[0]) / (2 * K);
        if (count(&outs[1]) != np * K || count(&outs[2]) != np || count(&outs[3]) != 1)
            return npk_fail(err, NPK_E_ARG,
                            "pose: outputs are not keypoints [1, P, 17, 2], keypoint scores [1, "
                            "P, 17], pose scores [1, P] and a count [1]");
        if (!in_h || !in_w) return npk_fail(err, NPK_E_ARG, "pose: the input size is unknown");
        const double total = value(&outs[3], 0);
        const size_t m = total > 0 ? (total < (double)np ? (size_t)total : np) : 0;
        for (size_t p = 0; p < m && *n < cap; p++) {
            npk_vis_pose ps = {0};
            ps.score = (float)value(&outs[2], p);
            if (!(ps.score >= threshold)) continue;
            for (uint32_t k = 0; k < K; k++) {
                ps.y[k] = (float)(value(&outs[0], (p * K + k) * 2) / in_h);
                ps.x[k] = (float)(value(&outs[0], (p * K + k) * 2 + 1) / in_w);
                ps.kscore[k] = (float)value(&outs[1], p * K + k);
            }
            out[(*n)++] = ps;
        }
        return NPK_OK;
    }
    return npk_fail(err, NPK_E_ARG,
                    "pose: expected MoveNet's [1, P, 17, 3] output or the PoseNet decoder's four "
                    "outputs (keypoints, keypoint scores, pose scores, count); the model has %u "
                    "output%s",
                    nouts, nouts == 1 ? "" : "s");
}

/* ---- segmentation ---- */

void npk_vis_segmap_free(npk_vis_segmap *map)
{
    free(map->cls);
    memset(map, 0, sizeof *map);
}

npk_status npk_vis_segment(const npk_tfl_view *out, npk_vis_segmap *map, npk_error *err)
{
    memset(map, 0, sizeof *map);
    npk_status st = check_view(out, "segmentation", err);
    if (st) return st;
    const bool classes = out->type == NPK_TFL_INT64 || out->type == NPK_TFL_INT32 ||
                         (out->type == NPK_TFL_UINT8 && !out->q);
    uint32_t d = out->ndim;
    if (d > 0 && out->dims[0] == 1 && d == (classes ? 3u : 4u)) d--; /* batch of one */
    if (d != (classes ? 2u : 3u))
        return npk_fail(err, NPK_E_ARG,
                        "segmentation: output \"%.80s\" is neither classes [1, H, W] nor scores "
                        "[1, H, W, C]",
                        out->name);
    const int32_t *hw = out->dims + (out->ndim - d);
    const size_t h = (size_t)hw[0], w = (size_t)hw[1], c = classes ? 1 : (size_t)hw[2];
    const size_t npix = h * w;
    if (!(map->cls = malloc((npix > 0 ? npix : 1) * sizeof *map->cls)))
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    map->height = (uint32_t)h;
    map->width = (uint32_t)w;
    for (size_t i = 0; i < h * w; i++) {
        int64_t best = 0;
        if (classes) {
            best = out->type == NPK_TFL_INT64   ? ((const int64_t *)out->data)[i]
                   : out->type == NPK_TFL_INT32 ? ((const int32_t *)out->data)[i]
                                                : ((const uint8_t *)out->data)[i];
            if (best < 0 || best > INT32_MAX - 1) best = 0;
        } else {
            double top = value(out, i * c);
            for (size_t k = 1; k < c; k++) {
                const double v = value(out, i * c + k);
                if (v > top) {
                    top = v;
                    best = (int64_t)k;
                }
            }
        }
        map->cls[i] = (int32_t)best;
        if ((uint32_t)best + 1 > map->nclass) map->nclass = (uint32_t)best + 1;
    }
    return NPK_OK;
}

void npk_vis_segmap_counts(const npk_vis_segmap *map, uint64_t *counts, uint32_t ncounts)
{
    memset(counts, 0, ncounts * sizeof *counts);
    for (size_t i = 0; i < (size_t)map->width * map->height; i++)
        if ((uint32_t)map->cls[i] < ncounts) counts[map->cls[i]]++;
}
