/* `mgk replace` with hostile weights: a safetensors file (any names,
 * dtypes, shapes and values) replacing the weights of a fixed synthetic MGK
 * model with 8-, 4-, 2- and 6-bit layers. Invariants: an accepted
 * replacement parses again, changes only bytes inside the replaced layers'
 * weight blocks, and extracting it gives back the given weights. The seed
 * corpus is `npukit mgk extract` of the same model (see docs/fuzzing.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/mgk.h"

static const npk_mgk_model *model(void)
{
    /* Keep in step with scripts/fuzz-smoke.sh (the seed generator). */
    static const npk_mgk_synth_layer ls[] = {
        {16, 8, 3, 3, 8, 1, 1, NULL},
        {8, 4, 1, 5, 4, 1, 1, NULL},
        {4, 6, 1, 1, 2, 1, 1, NULL},
        {6, 3, 3, 3, 6, 1, 1, NULL},
    };
    static npk_mgk_model m;
    static uint8_t *buf;
    if (!buf) {
        npk_mgk_synth_spec spec = {ls, 4, 1, false, false, 0, 0};
        size_t len;
        if (npk_mgk_synth(&spec, &buf, &len, NULL) || npk_mgk_parse(buf, len, &m, NULL)) abort();
    }
    return &m;
}

/* Is byte i inside the weight block of a layer named in w? */
static int replaced(const npk_mgk_model *m, const npk_tensor_set *w, size_t i)
{
    for (size_t k = 0; k < m->nconvs; k++) {
        const npk_mgk_conv *c = &m->convs[k];
        uint64_t at = m->region_offset + c->weight_offset;
        if (i < at || i >= at + c->weight_bytes) continue;
        char name[32];
        snprintf(name, sizeof name, "layer_%d.weight", c->id);
        return npk_set_find(w, name) != NULL;
    }
    return 0;
}

/* True when every layer_* name is a canonical "layer_<id>.weight" given once,
 * so the tensor given is the one that was written. */
static int plain_names(const npk_tensor_set *w)
{
    for (size_t i = 0; i < w->count; i++) {
        const char *n = w->items[i].name;
        if (!n || strncmp(n, "layer_", 6)) continue;
        char canon[48];
        snprintf(canon, sizeof canon, "layer_%ld.weight", strtol(n + 6, NULL, 10));
        if (strcmp(canon, n)) return 0;
        for (size_t j = 0; j < i; j++)
            if (w->items[j].name && !strcmp(w->items[j].name, n)) return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const npk_mgk_model *m = model();
    npk_tensor_set w;
    npk_error err = {0};
    if (npk_st_parse(data, size, &w, &err)) return 0;
    uint8_t *out;
    size_t len;
    npk_mgk_replace_stats stats;
    if (npk_mgk_replace(m, &w, &out, &len, &stats, &err) == NPK_OK) {
        if (len != m->size) abort();
        for (size_t i = 0; i < len; i++)
            if (out[i] != m->data[i] && !replaced(m, &w, i)) abort();
        npk_mgk_model r;
        npk_tensor_set back;
        if (npk_mgk_parse(out, len, &r, NULL) || npk_mgk_extract(&r, &back, NULL)) abort();
        for (size_t i = 0; i < w.count && plain_names(&w); i++) {
            const npk_tensor *a = &w.items[i], *b = npk_set_find(&back, a->name);
            if (!strstr(a->name, ".weight") || !b) continue;
            if (a->nbytes == b->nbytes && a->dtype == b->dtype &&
                memcmp(a->data, b->data, a->nbytes))
                abort(); /* int8 weights did not come back */
        }
        npk_set_free(&back);
        npk_mgk_free(&r);
        free(out);
    }
    npk_set_free(&w);
    return 0;
}
