#!/usr/bin/env bash
# The bash completion against the real program: subcommands, a subcommand's options (read from its
# --help), `list`'s arguments, and nothing after `--`.   completion-test.sh DIR_OF_FAULTLINE
set -euo pipefail
export PATH="$1:$PATH"
source "$(dirname "$0")/faultline.bash"

complete_words() {  # complete_words WORD... : completes the last word
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _faultline
    printf '%s\n' "${COMPREPLY[@]}"
}
expect() {  # expect WHAT OUTPUT WORD : OUTPUT holds WORD as one line
    grep -qx -- "$3" <<<"$2" || { echo "completion of $1: no '$3' in: $(tr '\n' ' ' <<<"$2")" >&2; exit 1; }
}

expect "faultline se" "$(complete_words faultline se)" serve
expect "faultline --v" "$(complete_words faultline --v)" --version
expect "faultline serve --ru" "$(complete_words faultline serve --ru)" --rules
expect "faultline run --rep" "$(complete_words faultline run --rep)" --report-dir
expect "faultline list ch" "$(complete_words faultline list ch)" checks
expect "faultline proxy --mode t" "$(complete_words faultline proxy --mode t)" tcp
expect "faultline simulate --model c" "$(complete_words faultline simulate --model c)" capacity
expect "faultline score --jitter d" "$(complete_words faultline score --jitter d)" decorrelated
expect "faultline run --report j" "$(complete_words faultline run --report j)" junit:
expect "faultline run --report h" "$(complete_words faultline run --report h)" html:
[[ -z "$(complete_words faultline run x.toml -- cur)" ]] || { echo "completed after --" >&2; exit 1; }
echo "completion: ok"
