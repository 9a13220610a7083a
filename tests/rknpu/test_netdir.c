/* Compiled directories (npukit/rknpu_netdir.h): the files of a compiled
 * mobilenet_v1 0.5 load back into a net that runs byte-identical to the one
 * compiled from the model; every single-byte change of the manifest, of
 * each NPU-side file (first, middle, last byte) and of the model is refused
 * with the file named and the offset of the change; truncated files and a
 * different model are refused. */
#include <stdlib.h>
#include <string.h>

#include "npk_test.h"
#include "npukit/file.h"
#include "npukit/rknpu_netdir.h"

typedef struct dir {
    npk_mapped mp;
    npk_tfl_model m;
    npk_rk_net net;
    npk_rk_netdir_blob f[NPK_RK_NETDIR_FILES];
    uint8_t manifest[NPK_RK_NETDIR_MANIFEST_SIZE];
} dir;

static void make(dir *d, const char *model, int cores, npk_rk_form form)
{
    npk_error err = {0};
    npk_fixture_map(model, &d->mp);
    if (npk_tfl_parse(d->mp.data, d->mp.size, &d->m, &err)) fail_msg("%s", err.msg);
    npk_rk_net_opts o = {cores, form, NPK_RK_RQ_EXACT, 0, 0, 0, 1, false, false};
    if (npk_rk_net_compile(&d->m, &o, &d->net, &err)) fail_msg("compile: %s", err.msg);
    if (npk_rk_netdir_files(&d->net, d->f, &err)) fail_msg("%s", err.msg);
    npk_rk_netdir_manifest_write(&d->net, d->f, d->mp.data, d->mp.size, d->manifest);
}

static void unmake(dir *d)
{
    npk_rk_netdir_files_free(d->f);
    npk_rk_net_free(&d->net);
    npk_tfl_free(&d->m);
    npk_unmap_file(&d->mp);
}

/* Load with the given manifest bytes, model bytes and files. */
static npk_status try_load(const dir *d, const uint8_t *manifest, const uint8_t *model,
                           size_t model_len, const npk_rk_netdir_blob *f, int *which,
                           npk_error *err)
{
    npk_rk_netdir_manifest mf;
    *which = NPK_RK_NETDIR_MANIFEST;
    npk_status st = npk_rk_netdir_manifest_read(manifest, NPK_RK_NETDIR_MANIFEST_SIZE, &mf, err);
    if (st) return st;
    npk_rk_net net;
    st = npk_rk_netdir_load(&mf, model, model_len, &d->m, f, 1, &net, which, err);
    if (!st) npk_rk_net_free(&net);
    return st;
}

static void run_emu(npk_rk_net *net, uint8_t *y, size_t n)
{
    npk_error err = {0};
    npk_rk_device *emu;
    npk_rk_open_opts eo = {0};
    assert_int_equal(npk_rk_device_open(NPK_RK_DEV_EMU, &eo, &emu, &err), NPK_OK);
    npk_rk_net_exec *x;
    if (npk_rk_net_exec_new(net, emu, &x, &err)) fail_msg("bind: %s", err.msg);
    npk_tfl_view v;
    assert_int_equal(npk_rk_net_input(x, 0, &v, &err), NPK_OK);
    uint64_t rng = 0x5eed15;
    for (size_t i = 0; i < v.bytes; i++) ((uint8_t *)v.data)[i] = (uint8_t)npk_rand(&rng);
    npk_rk_net_timing tm;
    if (npk_rk_net_run(x, &tm, &err)) fail_msg("run: %s", err.msg);
    assert_int_equal(npk_rk_net_output(x, 0, &v, &err), NPK_OK);
    assert_int_equal(v.bytes, n);
    memcpy(y, v.data, n);
    npk_rk_net_exec_free(x);
    npk_rk_device_close(emu);
}

