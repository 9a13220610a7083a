/* Layer plans: programmed shapes, the weight buffer (packed weights, bias
 * and multiplier streams), tiling into tasks (output-channel groups when the
 * weights do not fit the weight banks, height slices with overlapping input
 * rows when the input does not fit the data banks), one stream per task,
 * chained per core, and the driver records. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"
#include "npukit/bytes.h"
#include "npukit/checked.h"
#include "npukit/half.h"
#include "npukit/rknpu_conv.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_stream.h"
#include "ops_internal.h"

#define BANK NPK_RK_CBUF_BANK_SIZE

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Shapes every task shares. */
typedef struct geo {
    unsigned b, c2, c2o;   /* element size; channels per input and output atom */
    uint32_t kb;           /* weight bytes per kernel (conv) or per channel (depthwise) */
    uint32_t min_rows;     /* input rows one output row needs */
    uint32_t rec_b, rec_n; /* bytes per channel of the bias and multiplier streams */
    uint32_t kc;           /* K-split: input channels per slice (0: no split) */
} geo;

static uint64_t row_bytes(const npk_rk_lplan *p, uint32_t channels)
{
    return (uint64_t)p->layer.in_w * ceil_div(channels, 16 / (p->fp ? 2 : 1)) * 16;
}

/* Weight index (elements) of kernel n, tap (ky, kx), channel c. */
static size_t wt_index(const npk_rk_lplan *p, uint32_t n, uint32_t ky, uint32_t kx, uint32_t c)
{
    const npk_rk_layer *l = &p->layer;
    size_t taps = (size_t)l->k_h * l->k_w, t = (size_t)ky * l->k_w + kx;
    if (p->depthwise) return (c / p->group) * taps * p->group + t * p->group + c % p->group;
    uint32_t G = p->group;
    return (size_t)(n / G) * G * p->cin * taps + (size_t)(c / 32) * taps * G * 32 + t * G * 32 +
           (size_t)(n % G) * 32 + c % 32;
}

static int32_t stored(const npk_rk_layer *l, const void *src, size_t i)
{
    if (l->type == NPK_RK_LT_UINT8) return (int32_t)((const uint8_t *)src)[i] - 128;
    return ((const int8_t *)src)[i];
}

/* The plan keeps a copy of the layer's description, without the caller's
 * arrays (weights, biases, scales, multipliers, tie signs, a constant second
 * input): the plan owns packed copies of what it needs, and the caller's
 * arrays may be gone when the plan is used. */
void rk_plan_keep_layer(npk_rk_lplan *p, const npk_rk_layer *l, const npk_rk_lplan_opts *o)
{
    p->layer = *l;
    p->layer.weights = NULL;
    p->layer.bias_i32 = NULL;
    p->layer.bias_f32 = NULL;
    p->layer.w_scales = NULL;
    p->layer.mults = NULL;
    p->layer.tie_sign = NULL;
    p->layer.in2_const = NULL;
    p->opts = *o;
}

/* Two little-endian 32-bit words of a record, one 8-byte store on
 * little-endian hosts (GCC leaves npk_st32le's byte stores apart here). */
static inline void st_words(uint8_t *p, uint32_t lo, uint32_t hi)
{
    uint64_t v = (uint64_t)hi << 32 | lo;
    if (npk_host_is_le())
        memcpy(p, &v, 8);
    else
        npk_st64le(p, v);
}

