"""The Legate tests run in a process that Legate can start in: tests/python/test_legate.py
starts one per module, with the no-GPU driver stand-in and LEGATE_CONFIG set. Run alone,
outside that environment, they skip, saying why."""
import importlib.util
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("H5TILE_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
sys.path.insert(0, str(BUILD / "python"))

# The helpers of the Python tests (tests/python/conftest.py), shared rather than copied.
_spec = importlib.util.spec_from_file_location("h5tile_python_tests", ROOT / "tests" / "python" / "conftest.py")
_python_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_python_tests)
DTYPES, random_array, same_bytes = _python_tests.DTYPES, _python_tests.random_array, _python_tests.same_bytes

IN_LEGATE_ENVIRONMENT = "LEGATE_CONFIG" in os.environ

import h5py  # noqa: E402,F401  (before cupynumeric: the other order breaks h5py's types)


def pytest_ignore_collect(collection_path, config):
    # The test modules import legate at the top: outside its environment they are not loaded.
    return None if IN_LEGATE_ENVIRONMENT else collection_path.name.startswith("test_")


def pytest_collection_finish(session):
    if not IN_LEGATE_ENVIRONMENT:
        print("tests/legate: run through tests/python/test_legate.py, which sets up Legate's environment")


@pytest.fixture(scope="session")
def runtime():
    from legate.core import get_legate_runtime
    return get_legate_runtime()
