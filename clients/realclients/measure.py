"""Ground truth for the real-client matrix, measured without faultline.

A small HTTP/1.1 server of its own (standard library only: socketserver threads on 127.0.0.1:0)
plays one failure situation per run, starts the client's command line (matrix.toml, the same
placeholders `faultline score` fills), and records what reached it: every attempt with its
connection, the request on that connection, method, Idempotency-Key, what the server did, when it
started and ended, and whether it committed an effect; then the process's start, first request, exit
and status. A real refused connection (a port bound and not listening) cannot be seen by any server,
so there the client runs under `strace -f -e trace=connect` and its connect() calls are the attempts.

    python3 measure.py [--config GLOB] [--situation GLOB] [-j N] [--repeat N] [-o groundtruth.json]

Run from the repository root. The output is data: behaviours per situation (attempts, gaps, POST
re-sent, effects, Retry-After honoured, total time). What each behaviour means for a scorecard
property is mapping.py's business, not this file's.
"""

import argparse
import concurrent.futures
import email.utils
import fnmatch
import http.client
import io
import itertools
import json
import os
import platform
import re
import select
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import time
import tomllib
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))

# --- situations ------------------------------------------------------------------------------------
# A situation is a method and a script: (attempt number in the run, request number on its
# connection) -> action. Actions are tuples: ("respond", status, {headers}, delay_s, commit),
# ("close", commit) = FIN with no reply, ("reset", commit) = RST after reading, ("reset_before_read",)
# and ("reset_on_accept",) act before the request is read. "ra_date" in headers means: Retry-After as
# an HTTP-date that many seconds ahead (rounded up to the next whole second).

OK = ("respond", 200, {}, 0.0, True)
CREATED = ("respond", 201, {}, 0.0, True)


def first(action, then=OK):
    return lambda n, r: action if n == 1 else then


def always(action):
    return lambda n, r: action


def kept_alive_lost(n, r):
    if n == 1:
        return ("respond", 503, {}, 0.0, False)
    if n == 2:
        return ("reset", True)
    return CREATED


def keepalive_drop(n, r):
    # Every first request on a connection gets a 503 kept alive; every later request on the same
    # connection is read and the connection closed with no reply: a stack that silently resends on a
    # fresh connection makes attempts its retry counter never sees.
    return ("respond", 503, {}, 0.0, False) if r == 1 else ("close", False)


def status_situation(status, method="POST"):
    return {"method": method, "script": always(("respond", status, {}, 0.0, False))}


SITUATIONS = {
    "persistent-503": {"method": "PUT", "script": always(("respond", 503, {}, 0.0, False)), "repeat": True},
    "persistent-reset": {"method": "PUT", "script": always(("reset_before_read",)), "repeat": True},
    "connection-refused": {"method": "PUT", "refused": True},
    "keepalive-drop": {"method": "PUT", "script": keepalive_drop},
    "retry-after-429-seconds": {"method": "PUT",
                                "script": first(("respond", 429, {"Retry-After": "1"}, 0.0, False))},
    "retry-after-503-http-date": {"method": "PUT",
                                  "script": first(("respond", 503, {"ra_date": 2}, 0.0, False))},
    "retry-after-shorter-than-backoff": {"method": "PUT",
                                         "script": lambda n, r: ("respond", 503, {"Retry-After": "1"}, 0.0, False)
                                         if n <= 3 else OK},
    "retry-after-past-deadline": {"method": "PUT",
                                  "script": always(("respond", 503, {"Retry-After": "20"}, 0.0, False)),
                                  "time_limit": 12.0},
    "status-413-retry-after": {"method": "POST",
                               "script": first(("respond", 413, {"Retry-After": "1"}, 0.0, False), CREATED)},
    "lost-response-fresh": {"method": "POST", "script": first(("close", True), CREATED)},
    "reset-after-commit": {"method": "POST", "script": first(("reset", True), CREATED)},
    "committed-then-timeout": {"method": "POST", "script": first(("respond", 201, {}, 3.0, True), CREATED)},
    "lost-response-kept-alive": {"method": "POST", "script": kept_alive_lost},
    "reset-before-read": {"method": "PUT", "script": first(("reset_before_read",))},
    "reset-on-accept": {"method": "PUT", "script": first(("reset_on_accept",))},
    "slow-responses": {"method": "PUT", "script": always(("respond", 200, {}, 10.0, True))},
    "status-408": {"method": "PUT", "script": first(("respond", 408, {}, 0.0, False))},
    **{f"status-{s}": status_situation(s) for s in (400, 401, 403, 404, 405, 409, 413, 422, 501)},
}
PATHS = {"POST": "/payments", "PUT": "/kv/a"}
BODIES = {"POST": '{"amount":100}', "PUT": "v1"}
DEFAULT_TIME_LIMIT = 15.0
IDLE_POLL_S = 0.2