static void test_round_trip(void **state)
{
    (void)state;
    /* One core in the vendor form, two; three in the rocket form (the
     * emulator device runs the vendor form: that one is not run). */
    uint8_t one_core[1001];
    for (int k = 0; k < 3; k++) {
        dir d;
        make(&d, "models/mobilenet_v1_0.5_160_quant.tflite", k + 1,
             k == 2 ? NPK_RK_FORM_ROCKET : NPK_RK_FORM_VENDOR);
        npk_rk_netdir_manifest mf;
        npk_error err = {0};
        assert_int_equal(npk_rk_netdir_manifest_read(d.manifest, sizeof d.manifest, &mf, &err),
                         NPK_OK);
        assert_int_equal(mf.cores, k + 1);
        assert_int_equal(mf.form, k == 2 ? NPK_RK_FORM_ROCKET : NPK_RK_FORM_VENDOR);
        assert_int_equal(mf.model_bytes, d.mp.size);
        /* 1 merged submit on one core; on more, one per run of layers no
         * core of which touches what another writes in it: 5. */
        assert_int_equal(d.f[NPK_RK_NETDIR_SUBMIT].len, (k ? 5 : 1) * NPK_RKNPU_SUBMIT_SIZE);
        npk_rk_net loaded;
        int which = 99;
        if (npk_rk_netdir_load(&mf, d.mp.data, d.mp.size, &d.m, d.f, 1, &loaded, &which, &err))
            fail_msg("load: %s", err.msg);
        assert_int_equal(which, -1);
        assert_int_equal(loaded.ntasks, d.net.ntasks);
        if (k < 2) { /* loaded = compiled, and two cores give what one gives */
            uint8_t a[1001], b[1001];
            run_emu(&d.net, a, sizeof a);
            run_emu(&loaded, b, sizeof b);
            assert_memory_equal(a, b, sizeof a);
            if (!k) memcpy(one_core, a, sizeof a);
            assert_memory_equal(one_core, a, sizeof a);
        }
        npk_rk_net_free(&loaded);
        unmake(&d);
    }
}

static void test_every_manifest_byte(void **state)
{
    (void)state;
    dir d;
    make(&d, "models/mobilenet_v1_0.5_160_quant.tflite", 1, NPK_RK_FORM_VENDOR);
    uint8_t m[NPK_RK_NETDIR_MANIFEST_SIZE];
    npk_error err = {0};
    int which;
    for (size_t i = 0; i < sizeof m; i++) {
        memcpy(m, d.manifest, sizeof m);
        m[i] ^= 0x01;
        npk_error_clear(&err);
        assert_int_not_equal(try_load(&d, m, d.mp.data, d.mp.size, d.f, &which, &err), NPK_OK);
        assert_int_equal(which, NPK_RK_NETDIR_MANIFEST);
        assert_non_null(strstr(err.msg, "net.bin"));
    }
    /* Short and long manifests. */
    npk_rk_netdir_manifest mf;
    assert_int_equal(npk_rk_netdir_manifest_read(d.manifest, 127, &mf, &err), NPK_E_FORMAT);
    unmake(&d);
}

static void test_every_file(void **state)
{
    (void)state;
    dir d;
    make(&d, "models/mobilenet_v1_0.5_160_quant.tflite", 1, NPK_RK_FORM_VENDOR);
    npk_error err = {0};
    int which;
    for (int f = 0; f < NPK_RK_NETDIR_FILES; f++) {
        size_t n = d.f[f].len;
        assert_true(n > 0);
        size_t at[3] = {0, n / 2, n - 1};
        for (int k = 0; k < 3; k++) {
            d.f[f].data[at[k]] ^= 0x40;
            npk_error_clear(&err);
            assert_int_equal(try_load(&d, d.manifest, d.mp.data, d.mp.size, d.f, &which, &err),
                             NPK_E_FORMAT);
            assert_int_equal(which, f);
            assert_int_equal(err.offset, at[k]);
            assert_non_null(strstr(err.msg, npk_rk_netdir_name(f)));
            d.f[f].data[at[k]] ^= 0x40;
        }
        d.f[f].len--; /* truncated */
        npk_error_clear(&err);
        assert_int_equal(try_load(&d, d.manifest, d.mp.data, d.mp.size, d.f, &which, &err),
                         NPK_E_FORMAT);
        assert_int_equal(which, f);
        d.f[f].len++;
    }
    /* The model: one byte changed, or cut short. */
    uint8_t *copy = malloc(d.mp.size);
    memcpy(copy, d.mp.data, d.mp.size);
    copy[d.mp.size / 3] ^= 1;
    npk_error_clear(&err);
    assert_int_equal(try_load(&d, d.manifest, copy, d.mp.size, d.f, &which, &err), NPK_E_FORMAT);
    assert_int_equal(which, NPK_RK_NETDIR_MODEL);
    npk_error_clear(&err);
    assert_int_equal(try_load(&d, d.manifest, d.mp.data, d.mp.size - 1, d.f, &which, &err),
                     NPK_E_FORMAT);
    assert_int_equal(which, NPK_RK_NETDIR_MODEL);
    free(copy);
    /* And after all that, the untouched files still load. */
    assert_int_equal(try_load(&d, d.manifest, d.mp.data, d.mp.size, d.f, &which, &err), NPK_OK);
    unmake(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_every_manifest_byte),
        cmocka_unit_test(test_every_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
