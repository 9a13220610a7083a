/* A generator of small synthetic MGK files, for tests, fuzz seeds and the
 * demo. It writes the layout npukit parses (docs/mgk.md): a minimal ELF32
 * little-endian MIPS image, a weight region, a `model` blob of convolution
 * records, the version sections, a segment record, a section table and the
 * IMGK footer. Fields of unknown meaning are filled with the values seen in
 * the vendor file or with zeros. Not a compiler: the files do not run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "mgk_internal.h"

#define MAX_SYNTH_LAYERS   256
#define MAX_SYNTH_CHANNELS 4096
#define MAX_SYNTH_KERNEL   16
#define MAX_SYNTH_SIZE     1024

typedef struct obuf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} obuf;

static uint8_t *ob_grow(obuf *b, size_t n)
{
    if (b->oom) return NULL;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    uint8_t *at = b->p + b->n;
    memset(at, 0, n);
    b->n += n;
    return at;
}
static void ob_bytes(obuf *b, const void *d, size_t n)
{
    uint8_t *p = ob_grow(b, n);
    if (p && n) memcpy(p, d, n);
}
static void ob_u8(obuf *b, uint8_t v)
{
    ob_bytes(b, &v, 1);
}
static void ob_u16(obuf *b, uint16_t v)
{
    uint8_t *p = ob_grow(b, 2);
    if (p) npk_st16le(p, v);
}
static void ob_u32(obuf *b, uint32_t v)
{
    uint8_t *p = ob_grow(b, 4);
    if (p) npk_st32le(p, v);
}
static void ob_i32(obuf *b, int32_t v)
{
    ob_u32(b, (uint32_t)v);
}
static void ob_u64(obuf *b, uint64_t v)
{
    uint8_t *p = ob_grow(b, 8);
    if (p) npk_st64le(p, v);
}
static void ob_str(obuf *b, const char *s)
{
    ob_u32(b, (uint32_t)strlen(s));
    ob_bytes(b, s, strlen(s));
}
static void ob_ivec(obuf *b, const int32_t *v, uint32_t n)
{
    ob_u32(b, n);
    for (uint32_t i = 0; i < n; i++) ob_i32(b, v[i]);
}
static void ob_align(obuf *b, size_t a)
{
    while (b->n % a) ob_u8(b, 0);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* ---- ELF image ---- */

static void put_sym(obuf *b, uint32_t name, uint32_t value, uint32_t size, uint8_t info,
                    uint16_t shndx)
{
    ob_u32(b, name);
    ob_u32(b, value);
    ob_u32(b, size);
    ob_u8(b, info);
    ob_u8(b, 0);
    ob_u16(b, shndx);
}

static void put_shdr(obuf *b, uint32_t name, uint32_t type, uint32_t flags, uint32_t off,
                     uint32_t size, uint32_t link, uint32_t info, uint32_t align, uint32_t entsize)
{
    ob_u32(b, name);
    ob_u32(b, type);
    ob_u32(b, flags);
    ob_u32(b, (flags & 2) ? off : 0); /* SHF_ALLOC: address = offset */
    ob_u32(b, off);
    ob_u32(b, size);
    ob_u32(b, link);
    ob_u32(b, info);
    ob_u32(b, align);
    ob_u32(b, entsize);
}

