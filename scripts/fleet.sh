#!/usr/bin/env bash
# A fleet on one machine, checked as one history (docs/fleet.md): N service hosts and M Locust
# worker hosts, each a network namespace with its own address on 10.77.0.0/24, joined by a bridge
# that lives in a namespace of its own (nothing is added to the machine's own network). Each service
# host runs examples/fleet/service.py on its loopback with `faultline proxy --instance host-K` in
# front of it on the host's address; the instances share one SQLite database and one rules file, and
# every sidecar journals to OUT/journals/. A Locust master (a host of its own) drives the workers
# for a bounded time; then the sidecars are stopped (journals flushed) and, with --expect,
# `faultline check` judges all the journals together, with an HTML report.
#
# Root only (iproute2). Exits 77 when network namespaces cannot be made here or Locust is missing,
# saying why; otherwise with `faultline check`'s exit code (0 without --expect). The namespaces and
# every process this script started are removed on exit and on SIGINT/SIGTERM.
set -euo pipefail

usage() {
    cat >&2 <<'EOF'
usage: fleet.sh --faultline PATH --locustfile FILE --out DIR [options]
  --service-hosts N        service hosts, each a service with a sidecar (default 2, at most 20)
  --worker-hosts M         Locust worker hosts (default 2, at most 20)
  --users U                Locust users over all workers (default 8, at most 1000)
  --run-time SECONDS       how long Locust runs (default 4, at most 600)
  --operations-per-user K  each user stops after K operations (default 100)
  --rules FILE             the sidecars' rules (default examples/fleet/rules.toml)
  --expect FILE            judge the merged journals with these [[expect]] tables
  --seed N                 sidecar K runs with seed N + K (default 1)
EOF
    exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
faultline="" locustfile="" out="" expect=""
service_hosts=2 worker_hosts=2 users=8 run_time=4 operations_per_user=100 seed=1
rules="$repo/examples/fleet/rules.toml"
while (($# > 0)); do
    (($# >= 2)) || usage
    case "$1" in
        --faultline) faultline=$2 ;;
        --locustfile) locustfile=$2 ;;
        --out) out=$2 ;;
        --service-hosts) service_hosts=$2 ;;
        --worker-hosts) worker_hosts=$2 ;;
        --users) users=$2 ;;
        --run-time) run_time=$2 ;;
        --operations-per-user) operations_per_user=$2 ;;
        --rules) rules=$2 ;;
        --expect) expect=$2 ;;
        --seed) seed=$2 ;;
        *) echo "fleet.sh: unknown option $1" >&2; usage ;;
    esac
    shift 2
done
[[ -n $faultline && -n $locustfile && -n $out ]] || usage
in_range() {  # name value max
    [[ $2 =~ ^[0-9]+$ ]] && (($2 >= 1 && $2 <= $3)) || { echo "fleet.sh: $1 must be 1..$3, got '$2'" >&2; exit 2; }
}
in_range --service-hosts "$service_hosts" 20
in_range --worker-hosts "$worker_hosts" 20
in_range --users "$users" 1000
in_range --run-time "$run_time" 600
in_range --operations-per-user "$operations_per_user" 1000000
[[ $seed =~ ^[0-9]+$ ]] || { echo "fleet.sh: --seed must be a number, got '$seed'" >&2; exit 2; }
for file in "$faultline" "$locustfile" "$rules" ${expect:+"$expect"}; do
    [[ -f $file ]] || { echo "fleet.sh: no such file: $file" >&2; exit 2; }
done

# Debian's python3-locust installs into the system Python, whatever python3 is first on PATH.
python=/usr/bin/python3
if ! "$python" -c 'import locust' 2>/dev/null; then
    echo "fleet.sh: SKIP: Locust is missing ($python -c 'import locust' failed; apt-get install python3-locust)" >&2
    exit 77
fi
if ((EUID != 0)) || ! command -v ip >/dev/null; then
    echo "fleet.sh: SKIP: network namespaces need root and iproute2 (uid $EUID, ip: $(command -v ip || echo missing))" >&2
    exit 77
fi

prefix="fl$$"  # namespaces and links are named after this process, so two fleets never collide
switch="$prefix-sw"
namespaces=()
pids=()