/* Packed weights, bias stream and multiplier stream; requantisation. */
static npk_status build_blob(const npk_rk_layer *l, npk_rk_lplan *p, const geo *g, rk_qparams *qp,
                             npk_rk_dpu_stage *bs, npk_rk_dpu_stage *bn, npk_error *err)
{
    p->wt_bytes = (uint64_t)g->kb * p->cout; /* per kernel x kernels, or per channel x channels */
    p->bias_off = (p->wt_bytes + 63) & ~(uint64_t)63;
    p->mul_off = p->bias_off + (((uint64_t)p->cout * g->rec_b + 63) & ~(uint64_t)63);
    p->weight_bytes = p->mul_off + (uint64_t)p->cout * g->rec_n;
    if (p->weight_bytes > UINT32_MAX)
        return npk_fail(err, NPK_E_LIMIT, "weights of %llu bytes exceed the 32-bit address space",
                        (unsigned long long)p->weight_bytes);
    /* The 8-bit weights' packing writes every byte of its region. */
    if (p->wblob_lent && p->weight_bytes <= p->wblob_cap) {
        if (p->fp) memset(p->wblob, 0, (size_t)p->weight_bytes);
    } else {
        p->wblob_lent = false;
        p->wblob = p->fp ? calloc(1, (size_t)p->weight_bytes) : malloc((size_t)p->weight_bytes);
    }
    if (!p->wblob) return npk_fail(err, NPK_E_NOMEM, "out of memory for the weight buffer");
    uint8_t *w = p->wblob, *bias = p->wblob + p->bias_off, *mul = p->wblob + p->mul_off;

    if (p->fp) {
        const uint16_t *src = l->weights;
        for (uint32_t n = 0; n < (p->depthwise ? 1 : l->out_c); n++)
            for (uint32_t ky = 0; ky < l->k_h; ky++)
                for (uint32_t kx = 0; kx < l->k_w; kx++)
                    for (uint32_t c = 0; c < l->in_c; c++) {
                        size_t si = p->depthwise
                                        ? ((size_t)ky * l->k_w + kx) * l->in_c + c
                                        : (((size_t)n * l->k_h + ky) * l->k_w + kx) * l->in_c + c;
                        npk_st16le(w + 2 * wt_index(p, n, ky, kx, c), src[si]);
                    }
        /* BS adds the bias (fp32 bits from BRDMA); clamps as for the integer
         * path (a fused add's clip is EW's, after the add: fill_desc). */
        double lo = l->act_min == INT32_MIN || l->fused_add ? -INFINITY : l->act_min;
        double hi = l->act_max == INT32_MAX || l->fused_add ? INFINITY : l->act_max;
        bool lower = isfinite(lo), upper = isfinite(hi);
        for (uint32_t c = 0; c < l->out_c; c++) {
            float b = l->bias_f32 ? l->bias_f32[c] : 0.0f;
            if (lower) b -= (float)lo;
            uint32_t u;
            memcpy(&u, &b, 4);
            npk_st32le(bias + 4 * (size_t)c, u);
        }
        bs->alu = NPK_RK_OP_MEM;
        bs->relu = lower;
        bs->relux = upper;
        if (upper) {
            float cmp = (float)(lower ? hi - lo : hi);
            memcpy(&bs->relux_cmp, &cmp, 4);
        }
        if (lower) {
            float add = (float)lo;
            bn->alu = NPK_RK_OP_REG;
            memcpy(&bn->alu_op, &add, 4);
        }
        return NPK_OK;
    }

    /* Weights in the stored domain (uint8: u - 128, the top bit flipped),
     * in the layouts of wt_index: conv [Cout/G][Cin/32][taps][G][32],
     * depthwise [C/G][taps][G]; each kernel's sum of (w - zw) taken on the
     * way. */
    bool exact = p->rq.exact && g->rec_b == 8 && g->rec_n == 8; /* records written whole */
    if (exact) {                                                /* only what no record covers */
        memset(w + p->wt_bytes, 0, (size_t)(p->bias_off - p->wt_bytes));
        memset(bias + 8 * (size_t)l->out_c, 0, (size_t)(p->mul_off - p->bias_off) - 8 * l->out_c);
        memset(mul + 8 * (size_t)l->out_c, 0,
               (size_t)(p->weight_bytes - p->mul_off) - 8 * l->out_c);
    } else {
        memset(w + p->wt_bytes, 0, (size_t)(p->weight_bytes - p->wt_bytes));
    }
    uint8_t flip = l->type == NPK_RK_LT_UINT8 ? 0x80 : 0;
    size_t taps = (size_t)l->k_h * l->k_w;
    if (p->depthwise)
        rk_pack_dw8(l->weights, l->in_c, taps, p->cout, p->group, flip, w, qp->wsum);
    else
        rk_pack_conv8(l->weights, l->out_c, l->in_c, taps, p->cin, p->cout, p->group, flip, w,
                      qp->wsum);
    /* The bias the hardware adds: bias' = bias - zx * sum over programmed
     * taps and channels of (w - zw), padding channels counting as w = 0
     * (docs/rknpu.md, "Zero points"); wsum holds the sums of w. */
    int64_t terms = p->depthwise ? (int64_t)taps : (int64_t)p->cin * (int64_t)taps;
    int64_t zsum = terms * qp->zw; /* per channel: sum of zw over the programmed terms */
    if (exact) {
        /* In locals: the byte stores below may alias any field. */
        const int32_t *bi = l->bias_i32, *lo = qp->lower ? qp->t_lo : NULL, *qb = qp->b,
                      *qk = qp->k, *qa = qp->a;
        const int64_t *ws = qp->wsum, zx = qp->zx;
        uint32_t nc = l->out_c;
        const rk_exact_src src = {bi, lo, qb, qk, qa, ws, zsum, zx};
        uint32_t n = rk_exact_records_fast(&src, nc, bias, mul);
        for (; n < nc; n++) {
            int64_t b = (bi ? bi[n] : 0) - zx * (ws[n] - zsum);
            if (lo) b -= lo[n];
            if (b < INT32_MIN || b > INT32_MAX) break; /* reported below */
            st_words(bias + 8 * (size_t)n, (uint32_t)(int32_t)b, (uint32_t)qb[n]);
            st_words(mul + 8 * (size_t)n, (uint32_t)qk[n], (uint32_t)qa[n]);
        }
        if (n == nc && nc) goto stages;
    }
    for (uint32_t n = 0; n < l->out_c; n++) {
        int64_t b = (l->bias_i32 ? l->bias_i32[n] : 0) - (int64_t)qp->zx * (qp->wsum[n] - zsum);
        if (qp->lower) b -= qp->t_lo[n];
        if (p->rq.fused) b += qp->t_hi[n]; /* the intermediate's rounding constant */
        if (b < INT32_MIN || b > INT32_MAX)
            return npk_fail(err, NPK_E_LIMIT,
                            "channel %u: the bias with the zero-point correction (%lld) does not "
                            "fit the DPU's int32",
                            n, (long long)b);
        npk_st32le(bias + (size_t)g->rec_b * n, (uint32_t)(int32_t)b);
        if (p->rq.fused) npk_st32le(bias + (size_t)g->rec_b * n + 4, (uint32_t)qp->a[n]);
        uint8_t *r = mul + (size_t)g->rec_n * n;
        if (p->rq.exact) {
            npk_st32le(bias + (size_t)g->rec_b * n + 4, (uint32_t)qp->b[n]);
            npk_st32le(r, (uint32_t)qp->k[n]);
            npk_st32le(r + 4, (uint32_t)qp->a[n]);
            continue;
        }
        if (p->rq.per_channel && qp->lower) {
            npk_st32le(r, (uint32_t)qp->t_lo[n]);
            r += 4;
        }
        if (p->rq.per_channel) npk_st32le(r, (uint32_t)qp->a[n]);
    }
stages:
    bs->alu = NPK_RK_OP_MEM;
    bs->relu = qp->lower;
    if (p->rq.exact) {
        bs->mul = NPK_RK_OP_MEM;
        bn->alu = NPK_RK_OP_MEM;
        bn->mul = NPK_RK_OP_MEM;
        bn->mul_shift = p->rq.mul_shift;
    } else if (p->rq.fused) {
        bs->mul = NPK_RK_OP_MEM;
        bs->mul_shift = p->rq.mul_shift;
        bn->mul = NPK_RK_OP_REG;
        bn->mul_op = p->rq.fused_mul;
        bn->mul_shift = p->rq.fused_shift;
    } else if (!p->rq.per_channel) {
        bs->relux = qp->upper;
        if (qp->upper) bs->relux_cmp = (uint32_t)(qp->t_hi[0] - (qp->lower ? qp->t_lo[0] : 0));
        if (qp->lower) {
            bn->alu = NPK_RK_OP_REG;
            bn->alu_op = (uint32_t)qp->t_lo[0];
        }
    } else {
        bn->mul = NPK_RK_OP_MEM;
        bn->mul_shift = p->rq.mul_shift;
        if (qp->lower) bn->alu = NPK_RK_OP_MEM;
        bn->relux = qp->upper;
        bn->relux_cmp = (uint32_t)qp->y_hi;
    }
    return NPK_OK;
}

/* Bytes of `cols` input columns of one row, `channels` programmed channels. */
static uint64_t cols_bytes(const npk_rk_lplan *p, uint64_t cols, uint32_t channels)
{
    return cols * ceil_div(channels, 16 / (p->fp ? 2 : 1)) * 16;
}

/* Tile sizes: output channels per task, then output rows per task, then,
 * when one output row's input does not fit the data banks beside the
 * weights (or is wider than CNA_DATA_SIZE0.DATAIN_WIDTH takes), output
 * columns per task with one output row each (column tiling). */
static npk_status choose_tiles(npk_rk_lplan *p, const geo *g, uint32_t *ct, uint32_t *oht,
                               uint32_t *owt, uint32_t *kc, npk_error *err)
{
    *kc = 0;
    const npk_rk_layer *l = &p->layer;
    uint32_t G = p->group, cap_c = p->cout;
    if (p->opts.max_channels) {
        uint32_t m = p->opts.max_channels / G * G;
        if (m < G) m = G;
        if (m < cap_c) cap_c = m;
    }
    uint64_t ext_w = (uint64_t)(l->k_w - 1) * l->dil_w + 1; /* input columns of one window */
    /* Largest channel tile whose weights fit beside one output pixel's input window. */
    uint32_t best = 0;
    for (uint32_t c = cap_c; c >= G; c -= G) {
        uint64_t wbytes = (uint64_t)g->kb * c; /* kernels, or depthwise channels */
        uint64_t dbytes = g->min_rows * cols_bytes(p, ext_w, p->depthwise ? c : p->cin);
        uint64_t wb = ceil_div(wbytes, BANK), db = ceil_div(dbytes, BANK);
        if (wb < 1) wb = 1;
        if (db < 1) db = 1;
        if (wb + db <= NPK_RK_CBUF_BANKS) {
            best = c;
            break;
        }
        if (c == G) break;
    }
    uint64_t taps = (uint64_t)l->k_h * l->k_w;
    if (!best && !p->depthwise) {
        /* K-split: one weight group over slices of the input channels, the
         * largest slice (multiple of 32) whose weights fit beside its
         * smallest input window, then balanced. */
        uint32_t k = 0;
        for (uint32_t c = p->cin; c >= 32; c -= 32) {
            uint64_t wb = ceil_div((uint64_t)G * taps * c * g->b, BANK);
            uint64_t db = ceil_div(g->min_rows * cols_bytes(p, ext_w, c), BANK);
            if (wb < 1) wb = 1;
            if (db < 1) db = 1;
            if (wb + db <= NPK_RK_CBUF_BANKS) {
                k = c;
                break;
            }
        }
        if (!k)
            return npk_fail(err, NPK_E_LIMIT,
                            "%u kernels of %llu taps need %llu CBUF weight banks even for 32 input "
                            "channels: more than the banks left beside the input",
                            G, (unsigned long long)taps,
                            (unsigned long long)ceil_div((uint64_t)G * taps * 32 * g->b, BANK));
        uint32_t chunks = (uint32_t)ceil_div(p->cin, k);
        *kc = align_up((uint32_t)ceil_div(p->cin, chunks), 32);
        best = G;
    }
    if (!best) {
        uint64_t db = ceil_div(g->min_rows * cols_bytes(p, ext_w, p->depthwise ? G : p->cin), BANK);
        if (db >= NPK_RK_CBUF_BANKS)
            return npk_fail(err, NPK_E_LIMIT,
                            "one output pixel's input window (%u x %llu x %u channels) needs %llu "
                            "CBUF banks: more than the 11 data banks",
                            g->min_rows, (unsigned long long)ext_w, p->cin, (unsigned long long)db);
        return npk_fail(err, NPK_E_LIMIT,
                        "%u kernels of %u bytes need %llu CBUF weight banks, more than the %llu "
                        "left beside the input",
                        G, g->kb, (unsigned long long)ceil_div((uint64_t)g->kb * G, BANK),
                        (unsigned long long)(NPK_RK_CBUF_BANKS - db));
    }
    uint32_t tiles_c = (uint32_t)ceil_div(p->cout, best);
    *ct = align_up((uint32_t)ceil_div(p->cout, tiles_c), G);
    uint64_t wb = ceil_div(*kc ? (uint64_t)G * taps * *kc * g->b : (uint64_t)g->kb * *ct, BANK);
    if (wb < 1) wb = 1;
    uint64_t avail = (NPK_RK_CBUF_BANKS - wb) * (uint64_t)BANK;
    uint32_t cin_t = p->depthwise ? *ct : *kc ? *kc : p->cin;
    uint64_t wmax = npk_rk_field_max(NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH);
    if (g->min_rows * row_bytes(p, cin_t) <= avail && l->in_w <= wmax) {
        uint64_t rows_max = avail / row_bytes(p, cin_t);
        uint32_t oh_max = (uint32_t)((rows_max - g->min_rows) / l->stride_h + 1);
        if (p->opts.max_rows && p->opts.max_rows < oh_max) oh_max = p->opts.max_rows;
        if (oh_max > l->out_h) oh_max = l->out_h;
        uint32_t tiles_h = (uint32_t)ceil_div(l->out_h, oh_max);
        *oht = (uint32_t)ceil_div(l->out_h, tiles_h);
        *owt = l->out_w;
        return NPK_OK;
    }
    /* Column tiling: the DPU writes a task's output pixels contiguously (no
     * output line stride is known), so each task is one output row. */
    uint64_t iw_max = avail / (g->min_rows * cols_bytes(p, 1, cin_t));
    if (iw_max > wmax) iw_max = wmax;
    uint64_t ow_max = (iw_max - ext_w) / l->stride_w + 1;
    if (ow_max > l->out_w) ow_max = l->out_w;
    uint32_t tiles_w = (uint32_t)ceil_div(l->out_w, ow_max);
    *owt = (uint32_t)ceil_div(l->out_w, tiles_w);
    *oht = 1;
    return NPK_OK;
}

