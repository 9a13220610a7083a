#!/bin/sh
# CLI tests of `npukit rknpu compile` and `npukit rknpu run` on whole models:
# the compiled files checked by an independent Python reader (segments cover
# every operator in order, sizes of the files, task and submit records, live
# device buffers never overlapping), refusals (exit 2, one line naming the
# operator or tensor, nothing written), and a run on the emulator with
# --check against the interpreter.
set -eu
npk=${NPK_CLI:?}
py=${NPK_PYTHON:-python3}
fix=${NPUKIT_FIXTURES:-${NPK_FIXTURES_DEFAULT:-}}
model="$fix/models/mobilenet_v1_0.5_160_quant.tflite"
cat="$fix/models/cat.bmp"
if [ ! -f "$model" ] || [ ! -f "$cat" ]; then
    [ "${CI:-}" = true ] && { echo "FAIL: fixture $model missing" >&2; exit 1; }
    echo "SKIPPED: fixture $model missing"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$NPK_SOURCE_DIR/tests/common/expect.sh"

json=0
if "$npk" rknpu plan -m 4 -k 32 -n 16 --json >/dev/null 2>&1; then json=1; fi

expect 0 "$npk" rknpu compile "$model" --cores 2 -o "$tmp/c"
grep -q "31 operators: 29 on the NPU" "$tmp/out" || fail "compile summary: $(cat "$tmp/out")"
grep -q "estimated NPU time" "$tmp/out" || fail "no time estimate: $(cat "$tmp/out")"
grep -q "per core busy: core 0 .*, core 1 " "$tmp/out" || fail "no per-core estimate: $(cat "$tmp/out")"
grep -q "submits (operators: tasks per core): 0: 1+2, 1-2: 2+2, 3-4: 2+2, 5-27: 23, 28: 2+2" "$tmp/out" ||
    fail "submits: $(cat "$tmp/out")"
for f in regcmd.bin tasks.bin submit.bin weights.bin; do
    [ -s "$tmp/c/$f" ] || fail "compile: $f missing"
done
expect 0 "$npk" rknpu disasm "$tmp/c/regcmd.bin"
if grep -q '!!' "$tmp/out"; then fail "disasm flags an entry of regcmd.bin"; fi
if [ "$json" = 1 ]; then
    "$py" - "$tmp/c" <<'EOF' || fail "plan.json"
import json, struct, sys, os
d = sys.argv[1]
p = json.load(open(os.path.join(d, "plan.json")))
reg = open(os.path.join(d, "regcmd.bin"), "rb").read()
tasks = open(os.path.join(d, "tasks.bin"), "rb").read()
subs = open(os.path.join(d, "submit.bin"), "rb").read()
wts = open(os.path.join(d, "weights.bin"), "rb").read()
r = p["regions"]
assert r["regcmd"]["bytes"] == len(reg) and r["weights"]["bytes"] == len(wts)
# Segments: every operator once, in order.
ops = [o["op"] for s in p["segments"] for o in s["ops"]]
assert ops == list(range(31)), ops
assert [s["on"] for s in p["segments"]] == ["npu", "cpu"]
assert [o["code"] for o in p["cpu_ops"]] == ["SOFTMAX"]
layers = p["npu_ops"]
# Two cores: consecutive layers share a submit where no core reads or writes what the
# other writes in it (runs on one core; a 1x1 convolution split at the rows of the
# layer before it): 5 submits (operators 0, 1-2, 3-4, 5-27, 28).
assert len(layers) == 29 and len(subs) == 104 * p["submits"] and p["submits"] == 5
assert len(p["submit_list"]) == 5
groups = {}
for o in layers:
    groups.setdefault(o["submit"], []).append(o)
assert sorted(groups) == list(range(p["submits"]))
for si, g in groups.items():
    task_start, task_number = struct.unpack_from("<II", subs, 104 * si + 8)
    (core_mask,) = struct.unpack_from("<I", subs, 104 * si + 56)
    sl = p["submit_list"][si]
    assert sl["layers"] == len(g) and layers[sl["first_layer"]] is g[0], si
    assert task_number == sum(len(o["tasks"]) for o in g) == sl["records"], (si, task_number)
    assert task_start == sl["first_record"] == g[0]["tasks"][0]["index"]
    # Each core's tasks of every layer in the submit: its range of records, in layer order.
    assert core_mask == (1 << len(sl["cores"])) - 1, (si, core_mask)
    for c, cr in enumerate(sl["cores"]):
        idx = [t["index"] for o in g for t in o["tasks"] if t["core"] == c]
        assert idx == list(range(cr["first_record"], cr["first_record"] + cr["records"])), (si, c)
        # The driver's slot for the core: subcore_task[core], or [core + 2] with three cores.
        slot = c + 2 if core_mask == 7 else c
        assert struct.unpack_from("<II", subs, 104 * si + 64 + 8 * slot) == (cr["first_record"], cr["records"]), (si, c)
assert [(s["layers"], len(s["cores"])) for s in p["submit_list"]] == [(1, 2), (2, 2), (2, 2), (23, 1), (1, 2)]
n = 0
act0, act_n = int(r["activations"]["addr"], 16), r["activations"]["bytes"]
bufs = {}
seen = set()
for i, o in enumerate(layers):
    for t in o["tasks"]:
        k = t["index"]
        seen.add(k)
        rec = tasks[40 * k: 40 * k + 40]
        amount, addr = struct.unpack_from("<I4xQ", rec, 24)
        assert addr == int(t["regcmd"], 16) and amount == t["entries"] - 4
        assert t["estimate_us"] > 0
        n += 1
    for k in ("input", "input2", "output"):
        if k in o:
            b = o[k]
            a = int(b["addr"], 16)
            assert act0 <= a and a + b["bytes"] <= act0 + act_n
            bufs[b.get("shares", b["tensor"])] = (a, b["bytes"], b["alive"])
