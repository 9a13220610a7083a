/* The device backends end to end: the vendor rknpu and mainline rocket
 * backends against a fake kernel that decodes their raw ioctls and runs the
 * streams on the emulator (so request numbers, struct packing, mmap
 * offsets, DMA addresses, fetch amounts and core masks all take part), the
 * emulator device, device listing, and error paths that must release every
 * buffer. */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rk_emu_util.h"
#include "rk_fake_kernel.h"

static char dri[512], accel[512], other[512];
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
    snprintf(other, sizeof other, "%s/empty", npk_tmpdir());
    mkdir(dri, 0755);
    mkdir(accel, 0755);
    mkdir(other, 0755);
    make_node(dri, "card0");      /* a GPU */
    make_node(dri, "card1");      /* the NPU */
    make_node(dri, "renderD129"); /* the NPU's render node */
    make_node(dri, "by-path");    /* not a node name */
    make_node(accel, "accel0");   /* rocket */
    dirs[0] = dri;
    dirs[1] = accel;
    dirs[2] = NULL;
    return 0;
}

static void fk_world(fake_kernel *k, int cores)
{
    fk_init(k, cores);
    char p[1024];
    snprintf(p, sizeof p, "%s/card0", dri);
    fk_add_node(k, p, FK_OTHER);
    snprintf(p, sizeof p, "%s/card1", dri);
    fk_add_node(k, p, FK_RKNPU);
    snprintf(p, sizeof p, "%s/renderD129", dri);
    fk_add_node(k, p, FK_RKNPU);
    snprintf(p, sizeof p, "%s/accel0", accel);
    fk_add_node(k, p, FK_ROCKET);
}

/* Run one matmul and check every element against the exact reference. */
static void run_check(npk_rk_device *d, uint32_t m, uint32_t k, uint32_t n, npk_rk_dtype dt,
                      int cores, bool integer, uint64_t seed, npk_rk_run_info *info)
{
    rk_mats x;
    rk_mats_make(&x, m, k, n, dt, integer, seed);
    size_t ob = npk_rk_dtype_out_size(dt);
    uint8_t *c = malloc((size_t)m * n * ob);
    npk_rk_run_opts o = {m, k, n, dt, cores};
    npk_error err = {0};
    const void *a = dt == NPK_RK_INT8 ? (const void *)x.a8 : (const void *)x.a16;
    const void *b = dt == NPK_RK_INT8 ? (const void *)x.b8 : (const void *)x.b16;
    if (npk_rk_run_matmul(d, &o, a, b, c, info, &err))
        fail_msg("%s %ux%ux%u %s cores %d: %s", npk_rk_device_name(d), m, k, n,
                 npk_rk_dtype_name(dt), cores, err.msg);
    for (size_t i = 0; i < (size_t)m * n; i++) {
        double got = dt == NPK_RK_INT8        ? (double)((int32_t *)(void *)c)[i]
                     : dt == NPK_RK_FP16_FP16 ? npk_f16_to_f32(((uint16_t *)(void *)c)[i])
                                              : ((float *)(void *)c)[i];
        if (!rk_close(&x, i, got, integer))
            fail_msg("%s %ux%ux%u %s: C[%zu][%zu] = %.9g, want %.9g", npk_rk_device_name(d), m, k,
                     n, npk_rk_dtype_name(dt), i / n, i % n, got, rk_expect(&x, i));
    }
    /* The library's own checker agrees. */
    npk_rk_check chk;
    assert_int_equal(npk_rk_check_matmul(&o, a, b, c, &chk, &err), NPK_OK);
    assert_int_equal(chk.bad, 0);
    if (dt == NPK_RK_INT8 || integer) {
        if (dt != NPK_RK_FP16_FP16) assert_true(chk.max_abs == 0);
    }
    free(c);
    rk_mats_free(&x);
}

