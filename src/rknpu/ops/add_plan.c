/* ADD of two int8/uint8 tensors as element-wise DPU tasks: the DPU reads
 * the first input through MRDMA, BS takes off its zero point and scales it
 * to the output's fixed point (F fractional bits), the EW operand
 * conversion does the same for the second input read through ERDMA, EW
 * adds them (and clips), OUT_CVT rounds off the fraction and adds the
 * output zero point. TFLite's two rescalings and its final multiplier
 * (left shift 20, the inputs over twice the larger scale) become the two
 * 15-bit multipliers s1/so and s2/so (docs/rknpu.md, "Add"). Tasks split
 * the channel surfaces over the cores; the DPU reads from memory, so there
 * is no CBUF limit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layer_internal.h"
#include "npukit/rknpu_conv.h"
#include "npukit/rknpu_plan.h"
#include "npukit/rknpu_stream.h"
#include "ops_internal.h"

#define ADD_MAX_ENTRIES 120
#define ADD_F           12 /* fractional bits of the output kept until OUT_CVT */

/* m = a * 2^-e with a in [2^14, 2^15); false when e would be negative. */
static bool mant(double m, uint32_t *a, int *e)
{
    int x;
    double f = frexp(m, &x);
    long q = lround(f * 32768.0);
    int s = 15 - x;
    if (q == 32768) q = 16384, s--;
    *a = (uint32_t)q;
    *e = s;
    return s >= 0;
}

