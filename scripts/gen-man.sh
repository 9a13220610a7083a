#!/bin/sh
# Writes the npukit(1) man page from the CLI's own help: help2man turns
# `npukit --help` / `--version` into the page, and a COMMANDS section holds
# `npukit help COMMAND` of every command (so the page follows the CLI).
# usage: scripts/gen-man.sh NPUKIT OUT.1 [HELP2MAN]
set -eu
npk=$1
out=$2
help2man=${3:-help2man}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# roff-safe preformatted text: backslashes escaped, lines that start with
# a dot or a quote protected.
roff() {
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

{
    echo '[COMMANDS]'
    for c in $("$npk" --help | sed -n '/^commands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p'); do
        echo ".SS $c"
        echo '.nf'
        "$npk" help "$c" | roff
        echo '.fi'
    done
    cat <<'SECTIONS'
[ENVIRONMENT]
.TP
.B NPUKIT_PROGRESS
Progress of long work (\fBtflite run\fR, \fBedgetpu run\fR, \fBcnn2 render\fR, \fBrknpu compile\fR) is shown on
standard error when it is a terminal; \fBalways\fR shows it on any standard error,
\fBnever\fR (like \fB\-\-quiet\fR) turns it off.
.TP
.B NPUKIT_TFL_KERNELS
The 8-bit inner loops of the TFLite interpreter (\fBtflite run\fR and the CPU part of other runs): \fBportable\fR runs the portable C
definition, \fBv128\fR at most the 128-bit vector kernels (SSE2, NEON), \fBbest\fR (the default) the
best the CPU has (AVX2 on x86). Every choice gives the same bytes.
[EXIT STATUS]
0 success; 1 the operation ran but found problems (e.g. a validation failure);
2 usage error or unreadable, unrecognised or malformed input. Errors are one line
on standard error: \fBnpukit: FILE: offset 0x1a2b: what is wrong\fR.
[SEE ALSO]
The README and docs/ of the npukit sources; \fBnpukit help COMMAND\fR.
SECTIONS
} >"$tmp/extra.h2m"

# The page names the version only; `npukit --version` also names the commit.
version=$("$npk" --version | sed 's/ (.*//')
"$help2man" --no-info --version-string="$version" --no-discard-stderr --section=1 \
    --name="read, check, convert and run edge-NPU model files and command streams" \
    --include="$tmp/extra.h2m" --output="$tmp/npukit.1" "$npk"
mv "$tmp/npukit.1" "$out"
