/* Whole networks on the hardware backends: a compiled model bound to the
 * vendor rknpu and the rocket backends, each against the fake kernel that
 * decodes their ioctls and runs the streams on the emulator. The outputs
 * must be byte-identical to the emulator device's; the buffers are
 * allocated once (a second run creates no buffer but the vendor driver's
 * per-submit task buffer), the submits counted, everything released. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rk_emu_util.h"
#include "rk_fake_kernel.h"
#include "npukit/file.h"
#include "npukit/rknpu_net.h"

static char dri[512], accel[512];
static const char *dirs[3];

static void make_node(const char *dir, const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static int setup_dirs(void **state)
{
    (void)state;
    snprintf(dri, sizeof dri, "%s/dri", npk_tmpdir());
    snprintf(accel, sizeof accel, "%s/accel", npk_tmpdir());
    mkdir(dri, 0755);
    mkdir(accel, 0755);
    make_node(dri, "card1");
    make_node(accel, "accel0");
    dirs[0] = dri;
    dirs[1] = accel;
    dirs[2] = NULL;
    return 0;
}

/* A fake kernel with both device nodes and a device of `kind` opened on it;
 * k and sys are the caller's (the device uses them until it is closed). */
static npk_rk_device *open_fake(fake_kernel *k, npk_rk_sys *sys, int kind, bool reverse_cores)
{
    fk_init(k, 3);
    k->reverse_cores = reverse_cores;
    char p[1024];
    snprintf(p, sizeof p, "%s/card1", dri);
    fk_add_node(k, p, FK_RKNPU);
    snprintf(p, sizeof p, "%s/accel0", accel);
    fk_add_node(k, p, FK_ROCKET);
    *sys = fk_sys(k);
    npk_rk_open_opts o = {sys, NULL, dirs, 0};
    npk_rk_device *d;
    npk_error err = {0};
    if (npk_rk_device_open((npk_rk_devkind)kind, &o, &d, &err)) fail_msg("%s", err.msg);
    return d;
}

typedef struct model {
    npk_mapped mp;
    npk_tfl_model m;
} model;

static void load(model *md)
{
    npk_fixture_map("models/mobilenet_v1_0.5_160_quant.tflite", &md->mp);
    npk_error err = {0};
    if (npk_tfl_parse(md->mp.data, md->mp.size, &md->m, &err)) fail_msg("%s", err.msg);
}

/* Compile for the device's form, bind, run on a seeded input; the output
 * bytes into y. */
static void run_on(npk_rk_device *d, const npk_tfl_model *m, int cores, uint8_t *y, size_t ylen,
                   npk_rk_net *net, npk_rk_net_exec **xo)
{
    npk_error err = {0};
    npk_rk_net_opts no = {cores, npk_rk_device_form(d), NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    if (npk_rk_net_compile(m, &no, net, &err)) fail_msg("compile: %s", err.msg);
    npk_rk_net_exec *x;
    if (npk_rk_net_exec_new(net, d, &x, &err)) fail_msg("bind: %s", err.msg);
    npk_tfl_view v;
    assert_int_equal(npk_rk_net_input(x, 0, &v, &err), NPK_OK);
    uint64_t rng = 0x5eed77;
    for (size_t i = 0; i < v.bytes; i++) ((uint8_t *)v.data)[i] = (uint8_t)npk_rand(&rng);
    npk_rk_net_timing tm;
    if (npk_rk_net_run(x, &tm, &err)) fail_msg("run on %s: %s", npk_rk_device_name(d), err.msg);
    assert_int_equal(tm.submits, npk_rk_net_submits(net));
    /* One core: the segment in one submit; three: operators 0, 1-2 (the 1x1
     * convolution split at the depthwise layer's rows), 3-4, 5-27 (all on
     * core 0), 28: 5, where each layer spread over cores had its own (6). */
    assert_int_equal(tm.submits, cores == 1 ? 1 : 5);
    assert_int_equal(npk_rk_net_output(x, 0, &v, &err), NPK_OK);
    assert_int_equal(v.bytes, ylen);
    memcpy(y, v.data, ylen);
    *xo = x;
}

static void test_backends_match_emulator(void **state)
{
    (void)state;
    model md;
    load(&md);
    npk_error err = {0};
    npk_rk_device *emu;
    npk_rk_open_opts eo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &eo, &emu, &err), NPK_OK);
    uint8_t want[1001], got[1001];
    npk_rk_net net;
    npk_rk_net_exec *x;
    run_on(emu, &md.m, 3, want, sizeof want, &net, &x);
    npk_rk_net_exec_free(x);
    npk_rk_net_free(&net);
    npk_rk_device_close(emu);

    for (int run = 0; run < 4; run++) {
        int kind = run % 2 ? NPK_RK_DEV_ROCKET : NPK_RK_DEV_RKNPU, cores = run < 2 ? 3 : 1;
        fake_kernel k;
        npk_rk_sys sys;
        npk_rk_device *d = open_fake(&k, &sys, kind, false);
        memset(got, 0, sizeof got);
        run_on(d, &md.m, cores, got, sizeof got, &net, &x);
        assert_memory_equal(got, want, sizeof want);
        int creates = k.creates, submits = k.submits;
        npk_rk_net_timing tm;
        assert_int_equal(npk_rk_net_run(x, &tm, &err), NPK_OK);
        npk_tfl_view v;
        assert_int_equal(npk_rk_net_output(x, 0, &v, &err), NPK_OK);
        assert_memory_equal(v.data, want, sizeof want);
        int subs = (int)npk_rk_net_submits(&net);
        assert_int_equal(k.submits - submits, subs);
        /* The vendor driver reads task records from a buffer per submit. */
        assert_int_equal(k.creates - creates, kind == NPK_RK_DEV_RKNPU ? subs : 0);
        printf("%s, %d core%s: %u layers, %zu tasks, %d submit%s per run, output equal to the "
               "emulator's\n",
               npk_rk_device_name(d), cores, cores == 1 ? "" : "s", net.npu_ops, net.ntasks,
               k.submits - submits, subs == 1 ? "" : "s");
        npk_rk_net_exec_free(x);
        npk_rk_net_free(&net);
        npk_rk_device_close(d);
        assert_int_equal(fk_live_bos(&k), 0);
        assert_int_equal(k.maps, k.unmaps);
        assert_int_equal(k.destroy_while_mapped, 0);
        fk_free(&k);
    }
    npk_tfl_free(&md.m);
    npk_unmap_file(&md.mp);
}

