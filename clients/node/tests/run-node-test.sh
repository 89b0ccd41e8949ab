#!/usr/bin/env bash
# `node --test` on the given files or directories with the TAP reporter: `run-node-test.sh NODE PATHS...`.
# Exit: node's; 77 (ctest: skipped) when node is missing.
set -euo pipefail
node=$1
shift
if ! command -v "$node" >/dev/null; then
    echo "skipped: $node is not installed (scripts/install-deps.sh installs nodejs)"
    exit 77
fi
exec "$node" --test --test-reporter=tap "$@"
