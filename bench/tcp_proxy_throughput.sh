#!/usr/bin/env bash
# `faultline proxy --mode tcp` throughput on loopback (toxics off unless TOXICS): MB MiB pushed up
# (client -> service) and pulled down (service -> client) by bench/tcp_pipe.py, straight to its
# server and through the proxy, in turn per round so background load hits both alike. Prints each
# transfer's MiB/s, the medians, their ratio, and the proxy's CPU time (user + system, from /proc)
# per GiB moved.
# Loopback only; ROUNDS x 4 transfers, each bounded by tcp_pipe.py's 60 s socket timeouts.
#   FAULTLINE=build/release/cli/faultline bash bench/tcp_proxy_throughput.sh [MB, default 512]
#   ROUNDS=N (default 5), TOXICS=file.toml (default none: toxics off)
set -euo pipefail
cd "$(dirname "$0")/.."
mib="${1:-512}"
rounds="${ROUNDS:-5}"
faultline="${FAULTLINE:?FAULTLINE=/path/to/faultline}"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

source bench/lib.sh  # $work, pids, cleanup on exit, free_port

touch "$work/server.out" "$work/proxy.out"  # polled before the children may have opened them
python3 bench/tcp_pipe.py server >"$work/server.out" &
pids+=("$!")
for _ in $(seq 1 50); do [[ -s "$work/server.out" ]] && break; sleep 0.1; done
service_port="$(head -1 "$work/server.out")"

toxics_args=()
[[ -n "${TOXICS:-}" ]] && toxics_args=(--rules "$TOXICS")
"$faultline" proxy --mode tcp --upstream "127.0.0.1:$service_port" --seed 1 "${toxics_args[@]}" \
    >"$work/proxy.out" 2>"$work/proxy.err" &
proxy_pid=$!
pids+=("$proxy_pid")
proxy_port=""
for _ in $(seq 1 50); do
    proxy_port="$(sed -n 's/^faultline proxy on tcp:\/\/127.0.0.1:\([0-9]*\) .*/\1/p' "$work/proxy.out")"
    [[ -n "$proxy_port" ]] && break
    sleep 0.1
done
[[ -n "$proxy_port" ]] || { echo "the proxy did not start:" >&2; cat "$work/proxy.err" >&2; exit 3; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$proxy_pid/stat"; }
rate() { python3 -c "print(f'{$mib / $1:.0f}')"; }
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A runs
ticks_before="$(cpu_ticks)"
for round in $(seq 1 "$rounds"); do
    for what in up down; do
        direct="$(python3 bench/tcp_pipe.py client "$service_port" "$what" "$mib")"
        proxied="$(python3 bench/tcp_pipe.py client "$proxy_port" "$what" "$mib")"
        runs[direct_$what]+="$(rate "$direct") "
        runs[proxy_$what]+="$(rate "$proxied") "
        echo "round $round $what: direct $(rate "$direct") MiB/s, proxy $(rate "$proxied") MiB/s"
    done
done
ticks="$(( $(cpu_ticks) - ticks_before ))"
hz="$(getconf CLK_TCK)"

echo
echo "$mib MiB per transfer, $rounds rounds, toxics: ${TOXICS:-none}, load before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
for what in up down; do
    d="$(echo ${runs[direct_$what]} | median)"
    p="$(echo ${runs[proxy_$what]} | median)"
    echo "$what: direct median $d MiB/s (${runs[direct_$what]% }), proxy median $p MiB/s (${runs[proxy_$what]% }), ratio $(python3 -c "print(f'{$p / $d:.2f}')")"
done
python3 -c "print(f'proxy CPU: {$ticks / $hz:.2f} s for {2 * $rounds * $mib / 1024:.1f} GiB = {$ticks / $hz / (2 * $rounds * $mib / 1024):.2f} s/GiB')"
