#!/usr/bin/python3
"""Independent TFLite oracle for npukit's tests: runs a model with Arm NN's
reference backend (CpuRef) through its TFLite parser (Debian python3-pyarmnn,
libarmnntfliteparser22, libarmnn-cpuref-backend22). One thread.

  /usr/bin/python3 armnn_run.py MODEL [--input [NAME=]X.npy ...] --outdir DIR
                   [--outputs NAME,...] [--repeat N]
  /usr/bin/python3 armnn_run.py --jobs FILE

--jobs runs many models in one process: one job per line of FILE, a JSON
array of the arguments above (with --outdir); a job Arm NN cannot run writes
DIR/status.json with its exit status and reason instead of outputs.

Writes DIR/<sanitized output name>.npy per output and DIR/manifest.json (the
same interface as litert_run.mjs). Inputs are bound by tensor name (NAME=)
or, without a name, in order.

Exit status: 0 done; 2 usage or bad input file; 3 Arm NN cannot run this
model (the message says why); 4 Arm NN (or NumPy) is not installed.
"""
import contextlib
import io
import json
import os
import re
import sys
import time

EXIT_USAGE, EXIT_CANNOT, EXIT_MISSING = 2, 3, 4


class Fail(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


def sanitize(name):
    """The output file name: every byte outside [A-Za-z0-9._-] becomes '_'; a
    name longer than 120 bytes is cut there and ".<output index>" appended; a
    clash appends ".<output index>" (the same rule in litert_run.mjs and
    tests/common/oracle.c)."""
    s = re.sub(rb"[^A-Za-z0-9._-]", b"_", name.encode("utf-8")).decode("ascii")
    return s if s not in ("", ".", "..") else "_"


def parse_args(argv):
    a = {"model": None, "inputs": [], "outdir": None, "outputs": None, "repeat": 0}
    i = 0
    while i < len(argv):
        k = argv[i]

        def val():
            nonlocal i
            if i + 1 >= len(argv):
                raise Fail(EXIT_USAGE, f"{k} needs a value")
            i += 1
            return argv[i]

        if k == "--input":
            v = val()
            name, eq, file = v.partition("=")
            if eq and name and not name.endswith(".npy"):
                a["inputs"].append((name, file))
            else:
                a["inputs"].append((None, v))
        elif k == "--outdir":
            a["outdir"] = val()
        elif k == "--outputs":
            a["outputs"] = [s for s in val().split(",") if s]
        elif k == "--repeat":
            v = val()
            if not v.isdigit() or int(v) < 1:
                raise Fail(EXIT_USAGE, "--repeat needs a positive integer")
            a["repeat"] = int(v)
        elif k.startswith("--"):
            raise Fail(EXIT_USAGE, f"unknown option {k}")
        elif a["model"] is None:
            a["model"] = k
        else:
            raise Fail(EXIT_USAGE, f"unexpected argument {k}")
        i += 1
    if a["model"] is None:
        raise Fail(EXIT_USAGE, "usage: armnn_run.py MODEL --input [NAME=]X.npy ... --outdir DIR "
                   "[--outputs NAME,...] [--repeat N]")
    if a["outdir"] is None and not a["repeat"]:
        raise Fail(EXIT_USAGE, "--outdir DIR is required (unless --repeat)")
    return a


def load_modules():
    try:
        import numpy as np
    except ImportError as e:
        raise Fail(EXIT_MISSING, f"NumPy is missing (Debian python3-numpy): {e}")
    # pyarmnn prints a notice per parser it was built without; keep stdout clean.
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            import pyarmnn as ann
    except ImportError as e:
        raise Fail(EXIT_MISSING, f"pyarmnn is missing (Debian python3-pyarmnn, "
                   f"libarmnntfliteparser22, libarmnn-cpuref-backend22): {e}")
    if not hasattr(ann, "ITfLiteParser"):
        raise Fail(EXIT_MISSING, "pyarmnn has no TFLite parser (Debian libarmnntfliteparser22)")
    return np, ann


def bind_inputs(names, inputs, optional):
    """NAME= inputs go to that input; the others fill the rest in order."""
    bound = [None] * len(names)
    for name, file in inputs:
        if name is None:
            continue
        if name not in names:
            raise Fail(EXIT_USAGE, f"the model has no input named {name} (inputs: {', '.join(names)})")
        i = names.index(name)
        if bound[i]:
            raise Fail(EXIT_USAGE, f"input {name} given twice")
        bound[i] = file
    rest = [f for n, f in inputs if n is None]
    for i in range(len(names)):
        if bound[i] is None and rest:
            bound[i] = rest.pop(0)
    if rest:
        raise Fail(EXIT_USAGE, f"the model has {len(names)} inputs ({', '.join(names)}), {len(inputs)} given")
    missing = [n for n, f in zip(names, bound) if f is None]
    if missing and not (optional and not inputs):
        raise Fail(EXIT_USAGE, f"no value for input {', '.join(missing)}")
    return bound


def write_atomic(path, data):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv):
    if "--jobs" not in argv:
        args = parse_args(argv)
        np, ann = load_modules()
        return run_job(np, ann, ann.IRuntime(ann.CreationOptions()), args)
    j = argv.index("--jobs")
    if j + 1 >= len(argv) or len(argv) != 2:
        raise Fail(EXIT_USAGE, "usage: armnn_run.py --jobs FILE")
    try:
        with open(argv[j + 1], encoding="utf-8") as f:
            jobs = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise Fail(EXIT_USAGE, f"{argv[j + 1]}: {e}")
    if any(not isinstance(a, list) or not all(isinstance(x, str) for x in a) for a in jobs):
        raise Fail(EXIT_USAGE, f"{argv[j + 1]}: every line must be a JSON array of strings")
    np, ann = load_modules()
    runtime = ann.IRuntime(ann.CreationOptions())
    for a in jobs:
        args = None
        try:
            args = parse_args(a)
            if not args["outdir"] or args["repeat"]:
                raise Fail(EXIT_USAGE, "a job needs --outdir and no --repeat")
            run_job(np, ann, runtime, args)
        except Exception as e:  # one job's failure is its own (status.json), the batch goes on
            if not args or not args["outdir"]:
                raise
            code = e.code if isinstance(e, Fail) else 1
            os.makedirs(args["outdir"], exist_ok=True)
            write_atomic(os.path.join(args["outdir"], "status.json"),
                         (json.dumps({"status": code, "why": str(e).strip()}) + "\n").encode())
    return 0


