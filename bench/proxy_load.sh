#!/usr/bin/env bash
# `faultline proxy` overhead on loopback: wrk straight to nginx (bench/nginx-bench.conf, a tiny
# static 200) against wrk through one or two proxy binaries in front of the same nginx, faults off
# (a rules file with only `[server] threads = 2`, journal in memory), and through nginx itself as a
# keep-alive reverse proxy (bench/nginx-proxy.conf): the reference for what the extra hop costs on
# this machine when a well-tuned C proxy makes it. Each round runs every
# configuration once, in turn, so background load on a shared machine hits them alike; the table
# gives each one's rounds and the medians' ratio to direct, and the proxy's own CPU time (user +
# system, from /proc) per request, which load from others disturbs far less than req/s. Figures go
# to docs/benchmarks.md.
#   FAULTLINE=new/faultline [FAULTLINE_OLD=old/faultline] bash bench/proxy_load.sh [seconds, default 4]
#   ROUNDS=N (default 3), CONNS="1 64" (default)
#   PIN=1: wrk and nginx share CPU 0 in every configuration and the proxy (faultline's or the nginx
#   reference) runs alone on CPU 1, so the ratio shows whether the proxy keeps up with the load, not
#   how much CPU it takes from it.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-4}"
rounds="${ROUNDS:-3}"
conns_list="${CONNS:-1 64}"
faultline="${FAULTLINE:?FAULTLINE=/path/to/faultline}"
old="${FAULTLINE_OLD:-}"
load_cpu=() proxy_cpu=()
if [[ "${PIN:-0}" == 1 ]]; then
    (($(nproc) >= 2)) || { echo "PIN=1 needs two CPUs" >&2; exit 3; }
    load_cpu=(taskset -c 0) proxy_cpu=(taskset -c 1)
fi
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
command -v wrk >/dev/null && command -v nginx >/dev/null || { echo "needs wrk and nginx" >&2; exit 3; }

source bench/lib.sh  # $work, pids, cleanup on exit, free_port


printf '[server]\nthreads = 2\n' >"$work/rules.toml"

nginx_port="$(free_port)"
mkdir -p "$work/nginx"
sed -e "s#@PORT@#$nginx_port#g" -e "s#@DIR@#$work/nginx#g" bench/nginx-bench.conf >"$work/nginx/nginx.conf"
"${load_cpu[@]}" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e stderr -g 'daemon off;' 2>"$work/nginx.err" &
pids+=("$!")
for _ in $(seq 1 100); do  # at most 10 s
    python3 -c "import socket,sys; s = socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $nginx_port)))" && break
    sleep 0.1
done

reference_port="$(free_port)"
mkdir -p "$work/nginx-proxy"
sed -e "s#@PORT@#$reference_port#g" -e "s#@UPSTREAM_PORT@#$nginx_port#g" -e "s#@DIR@#$work/nginx-proxy#g" \
    bench/nginx-proxy.conf >"$work/nginx-proxy/nginx.conf"
"${proxy_cpu[@]}" nginx -p "$work/nginx-proxy" -c "$work/nginx-proxy/nginx.conf" -e stderr -g 'daemon off;' \
    2>"$work/nginx-proxy.err" &
reference_pid=$!
pids+=("$reference_pid")
for _ in $(seq 1 100); do  # at most 10 s
    python3 -c "import socket,sys; s = socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $reference_port)))" && break
    sleep 0.1
done
reference_workers="$(pgrep -P "$reference_pid" | tr '\n' ' ')"

# Starts a proxy binary in front of nginx; sets url and proxy_pid.
start_proxy() {
    "${proxy_cpu[@]}" "$1" proxy --upstream "127.0.0.1:$nginx_port" --rules "$work/rules.toml" --seed 1 >"$work/proxy.out" 2>"$work/proxy.err" &
    proxy_pid=$!
    pids+=("$proxy_pid")
    url=""
    for _ in $(seq 1 100); do
        url="$(sed -n 's/^faultline proxy on \(http:[^ ]*\).*/\1/p' "$work/proxy.out")"
        [[ -n "$url" ]] && return 0
        sleep 0.1
    done
    echo "the proxy did not start:" >&2
    cat "$work/proxy.err" >&2
    exit 3
}

