#!/bin/sh
# Installs the npm packages of the test oracles (tests/oracle/package.json,
# pinned by its package-lock.json) into BUILD/oracle/node_modules with
# `npm ci`, when node and npm exist. Test-only: the library and CLI never
# need Node. Skips the install when the installed lock file is the same.
# Without node or npm, or when npm fails, the oracle tests report it: a
# failure under CI=true, a visible skip elsewhere.   usage: scripts/oracle-deps.sh BUILD
set -eu
build=${1:?usage: $0 BUILD}
src=$(cd "$(dirname "$0")/.." && pwd)/tests/oracle
dst=$build/oracle
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "oracle-deps: node or npm not found; the LiteRT.js oracle tests will say so" >&2
    exit 0
fi
if [ -f "$dst/node_modules/.package-lock.json" ] && cmp -s "$src/package-lock.json" "$dst/package-lock.json"; then
    exit 0
fi
mkdir -p "$dst"
cp "$src/package.json" "$src/package-lock.json" "$dst/"
echo "oracle-deps: npm ci in $dst"
if ! (cd "$dst" && npm ci --no-audit --no-fund --loglevel=error); then
    rm -f "$dst/package-lock.json"
    echo "oracle-deps: npm ci failed; the LiteRT.js oracle tests will say so" >&2
    [ "${CI:-}" = true ] && exit 1
fi
exit 0
