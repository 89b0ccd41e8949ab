#!/usr/bin/env bash
# Runs pytest with the given interpreter: `run-pytest.sh PYTHON PYTEST_ARGS...`. Exit 77 (ctest:
# skipped) when the interpreter or its pytest is missing, saying what to install.
set -euo pipefail
python=$1
shift
if ! command -v "$python" >/dev/null; then
    echo "skipped: $python is not installed (scripts/install-deps.sh installs python3)"
    exit 77
fi
if ! "$python" -c "import pytest" 2>/dev/null; then
    echo "skipped: $python has no pytest (Debian: apt-get install python3-pytest; scripts/install-deps.sh)"
    exit 77
fi
exec "$python" -m pytest "$@"
