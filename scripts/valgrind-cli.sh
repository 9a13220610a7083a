#!/bin/sh
# Runs the CLI under valgrind memcheck over every fixture, with every
# read-only command that applies to each format, then every command that
# reads a file on files the CLI generates itself, and damaged copies of
# those (error paths).
# Fails on any memcheck error or any leaked block (definite, indirect,
# possible or still reachable).  usage: scripts/valgrind-cli.sh BUILD_DIR
set -eu
build=${1:-build}
npk="$build/npukit"
fx=${NPUKIT_FIXTURES:-$(dirname "$0")/../../shared/data}
if [ ! -d "$fx" ]; then
    if [ "${CI:-}" = true ]; then echo "valgrind: fixtures missing at $fx" >&2; exit 1; fi
    echo "valgrind: SKIPPED (no fixtures at $fx)"; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0
fails=0
vg() {
    runs=$((runs + 1))
    log="$tmp/vg.$runs.log"
    # Exit status 1/2 are fine (bad fixtures are meant to be rejected); 99 is valgrind's.
    set +e
    valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
        --errors-for-leak-kinds=all --log-file="$log" "$npk" "$@" >/dev/null 2>&1
    rc=$?
    set -e
    if [ $rc -eq 99 ] || [ $rc -gt 2 ] || [ -s "$log" ]; then
        echo "valgrind: FAILED (exit $rc): npukit $*" >&2
        cat "$log" >&2
        fails=$((fails + 1))
    fi
}
# The same for a run that must succeed (so the whole path was checked).
vgok() {
    vg "$@"
    if [ $rc -ne 0 ]; then
        echo "valgrind: FAILED: npukit $* exited $rc, expected 0" >&2
        fails=$((fails + 1))
    fi
}

for f in $(find "$fx" -type f | sort); do
    vg info "$f"
    vg info --json "$f"
    fmt=$("$npk" info --json "$f" 2>/dev/null | sed -n 's/.*"format":"\([^"]*\)".*/\1/p')
    case $fmt in
    mgk)
        vg mgk info --json --records --symbols "$f"
        vg mgk extract "$f" -o "$tmp/x.safetensors"
        vg mgk replace "$f" --weights "$tmp/x.safetensors" -o "$tmp/x.mgk"
        vg mgk graph --json "$f"
        if "$npk" --version | grep -q 'features:.* onnx'; then
            vg mgk export "$f" -o "$tmp/x.onnx"
            vg mgk export --qdq "$f" -o "$tmp/xq.onnx"
        fi
        ;;
    tflite)
        vg tflite info --json "$f"
        vg edgetpu info --json "$f"
        vg edgetpu weights "$f" -o "$tmp/w.npy"
        vg rknpu compile "$f" --cores 3 -o "$tmp/rk.$runs" # whole model (or its refusal)
        ;;
    rknpu-stream)
        vg rknpu disasm "$f"
        vg rknpu disasm --json "$f"
        ;;
    cnn2)
        vg cnn2 validate "$f"
        vg cnn2 info --json "$f"
        vg cnn2 unpack "$f" -o "$tmp/c.safetensors"
        ;;
    esac
done
# A whole model on the emulator with its CPU side and --check, and a bad input.
if [ -f "$fx/models/mobilenet_v1_0.5_160_quant.tflite" ] && [ -f "$fx/models/cat.bmp" ]; then
    vgok rknpu run "$fx/models/mobilenet_v1_0.5_160_quant.tflite" --image "$fx/models/cat.bmp" \
        --check --cores 1 -o "$tmp/rk.npy"
    vg rknpu run "$fx/models/mobilenet_v1_0.5_160_quant.tflite" --input "$fx/models/cat.bmp" \
        -o "$tmp/rk2.npy"
