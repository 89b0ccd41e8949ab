#!/usr/bin/env bash
# The libFuzzer targets in fuzz/ (docs: the "Fuzzing" section of docs/reliability.md).
#   scripts/fuzz.sh                  short run: the `fuzz` workflow preset (configure, build only the
#                                    fuzz targets, ctest -L fuzz: 15 s per target), as CI runs it
#   scripts/fuzz.sh --long [SECONDS] each target for SECONDS (default 300), one at a time (one core),
#                                    corpora kept in build/fuzz/long/<target>/, then a summary table
#   scripts/fuzz.sh --long SECONDS TARGET...   only the named targets
# New inputs go to the build tree; fuzz/corpus/ (the seeds) is only read. A crash leaves its input in
# build/fuzz/long/<target>/artifacts/ and makes the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" != "--long" ]]; then
    exec cmake --workflow --preset fuzz
fi
seconds="${2:-300}"
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
if ((${#targets[@]} == 0)); then
    targets=(scenario_fuzz serve_config_fuzz retry_after_fuzz journal_fuzz control_api_fuzz http_server_fuzz proxy_fuzz)
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
bin=build/fuzz/fuzz
out=build/fuzz/long
declare -A dicts=([scenario_fuzz]=toml [serve_config_fuzz]=toml [retry_after_fuzz]=http_date
                  [journal_fuzz]=journal [control_api_fuzz]=rules [http_server_fuzz]=http [proxy_fuzz]=http)
# As in fuzz/CMakeLists.txt: the server target's own bound on a silent server is 10 s; TOML targets
# take inputs up to 128 KiB, past config::document's bounds.
declare -A options=([http_server_fuzz]="-timeout=30" [proxy_fuzz]="-timeout=30" [scenario_fuzz]="-max_len=131072"
                    [serve_config_fuzz]="-max_len=131072" [control_api_fuzz]="-max_len=131072")
# As in fuzz/CMakeLists.txt: the shipped suites and example scenarios are scenario seeds too.
declare -A seeds=([scenario_fuzz]="suites examples/scenarios")
failed=0
summary=$'| target | seconds | executions | exec/s | coverage (cov / ft) | corpus (files) | result |\n|---|---|---|---|---|---|---|'
for t in "${targets[@]}"; do
    mkdir -p "$out/$t/corpus" "$out/$t/artifacts"
    echo "== $t: ${seconds} s"
    status=0
    "$bin/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -dict="fuzz/dict/${dicts[$t]}.dict" -artifact_prefix="$out/$t/artifacts/" ${options[$t]:-} \
        "$out/$t/corpus" "fuzz/corpus/$t" ${seeds[$t]:-} >"$out/$t.log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log" | tail -1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$out/$t.log" | tail -1 | sed 's/cov: \([0-9]*\) ft: \([0-9]*\)/\1 \/ \2/')
    files=$(find "$out/$t/corpus" -type f | wc -l)
    result="no finding"
    if ((status != 0)); then
        result="FINDING (exit $status): $(ls "$out/$t/artifacts" | head -3 | tr '\n' ' ')"
        failed=1
    fi
    summary+=$'\n'"| $t | $seconds | ${execs:-?} | ${rate:-?} | ${cov:-?} | $files | $result |"
done
echo
echo "$summary" | tee "$out/summary.md"
exit "$failed"
