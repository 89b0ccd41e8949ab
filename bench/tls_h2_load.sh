#!/usr/bin/env bash
# TLS handshakes/s and HTTP/2 requests/s of `faultline serve --tls`, side by side with nginx serving a
# tiny static 200 over TLS and h2 (bench/nginx-tls.conf), both with the same EC P-256 certificate, TLS
# 1.3 and two workers, in the same run. h2load (Debian nghttp2-client) drives both:
#   handshakes: every client one connection, one request (-c N -n N), so each request is a full
#               handshake (neither server resumes sessions here); figure: connections/s;
#   h2:         16 connections, 10 streams each in flight, over TLS; figure: requests/s.
# The fault server runs a rule that never fires (the hot path), the journal in memory. Rounds
# alternate the two servers; the table gives each round and the median ratio.
#   bash bench/tls_h2_load.sh [h2 requests per round, default 200000]   (ROUNDS=N, default 3;
#   HANDSHAKES=N connections per handshake round, default 2000)
# FAULTLINE=/path/to/faultline skips the Release build and measures that binary.
set -euo pipefail
cd "$(dirname "$0")/.."
requests="${1:-200000}"
rounds="${ROUNDS:-3}"
handshakes="${HANDSHAKES:-2000}"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

bash scripts/install-deps.sh --bench
source bench/lib.sh  # $work, pids, cleanup on exit, free_port, release_faultline
faultline="$(release_faultline)"
ulimit -n "$(ulimit -Hn)"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

cat > "$work/rules.toml" <<'TOML'
[server]
threads = 2
journal_max_records = 20000000
max_connections = 10000

[[fault]]
name = "never"
kind = "status"
status = 500
[fault.match]
path = "/never-requested"
TOML

wait_for_port() {
    for _ in $(seq 1 100); do
        [[ "$(python3 -c "import socket; s = socket.socket(); print(s.connect_ex(('127.0.0.1', $1)))")" == 0 ]] && return 0
        sleep 0.1
    done
    echo "server on port $1 did not start" >&2
    cat "$work"/*.err >&2
    exit 3
}

start_faultline() {
    port="$(free_port)"
    "$faultline" serve --rules "$work/rules.toml" --seed 1 --port "$port" --tls-cert "$work/cert.pem" \
        --tls-key "$work/key.pem" >"$work/serve.out" 2>"$work/serve.err" &
    server_pid=$!
    pids+=("$server_pid")
    wait_for_port "$port"
}

start_nginx() {
    port="$(free_port)"
    mkdir -p "$work/nginx"
    sed -e "s#@PORT@#$port#g" -e "s#@DIR@#$work/nginx#g" -e "s#@CERT@#$work/cert.pem#g" -e "s#@KEY@#$work/key.pem#g" \
        bench/nginx-tls.conf >"$work/nginx/nginx.conf"
    nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e stderr -g 'daemon off;' 2>"$work/nginx.err" &
    server_pid=$!
    pids+=("$server_pid")
    wait_for_port "$port"
}

stop_server() {
    kill -TERM "$server_pid"
    wait "$server_pid" || true
}

# h2load's "finished in Xs, N req/s" figure, and whether every request succeeded.
h2load_rate() {
    local out
    out="$(timeout 120 h2load "$@" 2>&1)" || true
    local rate ok
    rate="$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")"
    ok="$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")"
    echo "${rate:-0} ${ok:-0}"
}

measure() {  # prints "handshakes/s h2-req/s"
    local hs h2
    read -r hs hs_ok < <(h2load_rate -n "$handshakes" -c "$handshakes" -m 1 -t 2 "https://127.0.0.1:$port/")
    read -r h2 h2_ok < <(h2load_rate -n "$requests" -c 16 -m 10 -t 2 "https://127.0.0.1:$port/")
    if [[ "$hs_ok" != "$handshakes" || "$h2_ok" != "$requests" ]]; then
        echo "not every request succeeded: handshakes $hs_ok/$handshakes, h2 $h2_ok/$requests" >&2
    fi
    echo "$hs $h2"
}

printf 'machine: %s cores, load before %s; h2load %s\n' "$(nproc)" "$load_before" "$(h2load --version | head -1)"
printf '%-6s %-10s %14s %14s\n' round server "handshakes/s" "h2 req/s"
results=()
for round in $(seq 1 "$rounds"); do
    start_faultline
    read -r f_hs f_h2 < <(measure)
    stop_server
    start_nginx
    read -r n_hs n_h2 < <(measure)
    stop_server
    printf '%-6s %-10s %14s %14s\n' "$round" faultline "$f_hs" "$f_h2" "$round" nginx "$n_hs" "$n_h2"
    results+=("$(python3 -c "print($f_hs / $n_hs, $f_h2 / $n_h2)")")
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [tuple(map(float, line.split())) for line in sys.stdin if line.strip()]
print("median ratio faultline/nginx: handshakes %.2fx, h2 requests %.2fx" %
      (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)))'
printf 'load after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
