/* npukit tensor: inspect, convert and generate .npy / safetensors files. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "commands.h"

static int t_info(int argc, char **argv);
static int t_convert(int argc, char **argv);
static int t_random(int argc, char **argv);

static const cli_subcommand subs[] = {
    {"info", "FILE [--json]", "list the tensors of a .npy or safetensors file", t_info},
    {"convert", "IN... -o OUT [--dtype D]",
     "convert between .npy and safetensors. IN is FILE or NAME=FILE.npy; a safetensors\n"
     "      input with several tensors needs --name to pick one for a .npy output",
     t_convert},
    {"random",
     "--shape D0,D1,... -o OUT.npy [--dtype f32|f16|i8|u8|i32] [--seed N] [--min A] [--max B]",
     "write a tensor of deterministic pseudo-random values (uniform in [min, max))", t_random},
};

void cmd_tensor_help(FILE *out)
{
    cli_group_help(out, "tensor", "Inspect, convert and generate tensors (.npy and safetensors).",
                   subs, (int)(sizeof subs / sizeof subs[0]));
}

int cmd_tensor(int argc, char **argv)
{
    return cli_dispatch("tensor", subs, (int)(sizeof subs / sizeof subs[0]), argc, argv);
}

static bool is_safetensors_name(const char *path)
{
    size_t n = strlen(path);
    return n >= 12 && strcmp(path + n - 12, ".safetensors") == 0;
}

static bool is_npy_name(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

/* Load FILE as a set: a .npy gives one tensor named `name`. Detects by bytes.
 * header_only: names, dtypes and shapes without the data (for listings). */
static int load_any(const char *path, const char *name, bool header_only, npk_tensor_set *set)
{
    npk_error err = {0};
    npk_mapped m;
    npk_set_init(set);
    if (npk_map_file(path, &m, &err)) return cli_error(path, &err);
    npk_status st;
    const npk_format *f = npk_detect(m.data, m.size);
    bool npy = f && !strcmp(f->name, "npy"), st_file = f && !strcmp(f->name, "safetensors");
    if (!npy && !st_file) {
        /* Not recognised: a damaged file named like one of the two (or with
         * the start of the npy magic) gets its parser's error and offset. */
        npy =
            is_npy_name(path) || (m.size && !memcmp(m.data, "\x93NUMPY", m.size < 6 ? m.size : 6));
        st_file = !npy && is_safetensors_name(path);
    }
    if (!npy && !st_file) {
        npk_unmap_file(&m);
        npk_fail_at(&err, NPK_E_FORMAT, 0, "not a .npy or safetensors file (detected: %s)",
                    f ? f->name : "unknown");
        return cli_error(path, &err);
    }
    if (npy && header_only) {
        npk_npy_header h;
        npk_tensor t = {0};
        st = npk_npy_parse_header(m.data, m.size, &h, &err);
        if (!st) {
            t.dtype = h.dtype;
            t.ndim = h.ndim;
            memcpy(t.shape, h.shape, sizeof t.shape);
            t.nbytes = h.nbytes;
            t.name = strdup(name ? name : "tensor");
            st = npk_set_add(set, &t, &err);
            if (st) npk_tensor_free(&t);
        }
    } else if (npy) {
        npk_tensor t;
        st = npk_npy_parse(m.data, m.size, &t, &err);
        if (!st) {
            t.name = strdup(name ? name : "tensor");
            st = npk_set_add(set, &t, &err);
            if (st) npk_tensor_free(&t);
        }
    } else {
        st = header_only ? npk_st_parse_header(m.data, m.size, set, &err)
                         : npk_st_parse(m.data, m.size, set, &err);
    }
    npk_unmap_file(&m);
    return st ? cli_error(path, &err) : CLI_OK;
}

