#!/bin/sh
# Runs the CLI under valgrind memcheck over every fixture (and the files the
# demo generates), with every read-only command that applies to each format.
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

for f in $(find "$fx" -type f | sort); do
    vg info "$f"
    vg info --json "$f"
    fmt=$("$npk" info --json "$f" 2>/dev/null | sed -n 's/.*"format":"\([^"]*\)".*/\1/p')
    case $fmt in
    mgk)
        vg mgk info --json --records --symbols "$f"
        vg mgk extract "$f" -o "$tmp/x.safetensors"
        vg mgk replace "$f" --weights "$tmp/x.safetensors" -o "$tmp/x.mgk"
        ;;
    tflite)
        vg edgetpu info --json "$f"
        vg edgetpu weights "$f" -o "$tmp/w.npy"
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
# Generators and layout commands, on the project's own inputs.
vg rknpu matmul -m 64 -k 64 -n 64 -o "$tmp/mm.bin"
vg rknpu plan -m 512 -k 256 -n 1024 --cores 3 --json -o "$tmp/plan"
vg tensor random --shape 8,16 --dtype f16 -o "$tmp/a.npy"
vg tensor convert a="$tmp/a.npy" -o "$tmp/a.safetensors"
vg mgk synth -o "$tmp/s.mgk"
vg edgetpu synth-dense --size 64 -o "$tmp/s.tflite"
echo "valgrind: $runs runs, $fails failed"
[ $fails -eq 0 ]
