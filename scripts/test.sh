#!/usr/bin/env bash
# The whole test suite: installs what is missing, configures, builds (warnings are errors) and runs
# every test with ctest, through the `default` workflow preset.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --workflow --preset "${1:-default}"