static int t_info(int argc, char **argv)
{
    bool json = false;
    if (cli_args_json("tensor info", argc, argv, &json)) return CLI_FAIL;
    if (optind + 1 != argc) return cli_usage("tensor info", "expected one FILE");
    if (json && !cli_json_available()) return cli_no_json();
    npk_tensor_set set;
    int rc = load_any(argv[optind], NULL, true, &set);
    if (rc) return rc;
#ifdef NPK_HAVE_CJSON
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < set.count; i++) {
            npk_tensor *t = &set.items[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", t->name ? t->name : "");
            cJSON_AddStringToObject(o, "dtype", npk_dtype_name(t->dtype));
            cJSON *sh = cJSON_AddArrayToObject(o, "shape");
            for (int d = 0; d < t->ndim; d++)
                cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
            cli_json_u64(o, "bytes", t->nbytes);
            cJSON_AddItemToArray(arr, o);
        }
        cli_print_json(arr, false);
    } else
#endif
        for (size_t i = 0; i < set.count; i++) {
            char shape[256];
            npk_tensor *t = &set.items[i];
            printf("%s\t%s\t%s\t%zu bytes\n", t->name ? t->name : "", npk_dtype_name(t->dtype),
                   npk_shape_str(t, shape, sizeof shape), t->nbytes);
        }
    npk_set_free(&set);
    return CLI_OK;
}

/* Convert a tensor's elements to another dtype (numeric conversion). */
static int cast_tensor(npk_tensor *t, npk_dtype to, npk_error *err)
{
    if (t->dtype == to) return NPK_OK;
    npk_tensor r;
    npk_status st = npk_tensor_alloc(&r, t->name, to, t->ndim, t->shape, err);
    if (st) return st;
    st = npk_tensor_convert(t, &r, err);
    if (st) {
        npk_tensor_free(&r);
        return st;
    }
    npk_tensor_free(t);
    *t = r;
    return NPK_OK;
}

static int t_convert(int argc, char **argv)
{
    const char *out = NULL, *pick = NULL, *dtype = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"name", required_argument, NULL, 'n'},
                                         {"dtype", required_argument, NULL, 'd'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'n')
            pick = optarg;
        else if (c == 'd')
            dtype = optarg;
        else
            return cli_bad_option("tensor convert", argv);
    }
    if (!out) return cli_usage("tensor convert", "missing -o OUT");
    if (optind >= argc) return cli_usage("tensor convert", "no input given");
    npk_dtype to = NPK_DT_INVALID;
    if (dtype && (to = npk_dtype_from_name(dtype)) == NPK_DT_INVALID)
        return cli_usage("tensor convert", "unknown dtype '%s'", dtype);

    npk_tensor_set all;
    npk_set_init(&all);
    npk_error err = {0};
    int rc = CLI_OK;
    /* The file each tensor of `all` came from, for errors about it. */
    const char **from = calloc(NPK_MAX_TENSORS, sizeof *from);
    if (!from) return cli_fail("out of memory");
    for (int i = optind; i < argc && rc == CLI_OK; i++) {
        char *arg = argv[i], *eq = strchr(arg, '=');
        const char *path = eq ? eq + 1 : arg;
        char *name = NULL;
        if (eq)
            name = strndup(arg, (size_t)(eq - arg));
        else {
            const char *base = strrchr(path, '/');
            base = base ? base + 1 : path;
            const char *dot = strrchr(base, '.');
            name = strndup(base, dot ? (size_t)(dot - base) : strlen(base));
        }
        npk_tensor_set one;
        rc = load_any(path, name, false, &one);
        free(name);
        for (size_t k = 0; rc == CLI_OK && k < one.count; k++) {
            if (npk_set_find(&all, one.items[k].name)) {
                rc = cli_fail("%s: duplicate tensor name '%s'", path, one.items[k].name);
                break;
            }
            from[all.count] = path;
            if (npk_set_add(&all, &one.items[k], &err)) rc = cli_error(path, &err);
        }
        npk_set_free(&one);
    }
    for (size_t k = 0; rc == CLI_OK && to != NPK_DT_INVALID && k < all.count; k++)
        if (cast_tensor(&all.items[k], to, &err)) rc = cli_error(from[k], &err);
    if (rc == CLI_OK) {
        npk_status st;
        if (is_safetensors_name(out)) {
            st = npk_st_save(out, all.items, all.count, &err);
        } else {
            npk_tensor *t = NULL;
            if (pick)
                t = npk_set_find(&all, pick);
            else if (all.count == 1)
                t = &all.items[0];
            if (!t) {
                npk_set_free(&all);
                free(from);
                if (!pick)
                    return cli_usage("tensor convert",
                                     "%zu tensors: choose one with --name for a .npy output",
                                     all.count);
                if (argc - optind == 1)
                    return cli_fail("%s: no tensor named '%s'", argv[optind], pick);
                return cli_fail("no tensor named '%s' in any of the %d inputs", pick,
                                argc - optind);
            }
            st = npk_npy_save(out, t, &err);
        }
        if (st) rc = cli_error(out, &err);
    }
    npk_set_free(&all);
    free(from);
    return rc;
}

