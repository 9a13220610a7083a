/* The command line end to end: `edgetpu run --device emu --cpu-model
 * UNCOMPILED` of every compiled model of the fixtures writes the same bytes
 * as `tflite run UNCOMPILED` (outputs in their own types: --raw), the SSD
 * pair as a pipeline against its stand-in model, the task views, and the
 * user errors (one line, exit 2, nothing written). Pairs whose CPU tail the
 * interpreter cannot run yet are skipped with the operator's name. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "ssd_standin.h"

#define SEG0 "ssd_mobilenet_v1_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"
#define SEG1 "ssd_mobilenet_v1_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"

/* The fixture's path, in one of 16 buffers used in turn (a test needs fewer). */
static const char *model(const char *name)
{
    static char paths[16][1024];
    static unsigned next;
    char rel[256];
    size_t n = strlen(name);
    if (n > 4 && !strcmp(name + n - 4, ".bmp")) NPK_NEED_FEATURE("bmp");
    snprintf(rel, sizeof rel, "models/%s", name);
    char *p = paths[next++ % 16];
    snprintf(p, sizeof paths[0], "%s", NPK_FIXTURE(rel));
    return p;
}

/* A seeded random .npy of the model's first input. */
static const char *random_input(const char *compiled, const char *file, uint64_t seed)
{
    npk_error err = {0};
    gfx c;
    gfx_load(compiled, &c);
    const npk_tfl_subgraph *sg = &c.m.tfl.subgraphs[0];
    const npk_tfl_tensor *t = &sg->tensors[sg->inputs[0]];
    int64_t shape[NPK_MAX_DIMS];
    for (uint32_t d = 0; d < t->ndim; d++) shape[d] = t->shape[d];
    npk_tensor x;
    assert_int_equal(npk_tensor_alloc(&x, NULL, t->type == NPK_TFL_INT8 ? NPK_I8 : NPK_U8,
                                      (int)t->ndim, shape, &err),
                     NPK_OK);
    for (size_t k = 0; k < x.nbytes; k++) ((uint8_t *)x.data)[k] = (uint8_t)npk_rand(&seed);
    const char *path = npk_tmp(file);
    assert_int_equal(npk_npy_save(path, &x, &err), NPK_OK);
    npk_tensor_free(&x);
    gfx_unload(&c);
    return path;
}

