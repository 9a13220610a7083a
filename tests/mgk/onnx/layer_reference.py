#!/usr/bin/python3
"""Oracle for the arithmetic of `npukit mgk export` on every convolution,
Add and Normalize of a model: each record is cut out of the --qdq ONNX model
(onnx.utils.extract_model), fed random input codes, run by ONNX Runtime, and
compared with an independent integer reference written from the formulas of
docs/mgk.md, fed by `mgk extract` (weights, raw requant rows), `mgk info
--json --records` (geometry, Add and Normalize fields) and `mgk graph --json`
(zero points, scales, shapes).

  layer_reference.py prepare DIR QDQ.onnx GRAPH.json INFO.json EXTRACT.safetensors MODEL.mgk
      writes DIR/<record>.onnx, .in.json, .expect.json and DIR/list
  layer_reference.py compare DIR MAXDIFF
      reads DIR/<record>.out.json (run_ort.mjs --dump) and compares
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
import onnx.utils

from check_onnx import load_safetensors


def field(rec, name):
    for f in rec["fields"]:
        if f["name"] == name:
            return f.get("value")
    raise KeyError(name)


def conv_acc(x, w, layer, zin):
    top, bottom, left, right = layer["pads"]
    sw, sh = layer["stride"]
    cout, cin, kh, kw = w.shape
    h, wd, c = x.shape
    xp = np.full((h + top + bottom, wd + left + right, cin), zin, dtype=np.int64)
    xp[top:top + h, left:left + wd, :c] = x
    ho, wo = (h + top + bottom - kh) // sh + 1, (wd + left + right - kw) // sw + 1
    acc = np.zeros((ho, wo, cout), dtype=np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw, :]
            acc += np.einsum("hwc,oc->hwo", patch, w[:, :, i, j].astype(np.int64))
    return acc


def f32(words):
    return np.asarray(words, dtype="<i4").view("<f4").astype(np.float64)


def conv_ref(codes, rec, layer, ext, zin, zout, float_out):
    lid = rec["index"]
    w = ext["layer_%d.weight" % lid]
    rows = ext["layer_%d.requant" % lid].astype(np.int64)
    x = np.concatenate(codes, axis=-1)
    acc = np.stack([conv_acc(x[i], w, layer, zin) for i in range(x.shape[0])])
    mode = field(rec, "mode") & 7
    m = rows.shape[0]
    if mode == 1:  # float path: ((acc << 1) + bias) * scale [* slope2 below 0]
        x = 2 * acc + rows[0]
        y = x * f32(rows[1])
        if m == 3:
            y = np.where(x >= 0, y, x * f32(rows[2]))
        return y if float_out else np.clip(np.rint(y) + zout, 0, 255)
    if m == 2:  # packed: floor((4 acc + bias) / mult) + 128
        return np.clip(np.floor_divide(4 * acc + rows[0], rows[1]) + 128, 0, 255)
    assert m == 5  # packed two-slope
    pos = np.floor_divide(4 * acc + rows[1], rows[2]) + 128
    neg = np.floor_divide(4 * acc + rows[3], rows[4]) + 128
    return np.clip(np.where(4 * acc + rows[0] >= 0, pos, neg), 0, 255)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def gru_ref(codes, ins, y, g, ext, lid):
    """Float GRU on raw input codes (docs/mgk.md "GRU"): gates z, r, h;
    pre-activations Ws*(W.x + Wb) and Rs*(R.h + Rb) with h in hidden codes;
    n = tanh(x_n + r * h_n) (linear_before_reset)."""
    B, S, D, H = g["batch"], g["seq"], g["directions"], g["hidden_size"]
    t = {k: ext["layer_%d.%s" % (lid, k)].astype(np.float64) for k in ("W", "R", "Wb", "Rb", "Ws", "Rs", "h_scale", "h_zp")}
    s_h, z_h = y["scale"], y["zero_point"]
    x = codes[0].reshape(B, S, -1).astype(np.float64)
    h0 = (codes[1].reshape(B, D, H) - z_h) * s_h if len(codes) > 1 else np.zeros((B, D, H))
    out = np.zeros((B, S, D, H))
    for d in range(D):
        h = h0[:, d, :]
        steps = range(S) if d == 0 else range(S - 1, -1, -1)
        for st in steps:
            gx = t["Ws"][d] * (x[:, st, :] @ t["W"][d].T + t["Wb"][d])
            gh = t["Rs"][d] * ((h / s_h + z_h) @ t["R"][d].T + t["Rb"][d])
            z = sigmoid(gx[:, :H] + gh[:, :H])
            r = sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
            nn = np.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
            h = (1 - z) * nn + z * h
            out[:, st, d, :] = h
    return np.clip(np.rint(out / s_h + z_h), 0, 255)


def prepare(out, qdq, graph, info, ext_path, mgk):
    g = json.load(open(graph))
    inf = json.load(open(info))
    recs = inf["record_list"]
    layers = {l["id"]: l for l in inf["layers"]}
    ext = load_safetensors(ext_path)
    data = open(mgk, "rb").read()
    region = inf["weight_region"]["offset"]
    t = {x["id"]: x for x in g["tensors"]}
    rng = np.random.default_rng(11)
    os.makedirs(out, exist_ok=True)
    done = []
    for n in g["nodes"]:
        if n["kind"] not in ("Convolution", "Add", "Normalize", "Gru"):
            continue
        rec = recs[n["record"]]
        ins = [t[i] for i in n["inputs"]]
        y = t[n["outputs"][0]]
        if any(x["format"] == "NHWC" and x["type"] == "FP32" for x in ins):
            continue  # the float input quantiser: nothing integer to compare
        codes = [rng.integers(0, 256, size=x["logical_shape"], dtype=np.int64) for x in ins]
        if n["kind"] == "Convolution":
            zin = field(rec, "zp_word") & 0xFFFF
            ref = conv_ref(codes, rec, layers[rec["index"]], ext, zin, y.get("zero_point", 0),
                           y["type"] == "FP32")
        elif n["kind"] == "Gru":
            g_ = [x for x in inf["grus"] if x["id"] == rec["index"]][0]
            ref = gru_ref(codes, ins, y, g_, ext, rec["index"])
        elif n["kind"] == "Add":
            w = field(rec, "weights")
            acc = sum(int(wk) * c for wk, c in zip(w, codes))
            ref = np.clip(np.floor((64.0 * acc + field(rec, "bias")) / field(rec, "mult")) + 128, 0, 255)
        else:
            c = ins[0]["logical_shape"][-1]
            def tab(off):
                return np.frombuffer(data, dtype="<f4", count=c, offset=region + off).astype(np.float64)
            ref = np.clip(np.rint(codes[0] * tab(field(rec, "scale_offset")) + tab(field(rec, "bias_offset"))), 0, 255)
        key = "r%d" % n["record"]
        path = os.path.join(out, key + ".onnx")
        onnx.utils.extract_model(qdq, path, [clean(x["name"]) for x in ins], [clean(y["name"])])
        feeds = {}
        for x, c in zip(ins, codes):
            real = (c - x["zero_point"]) * x["scale"]
            feeds[clean(x["name"])] = {"dims": x["logical_shape"], "data": real.reshape(-1).tolist()}
        json.dump(feeds, open(os.path.join(out, key + ".in.json"), "w"))
        json.dump({"name": clean(y["name"]), "float": y["type"] == "FP32", "scale": y.get("scale", 1.0),
                   "zero_point": y.get("zero_point", 0), "ref": np.asarray(ref).reshape(-1).tolist(),
                   "what": "%s #%d" % (n["kind"], n["record"])},
                  open(os.path.join(out, key + ".expect.json"), "w"))
        done.append(key)
    open(os.path.join(out, "list"), "w").write("\n".join(done) + "\n")


def clean(name):
    return "".join(c if c.isalnum() or c in "._-:/" else "_" for c in name)


def compare(out, maxdiff):
    worst = 0
    for key in open(os.path.join(out, "list")).read().split():
        e = json.load(open(os.path.join(out, key + ".expect.json")))
        got = np.array(json.load(open(os.path.join(out, key + ".out.json")))[e["name"]]["data"], dtype=np.float64)
        ref = np.array(e["ref"], dtype=np.float64)
        if e["float"]:
            d = np.abs(got - ref) / (np.abs(ref).max() + 1e-9)
            print("%-18s float output: max relative difference %.2e" % (e["what"], d.max()))
            assert d.max() < 1e-4, e["what"]
            continue
        codes = np.clip(np.rint(got / e["scale"] + e["zero_point"]), 0, 255)
        d = np.abs(codes - ref)
        worst = max(worst, int(d.max()))
        print("%-18s %6d values: max |ONNX - reference| = %d codes, %.1f%% exact" %
              (e["what"], d.size, d.max(), 100.0 * np.mean(d == 0)))
    if worst > int(maxdiff):
        sys.exit("difference of %d codes exceeds %s" % (worst, maxdiff))


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[1] == "prepare":
        prepare(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(*sys.argv[2:])
    else:
        sys.exit(__doc__)
