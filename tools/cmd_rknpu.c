/* npukit rknpu: Rockchip RK3588 NPU: register streams, matmul generation,
 * multi-task plans and data layouts. A thin layer over src/rknpu. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_rknpu.h"
#include "cli_views.h"
#include "commands.h"
#include "npukit/rknpu_layout.h"
#include "npukit/rknpu_matmul.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_stream.h"
#include "npukit/rknpu_uapi.h"

static int r_disasm(int argc, char **argv);
static int r_matmul(int argc, char **argv);
static int r_plan(int argc, char **argv);
static int r_pack(int argc, char **argv);
static int r_unpack(int argc, char **argv);
/* cmd_rknpu_run.c */
int rknpu_cmd_run_matmul(int argc, char **argv);
int rknpu_cmd_devices(int argc, char **argv);
/* cmd_rknpu_layer.c */
int rknpu_cmd_compile(int argc, char **argv);
int rknpu_cmd_run(int argc, char **argv);

static const cli_subcommand subs[] = {
    {"disasm", "FILE [--json] [--input bin|hex]",
     "disassemble a register-command stream (binary little-endian u64 or hex text): per entry\n"
     "      index, raw word, block, register and every bitfield; odd entries are flagged (exit 1)",
     r_disasm},
    {"matmul",
     "-m M -k K -n N [--dtype fp16|fp16-fp16|int8] [--input-addr A] [--weight-addr A]\n"
     "      [--output-addr A] [--format bin|hex] -o STREAM",
     "write one matmul task's 108-entry stream (addresses default to 0x10000000, 0x20000000,\n"
     "      0x30000000); a shape outside the hardware limits is refused with the limit named",
     r_matmul},
    {"plan",
     "-m M -k K -n N [--dtype D] [--cores 1|2|3] [--json] [-o DIR] [--input-addr A]\n"
     "      [--weight-addr A] [--output-addr A] [--regcmd-addr A] [--max-m M] [--max-n N]",
     "split a matmul into tasks (tiles of M and N) chained per core; prints the plan and with\n"
     "      -o DIR writes regcmd.bin, tasks.bin, submit.bin (and plan.json)",
     r_plan},
    {"pack", "--layout L IN.npy -o OUT.bin [--order nhwc|nchw|kn|nk] [--c2 4|8|16]",
     "convert a host array to the NPU layout L: feature-fp16, feature-int8, feature-fp32,\n"
     "      feature-int32 (NC1HWC2; IN is M x K, H x W x C or N x H x W x C) or weight-fp16,\n"
     "      weight-int8 (IN is B, K x N; --order nk for N x K)",
     r_pack},
    {"unpack", "--layout L --shape D0,D1,... IN.bin -o OUT.npy [--order ...] [--c2 4|8|16]",
     "convert an NPU-layout buffer back to a host array of the given (plain) shape", r_unpack},
    {"run-matmul",
     "A.npy B.npy -o C.npy [--dtype fp16|fp16-fp16|int8] [--round] [--cores 1|2|3]\n"
     "      [--device emu|rknpu|rocket] [--device-path NODE] [--emu-cores 1|3] [--check]",
     "C = A.B on the emulator (default) or an NPU: plans the tasks, lays the operands out,\n"
     "      runs, reads back. Inputs of another type are converted: to fp16 rounded (a value\n"
     "      beyond fp16's range is refused), to int8 only when exact (an inexact value is\n"
     "      refused, named with its index; --round rounds half to even instead).\n"
     "      --check compares with a CPU reference: exit 1 if an element is outside its bound\n"
     "      or non-finite where the reference is finite; NaN/inf inputs are reported",
     rknpu_cmd_run_matmul},
    {"compile",
     "MODEL.tflite -o DIR [--cores 1|2|3] [--form vendor|rocket]\n"
     "      [--requant exact|exact1|simple] [--tasks]\n"
     "      |  MODEL.tflite --op INDEX[,INDEX...] -o DIR [--act-addr A] ... [--json]",
     "the whole model: NPU segments and CPU operators, layouts converted at the boundaries,\n"
     "      activations planned by lifetime: DIR/regcmd.bin, tasks.bin, submit.bin (one record\n"
     "      per submit), weights.bin, plan.json (segments, tasks, cores, buffers, CPU ops, time\n"
     "      estimates), model.tflite and net.bin (what `rknpu run DIR` loads); all or\n"
     "      nothing. With --op: only those operators (CONV_2D, DEPTHWISE_CONV_2D,\n"
     "      FULLY_CONNECTED, ADD, AVERAGE_POOL_2D, MAX_POOL_2D)",
     rknpu_cmd_compile},
    {"run",
     "MODEL.tflite|DIR (--input [NAME=]X.npy ... | --image PICTURE) [-o OUT] [--check]\n"
     "      [--cores N] [--repeat N] [--threads N] [--device emu|rknpu|rocket]\n"
     "      [--device-path NODE] [--emu-cores 1|3] [--requant exact|exact1|simple]\n"
     "      " CLI_VIEW_USAGE "\n"
     "      |  MODEL.tflite --op INDEX --input X.npy [--input X2.npy] -o Y.npy",
     "run the whole model on the emulator (default) or an NPU, the CPU operators on the\n"
     "      interpreter; outputs as `tflite run` writes them; --check runs the interpreter on the\n"
     "      same input: exact / off-by-one / worse per output and top-1 (exit 1 if a top-1\n"
     "      differs). --image: a picture resized into the picture input as `tflite run` does;\n"
     "      task views as `tflite run`: --classify LABELS, --detect LABELS, --pose, --segment,\n"
     "      --draw OUT.png, --json. DIR: what `rknpu compile -o DIR` wrote, checked against\n"
     "      its model copy (no --cores; --device rocket needs --form rocket). With --op: one\n"
     "      operator (--check: exit 1 if off by more than one)",
     rknpu_cmd_run},
    {"devices", "[--json]",
     "list the NPU device nodes (rknpu, rocket) that can be opened, with driver versions",
     rknpu_cmd_devices},
};

