"""One request through Debian's urllib3 (python3-urllib3, 1.26) with a `Retry` policy.

    python3 urllib3_client.py URL METHOD BODY TIMEOUT [--total N] [--backoff F] [--methods M,M]
                              [--statuses S,S] [--no-retry-after]

TIMEOUT is seconds per attempt (connect and read). Exits 0 on a 2xx reply, 1 otherwise. The options
are urllib3's own: `--methods` is `allowed_methods` (default: urllib3's idempotent set, no POST),
`--statuses` is `status_forcelist`, `--no-retry-after` sets `respect_retry_after_header=False`.
"""

import argparse
import sys

import urllib3
from urllib3.util.retry import Retry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("method")
    p.add_argument("body")
    p.add_argument("timeout", type=float)
    p.add_argument("--total", type=int, default=3)
    p.add_argument("--backoff", type=float, default=0.5)
    p.add_argument("--methods", default=None)
    p.add_argument("--statuses", default="429,500,502,503,504")
    p.add_argument("--no-retry-after", action="store_true")
    a = p.parse_args()
    retry = Retry(
        total=a.total,
        backoff_factor=a.backoff,
        status_forcelist=[int(s) for s in a.statuses.split(",") if s],
        allowed_methods=frozenset(a.methods.split(",")) if a.methods else Retry.DEFAULT_ALLOWED_METHODS,
        respect_retry_after_header=not a.no_retry_after,
        raise_on_status=False,
    )
    http = urllib3.PoolManager(retries=retry, timeout=urllib3.Timeout(connect=a.timeout, read=a.timeout))
    body = a.body.encode() if a.method not in ("GET", "HEAD") else None
    try:
        r = http.request(a.method, a.url, body=body)
    except urllib3.exceptions.HTTPError as e:
        print(f"urllib3: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"urllib3: {r.status}", file=sys.stderr)
    return 0 if 200 <= r.status < 300 else 1


if __name__ == "__main__":
    sys.exit(main())
