# bash completion for faultline (zsh sources it too: _faultline). Subcommands, options and option
# values are read from `faultline --help` and `faultline <command> --help` when completing, so the
# completion never drifts from the program; written in the bash that zsh's bashcompinit also runs.

_faultline_options_of() {
    faultline "$1" --help 2>/dev/null | grep -oE '(^|[ ,])--?[A-Za-z][-A-Za-z]*' | tr -d ' ,' | sort -u | tr '\n' ' '
}

# The values an option takes: the TYPE:{a,b} list its help shows (CLI11 prints a member check so),
# else the words faultline documents for it (its report formats, score's jitter forms, simulate's
# strategies).
_faultline_values_of() {
    local command=$1 option=$2 listed
    listed=$(faultline $command --help 2>/dev/null |
        sed -nE "s/^ *(-[A-Za-z],)?$option [A-Z]+:\{([^}]*)\}.*/\2/p" | head -n1)
    if [[ -n "$listed" ]]; then printf '%s' "${listed//,/ }"; return; fi
    case "$option" in
        --report) faultline list reports 2>/dev/null | awk '{printf "%s: ", $1}' ;;
        --jitter) printf '%s' "none full equal decorrelated proportional: above: below: additive:" ;;
        --strategy) printf '%s' "all none exponential equal full decorrelated" ;;
    esac
}

_faultline_commands() {
    if [[ -z "${_faultline_command_list:-}" ]]; then
        _faultline_command_list=$(faultline --help 2>/dev/null |
            awk 'tolower($0) ~ /^subcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' | tr '\n' ' ')
    fi
    printf '%s' "$_faultline_command_list"
}

_faultline() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ "${COMP_WORDS[i]}" == "--" ]] && return 0   # after --: the client's own command line
        if [[ "${COMP_WORDS[i]}" != -* ]]; then command=${COMP_WORDS[i]}; break; fi
    done
    if [[ -z "$command" ]]; then
        COMPREPLY=($(compgen -W "$(_faultline_commands) --help --version" -- "$cur"))
        return 0
    fi
    case "$prev" in
        --report-dir|--catalogue) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
        --rules|--expect|--journal|--scorecard-json|--config|--toxics|--ready-file|--env-file) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
        --seed|--port|--control-port|--control-token|--threads|-j|--jobs|--only|--deadline|--max-attempts|--backoff|--backoff-multiplier|--timeout) return 0 ;;
        --*)
            local values
            values=$(_faultline_values_of "$command" "$prev")
            if [[ -n "$values" ]]; then
                COMPREPLY=($(compgen -W "$values" -- "$cur"))
                if [[ "${COMPREPLY[0]:-}" == *: ]]; then compopt -o nospace 2>/dev/null || true; fi
                return 0
            fi ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_faultline_options_of "$command")" -- "$cur"))
    elif [[ "$command" == list ]]; then
        COMPREPLY=($(compgen -W "faults checks drivers reports toxics" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _faultline faultline