/* What the tasks of one region share: the DPU stages, the requantisation
 * and where the weights and streams are in the weight buffer. A plan has one
 * region, padded average pooling one per count of in-bounds window taps. */
typedef struct rk_region {
    npk_rk_dpu_stage bs, bn;
    npk_rk_requant rq;
    uint64_t wt_off, bias_off, mul_off;
    uint32_t count; /* average pooling: in-bounds taps of the region's windows */
} rk_region;

static void fill_desc(const npk_rk_lplan *p, const geo *g, const npk_rk_ltask *t,
                      const rk_region *rg, int32_t zx, int32_t zw, npk_rk_conv_desc *d)
{
    const npk_rk_dpu_stage *bs = &rg->bs, *bn = &rg->bn;
    const npk_rk_requant *rq = &rg->rq;
    const npk_rk_layer *l = &p->layer;
    const npk_rk_lplan_opts *o = &p->opts;
    memset(d, 0, sizeof *d);
    uint32_t cin_t = p->depthwise ? t->ocn : t->icn ? t->icn : p->cin;
    d->fp = p->fp;
    d->depthwise = p->depthwise;
    d->in_w = t->iw;
    d->in_h = t->ih;
    d->in_c = d->in_c_real = cin_t;
    d->out_w = t->ow;
    d->out_h = t->oh;
    d->out_c = d->out_c_real = t->ocn;
    d->kernels = p->depthwise ? 1 : t->ocn;
    d->k_w = t->wkh ? t->wkw : l->k_w; /* a window piece of a large average pool */
    d->k_h = t->wkh ? t->wkh : l->k_h;
    d->stride_x = l->stride_w;
    d->stride_y = l->stride_h;
    d->dil_x = l->dil_w;
    d->dil_y = l->dil_h;
    d->pad_left = t->pad_left;
    d->pad_top = t->pad_top;
    d->pad_value = p->fp ? 0 : ((uint32_t)zx & 0xFFu) * 0x01010101u;
    uint32_t fg = 50 + l->stride_h + 1, need = g->min_rows + l->stride_h;
    d->feature_grains = fg > need ? fg : need;
    uint64_t plane = (uint64_t)l->in_w * l->in_h * 16;
    d->in_addr =
        o->input_addr + (uint32_t)(((uint64_t)t->iy0 * l->in_w + t->ix0) * 16 +
                                   (uint64_t)((p->depthwise ? t->oc0 : t->ic0) / g->c2) * plane);
    d->line_stride = 4 * l->in_w;
    d->surf_stride = (int32_t)((int64_t)l->in_w * l->in_h - 4 * (int64_t)l->in_w);
    d->dma_width = t->iw;
    /* kb is the bytes per kernel (conv) or per channel (depthwise): a tile
     * of either starts at oc0 * kb in the packed weights. */
    uint64_t woff = rg->wt_off + (uint64_t)t->oc0 * g->kb;
    /* A K-split slice of a group: [Cin/32][taps][G][32] is contiguous per
     * 32 input channels. Window pieces share one identity block. */
    woff += (uint64_t)(t->ic0 / 32) * l->k_h * l->k_w * p->group * 32 * g->b;
    if (t->wkh) woff = rg->wt_off;
    d->wt_addr = o->weight_addr + (uint32_t)woff;
    d->weight_bytes_per_kernel = p->depthwise ? g->kb * t->ocn
                                 : t->icn     ? d->k_h * d->k_w * t->icn * g->b
                                              : g->kb;
    d->weight_bytes = d->weight_bytes_per_kernel * d->kernels;
    uint64_t db = ceil_div((uint64_t)t->ih * cols_bytes(p, t->iw, cin_t), BANK);
    d->data_bank = (uint32_t)(db < 1 ? 1 : db);
    d->weight_bank = NPK_RK_CBUF_BANKS - d->data_bank;
    d->data_entries = (uint32_t)ceil_div((uint64_t)t->iw * ceil_div(cin_t, g->c2), 4);
    uint64_t oplane = (uint64_t)l->out_w * l->out_h;
    d->out_addr = o->output_addr + (uint32_t)(((uint64_t)t->oy0 * l->out_w + t->ox0) * 16 +
                                              (t->oc0 / g->c2o) * oplane * 16);
    d->dst_surf_stride = (uint32_t)oplane;
    d->size_e = p->group / g->c2o - 1;
    d->surf_add = (uint32_t)(oplane * (p->group / g->c2o));
    d->bs = *bs;
    d->bn = *bn;
    d->bs.base_addr = o->weight_addr + (uint32_t)rg->bias_off + t->oc0 * g->rec_b;
    d->bn.base_addr = o->weight_addr + (uint32_t)rg->mul_off + t->oc0 * g->rec_n;
    d->cpend = !p->fp;
    d->ow_op = p->fp ? 0 : -zw;
    d->brdma_use = rq->fused || rq->exact ? 3 : 1;
    d->nrdma_use = (bn->alu == NPK_RK_OP_MEM ? 1u : 0u) | (bn->mul == NPK_RK_OP_MEM ? 2u : 0u);
    if (p->fp) {
        d->out_cvt_scale = 1;
    } else {
        d->out_cvt_offset = rq->offset;
        d->out_cvt_scale = rq->scale;
        d->out_cvt_shift = rq->shift;
    }
    d->rocket_tail = o->form == NPK_RK_FORM_ROCKET;
    if (rq->exact && (rq->clip_lower || rq->clip_upper)) {
        /* The clip in the output's fixed point: subtract the lower bound,
         * ReLU, cap at the upper (OUT_CVT adds the lower bound back). */
        d->ew_clip = true;
        d->ew_clip_add = -rq->clip_lo;
        d->ew_relu = rq->clip_lower;
        d->ew_relux = rq->clip_upper;
        d->ew_relux_cmp = (uint32_t)(rq->clip_hi - rq->clip_lo);
    }
    if (t->pass) rk_sign_split_desc(p, t, g->rec_n, d);
    if (l->fused_add && p->fp) {
        /* fp16: the second tensor added in fp32, then the add's clip. */
        d->ew_add = true;
        d->ew_addr = o->input2_addr + (d->out_addr - o->output_addr);
        d->ew_surf_atoms = (uint32_t)oplane;
        d->ew_cvt_scale = 1;
        d->ew_relu = l->act_min == 0;
        d->ew_relux = l->act_max != INT32_MAX;
        float hi = (float)l->act_max;
        if (d->ew_relux) memcpy(&d->ew_relux_cmp, &hi, 4);
    } else if (l->fused_add) {
        d->ew_add = true;
        d->ew_addr = o->input2_addr + (d->out_addr - o->output_addr);
        d->ew_surf_atoms = (uint32_t)oplane;
        d->ew_cvt_offset = rq->ew_offset;
        d->ew_cvt_scale = rq->ew_scale;
        d->ew_cvt_shift = rq->ew_shift;
        d->ew_relu = rq->ew_relu;
        d->ew_relux = rq->ew_relux;
        d->ew_relux_cmp = (uint32_t)rq->ew_cmp;
    }
    if (!g->kc) return;
    /* K-split: the unit's partial sums are int32 at scratch area (slice % 2),
     * 32-channel groups of 8 surfaces, this tile's pixels and channels. */
    uint64_t area = p->scratch_bytes / 2;
    uint64_t at = p->scratch_off + ((uint64_t)t->oy0 * l->out_w + t->ox0) * 16 +
                  (uint64_t)(t->oc0 / 4) * oplane * 16;
    if (t->requant_only) {
        /* DPU-only: the last slice's sums through MRDMA, then the usual DPU. */
        d->dpu_only = true;
        d->depthwise = false;
        d->cpend = false;
        d->ow_op = 0;
        d->src_addr = o->output_addr + (uint32_t)(at + ((p->ksplit - 1) % 2) * area);
        d->src_surf_atoms = (uint32_t)oplane;
        return;
    }
    /* A partial: the slice's sums (CPEND over its channels) plus the
     * previous slice's; no bias, requantisation or clip. */
    uint32_t k = t->part;
    memset(&d->bs, 0, sizeof d->bs);
    memset(&d->bn, 0, sizeof d->bn);
    d->brdma_use = d->nrdma_use = 0;
    d->out_int32 = true;
    d->out_cvt_offset = 0;
    d->out_cvt_scale = 1;
    d->out_cvt_shift = 0;
    d->ew_add = d->ew_clip = d->ew_relu = d->ew_relux = false;
    d->ew_relux_cmp = 0;
    d->ew_clip_add = 0;
    d->size_e = p->group / 4 - 1;
    d->surf_add = (uint32_t)(oplane * (p->group / 4));
    d->out_addr = o->output_addr + (uint32_t)(at + (k % 2) * area);
    if (k) {
        d->ew_add32 = true;
        d->ew_addr = o->output_addr + (uint32_t)(at + ((k - 1) % 2) * area);
        d->ew_surf_atoms = (uint32_t)oplane;
    }
}