void cmd_rknpu_help(FILE *out)
{
    cli_group_help(out, "rknpu",
                   "Rockchip RK3588 NPU: register streams, matmul generation, multi-task plans, "
                   "data layouts, an emulator and device backends.",
                   subs, (int)(sizeof subs / sizeof subs[0]));
}

int cmd_rknpu(int argc, char **argv)
{
    return cli_dispatch("rknpu", subs, (int)(sizeof subs / sizeof subs[0]), argc, argv);
}

static bool parse_u32(const char *s, uint32_t *v)
{
    uint64_t x;
    if (!cli_parse_u64(s, &x) || x > UINT32_MAX) return false;
    *v = (uint32_t)x;
    return true;
}

/* ---- disasm ---- */

static int r_disasm(int argc, char **argv)
{
    bool json = false;
    npk_rk_encoding enc = NPK_RK_ENC_AUTO;
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"input", required_argument, NULL, 'i'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'i') {
            if (!strcmp(optarg, "bin"))
                enc = NPK_RK_ENC_BINARY;
            else if (!strcmp(optarg, "hex"))
                enc = NPK_RK_ENC_HEX;
            else if (strcmp(optarg, "auto"))
                return cli_usage("rknpu disasm", "bad --input");
        } else
            return cli_bad_option("rknpu disasm", argv);
    }
    if (optind + 1 != argc) return cli_usage("rknpu disasm", "expected one FILE");
    if (json && !cli_json_available()) return cli_no_json();
    const char *path = argv[optind];
    npk_error err = {0};
    npk_mapped m;
    if (npk_map_file(path, &m, &err)) return cli_error(path, &err);
    npk_rk_stream s;
    npk_status st = npk_rk_stream_parse(m.data, m.size, enc, &s, &err);
    npk_unmap_file(&m);
    if (st) return cli_error(path, &err);
    size_t flagged = 0, first = SIZE_MAX;