/* The seven models that compile, a seeded input: every output's bytes
 * after one run of a net compiled for `cores` in the device's form. The
 * submits are counted; every submit over several cores is checked again. */
static const char *const seven[] = {"mobilenet_v1_0.5_160_quant.tflite",
                                    "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite",
                                    "mobilenet_v2_1.0_224_quant.tflite",
                                    "tf2_mobilenet_v2_1.0_224_ptq.tflite",
                                    "deeplabv3_mnv2_pascal_quant.tflite",
                                    "posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite",
                                    "movenet_single_pose_lightning_ptq.tflite"};

static uint8_t *outputs_of(npk_rk_device *d, const npk_tfl_model *m, int cores, size_t *len,
                           size_t *submits, size_t *multi)
{
    npk_error err = {0};
    npk_rk_net_opts no = {cores, npk_rk_device_form(d), NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    npk_rk_net net;
    if (npk_rk_net_compile(m, &no, &net, &err)) fail_msg("compile: %s", err.msg);
    *multi = 0; /* submits with more than one layer on more than one core */
    npk_rk_net_submit_view v;
    for (size_t k = 0; npk_rk_net_submit_at(&net, k, &v); k++) {
        if (v.cores > 1 && npk_rk_net_check_submit(&net, v.first_op, v.nops, &err))
            fail_msg("submit %zu: %s", k, err.msg);
        *multi += v.cores > 1 && v.nops > 1;
        uint32_t sum = 0;
        for (int c = 0; c < v.cores; c++) {
            assert_int_equal(v.core_first[c], sum); /* contiguous, in core order */
            sum += v.core_count[c];
        }
        assert_int_equal(sum, v.task_count);
    }
    npk_rk_net_exec *x;
    if (npk_rk_net_exec_new(&net, d, &x, &err)) fail_msg("bind: %s", err.msg);
    uint64_t rng = 0x5eed1234;
    for (uint32_t i = 0; i < npk_rk_net_ninputs(x); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_rk_net_input(x, i, &v, &err), NPK_OK);
        for (size_t j = 0; j < v.bytes; j++) ((uint8_t *)v.data)[j] = (uint8_t)npk_rand(&rng);
    }
    npk_rk_net_timing tm;
    if (npk_rk_net_run(x, &tm, &err)) fail_msg("run on %s: %s", npk_rk_device_name(d), err.msg);
    *submits = tm.submits;
    assert_int_equal(tm.submits, npk_rk_net_submits(&net));
    size_t n = 0;
    uint8_t *y = NULL;
    for (uint32_t i = 0; i < npk_rk_net_noutputs(x); i++) {
        npk_tfl_view v;
        assert_int_equal(npk_rk_net_output(x, i, &v, &err), NPK_OK);
        y = realloc(y, n + v.bytes);
        assert_non_null(y);
        memcpy(y + n, v.data, v.bytes);
        n += v.bytes;
    }
    *len = n;
    npk_rk_net_exec_free(x);
    npk_rk_net_free(&net);
    return y;
}

