#!/usr/bin/env bash
# Instructions the fault server spends per request, counted by callgrind: repeatable whatever else runs
# on the machine, so two builds compare as a ratio even on a busy one. One server thread, a rule that
# never fires (the hot path), wrk -t1 -c1 for 4 s; a start-and-stop with no request is subtracted.
#   bash bench/server_instructions.sh FAULTLINE_BINARY [LABEL]    (needs valgrind and wrk)
set -euo pipefail
bin="$1"; label="${2:-$1}"; work=$(mktemp -d)
cat > "$work/rules.toml" <<'T'
[server]
threads = 1
[[fault]]
kind = "status"
status = 500
[fault.match]
path = "/never-requested"
T
run() {  # $1 = seconds of wrk (0 = none)
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" "$bin" serve --rules "$work/rules.toml" --port 0 > "$work/out.$1" 2>"$work/err.$1" &
  local pid=$!
  # Bounded wait for the "serving on" line (valgrind starts slowly): at most 20 s.
  for i in $(seq 1 200); do grep -q "serving on" "$work/out.$1" 2>/dev/null && break; sleep 0.1; done
  local url; url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out.$1" | head -1)
  local reqs=0
  if [[ "$1" != 0 ]]; then
    reqs=$(wrk -t1 -c1 -d"$1"s "$url/" | awk '/requests in/ {print $1}')
  fi
  kill -TERM "$pid"; wait "$pid" || true
  local ir; ir=$(grep -h "^summary:" "$work"/cg.$1* | awk '{s+=$2} END {print s}')
  echo "$reqs $ir"
}
read r0 i0 < <(run 0)
read r1 i1 < <(run 4)
echo "$label requests=$r1 instr_per_request=$(( (i1 - i0) / r1 ))"
rm -rf "$work"
