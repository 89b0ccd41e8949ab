#!/usr/bin/env bash
# Soak and scale run of the fault server (not a test; figures go to docs/reliability.md):
#   1. 10,000 concurrent keep-alive connections held open (RSS and fds sampled while held);
#   2. a mixed-fault soak (status, delay, reset, close, lost response, truncate, hang; only requests
#      carrying X-Soak, so the held connections are not faulted) at a bounded rate for DURATION seconds;
#   3. after the load stops: RSS and fds sampled twice, 5 s apart — fds must be back at the idle
#      figure and RSS must not grow between the two samples.
# Loopback only; kills only the PIDs it started.
#   bash bench/soak.sh FAULTLINE_BINARY [DURATION_SECONDS=600] [RATE=1000 requests/s]
set -euo pipefail
bin="$1"; duration="${2:-600}"; rate="${3:-1000}"
here="$(cd "$(dirname "$0")" && pwd)"
held=10000
workers=64
ulimit -n "$(ulimit -Hn)"  # server and client each need more than 10,000 descriptors
(( $(ulimit -n) > held + 512 )) || { echo "ulimit -n is $(ulimit -n): need more than $((held + 512))"; exit 2; }

source "$here/lib.sh"  # $work, pids, cleanup on exit, free_port

cat > "$work/rules.toml" <<'TOML'
[server]
threads = 2
max_connections = 12000
idle_timeout = "10m"        # the held connections stay open while they are measured
header_timeout = "10s"
journal_max_records = 100000  # memory keeps the first 100k; the file keeps every record

[[fault]]
name = "flaky-503"
kind = "status"
status = 503
retry_after = "1s"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.05

[[fault]]
name = "slow"
kind = "delay"
wait = "5ms"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.05

[[fault]]
name = "reset"
kind = "reset"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.02

[[fault]]
name = "close"
kind = "close"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.01

[[fault]]
name = "lost"
kind = "lost_response"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.01

[[fault]]
name = "truncate"
kind = "truncate"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.01

[[fault]]
name = "hang"
kind = "hang"
limit = "50ms"
[fault.match]
header_present = "X-Soak"   # the held connections' requests are not faulted
[fault.when]
probability = 0.005
TOML

"$bin" serve --rules "$work/rules.toml" --seed 1 --journal "$work/journal.jsonl" >"$work/out" 2>"$work/err" &
server=$!; pids+=("$server")
for _ in $(seq 1 100); do grep -q "serving on" "$work/out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -1 | cut -d: -f3)
[[ -n "$port" ]] || { cat "$work/err"; exit 3; }

sample() {  # $1 = label
    local rss fds
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
    fds=$(ls "/proc/$server/fd" | wc -l)
    printf '%-22s rss_kib=%-8s fds=%s\n' "$1" "$rss" "$fds"
    eval "rss_$2=$rss fds_$2=$fds"
}

sample "idle (start)" start

# 1. 10,000 connections held 8 s; sampled once all are open.
timeout 120 python3 "$here/soak_client.py" hold "$port" "$held" 8 >"$work/hold.out" &
client=$!; pids+=("$client")
for _ in $(seq 1 600); do grep -q "^held" "$work/hold.out" 2>/dev/null && break; sleep 0.1; done
cat "$work/hold.out"
sample "holding $held" hold
wait "$client" || { echo "hold client failed"; exit 4; }
sample "after hold" after_hold

# 2. The mixed-fault soak, sampled every quarter of the run.
timeout $((duration + 120)) python3 "$here/soak_client.py" soak "$port" "$duration" "$rate" "$workers" >"$work/soak.out" &
client=$!; pids+=("$client")
for q in 1 2 3; do
    sleep "$(awk -v d="$duration" 'BEGIN {print d / 4}')"
    sample "soak ${q}/4" "soak$q"
done
wait "$client" || { echo "soak client failed"; exit 4; }
cat "$work/soak.out"

# 3. After the load: two samples 5 s apart.
sleep 1
sample "after soak +1s" end1
sleep 5
sample "after soak +6s" end2
echo "journal file: $(wc -l < "$work/journal.jsonl") lines"

status=0
if (( fds_end2 > fds_start + 2 )); then echo "FAIL: fds grew from $fds_start to $fds_end2"; status=1; fi
if (( rss_end2 > rss_end1 + rss_end1 / 50 )); then echo "FAIL: RSS grew after the load stopped"; status=1; fi
(( status == 0 )) && echo "OK: fds back to $fds_end2 (idle $fds_start); RSS steady after the load ($rss_end1 -> $rss_end2 KiB)"
exit "$status"
