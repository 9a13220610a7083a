#!/bin/sh
# make demo: produce a file of every implemented format from nothing but the
# CLI itself (no fixtures, no network) and inspect each with `npukit info`.
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
# --- end mgk ---

# --- rknpu (Rockchip NPU streams) ---
# --- end rknpu ---

# --- edgetpu (Coral Edge TPU) ---
# --- end edgetpu ---

step "$npk" info "$out"/*
step "$npk" info --json "$out"/*
echo
echo "demo: done"
