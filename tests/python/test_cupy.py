"""CuPy arrays in and out (runs on the GPU machine; skipped where CuPy or a device is missing)."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, DTYPES, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

cp = pytest.importorskip("cupy", reason="CuPy is not installed")
if h5tile.cuda_device_count() == 0:
    pytest.skip("no CUDA device visible (or h5tile built without CUDA)", allow_module_level=True)


@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
@pytest.mark.parametrize("dtype", [d for d in DTYPES if not d.startswith("V")])
def test_cupy_round_trip_equals_the_host_path(tmp_path, dtype, layout):
    a = random_array(dtype, (1009, 13), seed=7)
    h5tile.to_file(cp.asarray(a), tmp_path / "c.h5", "/c", layout=layout, ranks=4).wait()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert same_bytes(f["c"][...], a)
    d = h5tile.from_file(tmp_path / "c.h5", "/c", device=0)
    assert isinstance(d, cp.ndarray) and d.device.id == 0
    assert same_bytes(cp.asnumpy(d), h5tile.from_file(tmp_path / "c.h5", "/c"))


def test_cupy_strided_and_batched(tmp_path):
    a = cp.arange(40 * 30, dtype=cp.float64).reshape(40, 30)
    h5tile.to_file(a.T, tmp_path / "t.h5", "/t").wait()
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert np.array_equal(f["t"][...], cp.asnumpy(a.T))
    out = cp.zeros((30, 40))
    for block, (r, c) in h5tile.from_file_batched(tmp_path / "t.h5", "/t", (7, 16), device=0):
        assert isinstance(block, cp.ndarray)
        out[r:r + block.shape[0], c:c + block.shape[1]] = block
    assert bool((out == a.T).all())
    print("device I/O path:", h5tile.last_device_io())
