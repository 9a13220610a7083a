#!/bin/sh
# The npukit edgetpu commands end to end: info (text and JSON), weights,
# set-weights (byte-identical round trip, float weights), matmul, synth-dense,
# and clean failures (exit 2, one-line error with an offset, no output file).
set -eu
npk=${NPK_CLI:?}
py=${NPK_PYTHON:-/usr/bin/python3}
fx=${NPUKIT_FIXTURES:-${NPK_FIXTURES_DEFAULT:?}}/edgetpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- synthetic model: needs no fixtures
"$npk" edgetpu synth-dense --size 128 -o "$tmp/s.tflite"
"$npk" info "$tmp/s.tflite" > "$tmp/info.txt"
grep -q "TFLite model with an Edge TPU custom op" "$tmp/info.txt" || fail "info title"
grep -q "dense_template_size: 128" "$tmp/info.txt" || fail "info dense size"
grep -q "synthetic: yes" "$tmp/info.txt" || fail "info synthetic flag"
"$npk" edgetpu weights "$tmp/s.tflite" -o "$tmp/sw.npy"
"$npk" edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/sw.npy" -o "$tmp/s2.tflite"
cmp "$tmp/s.tflite" "$tmp/s2.tflite" || fail "synthetic set-weights round trip"
# Float weights: float16, float32 and float64 are accepted (float64 holds the
# float32 values exactly: same file); other dtypes are refused, naming these.
"$npk" edgetpu weights "$tmp/s.tflite" --float -o "$tmp/swf.npy"
"$npk" tensor convert "$tmp/swf.npy" --dtype f64 -o "$tmp/swd.npy"
"$npk" edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/swd.npy" -o "$tmp/s3.tflite"
cmp "$tmp/s.tflite" "$tmp/s3.tflite" || fail "float64 set-weights round trip"
"$npk" tensor convert "$tmp/swf.npy" --dtype f16 -o "$tmp/swh.npy"
"$npk" edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/swh.npy" -o "$tmp/s4.tflite"
"$npk" tensor convert "$tmp/swf.npy" --dtype i32 -o "$tmp/swi.npy"
set +e
"$npk" edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/swi.npy" -o "$tmp/s5.tflite" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "i32 weights exit $rc"
grep -q "weights are i32: int8 (used as is) or float16, float32 or float64" "$tmp/err" ||
    fail "accepted dtypes not named: $(cat "$tmp/err")"
"$npk" edgetpu set-weights --help 2>&1 | grep -q "float16," || fail "help: accepted dtypes"

# --- usage errors: exit 2
set +e
"$npk" edgetpu synth-dense --size 100 -o "$tmp/bad.tflite" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "bad size exit $rc"
[ ! -e "$tmp/bad.tflite" ] || fail "output written on error"

# --- malformed input: exit 2, one line with file and offset, no output
head -c 5000 "$tmp/s.tflite" > "$tmp/cut.tflite"
set +e
"$npk" edgetpu weights "$tmp/cut.tflite" -o "$tmp/never.npy" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "truncated model exit $rc"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "error is not one line: $(cat "$tmp/err")"
grep -q "^npukit: $tmp/cut.tflite: offset 0x" "$tmp/err" || fail "error format: $(cat "$tmp/err")"
[ ! -e "$tmp/never.npy" ] || fail "output written for a malformed model"
set +e
"$npk" edgetpu info "$tmp/cut.tflite" >/dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "info on a truncated model exit $rc"

if [ ! -f "$fx/dense_256_edgetpu.tflite" ]; then
    [ "${CI:-}" = true ] && fail "fixtures missing under CI"
    echo "SKIPPED: fixture tests (no $fx)"
    exit 0
fi