static void build_elf(obuf *b)
{
    static const char dynstr[] = "\0create\0destroy\0conv2d_int8_param_init\0magik_set_tensor";
    static const char shstr[] = "\0.text\0.dynsym\0.dynstr\0.shstrtab";
    ob_grow(b, 52 + 32); /* ELF header and one program header, filled below */
    size_t text = b->n;
    ob_u32(b, 0x03e00008); /* jr $ra */
    ob_u32(b, 0);          /* nop */
    ob_u32(b, 0x03e00008);
    ob_u32(b, 0);
    ob_u32(b, 0x03e00008);
    ob_u32(b, 0);
    size_t text_end = b->n;
    size_t dstr = b->n;
    ob_bytes(b, dynstr, sizeof dynstr);
    ob_align(b, 4);
    size_t dsym = b->n;
    put_sym(b, 0, 0, 0, 0, 0);
    put_sym(b, 1, (uint32_t)text, 8, 0x12, 1);       /* create: GLOBAL FUNC */
    put_sym(b, 8, (uint32_t)text + 8, 8, 0x12, 1);   /* destroy */
    put_sym(b, 16, (uint32_t)text + 16, 8, 0x12, 1); /* conv2d_int8_param_init */
    put_sym(b, 39, 0, 0, 0x10, 0);                   /* an import: undefined */
    size_t dsym_end = b->n;
    size_t sstr = b->n;
    ob_bytes(b, shstr, sizeof shstr);
    ob_align(b, 4);
    size_t shoff = b->n;
    put_shdr(b, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    put_shdr(b, 1, 1, 6, (uint32_t)text, (uint32_t)(text_end - text), 0, 0, 4, 0);
    put_shdr(b, 7, 11, 2, (uint32_t)dsym, (uint32_t)(dsym_end - dsym), 3, 1, 4, 16);
    put_shdr(b, 15, 3, 2, (uint32_t)dstr, sizeof dynstr, 0, 0, 1, 0);
    put_shdr(b, 23, 3, 0, (uint32_t)sstr, sizeof shstr, 0, 0, 1, 0);
    if (b->oom) return;
    uint8_t *eh = b->p;
    memcpy(eh,
           "\x7f"
           "ELF\x01\x01\x01\x00\x03",
           9);
    npk_st16le(eh + 16, 3); /* ET_DYN */
    npk_st16le(eh + 18, 8); /* EM_MIPS */
    npk_st32le(eh + 20, 1);
    npk_st32le(eh + 24, (uint32_t)text);
    npk_st32le(eh + 28, 52);
    npk_st32le(eh + 32, (uint32_t)shoff);
    npk_st32le(eh + 36, 0x70001007); /* mips32r2, o32, pic, cpic, noreorder */
    npk_st16le(eh + 40, 52);
    npk_st16le(eh + 42, 32);
    npk_st16le(eh + 44, 1);
    npk_st16le(eh + 46, 40);
    npk_st16le(eh + 48, 5);
    npk_st16le(eh + 50, 4);
    uint8_t *ph = eh + 52;
    npk_st32le(ph, 1); /* PT_LOAD of header and code */
    npk_st32le(ph + 16, (uint32_t)text_end);
    npk_st32le(ph + 20, (uint32_t)text_end);
    npk_st32le(ph + 24, 5);
    npk_st32le(ph + 28, 0x10000);
}

/* ---- weight region and records ---- */

typedef struct lplace {
    uint64_t woff, wbytes, roff, rbytes;
    int n, m, s;
} lplace;

static npk_status fill_layer(const npk_mgk_synth_layer *l, uint8_t *region, lplace *p,
                             uint64_t *seed, npk_error *err)
{
    npk_mgk_wshape s = {p->n, p->m, l->kh, l->kw, l->bits, l->cout, l->cin, 0};
    uint8_t *blk = region + p->woff;
    for (uint64_t i = 0; i < p->wbytes; i++)
        blk[i] = (uint8_t)(rnd(seed) >> 56); /* padding lanes too */
    size_t count = (size_t)l->cout * (size_t)l->cin * (size_t)l->kh * (size_t)l->kw;
    int8_t *v = (int8_t *)l->weights;
    int8_t *own = NULL;
    if (!v) {
        own = malloc(count);
        if (!own) return npk_fail(err, NPK_E_NOMEM, "out of memory");
        int lo = -(1 << (l->bits - 1)), span = 1 << l->bits;
        for (size_t i = 0; i < count; i++) own[i] = (int8_t)(lo + (int)(rnd(seed) >> 40) % span);
        v = own;
    }
    npk_status st = npk_mgk_nmhw_encode(&s, v, blk, (size_t)p->wbytes, err);
    free(own);
    if (st) return st;
    /* Float-path requant table: int32 bias row, fp32 scale row per group. */
    uint8_t *rq = region + p->roff;
    for (int g = 0; g < p->n; g++)
        for (int i = 0; i < 32; i++) {
            npk_st32le(rq + g * 256 + i * 4, (uint32_t)((int32_t)(rnd(seed) >> 48) - 32768));
            npk_stf32le(rq + g * 256 + 128 + i * 4,
                        0.0005f + (float)(rnd(seed) >> 40) * (0.0045f / 16777216.0f));
        }
    return NPK_OK;
}

static void put_header(obuf *b, const char *name, const char *in_name, const char *in_fmt,
                       int in_id, int out_id, const char *kernel)
{
    ob_str(b, name);
    ob_u32(b, 1);
    ob_str(b, in_fmt);
    ob_u32(b, 1);
    ob_str(b, "UINT8");
    ob_u32(b, 1);
    ob_i32(b, in_id);
    ob_u32(b, 1);
    ob_str(b, in_name);
    ob_u32(b, 1);
    ob_str(b, "NDHWC32");
    ob_u32(b, 1);
    ob_str(b, "UINT8");
    ob_i32(b, out_id);
    ob_str(b, kernel);
}

static void end_record(obuf *b, size_t start)
{
    ob_u64(b, (uint64_t)(b->n + 8 - start)); /* the record's own length */
}

/* The tensor block: one NDHWC32 output [1, D, H, W, 32]. */
static void put_tblock(obuf *b, int idx, int c, int h, int w)
{
    int32_t shape[5] = {1, (c + 31) / 32, h, w, 32};
    ob_u8(b, 0);
    ob_ivec(b, shape, 5);
    ob_i32(b, idx);
    ob_i32(b, 1);
    ob_u32(b, 1);
    ob_u64(b, 0x1000u * (uint64_t)(idx + 1)); /* arena offsets: any distinct values */
    ob_u32(b, 1);
    ob_u64(b, 0x1000u * (uint64_t)idx);
    ob_u32(b, 1);
    ob_u64(b, ~0ull);
    ob_u32(b, 1);
    ob_u64(b, ~0ull);
    ob_u8(b, 0);
    ob_u8(b, 0);
    ob_i32(b, 0);
    ob_i32(b, 0);
    ob_i32(b, 0);
}

/* Output size of a convolution along one axis. */
static int conv_out(int in, int k, int stride, int pad)
{
    int n = in + 2 * pad - k;
    return n < 0 ? 0 : n / stride + 1;
}

typedef struct synth_tensor {
    char name[48];
    const char *format;
    int id, c, h, w, zp;
} synth_tensor;

/* One convolution record in the read order of conv2d_int8_param_init,
 * float requant path, no activation; `out` receives its output tensor. */
static void put_conv(obuf *b, const npk_mgk_synth_layer *l, const lplace *p, int idx,
                     const synth_tensor *in, synth_tensor *out)
{
    size_t start = b->n;
    int sh = l->stride_h > 0 ? l->stride_h : 1, sw = l->stride_w > 0 ? l->stride_w : 1;
    snprintf(out->name, sizeof out->name, "layer_%d_QuantizeFeature", idx);
    out->format = "NDHWC32";
    out->id = in->id + 1 > idx + 1 ? in->id + 1 : idx + 1;
    out->c = l->cout;
    out->h = conv_out(in->h, l->kh, sh, l->kh / 2);
    out->w = conv_out(in->w, l->kw, sw, l->kw / 2);
    out->zp = 96 + (idx * 37) % 64;
    put_header(b, out->name, in->name, in->format, in->id, out->id, "Convolution/base_i8/2/0/0");
    ob_i32(b, (int32_t)((uint32_t)in->zp | (uint32_t)out->zp << 16));
    ob_u16(b, 1); /* requant-mode code */
    ob_u64(b, 0); /* clamp word */
    ob_u32(b, 1); /* mode: float requant */
    ob_i32(b, 1); /* rows flag */
    ob_u32(b, 0); /* two empty vectors */
    ob_u32(b, 0);
    ob_i32(b, l->kh * l->kw > 1 ? 2 : 1);
    ob_i32(b, l->cin);
    ob_i32(b, l->cout);
    int32_t pads[4] = {l->kh / 2, l->kh / 2, l->kw / 2, l->kw / 2};
    int32_t kernel[2] = {l->kw, l->kh}; /* (W, H) as in the vendor file */
    int32_t stride[2] = {sw, sh};
    int32_t dil[2] = {1, 1};
    ob_ivec(b, pads, 4);
    ob_ivec(b, kernel, 2);
    ob_ivec(b, stride, 2);
    ob_ivec(b, dil, 2);
    ob_i32(b, 1);
    ob_i32(b, 2);
    ob_bytes(b, "\0\0\1", 3);
    ob_i32(b, -1); /* no activation */
    ob_str(b, "BGRA");
    ob_grow(b, 5);
    ob_i32(b, 6);
    int32_t ws[7] = {p->n, p->m, l->kh, l->kw, p->s, 32, 32};
    int32_t rs[5] = {p->n, 2, 1, 1, 32};
    int32_t third[1] = {0};
    ob_ivec(b, ws, 7);
    ob_ivec(b, rs, 5);
    ob_ivec(b, third, 1);
    ob_u8(b, 0);
    ob_i32(b, (int32_t)(p->wbytes * 4));
    ob_i32(b, (int32_t)(p->rbytes / 4));
    ob_i32(b, 0);
    ob_u64(b, p->woff);
    ob_u64(b, p->roff);
    ob_u64(b, 0);
    ob_u32(b, 0); /* fourth tensor: empty shape, 0 elements, offset 0 */
    ob_i32(b, 0);
    ob_u64(b, 0);
    put_tblock(b, idx, out->c, out->h, out->w);
    end_record(b, start);
}

/* FormatConvert NHWC -> NDHWC32 of the graph input. */
static void put_convert(obuf *b, const synth_tensor *in, synth_tensor *out)
{
    size_t start = b->n;
    *out = *in;
    snprintf(out->name, sizeof out->name, "__FormatConvert__0");
    out->format = "NDHWC32";
    out->id = in->id + 1;
    put_header(b, out->name, in->name, in->format, in->id, out->id,
               "FormatConvert/format_cvt_ubit8/2/0/0/");
    ob_i32(b, in->zp);
    ob_i32(b, 1);
    ob_i32(b, in->c);
    ob_i32(b, 0); /* NHWC -> NDHWC32 */
    put_tblock(b, 0, out->c, out->h, out->w);
    end_record(b, start);
}

static void put_other(obuf *b, const char *name, const synth_tensor *in, const char *kernel)
{
    size_t start = b->n;
    put_header(b, name, in->name, in->format, in->id, in->id + 1, kernel);
    ob_i32(b, 1);
    ob_i32(b, 32);
    ob_i32(b, 0);
    ob_u8(b, 1);
    end_record(b, start);
}

static npk_status check_spec(const npk_mgk_synth_spec *spec, npk_error *err)
{
    if (spec->height < 0 || spec->width < 0 || spec->height > MAX_SYNTH_SIZE ||
        spec->width > MAX_SYNTH_SIZE)
        return npk_fail(err, NPK_E_ARG, "synth: input size must be 1..%d", MAX_SYNTH_SIZE);
    if (!spec->layers || spec->nlayers < 1 || spec->nlayers > MAX_SYNTH_LAYERS)
        return npk_fail(err, NPK_E_ARG, "synth: 1 to %d layers", MAX_SYNTH_LAYERS);
    for (size_t i = 0; i < spec->nlayers; i++) {
        const npk_mgk_synth_layer *l = &spec->layers[i];
        if (l->cin < 1 || l->cout < 1 || l->cin > MAX_SYNTH_CHANNELS ||
            l->cout > MAX_SYNTH_CHANNELS)
            return npk_fail(err, NPK_E_ARG, "synth: layer %zu: channels must be 1..%d", i,
                            MAX_SYNTH_CHANNELS);
        if (l->kh < 1 || l->kw < 1 || l->kh > MAX_SYNTH_KERNEL || l->kw > MAX_SYNTH_KERNEL)
            return npk_fail(err, NPK_E_ARG, "synth: layer %zu: kernel must be 1..%d", i,
                            MAX_SYNTH_KERNEL);
        if (l->stride_h < 0 || l->stride_w < 0 || l->stride_h > 4 || l->stride_w > 4)
            return npk_fail(err, NPK_E_ARG, "synth: layer %zu: stride must be 1..4", i);
        if (!npk_mgk_bitwidth_by_bits(l->bits))
            return npk_fail(err, NPK_E_ARG, "synth: layer %zu: %d-bit weights (2, 4, 6 or 8)", i,
                            l->bits);
    }
    return NPK_OK;
}

npk_status npk_mgk_synth(const npk_mgk_synth_spec *spec, uint8_t **out, size_t *len, npk_error *err)
{
    npk_status st = check_spec(spec, err);
    if (st) return st;
    uint64_t seed = spec->seed * 0x9E3779B97F4A7C15ull + 0x1234567;
    lplace *pl = calloc(spec->nlayers, sizeof *pl);
    if (!pl) return npk_fail(err, NPK_E_NOMEM, "out of memory");
    uint64_t at = 0;
    for (size_t i = 0; i < spec->nlayers; i++) {
        const npk_mgk_synth_layer *l = &spec->layers[i];
        lplace *p = &pl[i];
        p->n = (l->cout + 31) / 32;
        p->m = (l->cin + 31) / 32;
        p->s = l->bits / 2;
        p->woff = at;
        p->wbytes =
            (uint64_t)p->n * (uint64_t)p->m * (uint64_t)(l->kh * l->kw) * (uint64_t)p->s * 256u;
        p->roff = (p->woff + p->wbytes + 127) & ~(uint64_t)127;
        p->rbytes = (uint64_t)p->n * 256u;
        at = (p->roff + p->rbytes + 127) & ~(uint64_t)127;
    }
    uint64_t region_size = at + 128; /* trailing zero padding, as in the vendor file */

    obuf b = {0};
    build_elf(&b);
    uint64_t region_off = b.n;
    uint8_t *region = ob_grow(&b, (size_t)region_size);
    for (size_t i = 0; region && i < spec->nlayers && !st; i++)
        st = fill_layer(&spec->layers[i], b.p + region_off, &pl[i], &seed, err);
    if (st) {
        free(pl);
        free(b.p);
        return st;
    }
    uint64_t model_off = b.n;
    int h = spec->height > 0 ? spec->height : 8, w = spec->width > 0 ? spec->width : 8;
    synth_tensor cur = {"input", "NDHWC32", 0, spec->layers[0].cin, h, w, 128}, next;
    int rec = 0;
    if (spec->extra_records) {
        cur.format = "NHWC";
        put_convert(&b, &cur, &next);
        cur = next;
        rec++;
    }
    /* Layers chain when the channels agree; otherwise a layer reads a new input. */
    for (size_t i = 0; i < spec->nlayers; i++, rec++) {
        const npk_mgk_synth_layer *l = &spec->layers[i];
        if (l->cin != cur.c) {
            synth_tensor in = {"", "NDHWC32", cur.id + 1, l->cin, h, w, 128};
            snprintf(in.name, sizeof in.name, "input_%zu", i);
            cur = in;
        }
        put_conv(&b, l, &pl[i], rec, &cur, &next);
        cur = next;
    }
    if (spec->extra_records) put_other(&b, "custom_op_out", &cur, "Synthetic/npukit_unknown/0/");
    free(pl);
    uint64_t model_size = b.n - model_off;
    static const char strtab[] = "\0model\0.mlstrtab\0.verstr\0.version";
    static const char verstr[] = "\0"
                                 "0.0.0\0"
                                 "npukit-synth";
    uint64_t strtab_off = b.n;
    ob_bytes(&b, strtab, sizeof strtab);
    uint64_t verstr_off = b.n;
    ob_bytes(&b, verstr, sizeof verstr);
    uint64_t version_off = b.n;
    static const uint8_t junk[7] = {0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0};
    const uint64_t tags[4][2] = {{1, verstr_off}, {3, 1}, {4, 7}, {0, 1}};
    for (int i = 0; i < 4; i++) {
        ob_u8(&b, (uint8_t)tags[i][0]);
        if (spec->garbage)
            ob_bytes(&b, junk, 7);
        else
            ob_grow(&b, 7);
        ob_u64(&b, tags[i][1]);
    }
    uint64_t seg_off = b.n;
    ob_bytes(&b, "\0\1\1\1", 4);
    ob_u32(&b, 0);
    ob_u64(&b, 3);
    ob_u64(&b, 0);
    ob_u64(&b, region_off);
    ob_u64(&b, 0);
    ob_u64(&b, region_size);
    ob_u64(&b, 0);
    uint64_t sect_off = b.n;
    const uint64_t secs[4][5] = {{1, 0x01, 0, model_off, model_size},
                                 {2, 0x1E, 7, strtab_off, sizeof strtab},
                                 {3, 0x1E, 0x11, verstr_off, sizeof verstr},
                                 {4, 0x1F, 0x19, version_off, 4 * 16}};
    for (int i = 0; i < 4; i++) {
        ob_u8(&b, (uint8_t)secs[i][0]);
        ob_u8(&b, (uint8_t)secs[i][1]);
        ob_u8(&b, (uint8_t)secs[i][2]);
        if (spec->garbage)
            ob_bytes(&b, junk + 2, 5);
        else
            ob_grow(&b, 5);
        ob_u64(&b, secs[i][3]);
        ob_u64(&b, secs[i][4]);
    }
    ob_bytes(&b, "IMGK\1\1\1\1", 8);
    ob_u64(&b, 7);
    ob_u16(&b, 0x6501);
    ob_u16(&b, 0x0014);
    ob_u32(&b, 1);
    ob_u64(&b, sect_off);
    ob_u64(&b, seg_off);
    ob_u16(&b, 80);
    ob_u16(&b, 24);
    ob_u16(&b, 4);
    ob_u16(&b, 56);
    ob_u16(&b, 1);
    static const uint8_t stack[7] = {0xD0, 0x58, 0xF4, 0x7F, 0, 0, 0};
    if (spec->garbage)
        ob_bytes(&b, stack, 6);
    else
        ob_grow(&b, 6);
    ob_u64(&b, region_off);
    ob_u64(&b, region_size);
    ob_u16(&b, 2);
    if (spec->garbage)
        ob_bytes(&b, stack + 1, 6);
    else
        ob_grow(&b, 6);
    if (b.oom) {
        free(b.p);
        return npk_fail(err, NPK_E_NOMEM, "out of memory");
    }
    (void)region;
    *out = b.p;
    *len = b.n;
    return NPK_OK;
}