static void test_vendor_backend(void **state)
{
    (void)state;
    for (int cores = 1; cores <= 3; cores++)
        for (int dt = 0; dt < 3; dt++) {
            fake_kernel k;
            fk_world(&k, 3);
            npk_rk_sys sys = fk_sys(&k);
            npk_rk_open_opts o = {&sys, NULL, dirs, 0};
            npk_rk_device *d;
            npk_error err = {0};
            if (npk_rk_device_open(NPK_RK_DEV_RKNPU, &o, &d, &err)) fail_msg("%s", err.msg);
            assert_non_null(strstr(npk_rk_device_name(d), "rknpu 0.9.8 at "));
            assert_non_null(strstr(npk_rk_device_name(d), "/dri/card1"));
            assert_int_equal(k.resets, 1);
            npk_rk_run_info info;
            /* 1100 rows need several tasks; each core's range is chained. */
            run_check(d, 1100, 64, 64, (npk_rk_dtype)dt, cores, true, 10 + dt, &info);
            assert_true(info.tasks >= 2);
            assert_int_equal(info.cores, cores);
            assert_int_equal(k.last_core_mask, (1u << cores) - 1);
            assert_int_equal(k.nruns, cores);
            uint32_t tasks = 0;
            for (int r = 0; r < k.nruns; r++) {
                assert_int_equal(k.runs[r].core, r);
                assert_int_equal(k.runs[r].amount, 53); /* (104 + 4 + 1) / 2 - 1 */
                tasks += k.runs[r].tasks;
            }
            assert_int_equal(tasks, info.tasks);
            run_check(d, 16, 96, 32 * (unsigned)cores, (npk_rk_dtype)dt, cores, false, 20 + dt,
                      NULL);
            npk_rk_device_close(d);
            /* Everything created was destroyed after unmapping; syncs: the
             * two operands to the device, the output from it. */
            assert_int_equal(k.creates, k.destroys);
            assert_int_equal(fk_live_bos(&k), 0);
            assert_int_equal(k.maps, k.unmaps);
            assert_int_equal(k.destroy_while_mapped, 0);
            assert_int_equal(k.submits, 2);
            assert_int_equal(k.syncs_to, 2 * 3);   /* input, weights, output before reading */
            assert_int_equal(k.syncs_from, 2 * 3); /* same three, before CPU access */
            assert_int_equal(k.opens, k.closes);
            fk_free(&k);
        }
}

static void test_rocket_backend(void **state)
{
    (void)state;
    for (int cores = 1; cores <= 3; cores++)
        for (int dt = 0; dt < 3; dt++) {
            fake_kernel k;
            fk_world(&k, 3);
            npk_rk_sys sys = fk_sys(&k);
            npk_rk_open_opts o = {&sys, NULL, dirs, 0};
            npk_rk_device *d;
            npk_error err = {0};
            if (npk_rk_device_open(NPK_RK_DEV_ROCKET, &o, &d, &err)) fail_msg("%s", err.msg);
            assert_non_null(strstr(npk_rk_device_name(d), "rocket 1.0.0 at "));
            assert_int_equal(npk_rk_device_form(d), NPK_RK_FORM_ROCKET);
            npk_rk_run_info info;
            run_check(d, 1100, 64, 64, (npk_rk_dtype)dt, cores, true, 30 + dt, &info);
            assert_int_equal(info.form, NPK_RK_FORM_ROCKET);
            assert_int_equal(k.rocket_jobs, cores);
            assert_int_equal((size_t)k.nrocket_tasks, info.tasks);
            for (int t = 0; t < k.nrocket_tasks; t++) {
                assert_int_equal(k.rocket_task_counts[t], 126); /* whole stream */
                assert_int_equal(k.runs[t].amount, 62);
                assert_int_equal(k.runs[t].tasks, 1);
            }
            npk_rk_device_close(d);
            assert_int_equal(k.creates, k.gem_closes);
            assert_int_equal(fk_live_bos(&k), 0);
            assert_int_equal(k.maps, k.unmaps);
            assert_int_equal(k.destroy_while_mapped, 0);
            assert_int_equal(k.preps, 4); /* 3 inputs before writing, the output before reading */
            assert_int_equal(k.finis, 4);
            fk_free(&k);
        }
}

/* A stream that the fake kernel's emulator refuses makes the job time out;
 * the backend reports it and releases everything. */
