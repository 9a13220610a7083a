/* Classification: label files (both formats, the background offset, hostile
 * files), the top K, a TFLite model's picture input, and `npukit tflite
 * classify` on cat.bmp through every fixture classifier (the top 5 of each
 * is printed in the test log). */
#include "npukit/classify.h"
#include "npukit/image.h"
#include "npukit/tflite_image.h"
#include "tfl_test.h"

static void parse_ok(const char *text, npk_labels *l)
{
    npk_error err = {0};
    if (npk_labels_parse((const uint8_t *)text, strlen(text), l, &err))
        fail_msg("%s: %s", text, err.msg);
}

static void parse_fails(const char *text, size_t len, npk_status want, const char *words)
{
    npk_labels l;
    npk_error err = {0};
    assert_int_equal(npk_labels_parse((const uint8_t *)text, len, &l, &err), want);
    if (!strstr(err.msg, words)) fail_msg("\"%s\" does not say \"%s\"", err.msg, words);
}

static void test_labels_plain(void **state)
{
    (void)state;
    npk_labels l;
    /* BOM, CRLF, blanks around labels, an empty line keeps its place, no
     * end of line after the last */
    parse_ok("\xef\xbb\xbf"
             "background\r\n tench, Tinca tinca \r\n\ngoldfish",
             &l);
    assert_false(l.indexed);
    assert_int_equal(l.count, 4);
    assert_string_equal(l.name[0], "background");
    assert_string_equal(l.name[1], "tench, Tinca tinca");
    assert_string_equal(l.name[2], "");
    assert_string_equal(l.name[3], "goldfish");
    /* as many lines as classes: line c */
    assert_string_equal(npk_labels_name(&l, 1, 4), "tench, Tinca tinca");
    /* one line more than the classes: the model has no background class */
    assert_string_equal(npk_labels_name(&l, 0, 3), "tench, Tinca tinca");
    assert_string_equal(npk_labels_name(&l, 2, 3), "goldfish");
    assert_null(npk_labels_name(&l, 3, 3));
    /* one line less: class 0 is the background the file leaves out */
    assert_string_equal(npk_labels_name(&l, 0, 5), "background");
    assert_string_equal(npk_labels_name(&l, 4, 5), "goldfish");
    /* anything else: line c while there is one */
    assert_string_equal(npk_labels_name(&l, 3, 90), "goldfish");
    assert_null(npk_labels_name(&l, 4, 90));
    npk_labels_free(&l);
    /* a label starting with a number is fine when not every line is "ID LABEL" */
    parse_ok("7 up\nsprite\n", &l);
    assert_false(l.indexed);
    assert_string_equal(l.name[0], "7 up");
    npk_labels_free(&l);
}

static void test_labels_indexed(void **state)
{
    (void)state;
    npk_labels l;
    parse_ok("0  person\n1  bicycle\n\n3: motorcycle\n  89\thair drier  \n", &l);
    assert_true(l.indexed);
    assert_int_equal(l.count, 4);
    assert_string_equal(npk_labels_name(&l, 0, 90), "person");
    assert_string_equal(npk_labels_name(&l, 3, 90), "motorcycle");
    assert_string_equal(npk_labels_name(&l, 89, 90), "hair drier");
    assert_null(npk_labels_name(&l, 2, 90)); /* ids are not positions */
    npk_labels_free(&l);
}

static void test_labels_hostile(void **state)
{
    (void)state;
    parse_fails("", 0, NPK_E_FORMAT, "no labels");
    parse_fails("\xef\xbb\xbf", 3, NPK_E_FORMAT, "no labels");
    parse_fails("cat\0dog\n", 8, NPK_E_FORMAT, "NUL");
    parse_fails("0 cat\n0 dog\n", 12, NPK_E_FORMAT, "given twice");
    size_t n = NPK_LABELS_MAX_LINE + 2;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    big[n] = 0;
    parse_fails(big, n, NPK_E_LIMIT, "limit");
    free(big);
    npk_labels l;
    npk_error err = {0};
    assert_int_equal(npk_labels_load(npk_tmp("no-such-labels.txt"), &l, &err), NPK_E_IO);
}

