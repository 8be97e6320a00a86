"""pytest setup of xarray's backend tests under the harness (scripts/xarray_suite.sh).

``xarray.tests`` becomes the sdist's tests folder (``$XARRAY_SUITE_SDIST/xarray/tests``, before any
test module is imported): test_h5tile_backend.py subclasses the sdist's test classes, while every
other submodule of xarray stays the installed package's, the one measured. The sdist's two
conftest files are loaded as they are in xarray's own runs: its root conftest.py (network and
flaky tests skipped, numpy seeded, each test run in its own temporary folder) and
xarray/tests/conftest.py (its fixtures).

Each test's outcome and the first line of its failure or skip go to the JSON file named by
``--xarray-suite-results`` (report.py reads it).
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import sys

import pytest
import xarray

_SDIST = os.environ.get("XARRAY_SUITE_SDIST")
if not _SDIST or not (pathlib.Path(_SDIST) / "xarray" / "tests" / "__init__.py").is_file():
    raise pytest.UsageError("tests/xarray_suite: set XARRAY_SUITE_SDIST to an extracted xarray sdist "
                            "(scripts/xarray_suite.sh does)")
if "xarray.tests" in sys.modules:
    raise pytest.UsageError("tests/xarray_suite: xarray.tests was imported before the harness could point it "
                            "at the sdist")
xarray.__path__.insert(0, str(pathlib.Path(_SDIST, "xarray").resolve()))

_spec = importlib.util.spec_from_file_location("xarray_sdist_conftest", pathlib.Path(_SDIST, "conftest.py"))
_root_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_root_conftest)
sys.modules["xarray_sdist_conftest"] = _root_conftest
pytest_plugins = ["xarray_sdist_conftest", "xarray.tests.conftest"]

# node id -> {"outcome": passed | failed | skipped | xfailed, "message": first line of a failure or skip}
_RESULTS: dict = {}


def pytest_addoption(parser):
    parser.addoption("--xarray-suite-results", default=None, help="write each test's outcome to this JSON file")


def _first_line(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (file, line, reason)
        text = str(longrepr[2])
    elif getattr(longrepr, "reprcrash", None) is not None:
        text = longrepr.reprcrash.message
    else:
        text = str(longrepr)
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def pytest_runtest_logreport(report):
    """One outcome per test over its phases: a failure anywhere fails it; otherwise a skip (or an
    expected failure) skips it."""
    entry = _RESULTS.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.failed:
        if entry["outcome"] != "failed":
            entry["outcome"], entry["message"] = "failed", _first_line(report)
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        entry["message"] = str(getattr(report, "wasxfail", "")) or _first_line(report)


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--xarray-suite-results")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"exitstatus": int(exitstatus), "tests": _RESULTS}, out, indent=1, sort_keys=True)
