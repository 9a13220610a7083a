/* The FlexBuffers reader on arbitrary bytes: the whole tree walked (every
 * value read with its typed accessor), plus map lookups. */
#include "npukit/flatbuf.h"

static int visit(void *ctx, int depth, const char *key, const npk_flex_ref *r)
{
    (void)ctx;
    (void)depth;
    (void)key;
    npk_error err = {0};
    int64_t i;
    double d;
    bool b;
    npk_flex_vec m;
    npk_flex_int(r, &i, &err);
    npk_flex_float(r, &d, &err);
    npk_flex_bool(r, &b, &err);
    if (npk_flex_map(r, &m, &err) == NPK_OK) {
        npk_flex_ref v;
        bool found;
        npk_flex_map_find(&m, "4", &v, &found, &err);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_flex_ref root;
    npk_error err = {0};
    if (npk_flex_root(data, size, 0, &root, &err) == NPK_OK)
        npk_flex_walk(&root, visit, NULL, &err);
    return 0;
}
