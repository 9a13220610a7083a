#!/bin/sh
# CLI tests of `npukit mgk`: info (text and JSON), extract -> replace round
# trips, changed weights, error messages and exit codes, atomic outputs.
# Uses a synthetic file always and the vendor fixture when present.
set -eu
npk=${NPK_CLI:?}
py=${NPK_PYTHON:-/usr/bin/python3}
fixdir=${NPUKIT_FIXTURES:-${NPK_FIXTURES_DEFAULT:-}}
fix="$fixdir/mgk/AEC_T41_16K_NS_OUT_UC.mgk"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Run a command that must fail with exit 2 and a one-line "npukit: " error.
expect2() {
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "exit $rc (want 2): $*"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "not one line: $*"; }
    grep -q '^npukit: ' "$tmp/err" || fail "no npukit: prefix: $*"
}

# Rewrite one int8 value of a tensor in a safetensors file (no numpy needed).
st_set() { # IN OUT NAME INDEX VALUE
    "$py" - "$@" <<'EOF'
import json, struct, sys
src, dst, name, idx, val = sys.argv[1:6]
b = bytearray(open(src, "rb").read())
n = struct.unpack_from("<Q", b, 0)[0]
h = json.loads(b[8:8 + n])
t = h[name]
assert t["dtype"] == "I8"
b[8 + n + t["data_offsets"][0] + int(idx)] = int(val) & 0xFF
open(dst, "wb").write(b)
EOF
}
st_get() { # FILE NAME INDEX
    "$py" - "$@" <<'EOF'
import json, struct, sys
src, name, idx = sys.argv[1:4]
b = open(src, "rb").read()
n = struct.unpack_from("<Q", b, 0)[0]
t = json.loads(b[8:8 + n])[name]
print(struct.unpack_from("<b", b, 8 + n + t["data_offsets"][0] + int(idx))[0])
EOF
}

# Builds without libcjson (e.g. the cross builds) have no --json and no safetensors.
json=0
"$npk" --version | grep -q 'features:.*json' && json=1

# ---- synthetic file ----
"$npk" mgk synth --layer 24,40,3,3,4 --layer 40,6,1,5,8 --extra-records --garbage --seed 3 -o "$tmp/s.mgk"
"$npk" info "$tmp/s.mgk" >"$tmp/info.txt"
grep -q 'conv_records: 2' "$tmp/info.txt" || fail "npukit info conv_records"
grep -q 'weight_bits: 4,8' "$tmp/info.txt" || fail "npukit info weight_bits"
grep -q 'versions: 0.0.0 npukit-synth' "$tmp/info.txt" || fail "npukit info versions"
"$npk" mgk info "$tmp/s.mgk" >"$tmp/minfo.txt"
grep -q 'unknown kind: skipped' "$tmp/minfo.txt" || fail "unknown record not reported"
"$npk" mgk layer "$tmp/s.mgk" 1 --weights >"$tmp/layer.txt"
grep -q 'requant form: float' "$tmp/layer.txt" || fail "mgk layer requant form"
expect2 "$npk" mgk layer "$tmp/s.mgk" 0
expect2 "$npk" mgk info
head -c 4000 "$tmp/s.mgk" >"$tmp/trunc.mgk"
expect2 "$npk" mgk info "$tmp/trunc.mgk"
size=$(wc -c <"$tmp/s.mgk")
head -c $((size - 80)) "$tmp/s.mgk" >"$tmp/cut.mgk"
printf 'IMGK\001\001\001\001' >>"$tmp/cut.mgk"
head -c 72 /dev/zero >>"$tmp/cut.mgk"
expect2 "$npk" mgk info "$tmp/cut.mgk"
grep -q 'offset 0x' "$tmp/err" || fail "no offset in: $(cat "$tmp/err")"
# graph: text, DOT, PNG through Graphviz's dot (or a clear error without it).
"$npk" mgk graph "$tmp/s.mgk" >"$tmp/g.txt"
grep -q 'nodes (topological order):' "$tmp/g.txt" || fail "graph text"
grep -q '#3   unknown .*NOT ESTABLISHED' "$tmp/g.txt" || fail "graph: unknown record not flagged"
"$npk" mgk graph --dot "$tmp/s.mgk" >"$tmp/g.dot"
head -1 "$tmp/g.dot" | grep -q '^digraph mgk {' || fail "graph --dot"
grep -q 'r1 -> r2 \[label="\[1,2,8,8,32\] NDHWC32 UINT8' "$tmp/g.dot" || fail "graph --dot edge label"
if command -v dot >/dev/null; then
    "$npk" mgk graph --png "$tmp/g.png" "$tmp/s.mgk"
    [ "$(head -c 4 "$tmp/g.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] || fail "graph --png: not a PNG"
