/* npukit tflite info / run / cut from the command line: outputs, errors
 * (one line, exit 2, nothing written), JSON that is valid UTF-8 whatever
 * the model's names hold. */
#include "tfl_test.h"

/* A two-output model: y = x + x (uint8, scales 1), z = reshape(x). The
 * tensor names hold a byte that is not UTF-8. */
static const char *two_output_model(void)
{
    npk_tflb *b = npk_tflb_new();
    static const int32_t s[] = {1, 2, 2, 1}, r[] = {4};
    int32_t x = tt_add(b, "in\xff/x", NPK_TFL_UINT8, 4, s, 1.0f, 0, NULL, 0);
    int32_t y = tt_add(b, "sum:0", NPK_TFL_UINT8, 4, s, 1.0f, 0, NULL, 0);
    int32_t z = tt_add(b, "flat/z", NPK_TFL_UINT8, 1, r, 1.0f, 0, NULL, 0);
    tt_op(b, NPK_TFL_OP_ADD, (int32_t[]){x, x}, 2, &y, 1, NULL);
    tt_op(b, NPK_TFL_OP_RESHAPE, &x, 1, &z, 1, NULL);
    npk_tflb_io(b, &x, 1, (int32_t[]){y, z}, 2);
    uint8_t *buf;
    size_t len;
    npk_error err = {0};
    assert_int_equal(npk_tflb_finish(b, &buf, &len, &err), NPK_OK);
    npk_tflb_free(b);
    const char *path = npk_tmp("two.tflite");
    assert_int_equal(npk_write_file(path, buf, len, &err), NPK_OK);
    free(buf);
    return path;
}

static void write_npy(const char *path, npk_dtype dt, int ndim, const int64_t *shape,
                      const void *data)
{
    npk_tensor t;
    npk_error err = {0};
    assert_int_equal(npk_tensor_alloc(&t, NULL, dt, ndim, shape, &err), NPK_OK);
    memcpy(t.data, data, t.nbytes);
    assert_int_equal(npk_npy_save(path, &t, &err), NPK_OK);
    npk_tensor_free(&t);
}

static void read_npy(const char *path, const void *want, size_t bytes)
{
    npk_tensor t;
    npk_error err = {0};
    if (npk_npy_load(path, &t, &err)) fail_msg("%s: %s", path, err.msg);
    assert_int_equal(t.nbytes, bytes);
    assert_memory_equal(t.data, want, bytes);
    npk_tensor_free(&t);
}

#ifdef NPK_HAVE_CJSON
/* Every byte sequence valid UTF-8 (checked on the JSON output). */
static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80             ? 1
                : (*p & 0xe0) == 0xc0 ? 2
                : (*p & 0xf0) == 0xe0 ? 3
                : (*p & 0xf8) == 0xf0 ? 4
                                      : 0;
        if (!n || (n == 2 && *p < 0xc2)) return 0;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80) return 0;
        p += n;
    }
    return 1;
}
#endif

static void test_info(void **state)
{
    (void)state;
    const char *m = two_output_model();
    npk_run r = npk_cli("tflite info %s", m);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "operator 0 ADD (v1"));
    assert_non_null(
        strstr(r.out, "tensor 0 \"in\xef\xbf\xbd/x\" UINT8 [1, 2, 2, 1] activation, scale 1"));
    assert_non_null(strstr(r.out, "supported"));
    npk_run_free(&r);
#ifdef NPK_HAVE_CJSON
    r = npk_cli("tflite info --json %s", m);
    assert_int_equal(r.status, 0);
    assert_true(valid_utf8(r.out));
    assert_non_null(strstr(r.out, "\"in\xef\xbf\xbd/x\""));
    assert_non_null(strstr(r.out, "\"supported\":\ttrue"));
    npk_run_free(&r);