# --- info --json: the documented keys and the reference's facts (JSON builds only)
if "$npk" edgetpu info --json "$fx/dense_256_edgetpu.tflite" > "$tmp/d.json" 2>"$tmp/err"; then
"$py" - "$tmp/d.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ex = j["executables"]
assert [e["type"] for e in ex] == ["EXECUTION_ONLY", "PARAMETER_CACHING"], ex
assert ex[0]["token"] == ex[1]["token"] == "0xfce222d70d502fb8"
assert ex[1]["parameters_size"] == 67584 and ex[0]["parameters_size"] == 0
assert ex[0]["scratch_size"] == 0 and ex[0]["name"] == "model"
bs = ex[0]["bitstreams"][0]
assert bs["size"] == 4224
assert [f["offset_bit"] for f in bs["field_offsets"]] == [582, 710, 838, 966, 1862, 1990, 25414, 25542]
f4 = bs["field_offsets"][4]
assert f4["desc"] == "BASE_ADDRESS_INPUT_ACTIVATION" and f4["position"] == "UPPER_32BIT"
assert f4["name"] == "serving_default_keras_tensor:0" and f4["batch"] == 0
assert [h["kind"] for h in ex[0]["dma_hints"]] == ["INSTRUCTION", "DMA_DESCRIPTOR", "DMA_DESCRIPTOR", "INTERRUPT"]
assert ex[0]["dma_hints"][2]["direction"] == "OUTFEED" and ex[0]["dma_hints"][2]["size"] == 256
il, ol = ex[0]["input_layers"][0], ex[0]["output_layers"][0]
assert il["size_bytes"] == 256 and il["numerics"]["zero_point"] == 127
assert ol["numerics"]["zero_point"] == 129 and ol["data_type"] == "FIXED_POINT8"
assert ol["shape"] == [[0, 0], [0, 255]]
assert [t["name"] for t in j["tensors"]] == ["serving_default_keras_tensor:0", "StatefulPartitionedCall_1:0"]
assert j["tensors"][0]["quantization"]["zero_point"] == [127]
assert j["operators"][0]["op"] == "edgetpu-custom-op" and j["operators"][0]["opcode_index"] == 0
op = j["edgetpu_ops"][0]
assert op["chips"] == [18] and op["execution_preference"] == -1
assert op["packages"][0]["compiler_version"] == "cl/" and op["packages"][0]["min_runtime_version"] == 14
EOF
"$npk" edgetpu info --json "$fx/split_concat_edgetpu.tflite" > "$tmp/s.json"
"$py" - "$tmp/s.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
eo = j["executables"][0]
outs = [h["name"] for h in eo["dma_hints"] if h["kind"] == "DMA_DESCRIPTOR" and h["direction"] == "OUTFEED"]
assert outs == ["outputs/rnn1", "concat/split2", "concat/split0", "concat/split4", "outputs/rnn2"], outs
assert [l["name"] for l in eo["output_layers"]][0] == "concat/split0"
assert "output_layout" in eo["output_layers"][0]
assert j["operator_codes"][0]["deprecated_builtin_code"] == 32 and j["operator_codes"][0]["builtin_code"] == 32
EOF
else
    grep -q "no JSON support" "$tmp/err" || fail "info --json: $(cat "$tmp/err")"
    echo "NOTE: no JSON support in this build: --json checks left out"
fi
"$npk" edgetpu info "$fx/keras_lstm_mnist_ptq_edgetpu.tflite" | grep -q "parameters 576 bytes" || fail "lstm EO params"

