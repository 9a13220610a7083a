/* Record bodies, per kind, in the order the vendor code reads or passes
 * them (docs/mgk.md "Record bodies" has the evidence for every field).
 * Tags in the meanings: [code] = read order or argument in the ELF's
 * param_init code or generated constructor; [data] = checked on the
 * fixture's bytes; [manual] = the t41-pluto NNA manual. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "mgk_internal.h"

#define I32 NPK_MGK_F_I32
#define U8  NPK_MGK_F_U8

static const struct {
    const char *name;
    npk_mgk_kind kind;
} kinds[] = {
    {"Convolution", NPK_MGK_K_CONV}, {"FormatConvert", NPK_MGK_K_FORMAT_CONVERT},
    {"Reshape", NPK_MGK_K_RESHAPE},  {"Concat", NPK_MGK_K_CONCAT},
    {"Gru", NPK_MGK_K_GRU},          {"Normalize", NPK_MGK_K_NORMALIZE},
    {"Add", NPK_MGK_K_ADD},          {"UpSample", NPK_MGK_K_UPSAMPLE},
    {"Permute", NPK_MGK_K_PERMUTE},
};

npk_mgk_kind mgk_kind_of(npk_mgk_str kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (npk_mgk_str_eq(kind, kinds[i].name)) return kinds[i].kind;
    return NPK_MGK_K_UNKNOWN;
}

const char *npk_mgk_kind_name(npk_mgk_kind k)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == k) return kinds[i].name;
    return "unknown";
}

/* The tensor block ending every body: read_tensor_param (flag, one shape per
 * output, index, a constant, output offsets) and, except for Gru, the input
 * offsets and seven more values. */
static void decode_tb(mgk_fdec *d, npk_mgk_tblock *tb, uint32_t nout, bool tail)
{
    static const char *shape_names[NPK_MGK_MAX_TB] = {"out_shape",   "out_shape_1", "out_shape_2",
                                                      "out_shape_3", "out_shape_4", "out_shape_5",
                                                      "out_shape_6", "out_shape_7"};
    if (nout > NPK_MGK_MAX_TB) {
        if (!d->st)
            d->st = npk_fail_at(d->err, NPK_E_LIMIT, npk_cur_offset(d->c),
                                "%u outputs, at most %d supported", nout, NPK_MGK_MAX_TB);
        return;
    }
    tb->flag = (uint8_t)mgk_f_int(
        d, U8, "tb_flag", "[code] first read of read_tensor_param; 1 on 10 of 62 records", false);
    tb->nshapes = nout;
    for (uint32_t k = 0; k < nout; k++) {
        tb->rank[k] =
            mgk_f_ivec(d, shape_names[k],
                       "[code][data] shape of the output, in its format (NHWC or NDHWC32); the "
                       "constructor passes the same",
                       true, tb->shape[k], NPK_MGK_MAX_RANK);
        if (!d->st && tb->rank[k] > NPK_MGK_MAX_RANK)
            d->st = npk_fail_at(d->err, NPK_E_LIMIT, npk_cur_offset(d->c),
                                "output shape of %u dimensions", tb->rank[k]);
    }
    tb->index = (int32_t)mgk_f_int(
        d, I32, "layer_index", "[data] the record's own index in the blob (all 62 records)", true);
    tb->one = (int32_t)mgk_f_int(d, I32, "tb_one", "1 in every record", false);
    tb->nout_off = mgk_f_i64vec(
        d, "out_arena_offsets",
        "[code][data] offsets of the outputs in the forward-memory arena (constructor argument)",
        true, tb->out_off, NPK_MGK_MAX_TB);
    tb->present = d->st == NPK_OK;
    if (!tail) return;
    tb->nin_off = mgk_f_i64vec(d, "in_arena_offsets",
                               "[code][data] offsets of the inputs in the forward-memory arena",
                               true, tb->in_off, NPK_MGK_MAX_TB);
    mgk_f_i64vec(d, "tb_vec_a", "-1 per input in the fixture", false, NULL, 0);
    mgk_f_i64vec(d, "tb_vec_b", "-1 in the fixture", false, NULL, 0);
    mgk_f_int(d, U8, "tb_u8_a", "constructor argument (0)", false);
    mgk_f_int(d, U8, "tb_u8_b", "constructor argument (0)", false);
    mgk_f_int(d, I32, "tb_size", "constructor argument: 0, 128, 4096, 8192 or more", false);
    mgk_f_int(d, I32, "tb_i32_b", "constructor argument", false);
    mgk_f_int(d, I32, "tb_i32_c", "constructor argument", false);
    tb->has_tail = d->st == NPK_OK;
}

