"""H5TILE_COLD_READS: reads of data outside the page cache streamed by few readers of large requests.
The page-cache sample says cold after the file is evicted and warm after a read; every pattern
reads the bytes h5py reads (contiguous, chunked, virtual; host, and device memory where a GPU is
visible); the settings are checked."""
import ctypes
import mmap
import os
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import settings  # noqa: E402

MiB = 1 << 20


@pytest.fixture()
def restore():
    names = ["cold_reads", "cold_readers", "cold_request_size", "direct_io"]
    before = {n: getattr(settings, n)() for n in names}
    yield
    for n, v in before.items():
        getattr(settings, "set_" + n)(v)


def files_under(path: Path):
    return [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]


def evict(*paths: Path) -> None:
    """Drops the files' clean pages from the page cache (no root needed)."""
    for top in paths:
        for p in files_under(top):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def cached_fraction(path: Path) -> float:
    """The share of the file's pages in the page cache, asked with mincore(2) (independent of h5tile)."""
    size = path.stat().st_size
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert addr not in (None, ctypes.c_void_p(-1).value)
        vec = (ctypes.c_ubyte * pages)()
        assert libc.mincore(addr, size, vec) == 0
        libc.munmap(addr, size)
        return sum(v & 1 for v in vec) / pages
    finally:
        os.close(fd)


def evicted_or_skip(path: Path) -> None:
    evict(path)
    left = cached_fraction(path)
    if left > 0.5:
        pytest.skip(f"this file system keeps {left:.0%} of {path.name} cached after POSIX_FADV_DONTNEED (tmpfs?): "
                    "no cold data to detect here")


def write(path: Path, a: np.ndarray, layout: str) -> None:
    if layout == "h5py":
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=a)
    else:
        h5tile.to_file(a, path, "/x", layout=layout, ranks=3).wait()


def h5py_read(path: Path) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f["x"][...]