static void same_files(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *x = npk_slurp(a, &na), *y = npk_slurp(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
}

/* edgetpu run --cpu-model U vs tflite run U, on a random input and cat.bmp. */
static void pair(const char *compiled, const char *cpu, const char *tag)
{
    if (!npk_safetensors_available()) skip();
    const char *c = model(compiled), *u = model(cpu);
    char a[64], b[64], x[64];
    snprintf(x, sizeof x, "%s_x.npy", tag);
    const char *in = random_input(compiled, x, 5);
    snprintf(a, sizeof a, "%s_etpu.safetensors", tag);
    snprintf(b, sizeof b, "%s_cpu.safetensors", tag);
    npk_run r = npk_cli("tflite run %s --input %s -o %s --threads 2", u, in, npk_tmp(b));
    if (r.status && strstr(r.err, "no kernel")) {
        printf("NOT YET: %s", r.err);
        npk_run_free(&r);
        skip();
    }
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    r = npk_cli("edgetpu run %s --device emu --cpu-model %s --input %s -o %s --raw --threads 2", c,
                u, in, npk_tmp(a));
    if (r.status) fail_msg("edgetpu run: %s", r.err);
    assert_non_null(strstr(r.out, "parameters uploaded"));
    npk_run_free(&r);
    same_files(npk_tmp(a), npk_tmp(b));
    /* The picture path through both commands. */
    const char *cat = model("cat.bmp");
    r = npk_cli("tflite run %s --image %s -o %s --threads 2", u, cat, npk_tmp(b));
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    r = npk_cli("edgetpu run %s --device emu --cpu-model %s --image %s -o %s --raw --threads 2", c,
                u, cat, npk_tmp(a));
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    same_files(npk_tmp(a), npk_tmp(b));
}

/* A task view on cat.bmp through both commands: the same text (after the
 * emulator's lines), containing `want`; with --draw, a picture of cat.bmp's size. */
static void same_view(const char *compiled, const char *cpu, const char *view, const char *want)
{
    const char *c = model(compiled), *u = model(cpu), *cat = model("cat.bmp");
    npk_run t = npk_cli("tflite run %s --image %s %s", u, cat, view);
    if (t.status) fail_msg("tflite run %s: %s", view, t.err);
    if (!strstr(t.out, want)) fail_msg("tflite run %s:\n%s", view, t.out);
    const char *png = npk_tmp("view.png");
    const bool draw = npk_image_format_available(NPK_IMAGE_PNG);
    npk_run e = npk_cli("edgetpu run %s --device emu --cpu-model %s --image %s %s%s%s", c, u, cat,
                        view, draw ? " --draw " : "", draw ? png : "");
    if (e.status) fail_msg("edgetpu run %s: %s", view, e.err);
    const char *rest = strstr(e.out, "run 1:");
    assert_non_null(rest);
    rest = strchr(rest, '\n') + 1;
    if (strncmp(rest, t.out, strlen(t.out))) fail_msg("edgetpu run %s:\n%s", view, e.out);
    npk_run_free(&t);
    npk_run_free(&e);
    if (draw) {
        npk_image img;
        npk_error err = {0};
        assert_int_equal(npk_image_load(png, &img, &err), NPK_OK);
        assert_int_equal(img.width, 512);
        assert_int_equal(img.height, 341);
        npk_image_free(&img);
    }
}

static void mobilenet(void **state)
{
    (void)state;
    pair("mobilenet_v1_0.5_160_quant_edgetpu.tflite", "mobilenet_v1_0.5_160_quant.tflite", "mn");
}

static void embedding(void **state)
{
    (void)state;
    pair("mobilenet_v1_1.0_224_quant_embedding_extractor_edgetpu.tflite",
         "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite", "emb");
}

static void deeplab(void **state)
{
    (void)state;
    pair("deeplabv3_mnv2_pascal_quant_edgetpu.tflite", "deeplabv3_mnv2_pascal_quant.tflite", "dl");
    /* The cat (class 8) on 43 % of the pixels (checked by eye on the drawing). */
    same_view("deeplabv3_mnv2_pascal_quant_edgetpu.tflite", "deeplabv3_mnv2_pascal_quant.tflite",
              "--segment", "513 x 513 class map:\n     0   56.85%  \n     8   43.15%  \n");
}

static void posenet(void **state)
{
    (void)state;
    pair("posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite",
         "posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite", "pn");
}

static void movenet(void **state)
{
    (void)state;
    pair("movenet_single_pose_lightning_ptq_edgetpu.tflite",
         "movenet_single_pose_lightning_ptq.tflite", "mv");
    /* No person in cat.bmp: one low-scoring pose, shown with threshold 0. */
    same_view("movenet_single_pose_lightning_ptq_edgetpu.tflite",
              "movenet_single_pose_lightning_ptq.tflite", "--pose --threshold 0",
              "1 pose with score >= 0.00 (keypoints y, x normalised):\n  pose 0: score 0.123\n"
              "    nose            0.385, 0.557  0.123\n");
}

/* The SSD pair as a pipeline on the stand-in model. */
static void ssd(void **state)
{
    (void)state;
    npk_error err = {0};
    if (!npk_safetensors_available()) skip();
    gfx s0, s1;
    gfx_load(SEG0, &s0);
    gfx_load(SEG1, &s1);
    char why[200];
    const bool tail = npk_tfl_op_supported(&s1.m.tfl, 0, 3, why, sizeof why);
    size_t len = 0;
    uint8_t *file = ssd_standin(&s0.m.tfl, &s1.m.tfl, true, &len);
    const char *standin = npk_tmp("ssd_standin.tflite");
    assert_int_equal(npk_write_file(standin, file, len, &err), NPK_OK);
    free(file);
    gfx_unload(&s0);
    gfx_unload(&s1);
    const char *in = random_input(SEG0, "ssd_x.npy", 3), *a = npk_tmp("ssd_etpu.safetensors"),
               *b = npk_tmp("ssd_cpu.safetensors");
    const char *m0 = model(SEG0), *m1 = model(SEG1);
    if (!tail) {
        /* The tail cannot run: refused before the device, naming the op. */
        npk_run r = npk_cli("edgetpu run %s %s --device emu --cpu-model %s --input %s -o %s", m0,
                            m1, standin, in, a);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "TFLite_Detection_PostProcess"));
        assert_null(strstr(r.out, "opened"));
        assert_false(npk_exists(a));
        npk_run_free(&r);
        printf("NOT YET: %s\n", why);
        skip();
    }
    npk_run r = npk_cli("tflite run %s --input %s -o %s", standin, in, b);
    assert_int_equal(r.status, 0);
    npk_run_free(&r);
    r = npk_cli("edgetpu run %s %s --device emu --cpu-model %s --input %s -o %s --repeat 2", m0, m1,
                standin, in, a);
    if (r.status) fail_msg("edgetpu run: %s", r.err);
    assert_non_null(strstr(r.out, "run 1:"));
    assert_non_null(strstr(r.out, "in 2 ops; parameters uploaded)"));
    assert_non_null(strstr(r.out, "run 2:"));
    assert_null(strstr(strstr(r.out, "run 2:"), "parameters uploaded"));
    npk_run_free(&r);
    same_files(a, b);
    /* The detection view with a drawing. */
    r = npk_cli(
        "edgetpu run %s %s --device emu --cpu-model %s --image %s --detect %s --threshold 0 "
        "--draw %s",
        m0, m1, standin, model("cat.bmp"), model("coco_labels.txt"), npk_tmp("ssd.png"));
    if (r.status) fail_msg("edgetpu run --detect: %s", r.err);
    assert_non_null(strstr(r.out, "detections with score >= 0.00"));
    assert_true(npk_exists(npk_tmp("ssd.png")));
    /* tflite run of the stand-in shows the same detections. */
    npk_run t = npk_cli("tflite run %s --image %s --detect %s --threshold 0", standin,
                        model("cat.bmp"), model("coco_labels.txt"));
    if (t.status) fail_msg("tflite run --detect: %s", t.err);
    const char *view = strstr(r.out, "run 1:");
    assert_non_null(view);
    view = strchr(view, '\n') + 1;
    if (strncmp(view, t.out, strlen(t.out)) || !strstr(t.out, "detections with score >= 0.00"))
        fail_msg("tflite run:\n%s\nedgetpu run:\n%s", t.out, r.out);
    npk_run_free(&t);
    npk_run_free(&r);
}

