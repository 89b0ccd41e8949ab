#!/usr/bin/env bash
# ctest `fleet` (label fleet): the small fleet of docs/fleet.md — 2 service hosts with sidecars, 2
# Locust worker hosts, 3 s of load per client — run once with each locustfile and judged as one
# history. The bad client must fail no_double_effects with a doubled charge made by two instances,
# and retry_budget; the good client must pass every check. Exit 77 (skipped) where scripts/fleet.sh
# says network namespaces or Locust are not available.
# usage: fleet_test.sh FAULTLINE WORK_DIR
set -euo pipefail
(($# == 2)) || { echo "usage: fleet_test.sh FAULTLINE WORK_DIR" >&2; exit 2; }
faultline=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
fleet=(bash "$here/../../scripts/fleet.sh" --faultline "$faultline" --expect "$here/expectations.toml"
       --service-hosts 2 --worker-hosts 2 --users 8 --run-time 3)

run_fleet() {  # client expected_exit
    local status=0
    "${fleet[@]}" --locustfile "$here/$1_client.py" --out "$work/$1" || status=$?
    if ((status == 77)); then exit 77; fi
    if ((status != $2)); then
        echo "FAIL: the $1 client's fleet exited $status, expected $2" >&2
        exit 1
    fi
}

# outcomes CLIENT: the outcome of each check in the client's report, one `check outcome` a line.
outcomes() {
    python3 -c 'import json, sys
for v in json.load(open(sys.argv[1]))["scenarios"][0]["verdicts"]:
    print(v["check"], v["outcome"])' "$work/$1/report.json"
}

run_fleet good 0
run_fleet bad 1
bad_outcomes=$(outcomes bad)  # whole, before grep -q: a pipe it closes early would fail under pipefail
grep -qx "no_double_effects fail" <<<"$bad_outcomes" || { echo "FAIL: the bad client passed no_double_effects" >&2; exit 1; }
grep -qx "retry_budget fail" <<<"$bad_outcomes" || { echo "FAIL: the bad client passed retry_budget" >&2; exit 1; }
# The double charge across the fleet: one operation's commits made by two instances.
if ! grep -q "committed effects by 2 instances (host-1, host-2)" "$work/bad/check.txt"; then
    echo "FAIL: no double charge made by two instances in the bad client's evidence" >&2
    exit 1
fi
grep -q 'data-chart="instances"' "$work/bad/report.html" || { echo "FAIL: the report has no instance lanes" >&2; exit 1; }
echo "fleet: the good client passed every check; the bad one failed no_double_effects across instances and retry_budget"