/* Every model on 2 and 3 cores: outputs byte-identical to one core on the
 * emulator, on the fake vendor kernel and the fake rocket kernel, with the
 * cores (vendor) or jobs (rocket) of each submit run first to last and last
 * to first. */
static void test_models_equal_one_core(void **state)
{
    (void)state;
    npk_error err = {0};
    npk_rk_device *emu;
    npk_rk_open_opts eo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &eo, &emu, &err), NPK_OK);
    for (size_t mi = 0; mi < sizeof seven / sizeof *seven; mi++) {
        char path[256];
        snprintf(path, sizeof path, "models/%s", seven[mi]);
        model md;
        npk_fixture_map(path, &md.mp);
        if (npk_tfl_parse(md.mp.data, md.mp.size, &md.m, &err)) fail_msg("%s", err.msg);
        size_t want_len, subs1, multi;
        uint8_t *want = outputs_of(emu, &md.m, 1, &want_len, &subs1, &multi);
        for (int cores = 2; cores <= 3; cores++) {
            size_t len, subs;
            uint8_t *got = outputs_of(emu, &md.m, cores, &len, &subs, &multi);
            assert_int_equal(len, want_len);
            assert_memory_equal(got, want, len);
            free(got);
            printf("%s, %d cores: %zu submits (%zu over several layers and cores), outputs equal "
                   "to one core's on the emulator",
                   seven[mi], cores, subs, multi);
            if (mi == 0) assert_int_equal(subs, 5); /* 6 with a submit per spread layer */
            /* Vendor in both orders, rocket last job first; the two large
             * models (DeepLab, PoseNet) on the fake kernels with 3 cores
             * only, to keep the test in seconds. */
            bool large = mi == 4 || mi == 5;
            for (int run = large && cores == 2 ? 3 : 0; run < 3; run++) {
                int kind = run == 2 ? NPK_RK_DEV_ROCKET : NPK_RK_DEV_RKNPU;
                fake_kernel k;
                npk_rk_sys sys;
                npk_rk_device *d = open_fake(&k, &sys, kind, run >= 1);
                got = outputs_of(d, &md.m, cores, &len, &subs, &multi);
                if (len != want_len || memcmp(got, want, len))
                    fail_msg("%s on %s, %d cores%s: outputs differ from one core's", seven[mi],
                             npk_rk_device_name(d), cores, k.reverse_cores ? ", reversed" : "");
                free(got);
                npk_rk_device_close(d);
                assert_int_equal(fk_live_bos(&k), 0);
                fk_free(&k);
            }
            printf(large && cores == 2 ? "\n"
                                       : ", the fake vendor (both orders) and rocket kernels\n");
        }
        free(want);
        npk_tfl_free(&md.m);
        npk_unmap_file(&md.mp);
    }
    npk_rk_device_close(emu);
}

/* The check refuses a grouping where a core touches what another writes in
 * the same submit: on 3 cores mobilenet_v1 0.5's first two layers (split by
 * rows; the depthwise layer reads the rows around its own, which a
 * neighbouring core writes, and its output reuses the first layer's input
 * bytes). The pair the compiler groups (operators 1 and 2) passes; with one
 * task moved to another core it fails. */
