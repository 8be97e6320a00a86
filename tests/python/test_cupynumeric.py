"""cuPyNumeric arrays through their NumPy protocol (skipped where cupynumeric does not import:
the PyPI build of legate needs libcuda.so.1 even on a CPU, so this runs on GPU machines)."""
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
