"""Sizes that do not fit in 64 bits, chunk-index records that lie, and sparse datasets of any size
(issue 31, items 3, 5, 6 and 8): h5tile returns h5py's bytes or fails clearly, and `verify --read`
never claims a read it did not do nor reads fill values for ever.

Records are forged in real h5py-written files: h5py writes the version-1 B-tree chunk index of
HDF5 1.8's format, whose key before each chunk's address holds its stored size (a 32-bit number),
its filter mask and its offsets.
"""
import json
import os
import struct
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"


def run_cli(*args, cwd, timeout=60):
    return subprocess.run([str(H5TILE), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def forge_chunk_size(path, dataset, coord, size):
    """Sets the stored size in the chunk index record of the chunk at `coord` (its first element)
    to `size`; returns the record as HDF5 gave it before."""
    with h5py.File(path, "r") as f:
        info = f[dataset].id.get_chunk_info_by_coord(tuple(coord))
    raw = bytearray(path.read_bytes())
    key = struct.pack(f"<{len(coord) + 1}Q", *coord, 0) + struct.pack("<Q", info.byte_offset)
    at = raw.find(key)
    assert at > 8 and raw.find(key, at + 1) < 0, "the chunk's B-tree key is not in the file once"
    assert struct.unpack_from("<I", raw, at - 8)[0] == info.size, "not the record of a version-1 B-tree"
    struct.pack_into("<I", raw, at - 8, size)
    path.write_bytes(bytes(raw))
    return info


def h5py_reads(path, dataset):
    """What h5py reads of the whole dataset, or the error it raises."""
    with h5py.File(path, "r") as f:
        try:
            return f[dataset][...]
        except Exception as e:  # noqa: BLE001: any refusal counts
            return e


# ------------------------------------------------------------------------------------------
# Item 3: a dataset of 2^64 bytes or more


def huge_shape_file(path):
    """'x': 2^61 float64 = 2^64 bytes (the byte count wraps to 0), 4 elements written; 'y': 2^62 x
    2^62 bytes (more elements than 64 bits count)."""
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=(2**61,), dtype="f8", chunks=(1024,))
        d[:4] = [1.0, 2.0, 3.0, 4.0]
        f.create_dataset("y", shape=(2**62, 2**62), dtype="u1", chunks=(1, 1024))


@pytest.mark.parametrize("read", [True, False])
def test_verify_reports_a_dataset_of_2_64_bytes_as_a_problem(tmp_path, read):
    huge_shape_file(tmp_path / "big.h5")
    args = ["verify", "big.h5", "--json"] + (["--read"] if read else [])
    out = run_cli(*args, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    result = {d["name"]: d for d in json.loads(out.stdout)["datasets"]}
    for name, shape in [("/x", "[2305843009213693952]"), ("/y", "[4611686018427387904, 4611686018427387904]")]:
        assert not result[name]["ok"] and "read" not in result[name]
        assert any(shape in p and "64 bits" in p for p in result[name]["problems"]), result[name]
    text = run_cli("verify", "big.h5:/x", *(["--read"] if read else []), cwd=tmp_path)
    assert text.returncode == 1 and "ok:" not in text.stdout and "every byte read" not in text.stdout
    assert "problem: /x:" in text.stdout and "2305843009213693952" in text.stdout


def test_a_dataset_of_2_64_bytes_is_refused_whole_and_read_in_parts(tmp_path):
    path = tmp_path / "big.h5"
    huge_shape_file(path)
    with pytest.raises(h5tile.Error, match=r"\[2305843009213693952\].*(2\^64|64 bits)"):
        h5tile.from_file(path, "/x")
    with pytest.raises(h5tile.Error, match=r"64 bits"):
        h5tile.from_file(path, "/y")
    with h5py.File(path, "r") as f:
        reference = f["x"][:8]
    assert same_bytes(h5tile.read_box(path, "/x", (0,), (8,)), reference)
    out = run_cli("consolidate", "big.h5:/x", "out.h5", cwd=tmp_path)
    assert out.returncode != 0 and "2305843009213693952" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "out.h5").exists()


def test_chunks_of_a_grid_too_large_to_number_are_never_taken_for_one_another(tmp_path):
    """(2^63 - 1) x 2^53 chunks: numbered row-major in 64 bits, chunk (2048, 0) would wrap to chunk
    (0, 0)'s number (a lookup by number, as h5tile makes with HDF5 1.14, would return its bytes)."""
    path = tmp_path / "grid.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("z", shape=(2**63 - 1, 2**63 - 1), dtype="u1", chunks=(1, 1024), fillvalue=7)
        d[0, :1024] = 1
        d[2049, :1024] = 2
        reference = d[2047:2050, :1024]
    assert same_bytes(h5tile.read_box(path, "/z", (2047, 0), (3, 1024)), reference)
    assert same_bytes(h5tile.read_box(path, "/z", (0, 0), (1, 1024)), np.ones((1, 1024), "u1"))


# ------------------------------------------------------------------------------------------
# Item 5: an unfiltered chunk whose record gives another size than a chunk's


def unfiltered_file(path):
    a = np.arange(64 * 8, dtype="<i4").reshape(64, 8)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 8))
    return a


