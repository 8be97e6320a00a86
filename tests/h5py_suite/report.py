"""The report of h5py's test suite under h5tile (scripts/h5py_suite.sh), and its gate.

Reads the outcomes h5tile_swap.py wrote (JSON) and tests/h5py_suite/known_failures.txt; prints,
and writes as markdown, a table per test file (every test, and the read-side tests: those h5tile
answered), the read-side pass rate and the failures by cause. Exits 1 where a test fails that the
list does not name (a regression); tests the list names that now pass are printed, so that the
list can be shortened, without failing.

    python3 report.py RESULTS.json KNOWN_FAILURES.txt [--markdown OUT.md] [--seconds N]
                      [--h5py-version V]

known_failures.txt: ``[cause | issue]`` starts a group; each line after it is a node id
(``h5py/tests/test_x.py::Class::test``) that fails for that cause; ``[cause | issue | flaky]``
a group whose tests may pass by chance (not reported as fixed when they do); ``#`` starts a
comment.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from typing import Dict, List, Tuple

# How an outcome is counted: xfailed (h5py's own expected failures) counts as skipped.
_COUNTED = {"passed": "passed", "failed": "failed", "skipped": "skipped", "xfailed": "skipped"}


def read_known_failures(path: str) -> Dict[str, Tuple[str, str, bool]]:
    """Node id -> (cause, issue, flaky) from known_failures.txt."""
    known: Dict[str, Tuple[str, str, bool]] = {}
    cause, issue, flaky = None, "", False
    with open(path, encoding="utf-8") as lines:
        for number, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                parts = [part.strip() for part in line[1:-1].split("|")]
                if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "flaky"):
                    sys.exit(f"{path}:{number}: a group is [cause | issue] or [cause | issue | flaky]")
                cause, issue, flaky = parts[0], parts[1], len(parts) == 3
                continue
            if cause is None:
                sys.exit(f"{path}:{number}: a node id before any [cause | issue] line")
            if line in known:
                sys.exit(f"{path}:{number}: {line} is listed twice")
            known[line] = (cause, issue, flaky)
    return known


def per_file(tests: dict) -> "collections.OrderedDict[str, collections.Counter]":
    """Test file -> counts: every test's outcome, and the read-side tests' ("rs_passed"...)."""
    files: "collections.OrderedDict[str, collections.Counter]" = collections.OrderedDict()
    for node_id in sorted(tests):
        entry = tests[node_id]
        counts = files.setdefault(node_id.split("::")[0], collections.Counter())
        outcome = _COUNTED.get(entry["outcome"], "failed")
        counts["tests"] += 1
        counts[outcome] += 1
        if entry["h5tile"]:
            counts["read_side"] += 1
            counts["rs_" + outcome] += 1
    return files


def rate(passed: int, failed: int) -> str:
    return f"{100.0 * passed / (passed + failed):.1f}%" if passed + failed else "n/a"


def file_table(files) -> List[str]:
    rows = ["| file | tests | passed | failed | skipped | read-side | read-side passed | read-side failed | "
            "read-side skipped | read-side pass rate |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    total: collections.Counter = collections.Counter()
    for name, c in files.items():
        total.update(c)
        rows.append(_file_row(name.replace("h5py/tests/", ""), c))
    rows.append(_file_row("**all**", total))
    return rows


def _file_row(name: str, c) -> str:
    return (f"| {name} | {c['tests']} | {c['passed']} | {c['failed']} | {c['skipped']} | {c['read_side']} | "
            f"{c['rs_passed']} | {c['rs_failed']} | {c['rs_skipped']} | {rate(c['rs_passed'], c['rs_failed'])} |")


def cause_table(tests: dict, known: dict) -> List[str]:
    """The failing tests by the cause known_failures.txt gives them, most first."""
    causes: Dict[Tuple[str, str], List[str]] = collections.defaultdict(list)
    for node_id, entry in tests.items():
        if entry["outcome"] == "failed":
            causes[known.get(node_id, ("not listed (a regression)", "", False))[:2]].append(node_id)
    rows = ["| cause | issue | failing tests | of them read-side | example |", "| --- | --- | ---: | ---: | --- |"]
    for (cause, issue), nodes in sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        read_side = sum(1 for n in nodes if tests[n]["h5tile"])
        rows.append(f"| {cause} | {issue} | {len(nodes)} | {read_side} | `{sorted(nodes)[0]}` |")
    return rows


def gate(tests: dict, known: dict) -> Tuple[List[str], List[str], List[str], List[str]]:
    """(regressions: failing, not listed; fixed: listed, now passing; lucky: listed as flaky,
    passing this time; absent: listed, skipped or not run)."""
    regressions = sorted(n for n, e in tests.items() if e["outcome"] == "failed" and n not in known)
    passing = sorted(n for n in known if n in tests and tests[n]["outcome"] == "passed")
    fixed = [n for n in passing if not known[n][2]]
    lucky = [n for n in passing if known[n][2]]
    absent = sorted(n for n in known if n not in tests or tests[n]["outcome"] in ("skipped", "xfailed"))
    return regressions, fixed, lucky, absent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("known_failures")
    parser.add_argument("--markdown")
    parser.add_argument("--seconds", type=int)
    parser.add_argument("--h5py-version", default="?")
    args = parser.parse_args()
    with open(args.results, encoding="utf-8") as f:
        tests = json.load(f)["tests"]
    known = read_known_failures(args.known_failures)
    files = per_file(tests)
    total: collections.Counter = collections.Counter()
    for c in files.values():
        total.update(c)
    duration = f" in {args.seconds} s" if args.seconds is not None else ""
    lines = [f"h5py {args.h5py_version} high-level tests, reads through h5tile: {total['tests']} tests{duration}",
             "", *file_table(files), "",
             f"Read-side pass rate: {total['rs_passed']} of {total['rs_passed'] + total['rs_failed']} read-side "
             f"tests that ran pass ({rate(total['rs_passed'], total['rs_failed'])}); {total['rs_skipped']} skipped.",
             "", "Failures by cause (tests/h5py_suite/known_failures.txt):", "", *cause_table(tests, known)]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as out:
            out.write(report)
        print(f"(written to {args.markdown})")
    regressions, fixed, lucky, absent = gate(tests, known)
    for node_id in lucky:
        print(f"listed as flaky in known_failures.txt, passed this time: {node_id}")
    for node_id in absent:
        print(f"listed in known_failures.txt but skipped or not run: {node_id}")
    for node_id in fixed:
        print(f"listed in known_failures.txt but passes now (shorten the list): {node_id}")
    for node_id in regressions:
        print(f"FAILS, not listed in known_failures.txt: {node_id}\n    {tests[node_id]['message']}")
    if regressions:
        print(f"{len(regressions)} test(s) fail that known_failures.txt does not list")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
