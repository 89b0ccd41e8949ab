"""Locust: a fleet client that retries badly (docs/fleet.md).

Every failed charge is sent again at once, whatever the failure, up to 6 attempts, with no budget
and no Idempotency-Key: a POST whose reply was lost after the charge is charged again on the next
instance, and an overloaded fleet gets every retry.
"""
from locust import HttpUser, task, constant
from locust.exception import StopUser

import fleet_hosts

MAX_ATTEMPTS = 6


class BadClient(HttpUser):
    host = fleet_hosts.HOSTS[0]
    wait_time = constant(0.01)

    def on_start(self):
        self.spread = fleet_hosts.Spread()
        self.operations = 0

    @task
    def charge(self):
        if self.operations >= fleet_hosts.OPERATIONS_PER_USER:
            raise StopUser()
        self.operations += 1
        first_host = self.spread.start_operation()
        body = fleet_hosts.charge_body()
        for attempt in range(MAX_ATTEMPTS):
            response = self.client.post(fleet_hosts.Spread.url(first_host, attempt, "/charge"), json=body,
                                        name="/charge")
            if 200 <= response.status_code < 300:  # not response.ok: Locust's raises on a lost reply
                return
