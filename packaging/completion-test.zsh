#!/usr/bin/env zsh
# The zsh completion (_faultline: the bash one under bashcompinit) against the real program, called
# the way zsh calls it (compgen -F, in sh emulation): a subcommand, an option, an option's values.
# bashcompinit's compgen returns every word; zsh itself then keeps those matching what was typed.
#   completion-test.zsh DIR_OF_FAULTLINE
path=("$1" $path)
autoload -U compinit && compinit -u -D
source "${0:A:h}/_faultline"
complete_words() {  # as _bash_complete: COMP_WORDS from words, COMP_CWORD 0-based
    local -a COMP_WORDS COMPREPLY
    local COMP_CWORD=$(( $# - 1 ))
    COMP_WORDS=("$@")
    compgen -F _faultline -- "${@[-1]}"
}
expect() {  # expect WHAT OUTPUT WORD
    if ! print -r -- "$2" | grep -qx -- "$3"; then
        print -u2 "zsh completion of $1: no '$3' in: ${2//$'\n'/ }"
        exit 1
    fi
}
expect "faultline se" "$(complete_words faultline se)" serve
expect "faultline serve --ru" "$(complete_words faultline serve --ru)" --rules
expect "faultline proxy --mode t" "$(complete_words faultline proxy --mode t)" tcp
expect "faultline run --report j" "$(complete_words faultline run --report j)" junit:
print "zsh completion: ok"
