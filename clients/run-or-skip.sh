#!/usr/bin/env bash
# Runs a client test's COMMAND when the probe NEEDS succeeds; otherwise exits 77 (ctest: skipped),
# naming the Debian packages that provide what is missing:
#
#   run-or-skip.sh PACKAGES NEEDS... -- COMMAND...
set -euo pipefail
packages=$1
shift
needs=()
while (($# > 0)) && [[ "$1" != "--" ]]; do
    needs+=("$1")
    shift
done
shift
if ! "${needs[@]}" >/dev/null 2>&1; then
    echo "skipped: \`${needs[*]}\` failed (Debian: apt-get install $packages, as scripts/install-deps.sh does)"
    exit 77
fi
exec "$@"
