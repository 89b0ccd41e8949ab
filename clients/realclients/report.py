"""Markdown tables for docs/score.md ("Real clients") from the ground truth and compare.py results.

    python3 report.py groundtruth            # config x situation: attempts and what stands out
    python3 report.py expected               # config x property: the verdict the ground truth calls for
    python3 report.py results FILE [FILE...] # compare.py --results files: cells, counts, flips
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mapping  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = [("persistent-503", "503×∞"), ("persistent-reset", "RST×∞"), ("connection-refused", "refused"),
           ("keepalive-drop", "keep-alive drop"), ("lost-response-fresh", "lost FIN"),
           ("reset-after-commit", "lost RST"), ("committed-then-timeout", "late 201"),
           ("lost-response-kept-alive", "503, lost"), ("reset-before-read", "RST unread"),
           ("reset-on-accept", "RST accept"), ("retry-after-429-seconds", "429 RA 1"),
           ("retry-after-503-http-date", "503 RA date"), ("retry-after-shorter-than-backoff", "503 RA 1×3"),
           ("retry-after-past-deadline", "503 RA 20"), ("status-413-retry-after", "413 RA 1"),
           ("slow-responses", "10 s reply"), ("status-408", "408")]


def cell(situation, runs):
    if not runs:
        return "–"
    r = runs[0]
    text = str(max(x["attempts"] for x in runs)) if len(runs) > 1 else str(r["attempts"])
    notes = []
    if situation in mapping.LOST_REPLY and any(x["effects"] > 1 for x in runs):
        notes.append("2×")
    if any(ra["early_ms"] > mapping.RETRY_AFTER_TOLERANCE_MS for x in runs for ra in x["retry_after"]):
        notes.append("early")
    if situation in mapping.UNSENT and r["attempts"] > 1:
        notes.append("ok" if r["success"] else "failed")
    if any(x["killed_at_time_limit"] for x in runs):
        notes.append("killed")
    if situation.startswith("persistent") or situation == "connection-refused":
        gaps = [round(g / 1000, 1) for g in r["gaps_ms"]]
        if gaps:
            notes.append("/".join(f"{g:g}" for g in gaps) + " s")
    return text + (" " + " ".join(notes) if notes else "")


def groundtruth(doc):
    names = list(doc["configs"])
    out = ["| config | " + " | ".join(c for _, c in COLUMNS) + " | 4xx, 501 |",
           "|---" * (len(COLUMNS) + 2) + "|"]
    for n in names:
        sits = doc["configs"][n]["situations"]
        statuses = [s for s in mapping.NEVER_RETRY if any(r["attempts"] > 1 for r in sits.get(s, []))]
        out.append(f"| {n} | " + " | ".join(cell(s, sits.get(s, [])) for s, _ in COLUMNS) + " | " +
                   ("retried " + ", ".join(s.split("-")[1] for s in statuses) if statuses else "1 each") + " |")
    return "\n".join(out)


def expected(doc):
    out = ["| config | " + " | ".join(mapping.SHORT[p] for p in mapping.PROPERTIES) + " |",
           "|---" * (len(mapping.PROPERTIES) + 1) + "|"]
    for n, c in doc["configs"].items():
        e = mapping.expected(c)
        out.append(f"| {n} | " + " | ".join(("**fail**" if e[p][0] == "fail" else e[p][0]) for p in mapping.PROPERTIES) + " |")
    return "\n".join(out)


def results(files):
    letter = {"pass": "P", "fail": "F", "n/a": "n", "insufficient evidence": "i", "error": "E", "?": "?"}
    mark = {"match": "", "unknown": "", "miss": " **miss**", "false alarm": " **false alarm**",
            "unjudged": " unjudged", "unearned": " unearned", "error": " error"}
    out = []
    for path in files:
        doc = json.load(open(path))
        last = doc["runs"][-1]
        out.append(f"{doc['label']}: {len(doc['runs'])} run(s), load at the end {doc['load_at_end']:.1f}\n")
        out.append("| config | " + " | ".join(mapping.SHORT[p] for p in mapping.PROPERTIES) + " |")
        out.append("|---" * (len(mapping.PROPERTIES) + 1) + "|")
        for n, e in doc["expected"].items():
            cells = [f"{letter[e[p][0]]}/{letter[last['got'][n][p]]}{mark[last['marks'][n][p]]}" for p in mapping.PROPERTIES]
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        for h in doc["runs"]:
            c = h["counts"]
            out.append(f"\nrun {h['run']}: {h['violations']} known violations, {h['caught']} caught; "
                       f"{c['miss']} misses, {c['false alarm']} false alarms, {c['unjudged']} unjudged, "
                       f"{c['unearned']} unearned, {c['error']} without a scorecard; {c['match']} cells matched.")
        if len(doc["runs"]) > 1:
            flips = doc["flips"]
            out.append(f"\nflips over {len(doc['runs'])} runs: {len(flips)}" +
                       "".join(f"\n- {n} {mapping.SHORT[p]}: {' '.join(letter[s] for s in seen)}" for n, p, seen in flips))
        out.append("")
    return "\n".join(out)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "groundtruth"
    if what == "results":
        print(results(sys.argv[2:]))
        return
    doc = json.load(open(os.path.join(HERE, "groundtruth.json")))
    print(groundtruth(doc) if what == "groundtruth" else expected(doc))


if __name__ == "__main__":
    main()
