/* Body of the fast renderer's kernels, included by cnn2_kernel.c once per
 * vector width. Before including, define VF/VI/VU (float, int32, uint32
 * vector types of VW lanes), VW, KATTR (function attributes) and KNAME(x)
 * (the function name for this width).
 *
 * A lane holds one pixel and performs exactly the reference's IEEE f32
 * operations for that pixel, in the same order. */

#define BC(s)        ((VF){0} + (s))
#define SEL(m, a, b) ((VF)((((VI)(a)) & (m)) | (((VI)(b)) & ~(m))))

/* acc[o][x .. x + 2 VW) for every x < wpad: 4 outputs x 2 blocks of VW
 * pixels = 8 independent add chains. (Specialising constant k was tried:
 * no measurable gain.) */
KATTR static void KNAME(conv)(const cnn2_row_job *j)
{
    const long k = (long)j->k, r = k / 2;
    for (size_t x = 0; x < j->wpad; x += 2 * VW) {
        VF a0 = BC(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        const float *w = j->w;
        for (unsigned i = 0; i < NPK_CNN2_CHANNELS; i++) {
            for (long ky = 0; ky < k; ky++) {
                const float *p = j->rows[i][ky] + (ptrdiff_t)x - r;
                for (long kx = 0; kx < k; kx++, w += 4) {
                    VF in0, in1;
                    memcpy(&in0, p + kx, sizeof in0);
                    memcpy(&in1, p + kx + VW, sizeof in1);
                    a0 = a0 + w[0] * in0;
                    b0 = b0 + w[0] * in1;
                    a1 = a1 + w[1] * in0;
                    b1 = b1 + w[1] * in1;
                    a2 = a2 + w[2] * in0;
                    b2 = b2 + w[2] * in1;
                    a3 = a3 + w[3] * in0;
                    b3 = b3 + w[3] * in1;
                }
            }
        }
        memcpy(j->acc[0] + x, &a0, sizeof a0);
        memcpy(j->acc[0] + x + VW, &b0, sizeof b0);
        memcpy(j->acc[1] + x, &a1, sizeof a1);
        memcpy(j->acc[1] + x + VW, &b1, sizeof b1);
        memcpy(j->acc[2] + x, &a2, sizeof a2);
        memcpy(j->acc[2] + x + VW, &b2, sizeof b2);
        memcpy(j->acc[3] + x, &a3, sizeof a3);
        memcpy(j->acc[3] + x + VW, &b3, sizeof b3);
    }
}

/* cnn2_activate() on n values, VW lanes at a time: cnn2_expf's steps with
 * selects in place of its conditionals. */
KATTR static void KNAME(act)(float *v, size_t n, cnn2_act act)
{
    size_t i = 0;
    for (; i + VW <= n; i += VW) {
        VF a, out;
        memcpy(&a, v + i, sizeof a);
        if (act == CNN2_SIGMOID) {
            VF x = -a;
            x = SEL(x < BC(CNN2_EXP_LO), BC(CNN2_EXP_LO), x);
            x = SEL(x > BC(CNN2_EXP_HI), BC(CNN2_EXP_HI), x);
            VF t = x * CNN2_LOG2E;
            t = t + CNN2_ROUNDER;
            VF nn = t - CNN2_ROUNDER;
            VF r = x - nn * CNN2_LN2_HI;
            r = r - nn * CNN2_LN2_LO;
            VF p = BC(1.0f / 5040.0f);
            p = p * r + 1.0f / 720.0f;
            p = p * r + 1.0f / 120.0f;
            p = p * r + 1.0f / 24.0f;
            p = p * r + 1.0f / 6.0f;
            p = p * r + 0.5f;
            p = p * r + 1.0f;
            p = p * r + 1.0f;
            VU ni = (VU)t - cnn2_f2u(CNN2_ROUNDER);
            p = (VF)((VU)p + (ni << 23));
            out = 1.0f / (1.0f + p);
        } else {
            out = SEL(a < BC(0.0f), BC(0.0f), a);
            if (act == CNN2_CLAMP01) out = SEL(out > BC(1.0f), BC(1.0f), out);
        }
        out = SEL(a == a, out, (VF)((VU){0} + CNN2_CANON_NAN));
        memcpy(v + i, &out, sizeof out);
    }
    for (; i < n; i++) v[i] = cnn2_activate(v[i], act);
}

#undef BC
#undef SEL
