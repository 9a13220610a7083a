/* npukit mgk: Ingenic MGK models: inspect, extract and replace weights, and
 * generate synthetic test files. A thin layer over npukit/mgk.h. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "cmd_mgk.h"
#include "commands.h"
#include "npukit/bytes.h"
#include "npukit/mgk.h"

static int m_info(int argc, char **argv);
static int m_layer(int argc, char **argv);
static int m_extract(int argc, char **argv);
static int m_replace(int argc, char **argv);
static int m_synth(int argc, char **argv);

static const cli_subcommand subs[] = {
    {"info", "FILE [--json] [--records] [--symbols]",
     "container, sections, versions, convolution layers and unclaimed weight-region ranges;\n"
     "      --records lists every record of the `model` blob (raw bodies in hex with --json),\n"
     "      --symbols every defined dynamic symbol of the ELF image",
     m_info},
    {"layer", "FILE ID [--json] [--weights]",
     "one convolution layer: record fields, requant table per channel (int32 and fp32 views)\n"
     "      and, with --weights, the decoded weights",
     m_layer},
    {"extract", "FILE -o OUT.safetensors",
     "write layer_<id>.weight int8 [Cout, Cin, KH, KW] of every convolution, with\n"
     "      layer_<id>.bias / .scale / .mult (where the requant table gives them) and\n"
     "      layer_<id>.requant (its raw rows); for every GRU layer_<id>.W [dirs, 3H, I] and\n"
     "      .R [dirs, 3H, H] (int8, gates z, r, h), .Wb/.Rb (int32), .Ws/.Rs (float32),\n"
     "      .h_scale and .h_zp",
     m_extract},
    {"replace", "FILE --weights IN.safetensors -o OUT.mgk",
     "re-encode every layer whose layer_<id>.weight (convolutions) or layer_<id>.W / .R\n"
     "      (GRUs) is in IN (same shape, integer values in the layer's bit width) into a new\n"
     "      file; every other byte stays unchanged",
     m_replace},
    {"graph", "FILE [--json | --dot] [--png OUT.png]",
     "the network: records as nodes, tensors as edges with shapes, formats, types and\n"
     "      quantisation; --dot writes Graphviz DOT, --png renders it with `dot`",
     mgk_cmd_graph},
    {"export", "FILE -o OUT.onnx [--qdq] [--allow-unknown]",
     "the network as ONNX: weights dequantised to float (or, with --qdq, int8 with\n"
     "      DequantizeLinear and Q/DQ pairs on activations), GRU as ONNX GRU; records of\n"
     "      unknown semantics are refused unless --allow-unknown (custom-domain nodes)",
     mgk_cmd_export},
    {"synth",
     "-o OUT.mgk [--layer CIN,COUT,KH,KW,BITS[,SH,SW]]... [--size HxW] [--seed N]\n"
     "      [--extra-records] [--garbage]",
     "generate a small synthetic MGK test file (default: one 16->8 3x3 8-bit layer on an 8x8\n"
     "      input; layers chain when their channels agree). For tests and demos only: not a\n"
     "      vendor compiler, the file does not run on a device",
     m_synth},
};

void cmd_mgk_help(FILE *out)
{
    cli_group_help(out, "mgk",
                   "Ingenic MGK models (MIPS ELF + IMGK payload): inspect, extract and replace\n"
                   "weights, show the network, export it to ONNX, generate synthetic test files.",
                   subs, (int)(sizeof subs / sizeof subs[0]));
}

int cmd_mgk(int argc, char **argv)
{
    return cli_dispatch("mgk", subs, (int)(sizeof subs / sizeof subs[0]), argc, argv);
}

/* Map and parse FILE; on failure print the error and return CLI_FAIL. */
static int load(const char *path, npk_mapped *map, npk_mgk_model *m)
{
    npk_error err = {0};
    if (npk_map_file(path, map, &err)) return cli_error(path, &err);
    if (npk_mgk_parse(map->data, map->size, m, &err)) {
        npk_unmap_file(map);
        return cli_error(path, &err);
    }
    return CLI_OK;
}

static const char *shape_str(const int32_t *v, uint32_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n && at + 16 < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "," : "", v[i]);
    return buf;
}

static const char *form_of(const npk_mgk_model *m, const npk_mgk_conv *c)
{
    if (!c->requant_ok) return "-";
    npk_mgk_requant rq;
    npk_error err = {0};
    if (npk_mgk_requant_read(m, c, &rq, &err)) return "?";
    const char *f = npk_mgk_rq_form_name(rq.form);
    npk_mgk_requant_free(&rq);
    return f;
}

static bool is_param_init(const npk_mgk_symbol *s, char *buf, size_t n)
{
    npk_mgk_symbol_short(s, buf, n);
    size_t l = strlen(buf);
    return !strcmp(buf, "create") || !strcmp(buf, "destroy") ||
           (l > 11 && !strcmp(buf + l - 11, "_param_init"));
}

