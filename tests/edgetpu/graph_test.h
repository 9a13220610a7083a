/* Helpers of the whole-graph tests: fixture models (compiled and
 * uncompiled), a graph on an emulated accelerator that answers from the
 * uncompiled model, and the interpreter on the uncompiled model as the
 * reference. */
#ifndef NPK_GRAPH_TEST_H
#define NPK_GRAPH_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/edgetpu_emu.h"
#include "npukit/edgetpu_graph.h"
#include "npukit/vision.h"

#define GTEST_THREADS 2

typedef struct gfx {
    npk_mapped map;
    npk_etpu_model m; /* compiled models */
    npk_tfl_model t;  /* uncompiled ones */
    bool compiled;
} gfx;

static inline void gfx_fail(const char *what, const npk_error *err)
{
    fail_msg("%s: offset 0x%llx: %s", what, (unsigned long long)err->offset, err->msg);
}

/* data/models/NAME, or data/DIR/NAME when NAME has a '/'. */
static inline void gfx_map(const char *name, npk_mapped *m)
{
    char rel[300];
    snprintf(rel, sizeof rel, "%s%s", strchr(name, '/') ? "" : "models/", name);
    npk_fixture_map(rel, m);
}

static inline void gfx_load(const char *name, gfx *f)
{
    npk_error err = {0};
    memset(f, 0, sizeof *f);
    gfx_map(name, &f->map);
    f->compiled = true;
    if (npk_etpu_parse(f->map.data, f->map.size, &f->m, &err)) gfx_fail(name, &err);
}

static inline void gfx_load_cpu(const char *name, gfx *f)
{
    npk_error err = {0};
    memset(f, 0, sizeof *f);
    gfx_map(name, &f->map);
    if (npk_tfl_parse(f->map.data, f->map.size, &f->t, &err)) gfx_fail(name, &err);
}

static inline void gfx_unload(gfx *f)
{
    if (f->compiled)
        npk_etpu_free(&f->m);
    else
        npk_tfl_free(&f->t);
    npk_unmap_file(&f->map);
}

/* Every tensor an Edge TPU op of the compiled model writes. */
static inline uint32_t gfx_edgetpu_outputs(const gfx *c, int32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < c->m.nops; k++) {
        const npk_tfl_operator *o = &c->m.tfl.subgraphs[0].operators[c->m.ops[k].op];
        for (uint32_t j = 0; j < o->noutputs && n < cap; j++) out[n++] = o->outputs[j];
    }
    return n;
}

static inline int32_t gfx_find(const npk_tfl_model *m, const char *name)
{
    const npk_tfl_subgraph *sg = &m->subgraphs[0];
    for (uint32_t i = 0; i < sg->ntensors; i++)
        if (!strcmp(sg->tensors[i].name, name)) return (int32_t)i;
    fail_msg("no tensor \"%s\"", name);
    return -1;
}

/* Whether the interpreter can run what the test needs: the CPU model's
 * parts the Edge TPU ops replaced and, for the whole model, the compiled
 * model's CPU operators. false (with the reason) only for missing kernels;
 * any other error fails the test. */
static inline bool gfx_cpu_supported(const gfx *u, gfx *c, bool part, char *why, size_t n)
{
    npk_error err = {0};
    npk_etpu_emu *emu = NULL;
    npk_status st = npk_etpu_emu_new(NULL, &emu, &err);
    if (!st) st = npk_etpu_emu_add_model(emu, &c->m, &err);
    if (!st) st = npk_etpu_emu_set_cpu_model(emu, &c->m, &u->t, 1, &err);
    npk_etpu_emu_free(emu);
    if (!st && !part) {
        npk_etpu_graph *g = NULL;
        npk_tfl_interp *it = NULL;
        st = npk_etpu_graph_new(&c->m, NULL, &g, &err);
        if (!st) st = npk_tfl_interp_new(&u->t, NULL, &it, &err);
        npk_etpu_graph_free(g);
        npk_tfl_interp_free(it);
    }
    if (st == NPK_E_UNSUPPORTED) {
        snprintf(why, n, "%.150s", err.msg);
        return false;
    }
    if (st) gfx_fail("plan", &err);
    return true;
}

/* ---- the graph on an emulated accelerator ---- */

typedef struct grun {
    npk_etpu_emu *emu;
    npk_etpu_device *dev;
    npk_etpu_graph *g;
} grun;

static inline void grun_open(grun *r, gfx *c, const gfx *u, const int32_t *cut, uint32_t ncut)
{
    npk_error err = {0};
    memset(r, 0, sizeof *r);
    npk_etpu_graph_opts go = {.threads = GTEST_THREADS, .outputs = cut, .noutputs = ncut};
    if (npk_etpu_emu_new(NULL, &r->emu, &err) || npk_etpu_emu_add_model(r->emu, &c->m, &err))
        gfx_fail("emulator", &err);
    if (u && npk_etpu_emu_set_cpu_model(r->emu, &c->m, &u->t, GTEST_THREADS, &err))
        gfx_fail("CPU model", &err);
    if (npk_etpu_open(npk_etpu_emu_transport(r->emu), NULL, &r->dev, &err)) gfx_fail("open", &err);
    if (npk_etpu_graph_new(&c->m, &go, &r->g, &err)) gfx_fail("graph", &err);
}

