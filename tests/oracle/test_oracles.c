/* The two independent TFLite oracles against each other, and (once enabled)
 * npukit's interpreter against both, on every uncompiled fixture model
 * (whole, or cut where an oracle cannot run the whole), on seeded inputs and
 * on cat.bmp. The oracle pair validates the harness (inputs, cuts, output
 * loading, comparison) and measures how far LiteRT.js (XNNPACK) and Arm NN
 * CpuRef disagree; docs/tflite-oracles.md records the table this prints.
 * Each oracle must do what the model table (oracle_cases.h) expects: run
 * the view, or refuse it for the stated reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "oracle.h"
#include "oracle_cases.h"

/* TODO(lead): set to 1 once the interpreter (branch tflite, the contract in
 * include/npukit/tflite_interp.h) is merged: every view then also runs
 * npukit's interpreter on the same inputs and compares it with each oracle
 * that ran, within the view's tolerance. Nothing else changes. */
#ifndef NPK_INTERP_READY
#define NPK_INTERP_READY 0
#endif
#if NPK_INTERP_READY
#include <time.h>

#include "npukit/tflite_interp.h"
#endif

/* Results compared: the two oracles, and npukit's interpreter. */
enum { SRC_LITERT = NPK_ORACLE_LITERT, SRC_ARMNN = NPK_ORACLE_ARMNN, SRC_NPUKIT, NSRC };
static const char *const src_name[NSRC] = {"LiteRT.js", "Arm NN", "npukit"};
/* Pairs: LiteRT.js vs Arm NN, npukit vs LiteRT.js, npukit vs Arm NN. */
static const int pair[3][2] = {
    {SRC_LITERT, SRC_ARMNN}, {SRC_NPUKIT, SRC_LITERT}, {SRC_NPUKIT, SRC_ARMNN}};
#define NPAIRS (NPK_INTERP_READY ? 3 : 1)

typedef struct tally {
    size_t elems, exact, off1, worse;
    double maxd;
    const char *unit;
    int n;
} tally;

static char rows[64][1200];
static size_t nrows;
static double total_ms;

static bool light(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return npk_test_light();
}

/* Run one oracle on a prepared view; check its status against the table. */
static npk_oracle_status run_oracle(npk_oracle_kind k, const oc_view *v, const char *path,
                                    const npk_tensor *in, const oc_tensors *t, const char **names,
                                    npk_tensor *out, npk_oracle_result *res)
{
    npk_oracle_status st = npk_oracle_run(k, path, in, t->nin, names, t->nout, out, res);
    total_ms += res->wall_ms;
    if ((int)st != v->expect[k])
        fail_msg("%s on %s: status %d (%s), expected %d", npk_oracle_name(k), v->label, st,
                 res->why, v->expect[k]);
    if (st == NPK_ORACLE_CANNOT && !strstr(res->why, v->reason[k]))
        fail_msg("%s on %s refuses for another reason than \"%s\": %s", npk_oracle_name(k),
                 v->label, v->reason[k], res->why);
    return st;
}

#if NPK_INTERP_READY
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* npukit's interpreter on the view (cut like the oracles' model), one thread.
 * False (why filled) when it has no kernel yet for an operator the view needs:
 * that comparison is then reported as not yet possible. */
