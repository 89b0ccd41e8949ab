"""faultline score's timing control on Python: the builtin control (control_client.hpp) written for the
runtime a Python client runs on, so that the interpreter's own wake-up on a loaded machine is in the
noise the client is judged against. One PUT, and after anything but a 2xx (a status, a reset, a
refused or failed connection) exactly DELAY_MS of wait (no jitter, no growth), then the same request
again on a fresh connection, at most ATTEMPTS times in all. Exits 0.
    python3 control.py URL DELAY_MS ATTEMPTS
"""
import http.client
import sys
import time
import urllib.parse

TIMEOUT_S = 5


def attempt(url):
    """One attempt on a connection of its own; True for a complete 2xx reply."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT_S)
    try:
        connection.request("PUT", parts.path or "/", body=b"control",
                           headers={"Content-Type": "text/plain", "Connection": "close"})
        response = connection.getresponse()
        response.read()
        return 200 <= response.status < 300
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def main():
    url, delay_ms, attempts = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    for made in range(1, attempts + 1):
        if attempt(url):
            break
        if made < attempts:
            time.sleep(delay_ms / 1000)


if __name__ == "__main__":
    main()