cleanup() {
    local pid tries
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for ((tries = 0; tries < 50; tries++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    pids=()
    for ns in "${namespaces[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
    namespaces=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

if ! ip netns add "$switch" 2>/dev/null; then
    echo "fleet.sh: SKIP: network namespaces are not permitted here (ip netns add failed: a container without CAP_SYS_ADMIN?)" >&2
    exit 77
fi
namespaces+=("$switch")
ip -n "$switch" link add br0 type bridge
ip -n "$switch" link set br0 up

# add_host NAME ADDRESS: a namespace with loopback and one veth to the switch's bridge.
add_host() {
    local ns="$prefix-$1"
    ip netns add "$ns"
    namespaces+=("$ns")
    ip -n "$ns" link set lo up
    ip -n "$switch" link add "veth-$1" type veth peer name eth0 netns "$ns"
    ip -n "$switch" link set "veth-$1" master br0 up
    ip -n "$ns" addr add "$2/24" dev eth0
    ip -n "$ns" link set eth0 up
}

rm -rf "$out"
mkdir -p "$out/journals" "$out/logs"
database="$out/charges.sqlite"
hosts=()
for ((k = 1; k <= service_hosts; k++)); do
    address="10.77.0.$((10 + k))"
    add_host "s$k" "$address"
    ip netns exec "$prefix-s$k" "$python" "$repo/examples/fleet/service.py" --database "$database" \
        --listen 127.0.0.1:9000 --instance "host-$k" >"$out/logs/service-$k.log" 2>&1 &
    pids+=($!)
    ip netns exec "$prefix-s$k" "$faultline" proxy --listen "$address:8080" --allow-non-loopback \
        --upstream 127.0.0.1:9000 --wait-upstream --instance "host-$k" --rules "$rules" --seed $((seed + k)) \
        --journal "$out/journals/host-$k.jsonl" --ready-file "$out/logs/sidecar-$k.ready.json" \
        >"$out/logs/sidecar-$k.log" 2>&1 &
    pids+=($!)
    hosts+=("http://$address:8080")
done
master_address=10.77.0.2
add_host m "$master_address"
for ((k = 1; k <= worker_hosts; k++)); do add_host "w$k" "10.77.0.$((100 + k))"; done

# A sidecar is ready once it wrote its ready file and its upstream answers through it.
for ((k = 1; k <= service_hosts; k++)); do
    for ((tries = 0; ; tries++)); do
        if [[ -s $out/logs/sidecar-$k.ready.json ]] &&
           ip netns exec "$prefix-w1" "$python" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" \
               "${hosts[k - 1]}/health" 2>/dev/null; then
            break
        fi
        if ((tries >= 100)); then
            echo "fleet.sh: sidecar host-$k did not become ready in 10 s; its log:" >&2
            cat "$out/logs/sidecar-$k.log" "$out/logs/service-$k.log" >&2
            exit 3
        fi
        sleep 0.1
    done
done

echo "fleet: $service_hosts service hosts (${hosts[*]}), $worker_hosts Locust worker hosts, $users users, ${run_time}s"
locust_env=(env "FLEET_HOSTS=$(IFS=,; echo "${hosts[*]}")" "FLEET_OPERATIONS_PER_USER=$operations_per_user"
            PYTHONDONTWRITEBYTECODE=1)
locust_started_ms=$(($(date +%s%N) / 1000000))
# The master stops the test after --run-time; `timeout` bounds it should it wait for workers forever.
ip netns exec "$prefix-m" timeout $((run_time + 60)) "${locust_env[@]}" "$python" -m locust -f "$locustfile" \
    --master --master-bind-host "$master_address" --expect-workers "$worker_hosts" --expect-workers-max-wait 30 \
    --headless --users "$users" --spawn-rate "$users" --run-time "${run_time}s" --stop-timeout 2 \
    --exit-code-on-error 0 --csv "$out/locust" --only-summary >"$out/logs/locust-master.log" 2>&1 &
master_pid=$!
pids+=($master_pid)
for ((k = 1; k <= worker_hosts; k++)); do
    ip netns exec "$prefix-w$k" timeout $((run_time + 60)) "${locust_env[@]}" "$python" -m locust -f "$locustfile" \
        --worker --master-host "$master_address" >"$out/logs/locust-worker-$k.log" 2>&1 &
    pids+=($!)
done
locust_status=0
wait "$master_pid" || locust_status=$?
locust_ms=$(($(date +%s%N) / 1000000 - locust_started_ms))
if ((locust_status != 0)); then
    echo "fleet.sh: the Locust master exited $locust_status; its log:" >&2
    tail -20 "$out/logs/locust-master.log" >&2
    exit 3
fi
cleanup  # SIGTERM: the sidecars flush their journals and exit

"$python" "$repo/examples/fleet/service.py" --database "$database" --ledger-report | tee "$out/ledger.txt"
attempts=$(cat "$out"/journals/*.jsonl | grep -c '"t_request"' || true)  # server events have none
journal_bytes=$(cat "$out"/journals/*.jsonl | wc -c)
requests_per_second=$(awk -F, '$2 == "Aggregated" { printf "%.0f", $10 }' "$out/locust_stats.csv")
echo "fleet: Locust ran ${locust_ms} ms; $requests_per_second req/s (Locust's aggregate); $attempts attempts journaled," \
     "$journal_bytes journal bytes ($((attempts > 0 ? journal_bytes / attempts : 0)) per attempt)"
[[ -n $expect ]] || exit 0

check_status=0
check_started_ms=$(($(date +%s%N) / 1000000))
"$faultline" check "$out"/journals/*.jsonl --expect "$expect" --report "html:$out/report.html" \
    --report "json:$out/report.json" >"$out/check.txt" 2>&1 || check_status=$?
check_ms=$(($(date +%s%N) / 1000000 - check_started_ms))
cat "$out/check.txt"
echo "fleet: faultline check over $service_hosts journals took ${check_ms} ms (exit $check_status); report: $out/report.html"
exit "$check_status"