# --- the server ------------------------------------------------------------------------------------

class Run:
    """One situation against one client process: the attempts and effects, guarded by one lock."""

    def __init__(self, situation):
        self.situation = situation
        self.script = SITUATIONS[situation].get("script")
        self.lock = threading.Lock()
        self.attempts = []
        self.effect_keys = set()
        self.effects = 0
        self.connections = itertools.count(1)
        self.t0 = time.monotonic()
        self.stop = threading.Event()

    def now_ms(self):
        return round((time.monotonic() - self.t0) * 1000.0, 1)

    def begin(self, conn, request, method, key, key_seen=True):
        with self.lock:
            n = len(self.attempts) + 1
            attempt = {"n": n, "conn": conn, "request": request, "method": method, "key": key, "key_seen": key_seen,
                       "start_ms": self.now_ms(), "end_ms": None, "action": None, "status": None,
                       "committed": False, "effect": False}
            self.attempts.append(attempt)
            return attempt

    def commit(self, attempt):
        with self.lock:
            attempt["committed"] = True
            # The service honours Idempotency-Key: a replay of a committed key is no new effect.
            if attempt["key"] and attempt["key"] in self.effect_keys:
                return
            if attempt["key"]:
                self.effect_keys.add(attempt["key"])
            attempt["effect"] = True
            self.effects += 1

    def end(self, attempt, action, status=None, **extra):
        with self.lock:
            attempt.update(end_ms=self.now_ms(), action=action, status=status, **extra)


def read_request(sock, buffered):
    """One request from the socket: (method, headers, body bytes), or None at EOF. `buffered` carries
    bytes read past the end of the previous request."""
    data = buffered[0]
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    request_line, _, header_bytes = head.partition(b"\r\n")
    method = request_line.split(b" ", 1)[0].decode("latin-1")
    headers = http.client.parse_headers(io.BytesIO(header_bytes + b"\r\n\r\n"))
    if headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                rest += chunk
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                rest += chunk
            body += rest[:size]
            rest = rest[size + 2:]
            if size == 0:
                break
    else:
        length = int(headers.get("Content-Length", "0") or 0)
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
        body, rest = rest[:length], rest[length:]
    buffered[0] = rest
    return method, headers, body