static npk_status check_span(const char *what, uint32_t addr, uint64_t bytes, npk_error *err)
{
    if ((uint64_t)addr + bytes > ((uint64_t)1 << 32) || addr % 64)
        return npk_fail(err, NPK_E_LIMIT,
                        "%s buffer of %llu bytes at 0x%x: must be 64-byte aligned and inside the "
                        "32-bit DMA address space",
                        what, (unsigned long long)bytes, addr);
    return NPK_OK;
}

/* The depthwise layer an average pool over windows of n in-bounds input
 * elements becomes (unit weights and bias written to unit and pool_bias). */
static void avg_lower(const npk_rk_layer *l, uint32_t count, void *unit, int32_t *pool_bias,
                      npk_rk_layer *low)
{
    size_t nw = (size_t)l->k_h * l->k_w * l->in_c;
    *low = *l;
    low->kind = NPK_RK_LAYER_DEPTHWISE;
    double inv = 1.0 / count;
    if (l->type == NPK_RK_LT_FP16) {
        uint16_t h = npk_f32_to_f16((float)inv);
        for (size_t i = 0; i < nw; i++) ((uint16_t *)unit)[i] = h;
    } else {
        memset(unit, l->type == NPK_RK_LT_UINT8 ? 129 : 1, nw);
    }
    low->weights = unit;
    low->w.zero_point = l->type == NPK_RK_LT_UINT8 ? 128 : 0;
    low->w_scales = NULL;
    low->mults = NULL;
    low->tie_sign = NULL;
    low->bias_f32 = NULL;
    if (l->type == NPK_RK_LT_FP16) {
        low->w.scale = inv;
        low->bias_i32 = NULL;
        return;
    }
    /* The sum of the raw values (bias n * zero point; padded taps read the
     * zero point, which the bias correction cancels), scaled by a
     * multiplier just above 1/n with no output offset: TFLite rounds the
     * average half away from zero, and pushing exact halves away from zero
     * by less than the distance of any other value from a rounding boundary
     * gives the same result with one rounding (docs/rknpu.md, "Pools"). */
    double n = count;
    int sh = 15;
    while (sh < 62 && ldexp(1.0, sh) / n < 16384.0) sh++;
    double m = floor(ldexp(1.0, sh) / n) + 1;
    if (m > 32767) m = floor(m / 2) + 1, sh--;
    double rel = m * n / ldexp(1.0, sh) - 1;
    double room = (count % 2 ? 0.5 : 1.0) / n;
    low->out.zero_point = 0;
    for (uint32_t c = 0; c < l->in_c; c++) pool_bias[c] = (int32_t)count * l->in.zero_point;
    low->bias_i32 = pool_bias;
    low->w.scale = 255.0 * rel < room ? ldexp(m, -sh) : inv;
    low->in.scale = low->out.scale = 1.0;
}

/* The per-channel arrays in one block (wsum, m, the exact search's
 * scratch first: 8-byte elements, then the int32 ones), not cleared: m and wsum are written whole
 * (the requantisation, the packing), the others by the modes that read them. */
static bool qp_alloc(rk_qparams *qp, size_t n)
{
    memset(qp, 0, sizeof *qp);
    if (!n) n = 1;
    size_t bytes;
    uint8_t *b =
        npk_mul_sz(n, 5 * sizeof(int64_t) + 6 * sizeof(int32_t), &bytes) ? malloc(bytes) : NULL;
    if (!b) return false;
    qp->wsum = (int64_t *)(void *)b;
    qp->m = (double *)(void *)(b + n * sizeof(int64_t));
    qp->scratch = qp->m + n; /* 3n: the exact search's */
    int32_t *i32 = (int32_t *)(void *)(b + 5 * n * sizeof(int64_t));
    qp->a = i32;
    qp->t_lo = i32 + n;
    qp->t_hi = i32 + 2 * n;
    qp->b = i32 + 3 * n;
    qp->k = i32 + 4 * n;
    qp->k2 = i32 + 5 * n;
    return true;
}

static void qp_free(rk_qparams *qp)
{
    free(qp->wsum);
}

/* In-bounds taps of output position o's window along one axis (dilation 1). */
static uint32_t axis_taps(uint32_t o, uint32_t in, uint32_t k, uint32_t s, uint32_t pad)
{
    int64_t a = (int64_t)o * s - pad, e = a + k;
    if (a < 0) a = 0;
    if (e > (int64_t)in) e = in;
    return (uint32_t)(e - a);
}

