/* npukit edgetpu: Coral Edge TPU models: inspect, weights, reference execution.
 * A thin layer over libnpukit's edgetpu.h: option parsing, printing, files. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "cli_views.h"
#include "commands.h"
#include "npukit/edgetpu.h"

static int e_info(int argc, char **argv);
static int e_weights(int argc, char **argv);
static int e_set_weights(int argc, char **argv);
static int e_matmul(int argc, char **argv);
static int e_synth(int argc, char **argv);
/* cmd_edgetpu_usb.c, cmd_edgetpu_run.c */
int cmd_edgetpu_devices(int argc, char **argv);
int cmd_edgetpu_run(int argc, char **argv);

static const cli_subcommand subs[] = {
    {"info", "MODEL [--json]",
     "everything about each Edge TPU op: packages, executables (type, token, bitstreams and\n"
     "      field offsets, parameters, DMA hints, layers) plus the TFLite tensors and operators",
     e_info},
    {"weights", "MODEL -o W.npy [--float]",
     "write the int8 weights [out, in] of a Dense template's parameter blob (--float: float32,\n"
     "      dequantised with each output channel's scale)",
     e_weights},
    {"set-weights", "MODEL --weights W.npy -o OUT_edgetpu.tflite",
     "write a copy of a Dense template with new weights [out, in]: int8 used as is; float16,\n"
     "      float32 or float64 quantised per output channel (clipped values are counted; NaN\n"
     "      is refused). Other dtypes are refused. Only parameter bytes change",
     e_set_weights},
    {"matmul", "MODEL --input X.npy [--weights W.npy] -o Y.npy",
     "run a Dense template on the CPU as the Edge TPU computes it: X float32 [N] or [B, N] is\n"
     "      quantised with the model's input parameters, Y = dequantised output (float32)",
     e_matmul},
    {"synth-dense", "--size N -o OUT.tflite [--flex-width 1|2|4|8] [--chip-keys]",
     "write a SYNTHETIC N x N Dense model in the layout of a compiled template (EO + PC\n"
     "      executables, zero-filled bitstreams, golden weight pattern). For tests and demos:\n"
     "      it is not compiler output and cannot run on a device. --chip-keys adds the\n"
     "      FlexBuffer keys \"6\" = [18] and \"7\" = [] of newer compilers",
     e_synth},
    {"devices", "[--json]",
     "list Coral USB accelerators and their mode (application, or DFU/bootloader: needs\n"
     "      firmware); finding none is not an error",
     cmd_edgetpu_devices},
    {"run",
     "MODEL [MODEL ...] (--input [NAME=]X.npy ... | --image PICTURE) [-o OUT]\n"
     "      [--device usb|emu] [--cpu-model UNCOMPILED.tflite] [--firmware PATH] [--repeat N]\n"
     "      [--raw] [--threads N] [--timeout MS] " CLI_VIEW_USAGE,
     "run the whole model: each Edge TPU op on an accelerator (usb) or the emulated one (emu),\n"
     "      following its DMA hints, every other op on the interpreter; several models form a\n"
     "      pipeline (each model's inputs taken by name from the outputs of the ones before).\n"
     "      Prints each run's latency (parameters are uploaded once per caching token).\n"
     "      Inputs: the graph input's type, or float32 (quantised with its quantisation);\n"
     "      --input X.npy fills the next input, NAME=X.npy a named one; --image a picture,\n"
     "      resized to the picture input. Outputs: quantised ones dequantised to float32 (--raw:\n"
     "      their own type); OUT.npy for one output, else a directory of NAME.npy (long names\n"
     "      cut with a hash suffix, kept unique; written all or nothing) or OUT.safetensors. "
     "--cpu-model: the emulator answers each Edge TPU op with the\n"
     "      interpreter's result for the part of the uncompiled model the op replaced.\n"
     "      Task views: --classify LABELS (top --top K), --detect LABELS, --pose, --segment\n"
     "      (--draw OUT.png draws them on the picture), --json. --firmware: DFU image for a\n"
     "      device in bootloader mode (npukit does not ship it; the emulator then starts in\n"
     "      DFU mode)",
     cmd_edgetpu_run},
};

void cmd_edgetpu_help(FILE *out)
{
    cli_group_help(out, "edgetpu",
                   "Coral Edge TPU models (*_edgetpu.tflite): inspect, weights, reference "
                   "execution, USB runtime.",
                   subs, (int)(sizeof subs / sizeof subs[0]));
}

int cmd_edgetpu(int argc, char **argv)
{
    return cli_dispatch("edgetpu", subs, (int)(sizeof subs / sizeof subs[0]), argc, argv);
}

/* A mapped and parsed model. */
typedef struct loaded {
    const char *path;
    npk_mapped map;
    npk_etpu_model m;
} loaded;

