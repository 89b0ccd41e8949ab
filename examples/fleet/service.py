#!/usr/bin/env python3
"""One instance of the fleet's charge service (docs/fleet.md), behind a faultline sidecar.

POST /charge with a JSON body {"order": ..., "amount": ...} charges the order once per request and
answers 201 with the charge. The instances of the fleet share one SQLite database (a file in the
fleet's shared folder, as instances of a real service share their database), so an
Idempotency-Key already executed on any instance is answered with the stored charge and
`Idempotent-Replayed: true` (Stripe's header, which the sidecar journals as a replay, not a
commit); a key reused with another body is 422. Requests without a key are charged every time:
that is how a client that resends a lost POST charges twice.

GET /health answers 200. `--ledger-report` prints the orders charged more than once, the service's
own truth to hold faultline's verdict against.
"""
import argparse
import http.server
import json
import sqlite3
import sys
import threading
import uuid

SCHEMA = """
CREATE TABLE IF NOT EXISTS charges (
    id TEXT PRIMARY KEY,
    idempotency_key TEXT UNIQUE,
    order_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    instance TEXT NOT NULL
)"""
# Instances write the same file at once; a writer waits for the lock this long before failing.
BUSY_TIMEOUT_MS = 10000
MAX_BODY_BYTES = 64 * 1024


def open_database(path):
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(SCHEMA)
    return db


class ChargeHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the sidecar pools its upstream connections
    instance = "service"
    database = None
    local = threading.local()

    def log_message(self, *args):
        pass  # the sidecar's journal is the record of every request

    def db(self):
        if not hasattr(self.local, "db"):
            self.local.db = open_database(self.database)
        return self.local.db

    def reply(self, status, document, replayed=False):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if replayed:
            self.send_header("Idempotent-Replayed", "true")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.reply(200, {"instance": self.instance})
        else:
            self.reply(404, {"error": "no such resource", "path": self.path})

    def do_POST(self):
        if self.path != "/charge":
            self.reply(404, {"error": "no such resource", "path": self.path})
            return
        length = int(self.headers.get("Content-Length", "0"))
        if length > MAX_BODY_BYTES:
            self.reply(413, {"error": f"body over {MAX_BODY_BYTES} bytes"})
            return
        try:
            request = json.loads(self.rfile.read(length))
            order, amount = str(request["order"]), int(request["amount"])
        except (ValueError, KeyError, TypeError) as e:
            self.reply(400, {"error": f"expected JSON with order and amount: {e}"})
            return
        status, charge, replayed = self.charge(self.headers.get("Idempotency-Key"), order, amount)
        self.reply(status, charge, replayed)

    def charge(self, key, order, amount):
        db = self.db()
        db.execute("BEGIN IMMEDIATE")
        try:
            if key is not None:
                row = db.execute("SELECT id, order_id, amount, instance FROM charges WHERE idempotency_key = ?",
                                 (key,)).fetchone()
                if row is not None:
                    db.execute("COMMIT")
                    if (row[1], row[2]) != (order, amount):
                        return 422, {"error": "Idempotency-Key reused with another request", "key": key}, False
                    return 201, {"charge": row[0], "order": row[1], "amount": row[2], "instance": row[3]}, True
            charge_id = "ch_" + uuid.uuid4().hex[:16]
            db.execute("INSERT INTO charges VALUES (?, ?, ?, ?, ?)", (charge_id, key, order, amount, self.instance))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return 201, {"charge": charge_id, "order": order, "amount": amount, "instance": self.instance}, False


def ledger_report(path):
    db = open_database(path)
    total = db.execute("SELECT COUNT(*), COUNT(DISTINCT order_id) FROM charges").fetchone()
    doubled = db.execute("SELECT order_id, GROUP_CONCAT(instance, ' ') FROM charges GROUP BY order_id "
                         "HAVING COUNT(*) > 1 ORDER BY order_id").fetchall()
    across = sum(1 for _, instances in doubled if len(set(instances.split())) > 1)
    print(f"service ledger: {total[0]} charges for {total[1]} orders; {len(doubled)} orders charged more than "
          f"once, {across} of them by two or more instances")
    for order, instances in doubled[:5]:
        print(f"  order {order} charged by {instances}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="the SQLite file every instance shares")
    parser.add_argument("--listen", default="127.0.0.1:9000", help="ADDRESS:PORT (default %(default)s)")
    parser.add_argument("--instance", default="service", help="this instance's name, stored with its charges")
    parser.add_argument("--ledger-report", action="store_true", help="print the doubled charges and exit")
    args = parser.parse_args()
    if args.ledger_report:
        ledger_report(args.database)
        return
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        sys.exit(f"service.py: --listen wants ADDRESS:PORT, got {args.listen!r}")
    open_database(args.database).close()
    ChargeHandler.instance = args.instance
    ChargeHandler.database = args.database
    server = http.server.ThreadingHTTPServer((host, int(port)), ChargeHandler)
    server.daemon_threads = True
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