# CPU time so far of the processes given, in clock ticks (utime + stime, /proc/PID/stat fields 14
# and 15, summed).
cpu_ticks() {
    local pid total=0
    for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
    echo "$total"
}

stop_proxy() {
    kill -TERM "$proxy_pid"
    wait "$proxy_pid" || true
}

# run_wrk LABEL CONNECTIONS [PROXY_PID...]: one wrk run against $url; appends a row to $work/rows
# (with the CPU ticks the given proxy processes used over the run, 0 without any).
run_wrk() {
    local label="$1" conns="$2" out threads=2 ticks_before ticks
    shift 2
    ((conns < 2)) && threads=1
    ticks_before="$(cpu_ticks "$@")"
    out="$("${load_cpu[@]}" wrk -t"$threads" -c"$conns" -d"${duration}s" --latency "$url/")"
    ticks=$(( $(cpu_ticks "$@") - ticks_before ))
    if grep -q "Non-2xx\|Socket errors" <<<"$out"; then
        echo "warning: $label c$conns had errors:" >&2
        grep "Non-2xx\|Socket errors" <<<"$out" >&2
    fi
    echo "$label $conns $(awk '/^Requests\/sec:/ {print $2}' <<<"$out") $(awk '$1 == "50%" {print $2}' <<<"$out")" \
        "$(awk '/requests in/ {print $1}' <<<"$out") $ticks" >>"$work/rows"
}

: >"$work/rows"
for conns in $conns_list; do
    for round in $(seq 1 "$rounds"); do
        url="http://127.0.0.1:$nginx_port"
        run_wrk direct "$conns"
        url="http://127.0.0.1:$reference_port"
        # shellcheck disable=SC2086 # one pid per word
        run_wrk nginx-proxy "$conns" $reference_workers
        if [[ -n "$old" ]]; then
            start_proxy "$old"
            run_wrk proxy-old "$conns" "$proxy_pid"
            stop_proxy
        fi
        start_proxy "$faultline"
        run_wrk proxy-new "$conns" "$proxy_pid"
        stop_proxy
    done
done

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "wrk -d${duration}s (-t1 at -c1, -t2 at -c64), $rounds rounds alternating${load_cpu[*]:+; wrk and nginx on CPU 0, the proxies on CPU 1}"
python3 - "$work/rows" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
def micros(text):
    for unit, scale in (("us", 1.0), ("ms", 1000.0), ("s", 1e6)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float("nan")
tick_us = 1e6 / float(sys.argv[2])
runs = {}
for line in open(sys.argv[1]):
    label, conns, rps, p50, requests, ticks = line.split()
    cpu = int(ticks) * tick_us / int(requests) if int(ticks) > 0 else float("nan")
    runs.setdefault((int(conns), label), []).append((float(rps), micros(p50), cpu))
print("| conns | config | req/s (rounds) | median | ratio to direct | p50 µs (rounds) | proxy CPU µs/request (rounds) |")
print("|---|---|---|---|---|---|---|")
for conns in sorted({c for c, _ in runs}):
    direct = statistics.median(r for r, _, _ in runs[(conns, "direct")])
    for label in ("direct", "nginx-proxy", "proxy-old", "proxy-new"):
        if (conns, label) not in runs:
            continue
        rows = runs[(conns, label)]
        med = statistics.median(r for r, _, _ in rows)
        cpu = " · ".join(f"{c:.1f}" for _, _, c in rows) if label != "direct" else "—"
        print(f"| -c{conns} | {label} | {' · '.join(f'{r:,.0f}' for r, _, _ in rows)} | {med:,.0f} | "
              f"{med / direct:.2f}x | {' · '.join(f'{p:.0f}' for _, p, _ in rows)} | {cpu} |")
PY
