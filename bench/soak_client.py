#!/usr/bin/env python3
"""Load client for bench/soak.sh (not a test): loopback only, bounded in connections, rate and time.

  soak_client.py hold PORT N SECONDS   open N keep-alive connections, one request each, hold them
                                       SECONDS, print "held N", then close them all
  soak_client.py soak PORT SECONDS RATE WORKERS
                                       RATE requests/s in total over WORKERS keep-alive connections for
                                       SECONDS against a mixed-fault server; reconnects after any
                                       fault; prints counts by outcome
"""
import asyncio
import collections
import sys
import time

HOST = "127.0.0.1"
REQUEST_TIMEOUT = 2.0  # longer than any fault the soak rules inject (hang limit 50 ms, delay 5 ms)


def request(path, keep_alive=True, body=b"", faulted=False):
    head = f"{'POST' if body else 'GET'} {path} HTTP/1.1\r\nHost: {HOST}\r\n"
    if faulted:
        head += "X-Soak: 1\r\n"  # the soak's fault rules match only these
    if body:
        head += f"Content-Length: {len(body)}\r\nContent-Type: application/json\r\n"
    if not keep_alive:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + body


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return status, b"connection: close" in head.lower()


async def hold(port, n, seconds):
    conns = []
    sem = asyncio.Semaphore(500)  # connects in flight at once, under the listen backlog

    async def open_one(i):
        async with sem:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), 10)
            writer.write(request(f"/kv/hold{i}"))
            await writer.drain()
            await asyncio.wait_for(read_response(reader), 10)
            conns.append(writer)

    results = await asyncio.gather(*(open_one(i) for i in range(n)), return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    print(f"held {len(conns)} failed {len(failed)}", flush=True)
    if failed:
        print(f"first failure: {failed[0]!r}", flush=True)
    await asyncio.sleep(seconds)  # the script samples the server's RSS and fds meanwhile
    for w in conns:
        w.close()
    await asyncio.gather(*(w.wait_closed() for w in conns), return_exceptions=True)


async def soak(port, seconds, rate, workers):
    counts = collections.Counter()
    deadline = time.monotonic() + seconds
    interval = workers / rate  # each worker's share of the rate

    async def worker(w):
        reader = writer = None
        n = 0
        next_at = time.monotonic()
        while time.monotonic() < deadline:
            next_at += interval
            n += 1
            try:
                if writer is None:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), REQUEST_TIMEOUT)
                body = b'{"amount":1}' if n % 4 == 0 else b""
                path = "/payments" if body else f"/kv/w{w}n{n % 100}"
                writer.write(request(path, body=body, faulted=True))
                await writer.drain()
                status, closing = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT)
                counts[str(status)] += 1
                if closing:
                    writer.close()
                    writer = None
            except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError, IndexError,
                    asyncio.LimitOverrunError) as e:
                counts[type(e).__name__] += 1
                if writer is not None:
                    writer.close()
                writer = None
            delay = next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        if writer is not None:
            writer.close()

    await asyncio.gather(*(worker(w) for w in range(workers)))
    total = sum(counts.values())
    print(f"requests {total} " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())), flush=True)


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "hold":
        asyncio.run(hold(port, int(sys.argv[3]), float(sys.argv[4])))
    elif mode == "soak":
        asyncio.run(soak(port, float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
