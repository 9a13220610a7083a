/* Pooling tasks: PPU_RDMA reads the input cube from memory, the PPU pools
 * it and writes the output cube. The encodings follow NVDLA's PDP, whose
 * register set the PPU's matches (sizes, kernel and stride minus one;
 * strides and the output address in 16-byte units of [31:4] fields);
 * nothing here was checked against hardware (docs/rknpu.md). Only max
 * pooling is modelled: a padded tap reads PADDING_VALUE_1_CFG. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"
#include "npukit/bytes.h"
#include "npukit/half.h"

static uint32_t fv(const emu_core *c, npk_rk_field f)
{
    return npk_rk_field_extract(f, c->regs[npk_rk_field_get(f)->reg]);
}

static npk_status bad(const emu_core *c, const emu_where *w0, npk_rk_field f, npk_error *err,
                      const char *why)
{
    emu_where w = *w0;
    npk_rk_reg r = npk_rk_field_get(f)->reg;
    w.entry = c->written[r] ? (long)c->entry[r] : -1;
    char fn[96];
    return emu_fail(&w, err, NPK_E_UNSUPPORTED, "%s = %u %s", emu_field_name(f, fn, sizeof fn),
                    fv(c, f), why);
}

npk_status emu_decode_pool(npk_rk_emu *e, const emu_core *c, const emu_where *w, emu_pool *t,
                           npk_error *err)
{
    memset(t, 0, sizeof *t);
    uint32_t prec = fv(c, NPK_RKF_PPU_DATA_FORMAT_PROC_PRECISION);
    if (prec != 0 && prec != 2)
        return bad(c, w, NPK_RKF_PPU_DATA_FORMAT_PROC_PRECISION, err,
                   "is not modelled (int8 0 and fp16 2 are)");
    if (fv(c, NPK_RKF_PPU_RDMA_RDMA_DATA_FORMAT_IN_PRECISION) != prec)
        return bad(c, w, NPK_RKF_PPU_RDMA_RDMA_DATA_FORMAT_IN_PRECISION, err,
                   "does not match PPU_DATA_FORMAT.PROC_PRECISION: not modelled");
    t->fp = prec == 2;
    t->method = fv(c, NPK_RKF_PPU_OPERATION_MODE_CFG_POOLING_METHOD);
    if (t->method != 1)
        return bad(c, w, NPK_RKF_PPU_OPERATION_MODE_CFG_POOLING_METHOD, err,
                   "is not modelled (only 1, max, is)");
    t->w = fv(c, NPK_RKF_PPU_DATA_CUBE_IN_WIDTH_CUBE_IN_WIDTH) + 1;
    t->h = fv(c, NPK_RKF_PPU_DATA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT) + 1;
    t->c = fv(c, NPK_RKF_PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL) + 1;
    t->ow = fv(c, NPK_RKF_PPU_DATA_CUBE_OUT_WIDTH_CUBE_OUT_WIDTH) + 1;
    t->oh = fv(c, NPK_RKF_PPU_DATA_CUBE_OUT_HEIGHT_CUBE_OUT_HEIGHT) + 1;
    static const struct {
        npk_rk_field rdma, ppu;
    } same[] = {
        {NPK_RKF_PPU_RDMA_RDMA_CUBE_IN_WIDTH_CUBE_IN_WIDTH,
         NPK_RKF_PPU_DATA_CUBE_IN_WIDTH_CUBE_IN_WIDTH},
        {NPK_RKF_PPU_RDMA_RDMA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT,
         NPK_RKF_PPU_DATA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT},
        {NPK_RKF_PPU_RDMA_RDMA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL,
         NPK_RKF_PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL},
        {NPK_RKF_PPU_DATA_CUBE_OUT_CHANNEL_CUBE_OUT_CHANNEL,
         NPK_RKF_PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL},
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        if (fv(c, same[i].rdma) != fv(c, same[i].ppu))
            return bad(c, w, same[i].rdma, err,
                       "does not match the PPU's input cube: not modelled");
    unsigned c2 = t->fp ? 8 : 16;
    if (t->c % c2)
        return bad(c, w, NPK_RKF_PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL, err,
                   "+ 1 is not a whole number of 16-byte atoms: not modelled");
    t->kw = fv(c, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH) + 1;
    t->kh = fv(c, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT) + 1;
    t->sx = fv(c, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH) + 1;
    t->sy = fv(c, NPK_RKF_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT) + 1;
    t->pl = fv(c, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_LEFT);
    t->pt = fv(c, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_TOP);
    uint32_t pr = fv(c, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_RIGHT);
    uint32_t pb = fv(c, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_BOTTOM);
    if (t->pl >= t->kw || pr >= t->kw)
        return bad(c, w, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_LEFT, err,
                   "or PAD_RIGHT reaches a whole kernel width: not modelled");
    if (t->pt >= t->kh || pb >= t->kh)
        return bad(c, w, NPK_RKF_PPU_POOLING_PADDING_CFG_PAD_TOP, err,
                   "or PAD_BOTTOM reaches a whole kernel height: not modelled");
    uint64_t spanx = (uint64_t)t->w + t->pl + pr, spany = (uint64_t)t->h + t->pt + pb;
    if (spanx < t->kw || (spanx - t->kw) / t->sx + 1 != t->ow)
        return bad(c, w, NPK_RKF_PPU_DATA_CUBE_OUT_WIDTH_CUBE_OUT_WIDTH, err,
                   "+ 1 does not follow from the input width, kernel, stride and padding");
    if (spany < t->kh || (spany - t->kh) / t->sy + 1 != t->oh)
        return bad(c, w, NPK_RKF_PPU_DATA_CUBE_OUT_HEIGHT_CUBE_OUT_HEIGHT, err,
                   "+ 1 does not follow from the input height, kernel, stride and padding");
    t->pad_value = fv(c, NPK_RKF_PPU_PADDING_VALUE_1_CFG_PAD_VALUE_0);
    t->src_line = (uint64_t)fv(c, NPK_RKF_PPU_RDMA_RDMA_SRC_LINE_STRIDE_SRC_LINE_STRIDE) * 16;
    t->src_surf = (uint64_t)fv(c, NPK_RKF_PPU_RDMA_RDMA_SRC_SURF_STRIDE_SRC_SURF_STRIDE) * 16;
    t->dst_surf = (uint64_t)fv(c, NPK_RKF_PPU_DST_SURF_STRIDE_DST_SURF_STRIDE) * 16;
    if (t->src_line < (uint64_t)t->w * 16)
        return bad(c, w, NPK_RKF_PPU_RDMA_RDMA_SRC_LINE_STRIDE_SRC_LINE_STRIDE, err,
                   "(16-byte units) is shorter than a line of the cube: not modelled");
    uint64_t in_plane = (uint64_t)(t->h - 1) * t->src_line + (uint64_t)t->w * 16;
    if (t->src_surf < in_plane)
        return bad(c, w, NPK_RKF_PPU_RDMA_RDMA_SRC_SURF_STRIDE_SRC_SURF_STRIDE, err,
                   "(16-byte units) is smaller than a surface of the cube: not modelled");
    uint64_t out_plane = (uint64_t)t->ow * t->oh * 16;
    if (t->dst_surf < out_plane)
        return bad(c, w, NPK_RKF_PPU_DST_SURF_STRIDE_DST_SURF_STRIDE, err,
                   "(16-byte units) is smaller than a surface of the output: not modelled");
    uint32_t surfaces = t->c / c2;
    uint32_t src = fv(c, NPK_RKF_PPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR);
    uint32_t dst = fv(c, NPK_RKF_PPU_DST_BASE_ADDR_DST_BASE_ADDR) << 4;
    if (src % 16)
        return bad(c, w, NPK_RKF_PPU_RDMA_RDMA_SRC_BASE_ADDR_SRC_BASE_ADDR, err,
                   "is not 16-byte aligned: not modelled");
    uint64_t in_span = (uint64_t)(surfaces - 1) * t->src_surf + in_plane;
    uint64_t out_span = (uint64_t)(surfaces - 1) * t->dst_surf + out_plane;
    t->in = emu_span(e, src, in_span);
    t->out = emu_span_out(e, dst, out_span);
    t->dst_addr = dst, t->out_span = out_span;
    if (!t->in)
        return emu_fail(w, err, NPK_E_FORMAT,
                        "the pooling input at PPU_RDMA_RDMA_SRC_BASE_ADDR 0x%08x (%llu bytes) is "
                        "not in mapped memory",
                        src, (unsigned long long)in_span);
    if (!t->out)
        return emu_fail(w, err, NPK_E_FORMAT,
                        "the pooling output at PPU_DST_BASE_ADDR 0x%08x (%llu bytes) is not in "
                        "mapped memory",
                        dst, (unsigned long long)out_span);
    uint64_t work = (uint64_t)t->ow * t->oh * t->kw * t->kh * t->c;
    if (work > e->budget)
        return emu_fail(w, err, NPK_E_LIMIT, "the pooling needs %llu comparisons, over the limit",
                        (unsigned long long)work);
    e->budget -= work;
    return NPK_OK;
}

npk_status emu_execute_pool(npk_rk_emu *e, const emu_pool *t, const emu_where *w, npk_error *err)
{
    (void)e;
    (void)w;
    (void)err;
    unsigned c2 = t->fp ? 8 : 16, es = t->fp ? 2 : 1;
    int8_t pad8 = (int8_t)(uint8_t)t->pad_value;
    float padf = npk_f16_to_f32((uint16_t)t->pad_value);
    for (uint32_t s = 0; s < t->c / c2; s++)
        for (uint32_t oy = 0; oy < t->oh; oy++)
            for (uint32_t ox = 0; ox < t->ow; ox++) {
                uint8_t *d = t->out + s * t->dst_surf + ((uint64_t)oy * t->ow + ox) * 16;
                for (unsigned j = 0; j < c2; j++) {
                    int32_t mi = INT32_MIN;
                    float mf = 0.0f;
                    uint16_t mbits = 0;
                    bool first = true;
                    for (uint32_t ky = 0; ky < t->kh; ky++)
                        for (uint32_t kx = 0; kx < t->kw; kx++) {
                            int64_t iy = (int64_t)oy * t->sy - t->pt + ky;
                            int64_t ix = (int64_t)ox * t->sx - t->pl + kx;
                            bool in = iy >= 0 && iy < t->h && ix >= 0 && ix < t->w;
                            const uint8_t *src = in ? t->in + s * t->src_surf +
                                                          (uint64_t)iy * t->src_line +
                                                          (uint64_t)ix * 16 + j * es
                                                    : NULL;
                            if (t->fp) {
                                uint16_t b = src ? npk_ld16le(src) : (uint16_t)t->pad_value;
                                float v = src ? npk_f16_to_f32(b) : padf;
                                if (first || v > mf) mf = v, mbits = b;
                            } else {
                                int32_t v = src ? (int8_t)*src : pad8;
                                if (v > mi) mi = v;
                            }
                            first = false;
                        }
                    if (t->fp)
                        npk_st16le(d + 2 * j, mbits);
                    else
                        d[j] = (uint8_t)(int8_t)mi;
                }
            }
    return NPK_OK;
}
