#!/usr/bin/env bash
# Opens an HTML report of a real run in headless Chromium: the page must load without a console
# message (an error, an uncaught exception), its own script must find every chart with a non-empty
# bounding box (it writes "charts-ok N 0" into #faultline-status, which --dump-dom shows), and a
# screenshot is saved next to the report. Exits 77 (ctest: skipped) when Chromium is missing.
# Usage: browser_check.sh FAULTLINE_BINARY SUITES_DIR OUT_DIR
set -euo pipefail

faultline=$1
suites=$2
out=$3

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
    echo "SKIPPED: chromium is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi

rm -rf "$out"
mkdir -p "$out"
report="$out/report.html"
# A herd without jitter, a double charge, a budget running dry and curl run once per operation:
# every chart kind, highlighted lanes and client processes.
scenarios=$(dirname "$0")/scenarios
"$faultline" run "$suites/herd-no-jitter.toml" "$suites/lost-response-no-keys.bad.toml" "$scenarios/outage-token-bucket.toml" \
    "$scenarios/curl-per-operation.toml" \
    --report "html:$report" > "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: Chromium refuses to run as root (CI containers) with its sandbox.
chrome() {
    timeout 60 "$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
        --enable-logging=stderr --v=0 "$@"
}

chrome --dump-dom "file://$(realpath "$report")" > "$out/dom.html" 2> "$out/chromium.log"
status=$(grep -o '<p id="faultline-status">[^<]*' "$out/dom.html" | sed 's/.*>//' || true)
echo "status: ${status:-missing}"
if grep -q ':CONSOLE' "$out/chromium.log"; then
    echo "FAILED: the page wrote to the console:"
    grep ':CONSOLE' "$out/chromium.log"
    exit 1
fi
if ! [[ "$status" =~ ^charts-ok\ [1-9][0-9]*\ 0$ ]]; then
    echo "FAILED: expected 'charts-ok N 0' (every chart with a size), got '${status:-nothing}'"
    exit 1
fi

chrome --window-size=1100,3000 --screenshot="$out/report.png" "file://$(realpath "$report")" 2>> "$out/chromium.log"
if [[ ! -s "$out/report.png" ]]; then
    echo "FAILED: no screenshot written"
    exit 1
fi
echo "screenshot: $out/report.png"