/* A run of output rows or columns tasks share. */
typedef struct seg {
    uint32_t o0, n, taps; /* taps: average pooling's in-bounds taps along the axis */
} seg;

/* Segments of at most `tile` positions; by_taps: also split where the
 * window's in-bounds taps change. */
static size_t segments(uint32_t out, uint32_t tile, bool by_taps, uint32_t in, uint32_t k,
                       uint32_t s, uint32_t pad, seg *sg)
{
    size_t ns = 0;
    for (uint32_t o = 0; o < out;) {
        uint32_t c = by_taps ? axis_taps(o, in, k, s, pad) : k, e = o + 1;
        while (e < out && e - o < tile && (!by_taps || axis_taps(e, in, k, s, pad) == c)) e++;
        sg[ns++] = (seg){o, e - o, c};
        o = e;
    }
    return ns;
}

/* Rows per core given (npk_rk_lplan_make_rows): the height slices cut again
 * at the cores' boundaries (each core's rows in slices of at most `tile`),
 * row_core[slice] its core; the number of cores, or 0 when not given or not
 * a split of the output rows over at most `cores` cores. */
static int forced_rows(const uint32_t *rows, int cores, uint32_t out, uint32_t tile, seg *rs,
                       size_t *nr, int *row_core)
{
    if (!rows) return 0;
    uint32_t sum = 0;
    int n = 0;
    while (n < NPK_RKNPU_MAX_CORES && rows[n] && sum + rows[n] >= sum) sum += rows[n++];
    for (int k = n; k < NPK_RKNPU_MAX_CORES; k++)
        if (rows[k]) return 0;
    if (n < 2 || n > cores || sum != out) return 0;
    size_t ns = 0;
    for (int k = 0, y = 0; k < n; y += (int)rows[k++]) {
        size_t m = segments(rows[k], tile, false, 0, 0, 1, 0, rs + ns);
        for (size_t j = ns; j < ns + m; j++) {
            rs[j].o0 += (uint32_t)y;
            row_core[j] = k;
        }
        ns += m;
    }
    *nr = ns;
    return n;
}

/* Padded average pooling: a region per count of in-bounds taps (other than
 * the full window's, region 0), each with its own bias stream (n x zero
 * point), requantisation (1/n) and, for fp16, unit weights (1/n), appended
 * to the weight buffer. */
static npk_status avg_regions(const npk_rk_layer *orig, npk_rk_lplan *p, const geo *g,
                              const seg *rs, size_t nr, const seg *cs, size_t nc, rk_region *reg,
                              size_t *nreg, void *unit, int32_t *pool_bias, npk_error *err)
{
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nc; j++) {
            uint32_t n = rs[i].taps * cs[j].taps;
            size_t r = 0;
            while (r < *nreg && reg[r].count != n) r++;
            if (r < *nreg) continue;
            npk_rk_layer ln;
            avg_lower(orig, n, unit, pool_bias, &ln);
            npk_rk_lplan tp = *p;
            tp.wblob = NULL;
            tp.wblob_lent = false;
            rk_qparams q;
            npk_status st = NPK_OK;
            rk_region *rg = &reg[(*nreg)++];
            memset(rg, 0, sizeof *rg);
            if (!qp_alloc(&q, ln.out_c))
                st = npk_fail(err, NPK_E_NOMEM, "out of memory");
            else if (!p->fp)
                st = rk_requant_make(&ln, NPK_RK_RQ_SIMPLE, &q, &tp.rq, err);
            if (!st) st = build_blob(&ln, &tp, g, &q, &rg->bs, &rg->bn, err);
            qp_free(&q);
            uint64_t base = (p->weight_bytes + 63) & ~(uint64_t)63;
            uint8_t *nb = st ? NULL : rk_blob_grow(p, base + tp.weight_bytes);
            if (!st && !nb) st = npk_fail(err, NPK_E_NOMEM, "out of memory");
            if (st) {
                free(tp.wblob);
                return st;
            }
            memset(nb + p->weight_bytes, 0, (size_t)(base - p->weight_bytes));
            memcpy(nb + base, tp.wblob, (size_t)tp.weight_bytes);
            free(tp.wblob);
            p->wblob = nb;
            p->weight_bytes = base + tp.weight_bytes;
            rg->rq = tp.rq;
            rg->wt_off = base;
            rg->bias_off = base + tp.bias_off;
            rg->mul_off = base + tp.mul_off;
            rg->count = n;
        }
    return NPK_OK;
}

/* Large average pools: one 32-channel group per unit (the diagonal
 * convolution's), whole output rows, as many as the data banks left beside
 * the largest piece's identity weights hold. */
static npk_status avg_big_tiles(const npk_rk_lplan *p, const geo *g, uint32_t *ct, uint32_t *oht,
                                uint32_t *owt, npk_error *err)
{
    const npk_rk_layer *l = &p->layer;
    uint64_t wb = ceil_div((uint64_t)l->k_h * l->k_w * 32 * 32, BANK);
    uint64_t avail = (NPK_RK_CBUF_BANKS - wb) * (uint64_t)BANK, rb = row_bytes(p, 32);
    if (g->min_rows * rb > avail || l->in_w > npk_rk_field_max(NPK_RKF_CNA_DATA_SIZE0_DATAIN_WIDTH))
        return npk_fail(err, NPK_E_LIMIT,
                        "average pooling: %u input rows of %u pixels do not fit the %llu CBUF "
                        "data banks beside a window piece's weights",
                        g->min_rows, l->in_w, (unsigned long long)(NPK_RK_CBUF_BANKS - wb));
    uint32_t oh_max = (uint32_t)((avail / rb - g->min_rows) / l->stride_h + 1);
    if (p->opts.max_rows && p->opts.max_rows < oh_max) oh_max = p->opts.max_rows;
    if (oh_max > l->out_h) oh_max = l->out_h;
    *oht = (uint32_t)ceil_div(l->out_h, ceil_div(l->out_h, oh_max));
    *owt = l->out_w;
    *ct = 32;
    return NPK_OK;
}

/* Partial k of a large average pool's unit: window piece k over the
 * unit's 32 channels (identity weights), its input rows and columns. */
static void avg_big_part(const npk_rk_layer *orig, uint32_t npy, uint32_t npx, uint32_t k,
                         npk_rk_ltask *s)
{
    rk_avg_piece(orig, npy, npx, k, &s->wy0, &s->wkh, &s->wx0, &s->wkw);
    s->ic0 = s->oc0;
    s->icn = s->ocn;
    s->iy0 = s->oy0 * orig->stride_h + s->wy0;
    s->ih = (s->oh - 1) * orig->stride_h + s->wkh;
    s->ix0 = s->ox0 * orig->stride_w + s->wx0;
    s->iw = (s->ow - 1) * orig->stride_w + s->wkw;
    s->pad_top = s->pad_bottom = s->pad_left = 0;
    s->macs = (uint64_t)s->oh * s->ow * s->wkh * s->wkw * s->ocn * s->icn;
}

uint8_t *rk_blob_grow(npk_rk_lplan *p, uint64_t bytes)
{
    if (!p->wblob_lent) return realloc(p->wblob, (size_t)bytes);
    if (bytes <= p->wblob_cap) return p->wblob;
    uint8_t *nb = malloc((size_t)bytes);
    if (!nb) return NULL;
    memcpy(nb, p->wblob, (size_t)p->weight_bytes);
    p->wblob = nb;
    p->wblob_lent = false;
    return nb;
}

npk_status npk_rk_lplan_make(const npk_rk_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                             npk_error *err)
{
    return rk_lplan_make_in(l, o, NULL, NULL, 0, p, err);
}

npk_status npk_rk_lplan_make_rows(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                                  const uint32_t *core_rows, npk_rk_lplan *p, npk_error *err)
{
    return rk_lplan_make_in(l, o, core_rows, NULL, 0, p, err);
}