/* Views: classification through both commands, JSON. */
static void views(void **state)
{
    (void)state;
    const char *c = model("mobilenet_v1_0.5_160_quant_edgetpu.tflite"),
               *u = model("mobilenet_v1_0.5_160_quant.tflite"),
               *labels = model("imagenet_labels.txt"), *cat = model("cat.bmp");
    npk_run r =
        npk_cli("edgetpu run %s --device emu --cpu-model %s --image %s --classify %s --top 3", c, u,
                cat, labels);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "top 3 of 1001 classes:\n"
                                  "    286  0.58203  Egyptian cat\n"
                                  "    283  0.28125  tiger cat\n"
                                  "    282  0.11719  tabby, tabby cat\n"));
    npk_run_free(&r);
    r = npk_cli("tflite run %s --image %s --classify %s --top 1", u, cat, labels);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "    286  0.58203  Egyptian cat\n"));
    npk_run_free(&r);
    if (npk_safetensors_available()) { /* both need libcjson */
        r = npk_cli("edgetpu run %s --device emu --cpu-model %s --image %s --classify %s --top 2 "
                    "--json",
                    c, u, cat, labels);
        assert_int_equal(r.status, 0);
        assert_true(r.out[0] == '{'); /* nothing but the JSON object */
        assert_non_null(strstr(r.out, "\"label\":\t\"Egyptian cat\""));
        assert_non_null(strstr(r.out, "\"parameter_uploads\":\t1"));
        npk_run_free(&r);
    }
    if (npk_image_format_available(NPK_IMAGE_PNG)) {
        const char *png = npk_tmp("cls.png");
        r = npk_cli("edgetpu run %s --device emu --cpu-model %s --image %s --classify %s --draw %s",
                    c, u, cat, labels, png);
        assert_int_equal(r.status, 0);
        npk_run_free(&r);
        npk_image img;
        npk_error err = {0};
        assert_int_equal(npk_image_load(png, &img, &err), NPK_OK);
        assert_int_equal(img.width, 512);
        npk_image_free(&img);
    }
}

