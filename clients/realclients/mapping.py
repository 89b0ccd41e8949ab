"""From measured behaviour to the verdict a correct scorecard gives: the one place that says what each
scorecard property means in terms of the ground truth (groundtruth.json, measured by measure.py).

`expected(config)` returns {property id: (outcome, reason)} with outcome "pass", "fail", "n/a" or
"?" (the ground truth cannot tell: left out of the comparison, and reported). Property ids and
outcome words are those of `faultline score --scorecard-json`. Each rule states which measured
situations it reads; the thresholds are constants here, with the reason for each.
"""

import statistics

# A retry started this much before the Retry-After's due time still counts as honoured: the due time
# is taken when the reply left the server, a client counts from when it arrived (sub-ms on loopback),
# and an HTTP-date names a whole second (the server sends one that is exact).
RETRY_AFTER_TOLERANCE_MS = 50.0
# Gaps shorter than this are "back to back": no backoff (a process re-connecting takes 1-20 ms).
BACK_TO_BACK_MS = 50.0
# Backoff grows: the last retry's upper-quartile gap is at least this multiple of the first one's (a
# linear 1, 2, 3 s grows 3x; exponential more; a constant delay or one capped from the start, 1x).
GROWTH = 1.5
# Jitter is read at the last retry index of the repeated persistent situations (runs one at a time):
# the first retry also carries a runtime's first-connection work (Node: 20-90 ms, varying), the last
# one only the client's delay and the process waking. Each run's gap minus that situation's median,
# pooled over the situations; the central two thirds of those deviations (the sixth at each end
# dropped: a scheduling hiccup is one slow run, jitter spreads them all) must span at least this.
# Measured with 6 runs, 3 at a time, on a loaded 2-core machine: fixed delays (curl, wget, urllib3,
# fetch-retry) spanned 0.4-13.4 ms, the smallest real jitter (got: up to 100 ms of noise) 29-49 ms.
JITTER_MIN_CENTRAL_SPAN_MS = 20.0
# A declared deadline is kept when the process exits within it, counted from its first request.
DEADLINE_TOLERANCE_MS = 500.0

LOST_REPLY = ("lost-response-fresh", "reset-after-commit", "committed-then-timeout", "lost-response-kept-alive")
NEVER_RETRY = tuple(f"status-{s}" for s in (400, 401, 403, 404, 405, 409, 413, 422, 501))
RETRY_AFTER = ("retry-after-429-seconds", "retry-after-503-http-date", "retry-after-shorter-than-backoff",
               "retry-after-past-deadline", "status-413-retry-after")
UNSENT = ("reset-before-read", "reset-on-accept")
# Timing is judged on the situations each config ran several times, one run at a time (measure.py).
REPEATED = ("persistent-503", "persistent-reset")

PROPERTIES = ("evidence_intact", "single_execution", "retryable_statuses", "retry_after", "unsent_retried",
              "stable_key", "jittered", "backoff", "attempt_limit", "deadline")
SHORT = {"evidence_intact": "evid", "single_execution": "single", "retryable_statuses": "status",
         "retry_after": "R-After", "unsent_retried": "unsent", "stable_key": "key", "jittered": "jitter",
         "backoff": "backoff", "attempt_limit": "attempts", "deadline": "deadline"}


def declared(config, option):
    score = config["score"]
    return score[score.index(option) + 1] if option in score else None


def runs(config, situation):
    return config["situations"].get(situation, [])


def all_runs(config):
    return [(s, r) for s, rs in config["situations"].items() for r in rs]


def single_execution(config):
    doubled = [f"{s}: {r['effects']} effects" for s in LOST_REPLY for r in runs(config, s) if r["effects"] > 1]
    if doubled:
        return "fail", "POST charged twice: " + ", ".join(doubled)
    return "pass", "no POST executed twice in " + ", ".join(LOST_REPLY)


def retryable_statuses(config):
    retried = [f"{s}: {r['attempts']} attempts" for s in NEVER_RETRY for r in runs(config, s) if r["attempts"] > 1]
    if retried:
        return "fail", "retried a final status: " + ", ".join(retried)
    return "pass", "one attempt on each of " + "/".join(s.split("-")[1] for s in NEVER_RETRY)


def retry_after(config):
    waits = [(s, ra) for s in RETRY_AFTER for r in runs(config, s) for ra in r["retry_after"]]
    if not waits:
        return "n/a", "never retried after a Retry-After"
    early = [f"{s}: retry {ra['early_ms']:.0f} ms before Retry-After {ra['value']!r} was due"
             for s, ra in waits if ra["early_ms"] > RETRY_AFTER_TOLERANCE_MS]
    if early:
        return "fail", "; ".join(early)
    return "pass", f"{len(waits)} retries after a Retry-After, none early"


def unsent_retried(config):
    outcomes = {}
    for s in UNSENT:
        for r in runs(config, s):
            if r["attempts"] > 1:
                outcomes[s] = "pass" if r["success"] else "fail"
    if "fail" in outcomes.values():
        return "fail", "retried and still failed: " + ", ".join(s for s, o in outcomes.items() if o == "fail")
    if outcomes:
        return "pass", "retried and succeeded: " + ", ".join(outcomes)
    return "n/a", "gave up after a reset with nothing sent (allowed)"


