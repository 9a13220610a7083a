/* npukit rknpu run-matmul and devices: running matmuls on the emulator or an
 * NPU, and listing NPU device nodes. A thin layer over src/rknpu/dev/. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_rknpu.h"
#include "npukit/half.h"
#include "npukit/rknpu_device.h"
#include "npukit/rknpu_plan.h"

int rknpu_cmd_run_matmul(int argc, char **argv);
int rknpu_cmd_devices(int argc, char **argv);

/* Load a 2-D .npy and convert it to the element type of the data path:
 * for int8 every value must be an integer in range unless `round` (then
 * rounded half to even); for fp16 values are rounded, but one that would
 * overflow to inf is refused. The tensor keeps the file offsets. */
static int load_operand(const char *path, npk_dtype want, bool round, npk_tensor *t)
{
    npk_error err = {0};
    npk_tensor raw;
    memset(t, 0, sizeof *t);
    if (npk_npy_load(path, &raw, &err)) return cli_error(path, &err);
    if (raw.ndim != 2 || !npk_tensor_count(&raw)) {
        char buf[128];
        int rc = raw.ndim != 2
                     ? cli_tensor_fail(path, &raw, "expected a 2-D array, got %d dimension%s",
                                       raw.ndim, raw.ndim == 1 ? "" : "s")
                     : cli_tensor_fail(path, &raw, "the array is empty (shape %s)",
                                       npk_shape_str(&raw, buf, sizeof buf));
        npk_tensor_free(&raw);
        return rc;
    }
    unsigned flags = want == NPK_I8 ? (round ? 0 : NPK_CONVERT_EXACT) : NPK_CONVERT_FINITE;
    npk_status st = npk_tensor_alloc(t, NULL, want, 2, raw.shape, &err);
    if (!st) st = npk_tensor_convert_ex(&raw, t, flags, &err);
    if (st && want == NPK_I8 && !round && err.status == NPK_E_ARG)
        snprintf(err.msg + strlen(err.msg), sizeof err.msg - strlen(err.msg),
                 " (--round rounds them)");
    t->src_shape_offset = raw.src_shape_offset;
    t->src_data_offset = 0; /* converted: element offsets are the raw file's */
    npk_tensor_free(&raw);
    if (st) {
        npk_tensor_free(t);
        return cli_error(path, &err);
    }
    return CLI_OK;
}

enum {
    OPT_DTYPE = 256,
    OPT_CORES,
    OPT_DEVICE,
    OPT_PATH,
    OPT_CHECK,
    OPT_EMU_CORES,
    OPT_JSON,
    OPT_ROUND
};