static void print_text(const char *path, const npk_mgk_model *m, bool records, bool symbols)
{
    const npk_mgk_elf *e = &m->elf;
    printf("%s: MGK model, %zu bytes\n", path, m->size);
    printf("ELF: 32-bit little-endian MIPS, type %u, entry 0x%x, flags 0x%x, %zu sections\n",
           e->type, e->entry, e->flags, e->nsections);
    printf("  section headers end at 0x%llx; loadable bytes end at 0x%llx\n",
           (unsigned long long)e->sh_end, (unsigned long long)e->load_end);
    printf("  %zu defined dynamic symbols; entry points:\n", e->nsymbols);
    char nm[128];
    for (size_t i = 0; i < e->nsymbols; i++)
        if (symbols || is_param_init(&e->symbols[i], nm, sizeof nm))
            printf("    0x%06x %6u  %s\n", e->symbols[i].value, e->symbols[i].size,
                   npk_mgk_symbol_short(&e->symbols[i], nm, sizeof nm));
    printf("footer at 0x%llx: section table 0x%llx (%u x %u), segment records 0x%llx (%u x %u)\n",
           (unsigned long long)m->footer_offset, (unsigned long long)m->sectab_offset, m->nsect,
           m->sect_entsize, (unsigned long long)m->segtab_offset, m->nseg, m->seg_size);
    printf("weight region: 0x%llx + 0x%llx (%llu bytes)\n", (unsigned long long)m->region_offset,
           (unsigned long long)m->region_size, (unsigned long long)m->region_size);
    printf("sections:\n");
    for (size_t i = 0; i < m->nsections; i++) {
        const npk_mgk_section *s = &m->sections[i];
        printf("  %u  %-10.*s 0x%llx + 0x%llx%s\n", s->index, (int)s->name.len,
               s->name.s ? s->name.s : "", (unsigned long long)s->offset,
               (unsigned long long)s->size, s->name_inferred ? "  (name inferred)" : "");
    }
    printf("versions (tag meanings unknown):");
    for (size_t i = 0; i < m->nversions; i++)
        if (m->versions[i].has_string)
            printf(" [%u] %.*s", m->versions[i].tag, (int)m->versions[i].string.len,
                   m->versions[i].string.s);
    printf("\nrecords: %zu in `model`\n", m->nrecords);
    for (size_t i = 0; i < m->nrecords; i++) {
        const npk_mgk_record *r = &m->records[i];
        if (!records && r->known_kind) continue;
        printf("  #%-3zu 0x%llx %4llu B  %-40.*s %.*s%s\n", i, (unsigned long long)r->offset,
               (unsigned long long)r->size, (int)r->kernel.len, r->kernel.s, (int)r->name.len,
               r->name.s, r->known_kind ? "" : "  (unknown kind: skipped)");
        if (!records) continue;
        printf("       inputs:");
        for (uint32_t k = 0; k < r->ninputs; k++)
            printf(" %.*s (%.*s %.*s, id %d)", (int)r->inputs[k].name.len, r->inputs[k].name.s,
                   (int)r->inputs[k].format.len, r->inputs[k].format.s, (int)r->inputs[k].type.len,
                   r->inputs[k].type.s, r->inputs[k].id);
        uint32_t unknown = 0;
        for (uint32_t k = 0; k < r->nfields; k++) unknown += !r->fields[k].known;
        printf(
            "; output id %d\n       body 0x%llx, %llu bytes, %u fields (%u of unknown meaning)%s\n",
            r->out_id, (unsigned long long)r->body_offset, (unsigned long long)r->body_size,
            r->nfields, unknown, r->p.decoded || !r->known_kind ? "" : ", NOT decoded");
        char val[160];
        for (uint32_t k = 0; k < r->nfields; k++) {
            const npk_mgk_field *f = &r->fields[k];
            npk_mgk_field_format(m, f, val, sizeof val, 12);
            printf("         0x%06llx %-18s %-9s %-28s %s%s\n", (unsigned long long)f->offset,
                   f->name, npk_mgk_ftype_name(f->type), val, f->known ? "" : "? ", f->meaning);
        }
    }
    printf("convolution layers: %zu (offsets relative to the weight region)\n", m->nconvs);
    printf("  %-4s %-30s %-11s %-5s %-4s %-26s %-24s %s\n", "id", "kernel", "cin->cout", "KHxKW",
           "bits", "weight_shape @ offset", "requant_shape @ offset", "requant");
    for (size_t i = 0; i < m->nconvs; i++) {
        const npk_mgk_conv *c = &m->convs[i];
        const npk_mgk_record *r = npk_mgk_conv_record(m, c);
        char ws[64], rs[64], a[48], b[48];
        snprintf(a, sizeof a, "[%s]@0x%llx", shape_str(c->weight_shape, 7, ws, sizeof ws),
                 (unsigned long long)c->offsets[0]);
        snprintf(b, sizeof b, "[%s]@0x%llx", shape_str(c->requant_shape, 5, rs, sizeof rs),
                 (unsigned long long)c->offsets[1]);
        printf("  %-4d %-30.*s %4d->%-5d %2dx%-2d %-4d %-26s %-24s %s\n", c->id, (int)r->kernel.len,
               r->kernel.s, c->cin, c->cout, c->kh, c->kw, c->bits, a, b, form_of(m, c));
        if (c->problem[0]) printf("       note: %s\n", c->problem);
        if (c->kh == 3 && c->kw == 3)
            printf("       note: 3x3 tap order assumed row-major (native middle-row reversal "
                   "unverified)\n");
    }
    printf("GRU layers: %zu (data located through the constructor's gru_param_init calls)\n",
           m->ngrus);
    for (size_t i = 0; i < m->ngrus; i++) {
        const npk_mgk_gru *g = &m->grus[i];
        if (!g->usable) {
            printf("  %-4d unusable: %s\n", g->id, g->problem);
            continue;
        }
        printf("  %-4d %d direction(s), batch %d, seq %d, input %d, hidden %d; weights "
               "[%d,%d,1,1,%d,32,32]@0x%llx, table %llu words@0x%llx; zero points in %d, hidden "
               "%d; call at 0x%x\n",
               g->id, g->ndir, g->batch, g->seq, g->input, g->hidden, g->n_ofp, g->m_ifp, g->planes,
               (unsigned long long)g->weight_offset, (unsigned long long)g->table_bytes / 4,
               (unsigned long long)g->table_offset, g->in_zp, g->h_zp, g->call_addr);
    }
    printf("unassigned weight-region ranges: %zu\n", m->nunassigned);
    for (size_t i = 0; i < m->nunassigned; i++)
        printf("  +0x%llx  %llu bytes%s%s%s\n", (unsigned long long)m->unassigned[i].offset,
               (unsigned long long)m->unassigned[i].size,
               m->unassigned[i].all_zero ? " (all zero)" : "", m->unassigned[i].why ? ": " : "",
               m->unassigned[i].why ? m->unassigned[i].why : "");
    for (size_t i = 0; i < m->nwarnings; i++)
        printf("warning: offset 0x%llx: %s\n", (unsigned long long)m->warnings[i].offset,
               m->warnings[i].msg);
    if (m->warnings_dropped) printf("warning: %zu more\n", m->warnings_dropped);
}