#ifdef NPK_HAVE_CJSON
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
#endif
    char line[2048];
    for (size_t i = 0; i < s.count; i++) {
        npk_rk_entry e;
        npk_rk_entry_decode(s.entries[i], &e);
        if (e.problems && !flagged++) first = i;
#ifdef NPK_HAVE_CJSON
        if (json) {
            const npk_rk_reg_info *ri = npk_rk_reg_get(e.reg);
            const npk_rk_block_info *bi = npk_rk_block_get(ri ? ri->block : e.block);
            cJSON *o = cJSON_CreateObject();
            char hex[24];
            cJSON_AddNumberToObject(o, "index", (double)i);
            snprintf(hex, sizeof hex, "%016" PRIx64, e.raw);
            cJSON_AddStringToObject(o, "raw", hex);
            snprintf(hex, sizeof hex, "0x%04x", e.op);
            cJSON_AddStringToObject(o, "op", hex);
            cJSON_AddStringToObject(o, "kind", npk_rk_kind_name(e.kind));
            if (bi)
                cJSON_AddStringToObject(o, "block", bi->name);
            else
                cJSON_AddNullToObject(o, "block");
            snprintf(hex, sizeof hex, "0x%04x", e.offset);
            cJSON_AddStringToObject(o, "reg", hex);
            if (ri)
                cJSON_AddStringToObject(o, "name", ri->full_name);
            else
                cJSON_AddNullToObject(o, "name");
            cJSON_AddNumberToObject(o, "value", e.value);
            cJSON *f = cJSON_AddObjectToObject(o, "fields");
            const npk_rk_reg_info *lay = npk_rk_reg_get(e.layout);
            for (unsigned k = 0; lay && k < lay->field_count; k++) {
                npk_rk_field fid = (npk_rk_field)(lay->first_field + k);
                cJSON_AddNumberToObject(f, npk_rk_field_get(fid)->name,
                                        npk_rk_field_extract(fid, e.value));
            }
            if (e.problems) {
                cJSON *p = cJSON_AddArrayToObject(o, "problems");
                for (unsigned bit = 1; bit <= NPK_RK_BAD_BITS; bit <<= 1)
                    if (e.problems & bit)
                        cJSON_AddItemToArray(p, cJSON_CreateString(npk_rk_problem_name(bit)));
            }
            cJSON_AddItemToArray(arr, o);
            continue;
        }
#endif
        npk_rk_disasm_entry(i, &e, line, sizeof line);
        puts(line);
    }
#ifdef NPK_HAVE_CJSON
    if (json) cli_print_json(arr, false);
#endif
    int rc = CLI_OK;
    if (flagged) {
        npk_fail_at(&err, NPK_E_FORMAT, s.src_off[first], "%zu of %zu entries flagged (first: %zu)",
                    flagged, s.count, first);
        cli_error(path, &err);
        rc = CLI_PROBLEMS;
    }
    npk_rk_stream_free(&s);
    return rc;
}

/* ---- options shared by matmul and plan ---- */

typedef struct mm_args {
    npk_rk_matmul mm;
    bool have_m, have_k, have_n;
} mm_args;

enum {
    OPT_DTYPE = 256,
    OPT_IN,
    OPT_WT,
    OPT_OUT,
    OPT_FORMAT,
    OPT_CORES,
    OPT_REGCMD,
    OPT_MAXM,
    OPT_MAXN,
    OPT_JSON
};

/* Handle an option common to matmul and plan; 1 if handled, -1 on error. */
static int mm_option(const char *cmd, int c, mm_args *a)
{
    uint32_t *dst = NULL;
    switch (c) {
    case 'm':
        dst = &a->mm.m;
        a->have_m = true;
        break;
    case 'k':
        dst = &a->mm.k;
        a->have_k = true;
        break;
    case 'n':
        dst = &a->mm.n;
        a->have_n = true;
        break;
    case OPT_IN: dst = &a->mm.input_addr; break;
    case OPT_WT: dst = &a->mm.weight_addr; break;
    case OPT_OUT: dst = &a->mm.output_addr; break;
    case OPT_DTYPE:
        if (!npk_rk_dtype_parse(optarg, &a->mm.dtype)) {
            cli_usage(cmd, "unknown --dtype '%s' (fp16, fp16-fp16, int8)", optarg);
            return -1;
        }
        return 1;
    default: return 0;
    }
    if (!parse_u32(optarg, dst)) {
        cli_usage(cmd, "bad number '%s'", optarg);
        return -1;
    }
    return 1;
}

#define MM_LONG_OPTS                                                                               \
    {"dtype", required_argument, NULL, OPT_DTYPE},                                                 \
        {"input-addr", required_argument, NULL, OPT_IN},                                           \
        {"weight-addr", required_argument, NULL, OPT_WT},                                          \
        {"output-addr", required_argument, NULL, OPT_OUT},                                         \
    {                                                                                              \
        "output", required_argument, NULL, 'o'                                                     \
    }

static void mm_defaults(mm_args *a)
{
    memset(a, 0, sizeof *a);
    a->mm.dtype = NPK_RK_FP16;
    a->mm.input_addr = 0x10000000;
    a->mm.weight_addr = 0x20000000;
    a->mm.output_addr = 0x30000000;
}

