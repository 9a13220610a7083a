/* Shared helpers of the Edge TPU tests: fixture models, mapped and parsed. */
#ifndef NPK_ETPU_TEST_H
#define NPK_ETPU_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/edgetpu.h"
#include "npukit/flatbuf.h"

typedef struct etpu_fx {
    npk_mapped map;
    npk_etpu_model m;
} etpu_fx;

/* Map and parse data/edgetpu/NAME (skips/fails when the fixture is missing). */
static inline void etpu_load(const char *name, etpu_fx *f)
{
    char rel[256];
    npk_error err = {0};
    snprintf(rel, sizeof rel, "edgetpu/%s", name);
    npk_fixture_map(rel, &f->map);
    if (npk_etpu_parse(f->map.data, f->map.size, &f->m, &err))
        fail_msg("%s: offset 0x%llx: %s", name, (unsigned long long)err.offset, err.msg);
}

static inline void etpu_unload(etpu_fx *f)
{
    npk_etpu_free(&f->m);
    npk_unmap_file(&f->map);
}

/* The executable of a type in the model's first package. */
static inline const npk_etpu_executable *etpu_exec(const npk_etpu_model *m, int type)
{
    const npk_etpu_package *p = &m->ops[0].packages[0];
    for (uint32_t i = 0; i < p->nexecutables; i++)
        if (p->executables[i].type == type) return &p->executables[i];
    fail_msg("no %s executable", npk_etpu_exec_type_name(type));
    return NULL;
}

static inline void sha_is(const void *p, size_t n, const char *want)
{
    char hex[65];
    npk_sha256_hex(p, n, hex);
    assert_string_equal(hex, want);
}

#endif