#ifdef NPK_HAVE_CJSON
static cJSON *jstr_new(npk_mgk_str s);

/* Every string from the file goes to JSON through here (cmd_mgk.h). */
cJSON *mgk_json_str(npk_mgk_str s)
{
    return jstr_new(s);
}

static cJSON *jstr_new(npk_mgk_str s)
{
    char *t = malloc(s.len + 1u);
    if (!t) return NULL;
    if (s.len) memcpy(t, s.s, s.len);
    t[s.len] = 0;
    cJSON *r = cJSON_CreateString(t);
    free(t);
    return r;
}

static void jstr(cJSON *o, const char *key, npk_mgk_str s)
{
    cJSON_AddItemToObject(o, key, jstr_new(s));
}

static cJSON *jints(cJSON *o, const char *key, const int32_t *v, uint32_t n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (uint32_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void jhex_bytes(cJSON *o, const char *key, const uint8_t *p, size_t n)
{
    char *t = malloc(2 * n + 1);
    if (!t) return;
    for (size_t i = 0; i < n; i++) snprintf(t + 2 * i, 3, "%02x", p[i]);
    t[2 * n] = 0;
    cJSON_AddStringToObject(o, key, t);
    free(t);
}

static cJSON *layer_json(const npk_mgk_model *m, const npk_mgk_conv *c)
{
    const npk_mgk_record *r = npk_mgk_conv_record(m, c);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", c->id);
    jstr(o, "name", r->name);
    jstr(o, "kernel", r->kernel);
    cli_json_u64(o, "record_offset", r->offset);
    jints(o, "weight_shape", c->weight_shape, 7);
    cJSON_AddNumberToObject(o, "weight_offset", (double)c->offsets[0]);
    cJSON_AddNumberToObject(o, "weight_elements", c->counts[0]);
    jints(o, "requant_shape", c->requant_shape, 5);
    cJSON_AddNumberToObject(o, "requant_offset", (double)c->offsets[1]);
    cJSON_AddNumberToObject(o, "requant_elements", c->counts[1]);
    cJSON_AddStringToObject(o, "requant_form", form_of(m, c));
    cJSON_AddNumberToObject(o, "out_channels", c->cout);
    cJSON_AddNumberToObject(o, "in_channels", c->cin);
    cJSON_AddNumberToObject(o, "kernel_h", c->kh);
    cJSON_AddNumberToObject(o, "kernel_w", c->kw);
    cJSON_AddNumberToObject(o, "bits", c->bits);
    jints(o, "pads", c->pads, c->npads);
    jints(o, "kernel_vector", c->kernel, c->nkernel);
    jints(o, "stride", c->stride, c->nstride);
    jints(o, "dilation", c->dilation, c->ndilation);
    cJSON_AddNumberToObject(o, "act", c->act);
    cJSON_AddBoolToObject(o, "usable", c->usable);
    cJSON_AddBoolToObject(o, "requant_ok", c->requant_ok);
    if (c->problem[0]) cJSON_AddStringToObject(o, "problem", c->problem);
    cJSON *in = cJSON_AddArrayToObject(o, "inputs");
    for (uint32_t i = 0; i < r->ninputs; i++) {
        cJSON *t = cJSON_CreateObject();
        jstr(t, "name", r->inputs[i].name);
        cJSON_AddNumberToObject(t, "id", r->inputs[i].id);
        cJSON_AddItemToArray(in, t);
    }
    return o;
}

/* One decoded field: name, offset, type, size, known, meaning and its value
 * (numbers, arrays of numbers, or a string for strings and raw bytes). */
static cJSON *field_json(const npk_mgk_model *m, const npk_mgk_field *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", f->name);
    cli_json_u64(o, "offset", f->offset);
    cJSON_AddStringToObject(o, "type", npk_mgk_ftype_name(f->type));
    cli_json_u64(o, "size", f->size);
    cJSON_AddBoolToObject(o, "known", f->known);
    cJSON_AddStringToObject(o, "meaning", f->meaning);
    const uint8_t *p = m->data + f->data;
    switch (f->type) {
    case NPK_MGK_F_F32: cJSON_AddNumberToObject(o, "value", f->f); break;
    case NPK_MGK_F_IVEC:
    case NPK_MGK_F_I64VEC:
    case NPK_MGK_F_F32VEC: {
        cJSON *a = cJSON_AddArrayToObject(o, "value");
        for (uint32_t i = 0; i < f->count; i++) {
            double v = f->type == NPK_MGK_F_IVEC ? (double)(int32_t)npk_ld32le(p + 4 * (size_t)i)
                       : f->type == NPK_MGK_F_I64VEC
                           ? (double)(int64_t)npk_ld64le(p + 8 * (size_t)i)
                           : (double)npk_ldf32le(p + 4 * (size_t)i);
            cJSON_AddItemToArray(a, cJSON_CreateNumber(v));
        }
        break;
    }
    case NPK_MGK_F_STR: jstr(o, "value", (npk_mgk_str){(const char *)p, f->count}); break;
    case NPK_MGK_F_BYTES:
    case NPK_MGK_F_IVEC3: jhex_bytes(o, "value_hex", m->data + f->offset, f->size); break;
    default: cJSON_AddNumberToObject(o, "value", (double)f->i); break;
    }
    return o;
}

static cJSON *record_json(const npk_mgk_model *m, const npk_mgk_record *r, size_t idx)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", (double)idx);
    cli_json_u64(o, "offset", r->offset);
    cli_json_u64(o, "size", r->size);
    jstr(o, "kind", r->kind);
    cJSON_AddBoolToObject(o, "known_kind", r->known_kind);
    jstr(o, "kernel", r->kernel);
    jstr(o, "name", r->name);
    cJSON_AddNumberToObject(o, "out_id", r->out_id);
    cJSON *of = cJSON_AddArrayToObject(o, "out_formats");
    for (uint32_t i = 0; i < r->nout; i++) {
        cJSON *t = cJSON_CreateObject();
        jstr(t, "format", r->out_formats[i]);
        jstr(t, "type", r->out_types[i]);
        cJSON_AddItemToArray(of, t);
    }
    cJSON *in = cJSON_AddArrayToObject(o, "inputs");
    for (uint32_t i = 0; i < r->ninputs; i++) {
        cJSON *t = cJSON_CreateObject();
        jstr(t, "name", r->inputs[i].name);
        jstr(t, "format", r->inputs[i].format);
        jstr(t, "type", r->inputs[i].type);
        cJSON_AddNumberToObject(t, "id", r->inputs[i].id);
        cJSON_AddItemToArray(in, t);
    }
    cli_json_u64(o, "body_offset", r->body_offset);
    cli_json_u64(o, "body_size", r->body_size);
    jhex_bytes(o, "body_hex", m->data + r->body_offset, (size_t)r->body_size);
    cJSON_AddBoolToObject(o, "decoded", r->p.decoded);
    cJSON *fs = cJSON_AddArrayToObject(o, "fields");
    for (uint32_t k = 0; k < r->nfields; k++)
        cJSON_AddItemToArray(fs, field_json(m, &r->fields[k]));
    if (r->conv >= 0) cJSON_AddNumberToObject(o, "layer_id", m->convs[r->conv].id);
    return o;
}

static cJSON *gru_json(const npk_mgk_gru *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", g->id);
    cJSON_AddBoolToObject(o, "located", g->located);
    cJSON_AddBoolToObject(o, "usable", g->usable);
    if (g->problem[0]) cJSON_AddStringToObject(o, "problem", g->problem);
    if (g->located) {
        cli_json_hex(o, "call_address", g->call_addr);
        cJSON_AddNumberToObject(o, "weight_offset", (double)g->weight_offset);
        cJSON_AddNumberToObject(o, "table_offset", (double)g->table_offset);
    }
    if (g->usable) {
        cJSON_AddNumberToObject(o, "directions", g->ndir);
        cJSON_AddNumberToObject(o, "batch", g->batch);
        cJSON_AddNumberToObject(o, "seq", g->seq);
        cJSON_AddNumberToObject(o, "input_size", g->input);
        cJSON_AddNumberToObject(o, "hidden_size", g->hidden);
        int32_t ws[7] = {g->n_ofp, g->m_ifp, 1, 1, g->planes, 32, 32};
        jints(o, "weight_shape", ws, 7);
        cJSON_AddNumberToObject(o, "weight_bytes", (double)g->weight_bytes);
        cJSON_AddNumberToObject(o, "table_bytes", (double)g->table_bytes);
        cJSON_AddNumberToObject(o, "input_zero_point", g->in_zp);
        cJSON_AddNumberToObject(o, "hidden_zero_point", g->h_zp);
        cJSON_AddStringToObject(o, "gate_order", "z,r,h");
    }
    return o;
}

static void print_json(const npk_mgk_model *m, bool records, bool symbols)
{
    cJSON *o = cJSON_CreateObject();
    cli_json_u64(o, "size", m->size);
    cli_json_u64(o, "footer_offset", m->footer_offset);
    cJSON *wr = cJSON_AddObjectToObject(o, "weight_region");
    cli_json_u64(wr, "offset", m->region_offset);
    cli_json_u64(wr, "size", m->region_size);
    cJSON *elf = cJSON_AddObjectToObject(o, "elf");
    cJSON_AddNumberToObject(elf, "type", m->elf.type);
    cJSON_AddNumberToObject(elf, "machine", m->elf.machine);
    cli_json_u64(elf, "entry", m->elf.entry);
    cli_json_u64(elf, "flags", m->elf.flags);
    cJSON_AddNumberToObject(elf, "sections", (double)m->elf.nsections);
    cli_json_u64(elf, "section_headers_end", m->elf.sh_end);
    cli_json_u64(elf, "load_end", m->elf.load_end);
    cJSON_AddNumberToObject(elf, "dynamic_symbols", (double)m->elf.nsymbols);
    cJSON *sy = cJSON_AddArrayToObject(elf, "entry_points");
    char nm[160];
    for (size_t i = 0; i < m->elf.nsymbols; i++) {
        const npk_mgk_symbol *s = &m->elf.symbols[i];
        if (!symbols && !is_param_init(s, nm, sizeof nm)) continue;
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", npk_mgk_symbol_short(s, nm, sizeof nm));
        if (symbols) jstr(t, "symbol", s->name);
        cli_json_u64(t, "value", s->value);
        cli_json_u64(t, "size", s->size);
        cJSON_AddItemToArray(sy, t);
    }
    cJSON *ss = cJSON_AddArrayToObject(o, "sections");
    for (size_t i = 0; i < m->nsections; i++) {
        const npk_mgk_section *s = &m->sections[i];
        cJSON *t = cJSON_CreateObject();
        jstr(t, "name", s->name);
        cli_json_u64(t, "offset", s->offset);
        cli_json_u64(t, "size", s->size);
        cJSON_AddNumberToObject(t, "index", s->index);
        if (s->name_inferred) cJSON_AddBoolToObject(t, "name_inferred", true);
        cJSON_AddItemToArray(ss, t);
    }
    cJSON *vs = cJSON_AddArrayToObject(o, "versions");
    cJSON *vt = cJSON_AddArrayToObject(o, "version_tags");
    for (size_t i = 0; i < m->nversions; i++) {
        const npk_mgk_version *v = &m->versions[i];
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "tag", v->tag);
        cli_json_u64(t, "value", v->value);
        if (v->has_string) {
            jstr(t, "string", v->string);
            cJSON_AddItemToArray(vs, jstr_new(v->string));
        }
        cJSON_AddItemToArray(vt, t);
    }
    cJSON_AddNumberToObject(o, "records", (double)m->nrecords);
    cJSON *ls = cJSON_AddArrayToObject(o, "layers");
    for (size_t i = 0; i < m->nconvs; i++) cJSON_AddItemToArray(ls, layer_json(m, &m->convs[i]));
    cJSON *gs = cJSON_AddArrayToObject(o, "grus");
    for (size_t i = 0; i < m->ngrus; i++) cJSON_AddItemToArray(gs, gru_json(&m->grus[i]));
    cJSON *un = cJSON_AddArrayToObject(o, "unassigned");
    for (size_t i = 0; i < m->nunassigned; i++) {
        cJSON *t = cJSON_CreateObject();
        cli_json_u64(t, "offset", m->unassigned[i].offset);
        cli_json_u64(t, "size", m->unassigned[i].size);
        cJSON_AddBoolToObject(t, "all_zero", m->unassigned[i].all_zero);
        if (m->unassigned[i].why) cJSON_AddStringToObject(t, "why", m->unassigned[i].why);
        cJSON_AddItemToArray(un, t);
    }
    cJSON *uk = cJSON_AddArrayToObject(o, "unknown_records");
    for (size_t i = 0; i < m->nrecords; i++)
        if (!m->records[i].known_kind) cJSON_AddItemToArray(uk, record_json(m, &m->records[i], i));
    if (records) {
        cJSON *rs = cJSON_AddArrayToObject(o, "record_list");
        for (size_t i = 0; i < m->nrecords; i++)
            cJSON_AddItemToArray(rs, record_json(m, &m->records[i], i));
    }
    cJSON *ws = cJSON_AddArrayToObject(o, "warnings");
    for (size_t i = 0; i < m->nwarnings; i++) {
        cJSON *t = cJSON_CreateObject();
        cli_json_u64(t, "offset", m->warnings[i].offset);
        cJSON_AddStringToObject(t, "message", m->warnings[i].msg);
        cJSON_AddItemToArray(ws, t);
    }
    cli_print_json(o, false);
}
#endif

