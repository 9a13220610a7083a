/* `cnn2 pack` on hostile safetensors: the tensors and "__metadata__" read
 * by npk_cnn2_st_decode, the model built from them, written, and read back.
 * Invariant: whatever pack accepts, the CNN v2 parser accepts, and unpack
 * of it gives the f16 rounding of the input values. */
#include <stdlib.h>
#include <string.h>

#include "npukit/cnn2.h"
#include "npukit/half.h"

static void check_values(const npk_tensor_set *in, const npk_cnn2_model *m)
{
    npk_tensor_set out;
    if (npk_cnn2_to_tensors(m, &out, NULL)) return; /* only NOMEM can fail */
    for (size_t i = 0; i < out.count; i++) {
        const npk_tensor *a = npk_set_find(in, out.items[i].name), *b = &out.items[i];
        if (!a || npk_tensor_count(a) != npk_tensor_count(b)) abort();
        for (size_t j = 0; j < npk_tensor_count(b); j++) {
            uint16_t h = a->dtype == NPK_F16 ? ((const uint16_t *)a->data)[j]
                                             : npk_f32_to_f16(((const float *)a->data)[j]);
            float want = npk_f16_to_f32(h), got = ((const float *)b->data)[j];
            if (memcmp(&want, &got, sizeof got)) abort();
        }
    }
    npk_set_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tensor_set set;
    uint32_t version, mip;
    npk_error err = {0};
    if (npk_cnn2_st_decode(data, size, &set, &version, &mip, &err)) return 0;
    npk_cnn2_model m;
    if (!version) version = 2;
    if (version == 1) mip = 0;
    if (npk_cnn2_from_tensors(&set, version, mip, &m, &err) == NPK_OK) {
        uint8_t *buf;
        size_t len;
        if (npk_cnn2_encode(&m, &buf, &len, &err) == NPK_OK) {
            npk_cnn2_model r;
            if (npk_cnn2_parse(buf, len, &r, NULL) != NPK_OK) abort();
            check_values(&set, &r);
            npk_cnn2_free(&r);
            free(buf);
        }
        npk_cnn2_free(&m);
    }
    npk_set_free(&set);
    return 0;
}