npk_status rk_lplan_make_in(const npk_rk_layer *l, const npk_rk_lplan_opts *o,
                            const uint32_t *core_rows, uint8_t *wbuf, uint64_t wcap,
                            npk_rk_lplan *p, npk_error *err)
{
    memset(p, 0, sizeof *p);
    npk_status st = npk_rk_layer_check(l, err);
    if (st) return st;
    if (o->cores < 1 || o->cores > NPK_RKNPU_MAX_CORES)
        return npk_fail(err, NPK_E_ARG, "cores = %d: must be 1, 2 or 3", o->cores);
    if (o->form != NPK_RK_FORM_VENDOR && o->form != NPK_RK_FORM_ROCKET)
        return npk_fail(err, NPK_E_ARG, "unknown stream form %d", (int)o->form);
    if (l->kind == NPK_RK_LAYER_MAXPOOL) return rk_pool_plan(l, o, p, err);
    if (l->kind == NPK_RK_LAYER_ADD) return rk_add_plan(l, o, p, err);
    if (l->fused_add && l->type == NPK_RK_LT_FP16 && l->act_min != INT32_MIN && l->act_min != 0)
        return npk_fail(err, NPK_E_UNSUPPORTED,
                        "fp16 fused add with a clip from %d: only clips from 0 (RELU, RELU6) or "
                        "none are planned",
                        l->act_min);
    /* AVERAGE_POOL_2D: a depthwise convolution with unit weights and the
     * multiplier 1/n, on the data path the capture pins; padded, one
     * region of tasks per count of in-bounds taps. */
    npk_rk_layer low;
    void *unit = NULL;
    int32_t *pool_bias = NULL;
    const npk_rk_layer *orig = l;
    /* Windows beyond 31 taps: pieces summed by K-split partials of a
     * diagonal convolution (pool_avg.c). */
    bool big = rk_avg_big(l);
    uint32_t npy = 0, npx = 0;
    if (big) {
        if ((st = rk_avg_pieces(l, &npy, &npx, err))) return st;
        low = *l;
        low.kind = NPK_RK_LAYER_CONV;
        low.k_h = (l->k_h + npy - 1) / npy;
        low.k_w = (l->k_w + npx - 1) / npx;
        l = &low;
    } else if (l->kind == NPK_RK_LAYER_AVGPOOL) {
        size_t n = (size_t)l->k_h * l->k_w * l->in_c;
        unit = malloc(n * 2);
        pool_bias = malloc(l->in_c * sizeof *pool_bias);
        if (!unit || !pool_bias) {
            free(unit);
            free(pool_bias);
            return npk_fail(err, NPK_E_NOMEM, "out of memory");
        }
        avg_lower(l, l->k_h * l->k_w, unit, pool_bias, &low);
        l = &low;
    }
    rk_plan_keep_layer(p, l, o);
    p->fp = l->type == NPK_RK_LT_FP16;
    p->depthwise = l->kind == NPK_RK_LAYER_DEPTHWISE;
    geo g = {p->fp ? 2u : 1u, p->fp ? 8u : 16u, p->fp ? 8u : 16u, 0, 0, 4, 0, 0};
    if (p->depthwise) {
        /* Whole channel groups of the depthwise weight layout (64 int8, 32
         * fp16): partial groups are padded, never programmed. */
        p->group = p->fp ? 32 : 64;
        p->cin = p->cout = align_up(l->in_c, p->group);
        p->kernels = 1;
        g.kb = l->k_h * l->k_w * g.b; /* per channel */
    } else {
        p->group = p->fp ? 16 : 32;
        p->cin = align_up(l->in_c, 32);
        p->cout = align_up(l->out_c, p->group);
        p->kernels = p->cout;
        g.kb = l->k_h * l->k_w * p->cin * g.b;
    }
    g.min_rows = (l->k_h - 1) * l->dil_h + 1;
    rk_qparams qp;
    npk_rk_dpu_stage bs = {0}, bn = {0};
    rk_region *reg = NULL;
    seg *rs = NULL, *cs = NULL;
    int *row_core = NULL;
    size_t nreg = 0;
    if (!qp_alloc(&qp, l->out_c)) {
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto out;
    }
    if (big) {
        if ((st = rk_avg_big_blob(orig, l->k_h, l->k_w, p->cout, p, &qp, &bs, &bn, err))) goto out;
        g.rec_b = g.rec_n = 8; /* [bias', b] and [0, a] */
    } else if (!p->fp) {
        /* Average pooling's single rounding is exact on the simple path. */
        npk_rk_rq_mode mode = orig->kind == NPK_RK_LAYER_AVGPOOL ? NPK_RK_RQ_SIMPLE : o->requant;
        if ((st = rk_requant_make(l, mode, &qp, &p->rq, err))) goto out;
        if (rk_sign_split_wanted(l, mode, &p->rq)) rk_sign_split_offsets(l, &qp, &p->rq);
        /* Per channel, NRDMA carries the multiplier (and the clamp's add-back). */
        g.rec_n = p->rq.per_channel ? (qp.lower ? 8 : 4) : 0;
        if (p->rq.fused) g.rec_b = 8;           /* bias' + rounding constant, then a[c] */
        if (p->rq.exact) g.rec_b = g.rec_n = 8; /* [bias', b[c]] and [k[c], a[c]] */
    }
    if (!big && wbuf) {
        p->wblob = wbuf;
        p->wblob_lent = true;
        p->wblob_cap = wcap;
    }
    if (!big && (st = build_blob(l, p, &g, &qp, &bs, &bn, err))) goto out;
    if (p->rq.two_pass && (st = rk_sign_split_blob(p, &qp, g.rec_n, err))) goto out;
    bool padded_avg = orig->kind == NPK_RK_LAYER_AVGPOOL &&
                      (l->pad_top || l->pad_left || l->pad_bottom || l->pad_right);
    size_t reg_max = padded_avg ? (size_t)(l->k_h + 1) * (l->k_w + 1) + 1 : 1;
    /* One block: regions (8-byte members first), row and column
     * segments, each row segment's core. */
    size_t nb_reg, nb_rs, nb_cs, nb_rc, nb;
    if (npk_mul_sz(reg_max, sizeof *reg, &nb_reg) && npk_mul_sz(l->out_h, sizeof *rs, &nb_rs) &&
        npk_mul_sz(l->out_w, sizeof *cs, &nb_cs) &&
        npk_mul_sz(l->out_h, sizeof *row_core, &nb_rc) && npk_add_sz(nb_reg, nb_rs, &nb) &&
        npk_add_sz(nb, nb_cs, &nb) && npk_add_sz(nb, nb_rc, &nb) && (reg = calloc(1, nb))) {
        rs = (seg *)(void *)((uint8_t *)reg + nb_reg);
        cs = rs + l->out_h;
        row_core = (int *)(void *)(cs + l->out_w);
    }
    if (!reg) {
        st = npk_fail(err, NPK_E_NOMEM, "out of memory");
        goto out;
    }
    reg[0] = (rk_region){bs, bn, p->rq, 0, p->bias_off, p->mul_off, l->k_h * l->k_w};
    nreg = 1;

    p->input_bytes = (uint64_t)ceil_div(p->cin, g.c2) * l->in_h * l->in_w * 16;
    p->output_bytes = (uint64_t)ceil_div(p->cout, g.c2o) * l->out_h * l->out_w * 16;
    uint32_t ct = 0, oht = 0, owt = 0;
    if (big) {
        if ((st = avg_big_tiles(p, &g, &ct, &oht, &owt, err))) goto out;
        g.kc = 32;
    } else if ((st = choose_tiles(p, &g, &ct, &oht, &owt, &g.kc, err)))
        goto out;
    p->ksplit = big ? npy * npx : g.kc ? (uint32_t)ceil_div(p->cin, g.kc) : 1;
    if (g.kc) {
        /* Two int32 partial-sum tensors after the output (docs/rknpu.md). */
        p->scratch_off = (p->output_bytes + 63) & ~(uint64_t)63;
        p->scratch_bytes = 2 * (uint64_t)(p->cout / 4) * l->out_h * l->out_w * 16;
        p->output_bytes = p->scratch_off + p->scratch_bytes;
    }
    if (p->rq.two_pass) {
        /* Pass 1's output: in the K-split area the last slice does not
         * write, else after the output (sign_split.c). */
        p->sign_bytes = (uint64_t)ceil_div(p->cout, g.c2o) * l->out_h * l->out_w * 16;
        if (g.kc) {
            p->sign_off = p->scratch_off + (p->ksplit % 2) * (p->scratch_bytes / 2);
        } else {
            p->sign_off = (p->output_bytes + 63) & ~(uint64_t)63;
            p->output_bytes = p->sign_off + p->sign_bytes;
        }
    }
    if ((st = check_span("input", o->input_addr, p->input_bytes, err)) ||
        (st = check_span("weight", o->weight_addr, p->weight_bytes, err)) ||
        (st = check_span("output", o->output_addr, p->output_bytes, err)) ||
        (l->fused_add && (st = check_span("input2", o->input2_addr, p->output_bytes, err))))
        goto out;

    /* Column segments first: several per row make every task one row (the
     * DPU writes a task's pixels contiguously). */
    size_t nc = segments(l->out_w, owt, padded_avg, l->in_w, l->k_w, l->stride_w, l->pad_left, cs);
    size_t nr = segments(l->out_h, nc > 1 ? 1 : oht, padded_avg, l->in_h, l->k_h, l->stride_h,
                         l->pad_top, rs);
    if (padded_avg &&
        (st = avg_regions(orig, p, &g, rs, nr, cs, nc, reg, &nreg, unit, pool_bias, err)))
        goto out;
    p->tiles_c = (uint32_t)ceil_div(p->cout, ct);
    int forced = p->tiles_c == 1 && nc == 1 && !padded_avg && !big
                     ? forced_rows(core_rows, o->cores, l->out_h, oht, rs, &nr, row_core)
                     : 0;
    p->tiles_h = (uint32_t)nr;
    p->tiles_w = (uint32_t)nc;
    uint64_t units = (uint64_t)p->tiles_c * p->tiles_h * p->tiles_w;
    /* K-split: the slices, then the requantisation; two passes: the last
     * task twice. */
    uint32_t per_unit = (g.kc ? p->ksplit + 1 : 1) + (p->rq.two_pass ? 1 : 0);
    uint64_t count = units * per_unit;
    if (count > NPK_RKNPU_MAX_SUBMIT_TASKS) {
        st = npk_fail(err, NPK_E_LIMIT, "%llu tasks exceed the driver's %u tasks per submit",
                      (unsigned long long)count, NPK_RKNPU_MAX_SUBMIT_TASKS);
        goto out;
    }
    p->count = (size_t)count;
    size_t slot = (NPK_RK_CONV_MAX_ENTRIES * 8 + NPK_RK_STREAM_ALIGN - 1) / NPK_RK_STREAM_ALIGN *
                  NPK_RK_STREAM_ALIGN / 8;
    p->tasks = calloc(p->count, sizeof *p->tasks);
    p->records = calloc(p->count, sizeof *p->records);
    p->regcmd = calloc(p->count * slot, 8);
    int *core = calloc(units, sizeof *core);
    uint64_t *work = calloc(units, sizeof *work);
    if (!p->tasks || !p->records || !p->regcmd || !core || !work) {
        free(core);
        free(work);
        st = npk_fail(err, NPK_E_NOMEM, "out of memory for a plan of %zu tasks", p->count);
        goto out;
    }
    size_t i = 0, u = 0;
    for (uint32_t tc = 0; tc < p->tiles_c; tc++)
        for (size_t th = 0; th < nr; th++)
            for (size_t tw = 0; tw < nc; tw++, i += per_unit, u++) {
                npk_rk_ltask *t = &p->tasks[i];
                t->oc0 = tc * ct;
                t->ocn = p->cout - t->oc0 < ct ? p->cout - t->oc0 : ct;
                t->oy0 = rs[th].o0;
                t->oh = rs[th].n;
                int64_t top = (int64_t)t->oy0 * l->stride_h - l->pad_top;
                int64_t bot = (int64_t)(t->oy0 + t->oh - 1) * l->stride_h - l->pad_top +
                              (int64_t)(l->k_h - 1) * l->dil_h;
                int64_t y0 = top < 0 ? 0 : top, y1 = bot > (int64_t)l->in_h - 1 ? l->in_h - 1 : bot;
                t->iy0 = (uint32_t)y0;
                t->ih = (uint32_t)(y1 - y0 + 1);
                t->pad_top = (uint32_t)(y0 - top);
                t->pad_bottom = (uint32_t)(bot - y1);
                t->ox0 = cs[tw].o0;
                t->ow = cs[tw].n;
                for (uint32_t r = 0; padded_avg && r < nreg; r++)
                    if (reg[r].count == rs[th].taps * cs[tw].taps) t->region = r;
                int64_t left = (int64_t)t->ox0 * l->stride_w - l->pad_left;
                int64_t right = (int64_t)(t->ox0 + t->ow - 1) * l->stride_w - l->pad_left +
                                (int64_t)(l->k_w - 1) * l->dil_w;
                int64_t x0 = left < 0 ? 0 : left,
                        x1 = right > (int64_t)l->in_w - 1 ? l->in_w - 1 : right;
                t->ix0 = (uint32_t)x0;
                t->iw = (uint32_t)(x1 - x0 + 1);
                t->pad_left = (uint32_t)(x0 - left);
                t->next = -1;
                t->macs = (uint64_t)t->oh * t->ow * l->k_h * l->k_w * t->ocn *
                          (p->depthwise ? 1 : p->cin);
                work[u] = t->macs;
                for (uint32_t k = 0; g.kc && k <= p->ksplit; k++) {
                    npk_rk_ltask *s = &p->tasks[i + k];
                    *s = *t;
                    s->requant_only = k == p->ksplit;
                    s->part = k;
                    s->ic0 = s->requant_only ? 0 : k * g.kc;
                    s->icn = s->requant_only ? 0 : p->cin - s->ic0 < g.kc ? p->cin - s->ic0 : g.kc;
                    s->macs = (uint64_t)t->oh * t->ow * l->k_h * l->k_w * t->ocn * s->icn;
                    if (big && !s->requant_only) avg_big_part(orig, npy, npx, k, s);
                }
                if (p->rq.two_pass) {
                    npk_rk_ltask *last = &p->tasks[i + per_unit - 2];
                    last[1] = last[0];
                    last[0].pass = 1;
                    last[1].pass = 2;
                }
            }
    /* Cores take whole units (a K-split unit's tasks depend on each other). */
    p->cores = units < (uint64_t)o->cores ? (int)units : o->cores;
    if (forced) {
        p->cores = forced;
        memcpy(p->core_rows, core_rows, sizeof p->core_rows);
        memset(p->core_first, 0, sizeof p->core_first);
        memset(p->core_count, 0, sizeof p->core_count);
        memset(p->core_work, 0, sizeof p->core_work);
        for (u = 0; u < units; u++) {
            core[u] = row_core[u];
            if (!p->core_count[core[u]]) p->core_first[core[u]] = (uint32_t)u;
            p->core_count[core[u]]++;
            p->core_work[core[u]] += work[u];
        }
    } else
        rk_split_ranges(work, (size_t)units, p->cores, core, p->core_first, p->core_count,
                        p->core_work);
    for (int c = 0; c < p->cores; c++) {
        p->core_first[c] *= per_unit;
        p->core_count[c] *= per_unit;
    }
    for (i = 0; i < p->count; i++) p->tasks[i].core = core[i / per_unit];
    free(core);
    free(work);

    uint64_t off = 0;
    npk_rk_conv_desc prev;
    memset(&prev, 0, sizeof prev);
    for (i = 0; i < p->count; i++) {
        npk_rk_ltask *t = &p->tasks[i];
        npk_rk_conv_desc d;
        fill_desc(p, &g, t, &reg[t->region], qp.zx, qp.zw, &d);
        /* WEIGHT_REUSE, as Mesa sets it on later height slices: the previous
         * task on this core (vendor chains run in order) loaded the same
         * weights into the same bank split. */
        d.weight_reuse = o->form == NPK_RK_FORM_VENDOR && i && p->tasks[i - 1].core == t->core &&
                         !d.dpu_only && !prev.dpu_only && prev.wt_addr == d.wt_addr &&
                         prev.weight_bytes == d.weight_bytes && prev.weight_bank == d.weight_bank &&
                         prev.data_bank == d.data_bank;
        prev = d;
        t->regcmd_off = (uint32_t)off;
        if ((st = npk_rk_conv_emit(&d, p->regcmd + off / 8, NPK_RK_CONV_MAX_ENTRIES, &t->entries,
                                   err)))
            goto out;
        off +=
            (t->entries * 8 + NPK_RK_STREAM_ALIGN - 1) / NPK_RK_STREAM_ALIGN * NPK_RK_STREAM_ALIGN;
    }
    p->regcmd_entries = (size_t)(off / 8);
    if ((st = check_span("regcmd", o->regcmd_addr, off, err))) goto out;
    {
        /* No two buffers overlap (a fused add may read its second input from
         * the output buffer itself, in place). */
        const rk_buf bufs[] = {{"input", o->input_addr, p->input_bytes, 0},
                               {"weight", o->weight_addr, p->weight_bytes, 0},
                               {"output", o->output_addr, p->output_bytes, 1},
                               {"regcmd", o->regcmd_addr, off, 0},
                               {"input2", o->input2_addr, l->fused_add ? p->output_bytes : 0, 1}};
        if ((st = rk_check_buffers(bufs, sizeof bufs / sizeof *bufs, err))) goto out;
    }
    for (i = 0; i + 1 < p->count && o->form == NPK_RK_FORM_VENDOR; i++) {
        npk_rk_ltask *t = &p->tasks[i], *n = &p->tasks[i + 1];
        if (t->core != n->core) continue;
        t->next = (int)(i + 1);
        if ((st = npk_rk_stream_chain(p->regcmd + t->regcmd_off / 8, t->entries,
                                      o->regcmd_addr + n->regcmd_off, n->entries, err)))
            goto out;
    }
    uint32_t int_mask = npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_MASK_DPU_0) |
                        npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_MASK_DPU_1);
    for (i = 0; i < p->count; i++) {
        const npk_rk_ltask *t = &p->tasks[i];
        p->records[i] =
            rk_task_record(p->regcmd, t->regcmd_off, t->entries, int_mask, o->regcmd_addr);
    }
    rk_submit_fill(&p->submit, p->count, p->cores, p->core_first, p->core_count);
