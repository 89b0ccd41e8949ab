#!/usr/bin/env bash
# Runs the Node guide's node:test recipe (docs/guides/examples/orders.test.mjs) as a user's project
# would: the examples in WORK_DIR with node_modules/faultline linked to clients/node (what
# `npm install ./clients/node` makes), then `node --test`. With `ignores-retry-after` the client
# retries at once, and the helper must fail the two tests with a Retry-After, with the evidence.
#
#   run-recipe.sh NODE PACKAGE_DIR EXAMPLES_DIR WORK_DIR well-behaved|ignores-retry-after
#
# Exit 0: as expected; 1: not.
set -euo pipefail
node=$1 package=$2 examples=$3 work=$4 client=$5
rm -rf "$work" && mkdir -p "$work/node_modules"
cp "$examples"/*.mjs "$examples"/*.toml "$work/"
ln -s "$package" "$work/node_modules/faultline"
cd "$work"

set +e
if [[ "$client" == ignores-retry-after ]]; then
    ORDERS_IGNORE_RETRY_AFTER=1 "$node" --test --test-reporter=tap orders.test.mjs >output.tap 2>&1
else
    "$node" --test --test-reporter=tap orders.test.mjs >output.tap 2>&1
fi
status=$?
set -e
cat output.tap

expect_line() {
    grep -qE -- "$1" output.tap || { echo "expected a line matching: $1" >&2; exit 1; }
}
if [[ "$client" == ignores-retry-after ]]; then
    ((status == 1)) || { echo "node --test exited $status, expected 1" >&2; exit 1; }
    expect_line '^not ok 1 - a write is retried after 503 with Retry-After'
    expect_line '^not ok 2 - the same write in the next test is a new operation'
    expect_line '^ok 3 - without faults the first try succeeds'
    expect_line "failureType: 'hookFailed'"
    expect_line 'faultline check, round 2, failed \(exit 1\)'
    expect_line 'retry_after: 1 responses carried Retry-After; 1 retries came too soon'
    expect_line 'waited [0-9.]+ms of the 1000 ms Retry-After asked'
else
    ((status == 0)) || { echo "node --test exited $status, expected 0" >&2; exit 1; }
    expect_line '^# pass 3'
fi
echo "as expected: node --test exited $status"
