/* The `npukit cnn2` commands end to end: exit statuses, messages with
 * offsets, JSON fields, byte-exact pack(unpack(f)), rendering outputs and
 * "no output file on bad input". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/cnn2.h"
#include "npukit/cnn2_render.h"

#ifdef NPK_HAVE_CJSON
#include <cjson/cJSON.h>
#endif

static const char *valid_fixtures[] = {
    "cnn2/synthetic_identity_1x1_v1.bin", "cnn2/synthetic_identity_1x1_v2.bin",
    "cnn2/synthetic_identity_3x3_v2.bin", "cnn2/synthetic_mix_1x1_v2_mip2.bin",
    "cnn2/synthetic_random_3layer_v2.bin"};

/* A private copy of a fixture path (NPK_FIXTURE's buffer is reused). */
static char *fixture(const char *rel)
{
    return strdup(NPK_FIXTURE(rel));
}

static void expect(npk_run *r, int status, const char *out_has, const char *err_has)
{
    if (r->status != status || (out_has && !strstr(r->out, out_has)) ||
        (err_has && !strstr(r->err, err_has)))
        fail_msg("status %d (want %d)\nstdout: %s\nstderr: %s\nwanted stdout '%s' stderr '%s'",
                 r->status, status, r->out, r->err, out_has ? out_has : "", err_has ? err_has : "");
    npk_run_free(r);
}

static void test_validate(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof valid_fixtures / sizeof valid_fixtures[0]; i++) {
        char *f = fixture(valid_fixtures[i]);
        npk_run r = npk_cli("cnn2 validate %s", f);
        expect(&r, 0, ": valid (CNN v2 version", NULL);
        free(f);
    }
    char *bm = fixture("cnn2/bad_magic.bin"), *bo = fixture("cnn2/bad_offset.bin"),
         *bt = fixture("cnn2/bad_truncated.bin"),
         *ok = fixture("cnn2/synthetic_identity_1x1_v2.bin");
    npk_run r = npk_cli("cnn2 validate %s", bm);
    expect(&r, 1, "offset 0x0: error: magic is 0x314E4E43", NULL);
    r = npk_cli("cnn2 validate %s", bo);
    expect(&r, 1, "offset 0x20: error: layer 0: weight_offset 2, expected 0", NULL);
    r = npk_cli("cnn2 validate %s", bt);
    expect(&r, 1, "offset 0x84: error: file is 132 bytes, expected 136", NULL);
    r = npk_cli("cnn2 validate %s %s %s", ok, bt, ok);
    expect(&r, 1, "INVALID (1 error, 0 warnings)", NULL);
    r = npk_cli("cnn2 validate %s", npk_tmp("missing.bin"));
    expect(&r, 2, NULL, "npukit: ");
    /* Too short to parse at all: still a list of problems, exit 1. */
    npk_write_file(npk_tmp("tiny.bin"), "CNN", 3, NULL);
    r = npk_cli("cnn2 validate %s", npk_tmp("tiny.bin"));
    expect(&r, 1, "offset 0x3: error: file is 3 bytes, shorter than the 16-byte header", NULL);
    /* Warnings pass, unless --strict. */
    npk_cnn2_shape s = {1, 13, 4};
    npk_cnn2_model m;
    npk_cnn2_build(&m, 2, 0, 1, &s, NULL);
    npk_cnn2_save(npk_tmp("warn.bin"), &m, NULL);
    npk_cnn2_free(&m);
    r = npk_cli("cnn2 validate %s", npk_tmp("warn.bin"));
    expect(&r, 0, "offset 0x18: warning: layer 0: in_channels 13", NULL);
    r = npk_cli("cnn2 validate --strict %s", npk_tmp("warn.bin"));
    expect(&r, 1, "valid with warnings", NULL);
#ifdef NPK_HAVE_CJSON
    r = npk_cli("cnn2 validate --json %s", bt);
    assert_int_equal(r.status, 1);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "valid")));
    cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "problems"), 0);
    assert_string_equal(cJSON_GetObjectItem(p, "check")->valuestring, "size");
    assert_int_equal(cJSON_GetObjectItem(p, "offset")->valueint, 132);
    assert_int_equal(cJSON_GetObjectItem(j, "version")->valueint, 2);
    cJSON_Delete(j);
    npk_run_free(&r);
#endif
    free(bm);
    free(bo);
    free(bt);
    free(ok);
}