static int load(const char *path, loaded *l)
{
    npk_error err = {0};
    memset(l, 0, sizeof *l);
    l->path = path;
    if (npk_map_file(path, &l->map, &err)) return cli_error(path, &err);
    if (npk_etpu_parse(l->map.data, l->map.size, &l->m, &err)) {
        npk_unmap_file(&l->map);
        return cli_error(path, &err);
    }
    return CLI_OK;
}

static void unload(loaded *l)
{
    npk_etpu_free(&l->m);
    npk_unmap_file(&l->map);
}

static const char *str_or(const char *s, const char *def)
{
    return s ? s : def;
}

/* ---- info: text ---- */

static void print_meta(const npk_etpu_meta *m)
{
    printf("%s %s batch %d", npk_etpu_desc_name(m->desc), npk_etpu_position_name(m->position),
           m->batch);
    if (m->name) printf(" \"%s\"", m->name);
}

static void print_ints(const char *label, const int32_t *v, uint32_t n)
{
    printf("          %s [", label);
    for (uint32_t i = 0; i < n; i++) printf(i ? ", %d" : "%d", v[i]);
    printf("]\n");
}

static void print_layer(const char *kind, uint32_t i, const npk_etpu_layer *l)
{
    printf("      %s %u \"%s\": %d bytes, y %d x %d z %d, %s", kind, i, l->name, l->size_bytes,
           l->y_dim, l->x_dim, l->z_dim, npk_etpu_data_type_name(l->data_type));
    if (l->has_numerics)
        printf(", zero point %d, dequantization %.9g", l->zero_point, l->dequantization_factor);
    if (l->execution_count_per_inference != 1)
        printf(", executed %d times", l->execution_count_per_inference);
    if (l->cache_on_dram) printf(", cached on DRAM");
    printf("\n");
    if (l->ndims) {
        printf("        shape");
        for (uint32_t d = 0; d < l->ndims; d++)
            printf(" [%d..%d]", l->shape[d].start, l->shape[d].end);
        printf("\n");
    }
    if (l->has_layout) {
        const npk_etpu_output_layout *t = &l->layout;
        printf("        output layout (%u slices):\n", l->nslices);
        print_ints("y_coordinate_to_linear_tile_id_map", t->y_tile, t->ny_tile);
        print_ints("x_coordinate_to_linear_tile_id_map", t->x_tile, t->nx_tile);
        print_ints("linearized_tile_byte_offset", t->tile_byte_offset, t->ntile_byte_offset);
        print_ints("x_coordinate_to_local_byte_offset", t->x_local_byte, t->nx_local_byte);
        print_ints("y_coordinate_to_local_y_offset", t->y_local, t->ny_local);
        print_ints("x_coordinate_to_local_y_row_size", t->x_row_size, t->nx_row_size);
    }
}

static void print_executable(uint32_t i, const npk_etpu_executable *e)
{
    printf("    executable %u: %s \"%s\", token 0x%016" PRIx64 ", chip %s, version %d\n", i,
           npk_etpu_exec_type_name(e->type), str_or(e->name, ""), e->parameter_caching_token,
           str_or(e->chip, "-"), e->version);
    printf("      batch %d, scratch %d bytes, parameters %zu bytes", e->batch_size,
           e->scratch_size_bytes, e->parameters_size);
    if (e->parameters) printf(" at file offset %" PRIu64, e->parameters_offset);
    printf(", narrow memory/tile %d, estimated cycles %" PRId64 "%s\n",
           e->used_narrow_memory_bytes_per_tile,
           e->estimated_cycles_64bit ? e->estimated_cycles_64bit : e->estimated_cycles,
           e->use_tpu_dram_for_parameters ? ", parameters on TPU DRAM" : "");
    for (uint32_t b = 0; b < e->nbitstreams; b++) {
        const npk_etpu_bitstream *bs = &e->bitstreams[b];
        printf("      bitstream %u: %zu bytes at file offset %" PRIu64 ", %u field offsets\n", b,
               bs->size, bs->offset, bs->nfields);
        for (uint32_t f = 0; f < bs->nfields; f++) {
            printf("        bit %d: ", bs->fields[f].offset_bit);
            print_meta(&bs->fields[f].meta);
            printf("\n");
        }
    }
    if (e->has_dma_hints) {
        printf("      DMA hints (%u, %sfully deterministic):\n", e->nhints,
               e->fully_deterministic ? "" : "not ");
        for (uint32_t h = 0; h < e->nhints; h++) {
            const npk_etpu_dma_hint *d = &e->hints[h];
            printf("        %u: %s %s", h, npk_etpu_direction_name(d->direction),
                   npk_etpu_hint_name(d->kind));
            if (d->kind == NPK_ETPU_HINT_DMA) {
                printf(" ");
                print_meta(&d->meta);
                printf(", offset %d, size %d", d->offset_in_bytes, d->size_in_bytes);
            } else if (d->kind == NPK_ETPU_HINT_INSTRUCTION) {
                printf(" chunk %d", d->instruction_chunk_index);
            } else if (d->kind == NPK_ETPU_HINT_INTERRUPT) {
                printf(" SCALAR_CORE_INT_%d", d->interrupt_type);
            }
            printf("\n");
        }
    }
    for (uint32_t l = 0; l < e->ninputs; l++) print_layer("input", l, &e->inputs[l]);
    for (uint32_t l = 0; l < e->noutputs; l++) print_layer("output", l, &e->outputs[l]);
}

