"""The Python guide's client: requests with urllib3's Retry, honouring Retry-After (good) or, with
--ignore-retry-after, not (bad). Needs FAULTLINE_URL, FAULTLINE_CONTROL_URL, FAULTLINE_CONTROL_TOKEN;
the faultline package (clients/python) installed or on PYTHONPATH."""

import os
import pathlib
import sys

try:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed (Debian: apt-get install python3-requests python3-urllib3)")
    sys.exit(77)

from faultline import FaultlineControl

service = os.environ["FAULTLINE_URL"]
control = FaultlineControl(os.environ["FAULTLINE_CONTROL_URL"], token=os.environ.get("FAULTLINE_CONTROL_TOKEN"))

# The fault: every first try of a key-value write gets 503 with Retry-After: 1.
control.clear_rules()
control.add_rule((pathlib.Path(__file__).parent / "busy-first-try.toml").read_text())
control.reset()

honour = "--ignore-retry-after" not in sys.argv
retry = Retry(
    total=2,                       # three tries in all
    status_forcelist=[429, 502, 503, 504],
    allowed_methods=["GET", "PUT", "DELETE"],  # idempotent methods only: a retried POST may charge twice
    backoff_factor=0.2,            # exponential backoff between tries without Retry-After
    respect_retry_after_header=honour,
)
session = requests.Session()
session.mount("http://", HTTPAdapter(max_retries=retry))

for order in (1, 2):
    response = session.put(f"{service}/kv/order-{order}", json={"order": order}, timeout=5)
    print(f"order {order}: HTTP {response.status_code}")
    response.raise_for_status()

attempts = control.attempts()
print(f"the server saw {len(attempts)} attempts:",
      ", ".join(f"{a['target']}#{a['attempt']}={a['status']}" for a in attempts))
assert len(attempts) == 4, "two tries per write: the 503 and the retry"
assert not control.ledger()["double_effects"]
