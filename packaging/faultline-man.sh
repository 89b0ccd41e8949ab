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
source=$(cd "$(dirname "$0")/.." && pwd)
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
    echo "faultline-scenario(5): the scenario and rules files (toxics files: docs/proxy.md)."
    echo ".br"
    echo "/usr/share/doc/faultline/docs/: scenarios.md, checks.md, control-api.md and guides/."
} >"$include"
help2man --no-info --no-discard-stderr --section 1 --source "faultline" --include "$include" \
         --output "$output" "$faultline"
# The help of an uninstalled binary names the source tree's suites and docs; the page is for the
# installed program (the Debian package's layout, under /usr).
# help2man writes a path's "-" as "\-": match the path either way.
source_pattern=$(printf '%s' "$source" | sed -e 's/[.]/[.]/g' -e 's/-/\\\\\\?-/g')
sed -i -e "s#$source_pattern/suites#/usr/share/faultline/suites#g" \
       -e "s#$source_pattern/docs#/usr/share/doc/faultline/docs#g" "$output"