static int m_info(int argc, char **argv)
{
    bool json = false, records = false, symbols = false;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"records", no_argument, NULL, 'r'},
                                         {"symbols", no_argument, NULL, 's'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'r')
            records = true;
        else if (c == 's')
            symbols = true;
        else
            return cli_bad_option("mgk info", argv);
    }
    if (optind + 1 != argc) return cli_usage("mgk info", "expected one FILE");
    if (json && !cli_json_available()) return cli_no_json();
    npk_mapped map;
    npk_mgk_model m;
    int rc = load(argv[optind], &map, &m);
    if (rc) return rc;
#ifdef NPK_HAVE_CJSON
    if (json)
        print_json(&m, records, symbols);
    else
#endif
        print_text(argv[optind], &m, records, symbols);
    npk_mgk_free(&m);
    npk_unmap_file(&map);
    return CLI_OK;
}

static void print_layer(const npk_mgk_model *m, const npk_mgk_conv *c, const npk_mgk_requant *rq,
                        const int8_t *w)
{
    const npk_mgk_record *r = npk_mgk_conv_record(m, c);
    char buf[96];
    printf("layer %d: record #%zu at 0x%llx, %.*s\n", c->id, c->record,
           (unsigned long long)r->offset, (int)r->kernel.len, r->kernel.s);
    printf("  output %.*s (id %d); inputs:", (int)r->name.len, r->name.s, r->out_id);
    for (uint32_t i = 0; i < r->ninputs; i++)
        printf(" %.*s (id %d)", (int)r->inputs[i].name.len, r->inputs[i].name.s, r->inputs[i].id);
    printf("\n  cin %d, cout %d, pads [%s]", c->cin, c->cout,
           shape_str(c->pads, c->npads, buf, 96));
    printf(", kernel [%s]", shape_str(c->kernel, c->nkernel, buf, sizeof buf));
    printf(", stride [%s]", shape_str(c->stride, c->nstride, buf, sizeof buf));
    printf(", dilation [%s], act %d\n", shape_str(c->dilation, c->ndilation, buf, sizeof buf),
           c->act);
    printf("  weights [%s] at region+0x%llx, %d-bit, %llu bytes\n",
           shape_str(c->weight_shape, 7, buf, sizeof buf), (unsigned long long)c->offsets[0],
           c->bits, (unsigned long long)c->weight_bytes);
    printf("  requant [%s] at region+0x%llx\n", shape_str(c->requant_shape, 5, buf, sizeof buf),
           (unsigned long long)c->offsets[1]);
    if (c->problem[0]) printf("  note: %s\n", c->problem);
    if (rq->rows) {
        printf("  requant form: %s%s\n", npk_mgk_rq_form_name(rq->form),
               rq->form_from_values ? " (told from the values)" : "");
        for (int ch = 0; ch < rq->channels; ch++) {
            printf("  ch %3d:", ch);
            for (int k = 0; k < rq->rows; k++)
                printf("  %11d / %-13.6g", rq->ints[(size_t)k * (size_t)rq->channels + (size_t)ch],
                       (double)rq->floats[(size_t)k * (size_t)rq->channels + (size_t)ch]);
            printf("\n");
        }
    }
    if (w) {
        int taps = c->kh * c->kw;
        for (int co = 0; co < c->out_channels; co++)
            for (int ci = 0; ci < c->in_channels; ci++) {
                printf("  w[%d][%d]:", co, ci);
                for (int t = 0; t < taps; t++)
                    printf(" %d",
                           w[((size_t)co * (size_t)c->in_channels + (size_t)ci) * (size_t)taps +
                             (size_t)t]);
                printf("\n");
            }
    }
}