static int r_matmul(int argc, char **argv)
{
    mm_args a;
    mm_defaults(&a);
    const char *out = NULL;
    bool hex = false;
    static const struct option opts[] = {
        MM_LONG_OPTS, {"format", required_argument, NULL, OPT_FORMAT}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "m:k:n:o:", opts, NULL)) != -1) {
        int h = mm_option("rknpu matmul", c, &a);
        if (h < 0) return CLI_FAIL;
        if (h) continue;
        if (c == 'o')
            out = optarg;
        else if (c == OPT_FORMAT && (!strcmp(optarg, "bin") || !strcmp(optarg, "hex")))
            hex = !strcmp(optarg, "hex");
        else if (c == OPT_FORMAT)
            return cli_usage("rknpu matmul", "--format is bin or hex");
        else
            return cli_bad_option("rknpu matmul", argv);
    }
    if (optind != argc) return cli_usage("rknpu matmul", "unexpected argument '%s'", argv[optind]);
    if (!a.have_m || !a.have_k || !a.have_n || !out)
        return cli_usage("rknpu matmul", "need -m, -k, -n and -o");
    uint64_t s[NPK_RK_MATMUL_ENTRIES];
    npk_error err = {0};
    if (npk_rk_matmul_stream(&a.mm, s, &err)) return cli_error(NULL, &err);
    char buf[NPK_RK_MATMUL_ENTRIES * 17];
    size_t n = hex ? sizeof buf : NPK_RK_MATMUL_ENTRIES * 8;
    if (hex)
        npk_rk_stream_to_hex(s, NPK_RK_MATMUL_ENTRIES, buf);
    else
        npk_rk_stream_to_bin(s, NPK_RK_MATMUL_ENTRIES, (uint8_t *)buf);
    if (npk_write_file(out, buf, n, &err)) return cli_error(out, &err);
    return CLI_OK;
}

/* ---- plan ---- */

#ifdef NPK_HAVE_CJSON
static cJSON *plan_json(const npk_rk_plan *p)
{
    const npk_rk_plan_opts *o = &p->opts;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "m", o->m);
    cJSON_AddNumberToObject(j, "k", o->k);
    cJSON_AddNumberToObject(j, "n", o->n);
    cJSON_AddStringToObject(j, "dtype", npk_rk_dtype_name(o->dtype));
    cJSON_AddNumberToObject(j, "cores", p->cores);
    cli_json_hex(j, "core_mask", p->submit.core_mask);
    cJSON *tl = cJSON_AddArrayToObject(j, "tiles");
    cJSON_AddItemToArray(tl, cJSON_CreateNumber(p->tiles_m));
    cJSON_AddItemToArray(tl, cJSON_CreateNumber(p->tiles_n));
    cJSON *b = cJSON_AddObjectToObject(j, "buffers");
    const struct {
        const char *name;
        uint32_t addr;
        uint64_t bytes;
    } bufs[] = {{"input", o->input_addr, p->input_bytes},
                {"weights", o->weight_addr, p->weight_bytes},
                {"output", o->output_addr, p->output_bytes},
                {"regcmd", o->regcmd_addr, (uint64_t)p->regcmd_entries * 8},
                {"tasks", 0, (uint64_t)p->count * NPK_RKNPU_TASK_SIZE}};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        cJSON *x = cJSON_AddObjectToObject(b, bufs[i].name);
        if (i < 4) cli_json_hex(x, "addr", bufs[i].addr);
        cli_json_u64(x, "bytes", bufs[i].bytes);
    }
    cJSON *ts = cJSON_AddArrayToObject(j, "tasks");
    for (size_t i = 0; i < p->count; i++) {
        const npk_rk_plan_task *t = &p->tasks[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "index", (double)i);
        cJSON_AddNumberToObject(x, "core", t->core);
        cJSON_AddNumberToObject(x, "m0", t->m0);
        cJSON_AddNumberToObject(x, "rows", t->mt);
        cJSON_AddNumberToObject(x, "n0", t->n0);
        cJSON_AddNumberToObject(x, "cols", t->nt);
        cli_json_u64(x, "input_offset", t->input_off);
        cli_json_u64(x, "weight_offset", t->weight_off);
        cli_json_u64(x, "output_offset", t->output_off);
        cli_json_u64(x, "regcmd_offset", t->regcmd_off);
        cli_json_hex(x, "regcmd_addr", p->records[i].regcmd_addr);
        cJSON_AddNumberToObject(x, "regcfg_amount", p->records[i].regcfg_amount);
        cJSON_AddNumberToObject(x, "next", t->next);
        cJSON_AddItemToArray(ts, x);
    }
    cJSON *cs = cJSON_AddArrayToObject(j, "core_ranges");
    for (int c = 0; c < p->cores; c++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "core", c);
        cJSON_AddNumberToObject(x, "subcore_slot", npk_rknpu_subcore_slot(p->submit.core_mask, c));
        cJSON_AddNumberToObject(x, "task_start", p->core_first[c]);
        cJSON_AddNumberToObject(x, "task_number", p->core_count[c]);
        cli_json_u64(x, "macs", p->core_work[c]);
        cJSON_AddNumberToObject(
            x, "pc_data_amount",
            npk_rknpu_pc_data_amount(p->records[p->core_first[c]].regcfg_amount));
        cJSON_AddItemToArray(cs, x);
    }
    cJSON *s = cJSON_AddObjectToObject(j, "submit");
    cli_json_hex(s, "flags", p->submit.flags);
    cJSON_AddNumberToObject(s, "timeout", p->submit.timeout);
    cJSON_AddNumberToObject(s, "task_start", p->submit.task_start);
    cJSON_AddNumberToObject(s, "task_number", p->submit.task_number);
    cli_json_hex(s, "core_mask", p->submit.core_mask);
    cJSON_AddNumberToObject(s, "fence_fd", p->submit.fence_fd);
    cJSON *sc = cJSON_AddArrayToObject(s, "subcore_task");
    for (int i = 0; i < NPK_RKNPU_SUBCORE_SLOTS; i++) {
        cJSON *x = cJSON_CreateArray();
        cJSON_AddItemToArray(x, cJSON_CreateNumber(p->submit.subcore_task[i].task_start));
        cJSON_AddItemToArray(x, cJSON_CreateNumber(p->submit.subcore_task[i].task_number));
        cJSON_AddItemToArray(sc, x);
    }
    return j;
}
#endif

