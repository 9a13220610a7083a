#!/bin/sh
# Builds the library, CLI, tests and benchmark with -Werror for each compiler
# and build type given (what a packager's build does, but failing on any
# warning), without running anything. Build trees: build-matrix/CC-TYPE.
# usage: scripts/build-matrix.sh [COMPILERS] [TYPES]
#   e.g. scripts/build-matrix.sh "gcc clang" "Release MinSizeRel"
set -eu
compilers=${1:-gcc clang}
types=${2:-Release}
jobs=${JOBS:-2}
for cc in $compilers; do
    for type in $types; do
        dir=build-matrix/$cc-$type
        echo "== $cc $type"
        CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DNPK_WERROR=ON >/dev/null
        cmake --build "$dir" -j "$jobs" >"$dir.log" 2>&1 || { tail -40 "$dir.log" >&2; exit 1; }
    done
done
echo "build matrix: warning-free"
