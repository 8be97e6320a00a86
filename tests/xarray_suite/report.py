"""The report of xarray's backend tests under engine="h5tile" (scripts/xarray_suite.sh), and its gate.

Reads the outcomes conftest.py wrote (JSON) and known_failures.txt (its format and the gate are
tests/h5py_suite/report.py's, reused); prints, and writes as markdown, a table per test class and
the failures by cause. Exits 1 where a test fails that the list does not name; prints the listed
tests that now pass. Without KNOWN_FAILURES.txt (the self-check, engine="h5netcdf") every failure
fails the gate.

    python3 report.py RESULTS.json [KNOWN_FAILURES.txt] [--markdown OUT.md] [--seconds N]
                      [--engine E] [--xarray-version V]
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import re
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "h5py_suite_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h5py_suite", "report.py"))
_h5py_suite_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h5py_suite_report)
rate, publish = _h5py_suite_report.rate, _h5py_suite_report.publish
read_known_failures = _h5py_suite_report.read_known_failures

_OUTCOMES = ("passed", "failed", "skipped", "xfailed")
# The run's folder (scripts/xarray_suite.sh's mktemp -d, the tests' files below it) in messages.
_RUN_PATHS = re.compile(r"[^'\"\s]*/xarray-suite\.[A-Za-z0-9]+/[^'\"\s]*")


def message(entry: dict) -> str:
    return _RUN_PATHS.sub("TMP/FILE", entry["message"])


def class_table(tests: dict) -> list:
    classes: "collections.OrderedDict[str, collections.Counter]" = collections.OrderedDict()
    for node_id in sorted(tests):
        counts = classes.setdefault(node_id.split("::")[1], collections.Counter())
        counts["tests"] += 1
        counts[tests[node_id]["outcome"]] += 1
    rows = ["| class | tests | passed | failed | skipped | xfailed | pass rate |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    total: collections.Counter = collections.Counter()
    for name, c in [*classes.items(), ("**all**", None)]:
        c = total if c is None else c
        if name != "**all**":
            total.update(c)
        rows.append(f"| {name} | {c['tests']} | " + " | ".join(str(c[o]) for o in _OUTCOMES)
                    + f" | {rate(c['passed'], c['failed'])} |")
    return rows


def cause_table(tests: dict, known: dict) -> list:
    causes: dict = collections.defaultdict(list)
    for node_id, entry in tests.items():
        if entry["outcome"] == "failed":
            causes[known.get(node_id, ("not listed (a regression)", "", False))[:2]].append(node_id)
    rows = ["| cause | where | failing tests | example | its error |", "| --- | --- | ---: | --- | --- |"]
    for (cause, where), nodes in sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        first = sorted(nodes)[0]
        error = message(tests[first])[:160].replace("|", "\\|")
        rows.append(f"| {cause} | {where} | {len(nodes)} | `{first}` | `{error}` |")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("known_failures", nargs="?")
    parser.add_argument("--markdown")
    parser.add_argument("--seconds", type=int)
    parser.add_argument("--engine", default="h5tile")
    parser.add_argument("--xarray-version", default="?")
    args = parser.parse_args()
    with open(args.results, encoding="utf-8") as f:
        tests = json.load(f)["tests"]
    known = read_known_failures(args.known_failures) if args.known_failures else {}
    counts = collections.Counter(entry["outcome"] for entry in tests.values())
    duration = f" in {args.seconds} s" if args.seconds is not None else ""
    lines = [f"xarray {args.xarray_version} backend tests (test_backends.py), engine={args.engine!r}: "
             f"{len(tests)} tests{duration}", "", *class_table(tests), "",
             f"Pass rate: {counts['passed']} of {counts['passed'] + counts['failed']} tests that ran pass "
             f"({rate(counts['passed'], counts['failed'])}); {counts['skipped']} skipped, "
             f"{counts['xfailed']} xfailed (xarray's own skips and expected failures).",
             "", f"Failures by cause ({args.known_failures or 'none expected: the self-check'}):", "",
             *cause_table(tests, known)]
    return publish("\n".join(lines) + "\n", args.markdown, tests, known, message)


if __name__ == "__main__":
    sys.exit(main())
