#!/usr/bin/env bash
# HTTP/2 against real clients on 127.0.0.1: curl by prior knowledge (h2c) against `faultline serve`
# and curl over TLS (h2 chosen by ALPN, trusting the run's CA) against `faultline serve --tls`, on
# the same ports HTTP/1.1 is served on. Both see a 503 rule's fault and the service's reply, and the
# journal records each attempt with its protocol, connection and stream id. A lost reply after the
# commit reaches curl as a stream reset (RST_STREAM), committed in the journal; `faultline proxy`
# serves h2c downstream in front of an HTTP/1.1 upstream.
# Usage: http2_real_clients.sh FAULTLINE_BINARY
set -euo pipefail
faultline=$1
# shellcheck source=background_servers.sh
source "$(dirname "$0")/background_servers.sh"

curl -V | grep -q HTTP2 || { echo "this curl has no HTTP/2: skipped"; exit 77; }

cat > "$work/rules.toml" <<'TOML'
[[fault]]
name = "unavailable"
kind = "status"
status = 503
retry_after = "1s"
[fault.match]
path = "/flaky"

[[fault]]
name = "lost-after-commit"
kind = "lost_response"
then = "reset"
[fault.match]
method = "POST"
path = "/payments"
TOML

# status and protocol version of one curl exchange ("503 2"), with the exit code on failure.
fetch() { curl -sS -o /dev/null -w '%{http_code} %{http_version}' "$@"; }

# Checks a journal: each named target journaled with the protocol, a stream id, the expected status.
check_journal() {
    python3 - "$@" <<'PY'
import json, sys
path, protocol = sys.argv[1], sys.argv[2]
attempts = [l for l in map(json.loads, open(path)) if "op" in l]
by_target = {}
for a in attempts:
    by_target.setdefault(a["target"], []).append(a)
for a in attempts:
    assert a.get("protocol") == protocol, a
    assert isinstance(a.get("stream"), int) and a["stream"] % 2 == 1, a
flaky = by_target["/flaky"][0]
assert flaky["status"] == 503 and flaky["fault"] == "status" and flaky["retry_after_ms"] == 1000, flaky
assert by_target["/hello"][0]["status"] == 200, by_target["/hello"]
lost = by_target["/payments"][0]
assert lost["effect"] == "committed" and lost["outcome"] == "reset", lost
assert lost["stream_reset"] == "INTERNAL_ERROR", lost
PY
}

# h2c by prior knowledge against the plain port.
start "$work/serve.env" "$faultline" serve --rules "$work/rules.toml" --journal "$work/h2c.jsonl" --no-control-token
serve_pid=$FAULTLINE_PID
[[ $(fetch --http2-prior-knowledge "$FAULTLINE_URL/flaky") == "503 2" ]] || fail "h2c: /flaky was not a 503 over HTTP/2"
[[ $(fetch --http2-prior-knowledge "$FAULTLINE_URL/hello") == "200 2" ]] || fail "h2c: /hello was not a 200 over HTTP/2"
[[ $(fetch --http1.1 "$FAULTLINE_URL/hello") == "200 1.1" ]] || fail "HTTP/1.1 on the same port"
set +e
curl -sS --http2-prior-knowledge -X POST -d '{"amount":5}' "$FAULTLINE_URL/payments" 2>/dev/null; lost=$?
set -e
# 92: HTTP/2 stream error (the RST_STREAM), the connection itself unharmed.
[[ $lost == 92 ]] || fail "h2c: curl on a lost reply exited $lost, expected 92 (stream reset)"
kill -TERM "$serve_pid"; wait "$serve_pid" || fail "serve did not exit 0"
grep -v '"protocol"' "$work/h2c.jsonl" | grep -q '"target":"/hello"' || fail "the HTTP/1.1 attempt was journaled with a protocol"
grep '"protocol"' "$work/h2c.jsonl" > "$work/h2c-only.jsonl"
check_journal "$work/h2c-only.jsonl" h2c || fail "the h2c journal"

# h2 by ALPN over TLS, trusting the run's CA.
start "$work/tls.env" "$faultline" serve --tls --rules "$work/rules.toml" --journal "$work/h2.jsonl" --no-control-token
serve_pid=$FAULTLINE_PID
ca=$FAULTLINE_CA
[[ $(fetch --http2 --cacert "$ca" "$FAULTLINE_URL/flaky") == "503 2" ]] || fail "h2: /flaky was not a 503 over HTTP/2"
[[ $(fetch --http2 --cacert "$ca" "$FAULTLINE_URL/hello") == "200 2" ]] || fail "h2: /hello was not a 200 over HTTP/2"
[[ $(fetch --http1.1 --cacert "$ca" "$FAULTLINE_URL/hello") == "200 1.1" ]] || fail "HTTP/1.1 on the same TLS port"
set +e
curl -sS --http2 --cacert "$ca" -X POST -d '{"amount":5}' "$FAULTLINE_URL/payments" 2>/dev/null; lost=$?
set -e
[[ $lost == 92 ]] || fail "h2: curl on a lost reply exited $lost, expected 92 (stream reset)"
kill -TERM "$serve_pid"; wait "$serve_pid" || fail "serve --tls did not exit 0"
grep '"protocol"' "$work/h2.jsonl" > "$work/h2-only.jsonl"
check_journal "$work/h2-only.jsonl" h2 || fail "the h2 journal"

# The proxy: h2c downstream, HTTP/1.1 to its upstream, the fault on the downstream stream.
start "$work/upstream.env" "$faultline" serve --no-control-token
upstream=${FAULTLINE_URL#http://}
start "$work/proxy.env" "$faultline" proxy --upstream "$upstream" --rules "$work/rules.toml" \
    --journal "$work/proxy.jsonl" --no-control-token
[[ $(curl -sS --http2-prior-knowledge "$FAULTLINE_URL/hello") == ok ]] || fail "h2c through the proxy"
[[ $(fetch --http2-prior-knowledge "$FAULTLINE_URL/flaky") == "503 2" ]] || fail "h2c: the proxy's fault"
kill -TERM "$FAULTLINE_PID"; wait "$FAULTLINE_PID" || fail "proxy did not exit 0"
python3 - "$work/proxy.jsonl" <<'PY' || fail "the proxy's journal"
import json, sys
attempts = [l for l in map(json.loads, open(sys.argv[1])) if "op" in l]
hello = [a for a in attempts if a["target"] == "/hello"][0]
assert hello["protocol"] == "h2c" and hello["stream"] == 1 and hello["upstream_status"] == 200, hello
PY
echo "http2 real clients: ok"