def run_job(np, ann, runtime, args):
    """One model run on the given runtime; the network is unloaded after it."""
    dtypes = {  # Arm NN DataType -> NumPy dtype
        ann.DataType_Float32: np.float32,
        ann.DataType_Float16: np.float16,
        ann.DataType_QAsymmU8: np.uint8,
        ann.DataType_QAsymmS8: np.int8,
        ann.DataType_QSymmS8: np.int8,
        ann.DataType_QSymmS16: np.int16,
        ann.DataType_Signed32: np.int32,
        ann.DataType_Boolean: np.bool_,
    }
    if not os.path.isfile(args["model"]):
        raise Fail(EXIT_USAGE, f"{args['model']}: no such file")
    arrays = []
    for name, file in args["inputs"]:
        try:
            arrays.append(np.load(file, allow_pickle=False))
        except (OSError, ValueError) as e:
            raise Fail(EXIT_USAGE, f"{file}: {e}")

    parser = ann.ITfLiteParser()
    t0 = time.perf_counter()
    try:
        net = parser.CreateNetworkFromBinaryFile(args["model"])
        opt, _ = ann.Optimize(net, [ann.BackendId("CpuRef")], runtime.GetDeviceSpec(),
                                     ann.OptimizerOptions())
        net_id, _ = runtime.LoadNetwork(opt)
    except RuntimeError as e:
        raise Fail(EXIT_CANNOT, f"Arm NN cannot load the model: {str(e).strip()}")
    load_ms = (time.perf_counter() - t0) * 1e3
    try:
        return run_loaded(np, ann, runtime, net_id, parser, args, dtypes, arrays, load_ms)
    finally:
        runtime.UnloadNetwork(net_id)