int rknpu_cmd_run_matmul(int argc, char **argv)
{
    const char *cmd = "rknpu run-matmul", *out = NULL, *path = NULL;
    npk_rk_dtype dt = NPK_RK_FP16;
    npk_rk_devkind kind = NPK_RK_DEV_EMU;
    int cores = 1, emu_cores = 3;
    bool check = false, round = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"round", no_argument, NULL, OPT_ROUND},
                                         {"dtype", required_argument, NULL, OPT_DTYPE},
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"device", required_argument, NULL, OPT_DEVICE},
                                         {"device-path", required_argument, NULL, OPT_PATH},
                                         {"emu-cores", required_argument, NULL, OPT_EMU_CORES},
                                         {"check", no_argument, NULL, OPT_CHECK},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_DTYPE:
            if (!npk_rk_dtype_parse(optarg, &dt))
                return cli_usage(cmd, "unknown --dtype '%s' (fp16, fp16-fp16, int8)", optarg);
            break;
        case OPT_CORES:
            if (rknpu_opt_cores(cmd, optarg, &cores)) return CLI_FAIL;
            break;
        case OPT_EMU_CORES:
            if (rknpu_opt_emu_cores(cmd, optarg, &emu_cores)) return CLI_FAIL;
            break;
        case OPT_DEVICE:
            if (rknpu_opt_device(cmd, optarg, &kind)) return CLI_FAIL;
            break;
        case OPT_PATH: path = optarg; break;
        case OPT_CHECK: check = true; break;
        case OPT_ROUND: round = true; break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (argc - optind != 2 || !out) return cli_usage(cmd, "need A.npy B.npy and -o C.npy");
    const char *pa = argv[optind], *pb = argv[optind + 1];
    npk_dtype in_dt = dt == NPK_RK_INT8 ? NPK_I8 : NPK_F16;
    npk_tensor a, b;
    if (round && dt != NPK_RK_INT8) return cli_usage(cmd, "--round applies to --dtype int8");
    int rc = load_operand(pa, in_dt, round, &a);
    if (rc) return rc;
    if ((rc = load_operand(pb, in_dt, round, &b))) {
        npk_tensor_free(&a);
        return rc;
    }
    npk_tensor cm = {0};
    npk_rk_device *d = NULL;
    npk_error err = {0};
    if (a.shape[1] != b.shape[0]) {
        rc = cli_tensor_fail(pb, &b,
                             "B is %lldx%lld but A (%s) is %lldx%lld: A's columns must "
                             "equal B's rows",
                             (long long)b.shape[0], (long long)b.shape[1], pa,
                             (long long)a.shape[0], (long long)a.shape[1]);
        goto done;
    }
    if (a.shape[0] > UINT32_MAX || a.shape[1] > UINT32_MAX) {
        rc = cli_tensor_fail(pa, &a, "dimensions beyond 32 bits");
        goto done;
    }
    if (b.shape[1] > UINT32_MAX) {
        rc = cli_tensor_fail(pb, &b, "dimensions beyond 32 bits");
        goto done;
    }
    npk_rk_run_opts ro = {(uint32_t)a.shape[0], (uint32_t)a.shape[1], (uint32_t)b.shape[1], dt,
                          cores};
    int64_t cshape[2] = {a.shape[0], b.shape[1]};
    npk_dtype out_dt = dt == NPK_RK_INT8 ? NPK_I32 : dt == NPK_RK_FP16_FP16 ? NPK_F16 : NPK_F32;
    npk_rk_open_opts oo = {NULL, path, NULL, emu_cores};
    npk_rk_run_info info;
    /* The shape against the hardware rules before any device is opened: a
     * refusal names A's file (M and K come from it; N from B). */
    npk_rk_plan_opts po = {ro.m, ro.k, ro.n, dt, cores, 0, 0, 0, 0, 0, 0, NPK_RK_FORM_VENDOR};
    npk_rk_plan sizing;
    if (npk_rk_plan_make(&po, &sizing, &err)) {
        const bool about_n = err.msg[0] == 'N';
        rc = cli_tensor_fail(about_n ? pb : pa, about_n ? &b : &a, "%s", err.msg);
        goto done;
    }
    npk_rk_plan_free(&sizing);
    if (npk_tensor_alloc(&cm, NULL, out_dt, 2, cshape, &err) ||
        npk_rk_device_open(kind, &oo, &d, &err) ||
        npk_rk_run_matmul(d, &ro, a.data, b.data, cm.data, &info, &err)) {
        rc = cli_error(NULL, &err);
        goto done;
    }
    if (npk_npy_save(out, &cm, &err)) {
        rc = cli_error(out, &err);
        goto done;
    }
    printf("%ux%ux%u %s on %s: %zu task%s on %d core%s (%s streams) -> %s\n", ro.m, ro.k, ro.n,
           npk_rk_dtype_name(dt), npk_rk_device_name(d), info.tasks, info.tasks == 1 ? "" : "s",
           info.cores, info.cores == 1 ? "" : "s", npk_rk_form_name(info.form), out);
    if (check) {
        npk_rk_check chk;
        if (npk_rk_check_matmul(&ro, a.data, b.data, cm.data, &chk, &err)) {
            rc = cli_error(NULL, &err);
            goto done;
        }
        const struct {
            const char *name, *path;
            size_t count, first, cols;
            const npk_tensor *t;
        } in[2] = {{"A", pa, chk.nonfinite_a, chk.first_nonfinite_a, ro.k, &a},
                   {"B", pb, chk.nonfinite_b, chk.first_nonfinite_b, ro.n, &b}};
        for (int i = 0; i < 2; i++)
            if (in[i].count)
                printf("check: %s (%s) holds %zu NaN/inf value%s, the first %s[%zu][%zu] = %g\n",
                       in[i].name, in[i].path, in[i].count, in[i].count == 1 ? "" : "s", in[i].name,
                       in[i].first / in[i].cols, in[i].first % in[i].cols,
                       (double)npk_f16_to_f32(((const uint16_t *)in[i].t->data)[in[i].first]));
        if (chk.unchecked)
            printf("check: %zu of %llu elements not checked (their reference is NaN/inf)\n",
                   chk.unchecked, (unsigned long long)ro.m * ro.n);
        printf("check: max abs error %.6g, max rel error %.6g (%s)\n", chk.max_abs, chk.max_rel,
               dt == NPK_RK_INT8   ? "int8: exact"
               : dt == NPK_RK_FP16 ? "bound: fp32 accumulation"
                                   : "bound: fp32 accumulation + fp16 rounding");
        if (chk.nonfinite_c)
            printf("check: FAILED: %zu element%s NaN/inf where the reference is finite (first "
                   "C[%llu][%llu])\n",
                   chk.nonfinite_c, chk.nonfinite_c == 1 ? " is" : "s are",
                   (unsigned long long)(chk.first_nonfinite_c / ro.n),
                   (unsigned long long)(chk.first_nonfinite_c % ro.n));
        if (chk.bad > chk.nonfinite_c)
            printf(
                "check: FAILED: %zu of %llu elements outside their bound (worst C[%llu][%llu])\n",
                chk.bad - chk.nonfinite_c, (unsigned long long)ro.m * ro.n,
                (unsigned long long)(chk.worst / ro.n), (unsigned long long)(chk.worst % ro.n));
        if (chk.bad)
            rc = CLI_PROBLEMS;
        else
            printf("check: ok%s\n", chk.unchecked ? " (for the elements checked)" : "");
    }
