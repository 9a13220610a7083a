# Test oracle: Coral's PosenetDecoderOp recomputed in Python, written
# separately from npukit's C kernel from the algorithm as Coral publishes it
# (libcoral coral/pose_estimation/posenet_decoder.cc; PersonLab, Papandreou
# et al. 2018): its own FlatBuffers and FlexBuffers walk (Debian's
# python3-flatbuffers), float32 arithmetic through numpy scalars, libm's
# expf through ctypes, and std::priority_queue's tie order from libstdc++'s
# push_heap/pop_heap. A same-team re-implementation: it catches slips in the
# C code (indices, rounding order, queue order), not a shared misreading of
# the algorithm.
#
# Argument: "MODEL,HEATMAPS.npy,SHORTS.npy,MIDS.npy,OUT0.npy,...,OUT3.npy":
# the decoder inputs and npukit's four outputs. Prints the number of
# differing elements; exit 0 when every element is bit-identical.
import ctypes
import ctypes.util
import math
import os
import sys

import numpy as np
from flatbuffers import flexbuffers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_fb import N, array, root, scalar, string, sub, tables  # noqa: E402

F = np.float32
LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
LIBM.expf.restype = ctypes.c_float
LIBM.expf.argtypes = [ctypes.c_float]

KEYPOINTS = 17
EDGES = 16
# (parent, child): 16 forward edges of the skeleton, then the same backward.
SKELETON = [(0, 1), (1, 3), (0, 2), (2, 4), (0, 5), (5, 7), (7, 9), (5, 11), (11, 13),
            (13, 15), (0, 6), (6, 8), (8, 10), (6, 12), (12, 14), (14, 16)]
ALL_EDGES = SKELETON + [(c, p) for (p, c) in SKELETON]


# ---- the model: the decoder's options and its inputs' quantisation ----

def decoder(path):
    model = root(path)
    codes = [string(c, 1) for c in tables(model, 1)]
    sg = tables(model, 2)[0]
    tensors = tables(sg, 0)
    for op in tables(sg, 3):
        code = scalar(op, 0, N.Uint32Flags, 0)
        if codes[code] != "PosenetDecoderOp":
            continue
        opts = array(op, 5, np.uint8).tobytes()
        m = flexbuffers.GetRoot(opts).AsMap
        options = {k: m[k].Value for k in ("max_detections", "score_threshold", "stride",
                                            "nms_radius")}
        quant = []
        for ti in array(op, 1, np.int32):
            t = tensors[ti]
            q = sub(t, 4)
            scale = array(q, 2, np.float32)
            zp = array(q, 3, np.int64)
            quant.append((F(scale[0]), int(zp[0])) if len(scale) else None)
        return options, quant
    sys.exit("no PosenetDecoderOp in " + path)


# ---- float32 helpers ----

def expf(x):
    return F(LIBM.expf(float(x)))


def clamp(v, lo, hi):
    return lo if v < lo else hi if hi < v else v


def dequantize(q, quant, extra):
    """Coral's DequantizeTensor: (q - zero point) * (scale * extra) in float32."""
    if quant is None:
        return q.astype(F) * F(extra)
    scale, zp = quant
    return (q.astype(F) - F(zp)) * (scale * F(extra))


# ---- std::priority_queue (max on top) in libstdc++'s order ----

class Heap:
    def __init__(self):
        self.a = []

    def _up(self, hole, top, v):
        a = self.a
        parent = (hole - 1) // 2 if hole > 0 else 0
        while hole > top and a[parent][0] < v[0]:
            a[hole] = a[parent]
            hole = parent
            parent = (hole - 1) // 2 if hole > 0 else 0
        a[hole] = v

    def push(self, v):
        self.a.append(v)
        self._up(len(self.a) - 1, 0, v)

    def pop(self):
        a = self.a
        top = a[0]
        n = len(a)
        if n > 1:
            length = n - 1
            v = a[length]
            hole = child = 0
            # C's truncating division, for the values these take
            while child < (length - 1) // 2:
                child = 2 * (child + 1)
                if a[child][0] < a[child - 1][0]:
                    child -= 1
                a[hole] = a[child]
                hole = child
            if length % 2 == 0 and child == (length - 2) // 2:
                child = 2 * (child + 1)
                a[hole] = a[child - 1]
                hole = child - 1
            self._up(hole, 0, v)
        a.pop()
        return top

    def __len__(self):
        return len(self.a)


# ---- the decoder ----

