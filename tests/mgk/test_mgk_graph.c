/* The graph of an MGK model: nodes in topological order, tensors with
 * chained shapes and quantisation (vendor file and synthetic files), and
 * the errors for inconsistent tensor ids and shapes that do not chain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/bytes.h"
#include "npukit/mgk.h"
#include "npukit/mgk_graph.h"

#define FIX "mgk/AEC_T41_16K_NS_OUT_UC.mgk"

static const npk_mgk_gtensor *by_id(const npk_mgk_graph *g, int32_t id)
{
    for (size_t i = 0; i < g->ntensors; i++)
        if (g->tensors[i].id == id) return &g->tensors[i];
    fail_msg("no tensor %d", id);
    return NULL;
}

static void test_fixture_graph(void **state)
{
    (void)state;
    npk_mapped map;
    npk_fixture_map(FIX, &map);
    npk_mgk_model m;
    npk_mgk_graph g;
    npk_error err = {0};
    assert_int_equal(npk_mgk_parse(map.data, map.size, &m, &err), NPK_OK);
    assert_int_equal(npk_mgk_graph_build(&m, &g, &err), NPK_OK);
    assert_int_equal(g.nnodes, 62);
    assert_int_equal(g.ntensors, 75);
    assert_int_equal(g.nwarnings, 0); /* every zero point and scale agrees where given twice */
    size_t ins = 0, outs = 0;
    for (size_t i = 0; i < g.ntensors; i++) {
        ins += g.tensors[i].graph_input;
        outs += g.tensors[i].graph_output;
    }
    assert_int_equal(ins, 12); /* input, hidden and 10 caches */
    assert_int_equal(outs, 11);
    /* Topological order: every input is produced earlier. */
    bool *done = calloc(m.nrecords, sizeof *done);
    for (size_t i = 0; i < g.nnodes; i++) {
        const npk_mgk_gnode *nd = &g.nodes[i];
        assert_true(nd->established);
        for (uint32_t k = 0; k < nd->nin; k++) {
            const npk_mgk_gtensor *t = &g.tensors[nd->in[k]];
            assert_true(t->producer < 0 || done[t->producer]);
        }
        done[nd->record] = true;
    }
    free(done);
    /* Shapes: the logical NHWC shape carries the real channels. */
    const npk_mgk_gtensor *t = by_id(&g, 22); /* FormatConvert of the 8-channel input */
    static const int32_t l22[4] = {1, 1, 256, 8};
    assert_int_equal(t->lrank, 4);
    assert_memory_equal(t->lshape, l22, sizeof l22);
    t = by_id(&g, 65); /* Concat of four 32-channel inputs */
    assert_int_equal(t->lshape[3], 128);
    t = by_id(&g, 79); /* UpSample x2 in W */
    assert_int_equal(t->lshape[2], 256);
    t = by_id(&g, 81); /* the float output */
    assert_true(t->is_float && t->graph_output);
    /* Quantisation: from the input quantiser, the Concats, the GRU tables and
     * the Add arithmetic. */
    t = by_id(&g, 21);
    assert_true(t->has_zp && t->zp == 142 && t->scale_src == NPK_MGK_Q_FILE);
    assert_true(fabs(t->scale - 1 / 2.96034) < 1e-5);
    t = by_id(&g, 65);
    assert_int_equal(t->zp, 135);
    assert_true(fabs(t->scale - 1 / 18.22519) < 1e-6);
    t = by_id(&g, 36);
    assert_true(t->zp == 127 && fabs(t->scale - 0.0078425) < 1e-7);
    t = by_id(&g, 44); /* the first Add's output: zero point computed, equal to the GRU's input */
    assert_true(t->zp == 103 && t->scale_src == NPK_MGK_Q_DERIVED);
    t = by_id(&g, 43); /* Normalize output: stored zero point 133 */
    assert_int_equal(t->zp, 133);
    t = by_id(&g, 39); /* a packed conv's output: no scale in the file */
    assert_true(t->zp == 124 && t->scale_src == NPK_MGK_Q_CODE && t->scale == 1.0);
    npk_mgk_graph_free(&g);
    npk_mgk_free(&m);
    npk_unmap_file(&map);
}

static uint8_t *file;
static size_t flen;
static npk_mgk_model ref;

static void synth(void)
{
    static const npk_mgk_synth_layer ls[] = {
        {16, 8, 3, 3, 8, 1, 1, NULL}, {8, 8, 1, 5, 4, 1, 2, NULL}, {8, 4, 3, 1, 8, 2, 1, NULL}};
    npk_mgk_synth_spec spec = {ls, 3, 9, false, false, 12, 20};
    npk_error err = {0};
    assert_int_equal(npk_mgk_synth(&spec, &file, &flen, &err), NPK_OK);
    assert_int_equal(npk_mgk_parse(file, flen, &ref, &err), NPK_OK);
}

static void unsynth(void)
{
    npk_mgk_free(&ref);
    free(file);
}

