"""pytest plugin: each test that asks for the `faultline` fixture runs in a round of its own against one
`faultline serve` (or `faultline proxy`) per session, and fails when `faultline check --round N` fails
that round. Loaded by the `pytest11` entry point once the package is installed, or with
`-p faultline.pytest_plugin` from a checkout (PYTHONPATH=clients/python).

    # pytest.ini                              # test_orders.py
    [pytest]                                  @pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
    faultline_rules = rules.toml              def test_order_is_retried(faultline):
    faultline_expect = expect.toml                put_order(faultline.url, 1)

Settings, each from the command line, else the ini file (paths relative to it), else the default:
`--faultline-bin` (else $FAULTLINE_BIN, else `faultline` on PATH), `faultline_rules`, `faultline_expect`,
`faultline_upstream` (HOST:PORT: run `faultline proxy` in front of it), `faultline_start_timeout`.
A conftest.py can override the `faultline_settings` fixture instead. The marker
`@pytest.mark.faultline(rules=[...], expect=PATH)` adds rules for one test's round (dicts or TOML
tables, removed when it ends) and judges that round by other checks (PATH relative to the test file).
"""

import dataclasses
from pathlib import Path

import pytest

from .control import FaultlineControl
from .server import FaultlineCheckError, FaultlineServer, FaultlineStartError


@dataclasses.dataclass(frozen=True)
class FaultlineSettings:
    """How the session's faultline process starts, and the checks each round is judged by (None: none)."""

    binary: str = None
    rules: Path = None
    expect: Path = None
    upstream: str = None
    start_timeout: float = 10.0


class FaultlineRound:
    """What a test gets from the `faultline` fixture: the service URL, the control API client, and the
    round this test's requests are journaled in. Ending it (once) removes its rules, resets, and judges it."""

    def __init__(self, server, expect):
        self.server = server
        self.url = server.url
        self.control: FaultlineControl = server.control
        self.round = server.round
        self.expect = expect
        self.result = None
        self._ended = False

    def add_rule(self, rule):
        """A rule for this test's round only (a dict or a TOML table)."""
        return self.server.add_round_rule(rule)

    def finish(self):
        """Ends the round and judges it; raises FaultlineCheckError when a check fails."""
        self._ended = True
        self.result = self.server.finish_round(self.expect)
        return self.result

    def end_unjudged(self):
        """Ends the round of a test that already failed: the next test still starts with a round of its own."""
        if not self._ended:
            self._ended = True
            self.server.end_round()


def pytest_addoption(parser):
    group = parser.getgroup("faultline", "faultline: a fault-injecting server, one journal round a test")
    group.addoption("--faultline-bin", help="the faultline executable (default: $FAULTLINE_BIN, else faultline on PATH)")
    group.addoption("--faultline-rules", help="rules TOML faultline starts with (overrides the faultline_rules ini key)")
    group.addoption("--faultline-expect", help="checks TOML each test's round is judged by (overrides faultline_expect)")
    group.addoption("--faultline-upstream", help="HOST:PORT: run faultline proxy in front of it instead of faultline serve")
    parser.addini("faultline_rules", "rules TOML faultline starts with, relative to the ini file")
    parser.addini("faultline_expect", "checks TOML ([[expect]]) each test's round is judged by, relative to the ini file")
    parser.addini("faultline_upstream", "HOST:PORT: run faultline proxy in front of it instead of faultline serve")
    parser.addini("faultline_start_timeout", "seconds to wait for faultline's ready file", default="10")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "faultline(rules=[...], expect=PATH): rules for this test's round only (dicts or TOML tables), "
                   "and the checks it is judged by instead of faultline_expect (PATH relative to the test file)")


def _setting(config, option, ini_key, is_path):
    value = config.getoption(option)
    if value:
        return Path(value).resolve() if is_path else value
    value = config.getini(ini_key)
    if not value:
        return None
    if not is_path:
        return value
    base = config.inipath.parent if config.inipath else config.rootpath
    return (base / value).resolve()


@pytest.fixture(scope="session")
def faultline_settings(pytestconfig):
    """The session's settings from the command line and the ini file; override it in a conftest.py to
    compute them (dataclasses.replace(faultline_settings, rules=...))."""
    return FaultlineSettings(
        binary=pytestconfig.getoption("--faultline-bin"),
        rules=_setting(pytestconfig, "--faultline-rules", "faultline_rules", True),
        expect=_setting(pytestconfig, "--faultline-expect", "faultline_expect", True),
        upstream=_setting(pytestconfig, "--faultline-upstream", "faultline_upstream", False),
        start_timeout=float(pytestconfig.getini("faultline_start_timeout")),
    )


@pytest.fixture(scope="session")
def faultline_server(faultline_settings, tmp_path_factory):
    """The session's faultline process (FaultlineServer), its ready file, journal and output in a temp dir."""
    try:
        server = FaultlineServer.start(tmp_path_factory.mktemp("faultline"),
                                       binary=faultline_settings.binary,
                                       rules=faultline_settings.rules, upstream=faultline_settings.upstream,
                                       start_timeout=faultline_settings.start_timeout)
    except FaultlineStartError as error:
        failure = str(error)
    else:
        yield server
        server.stop()
        return
    # Outside the except block: the message alone, not chained to the exception.
    pytest.fail(failure, pytrace=False)


@pytest.fixture
def faultline(faultline_server, faultline_settings, request):
    """This test's round (FaultlineRound): judged once the test passes, reset for the next test either way."""
    marker = request.node.get_closest_marker("faultline")
    expect = faultline_settings.expect
    if marker and marker.kwargs.get("expect"):
        expect = Path(request.node.path).parent / marker.kwargs["expect"]
    test_round = FaultlineRound(faultline_server, expect)
    try:
        for rule in marker.kwargs.get("rules", []) if marker else []:
            test_round.add_rule(rule)
    except BaseException:
        test_round.end_unjudged()   # a bad rule: the rules added before it go with the round
        raise
    yield test_round
    test_round.end_unjudged()


@pytest.hookimpl(trylast=True)
def pytest_runtest_call(item):
    # Runs after the test body, and only when it passed (its exception ends the call first): a failed
    # check then fails the test itself, with the verdicts and their evidence as the message.
    test_round = getattr(item, "funcargs", {}).get("faultline")
    if not isinstance(test_round, FaultlineRound):
        return
    try:
        result = test_round.finish()
    except FaultlineCheckError as failed:
        failure = str(failed)
    else:
        if result is not None:
            item.add_report_section("call", "faultline", result.describe())
        return
    pytest.fail(failure, pytrace=False)
