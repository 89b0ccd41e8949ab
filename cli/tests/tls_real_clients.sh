#!/usr/bin/env bash
# `faultline serve --tls` and `faultline proxy --tls` against real clients on 127.0.0.1: curl and
# Python's urllib trusting the run's CA (FAULTLINE_CA) are served, and a lost reply after the commit
# reaches them as a failed exchange with the effect committed in the journal; curl without the CA
# refuses the certificate, which the journal records as a failed handshake ("unknown ca"), not as an
# attempt. The proxy also reaches a TLS upstream, verified. Bad TLS options exit 2 with a message.
# Usage: tls_real_clients.sh FAULTLINE_BINARY
set -euo pipefail
faultline=$1
# shellcheck source=background_servers.sh
source "$(dirname "$0")/background_servers.sh"

cat > "$work/rules.toml" <<'TOML'
[[fault]]
name = "lost-after-commit"
kind = "lost_response"
then = "reset"
[fault.match]
method = "POST"
path = "/payments"
TOML

start "$work/serve.env" "$faultline" serve --tls --rules "$work/rules.toml" --journal "$work/serve.jsonl" --no-control-token
serve_pid=$FAULTLINE_PID
[[ $FAULTLINE_URL == https://127.0.0.1:* ]] || fail "serve URL $FAULTLINE_URL"
[[ -s $FAULTLINE_CA ]] || fail "no CA file at $FAULTLINE_CA"
ca=$FAULTLINE_CA

# Trusting the run's CA: served.
[[ $(curl -sS --cacert "$ca" "$FAULTLINE_URL/hello") == ok ]] || fail "curl --cacert did not get ok"
python3 - "$FAULTLINE_URL" "$ca" <<'PY' || fail "python urllib with the CA"
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2])
assert urllib.request.urlopen(sys.argv[1] + "/hello", context=ctx).read() == b"ok"
PY
# Not trusting it: curl refuses (60: certificate problem), and nothing reaches the service.
set +e
curl -sS "$FAULTLINE_URL/hello" 2>/dev/null; untrusted=$?
# The reply lost after the commit: curl sees the connection reset (56) with no reply. HTTP/1.1 here,
# where the fault acts on the connection; over h2 (curl's choice by ALPN otherwise) it resets only
# the stream: cli/tests/http2_real_clients.sh.
curl -sS --http1.1 --cacert "$ca" -X POST -d '{"amount":5}' "$FAULTLINE_URL/payments" 2>/dev/null; lost=$?
set -e
[[ $untrusted == 60 ]] || fail "curl without the CA exited $untrusted, expected 60"
[[ $lost == 56 || $lost == 35 ]] || fail "curl on a lost reply exited $lost, expected 56 (connection reset)"

kill -TERM "$serve_pid"; wait "$serve_pid" || fail "serve did not exit 0"
[[ ! -e $ca ]] || fail "the run's CA file was left behind"
python3 - "$work/serve.jsonl" <<'PY' || fail "serve's journal"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
attempts = [l for l in lines if "op" in l]
failed = [l for l in lines if l.get("event") == "tls_handshake_failed"]
assert len(attempts) == 3, attempts                       # curl, python, the POST; not the untrusted curl
assert len(failed) == 1 and "unknown ca" in failed[0]["detail"], failed
post = [a for a in attempts if a["method"] == "POST"][0]
assert post["effect"] == "committed" and post["fault"] == "lost_response" and post["outcome"] == "reset", post
PY

# The proxy in front of a plain serve: TLS to the client, the same journal.
start "$work/upstream.env" "$faultline" serve --no-control-token
upstream=${FAULTLINE_URL#http://}
start "$work/proxy.env" "$faultline" proxy --tls --upstream "$upstream" --journal "$work/proxy.jsonl" --no-control-token
[[ $FAULTLINE_URL == https://127.0.0.1:* ]] || fail "proxy URL $FAULTLINE_URL"
[[ $(curl -sS --cacert "$FAULTLINE_CA" "$FAULTLINE_URL/hello") == ok ]] || fail "curl through the TLS proxy"
kill -TERM "$FAULTLINE_PID"; wait "$FAULTLINE_PID" || fail "proxy did not exit 0"
grep -q '"target":"/hello"' "$work/proxy.jsonl" || fail "the proxy journaled no attempt"

# The proxy in front of a TLS upstream (serve --tls), verified with the upstream's CA, by name.
start "$work/tls-upstream.env" "$faultline" serve --tls --no-control-token
tls_upstream_pid=$FAULTLINE_PID upstream_ca=$FAULTLINE_CA
tls_upstream=https://localhost:${FAULTLINE_URL##*:}
start "$work/proxy2.env" "$faultline" proxy --upstream "$tls_upstream" --upstream-ca "$upstream_ca" --no-control-token
[[ $(curl -sS "$FAULTLINE_URL/hello") == ok ]] || fail "curl through the proxy to a TLS upstream"
kill -TERM "$FAULTLINE_PID"; wait "$FAULTLINE_PID" || fail "proxy did not exit 0"
kill -TERM "$tls_upstream_pid"; wait "$tls_upstream_pid" || fail "the TLS upstream did not exit 0"

# Bad options: exit 2 with a reason.
set +e
"$faultline" serve --tls-cert "$work/rules.toml" > /dev/null 2>&1; missing_key=$?
msg=$("$faultline" serve --tls-cert "$work/rules.toml" --tls-key "$work/rules.toml" 2>&1); not_pem=$?
set -e
[[ $missing_key == 2 ]] || fail "--tls-cert without --tls-key exited $missing_key"
[[ $not_pem == 2 && $msg == *"--tls-cert"* ]] || fail "a non-PEM certificate: exit $not_pem, '$msg'"
set +e
msg=$("$faultline" proxy --upstream https://127.0.0.1:9 --upstream-ca "$work/rules.toml" 2>&1); bad_ca=$?
"$faultline" proxy --upstream 127.0.0.1:9 --upstream-insecure > /dev/null 2>&1; insecure_plain=$?
set -e
[[ $bad_ca == 2 && $msg == *"--upstream-ca"* ]] || fail "a CA file that is not PEM: exit $bad_ca, '$msg'"
[[ $insecure_plain == 2 ]] || fail "--upstream-insecure without https:// exited $insecure_plain"
echo "tls real clients: ok"
