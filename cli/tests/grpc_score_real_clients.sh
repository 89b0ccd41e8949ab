#!/usr/bin/env bash
# `faultline score --grpc` on real gRPC clients: Python's grpcio (Debian python3-grpcio) and, when
# clients/realclients/install.sh installed it, Node's @grpc/grpc-js, through the gRPC catalogue
# (suites/conformance-grpc/), each judged against the service config it runs with:
#   with the retry policy and an idempotency key: every row passes but A6's backoff, which neither
#     library draws as A6 says (grpcio waits exactly initialBackoff before its first retry, grpc-js
#     0.8–1.2 × the backoff instead of random(0, backoff)): a true finding, exit 1;
#   the same without a key: the lost response after the commit is charged twice, so "no second
#     execution" fails too;
#   without a retry policy (gRPC's default, declared by giving none): every row passes, exit 0.
# Usage: grpc_score_real_clients.sh FAULTLINE_BINARY
set -euo pipefail
faultline=$1
here="$(cd "$(dirname "$0")/../.." && pwd)"
clients="$here/clients/realclients"
config="$clients/grpc_service_config.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 -c 'import grpc' 2>/dev/null || { echo "python3-grpcio is missing: skipped"; exit 77; }

score() {  # score NAME EXPECTED_EXIT [--service-config FILE] -- CLIENT...
    local name=$1 expected=$2
    shift 2
    local options=()
    while [[ "$1" != "--" ]]; do options+=("$1"); shift; done
    shift
    local status=0
    "$faultline" score --grpc "${options[@]}" --seed 7 --quiet \
        --scorecard-json "$work/$name.json" -- "$@" >"$work/$name.out" 2>&1 || status=$?
    cat "$work/$name.out"
    if [[ "$status" != "$expected" ]]; then
        echo "FAIL: $name exited $status, expected $expected" >&2
        exit 1
    fi
}

# A row's outcome in a scorecard: row NAME PROPERTY
row() {
    python3 -c 'import json, sys
card = json.load(open(sys.argv[1]))
print(next(r["outcome"] for r in card["properties"] if r["id"] == sys.argv[2]))' "$work/$1.json" "$2"
}

expect_row() {  # expect_row NAME PROPERTY OUTCOME
    local got
    got="$(row "$1" "$2")"
    if [[ "$got" != "$3" ]]; then
        echo "FAIL: $1: $2 is $got, expected $3" >&2
        exit 1
    fi
}

python_client=(/usr/bin/python3 "$clients/grpc_python_client.py" "{url}" "{path}" --body "{body}" --timeout "{timeout}")
policy=(--service-config "{service_config}")
score python-policy 1 --service-config "$config" -- "${python_client[@]}" "${policy[@]}" --key "{key}"
for property in grpc_retryable_codes grpc_attempt_limit grpc_pushback grpc_throttling single_execution stable_key; do
    expect_row python-policy "$property" pass
done
expect_row python-policy grpc_backoff fail
grep -q "every one of 8 waits sat at its bound" "$work/python-policy.out"

score python-no-key 1 --service-config "$config" -- "${python_client[@]}" "${policy[@]}"
expect_row python-no-key single_execution fail
grep -q "grpc-unavailable-after-commit" "$work/python-no-key.out"

score python-no-policy 0 -- "${python_client[@]}" --key "{key}"

if [[ -d "$clients/node_modules/@grpc/grpc-js" ]]; then
    node_client=(node "$clients/grpc_node_client.mjs" "{url}" "{path}" --body "{body}" --timeout "{timeout}")
    score node-policy 1 --service-config "$config" -- "${node_client[@]}" "${policy[@]}" --key "{key}"
    for property in grpc_retryable_codes grpc_attempt_limit grpc_pushback grpc_throttling single_execution; do
        expect_row node-policy "$property" pass
    done
    expect_row node-policy grpc_backoff fail
    score node-no-policy 0 -- "${node_client[@]}" --key "{key}"
else
    echo "@grpc/grpc-js is not installed (clients/realclients/install.sh): the Node client was not scored"
fi
echo "PASS"
