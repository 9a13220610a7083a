#include <stdlib.h>

#include "npukit/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_tensor_set s;
    npk_error err = {0};
    if (npk_st_parse(data, size, &s, &err) == NPK_OK) {
        uint8_t *out;
        size_t len;
        if (npk_st_encode(s.items, s.count, &out, &len, &err) == NPK_OK) free(out);
        npk_set_free(&s);
    }
    return 0;
}