static void test_bad_grouping_refused(void **state)
{
    (void)state;
    model md;
    load(&md);
    npk_error err = {0};
    npk_rk_net_opts no = {3, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    npk_rk_net net;
    assert_int_equal(npk_rk_net_compile(&md.m, &no, &net, &err), NPK_OK);
    assert_true(net.ops[0].plan.cores == 3 && net.ops[1].plan.cores == 2);
    assert_int_equal(npk_rk_net_check_submit(&net, 0, 2, &err), NPK_E_LIMIT);
    /* The first conflict by address: operator 1's output reuses the bytes
     * of operator 0's input (its last reader), which another core may
     * still read. */
    assert_non_null(strstr(err.msg, "operator 1 (DEPTHWISE_CONV_2D) task 1 on core 1 writes 0x"));
    assert_non_null(strstr(err.msg, "which operator 0 (CONV_2D) task 0 on core 0 reads in the same "
                                    "submit (from operator 0 (CONV_2D))"));
    assert_int_equal(err.offset, net.ops[0].tl.offset);
    npk_error_clear(&err);
    assert_int_equal(net.ops[1].run, 2); /* operators 1 and 2: one submit */
    assert_int_equal(npk_rk_net_check_submit(&net, 1, 2, &err), NPK_OK);
    /* Operator 2's task on core 1 moved to core 0: core 0 now reads rows
     * that core 1 writes (operator 1's). */
    npk_rk_ltask *t = &net.ops[2].plan.tasks[net.ops[2].plan.count - 1];
    assert_int_equal(t->core, 1);
    t->core = 0;
    assert_int_equal(npk_rk_net_check_submit(&net, 1, 2, &err), NPK_E_LIMIT);
    assert_non_null(strstr(err.msg, "operator 1 (DEPTHWISE_CONV_2D) task 1 on core 1 writes"));
    t->core = 1;
    npk_error_clear(&err);
    assert_int_equal(npk_rk_net_check_submit(&net, 0, 99, &err), NPK_E_ARG);
    npk_rk_net_free(&net);
    npk_tfl_free(&md.m);
    npk_unmap_file(&md.mp);
}

/* One compiled net bound to two devices at different addresses: binding the
 * second relocates the net's streams, and the first executor still runs
 * its own (its records and streams were copied at binding). */
static void test_two_executors(void **state)
{
    (void)state;
    model md;
    load(&md);
    npk_error err = {0};
    npk_rk_device *emu;
    npk_rk_open_opts eo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &eo, &emu, &err), NPK_OK);
    npk_rk_net_opts no = {2, NPK_RK_FORM_VENDOR, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    npk_rk_net net;
    assert_int_equal(npk_rk_net_compile(&md.m, &no, &net, &err), NPK_OK);
    npk_rk_net_exec *a, *b;
    assert_int_equal(npk_rk_net_exec_new(&net, emu, &a, &err), NPK_OK);
    uint32_t act_a = net.opts.act_addr;
    fake_kernel k;
    npk_rk_sys sys;
    npk_rk_device *d = open_fake(&k, &sys, NPK_RK_DEV_RKNPU, false);
    assert_int_equal(npk_rk_net_exec_new(&net, d, &b, &err), NPK_OK);
    assert_int_not_equal(net.opts.act_addr, act_a); /* relocated */
    uint8_t ya[1001], yb[1001];
    npk_rk_net_exec *xs[2] = {b, a};
    uint8_t *ys[2] = {yb, ya};
    for (int i = 0; i < 2; i++) {
        npk_tfl_view v;
        assert_int_equal(npk_rk_net_input(xs[i], 0, &v, &err), NPK_OK);
        uint64_t rng = 0x5eed99;
        for (size_t j = 0; j < v.bytes; j++) ((uint8_t *)v.data)[j] = (uint8_t)npk_rand(&rng);
        if (npk_rk_net_run(xs[i], NULL, &err)) fail_msg("run %d: %s", i, err.msg);
        assert_int_equal(npk_rk_net_output(xs[i], 0, &v, &err), NPK_OK);
        memcpy(ys[i], v.data, sizeof ya);
    }
    assert_memory_equal(ya, yb, sizeof ya);
    npk_rk_net_exec_free(a);
    npk_rk_net_exec_free(b);
    npk_rk_device_close(d);
    npk_rk_device_close(emu);
    assert_int_equal(fk_live_bos(&k), 0);
    fk_free(&k);
    npk_rk_net_free(&net);
    npk_tfl_free(&md.m);
    npk_unmap_file(&md.mp);
}

/* A net compiled for one stream form is refused by a device of the other. */
static void test_form_mismatch(void **state)
{
    (void)state;
    model md;
    load(&md);
    npk_error err = {0};
    npk_rk_device *emu;
    npk_rk_open_opts eo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &eo, &emu, &err), NPK_OK);
    npk_rk_net_opts no = {1, NPK_RK_FORM_ROCKET, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    npk_rk_net net;
    assert_int_equal(npk_rk_net_compile(&md.m, &no, &net, &err), NPK_OK);
    npk_rk_net_exec *x;
    assert_int_equal(npk_rk_net_exec_new(&net, emu, &x, &err), NPK_E_ARG);
    assert_non_null(strstr(err.msg, "rocket stream form"));
    npk_rk_net_free(&net);
    no.cores = 4;
    assert_int_equal(npk_rk_net_compile(&md.m, &no, &net, &err), NPK_E_ARG);
    npk_rk_device_close(emu);
    npk_tfl_free(&md.m);
    npk_unmap_file(&md.mp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backends_match_emulator),
        cmocka_unit_test(test_models_equal_one_core),
        cmocka_unit_test(test_bad_grouping_refused),
        cmocka_unit_test(test_two_executors),
        cmocka_unit_test(test_form_mismatch),
    };
    return cmocka_run_group_tests(tests, setup_dirs, NULL);
}