fi
# Generators, and every command that reads a file, on the project's own
# files (also the commands that read two inputs).
vgok rknpu matmul -m 64 -k 64 -n 64 -o "$tmp/mm.bin"
vgok rknpu matmul -m 4 -k 64 -n 64 --dtype int8 --format hex -o "$tmp/mm.txt"
vgok rknpu plan -m 512 -k 256 -n 1024 --cores 3 --json -o "$tmp/plan"
vgok rknpu disasm --json "$tmp/mm.txt"
vgok rknpu disasm "$tmp/plan/regcmd.bin"
vgok tensor random --shape 8,16 --dtype f16 -o "$tmp/a.npy"
vgok tensor random --shape 64,32 -o "$tmp/b.npy"
vgok tensor convert a="$tmp/a.npy" b="$tmp/b.npy" -o "$tmp/ab.safetensors"
vgok tensor convert "$tmp/ab.safetensors" --name b --dtype f16 -o "$tmp/b16.npy"
vgok tensor info --json "$tmp/ab.safetensors"
vgok tensor info "$tmp/b16.npy"
vgok rknpu pack --layout feature-fp16 "$tmp/b.npy" -o "$tmp/b.bin"
vgok rknpu unpack --layout feature-fp16 --shape 64,32 "$tmp/b.bin" -o "$tmp/b2.npy"
vgok rknpu pack --layout weight-int8 "$tmp/b.npy" -o "$tmp/w.bin"
vgok mgk synth --layer 16,8,3,3,8 --layer 8,4,1,5,4 --extra-records --garbage -o "$tmp/s.mgk"
vgok mgk info --json --records --symbols "$tmp/s.mgk"
vgok mgk layer "$tmp/s.mgk" 1 --weights --json
vgok mgk extract "$tmp/s.mgk" -o "$tmp/s.safetensors"
vgok mgk replace "$tmp/s.mgk" --weights "$tmp/s.safetensors" -o "$tmp/s2.mgk"
vgok mgk graph --dot "$tmp/s.mgk"
if "$npk" --version | grep -q 'features:.* onnx'; then
    vgok mgk export --allow-unknown "$tmp/s.mgk" -o "$tmp/s.onnx"
fi
# The TFLite interpreter: a fixture that runs, with a dump and threads; a cut.
if [ -f "$fx/edgetpu/gabor_64x64_p4.tflite" ]; then
    vgok tensor random --shape 1,64,64,1 --dtype u8 --min 0 --max 255 -o "$tmp/g.npy"
    vgok tflite run "$fx/edgetpu/gabor_64x64_p4.tflite" --input "$tmp/g.npy" -o "$tmp/g.out.npy" \
        --dump "$tmp/gdump" --threads 2 --repeat 2
    vgok tflite cut "$fx/edgetpu/gabor_64x64_p4.tflite" --outputs 4 -o "$tmp/g.cut.tflite"
fi
vgok edgetpu synth-dense --size 64 -o "$tmp/s.tflite"
vgok edgetpu info "$tmp/s.tflite"
vgok edgetpu weights "$tmp/s.tflite" --float -o "$tmp/wf.npy"
vgok edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/wf.npy" -o "$tmp/s2.tflite"
vgok tensor random --shape 3,64 -o "$tmp/x.npy"
vgok edgetpu matmul "$tmp/s.tflite" --input "$tmp/x.npy" --weights "$tmp/wf.npy" -o "$tmp/y.npy"
vgok tensor random --shape 64 -o "$tmp/x1.npy"
vgok edgetpu run "$tmp/s.tflite" --input "$tmp/x1.npy" --device emu --repeat 2 -o "$tmp/y1.npy"
vgok tensor random --shape 8,64 --dtype f16 -o "$tmp/ra.npy"
vgok tensor random --shape 64,48 --dtype f16 -o "$tmp/rb.npy"
vgok rknpu run-matmul "$tmp/ra.npy" "$tmp/rb.npy" --cores 3 --check -o "$tmp/rc.npy"
vgok cnn2 pattern --size 24x16 --alpha -o "$tmp/in.png"
vgok cnn2 pattern --size 24x16 -o "$tmp/depth.png"
vgok tensor random --shape 4,12,3,3 --min -0.5 --max 0.5 -o "$tmp/l0.npy"
vgok tensor random --shape 4,12,5,5 --min -0.5 --max 0.5 -o "$tmp/l1.npy"
vgok tensor convert layer.0.weight="$tmp/l0.npy" layer.1.weight="$tmp/l1.npy" -o "$tmp/c.safetensors"
vgok cnn2 pack "$tmp/c.safetensors" --mip 1 -o "$tmp/c.bin"
vgok cnn2 render "$tmp/c.bin" "$tmp/in.png" -o "$tmp/out.png" --depth "$tmp/depth.png" \
    --raw "$tmp/raw.npy" --dump-layers "$tmp/layers" --blend 0.5 --threads 2
