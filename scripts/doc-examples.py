#!/usr/bin/env python3
"""Runs the shell examples printed in README.md and docs/guides/*.md, as a reader would type them.

Every fenced block tagged sh, bash, shell or console is an example (a console block's commands are
its `$ ` lines). A page is one terminal session: its blocks run in order in one bash, so a variable
or function one block defines is there in the next, starting in a scratch copy of the checkout
(CHECKOUT_DIRS) with the built faultline first on PATH and TMPDIR inside the scratch directory.
A command that fails (bash's ERR trap: what `set -e` would stop at) fails its block; an unset
variable ends the session. Each block has BLOCK_TIMEOUT_S; afterwards, or on a timeout, every
process the page left running (the session's process group, and only it) gets SIGTERM, then SIGKILL.

A block that must not run here says so in an HTML comment on the line before its fence:
    <!-- example: skip (REASON) -->                  not run, and why (a reason is required)
    <!-- example: covered-by PATH [NAME] (NOTE) -->  run elsewhere: PATH (from the repository root)
                                                     exists and contains NAME, e.g. a test's name
    <!-- example: exits N (NOTE) -->                 runs, and must fail: every command that fails
                                                     exits N, and one does (e.g. faultline check 1)
An unmarked block runs, so a new example fails this test until it works as printed or is marked.

    doc-examples.py FAULTLINE_DIR SOURCE_DIR [--list] [PAGE.md ...]
Exit 0: every block ran cleanly or is marked; 1: a block failed; 2: bad usage or a malformed marker.
"""
import concurrent.futures
import os
import pathlib
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHELL_TAGS = {"sh", "bash", "shell", "console"}
# What the examples refer to by relative path from a checkout's root; copied, so nothing they write
# lands in the source tree.
CHECKOUT_DIRS = ("suites", "examples", "docs", "clients")
BLOCK_TIMEOUT_S = 60
PAGES_AT_ONCE = 2
STOP_GRACE_S = 5  # SIGTERM to SIGKILL for what a page left running

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
SKIP = re.compile(r"^skip\s+\((.+)\)$")
COVERED_BY = re.compile(r"^covered-by\s+(\S+)(?:\s+([^\s(]+))?(?:\s+\((.+)\))?$")
EXITS = re.compile(r"^exits\s+(\d+)(?:\s+\((.+)\))?$")


class Block:
    def __init__(self, page, line, tag, text, marker):
        self.page, self.line, self.tag, self.text, self.marker = page, line, tag, text, marker
        exits = EXITS.match(marker or "")
        self.expected_exit = int(exits.group(1)) if exits else None

    @property
    def where(self):
        return f"{self.page}:{self.line}"

    def script(self):
        if self.tag != "console":
            return self.text
        commands, continuing = [], False
        for line in self.text.splitlines():
            if continuing or line.startswith("$ "):
                commands.append(line if continuing else line[2:])
                continuing = line.endswith("\\")
        return "\n".join(commands) + "\n"


def blocks_of(source, page):
    """The shell blocks of one page, each with the marker on the line before its fence (or None)."""
    lines = (source / page).read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, ticks, tag = fence.groups()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(ticks):
            end += 1
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:end]]
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(previous)
        if tag in SHELL_TAGS:
            found.append(Block(page, i + 1, tag, "\n".join(body) + "\n", marker.group(1) if marker else None))
        elif marker:
            raise ValueError(f"{page}:{i + 1}: an example marker before a {tag or 'plain'} block, which is never run")
        i = end + 1
    return found


def check_marker(block, source):
    """None for a block to run; else why it is not run here. Raises ValueError for a bad marker."""
    if block.marker is None or block.expected_exit is not None:
        return None
    skip = SKIP.match(block.marker)
    if skip:
        return f"skipped: {skip.group(1)}"
    covered = COVERED_BY.match(block.marker)
    if not covered:
        raise ValueError(f"{block.where}: unknown example marker {block.marker!r}")
    path, name, note = covered.groups()
    if not (source / path).is_file():
        raise ValueError(f"{block.where}: covered-by {path}, which does not exist")
    if name and name not in (source / path).read_text():
        raise ValueError(f"{block.where}: covered-by {path}, which does not contain {name}")
    return f"covered by {path}" + (f" ({name})" if name else "") + (f": {note}" if note else "")


