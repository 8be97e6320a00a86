"""Runs the Legate tests (tests/legate/, and test_cupynumeric.py beside this file) with real
Legate and cuPyNumeric on CPUs, each module in its own process: Legate reads its settings and
loads libcuda.so.1 once, at start. The process gets the project's no-GPU driver stand-in
(build/no_gpu_driver/libcuda.so.1, from tests/tools/no_gpu_libcuda.c) on LD_LIBRARY_PATH and
LEGATE_CONFIG="--cpus 2 --gpus 0 --sysmem N", so that arrays split into several tiles.
Skipped, saying why, where legate is not installed (scripts/install_legate.sh installs it)."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

DRIVER = BUILD / "no_gpu_driver" / "libcuda.so.1"
MODULES = sorted((ROOT / "tests" / "legate").glob("test_*.py")) + [ROOT / "tests" / "python" / "test_cupynumeric.py"]
SYSMEM_MB = 1024  # --sysmem: Legate's host memory pool; the tests' arrays are a few MB


def legate_environment() -> dict:
    """The environment in which the PyPI build of Legate runs on CPUs only."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(DRIVER.parent), env.get("LD_LIBRARY_PATH")) if p)
    env["LEGATE_AUTO_CONFIG"] = "0"
    env["LEGATE_CONFIG"] = f"--cpus 2 --gpus 0 --sysmem {SYSMEM_MB}"
    env["LEGATE_SHOW_CONFIG"] = "0"
    env["H5TILE_BUILD_DIR"] = str(BUILD)
    return env


@pytest.fixture(scope="module")
def legate_env() -> dict:
    if importlib.util.find_spec("legate") is None:
        pytest.skip("legate is not installed (scripts/install_legate.sh installs legate==26.6.1 from PyPI)")
    if not DRIVER.exists():
        pytest.fail(f"{DRIVER} is missing: build first (scripts/build.sh)")
    return legate_environment()


def run_module(module: pathlib.Path, env: dict, tmp_path: pathlib.Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--basetemp", str(tmp_path),
           "--rootdir", str(module.parent), str(module)]
    return subprocess.run(cmd, cwd=module.parent, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("module", MODULES, ids=[m.stem for m in MODULES])
def test_legate_module(module, legate_env, tmp_path):
    proc = run_module(module, legate_env, tmp_path)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    err = proc.stderr if len(proc.stderr) <= 10000 else f"{proc.stderr[:5000]}\n[...]\n{proc.stderr[-5000:]}"
    report = f"{module.name} under Legate: {summary}\n--- stdout\n{proc.stdout[-20000:]}\n--- stderr\n{err}"
    if proc.returncode == 5:
        pytest.fail(f"no tests ran: {report}")
    assert proc.returncode == 0, report
    counts = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed|skipped|errors?)", summary))
    if counts.get("skipped") and not counts.get("passed"):
        pytest.skip(f"{module.name}: every test skipped: {report}")
    print(summary)