assert n * 40 == len(tasks)
assert seen == set(range(n))
# The linear logits layer runs in two sign passes; its scratch lies inside its output's bytes.
two = [o for o in layers if "sign_scratch" in o]
assert [o["op"] for o in two] == [28], [o["op"] for o in two]
for o in two:
    a, b = int(o["sign_scratch"]["addr"], 16), o["sign_scratch"]["bytes"]
    oa = int(o["output"]["addr"], 16)
    assert oa < a and a + b <= oa + o["output"]["bytes"], (o["sign_scratch"], o["output"])
# Device buffers alive at the same operator never share a byte.
items = list(bufs.items())
for i, (t, (a, la, (f, l))) in enumerate(items):
    for u, (c, lc, (g, m)) in items[i + 1:]:
        if f <= m and g <= l:
            assert a + la <= c or c + lc <= a, (t, u)
EOF
fi

# One core: the NPU segment's 29 layers chained into one submit (the linear logits layer
# in two sign passes; --requant exact1: one).
expect 0 "$npk" rknpu compile "$model" -o "$tmp/one"
grep -q "36 tasks, 1 submits, 1 core" "$tmp/out" || fail "one core: $(cat "$tmp/out")"
expect 0 "$npk" rknpu compile "$model" -o "$tmp/one1" --requant exact1
grep -q "34 tasks, 1 submits, 1 core" "$tmp/out" || fail "exact1: $(cat "$tmp/out")"
expect 2 "$npk" rknpu compile "$model" -o "$tmp/bad" --requant exact2
[ ! -e "$tmp/bad" ] || fail "--requant exact2 wrote $tmp/bad"
[ "$(wc -c <"$tmp/one/submit.bin")" = 104 ] || fail "one core: submit.bin"
expect 0 "$npk" rknpu disasm "$tmp/one/regcmd.bin"
if grep -q '!!' "$tmp/out"; then fail "disasm flags an entry of the chained regcmd.bin"; fi

# Refusals: an operator neither side runs, a bad input: exit 2, one line, nothing written.
edgetpu="$fix/models/mobilenet_v1_0.5_160_quant_edgetpu.tflite"
if [ -f "$edgetpu" ]; then
    expect 2 "$npk" rknpu compile "$edgetpu" -o "$tmp/bad"
    grep -q "operator 0 (edgetpu-custom-op): neither the NPU nor the interpreter" "$tmp/err" ||
        fail "refusal: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "refusal is one line"
    [ ! -e "$tmp/bad" ] || fail "a refused compile wrote $tmp/bad"
fi
expect 0 "$npk" tensor random --shape 1,160,160,3 --dtype u8 --min 0 --max 255 --seed 3 -o "$tmp/x.npy"
expect 0 "$npk" tensor random --shape 1,16,16,3 --dtype u8 --min 0 --max 255 --seed 3 -o "$tmp/small.npy"
expect 2 "$npk" rknpu run "$model" --input "$tmp/small.npy" -o "$tmp/z.npy"
grep -q 'input "input" must be UINT8 \[1, 160, 160, 3\], the file holds' "$tmp/err" ||
    fail "shape refusal: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "refusal is one line"
[ ! -e "$tmp/z.npy" ] || fail "a refused run wrote its output"
expect 2 "$npk" rknpu run "$model" --input nosuch=x.npy -o "$tmp/z.npy"
[ ! -e "$tmp/z.npy" ] || fail "a refused run wrote its output"

. "$NPK_SOURCE_DIR/tests/common/features.sh"
need_feature bmp

# Runs on the emulator, checked against the interpreter.
expect 0 "$npk" rknpu run "$model" --image "$cat" -o "$tmp/y.npy" --check --cores 3
grep -q 'top-1 [0-9]*, interpreter [0-9]*: equal' "$tmp/out" || fail "run --check: $(cat "$tmp/out")"
expect 0 "$npk" tensor info "$tmp/y.npy"
grep -q "1, 1001" "$tmp/out" || fail "output shape: $(cat "$tmp/out")"
expect 0 "$npk" rknpu run "$model" --input input="$tmp/x.npy" -o "$tmp/y2.npy" --check --repeat 2
grep -q "median" "$tmp/out" || fail "repeat: $(cat "$tmp/out")"
grep -q "top-1" "$tmp/out" || fail "run --check: $(cat "$tmp/out")"
# Several outputs: a directory of .npy files named after the tensors (PoseNet:
# the picture through a free QUANTIZE and a folded PAD, the decoder on the CPU).
pose="$fix/models/posenet_mobilenet_v1_075_481_641_16_quant_decoder.tflite"
if [ -f "$pose" ]; then
    expect 0 "$npk" rknpu run "$pose" --image "$cat" -o "$tmp/poses" --check
    for f in poses.npy poses_1.npy poses_2.npy poses_3.npy; do
        [ -s "$tmp/poses/$f" ] || fail "posenet: $f missing"
    done
    grep -q 'check "poses": 680 elements, 680 exact' "$tmp/out" || fail "posenet: $(cat "$tmp/out")"
fi
echo "ok"
