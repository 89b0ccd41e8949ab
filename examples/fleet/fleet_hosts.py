"""What both fleet locustfiles share: the service hosts and how operations spread over them.

scripts/fleet.sh passes the sidecars' URLs in FLEET_HOSTS (comma-separated) and each user's
operation count in FLEET_OPERATIONS_PER_USER. An operation starts on a host of its own and each
retry goes to the next host, as a client behind a round-robin balancer does, so one operation's
attempts reach several instances and only the merged journals show the whole operation.
"""
import os
import random

import locust.runners
from locust import HttpUser, constant
from locust.exception import StopUser

# Debian's python3-locust 2.12.1 carries an empty version string, which its master takes for a
# pre-2.0 worker and refuses. -1 is the version Locust accepts from any worker (locust PR #1830).
if not locust.runners.__version__:
    locust.runners.__version__ = -1

HOSTS = [url for url in os.environ.get("FLEET_HOSTS", "").split(",") if url]
if not HOSTS:
    raise SystemExit("FLEET_HOSTS is empty: give the service hosts' URLs, comma-separated (scripts/fleet.sh does)")
OPERATIONS_PER_USER = int(os.environ.get("FLEET_OPERATIONS_PER_USER", "100"))
# What a retry may meet that another attempt can fix: no reply at all (Locust's status 0), or these.
TRANSIENT_STATUSES = {0, 429, 500, 502, 503, 504}


class Spread:
    """One user's operations: the n-th starts on host n + a random offset; attempt k goes k hosts on."""

    def __init__(self):
        self.next_operation = random.randrange(len(HOSTS))

    def start_operation(self):
        first_host = self.next_operation
        self.next_operation += 1
        return first_host

    @staticmethod
    def url(first_host, attempt, path):
        return HOSTS[(first_host + attempt) % len(HOSTS)] + path


class FleetUser(HttpUser):
    """A Locust user that charges OPERATIONS_PER_USER orders, spread over HOSTS, then stops."""

    abstract = True
    host = HOSTS[0]
    wait_time = constant(0.01)

    def on_start(self):
        self.spread = Spread()
        self.operations = 0

    def start_operation(self):
        """The next operation's first host; StopUser once this user has charged its share."""
        if self.operations >= OPERATIONS_PER_USER:
            raise StopUser()
        self.operations += 1
        return self.spread.start_operation()


def charge_body():
    return {"order": "order-%032x" % random.getrandbits(128), "amount": random.randint(1, 500)}
