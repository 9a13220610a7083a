#!/bin/sh
# Where outputs go, through the CLI: devices and FIFOs written in place,
# `-o -` on standard output, standard input protected like a named input,
# modes kept, links written through, temporaries removed on signals,
# multi-file outputs all or nothing, an input cut short while mapped.
set -eu
npk=${NPK_CLI:?}
shim=${NPK_SHIM:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Exit status of a command that is expected to fail.
status() { set +e; "$@"; rc=$?; set -e; }
# The directory holds exactly these names (hidden ones included).
only() {
    d=$1; shift
    got=$(ls -A "$d" | sort | tr '\n' ' ')
    want=$(for n in "$@"; do echo "$n"; done | sort | tr '\n' ' ')
    [ "$got" = "$want" ] || fail "$d holds '$got', expected '$want'"
}
json=no
"$npk" --version | grep -q "features:.*json" && json=yes
png=no
"$npk" --version | grep -q "features:.*png" && png=yes

mkdir "$tmp/o"
"$npk" tensor random --shape 4,8 --seed 3 -o "$tmp/ref.npy"

# --- -o -: the data on standard output, messages on standard error
"$npk" tensor random --shape 4,8 --seed 3 -o - >"$tmp/o/stdout.npy"
cmp "$tmp/ref.npy" "$tmp/o/stdout.npy" || fail "-o - differs from -o FILE"
"$npk" rknpu matmul -m 4 -k 64 -n 64 --format hex -o - >"$tmp/o/mm.txt"
"$npk" rknpu matmul -m 4 -k 64 -n 64 --format hex -o "$tmp/mm.txt"
cmp "$tmp/mm.txt" "$tmp/o/mm.txt" || fail "matmul -o -"
"$npk" tensor random --shape 8,64 --dtype f16 --seed 1 -o "$tmp/a.npy"
"$npk" tensor random --shape 64,32 --dtype f16 --seed 2 -o "$tmp/b.npy"
"$npk" rknpu run-matmul "$tmp/a.npy" "$tmp/b.npy" --check -o - >"$tmp/o/c.npy" 2>"$tmp/msg"
grep -q "check: ok" "$tmp/msg" || fail "run-matmul -o -: messages not on stderr: $(cat "$tmp/msg")"
"$npk" tensor info "$tmp/o/c.npy" | grep -q "f32	\[8, 32\]" || fail "run-matmul -o - data"
status "$npk" rknpu plan -m 64 -k 64 -n 64 -o - 2>"$tmp/err"
[ $rc = 2 ] && grep -q "standard output" "$tmp/err" || fail "plan -o - (a directory) exit $rc"
rm -f "$tmp"/o/*

# --- a FIFO is written in place (read by cat), never replaced
mkfifo "$tmp/o/fifo"
cat "$tmp/o/fifo" >"$tmp/from_fifo" &
"$npk" tensor random --shape 4,8 --seed 3 -o "$tmp/o/fifo"
wait
[ -p "$tmp/o/fifo" ] || fail "the FIFO was replaced"
cmp "$tmp/ref.npy" "$tmp/from_fifo" || fail "FIFO contents"
only "$tmp/o" fifo
rm -f "$tmp/o/fifo"

# --- a character device (a copy of /dev/null; needs root) stays a device
if mknod "$tmp/o/null" c 1 3 2>/dev/null; then
    "$npk" tensor random --shape 4,8 -o "$tmp/o/null"
    [ -c "$tmp/o/null" ] || fail "-o onto a device replaced it"
    only "$tmp/o" null
    rm -f "$tmp/o/null"
else
    echo "NOTE: mknod not permitted: device case not run"
fi

# --- standard input is an input: not overwritten through its name
cp "$tmp/ref.npy" "$tmp/in.npy"
status "$npk" tensor convert - --dtype f16 -o "$tmp/in.npy" <"$tmp/in.npy" 2>"$tmp/err"
[ $rc = 2 ] || fail "stdin overwritten: exit $rc"
grep -q "refusing to overwrite an input" "$tmp/err" || fail "stdin message: $(cat "$tmp/err")"
cmp "$tmp/ref.npy" "$tmp/in.npy" || fail "the input read from stdin changed"
"$npk" tensor convert - --dtype f16 -o "$tmp/o/f16.npy" <"$tmp/in.npy"
rm -f "$tmp"/o/*

# --- a replaced file keeps its mode; a link is written through
"$npk" tensor random --shape 2 -o "$tmp/o/private.npy"
chmod 600 "$tmp/o/private.npy"
"$npk" tensor random --shape 3 -o "$tmp/o/private.npy"
[ "$(stat -c %a "$tmp/o/private.npy")" = 600 ] || fail "mode not kept"
ln -s private.npy "$tmp/o/link.npy"
"$npk" tensor random --shape 4,8 --seed 3 -o "$tmp/o/link.npy"
[ -L "$tmp/o/link.npy" ] || fail "the link was replaced"
cmp "$tmp/ref.npy" "$tmp/o/private.npy" || fail "not written through the link"
ln -s missing.npy "$tmp/o/dangling.npy"
status "$npk" tensor random --shape 2 -o "$tmp/o/dangling.npy" 2>"$tmp/err"
[ $rc = 2 ] && grep -q "symbolic link" "$tmp/err" || fail "dangling link: exit $rc"
only "$tmp/o" private.npy link.npy dangling.npy
rm -f "$tmp"/o/*

# --- multi-file outputs fail as a whole (files larger than ulimit -f fail;
#     rknpu plan -o and edgetpu run -o DIR: the signal cases below)
if [ $png = yes ]; then
    "$npk" tensor random --shape 4,12,3,3 --min -0.5 --max 0.5 -o "$tmp/l0.npy"
    "$npk" tensor convert layer.0.weight="$tmp/l0.npy" -o "$tmp/c.safetensors"
    "$npk" cnn2 pack "$tmp/c.safetensors" -o "$tmp/c.bin"
    "$npk" cnn2 pattern --size 32x32 --alpha -o "$tmp/in.png"
    # layer_0.npy and raw.npy are 16 KiB, features.npy 48 KiB: the last fails.
    status sh -c "trap '' XFSZ; ulimit -f 64; exec \"$npk\" cnn2 render \"$tmp/c.bin\" \
        \"$tmp/in.png\" -o \"$tmp/o/out.png\" --raw \"$tmp/o/raw.npy\" \
        --dump-layers \"$tmp/o/layers\"" 2>"$tmp/err"
    [ $rc = 2 ] || fail "render with a failing dump: exit $rc ($(cat "$tmp/err"))"
    only "$tmp/o"
    "$npk" cnn2 render "$tmp/c.bin" "$tmp/in.png" -o "$tmp/o/out.png" --raw "$tmp/o/raw.npy" \
        --dump-layers "$tmp/o/layers"
    only "$tmp/o" out.png raw.npy layers
    only "$tmp/o/layers" features.npy layer_0.npy
    rm -rf "$tmp"/o/*
fi

if [ -z "$shim" ] || [ "${NPK_TEST_LIGHT:-0}" = 1 ]; then
    echo "SKIPPED: fault injection (no preload shim in this build)"
    exit 0
fi
# Under ASan the shim comes before the sanitizer runtime in the link order.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# --- a signal while a temporary exists: removed, default exit status
for sig in 15 2 1; do
    status env LD_PRELOAD="$shim" NPK_SHIM_SIGNAL_AT_FSYNC=1 NPK_SHIM_SIGNAL=$sig \
        "$npk" tensor random --shape 1000,1000 -o "$tmp/o/big.npy"
    [ $rc = $((128 + sig)) ] || fail "signal $sig: exit $rc"
    only "$tmp/o"
done
# ... in the middle of a multi-file output: no directory, no staging
status env LD_PRELOAD="$shim" NPK_SHIM_SIGNAL_AT_FSYNC=2 \
    "$npk" rknpu plan -m 512 -k 256 -n 1024 --cores 3 -o "$tmp/o/pd" >/dev/null
[ $rc = 143 ] || fail "plan killed: exit $rc"
only "$tmp/o"
"$npk" rknpu plan -m 512 -k 256 -n 1024 --cores 3 -o "$tmp/o/pd" >/dev/null
[ -f "$tmp/o/pd/submit.bin" ] || fail "plan -o after a killed run"
# ... and replacing an existing set: the old set stays whole
cp -r "$tmp/o/pd" "$tmp/pd.old"
status env LD_PRELOAD="$shim" NPK_SHIM_SIGNAL_AT_FSYNC=3 \
    "$npk" rknpu plan -m 256 -k 256 -n 1024 -o "$tmp/o/pd" >/dev/null
[ $rc = 143 ] || fail "plan killed (existing set): exit $rc"
diff -r "$tmp/pd.old" "$tmp/o/pd" || fail "a killed run changed the existing set"
only "$tmp/o" pd
rm -rf "$tmp/o/pd"

# --- an input cut short while mapped: one error line, exit 2, no output
cp "$tmp/ref.npy" "$tmp/victim.npy"
status env LD_PRELOAD="$shim" NPK_SHIM_CUT_AFTER_MAP=victim.npy \
    "$npk" tensor convert "$tmp/victim.npy" --dtype f16 -o "$tmp/o/out.npy" 2>"$tmp/err"
[ $rc = 2 ] || fail "SIGBUS: exit $rc ($(cat "$tmp/err"))"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "SIGBUS: not one line: $(cat "$tmp/err")"
grep -q "^npukit: $tmp/victim.npy: offset 0x[0-9a-f]*: the file was cut short" "$tmp/err" ||
    fail "SIGBUS message: $(cat "$tmp/err")"
only "$tmp/o"
echo "outputs: ok"