static void print_package(const char *indent, uint32_t i, const npk_etpu_package *p)
{
    printf("%spackage %u: %zu bytes at file offset %" PRIu64
           ", min runtime %d, compiler \"%s\", virtual chip %d, %u executables",
           indent, i, p->size, p->offset, p->min_runtime_version, str_or(p->compiler_version, ""),
           p->virtual_chip_id, p->nexecutables);
    if (p->signature_size) printf(", signature %zu bytes", p->signature_size);
    if (p->model_identifier) printf(", model \"%s\"", p->model_identifier);
    printf("\n");
    for (uint32_t e = 0; e < p->nexecutables; e++) print_executable(e, &p->executables[e]);
    for (uint32_t k = 0; k < p->nmulti_chip; k++)
        print_package("    multi-chip ", k, &p->multi_chip[k]);
}

static void print_tflite(const npk_tfl_model *t)
{
    printf("TFLite version %u, \"%s\", %u operator codes, %u subgraphs, %u buffers\n", t->version,
           t->description, t->nopcodes, t->nsubgraphs, t->nbuffers);
    for (uint32_t i = 0; i < t->nopcodes; i++) {
        const npk_tfl_opcode *oc = &t->opcodes[i];
        const char *name = npk_tfl_builtin_name(oc->builtin);
        printf("  opcode %u: %s%s%s (builtin %d, deprecated %d, version %d)\n", i,
               name ? name : "?", oc->custom_code ? " " : "", str_or(oc->custom_code, ""),
               oc->builtin, oc->deprecated_builtin_code, oc->version);
    }
    for (uint32_t s = 0; s < t->nsubgraphs; s++) {
        const npk_tfl_subgraph *sg = &t->subgraphs[s];
        printf("  subgraph %u \"%s\": %u tensors, %u operators\n", s, sg->name, sg->ntensors,
               sg->noperators);
        for (uint32_t i = 0; i < sg->ntensors; i++) {
            const npk_tfl_tensor *x = &sg->tensors[i];
            printf("    tensor %u \"%s\" %s [", i, x->name, npk_tfl_type_name(x->type));
            for (uint32_t d = 0; d < x->ndim; d++) printf(d ? ", %d" : "%d", x->shape[d]);
            printf("] buffer %u", x->buffer);
            if (x->has_quant && x->q.nscale) {
                printf(", scale %.9g", x->q.scale[0]);
                if (x->q.nzero) printf(" zero point %" PRId64, x->q.zero_point[0]);
                if (x->q.nscale > 1)
                    printf(" (%u scales, dimension %d)", x->q.nscale, x->q.quantized_dimension);
            }
            printf("\n");
        }
        for (uint32_t i = 0; i < sg->noperators; i++) {
            const npk_tfl_operator *op = &sg->operators[i];
            const npk_tfl_opcode *oc = npk_tfl_op_code(t, op);
            const char *name =
                oc->custom_code ? oc->custom_code : npk_tfl_builtin_name(oc->builtin);
            printf("    operator %u: %s inputs [", i, name ? name : "?");
            for (uint32_t k = 0; k < op->ninputs; k++) printf(k ? ", %d" : "%d", op->inputs[k]);
            printf("] outputs [");
            for (uint32_t k = 0; k < op->noutputs; k++) printf(k ? ", %d" : "%d", op->outputs[k]);
            printf("]");
            if (op->custom_options)
                printf(", custom options %zu bytes at file offset %" PRIu64, op->custom_options_len,
                       op->custom_options_offset);
            printf("\n");
        }
    }
}

