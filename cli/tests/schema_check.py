#!/usr/bin/env python3
"""`faultline schema` against the files faultline ships: every scenario, rules and simulation file validates
against the schema of its format, and files the strict reader refuses (an unknown key, a key of
another fault kind, a wrong type, a bad duration) are refused by the schema too.
   schema_check.py FAULTLINE SOURCE_DIR"""
import json
import pathlib
import subprocess
import sys
import tomllib

import jsonschema

faultline, source = sys.argv[1], pathlib.Path(sys.argv[2])


def schema(fmt):
    out = subprocess.run([faultline, "schema", fmt], check=True, capture_output=True, text=True).stdout
    checked = json.loads(out)
    jsonschema.Draft7Validator.check_schema(checked)
    return jsonschema.Draft7Validator(checked)


def problems(validator, text):
    return [e.message for e in validator.iter_errors(tomllib.loads(text))]


scenario, rules, toxics, simulate = schema("scenario"), schema("rules"), schema("toxics"), schema("simulate")
shipped = [
    (scenario, [p for p in (source / "suites").glob("*.toml")]
    + list((source / "suites/conformance").glob("*.toml"))
    + list((source / "examples/scenarios").glob("*.toml"))
    + list((source / "reports/tests/scenarios").glob("*.toml"))
    + [source / "examples/cpp-consumer/lost-response.toml", source / "bench/run_memory.toml"]),
    (rules, [source / "docs/guides/examples/rules.toml", source / "examples/rules.toml"]
    + [source / "fuzz/corpus/serve_config_fuzz" / f
       for f in ("delay-and-close.toml", "lost-first-payment.toml", "server-table.toml")]),
    (simulate, list((source / "examples/simulate").glob("*.toml"))),
]
failed = 0
checked = 0
for validator, files in shipped:
    for path in files:
        checked += 1
        found = problems(validator, path.read_text())
        if found:
            failed += 1
            print(f"{path}: {found[:3]}")

toxics_file = """
[[toxic]]
name = "slow"
kind = "latency"
latency = "100ms"
jitter = "20ms"
"""
checked += 1
if problems(toxics, toxics_file):
    failed += 1
    print("a good toxics file:", problems(toxics, toxics_file))

refused = {
    "an unknown top-level key": (scenario, 'nmae = "x"\n[[expect]]\ncheck = "no_double_effects"\n'),
    "a key of another fault kind": (scenario, '[[fault]]\nkind = "status"\nmedian = "20ms"\n[[expect]]\ncheck = "success_rate"\n'),
    "a wrong type": (scenario, 'seed = "seven"\n[[expect]]\ncheck = "no_double_effects"\n'),
    "a duration without unit": (scenario, 'time_limit = "5"\n[[expect]]\ncheck = "no_double_effects"\n'),
    "an unknown check": (scenario, '[[expect]]\ncheck = "no_doubles"\n'),
    "an unknown key in [fault.match]": (rules, '[[fault]]\nkind = "delay"\n[fault.match]\nmethdo = "POST"\n'),
    "an unknown toxic kind": (toxics, '[[toxic]]\nkind = "warp"\n'),
    "a simulation without [simulate]": (simulate, 'name = "x"\n'),
    "an unknown model": (simulate, '[simulate]\nmodel = "queue"\n'),
    "an unknown key in [simulate.capacity]": (simulate, '[simulate]\nmodel = "capacity"\n[simulate.capacity]\nqueue = 5\n'),
    "trials out of range": (simulate, '[simulate]\ntrials = 0\n'),
}
for what, (validator, text) in refused.items():
    checked += 1
    if not problems(validator, text):
        failed += 1
        print(f"the schema accepts {what}:\n{text}")

print(f"schema_check: {checked - failed} of {checked} as expected")
sys.exit(1 if failed else 0)