class Decoder:
    def __init__(self, heat, shorts, mids, options):
        self.heat, self.shorts, self.mids = heat, shorts, mids
        self.h, self.w = heat.shape[0], heat.shape[1]

    def sample(self, t, y, x, channel):
        """Bilinear interpolation at (y, x); the weights use the unclamped position."""
        def corners(v, n):
            p = clamp(v, F(0), F(n) - F(1))
            lo, hi = int(math.floor(p)), int(math.ceil(p))
            return lo, hi, F(v - F(lo))
        y0, y1, ly = corners(y, self.h)
        x0, x1, lx = corners(x, self.w)
        one = F(1)
        top = (one - lx) * t[y0, x0, channel] + lx * t[y0, x1, channel]
        bottom = (one - lx) * t[y1, x0, channel] + lx * t[y1, x1, channel]
        return F((one - ly) * top + ly * bottom)

    def follow(self, y, x, edge, target):
        """Mid-range offset of the edge, then five short-range refinements."""
        hm, wm = F(self.h) - F(1), F(self.w) - F(1)
        # mid channels: fwd dy[16], fwd dx[16], bwd dy[16], bwd dx[16]
        base = edge if edge < EDGES else edge + EDGES
        dy = self.sample(self.mids, y, x, base)
        dx = self.sample(self.mids, y, x, base + EDGES)
        y, x = clamp(F(y + dy), F(0), hm), clamp(F(x + dx), F(0), wm)
        for _ in range(5):
            dy = self.sample(self.shorts, y, x, target)
            dx = self.sample(self.shorts, y, x, target + KEYPOINTS)
            y, x = clamp(F(y + dy), F(0), hm), clamp(F(x + dx), F(0), wm)
        return y, x

    def candidates(self, logit):
        h, w, heat = self.h, self.w, self.heat
        pad = np.full((h + 2, w + 2, KEYPOINTS), -np.inf, F)
        pad[1:-1, 1:-1] = heat
        neighbours = np.max(np.stack([pad[dy:dy + h, dx:dx + w] for dy in range(3)
                                      for dx in range(3)]), axis=0)
        ok = (heat >= logit) & ~(neighbours > heat)
        queue = Heap()
        hm, wm = F(h) - F(1), F(w) - F(1)
        for y, x, k in zip(*np.nonzero(ok)):
            py = clamp(F(F(y) + self.shorts[y, x, k]), F(0), hm)
            px = clamp(F(F(x) + self.shorts[y, x, k + KEYPOINTS]), F(0), wm)
            queue.push((heat[y, x, k], py, px, int(k)))
        return queue

    def grow(self, root):
        """Decode one pose from its root, best keypoint first."""
        _, ry, rx, rk = root
        pose = [(F(-1), F(-1))] * KEYPOINTS
        score = [F(-1e5)] * KEYPOINTS
        done = [False] * KEYPOINTS
        queue = Heap()
        queue.push((self.sample(self.heat, ry, rx, rk), ry, rx, rk))
        while len(queue):
            s, y, x, k = queue.pop()
            if done[k]:
                continue
            pose[k], score[k], done[k] = (y, x), s, True
            for e, (parent, child) in enumerate(ALL_EDGES):
                if parent != k or done[child]:
                    continue
                cy, cx = self.follow(y, x, e, child)
                queue.push((self.sample(self.heat, cy, cx, child), cy, cx, child))
        return pose, score


def mean_of_sorted(scores, skip=None):
    total = F(0)
    for k in sorted(range(KEYPOINTS), key=lambda k: -scores[k]):
        if skip is None or not skip[k]:
            total = F(total + scores[k])
    return F(total / F(KEYPOINTS))


def sq_dist(a, b):
    dy, dx = F(b[0] - a[0]), F(b[1] - a[1])
    return F(F(dy * dy) + F(dx * dx))


def decode(heat_q, short_q, mid_q, options, quant):
    stride = int(options["stride"])
    threshold = F(options["score_threshold"])
    max_det = int(options["max_detections"])
    extra = F(1.0 / stride)
    heat = dequantize(heat_q[0], quant[0], F(1))
    shorts = dequantize(short_q[0], quant[1], extra)
    mids = dequantize(mid_q[0], quant[2], extra)
    d = Decoder(heat, shorts, mids, options)
    radius = F(F(options["nms_radius"]) / F(stride))
    sq_radius = F(radius * radius)
    logit = F(-math.log(1.0 / (float(threshold) + 1e-6) - 1.0))

    queue = d.candidates(logit)
    poses, kscores, scores = [], [], []
    while len(poses) < max_det and len(queue):
        root = queue.pop()
        if any(sq_dist((root[1], root[2]), p[root[3]]) <= sq_radius for p in poses):
            continue
        pose, raw = d.grow(root)
        prob = [F(F(1) / F(F(1) + expf(-s))) for s in raw]
        score = mean_of_sorted(prob)
        if score >= threshold:
            poses.append(pose)
            kscores.append(prob)
            scores.append(score)

    def order(values):  # decreasing, equal values in index order
        return sorted(range(len(values)), key=lambda i: -values[i])

    ranked = order(scores)
    for i, cur in enumerate(ranked):
        hidden = [any(sq_dist(poses[cur][k], poses[prev][k]) <= sq_radius for prev in ranked[:i])
                  for k in range(KEYPOINTS)]
        scores[cur] = mean_of_sorted(kscores[cur], hidden)

    out = [np.zeros((1, max_det, KEYPOINTS, 2), F), np.zeros((1, max_det, KEYPOINTS), F),
           np.zeros((1, max_det), F), np.zeros(1, F)]
    n = 0
    for i in order(scores):
        if scores[i] < threshold:
            break
        for k in range(KEYPOINTS):
            out[0][0, n, k] = (F(poses[i][k][0] * F(stride)), F(poses[i][k][1] * F(stride)))
        out[1][0, n] = kscores[i]
        out[2][0, n] = scores[i]
        n += 1
    out[3][0] = F(n)
    return out


def main():
    args = sys.argv[1].split(",")
    options, quant = decoder(args[0])
    inputs = [np.load(p) for p in args[1:4]]
    ref = decode(*inputs, options, quant)
    bad = total = 0
    for i, path in enumerate(args[4:8]):
        got = np.load(path)
        if got.shape != ref[i].shape:
            print("output %d: shape %s, expected %s" % (i, got.shape, ref[i].shape))
            return 1
        diff = got.view(np.uint32) != ref[i].view(np.uint32)
        bad += int(diff.sum())
        total += got.size
        if diff.any():
            where = np.argwhere(diff)[0]
            print("output %d first differs at %s: %r vs %r" % (
                i, tuple(where), got[tuple(where)], ref[i][tuple(where)]))
    print("%d of %d elements differ; %d poses" % (bad, total, int(ref[3][0])))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