/* ---- info: JSON ---- */
#ifdef NPK_HAVE_CJSON
static cJSON *json_ints(const int32_t *v, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void json_meta(cJSON *o, const npk_etpu_meta *m)
{
    cJSON_AddStringToObject(o, "desc", npk_etpu_desc_name(m->desc));
    cJSON_AddStringToObject(o, "position", npk_etpu_position_name(m->position));
    if (m->name)
        cJSON_AddStringToObject(o, "name", m->name);
    else
        cJSON_AddNullToObject(o, "name");
    cJSON_AddNumberToObject(o, "batch", m->batch);
}

static cJSON *json_layer(const npk_etpu_layer *l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", l->name);
    cJSON_AddNumberToObject(o, "size_bytes", l->size_bytes);
    cJSON_AddNumberToObject(o, "y_dim", l->y_dim);
    cJSON_AddNumberToObject(o, "x_dim", l->x_dim);
    cJSON_AddNumberToObject(o, "z_dim", l->z_dim);
    cJSON_AddStringToObject(o, "data_type", npk_etpu_data_type_name(l->data_type));
    if (l->has_numerics) {
        cJSON *n = cJSON_AddObjectToObject(o, "numerics");
        cJSON_AddNumberToObject(n, "zero_point", l->zero_point);
        cJSON_AddNumberToObject(n, "dequantization_factor", l->dequantization_factor);
    }
    cJSON_AddNumberToObject(o, "execution_count_per_inference", l->execution_count_per_inference);
    cJSON_AddBoolToObject(o, "cache_on_dram", l->cache_on_dram);
    cJSON *sh = cJSON_AddArrayToObject(o, "shape");
    for (uint32_t d = 0; d < l->ndims; d++) {
        cJSON *r = cJSON_CreateArray();
        cJSON_AddItemToArray(r, cJSON_CreateNumber(l->shape[d].start));
        cJSON_AddItemToArray(r, cJSON_CreateNumber(l->shape[d].end));
        cJSON_AddItemToArray(sh, r);
    }
    if (l->has_layout) {
        const npk_etpu_output_layout *t = &l->layout;
        cJSON *lo = cJSON_AddObjectToObject(o, "output_layout");
        cJSON_AddItemToObject(lo, "y_coordinate_to_linear_tile_id_map",
                              json_ints(t->y_tile, t->ny_tile));
        cJSON_AddItemToObject(lo, "x_coordinate_to_linear_tile_id_map",
                              json_ints(t->x_tile, t->nx_tile));
        cJSON_AddItemToObject(lo, "linearized_tile_byte_offset",
                              json_ints(t->tile_byte_offset, t->ntile_byte_offset));
        cJSON_AddItemToObject(lo, "x_coordinate_to_local_byte_offset",
                              json_ints(t->x_local_byte, t->nx_local_byte));
        cJSON_AddItemToObject(lo, "y_coordinate_to_local_y_offset",
                              json_ints(t->y_local, t->ny_local));
        cJSON_AddItemToObject(lo, "x_coordinate_to_local_y_row_size",
                              json_ints(t->x_row_size, t->nx_row_size));
        cJSON_AddNumberToObject(lo, "slices", l->nslices);
    }
    return o;
}

static cJSON *json_executable(const npk_etpu_executable *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", npk_etpu_exec_type_name(e->type));
    cli_json_hex(o, "token", e->parameter_caching_token);
    if (e->name)
        cJSON_AddStringToObject(o, "name", e->name);
    else
        cJSON_AddNullToObject(o, "name");
    if (e->chip) cJSON_AddStringToObject(o, "chip", e->chip);
    cJSON_AddNumberToObject(o, "version", e->version);
    cJSON_AddNumberToObject(o, "batch_size", e->batch_size);
    cJSON_AddNumberToObject(o, "scratch_size", e->scratch_size_bytes);
    cli_json_u64(o, "parameters_size", e->parameters_size);
    if (e->parameters) cli_json_u64(o, "parameters_offset", e->parameters_offset);
    cJSON_AddNumberToObject(o, "used_narrow_memory_bytes_per_tile",
                            e->used_narrow_memory_bytes_per_tile);
    cJSON_AddNumberToObject(o, "estimated_cycles", (double)e->estimated_cycles);
    cJSON_AddNumberToObject(o, "estimated_cycles_64bit", (double)e->estimated_cycles_64bit);
    cJSON_AddBoolToObject(o, "use_tpu_dram_for_parameters", e->use_tpu_dram_for_parameters);
    cJSON *bsa = cJSON_AddArrayToObject(o, "bitstreams");
    for (uint32_t b = 0; b < e->nbitstreams; b++) {
        const npk_etpu_bitstream *bs = &e->bitstreams[b];
        cJSON *bo = cJSON_CreateObject();
        cli_json_u64(bo, "size", bs->size);
        cli_json_u64(bo, "offset", bs->offset);
        cJSON *fa = cJSON_AddArrayToObject(bo, "field_offsets");
        for (uint32_t f = 0; f < bs->nfields; f++) {
            cJSON *fo = cJSON_CreateObject();
            json_meta(fo, &bs->fields[f].meta);
            cJSON_AddNumberToObject(fo, "offset_bit", bs->fields[f].offset_bit);
            cJSON_AddItemToArray(fa, fo);
        }
        cJSON_AddItemToArray(bsa, bo);
    }
    cJSON *ha = cJSON_AddArrayToObject(o, "dma_hints");
    for (uint32_t h = 0; h < e->nhints; h++) {
        const npk_etpu_dma_hint *d = &e->hints[h];
        cJSON *ho = cJSON_CreateObject();
        cJSON_AddStringToObject(ho, "kind", npk_etpu_hint_name(d->kind));
        cJSON_AddStringToObject(ho, "direction", npk_etpu_direction_name(d->direction));
        if (d->kind == NPK_ETPU_HINT_DMA) {
            json_meta(ho, &d->meta);
            cJSON_AddNumberToObject(ho, "offset", d->offset_in_bytes);
            cJSON_AddNumberToObject(ho, "size", d->size_in_bytes);
        } else if (d->kind == NPK_ETPU_HINT_INSTRUCTION) {
            cJSON_AddNumberToObject(ho, "instruction_chunk_index", d->instruction_chunk_index);
        } else if (d->kind == NPK_ETPU_HINT_INTERRUPT) {
            cJSON_AddNumberToObject(ho, "interrupt_type", d->interrupt_type);
        }
        cJSON_AddItemToArray(ha, ho);
    }
    cJSON_AddBoolToObject(o, "fully_deterministic", e->fully_deterministic);
    cJSON *ia = cJSON_AddArrayToObject(o, "input_layers");
    for (uint32_t l = 0; l < e->ninputs; l++) cJSON_AddItemToArray(ia, json_layer(&e->inputs[l]));
    cJSON *oa = cJSON_AddArrayToObject(o, "output_layers");
    for (uint32_t l = 0; l < e->noutputs; l++) cJSON_AddItemToArray(oa, json_layer(&e->outputs[l]));
    return o;
}

/* A package as JSON; its executables also go (with op/package indices) to `all`. */
static cJSON *json_package(const npk_etpu_package *p, uint32_t op, uint32_t pk, cJSON *all)
{
    cJSON *o = cJSON_CreateObject();
    cli_json_u64(o, "offset", p->offset);
    cli_json_u64(o, "size", p->size);
    cJSON_AddNumberToObject(o, "min_runtime_version", p->min_runtime_version);
    if (p->compiler_version) cJSON_AddStringToObject(o, "compiler_version", p->compiler_version);
    if (p->model_identifier) cJSON_AddStringToObject(o, "model_identifier", p->model_identifier);
    cJSON_AddNumberToObject(o, "virtual_chip_id", p->virtual_chip_id);
    cJSON_AddNumberToObject(o, "keypair_version", p->keypair_version);
    cli_json_u64(o, "signature_size", p->signature_size);
    cJSON *ea = cJSON_AddArrayToObject(o, "executables");
    for (uint32_t e = 0; e < p->nexecutables; e++) {
        cJSON_AddItemToArray(ea, json_executable(&p->executables[e]));
        cJSON *x = json_executable(&p->executables[e]);
        cJSON_AddNumberToObject(x, "op", op);
        cJSON_AddNumberToObject(x, "package", pk);
        cJSON_AddItemToArray(all, x);
    }
    cJSON *ma = cJSON_AddArrayToObject(o, "multi_chip_packages");
    for (uint32_t k = 0; k < p->nmulti_chip; k++)
        cJSON_AddItemToArray(ma, json_package(&p->multi_chip[k], op, pk, all));
    return o;
}

static cJSON *json_model(const npk_etpu_model *m)
{
    const npk_tfl_model *t = &m->tfl;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "version", t->version);
    cJSON_AddStringToObject(o, "description", t->description);
    cJSON *oca = cJSON_AddArrayToObject(o, "operator_codes");
    for (uint32_t i = 0; i < t->nopcodes; i++) {
        const npk_tfl_opcode *oc = &t->opcodes[i];
        cJSON *c = cJSON_CreateObject();
        const char *name = npk_tfl_builtin_name(oc->builtin);
        cJSON_AddNumberToObject(c, "builtin_code", oc->builtin);
        if (name) cJSON_AddStringToObject(c, "builtin", name);
        cJSON_AddNumberToObject(c, "deprecated_builtin_code", oc->deprecated_builtin_code);
        if (oc->custom_code) cJSON_AddStringToObject(c, "custom_code", oc->custom_code);
        cJSON_AddNumberToObject(c, "version", oc->version);
        cJSON_AddItemToArray(oca, c);
    }
    cJSON *ta = cJSON_AddArrayToObject(o, "tensors");
    cJSON *opa = cJSON_AddArrayToObject(o, "operators");
    cJSON *sga = cJSON_AddArrayToObject(o, "subgraphs");
    for (uint32_t s = 0; s < t->nsubgraphs; s++) {
        const npk_tfl_subgraph *sg = &t->subgraphs[s];
        cJSON *so = cJSON_CreateObject();
        cJSON_AddStringToObject(so, "name", sg->name);
        cJSON_AddItemToObject(so, "inputs", json_ints(sg->inputs, sg->ninputs));
        cJSON_AddItemToObject(so, "outputs", json_ints(sg->outputs, sg->noutputs));
        cJSON_AddNumberToObject(so, "tensors", sg->ntensors);
        cJSON_AddNumberToObject(so, "operators", sg->noperators);
        cJSON_AddItemToArray(sga, so);
        for (uint32_t i = 0; i < sg->ntensors; i++) {
            const npk_tfl_tensor *x = &sg->tensors[i];
            cJSON *to = cJSON_CreateObject();
            cJSON_AddNumberToObject(to, "subgraph", s);
            cJSON_AddNumberToObject(to, "index", i);
            cJSON_AddStringToObject(to, "name", x->name);
            cJSON_AddStringToObject(to, "type", npk_tfl_type_name(x->type));
            cJSON_AddItemToObject(to, "shape", json_ints(x->shape, x->ndim));
            cJSON_AddNumberToObject(to, "buffer", x->buffer);
            cJSON_AddBoolToObject(to, "is_variable", x->is_variable);
            if (x->has_quant) {
                cJSON *q = cJSON_AddObjectToObject(to, "quantization");
                cJSON *sa = cJSON_AddArrayToObject(q, "scale");
                for (uint32_t k = 0; k < x->q.nscale; k++)
                    cJSON_AddItemToArray(sa, cJSON_CreateNumber(x->q.scale[k]));
                cJSON *za = cJSON_AddArrayToObject(q, "zero_point");
                for (uint32_t k = 0; k < x->q.nzero; k++)
                    cJSON_AddItemToArray(za, cJSON_CreateNumber((double)x->q.zero_point[k]));
                cJSON_AddNumberToObject(q, "quantized_dimension", x->q.quantized_dimension);
            }
            cJSON_AddItemToArray(ta, to);
        }
        for (uint32_t i = 0; i < sg->noperators; i++) {
            const npk_tfl_operator *op = &sg->operators[i];
            const npk_tfl_opcode *oc = npk_tfl_op_code(t, op);
            cJSON *oo = cJSON_CreateObject();
            const char *name = npk_tfl_builtin_name(oc->builtin);
            cJSON_AddNumberToObject(oo, "subgraph", s);
            cJSON_AddNumberToObject(oo, "index", i);
            cJSON_AddNumberToObject(oo, "opcode_index", op->opcode_index);
            cJSON_AddStringToObject(oo, "op",
                                    oc->custom_code ? oc->custom_code
                                    : name          ? name
                                                    : "?");
            cJSON_AddItemToObject(oo, "inputs", json_ints(op->inputs, op->ninputs));
            cJSON_AddItemToObject(oo, "outputs", json_ints(op->outputs, op->noutputs));
            if (op->custom_options) {
                cli_json_u64(oo, "custom_options_size", op->custom_options_len);
                cli_json_u64(oo, "custom_options_offset", op->custom_options_offset);
            }
            cJSON_AddItemToArray(opa, oo);
        }
    }
    cJSON *ba = cJSON_AddArrayToObject(o, "buffers");
    for (uint32_t i = 0; i < t->nbuffers; i++) {
        cJSON *bo = cJSON_CreateObject();
        cli_json_u64(bo, "size", t->buffers[i].size);
        if (t->buffers[i].data) cli_json_u64(bo, "offset", t->buffers[i].offset);
        cJSON_AddBoolToObject(bo, "external", t->buffers[i].external);
        cJSON_AddItemToArray(ba, bo);
    }
    cJSON *all = cJSON_CreateArray();
    cJSON *eops = cJSON_AddArrayToObject(o, "edgetpu_ops");
    for (uint32_t i = 0; i < m->nops; i++) {
        const npk_etpu_op *op = &m->ops[i];
        cJSON *eo = cJSON_CreateObject();
        cJSON_AddNumberToObject(eo, "subgraph", op->subgraph);
        cJSON_AddNumberToObject(eo, "operator", op->op);
        cJSON_AddNumberToObject(eo, "version", (double)op->version);
        cJSON_AddNumberToObject(eo, "execution_preference", (double)op->execution_preference);
        if (op->chip_name) cJSON_AddStringToObject(eo, "chip_name", op->chip_name);
        cJSON *ca = cJSON_AddArrayToObject(eo, "chips");
        for (uint32_t k = 0; k < op->nchips; k++)
            cJSON_AddItemToArray(ca, cJSON_CreateNumber((double)op->chips[k]));
        cJSON *pa = cJSON_AddArrayToObject(eo, "packages");
        for (uint32_t k = 0; k < op->npackages; k++)
            cJSON_AddItemToArray(pa, json_package(&op->packages[k], i, k, all));
        cJSON_AddItemToArray(eops, eo);
    }
    cJSON_AddItemToObject(o, "executables", all);
    return o;
}
#endif