out:
    free(unit);
    free(pool_bias);
    if (!st) {
        p->layer.kind = orig->kind;
        p->layer.k_h = orig->k_h; /* a large pool's pieces are in its tasks */
        p->layer.k_w = orig->k_w;
    }
    qp_free(&qp);
    free(reg); /* with rs, cs and row_core */
    if (st) npk_rk_lplan_free(p);
    return st;
}

void npk_rk_lplan_free(npk_rk_lplan *p)
{
    free(p->tasks);
    free(p->records);
    free(p->regcmd);
    if (!p->wblob_lent) free(p->wblob);
    p->tasks = NULL;
    p->records = NULL;
    p->regcmd = NULL;
    p->wblob = NULL;
    p->wblob_lent = false;
    p->count = 0;
}

double npk_rk_lplan_tflite_bound(const npk_rk_lplan *p)
{
    const npk_rk_requant *rq = &p->rq;
    switch (p->layer.kind) {
    case NPK_RK_LAYER_MAXPOOL:
    case NPK_RK_LAYER_AVGPOOL: return p->fp ? -1.0 : 0.0;
    case NPK_RK_LAYER_ADD: /* exact: proven over all input pairs (add_exact.c) */
        return p->fp ? -1.0 : rq->exact ? 0.0 : 2 * 257 * rq->worst_rel + ldexp(1.0, -12);
    default: break;
    }
    if (p->fp) return -1.0;
    if (rq->fused) return 3 * 257 * rq->worst_rel + 0.5 + ldexp(1.0, -12);
    /* Exact mode: the multiplier and offset error, plus TFLite's offset for
     * the sign not followed (it moves TFLite's value, not ours: 2 delta
     * between the two). */
    if (rq->exact) return rq->worst_abs + 2 * rq->tie_open_max;
    return 257 * rq->worst_rel + rq->tie_offset_max + (rq->per_channel ? ldexp(1.0, -12) : 0);
}