static bool run_npukit(const npk_tfl_model *m, const oc_view *v, const oc_tensors *t,
                       const npk_tensor *in, npk_tensor *out, double *ms, char *why, size_t why_len)
{
    npk_tfl_interp_opts o = {0};
    o.threads = 1;
    if (v->cut != OC_WHOLE) {
        o.inputs = t->in;
        o.ninputs = t->nin;
        o.outputs = t->out;
        o.noutputs = t->nout;
    }
    npk_tfl_interp *it;
    npk_error err = {0};
    npk_status st = npk_tfl_interp_new(m, &o, &it, &err);
    if (st == NPK_E_UNSUPPORTED) { /* an operator it has no kernel for yet */
        snprintf(why, why_len, "%s", err.msg);
        return false;
    }
    if (st) fail_msg("npukit on %s: %s", v->label, err.msg);
    assert_int_equal(npk_tfl_interp_ninputs(it), t->nin);
    assert_int_equal(npk_tfl_interp_noutputs(it), t->nout);
    for (uint32_t i = 0; i < t->nin; i++) {
        npk_tfl_view x;
        if (npk_tfl_interp_input(it, i, &x, &err)) fail_msg("%s", err.msg);
        assert_int_equal(x.index, t->in[i]);
        assert_int_equal(x.bytes, in[i].nbytes);
        memcpy(x.data, in[i].data, x.bytes);
    }
    double t0 = now_ms();
    if (npk_tfl_interp_invoke(it, &err)) fail_msg("npukit on %s: %s", v->label, err.msg);
    *ms = now_ms() - t0;
    for (uint32_t i = 0; i < t->nout; i++) {
        npk_tfl_view x;
        if (npk_tfl_interp_output(it, i, &x, &err)) fail_msg("%s", err.msg);
        assert_int_equal(x.index, t->out[i]);
        npk_oracle_alloc_like(m, t->out[i], &out[i]);
        assert_int_equal(x.bytes, out[i].nbytes);
        memcpy(out[i].data, x.data, x.bytes);
    }
    npk_tfl_interp_free(it);
    return true;
}
#endif

