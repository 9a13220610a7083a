#!/bin/sh
# make demo: produce a file of every implemented format from nothing but the
# CLI itself (no fixtures, no network) and inspect each with `npukit info`;
# then, when the fixture models are at hand, run a real network three ways.
set -eu
build=${1:-build}
npk="$build/npukit"
out="$build/demo"
rm -rf "$out"
mkdir -p "$out"
step() { printf '\n$ %s\n' "$*"; "$@"; }

echo "== npukit demo (outputs in $out)"
step "$npk" --version

# Tensors: the interchange formats every other command reads and writes.
step "$npk" tensor random --shape 4,12,3,3 --dtype f32 --seed 7 --min -0.5 --max 0.5 -o "$out/w.npy"
step "$npk" tensor convert layer.0.weight="$out/w.npy" -o "$out/weights.safetensors"
step "$npk" tensor info "$out/weights.safetensors"

# --- cnn2 (CNN v2 weight files) ---
# Three 3x3 12->4 layers from random tensors -> safetensors -> CNN2 file (mip 1),
# checked and inspected, then run on a generated picture. PNGs go to a separate
# folder because `npukit info` does not detect images.
img="$build/demo-cnn2"
rm -rf "$img"
mkdir -p "$img"
for i in 0 1 2; do
    step "$npk" tensor random --shape 4,12,3,3 --seed $((20 + i)) --min -0.5 --max 0.5 -o "$out/cnn2_layer$i.npy"
done
step "$npk" tensor convert layer.0.weight="$out/cnn2_layer0.npy" layer.1.weight="$out/cnn2_layer1.npy" \
    layer.2.weight="$out/cnn2_layer2.npy" -o "$out/cnn2_weights.safetensors"
step "$npk" cnn2 pack "$out/cnn2_weights.safetensors" --mip 1 -o "$out/cnn2_model.bin"
step "$npk" cnn2 validate "$out/cnn2_model.bin"
step "$npk" cnn2 info "$out/cnn2_model.bin"
step "$npk" cnn2 unpack "$out/cnn2_model.bin" -o "$out/cnn2_unpacked.safetensors"
step "$npk" cnn2 pattern --size 160x120 --alpha -o "$img/input.png"
step "$npk" cnn2 render "$out/cnn2_model.bin" "$img/input.png" -o "$img/output.png" --raw "$out/cnn2_raw.npy"
step "$npk" cnn2 render "$out/cnn2_model.bin" "$img/input.png" -o "$img/blend_half_zero.png" --blend 0.5 --border zero
step "$npk" info "$out/cnn2_model.bin" "$out/cnn2_raw.npy"
# --- end cnn2 ---

# --- mgk (Ingenic MGK) ---
# A synthetic MGK made by npukit's test-file generator (not a vendor model): an 8-bit 3x3
# and a 4-bit 1x5 convolution plus an unknown record kind. Inspect it, export the weights
# and write them back: the result is byte-identical.
step "$npk" mgk synth --layer 16,8,3,3,8 --layer 8,4,1,5,4 --extra-records -o "$out/demo.mgk"
step "$npk" info "$out/demo.mgk"
step "$npk" mgk info "$out/demo.mgk"
step "$npk" mgk layer "$out/demo.mgk" 2
step "$npk" mgk extract "$out/demo.mgk" -o "$out/demo_mgk.safetensors"
step "$npk" mgk replace "$out/demo.mgk" --weights "$out/demo_mgk.safetensors" -o "$out/demo_same.mgk"
step cmp "$out/demo.mgk" "$out/demo_same.mgk"
# The network: nodes and tensors with shapes and quantisation; ONNX (the unknown record
# becomes a custom-domain node; kept beside $out, whose files `info` lists at the end),
# when this build has protobuf-c.
step "$npk" mgk graph "$out/demo.mgk"
if "$npk" --version | grep -q 'features:.* onnx'; then
    step "$npk" mgk export --allow-unknown "$out/demo.mgk" -o "$out.mgk.onnx"
fi
# --- end mgk ---