def run_loaded(np, ann, runtime, net_id, parser, args, dtypes, arrays, load_ms):

    in_names = list(parser.GetSubgraphInputTensorNames(0))
    out_names = list(parser.GetSubgraphOutputTensorNames(0))
    in_info = [parser.GetNetworkInputBindingInfo(0, n) for n in in_names]
    out_info = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]
    files = bind_inputs(in_names, args["inputs"], args["repeat"] > 0)
    by_file = {f: arr for (n, f), arr in zip(args["inputs"], arrays)}
    values = []
    for name, (_, info), file in zip(in_names, in_info, files):
        dt = dtypes.get(info.GetDataType())
        if dt is None:
            raise Fail(EXIT_CANNOT, f"input {name}: Arm NN data type {info.GetDataType()} not handled")
        shape = [info.GetShape()[k] for k in range(info.GetNumDimensions())]
        if file is None:  # latency mode without input: zeros
            values.append(np.zeros(shape, dt))
            continue
        x = by_file[file]
        if x.dtype != np.dtype(dt):
            raise Fail(EXIT_USAGE, f"{file}: dtype {x.dtype}, input {name} is {np.dtype(dt)}")
        if list(x.shape) != shape:
            raise Fail(EXIT_USAGE, f"{file}: shape {list(x.shape)}, input {name} is {shape}")
        values.append(np.ascontiguousarray(x))
    for name, (_, info) in zip(out_names, out_info):
        if info.GetDataType() not in dtypes:
            raise Fail(EXIT_CANNOT, f"output {name}: Arm NN data type {info.GetDataType()} not handled")

    in_tensors = ann.make_input_tensors(in_info, values)
    out_tensors = ann.make_output_tensors(out_info)
    times = []
    for _ in range(max(args["repeat"], 1)):
        t1 = time.perf_counter()
        try:
            runtime.EnqueueWorkload(net_id, in_tensors, out_tensors)
        except RuntimeError as e:
            raise Fail(EXIT_CANNOT, f"Arm NN cannot run the model: {str(e).strip()}")
        times.append((time.perf_counter() - t1) * 1e3)
    results = ann.workload_tensors_to_ndarray(out_tensors)

    srt = sorted(times)
    median = srt[len(srt) // 2] if len(srt) % 2 else (srt[len(srt) // 2 - 1] + srt[len(srt) // 2]) / 2
    r3 = lambda x: round(x, 3)
    manifest = {
        "oracle": "armnn-cpuref",
        "version": getattr(ann, "__version__", "?"),
        "model": os.path.abspath(args["model"]),
        "threads": 1,
        "compile_ms": r3(load_ms),
        "runs": len(times),
        "ms": [r3(t) for t in times],
        "min_ms": r3(srt[0]),
        "median_ms": r3(median),
        "inputs": [{"name": n, "file": f} for n, f in zip(in_names, files)],
        "outputs": [],
    }
    if args["outdir"]:
        want = args["outputs"]
        if want:
            missing = [x for x in want if x not in out_names]
            if missing:
                raise Fail(EXIT_CANNOT, f"not an output of the model: {', '.join(missing)} "
                           f"(Arm NN binds only the model's outputs: {', '.join(out_names)})")
        os.makedirs(args["outdir"], exist_ok=True)
        used = set()
        for i, (name, (_, info), res) in enumerate(zip(out_names, out_info, results)):
            if want and name not in want:
                continue
            shape = [info.GetShape()[k] for k in range(info.GetNumDimensions())]
            arr = np.ascontiguousarray(res.astype(dtypes[info.GetDataType()], copy=False).reshape(shape))
            file = sanitize(name)
            if len(file) > 120:  # long fused names
                file = f"{file[:120]}.{i}"
            if file in used:
                file += f".{i}"
            used.add(file)
            file += ".npy"
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            write_atomic(os.path.join(args["outdir"], file), buf.getvalue())
            manifest["outputs"].append({"name": name, "index": i, "file": file, "shape": shape,
                                        "dtype": str(arr.dtype)})
        write_atomic(os.path.join(args["outdir"], "manifest.json"),
                     (json.dumps(manifest, indent=1) + "\n").encode())
    if args["repeat"]:
        print(f"armnn-cpuref {manifest['version']}: {os.path.basename(args['model'])}: {len(times)} runs, "
              f"1 thread: min {manifest['min_ms']} ms, median {manifest['median_ms']} ms")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fail as e:
        print(f"armnn_run: {e}", file=sys.stderr)
        sys.exit(e.code)
