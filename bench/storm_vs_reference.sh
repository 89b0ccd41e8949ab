#!/usr/bin/env bash
# `faultline simulate --model occ` against a Python reference, side by side on the same machine: the
# AWS blog's full sweep (clients 10..190:10, 5 strategies, TRIALS trials each). Prints both times and
# the ratio; figures go to docs/benchmarks.md. `faultline` takes well under a second, so one run is
# at the mercy of whatever else the machine does in that second: it runs REPEAT times (default 5),
# every time is printed and the median is the one compared; the reference runs once.
#   bash bench/storm_vs_reference.sh            (TRIALS=N, default 100; REPEAT=N, default 5)
# The reference is the AWS sample simulator (aws-samples/aws-arch-backoff-simulator) when
# AWS_BACKOFF_SIMULATOR_DIR names a checkout of it — its code is never part of this repository — and
# otherwise bench/reference_occ_model.py, a model written from the blog's description. The script
# says which one it ran (python3 is needed for either). FAULTLINE=/path/to/faultline skips the Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${TRIALS:-100}"
repeat="${REPEAT:-5}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

faultline="${FAULTLINE:-}"
if [[ -z "$faultline" ]]; then
    build=build/bench-storm
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFAULTLINE_BUILD_TESTS=OFF \
          -DFAULTLINE_BUILD_BENCH=OFF >/dev/null
    cmake --build "$build" -j2 --target faultline >/dev/null
    faultline="$build/cli/faultline"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Wall seconds of a command, its output kept in a file.
timed() {
    local out="$1"
    shift
    local start end
    start="$(date +%s.%N)"
    "$@" >"$out"
    end="$(date +%s.%N)"
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

storm_times=()
for ((i = 0; i < repeat; i++)); do
    storm_times+=("$(timed "$work/storm.txt" "$faultline" simulate --model occ --clients 10..190:10 --strategy all \
                     --trials "$trials" --seed 1 --threads 2)")
done
storm_s="$(printf '%s\n' "${storm_times[@]}" | sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }')"
grep -E '^ +100 ' "$work/storm.txt" || true
tail -1 "$work/storm.txt"
echo "faultline simulate, $repeat runs: ${storm_times[*]} s (median $storm_s s)"

if [[ -n "${AWS_BACKOFF_SIMULATOR_DIR:-}" ]]; then
    script="$AWS_BACKOFF_SIMULATOR_DIR/src/backoff_simulator.py"
    [[ -f "$script" ]] || script="$AWS_BACKOFF_SIMULATOR_DIR/backoff_simulator.py"
    [[ -f "$script" ]] || { echo "no backoff_simulator.py under $AWS_BACKOFF_SIMULATOR_DIR" >&2; exit 2; }
    echo "reference: the AWS sample simulator, $script (its own trial count and output)"
    reference_s="$(cd "$work" && timed "$work/reference.txt" python3 "$script")"
else
    echo "reference: bench/reference_occ_model.py (written from the blog's description), $trials trials"
    reference_s="$(timed "$work/reference.txt" python3 bench/reference_occ_model.py --clients 10..190:10 \
                   --trials "$trials" --seed 1)"
    grep -E '^ +100 ' "$work/reference.txt" || true
fi

awk -v s="$storm_s" -v r="$reference_s" \
    'BEGIN { printf "faultline simulate (median): %.3f s   reference: %.3f s   ratio: %.0fx\n", s, r, r / s }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
