#!/usr/bin/env bash
# Runs one guide's walk-through end to end, as its page describes: `faultline serve` on ephemeral
# ports with a journal, the client under test against it (FAULTLINE_URL, FAULTLINE_CONTROL_URL and
# FAULTLINE_CONTROL_TOKEN: the export lines serve prints with --print-env), SIGTERM to the server, then `faultline check` on
# the journal with expect.toml. Passes when check exits with EXPECTED_EXIT and, for a failure, names
# FAILING_CHECK as failed.
#
#   run-guide.sh FAULTLINE WORK_DIR EXPECTED_EXIT FAILING_CHECK|- -- CLIENT [ARGS...]
#
# Exit 0: as expected; 1: not as expected; 77: a tool the client needs is missing (ctest: skipped).
set -euo pipefail

if (($# < 6)) || [[ "$5" != "--" ]]; then
    echo "usage: $0 FAULTLINE WORK_DIR EXPECTED_EXIT FAILING_CHECK|- -- CLIENT [ARGS...]" >&2
    exit 2
fi
faultline=$1 work=$2 expected_exit=$3 failing_check=$4
shift 5
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v "$1" >/dev/null; then
    echo "skipped: $1 is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi

rm -rf "$work" && mkdir -p "$work"
journal=$work/journal.jsonl
mkfifo "$work/env"
"$faultline" serve --rules "$here/rules.toml" --journal "$journal" --print-env >"$work/env" 2>"$work/serve.err" &
serve_pid=$!
stop_server() { kill -TERM "$serve_pid" 2>/dev/null || true; }
trap stop_server EXIT

# --print-env writes `export FAULTLINE_…=…` lines once serve listens, then closes its stdout: cat
# returns at that end (bounded: 10 s).
env_lines=$(timeout 10 cat "$work/env") || { echo "faultline serve did not start:" >&2; cat "$work/serve.err" >&2; exit 1; }
eval "$env_lines"
echo "server: $FAULTLINE_URL  control: $FAULTLINE_CONTROL_URL"

set +e
"$@"
client_status=$?
set -e
if ((client_status == 77)); then exit 77; fi
if ((client_status != 0)); then echo "the client failed (exit $client_status)" >&2; exit 1; fi

stop_server
trap - EXIT
wait "$serve_pid" || { echo "faultline serve did not exit 0:" >&2; cat "$work/serve.err" >&2; exit 1; }

set +e
"$faultline" check "$journal" --expect "$here/expect.toml" --report "junit:$work/junit.xml" | tee "$work/check.txt"
check_status=${PIPESTATUS[0]}
set -e
if ((check_status != expected_exit)); then
    echo "faultline check exited $check_status, expected $expected_exit" >&2
    exit 1
fi
if [[ "$failing_check" != "-" ]] && ! grep -q "<failure" "$work/junit.xml"; then
    echo "expected a failed check in $work/junit.xml" >&2
    exit 1
fi
if [[ "$failing_check" != "-" ]] && ! grep -E "name=\"$failing_check" -A1 "$work/junit.xml" | grep -q "<failure"; then
    echo "expected check $failing_check to fail; see $work/junit.xml" >&2
    exit 1
fi
echo "as expected: faultline check exited $check_status"
