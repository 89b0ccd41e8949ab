#!/usr/bin/env bash
# The main job: installs what is missing, builds the `faultline` executable (Release), runs every
# shipped chaos scenario in suites/ two at a time, and writes the reports to reports-out/: the console
# report (console.txt, also printed), one JSON report per scenario and junit.xml; then the
# conformance scorecard of faultline's own retry client (score-builtin.txt). The exit code is
# faultline's: 0 everything passed, 1 a check failed, 2 bad input, 3 harness error, 4 insufficient
# evidence.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release --target faultline
rm -rf reports-out
mkdir -p reports-out
set +e
build/release/cli/faultline run suites/ -j2 --report-dir reports-out | tee reports-out/console.txt
status=${PIPESTATUS[0]}
build/release/cli/faultline score --report-dir reports-out/score-builtin | tee reports-out/score-builtin.txt
score_status=${PIPESTATUS[0]}
set -e
echo "faultline run: exit code ${status}; faultline score: exit code ${score_status}" \
     "(0 all passed, 1 a check failed, 2 bad input, 3 harness error, 4 insufficient evidence)"
if ((status == 0)); then status=${score_status}; fi
exit "${status}"
