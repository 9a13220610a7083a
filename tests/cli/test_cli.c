/* The npukit front end: help, version, exit statuses, error lines, `info`
 * on every fixture, and the `tensor` commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_help_and_version(void **state)
{
    (void)state;
    npk_run r = npk_cli("--help");
    assert_int_equal(r.status, 0);
    const char *groups[] = {"info", "tensor", "cnn2", "mgk", "rknpu", "edgetpu"};
    for (int i = 0; i < 6; i++) assert_non_null(strstr(r.out, groups[i]));
    npk_run_free(&r);
    r = npk_cli("--version");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "npukit " NPK_VERSION));
    npk_run_free(&r);
    r = npk_cli("help info");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: npukit info"));
    npk_run_free(&r);
    r = npk_cli("info --help");
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    r = npk_cli("tensor --help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "npukit tensor convert"));
    npk_run_free(&r);
    r = npk_cli("help tensor random");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "--shape"));
    npk_run_free(&r);
}

static void test_usage_errors(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "frobnicate",
                         "info",
                         "info --bogus x",
                         "tensor nothing",
                         "help nothing",
                         "tensor random --shape 2,q -o y.npy"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        npk_run r = npk_cli("%s", bad[i]);
        assert_int_equal(r.status, 2);
        if (i > 0) { /* one line, prefixed */
            assert_int_equal(count_lines(r.err), 1);
            assert_memory_equal(r.err, "npukit: ", 8);
        }
        npk_run_free(&r);
    }
}

static void test_bad_inputs(void **state)
{
    (void)state;
    npk_run r = npk_cli("info %s", npk_tmp("does-not-exist"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "No such file"));
    assert_int_equal(count_lines(r.err), 1);
    npk_run_free(&r);

    npk_error err = {0};
    uint8_t junk[64];
    for (int i = 0; i < 64; i++) junk[i] = (uint8_t)(i * 37 + 1);
    junk[0] = 0xff;
    assert_int_equal(npk_write_file(npk_tmp("junk.bin"), junk, sizeof junk, &err), NPK_OK);
    r = npk_cli("info %s", npk_tmp("junk.bin"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "junk.bin: offset 0x0: unrecognised format"));
    npk_run_free(&r);

    /* A truncated .npy: detected, then a one-line error with the offset. */
    const char npy[] =
        "\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }";
    assert_int_equal(npk_write_file(npk_tmp("short.npy"), npy, sizeof npy - 1, &err), NPK_OK);
    r = npk_cli("info %s", npk_tmp("short.npy"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "short.npy: offset 0x"));
    assert_int_equal(count_lines(r.err), 1);
    npk_run_free(&r);
}

#ifdef NPK_HAVE_CJSON
#include <cjson/cJSON.h>

/* `info --json` names the format of every fixture correctly. */
static void test_info_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *path, *format;
        int status; /* 2: recognised, described, but malformed */
    } want[] = {
        {"cnn2/bad_offset.bin", "cnn2", 2},
        {"cnn2/bad_truncated.bin", "cnn2", 2},
        {"cnn2/synthetic_identity_1x1_v1.bin", "cnn2", 0},
        {"cnn2/synthetic_identity_1x1_v2.bin", "cnn2", 0},
        {"cnn2/synthetic_identity_3x3_v2.bin", "cnn2", 0},
        {"cnn2/synthetic_mix_1x1_v2_mip2.bin", "cnn2", 0},
        {"cnn2/synthetic_random_3layer_v2.bin", "cnn2", 0},
        {"edgetpu/dense_256.tflite", "tflite", 0},
        {"edgetpu/dense_256_edgetpu.tflite", "tflite", 0},
        {"edgetpu/gabor_64x64_p4.tflite", "tflite", 0},
        {"edgetpu/gabor_64x64_p4_edgetpu.tflite", "tflite", 0},
        {"edgetpu/keras_lstm_mnist_ptq.tflite", "tflite", 0},
        {"edgetpu/keras_lstm_mnist_ptq_edgetpu.tflite", "tflite", 0},
        {"edgetpu/looming_64x64_3x3.tflite", "tflite", 0},
        {"edgetpu/looming_64x64_3x3_edgetpu.tflite", "tflite", 0},
        {"edgetpu/split_concat.tflite", "tflite", 0},
        {"edgetpu/split_concat_edgetpu.tflite", "tflite", 0},
        {"edgetpu/dense_256_edgetpu.json", "edgetpu-sidecar", 0},
        {"edgetpu/gabor_64x64_p4_edgetpu.json", "edgetpu-sidecar", 0},
        {"edgetpu/looming_64x64_3x3_edgetpu.json", "edgetpu-sidecar", 0},
        {"mgk/AEC_T41_16K_NS_OUT_UC.mgk", "mgk", 0},
        {"rknpu/registers.tsv", "rknpu-regdb", 0},
        {"rknpu/golden/fp16_4x64x64.txt", "rknpu-stream", 0},
        {"rknpu/golden/fp16_64x64x64.txt", "rknpu-stream", 0},
        {"rknpu/golden/fp16_256x512x128.txt", "rknpu-stream", 0},
        {"rknpu/golden/fp16_1x4096x4096.txt", "rknpu-stream", 0},
        {"rknpu/golden/fp16out_4x64x64.txt", "rknpu-stream", 0},
        {"rknpu/golden/fp16out_1x768x768.txt", "rknpu-stream", 0},
        {"rknpu/golden/int8_4x64x64.txt", "rknpu-stream", 0},
        {"rknpu/golden/int8_64x64x64.txt", "rknpu-stream", 0},
        {"rknpu/golden/int8_1x32x32.txt", "rknpu-stream", 0},
        {"rknpu/golden/fields.csv", "csv", 0},
        {"rknpu/golden/CASES.txt", "text", 0},
        {"rknpu/golden/layout.txt", "text", 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *p = NPK_FIXTURE(want[i].path);
        char path[2048];
        snprintf(path, sizeof path, "%s", p);
        npk_run r = npk_cli("info --json %s", path);
        if (r.status != want[i].status) fail_msg("%s: exit %d: %s", want[i].path, r.status, r.err);
        if (want[i].status && (!strstr(r.out, "\"error_offset\"") || !strstr(r.out, "\"details\"")))
            fail_msg("%s: no details or error offset: %s", want[i].path, r.out);
        cJSON *j = cJSON_Parse(r.out);
        assert_non_null(j);
        cJSON *f = cJSON_GetObjectItem(j, "format"), *pa = cJSON_GetObjectItem(j, "path"),
              *sz = cJSON_GetObjectItem(j, "size");
        assert_true(cJSON_IsString(f) && cJSON_IsString(pa) && cJSON_IsNumber(sz));
        if (strcmp(f->valuestring, want[i].format))
            fail_msg("%s: format %s, want %s", want[i].path, f->valuestring, want[i].format);
        assert_string_equal(pa->valuestring, path);
        size_t len;
        uint8_t *b = npk_slurp(path, &len);
        free(b);
        assert_int_equal((size_t)sz->valuedouble, len);
        cJSON_Delete(j);
        npk_run_free(&r);
    }
    /* A CNN2 file with a broken magic is not CNN v2: unrecognised, exit 2. */
    npk_run r = npk_cli("info --json %s", NPK_FIXTURE("cnn2/bad_magic.bin"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.out, "\"format\":\"unknown\""));
    npk_run_free(&r);
    /* Several files: one JSON object per line; edge TPU op reported. */
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s", NPK_FIXTURE("edgetpu/dense_256.tflite"));
    snprintf(b, sizeof b, "%s", NPK_FIXTURE("edgetpu/dense_256_edgetpu.tflite"));
    r = npk_cli("info --json %s %s", a, b);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2);
    char *nl = strchr(r.out, '\n');
    *nl = 0;
    cJSON *j1 = cJSON_Parse(r.out), *j2 = cJSON_Parse(nl + 1);
    assert_non_null(j1);
    assert_non_null(j2);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(j1, "details"), "edgetpu")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j2, "details"), "edgetpu")));
    cJSON_Delete(j1);
    cJSON_Delete(j2);
    npk_run_free(&r);
}

