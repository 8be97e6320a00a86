"""URLs read into device memory (issue 27): from_file(url, device=0) through the staging path equals
the file's bytes and the host path's. Runs on the GPU machine (the fault server is plain Python, so
no nginx is needed there); skipped where CuPy or a device is missing."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

cp = pytest.importorskip("cupy", reason="CuPy is not installed")
if h5tile.cuda_device_count() == 0:
    pytest.skip("no CUDA device visible (or h5tile built without CUDA)", allow_module_level=True)


@pytest.mark.parametrize("name", ["contiguous", "gzip", "chunked"])
def test_a_url_read_into_device_memory_equals_the_file(tmp_path, fault_server, name):
    a = np.random.default_rng(0).random((4096, 1024)).astype(np.float32)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f.create_dataset("contiguous", data=a)
        f.create_dataset("gzip", data=a, chunks=(64, 1024), compression="gzip", shuffle=True)
        f.create_dataset("chunked", data=a, chunks=(256, 1024))
    fault_server.put("/f.h5", (tmp_path / "f.h5").read_bytes())
    url = fault_server.url + "/f.h5"
    on_device = h5tile.from_file(url, "/" + name, device=0)
    assert isinstance(on_device, cp.ndarray)
    assert cp.asnumpy(on_device).tobytes() == a.tobytes()
    assert h5tile.last_remote_io()["requests"] > 0
    assert h5tile.read_box(url, "/" + name, (100, 3), (1000, 500)).tobytes() == a[100:1100, 3:503].tobytes()