fi
expect2 env PATH=/nonexistent "$npk" mgk graph --png "$tmp/nodot.png" "$tmp/s.mgk"
grep -q "needs Graphviz's .dot. program" "$tmp/err" || fail "no-dot message: $(cat "$tmp/err")"
[ ! -e "$tmp/nodot.png" ] || fail "graph --png wrote a file without dot"
expect2 "$npk" mgk graph --json --dot "$tmp/s.mgk"
expect2 "$npk" mgk graph "$tmp/trunc.mgk"
expect2 "$npk" mgk export "$tmp/s.mgk"
expect2 "$npk" mgk export "$tmp/trunc.mgk" -o "$tmp/t.onnx"
[ ! -e "$tmp/t.onnx" ] || fail "export wrote a file on error"
expect2 "$npk" mgk synth --layer 1,2,3 -o "$tmp/x.mgk"
expect2 "$npk" mgk synth --layer 8,8,1,1,3 -o "$tmp/x.mgk"
[ ! -e "$tmp/x.mgk" ] || fail "synth wrote a file on error"
if [ "$json" = 0 ]; then
    expect2 "$npk" mgk info --json "$tmp/s.mgk"
    expect2 "$npk" mgk extract "$tmp/s.mgk" -o "$tmp/x.safetensors"
    echo "SKIPPED: JSON and safetensors parts (build without libcjson)"
    exit 0
fi
"$npk" mgk info --json --records "$tmp/s.mgk" >"$tmp/s.json"
"$py" - "$tmp/s.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("footer_offset", "weight_region", "sections", "versions", "layers", "unassigned"):
    assert k in j, k
assert [l["bits"] for l in j["layers"]] == [4, 8]
l = j["layers"][0]
for k in ("id", "kernel", "weight_shape", "weight_offset", "requant_offset", "out_channels",
          "in_channels", "kernel_h", "kernel_w", "bits"):
    assert k in l, k
assert (l["out_channels"], l["in_channels"], l["kernel_h"], l["kernel_w"]) == (40, 24, 3, 3)
assert l["weight_shape"] == [2, 1, 3, 3, 2, 32, 32]
assert [u["kind"] for u in j["unknown_records"]] == ["Synthetic"]
assert len(j["record_list"]) == 4 and j["record_list"][0]["kind"] == "FormatConvert"
assert j["versions"] == ["0.0.0", "npukit-synth"]
assert j["warnings"] == []
EOF
"$npk" mgk graph --json "$tmp/s.mgk" >"$tmp/g.json"
"$py" - "$tmp/g.json" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
assert [n["kind"] for n in g["nodes"]] == ["FormatConvert", "Convolution", "Convolution", "unknown"]
assert [n["established"] for n in g["nodes"]] == [True, True, True, False]
t = {x["id"]: x for x in g["tensors"]}
assert g["inputs"] == [0] and t[0]["format"] == "NHWC" and t[0]["shape"] == [1, 8, 8, 24]
assert t[2]["logical_shape"] == [1, 8, 8, 40] and t[2]["zero_point"] == 133
assert t[2]["scale_source"] == "code units"
assert g["warnings"] == []
EOF
"$npk" mgk extract "$tmp/s.mgk" -o "$tmp/s.safetensors"
"$npk" mgk replace "$tmp/s.mgk" --weights "$tmp/s.safetensors" -o "$tmp/s2.mgk" 2>/dev/null
cmp "$tmp/s.mgk" "$tmp/s2.mgk" || fail "synthetic extract -> replace not identical"

# A value outside the 4-bit range of layer 1: error naming the layer, no output.
st_set "$tmp/s.safetensors" "$tmp/bad.safetensors" layer_1.weight 5 8
expect2 "$npk" mgk replace "$tmp/s.mgk" --weights "$tmp/bad.safetensors" -o "$tmp/bad.mgk"
grep -q 'layer_1.weight: value 8 .* 4-bit range \[-8, 7\] of layer 1' "$tmp/err" || fail "range message: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.mgk" ] || fail "output written on error"
# A value inside the range is re-encoded and reads back.
st_set "$tmp/s.safetensors" "$tmp/ok.safetensors" layer_1.weight 5 -8
"$npk" mgk replace "$tmp/s.mgk" --weights "$tmp/ok.safetensors" -o "$tmp/ok.mgk" 2>/dev/null
"$npk" mgk extract "$tmp/ok.mgk" -o "$tmp/ok2.safetensors"
[ "$(st_get "$tmp/ok2.safetensors" layer_1.weight 5)" = -8 ] || fail "changed weight did not read back"

# Never over an input; bad inputs and usage give exit 2 and one line.
cp "$tmp/s.mgk" "$tmp/keep.mgk"
expect2 "$npk" mgk replace "$tmp/s.mgk" --weights "$tmp/s.safetensors" -o "$tmp/s.mgk"
cmp "$tmp/s.mgk" "$tmp/keep.mgk" || fail "input was overwritten"
expect2 "$npk" mgk replace "$tmp/s.mgk" --weights "$tmp/s.safetensors" -o "$tmp/s.safetensors"
expect2 "$npk" mgk extract "$tmp/trunc.mgk" -o "$tmp/x.safetensors"
[ ! -e "$tmp/x.safetensors" ] || fail "extract wrote a file on error"

