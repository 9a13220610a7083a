#!/bin/sh
# Long fuzzing campaigns: every target (or FUZZ_TARGETS) for FUZZ_MINUTES
# minutes, FUZZ_JOBS at a time, at the lowest CPU priority. Each target keeps
# a growing corpus in build-fuzz/campaign/corpus/NAME (seeded from the same
# files as make fuzz-smoke, plus fuzz/regressions/NAME) and appends one row
# to build-fuzz/campaign/results.md:
#   | target | duration | executions | corpus (files) | date | commit | result |
# A finding is kept as fuzz/findings/NAME-crash-... (see docs/fuzzing.md).
#   FUZZ_MINUTES  per target (default 10)
#   FUZZ_JOBS     targets run at the same time (default 2)
#   FUZZ_TARGETS  names without the fuzz_ prefix (default: all)
#   FUZZ_QUIET    set: no progress on a terminal (targets done, final time)
set -eu
cd "$(dirname "$0")/.."
. scripts/fuzz-lib.sh
dir=$b/campaign
minutes=${FUZZ_MINUTES:-10}

if [ "${1:-}" = --one ]; then
    t=$2
    corpus=$dir/corpus/$t
    fuzz_fill "$t" "$corpus"
    log=$dir/$t.log
    start=$(date +%s)
    set +e
    nice -n 19 $b/fuzz/fuzz_$t -max_total_time=$((minutes * 60)) -timeout=20 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=fuzz/findings/$t- \
        "$corpus" >"$log" 2>&1
    rc=$?
    set -e
    secs=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    files=$(find "$corpus" -type f | wc -l)
    bytes=$(du -sk "$corpus" | cut -f1)
    commit=${FUZZ_COMMIT:-?}
    if [ $rc -eq 0 ]; then
        result=clean
    else
        result="FINDING: $(ls -t fuzz/findings/$t-* 2>/dev/null | head -1)"
    fi
    printf '| %s | %d min %02d s | %s | %s (%s KiB) | %s | %s | %s |\n' "$t" $((secs / 60)) \
        $((secs % 60)) "${execs:-?}" "$files" "$bytes" "$(date -u +%Y-%m-%d)" "$commit" \
        "$result" >>"$dir/results.md"
    echo "fuzz-campaign: $t: $result after ${secs}s, ${execs:-?} executions, $files corpus files"
    # Progress on a terminal's stderr (FUZZ_QUIET=1: none): targets done of all.
    echo "$t" >>"$dir/.done"
    if [ -t 2 ] && [ -z "${FUZZ_QUIET:-}" ]; then
        echo "fuzz-campaign: $(wc -l <"$dir/.done")/${FUZZ_TOTAL:-?} targets done, $(($(date +%s) - ${FUZZ_START:-$(date +%s)})) s" >&2
    fi
    exit 0
fi

# The commit the binaries are built from ("+": with uncommitted changes).
FUZZ_COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include fuzz tools || echo +)
export FUZZ_COMMIT
fuzz_build
fuzz_seeds
mkdir -p "$dir/corpus" fuzz/findings
[ -f "$dir/results.md" ] ||
    printf '| target | duration | executions | corpus (files) | date | commit | result |\n|---|---|---|---|---|---|---|\n' >"$dir/results.md"
targets=${FUZZ_TARGETS:-$(fuzz_targets)}
echo "fuzz-campaign: $(echo $targets | wc -w) targets x $minutes min, ${FUZZ_JOBS:-2} at a time"
FUZZ_TOTAL=$(echo $targets | wc -w) FUZZ_START=$(date +%s)
export FUZZ_TOTAL FUZZ_START
: >"$dir/.done"
printf '%s\n' $targets | FUZZ_MINUTES=$minutes xargs -P "${FUZZ_JOBS:-2}" -I{} sh "$0" --one {}
cat "$dir/results.md"
[ -t 2 ] && [ -z "${FUZZ_QUIET:-}" ] && echo "fuzz-campaign: $FUZZ_TOTAL targets in $(($(date +%s) - FUZZ_START)) s" >&2
exit 0