/* Entries of a directory (. and .. not counted); names into out if given. */
static int entries(const char *dir, char (*out)[256], int cap)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (out && n < cap) snprintf(out[n], sizeof out[n], "%s", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

/* -o DIR with output names longer than a file name can be (PoseNet's decoder
 * outputs renamed to 346 characters, two of them alike for 300): shortened
 * distinct names, the directory complete; and a run whose writes fail (a
 * 512-byte file-size limit) leaves neither the directory nor a temporary. */
static void outputs_dir(void **state)
{
    (void)state;
    const char *name = "posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite";
    npk_mapped map;
    npk_fixture_map("models/posenet_mobilenet_v1_075_481_641_16_quant_decoder_edgetpu.tflite",
                    &map);
    npk_tfl_model m;
    npk_error err = {0};
    assert_int_equal(npk_tfl_parse(map.data, map.size, &m, &err), NPK_OK);
    static char long0[347], long1[347];
    memset(long0, 'k', 346);
    memset(long1, 'k', 346);
    long1[300] = 's';
    const npk_tfl_subgraph *sg = &m.subgraphs[0];
    m.subgraphs[0].tensors[sg->outputs[0]].name = long0;
    m.subgraphs[0].tensors[sg->outputs[1]].name = long1;
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(npk_tfl_write(&m, NULL, &buf, &len, &err), NPK_OK);
    npk_tfl_free(&m);
    npk_unmap_file(&map);
    const char *renamed = npk_tmp("long_names.tflite");
    assert_int_equal(npk_write_file(renamed, buf, len, &err), NPK_OK);
    free(buf);
    const char *x = random_input(name, "pn_long_x.npy", 2);
    const char *parent = npk_tmp("aon");
    assert_true(mkdir(parent, 0777) == 0 || errno == EEXIST);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/outs", parent);
    npk_run r = npk_cli("edgetpu run %s --device emu --input %s -o %s", renamed, x, dir);
    if (r.status) fail_msg("edgetpu run -o DIR: %s", r.err);
    npk_run_free(&r);
    char names[8][256];
    assert_int_equal(entries(parent, NULL, 0), 1); /* no temporary left beside it */
    assert_int_equal(entries(dir, names, 8), 4);
    int hashed = 0;
    for (int i = 0; i < 4; i++) {
        assert_true(strlen(names[i]) <= NPK_OUTDIR_NAME_MAX);
        if (!strncmp(names[i], "kkkkkkkkkk", 10)) {
            hashed++;
            assert_non_null(strchr(names[i], '~')); /* cut, with a hash of the whole name */
        }
    }
    assert_int_equal(hashed, 2);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++) assert_string_not_equal(names[i], names[j]);
    /* Writes that fail: nothing at all is left. */
    snprintf(dir, sizeof dir, "%s/failed", parent);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "trap '' XFSZ; ulimit -f 1; exec %s edgetpu run %s --device emu --input %s -o %s",
             getenv("NPK_CLI_OVERRIDE") && *getenv("NPK_CLI_OVERRIDE") ? getenv("NPK_CLI_OVERRIDE")
                                                                       : NPK_CLI,
             renamed, x, dir);
    r = npk_run_argv((char *[]){"/bin/sh", "-c", cmd, NULL});
    if (r.status != 2) fail_msg("a failing -o DIR: exit %d: %s", r.status, r.err);
    npk_run_free(&r);
    assert_false(npk_exists(dir));
    assert_int_equal(entries(parent, NULL, 0), 1);
}