npk_status rk_add_plan(const npk_rk_layer *l, const npk_rk_lplan_opts *o, npk_rk_lplan *p,
                       npk_error *err)
{
    p->layer = *l;
    p->layer.weights = NULL;
    p->layer.bias_i32 = NULL;
    p->layer.bias_f32 = NULL;
    p->layer.w_scales = NULL;
    p->layer.mults = NULL;
    p->layer.tie_sign = NULL;
    p->opts = *o;
    p->cin = p->cout = (l->in_c + 15) / 16 * 16;
    p->group = 32;
    uint64_t plane = (uint64_t)l->in_h * l->in_w;
    p->input_bytes = p->output_bytes = (uint64_t)(p->cin / 16) * plane * 16;
    if (plane > npk_rk_field_max(NPK_RKF_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE) / 2)
        return npk_fail(err, NPK_E_LIMIT, "add of %ux%u pixels: DPU_SURFACE_ADD would overflow",
                        l->in_h, l->in_w);
    if ((uint64_t)o->input_addr + p->input_bytes > ((uint64_t)1 << 32) ||
        (uint64_t)o->input2_addr + p->input_bytes > ((uint64_t)1 << 32) ||
        (uint64_t)o->output_addr + p->output_bytes > ((uint64_t)1 << 32) ||
        (o->input_addr | o->input2_addr | o->output_addr | o->regcmd_addr) % 64)
        return npk_fail(err, NPK_E_LIMIT,
                        "add buffers must be 64-byte aligned inside the 32-bit address space");
    int32_t off = l->type == NPK_RK_LT_UINT8 ? 128 : 0;
    int32_t z1 = l->in.zero_point - off, z2 = l->in2.zero_point - off;
    int32_t zo = l->out.zero_point - off, lo = l->act_min - off, hi = l->act_max - off;
    uint32_t a1, a2;
    int e1, e2;
    double m1 = l->in.scale / l->out.scale, m2 = l->in2.scale / l->out.scale;
    if (!mant(m1, &a1, &e1) || !mant(m2, &a2, &e2))
        return npk_fail(err, NPK_E_LIMIT,
                        "add input/output scale ratios %g and %g: at most 2^15 is supported", m1,
                        m2);
    int F = ADD_F;
    if (e1 < F) F = e1;
    if (e2 < F) F = e2;
    if (e1 - F > 63 || e2 - F > 63)
        return npk_fail(err, NPK_E_LIMIT,
                        "add input/output scale ratios %g and %g need shifts beyond 63", m1, m2);
    p->rq.scale = 1u << 14;
    p->rq.shift = (uint32_t)(14 + F);
    p->rq.worst_rel = fmax(fabs(ldexp(a1, -e1) - m1) / m1, fabs(ldexp(a2, -e2) - m2) / m2);

    npk_rk_ew_desc d;
    memset(&d, 0, sizeof d);
    d.bs.alu = NPK_RK_OP_REG;
    d.bs.alu_op = (uint32_t)-z1;
    d.bs.mul = NPK_RK_OP_REG;
    d.bs.mul_op = a1;
    d.bs.mul_shift = (uint32_t)(e1 - F);
    d.ew_cvt_offset = -z2;
    d.ew_cvt_scale = a2;
    d.ew_cvt_shift = (uint32_t)(e2 - F);
    d.out_cvt_scale = p->rq.scale;
    d.out_cvt_shift = p->rq.shift;
    d.out_cvt_offset = zo;
    /* Clip at multiples of 2^F (their outputs are exactly the bounds). */
    int64_t t_lo = (int64_t)(lo - zo) * ((int64_t)1 << F);
    int64_t t_hi = (int64_t)(hi - zo) * ((int64_t)1 << F);
    if (lo > -128) {
        d.bn.alu = NPK_RK_OP_REG;
        d.bn.alu_op = (uint32_t)(int32_t)-t_lo;
        d.ew_relu = true;
        d.out_cvt_offset = lo;
    }
    if (hi < 127) {
        d.ew_relux = true;
        d.ew_relux_cmp = (uint32_t)(int32_t)(t_hi - (lo > -128 ? t_lo : 0));
    }
    p->rq.offset = d.out_cvt_offset;

    uint32_t surfaces = p->cin / 16;
    uint32_t tasks = (uint32_t)o->cores < surfaces ? (uint32_t)o->cores : surfaces;
    p->count = tasks;
    p->tiles_c = tasks;
    p->tiles_h = 1;
    size_t slot = (ADD_MAX_ENTRIES * 8 + NPK_RK_STREAM_ALIGN - 1) / NPK_RK_STREAM_ALIGN *
                  NPK_RK_STREAM_ALIGN / 8;
    p->tasks = calloc(p->count, sizeof *p->tasks);
    p->records = calloc(p->count, sizeof *p->records);
    p->regcmd = calloc(p->count * slot, 8);
    if (!p->tasks || !p->records || !p->regcmd) {
        npk_rk_lplan_free(p);
        return npk_fail(err, NPK_E_NOMEM, "out of memory for an add plan");
    }
    p->cores = (int)tasks;
    uint32_t int_mask = npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_MASK_DPU_0) |
                        npk_rk_field_mask(NPK_RKF_PC_INTERRUPT_MASK_DPU_1);
    uint64_t off_b = 0;
    npk_status st = NPK_OK;
    for (uint32_t i = 0; i < tasks; i++) {
        npk_rk_ltask *t = &p->tasks[i];
        uint32_t s0 = (uint32_t)((uint64_t)surfaces * i / tasks);
        uint32_t s1 = (uint32_t)((uint64_t)surfaces * (i + 1) / tasks);
        t->oc0 = s0 * 16;
        t->ocn = (s1 - s0) * 16;
        t->oh = t->ih = l->in_h;
        t->ow = t->iw = l->in_w;
        t->core = (int)i;
        t->next = -1;
        t->macs = plane * t->ocn;
        p->core_first[i] = i;
        p->core_count[i] = 1;
        p->core_work[i] = t->macs;
        d.w = l->in_w;
        d.h = l->in_h;
        d.c = t->ocn;
        d.surf_atoms = (uint32_t)plane;
        d.src_addr = o->input_addr + (uint32_t)(s0 * plane * 16);
        d.ew_addr = o->input2_addr + (uint32_t)(s0 * plane * 16);
        d.out_addr = o->output_addr + (uint32_t)(s0 * plane * 16);
        t->regcmd_off = (uint32_t)off_b;
        if ((st = npk_rk_ew_emit(&d, p->regcmd + off_b / 8, ADD_MAX_ENTRIES, &t->entries, err)))
            break;
        off_b +=
            (t->entries * 8 + NPK_RK_STREAM_ALIGN - 1) / NPK_RK_STREAM_ALIGN * NPK_RK_STREAM_ALIGN;
        p->records[i] =
            rk_task_record(p->regcmd, t->regcmd_off, t->entries, int_mask, o->regcmd_addr);
    }
    if (st) {
        npk_rk_lplan_free(p);
        return st;
    }
    p->regcmd_entries = (size_t)(off_b / 8);
    /* Element-wise: either input may be the output itself (in place). */
    const rk_buf bufs[] = {{"input", o->input_addr, p->input_bytes, 1},
                           {"input2", o->input2_addr, p->input_bytes, 1},
                           {"output", o->output_addr, p->output_bytes, 1},
                           {"regcmd", o->regcmd_addr, off_b, 0}};
    if ((st = rk_check_buffers(bufs, sizeof bufs / sizeof *bufs, err))) {
        npk_rk_lplan_free(p);
        return st;
    }
    rk_submit_fill(&p->submit, p->count, p->cores, p->core_first, p->core_count);
    return NPK_OK;
}