# --- rknpu (Rockchip NPU streams) ---
step "$npk" rknpu matmul -m 64 -k 512 -n 128 --dtype fp16 -o "$out/matmul_64x512x128.bin"
step "$npk" rknpu matmul -m 4 -k 64 -n 64 --dtype int8 --format hex -o "$out/matmul_int8.txt"
"$npk" rknpu disasm "$out/matmul_int8.txt" | sed -n '1,3p;105,108p'
step "$npk" rknpu plan -m 400 -k 1024 -n 8208 --cores 3 -o "$out/rknpu_plan"
cp "$out/rknpu_plan/regcmd.bin" "$out/rknpu_plan_regcmd.bin"
step "$npk" tensor random --shape 64,512 --dtype f16 --seed 3 -o "$out/rknpu_a.npy"
step "$npk" rknpu pack --layout feature-fp16 "$out/rknpu_a.npy" -o "$out/rknpu_a_nc1hwc2.bin"
step "$npk" rknpu unpack --layout feature-fp16 --shape 64,512 "$out/rknpu_a_nc1hwc2.bin" -o "$out/rknpu_a_back.npy"
cmp "$out/rknpu_a.npy" "$out/rknpu_a_back.npy" && echo "pack/unpack round trip: identical"
rm -r "$out/rknpu_plan" "$out/rknpu_a_nc1hwc2.bin"
# The emulator runs the streams: 3 cores, several chained tasks, checked against the CPU.
step "$npk" tensor random --shape 512,96 --dtype f16 --seed 4 -o "$out/rknpu_b.npy"
step "$npk" rknpu run-matmul "$out/rknpu_a.npy" "$out/rknpu_b.npy" --cores 3 --check -o "$out/rknpu_c.npy"
"$npk" info "$out/rknpu_c.npy"
"$npk" rknpu devices
# --- end rknpu ---

# --- edgetpu (Coral Edge TPU) ---
# A SYNTHETIC Dense 256 model in the layout of a compiled template (zero-filled
# bitstreams: not compiler output), its weights out, new weights in, a CPU run.
step "$npk" edgetpu synth-dense --size 256 -o "$out/demo_edgetpu.tflite"
step "$npk" edgetpu info "$out/demo_edgetpu.tflite"
step "$npk" edgetpu weights "$out/demo_edgetpu.tflite" --float -o "$out/demo_edgetpu_w.npy"
step "$npk" tensor random --shape 256,256 --dtype f32 --seed 3 --min -0.05 --max 0.05 -o "$out/demo_edgetpu_new_w.npy"
step "$npk" edgetpu set-weights "$out/demo_edgetpu.tflite" --weights "$out/demo_edgetpu_new_w.npy" -o "$out/demo_new_edgetpu.tflite"
step "$npk" tensor random --shape 4,256 --dtype f32 --seed 4 -o "$out/demo_edgetpu_x.npy"
step "$npk" edgetpu matmul "$out/demo_new_edgetpu.tflite" --input "$out/demo_edgetpu_x.npy" -o "$out/demo_edgetpu_y.npy"
step "$npk" tensor info "$out/demo_edgetpu_y.npy"
# The USB runtime on the emulated accelerator (protocol-checked; its answer is the CPU
# reference's), then whatever accelerators are plugged in (none is fine).
step "$npk" tensor random --shape 256 --dtype f32 --seed 5 -o "$out/demo_edgetpu_x1.npy"
step "$npk" edgetpu run "$out/demo_new_edgetpu.tflite" --input "$out/demo_edgetpu_x1.npy" -o "$out/demo_edgetpu_y1.npy" --device emu --repeat 3
step "$npk" tensor info "$out/demo_edgetpu_y1.npy"
step "$npk" edgetpu devices
# --- end edgetpu ---

step "$npk" info "$out"/*
step "$npk" info --json "$out"/*

# --- real networks (when the fixture models are at hand: $NPUKIT_FIXTURES) ---
# One picture through a real quantised classifier: on the CPU interpreter, on the
# emulated RKNPU (checked against the interpreter) and on the emulated Edge TPU
# with the CPU ops around it.
models=${NPUKIT_FIXTURES:-../shared/data}/models
if [ -f "$models/mobilenet_v1_0.5_160_quant.tflite" ] && [ -f "$models/cat.bmp" ] &&
    "$npk" --version | grep -q 'features:.* bmp'; then
    m="$models/mobilenet_v1_0.5_160_quant.tflite"
    step "$npk" tflite classify "$m" --image "$models/cat.bmp" --labels "$models/imagenet_labels.txt" --top 3
    step "$npk" rknpu compile "$m" -o "$out/rknpu_mobilenet"
    step "$npk" rknpu run "$m" --image "$models/cat.bmp" --check -o "$out/rknpu_probs.npy"
    step "$npk" rknpu run "$m" --image "$models/cat.bmp" --classify "$models/imagenet_labels.txt" --top 3
    step "$npk" edgetpu run "$models/mobilenet_v1_0.5_160_quant_edgetpu.tflite" --device emu \
        --cpu-model "$m" --image "$models/cat.bmp" --classify "$models/imagenet_labels.txt" --top 3
else
    echo
    echo "(real networks: fixture models not found at $models; set NPUKIT_FIXTURES)"
fi
# --- end real networks ---

echo
echo "demo: done"