vgok cnn2 render "$tmp/c.bin" "$tmp/in.png" -o "$tmp/out2.png" --reference --border zero \
    --activation legacy-clamp --precision f32
vgok info "$tmp/c.bin" "$tmp/raw.npy" "$tmp/s.mgk" "$tmp/s.tflite" "$tmp/mm.txt"
# Error paths: damaged copies of the generated files through the same
# readers (cut in half, and the first bytes flipped) must be rejected
# without leaking.
for f in mm.bin mm.txt ab.safetensors b.npy s.mgk s.tflite c.bin in.png; do
    n=$(wc -c <"$tmp/$f")
    head -c $((n / 2)) "$tmp/$f" >"$tmp/cut.$f"
    (printf '\377\377\377\377'; tail -c +5 "$tmp/$f") >"$tmp/flip.$f"
done
for v in cut flip; do
    vg info "$tmp/$v.mm.bin" "$tmp/$v.mm.txt" "$tmp/$v.ab.safetensors" "$tmp/$v.b.npy" \
        "$tmp/$v.s.mgk" "$tmp/$v.s.tflite" "$tmp/$v.c.bin"
    vg rknpu disasm "$tmp/$v.mm.bin"
    vg rknpu disasm "$tmp/$v.mm.txt"
    vg tensor info "$tmp/$v.ab.safetensors"
    vg tensor convert x="$tmp/$v.b.npy" -o "$tmp/bad.safetensors"
    vg rknpu pack --layout feature-fp16 "$tmp/$v.b.npy" -o "$tmp/bad.bin"
    vg mgk info "$tmp/$v.s.mgk"
    vg mgk extract "$tmp/$v.s.mgk" -o "$tmp/bad.safetensors"
    vg mgk replace "$tmp/s.mgk" --weights "$tmp/$v.ab.safetensors" -o "$tmp/bad.mgk"
    vg edgetpu info "$tmp/$v.s.tflite"
    vg edgetpu weights "$tmp/$v.s.tflite" -o "$tmp/bad.npy"
    vg edgetpu matmul "$tmp/s.tflite" --input "$tmp/$v.b.npy" -o "$tmp/bad.npy"
    vg edgetpu run "$tmp/$v.s.tflite" --input "$tmp/x1.npy" --device emu -o "$tmp/bad.npy"
    vg edgetpu run "$tmp/s.tflite" --input "$tmp/$v.b.npy" --device emu -o "$tmp/bad.npy"
    vg rknpu run-matmul "$tmp/$v.b.npy" "$tmp/rb.npy" -o "$tmp/bad.npy"
    vg cnn2 validate "$tmp/$v.c.bin"
    vg cnn2 unpack "$tmp/$v.c.bin" -o "$tmp/bad.safetensors"
    vg cnn2 pack "$tmp/$v.ab.safetensors" -o "$tmp/bad.bin"
    vg cnn2 render "$tmp/$v.c.bin" "$tmp/in.png" -o "$tmp/bad.png"
    vg cnn2 render "$tmp/c.bin" "$tmp/$v.in.png" -o "$tmp/bad.png"
    vg cnn2 render "$tmp/c.bin" "$tmp/in.png" --depth "$tmp/$v.in.png" -o "$tmp/bad.png"
