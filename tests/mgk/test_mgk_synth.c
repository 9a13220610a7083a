/* Synthetic MGK files (npk_mgk_synth): the bit widths, kernel shapes and
 * record kinds the vendor fixture lacks, parsed back, extracted and
 * replaced; plus requant classification and symbol names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/mgk.h"

static uint8_t *make(const npk_mgk_synth_layer *layers, size_t n, bool extra, bool garbage,
                     size_t *len)
{
    npk_mgk_synth_spec spec = {layers, n, 42, garbage, extra, 0, 0};
    uint8_t *buf;
    npk_error err = {0};
    if (npk_mgk_synth(&spec, &buf, len, &err)) fail_msg("synth: %s", err.msg);
    return buf;
}

static int8_t *random_weights(const npk_mgk_synth_layer *l, uint64_t seed)
{
    size_t n = (size_t)l->cout * l->cin * l->kh * l->kw;
    int8_t *w = malloc(n);
    int lo = -(1 << (l->bits - 1)), span = 1 << l->bits;
    for (size_t i = 0; i < n; i++) w[i] = (int8_t)(lo + (int)(npk_rand(&seed) % (uint64_t)span));
    return w;
}

static const npk_mgk_synth_layer shapes[] = {
    {40, 70, 3, 3, 0, 1, 1, NULL}, {70, 33, 1, 5, 0, 1, 1, NULL}, {33, 8, 2, 2, 0, 2, 1, NULL},
    {3, 64, 1, 1, 0, 1, 1, NULL},  {64, 65, 3, 3, 0, 1, 2, NULL},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static void test_every_bit_width(void **state)
{
    (void)state;
    for (int bits = 2; bits <= 8; bits += 2) {
        npk_mgk_synth_layer ls[NSHAPES];
        int8_t *w[NSHAPES];
        for (size_t i = 0; i < NSHAPES; i++) {
            ls[i] = shapes[i];
            ls[i].bits = bits;
            w[i] = random_weights(&ls[i], (uint64_t)(bits * 100 + (int)i));
            ls[i].weights = w[i];
        }
        size_t len;
        uint8_t *buf = make(ls, NSHAPES, bits == 4, bits == 6, &len);
        npk_mgk_model m;
        npk_error err = {0};
        assert_int_equal(npk_mgk_parse(buf, len, &m, &err), NPK_OK);
        assert_int_equal(m.nwarnings, 0);
        assert_int_equal(m.nconvs, NSHAPES);
        assert_int_equal(m.nrecords, NSHAPES + (bits == 4 ? 2 : 0));
        assert_int_equal(m.elf.nsymbols, 3);
        assert_int_equal(m.nunassigned, 1); /* only the trailing padding */
        assert_true(m.unassigned[0].all_zero);
        assert_int_equal(m.unassigned[0].size, 128);
        for (size_t i = 0; i < NSHAPES; i++) {
            const npk_mgk_conv *c = &m.convs[i];
            assert_true(c->usable && c->requant_ok && c->unpadded);
            assert_int_equal(c->bits, bits);
            assert_int_equal(c->planes, bits / 2);
            assert_int_equal(c->cin, ls[i].cin);
            assert_int_equal(c->cout, ls[i].cout);
            assert_int_equal(c->kh, ls[i].kh);
            assert_int_equal(c->kw, ls[i].kw);
            assert_int_equal(c->n_ofp, (ls[i].cout + 31) / 32);
            assert_int_equal(c->m_ifp, (ls[i].cin + 31) / 32);
            assert_int_equal(c->stride[1], ls[i].stride_h);
            size_t n = (size_t)ls[i].cout * ls[i].cin * ls[i].kh * ls[i].kw;
            int8_t *got = malloc(n);
            assert_int_equal(npk_mgk_decode_layer(&m, c, 0, got, &err), NPK_OK);
            assert_memory_equal(got, w[i], n);
            free(got);
            npk_mgk_requant rq;
            assert_int_equal(npk_mgk_requant_read(&m, c, &rq, &err), NPK_OK);
            assert_int_equal(rq.form, NPK_MGK_RQ_FLOAT);
            assert_int_equal(rq.channels, ls[i].cout);
            for (int ch = 0; ch < rq.channels; ch++)
                assert_true(rq.scale[ch] >= 0.0005f && rq.scale[ch] <= 0.005f);
            npk_mgk_requant_free(&rq);
        }
        if (bits == 4) { /* the extra records: one listed kind, one unknown kind */
            assert_true(npk_mgk_str_eq(m.records[0].kind, "FormatConvert"));
            assert_true(m.records[0].known_kind);
            assert_int_equal(m.records[0].conv, -1);
            const npk_mgk_record *u = &m.records[m.nrecords - 1];
            assert_true(npk_mgk_str_eq(u->kind, "Synthetic"));
            assert_false(u->known_kind);
            assert_int_equal(u->body_size, 13);
        }
        npk_mgk_free(&m);
        for (size_t i = 0; i < NSHAPES; i++) free(w[i]);
        free(buf);
    }
}