static void test_failures_release_everything(void **state)
{
    (void)state;
    static const struct {
        npk_rk_devkind kind;
        unsigned long req;
        int after, err;
        const char *needle;
        npk_status st;
    } cases[] = {
        {NPK_RK_DEV_RKNPU, FK_RKNPU_MEM_CREATE, 2, ENOMEM, "RKNPU_MEM_CREATE", NPK_E_DEVICE},
        {NPK_RK_DEV_RKNPU, FK_RKNPU_MEM_MAP, 1, EINVAL, "RKNPU_MEM_MAP", NPK_E_DEVICE},
        {NPK_RK_DEV_RKNPU, FK_RKNPU_SUBMIT, 0, ETIMEDOUT, "RKNPU_SUBMIT", NPK_E_TIMEOUT},
        {NPK_RK_DEV_RKNPU, FK_RKNPU_MEM_SYNC, 4, EIO, "RKNPU_MEM_SYNC", NPK_E_DEVICE},
        {NPK_RK_DEV_ROCKET, FK_ROCKET_CREATE_BO, 3, ENOMEM, "ROCKET_CREATE_BO", NPK_E_DEVICE},
        {NPK_RK_DEV_ROCKET, FK_ROCKET_SUBMIT, 0, EINVAL, "ROCKET_SUBMIT", NPK_E_DEVICE},
        {NPK_RK_DEV_ROCKET, FK_ROCKET_PREP_BO, 3, ETIMEDOUT, "ROCKET_PREP_BO", NPK_E_TIMEOUT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fake_kernel k;
        fk_world(&k, 3);
        k.fail_req = cases[i].req;
        k.fail_after = cases[i].after;
        k.fail_errno = cases[i].err;
        npk_rk_sys sys = fk_sys(&k);
        npk_rk_open_opts o = {&sys, NULL, dirs, 0};
        npk_rk_device *d;
        npk_error err = {0};
        assert_int_equal(npk_rk_device_open(cases[i].kind, &o, &d, &err), NPK_OK);
        uint16_t a[8 * 64] = {0}, b[64 * 32] = {0};
        float c[8 * 32];
        npk_rk_run_opts ro = {8, 64, 32, NPK_RK_FP16, 1};
        assert_int_equal(npk_rk_run_matmul(d, &ro, a, b, c, NULL, &err), cases[i].st);
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].needle);
        npk_rk_device_close(d);
        assert_int_equal(fk_live_bos(&k), 0);
        assert_int_equal(k.maps, k.unmaps);
        assert_int_equal(k.opens, k.closes);
        fk_free(&k);
    }
}

static void test_open_rules(void **state)
{
    (void)state;
    fake_kernel k;
    fk_world(&k, 3);
    npk_rk_sys sys = fk_sys(&k);
    npk_rk_device *d;
    npk_error err = {0};
    /* A node of another driver is refused by name. */
    char p[1024];
    snprintf(p, sizeof p, "%s/card0", dri);
    npk_rk_open_opts o = {&sys, p, dirs, 0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_RKNPU, &o, &d, &err), NPK_E_DEVICE);
    assert_non_null(strstr(err.msg, "not a rknpu device (DRM driver \"panfrost\")"));
    /* An explicit rknpu node works; the rocket node is not an rknpu node. */
    npk_error_clear(&err);
    snprintf(p, sizeof p, "%s/renderD129", dri);
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_RKNPU, &o, &d, &err), NPK_OK);
    npk_rk_device_close(d);
    snprintf(p, sizeof p, "%s/accel0", accel);
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_RKNPU, &o, &d, &err), NPK_E_DEVICE);
    /* Nothing found in a directory without nodes. */
    npk_error_clear(&err);
    const char *none[] = {other, NULL};
    npk_rk_open_opts o2 = {&sys, NULL, none, 0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_ROCKET, &o2, &d, &err), NPK_E_NOTFOUND);
    assert_non_null(strstr(err.msg, "no rocket device node found"));
    assert_int_equal(k.opens, k.closes);
    fk_free(&k);
}

