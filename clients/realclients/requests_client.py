"""One request through Debian's requests (python3-requests, 2.28) with an `HTTPAdapter` whose
`max_retries` is a urllib3 `Retry` — the pattern most requests code uses.

    python3 requests_client.py URL METHOD BODY TIMEOUT [--total N] [--backoff F]

TIMEOUT is seconds per attempt. Retries 429/500/502/503/504 and connection errors on urllib3's
default methods (no POST), honours Retry-After. Exits 0 on a 2xx reply, 1 otherwise.
"""

import argparse
import sys

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("method")
    p.add_argument("body")
    p.add_argument("timeout", type=float)
    p.add_argument("--total", type=int, default=3)
    p.add_argument("--backoff", type=float, default=0.5)
    a = p.parse_args()
    session = requests.Session()
    retry = Retry(total=a.total, backoff_factor=a.backoff, status_forcelist=[429, 500, 502, 503, 504])
    session.mount("http://", HTTPAdapter(max_retries=retry))
    try:
        r = session.request(a.method, a.url, data=a.body.encode(), timeout=(a.timeout, a.timeout))
    except requests.RequestException as e:
        print(f"requests: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"requests: {r.status_code}", file=sys.stderr)
    return 0 if r.ok else 1


if __name__ == "__main__":
    sys.exit(main())
