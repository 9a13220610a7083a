#!/bin/sh
# Oracles for `npukit mgk export`: ONNX's checker with full shape inference
# (Debian python3-onnx) and weights read back against `mgk extract`
# (tests/mgk/onnx/check_onnx.py), and ONNX Runtime running the models
# (npm onnxruntime-web under Node, installed into the build tree from
# tests/mgk/onnx/package-lock.json). On the vendor fixture and on synthetic
# files. A missing oracle fails under CI=true and skips visibly elsewhere.
set -eu
npk=${NPK_CLI:?}
py=/usr/bin/python3
src=${NPK_SOURCE_DIR:?}
build=${NPK_BUILD_DIR:?}
fixdir=${NPUKIT_FIXTURES:-${NPK_FIXTURES_DEFAULT:-}}
fix="$fixdir/mgk/AEC_T41_16K_NS_OUT_UC.mgk"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
    [ "${CI:-}" != true ] || fail "$* (required under CI)"
    echo "SKIPPED: $*"
    exit 0
}

"$npk" --version | grep -q 'features:.* onnx' || skip "this build has no ONNX export (libprotobuf-c)"
"$npk" --version | grep -q 'features:.*json' || skip "this build has no safetensors (libcjson)"
"$py" -c 'import onnx, numpy' 2>/dev/null || skip "python3-onnx / python3-numpy not installed"
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm not installed"
ort="$build/tests/mgk/onnx"
if [ ! -f "$ort/node_modules/onnxruntime-web/package.json" ]; then
    mkdir -p "$ort"
    cp "$src/tests/mgk/onnx/package.json" "$src/tests/mgk/onnx/package-lock.json" "$ort/"
    (cd "$ort" && npm ci --ignore-scripts --no-audit --no-fund >"$ort/npm.log" 2>&1) ||
        skip "npm ci of onnxruntime-web failed (see $ort/npm.log)"
fi
cp "$src/tests/mgk/onnx/run_ort.mjs" "$ort/"
export PYTHONPATH="$src/tests/mgk/onnx"

# export MODEL NAME [OUTPUT=DIMS]... : float + qdq, checker, weights, ORT.
check_model() {
    m=$1 name=$2
    shift 2
    "$npk" mgk export "$m" -o "$tmp/$name.onnx"
    "$npk" mgk export --qdq "$m" -o "$tmp/$name.q.onnx"
    "$npk" mgk extract "$m" -o "$tmp/$name.safetensors"
    "$py" "$src/tests/mgk/onnx/check_onnx.py" "$tmp/$name.onnx" "$tmp/$name.q.onnx" \
        "$tmp/$name.safetensors" "$@" || fail "$name: ONNX checker / weights"
}
run_ort() { # MODEL [--mask OUTPUT]
    node "$ort/run_ort.mjs" "$@" >"$tmp/ort.json" || { cat "$tmp/ort.json"; fail "ONNX Runtime on $1"; }
    cat "$tmp/ort.json"
}

# ---- synthetic files: every bit width, strides, kernels, lane groups ----
"$npk" mgk synth --layer 16,40,3,3,8 --layer 40,8,1,5,4 --layer 8,70,3,1,6 --layer 70,5,1,1,2 \
    --size 6x10 --seed 5 -o "$tmp/s1.mgk"
check_model "$tmp/s1.mgk" s1 layer_3_QuantizeFeature=1,6,10,5
run_ort "$tmp/s1.onnx"
run_ort "$tmp/s1.q.onnx"
grep -q '"layer_3_QuantizeFeature":{"dims":\[1,6,10,5\]' "$tmp/ort.json" || fail "synthetic output shape"
# The export's arithmetic against an independent integer reference of the
# same layers (from extract, info and graph): the --qdq model rounds like
# the device (at most 1 code apart), the float one does not round between
# layers (at most 2 codes apart).
"$npk" mgk info --json "$tmp/s1.mgk" >"$tmp/s1.info.json"
"$npk" mgk graph --json "$tmp/s1.mgk" >"$tmp/s1.graph.json"
ref="$src/tests/mgk/onnx/int_reference.py"
"$py" "$ref" prepare "$tmp/s1.graph.json" "$tmp/s1.info.json" "$tmp/s1.safetensors" \
    "$tmp/in.json" "$tmp/expect.json"
