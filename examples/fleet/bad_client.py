"""Locust: a fleet client that retries badly (docs/fleet.md).

Every failed charge is sent again at once, whatever the failure, up to 6 attempts, with no budget
and no Idempotency-Key: a POST whose reply was lost after the charge is charged again on the next
instance, and an overloaded fleet gets every retry.
"""
from locust import task

import fleet_hosts

MAX_ATTEMPTS = 6


class BadClient(fleet_hosts.FleetUser):
    @task
    def charge(self):
        first_host = self.start_operation()
        body = fleet_hosts.charge_body()
        for attempt in range(MAX_ATTEMPTS):
            response = self.client.post(fleet_hosts.Spread.url(first_host, attempt, "/charge"), json=body,
                                        name="/charge")
            if 200 <= response.status_code < 300:  # not response.ok: Locust's raises on a lost reply
                return
