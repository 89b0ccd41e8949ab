"""A `faultline serve` (or `faultline proxy`) process for a test suite, and the rounds of its journal.

    server = FaultlineServer.start(tmp_dir, rules="rules.toml")
    ...                                        # a test: the client under test against server.url
    server.finish_round("expect.toml")         # reset, then `faultline check --round N`; raises on a failed check
    server.stop()

The server is started with `--ready-file` and `--journal` in the given directory; start() returns once
the ready file exists (bounded by `start_timeout`). Each reset starts a new round of the journal, and
`faultline check --round N` judges one round on its own (docs/control-api.md, "Rounds"), so a test
that is one round is judged alone. The pytest plugin (faultline.pytest_plugin) is this, one round a test.
"""

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .control import FaultlineControl

__all__ = ["FaultlineServer", "FaultlineStartError", "FaultlineCheckError", "CheckResult", "find_binary"]

# A poll interval, not a wait: every bounded wait below looks this often and gives up at its deadline.
_POLL_SECONDS = 0.01
# How long the journal file may lag the control API: the writer flushes every 2 ms (docs/control-api.md,
# "Journal durability"); the margin is for a loaded machine.
_JOURNAL_LAG_SECONDS = 5.0
_STOP_SECONDS = 10.0


class FaultlineStartError(Exception):
    """The faultline binary is missing, or it exited or stayed silent before writing its ready file."""


class FaultlineCheckError(AssertionError):
    """`faultline check` judged a round and a check failed (or it could not judge): its output is the message."""

    def __init__(self, result):
        super().__init__(result.describe())
        self.result = result


@dataclass(frozen=True)
class CheckResult:
    """What `faultline check --round N` said about one round: its exit code (0 passed, 1 a check failed,
    2 bad input, 4 too little evidence) and its console output, the verdicts with their evidence.
    Too little evidence is no failure: a test without a Retry-After gives `retry_after` nothing to judge."""

    round: int
    command: list
    exit_code: int
    output: str

    @property
    def failed(self):
        return self.exit_code not in (0, 4)

    def describe(self):
        verdict = f"failed (exit {self.exit_code})" if self.failed else "passed"
        return f"faultline check, round {self.round}, {verdict}: {' '.join(self.command)}\n{self.output}"


def find_binary(binary=None):
    """The faultline executable: `binary` if given, else $FAULTLINE_BIN, else `faultline` on PATH."""
    candidate = binary or os.environ.get("FAULTLINE_BIN") or shutil.which("faultline")
    if not candidate:
        raise FaultlineStartError(
            "the faultline binary was not found: set FAULTLINE_BIN, pass --faultline-bin, or put faultline on PATH")
    if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise FaultlineStartError(f"the faultline binary {candidate} does not exist or is not executable")
    return str(candidate)


class FaultlineServer:
    """One faultline process this object started and owns: stop() ends it, and only it (by its own
    Popen handle). `control` is its control API; `round` the journal's current round. Not thread-safe:
    one test at a time drives the rounds."""

    def __init__(self, binary, process, workdir, ready, log_path):
        self.binary = binary
        self.process = process
        self.workdir = workdir
        self.ready = ready
        self.log_path = log_path
        self.journal_path = workdir / "journal.jsonl"
        self.url = ready["url"]
        self.control = FaultlineControl(ready["control_url"], token=ready.get("token"))
        self.round = self.control.health()["round"]
        self._round_rules = []
        self._journal_offset = 0

    @classmethod
    def start(cls, workdir, *, binary=None, rules=None, upstream=None, start_timeout=10.0):
        """Starts `faultline serve`, or with `upstream` (HOST:PORT) `faultline proxy` in front of it, with
        its ready file, journal and output in `workdir`; returns once it listens."""
        binary = find_binary(binary)
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        ready_path = workdir / "ready.json"
        log_path = workdir / "faultline.log"
        ready_path.unlink(missing_ok=True)   # one left by a `kill -9` would pass for this server's
        command = [binary, "proxy", "--upstream", upstream] if upstream else [binary, "serve"]
        if rules:
            command += ["--rules", str(rules)]
        command += ["--journal", str(workdir / "journal.jsonl"), "--ready-file", str(ready_path)]
        # Its output goes to a file, not a pipe nobody reads: a full pipe would stall the server.
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

        deadline = time.monotonic() + start_timeout
        # The ready file is renamed into place once every port listens, so it is whole when it exists.
        while not ready_path.exists():
            if process.poll() is not None:
                raise FaultlineStartError(f"{' '.join(command)} exited {process.returncode} before it was ready:\n"
                                          + log_path.read_text(errors="replace"))
            if time.monotonic() > deadline:
                _end(process)
                raise FaultlineStartError(f"{' '.join(command)} wrote no ready file within {start_timeout} s:\n"
                                          + log_path.read_text(errors="replace"))
            time.sleep(_POLL_SECONDS)
        try:
            return cls(binary, process, workdir, json.loads(ready_path.read_text()), log_path)
        except BaseException:
            _end(process)
            raise

    def add_round_rule(self, rule):
        """Adds a rule (a dict or a TOML table, as FaultlineControl.add_rule) for the current round only:
        end_round() removes it."""
        name = self.control.add_rule(rule)["added"]
        self._round_rules.append(name)
        return name

    def end_round(self):
        """Removes this round's rules and resets, starting the next round; returns (the round that ended,
        how many attempts it had) once the journal file holds all of it."""
        for name in self._round_rules:
            self.control.remove_rule(name)
        self._round_rules.clear()
        # Memory holds the current round until the reset forgets it.
        attempts = sum(1 for record in self.control.journal(round=self.round) if "event" not in record)
        ended = self.round
        self.round = self.control.reset()["round"]
        self._wait_for_reset_in_journal(self.round)
        return ended, attempts

    def check_round(self, round, expect):
        """`faultline check` on the journal file, judging `round` alone against the checks in `expect`."""
        command = [self.binary, "check", str(self.journal_path), "--expect", str(expect), "--round", str(round)]
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        return CheckResult(round, command, result.returncode, result.stdout + result.stderr)

    def finish_round(self, expect=None):
        """Ends the current round and judges it against `expect` (if given and the round had attempts: a
        round without any has nothing to judge). Raises FaultlineCheckError when a check fails (exit 1) or
        the round could not be judged (exit 2, 3);
        returns the CheckResult, or None when nothing was judged."""
        ended, attempts = self.end_round()
        if expect is None or attempts == 0:
            return None
        result = self.check_round(ended, expect)
        if result.failed:
            raise FaultlineCheckError(result)
        return result

    def stop(self):
        """SIGTERM, so the server flushes its journal and removes its ready file; SIGKILL after a bound."""
        _end(self.process)

    def _wait_for_reset_in_journal(self, round):
        """Waits until the journal file holds the reset event that starts `round`: every record of the
        rounds before it is written by then (the writer keeps the order)."""
        deadline = time.monotonic() + _JOURNAL_LAG_SECONDS
        pending = b""
        with open(self.journal_path, "rb") as journal:
            journal.seek(self._journal_offset)
            while True:
                pending += journal.read()
                *lines, pending = pending.split(b"\n")
                self._journal_offset = journal.tell() - len(pending)
                for line in lines:
                    if b'"event":"reset"' in line and json.loads(line).get("round") == round:
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.journal_path} has no reset event of round {round} after "
                                       f"{_JOURNAL_LAG_SECONDS} s (see {self.log_path})")
                time.sleep(_POLL_SECONDS)


def _end(process):
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
