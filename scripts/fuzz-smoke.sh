#!/bin/sh
# make fuzz-smoke: build the libFuzzer targets with clang and run each for a
# bounded time on a seed corpus made from the fixtures and from files the
# project generates itself. A crash, leak or timeout fails the run; the input
# is kept under fuzz/findings/ (add it to fuzz/regressions/NAME/ with the fix).
#   FUZZ_SECONDS  total budget (default 60), split evenly over the targets
#   FUZZ_TARGETS  run only these targets (names without the fuzz_ prefix)
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
b=build-fuzz
CC=clang cmake -S . -B $b -DNPK_FUZZ=ON -DNPK_TESTS=OFF -DNPK_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build $b -j "$jobs" >/dev/null

fx=${NPUKIT_FIXTURES:-../shared/data}
if [ ! -d "$fx" ]; then
    if [ "${CI:-}" = true ]; then echo "fuzz-smoke: fixtures missing at $fx" >&2; exit 1; fi
    echo "fuzz-smoke: no fixtures at $fx; seeding from generated files only"
fi

# Files the project makes itself, as extra seeds.
gen=$b/generated
rm -rf "$gen"
mkdir -p "$gen"
npk=$b/npukit
$npk tensor random --shape 3,4 -o $gen/a.npy
$npk tensor random --shape 2,3 --dtype f16 -o $gen/b.npy
$npk tensor convert a=$gen/a.npy b=$gen/b.npy -o $gen/ab.safetensors
$npk rknpu matmul -m 4 -k 64 -n 64 -o $gen/mm.bin
$npk rknpu matmul -m 64 -k 64 -n 64 --dtype int8 --format hex -o $gen/mm.txt
$npk mgk synth -o $gen/s.mgk
$npk edgetpu synth-dense --size 64 -o $gen/s.tflite
$npk cnn2 pattern --size 17x9 -o $gen/p.png 2>/dev/null || true

# Seeds per target: fixture folders / generated files by pattern.
seeds_for() {
    case $1 in
    npy) ls $gen/*.npy ;;
    safetensors) ls $gen/*.safetensors ;;
    mgk) ls "$fx"/mgk/* $gen/*.mgk 2>/dev/null ;;
    rknpu_stream | rknpu_plan | rknpu_emu) ls "$fx"/rknpu/golden/*x*.txt $gen/mm.* 2>/dev/null ;;
    flatbuf | edgetpu) ls "$fx"/edgetpu/*.tflite $gen/*.tflite 2>/dev/null ;;
    flexbuf) ls $gen/*.tflite ;;
    cnn2) ls "$fx"/cnn2/* 2>/dev/null ;;
    png) ls $gen/*.png 2>/dev/null ;;
    *) ls "$fx"/*/* $gen/* 2>/dev/null ;;
    esac
}

targets=${FUZZ_TARGETS:-$(ls $b/fuzz/ | sed -n 's/^fuzz_//p')}
n=$(echo "$targets" | wc -w)
total=${FUZZ_SECONDS:-60}
per=$(( total / n ))
[ "$per" -ge 2 ] || per=2
mkdir -p fuzz/findings
fail=0
for t in $targets; do
    corpus=$b/corpus/$t
    rm -rf "$corpus"
    mkdir -p "$corpus"
    for f in $(seeds_for "$t"); do [ -f "$f" ] && cp "$f" "$corpus/"; done
    [ -d fuzz/regressions/$t ] && find fuzz/regressions/$t -type f ! -name '.*' -exec cp {} "$corpus/" \;
    log=$b/fuzz-$t.log
    if $b/fuzz/fuzz_$t -max_total_time=$per -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix=fuzz/findings/$t- "$corpus" >"$log" 2>&1; then
        echo "fuzz-smoke: $t: $(grep -o 'Done [0-9]* runs' "$log" | tail -1) in ${per}s, clean"
    else
        echo "fuzz-smoke: $t: FAILED (see $log and fuzz/findings/)" >&2
        tail -30 "$log" >&2
        fail=1
    fi
done
exit $fail