def group_members(pgid):
    members = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited while we looked
        state, _, group = stat[stat.rindex(")") + 2:].split()[:3]
        if int(group) == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def command_line(pid):
    try:
        return (pathlib.Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "?"


def stop_group(shell):
    """SIGTERM to every process of the page's group, then SIGKILL to what is left after STOP_GRACE_S;
    returns the command lines of the processes the page had left running."""
    pgid = shell.pid
    left = [command_line(pid) for pid in group_members(pgid) if pid != shell.pid]
    pidfds = []
    for pid in group_members(pgid):
        try:
            pidfds.append(os.pidfd_open(pid))
        except OSError:
            continue
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + STOP_GRACE_S
    waiting = list(pidfds)
    while waiting and time.monotonic() < deadline:
        ready, _, _ = select.select(waiting, [], [], deadline - time.monotonic())
        waiting = [fd for fd in waiting if fd not in ready]
    if waiting:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for fd in pidfds:
        os.close(fd)
    shell.wait(timeout=STOP_GRACE_S)
    return left


def failed_commands(path):
    """The ERR trap's records: [status, file, line, command]; a command with a newline spans lines."""
    records = []
    for line in path.read_text().splitlines() if path.exists() else []:
        fields = line.split("\t", 3)
        if len(fields) == 4 and fields[0].isdigit():
            records.append(fields)
        elif records:
            records[-1][3] += "\n" + line
    return records


def run_page(page, blocks, faultline_dir, source, scratch):
    """Runs a page's runnable blocks in one bash; returns what happened (lines) and the failure reports."""
    started_page, report = time.monotonic(), [f"{page}: {len(blocks)} block(s)"]
    home = scratch / page.replace("/", "_")
    for name in CHECKOUT_DIRS:
        shutil.copytree(source / name, home / name, symlinks=True,
                        ignore=shutil.ignore_patterns("node_modules", "__pycache__", ".venv"))
    (home / "tmp").mkdir()
    logs = scratch / (page.replace("/", "_") + ".logs")
    logs.mkdir()
    progress_read, progress = os.pipe()
    driver_path = logs / "driver.sh"
    # The ERR trap records a failed command of a block (not the driver's `source` of it): status,
    # the block's file, line, command. Blocks run without the progress pipe, so a server they leave
    # running cannot hold it open: the pipe's end means the shell is gone.
    driver = ["set -o nounset -o pipefail -o errtrace",
              f"trap 'example_status=$?; [[ ${{BASH_SOURCE[0]:-}} == {driver_path} ]] || "
              f"printf \"%s\\t%s\\t%s\\t%s\\n\" \"$example_status\" \"${{BASH_SOURCE[0]:-}}\" \"$LINENO\" \"$BASH_COMMAND\" >>\"$example_failures\"' ERR"]
    for n, block in enumerate(blocks):
        (logs / f"{n}.sh").write_text(block.script())
        driver += [f"printf 'begin {n}\\n' >&{progress}",
                   f"example_failures={logs / f'{n}.failures'}",
                   f"source {logs / f'{n}.sh'} </dev/null >{logs / f'{n}.log'} 2>&1 {progress}>&-",
                   f"printf 'end {n}\\n' >&{progress}"]
    driver_path.write_text("\n".join(driver) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAULTLINE_")}
    env.update(PATH=f"{faultline_dir}:{os.environ['PATH']}", TMPDIR=str(home / "tmp"), PYTHONDONTWRITEBYTECODE="1",
               # npm: its cache in the scratch directory, and no registry (`npm install ./clients/node`
               # needs none)
               npm_config_cache=str(home / "tmp/npm"), npm_config_offline="true")
    with open(logs / "driver.log", "w") as driver_log:
        shell = subprocess.Popen(["bash", "--noprofile", "--norc", str(driver_path)], cwd=home, env=env,
                                 pass_fds=(progress,), start_new_session=True, stdin=subprocess.DEVNULL,
                                 stdout=driver_log, stderr=subprocess.STDOUT)
    os.close(progress)
    finished, current, unfinished_why, buffered = set(), None, None, b""
    deadline = time.monotonic() + BLOCK_TIMEOUT_S
    while len(finished) < len(blocks) and unfinished_why is None:
        ready, _, _ = select.select([progress_read], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(progress_read, 4096) if ready else None
        if chunk is None:
            unfinished_why = f"still running after {BLOCK_TIMEOUT_S} s"
        elif not chunk:
            unfinished_why = f"the shell exited (status {shell.wait()}) {(logs / 'driver.log').read_text().strip()}"
        buffered += chunk or b""
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            event, n = line.decode().split()
            current = int(n)
            if event == "begin":
                started, deadline = time.monotonic(), time.monotonic() + BLOCK_TIMEOUT_S
            else:
                finished.add(current)
                report.append(f"  ran {blocks[current].where} in {time.monotonic() - started:.1f} s")
    os.close(progress_read)
    left = stop_group(shell)
    if left:
        report.append(f"  {page} left running, now stopped: " + "; ".join(left))

    failures = []
    for n, block in enumerate(blocks):
        if n not in finished and n != current:
            continue  # an earlier block failed, and is reported
        failed = failed_commands(logs / f"{n}.failures")
        if n not in finished:
            why = unfinished_why
        elif block.expected_exit is None:
            why = "a command failed" if failed else None
        elif not failed or any(int(status) != block.expected_exit for status, *_ in failed):
            why = f"expected its failing commands to exit {block.expected_exit}"
        else:
            why = None
        if why:
            commands = "".join(f"  exit {status}: {command}  ({pathlib.Path(file).name} line {line})\n"
                               for status, file, line, command in failed)
            log = (logs / f"{n}.log").read_text() if (logs / f"{n}.log").exists() else ""
            later = len(blocks) - len(finished) - 1 if n not in finished else 0
            failures.append(f"{block.where}: {why}\n{commands}--- the block ({n}.sh):\n{block.script()}"
                            f"--- its output:\n{log}" + (f"--- {later} later block(s) did not run\n" if later else ""))
    report.append(f"  {page} took {time.monotonic() - started_page:.1f} s")
    return report, failures, len(finished)


def main(argv):
    args = [a for a in argv if a != "--list"]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    faultline_dir, source = pathlib.Path(args[0]).resolve(), pathlib.Path(args[1]).resolve()
    pages = args[2:] or ["README.md"] + sorted(str(p.relative_to(source)) for p in (source / "docs/guides").glob("*.md"))
    runnable, not_run, ran = {}, 0, 0
    try:
        for page in pages:
            for block in blocks_of(source, page):
                why_not = check_marker(block, source)
                if why_not:
                    not_run += 1
                    print(f"{block.where}: {why_not}")
                else:
                    runnable.setdefault(page, []).append(block)
    except ValueError as bad_marker:
        print(f"doc-examples: {bad_marker}", file=sys.stderr)
        return 2
    if "--list" in argv:
        for page, blocks in runnable.items():
            for block in blocks:
                print(f"{block.where}: runs")
        return 0
    if not (faultline_dir / "faultline").is_file():
        print(f"doc-examples: no faultline in {faultline_dir}", file=sys.stderr)
        return 2
    failures, started = [], time.monotonic()
    # Pages are independent sessions: two at a time, so the README's whole-suite run (half a minute)
    # overlaps the guides' pages, which mostly wait out Retry-After.
    with tempfile.TemporaryDirectory(prefix="doc-examples-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=PAGES_AT_ONCE) as pool:
        runs = [pool.submit(run_page, page, blocks, faultline_dir, source, pathlib.Path(scratch))
                for page, blocks in runnable.items()]
        for run in runs:
            report, page_failures, finished = run.result()
            print("\n".join(report))
            failures += page_failures
            ran += finished
    for failure in failures:
        print(f"\nFAILED {failure}")
    print(f"\ndoc-examples: {ran} block(s) ran to the end, {not_run} marked as run elsewhere or skipped, "
          f"{len(failures)} failure(s), in {time.monotonic() - started:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