static int m_layer(int argc, char **argv)
{
    bool json = false, weights = false;
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"weights", no_argument, NULL, 'w'}, {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'w')
            weights = true;
        else
            return cli_bad_option("mgk layer", argv);
    }
    int64_t id;
    if (optind + 2 != argc) return cli_usage("mgk layer", "expected FILE and ID");
    if (!cli_parse_i64(argv[optind + 1], &id) || id < 0 || id > 0x7fffffff)
        return cli_usage("mgk layer", "bad layer id '%s'", argv[optind + 1]);
    if (json && !cli_json_available()) return cli_no_json();
    const char *path = argv[optind];
    npk_mapped map;
    npk_mgk_model m;
    int rc = load(path, &map, &m);
    if (rc) return rc;
    npk_error err = {0};
    const npk_mgk_conv *cv = npk_mgk_find_layer(&m, (int)id);
    npk_mgk_requant rq = {0};
    int8_t *w = NULL;
    if (!cv) {
        rc = cli_fail("%s: no convolution layer %lld (see 'npukit mgk info')", path, (long long)id);
    } else if (cv->requant_ok && npk_mgk_requant_read(&m, cv, &rq, &err)) {
        rc = cli_error(path, &err);
    } else if (weights && cv->usable) {
        size_t n =
            (size_t)cv->out_channels * (size_t)cv->in_channels * (size_t)cv->kh * (size_t)cv->kw;
        w = malloc(n ? n : 1);
        if (!w || npk_mgk_decode_layer(&m, cv, 0, w, &err)) rc = cli_error(path, &err);
    }
    if (rc == CLI_OK) {
#ifdef NPK_HAVE_CJSON
        if (json) {
            cJSON *o = layer_json(&m, cv);
            if (rq.rows) {
                cJSON *rows = cJSON_AddArrayToObject(o, "requant_rows");
                for (int k = 0; k < rq.rows; k++) {
                    cJSON *row = cJSON_CreateObject();
                    cJSON *ia = cJSON_AddArrayToObject(row, "int32");
                    cJSON *fa = cJSON_AddArrayToObject(row, "float32");
                    for (int ch = 0; ch < rq.channels; ch++) {
                        size_t at = (size_t)k * (size_t)rq.channels + (size_t)ch;
                        cJSON_AddItemToArray(ia, cJSON_CreateNumber(rq.ints[at]));
                        cJSON_AddItemToArray(fa, cJSON_CreateNumber((double)rq.floats[at]));
                    }
                    cJSON_AddItemToArray(rows, row);
                }
            }
            if (w) {
                size_t n = (size_t)cv->out_channels * (size_t)cv->in_channels * (size_t)cv->kh *
                           (size_t)cv->kw;
                cJSON *wa = cJSON_AddArrayToObject(o, "weights_oihw");
                for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(wa, cJSON_CreateNumber(w[i]));
            }
            cli_print_json(o, false);
        } else
#endif
            print_layer(&m, cv, &rq, w);
    }
    free(w);
    npk_mgk_requant_free(&rq);
    npk_mgk_free(&m);
    npk_unmap_file(&map);
    return rc;
}