#endif
    /* A real model: the decoded options by name. */
    r = npk_cli("tflite info %s", NPK_FIXTURE("models/mobilenet_v2_1.0_224_quant.tflite"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Conv2DOptions padding=SAME stride_w=2 stride_h=2 "
                                  "fused_activation_function=RELU6 dilation_w_factor=1 "
                                  "dilation_h_factor=1\n"));
    assert_non_null(strstr(r.out, "Pool2DOptions padding=VALID stride_w=1 stride_h=1 "
                                  "filter_width=7 filter_height=7"));
    npk_run_free(&r);
}

static void test_run_outputs(void **state)
{
    (void)state;
    const char *m = two_output_model();
    static const uint8_t x[] = {1, 2, 3, 4}, y[] = {2, 4, 6, 8};
    const int64_t shape[] = {1, 2, 2, 1};
    const char *in = npk_tmp("x.npy");
    write_npy(in, NPK_U8, 4, shape, x);
    /* A directory of NAME.npy (names made safe), all written. */
    const char *dir = npk_tmp("outs");
    npk_run r = npk_cli("tflite run %s --input %s -o %s", m, in, dir);
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    char p[1024];
    snprintf(p, sizeof p, "%s/sum_0.npy", dir);
    read_npy(p, y, 4);
    snprintf(p, sizeof p, "%s/flat_z.npy", dir);
    read_npy(p, x, 4);
    /* By name, --repeat prints the latency and the arena. */
    const char *one = npk_tmp("sum.safetensors");
    r = npk_cli("tflite run %s --input in\xff/x=%s -o %s --repeat 3 --threads 2", m, in, one);
    if (npk_safetensors_available()) {
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "3 runs, 2 threads: min "));
        assert_non_null(strstr(r.out, "largest live set"));
        assert_true(npk_exists(one));
    }
    npk_run_free(&r);
    /* --dump: every tensor the run computes, and the input. */
    const char *dump = npk_tmp("dump");
    r = npk_cli("tflite run %s --input %s -o %s --dump %s --repeat 2", m, in, npk_tmp("d.npy.dir"),
                dump);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "dumped 3 tensors"));
    npk_run_free(&r);
    snprintf(p, sizeof p, "%s/in_xff_x.npy", dump);
    assert_false(npk_exists(p)); /* the name is made safe byte by byte: */
    snprintf(p, sizeof p, "%s/in__x.npy", dump);
    read_npy(p, x, 4);
}

/* NPUKIT_TFL_KERNELS=portable runs the portable 8-bit loops (named by
 * --repeat), with the bytes of the default (vector) kernels. */
static void test_run_portable_kernels(void **state)
{
    (void)state;
    const char *m = NPK_FIXTURE("models/mobilenet_v1_0.5_160_quant.tflite");
    const int64_t shape[] = {1, 160, 160, 3};
    uint8_t *x = malloc(160 * 160 * 3);
    assert_non_null(x);
    for (size_t k = 0; k < 160 * 160 * 3; k++) x[k] = (uint8_t)(k * 7);
    const char *in = npk_tmp("img.npy");
    write_npy(in, NPK_U8, 4, shape, x);
    free(x);
    const char *best = npk_tmp("best.npy"), *port = npk_tmp("portable.npy");
    npk_run r = npk_cli("tflite run %s --input %s -o %s --repeat 1", m, in, best);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, " kernels\n"));
    npk_run_free(&r);
    setenv("NPUKIT_TFL_KERNELS", "portable", 1);
    r = npk_cli("tflite run %s --input %s -o %s --repeat 1", m, in, port);
    unsetenv("NPUKIT_TFL_KERNELS");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "; portable kernels\n"));
    npk_run_free(&r);
    npk_tensor a, b;
    npk_error err = {0};
    assert_int_equal(npk_npy_load(best, &a, &err), NPK_OK);
    assert_int_equal(npk_npy_load(port, &b, &err), NPK_OK);
    assert_int_equal(a.nbytes, 1001);
    assert_int_equal(a.nbytes, b.nbytes);
    assert_memory_equal(a.data, b.data, a.nbytes);
    npk_tensor_free(&a);
    npk_tensor_free(&b);
}