def stable_key(config):
    keyed = [(s, r) for s, r in all_runs(config) if r["keys"] != "none"]
    changed = [s for s, r in keyed if r["keys"] == "changed"]
    if changed:
        return "fail", "key changed between attempts: " + ", ".join(changed)
    if any(r["attempts"] > 1 for _, r in keyed):
        return "pass", "one key over every attempt"
    return "n/a", "no Idempotency-Key sent" if not keyed else "sent a key but never retried"


def retried_anywhere(config):
    return any(r["attempts"] > 1 for _, r in all_runs(config))


def gap_columns(config, situation):
    """Gaps by retry index over the repeated runs of one persistent situation."""
    columns = {}
    for r in runs(config, situation):
        for i, g in enumerate(r["gaps_ms"]):
            columns.setdefault(i + 1, []).append(g)
    return columns


def jittered(config):
    if not retried_anywhere(config):
        return "n/a", "never retried"
    deviations, medians = [], []
    for s in REPEATED:
        columns = {i: g for i, g in gap_columns(config, s).items() if len(g) >= 3}
        if not columns:
            continue
        last = columns[max(columns)]
        median = statistics.median(last)
        medians.append(f"{s} retry {max(columns)}: {len(last)} runs around {median:.0f} ms")
        if median < BACK_TO_BACK_MS:
            return "fail", f"no delay to jitter: {medians[-1]}"
        deviations += [g - median for g in last]
    if not deviations:
        return "?", "retried, but no persistent situation repeated enough to measure jitter"
    deviations.sort()
    cut = len(deviations) // 6
    central = deviations[cut:len(deviations) - cut]
    span = central[-1] - central[0]
    text = f"{'; '.join(medians)}; central two thirds span {span:.1f} ms"
    return ("pass", text) if span >= JITTER_MIN_CENTRAL_SPAN_MS else ("fail", "not jittered: " + text)


def backoff(config):
    if not retried_anywhere(config):
        return "n/a", "never retried"
    verdicts = []
    for s in REPEATED:
        columns = {i: g for i, g in gap_columns(config, s).items() if len(g) >= 3}
        if len(columns) < 2:
            continue
        medians = [statistics.median(columns[i]) for i in sorted(columns)]
        # Growth of a jittered delay shows in its upper range (full jitter's median of U(0, x) is
        # noisy over a few runs), of a fixed one in every run alike: the upper quartile serves both.
        upper = [statistics.quantiles(columns[i], n=4)[2] for i in sorted(columns)]
        short = sum(m < BACK_TO_BACK_MS for m in medians)
        grows = upper[-1] >= GROWTH * max(upper[0], BACK_TO_BACK_MS)
        text = (f"{s}: median gaps " + ", ".join(f"{m:.0f}" for m in medians) + " ms, upper quartiles " +
                ", ".join(f"{u:.0f}" for u in upper) + " ms")
        if short > 1:
            verdicts.append(("fail", text + " (back to back)"))
        elif not grows:
            verdicts.append(("fail", text + " (does not grow)"))
        else:
            verdicts.append(("pass", text))
    if not verdicts:
        return "?", "retried, but never twice in a persistent situation"
    failed = [t for o, t in verdicts if o == "fail"]
    return ("fail", "; ".join(failed)) if failed else ("pass", "; ".join(t for _, t in verdicts))


def attempt_limit(config):
    limit = declared(config, "--max-attempts")
    if limit is None:
        return "n/a", "no limit declared"
    worst = max(all_runs(config), key=lambda sr: sr[1]["attempts"])
    if worst[1]["attempts"] > int(limit):
        over = [f"{s}: {r['attempts']}" for s, r in all_runs(config) if r["attempts"] > int(limit)]
        return "fail", f"more than {limit} attempts: " + ", ".join(sorted(set(over)))
    return "pass", f"at most {worst[1]['attempts']} attempts ({worst[0]})"


def deadline(config):
    value = declared(config, "--deadline")
    if value is None:
        return "n/a", "no deadline declared"
    bound_ms = float(value.rstrip("s")) * 1000.0
    late = [f"{s}: exited {r['total_from_first_request_ms']:.0f} ms after its first request"
            for s, r in all_runs(config)
            if r["total_from_first_request_ms"] is not None
            and r["total_from_first_request_ms"] > bound_ms + DEADLINE_TOLERANCE_MS]
    if late:
        return "fail", f"past {value}: " + "; ".join(sorted(set(late)))
    return "pass", f"every run exited within {value} of its first request"


RULES = {"evidence_intact": lambda c: ("pass", "no client uses the control API"),
         "single_execution": single_execution, "retryable_statuses": retryable_statuses,
         "retry_after": retry_after, "unsent_retried": unsent_retried, "stable_key": stable_key,
         "jittered": jittered, "backoff": backoff, "attempt_limit": attempt_limit, "deadline": deadline}


def expected(config):
    return {p: RULES[p](config) for p in PROPERTIES}