static int m_extract(int argc, char **argv)
{
    const char *out = NULL;
    if (cli_args_output("mgk extract", argc, argv, &out)) return CLI_FAIL;
    if (!out) return cli_usage("mgk extract", "missing -o OUT.safetensors");
    if (optind + 1 != argc) return cli_usage("mgk extract", "expected one FILE");
    if (!npk_safetensors_available())
        return cli_fail("mgk extract: this build has no safetensors support (needs libcjson)");
    const char *path = argv[optind];
    npk_mapped map;
    npk_mgk_model m;
    int rc = load(path, &map, &m);
    if (rc) return rc;
    npk_error err = {0};
    npk_tensor_set set;
    if (npk_mgk_extract(&m, &set, &err)) {
        rc = cli_error(path, &err);
    } else {
        if (npk_st_save(out, set.items, set.count, &err)) rc = cli_error(out, &err);
        npk_set_free(&set);
    }
    for (size_t i = 0; rc == CLI_OK && i < m.nconvs; i++)
        if (!m.convs[i].usable) {
            fprintf(stderr, "npukit: %s: layer %d skipped: %s\n", path, m.convs[i].id,
                    m.convs[i].problem);
            rc = CLI_PROBLEMS;
        }
    for (size_t i = 0; rc != CLI_FAIL && i < m.ngrus; i++)
        if (!m.grus[i].usable) {
            fprintf(stderr, "npukit: %s: GRU layer %d skipped: %s\n", path, m.grus[i].id,
                    m.grus[i].problem);
            rc = CLI_PROBLEMS;
        }
    npk_mgk_free(&m);
    npk_unmap_file(&map);
    return rc;
}