static void plan_text(const npk_rk_plan *p)
{
    const npk_rk_plan_opts *o = &p->opts;
    printf("plan: %ux%ux%u %s, %zu task%s on %d core%s (mask 0x%x), tiles %u x %u\n", o->m, o->k,
           o->n, npk_rk_dtype_name(o->dtype), p->count, p->count == 1 ? "" : "s", p->cores,
           p->cores == 1 ? "" : "s", p->submit.core_mask, p->tiles_m, p->tiles_n);
    printf("buffers: input 0x%08x %" PRIu64 " B, weights 0x%08x %" PRIu64
           " B, output 0x%08x %" PRIu64 " B, regcmd 0x%08x %zu B\n",
           o->input_addr, p->input_bytes, o->weight_addr, p->weight_bytes, o->output_addr,
           p->output_bytes, o->regcmd_addr, p->regcmd_entries * 8);
    printf(" task core   rows (m0+n)    cols (n0+n)   input_off  weight_off  output_off  "
           "regcmd_off next\n");
    for (size_t i = 0; i < p->count; i++) {
        const npk_rk_plan_task *t = &p->tasks[i];
        char r[32], c[32];
        snprintf(r, sizeof r, "%u+%u", t->m0, t->mt);
        snprintf(c, sizeof c, "%u+%u", t->n0, t->nt);
        printf("%5zu %4d %14s %14s %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11u %4d\n", i,
               t->core, r, c, t->input_off, t->weight_off, t->output_off, t->regcmd_off, t->next);
    }
    for (int c = 0; c < p->cores; c++)
        printf("core %d: subcore_task[%d] = {%u, %u}, %" PRIu64 " MACs, PC_DATA_AMOUNT %u\n", c,
               npk_rknpu_subcore_slot(p->submit.core_mask, c), p->core_first[c], p->core_count[c],
               p->core_work[c],
               npk_rknpu_pc_data_amount(p->records[p->core_first[c]].regcfg_amount));
}

