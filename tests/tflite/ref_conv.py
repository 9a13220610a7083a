# Test oracle: CONV_2D and DEPTHWISE_CONV_2D of a .tflite model recomputed
# from TFLite's reference-kernel arithmetic in Python integers, written
# independently of npukit's C code (its own FlatBuffers walk with Debian's
# python3-flatbuffers, numpy for the sums). Compares npukit's output.
#
# Argument: "MODEL,OP_INDEX,INPUT.npy,NPUKIT_OUTPUT.npy". Exit 0 when every
# element is equal, 1 otherwise (the count is printed).
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_fb import N, array, root, scalar, sub, tables  # noqa: E402


def quantize_multiplier(real):
    """QuantizeMultiplier: frexp, Q31 mantissa rounded half away from zero."""
    if real == 0:
        return 0, 0
    m, e = math.frexp(real)
    q = int(math.floor(abs(m) * 2**31 + 0.5))
    if q == 2**31:
        q //= 2
        e += 1
    if e < -31:
        return 0, 0
    return q, e


def srdhm(a, b):
    if a == b == -2**31:
        return 2**31 - 1
    ab = a * b
    v = ab + (2**30 if ab >= 0 else 1 - 2**30)
    return v // 2**31 if v >= 0 else -((-v) // 2**31)  # truncation toward zero


def rdbpot(x, e):
    mask = (1 << e) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if (x & mask) > threshold else 0)


def mbqm(x, q, shift):
    left, right = max(shift, 0), max(-shift, 0)
    x = ((x << left) + 2**31) % 2**32 - 2**31  # int32 wrap
    return rdbpot(srdhm(x, q), right)


def main():
    model, op_index, in_path, out_path = sys.argv[1].split(",")
    m = root(model)
    subgraph = tables(m, 2)[0]
    buffers, codes = tables(m, 4), tables(m, 1)
    tensors, op = tables(subgraph, 0), tables(subgraph, 3)[int(op_index)]
    code = codes[scalar(op, 0, N.Uint32Flags, 0)]
    builtin = max(scalar(code, 0, N.Int8Flags, 0), scalar(code, 3, N.Int32Flags, 0))
    assert builtin in (3, 4), "CONV_2D or DEPTHWISE_CONV_2D"
    ins, outs = array(op, 1, "<i4"), array(op, 2, "<i4")

    def tensor(i):
        t = tensors[i]
        q = sub(t, 4)
        data = array(buffers[scalar(t, 2, N.Uint32Flags, 0)], 0, "u1")
        return dict(shape=[int(v) for v in array(t, 0, "<i4")], type=scalar(t, 1, N.Int8Flags, 0),
                    scale=array(q, 2, "<f4"), zero=array(q, 3, "<i8"), data=data)

    x_t, w_t, y_t = tensor(ins[0]), tensor(ins[1]), tensor(outs[0])
    b_t = tensor(ins[2]) if len(ins) > 2 and ins[2] >= 0 else None
    signed = x_t["type"] == 9
    opt = sub(op, 4)
    padding = scalar(opt, 0, N.Int8Flags, 0)
    sw, sh = scalar(opt, 1, N.Int32Flags, 0), scalar(opt, 2, N.Int32Flags, 0)
    base = 3 if builtin == 3 else 4
    act = scalar(opt, base, N.Int8Flags, 0)
    dw, dh = scalar(opt, base + 1, N.Int32Flags, 1), scalar(opt, base + 2, N.Int32Flags, 1)

    x = np.load(in_path).astype(np.int64)
    n, ih, iw, ic = x_t["shape"]
    w = w_t["data"].view("i1" if signed else "u1").astype(np.int64).reshape(w_t["shape"])
    kh, kw = w_t["shape"][1], w_t["shape"][2]
    oc = w_t["shape"][0] if builtin == 3 else w_t["shape"][3]
    bias = b_t["data"].view("<i4").astype(np.int64) if b_t else np.zeros(oc, np.int64)

    def out_size(size, k, s, d):
        eff = (k - 1) * d + 1
        return (size + s - 1) // s if padding == 0 else (size + s - eff) // s

    oh, ow = out_size(ih, kh, sh, dh), out_size(iw, kw, sw, dw)
    ph = max(0, (oh - 1) * sh + (kh - 1) * dh + 1 - ih) // 2
    pw = max(0, (ow - 1) * sw + (kw - 1) * dw + 1 - iw) // 2
    zx, zy = int(x_t["zero"][0]), int(y_t["zero"][0])
    sx, sy = np.float32(x_t["scale"][0]), np.float32(y_t["scale"][0])
    ws = w_t["scale"]
    if signed:  # int8: per channel, double products; the filter zero point is ignored
        zw = 0
        mults = [quantize_multiplier(float(sx) * float(ws[c if len(ws) > 1 else 0]) / float(sy))
                 for c in range(oc)]
    else:  # uint8: one multiplier, the scale product taken in float
        zw = int(w_t["zero"][0])
        mults = [quantize_multiplier(float(np.float32(sx * ws[0])) / float(sy))] * oc
    lo, hi = (-128, 127) if signed else (0, 255)

    def q(f):  # zero point + TfLiteRound(f / scale), float division
        v = np.float32(f) / sy
        return zy + int(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))

    if act in (1, 3):
        lo = max(lo, q(0.0))
    if act == 3:
        hi = min(hi, q(6.0))

    # Pad with the input zero point: (x - zx) is then 0 there, as if skipped.
    pad = np.full((n, ih + 2 * kh * dh, iw + 2 * kw * dw, ic), zx, np.int64)
    pad[:, kh * dh:kh * dh + ih, kw * dw:kw * dw + iw, :] = x
    want = np.zeros((n, oh, ow, oc), np.int64)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                acc = bias.copy()
                for ky in range(kh):
                    for kx in range(kw):
                        y0 = oy * sh - ph + ky * dh + kh * dh
                        x0 = ox * sw - pw + kx * dw + kw * dw
                        px = pad[b, y0, x0, :] - zx
                        if builtin == 3:
                            acc += (w[:, ky, kx, :] - zw) @ px
                        else:
                            acc += np.repeat(px, oc // ic) * (w[0, ky, kx, :] - zw)
                want[b, oy, ox, :] = [min(hi, max(lo, mbqm(int(a), *mults[c]) + zy))
                                      for c, a in enumerate(acc)]
    got = np.load(out_path).astype(np.int64)
    diff = np.count_nonzero(got != want)
    print(f"{diff} of {want.size} elements differ")
    sys.exit(1 if diff or got.shape != want.shape else 0)


main()