static void decode_format_convert(mgk_fdec *d, npk_mgk_params *p)
{
    p->q = (int32_t)mgk_f_int(d, I32, "zp_word",
                              "[code] constructor argument 10: the data's zero point where its "
                              "producer sets one; uninitialised bytes on 2 records",
                              false);
    mgk_f_int(d, I32, "fc_one", "constructor argument 9 (1)", false);
    p->fc_channels = (int32_t)mgk_f_int(
        d, I32, "channels", "[code][data] channels C of the NHWC side (constructor argument 11)",
        true);
    p->fc_direction = (int32_t)mgk_f_int(
        d, I32, "direction",
        "[code][data] 0: NHWC to NDHWC32, 1: NDHWC32 to NHWC (agrees with the formats)", true);
}

static void decode_normalize(mgk_fdec *d, npk_mgk_params *p)
{
    p->q = (int32_t)mgk_f_int(
        d, I32, "out_zp",
        "[code][data] output zero point (142: the input quantiser; 133: checked by the Adds)",
        true);
    mgk_f_int(d, I32, "nz_a", "constructor argument (1)", false);
    mgk_f_int(d, I32, "nz_b", "constructor argument (1)", false);
    mgk_f_ivec(d, "bias_shape", "[code] shape of the bias table", true, NULL, 0);
    mgk_f_ivec(d, "scale_shape", "[code] shape of the scale table", true, NULL, 0);
    p->nz_bias_count = (int32_t)mgk_f_int(d, I32, "bias_count", "[code] fp32 items", true);
    p->nz_bias_offset = mgk_f_int(
        d, NPK_MGK_F_I64, "bias_offset",
        "[code][data] fp32 per-channel bias (y = x * scale + bias, code units), region offset",
        true);
    p->nz_scale_count = (int32_t)mgk_f_int(d, I32, "scale_count", "[code] fp32 items", true);
    p->nz_scale_offset = mgk_f_int(d, NPK_MGK_F_I64, "scale_offset",
                                   "[code][data] fp32 per-channel scale, region offset", true);
}

static void decode_add(mgk_fdec *d, npk_mgk_params *p)
{
    p->q = (int32_t)mgk_f_int(d, I32, "zp_word", "[code] read to ConvOp +0x9C", false);
    p->add_mode = (int32_t)mgk_f_int(
        d, I32, "mode", "[code][manual] read to +0xB0: 2 = requantised by the NNA (packed)", true);
    mgk_f_int(d, U8, "add_flag", "[code] read to +0xFD (1)", false);
    mgk_f_int(d, I32, "add_i104", "[code] read to +0x104 (0)", false);
    mgk_f_f32(d, "add_f100", "[code] read to +0x100 (1.0)", false);
    p->add_ninputs = mgk_f_ivec(
        d, "weights",
        "[code][data] per-input multipliers w: y = floor((64 * sum(w * x) + bias) / mult) + 128",
        true, p->add_w, NPK_MGK_MAX_INPUTS);
    mgk_f_ivec(d, "weights_copy", "[code] read to +0x11C; equals `weights` in both records", false,
               NULL, 0);
    p->add_mult =
        mgk_f_f32(d, "mult", "[code][data] divisor (fp32, truncated by the kernel)", true);
    p->add_bias = mgk_f_f32(d, "bias", "[code][data] bias (fp32, truncated by the kernel)", true);
    mgk_f_int(d, I32, "add_i13c", "[code] read to +0x13C (3)", false);
}

