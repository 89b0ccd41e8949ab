"""FaultlineControl against a real `faultline proxy` ($FAULTLINE_BIN): the Toxiproxy workflow from
Python — a proxy created at runtime in front of a real upstream (`faultline serve`), a rule added for
one stretch and removed, the proxy's own journal read back, the proxy deleted."""

import urllib.error
import urllib.request

import pytest

from faultline import FaultlineError, FaultlineServer


@pytest.fixture
def upstream(tmp_path):
    server = FaultlineServer.start(tmp_path / "upstream")
    yield server
    server.stop()


@pytest.fixture
def proxies(tmp_path, upstream):
    server = FaultlineServer.start(tmp_path / "proxies", upstream=upstream.url.removeprefix("http://"))
    yield server.control
    server.stop()


def status(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def test_a_proxy_made_at_runtime_takes_a_rule_for_a_while_and_keeps_its_own_journal(proxies, upstream):
    hostport = upstream.url.removeprefix("http://")
    api = proxies.create_proxy("api", hostport)
    assert [p["name"] for p in proxies.proxies()] == ["default", "api"]
    healthy = status(upstream.url + "/kv/a")

    proxies.proxy("api").add_rule({"name": "down", "kind": "status", "status": 503})
    assert status(api["url"] + "/kv/a") == 503
    proxies.proxy("api").remove_rule("down")
    assert status(api["url"] + "/kv/a") == healthy

    attempts = proxies.proxy("api").attempts()
    assert [(a["target"], a["status"], a["rule"]) for a in attempts] == [("/kv/a", 503, "down"), ("/kv/a", healthy, "")]
    assert proxies.proxy("default").attempts() == []    # the other proxy's journal is its own

    proxies.delete_proxy("api")
    assert [p["name"] for p in proxies.proxies()] == ["default"]
    with pytest.raises(FaultlineError) as gone:
        proxies.proxy("api").rules()
    assert gone.value.status == 404


def test_a_bad_definition_is_refused_with_the_readers_message(proxies):
    with pytest.raises(FaultlineError) as refused:
        proxies.create_proxy("x", "nowhere")
    assert refused.value.status == 400
    assert "HOST:PORT" in str(refused.value)
