#!/bin/sh
# `npukit --version` names the commit the build is from: a commit of this
# repository (12 hex digits, "-dirty" when built with uncommitted changes),
# or "unknown" only when the sources are not a git checkout.
set -eu
line=$("$NPK_CLI" --version)
echo "$line"
commit=$(echo "$line" | sed -n 's/^npukit [0-9][0-9.]* (commit \([0-9a-z-]*\);.*/\1/p')
[ -n "$commit" ] || { echo "no commit in: $line" >&2; exit 1; }
if git -C "$NPK_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
    hash=${commit%-dirty}
    echo "$hash" | grep -Eqx '[0-9a-f]{12}' || { echo "not a hash: $commit" >&2; exit 1; }
    git -C "$NPK_SOURCE_DIR" cat-file -e "$hash^{commit}" || { echo "no such commit: $hash" >&2; exit 1; }
else
    echo "$commit" | grep -Eqx '[0-9a-f]{12}|unknown'
fi
# A packager's override and a `git archive` tarball (export-subst) both reach the header.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake -DSRC="$tmp" -DOUT="$tmp/h" -DCOMMIT=0123456789ab -P "$NPK_SOURCE_DIR/cmake/git-commit.cmake"
grep -q '#define NPK_COMMIT "0123456789ab"' "$tmp/h"
mkdir "$tmp/cmake"
echo 89abcdef0123456789abcdef0123456789abcdef >"$tmp/cmake/git-commit.txt"
cmake -DSRC="$tmp" -DOUT="$tmp/h" -P "$NPK_SOURCE_DIR/cmake/git-commit.cmake"
grep -q '#define NPK_COMMIT "89abcdef0123"' "$tmp/h"
echo '$Format:%H$' >"$tmp/cmake/git-commit.txt"
cmake -DSRC="$tmp" -DOUT="$tmp/h" -P "$NPK_SOURCE_DIR/cmake/git-commit.cmake"
grep -q '#define NPK_COMMIT "unknown"' "$tmp/h"
