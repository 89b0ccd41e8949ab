#!/usr/bin/env bash
# The whole test suite: installs what is missing, configures, builds (warnings are errors) and runs
# every test with ctest, through the `default` workflow preset.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    realclients) shift; exec bash scripts/realclients.sh "$@" ;;  # docs/score.md, "Real clients"
esac
bash scripts/install-deps.sh
cmake --workflow --preset "${1:-default}"
