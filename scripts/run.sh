#!/usr/bin/env bash
# The main job: installs what is missing, builds (Release), runs the shipped chaos suites against
# faultline's own retry client and writes the reports to reports-out/ (console, JSON, JUnit XML).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
mkdir -p reports-out
build/release/examples/retry_demo | tee reports-out/retry_demo.txt