done
# Error paths of every command that are not about damaged bytes: values a
# conversion refuses, shapes a command refuses, outputs that cannot be
# written, and the output rules (each must fail cleanly and leak nothing).
rm -rf "$tmp"/bad.* "$tmp/badplan"
"$npk" tensor random --shape 64,64 --min 0.1 --max 0.9 -o "$tmp/frac.npy"
"$npk" tensor random --shape 64,64 --min 200 --max 300 -o "$tmp/wide.npy"
"$npk" tensor convert layer_0.weight="$tmp/a.npy" -o "$tmp/wrong.safetensors"
"$npk" tensor random --shape 64 -o "$tmp/v1.npy"
"$npk" tensor random --shape 2,4,64 -o "$tmp/v3.npy"
"$npk" tensor random --shape 64,64 --dtype u8 --min 0 --max 200 -o "$tmp/u8.npy"
# A 128-byte .npy of shape (2^63 - 1, 0): header only (it made pack hang).
dict="{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 0), }"
printf '\223NUMPY\001\000\166\000%s' "$dict" >"$tmp/huge.npy"
while [ "$(wc -c <"$tmp/huge.npy")" -lt 127 ]; do printf ' ' >>"$tmp/huge.npy"; done
echo >>"$tmp/huge.npy"
mkdir -p "$tmp/isdir"
vg rknpu pack --layout weight-int8 "$tmp/wide.npy" -o "$tmp/bad.bin"
vg rknpu pack --layout feature-int8 "$tmp/wide.npy" -o "$tmp/bad.bin"
vg rknpu pack --layout feature-fp16 "$tmp/huge.npy" -o "$tmp/bad.bin"
vg rknpu pack --layout weight-fp16 "$tmp/v3.npy" -o "$tmp/bad.bin"
vg rknpu pack --layout feature-fp16 "$tmp/b.npy" -o "$tmp/isdir"
vg rknpu unpack --layout feature-fp16 --shape 64,16 "$tmp/b.bin" -o "$tmp/bad.npy"
vg rknpu run-matmul "$tmp/frac.npy" "$tmp/rb.npy" --dtype int8 -o "$tmp/bad.npy"
vg rknpu run-matmul "$tmp/v1.npy" "$tmp/rb.npy" -o "$tmp/bad.npy"
vg rknpu run-matmul "$tmp/v3.npy" "$tmp/rb.npy" -o "$tmp/bad.npy"
vg rknpu run-matmul "$tmp/ra.npy" "$tmp/ra.npy" -o "$tmp/bad.npy"
vg rknpu run-matmul "$tmp/ra.npy" "$tmp/rb.npy" --device rknpu --device-path "$tmp/none" -o "$tmp/bad.npy"
vg rknpu plan -m 4 -k 4096 -n 65536 -o "$tmp/badplan"
vg rknpu plan -m 64 -k 64 -n 64 -o "$tmp/a.npy"
vg rknpu plan -m 64 -k 64 -n 64 -o -
vg rknpu matmul -m 4 -k 64 -n 16384 -o "$tmp/bad.bin"
vg tensor convert "$tmp/wide.npy" --dtype i8 -o "$tmp/bad.npy"
vg tensor convert "$tmp/ab.safetensors" --name nothing -o "$tmp/bad.npy"
vg tensor convert "$tmp/a.npy" -o "$tmp/a.npy"
vg tensor convert "$tmp/a.npy" -o "$tmp/nodir/x.npy"
vg tensor info "$tmp/huge.npy"
vg edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/v3.npy" -o "$tmp/bad.tflite"
vg edgetpu set-weights "$tmp/s.tflite" --weights "$tmp/u8.npy" -o "$tmp/bad.tflite"
vg edgetpu matmul "$tmp/s.tflite" --input "$tmp/v3.npy" -o "$tmp/bad.npy"
vg edgetpu run "$tmp/s.tflite" --input "$tmp/v3.npy" --device emu -o "$tmp/bad.npy"
vg edgetpu run "$tmp/s.tflite" --input "$tmp/x1.npy" --device emu -o "$tmp/isdir"
vg mgk layer "$tmp/s.mgk" 999
vg mgk replace "$tmp/s.mgk" --weights "$tmp/wrong.safetensors" -o "$tmp/bad.mgk"
vg cnn2 pack "$tmp/ab.safetensors" -o "$tmp/bad.bin"
vg cnn2 render "$tmp/c.bin" "$tmp/in.png" --dump-layers "$tmp/a.npy" -o "$tmp/bad.png"
vg cnn2 render "$tmp/c.bin" "$tmp/in.png" --raw "$tmp/isdir" -o "$tmp/bad.png"
vg cnn2 unpack "$tmp/c.bin" -o "$tmp/isdir"
vg info /dev/zero
vg cnn2 pattern --size 0x0 -o "$tmp/bad.png"
vg mgk synth --layer 1,2 -o "$tmp/bad.mgk"
vg edgetpu synth-dense --size 100 -o "$tmp/bad.tflite"
vg tensor random --shape 2,q -o "$tmp/bad.npy"
vg rknpu disasm "$tmp/isdir"
vg cnn2 validate "$tmp/isdir"
vg info "$tmp/isdir"
for f in bad.bin bad.npy bad.tflite bad.mgk bad.png badplan; do
    if [ -e "$tmp/$f" ]; then echo "valgrind: FAILED: a failing command wrote $f" >&2; fails=$((fails + 1)); fi
done
echo "valgrind: $runs runs, $fails failed"
[ $fails -eq 0 ]
