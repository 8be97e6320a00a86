"""h5tile.legate's GPU variant, with real Legate on GPUs: what the GPU tasks read and write must
equal, byte for byte, what the CPU tasks read and write and what h5py reads. The size is
H5TILE_LEGATE_GPU_GIB (default 0.25; scripts/gpu_machine.sh legate runs 8). Where Legate has no
GPU (CI, `--gpus 0`), every test skips, saying so."""
import os

import h5py
import numpy as np
import pytest

import h5tile
import h5tile.legate as hl
from conftest import same_bytes
from legate.core.data_interface import as_logical_array
from legate.core import LogicalArray, Scope, StoreTarget, TaskTarget, get_legate_runtime, get_machine

GPUS = get_machine().count(TaskTarget.GPU)
pytestmark = pytest.mark.skipif(GPUS == 0, reason="Legate has no GPU here (LEGATE_CONFIG has --gpus 0, or the "
                                "machine has none): the GPU variant runs on the GPU machine")
GIB = float(os.environ.get("H5TILE_LEGATE_GPU_GIB", "0.25"))
COLUMNS = 4096


def fence():
    get_legate_runtime().issue_execution_fence(block=True)


def host(array: LogicalArray) -> np.ndarray:
    """The array's bytes in host memory (Legate copies them out of the framebuffer)."""
    fence()
    return np.asarray(array.data.get_physical_store(StoreTarget.SYSMEM)).copy()


def on_cpus():
    """A scope in which Legate runs the CPU variants."""
    return Scope(machine=get_machine().only(TaskTarget.CPU))


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    """A float32 dataset of GIB GiB holding random bits (NaN payloads and denormals included, so
    that any conversion shows), written by h5py, and its bytes."""
    rows = max(GPUS * 3 + 1, int(GIB * 2**30) // (4 * COLUMNS))
    bits = np.random.default_rng(7).integers(0, 2**32, size=(rows, COLUMNS), dtype=np.uint32)
    path = tmp_path_factory.mktemp("gpu") / "x.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=bits.view(np.float32))
        f.create_dataset("chunked", data=bits[: rows // 2].view(np.float32), chunks=(min(256, rows // 2), COLUMNS))
    return path, bits.view(np.float32)


def test_the_gpu_variant_reads_what_h5py_reads_byte_for_byte(data_file):
    path, expected = data_file
    array = hl.from_file(path, "x")
    fence()
    assert h5tile.last_device_io()["path"], "the read did not go through h5tile's device path"
    assert same_bytes(host(array), expected)


def test_the_gpu_and_cpu_variants_read_the_same_bytes(data_file):
    path, _ = data_file
    for name in ["x", "chunked"]:
        on_gpu = host(hl.from_file(path, name))
        with on_cpus():
            on_cpu = host(hl.from_file(path, name))
        assert same_bytes(on_gpu, on_cpu), name
        with h5py.File(path, "r") as f:
            assert same_bytes(on_gpu, f[name][()]), name


def test_the_gpu_variant_writes_what_the_cpu_variant_writes(data_file, tmp_path):
    path, expected = data_file
    array = hl.from_file(path, "x")  # in the framebuffer: the GPU tasks write from there
    hl.to_file(array, tmp_path / "gpu.h5", "/y")
    with on_cpus():
        hl.to_file(array, tmp_path / "cpu.h5", "/y")
    fence()
    with h5py.File(tmp_path / "gpu.h5", "r") as g, h5py.File(tmp_path / "cpu.h5", "r") as c:
        from_gpu = g["y"][()]
        assert same_bytes(from_gpu, c["y"][()])
    assert same_bytes(from_gpu, expected)


def test_batched_reads_on_the_gpu_clip_at_the_edges(data_file):
    path, expected = data_file
    rows = expected.shape[0]
    step = rows // 3 + 1
    seen = 0
    for array, offset in hl.from_file_batched(path, "x", (step, COLUMNS)):
        part = host(array)
        assert part.shape == (min(step, rows - offset[0]), COLUMNS)
        assert same_bytes(part, expected[offset[0]: offset[0] + part.shape[0]])
        seen += part.shape[0]
    assert seen == rows


def test_cupynumeric_arrays_in_the_framebuffer_both_ways(tmp_path):
    """cuPyNumeric wraps what the GPU tasks read (no copy), computes on it on the GPU, and
    h5tile.legate.to_file and h5tile.to_file write the result from the framebuffer."""
    cn = pytest.importorskip("cupynumeric")
    rows = max(GPUS * 3 + 1, int(GIB * 2**30) // (8 * 4 * COLUMNS))
    data = np.random.default_rng(9).integers(0, 2**32, size=(rows, COLUMNS), dtype=np.uint32)
    with h5py.File(tmp_path / "u.h5", "w") as f:
        f.create_dataset("u", data=data)
    result = hl.from_file(tmp_path / "u.h5", "u")
    wrapped = cn.asarray(result)
    assert as_logical_array(wrapped).data.equal_storage(result.data), "cupynumeric.asarray copied the result"
    changed = wrapped * np.uint32(3) + np.uint32(1)  # cuPyNumeric's GPU tasks; wraps modulo 2**32 as NumPy does
    assert changed.dtype == np.uint32
    expected = data * np.uint32(3) + np.uint32(1)
    hl.to_file(changed, tmp_path / "c.h5", "/c")
    fence()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert same_bytes(f["c"][()], expected)
    h5tile.to_file(changed, tmp_path / "t.h5", "/t").wait()  # the library's own call: through the same tasks
    assert h5tile.describe(tmp_path / "t.h5", "/t")["virtual_sources"] == GPUS
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert same_bytes(f["t"][()], expected)
