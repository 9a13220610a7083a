/* The FlatBuffers reader on arbitrary bytes: the root table's first slots
 * read as every kind of field, sub-tables and vectors of tables followed a
 * few levels deep, and [ubyte] vectors as nested buffers. */
#include "npukit/flatbuf.h"

static void table(const npk_fb_table *t, int depth);

static void buffer(const npk_fb_buf *b, int depth)
{
    npk_fb_table r;
    npk_error err = {0};
    if (npk_fb_root(b, NULL, &r, &err) == NPK_OK) table(&r, depth);
}

static void table(const npk_fb_table *t, int depth)
{
    npk_error err = {0};
    for (int slot = 0; slot < 8; slot++) {
        uint64_t u;
        double d;
        const uint8_t *p;
        uint8_t type;
        bool present;
        npk_fb_str s;
        npk_fb_vec v;
        npk_fb_table sub;
        npk_fb_u64(t, slot, 0, &u, &err);
        npk_fb_f64(t, slot, 0, &d, &err);
        npk_fb_struct(t, slot, 12, &p, &err);
        npk_fb_string(t, slot, &s, &err);
        if (depth >= 4) continue;
        if (npk_fb_union(t, slot, &type, &sub, &err) == NPK_OK && type) table(&sub, depth + 1);
        if (npk_fb_subtable(t, slot, &sub, &present, &err) == NPK_OK && present)
            table(&sub, depth + 1);
        if (npk_fb_vector(t, slot, 4, &v, &err) == NPK_OK)
            for (uint32_t i = 0; i < v.count && i < 4; i++) {
                if (npk_fb_vec_table(&v, i, &sub, &err) == NPK_OK) table(&sub, depth + 1);
                npk_fb_vec_string(&v, i, &s, &err);
            }
        npk_fb_buf nb;
        if (npk_fb_vector(t, slot, 1, &v, &err) == NPK_OK && v.present &&
            npk_fb_nested(&v, &nb, &err) == NPK_OK)
            buffer(&nb, depth + 1);
        npk_error_clear(&err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npk_fb_buf b;
    npk_error err = {0};
    if (npk_fb_init(&b, data, size, 0, &err) == NPK_OK) buffer(&b, 0);
    return 0;
}
