#!/usr/bin/python3
"""Oracle for `npukit mgk export`: ONNX's own checker with full shape
inference on the float and the --qdq model, and every weight read back from
them against `npukit mgk extract` (int8 equal, float = int8 * scale).

usage: check_onnx.py FLOAT.onnx QDQ.onnx EXTRACT.safetensors [OUTPUT=D0,D1,...]...
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper

DTYPES = {"I8": np.int8, "U8": np.uint8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
          "F16": np.float16, "F32": np.float32, "F64": np.float64}


def load_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", raw, 0)
    head = json.loads(raw[8:8 + n])
    out = {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.dtype(DTYPES[t["dtype"]]).newbyteorder("<")).reshape(t["shape"])
    return out


def checked(path):
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    return m


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    mf, mq = checked(argv[1]), checked(argv[2])
    ext = load_safetensors(argv[3])
    inf = {i.name: numpy_helper.to_array(i) for i in mf.graph.initializer}
    inq = {i.name: numpy_helper.to_array(i) for i in mq.graph.initializer}
    convs = grus = 0
    for name, w in sorted(ext.items()):
        if name.endswith(".weight"):
            lid = name[:-len(".weight")]
            f = inf[name].astype(np.float64)
            if lid + ".weight_q" in inq:  # int8 with per-output-channel scales
                q, sc = inq[lid + ".weight_q"], inq[lid + ".weight_scale"].astype(np.float64)
                assert q.dtype == np.int8 and np.array_equal(q, w), name + ": int8 weights differ from extract"
                want = q.astype(np.float64) * sc.reshape(-1, 1, 1, 1)
                assert np.allclose(f, want, rtol=1e-6, atol=0), name + ": float weights are not int8 * scale"
            else:  # float only (inputs of different scales): one factor per (out, in) channel
                assert np.all((w == 0) == (f == 0)), name + ": zero pattern differs"
                ratio = np.divide(f, w, out=np.full(f.shape, np.nan), where=w != 0)
                r = ratio.reshape(ratio.shape[0], ratio.shape[1], -1)
                spread = np.nanmax(r, axis=2) - np.nanmin(r, axis=2)
                assert np.all(np.nan_to_num(spread) <= 1e-6 * np.nan_to_num(np.nanmax(np.abs(r), axis=2))), name
            convs += 1
        elif name.endswith(".W") or name.endswith(".R"):
            f = inf[name].astype(np.float64)
            q, sc = inq[name + "_q"], inq[name + "_scale"].astype(np.float64)
            assert q.dtype == np.int8 and np.array_equal(q, w), name + ": int8 weights differ from extract"
            assert np.allclose(f, q.astype(np.float64) * sc.reshape(-1, 1, 1), rtol=1e-6, atol=0), name
            grus += 1
    for spec in argv[4:]:
        oname, dims = spec.split("=")
        dims = [int(d) for d in dims.split(",")]
        for m in (mf, mq):
            outs = {o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output}
            assert outs.get(oname) == dims, "output %s: %s, expected %s" % (oname, outs.get(oname), dims)
    print("onnx checker (full) ok on both models; weights equal extract: %d conv, %d GRU tensors" % (convs, grus))


if __name__ == "__main__":
    main(sys.argv)