/* regcmd.bin, tasks.bin, submit.bin (and plan.json) in DIR, all or nothing. */
static int write_plan_files(const npk_rk_plan *p, const char *dir)
{
    npk_error err = {0};
    size_t n = p->regcmd_entries * 8;
    if (p->count * NPK_RKNPU_TASK_SIZE > n) n = p->count * NPK_RKNPU_TASK_SIZE;
    uint8_t *buf = malloc(n < NPK_RKNPU_SUBMIT_SIZE ? NPK_RKNPU_SUBMIT_SIZE : n);
    if (!buf) return cli_fail("out of memory");
    npk_outdir *d;
    if (npk_outdir_open(&d, dir, &err)) {
        free(buf);
        return cli_error(dir, &err);
    }
    npk_status st;
    npk_rk_stream_to_bin(p->regcmd, p->regcmd_entries, buf);
    st = npk_outdir_write(d, "regcmd.bin", buf, p->regcmd_entries * 8, &err);
    for (size_t i = 0; !st && i < p->count; i++)
        npk_rknpu_task_to_bytes(&p->records[i], buf + i * NPK_RKNPU_TASK_SIZE);
    if (!st) st = npk_outdir_write(d, "tasks.bin", buf, p->count * NPK_RKNPU_TASK_SIZE, &err);
    if (!st) {
        npk_rknpu_submit_to_bytes(&p->submit, buf);
        st = npk_outdir_write(d, "submit.bin", buf, NPK_RKNPU_SUBMIT_SIZE, &err);
    }
    free(buf);
#ifdef NPK_HAVE_CJSON
    if (!st) {
        cJSON *j = plan_json(p);
        char *s = cli_json_text(j, false);
        cJSON_Delete(j);
        size_t len = s ? strlen(s) : 0;
        char *t = s ? realloc(s, len + 2) : NULL;
        if (!t) {
            free(s);
            st = npk_fail(&err, NPK_E_NOMEM, "out of memory");
        } else {
            t[len] = '\n';
            st = npk_outdir_write(d, "plan.json", t, len + 1, &err);
            free(t);
        }
    }
#endif
    if (st) {
        npk_outdir_abort(d);
        return cli_error(dir, &err);
    }
    return npk_outdir_commit(d, &err) ? cli_error(dir, &err) : CLI_OK;
}

static int r_plan(int argc, char **argv)
{
    mm_args a;
    mm_defaults(&a);
    npk_rk_plan_opts o = {0};
    o.cores = 1;
    o.regcmd_addr = 0x40000000;
    const char *dir = NULL;
    bool json = false;
    static const struct option opts[] = {MM_LONG_OPTS,
                                         {"cores", required_argument, NULL, OPT_CORES},
                                         {"regcmd-addr", required_argument, NULL, OPT_REGCMD},
                                         {"max-m", required_argument, NULL, OPT_MAXM},
                                         {"max-n", required_argument, NULL, OPT_MAXN},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "m:k:n:o:", opts, NULL)) != -1) {
        int h = mm_option("rknpu plan", c, &a);
        if (h < 0) return CLI_FAIL;
        if (h) continue;
        uint32_t v;
        switch (c) {
        case 'o': dir = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_CORES:
            if (rknpu_opt_cores("rknpu plan", optarg, &o.cores)) return CLI_FAIL;
            break;
        case OPT_REGCMD:
        case OPT_MAXM:
        case OPT_MAXN:
            if (!parse_u32(optarg, &v)) return cli_usage("rknpu plan", "bad number '%s'", optarg);
            if (c == OPT_REGCMD)
                o.regcmd_addr = v;
            else if (c == OPT_MAXM)
                o.max_m = v;
            else
                o.max_n = v;
            break;
        default: return cli_bad_option("rknpu plan", argv);
        }
    }
    if (optind != argc) return cli_usage("rknpu plan", "unexpected argument '%s'", argv[optind]);
    if (!a.have_m || !a.have_k || !a.have_n) return cli_usage("rknpu plan", "need -m, -k and -n");
    if (json && !cli_json_available()) return cli_no_json();
    o.m = a.mm.m;
    o.k = a.mm.k;
    o.n = a.mm.n;
    o.dtype = a.mm.dtype;
    o.input_addr = a.mm.input_addr;
    o.weight_addr = a.mm.weight_addr;
    o.output_addr = a.mm.output_addr;
    npk_rk_plan p;
    npk_error err = {0};
    if (npk_rk_plan_make(&o, &p, &err)) return cli_error(NULL, &err);
    int rc = dir ? write_plan_files(&p, dir) : CLI_OK;
    if (rc == CLI_OK) {
#ifdef NPK_HAVE_CJSON
        if (json)
            cli_print_json(plan_json(&p), false);
        else
#endif
            plan_text(&p);
    }
    npk_rk_plan_free(&p);
    return rc;
}

/* ---- pack / unpack ---- */

typedef struct layout_kind {
    const char *name;
    bool weight;
    size_t esize, c2_or_group;
    npk_dtype dtype;
} layout_kind;

static const layout_kind layouts[] = {
    {"feature-fp16", false, 2, 8, NPK_F16}, {"feature-int8", false, 1, 16, NPK_I8},
    {"feature-fp32", false, 4, 4, NPK_F32}, {"feature-int32", false, 4, 4, NPK_I32},
    {"weight-fp16", true, 2, 16, NPK_F16},  {"weight-int8", true, 1, 32, NPK_I8},
};

static const layout_kind *find_layout(const char *name)
{
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (!strcmp(layouts[i].name, name)) return &layouts[i];
    return NULL;
}

