"""The report of h5py's test suite under h5tile (scripts/h5py_suite.sh), and its gate.

Reads the outcomes h5tile_swap.py wrote (JSON) and tests/h5py_suite/known_failures.txt; prints,
and writes as markdown, a table per test file (every test, and the read-side tests: those h5tile
answered), the read-side pass rate and the failures by cause. Exits 1 where a test fails that the
list does not name (a regression); tests the list names that now pass are printed, so that the
list can be shortened, without failing.

    python3 report.py RESULTS.json KNOWN_FAILURES.txt [--markdown OUT.md] [--seconds N]
                      [--h5py-version V]
    python3 report.py RESULTS.json --writes CATEGORIES.txt [--markdown OUT.md] [--seconds N] ...

The second form reports the write side (H5PY_SUITE_WRITES=h5tile, issue 41): every test's
outcome, the pass rate, the tests that met h5tile (opened, wrote or read through it), and the
failures by category, each failure's first error line matched against CATEGORIES.txt; it gates
on nothing (exits 0).

known_failures.txt: ``[cause | issue]`` starts a group; each line after it is a node id
(``h5py/tests/test_x.py::Class::test``) that fails for that cause; ``[cause | issue | flaky]``
a group whose tests may pass by chance (not reported as fixed when they do); ``#`` starts a
comment.

CATEGORIES.txt (write_categories.txt): ``[category]`` starts a category; each line after it is a
regular expression searched for in a failure's first error line (the first error of its chain,
where the test's code raised another while handling it); with ``node:`` before it, in the test's
node id; with ``at:``, in the line of the test's code that raised that error (``file.py:line:
source``, h5tile_swap's "at"). The first expression that matches, in the file's order, gives
the category; ``{1}``, ``{2}``... in its name are the expression's groups. A failure no
expression matches is in "other: " its error line.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
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


def file_table(files, side: str = "read-side") -> List[str]:
    rows = [f"| file | tests | passed | failed | skipped | {side} | {side} passed | {side} failed | "
            f"{side} skipped | {side} pass rate |",
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


def read_categories(path: str) -> List[Tuple[str, str, "re.Pattern[str]"]]:
    """(category, what it matches: "error", "node" or "at", expression) in the file's order, from
    CATEGORIES.txt."""
    rules: List[Tuple[str, str, "re.Pattern[str]"]] = []
    category = None
    with open(path, encoding="utf-8") as lines:
        for number, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                category = line[1:-1].strip()
                continue
            if category is None:
                sys.exit(f"{path}:{number}: an expression before any [category] line")
            field = next((f for f in ("node", "at") if line.startswith(f + ":")), "error")
            expression = line[len(field) + 1:].strip() if field != "error" else line
            try:
                rules.append((category, field, re.compile(expression)))
            except re.error as error:
                sys.exit(f"{path}:{number}: {error}")
    return rules


# The folders of a run (scripts/h5py_suite.sh's mktemp -d, pytest's and the tests' below it) in
# error lines: one name, so that the same error reads the same in every test and every run.
_RUN_PATHS = re.compile(r"[^'\"\s]*/h5py-suite\.[A-Za-z0-9]+/[^'\"\s]*")


def error_line(message: str) -> str:
    return _RUN_PATHS.sub("TMP/FILE", message)


def first_error(entry: dict) -> str:
    """A failure's first error line: of the first error of its chain (h5tile_swap's "first_error",
    where the test's own code raised another while handling it), else pytest's."""
    return error_line(entry.get("first_error") or entry["message"])


def categorise(node_id: str, entry: dict, rules) -> str:
    fields = {"error": first_error(entry), "node": node_id, "at": entry.get("at", "")}
    for category, field, expression in rules:
        match = expression.search(fields[field])
        if match:
            return _named(category, match)
    return "other: " + (fields["error"][:160] or "(no message)")


def _named(category: str, match: "re.Match[str]") -> str:
    """``category`` with ``{n}`` replaced by the match's group n (0: the whole match; "…" where
    the group matched nothing)."""
    groups = (match.group(0), *match.groups())

    def group(reference: "re.Match[str]") -> str:
        n = int(reference.group(1))
        return (groups[n] if n < len(groups) else None) or "…"

    return re.sub(r"\{(\d+)\}", group, category)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def writes_report(args, tests: dict) -> int:
    """The write side's report (H5PY_SUITE_WRITES=h5tile): no gate."""
    rules = read_categories(args.writes)
    files = per_file(tests)
    total: collections.Counter = collections.Counter()
    for c in files.values():
        total.update(c)
    duration = f" in {args.seconds} s" if args.seconds is not None else ""
    how = "writes and reads through h5tile (H5PY_SUITE_WRITES=h5tile)"
    categories: Dict[str, List[str]] = collections.defaultdict(list)
    for node_id in sorted(tests):
        if tests[node_id]["outcome"] == "failed":
            categories[categorise(node_id, tests[node_id], rules)].append(node_id)
    ordered = sorted(categories.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    rows = ["| category | failing tests | examples | first error line (the category's most common) |",
            "| --- | ---: | --- | --- |"]
    for category, nodes in ordered:
        line = collections.Counter(first_error(tests[n]) for n in nodes).most_common(1)[0][0]
        shown = [n for n in nodes if first_error(tests[n]) == line][:2]
        examples = ", ".join(f"`{n.replace('h5py/tests/', '')}`" for n in shown)
        rows.append(f"| {_cell(category)} | {len(nodes)} | {examples} | `{_cell(line[:200])}` |")
    lines = [f"h5py {args.h5py_version} high-level tests, {how}: {total['tests']} tests{duration}",
             "", *file_table(files, "h5tile-side"), "",
             f"Pass rate: {total['passed']} of {total['passed'] + total['failed']} tests that ran pass "
             f"({rate(total['passed'], total['failed'])}); {total['skipped']} skipped.",
             f"h5tile-side (tests that opened, wrote or read through h5tile): {total['rs_passed']} of "
             f"{total['rs_passed'] + total['rs_failed']} pass ({rate(total['rs_passed'], total['rs_failed'])}).",
             "", f"Failures by category ({args.writes}, {len(ordered)} categories):", "", *rows]
    summary = "\n".join(lines) + "\n"
    print(summary)
    if args.markdown:
        every = ["", "## Every failure, by category", ""]
        for category, nodes in ordered:
            every += [f"### {category} ({len(nodes)})", ""]
            every += [f"- `{n}`: {_cell(first_error(tests[n])[:200])}"
                      + (f" (at `{_cell(tests[n]['at'])}`)" if tests[n].get("at") else "") for n in nodes]
            every.append("")
        with open(args.markdown, "w", encoding="utf-8") as out:
            out.write(summary + "\n".join(every))
        print(f"(written to {args.markdown}, with every failure by category)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("known_failures", nargs="?")
    parser.add_argument("--markdown")
    parser.add_argument("--seconds", type=int)
    parser.add_argument("--h5py-version", default="?")
    parser.add_argument("--writes", metavar="CATEGORIES", help="the write side's report: failures by category")
    args = parser.parse_args()
    with open(args.results, encoding="utf-8") as f:
        tests = json.load(f)["tests"]
    if args.writes:
        return writes_report(args, tests)
    if args.known_failures is None:
        parser.error("give KNOWN_FAILURES.txt (or --writes CATEGORIES.txt)")
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
    return publish("\n".join(lines) + "\n", args.markdown, tests, known, lambda t: t["message"])


def publish(report: str, markdown: "str | None", tests: dict, known: dict, message) -> int:
    """Prints `report` (and writes it to `markdown`), then the gate's findings; 1 where a test
    fails that `known` does not list (`message`: what to show of such a test), else 0. Shared by
    tests/xarray_suite/report.py."""
    print(report)
    if markdown:
        with open(markdown, "w", encoding="utf-8") as out:
            out.write(report)
        print(f"(written to {markdown})")
    regressions, fixed, lucky, absent = gate(tests, known)
    for node_id in lucky:
        print(f"listed as flaky in known_failures.txt, passed this time: {node_id}")
    for node_id in absent:
        print(f"listed in known_failures.txt but skipped or not run: {node_id}")
    for node_id in fixed:
        print(f"listed in known_failures.txt but passes now (shorten the list): {node_id}")
    for node_id in regressions:
        print(f"FAILS, not listed in known_failures.txt: {node_id}\n    {message(tests[node_id])}")
    if regressions:
        print(f"{len(regressions)} test(s) fail that known_failures.txt does not list")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