static void test_run_errors(void **state)
{
    (void)state;
    const char *m = two_output_model();
    const int64_t bad[] = {1, 4};
    static const uint8_t x[4] = {0};
    const char *in = npk_tmp("bad.npy"), *out = npk_tmp("never");
    write_npy(in, NPK_U8, 2, bad, x);
    npk_run r = npk_cli("tflite run %s --input %s -o %s", m, in, out);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "must be UINT8 [1, 2, 2, 1], the file holds u8 [1, 4]"));
    assert_null(strchr(strchr(r.err, '\n') + 1, '\n')); /* one line */
    assert_false(npk_exists(out));
    npk_run_free(&r);
    const int64_t good[] = {1, 2, 2, 1};
    write_npy(in, NPK_I8, 4, good, x);
    r = npk_cli("tflite run %s --input %s -o %s", m, in, out);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "the file holds i8"));
    assert_false(npk_exists(out));
    npk_run_free(&r);
    /* A model the interpreter cannot run: the operator is named. */
    r = npk_cli("tflite run %s --input %s -o %s",
                NPK_FIXTURE("edgetpu/keras_lstm_mnist_ptq.tflite"), in, out);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "operator 1 (UNIDIRECTIONAL_SEQUENCE_LSTM)"));
    assert_false(npk_exists(out));
    npk_run_free(&r);
    r = npk_cli("tflite run %s -o %s", m, out);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no --input for"));
    npk_run_free(&r);
}

/* A damaged model: one error line with the offset, exit 2, nothing written. */
static void test_damaged_model(void **state)
{
    (void)state;
    const char *m = two_output_model();
    size_t len;
    uint8_t *bytes = npk_slurp(m, &len);
    assert_non_null(bytes);
    npk_error err = {0};
    const char *cut = npk_tmp("cut_short.tflite");
    assert_int_equal(npk_write_file(cut, bytes, len / 2, &err), NPK_OK);
    free(bytes);
    const int64_t shape[] = {1, 2, 2, 1};
    static const uint8_t x[4] = {0};
    const char *in = npk_tmp("x2.npy"), *out = npk_tmp("never2.out");
    write_npy(in, NPK_U8, 4, shape, x);
    const char *cmds[] = {"tflite info --json %s%.0s%.0s", "tflite run %s --input %s -o %s",
                          "tflite cut %s%.0s --outputs 1 -o %s"};
    for (int i = 0; i < 3; i++) {
        if (i == 0 && !npk_safetensors_available()) continue; /* --json needs libcjson */
        npk_run r = npk_cli(cmds[i], cut, in, out);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "offset 0x"));
        assert_null(strchr(strchr(r.err, '\n') + 1, '\n'));
        npk_run_free(&r);
    }
    assert_false(npk_exists(out));
}

static void test_cut(void **state)
{
    (void)state;
    const char *m = two_output_model();
    const char *out = npk_tmp("cut.tflite");
    npk_run r = npk_cli("tflite cut %s --outputs flat/z -o %s", m, out);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 tensors, 1 operators"));
    npk_run_free(&r);
    r = npk_cli("tflite info %s", out);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "operator 0 RESHAPE"));
    assert_null(strstr(r.out, "ADD"));
    npk_run_free(&r);
    r = npk_cli("tflite cut %s --outputs nothing -o %s", m, npk_tmp("x.tflite"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no tensor named \"nothing\""));
    assert_non_null(strstr(r.err, m)); /* an error about the model names it */
    npk_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info),       cmocka_unit_test(test_run_outputs),
        cmocka_unit_test(test_run_errors), cmocka_unit_test(test_damaged_model),
        cmocka_unit_test(test_cut),        cmocka_unit_test(test_run_portable_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