static void test_synth_graph(void **state)
{
    (void)state;
    synth();
    npk_mgk_graph g;
    npk_error err = {0};
    assert_int_equal(npk_mgk_graph_build(&ref, &g, &err), NPK_OK);
    assert_int_equal(g.nnodes, 3);
    const npk_mgk_gtensor *in = by_id(&g, 0), *out = by_id(&g, 3);
    static const int32_t li[4] = {1, 12, 20, 16}, lo[4] = {1, 6, 10, 4};
    assert_memory_equal(in->lshape, li, sizeof li); /* stride 1: the input size is exact */
    assert_memory_equal(out->lshape, lo, sizeof lo);
    assert_true(in->graph_input && out->graph_output);
    npk_mgk_graph_free(&g);
    unsynth();
}

/* File offset of a record's output id (the word before the kernel id). */
static uint64_t out_id_at(const npk_mgk_record *r)
{
    return r->body_offset - 4 - r->kernel.len - 4;
}

static void expect_graph_error(uint64_t off, int32_t value, size_t rec, const char *needle)
{
    uint8_t *b = malloc(flen);
    memcpy(b, file, flen);
    npk_st32le(b + off, (uint32_t)value);
    npk_mgk_model m;
    npk_mgk_graph g;
    npk_error err = {0};
    assert_int_equal(npk_mgk_parse(b, flen, &m, &err), NPK_OK); /* info still works */
    assert_int_equal(npk_mgk_graph_build(&m, &g, &err), NPK_E_FORMAT);
    assert_true(err.has_offset);
    if (err.offset != m.records[rec].offset || !strstr(err.msg, needle))
        fail_msg("offset 0x%llx (want 0x%llx): %s", (unsigned long long)err.offset,
                 (unsigned long long)m.records[rec].offset, err.msg);
    char want[32];
    snprintf(want, sizeof want, "record #%zu", rec);
    assert_non_null(strstr(err.msg, want));
#ifdef NPK_HAVE_PROTOBUF_C
    uint8_t *onnx;
    size_t n;
    npk_mgk_onnx_opts o = {false, true};
    assert_int_equal(npk_mgk_export_onnx(&m, &o, &onnx, &n, &err), NPK_E_FORMAT);
#endif
    npk_mgk_free(&m);
    free(b);
}

static void test_bad_graphs(void **state)
{
    (void)state;
    synth();
    /* Record 1 claims record 0's output id. */
    expect_graph_error(out_id_at(&ref.records[1]), ref.records[0].out_id, 1,
                       "also produced by record #0");
    /* Record 1 reads its own output: a cycle. */
    const npk_mgk_record *r1 = &ref.records[1];
    /* Input id of record 1: the i32 after the input formats and types. */
    uint64_t id1 = r1->offset + 4 + r1->name.len + 4 + 4 + r1->inputs[0].format.len + 4 + 4 +
                   r1->inputs[0].type.len + 4;
    assert_int_equal((int32_t)npk_ld32le(file + id1), r1->inputs[0].id);
    expect_graph_error(id1, r1->out_id, 1, "cycle");
    /* A convolution's stored output width that its input, kernel and stride
     * cannot give. */
    const npk_mgk_field *f = npk_mgk_field_get(&ref.records[1], "out_shape");
    expect_graph_error(f->data + 12, 11, 1, "not the stored output");
    f = npk_mgk_field_get(&ref.records[2], "out_shape");
    expect_graph_error(f->data + 4, 2, 2, "not the stored output");
    unsynth();
}

static void test_export(void **state)
{
    (void)state;
    synth();
    uint8_t *onnx = NULL;
    size_t n = 0;
    npk_error err = {0};
    npk_mgk_onnx_opts o = {false, false};
    npk_status st = npk_mgk_export_onnx(&ref, &o, &onnx, &n, &err);
    assert_int_equal(npk_mgk_onnx_available(), st == NPK_OK);
    if (st) {
        assert_int_equal(st, NPK_E_UNSUPPORTED);
        unsynth();
        skip();
    }
    assert_true(n > 1000 && onnx[0] == 0x08); /* field 1 (ir_version), varint */
    free(onnx);
    o.qdq = true;
    assert_int_equal(npk_mgk_export_onnx(&ref, &o, &onnx, &n, &err), NPK_OK);
    free(onnx);
    unsynth();
    /* An unknown record is refused with its index and offset, unless allowed. */
    static const npk_mgk_synth_layer ls[] = {{8, 8, 1, 1, 8, 1, 1, NULL}};
    npk_mgk_synth_spec spec = {ls, 1, 1, false, true, 0, 0};
    assert_int_equal(npk_mgk_synth(&spec, &file, &flen, &err), NPK_OK);
    assert_int_equal(npk_mgk_parse(file, flen, &ref, &err), NPK_OK);
    o.qdq = false;
    assert_int_equal(npk_mgk_export_onnx(&ref, &o, &onnx, &n, &err), NPK_E_UNSUPPORTED);
    assert_true(err.has_offset && err.offset == ref.records[2].offset);
    assert_non_null(strstr(err.msg, "record #2 (unknown): semantics not established"));
    o.allow_unknown = true;
    assert_int_equal(npk_mgk_export_onnx(&ref, &o, &onnx, &n, &err), NPK_OK);
    free(onnx);
    unsynth();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_graph),
        cmocka_unit_test(test_synth_graph),
        cmocka_unit_test(test_bad_graphs),
        cmocka_unit_test(test_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