static int m_replace(int argc, char **argv)
{
    const char *out = NULL, *weights = NULL;
    if (cli_args_output_weights("mgk replace", argc, argv, &out, &weights)) return CLI_FAIL;
    if (!out || !weights)
        return cli_usage("mgk replace", "need --weights IN.safetensors and -o OUT");
    if (optind + 1 != argc) return cli_usage("mgk replace", "expected one FILE");
    if (!npk_safetensors_available())
        return cli_fail("mgk replace: this build has no safetensors support (needs libcjson)");
    const char *path = argv[optind];
    npk_mapped map;
    npk_mgk_model m;
    int rc = load(path, &map, &m);
    if (rc) return rc;
    npk_error err = {0};
    npk_tensor_set set;
    npk_set_init(&set);
    uint8_t *buf = NULL;
    size_t len = 0;
    npk_mgk_replace_stats stats;
    if (npk_protect_path(weights, &err) || npk_st_load(weights, &set, &err))
        rc = cli_error(weights, &err);
    else if (npk_mgk_replace(&m, &set, &buf, &len, &stats, &err))
        rc = cli_error(err.input == 1 ? weights : path, &err); /* model or weights (mgk.h) */
    else if (npk_write_file(out, buf, len, &err))
        rc = cli_error(out, &err);
    else
        fprintf(stderr,
                "npukit: %s: %zu layer(s) re-encoded, %zu byte(s) changed, %zu tensor(s) "
                "ignored\n",
                out, stats.layers, stats.bytes_changed, stats.ignored);
    free(buf);
    npk_set_free(&set);
    npk_mgk_free(&m);
    npk_unmap_file(&map);
    return rc;
}

