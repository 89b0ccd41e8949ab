#!/usr/bin/env bash
# Generates faultline.1 from the program's own help with help2man: the top-level --help and
# --version, then one COMMANDS section holding each subcommand's --help, so the man page says
# exactly what `faultline <command> --help` says.
#   faultline-man.sh FAULTLINE OUTPUT.1
set -euo pipefail
output=$(realpath -m "$2")
# Run by name from PATH, so the help's "Usage:" lines say `faultline`, not the build path.
PATH="$(cd "$(dirname "$1")" && pwd):$PATH"
faultline=faultline
include=$(mktemp)
trap 'rm -f "$include"' EXIT

commands=$("$faultline" --help | awk 'tolower($0) ~ /^subcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}')
{
    echo "[NAME]"
    echo "faultline \\- a chaos / fault-injection harness for retry behaviour"
    echo "[COMMANDS]"
    for command in $commands; do
        echo ".SS \"faultline $command\""
        echo ".nf"
        "$faultline" "$command" --help | sed -e 's/\\/\\\\/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"
        echo ".fi"
    done
    echo "[SEE ALSO]"
    echo "docs/scenarios.md, docs/checks.md, docs/control-api.md and docs/guides/ in the faultline sources."
} >"$include"
help2man --no-info --no-discard-stderr --section 1 --source "faultline" --include "$include" \
         --output "$output" "$faultline"