static void test_top_k(void **state)
{
    (void)state;
    npk_class_score top[8];
    npk_error err = {0};
    const uint8_t u[] = {3, 200, 7, 200, 0, 199};
    assert_int_equal(npk_top_k(u, NPK_U8, 6, 1.0 / 256, 0, 3, top, &err), 3);
    assert_int_equal(top[0].index, 1); /* ties: lower index first */
    assert_int_equal(top[1].index, 3);
    assert_int_equal(top[2].index, 5);
    assert_int_equal(top[0].raw, 200);
    assert_true(fabs(top[0].score - 200.0 / 256) < 1e-12);
    const int8_t s[] = {-128, 5, -3};
    assert_int_equal(npk_top_k(s, NPK_I8, 3, 0.5, -128, 8, top, &err), 3); /* k > n */
    assert_int_equal(top[0].index, 1);
    assert_true(fabs(top[0].score - 66.5) < 1e-12);
    assert_int_equal(top[2].index, 0);
    assert_true(top[2].score == 0);
    const float f[] = {0.25f, NAN, 0.5f, -1.0f};
    assert_int_equal(npk_top_k(f, NPK_F32, 4, 0, 0, 4, top, &err), 4);
    assert_int_equal(top[0].index, 2);
    assert_int_equal(top[1].index, 0);
    assert_int_equal(top[2].index, 3);
    assert_int_equal(top[3].index, 1); /* NaN last */
    assert_int_equal(npk_top_k(f, NPK_F16, 4, 0, 0, 2, top, &err), 0);
    assert_int_equal(err.status, NPK_E_UNSUPPORTED);
}

static void test_image_input(void **state)
{
    (void)state;
    npk_mapped f;
    npk_fixture_map("models/mobilenet_v1_0.5_160_quant.tflite", &f);
    npk_tfl_model m;
    npk_error err = {0};
    assert_int_equal(npk_tfl_parse(f.data, f.size, &m, &err), NPK_OK);
    const npk_tfl_subgraph *g = &m.subgraphs[0];
    npk_image_input in;
    assert_int_equal(npk_tfl_image_input(&m, 0, g->inputs[0], &in, &err), NPK_OK);
    assert_int_equal(in.dtype, NPK_U8);
    assert_int_equal(in.ndim, 4);
    assert_int_equal(in.shape[1], 160);
    assert_int_equal(in.shape[3], 3);
    assert_true(in.has_quant);
    /* the output [1, 1001] is no picture */
    assert_int_equal(npk_tfl_image_input(&m, 0, g->outputs[0], &in, &err), NPK_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "[1, 1001]"));
    npk_tfl_free(&m);
    npk_unmap_file(&f);
}

/* classify's text lines: "SCORE INDEX LABEL". */
static int top_index(const char *out, int line, char *label, size_t len)
{
    const char *p = out;
    for (int i = 0; i < line && p; i++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p || !*p) return -1;
    double score;
    int idx, used = 0;
    if (sscanf(p, "%lf %d %n", &score, &idx, &used) < 2) return -1;
    const char *e = strchr(p + used, '\n');
    snprintf(label, len, "%.*s", (int)(e ? e - (p + used) : (long)strlen(p + used)), p + used);
    return idx;
}

