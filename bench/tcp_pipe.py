#!/usr/bin/env python3
"""Bulk bytes over loopback for bench/tcp_proxy_throughput.sh.

  tcp_pipe.py server            listens on 127.0.0.1:0, prints the port, serves one connection at a
                                time: "up N\n" -> reads N bytes, answers "ok\n"; "down N\n" -> sends
                                N bytes, then closes. Exits after 600 s whatever happens.
  tcp_pipe.py client PORT up|down MB
                                one transfer of MB MiB, prints the seconds it took (connect to last
                                byte acknowledged or received).
"""
import socket
import sys
import time

CHUNK = 1 << 20
BLOCK = b"\x5a" * CHUNK


def serve():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(600)
    print(listener.getsockname()[1], flush=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            return
        conn.settimeout(60)
        with conn:
            command = b""
            while not command.endswith(b"\n"):
                part = conn.recv(1)
                if not part:
                    break
                command += part
            if not command.endswith(b"\n"):
                continue
            what, count = command.decode().split()
            left = int(count)
            if what == "up":
                while left > 0:
                    got = conn.recv_into(memoryview(bytearray(min(left, CHUNK))))
                    if got == 0:
                        break
                    left -= got
                conn.sendall(b"ok\n")
            else:
                view = memoryview(BLOCK)
                while left > 0:
                    n = min(left, CHUNK)
                    conn.sendall(view[:n])
                    left -= n


def client(port, what, mib):
    total = mib * CHUNK
    start = time.monotonic()
    conn = socket.create_connection(("127.0.0.1", port), timeout=60)
    with conn:
        conn.sendall(f"{what} {total}\n".encode())
        if what == "up":
            view = memoryview(BLOCK)
            left = total
            while left > 0:
                n = min(left, CHUNK)
                conn.sendall(view[:n])
                left -= n
            if conn.recv(3) != b"ok\n":
                sys.exit("no acknowledgement")
        else:
            buffer = bytearray(CHUNK)
            left = total
            while left > 0:
                got = conn.recv_into(buffer)
                if got == 0:
                    sys.exit(f"closed with {left} bytes to go")
                left -= got
    print(f"{time.monotonic() - start:.4f}")


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve()
    else:
        client(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
