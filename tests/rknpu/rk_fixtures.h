/* Fixture readers shared by the rknpu tests: the golden case list and the
 * golden hex streams. Header-only (each test is its own program). */
#ifndef RK_FIXTURES_H
#define RK_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_stream.h"

/* The DMA addresses the golden streams were generated with. */
#define GOLD_IN  0x10000000u
#define GOLD_WT  0x20000000u
#define GOLD_OUT 0x30000000u

typedef struct gold_case {
    char name[64];
    npk_rk_matmul mm;
} gold_case;

/* Parse golden/CASES.txt: "name dtype M K N fp16out ret=0". */
static inline int gold_cases(gold_case *out, int max)
{
    npk_mapped m;
    npk_fixture_map("rknpu/golden/CASES.txt", &m);
    char *text = malloc(m.size + 1);
    memcpy(text, m.data, m.size);
    text[m.size] = 0;
    npk_unmap_file(&m);
    int n = 0;
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char name[64], dt[16];
        unsigned mm_, k, nn, f16out;
        int ret;
        if (sscanf(line, "%63s %15s %u %u %u %u ret=%d", name, dt, &mm_, &k, &nn, &f16out, &ret) !=
            7)
            fail_msg("bad CASES.txt line: %s", line);
        assert_int_equal(ret, 0);
        gold_case *g = &out[n++];
        snprintf(g->name, sizeof g->name, "%s", name);
        g->mm.m = mm_;
        g->mm.k = k;
        g->mm.n = nn;
        g->mm.dtype = strcmp(dt, "int8") == 0 ? NPK_RK_INT8
                      : f16out                ? NPK_RK_FP16_FP16
                                              : NPK_RK_FP16;
        g->mm.input_addr = GOLD_IN;
        g->mm.weight_addr = GOLD_WT;
        g->mm.output_addr = GOLD_OUT;
    }
    free(text);
    return n;
}

/* Load golden/<name>.txt through the library's stream reader. */
static inline void gold_stream(const char *name, npk_rk_stream *s)
{
    char rel[2048];
    snprintf(rel, sizeof rel, "rknpu/golden/%.64s.txt", name);
    npk_mapped m;
    npk_fixture_map(rel, &m);
    npk_error err = {0};
    if (npk_rk_stream_parse(m.data, m.size, NPK_RK_ENC_AUTO, s, &err))
        fail_msg("%s: %s", rel, err.msg);
    assert_int_equal(s->encoding, NPK_RK_ENC_HEX);
    npk_unmap_file(&m);
}

#endif
