/* The layer planner with arbitrary shapes, quantisation and options: a
 * valid plan or a clear refusal, never a crash. Every accepted plan's
 * streams decode without problems and sit apart in the regcmd buffer, its
 * tasks write every output byte exactly once, and (when small enough) the
 * emulator runs the whole plan without objection. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/bytes.h"
#include "npukit/rknpu_emu.h"
#include "npukit/rknpu_layer.h"
#include "npukit/rknpu_stream.h"

static double scale_of(uint8_t b)
{
    /* 2^-16 .. 2^15 in coarse steps, and a few degenerate values */
    if (b == 0) return 0.0;
    if (b == 1) return -1.0;
    return (double)((b & 7) + 1) / 8.0 * (double)(1u << (b >> 3)) / 65536.0;
}

static void check_output_coverage(const npk_rk_lplan *p)
{
    const npk_rk_layer *l = &p->layer;
    unsigned c2o = p->fp ? 8 : 16;
    /* K-split (and window pieces): the output proper ends where the int32
     * partial sums begin; the slices (icn > 0) write only those. A
     * broadcasting ADD's channel expansion writes its scratch first. Two
     * passes: pass 1 writes the sign scratch (after the output, or in the
     * K-split area), exactly once too. */
    bool scratch = p->ksplit > 1 || p->scratch_bytes;
    /* The scratch starts at the output proper rounded up to 64 bytes; the
     * padding between them is never written. */
    uint64_t proper = (uint64_t)((p->cout + c2o - 1) / c2o) * l->out_h * l->out_w * 16;
    uint64_t bytes = scratch ? proper : p->output_bytes;
    size_t first = l->kind == NPK_RK_LAYER_ADD ? p->count - p->tiles_c : 0;
    if (scratch &&
        (p->scratch_off % 64 || p->scratch_off < proper || p->scratch_off - proper >= 64 ||
         p->scratch_off + p->scratch_bytes != p->output_bytes))
        __builtin_trap();
    if (p->rq.two_pass) {
        if (p->ksplit > 1 ? p->sign_off != p->scratch_off + (p->ksplit % 2) * (p->scratch_bytes / 2)
                          : p->sign_off % 64 || p->sign_off + p->sign_bytes != p->output_bytes)
            __builtin_trap();
        if (p->ksplit <= 1) {
            if (p->sign_off < p->sign_bytes) __builtin_trap();
            bytes = p->sign_bytes; /* the output proper has the scratch's size */
        }
        if (p->sign_bytes > bytes) __builtin_trap();
    }
    uint8_t *cov = calloc(1, bytes), *cov1 = calloc(1, bytes);
    if (!cov || !cov1) {
        free(cov);
        free(cov1);
        return;
    }
    uint64_t plane = (uint64_t)l->out_h * l->out_w * 16;
    for (size_t i = first; i < p->count; i++) {
        const npk_rk_ltask *t = &p->tasks[i];
        if (t->oc0 % c2o || t->ocn % c2o) __builtin_trap();
        if (t->icn) continue;
        if ((t->pass != 0) != p->rq.two_pass) __builtin_trap();
        uint8_t *c = t->pass == 1 ? cov1 : cov;
        /* column tiles are one row each (the DPU writes a task's pixels contiguously) */
        if (t->ow != l->out_w && t->oh != 1) __builtin_trap();
        for (uint32_t s = t->oc0 / c2o; s < (t->oc0 + t->ocn) / c2o; s++)
            for (uint32_t y = t->oy0; y < t->oy0 + t->oh; y++)
                for (uint64_t b = 0; b < (uint64_t)t->ow * 16; b++) {
                    uint64_t at = s * plane + ((uint64_t)y * l->out_w + t->ox0) * 16 + b;
                    if (at >= bytes || c[at]++) __builtin_trap();
                }
    }
    for (uint64_t i = 0; i < bytes; i++)
        if (cov[i] != 1 || cov1[i] != (p->rq.two_pass && i < p->sign_bytes)) __builtin_trap();
    free(cov);
    free(cov1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 40) return 0;
    npk_rk_layer l;
    memset(&l, 0, sizeof l);
    l.kind = (npk_rk_layer_kind)(data[0] % 7);
    l.type = (npk_rk_ltype)(data[1] % 4);
    l.in_h = data[2] % 70;
    l.in_w = data[3] % 70;
    l.in_c = npk_ld16le(data + 4) % 1100;
    l.out_c = npk_ld16le(data + 6) % 1100;
    l.k_h = data[8] % 9;
    l.k_w = data[9] % 9;
    if (data[18] & 2) { /* average pool windows beyond 31 (pieces) */
        l.k_h = 28 + data[8] % 40;
        l.k_w = 28 + data[9] % 40;
    }
    l.stride_h = data[10] % 9;
    l.stride_w = data[11] % 9;
    l.dil_h = data[12] % 5;
    l.dil_w = data[13] % 5;
    l.pad_top = data[14] % 17;
    l.pad_left = data[15] % 17;
    l.pad_bottom = data[16] % 17;
    l.pad_right = data[17] % 17;
    if (data[18] & 1) {
        l.out_h = npk_rk_conv_out_size(l.in_h, l.k_h, l.stride_h, l.dil_h, l.pad_top, l.pad_bottom);
        l.out_w = npk_rk_conv_out_size(l.in_w, l.k_w, l.stride_w, l.dil_w, l.pad_left, l.pad_right);
    } else {
        l.out_h = data[19] % 70;
        l.out_w = data[20] % 70;
    }
    l.in.scale = scale_of(data[21]);
    l.w.scale = scale_of(data[22]);
    l.out.scale = scale_of(data[23]);
    l.in.zero_point = (int8_t)data[24];
    l.w.zero_point = (int8_t)data[25];
    l.out.zero_point = (int8_t)data[26];
    if (l.type == NPK_RK_LT_UINT8) {
        l.in.zero_point += 128;
        l.w.zero_point += 128;
        l.out.zero_point += 128;
    }
    l.act_min = (int8_t)data[27] + (l.type == NPK_RK_LT_UINT8 ? 128 : 0);
    l.act_max = (int8_t)data[28] + (l.type == NPK_RK_LT_UINT8 ? 128 : 0);
    npk_rk_lplan_opts o;
    memset(&o, 0, sizeof o);
    o.cores = data[29] % 5;
    o.form = (npk_rk_form)(data[30] % 3);
    o.max_rows = data[31] % 8;
    o.max_channels = data[32] & 0x7f;
    o.input_addr = (uint32_t)(data[33] % 4) << 28;
    o.weight_addr = 0x40000000u + ((uint32_t)(data[34] % 4) << 6);
    o.output_addr = 0x80000000u;
    o.regcmd_addr = 0xC0000000u;
    bool per_channel = data[35] & 1, run = data[35] & 2;
    o.input2_addr = 0xD0000000u;
    o.requant = (npk_rk_rq_mode)((data[35] >> 3) % 3);
    l.fused_add = (data[35] & 4) != 0;
    l.in2.scale = scale_of(data[21] ^ data[22]);
    l.in2.zero_point = l.in.zero_point;
    l.add_out.scale = scale_of(data[23] ^ 0x08);
    l.add_out.zero_point = l.out.zero_point;
    /* ADD broadcasting: each dimension of the second input 1 or the
     * first's; bit 7: a constant second input. */
    uint8_t *k2 = NULL;
    if (data[18] & 0x70) {
        l.in2_h = data[18] & 0x10 ? 1 : l.in_h;
        l.in2_w = data[18] & 0x20 ? 1 : l.in_w;
        l.in2_c = data[18] & 0x40 ? 1 : l.in_c;
    }
    if (data[18] & 0x80) {
        size_t n2 = (size_t)(l.in2_h ? l.in2_h : l.in_h) * (l.in2_w ? l.in2_w : l.in_w) *
                    (l.in2_c ? l.in2_c : l.in_c);
        k2 = malloc(n2 + 1);
        if (!k2) return 0;
        for (size_t i = 0; i < n2; i++) k2[i] = data[36 + i % (size - 36)];
        l.in2_const = k2;
    }

    /* Weights (and per-channel scales, biases) sized from the claimed shape. */
    size_t taps = (size_t)l.k_h * l.k_w, es = l.type == NPK_RK_LT_FP16 ? 2 : 1;
    size_t nw = (l.kind == NPK_RK_LAYER_DEPTHWISE ? 1 : (size_t)l.out_c) * taps * l.in_c * es;
    if (l.kind == NPK_RK_LAYER_AVGPOOL || l.kind == NPK_RK_LAYER_MAXPOOL) nw = 0; /* unread */
    if (nw > (4u << 20)) { /* keep each run short: at most 4 MiB of weights */
        free(k2);
        return 0;
    }
    uint8_t *w = malloc(nw ? nw : 1);
    double *ws = malloc((l.out_c ? l.out_c : 1) * sizeof *ws);
    int32_t *bias = malloc((l.out_c ? l.out_c : 1) * sizeof *bias);
    float *fbias = malloc((l.out_c ? l.out_c : 1) * sizeof *fbias);
    if (!w || !ws || !bias || !fbias) goto done;
    for (size_t i = 0; i < nw; i++) w[i] = data[36 + i % (size - 36)];
    for (uint32_t c = 0; c < l.out_c; c++) {
        ws[c] = scale_of(data[36 + c % (size - 36)]);
        bias[c] = (int32_t)npk_ld32le(data + 36) >> (c % 32);
        fbias[c] = (float)(bias[c] % 1000) / 100.0f;
    }
    l.weights = w;
    l.w_scales = per_channel ? ws : NULL;
    l.bias_i32 = bias;
    l.bias_f32 = fbias;

    npk_rk_lplan p;
    npk_error err = {0};
    if (npk_rk_lplan_make(&l, &o, &p, &err) != NPK_OK) {
        if (!err.msg[0]) __builtin_trap(); /* a refusal always says why */
        goto done;
    }
    uint64_t end = 0;
    for (size_t i = 0; i < p.count; i++) {
        const npk_rk_ltask *t = &p.tasks[i];
        if (t->regcmd_off < end || t->regcmd_off % 64) __builtin_trap();
        end = t->regcmd_off + t->entries * 8;
        if (end > p.regcmd_entries * 8) __builtin_trap();
        for (size_t j = 0; j < t->entries; j++) {
            npk_rk_entry e;
            npk_rk_entry_decode(p.regcmd[t->regcmd_off / 8 + j], &e);
            if (e.problems) __builtin_trap();
        }
    }
    if (p.weight_bytes &&
        (p.mul_off < p.bias_off || p.bias_off < p.wt_bytes || p.weight_bytes < p.mul_off))
        __builtin_trap();
    check_output_coverage(&p);
    uint64_t macs = 0;
    for (size_t i = 0; i < p.count; i++) macs += p.tasks[i].macs;
    if (run && macs < (1u << 22) && p.input_bytes < (1u << 22) && p.output_bytes < (1u << 22)) {
        npk_rk_emu_opts eo = {3, 1u << 23, false};
        npk_rk_emu *e = NULL;
        uint64_t in2_bytes = npk_rk_lplan_input2_bytes(&p);
        bool two = in2_bytes > 0;
        uint8_t *in = calloc(1, p.input_bytes), *out = calloc(1, p.output_bytes);
        uint8_t *in2 = two ? calloc(1, in2_bytes) : NULL;
        uint8_t *reg = calloc(p.regcmd_entries, 8), *wt = malloc(p.weight_bytes + 1);
        if (in && out && reg && wt && npk_rk_emu_create(&eo, &e, &err) == NPK_OK) {
            if (p.weight_bytes) memcpy(wt, p.wblob, p.weight_bytes);
            npk_rk_stream_to_bin(p.regcmd, p.regcmd_entries, reg);
            if (npk_rk_emu_map(e, o.input_addr, in, p.input_bytes, &err) ||
                (p.weight_bytes && npk_rk_emu_map(e, o.weight_addr, wt, p.weight_bytes, &err)) ||
                npk_rk_emu_map(e, o.output_addr, out, p.output_bytes, &err) ||
                npk_rk_emu_map(e, o.regcmd_addr, reg, p.regcmd_entries * 8, &err) ||
                (two && (!in2 || npk_rk_emu_map(e, o.input2_addr, in2, in2_bytes, &err))))
                __builtin_trap();
            npk_status st;
            if (o.form == NPK_RK_FORM_VENDOR)
                st = npk_rk_emu_submit(e, &p.submit, p.records, p.count, &err);
            else {
                st = NPK_OK;
                for (size_t i = 0; i < p.count && !st; i++)
                    st = npk_rk_emu_run_core(e, 0, o.regcmd_addr + p.tasks[i].regcmd_off,
                                             npk_rknpu_chain_amount(p.tasks[i].entries), 1, &err);
            }
            if (st != NPK_OK) { /* a valid plan runs */
                fprintf(stderr, "valid plan refused by the emulator: %s\n", err.msg);
                __builtin_trap();
            }
        }
        npk_rk_emu_destroy(e);
        free(in), free(out), free(reg), free(wt), free(in2);
    }
    npk_rk_lplan_free(&p);
done:
    free(w), free(ws), free(bias), free(fbias), free(k2);
    return 0;
}