static void test_extract_replace(void **state)
{
    (void)state;
    npk_mgk_synth_layer ls[NSHAPES];
    for (size_t i = 0; i < NSHAPES; i++) {
        ls[i] = shapes[i];
        ls[i].bits = 2 + 2 * (int)(i % 4);
    }
    size_t len;
    uint8_t *buf = make(ls, NSHAPES, true, true, &len);
    npk_mgk_model m;
    npk_error err = {0};
    assert_int_equal(npk_mgk_parse(buf, len, &m, &err), NPK_OK);
    npk_tensor_set set;
    assert_int_equal(npk_mgk_extract(&m, &set, &err), NPK_OK);
    assert_int_equal(set.count, 4 * NSHAPES); /* weight, bias, scale, requant */
    uint8_t *out;
    size_t olen;
    npk_mgk_replace_stats st;
    assert_int_equal(npk_mgk_replace(&m, &set, &out, &olen, &st, &err), NPK_OK);
    assert_int_equal(st.layers, NSHAPES);
    assert_int_equal(st.bytes_changed, 0);
    assert_memory_equal(out, buf, len);
    free(out);

    /* New values for the third layer (6-bit 2x2): only its weight bytes change, and
     * bytes of padding lanes (random in synthetic files) keep their values. */
    const npk_mgk_conv *c = &m.convs[2];
    assert_int_equal(c->bits, 6);
    char name[32];
    snprintf(name, sizeof name, "layer_%d.weight", c->id);
    npk_tensor *t = npk_set_find(&set, name);
    assert_non_null(t);
    int8_t *v = t->data;
    uint64_t seed = 5;
    for (size_t i = 0; i < npk_tensor_count(t); i++)
        v[i] = (int8_t)((int)(npk_rand(&seed) % 64) - 32);
    assert_int_equal(npk_mgk_replace(&m, &set, &out, &olen, &st, &err), NPK_OK);
    assert_true(st.bytes_changed > 0);
    uint64_t lo = m.region_offset + c->weight_offset, hi = lo + c->weight_bytes;
    for (size_t i = 0; i < len; i++)
        if (out[i] != buf[i] && (i < lo || i >= hi)) fail_msg("byte 0x%zx changed", i);
    npk_mgk_wshape s;
    assert_int_equal(npk_mgk_layer_wshape(c, NPK_MGK_ALL_LANES, &s, &err), NPK_OK);
    size_t all;
    assert_int_equal(npk_mgk_wshape_check(&s, NULL, &all, &err), NPK_OK);
    int8_t *a = malloc(all), *b = malloc(all);
    assert_int_equal(npk_mgk_nmhw_decode(&s, buf + lo, c->weight_bytes, a, &err), NPK_OK);
    assert_int_equal(npk_mgk_nmhw_decode(&s, out + lo, c->weight_bytes, b, &err), NPK_OK);
    int lanes_in = 32 * c->m_ifp, taps = c->kh * c->kw;
    for (int co = 0; co < 32 * c->n_ofp; co++)
        for (int ci = 0; ci < lanes_in; ci++)
            for (int k = 0; k < taps; k++) {
                size_t at = ((size_t)co * lanes_in + ci) * taps + k;
                if (co < c->cout && ci < c->cin)
                    assert_int_equal(b[at], v[((size_t)co * c->cin + ci) * taps + k]);
                else
                    assert_int_equal(b[at], a[at]);
            }
    free(a);
    free(b);
    free(out);

    /* A value beyond the 6-bit range is an error naming the layer. */
    v[17] = 32;
    assert_int_equal(npk_mgk_replace(&m, &set, &out, &olen, &st, &err), NPK_E_ARG);
    char want[64];
    snprintf(want, sizeof want, "outside the 6-bit range [-32, 31] of layer %d", c->id);
    if (!strstr(err.msg, want)) fail_msg("message: %s", err.msg);
    if (!strstr(err.msg, name)) fail_msg("message: %s", err.msg);
    npk_set_free(&set);
    npk_mgk_free(&m);
    free(buf);
}

