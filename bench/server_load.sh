#!/usr/bin/env bash
# The fault server's throughput and latency on loopback, side by side with nginx serving a tiny
# static response: wrk at -c1 (one thread) and -c64 (two threads) against each, same run. The fault server runs with a rule
# that never fires (the hot path: parse, identity, decision, service, respond, journal), once with the
# journal in memory and once streamed to a file. Prints a table; figures go to docs/benchmarks.md.
#   bash bench/server_load.sh [seconds per run, default 5]    (ROUNDS=N rounds, default 3)
# FAULTLINE=/path/to/faultline skips the Release build and measures that binary.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
rounds="${ROUNDS:-3}"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

bash scripts/install-deps.sh --bench
source bench/lib.sh  # $work, pids, cleanup on exit, free_port, release_faultline
faultline="$(release_faultline)"


# A rules file whose only rule never matches the benchmark's path.
cat > "$work/rules.toml" <<'TOML'
[server]
threads = 2
journal_max_records = 20000000

[[fault]]
name = "never"
kind = "status"
status = 500
[fault.match]
path = "/never-requested"
TOML

# Starts `faultline serve` (extra args: $@) and sets `url` and `server_pid`.
start_faultline() {
    "$faultline" serve --rules "$work/rules.toml" --seed 1 "$@" >"$work/serve.out" 2>"$work/serve.err" &
    server_pid=$!
    pids+=("$server_pid")
    url=""
    for _ in $(seq 1 100); do  # at most 10 s for the URL line
        url="$(sed -n 's/^faultline serving on \(http:[^ ]*\).*/\1/p' "$work/serve.out")"
        [[ -n "$url" ]] && return 0
        sleep 0.1
    done
    echo "faultline serve did not start:" >&2
    cat "$work/serve.err" >&2
    exit 3
}

start_nginx() {
    local port
    port="$(free_port)"
    mkdir -p "$work/nginx"
    sed -e "s#@PORT@#$port#g" -e "s#@DIR@#$work/nginx#g" bench/nginx-bench.conf >"$work/nginx/nginx.conf"
    nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e stderr -g 'daemon off;' 2>"$work/nginx.err" &
    server_pid=$!
    pids+=("$server_pid")
    url="http://127.0.0.1:$port"
    for _ in $(seq 1 100); do
        connect_status="$(python3 -c "import socket; s = socket.socket(); print(s.connect_ex(('127.0.0.1', $port)))")"
        [[ "$connect_status" == "0" ]] && return 0
        sleep 0.1
    done
    echo "nginx did not start:" >&2
    cat "$work/nginx.err" >&2
    exit 3
}

stop_server() {
    kill -TERM "$server_pid"
    wait "$server_pid" || true
}

# run_wrk LABEL CONNECTIONS: one wrk run against $url; appends a row to $work/rows.
run_wrk() {
    local label="$1" conns="$2" out
    # wrk needs at least one connection per thread: -c1 runs with one thread.
    local threads=2
    ((conns < 2)) && threads=1
    out="$(wrk -t"$threads" -c"$conns" -d"${duration}s" --latency "$url/")"
    local rps p50 p99
    rps="$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")"
    p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
    p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
    if grep -q "Non-2xx\|Socket errors" <<<"$out"; then
        echo "warning: $label c$conns had errors:" >&2
        grep "Non-2xx\|Socket errors" <<<"$out" >&2
    fi
    echo "$label $conns $rps $p50 $p99" >>"$work/rows"
}

: >"$work/rows"
# Rounds alternate the three servers, so background load on a shared machine hits them alike; the
# table reports each configuration's median round.
for conns in 1 64; do
    for round in $(seq 1 "$rounds"); do
        start_nginx
        run_wrk nginx "$conns"
        stop_server

        start_faultline
        run_wrk faultline-journal-memory "$conns"
        stop_server

        start_faultline --journal "$work/journal.jsonl"
        run_wrk faultline-journal-file "$conns"
        stop_server
        echo "round $round at -c$conns: journal file holds $(wc -l <"$work/journal.jsonl") records" >&2
    done
done

echo
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load before: $load_before"
echo "wrk -d${duration}s (-t1 at -c1, -t2 at -c64), median of $rounds rounds"
python3 - "$work/rows" <<'PY'
import statistics, sys
def micros(text):
    for unit, scale in (("us", 1.0), ("ms", 1000.0), ("s", 1e6)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float("nan")
runs = {}
for line in open(sys.argv[1]):
    label, conns, rps, p50, p99 = line.split()
    runs.setdefault((label, int(conns)), []).append((float(rps), micros(p50), micros(p99)))
print(f"{'server':<26} {'conns':>5} {'req/s':>10} {'p50 us':>8} {'p99 us':>9} {'vs nginx':>9}  rounds req/s")
for (label, conns), rows in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0] != "nginx", kv[0][0])):
    rps = statistics.median(r[0] for r in rows)
    nginx = statistics.median(r[0] for r in runs[("nginx", conns)])
    print(f"{label:<26} {conns:>5} {rps:>10.0f} {statistics.median(r[1] for r in rows):>8.0f} "
          f"{statistics.median(r[2] for r in rows):>9.0f} {rps / nginx:>8.2f}x  "
          + " ".join(f"{r[0]:.0f}" for r in rows))
PY