static int parse_layer(const char *s, npk_mgk_synth_layer *l)
{
    int64_t v[7] = {0, 0, 0, 0, 0, 1, 1};
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == 7 || !cli_parse_i64(tok, &v[n]) || v[n] < 1 || v[n] > 4096) return -1;
        n++;
    }
    if (n != 5 && n != 7) return -1;
    memset(l, 0, sizeof *l);
    l->cin = (int)v[0];
    l->cout = (int)v[1];
    l->kh = (int)v[2];
    l->kw = (int)v[3];
    l->bits = (int)v[4];
    l->stride_h = (int)v[5];
    l->stride_w = (int)v[6];
    return 0;
}

static int m_synth(int argc, char **argv)
{
    const char *out = NULL;
    npk_mgk_synth_layer layers[64];
    size_t nl = 0;
    npk_mgk_synth_spec spec = {layers, 0, 1, false, false, 0, 0};
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"layer", required_argument, NULL, 'l'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"extra-records", no_argument, NULL, 'x'},
                                         {"garbage", no_argument, NULL, 'g'},
                                         {"size", required_argument, NULL, 'z'},
                                         {0, 0, 0, 0}};
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'l':
            if (nl == sizeof layers / sizeof layers[0])
                return cli_usage("mgk synth", "at most %zu layers", nl);
            if (parse_layer(optarg, &layers[nl]))
                return cli_usage("mgk synth", "bad --layer '%s' (want CIN,COUT,KH,KW,BITS)",
                                 optarg);
            nl++;
            break;
        case 's':
            if (!cli_parse_u64(optarg, &spec.seed)) return cli_usage("mgk synth", "bad --seed");
            break;
        case 'x': spec.extra_records = true; break;
        case 'g': spec.garbage = true; break;
        case 'z': {
            int64_t h, w;
            char buf[64], *x;
            snprintf(buf, sizeof buf, "%s", optarg);
            x = strchr(buf, 'x');
            if (!x) return cli_usage("mgk synth", "bad --size '%s' (want HxW)", optarg);
            *x = 0;
            if (!cli_parse_i64(buf, &h) || !cli_parse_i64(x + 1, &w) || h < 1 || w < 1 ||
                h > 1024 || w > 1024)
                return cli_usage("mgk synth", "bad --size '%s' (want HxW, 1..1024)", optarg);
            spec.height = (int)h;
            spec.width = (int)w;
            break;
        }
        default: return cli_bad_option("mgk synth", argv);
        }
    }
    if (!out) return cli_usage("mgk synth", "missing -o OUT.mgk");
    if (optind != argc) return cli_usage("mgk synth", "unexpected argument '%s'", argv[optind]);
    if (nl == 0) layers[nl++] = (npk_mgk_synth_layer){16, 8, 3, 3, 8, 1, 1, NULL};
    spec.nlayers = nl;
    npk_error err = {0};
    uint8_t *buf;
    size_t len;
    if (npk_mgk_synth(&spec, &buf, &len, &err)) return cli_error(NULL, &err);
    int rc = npk_write_file(out, buf, len, &err) ? cli_error(out, &err) : CLI_OK;
    free(buf);
    return rc;
}