# ---- the vendor file ----
if [ ! -f "$fix" ]; then
    [ "${CI:-}" != true ] || fail "fixture $fix missing (required under CI)"
    echo "SKIPPED: fixture $fix not found"
    exit 0
fi
"$npk" info "$fix" >"$tmp/f.txt"
grep -q 'footer_offset: 0x9ea70' "$tmp/f.txt" || fail "fixture footer"
grep -q 'conv_records: 13' "$tmp/f.txt" || fail "fixture conv count"
grep -q 'versions: 0.5.0 77cfc40 0.2.5.2.ALPHA de83629 8e4be86' "$tmp/f.txt" || fail "fixture versions"
"$npk" mgk info --json "$fix" >"$tmp/f.json"
"$py" - "$tmp/f.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["footer_offset"] == 0x9EA70
assert j["weight_region"] == {"offset": 0x78B94, "size": 0x20900}
assert [(s["name"], s["offset"], s["size"]) for s in j["sections"]] == [
    ("model", 0x99494, 0x5485), (".mlstrtab", 0x9E919, 0x22), (".verstr", 0x9E93B, 0x2D),
    (".version", 0x9E968, 0x70)]
assert j["versions"] == ["0.5.0", "77cfc40", "0.2.5.2.ALPHA", "de83629", "8e4be86"]
assert len(j["layers"]) == 13
l = [x for x in j["layers"] if x["weight_offset"] == 0x12300][0]
assert l["weight_shape"] == [1, 4, 1, 5, 4, 32, 32] and l["requant_offset"] == 0x17300
assert (l["out_channels"], l["in_channels"], l["kernel_h"], l["kernel_w"], l["bits"]) == (2, 128, 1, 5, 8)
assert l["requant_form"] == "float"
assert [(u["offset"], u["size"]) for u in j["unassigned"]] == [
    (0x500, 512), (0x38A0, 32), (0x38E0, 32), (0xF408, 56), (0x11CC4, 60), (0x20880, 128)]
assert all(u["all_zero"] and u["why"] for u in j["unassigned"])
assert [(g["id"], g["directions"], g["weight_offset"], g["table_offset"]) for g in j["grus"]] == [
    (19, 2, 0xB780, 0xE780), (34, 1, 0xFE40, 0x11640)]
assert j["unknown_records"] == [] and j["warnings"] == []
EOF
"$npk" mgk graph --json "$fix" >"$tmp/fg.json"
"$py" - "$tmp/fg.json" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
assert len(g["nodes"]) == 62 and all(n["established"] for n in g["nodes"])
ops = sorted(set(n["op"] for n in g["nodes"]))
assert ops == ["Add", "Concat", "Conv", "Conv+PRelu", "Gru", "Identity", "Mul+Add", "Reshape",
               "Resize", "Transpose"], ops
t = {x["id"]: x for x in g["tensors"]}
assert t[81]["name"] == "onnx__Sigmoid_521_last_layer" and t[81]["shape"] == [1, 1, 256, 2]
assert len(g["inputs"]) == 12 and len(g["outputs"]) == 11 and g["warnings"] == []
EOF
"$npk" mgk extract "$fix" -o "$tmp/f.safetensors"
"$npk" mgk replace "$fix" --weights "$tmp/f.safetensors" -o "$tmp/f2.mgk" 2>/dev/null
cmp "$fix" "$tmp/f2.mgk" || fail "fixture extract -> replace not identical"
# Change w[0][0][0][0] of the 1x5 layer (id 55): only bytes of its weights move.
st_set "$tmp/f.safetensors" "$tmp/f3.safetensors" layer_55.weight 0 -77
"$npk" mgk replace "$fix" --weights "$tmp/f3.safetensors" -o "$tmp/f3.mgk" 2>/dev/null
lo=$((0x78B94 + 0x12300 + 1)); hi=$((lo + 20480)) # cmp -l counts from 1
cmp -l "$fix" "$tmp/f3.mgk" >"$tmp/diff" || true
[ -s "$tmp/diff" ] || fail "nothing changed"
while read -r at a b; do
    [ "$at" -ge "$lo" ] && [ "$at" -lt "$hi" ] || fail "byte $at outside the layer changed"
done <"$tmp/diff"
"$npk" mgk extract "$tmp/f3.mgk" -o "$tmp/f4.safetensors"
[ "$(st_get "$tmp/f4.safetensors" layer_55.weight 0)" = -77 ] || fail "fixture change did not read back"
[ "$(st_get "$tmp/f4.safetensors" layer_55.weight 1)" = "$(st_get "$tmp/f.safetensors" layer_55.weight 1)" ] || fail "neighbour changed"
echo "mgk CLI: ok"
