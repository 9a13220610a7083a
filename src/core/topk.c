/* The top K of a score vector (npukit/classify.h). */
#include <math.h>
#include <string.h>

#include "npukit/classify.h"

static double value(const void *data, npk_dtype dt, size_t i, int64_t *raw)
{
    switch (dt) {
    case NPK_U8: *raw = ((const uint8_t *)data)[i]; break;
    case NPK_I8: *raw = ((const int8_t *)data)[i]; break;
    case NPK_I16: *raw = ((const int16_t *)data)[i]; break;
    case NPK_I32: *raw = ((const int32_t *)data)[i]; break;
    default: {
        *raw = 0;
        float f;
        memcpy(&f, (const uint8_t *)data + 4 * i, 4);
        return isnan(f) ? -INFINITY : (double)f;
    }
    }
    return (double)*raw;
}

/* a ranks before b: higher score, then lower index. */
static bool before(const npk_class_score *a, double va, const npk_class_score *b, double vb)
{
    return va > vb || (va == vb && a->index < b->index);
}

size_t npk_top_k(const void *data, npk_dtype dt, size_t n, double scale, int32_t zero_point,
                 size_t k, npk_class_score *out, npk_error *err)
{
    if (dt != NPK_U8 && dt != NPK_I8 && dt != NPK_I16 && dt != NPK_I32 && dt != NPK_F32) {
        npk_fail(err, NPK_E_UNSUPPORTED, "scores of type %s (u8, i8, i16, i32 or f32 expected)",
                 npk_dtype_name(dt));
        return 0;
    }
    if (k > n) k = n;
    if (!k) return 0;
    /* Insertion into the k best so far, ranked by the stored value (the
     * dequantisation is monotonic for scale > 0); ranking values kept
     * alongside in score until the end. */
    size_t have = 0;
    for (size_t i = 0; i < n; i++) {
        npk_class_score c = {(uint32_t)i, 0, 0};
        double v = value(data, dt, i, &c.raw);
        c.score = v;
        if (have == k && !before(&c, v, &out[k - 1], out[k - 1].score)) continue;
        size_t at = have < k ? have++ : k - 1;
        while (at > 0 && before(&c, v, &out[at - 1], out[at - 1].score)) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = c;
    }
    for (size_t i = 0; i < k; i++) {
        if (dt == NPK_F32) {
            float f;
            memcpy(&f, (const uint8_t *)data + 4 * out[i].index, 4);
            out[i].score = f;
        } else if (scale > 0) {
            out[i].score = scale * (double)(out[i].raw - zero_point);
        }
    }
    return k;
}