static int e_info(int argc, char **argv)
{
    bool json = false;
    if (cli_args_json("edgetpu info", argc, argv, &json)) return CLI_FAIL;
    if (optind + 1 != argc) return cli_usage("edgetpu info", "expected one MODEL");
    if (json && !cli_json_available()) return cli_no_json();
    loaded l;
    int rc = load(argv[optind], &l);
    if (rc) return rc;
#ifdef NPK_HAVE_CJSON
    if (json) {
        cli_print_json(json_model(&l.m), false);
        unload(&l);
        return CLI_OK;
    }
#endif
    print_tflite(&l.m.tfl);
    printf("%u Edge TPU op%s\n", l.m.nops, l.m.nops == 1 ? "" : "s");
    for (uint32_t i = 0; i < l.m.nops; i++) {
        const npk_etpu_op *op = &l.m.ops[i];
        printf("edgetpu op %u (subgraph %u operator %u): options version %" PRId64
               ", execution preference %" PRId64,
               i, op->subgraph, op->op, op->version, op->execution_preference);
        if (op->nchips) {
            printf(", chips [");
            for (uint32_t k = 0; k < op->nchips; k++)
                printf(k ? ", %" PRId64 : "%" PRId64, op->chips[k]);
            printf("]");
        }
        printf("\n");
        for (uint32_t k = 0; k < op->npackages; k++) print_package("  ", k, &op->packages[k]);
    }
    unload(&l);
    return CLI_OK;
}