def reset(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def wait_or_hangup(sock, delay, stop):
    """Waits `delay` seconds before a reply; returns "client_closed" as soon as the client closes its
    end, "abandoned" when the run stops first, None when the time is up."""
    until = time.monotonic() + delay
    watching = True
    while (left := until - time.monotonic()) > 0:
        if stop.is_set():
            return "abandoned"
        if not watching:
            stop.wait(min(left, IDLE_POLL_S))
            continue
        readable, _, _ = select.select([sock], [], [], min(left, IDLE_POLL_S))
        if readable:
            try:
                if not sock.recv(1, socket.MSG_PEEK):
                    return "client_closed"
            except OSError:
                return "client_closed"
            watching = False  # bytes of a next request: nothing more to learn before the reply
    return None


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        run = self.server.run
        sock = self.request
        conn = next(run.connections)
        requests_on_conn = 0
        buffered = [b""]
        if run.script(len(run.attempts) + 1, 1)[0] == "reset_on_accept":
            attempt = run.begin(conn, 0, None, None, False)
            reset(sock)
            run.end(attempt, "reset_on_accept")
            return
        while True:
            if not buffered[0]:
                readable, _, _ = select.select([sock], [], [], IDLE_POLL_S)
                if not readable:
                    if run.stop.is_set():
                        return
                    continue
            n_next = len(run.attempts) + 1
            planned = run.script(n_next, requests_on_conn + 1)
            if planned[0] == "reset_before_read" and requests_on_conn == 0:
                try:
                    peek = sock.recv(65536, socket.MSG_PEEK)
                except OSError:
                    peek = b""
                if not peek:
                    return  # the client closed an idle connection: no attempt
                method = peek.split(b" ", 1)[0].decode("latin-1")
                key, key_seen = None, b"\r\n\r\n" in peek
                if key_seen:  # the whole head arrived: its key is known though nothing is processed
                    head = peek.split(b"\r\n\r\n", 1)[0].partition(b"\r\n")[2]
                    key = http.client.parse_headers(io.BytesIO(head + b"\r\n\r\n")).get("Idempotency-Key")
                attempt = run.begin(conn, 1, method, key, key_seen)
                reset(sock)
                run.end(attempt, "reset_before_read")
                return
            try:
                request = read_request(sock, buffered)
            except OSError:
                return
            if request is None:
                return
            method, headers, _ = request
            requests_on_conn += 1
            attempt = run.begin(conn, requests_on_conn, method, headers.get("Idempotency-Key"))
            action = run.script(attempt["n"], requests_on_conn)
            if action[0] == "reset_on_accept":  # only meaningful for a fresh connection
                action = OK
            if action[0] == "close":
                if action[1] and method in ("POST", "PUT"):
                    run.commit(attempt)
                run.end(attempt, "close")
                sock.close()
                return
            if action[0] in ("reset", "reset_before_read"):
                if action[0] == "reset" and action[1] and method in ("POST", "PUT"):
                    run.commit(attempt)
                run.end(attempt, action[0])
                reset(sock)
                return
            _, status, extra_headers, delay, commit = action
            if commit and method in ("POST", "PUT"):
                run.commit(attempt)
            extra = {}
            headers_out = {"Content-Type": "text/plain", "Connection": "keep-alive"}
            for name, value in extra_headers.items():
                if name == "ra_date":
                    due_epoch = float(int(time.time() + value) + 1)
                    headers_out["Retry-After"] = email.utils.formatdate(due_epoch, usegmt=True)
                    extra["retry_after"] = headers_out["Retry-After"]
                    extra["retry_after_due_ms"] = round(run.now_ms() + (due_epoch - time.time()) * 1000.0, 1)
                else:
                    headers_out[name] = value
                    if name == "Retry-After":
                        extra["retry_after"] = value
                        extra["retry_after_due_ms"] = round(run.now_ms() + float(value) * 1000.0, 1)
            if delay:
                gone = wait_or_hangup(sock, delay, run.stop)
                if gone:
                    # The attempt ended when the client gave up (its timeout) or the run stopped.
                    run.end(attempt, gone, status)
                    sock.close()
                    return
            body = f"{status}\n".encode()
            head = f"HTTP/1.1 {status} {http.client.responses.get(status, 'Status')}\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in headers_out.items())
            head += f"Content-Length: {len(body)}\r\n\r\n"
            try:
                sock.sendall(head.encode() + body)
            except OSError:
                run.end(attempt, "respond_failed", status)
                return
            # The due time counts from when the reply left, as a client counts it.
            if "retry_after_due_ms" in extra and "ra_date" not in extra_headers:
                extra["retry_after_due_ms"] = round(run.now_ms() + float(extra["retry_after"]) * 1000.0, 1)
            run.end(attempt, "respond", status, **extra)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, run):
        self.run = run
        super().__init__(("127.0.0.1", 0), Handler)


# --- running a client ------------------------------------------------------------------------------

def fill(template, values):
    out = []
    for word in template:
        for name, value in values.items():
            word = word.replace("{" + name + "}", value)
        out.append(word)
    return out


