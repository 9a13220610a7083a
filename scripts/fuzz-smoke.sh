#!/bin/sh
# make fuzz-smoke: build the libFuzzer targets with clang and run each for a
# bounded time on a seed corpus made from the fixtures and from files the
# project generates itself. A crash, leak or timeout fails the run; the input
# is kept under fuzz/findings/ (add it to fuzz/regressions/NAME/ with the fix).
#   FUZZ_SECONDS  total budget after the build (default 60): seed generation,
#                 then the rest split evenly over the targets (at least 1 s each;
#                 about 1 s per target goes to start-up and the seed corpus)
#   FUZZ_TARGETS  run only these targets (names without the fuzz_ prefix)
# Long campaigns: scripts/fuzz-campaign.sh (docs/fuzzing.md).
set -eu
cd "$(dirname "$0")/.."
. scripts/fuzz-lib.sh
fuzz_build
t0=$(date +%s)
fuzz_seeds

targets=${FUZZ_TARGETS:-$(fuzz_targets)}
n=$(echo "$targets" | wc -w)
left=$((${FUZZ_SECONDS:-60} - ($(date +%s) - t0)))
per=$(((left - n) / n))
[ "$per" -ge 1 ] || per=1
mkdir -p fuzz/findings
fail=0
for t in $targets; do
    corpus=$b/corpus/$t
    rm -rf "$corpus"
    fuzz_fill "$t" "$corpus"
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
echo "fuzz-smoke: $n targets, ${per}s each, $(($(date +%s) - t0))s after the build"
exit $fail