/* ---- host tensors ---- */

void npk_rk_lplan_pack_input(const npk_rk_lplan *p, const void *x, uint8_t *input)
{
    const npk_rk_layer *l = &p->layer;
    unsigned b = p->fp ? 2 : 1, c2 = 16 / b;
    size_t plane = (size_t)l->in_h * l->in_w;
    int32_t zx = l->type == NPK_RK_LT_UINT8 ? l->in.zero_point - 128 : l->in.zero_point;
    for (size_t px = 0; px < plane; px++)
        for (uint32_t c = 0; c < p->cin; c++) {
            uint8_t *d = input + ((c / c2) * plane + px) * 16 + (c % c2) * b;
            if (p->fp) {
                uint16_t v = c < l->in_c ? ((const uint16_t *)x)[px * l->in_c + c] : 0;
                npk_st16le(d, v);
            } else {
                /* Padding channels hold the zero point (docs/rknpu.md, "Zero points"). */
                int32_t v = c < l->in_c ? stored(l, x, px * l->in_c + c) : zx;
                *d = (uint8_t)(int8_t)v;
            }
        }
}

void npk_rk_lplan_pack_input2(const npk_rk_lplan *p, const void *x, uint8_t *input2)
{
    npk_rk_lplan q = *p;
    q.layer.in = p->layer.in2;
    if (p->layer.fused_add) { /* the second tensor has the output's shape and layout */
        q.layer.in_h = p->layer.out_h;
        q.layer.in_w = p->layer.out_w;
        q.layer.in_c = p->layer.out_c;
        q.cin = p->cout;
    } else if (p->layer.in2_h) { /* a broadcast second input: its own shape */
        q.layer.in_h = p->layer.in2_h;
        q.layer.in_w = p->layer.in2_w;
        q.layer.in_c = p->layer.in2_c;
        q.cin = (uint32_t)(p->input2_bytes / ((uint64_t)p->layer.in2_h * p->layer.in2_w));
    }
    npk_rk_lplan_pack_input(&q, x, input2);
}

uint64_t npk_rk_lplan_input2_bytes(const npk_rk_lplan *p)
{
    if (p->layer.fused_add) return p->output_bytes;
    return p->layer.kind == NPK_RK_LAYER_ADD ? p->input2_bytes : 0;
}

void npk_rk_lplan_unpack_output(const npk_rk_lplan *p, const uint8_t *output, void *y)
{
    const npk_rk_layer *l = &p->layer;
    unsigned b = p->fp ? 2 : 1, c2 = 16 / b;
    size_t plane = (size_t)l->out_h * l->out_w;
    for (size_t px = 0; px < plane; px++)
        for (uint32_t c = 0; c < l->out_c; c++) {
            const uint8_t *s = output + ((c / c2) * plane + px) * 16 + (c % c2) * b;
            size_t i = px * l->out_c + c;
            if (p->fp)
                ((uint16_t *)y)[i] = npk_ld16le(s);
            else if (l->type == NPK_RK_LT_UINT8)
                ((uint8_t *)y)[i] = (uint8_t)((int8_t)*s + 128);
            else
                ((int8_t *)y)[i] = (int8_t)*s;
        }
}
