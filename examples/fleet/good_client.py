"""Locust: a fleet client that retries well (docs/fleet.md).

Each operation charges an order once: one Idempotency-Key for all its attempts, at most 4
attempts, full-jitter exponential backoff (50 ms base, 1 s cap), only transient failures retried,
and a retry budget shared by every user of this Locust worker: each first attempt earns 0.1 of a
retry, at most 2 saved (Finagle's RetryBudget), so the fleet's retries stay near 10 % of its
traffic however many workers run.
"""
import random
import time
import uuid

from locust import task

import fleet_hosts

MAX_ATTEMPTS = 4
BACKOFF_BASE_S = 0.05
BACKOFF_CAP_S = 1.0


class RetryBudget:
    def __init__(self, ratio=0.1, max_saved=2.0):
        self.ratio = ratio
        self.max_saved = max_saved
        self.saved = max_saved

    def on_first_attempt(self):
        self.saved = min(self.max_saved, self.saved + self.ratio)

    def try_spend(self):
        if self.saved < 1:
            return False
        self.saved -= 1
        return True


budget = RetryBudget()  # one per worker process: Locust's users are greenlets of it


class GoodClient(fleet_hosts.FleetUser):
    @task
    def charge(self):
        first_host = self.start_operation()
        body = fleet_hosts.charge_body()
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        budget.on_first_attempt()
        for attempt in range(MAX_ATTEMPTS):
            response = self.client.post(fleet_hosts.Spread.url(first_host, attempt, "/charge"), json=body,
                                        headers=headers, name="/charge")
            if response.status_code not in fleet_hosts.TRANSIENT_STATUSES:
                return
            if attempt + 1 == MAX_ATTEMPTS or not budget.try_spend():
                return
            time.sleep(random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** attempt)))