static int parse_shape(const char *s, int *ndim, int64_t *shape)
{
    *ndim = 0;
    if (!*s) return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ",x"); tok; tok = strtok(NULL, ",x")) {
        int64_t v;
        if (*ndim >= NPK_MAX_DIMS || !cli_parse_i64(tok, &v) || v < 0) return -1;
        shape[(*ndim)++] = v;
    }
    return 0;
}

static int t_random(int argc, char **argv)
{
    const char *out = NULL, *shape_s = NULL, *dtype = "f32";
    uint64_t seed = 1;
    double lo = -1.0, hi = 1.0;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"shape", required_argument, NULL, 's'},
                                         {"dtype", required_argument, NULL, 'd'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"min", required_argument, NULL, 'a'},
                                         {"max", required_argument, NULL, 'b'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 's': shape_s = optarg; break;
        case 'd': dtype = optarg; break;
        case 'S':
            if (!cli_parse_u64(optarg, &seed)) return cli_usage("tensor random", "bad --seed");
            break;
        case 'a':
            if (!cli_parse_double(optarg, &lo)) return cli_usage("tensor random", "bad --min");
            break;
        case 'b':
            if (!cli_parse_double(optarg, &hi)) return cli_usage("tensor random", "bad --max");
            break;
        default: return cli_bad_option("tensor random", argv);
        }
    }
    if (!out || !shape_s) return cli_usage("tensor random", "need --shape and -o");
    if (optind != argc) return cli_usage("tensor random", "unexpected argument '%s'", argv[optind]);
    int ndim;
    int64_t shape[NPK_MAX_DIMS];
    if (parse_shape(shape_s, &ndim, shape)) return cli_usage("tensor random", "bad --shape");
    npk_dtype dt = npk_dtype_from_name(dtype);
    if (dt == NPK_DT_INVALID) return cli_usage("tensor random", "unknown dtype '%s'", dtype);
    if (!(hi > lo)) return cli_usage("tensor random", "--max must be greater than --min");
    npk_error err = {0};
    npk_tensor f, t;
    if (npk_tensor_alloc(&f, "random", NPK_F64, ndim, shape, &err)) return cli_error(NULL, &err);
    double *v = f.data;
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0, n = npk_tensor_count(&f); i < n; i++) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        double u = (double)((state * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
        v[i] = lo + (hi - lo) * u;
    }
    int rc = CLI_OK;
    if (npk_tensor_alloc(&t, "random", dt, ndim, shape, &err) || npk_tensor_convert(&f, &t, &err))
        rc = cli_error(NULL, &err);
    else if ((is_safetensors_name(out) ? npk_st_save(out, &t, 1, &err)
                                       : npk_npy_save(out, &t, &err)))
        rc = cli_error(out, &err);
    npk_tensor_free(&f);
    npk_tensor_free(&t);
    return rc;
}