def test_auto_streams_after_eviction_and_reads_warm_data_in_parallel(tmp_path, restore):
    settings.set_cold_reads("auto")
    path = tmp_path / "big.h5"
    a = random_array("float32", (80 * MiB // 4 // 4096, 4096), seed=3)  # 80 MiB: over the 64 MiB sampled
    write(path, a, "h5py")
    evicted_or_skip(path)
    got = h5tile.from_file(path, "/x")
    report = h5tile.last_read_pattern()
    assert report["setting"] == "auto"
    assert report["pattern"] == "stream", report
    assert report["detection"].startswith("cold:"), report
    assert report["sampled_pages"] > 0 and 2 * report["cached_pages"] < report["sampled_pages"]
    assert report["readers"] == settings.cold_readers()
    assert report["request_bytes"] <= settings.cold_request_size()
    assert same_bytes(got, a)
    # The stream read through the page cache: the same read again is warm, and parallel.
    assert cached_fraction(path) > 0.9
    got = h5tile.from_file(path, "/x")
    report = h5tile.last_read_pattern()
    assert report["pattern"] == "parallel", report
    assert report["detection"].startswith("warm:"), report
    assert report["cached_pages"] == report["sampled_pages"] > 0
    assert same_bytes(got, a)


def test_auto_detects_cold_virtual_tiles(tmp_path, restore):
    settings.set_cold_reads("auto")
    path = tmp_path / "v.h5"
    a = random_array("float32", (72 * MiB // 4 // 2048, 2048), seed=4)
    write(path, a, "virtual")
    tiles = [p for p in files_under(tmp_path) if p != path]
    assert len(tiles) >= 3
    evicted_or_skip(path)
    evict(*tiles)
    got = h5tile.from_file(path, "/x")
    report = h5tile.last_read_pattern()
    assert (report["pattern"], report["detection"][:5]) == ("stream", "cold:"), report
    assert same_bytes(got, h5py_read(path))
    h5tile.from_file(path, "/x")
    assert h5tile.last_read_pattern()["detection"].startswith("warm:")


def test_small_reads_are_not_sampled(tmp_path, restore):
    settings.set_cold_reads("auto")
    path = tmp_path / "small.h5"
    write(path, random_array("int16", (300, 500)), "h5py")
    evict(path)
    h5tile.from_file(path, "/x")
    report = h5tile.last_read_pattern()
    assert report["pattern"] == "parallel" and report["sampled_pages"] == 0
    assert "under 64 MiB" in report["detection"]


@pytest.mark.parametrize("layout", ["h5py", "contiguous", "chunked", "virtual"])
@pytest.mark.parametrize("pattern", ["auto", "parallel", "stream"])
def test_every_pattern_reads_what_h5py_reads(tmp_path, restore, layout, pattern):
    settings.set_cold_reads(pattern)
    settings.set_cold_readers(3)
    settings.set_cold_request_size("1M")  # many requests, not aligned to the rows (4099 x 4 bytes)
    path = tmp_path / "d.h5"
    a = random_array("float32", (1009, 4099), seed=5)
    write(path, a, layout)
    expected = h5py_read(path)
    assert same_bytes(expected, a)
    for cold in (True, False):
        if cold:
            evict(*files_under(tmp_path))
        got = h5tile.from_file(path, "/x")
        assert same_bytes(got, expected), (layout, pattern, cold)
        report = h5tile.last_read_pattern()
        assert report["setting"] == pattern
        assert report["pattern"] == ("stream" if pattern == "stream" else "parallel"), report
        if pattern == "stream":
            assert report["readers"] == 3 and report["request_bytes"] <= MiB, report
            assert report["sampled_pages"] > 0, report
    # A box of it, and a read into memory given
    box = h5tile.read_box(path, "/x", (17, 100), (900, 3001))
    assert same_bytes(box, expected[17:917, 100:3101])
    out = np.empty_like(expected)
    h5tile.from_file(path, "/x", out=out)
    assert same_bytes(out, expected)


def test_compressed_chunks_stay_parallel(tmp_path, restore):
    settings.set_cold_reads("stream")
    path = tmp_path / "z.h5"
    a = random_array("int32", (2000, 1000), seed=6) % 100
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(100, 1000), compression="gzip")
    evict(path)
    assert same_bytes(h5tile.from_file(path, "/x"), a)
    report = h5tile.last_read_pattern()
    assert report["pattern"] == "parallel" and "compressed" in report["detection"], report


@pytest.mark.parametrize("layout", ["h5py", "virtual"])
def test_o_direct_reads_stay_parallel(tmp_path, restore, layout):
    """O_DIRECT needs many requests in flight: one stream of them would read at `dd iflag=direct`'s speed."""
    settings.set_direct_io("on")
    settings.set_cold_reads("stream")
    path = tmp_path / "o.h5"
    a = random_array("float32", (1000, 3000), seed=9)
    write(path, a, layout)
    evict(*files_under(tmp_path))
    assert same_bytes(h5tile.from_file(path, "/x"), a)
    report = h5tile.last_read_pattern()
    assert report["pattern"] == "parallel" and "O_DIRECT" in report["detection"], report


@pytest.mark.parametrize("layout", ["h5py", "chunked", "virtual"])
@pytest.mark.parametrize("pattern", ["auto", "parallel", "stream"])
def test_every_pattern_reads_into_device_memory_what_h5py_reads(tmp_path, restore, layout, pattern):
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    if h5tile.cuda_device_count() == 0:
        pytest.skip("no CUDA device visible (or h5tile built without CUDA)")
    settings.set_cold_reads(pattern)
    settings.set_cold_readers(2)
    settings.set_cold_request_size("2M")
    path = tmp_path / "g.h5"
    a = random_array("float64", (700, 3001), seed=8)
    write(path, a, layout)
    expected = h5py_read(path)
    evict(*files_under(tmp_path))
    got = h5tile.from_file(path, "/x", device=0)
    assert same_bytes(cp.asnumpy(got), expected)
    report = h5tile.last_device_io()["read_pattern"]
    assert report["pattern"] == ("stream" if pattern == "stream" else "parallel"), report


def test_settings_are_checked(restore):
    for mode in ("parallel", "stream", "auto"):
        settings.set_cold_reads(mode)
        assert settings.cold_reads() == mode
    with pytest.raises(h5tile.InvalidArgumentError, match="'auto', 'parallel' or 'stream', not 'on'"):
        settings.set_cold_reads("on")
    with pytest.raises(h5tile.ArgumentTypeError, match="cold_reads"):
        settings.set_cold_reads(1)
    settings.set_cold_readers(2)
    assert settings.cold_readers() == 2
    with pytest.raises(h5tile.InvalidArgumentError, match="cold_readers must be a whole number from 1 to 4096"):
        settings.set_cold_readers(0)
    settings.set_cold_request_size("32M")
    assert settings.cold_request_size() == 32 * MiB
    with pytest.raises(h5tile.InvalidArgumentError, match="1 MiB to 1 GiB"):
        settings.set_cold_request_size("512K")
    with pytest.raises(h5tile.InvalidArgumentError, match="1 MiB to 1 GiB"):
        settings.set_cold_request_size("2G")
