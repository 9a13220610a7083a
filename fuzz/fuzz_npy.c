#include <stdlib.h>
#include "npukit/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tensor t;
    npk_error err = {0};
    if (npk_npy_parse(data, size, &t, &err) == NPK_OK) {
        uint8_t *out;
        size_t len;
        if (npk_npy_encode(&t, &out, &len, &err) == NPK_OK) free(out);
        npk_tensor_free(&t);
    }
    return 0;
}
