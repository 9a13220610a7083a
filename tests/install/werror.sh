#!/bin/sh
# -Werror is the project's (Debug, the default build type, NPK_DEVELOPER, CI's
# NPK_WERROR=ON), never forced on a build type a user or packager names.
# Was: a packager's Release build stopped on a gcc -O3 warning (-Werror).
# Configure only (no build): a few seconds.
set -eu
src=${NPK_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# werror WANT DIR ARGS...: configure DIR and compare the -Werror status line.
werror() {
    want=$1 dir=$2
    shift 2
    cmake -S "$src" -B "$tmp/$dir" -DNPK_TESTS=OFF -DNPK_BENCH=OFF "$@" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log" >&2; fail "configure $*"; }
    got=$(sed -n 's/^-- npukit: -Werror \(ON\|OFF\) .*/\1/p' "$tmp/log")
    [ "$got" = "$want" ] || fail "-Werror '$got' (want $want) for: ${*:-no build type}"
}

werror ON default
werror OFF default -DCMAKE_BUILD_TYPE=Release # reconfigured with a named type
werror ON debug -DCMAKE_BUILD_TYPE=Debug
werror OFF rwdi -DCMAKE_BUILD_TYPE=RelWithDebInfo
werror OFF msr -DCMAKE_BUILD_TYPE=MinSizeRel
werror ON ci -DCMAKE_BUILD_TYPE=Release -DNPK_WERROR=ON
werror ON dev -DCMAKE_BUILD_TYPE=Release -DNPK_DEVELOPER=ON
echo "werror: ok"
