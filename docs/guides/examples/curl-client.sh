#!/usr/bin/env bash
# The shell guide's client: curl --retry, which honours Retry-After (good), or with --naive a hand
# loop that retries at once (bad). Needs FAULTLINE_URL, FAULTLINE_CONTROL_URL, FAULTLINE_CONTROL_TOKEN.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
control() { curl -sS --fail-with-body -H "Authorization: Bearer $FAULTLINE_CONTROL_TOKEN" "$@"; echo; }

# Install the fault (a TOML table; a JSON object works too) and start a fresh round.
control -X DELETE "${FAULTLINE_CONTROL_URL}rules"
control -X POST "${FAULTLINE_CONTROL_URL}rules" -H 'Content-Type: application/toml' \
        --data-binary @"$here/busy-first-try.toml"
control -X POST "${FAULTLINE_CONTROL_URL}reset"

for order in 1 2; do
    if [[ "${1:-}" == "--naive" ]]; then
        for try in 1 2 3; do
            status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -d "{\"order\":$order}" "$FAULTLINE_URL/kv/order-$order")
            [[ "$status" == 2* ]] && break
        done
    else
        status=$(curl -s -o /dev/null -w '%{http_code}' --retry 2 -X PUT -d "{\"order\":$order}" \
                 "$FAULTLINE_URL/kv/order-$order")
    fi
    echo "order $order: HTTP $status"
    [[ "$status" == 2* ]] || exit 1
done

# What the server saw, before `faultline check` judges it.
control "${FAULTLINE_CONTROL_URL}stats"