/* A mapped model recognised as a Dense template. */
static int load_dense(const char *path, loaded *l, npk_etpu_dense *d)
{
    npk_error err = {0};
    int rc = load(path, l);
    if (rc) return rc;
    if (npk_etpu_dense_init(&l->m, d, &err)) {
        unload(l);
        return cli_error(path, &err);
    }
    return CLI_OK;
}

/* Weights from a .npy: int8 [n, n] as is, float16/32/64 quantised per channel. */
static int read_weights(const char *path, const npk_etpu_dense *d, int8_t *w)
{
    npk_error err = {0};
    npk_tensor t;
    /* Read whole and closed again: keep it protected from being overwritten. */
    if (npk_protect_path(path, &err) || npk_npy_load(path, &t, &err)) return cli_error(path, &err);
    int rc = CLI_OK;
    const size_t n = d->n;
    if (t.ndim != 2 || t.shape[0] != (int64_t)n || t.shape[1] != (int64_t)n) {
        char buf[128];
        rc = cli_tensor_fail(path, &t,
                             "weights have shape %s; this template needs [%zu, %zu] ([out, in])",
                             npk_shape_str(&t, buf, sizeof buf), n, n);
    } else if (t.dtype == NPK_I8) {
        memcpy(w, t.data, n * n);
    } else if (t.dtype == NPK_F32 || t.dtype == NPK_F64 || t.dtype == NPK_F16) {
        npk_tensor f;
        size_t clipped = 0;
        if (npk_tensor_alloc(&f, NULL, NPK_F32, t.ndim, t.shape, &err) ||
            npk_tensor_convert(&t, &f, &err) ||
            npk_etpu_quantize_rows(f.data, n, n, d->w_scale, w, &clipped, &err))
            rc = cli_error(path, &err);
        else if (clipped)
            fprintf(stderr,
                    "npukit: %s: %zu of %zu weights were outside their channel's range "
                    "and were clipped\n",
                    path, clipped, n * n);
        npk_tensor_free(&f);
    } else {
        rc = cli_tensor_fail(path, &t,
                             "weights are %s: int8 (used as is) or float16, float32 or float64 "
                             "(quantised per output channel) are accepted",
                             npk_dtype_name(t.dtype));
    }
    npk_tensor_free(&t);
    return rc;
}