run_ort "$tmp/s1.q.onnx" --inputs "$tmp/in.json" --dump "$tmp/out.json" >/dev/null
"$py" "$ref" compare "$tmp/expect.json" "$tmp/out.json" "$tmp/s1.graph.json" 1 || fail "qdq arithmetic"
run_ort "$tmp/s1.onnx" --inputs "$tmp/in.json" --dump "$tmp/out.json" >/dev/null
"$py" "$ref" compare "$tmp/expect.json" "$tmp/out.json" "$tmp/s1.graph.json" 2 || fail "float arithmetic"
# Records of unknown semantics: refused, or custom-domain nodes on request.
"$npk" mgk synth --layer 8,8,1,1,8 --extra-records -o "$tmp/s2.mgk"
set +e
"$npk" mgk export "$tmp/s2.mgk" -o "$tmp/s2.onnx" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unknown record: exit $rc"
grep -q 'record #2 (unknown): semantics not established.*--allow-unknown' "$tmp/err" || fail "refusal: $(cat "$tmp/err")"
[ ! -e "$tmp/s2.onnx" ] || fail "output written on refusal"
"$npk" mgk export --allow-unknown "$tmp/s2.mgk" -o "$tmp/s2.onnx"
"$py" - "$tmp/s2.onnx" <<'PY'
import onnx, sys
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
custom = [n for n in m.graph.node if n.domain == "ai.npukit.mgk"]
assert len(custom) == 1 and custom[0].op_type == "Synthetic" and custom[0].name == "record_2", custom
assert any(o.domain == "ai.npukit.mgk" for o in m.opset_import)
PY

# ---- the vendor file ----
if [ ! -f "$fix" ]; then
    [ "${CI:-}" != true ] || fail "fixture $fix missing (required under CI)"
    echo "SKIPPED: fixture $fix not found"
    exit 0
fi
check_model "$fix" aec onnx__Sigmoid_521_last_layer=1,1,256,2 layer_37_QuantizeGRU_out1=64,1,1,32
for f in "$tmp/aec.onnx" "$tmp/aec.q.onnx"; do
    run_ort "$f" --mask onnx__Sigmoid_521_last_layer
    grep -q '"onnx__Sigmoid_521_last_layer":{"dims":\[1,1,256,2\]' "$tmp/ort.json" || fail "AEC output shape"
done
# Every convolution (float, two-slope, packed and five-row requantisation),
# Add and Normalize cut out of the exported models and run on random codes,
# against an independent integer reference of the documented arithmetic.
"$npk" mgk info --json --records "$fix" >"$tmp/aec.info.json"
"$npk" mgk graph --json "$fix" >"$tmp/aec.graph.json"
lref="$src/tests/mgk/onnx/layer_reference.py"
for v in q float; do
    m="$tmp/aec.q.onnx"
    [ "$v" = float ] && m="$tmp/aec.onnx"
    d="$tmp/layers.$v"
    "$py" "$lref" prepare "$d" "$m" "$tmp/aec.graph.json" "$tmp/aec.info.json" \
        "$tmp/aec.safetensors" "$fix" || fail "layer reference ($v)"
    for k in $(cat "$d/list"); do
        node "$ort/run_ort.mjs" "$d/$k.onnx" --inputs "$d/$k.in.json" --dump "$d/$k.out.json" \
            >/dev/null || fail "ONNX Runtime on record $k ($v)"
    done
    "$py" "$lref" compare "$d" 1 || fail "layer arithmetic ($v)"
done
echo "mgk ONNX oracles: ok"
