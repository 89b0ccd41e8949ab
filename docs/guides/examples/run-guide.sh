#!/usr/bin/env bash
# Runs one guide's walk-through end to end, as its page describes: `faultline serve` on ephemeral
# ports with a journal, the client under test against it (FAULTLINE_URL, FAULTLINE_CONTROL_URL and
# FAULTLINE_CONTROL_TOKEN set from serve's banner), SIGTERM to the server, then `faultline check` on
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
mkfifo "$work/banner"
"$faultline" serve --rules "$here/rules.toml" --journal "$journal" >"$work/banner" 2>"$work/serve.err" &
serve_pid=$!
stop_server() { kill -TERM "$serve_pid" 2>/dev/null || true; }
trap stop_server EXIT

# The banner's two lines, read from the FIFO as serve prints them (bounded: 10 s).
exec 3<"$work/banner"
read -r -t 10 service_line <&3 || { echo "faultline serve printed no banner:" >&2; cat "$work/serve.err" >&2; exit 1; }
read -r -t 10 control_line <&3 || { echo "faultline serve printed no control line" >&2; exit 1; }
export FAULTLINE_URL FAULTLINE_CONTROL_URL FAULTLINE_CONTROL_TOKEN
FAULTLINE_URL=$(sed -E 's/^faultline serving on (http:[^ ]+).*/\1/' <<<"$service_line")
FAULTLINE_CONTROL_URL=$(sed -E 's/^control API: (http:[^ ]+).*/\1/' <<<"$control_line")
FAULTLINE_CONTROL_TOKEN=$(sed -nE 's/.*Authorization: Bearer ([0-9a-f]+).*/\1/p' <<<"$control_line")
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