static void test_synth_errors(void **state)
{
    (void)state;
    npk_mgk_synth_layer l = {8, 8, 1, 1, 3, 1, 1, NULL};
    npk_mgk_synth_spec spec = {&l, 1, 1, false, false, 0, 0};
    uint8_t *buf = NULL;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_E_ARG);
    l.bits = 8;
    l.cin = 0;
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_E_ARG);
    l.cin = 8;
    l.kw = 17;
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_E_ARG);
    spec.nlayers = 0;
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_E_ARG);
    assert_null(buf);
    /* Weights outside the layer's bit width are refused. */
    l.kw = 1;
    l.bits = 2;
    int8_t w[64];
    memset(w, 2, sizeof w);
    l.weights = w;
    spec.nlayers = 1;
    assert_int_equal(npk_mgk_synth(&spec, &buf, &len, &err), NPK_E_ARG);
    assert_null(buf);
}

static void test_requant_forms(void **state)
{
    (void)state;
    uint8_t t[2 * 256];
    memset(t, 0, sizeof t);
    npk_mgk_requant rq;
    npk_error err = {0};
    /* Two groups (N_OFP = 2), two rows: int multipliers -> packed. */
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 32; i++) {
            t[g * 256 + i * 4] = (uint8_t)(g * 32 + i);    /* bias = channel */
            t[g * 256 + 128 + i * 4] = (uint8_t)(100 + g); /* mult 100 / 101 */
        }
    assert_int_equal(npk_mgk_requant_parse(t, sizeof t, 2, 2, 40, &rq, &err), NPK_OK);
    assert_int_equal(rq.form, NPK_MGK_RQ_PACKED);
    for (int ch = 0; ch < 40; ch++) {
        assert_int_equal(rq.bias[ch], ch);
        assert_int_equal(rq.mult[ch], ch < 32 ? 100 : 101);
    }
    npk_mgk_requant_free(&rq);
    /* fp32 scales -> float. */
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 32; i++) {
            float f = 0.01f * (float)(i + 1);
            memcpy(t + g * 256 + 128 + i * 4, &f, 4); /* little-endian host in tests below */
            if (!npk_host_is_le()) {
                uint8_t *p = t + g * 256 + 128 + i * 4, x = p[0];
                p[0] = p[3], p[3] = x, x = p[1], p[1] = p[2], p[2] = x;
            }
        }
    assert_int_equal(npk_mgk_requant_parse(t, sizeof t, 2, 2, 64, &rq, &err), NPK_OK);
    assert_int_equal(rq.form, NPK_MGK_RQ_FLOAT);
    assert_true(rq.scale[63] > 0.319f && rq.scale[63] < 0.321f);
    npk_mgk_requant_free(&rq);
    /* Mixed -> unknown: no named views. */
    t[128] = 1, t[129] = t[130] = t[131] = 0;
    assert_int_equal(npk_mgk_requant_parse(t, sizeof t, 2, 2, 64, &rq, &err), NPK_OK);
    assert_int_equal(rq.form, NPK_MGK_RQ_UNKNOWN);
    assert_null(rq.bias);
    assert_null(rq.scale);
    assert_null(rq.mult);
    npk_mgk_requant_free(&rq);
    assert_int_equal(npk_mgk_requant_parse(t, 255, 2, 1, 64, &rq, &err), NPK_E_FORMAT);
    assert_int_equal(npk_mgk_requant_parse(t, sizeof t, 2, 2, 65, &rq, &err), NPK_E_ARG);
    assert_string_equal(npk_mgk_rq_form_name(NPK_MGK_RQ_TWO_SLOPE), "two-slope");
}

static void test_symbol_names(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"create", "create"},
        {"_Z22conv2d_int8_param_initPKvPvS1_x", "conv2d_int8_param_init"},
        {"_Z14gru_param_initNSt7__cxx11", "gru_param_init"},
        {"_ZN5magik5venus3fooEv", "_ZN5magik5venus3fooEv"},
        {"_Z99x", "_Z99x"},
        {"_Z3ab", "_Z3ab"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npk_mgk_symbol s = {{cases[i].in, (uint32_t)strlen(cases[i].in)}, 0, 0, 0, 0, 0};
        char buf[64];
        assert_string_equal(npk_mgk_symbol_short(&s, buf, sizeof buf), cases[i].out);
        char tiny[4];
        assert_int_equal(strlen(npk_mgk_symbol_short(&s, tiny, sizeof tiny)),
                         strlen(cases[i].out) < 3 ? strlen(cases[i].out) : 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_bit_width), cmocka_unit_test(test_extract_replace),
        cmocka_unit_test(test_synth_errors),    cmocka_unit_test(test_requant_forms),
        cmocka_unit_test(test_symbol_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
