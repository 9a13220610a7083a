#!/bin/sh
# The bash completion (tools/completion/npukit.bash) against this build's
# CLI: commands, subcommands, options of a subcommand, help topics.
set -eu
exec bash -c '
set -eu
. "$NPK_SOURCE_DIR/tools/completion/npukit.bash"
complete -p npukit >/dev/null
fail=0
expect() { # expect "WANTED REPLY" WORDS... (the last word is the one completed)
    want=$1
    shift
    COMP_WORDS=("$NPK_CLI" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    _npukit
    got="${COMPREPLY[*]}"
    if [ "$got" != "$want" ]; then
        echo "npukit $*<TAB>: got \"$got\", want \"$want\"" >&2
        fail=1
    fi
}
expect "tflite" tf
expect "info run classify cut help" tflite ""
expect "--repeat" tflite run model.tflite --re
expect "--json --help --quiet" info --
expect "--version" --ve
expect "info run classify cut" help tflite ""
expect "rknpu" help rk
all=$(COMP_WORDS=("$NPK_CLI" ""); COMP_CWORD=1; COMPREPLY=(); _npukit; echo "${COMPREPLY[*]}")
for c in info tensor cnn2 mgk rknpu edgetpu tflite help; do
    case " $all " in *" $c "*) ;; *) echo "command $c not offered: $all" >&2; fail=1 ;; esac
done
exit $fail
'