static void test_model(void **state)
{
    const oc_model *mc = *state;
    npk_oracle_require(NPK_ORACLE_LITERT);
    npk_oracle_require(NPK_ORACLE_ARMNN);
    npk_mapped file;
    npk_fixture_map(mc->file, &file);
    npk_tfl_model m;
    npk_error err = {0};
    if (npk_tfl_parse(file.data, file.size, &m, &err)) fail_msg("%s: %s", mc->file, err.msg);
    const char *base = strrchr(mc->file, '/') + 1;
    char problem[700] = "";

    for (size_t vi = 0; vi < mc->nviews; vi++) {
        const oc_view *v = &mc->views[vi];
        oc_tensors t;
        oc_view_tensors(&m, v->cut, &t);
        char path[1024], why[512], tmpname[256];
        snprintf(tmpname, sizeof tmpname, "view%zu-%s", vi, base);
        snprintf(path, sizeof path, "%s", npk_tmp(tmpname));
        bool whole = v->cut == OC_WHOLE;
        if (npk_oracle_prepare(file.data, file.size, whole ? NULL : t.in, whole ? 0 : t.nin,
                               whole ? NULL : t.out, whole ? 0 : t.nout, path, why, sizeof why))
            fail_msg("%s: %s", v->label, why);
        const char *names[16];
        for (uint32_t i = 0; i < t.nout; i++) names[i] = m.subgraphs[0].tensors[t.out[i]].name;

        /* Which results exist: the oracles but OC_NOT_RUN (in light runs Arm
         * NN only where it is fast), and npukit's interpreter when enabled. */
        bool runs[NSRC], ok[NSRC];
        for (int k = 0; k < 2; k++) runs[k] = v->expect[k] != OC_NOT_RUN;
        if (light() && mc->slow > 0) runs[SRC_ARMNN] = false;
        /* npukit only where there is an oracle result to compare it with */
        runs[SRC_NPUKIT] = NPK_INTERP_READY && ((runs[0] && v->expect[0] == NPK_ORACLE_OK) ||
                                                (runs[1] && v->expect[1] == NPK_ORACLE_OK));
        for (int k = 0; k < NSRC; k++)
            ok[k] = runs[k] && (k == SRC_NPUKIT || v->expect[k] == NPK_ORACLE_OK);
        int nok = ok[0] + ok[1] + ok[2];
        /* Inputs: seeded 1 and 2, then cat.bmp; slow models fewer (see
         * oc_model.slow). A view with less than two results runs seed 1 only. */
        int cases[3], ncases = 0;
        if (nok < 2 || mc->slow < 2) cases[ncases++] = 0;
        if (nok >= 2 && mc->slow == 0 && !light()) cases[ncases++] = 1;
        if (nok >= 2) cases[ncases++] = OC_CAT;

        tally tl[3] = {{0}};
        char notyet[300] = ""; /* why npukit's interpreter cannot run the view yet */
        double wall[NSRC] = {0}, run[NSRC] = {0};
        npk_oracle_result res[2] = {{0}};
        int nrun = 0;
        for (int ci = 0; ci < ncases; ci++) {
            npk_tensor model_in[8] = {{0}}, in[8] = {{0}}, out[NSRC][16];
            if (!oc_model_inputs(&m, cases[ci], model_in)) continue;
            oc_view_inputs(&m, &t, model_in, in);
            for (int k = 0; k < 2; k++)
                if (runs[k]) {
                    run_oracle((npk_oracle_kind)k, v, path, in, &t, names, out[k], &res[k]);
                    wall[k] += res[k].wall_ms;
                    run[k] += res[k].run_ms;
                }
#if NPK_INTERP_READY
            double ms;
            if (ok[SRC_NPUKIT] &&
                run_npukit(&m, v, &t, in, out[SRC_NPUKIT], &ms, notyet, sizeof notyet)) {
                run[SRC_NPUKIT] += ms;
                wall[SRC_NPUKIT] += ms;
            } else if (ok[SRC_NPUKIT]) {
                ok[SRC_NPUKIT] = false;
                print_message("  npukit, %s, %s: not yet: %s\n", base, v->label, notyet);
            }
#endif
            nrun++;
            const char *input = cases[ci] == OC_CAT ? "cat.bmp" : cases[ci] ? "seed 2" : "seed 1";
            for (int p = 0; p < NPAIRS; p++) {
                int a = pair[p][0], b = pair[p][1];
                if (!ok[a] || !ok[b]) continue;
                for (uint32_t o = 0; o < t.nout; o++) {
                    const npk_tensor *x = &out[a][o], *y = &out[b][o];
                    bool cls = x->ndim == 2 && x->shape[0] == 1 && x->shape[1] >= 100;
                    npk_cmp c = npk_oracle_compare(x, y, npk_oracle_float_scale(&m, t.out[o]), cls);
                    char line[700];
                    print_message("  %s vs %s, %s, %s, %s: %s\n", src_name[a], src_name[b], base,
                                  v->label, input,
                                  npk_cmp_summary(&c, names[o], line, sizeof line));
                    if (!c.same_shape)
                        fail_msg("%s: %s and %s differ in type or shape", names[o], src_name[a],
                                 src_name[b]);
                    tally *s = &tl[p];
                    s->elems += c.count, s->exact += c.exact, s->off1 += c.off1,
                        s->worse += c.worse;
                    if (c.max_diff > s->maxd) s->maxd = c.max_diff;
                    s->unit = c.unit;
                    s->n++;
                    if (!problem[0] && ((double)c.worse > v->max_worse_share * (double)c.count ||
                                        c.max_diff > v->max_diff))
                        snprintf(problem, sizeof problem,
                                 "%s, %s vs %s, %s: %zu of %zu elements more than 1 %s apart, up "
                                 "to %g (allowed: %g%%, %g)",
                                 v->label, src_name[a], src_name[b], names[o], c.worse, c.count,
                                 c.unit, c.max_diff, v->max_worse_share * 100, v->max_diff);
                    if (!problem[0] && cls && c.top1_agree != c.rows)
                        snprintf(problem, sizeof problem, "%s, %s vs %s, %s: top-1 class differs",
                                 v->label, src_name[a], src_name[b], names[o]);
                }
            }
            for (int k = 0; k < NSRC; k++)
                if (ok[k])
                    for (uint32_t o = 0; o < t.nout; o++) npk_tensor_free(&out[k][o]);
            for (uint32_t i = 0; i < t.nin; i++) npk_tensor_free(&in[i]);
            for (uint32_t i = 0; i < m.subgraphs[0].ninputs; i++) npk_tensor_free(&model_in[i]);
        }

        /* One table row per view (docs/tflite-oracles.md). */
        char cell[NSRC][256];
        for (int k = 0; k < NSRC; k++) {
            int n = nrun ? nrun : 1;
            if (k == SRC_NPUKIT && !runs[k])
                snprintf(cell[k], sizeof cell[k], "-");
            else if (k == SRC_NPUKIT && notyet[0])
                snprintf(cell[k], sizeof cell[k], "not yet: %.200s", notyet);
            else if (k == SRC_NPUKIT)
                snprintf(cell[k], sizeof cell[k], "%.0f ms/run", run[k] / n);
            else if (!runs[k])
                snprintf(cell[k], sizeof cell[k], "not run: %.180s",
                         v->expect[k] == OC_NOT_RUN ? v->reason[k] : "light run");
            else if (v->expect[k] == NPK_ORACLE_OK)
                snprintf(cell[k], sizeof cell[k], "runs: %.0f ms/run, %.1f s/call", run[k] / n,
                         wall[k] / 1e3 / n);
            else
                snprintf(cell[k], sizeof cell[k], "cannot: %.180s", res[k].why);
        }
        char *r = rows[nrows < 64 ? nrows++ : 63];
        int len = snprintf(r, sizeof rows[0], "| %s | %s | %s | %s |", base, v->label,
                           cell[SRC_LITERT], cell[SRC_ARMNN]);
        for (int p = 0; p < NPAIRS && len > 0 && (size_t)len < sizeof rows[0]; p++) {
            const tally *s = &tl[p];
            len += s->n ? snprintf(r + len, sizeof rows[0] - (size_t)len,
                                   " %d | %zu | %zu | %zu | %zu | %g %s |", nrun, s->elems,
                                   s->exact, s->off1, s->worse, s->maxd, s->unit)
                        : snprintf(r + len, sizeof rows[0] - (size_t)len, " - | | | | | |");
        }
        if (NPK_INTERP_READY && len > 0 && (size_t)len < sizeof rows[0])
            snprintf(r + len, sizeof rows[0] - (size_t)len, " %s |", cell[SRC_NPUKIT]);
    }
    npk_tfl_free(&m);
    npk_unmap_file(&file);
    if (problem[0]) fail_msg("%s: %s", base, problem);
}

static int print_table(void **state)
{
    (void)state;
    if (!nrows) return 0;
    printf("\n| model | view | LiteRT.js | Arm NN CpuRef |");
    for (int p = 0; p < NPAIRS; p++)
        printf(" inputs | %s vs %s: elements | exact | ±1 | worse | max diff |",
               src_name[pair[p][0]], src_name[pair[p][1]]);
    printf("%s\n|---|---|---|---|", NPK_INTERP_READY ? " npukit |" : "");
    for (int p = 0; p < NPAIRS; p++) printf("---|---|---|---|---|---|");
    printf("%s\n", NPK_INTERP_READY ? "---|" : "");
    for (size_t i = 0; i < nrows; i++) printf("%s\n", rows[i]);
    printf("\noracle time in all: %.1f s\n", total_ms / 1e3);
    return 0;
}

int main(void)
{
    struct CMUnitTest tests[OC_NMODELS];
    for (size_t i = 0; i < OC_NMODELS; i++) {
        struct CMUnitTest t = {strrchr(oc_models[i].file, '/') + 1, test_model, NULL, NULL,
                               (void *)&oc_models[i]};
        tests[i] = t;
    }
    return _cmocka_run_group_tests("oracles", tests, OC_NMODELS, NULL, print_table);
}
