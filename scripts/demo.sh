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
# --- end cnn2 ---

# --- mgk (Ingenic MGK) ---
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
# --- end edgetpu ---

step "$npk" info "$out"/*
step "$npk" info --json "$out"/*
echo
echo "demo: done"
