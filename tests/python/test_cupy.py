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


@pytest.mark.parametrize("gaps", [True, False], ids=["with-gaps", "covered"])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_overlapping_virtual_mappings_read_into_the_gpu_as_on_the_host(tmp_path, compression, gaps):
    # HDF5 reads mappings in order (the last one that maps an element stands); the device path
    # must agree with the host path, raw and compressed sources alike, whole and in batches, with
    # parts no mapping covers (fill values) and without.
    sources = [np.arange(4 * 3000, dtype="i4").reshape(4, 3000) + 100000 * (k + 1) for k in range(3)]
    rest = np.arange(6 * 3000, dtype="i4").reshape(6, 3000) - 100000
    with h5py.File(tmp_path / "src.h5", "w") as f:
        for k, s in enumerate(sources):
            f.create_dataset(f"s{k}", data=s, chunks=(2, 500), compression=compression)
        f.create_dataset("rest", data=rest, chunks=(2, 500), compression=compression)
    with h5py.File(tmp_path / "v.h5", "w", libver=("v110", "v110")) as f:
        layout = h5py.VirtualLayout(shape=(10, 3000), dtype="i4")
        layout[0:4] = h5py.VirtualSource("src.h5", "s0", shape=(4, 3000))
        layout[0:4] = h5py.VirtualSource("src.h5", "s1", shape=(4, 3000))
        if not gaps:
            layout[4:10] = h5py.VirtualSource("src.h5", "rest", shape=(6, 3000))
        layout[2:6, 1000:2000] = h5py.VirtualSource("src.h5", "s2", shape=(4, 3000))[0:4, 0:1000]
        f.create_virtual_dataset("v", layout, fillvalue=-7)
    host = h5tile.from_file(tmp_path / "v.h5", "v")
    assert ((host == -7).any()) == gaps
    assert (host[0:2] == sources[1][0:2]).all() and (host[2:4, 1000:2000] == sources[2][0:2, 0:1000]).all()
    assert same_bytes(cp.asnumpy(h5tile.from_file(tmp_path / "v.h5", "v", device=0)), host)
    out = cp.full((10, 3000), 12345, dtype=cp.int32)  # not the fill value: every element must be written
    for block, (r, c) in h5tile.from_file_batched(tmp_path / "v.h5", "v", (3, 1100), device=0):
        out[r:r + block.shape[0], c:c + block.shape[1]] = block
    assert same_bytes(cp.asnumpy(out), host)


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_broadcast_device_arrays_are_written_as_numpy_writes_them(tmp_path, layout):
    # Zero strides (cupy.broadcast_to) along the first and the last axis: a 2-D device copy
    # refuses a pitch below its width, so such runs are copied one by one.
    for name, a in [("rows", cp.broadcast_to(cp.arange(5, dtype=cp.int32), (601, 5))),
                    ("columns", cp.broadcast_to(cp.arange(601, dtype=cp.int32)[:, None], (601, 5)))]:
        h5tile.to_file(a, tmp_path / f"{name}.h5", "/b", layout=layout, ranks=3).wait()
        with h5py.File(tmp_path / f"{name}.h5", "r") as f:
            assert np.array_equal(f["b"][...], cp.asnumpy(a)), name
    out = cp.broadcast_to(cp.zeros(5, dtype=cp.int32), (601, 5))  # refused (C++ callers: by the staging)
    with pytest.raises(h5tile.InvalidArgumentError, match="C-contiguous"):
        h5tile.from_file(tmp_path / "rows.h5", "/b", out=out)


# A kernel that spins for `cycles` GPU clock cycles, then copies `src` into `dst`: queued on the
# default stream and not waited for, it is still running when the next call starts.
_LATE_COPY = r"""
extern "C" __global__ void late_copy(const float* src, float* dst, long long n, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    dst[i] = src[i];
}
"""
_SPIN_CYCLES = 400_000_000  # about 0.2 s at the H200's 1.98 GHz


def _late_copy(src, dst):
    kernel = cp.RawKernel(_LATE_COPY, "late_copy")
    kernel((64,), (256,), (src, dst, cp.int64(src.size), cp.int64(_SPIN_CYCLES)))


@pytest.mark.parametrize("stream", ["default", "own"])
def test_a_write_waits_for_the_kernel_still_making_its_array(tmp_path, stream):
    """h5tile copies device memory on streams of its own: a kernel on CuPy's current stream (the
    default one, or a non-blocking stream of the caller's) that is still writing the array must
    finish first, or the file holds what was there before."""
    want = cp.arange(1 << 20, dtype=cp.float32)
    a = cp.zeros_like(want)
    cp.cuda.Device().synchronize()
    with cp.cuda.Stream(non_blocking=True) if stream == "own" else cp.cuda.Stream.null:
        _late_copy(want, a)  # not waited for
        h5tile.to_file(a, tmp_path / "w.h5", "/x", layout="contiguous").wait()
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert np.array_equal(f["x"][...], cp.asnumpy(want))


@pytest.mark.parametrize("target", ["out", "dask"])
def test_a_read_waits_for_the_kernel_still_reading_its_memory(tmp_path, target):
    """A read into device memory that a queued kernel still reads (an `out=` array, or a Dask block
    from CuPy's pool whose last block's reduction is queued) waits for that kernel: the kernel sees
    the bytes from before the read."""
    n = 1 << 20
    before = cp.full(n, -1, dtype=cp.float32)
    on_disk = np.arange(n, dtype=np.float32)
    h5tile.to_file(on_disk, tmp_path / "r.h5", "/x", layout="contiguous").wait()
    seen = cp.zeros(n, dtype=cp.float32)
    cp.cuda.get_current_stream().synchronize()
    if target == "out":
        _late_copy(before, seen)  # reads `before` once it has spun
        got = h5tile.from_file(tmp_path / "r.h5", "/x", device=0, out=before)
    else:
        pytest.importorskip("dask")
        from h5tile import dask as h5tile_dask
        _late_copy(before, seen)
        del before  # back to CuPy's pool, still read by the queued kernel
        got = h5tile_dask.from_file(tmp_path / "r.h5", "/x", device=0).compute(scheduler="synchronous")
    assert np.array_equal(cp.asnumpy(got), on_disk)
    assert bool((seen == -1).all()), "the kernel saw bytes the read wrote under it"
