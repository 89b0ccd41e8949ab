#!/usr/bin/env python3
"""A reference model of the AWS Architecture Blog's contention experiment ("Exponential Backoff And
Jitter", 2015), written from the blog's description for bench/storm_vs_reference.sh: it is the
slow, obvious version that `faultline simulate --model occ` is compared with, in speed and numbers.

N clients start at time 0; each reads a single row's version, then writes it back conditionally; a
write whose version is stale fails and the client sleeps (backoff) before reading again. Every
network hop (read request, read reply, write request, write reply) takes |N(10 ms, 2 ms)|. Unlike
storm/src/occ.cpp, this model has an event for each of the four hops (a heap of tuples), so it also
checks that storm's one-event-per-try shortcut gives the same numbers.

The backoff curves, with attempt counted from 1 at the first retry as in the blog:
  none          0
  exponential   min(cap, base * 2^attempt)
  equal         v / 2 + U(0, v / 2), v = the exponential delay
  full          U(0, v)
  decorrelated  sleep = min(cap, U(base, 3 * sleep)), starting from sleep = base

Usage: reference_occ_model.py [--clients 10..190:10] [--trials 100] [--seed 1] [--csv FILE]
Prints mean work (write calls) and completion (s) per point, and the elapsed time.
"""

import argparse
import heapq
import random
import statistics
import sys
import time

BASE = 0.005
CAP = 2.0
STRATEGIES = ["none", "exponential", "equal", "full", "decorrelated"]


def hop(rng):
    return abs(rng.gauss(0.010, 0.002))


def backoff(strategy, attempt, previous, rng):
    """Returns (sleep, new previous sleep)."""
    if strategy == "none":
        return 0.0, previous
    v = min(CAP, BASE * 2 ** attempt)
    if strategy == "exponential":
        return v, previous
    if strategy == "equal":
        return v / 2 + rng.uniform(0, v / 2), previous
    if strategy == "full":
        return rng.uniform(0, v), previous
    sleep = min(CAP, rng.uniform(BASE, previous * 3))
    return sleep, sleep


def trial(clients, strategy, rng):
    version = 0
    work = 0
    completion = 0.0
    attempts = [0] * clients
    previous = [BASE] * clients
    seen = [0] * clients
    events = []  # (time, sequence, kind, client)
    sequence = 0

    def push(at, kind, client):
        nonlocal sequence
        heapq.heappush(events, (at, sequence, kind, client))
        sequence += 1

    for c in range(clients):
        push(hop(rng), "read", c)
    while events:
        now, _, kind, c = heapq.heappop(events)
        if kind == "read":  # the read reaches the row
            seen[c] = version
            push(now + hop(rng), "read_reply", c)
        elif kind == "read_reply":
            push(now + hop(rng), "write", c)
        elif kind == "write":  # the conditional write reaches the row
            work += 1
            ok = seen[c] == version
            if ok:
                version += 1
            push(now + hop(rng), "write_ok" if ok else "write_failed", c)
        elif kind == "write_ok":
            completion = max(completion, now)
        else:  # write_failed: back off, then read again
            attempts[c] += 1
            sleep, previous[c] = backoff(strategy, attempts[c], previous[c], rng)
            push(now + sleep + hop(rng), "read", c)
    return work, completion


def client_list(text):
    out = []
    for item in text.split(","):
        if ".." in item:
            bounds, _, step = item.partition(":")
            low, high = (int(x) for x in bounds.split(".."))
            out.extend(range(low, high + 1, int(step or 1)))
        else:
            out.append(int(item))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="10..190:10")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--csv")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    start = time.monotonic()
    rows = []
    for clients in client_list(args.clients):
        for strategy in STRATEGIES:
            results = [trial(clients, strategy, rng) for _ in range(args.trials)]
            works = [w for w, _ in results]
            times = [t for _, t in results]
            spread = statistics.stdev if len(results) > 1 else (lambda _: 0.0)
            rows.append((clients, strategy, statistics.mean(works), spread(works),
                         statistics.mean(times), spread(times)))
    elapsed = time.monotonic() - start
    print("clients  strategy        work (mean ± sd)   completion s (mean ± sd)")
    for clients, strategy, work, work_sd, done, done_sd in rows:
        print(f"{clients:7d}  {strategy:14s}{work:9.0f} ± {work_sd:6.0f}   {done:9.2f} ± {done_sd:6.2f}")
    print(f"elapsed {elapsed:.3f} s")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("clients,strategy,work_mean,work_stddev,completion_s_mean,completion_s_stddev\n")
            for row in rows:
                f.write("%d,%s,%.2f,%.2f,%.6f,%.6f\n" % row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
