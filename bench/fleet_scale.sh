#!/usr/bin/env bash
# The fleet's scale figures for docs/fleet.md (not a timed test): the good locustfile through
# scripts/fleet.sh with 4 service hosts × 4 Locust worker hosts, then the same load on 1 service
# host. For each: Locust's req/s through the sidecars, journal bytes per attempt, and `faultline check`
# over the merged journals (wall time and max RSS, ROUNDS times).
# usage: FAULTLINE=build/default/cli/faultline [USERS=32] [SECONDS_OF_LOAD=20] [ROUNDS=3] bash bench/fleet_scale.sh [OUT]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
faultline=$(realpath "${FAULTLINE:-$repo/build/default/cli/faultline}")
users=${USERS:-32} seconds=${SECONDS_OF_LOAD:-20} rounds=${ROUNDS:-3}
out=${1:-/tmp/fleet-scale}
[[ -x $faultline ]] || { echo "fleet_scale.sh: no faultline binary at $faultline (set FAULTLINE)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "fleet_scale.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

for service_hosts in 4 1; do
    run="$out/${service_hosts}x4"
    echo "== $service_hosts service hosts × 4 worker hosts, $users users, ${seconds}s"
    bash "$repo/scripts/fleet.sh" --faultline "$faultline" --locustfile "$repo/examples/fleet/good_client.py" \
        --service-hosts "$service_hosts" --worker-hosts 4 --users "$users" --run-time "$seconds" \
        --operations-per-user 1000000 --out "$run" | grep '^fleet: Locust'
    for ((round = 1; round <= rounds; round++)); do
        /usr/bin/time -f "check: %e s wall, max RSS %M KB" "$faultline" check "$run"/journals/*.jsonl \
            --expect "$repo/examples/fleet/expectations.toml" 2>&1 >/dev/null | grep '^check:' || true
    done
done
