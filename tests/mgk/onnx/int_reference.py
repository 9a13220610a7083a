#!/usr/bin/python3
"""Oracle for the arithmetic of `npukit mgk export`: an independent integer
reference of a synthetic file's convolutions (float requantisation path,
docs/mgk.md: y = ((acc << 1) + bias) * scale, + zero point, clamp), written
from the documented formulas and fed by `mgk extract` (weights, bias,
scale), `mgk info --json` (pads, kernel, stride) and `mgk graph --json`
(zero points, shapes) -- not by the exporter's folding.

  int_reference.py prepare GRAPH.json INFO.json EXTRACT.safetensors INPUTS.json EXPECT.json
      random input codes (seeded) -> INPUTS.json (the ONNX inputs, real values)
      and the reference output codes -> EXPECT.json
  int_reference.py compare EXPECT.json OUTPUTS.json GRAPH.json MAXDIFF
      ONNX Runtime's outputs back to codes; fail if any differs by more than MAXDIFF
"""
import json
import sys

import numpy as np

from check_onnx import load_safetensors


def conv_ref(x, w, bias, scale, layer, zin, zout):
    """x: codes [H, W, Cin] (uint8 values); w: int8 [Cout, Cin, KH, KW]."""
    top, bottom, left, right = layer["pads"]
    kw_, kh_ = layer["kernel_vector"]
    sw, sh = layer["stride"]
    cout, cin, kh, kw = w.shape
    assert (kh, kw) == (kh_, kw_)
    h, wd, c = x.shape
    xp = np.full((h + top + bottom, wd + left + right, cin), zin, dtype=np.int64)
    xp[top:top + h, left:left + wd, :c] = x  # pad value: the input zero point
    ho = (h + top + bottom - kh) // sh + 1
    wo = (wd + left + right - kw) // sw + 1
    acc = np.zeros((ho, wo, cout), dtype=np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw, :]
            acc += np.einsum("hwc,oc->hwo", patch, w[:, :, i, j].astype(np.int64))
    y = (2 * acc + bias.astype(np.int64)).astype(np.float32) * scale.astype(np.float32)
    return np.clip(np.rint(y) + zout, 0, 255).astype(np.int64)


def prepare(graph, info, ext, inputs_path, expect_path):
    g = json.load(open(graph))
    layers = {l["id"]: l for l in json.load(open(info))["layers"]}
    w = load_safetensors(ext)
    t = {x["id"]: x for x in g["tensors"]}
    rng = np.random.default_rng(7)
    codes, feeds = {}, {}
    for tid in g["inputs"]:
        x = t[tid]
        shape = x["logical_shape"]
        c = rng.integers(0, 256, size=shape[1:], dtype=np.int64)
        codes[tid] = c
        real = (c - x["zero_point"]) * x["scale"]
        feeds[x["name"]] = {"dims": shape, "data": real.reshape(-1).tolist()}
    for n in g["nodes"]:
        assert n["kind"] == "Convolution", n["kind"]
        lid = n["record"]
        x, y = t[n["inputs"][0]], t[n["outputs"][0]]
        codes[y["id"]] = conv_ref(codes[x["id"]], w["layer_%d.weight" % lid], w["layer_%d.bias" % lid],
                                  w["layer_%d.scale" % lid], layers[lid], x["zero_point"], y["zero_point"])
    json.dump(feeds, open(inputs_path, "w"))
    json.dump({t[o]["name"]: codes[o].reshape(-1).tolist() for o in g["outputs"]}, open(expect_path, "w"))


def compare(expect_path, outputs_path, graph, maxdiff):
    g = json.load(open(graph))
    t = {x["name"]: x for x in g["tensors"]}
    exp = json.load(open(expect_path))
    out = json.load(open(outputs_path))
    worst = 0
    for name, ref in exp.items():
        got = np.array(out[name]["data"], dtype=np.float64) / t[name]["scale"] + t[name]["zero_point"]
        got = np.clip(np.rint(got), 0, 255)
        d = np.abs(got - np.array(ref))
        worst = max(worst, int(d.max()))
        print("%s: %d values, max |ONNX - integer reference| = %d codes, %.1f%% exact" %
              (name, d.size, d.max(), 100.0 * np.mean(d == 0)))
    if worst > int(maxdiff):
        sys.exit("difference of %d codes exceeds %s" % (worst, maxdiff))


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "prepare":
        prepare(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "compare":
        compare(*sys.argv[2:])
    else:
        sys.exit(__doc__)