@pytest.mark.parametrize("size", [0, 100, 511, 513])
def test_an_unfiltered_chunk_recorded_with_another_size_is_an_error(tmp_path, size):
    path = tmp_path / "lying.h5"
    a = unfiltered_file(path)
    forge_chunk_size(path, "x", (16, 0), size)
    # HDF5 itself reads a record of size 0 as uninitialised memory (and others by the chunk's size).
    seen = h5py_reads(path, "x")
    if size == 0:
        assert isinstance(seen, Exception) or not same_bytes(seen, a)
    message = rf"dataset '/x' in '.*lying\.h5'.*chunk \[16:32, 0:8\] is recorded with {size} bytes.*holds 512"
    with pytest.raises(RuntimeError, match=message):
        h5tile.from_file(path, "/x")
    # The chunks whose records are right still read as h5py reads them.
    with h5py.File(path, "r") as f:
        reference = f["x"][32:64]
    assert same_bytes(h5tile.read_box(path, "/x", (32, 0), (32, 8)), reference)
    out = run_cli("verify", "--read", "lying.h5", cwd=tmp_path)
    assert out.returncode == 1 and "recorded with" in out.stdout and "ok:" not in out.stdout, out.stdout
    out = run_cli("consolidate", "lying.h5:/x", "copy.h5", cwd=tmp_path)
    assert out.returncode != 0 and "recorded with" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "copy.h5").exists()


def test_a_virtual_source_whose_chunk_record_lies_is_an_error(tmp_path):
    """A virtual dataset's chunked source is read by its own chunk directory: checked the same way."""
    a = unfiltered_file(tmp_path / "src.h5")
    forge_chunk_size(tmp_path / "src.h5", "x", (48, 0), 0)
    with h5py.File(tmp_path / "v.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=a.shape, dtype=a.dtype)
        layout[:] = h5py.VirtualSource("src.h5", "x", shape=a.shape)
        f.create_virtual_dataset("v", layout)
    with pytest.raises(RuntimeError, match=r"src\.h5.*chunk \[48:64, 0:8\] is recorded with 0 bytes"):
        h5tile.from_file(tmp_path / "v.h5", "/v")


def test_a_compressed_tile_whose_chunk_record_reaches_past_its_file_is_an_error(tmp_path):
    """Tiles h5tile writes with compression are chunked: a tile read (from the tile index first)
    checks its chunk records against the tile's file."""
    a = np.arange(40 * 16, dtype="<i4").reshape(40, 16)
    path = tmp_path / "t.h5"
    h5tile.to_file(a, path, "/x", ranks=2, compression="gzip", chunks=(10, 16), layout="virtual")
    h5tile.fence()
    tile = sorted((tmp_path / "t.h5.tiles").rglob("tile-00001.h5"))[0]
    with h5py.File(tile, "r") as f:
        name = next(k for k in f if isinstance(f[k], h5py.Dataset))
    forge_chunk_size(tile, name, (10, 0), 0xFFFFFFFF)
    with pytest.raises(RuntimeError, match=r"chunk \[10:20, 0:16\] is recorded at byte \d+ with 4294967295 bytes, "
                                           r"past the end of the file"):
        h5tile.from_file(path, "/x")
    assert isinstance(h5py_reads(path, "x"), Exception)  # HDF5 refuses it too ("addr overflow")


# ------------------------------------------------------------------------------------------
# Item 6: a record larger than the file, checked before any memory is allocated for it

LIMITED_READ = textwrap.dedent("""
    import resource, sys
    limit = 3 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import h5tile
    try:
        h5tile.from_file(sys.argv[1], "/x")
        print("READ")
    except BaseException as e:
        print(type(e).__name__, isinstance(e, RuntimeError) and isinstance(e, h5tile.Error), e)
""")


@pytest.mark.parametrize("filters", [{}, {"compression": "gzip"}, {"compression": "gzip", "fletcher32": True}],
                         ids=["unfiltered", "gzip", "gzip-fletcher32"])
def test_a_chunk_record_larger_than_the_file_is_an_error_before_allocating(tmp_path, filters):
    path = tmp_path / "huge-record.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(64 * 8, dtype="<i4").reshape(64, 8), chunks=(16, 8), **filters)
    info = forge_chunk_size(path, "x", (16, 0), 0xFFFFFFFF)  # 4 GiB - 1
    assert isinstance(h5py_reads(path, "x"), Exception)  # "addr overflow"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    out = subprocess.run([sys.executable, "-c", LIMITED_READ, str(path)], capture_output=True, text=True, timeout=120,
                         env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("OperationError True "), out.stdout  # not MemoryError (std::bad_alloc)
    assert "chunk [16:32, 0:8]" in out.stdout and "4294967295 bytes" in out.stdout
    assert f"at byte {info.byte_offset}" in out.stdout and "past the end of the file" in out.stdout


def test_a_chunk_record_larger_than_the_file_among_many_small_chunks_is_an_error(tmp_path):
    """Many small chunks, listed in one pass (H5Dchunk_iter, or h5tile's reading of the B-tree without it): the
    forged record is checked against the file among them."""
    path = tmp_path / "many.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(1203 * 37, dtype="<i4").reshape(1203, 37), chunks=(3, 4),
                         compression="gzip")
    forge_chunk_size(path, "x", (600, 20), 0xFFFFFFFF)
    with pytest.raises(RuntimeError, match=r"(chunk \[600:603, 20:24\]|chunk at \[600, 20\]).*4294967295 bytes"):
        h5tile.from_file(path, "/x")