static void test_devices_list(void **state)
{
    (void)state;
    fake_kernel k;
    fk_world(&k, 3);
    npk_rk_sys sys = fk_sys(&k);
    npk_rk_devnode nodes[8];
    size_t n = 99;
    npk_error err = {0};
    assert_int_equal(npk_rk_devices_list(&sys, dirs, nodes, 8, &n, &err), NPK_OK);
    assert_int_equal(n, 3); /* card1, renderD129 (rknpu), accel0 (rocket); not the GPU */
    assert_non_null(strstr(nodes[0].path, "/dri/card1"));
    assert_string_equal(nodes[0].driver, "rknpu");
    assert_int_equal(nodes[0].kind, NPK_RK_DEV_RKNPU);
    assert_int_equal(nodes[0].major * 10000 + nodes[0].minor * 100 + nodes[0].patch, 908);
    assert_string_equal(nodes[0].date, "20240322");
    assert_non_null(strstr(nodes[1].path, "/dri/renderD129"));
    assert_non_null(strstr(nodes[2].path, "/accel/accel0"));
    assert_string_equal(nodes[2].driver, "rocket");
    assert_int_equal(nodes[2].kind, NPK_RK_DEV_ROCKET);
    assert_int_equal(k.opens, k.closes);
    const char *none[] = {other, "/nonexistent-npk-dir", NULL};
    assert_int_equal(npk_rk_devices_list(&sys, none, nodes, 8, &n, &err), NPK_OK);
    assert_int_equal(n, 0);
    fk_free(&k);
}

static void test_emulator_device(void **state)
{
    (void)state;
    for (int emu_cores = 1; emu_cores <= 3; emu_cores += 2) {
        npk_rk_open_opts o = {NULL, NULL, NULL, emu_cores};
        npk_rk_device *d;
        npk_error err = {0};
        assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &o, &d, &err), NPK_OK);
        assert_non_null(npk_rk_device_emu(d));
        for (int dt = 0; dt < 3; dt++) {
            run_check(d, 300, 512, 96, (npk_rk_dtype)dt, 1, true, 50 + dt, NULL);
            if (emu_cores == 3) run_check(d, 64, 32, 256, (npk_rk_dtype)dt, 3, true, 60 + dt, NULL);
        }
        if (emu_cores == 1) {
            /* two cores asked of a one-core NPU */
            uint16_t a[8 * 64] = {0}, b[64 * 64] = {0};
            float c[8 * 64];
            npk_rk_run_opts ro = {8, 64, 64, NPK_RK_FP16, 2};
            assert_int_equal(npk_rk_run_matmul(d, &ro, a, b, c, NULL, &err), NPK_E_ARG);
            assert_non_null(strstr(err.msg, "single-core"));
        }
        npk_rk_device_close(d);
    }
}

/* The checker flags what is wrong, and only that. */
static void test_check_finds_errors(void **state)
{
    (void)state;
    for (int dt = 0; dt < 3; dt++) {
        rk_mats x;
        rk_mats_make(&x, 12, 64, 32, (npk_rk_dtype)dt, dt != NPK_RK_FP16, 70 + dt);
        size_t mn = 12 * 32, ob = npk_rk_dtype_out_size((npk_rk_dtype)dt);
        uint8_t *c = malloc(mn * ob);
        for (size_t i = 0; i < mn; i++) {
            double v = rk_expect(&x, i);
            if (dt == NPK_RK_INT8)
                ((int32_t *)(void *)c)[i] = (int32_t)v;
            else if (dt == NPK_RK_FP16_FP16)
                ((uint16_t *)(void *)c)[i] = npk_f32_to_f16((float)v);
            else
                ((float *)(void *)c)[i] = (float)v;
        }
        npk_rk_run_opts o = {12, 64, 32, (npk_rk_dtype)dt, 1};
        const void *a = dt == NPK_RK_INT8 ? (const void *)x.a8 : (const void *)x.a16;
        const void *b = dt == NPK_RK_INT8 ? (const void *)x.b8 : (const void *)x.b16;
        npk_rk_check chk;
        npk_error err = {0};
        assert_int_equal(npk_rk_check_matmul(&o, a, b, c, &chk, &err), NPK_OK);
        assert_int_equal(chk.bad, 0);
        /* one element off by a little more than its bound */
        size_t at = 5 * 32 + 7;
        if (dt == NPK_RK_INT8)
            ((int32_t *)(void *)c)[at] += 1;
        else if (dt == NPK_RK_FP16_FP16)
            ((uint16_t *)(void *)c)[at] = npk_f32_to_f16((float)(rk_expect(&x, at) * 1.01 + 1));
        else
            ((float *)(void *)c)[at] += (float)(1e-4 * x.mag[at] + 1e-3);
        assert_int_equal(npk_rk_check_matmul(&o, a, b, c, &chk, &err), NPK_OK);
        assert_int_equal(chk.bad, 1);
        assert_int_equal(chk.worst, at);
        assert_true(chk.max_abs > 0);
        free(c);
        rk_mats_free(&x);
    }
}

