"""Scores every config of the real-client matrix with `faultline score --scorecard-json` and compares
each property, cell by cell, with the verdict the measured ground truth calls for (mapping.py).

    python3 compare.py --faultline PATH [--config GLOB] [--runs N] [--results FILE] [--keep DIR]

Run from the repository root (the templates name clients/realclients/...). Prints, per run, a table
config x property with `expected/faultline` in each cell (P pass, F fail, n n/a, i insufficient
evidence, E no scorecard, ? the ground truth cannot tell), then the counts:
- miss: the ground truth shows a violation (F) and faultline did not fail the row;
- false alarm: faultline failed a row the ground truth shows kept (P or n);
- unjudged: kept by the ground truth, but faultline could not judge it (n or i for a P);
- unearned: faultline passed a row with nothing to judge by the ground truth (P for an n);
and, over several runs, every cell whose faultline verdict changed (a flip).
Exits 0 when every cell matched in every run, 1 on any mismatch or flip, 2 on bad input.
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mapping  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LETTER = {"pass": "P", "fail": "F", "n/a": "n", "insufficient evidence": "i", "error": "E", "?": "?"}
SCORE_TIME_LIMIT_S = 600


def classify(expected, got):
    if expected == "?":
        return "unknown"
    if expected == got:
        return "match"
    if expected == "fail":
        return "miss"
    if got == "fail":
        return "false alarm"
    if got == "error":
        return "error"
    if expected == "pass":
        return "unjudged"
    return "unearned"


def score(faultline, config, keep_dir, run):
    """Runs `faultline score` on one config; returns ({property: outcome}, exit code, seconds)."""
    path = os.path.join(keep_dir, f"{config['name']}.run{run}.json")
    argv = [faultline, "score", "--quiet", "--scorecard-json", path, *config["score"], "--", *config["template"]]
    started = time.monotonic()
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=SCORE_TIME_LIMIT_S)
        code = proc.returncode
        with open(os.path.join(keep_dir, f"{config['name']}.run{run}.txt"), "w") as f:
            f.write(proc.stdout + proc.stderr)
    except subprocess.TimeoutExpired:
        code = "timeout"
    seconds = time.monotonic() - started
    try:
        card = json.load(open(path))
    except (OSError, ValueError):
        return {p: "error" for p in mapping.PROPERTIES}, code, seconds
    outcomes = {row["id"]: row["outcome"] for row in card["properties"]}
    return {p: outcomes.get(p, "error") for p in mapping.PROPERTIES}, code, seconds


def table(configs, expected, got, marks):
    width = max(len(c["name"]) for c in configs)
    head = f"{'config':<{width}} " + " ".join(f"{mapping.SHORT[p]:>9}" for p in mapping.PROPERTIES)
    lines = [head, "-" * len(head)]
    for c in configs:
        cells = []
        for p in mapping.PROPERTIES:
            mark = {"match": " ", "unknown": " ", "miss": "M", "false alarm": "A", "unjudged": "u",
                    "unearned": "e", "error": "E"}[marks[c["name"]][p]]
            cells.append(f"{LETTER[expected[c['name']][p][0]]}/{LETTER[got[c['name']][p]]} {mark}".rjust(9))
        lines.append(f"{c['name']:<{width}} " + " ".join(cells))
    lines.append("cell: expected/faultline, then M miss, A false alarm, u unjudged, e unearned, E no scorecard")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--faultline", required=True)
    p.add_argument("--groundtruth", default=os.path.join(HERE, "groundtruth.json"))
    p.add_argument("--config", action="append", help="glob on config names (repeatable)")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--results", help="write every run's cells as JSON here")
    p.add_argument("--keep", help="keep each scorecard (JSON and console) in this folder")
    p.add_argument("--label", default="", help="a word for the results (e.g. idle, loaded)")
    a = p.parse_args()
    if a.runs < 1 or a.runs > 50:
        print("compare.py: --runs must be 1..50", file=sys.stderr)
        return 2
    truth = json.load(open(a.groundtruth))["configs"]
    matrix = tomllib.load(open(os.path.join(HERE, "matrix.toml"), "rb"))["config"]
    configs = [c for c in matrix if not a.config or any(fnmatch.fnmatch(c["name"], g) for g in a.config)]
    missing = [c["name"] for c in configs if c["name"] not in truth]
    if missing or not configs:
        print(f"compare.py: no ground truth for {', '.join(missing) or 'any config'} "
              "(run clients/realclients/measure.py)", file=sys.stderr)
        return 2
    for c in configs:
        if truth[c["name"]]["template"] != c["template"] or truth[c["name"]]["score"] != c["score"]:
            print(f"compare.py: {c['name']}: matrix.toml changed since its ground truth was measured", file=sys.stderr)
            return 2
    expected = {c["name"]: mapping.expected(truth[c["name"]]) for c in configs}
    keep = a.keep or tempfile.mkdtemp(prefix="realclients-")
    os.makedirs(keep, exist_ok=True)

    history = []
    totals = {"miss": 0, "false alarm": 0, "unjudged": 0, "unearned": 0, "error": 0, "match": 0, "unknown": 0}
    for run in range(1, a.runs + 1):
        got, marks, codes = {}, {}, {}
        for c in configs:
            got[c["name"]], codes[c["name"]], seconds = score(a.faultline, c, keep, run)
            marks[c["name"]] = {p: classify(expected[c["name"]][p][0], got[c["name"]][p]) for p in mapping.PROPERTIES}
            print(f"run {run}: {c['name']}: faultline score exit {codes[c['name']]} in {seconds:.1f} s, load "
                  f"{os.getloadavg()[0]:.1f}", file=sys.stderr)
        counts = {k: sum(m == k for ms in marks.values() for m in ms.values()) for k in totals}
        for k in totals:
            totals[k] += counts[k]
        print(f"\n== run {run} of {a.runs} {a.label}".rstrip())
        print(table(configs, expected, got, marks))
        violations = sum(e[0] == "fail" for es in expected.values() for e in es.values())
        caught = sum(expected[n][p][0] == "fail" and got[n][p] == "fail" for n in got for p in mapping.PROPERTIES)
        print(f"known violations {violations}, caught {caught}; misses {counts['miss']}, false alarms "
              f"{counts['false alarm']}, unjudged {counts['unjudged']}, unearned {counts['unearned']}, "
              f"no scorecard {counts['error']}, matched {counts['match']} of "
              f"{sum(counts.values()) - counts['unknown']} judged cells ({counts['unknown']} cells the ground truth cannot tell)")
        history.append({"run": run, "got": got, "marks": marks, "exit_codes": codes, "counts": counts,
                        "violations": violations, "caught": caught})

    flips = []
    for c in configs:
        for prop in mapping.PROPERTIES:
            seen = [h["got"][c["name"]][prop] for h in history]
            if len(set(seen)) > 1:
                flips.append((c["name"], prop, seen))
    if a.runs > 1:
        print(f"\nflips over {a.runs} runs: {len(flips)}")
        for name, prop, seen in flips:
            print(f"  {name} {mapping.SHORT[prop]}: " + " ".join(LETTER[s] for s in seen))

    print("\nwhy (expected verdicts from the ground truth, for every mismatch):")
    last = history[-1]
    for c in configs:
        for prop in mapping.PROPERTIES:
            mark = last["marks"][c["name"]][prop]
            if mark not in ("match", "unknown"):
                e = expected[c["name"]][prop]
                print(f"  {c['name']} {mapping.SHORT[prop]} [{mark}]: expected {e[0]} ({e[1]}); "
                      f"faultline {last['got'][c['name']][prop]}")
    print(f"\nscorecards kept in {keep}")
    if a.results:
        with open(a.results, "w") as f:
            json.dump({"label": a.label, "load_at_end": os.getloadavg()[0],
                       "expected": {n: {p: list(v) for p, v in e.items()} for n, e in expected.items()},
                       "runs": history, "flips": flips}, f, indent=1)
            f.write("\n")
    mismatches = sum(v for k, v in totals.items() if k not in ("match", "unknown"))
    return 1 if mismatches or flips else 0


if __name__ == "__main__":
    sys.exit(main())