# ------------------------------------------------------------------------------------------
# Item 8: sparse datasets of any size


def sparse_file(path):
    """'y': 2^63 - 1 bytes in chunks of 1024, gzip and fletcher32, 4 chunks written (in a file of a
    few KiB); 'c': 2^40 float64, contiguous, never written."""
    with h5py.File(path, "w") as f:
        y = f.create_dataset("y", shape=(2**63 - 1,), dtype="u1", chunks=(1024,), compression="gzip",
                             fletcher32=True, fillvalue=3)
        y[:3000] = np.arange(3000) % 251
        y[2**62:2**62 + 10] = 9
        f.create_dataset("c", shape=(2**40,), dtype="f8")
    assert path.stat().st_size < 64 << 10


def test_verify_read_of_a_sparse_dataset_reads_its_allocated_chunks_only(tmp_path):
    sparse_file(tmp_path / "sparse.h5")
    started = time.monotonic()
    out = run_cli("verify", "--read", "--json", "sparse.h5", cwd=tmp_path)  # 60 s: far more than it needs
    took = time.monotonic() - started
    assert out.returncode == 0, out.stdout + out.stderr
    result = {d["name"]: d for d in json.loads(out.stdout)["datasets"]}
    assert result["/y"]["ok"] and result["/y"]["read"].startswith(f"4 of {2**53} chunks allocated, each read")
    assert "fill value" in result["/y"]["read"]
    assert result["/c"]["ok"] and result["/c"]["read"].startswith("nothing stored")
    text = run_cli("verify", "--read", "sparse.h5:/y", cwd=tmp_path)
    assert text.returncode == 0 and f"ok: /y (4 of {2**53} chunks allocated, each read;" in text.stdout
    print(f"verify --read of 2^63 - 1 sparse bytes took {took:.2f} s")


def test_verify_read_of_a_sparse_dataset_finds_a_flipped_byte(tmp_path):
    path = tmp_path / "sparse.h5"
    sparse_file(path)
    with h5py.File(path, "r") as f:
        info = f["y"].id.get_chunk_info_by_coord((2**62,))
    raw = bytearray(path.read_bytes())
    raw[info.byte_offset + info.size // 2] ^= 0x10
    path.write_bytes(bytes(raw))
    with h5py.File(path, "r") as f:
        with pytest.raises(OSError):
            f["y"][2**62:2**62 + 1024]  # HDF5 finds the checksum wrong too
    out = run_cli("verify", "--read", "sparse.h5:/y", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "problem: /y:" in out.stdout and "fletcher" in out.stdout.lower()
    assert f"chunk [{2**62}:{2**62 + 1024}]" in out.stdout


def test_a_sparse_dataset_too_large_for_memory_is_refused_at_once(tmp_path):
    path = tmp_path / "sparse.h5"
    sparse_file(path)
    started = time.monotonic()
    with pytest.raises(h5tile.Error, match=r"9223372036854775807"):
        h5tile.from_file(path, "/y")
    assert time.monotonic() - started < 30
    # What is stored reads as h5py reads it.
    with h5py.File(path, "r") as f:
        reference = f["y"][2**62 - 5:2**62 + 20]
    assert same_bytes(h5tile.read_box(path, "/y", (2**62 - 5,), (25,)), reference)


def test_a_contiguous_copy_of_a_sparse_dataset_that_cannot_fit_is_refused_at_once(tmp_path):
    """consolidate writes every byte of a contiguous copy, fill values included: 2^63 - 1 bytes
    cannot fit in any folder here, and the copy fails before writing (it wrote for ever)."""
    sparse_file(tmp_path / "sparse.h5")
    out = run_cli("consolidate", "sparse.h5:/y", "copy.h5", cwd=tmp_path)
    assert out.returncode != 0, out.stdout + out.stderr
    assert "needs 9223372036854775807 bytes" in out.stderr and "bytes free" in out.stderr, out.stderr
    assert not (tmp_path / "copy.h5").exists()