static void decode_concat(mgk_fdec *d, npk_mgk_params *p)
{
    p->q = (int32_t)mgk_f_int(
        d, I32, "zp_word",
        "[data] high 16 bits: output zero point (the constructor's per-channel one)", true);
    mgk_f_int(d, I32, "cat_one", "constructor argument (1)", false);
    p->cat_inv_scale = mgk_f_f32(d, "inv_out_scale", "[code][data] 1 / output scale", true);
    uint32_t n = mgk_f_ivec(d, "neg_in_zp", "[code][data] minus each input's zero point", true,
                            p->cat_zp, NPK_MGK_MAX_INPUTS);
    for (uint32_t i = 0; i < n && i < NPK_MGK_MAX_INPUTS; i++) p->cat_zp[i] = -p->cat_zp[i];
    p->cat_ninputs = mgk_f_f32vec(d, "in_scale", "[code][data] each input's scale", true,
                                  p->cat_scale, NPK_MGK_MAX_INPUTS);
    if (!d->st && (n != p->cat_ninputs || n > NPK_MGK_MAX_INPUTS))
        d->st = npk_fail_at(d->err, NPK_E_FORMAT, npk_cur_offset(d->c),
                            "concat: %u zero points for %u scales", n, p->cat_ninputs);
    mgk_f_ivec3(d, "cat_layout", "vector of vectors of [0, 64, 1, 3] in the fixture", false);
}

static void decode_upsample(mgk_fdec *d, npk_mgk_params *p)
{
    p->q =
        (int32_t)mgk_f_int(d, I32, "zp_word", "[code][data] zero point of input and output", true);
    mgk_f_int(d, I32, "up_one", "constructor argument (1)", false);
    p->up_mode = (int32_t)mgk_f_int(
        d, I32, "up_mode", "constructor argument (0); read as nearest-neighbour (inferred)", false);
    mgk_f_int(d, I32, "up_i128", "constructor argument (128)", false);
    mgk_f_f32(d, "up_f", "constructor argument (1.0)", false);
    p->up_nscales =
        mgk_f_f32vec(d, "scales", "[code][data] factors for (W, H): out W = in W * 2 here", true,
                     p->up_scales, NPK_MGK_MAX_RANK);
}

static void decode_permute(mgk_fdec *d, npk_mgk_params *p)
{
    (void)p;
    mgk_f_int(d, I32, "perm_one",
              "constructor argument (1); the permutation itself is passed by the constructor, "
              "not stored",
              false);
}

/* ---- convolutions ---- */

