"""A client for faultline's control API (docs/control-api.md), standard library only.

`from faultline import FaultlineControl` once the package is installed (`pip install ./clients/python`);
the module also works copied on its own. `faultline serve` prints the control URL and token:

    faultline serving on http://127.0.0.1:18100 (seed 7)
    control API: http://127.0.0.1:18101/__faultline/ (Authorization: Bearer 3f9c...)

    control = FaultlineControl("http://127.0.0.1:18101/__faultline/", token="3f9c...")
    control.add_rule({"name": "busy", "kind": "status", "status": 503, "retry_after": "1s"})
    ...  # point the client under test at the service URL
    assert not control.ledger()["double_effects"]

`FaultlineControl.from_banner(text)` reads both lines of that output. Every error the API returns
raises FaultlineError with its HTTP status and the API's message.
"""

import json
import re
import urllib.error
import urllib.request

__all__ = ["FaultlineControl", "FaultlineError", "parse_banner"]


class FaultlineError(Exception):
    """The control API answered with an error status."""

    def __init__(self, status, message, errors=None):
        super().__init__(f"faultline control API: {status}: {message}" + "".join(f"\n  {e}" for e in errors or []))
        self.status = status
        self.message = message
        self.errors = errors or []


def parse_banner(text):
    """The service URL, control URL and token (None when served without one) from `faultline serve`'s output."""
    service = re.search(r"faultline serving on (http://\S+)", text)
    control = re.search(r"control API: (http://\S+)(?: \(Authorization: Bearer (\w+)\))?", text)
    if not service or not control:
        raise ValueError("not the output of `faultline serve`: " + text[:200])
    return service.group(1), control.group(1), control.group(2)


class FaultlineControl:
    def __init__(self, control_url, token=None, timeout=10.0):
        self.base = control_url.rstrip("/") + "/"
        self.token = token
        self.timeout = timeout

    @classmethod
    def from_banner(cls, text, timeout=10.0):
        _, control_url, token = parse_banner(text)
        return cls(control_url, token, timeout)

    def _request(self, method, path, body=None, content_type="application/json"):
        headers = {}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read().decode()
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            try:
                parsed = json.loads(text)
                raise FaultlineError(e.code, parsed.get("error", text), parsed.get("errors")) from None
            except ValueError:
                raise FaultlineError(e.code, text) from None

    def _json(self, method, path, body=None, content_type="application/json"):
        return json.loads(self._request(method, path, body, content_type))

    def health(self):
        return self._json("GET", "health")

    def rules(self):
        return self._json("GET", "rules")

    def add_rule(self, rule, position=None):
        """One rule: a dict with a [[fault]] table's keys, or the TOML text of such a table."""
        path = "rules" if position is None else f"rules?position={int(position)}"
        if isinstance(rule, str):
            return self._json("POST", path, rule, "application/toml")
        return self._json("POST", path, rule)

    def remove_rule(self, name):
        return self._json("DELETE", "rules/" + urllib.request.quote(name, safe=""))

    def clear_rules(self):
        return self._json("DELETE", "rules")

    def reset(self):
        """Starts the next round: {"reset": True, "round": N}."""
        return self._json("POST", "reset")

    def journal(self, round=None):
        """The current round's journal (round: a number, or "all" for all that memory holds): attempts
        and server events (those carry "event"), in seq order."""
        path = "journal" if round is None else f"journal?round={round}"
        return [json.loads(line) for line in self._request("GET", path).splitlines() if line.strip()]

    def attempts(self):
        return [r for r in self.journal() if "event" not in r]

    def ledger(self):
        return self._json("GET", "ledger")

    def stats(self):
        return self._json("GET", "stats")

    # `faultline proxy`: named proxies created, listed and deleted at runtime (docs/proxy.md). Each
    # proxy's own API (rules or toxics, reset, journal, stats) is a FaultlineControl too: proxy(name).

    def proxies(self):
        """[{name, mode, listen, url, upstream}, ...] in creation order."""
        return self._json("GET", "proxies")["proxies"]

    def create_proxy(self, name, upstream, **keys):
        """A proxy from a [[proxy]] table's keys (mode="tcp", listen="127.0.0.1:0", fault=[...],
        server={...}, ...); returns its description, with the "url" to point the client at."""
        return self._json("POST", "proxies", {"name": name, "upstream": upstream, **keys})

    def delete_proxy(self, name):
        return self._json("DELETE", "proxies/" + urllib.request.quote(name, safe=""))

    def proxy(self, name):
        """The control API of one named proxy."""
        return FaultlineControl(self.base + "proxies/" + urllib.request.quote(name, safe="") + "/", self.token,
                                self.timeout)

    def toxics(self):
        """A tcp proxy's toxics."""
        return self._json("GET", "toxics")["toxics"]

    def add_toxic(self, toxic):
        """A tcp proxy's toxic: a dict with a [[toxic]] table's keys; new connections meet it."""
        return self._json("POST", "toxics", toxic)

    def remove_toxic(self, name):
        return self._json("DELETE", "toxics/" + urllib.request.quote(name, safe=""))