/* Was: a NaN in A gave "max abs error inf" and then "check: ok". NaN/inf
 * inputs are counted (with the first index), elements with a non-finite
 * reference are not checked, and NaN/inf in C where the reference is
 * finite always fails. */
static void test_check_nonfinite(void **state)
{
    (void)state;
    rk_mats x;
    rk_mats_make(&x, 4, 64, 32, NPK_RK_FP16, false, 90);
    size_t mn = 4 * 32;
    float *c = malloc(mn * sizeof *c);
    for (size_t i = 0; i < mn; i++) c[i] = (float)rk_expect(&x, i);
    npk_rk_run_opts o = {4, 64, 32, NPK_RK_FP16, 1};
    npk_rk_check chk;
    npk_error err = {0};
    /* NaN in the result where the reference is finite. */
    c[2 * 32 + 5] = NAN;
    assert_int_equal(npk_rk_check_matmul(&o, x.a16, x.b16, c, &chk, &err), NPK_OK);
    assert_int_equal(chk.bad, 1);
    assert_int_equal(chk.nonfinite_c, 1);
    assert_int_equal(chk.first_nonfinite_c, 2 * 32 + 5);
    assert_int_equal(chk.worst, 2 * 32 + 5);
    assert_true(isfinite(chk.max_abs));
    c[2 * 32 + 5] = INFINITY;
    assert_int_equal(npk_rk_check_matmul(&o, x.a16, x.b16, c, &chk, &err), NPK_OK);
    assert_int_equal(chk.nonfinite_c, 1);
    /* NaN in A[1][3]: row 1 of C has no finite reference; the rest checks. */
    c[2 * 32 + 5] = (float)rk_expect(&x, 2 * 32 + 5);
    x.a16[1 * 64 + 3] = 0x7e00;
    for (size_t j = 0; j < 32; j++) c[32 + j] = NAN;
    assert_int_equal(npk_rk_check_matmul(&o, x.a16, x.b16, c, &chk, &err), NPK_OK);
    assert_int_equal(chk.nonfinite_a, 1);
    assert_int_equal(chk.first_nonfinite_a, 1 * 64 + 3);
    assert_int_equal(chk.nonfinite_b, 0);
    assert_int_equal(chk.unchecked, 32);
    assert_int_equal(chk.bad, 0);
    /* ... but a NaN in another row still fails. */
    c[3 * 32] = NAN;
    assert_int_equal(npk_rk_check_matmul(&o, x.a16, x.b16, c, &chk, &err), NPK_OK);
    assert_int_equal(chk.bad, 1);
    assert_int_equal(chk.first_nonfinite_c, 3 * 32);
    free(c);
    rk_mats_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_nonfinite), cmocka_unit_test(test_vendor_backend),
        cmocka_unit_test(test_rocket_backend),  cmocka_unit_test(test_failures_release_everything),
        cmocka_unit_test(test_open_rules),      cmocka_unit_test(test_devices_list),
        cmocka_unit_test(test_emulator_device), cmocka_unit_test(test_check_finds_errors),
    };
    return cmocka_run_group_tests(tests, setup_dirs, NULL);
}