# --- weights: the CPU model's buffer 2; set-weights identity (int8 and float)
"$npk" edgetpu weights "$fx/dense_256_edgetpu.tflite" -o "$tmp/w.npy"
"$npk" edgetpu weights --float "$fx/dense_256_edgetpu.tflite" -o "$tmp/wf.npy"
"$npk" edgetpu set-weights "$fx/dense_256_edgetpu.tflite" --weights "$tmp/w.npy" -o "$tmp/same.tflite"
cmp "$tmp/same.tflite" "$fx/dense_256_edgetpu.tflite" || fail "int8 set-weights not identical"
"$npk" edgetpu set-weights "$fx/dense_256_edgetpu.tflite" --weights "$tmp/wf.npy" -o "$tmp/samef.tflite"
cmp "$tmp/samef.tflite" "$fx/dense_256_edgetpu.tflite" || fail "float set-weights not identical"
"$py" - "$tmp" "$fx" <<'EOF'
import sys, numpy as np
tmp, fx = sys.argv[1], sys.argv[2]
w = np.load(tmp + "/w.npy"); wf = np.load(tmp + "/wf.npy")
cpu = open(fx + "/dense_256.tflite", "rb").read()
assert w.dtype == np.int8 and w.shape == (256, 256)
assert (w == np.frombuffer(cpu[488:488 + 65536], np.int8).reshape(256, 256)).all()
assert wf.dtype == np.float32
k = np.abs(w[0]).argmax()
assert abs(wf[0, k] / w[0, k] - 8.4924e-4) < 1e-7
# new weights: a scaled identity, float, for the next steps
np.save(tmp + "/eye.npy", (np.eye(256) * 0.1).astype(np.float32))
x = np.random.default_rng(3).uniform(-0.9, 0.9, (5, 256)).astype(np.float32)
np.save(tmp + "/x.npy", x)
EOF
"$npk" edgetpu set-weights "$fx/dense_256_edgetpu.tflite" --weights "$tmp/eye.npy" -o "$tmp/eye.tflite"
cmp -l "$tmp/eye.tflite" "$fx/dense_256_edgetpu.tflite" | awk '$1 <= 12584 || $1 > 12584 + 67584 { bad = 1 } END { exit bad }' \
    || fail "set-weights changed bytes outside the parameter blob"
"$npk" edgetpu matmul "$tmp/eye.tflite" --input "$tmp/x.npy" -o "$tmp/y.npy"
"$npk" edgetpu matmul "$fx/dense_256_edgetpu.tflite" --input "$tmp/x.npy" --weights "$tmp/eye.npy" -o "$tmp/y2.npy"
cmp "$tmp/y.npy" "$tmp/y2.npy" || fail "--weights differs from set-weights"
"$py" - "$tmp" <<'EOF'
import sys, numpy as np
tmp = sys.argv[1]
x = np.load(tmp + "/x.npy"); y = np.load(tmp + "/y.npy")
assert y.shape == (5, 256) and y.dtype == np.float32
err = np.abs(y - 0.1 * x).max()
# bound: half an output step + 0.1 * half an input step + weight rounding
assert err <= 0.0190489 / 2 + 0.1 * 0.00784303 / 2 + 0.1 * 0.005 + 1e-4, err
EOF
# wrong weight shape: a clear error, no output
"$py" -c "import numpy as np; np.save('$tmp/bad.npy', np.zeros((3, 3), np.int8))"
set +e
"$npk" edgetpu set-weights "$fx/dense_256_edgetpu.tflite" --weights "$tmp/bad.npy" -o "$tmp/no.tflite" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "bad weights exit $rc"
grep -q "needs \[256, 256\]" "$tmp/err" || fail "bad weights message: $(cat "$tmp/err")"
[ ! -e "$tmp/no.tflite" ] || fail "output written for bad weights"
# not a Dense template
set +e
"$npk" edgetpu weights "$fx/gabor_64x64_p4_edgetpu.tflite" -o "$tmp/g.npy" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "gabor weights exit $rc"
grep -q "not a Dense template" "$tmp/err" || fail "gabor message"
# never over an input
set +e
"$npk" edgetpu set-weights "$fx/dense_256_edgetpu.tflite" --weights "$tmp/w.npy" -o "$tmp/w.npy" 2>/dev/null; rc=$?
set -e
[ "$rc" = 2 ] || fail "output over an input exit $rc"
echo "edgetpu cli: ok"
