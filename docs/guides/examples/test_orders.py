"""The Python guide's pytest recipe: requests with urllib3's Retry against `faultline serve`, one round a
test (the `faultline` fixture of `pip install ./clients/python`; pytest.ini names the rules and the checks).
Each test is judged on its own by `faultline check --round N --expect expect.toml` once it passes."""

from pathlib import Path

import pytest

requests = pytest.importorskip("requests", reason="Debian: apt-get install python3-requests")
from requests.adapters import HTTPAdapter  # noqa: E402
from urllib3.util.retry import Retry  # noqa: E402

# The first try of every key-value write gets 503 with Retry-After: 1.
BUSY_FIRST_TRY = (Path(__file__).parent / "busy-first-try.toml").read_text()


def orders_session():
    retry = Retry(
        total=2,                                   # three tries in all
        status_forcelist=[429, 502, 503, 504],
        allowed_methods=["GET", "PUT", "DELETE"],  # idempotent only: a retried POST may charge twice
        backoff_factor=0.2,
        respect_retry_after_header=True,           # the default: the retry waits the second asked for
    )
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    return session


def statuses(faultline):
    return [(a["target"], a["attempt"], a["status"]) for a in faultline.control.attempts()]


@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_write_is_retried_after_busy(faultline):
    orders_session().put(f"{faultline.url}/kv/order-1", json={"order": 1}, timeout=5).raise_for_status()
    assert statuses(faultline) == [("/kv/order-1", 1, 503), ("/kv/order-1", 2, 200)]


@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_same_write_in_the_next_test_is_a_new_operation(faultline):
    # The reset between tests forgot order-1's attempts: this is its first try again, and busy again.
    orders_session().put(f"{faultline.url}/kv/order-1", json={"order": 1}, timeout=5).raise_for_status()
    assert statuses(faultline) == [("/kv/order-1", 1, 503), ("/kv/order-1", 2, 200)]


def test_without_faults_the_first_try_succeeds(faultline):
    session = orders_session()
    session.put(f"{faultline.url}/kv/order-2", json={"order": 2}, timeout=5).raise_for_status()
    assert session.get(f"{faultline.url}/kv/order-2", timeout=5).json() == {"order": 2}
    assert [status for _, _, status in statuses(faultline)] == [200, 200]
    assert faultline.control.rules()["rules"] == []   # the first tests' rules ended with their rounds