static void test_info(void **state)
{
    (void)state;
    char *f = fixture("cnn2/synthetic_random_3layer_v2.bin");
    npk_run r = npk_cli("cnn2 info %s", f);
    expect(&r, 0, "total_weights: 2064", NULL);
    r = npk_cli("info %s", f);
    expect(&r, 0, "mip_level: 1", NULL);
    r = npk_cli("info %s", f);
    expect(&r, 0, "valid: yes", NULL);
#ifdef NPK_HAVE_CJSON
    r = npk_cli("cnn2 info --json %s", f);
    assert_int_equal(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "version")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(j, "num_layers")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(j, "total_weights")->valueint, 2064);
    assert_int_equal(cJSON_GetObjectItem(j, "mip_level")->valueint, 1);
    cJSON *l1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "layers"), 1);
    assert_int_equal(cJSON_GetObjectItem(l1, "kernel_size")->valueint, 5);
    assert_int_equal(cJSON_GetObjectItem(l1, "in_channels")->valueint, 12);
    assert_int_equal(cJSON_GetObjectItem(l1, "out_channels")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(l1, "weight_offset")->valueint, 432);
    assert_int_equal(cJSON_GetObjectItem(l1, "weight_count")->valueint, 1200);
    cJSON_Delete(j);
    npk_run_free(&r);
#endif
    free(f);
    /* A bad file: info is an error (exit 2) with the offset. */
    f = fixture("cnn2/bad_offset.bin");
    r = npk_cli("cnn2 info %s", f);
    expect(&r, 2, NULL, "offset 0x20: cnn2: layer 0: weight_offset 2");
    r = npk_cli("info %s", f); /* described, then the first problem: exit 2 */
    expect(&r, 2, "valid: no", "offset 0x20: cnn2: layer 0: weight_offset 2");
    free(f);
}

static void test_pack_unpack(void **state)
{
    (void)state;
    if (!npk_safetensors_available()) skip();
    for (size_t i = 0; i < sizeof valid_fixtures / sizeof valid_fixtures[0]; i++) {
        char *f = fixture(valid_fixtures[i]);
        char *st = strdup(npk_tmp("u.safetensors")), *bin = strdup(npk_tmp("p.bin"));
        npk_run r = npk_cli("cnn2 unpack %s -o %s", f, st);
        expect(&r, 0, NULL, NULL);
        r = npk_cli("tensor info %s", st);
        expect(&r, 0, "layer.0.weight\tf32", NULL);
        r = npk_cli("cnn2 pack %s -o %s", st, bin);
        expect(&r, 0, NULL, NULL);
        size_t a, b;
        uint8_t *x = npk_slurp(f, &a), *y = npk_slurp(bin, &b);
        assert_int_equal(a, b);
        assert_memory_equal(x, y, a);
        free(x);
        free(y);
        free(f);
        free(st);
        free(bin);
    }
    /* v2 identity re-packed as version 1 is the v1 fixture. */
    char *v2 = fixture("cnn2/synthetic_identity_1x1_v2.bin"),
         *v1 = fixture("cnn2/synthetic_identity_1x1_v1.bin");
    npk_run r = npk_cli("cnn2 unpack %s -o %s", v2, npk_tmp("id.safetensors"));
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 pack %s --format-version 1 -o %s", npk_tmp("id.safetensors"),
                npk_tmp("id1.bin"));
    expect(&r, 0, NULL, NULL);
    size_t a, b;
    uint8_t *x = npk_slurp(v1, &a), *y = npk_slurp(npk_tmp("id1.bin"), &b);
    assert_int_equal(a, b);
    assert_memory_equal(x, y, a);
    free(x);
    free(y);
    r = npk_cli("cnn2 pack %s --mip 3 -o %s", npk_tmp("id.safetensors"), npk_tmp("m3.bin"));
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 info %s", npk_tmp("m3.bin"));
    expect(&r, 0, "mip_level:     3", NULL);
    r = npk_cli("cnn2 pack %s --format-version 1 --mip 2 -o %s", npk_tmp("id.safetensors"),
                npk_tmp("never.bin"));
    expect(&r, 2, NULL, "version 1 files cannot record a mip level");
    assert_false(npk_exists(npk_tmp("never.bin")));
    /* From tensors made by hand: random f32 weights, then validate. */
    r = npk_cli("tensor random --shape 4,12,3,3 --seed 3 --min -0.5 --max 0.5 -o %s",
                npk_tmp("w0.npy"));
    expect(&r, 0, NULL, NULL);
    r = npk_cli("tensor random --shape 4,12,5,5 --dtype f16 --seed 4 -o %s", npk_tmp("w1.npy"));
    expect(&r, 0, NULL, NULL);
    char conv[2048];
    snprintf(conv, sizeof conv, "tensor convert layer.0.weight=%s layer.1.weight=%s -o %s",
             npk_tmp("w0.npy"), npk_tmp("w1.npy"), npk_tmp("w.safetensors"));
    r = npk_cli("%s", conv);
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 pack %s -o %s", npk_tmp("w.safetensors"), npk_tmp("w.bin"));
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 validate %s", npk_tmp("w.bin"));
    expect(&r, 0, "2 layers, 1632 weights", NULL);
    /* Wrong names, bad input: exit 2, nothing written. */
    snprintf(conv, sizeof conv, "tensor convert conv.weight=%s -o %s", npk_tmp("w0.npy"),
             npk_tmp("bad.safetensors"));
    r = npk_cli("%s", conv);
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 pack %s -o %s", npk_tmp("bad.safetensors"), npk_tmp("never.bin"));
    expect(&r, 2, NULL, "is not named layer.<i>.weight");
    assert_false(npk_exists(npk_tmp("never.bin")));
    char *bo = fixture("cnn2/bad_offset.bin");
    r = npk_cli("cnn2 unpack %s -o %s", bo, npk_tmp("never.safetensors"));
    expect(&r, 2, NULL, "offset 0x20");
    assert_false(npk_exists(npk_tmp("never.safetensors")));
    free(bo);
    free(v1);
    free(v2);
}