/* One line, exit 2, nothing written (and the device not opened). */
static void refused(const char *args, const char *what)
{
    const char *out = npk_tmp("never.npy");
    npk_run r = npk_cli("edgetpu run %s -o %s", args, out);
    if (r.status != 2 || !strstr(r.err, what))
        fail_msg("edgetpu run %s: exit %d: %s", args, r.status, r.err);
    const char *nl = strchr(r.err, '\n');
    assert_true(nl && nl[1] == 0);
    assert_null(strstr(r.out, "opened"));
    assert_false(npk_exists(out));
    npk_run_free(&r);
}

static void errors(void **state)
{
    (void)state;
    char args[2048];
    const char *c = model("mobilenet_v1_0.5_160_quant_edgetpu.tflite"),
               *u = model("mobilenet_v1_0.5_160_quant.tflite"),
               *emb = model("mobilenet_v1_1.0_224_quant_embedding_extractor.tflite");
    const char *x = random_input("mobilenet_v1_0.5_160_quant_edgetpu.tflite", "mn_x.npy", 1);
    const char *x224 = random_input("mobilenet_v1_1.0_224_quant_embedding_extractor_edgetpu.tflite",
                                    "x224.npy", 1);
    /* An input of the wrong size. */
    snprintf(args, sizeof args, "%s --device emu --input %s", c, x224);
    refused(args, "input \"input\" is UINT8 [1, 160, 160, 3]; the file holds 150528 u8 values");
    /* A CPU model whose tensors do not match the op's boundary. */
    snprintf(args, sizeof args, "%s --device emu --cpu-model %s --input %s", c, emb, x);
    refused(args, "in the CPU model it is UINT8 [1, 224, 224, 3]");
    /* A CPU model for a real device. */
    snprintf(args, sizeof args, "%s --cpu-model %s --input %s", c, u, x);
    refused(args, "--cpu-model answers for the emulator");
    /* Models that do not form a pipeline. */
    snprintf(args, sizeof args, "%s %s --device emu --input %s", c, model(SEG0), x);
    refused(args, "segment 1 takes none of its inputs from the segments before it");
    /* An uncompiled model given as the compiled one. */
    snprintf(args, sizeof args, "%s --device emu --input %s", u, x);
    refused(args, "no Edge TPU op");
    /* An input of the wrong type (int32 for uint8). */
    npk_error err = {0};
    const int64_t shape[] = {1, 160, 160, 3};
    npk_tensor t;
    assert_int_equal(npk_tensor_alloc(&t, NULL, NPK_I32, 4, shape, &err), NPK_OK);
    const char *xi = npk_tmp("mn_i32.npy");
    assert_int_equal(npk_npy_save(xi, &t, &err), NPK_OK);
    npk_tensor_free(&t);
    snprintf(args, sizeof args, "%s --device emu --input %s", c, xi);
    refused(args, "input \"input\" is UINT8 [1, 160, 160, 3]: give u8 values or float32");
    /* A segment's input that neither an earlier segment nor the user gives. */
    snprintf(args, sizeof args, "%s --device emu", model(SEG1));
    refused(args, "no --input for \"FeatureExtractor/MobilenetV1/");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mobilenet), cmocka_unit_test(embedding), cmocka_unit_test(deeplab),
        cmocka_unit_test(posenet),   cmocka_unit_test(movenet),   cmocka_unit_test(ssd),
        cmocka_unit_test(views),     cmocka_unit_test(errors),    cmocka_unit_test(outputs_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