static int e_weights(int argc, char **argv)
{
    const char *out = NULL;
    bool as_float = false;
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"float", no_argument, NULL, 'f'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'f')
            as_float = true;
        else
            return cli_bad_option("edgetpu weights", argv);
    }
    if (optind + 1 != argc || !out) return cli_usage("edgetpu weights", "expected MODEL -o W.npy");
    loaded l;
    npk_etpu_dense d;
    int rc = load_dense(argv[optind], &l, &d);
    if (rc) return rc;
    npk_error err = {0};
    npk_tensor t;
    int64_t shape[2] = {(int64_t)d.n, (int64_t)d.n};
    if (npk_tensor_alloc(&t, "weights", as_float ? NPK_F32 : NPK_I8, 2, shape, &err)) {
        rc = cli_error(NULL, &err);
    } else {
        int8_t *w = as_float ? malloc(d.n * d.n) : t.data;
        if (!w || npk_etpu_dense_weights(&d, w, &err)) {
            rc = w ? cli_error(argv[optind], &err) : cli_fail("out of memory");
        } else {
            if (as_float)
                for (size_t r = 0; r < d.n; r++)
                    for (size_t k = 0; k < d.n; k++)
                        ((float *)t.data)[r * d.n + k] = (float)w[r * d.n + k] * d.w_scale[r];
            if (npk_npy_save(out, &t, &err)) rc = cli_error(out, &err);
        }
        if (as_float) free(w);
        npk_tensor_free(&t);
    }
    npk_etpu_dense_free(&d);
    unload(&l);
    return rc;
}