static void decode_png(const char *path, npk_cnn2_image *img)
{
    size_t len;
    uint8_t *b = npk_slurp(path, &len);
    assert_non_null(b);
    npk_error err = {0};
    if (npk_cnn2_png_decode(b, len, img, &err)) fail_msg("%s: %s", path, err.msg);
    free(b);
}

static void test_render(void **state)
{
    (void)state;
    if (!npk_cnn2_png_available()) skip();
    char *id = fixture("cnn2/synthetic_identity_3x3_v2.bin");
    char *rnd = fixture("cnn2/synthetic_random_3layer_v2.bin");
    char *in = strdup(npk_tmp("in.png")); /* npk_tmp's buffers rotate */
    npk_run r = npk_cli("cnn2 pattern --size 21x13 --alpha --seed 5 -o %s", in);
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 pattern --size 21x13 --alpha --seed 5 -o %s", npk_tmp("in2.png"));
    expect(&r, 0, NULL, NULL);
    size_t a, b;
    uint8_t *x = npk_slurp(in, &a), *y = npk_slurp(npk_tmp("in2.png"), &b);
    assert_int_equal(a, b);
    assert_memory_equal(x, y, a);
    free(x);
    free(y);
    npk_cnn2_image img;
    decode_png(in, &img);
    assert_int_equal(img.width, 21);

    /* Identity: raw output = sigmoid(input) per channel; D from alpha. */
    r = npk_cli("cnn2 render %s %s -o %s --raw %s", id, in, npk_tmp("out.png"), npk_tmp("raw.npy"));
    expect(&r, 0, NULL, NULL);
    npk_tensor t;
    assert_int_equal(npk_npy_load(npk_tmp("raw.npy"), &t, NULL), NPK_OK);
    assert_int_equal(t.dtype, NPK_F32);
    assert_int_equal(t.ndim, 3);
    assert_int_equal(t.shape[0], 13);
    assert_int_equal(t.shape[1], 21);
    assert_int_equal(t.shape[2], 4);
    const float *raw = t.data;
    for (size_t i = 0; i < 21 * 13 * 4; i++) {
        float in16 = npk_f16_to_f32(npk_f32_to_f16(img.rgbd[i]));
        float want = (float)(1.0 / (1.0 + exp(-(double)in16)));
        assert_true(fabsf(raw[i] - want) <= 1.0f / 1024);
    }
    npk_tensor_free(&t);
    /* Legacy clamp + identity + blend 1: the output PNG is the input. */
    r = npk_cli("cnn2 render %s %s -o %s --activation legacy-clamp --border zero", id, in,
                npk_tmp("same.png"));
    expect(&r, 0, NULL, NULL);
    npk_cnn2_image same;
    decode_png(npk_tmp("same.png"), &same);
    assert_memory_equal(same.rgbd, img.rgbd, 21 * 13 * 16);
    npk_cnn2_image_free(&same);
    /* Blend 0: the output is the input, whatever the model. */
    r = npk_cli("cnn2 render %s %s -o %s --blend 0", rnd, in, npk_tmp("b0.png"));
    expect(&r, 0, NULL, NULL);
    decode_png(npk_tmp("b0.png"), &same);
    assert_memory_equal(same.rgbd, img.rgbd, 21 * 13 * 16);
    npk_cnn2_image_free(&same);
    /* Fast and reference renderers write the same file; layers are dumped. */
    r = npk_cli("cnn2 render %s %s -o %s --dump-layers %s --threads 3", rnd, in, npk_tmp("f.png"),
                npk_tmp("dump"));
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 render %s %s -o %s --reference", rnd, in, npk_tmp("r.png"));
    expect(&r, 0, NULL, NULL);
    x = npk_slurp(npk_tmp("f.png"), &a);
    y = npk_slurp(npk_tmp("r.png"), &b);
    assert_int_equal(a, b);
    assert_memory_equal(x, y, a);
    free(x);
    free(y);
    assert_int_equal(npk_npy_load(npk_tmp("dump/features.npy"), &t, NULL), NPK_OK);
    assert_int_equal(t.shape[2], 12);
    npk_tensor_free(&t);
    for (int l = 0; l < 3; l++) {
        char name[32];
        snprintf(name, sizeof name, "dump/layer_%d.npy", l);
        assert_int_equal(npk_npy_load(npk_tmp(name), &t, NULL), NPK_OK);
        assert_int_equal(t.shape[0], 13);
        npk_tensor_free(&t);
    }
    npk_cnn2_image_free(&img);
    free(id);
    free(rnd);
    free(in);
}

