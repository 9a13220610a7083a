/* npukit rknpu run-matmul and devices: running matmuls on the emulator or an
 * NPU, and listing NPU device nodes. A thin layer over src/rknpu/dev/. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npukit/rknpu_device.h"

int rknpu_cmd_run_matmul(int argc, char **argv);
int rknpu_cmd_devices(int argc, char **argv);

/* Load a 2-D .npy and convert it to the element type of the data path. */
static int load_operand(const char *path, npk_dtype want, npk_tensor *t)
{
    npk_error err = {0};
    npk_tensor raw;
    if (npk_npy_load(path, &raw, &err)) return cli_error(path, &err);
    if (raw.ndim != 2) {
        npk_tensor_free(&raw);
        return cli_fail("%s: expected a 2-D array, got %d dimensions", path, raw.ndim);
    }
    npk_status st = npk_tensor_alloc(t, NULL, want, 2, raw.shape, &err);
    if (!st) st = npk_tensor_convert(&raw, t, &err);
    npk_tensor_free(&raw);
    if (st) {
        npk_tensor_free(t);
        return cli_error(path, &err);
    }
    return CLI_OK;
}

enum { OPT_DTYPE = 256, OPT_CORES, OPT_DEVICE, OPT_PATH, OPT_CHECK, OPT_EMU_CORES, OPT_JSON };

int rknpu_cmd_run_matmul(int argc, char **argv)
{
    const char *cmd = "rknpu run-matmul", *out = NULL, *path = NULL;
    npk_rk_dtype dt = NPK_RK_FP16;
    npk_rk_devkind kind = NPK_RK_DEV_EMU;
    int cores = 1, emu_cores = 3;
    bool check = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"dtype", required_argument, NULL, OPT_DTYPE},
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"device", required_argument, NULL, OPT_DEVICE},
                                         {"device-path", required_argument, NULL, OPT_PATH},
                                         {"emu-cores", required_argument, NULL, OPT_EMU_CORES},
                                         {"check", no_argument, NULL, OPT_CHECK},
                                         {0, 0, 0, 0}};
    int c;
    uint64_t v;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_DTYPE:
            if (!npk_rk_dtype_parse(optarg, &dt))
                return cli_usage(cmd, "unknown --dtype '%s' (fp16, fp16-fp16, int8)", optarg);
            break;
        case OPT_CORES:
            if (!cli_parse_u64(optarg, &v) || v < 1 || v > 3)
                return cli_usage(cmd, "--cores is 1, 2 or 3");
            cores = (int)v;
            break;
        case OPT_EMU_CORES:
            if (!cli_parse_u64(optarg, &v) || (v != 1 && v != 3))
                return cli_usage(cmd, "--emu-cores is 1 or 3");
            emu_cores = (int)v;
            break;
        case OPT_DEVICE:
            if (!npk_rk_devkind_parse(optarg, &kind))
                return cli_usage(cmd, "unknown --device '%s' (emu, rknpu, rocket)", optarg);
            break;
        case OPT_PATH: path = optarg; break;
        case OPT_CHECK: check = true; break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (argc - optind != 2 || !out) return cli_usage(cmd, "need A.npy B.npy and -o C.npy");
    const char *pa = argv[optind], *pb = argv[optind + 1];
    npk_dtype in_dt = dt == NPK_RK_INT8 ? NPK_I8 : NPK_F16;
    npk_tensor a, b;
    int rc = load_operand(pa, in_dt, &a);
    if (rc) return rc;
    if ((rc = load_operand(pb, in_dt, &b))) {
        npk_tensor_free(&a);
        return rc;
    }
    npk_tensor cm = {0};
    npk_rk_device *d = NULL;
    npk_error err = {0};
    if (a.shape[1] != b.shape[0]) {
        rc = cli_fail("%s is %lldx%lld but %s is %lldx%lld: A's columns must equal B's rows", pa,
                      (long long)a.shape[0], (long long)a.shape[1], pb, (long long)b.shape[0],
                      (long long)b.shape[1]);
        goto done;
    }
    if (a.shape[0] > UINT32_MAX || a.shape[1] > UINT32_MAX || b.shape[1] > UINT32_MAX) {
        rc = cli_fail("%s x %s: dimensions beyond 32 bits", pa, pb);
        goto done;
    }
    npk_rk_run_opts ro = {(uint32_t)a.shape[0], (uint32_t)a.shape[1], (uint32_t)b.shape[1], dt,
                          cores};
    int64_t cshape[2] = {a.shape[0], b.shape[1]};
    npk_dtype out_dt = dt == NPK_RK_INT8 ? NPK_I32 : dt == NPK_RK_FP16_FP16 ? NPK_F16 : NPK_F32;
    npk_rk_open_opts oo = {NULL, path, NULL, emu_cores};
    npk_rk_run_info info;
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
        printf("check: max abs error %.6g, max rel error %.6g (%s)\n", chk.max_abs, chk.max_rel,
               dt == NPK_RK_INT8   ? "int8: exact"
               : dt == NPK_RK_FP16 ? "bound: fp32 accumulation"
                                   : "bound: fp32 accumulation + fp16 rounding");
        if (chk.bad) {
            printf(
                "check: FAILED: %zu of %llu elements outside their bound (worst C[%llu][%llu])\n",
                chk.bad, (unsigned long long)ro.m * ro.n, (unsigned long long)(chk.worst / ro.n),
                (unsigned long long)(chk.worst % ro.n));
            rc = CLI_PROBLEMS;
        } else {
            printf("check: ok\n");
        }
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