/* The device buffers are little-endian; tensors are in host order. */
static void to_from_le(uint8_t *p, size_t bytes, size_t es)
{
    if (npk_host_is_le() || es == 1) return;
    for (size_t i = 0; i + es <= bytes; i += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

typedef struct layout_args {
    const layout_kind *kind;
    npk_rk_order order;
    size_t c2;
    const char *in, *out, *shape;
} layout_args;

static int layout_options(const char *cmd, int argc, char **argv, layout_args *a)
{
    memset(a, 0, sizeof *a);
    const char *layout = NULL, *order = NULL;
    uint32_t c2 = 0;
    static const struct option opts[] = {
        {"layout", required_argument, NULL, 'l'}, {"order", required_argument, NULL, 'r'},
        {"c2", required_argument, NULL, 'c'},     {"shape", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'l': layout = optarg; break;
        case 'r': order = optarg; break;
        case 's': a->shape = optarg; break;
        case 'o': a->out = optarg; break;
        case 'c':
            if (!parse_u32(optarg, &c2) || (c2 != 4 && c2 != 8 && c2 != 16))
                return cli_usage(cmd, "--c2 is 4, 8 or 16");
            break;
        default: return cli_bad_option(cmd, argv);
        }
    }
    if (optind + 1 != argc) return cli_usage(cmd, "expected one input file");
    a->in = argv[optind];
    if (!layout || !a->out) return cli_usage(cmd, "need --layout and -o");
    if (!(a->kind = find_layout(layout)))
        return cli_usage(cmd,
                         "unknown layout '%s' (feature-fp16, feature-int8, feature-fp32, "
                         "feature-int32, weight-fp16, weight-int8)",
                         layout);
    a->order = a->kind->weight ? NPK_RK_KN : NPK_RK_NHWC;
    if (order) {
        static const char *const names[] = {"nhwc", "nchw", "kn", "nk"};
        int found = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(order, names[i])) found = i;
        if (found < 0 || (found >= 2) != a->kind->weight)
            return cli_usage(cmd, "--order is %s for %s",
                             a->kind->weight ? "kn or nk" : "nhwc or nchw", layout);
        a->order = (npk_rk_order)found;
    }
    if (c2 && a->kind->weight) return cli_usage(cmd, "--c2 applies to feature layouts");
    a->c2 = c2 ? c2 : a->kind->c2_or_group;
    return CLI_OK;
}

/* Interpret a plain shape as a feature map or weight matrix; errors name
 * `file` (and the shape's offset in it, for a tensor read from a file). */
static int shape_of(const layout_args *a, const char *file, const npk_tensor *t, int ndim,
                    const int64_t *d, npk_rk_feature_shape *fs, npk_rk_weight_shape *ws)
{
    if (a->kind->weight) {
        if (ndim != 2)
            return cli_tensor_fail(file, t,
                                   "weights need a 2-D array (K x N, or N x K with --order nk), "
                                   "not %d-D",
                                   ndim);
        bool kn = a->order == NPK_RK_KN;
        *ws = (npk_rk_weight_shape){(size_t)(kn ? d[0] : d[1]), (size_t)(kn ? d[1] : d[0]),
                                    a->kind->c2_or_group, a->kind->esize};
        return CLI_OK;
    }
    size_t n = 1, c, h, w;
    bool nchw = a->order == NPK_RK_NCHW;
    if (ndim == 2 && !nchw) {
        h = (size_t)d[0], w = 1, c = (size_t)d[1];
    } else if (ndim == 3) {
        if (nchw)
            c = (size_t)d[0], h = (size_t)d[1], w = (size_t)d[2];
        else
            h = (size_t)d[0], w = (size_t)d[1], c = (size_t)d[2];
    } else if (ndim == 4) {
        n = (size_t)d[0];
        if (nchw)
            c = (size_t)d[1], h = (size_t)d[2], w = (size_t)d[3];
        else
            h = (size_t)d[1], w = (size_t)d[2], c = (size_t)d[3];
    } else {
        return cli_tensor_fail(file, t,
                               "feature maps need 2-D (M x K), 3-D or 4-D arrays, not %d-D", ndim);
    }
    *fs = (npk_rk_feature_shape){n, c, h, w, a->c2, a->kind->esize};
    return CLI_OK;
}

static int r_pack(int argc, char **argv)
{
    layout_args a;
    int rc = layout_options("rknpu pack", argc, argv, &a);
    if (rc) return rc;
    if (a.shape)
        return cli_usage("rknpu pack", "--shape is for unpack (pack reads it from the .npy)");
    npk_error err = {0};
    npk_tensor t, conv = {0};
    uint8_t *buf = NULL;
    if (npk_npy_load(a.in, &t, &err)) return cli_error(a.in, &err);
    npk_rk_feature_shape fs = {0};
    npk_rk_weight_shape ws = {0};
    if ((rc = shape_of(&a, a.in, &t, t.ndim, t.shape, &fs, &ws))) goto done;
    /* The shape first, so an unusable one is refused before any conversion. */
    npk_status st =
        a.kind->weight ? npk_rk_weight_check(&ws, &err) : npk_rk_feature_check(&fs, &err);
    if (st) {
        rc = cli_tensor_fail(a.in, &t, "%s", err.msg);
        goto done;
    }
    if (npk_tensor_alloc(&conv, NULL, a.kind->dtype, t.ndim, t.shape, &err) ||
        npk_tensor_convert(&t, &conv, &err)) {
        rc = cli_error(a.in, &err);
        goto done;
    }
    size_t bytes = conv.nbytes;
    if (!a.kind->weight) {
        npk_rk_feature_native_count(&fs, &bytes);
        bytes *= fs.esize;
    }
    if (!(buf = malloc(bytes ? bytes : 1))) {
        rc = cli_fail("out of memory");
        goto done;
    }
    st = a.kind->weight ? npk_rk_weight_pack(&ws, a.order, conv.data, buf, &err)
                        : npk_rk_feature_pack(&fs, a.order, conv.data, buf, &err);
    if (st) {
        rc = cli_error(a.in, &err);
        goto done;
    }
    to_from_le(buf, bytes, a.kind->esize);
    if (npk_write_file(a.out, buf, bytes, &err)) rc = cli_error(a.out, &err);
done:
    free(buf);
    npk_tensor_free(&t);
    npk_tensor_free(&conv); /* was leaked when the conversion failed */
    return rc;
}

static int r_unpack(int argc, char **argv)
{
    layout_args a;
    int rc = layout_options("rknpu unpack", argc, argv, &a);
    if (rc) return rc;
    if (!a.shape) return cli_usage("rknpu unpack", "need --shape D0,D1,... (the plain shape)");
    int64_t d[NPK_MAX_DIMS];
    int ndim = 0;
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", a.shape);
    for (char *tok = strtok(tmp, ",x"); tok; tok = strtok(NULL, ",x")) {
        uint64_t v;
        if (ndim >= NPK_MAX_DIMS || !cli_parse_u64(tok, &v) || v == 0 || v > ((uint64_t)1 << 40))
            return cli_usage("rknpu unpack", "bad --shape '%s'", a.shape);
        d[ndim++] = (int64_t)v;
    }
    npk_rk_feature_shape fs = {0};
    npk_rk_weight_shape ws = {0};
    if ((rc = shape_of(&a, NULL, NULL, ndim, d, &fs, &ws))) return rc;
    npk_error err = {0};
    npk_status st =
        a.kind->weight ? npk_rk_weight_check(&ws, &err) : npk_rk_feature_check(&fs, &err);
    if (st) return cli_error(NULL, &err);
    size_t need = ws.k * ws.n * ws.esize;
    if (!a.kind->weight) {
        npk_rk_feature_native_count(&fs, &need);
        need *= fs.esize;
    }
    npk_mapped m;
    if (npk_map_file(a.in, &m, &err)) return cli_error(a.in, &err);
    if (m.size != need) {
        npk_fail_at(&err, NPK_E_FORMAT, m.size < need ? m.size : need,
                    "%s buffer of shape %s must be %zu bytes, file has %zu", a.kind->name, a.shape,
                    need, m.size);
        npk_unmap_file(&m);
        return cli_error(a.in, &err);
    }
    npk_tensor t;
    uint8_t *buf = malloc(need ? need : 1);
    if (!buf || npk_tensor_alloc(&t, NULL, a.kind->dtype, ndim, d, &err)) {
        free(buf);
        npk_unmap_file(&m);
        return buf ? cli_error(NULL, &err) : cli_fail("out of memory");
    }
    memcpy(buf, m.data, need);
    npk_unmap_file(&m);
    to_from_le(buf, need, a.kind->esize);
    st = a.kind->weight ? npk_rk_weight_unpack(&ws, a.order, buf, t.data, &err)
                        : npk_rk_feature_unpack(&fs, a.order, buf, t.data, &err);
    if (!st) st = npk_npy_save(a.out, &t, &err);
    rc = st ? cli_error(a.out, &err) : CLI_OK;
    free(buf);
    npk_tensor_free(&t);
    return rc;
}
