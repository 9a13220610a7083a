/* Pictures: bytes -> BMP/PNG/JPEG decoders (header checks, then libspng or
 * stb_image) -> for decoded pictures, a bilinear resize to a size taken from
 * the input's last bytes and the conversion to u8, i8 and f32 model inputs.
 * A decoded picture must respect the size limits; a resize to the same size
 * must be an exact copy. */
#include <stdlib.h>
#include <string.h>

#include "npukit/image.h"

static void convert(const npk_image *img, uint32_t w, uint32_t h)
{
    const npk_dtype types[3] = {NPK_U8, NPK_I8, NPK_F32};
    for (int i = 0; i < 3; i++) {
        npk_image_input in = {.dtype = types[i], .ndim = 4, .shape = {1, h, w, i == 1 ? 1 : 3}};
        in.range = (npk_image_range)i;
        npk_tensor t;
        if (npk_image_to_tensor(img, &in, "x", &t, NULL) != NPK_OK) abort();
        npk_tensor_free(&t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_image img;
    npk_error err = {0};
    if (npk_image_decode(data, size, &img, &err) != NPK_OK) {
        if (img.rgb || img.width || img.height) abort(); /* a failure leaves nothing */
        return 0;
    }
    if (!img.rgb || !img.width || !img.height || img.width > NPK_IMAGE_MAX_SIDE ||
        img.height > NPK_IMAGE_MAX_SIDE || (uint64_t)img.width * img.height > NPK_IMAGE_MAX_PIXELS)
        abort();
    if ((uint64_t)img.width * img.height <= 1u << 20) {
        uint32_t w = size ? 1 + data[size - 1] % 48 : 1, h = size > 1 ? 1 + data[size - 2] % 48 : 1;
        npk_image small, same;
        if (npk_image_resize(&img, w, h, &small, NULL) != NPK_OK) abort();
        convert(&img, w, h);
        npk_image_free(&small);
        if (npk_image_resize(&img, img.width, img.height, &same, NULL) != NPK_OK) abort();
        if (memcmp(same.rgb, img.rgb, (size_t)img.width * img.height * 3)) abort();
        npk_image_free(&same);
    }
    npk_image_free(&img);
    return 0;
}
