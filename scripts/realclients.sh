#!/usr/bin/env bash
# The real-client matrix (docs/score.md, "Real clients"): scores every config in
# clients/realclients/matrix.toml with `faultline score` and compares each property with the ground
# truth measured without faultline (clients/realclients/groundtruth.json). Exits 0 when every cell
# matches, 1 on a mismatch or a flip, 2 on bad input.
#
#   bash scripts/test.sh realclients [--runs N] [--load] [--config GLOB]... [--measure]
#                                    [--results FILE] [--keep DIR]
#
#   --runs N      score the matrix N times and report every cell that flips
#   --load        two CPU hogs (`yes > /dev/null`) run meanwhile, stopped by their PIDs on exit
#   --measure     measure the ground truth again first (clients/realclients/measure.py, ~20 min)
#   FAULTLINE=... the binary to judge (default: build/default/cli/faultline, built when missing)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=1 load=0 measure=0 results="" keep="" label=idle
configs=()
while (($#)); do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --load) load=1; label=loaded; shift ;;
        --measure) measure=1; shift ;;
        --config) configs+=(--config "$2"); shift 2 ;;
        --results) results="$2"; shift 2 ;;
        --keep) keep="$2"; shift 2 ;;
        *) echo "realclients.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && ((runs >= 1 && runs <= 50)) || { echo "realclients.sh: --runs takes 1..50" >&2; exit 2; }

bash clients/realclients/install.sh

faultline="${FAULTLINE:-build/default/cli/faultline}"
if [[ ! -x "$faultline" ]]; then
    [[ -z "${FAULTLINE:-}" ]] || { echo "realclients.sh: FAULTLINE=$faultline is not an executable" >&2; exit 2; }
    bash scripts/install-deps.sh
    cmake --preset default
    cmake --build build/default --target faultline
fi

# The ground truth is measured before any hog starts: what a client does, not what the machine adds.
if ((measure)); then
    python3 clients/realclients/measure.py "${configs[@]}"
fi

hogs=()
stop_hogs() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_hogs EXIT
if ((load)); then
    for _ in 1 2; do
        yes > /dev/null &
        hogs+=("$!")
    done
    echo "load: two CPU hogs, PIDs ${hogs[*]}"
fi

args=(--faultline "$faultline" --runs "$runs" --label "$label" "${configs[@]}")
[[ -z "$results" ]] || args+=(--results "$results")
[[ -z "$keep" ]] || args+=(--keep "$keep")
python3 clients/realclients/compare.py "${args[@]}"