static void conv_problem(npk_mgk_conv *c, const char *fmt, ...) NPK_PRINTF(2, 3);
static void conv_problem(npk_mgk_conv *c, const char *fmt, ...)
{
    if (c->problem[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->problem, sizeof c->problem, fmt, ap);
    va_end(ap);
}

static bool in_region(const npk_mgk_model *m, int64_t off, uint64_t size)
{
    return off >= 0 && size <= m->region_size && (uint64_t)off <= m->region_size - size;
}

/* Check the decoded fields and derive sizes; sets usable / requant_ok. */
static void conv_derive(const npk_mgk_model *m, npk_mgk_conv *c)
{
    const int32_t *ws = c->weight_shape, *rs = c->requant_shape;
    const npk_mgk_bitwidth *bw = npk_mgk_bitwidth_by_planes(ws[4]);
    c->n_ofp = ws[0];
    c->m_ifp = ws[1];
    c->kh = ws[2];
    c->kw = ws[3];
    c->planes = ws[4];
    if (ws[5] != 32 || ws[6] != 32) {
        conv_problem(c, "weight shape lanes %d x %d, expected 32 x 32", ws[5], ws[6]);
        return;
    }
    for (int i = 0; i < 4; i++)
        if (ws[i] < 1 || ws[i] > 4096) {
            conv_problem(c, "weight shape dimension %d is %d", i, ws[i]);
            return;
        }
    if (!bw) {
        conv_problem(c, "S_BIT2 = %d planes: no known bit width", ws[4]);
        return;
    }
    c->bits = bw->bits;
    uint64_t elems = (uint64_t)ws[0] * (uint64_t)ws[1] * (uint64_t)ws[2] * (uint64_t)ws[3] *
                     (uint64_t)ws[4] * 1024u;
    if (c->counts[0] < 0 || elems != (uint64_t)c->counts[0]) {
        conv_problem(c, "weight element count %d does not match the shape (%llu)", c->counts[0],
                     (unsigned long long)elems);
        return;
    }
    c->weight_bytes = elems / 4;
    if (!in_region(m, c->offsets[0], c->weight_bytes)) {
        conv_problem(c, "weights at region+0x%llx (%llu bytes) lie outside the weight region",
                     (unsigned long long)c->offsets[0], (unsigned long long)c->weight_bytes);
        return;
    }
    c->weight_offset = (uint64_t)c->offsets[0];
    /* Real channel counts select the lanes; if they do not fit, keep all lanes. */
    if (c->cout > 32 * (c->n_ofp - 1) && c->cout <= 32 * c->n_ofp && c->cin > 32 * (c->m_ifp - 1) &&
        c->cin <= 32 * c->m_ifp) {
        c->out_channels = c->cout;
        c->in_channels = c->cin;
        c->unpadded = true;
    } else {
        c->out_channels = 32 * c->n_ofp;
        c->in_channels = 32 * c->m_ifp;
        conv_problem(c, "Cin/Cout %d/%d do not fit the weight shape; all lanes used", c->cin,
                     c->cout);
    }
    c->usable = true;
    if (rs[0] != ws[0] || rs[1] < 1 || rs[1] > 64 || rs[2] != 1 || rs[3] != 1 || rs[4] != 32) {
        conv_problem(c, "requant shape [%d, %d, %d, %d, %d] not understood", rs[0], rs[1], rs[2],
                     rs[3], rs[4]);
        return;
    }
    uint64_t rq = (uint64_t)rs[0] * 32u * (uint64_t)rs[1];
    if (c->counts[1] < 0 || rq != (uint64_t)c->counts[1]) {
        conv_problem(c, "requant element count %d does not match its shape (%llu)", c->counts[1],
                     (unsigned long long)rq);
        return;
    }
    c->requant_bytes = rq * 4;
    if (!in_region(m, c->offsets[1], c->requant_bytes)) {
        conv_problem(c, "requant table at region+0x%llx (%llu bytes) lies outside the region",
                     (unsigned long long)c->offsets[1], (unsigned long long)c->requant_bytes);
        return;
    }
    c->m_bt = rs[1];
    c->requant_offset = (uint64_t)c->offsets[1];
    c->requant_ok = true;
}

/* The convolution body in the read order of conv2d_int8_param_init. */
static void decode_conv(mgk_fdec *d, npk_mgk_conv *cv)
{
    cv->zp_word = (int32_t)mgk_f_int(
        d, I32, "zp_word",
        "[code][data] ConvOp +0x9C: low 16 bits input zero point, high 16 bits the output's "
        "(equal along every edge between layers)",
        true);
    cv->rq_code = (uint16_t)mgk_f_int(
        d, NPK_MGK_F_U16, "rq_code", "[code][manual] +0xA4 requant-mode code (1 or 2 here)", false);
    cv->clamp_word = (uint64_t)mgk_f_int(d, NPK_MGK_F_I64, "clamp_word",
                                         "[code][manual] +0xA8 zero-point/clamp word", false);
    cv->mode = (uint32_t)mgk_f_int(
        d, NPK_MGK_F_U32, "mode",
        "[code][manual][data] +0xB0: &7 = 1 float requant (CPU), 2 packed by the NNA; "
        "bit 3 on five-row (two-slope packed) tables",
        true);
    cv->rows_flag = (int32_t)mgk_f_int(d, I32, "rows_flag", "[code] read to +0xE4 (1)", false);
    cv->nrows_a =
        mgk_f_ivec(d, "rows_a", "[code] first item goes to +0xE0 (empty)", false, NULL, 0);
    cv->nrows_b =
        mgk_f_ivec(d, "rows_b", "[code] first item goes to +0xE4 (empty)", false, NULL, 0);
    cv->unknown_a =
        (int32_t)mgk_f_int(d, I32, "conv_fc", "[code] +0xFC: 2 on 1xk, 1 on 1x1", false);
    cv->cin = (int32_t)mgk_f_int(d, I32, "cin", "[code][data] real input channels (+0x100)", true);
    cv->cout =
        (int32_t)mgk_f_int(d, I32, "cout", "[code][manual] real output channels (+0x104)", true);
    cv->npads =
        mgk_f_ivec(d, "pads", "[manual] [top, bottom, left, right] (+0x10C)", true, cv->pads, 8);
    cv->nkernel = mgk_f_ivec(d, "kernel", "[manual] [w, h] (+0x118)", true, cv->kernel, 8);
    cv->nstride = mgk_f_ivec(d, "stride", "[manual] [col, row] (+0x124)", true, cv->stride, 8);
    cv->ndilation = mgk_f_ivec(d, "dilation", "[manual] [w, h] (+0x130)", true, cv->dilation, 8);
    if (!d->st && (cv->npads > 8 || cv->nkernel > 8 || cv->nstride > 8 || cv->ndilation > 8))
        d->st = npk_fail_at(d->err, NPK_E_FORMAT, npk_cur_offset(d->c),
                            "convolution geometry vector of more than 8 integers");
    cv->unknown_b[0] =
        (int32_t)mgk_f_int(d, I32, "group", "[manual] +0x15C split/group divisor (1)", false);
    cv->unknown_b[1] = (int32_t)mgk_f_int(d, I32, "conv_164", "[code] +0x164 (2)", false);
    cv->unknown_c[0] = (uint8_t)mgk_f_int(d, U8, "conv_169", "[code] +0x169 (0)", false);
    cv->unknown_c[1] = (uint8_t)mgk_f_int(d, U8, "conv_178", "[code] +0x178 (0)", false);
    cv->unknown_c[2] = (uint8_t)mgk_f_int(d, U8, "conv_168", "[code] +0x168 (1)", false);
    cv->act = (int32_t)mgk_f_int(
        d, I32, "act",
        "[manual][data] +0x174 activation kind: 3 with two-slope (PReLU) tables, -1 none", true);
    cv->layout = mgk_f_str(d, "channel_layout", "[code] string2channel_layout (BGRA)", true);
    mgk_f_bytes(d, 5, "zero_points", "[manual] +0x184..0x188 activation zero points (0)", false);
    if (!d->st) memcpy(cv->zero_points, d->m->data + npk_cur_offset(d->c) - 5, 5);
    cv->unknown_d =
        (int32_t)mgk_f_int(d, I32, "weight_code", "[code] read before the shapes (6)", false);
    cv->shape_pos = npk_cur_offset(d->c);
    uint32_t n = mgk_f_ivec(d, "weight_shape", "[data] NMHWSOIB2 [N, M, KH, KW, S, 32, 32]", true,
                            cv->weight_shape, 7);
    if (!d->st && n != 7)
        d->st = npk_fail_at(d->err, NPK_E_FORMAT, cv->shape_pos,
                            "convolution weight shape has %u dimensions, expected 7", n);
    uint64_t at = npk_cur_offset(d->c);
    n = mgk_f_ivec(d, "requant_shape", "[data] [N, M_BT, 1, 1, 32]", true, cv->requant_shape, 5);
    if (!d->st && n != 5)
        d->st = npk_fail_at(d->err, NPK_E_FORMAT, at,
                            "convolution requant shape has %u dimensions, expected 5", n);
    cv->nthird = mgk_f_ivec(d, "third_shape", "a third tensor ([0])", false, cv->third_shape, 8);
    if (!d->st && cv->nthird > 8)
        d->st = npk_fail_at(d->err, NPK_E_FORMAT, npk_cur_offset(d->c), "third shape too long");
    cv->has_third = (uint8_t)mgk_f_int(d, U8, "has_third", "0", false);
    cv->counts[0] =
        (int32_t)mgk_f_int(d, I32, "weight_elems", "[data] product of weight_shape", true);
    cv->counts[1] =
        (int32_t)mgk_f_int(d, I32, "requant_elems", "[data] product of requant_shape", true);
    cv->counts[2] = (int32_t)mgk_f_int(d, I32, "third_elems", "0", false);
    cv->offsets[0] = mgk_f_int(d, NPK_MGK_F_I64, "weight_offset", "[data] region offset", true);
    cv->offsets[1] = mgk_f_int(d, NPK_MGK_F_I64, "requant_offset", "[data] region offset", true);
    cv->offsets[2] = mgk_f_int(d, NPK_MGK_F_I64, "third_offset", "0", false);
}

/* The rest of a convolution (a fourth tensor and the tensor block). */
static void decode_conv_tail(mgk_fdec *d, npk_mgk_conv *cv, npk_mgk_params *p, uint32_t nout)
{
    cv->nfourth =
        mgk_f_ivec(d, "fourth_shape", "[code] shape of a fourth tensor (empty)", false, NULL, 0);
    cv->fourth_count = (int32_t)mgk_f_int(d, I32, "fourth_elems", "[code] (0)", false);
    cv->fourth_offset = mgk_f_int(d, NPK_MGK_F_I64, "fourth_offset", "[code] (0)", false);
    decode_tb(d, &p->tb, nout, true);
}

/* Replace the fields from `keep` on by one unknown BYTES field covering the
 * rest of the body, and warn. */
static npk_status fallback(npk_mgk_model *m, npk_mgk_record *r, size_t idx, uint32_t keep,
                           uint64_t from, uint64_t fail_at, const char *why)
{
    r->nfields = keep;
    uint64_t end = r->offset + r->size - 8;
    if (from < end) {
        npk_mgk_field f;
        memset(&f, 0, sizeof f);
        f.name = "undecoded";
        f.meaning = "bytes that do not match the layout of this kind";
        f.type = NPK_MGK_F_BYTES;
        f.offset = from;
        f.data = from;
        f.size = f.count = (uint32_t)(end - from);
        npk_mgk_field *nf = realloc(r->fields, (keep + 1) * sizeof *nf);
        if (!nf) return NPK_E_NOMEM;
        r->fields = nf;
        r->fields[r->nfields++] = f;
    }
    char kind[64];
    mgk_warn(m, fail_at, "record #%zu (%s): body not decoded: %s", idx,
             mgk_printable(r->kind, kind, sizeof kind), why);
    return NPK_OK;
}

npk_status mgk_decode_body(npk_mgk_model *m, size_t idx, npk_cursor *c, npk_error *err)
{
    npk_mgk_record *r = &m->records[idx];
    npk_mgk_params *p = &r->p;
    memset(p, 0, sizeof *p);
    p->kind = mgk_kind_of(r->kind);
    npk_error local = {0};
    mgk_fdec d = {m, r, c, &local, NPK_OK, 0};
    uint64_t body = npk_cur_offset(c);
    if (p->kind == NPK_MGK_K_UNKNOWN) {
        mgk_f_bytes(&d, npk_cur_left(c), "body", "record of an unknown kind", false);
        return d.st == NPK_E_NOMEM ? npk_fail(err, NPK_E_NOMEM, "out of memory") : NPK_OK;
    }
    uint32_t keep = 0;
    uint64_t from = body;
    if (p->kind == NPK_MGK_K_CONV) {
        npk_mgk_conv *cv = &m->convs[m->nconvs];
        memset(cv, 0, sizeof *cv);
        cv->record = idx;
        cv->id = (int)idx;
        d.err = err;
        decode_conv(&d, cv);
        if (d.st) return d.st; /* damage to what the weights need is an error */
        conv_derive(m, cv);
        r->conv = (int)m->nconvs++;
        keep = r->nfields;
        from = npk_cur_offset(c);
        d.err = &local;
        decode_conv_tail(&d, cv, p, r->nout);
        cv->tail_offset = npk_cur_offset(c);
        cv->tail_size = npk_cur_left(c);
    } else {
        switch (p->kind) {
        case NPK_MGK_K_FORMAT_CONVERT: decode_format_convert(&d, p); break;
        case NPK_MGK_K_NORMALIZE: decode_normalize(&d, p); break;
        case NPK_MGK_K_ADD: decode_add(&d, p); break;
        case NPK_MGK_K_CONCAT: decode_concat(&d, p); break;
        case NPK_MGK_K_UPSAMPLE: decode_upsample(&d, p); break;
        case NPK_MGK_K_PERMUTE: decode_permute(&d, p); break;
        default: break; /* Reshape and Gru: the tensor block only */
        }
        decode_tb(&d, &p->tb, r->nout, p->kind != NPK_MGK_K_GRU);
    }
    if (d.st == NPK_E_NOMEM) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    if (d.st || npk_cur_left(c)) {
        uint64_t at = d.st && local.has_offset ? local.offset : npk_cur_offset(c);
        char why[300];
        if (d.st)
            snprintf(why, sizeof why, "%s", local.msg);
        else
            snprintf(why, sizeof why, "%zu bytes left after the tensor block", npk_cur_left(c));
        memset(&p->tb, 0, sizeof p->tb);
        if (fallback(m, r, idx, keep, from, at, why))
            return npk_fail(err, NPK_E_NOMEM, "out of memory");
        return NPK_OK;
    }
    p->decoded = true;
    return NPK_OK;
}
