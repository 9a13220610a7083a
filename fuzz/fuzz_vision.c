/* Task views on arbitrary bytes. First byte: which view. Label files (the
 * rest is the file); classification, detection, pose and segmentation on
 * output views whose shapes and types come from the next bytes and whose
 * values are the rest; each result drawn on a small picture. */
#include <stdlib.h>
#include <string.h>

#include "npukit/vision.h"

static void labels(const uint8_t *data, size_t size)
{
    npk_vis_labels l;
    if (npk_vis_labels_parse(data, size, &l, NULL) == NPK_OK) {
        for (uint32_t i = 0; i < l.count; i++) (void)npk_vis_label(&l, i);
        npk_vis_labels_free(&l);
    }
}

static const npk_tfl_quant QUANT;

static const int8_t TYPES[] = {NPK_TFL_FLOAT32, NPK_TFL_UINT8, NPK_TFL_INT8,
                               NPK_TFL_INT16,   NPK_TFL_INT32, NPK_TFL_INT64};

/* Up to four views from the bytes: a header per view (type, rank, dims,
 * quantisation), then the data of all of them. */
static uint32_t views(const uint8_t *d, size_t n, npk_tfl_view *v, uint8_t **buf)
{
    size_t pos = 0;
    uint32_t nv = 0;
    while (nv < 4 && pos + 6 <= n) {
        npk_tfl_view *x = &v[nv];
        memset(x, 0, sizeof *x);
        x->name = "out";
        x->type = TYPES[d[pos] % 6];
        x->ndim = 1 + d[pos + 1] % 4;
        size_t count = 1;
        for (uint32_t k = 0; k < x->ndim; k++) {
            x->dims[k] = 1 + d[pos + 2 + k % 4] % 40;
            count *= (size_t)x->dims[k];
        }
        if (d[pos + 1] & 0x80) {
            x->scale = 0.01f * (float)(1 + d[pos + 5] % 50);
            x->zero_point = d[pos + 5] - 128;
            x->q = &QUANT; /* the views read scale and zero_point; q says they are set */
        }
        pos += 6;
        x->bytes = count * npk_tfl_type_size(x->type);
        nv++;
    }
    size_t total = 0;
    for (uint32_t i = 0; i < nv; i++) total += v[i].bytes;
    *buf = calloc(total + 1, 1);
    if (!*buf) return 0;
    memcpy(*buf, d + pos, n - pos < total ? n - pos : total);
    size_t at = 0;
    for (uint32_t i = 0; i < nv; i++) {
        v[i].data = *buf + at;
        at += v[i].bytes;
    }
    return nv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] % 5 == 0) {
        labels(data + 1, size - 1);
        return 0;
    }
    npk_tfl_view v[4];
    uint8_t *buf = NULL;
    const uint32_t nv = views(data + 1, size - 1, v, &buf);
    npk_image img;
    if (!nv || npk_image_alloc(&img, 37, 23, NULL)) {
        free(buf);
        return 0;
    }
    switch (data[0] % 5) {
    case 1: {
        npk_vis_class c[5];
        uint32_t n = 0;
        npk_vis_classify(&v[0], 5, c, &n, NULL);
        break;
    }
    case 2: {
        npk_vis_box b[16];
        uint32_t n = 0;
        if (!npk_vis_detect(v, nv, 0.1f, b, 16, &n, NULL)) npk_vis_draw_boxes(&img, b, n, NULL);
        break;
    }
    case 3: {
        npk_vis_pose p[4];
        uint32_t n = 0;
        if (!npk_vis_find_poses(v, nv, 31, 17, 0.0f, p, 4, &n, NULL))
            npk_vis_draw_poses(&img, p, n, 0.0f);
        break;
    }
    default: {
        npk_vis_segmap m;
        if (!npk_vis_segment(&v[0], &m, NULL)) {
            uint64_t counts[8];
            npk_vis_segmap_counts(&m, counts, 8);
            npk_vis_draw_segmap(&img, &m, 0.5f, NULL);
            npk_vis_segmap_free(&m);
        }
    }
    }
    npk_image_free(&img);
    free(buf);
    return 0;
}
