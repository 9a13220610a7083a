#!/bin/sh
# The generated man page (scripts/gen-man.sh, help2man): built with the CLI,
# a section for every command, and groff reads it without a warning.
set -eu
page="$NPK_BUILD_DIR/npukit.1"
if [ "${NPK_TEST_LIGHT:-0}" = 1 ]; then
    echo "SKIP: cross build (the man page is made by running the CLI on the build machine)"
    exit 0
fi
if ! command -v help2man >/dev/null 2>&1; then
    [ "${CI:-}" = true ] && { echo "help2man missing (scripts/deps.sh check installs it)" >&2; exit 1; }
    echo "SKIP: no help2man, no man page"
    exit 0
fi
[ -s "$page" ] || { echo "missing $page" >&2; exit 1; }
for c in $("$NPK_CLI" --help | sed -n '/^commands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p'); do
    grep -qx "\.SS $c" "$page" || { echo "no section for $c" >&2; exit 1; }
done
grep -q "^\.TH NPUKIT \"1\"" "$page"
grep -q "^\.SH \"EXIT STATUS\"" "$page"
warn=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
[ -z "$warn" ] || { echo "$warn" >&2; exit 1; }
