"""cuPyNumeric arrays through their NumPy protocol, and Legate stores through the Legate data
interface. The PyPI build of legate needs libcuda.so.1 even on a CPU: test_legate.py runs this
module in a process of its own with the project's no-GPU driver stand-in; in the main run,
where cupynumeric does not import, it skips."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

try:
    import cupynumeric as cn
except Exception as e:  # ImportError, or legate failing to start without a driver
    pytest.skip(f"cupynumeric does not import here: {e}", allow_module_level=True)


def test_cupynumeric_array_round_trip(tmp_path):
    a = cn.arange(600, dtype=np.float64).reshape(20, 30) * 1.5
    h5tile.to_file(a, tmp_path / "c.h5", "/c", ranks=3).wait()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert np.array_equal(f["c"][...], np.asarray(a))


def test_legate_store_through_its_data_interface(tmp_path):
    from legate.core import get_legate_runtime, types

    runtime = get_legate_runtime()
    store = runtime.create_store(types.float64, shape=(20, 30))
    store.fill(2.5)
    assert hasattr(store, "__legate_data_interface__") or hasattr(store, "get_physical_store")
    source = store if hasattr(store, "__legate_data_interface__") else runtime.create_array_from_store(store)
    h5tile.to_file(source, tmp_path / "l.h5", "/l", ranks=3).wait()
    with h5py.File(tmp_path / "l.h5", "r") as f:
        assert np.array_equal(f["l"][...], np.full((20, 30), 2.5))
