"""The pytest plugin judged from outside: each test writes a test module, runs pytest on it in a
subprocess (pytester) against the real faultline binary ($FAULTLINE_BIN), and asserts its outcome and
output. Run with `python3 -m pytest -p pytester clients/python/tests` (PYTHONPATH=clients/python)."""

from pathlib import Path

import pytest

from faultline import FaultlineServer

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "examples"

# A client under test: urllib3's Retry, honouring Retry-After or not, three tries in all.
CLIENT = f'''
import pytest
import urllib3
from urllib3.util.retry import Retry

BUSY_FIRST_TRY = open({str(GUIDE / "busy-first-try.toml")!r}).read()

def put(url, honour_retry_after):
    retry = Retry(total=2, status_forcelist=[503], allowed_methods=["PUT"], backoff_factor=0,
                  respect_retry_after_header=honour_retry_after)
    return urllib3.PoolManager(retries=retry).request("PUT", url + "/kv/order-1", body=b"{{}}").status
'''


@pytest.fixture
def suite(pytester):
    """A pytest run in a subprocess with the plugin loaded and the guide's rules and checks."""
    pytester.makeini(f"""
        [pytest]
        faultline_rules = {GUIDE / "rules.toml"}
        faultline_expect = {GUIDE / "expect.toml"}
    """)

    def run(module, *args):
        pytester.makepyfile(test_suite=CLIENT + module)
        return pytester.runpytest_subprocess("-p", "faultline.pytest_plugin", "-p", "no:cacheprovider", *args)

    return run


def test_a_client_ignoring_retry_after_fails_its_test_with_the_evidence(suite):
    result = suite('''
@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_well_behaved(faultline):
    assert put(faultline.url, honour_retry_after=True) == 200

@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_ignores_retry_after(faultline):
    assert put(faultline.url, honour_retry_after=False) == 200

@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_well_behaved_again(faultline):
    assert put(faultline.url, honour_retry_after=True) == 200
''')
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_suite.py::test_ignores_retry_after*"])
    # The verdict and its evidence: the early retry, with the journal's sequence numbers.
    result.stdout.fnmatch_lines([
        "*faultline check, round 2, failed (exit 1):*--round 2",
        "FAIL *journal.jsonl round 2 *",
        "*retry_after: 1 responses carried Retry-After; 1 retries came too soon*",
        "*waited *ms of the 1000 ms Retry-After asked:",
    ])
    result.stdout.no_fnmatch_line("During handling of the above exception*")


def test_a_failed_check_is_the_tests_failure_not_a_teardown_error(suite):
    result = suite('''
def test_retries_too_much(faultline):
    faultline.add_rule({"name": "always-busy", "kind": "status", "status": 503, "match": {"method": "PUT"}})
    retry = Retry(total=4, status_forcelist=[503], allowed_methods=["PUT"], backoff_factor=0, raise_on_status=False)
    assert urllib3.PoolManager(retries=retry).request("PUT", faultline.url + "/kv/x", body=b"x").status == 503
''')
    result.assert_outcomes(failed=1, errors=0)
    result.stdout.fnmatch_lines(["*max_attempts: 1 of 1 operations made more than 3 attempts (most: 5)*"])


def test_a_test_that_fails_first_still_ends_its_round(suite):
    result = suite('''
@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_fails_in_its_body(faultline):
    put(faultline.url, honour_retry_after=False)
    assert False, "the test's own failure"

def test_next_round_is_fresh(faultline):
    assert faultline.round == 2
    assert faultline.control.rules()["rules"] == []
    assert put(faultline.url, honour_retry_after=False) == 200
''')
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: the test's own failure*"])
    result.stdout.no_fnmatch_line("*came too soon*")


def test_a_marker_judges_its_round_by_other_checks_and_a_bad_rule_leaves_nothing_behind(suite, pytester):
    pytester.makefile(".toml", one_try="[[expect]]\ncheck = \"max_attempts\"\nmax = 1\n")
    result = suite('''
@pytest.mark.faultline(rules=[BUSY_FIRST_TRY], expect="one_try.toml")
def test_held_to_one_try(faultline):
    assert put(faultline.url, honour_retry_after=True) == 200

@pytest.mark.faultline(rules=[BUSY_FIRST_TRY, {"name": "bad", "kind": "no_such_kind"}])
def test_bad_rule(faultline):
    pass

def test_after_them(faultline):
    assert faultline.control.rules()["rules"] == []
    assert put(faultline.url, honour_retry_after=True) == 200
''')
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*faultline check, round 1, failed (exit 1):*--expect *one_try.toml --round 1",
                                 "*max_attempts: 1 of 1 operations made more than 1 attempts (most: 2)*"])
    result.stdout.fnmatch_lines(["*FaultlineError: faultline control API: 400*"])


def test_a_conftest_overrides_the_settings(suite, pytester):
    pytester.makefile(".toml", one_try="[[expect]]\ncheck = \"max_attempts\"\nmax = 1\n")
    pytester.makeconftest("""
import dataclasses
import pytest

@pytest.fixture(scope="session")
def faultline_settings(faultline_settings, pytestconfig):
    return dataclasses.replace(faultline_settings, expect=pytestconfig.rootpath / "one_try.toml")
""")
    result = suite('''
@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_held_to_one_try(faultline):
    assert put(faultline.url, honour_retry_after=True) == 200
''')
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*max_attempts: 1 of 1 operations made more than 1 attempts (most: 2)*"])


def test_a_missing_binary_is_named(suite, monkeypatch):
    monkeypatch.setenv("FAULTLINE_BIN", "/nonexistent/faultline")
    result = suite("def test_uses_it(faultline):\n    pass\n")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the faultline binary /nonexistent/faultline does not exist or is not executable*"])


def test_a_server_that_fails_to_start_shows_its_output(suite, pytester):
    pytester.makefile(".toml", bad_rules="[[fault]]\nkind = \"no_such_kind\"\n")
    result = suite("def test_uses_it(faultline):\n    pass\n", "--faultline-rules", "bad_rules.toml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*serve --rules *bad_rules.toml* exited 2 before it was ready:*",
                                 "*no_such_kind*"])


def test_proxy_mode_faults_in_front_of_an_upstream(suite, tmp_path):
    # The upstream is a real service: another faultline serve, without faults.
    upstream = FaultlineServer.start(tmp_path / "upstream", rules=GUIDE / "rules.toml")
    try:
        result = suite('''
@pytest.mark.faultline(rules=[BUSY_FIRST_TRY])
def test_through_the_proxy(faultline):
    assert put(faultline.url, honour_retry_after=True) == 200
    assert [a["status"] for a in faultline.control.attempts()] == [503, 200]
''', "--faultline-upstream", upstream.url.removeprefix("http://"))
        result.assert_outcomes(passed=1)
        # Only the retry got through the proxy's fault to the upstream.
        assert [a["status"] for a in upstream.control.attempts()] == [200]
    finally:
        upstream.stop()