static int e_set_weights(int argc, char **argv)
{
    const char *out = NULL, *wpath = NULL;
    if (cli_args_output_weights("edgetpu set-weights", argc, argv, &out, &wpath)) return CLI_FAIL;
    if (optind + 1 != argc || !out || !wpath)
        return cli_usage("edgetpu set-weights", "expected MODEL --weights W.npy -o OUT");
    loaded l;
    npk_etpu_dense d;
    int rc = load_dense(argv[optind], &l, &d);
    if (rc) return rc;
    int8_t *w = malloc(d.n * d.n);
    uint8_t *file = NULL;
    npk_error err = {0};
    if (!w)
        rc = cli_fail("out of memory");
    else if (!(rc = read_weights(wpath, &d, w))) {
        if (npk_etpu_dense_set_weights(&d, l.map.data, l.map.size, w, &file, &err))
            rc = cli_error(argv[optind], &err);
        else if (npk_write_file(out, file, l.map.size, &err))
            rc = cli_error(out, &err);
    }
    free(file);
    free(w);
    npk_etpu_dense_free(&d);
    unload(&l);
    return rc;
}

static int e_matmul(int argc, char **argv)
{
    const char *out = NULL, *wpath = NULL, *xpath = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"weights", required_argument, NULL, 'w'},
                                         {"input", required_argument, NULL, 'i'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:w:i:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'w')
            wpath = optarg;
        else if (c == 'i')
            xpath = optarg;
        else
            return cli_bad_option("edgetpu matmul", argv);
    }
    if (optind + 1 != argc || !out || !xpath)
        return cli_usage("edgetpu matmul", "expected MODEL --input X.npy -o Y.npy");
    loaded l;
    npk_etpu_dense d;
    int rc = load_dense(argv[optind], &l, &d);
    if (rc) return rc;
    npk_error err = {0};
    npk_tensor x = {0}, xf = {0}, y = {0};
    int8_t *w = malloc(d.n * d.n);
    if (!w) {
        rc = cli_fail("out of memory");
        goto done;
    }
    if (wpath ? (rc = read_weights(wpath, &d, w)) != 0
              : npk_etpu_dense_weights(&d, w, &err) && (rc = cli_error(argv[optind], &err)))
        goto done;
    if (npk_protect_path(xpath, &err) || npk_npy_load(xpath, &x, &err)) {
        rc = cli_error(xpath, &err);
        goto done;
    }
    if (x.ndim < 1 || x.ndim > 2 || x.shape[x.ndim - 1] != (int64_t)d.n ||
        (x.ndim == 2 && x.shape[0] == 0)) {
        char buf[128];
        rc = cli_tensor_fail(xpath, &x,
                             "input has shape %s; this template needs [%zu] or [B, %zu], B >= 1",
                             npk_shape_str(&x, buf, sizeof buf), d.n, d.n);
        goto done;
    }
    size_t batch = x.ndim == 2 ? (size_t)x.shape[0] : 1;
    if (npk_tensor_alloc(&xf, "x", NPK_F32, x.ndim, x.shape, &err) ||
        npk_tensor_convert(&x, &xf, &err) ||
        npk_tensor_alloc(&y, "y", NPK_F32, x.ndim, x.shape, &err) ||
        npk_etpu_dense_matmul(&d, w, xf.data, batch, y.data, &err)) {
        rc = cli_error(xpath, &err);
        goto done;
    }
    if (npk_npy_save(out, &y, &err)) rc = cli_error(out, &err);
done:
    npk_tensor_free(&x);
    npk_tensor_free(&xf);
    npk_tensor_free(&y);
    free(w);
    npk_etpu_dense_free(&d);
    unload(&l);
    return rc;
}

static int e_synth(int argc, char **argv)
{
    const char *out = NULL;
    uint64_t n = 256, width = 0;
    bool chips = false;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"size", required_argument, NULL, 's'},
                                         {"flex-width", required_argument, NULL, 'w'},
                                         {"chip-keys", no_argument, NULL, 'c'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 's' && !cli_parse_u64(optarg, &n))
            return cli_usage("edgetpu synth-dense", "bad --size");
        else if (c == 'w' && !cli_parse_u64(optarg, &width))
            return cli_usage("edgetpu synth-dense", "bad --flex-width");
        else if (c == 'c')
            chips = true;
        else if (c != 's' && c != 'w')
            return cli_bad_option("edgetpu synth-dense", argv);
    }
    if (optind != argc || !out) return cli_usage("edgetpu synth-dense", "expected --size N -o OUT");
    if (width > 8) return cli_usage("edgetpu synth-dense", "--flex-width must be 1, 2, 4 or 8");
    npk_etpu_synth_opts o = {.n = (size_t)n, .flex_width = (int)width, .chip_keys = chips};
    npk_error err = {0};
    uint8_t *buf;
    size_t len;
    if (n > 4096)
        return cli_usage("edgetpu synth-dense", "--size must be a multiple of 64 up to 4096");
    if (npk_etpu_synth_dense(&o, &buf, &len, &err)) return cli_error(NULL, &err);
    int rc = npk_write_file(out, buf, len, &err) ? cli_error(out, &err) : CLI_OK;
    free(buf);
    return rc;
}
