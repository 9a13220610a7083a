# bash completion for npukit. Commands, subcommands and options are read from
# npukit's own help (`npukit --help`, `npukit GROUP --help`, `npukit help
# GROUP SUB`), so they follow the installed version; file names otherwise.
# Installed as <datadir>/bash-completion/completions/npukit.

_npukit_commands()
{
    "$1" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p'
}

_npukit_subcommands()
{
    "$1" "$2" --help 2>/dev/null | sed -n "s/^  npukit $2 \([a-z0-9-]*\).*/\1/p"
}

_npukit_options()
{
    local usage
    if [ -n "$3" ]; then
        usage=$("$1" help "$2" "$3" 2>/dev/null | sed -n '1,/^$/p')
    else
        usage=$("$1" help "$2" 2>/dev/null | sed -n '1,/^$/p')
    fi
    printf '%s\n' "$usage" | grep -o -- '--[a-z0-9-]*' | sort -u
    printf '%s\n' --help --quiet
}

_npukit()
{
    local cur prog=${COMP_WORDS[0]} i words=()
    cur=${COMP_WORDS[COMP_CWORD]}
    COMPREPLY=()
    # The words before the cursor that are not options (command, subcommand).
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) words+=("${COMP_WORDS[i]}") ;;
        esac
    done
    if [ ${#words[@]} -eq 0 ]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help --version --quiet" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_npukit_commands "$prog") help" -- "$cur")
        fi
        return
    fi
    local cmd=${words[0]}
    if [ "$cmd" = help ]; then
        if [ ${#words[@]} -eq 1 ]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_npukit_commands "$prog")" -- "$cur")
        elif [ ${#words[@]} -eq 2 ]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_npukit_subcommands "$prog" "${words[1]}")" -- "$cur")
        fi
        return
    fi
    local subs
    subs=$(_npukit_subcommands "$prog" "$cmd")
    if [ -n "$subs" ] && [ ${#words[@]} -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$subs help" -- "$cur")
        return
    fi
    if [[ $cur == -* ]]; then
        local sub=""
        [ -n "$subs" ] && sub=${words[1]}
        mapfile -t COMPREPLY < <(compgen -W "$(_npukit_options "$prog" "$cmd" "$sub")" -- "$cur")
        return
    fi
    # Arguments: file names (directories for -o DIR and --dump DIR alike).
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    compopt -o filenames 2>/dev/null
}

complete -F _npukit npukit