static void test_classify_cat(void **state)
{
    (void)state;
    NPK_NEED_FEATURE("bmp");
    const char *cat = NPK_FIXTURE("models/cat.bmp");
    char catp[1024], labels[1024];
    snprintf(catp, sizeof catp, "%s", cat);
    snprintf(labels, sizeof labels, "%s", NPK_FIXTURE("models/imagenet_labels.txt"));
    /* ImageNet classes 282..286 (1001-class numbering): tabby, tiger cat,
     * Persian, Siamese, Egyptian cat. Both oracles give 286 on cat.bmp for
     * all three classifiers (docs/tflite-oracles.md). */
    static const char *const models[] = {"models/mobilenet_v1_0.5_160_quant.tflite",
                                         "models/mobilenet_v2_1.0_224_quant.tflite",
                                         "models/tf2_mobilenet_v2_1.0_224_ptq.tflite"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        npk_run r = npk_cli("tflite classify %s --image %s --labels %s", NPK_FIXTURE(models[i]),
                            catp, labels);
        if (r.status) fail_msg("%s: %s", models[i], r.err);
        print_message("  %s, cat.bmp, top 5:\n%s", models[i], r.out);
        char label[256];
        int top = top_index(r.out, 0, label, sizeof label);
        if (top < 282 || top > 286)
            fail_msg("%s: top-1 %d (%s) is not a cat", models[i], top, label);
        assert_int_equal(top, 286);
        assert_string_equal(label, "Egyptian cat");
        for (int k = 1; k < 5; k++) assert_true(top_index(r.out, k, label, sizeof label) >= 0);
        assert_int_equal(top_index(r.out, 5, label, sizeof label), -1); /* --top 5 by default */
        npk_run_free(&r);
    }

    /* A 1000-line file (no background line) names the same classes. */
    size_t len;
    uint8_t *text = npk_slurp(labels, &len);
    assert_non_null(text);
    const uint8_t *nl = memchr(text, '\n', len);
    assert_non_null(nl);
    const char *short_labels = npk_tmp("labels1000.txt");
    npk_error err = {0};
    assert_int_equal(npk_write_file(short_labels, nl + 1, len - (size_t)(nl + 1 - text), &err),
                     NPK_OK);
    free(text);
    npk_run r = npk_cli("tflite classify %s --image %s --labels %s --top 2", NPK_FIXTURE(models[0]),
                        catp, short_labels);
    assert_int_equal(r.status, 0);
    char label[256];
    assert_int_equal(top_index(r.out, 0, label, sizeof label), 286);
    assert_string_equal(label, "Egyptian cat");
    assert_int_equal(top_index(r.out, 2, label, sizeof label), -1);
    npk_run_free(&r);

#ifdef NPK_HAVE_CJSON
    /* --json: the same top classes with their stored integers; --threads 2
     * gives the same bits as one thread. */
    r = npk_cli("tflite classify %s --image %s --labels %s --top 2 --json --threads 2",
                NPK_FIXTURE(models[0]), catp, labels);
    assert_int_equal(r.status, 0);
    const char *first = strstr(r.out, "\"index\":");
    assert_non_null(first);
    assert_int_equal(atoi(first + strlen("\"index\":")), 286);
    assert_non_null(strstr(first, "\"Egyptian cat\""));
    assert_non_null(strstr(first, "\"raw\":\t149")); /* 149/256 = 0.58203 */
    const char *second = strstr(first + 1, "\"index\":");
    assert_non_null(second);
    assert_int_equal(atoi(second + strlen("\"index\":")), 283);
    assert_null(strstr(second + 1, "\"index\":"));
    assert_non_null(strstr(r.out, "\"classes\":\t1001"));
    npk_run_free(&r);
#endif

    /* Without labels: indices and scores only. */
    r = npk_cli("tflite classify %s --image %s --top 1", NPK_FIXTURE(models[0]), catp);
    assert_int_equal(r.status, 0);
    assert_int_equal(top_index(r.out, 0, label, sizeof label), 286);
    assert_string_equal(label, "");
    npk_run_free(&r);
}

static void test_classify_errors(void **state)
{
    (void)state;
    const char *m = NPK_FIXTURE("models/mobilenet_v1_0.5_160_quant.tflite");
    char mp[1024];
    snprintf(mp, sizeof mp, "%s", m);
    npk_run r = npk_cli("tflite classify %s", mp);
    assert_int_equal(r.status, 2);
    npk_run_free(&r);
    r = npk_cli("tflite classify %s --image %s --top 0", mp, mp);
    assert_int_equal(r.status, 2);
    npk_run_free(&r);
    /* a model file as the picture: one line, exit 2 */
    r = npk_cli("tflite classify %s --image %s", mp, mp);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "npukit: "));
    assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1); /* one line */
    npk_run_free(&r);
    /* a model whose input is no picture */
    r = npk_cli("tflite classify %s --image %s", NPK_FIXTURE("edgetpu/dense_256.tflite"), mp);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "not a picture"));
    npk_run_free(&r);
    /* a broken labels file */
    const char *bad = npk_tmp("bad-labels.txt");
    npk_error err = {0};
    assert_int_equal(npk_write_file(bad, "0 a\n0 b\n", 8, &err), NPK_OK);
    r = npk_cli("tflite classify %s --image %s --labels %s", mp, mp, bad);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "given twice"));
    npk_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels_plain),    cmocka_unit_test(test_labels_indexed),
        cmocka_unit_test(test_labels_hostile),  cmocka_unit_test(test_top_k),
        cmocka_unit_test(test_image_input),     cmocka_unit_test(test_classify_cat),
        cmocka_unit_test(test_classify_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