def spawn(argv, time_limit):
    """Starts argv in its own process group; returns (returncode or None, killed, exit monotonic)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=time_limit)
        return proc.returncode, False, time.monotonic(), err.decode(errors="replace")[-300:]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the group of the process this run started, by its id
        _, err = proc.communicate()
        return proc.returncode, True, time.monotonic(), err.decode(errors="replace")[-300:]


def run_once(config, situation, timeout_s, deadline):
    spec = SITUATIONS[situation]
    method = spec["method"]
    time_limit = spec.get("time_limit", DEFAULT_TIME_LIMIT)
    values = {"method": method, "path": PATHS[method], "body": BODIES[method], "timeout": str(timeout_s),
              "key": str(uuid.uuid4()), "deadline": deadline or "5", "op": "0", "client": "0", "n": "0"}
    run = Run(situation)
    if spec.get("refused"):
        return run_refused(config, run, values, time_limit)
    server = Server(run)
    port = server.server_address[1]
    values["url"] = f"http://127.0.0.1:{port}"
    accept = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    accept.start()
    run.t0 = time.monotonic()
    code, killed, exited, err = spawn(fill(config["template"], values), time_limit)
    exit_ms = round((exited - run.t0) * 1000.0, 1)
    run.stop.set()
    server.shutdown()
    accept.join()
    server.server_close()  # joins every connection's thread: all attempts are recorded
    return summarize(run, method, exit_ms, code, killed, err)


def run_refused(config, run, values, time_limit):
    # Bound, never listening: every connect() is refused by the kernel. Only strace sees the attempts.
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    values["url"] = f"http://127.0.0.1:{port}"
    trace = f"/tmp/realclients-strace-{os.getpid()}-{threading.get_ident()}.txt"
    argv = ["strace", "-f", "-qq", "-ttt", "-e", "trace=connect", "-o", trace] + fill(config["template"], values)
    wall0 = time.time()
    run.t0 = time.monotonic()
    code, killed, exited, err = spawn(argv, time_limit)
    exit_ms = round((exited - run.t0) * 1000.0, 1)
    holder.close()
    pattern = re.compile(r"^\d+\s+(\d+\.\d+) connect\(\d+, \{sa_family=AF_INET, sin_port=htons\(" + str(port) + r"\)")
    with open(trace) as f:
        for line in f:
            m = pattern.match(line)
            if m:
                t = round((float(m.group(1)) - wall0) * 1000.0, 1)
                run.attempts.append({"n": len(run.attempts) + 1, "conn": len(run.attempts) + 1, "request": 0,
                                     "method": values["method"], "key": None, "key_seen": False, "start_ms": t, "end_ms": t,
                                     "action": "refused", "status": None, "committed": False, "effect": False})
    os.unlink(trace)
    return summarize(run, values["method"], exit_ms, code, killed, err)


def summarize(run, method, exit_ms, code, killed, err):
    attempts = run.attempts
    gaps = [round(b["start_ms"] - a["end_ms"], 1) for a, b in zip(attempts, attempts[1:])]
    ra = []
    for a, b in zip(attempts, attempts[1:]):
        if "retry_after_due_ms" in a:
            ra.append({"after": a["n"], "value": a["retry_after"], "due_ms": a["retry_after_due_ms"],
                       "next_ms": b["start_ms"], "early_ms": round(a["retry_after_due_ms"] - b["start_ms"], 1)})
    # Only attempts whose head was read say which key they carried (not a reset on accept or a refusal).
    keys = [a["key"] for a in attempts if a["key_seen"]]
    post_attempts = [a for a in attempts if a["method"] == "POST"]
    resent_after_commit = any(a["committed"] for a in post_attempts[:-1])
    return {
        "attempts": len(attempts),
        "methods": sorted({a["method"] for a in attempts if a["method"]}),
        "gaps_ms": gaps,
        "post_resent_after_commit": resent_after_commit,
        "effects": run.effects,
        "keys": "none" if not any(keys) else ("stable" if len(set(keys)) == 1 else "changed"),
        "retry_after": ra,
        "first_request_ms": attempts[0]["start_ms"] if attempts else None,
        "exit_ms": exit_ms,
        "total_from_first_request_ms": round(exit_ms - attempts[0]["start_ms"], 1) if attempts else None,
        "exit_code": code,
        "killed_at_time_limit": killed,
        "success": bool(attempts) and attempts[-1]["action"] == "respond" and (attempts[-1]["status"] or 0) < 300,
        "trace": [[a["n"], a["conn"], a["request"], a["method"], a["start_ms"], a["end_ms"],
                   a["action"] if a["status"] is None else f"{a['action']} {a['status']}",
                   "effect" if a["effect"] else ("committed" if a["committed"] else "")] for a in attempts],
        "stderr_tail": err.strip().splitlines()[-1][:200] if err.strip() else "",
    }


def dumps(doc):
    """JSON with one line per run: readable in a diff, a tenth of the size of an indented dump."""
    top = {k: v for k, v in doc.items() if k != "configs"}
    out = json.dumps(top, indent=1)[:-2] + ',\n "configs": {'
    for ci, (name, config) in enumerate(doc["configs"].items()):
        out += ("," if ci else "") + f"\n  {json.dumps(name)}: {{\n   \"template\": {json.dumps(config['template'])},"
        out += f"\n   \"score\": {json.dumps(config['score'])},"
        if "measured" in config:
            out += f"\n   \"measured\": {json.dumps(config['measured'])},"
        out += "\n   \"situations\": {"
        for si, (situation, runs) in enumerate(config["situations"].items()):
            out += ("," if si else "") + f"\n    {json.dumps(situation)}: ["
            out += ",".join("\n     " + json.dumps(r, separators=(",", ":")) for r in runs) + "]"
        out += "}}"
    return out + "}}\n"


def tool_versions():
    def first_line(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "missing"
    lock = json.load(open(os.path.join(HERE, "package-lock.json")))["packages"]
    npm = {name: lock[f"node_modules/{name}"]["version"] for name in ("got", "axios", "axios-retry", "fetch-retry")}
    py = subprocess.run(["/usr/bin/python3", "-c", "import urllib3, requests; print(urllib3.__version__, requests.__version__)"],
                        capture_output=True, text=True).stdout.split()
    return {"curl": first_line(["curl", "--version"]), "wget": first_line(["wget", "--version"]),
            "node": first_line(["node", "--version"]), "python3": first_line(["/usr/bin/python3", "--version"]),
            "urllib3": py[0] if py else "missing", "requests": py[1] if len(py) > 1 else "missing", **npm}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", action="append", help="glob on config names (repeatable)")
    p.add_argument("--situation", action="append", help="glob on situation names (repeatable)")
    p.add_argument("-j", type=int, default=3, help="runs at a time")
    p.add_argument("--repeat", type=int, default=8, help="runs of each persistent situation (jitter, backoff)")
    p.add_argument("--timeout", default="1", help="what {timeout} is filled with (seconds)")
    p.add_argument("-o", "--output", default=os.path.join(HERE, "groundtruth.json"))
    a = p.parse_args()
    matrix = tomllib.load(open(os.path.join(HERE, "matrix.toml"), "rb"))["config"]
    configs = [c for c in matrix if not a.config or any(fnmatch.fnmatch(c["name"], g) for g in a.config)]
    situations = [s for s in SITUATIONS if not a.situation or any(fnmatch.fnmatch(s, g) for g in a.situation)]
    jobs = []
    for c in configs:
        deadline = c["score"][c["score"].index("--deadline") + 1].rstrip("s") if "--deadline" in c["score"] else None
        for s in situations:
            for i in range(a.repeat if SITUATIONS[s].get("repeat") else 1):
                jobs.append((c, s, i, deadline))
    results = {}
    done = 0
    # The repeated (timing) runs go one at a time after the others: a second client process on the
    # same two cores would add its own spread to the gaps that jitter is judged on.
    for batch, workers in (([j for j in jobs if not SITUATIONS[j[1]].get("repeat")], a.j),
                           ([j for j in jobs if SITUATIONS[j[1]].get("repeat")], 1)):
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_once, c, s, a.timeout, d): (c["name"], s, i) for c, s, i, d in batch}
            for future in concurrent.futures.as_completed(futures):
                name, s, i = futures[future]
                r = future.result()
                results.setdefault(name, {}).setdefault(s, []).append((i, r))
                done += 1
                print(f"[{done}/{len(jobs)}] {name} {s}#{i}: {r['attempts']} attempts, gaps {r['gaps_ms']}, "
                      f"exit {r['exit_code']}{' killed' if r['killed_at_time_limit'] else ''}", file=sys.stderr)
    previous = json.load(open(a.output)) if os.path.exists(a.output) else {}
    out_configs = previous.get("configs", {})
    for c in configs:
        entry = out_configs.get(c["name"], {}) if a.situation else {}
        entry["template"] = c["template"]
        entry["score"] = c["score"]
        entry.setdefault("measured", [])
        entry["measured"].append({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                  "situations": a.situation or ["*"], "loadavg_at_end": round(os.getloadavg()[0], 1)})
        entry.setdefault("situations", {})
        for s, runs in results.get(c["name"], {}).items():
            entry["situations"][s] = [r for _, r in sorted(runs, key=lambda x: x[0])]
        out_configs[c["name"]] = entry
    doc = {
        "about": "Ground truth for the real-client matrix, measured by clients/realclients/measure.py "
                 "(its own stdlib HTTP server on 127.0.0.1, no faultline; strace -f -e trace=connect for "
                 "the refused connection). Times in ms from the client process's start.",
        "measured": {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.platform(),
                     "cores": os.cpu_count(), "loadavg_at_end": os.getloadavg()[0], "timeout_s": a.timeout,
                     "repeat": a.repeat, "parallel_runs": a.j, "repeated_runs": "one at a time", "tools": tool_versions()},
        "situations": {s: {"method": v["method"], "repeat": bool(v.get("repeat"))} for s, v in SITUATIONS.items()},
        "configs": out_configs,
    }
    with open(a.output, "w") as f:
        f.write(dumps(doc))
    print(f"wrote {a.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