static void test_tensor_commands(void **state)
{
    (void)state;
    const char *w = npk_tmp("w.npy"), *st = npk_tmp("w.safetensors");
    npk_run r = npk_cli("tensor random --shape 2,3 --dtype f32 --seed 5 --min 0 --max 1 -o %s", w);
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    npk_tensor t;
    npk_error err = {0};
    assert_int_equal(npk_npy_load(w, &t, &err), NPK_OK);
    assert_int_equal(t.dtype, NPK_F32);
    for (int i = 0; i < 6; i++) {
        float v = ((float *)t.data)[i];
        assert_true(v >= 0 && v < 1);
    }
    /* Deterministic: the same seed gives the same bytes. */
    r = npk_cli("tensor random --shape 2,3 --dtype f32 --seed 5 --min 0 --max 1 -o %s",
                npk_tmp("w2.npy"));
    npk_run_free(&r);
    size_t l1, l2;
    uint8_t *b1 = npk_slurp(w, &l1), *b2 = npk_slurp(npk_tmp("w2.npy"), &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    free(b1);
    free(b2);

    r = npk_cli("tensor convert a=%s b=%s -o %s", w, npk_tmp("w2.npy"), st);
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    r = npk_cli("tensor info --json %s", st);
    assert_int_equal(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_int_equal(cJSON_GetArraySize(j), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "name")->valuestring, "a");
    cJSON_Delete(j);
    npk_run_free(&r);
    /* Two tensors into one .npy needs --name; nothing is written otherwise. */
    const char *o = npk_tmp("pick.npy");
    r = npk_cli("tensor convert %s -o %s", st, o);
    assert_int_equal(r.status, 2);
    assert_false(npk_exists(o));
    npk_run_free(&r);
    r = npk_cli("tensor convert %s --name b --dtype f16 -o %s", st, o);
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    npk_tensor u;
    assert_int_equal(npk_npy_load(o, &u, &err), NPK_OK);
    assert_int_equal(u.dtype, NPK_F16);
    for (int i = 0; i < 6; i++)
        assert_int_equal(((uint16_t *)u.data)[i], npk_f32_to_f16(((float *)t.data)[i]));
    npk_tensor_free(&u);
    /* Out-of-range integer conversion is an error, no output. */
    const char *o8 = npk_tmp("big.npy");
    r = npk_cli("tensor random --shape 4 --min 1000 --max 2000 -o %s", npk_tmp("big_src.npy"));
    npk_run_free(&r);
    r = npk_cli("tensor convert %s --dtype i8 -o %s", npk_tmp("big_src.npy"), o8);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "does not fit in i8"));
    assert_false(npk_exists(o8));
    npk_run_free(&r);
    /* Never over an input. */
    r = npk_cli("tensor convert %s -o %s", w, w);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "refusing to overwrite an input"));
    npk_run_free(&r);
    size_t l3;
    uint8_t *b3 = npk_slurp(w, &l3);
    assert_int_equal(l3, l1);
    free(b3);
    npk_tensor_free(&t);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version), cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_bad_inputs),
#ifdef NPK_HAVE_CJSON
        cmocka_unit_test(test_info_fixtures),    cmocka_unit_test(test_tensor_commands),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