static void test_render_errors(void **state)
{
    (void)state;
    if (!npk_cnn2_png_available()) skip();
    char *id = fixture("cnn2/synthetic_identity_1x1_v2.bin");
    char *bad = fixture("cnn2/bad_truncated.bin");
    char *in = strdup(npk_tmp("e_in.png")), *out = strdup(npk_tmp("e_out.png"));
    npk_run r = npk_cli("cnn2 pattern --size 8x8 -o %s", in);
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 render %s %s -o %s --raw %s", bad, in, out, npk_tmp("e.npy"));
    expect(&r, 2, NULL, "offset 0x84: cnn2: file is 132 bytes, expected 136");
    assert_false(npk_exists(out) || npk_exists(npk_tmp("e.npy")));
    r = npk_cli("cnn2 render %s %s -o %s --dump-layers %s", id, id, out, npk_tmp("edump"));
    expect(&r, 2, NULL, "not a readable PNG");
    assert_false(npk_exists(out) || npk_exists(npk_tmp("edump")));
    r = npk_cli("cnn2 pattern --size 8x9 -o %s", npk_tmp("d89.png"));
    expect(&r, 0, NULL, NULL);
    r = npk_cli("cnn2 render %s %s --depth %s -o %s", id, in, npk_tmp("d89.png"), out);
    expect(&r, 2, NULL, "depth image is 8x9, the input image 8x8");
    assert_false(npk_exists(out));
    /* A valid file the renderer cannot run (12 -> 3 last layer). */
    npk_cnn2_shape s = {1, 12, 3};
    npk_cnn2_model m;
    npk_cnn2_build(&m, 2, 0, 1, &s, NULL);
    npk_cnn2_save(npk_tmp("shape.bin"), &m, NULL);
    npk_cnn2_free(&m);
    r = npk_cli("cnn2 render %s %s -o %s", npk_tmp("shape.bin"), in, out);
    expect(&r, 2, NULL, "unsupported network shape");
    assert_false(npk_exists(out));
    /* Never over an input. */
    size_t a, b;
    uint8_t *before = npk_slurp(in, &a);
    r = npk_cli("cnn2 render %s %s -o %s", id, in, in);
    assert_int_equal(r.status, 2);
    npk_run_free(&r);
    uint8_t *after = npk_slurp(in, &b);
    assert_int_equal(a, b);
    assert_memory_equal(before, after, a);
    free(before);
    free(after);
    r = npk_cli("cnn2 render %s %s -o %s --border mirror", id, in, out);
    expect(&r, 2, NULL, "--border must be clamp or zero");
    r = npk_cli("cnn2 render %s %s", id, in);
    expect(&r, 2, NULL, "missing -o");
    r = npk_cli("cnn2 pattern --size 8 -o %s", out);
    expect(&r, 2, NULL, "--size must be WxH");
    assert_false(npk_exists(out));
    free(id);
    free(bad);
    free(in);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),      cmocka_unit_test(test_info),
        cmocka_unit_test(test_pack_unpack),   cmocka_unit_test(test_render),
        cmocka_unit_test(test_render_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