done:
    npk_rk_device_close(d);
    npk_tensor_free(&a);
    npk_tensor_free(&b);
    npk_tensor_free(&cm);
    return rc;
}

int rknpu_cmd_devices(int argc, char **argv)
{
    const char *cmd = "rknpu devices";
    bool json = false;
    static const struct option opts[] = {{"json", no_argument, NULL, OPT_JSON}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == OPT_JSON)
            json = true;
        else
            return cli_bad_option(cmd, argv);
    }
    if (optind != argc) return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (json && !cli_json_available()) return cli_no_json();
    npk_rk_devnode nodes[32];
    size_t n = 0;
    npk_error err = {0};
    if (npk_rk_devices_list(NULL, NULL, nodes, 32, &n, &err)) return cli_error(NULL, &err);
#ifdef NPK_HAVE_CJSON
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            char ver[48];
            snprintf(ver, sizeof ver, "%d.%d.%d", nodes[i].major, nodes[i].minor, nodes[i].patch);
            cJSON_AddStringToObject(o, "path", nodes[i].path);
            cJSON_AddStringToObject(o, "driver", nodes[i].driver);
            cJSON_AddStringToObject(o, "device", npk_rk_devkind_name(nodes[i].kind));
            cJSON_AddStringToObject(o, "version", ver);
            cJSON_AddStringToObject(o, "date", nodes[i].date);
            cJSON_AddStringToObject(o, "description", nodes[i].desc);
            cJSON_AddItemToArray(arr, o);
        }
        cli_print_json(arr, false);
        return CLI_OK;
    }
#endif
    if (!n) {
        printf("no NPU device nodes found (searched");
        for (size_t i = 0; npk_rk_default_dev_dirs[i]; i++)
            printf(" %s", npk_rk_default_dev_dirs[i]);
        printf(" for rknpu and rocket drivers)\n");
        return CLI_OK;
    }
    for (size_t i = 0; i < n; i++)
        printf("%-24s %-6s driver %s %d.%d.%d (%s, %s)  --device %s\n", nodes[i].path,
               npk_rk_devkind_name(nodes[i].kind), nodes[i].driver, nodes[i].major, nodes[i].minor,
               nodes[i].patch, nodes[i].date, nodes[i].desc, npk_rk_devkind_name(nodes[i].kind));
    return CLI_OK;
}