static inline void grun_close(grun *r)
{
    npk_etpu_graph_free(r->g);
    npk_etpu_close(r->dev);
    npk_etpu_emu_free(r->emu);
}

static inline void view_random(const npk_tfl_view *v, uint64_t seed)
{
    for (size_t k = 0; k < v->bytes; k++) ((uint8_t *)v->data)[k] = (uint8_t)npk_rand(&seed);
}

static inline void grun_random_inputs(grun *r, uint64_t seed)
{
    npk_error err = {0};
    const npk_tfl_interp *it = npk_etpu_graph_interp(r->g);
    for (uint32_t i = 0; i < npk_tfl_interp_ninputs(it); i++) {
        npk_tfl_view v;
        if (npk_tfl_interp_input(it, i, &v, &err)) gfx_fail("input", &err);
        view_random(&v, seed * 31 + i);
    }
}

static inline void grun_picture(grun *r, const char *rel)
{
    NPK_NEED_FEATURE("bmp");
    npk_error err = {0};
    npk_image img;
    npk_tfl_view v;
    if (npk_image_load(NPK_FIXTURE(rel), &img, &err)) gfx_fail(rel, &err);
    if (npk_tfl_interp_input(npk_etpu_graph_interp(r->g), 0, &v, &err) ||
        npk_vis_fill_input(&img, &v, &err))
        gfx_fail(rel, &err);
    npk_image_free(&img);
}

static inline void grun_invoke(grun *r, npk_etpu_graph_info *info)
{
    npk_error err = {0};
    if (npk_etpu_graph_invoke(r->g, r->dev, info, &err)) gfx_fail("invoke", &err);
}

/* ---- the reference: the interpreter on the uncompiled model ---- */

typedef struct gcpu {
    npk_tfl_interp *it;
    int32_t in[16], out[16];
    uint32_t nin, nout;
} gcpu;

/* Cut to the graph's inputs and outputs, found by name. */
static inline void gcpu_new(gcpu *c, const gfx *u, const grun *r)
{
    npk_error err = {0};
    memset(c, 0, sizeof *c);
    const npk_tfl_interp *it = npk_etpu_graph_interp(r->g);
    c->nin = npk_tfl_interp_ninputs(it);
    c->nout = npk_tfl_interp_noutputs(it);
    assert_true(c->nin <= 16 && c->nout <= 16);
    for (uint32_t i = 0; i < c->nin + c->nout; i++) {
        npk_tfl_view v;
        if ((i < c->nin ? npk_tfl_interp_input(it, i, &v, &err)
                        : npk_tfl_interp_output(it, i - c->nin, &v, &err)))
            gfx_fail("view", &err);
        if (i < c->nin)
            c->in[i] = gfx_find(&u->t, v.name);
        else
            c->out[i - c->nin] = gfx_find(&u->t, v.name);
    }
    npk_tfl_interp_opts o = {.threads = GTEST_THREADS,
                             .inputs = c->in,
                             .ninputs = c->nin,
                             .outputs = c->out,
                             .noutputs = c->nout};
    if (npk_tfl_interp_new(&u->t, &o, &c->it, &err)) gfx_fail("reference", &err);
}

static inline void gcpu_free(gcpu *c)
{
    npk_tfl_interp_free(c->it);
}

static inline void gcpu_copy_inputs(gcpu *c, const grun *r)
{
    npk_error err = {0};
    for (uint32_t i = 0; i < c->nin; i++) {
        npk_tfl_view a, b;
        if (npk_tfl_interp_input(npk_etpu_graph_interp(r->g), i, &a, &err) ||
            npk_tfl_interp_input(c->it, i, &b, &err))
            gfx_fail("input", &err);
        assert_int_equal(a.bytes, b.bytes);
        memcpy(b.data, a.data, a.bytes);
    }
}

static inline void gcpu_invoke(gcpu *c)
{
    npk_error err = {0};
    if (npk_tfl_interp_invoke(c->it, &err)) gfx_fail("reference invoke", &err);
}

/* Every output byte for byte. */
static inline void grun_expect_equal(const grun *r, const gcpu *c)
{
    npk_error err = {0};
    for (uint32_t i = 0; i < c->nout; i++) {
        npk_tfl_view a, b;
        if (npk_tfl_interp_output(npk_etpu_graph_interp(r->g), i, &a, &err) ||
            npk_tfl_interp_output(c->it, i, &b, &err))
            gfx_fail("output", &err);
        assert_int_equal(a.type, b.type);
        assert_int_equal(a.bytes, b.bytes);
        size_t diff = 0, first = 0;
        for (size_t k = 0; k < a.bytes; k++)
            if (((const uint8_t *)a.data)[k] != ((const uint8_t *)b.data)[k] && !diff++) first = k;
        if (diff)
            fail_msg("output \"%.80s\": %zu of %zu bytes differ (first at %zu)", a.name, diff,
                     a.bytes, first);
    }
}

#endif
