"""The decoded chunks a kept dataset holds (h5tile.DatasetReader: h5tile.File's datasets): reads of
a part of one chunk of a compressed dataset, row by row as h5py users read, equal h5py's (edge
chunks, 1-D to 4-D, elements of 1 to 16 bytes and fixed-length strings, chunks never written read
as the fill value, from many threads at once); the chunks are held while the dataset is kept
open and dropped with it, so that a file rewritten in place by h5py (same size), a dataset
deleted and made again in place by h5py, a write through the same File in mode "a", or
h5tile.to_file over the path between two reads of one chunk gives the new data."""
import itertools
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import _h5tile  # noqa: E402

# A file is kept open only once its change time is this old (src/api/dataset_reader.cpp).
QUIET_S = 2.1
ROWS, COLS, CHUNK_ROWS = 640, 96, 64

try:
    import hdf5plugin  # noqa: F401 - h5py reads zstd through its filter
    H5PY_ZSTD = True
except ImportError:
    H5PY_ZSTD = False


def write_datasets(path, seed):
    """Datasets of every kind the cache serves or leaves alone, from h5py (zstd from h5tile)."""
    data = {
        "gzip": random_array("float32", (ROWS, COLS), seed),
        "plain": random_array("float32", (ROWS, COLS), seed + 1),
        "edges": random_array("int16", (101, 37), seed + 2),
        "one_d": random_array("float64", (1000,), seed + 3),
        "three_d": random_array("uint16", (21, 13, 9), seed + 4),
        "zstd": random_array("float32", (ROWS, COLS), seed + 5),
        "large": random_array("float32", (24, 1 << 17), seed + 6),  # chunks of 2 MiB
    }
    with h5py.File(path, "w") as f:
        f.create_dataset("gzip", data=data["gzip"], chunks=(CHUNK_ROWS, COLS), compression="gzip", shuffle=True)
        f.create_dataset("plain", data=data["plain"], chunks=(CHUNK_ROWS, COLS))
        f.create_dataset("edges", data=data["edges"], chunks=(16, 10), compression="gzip")
        f.create_dataset("one_d", data=data["one_d"], chunks=(64,), compression="gzip", shuffle=True)
        f.create_dataset("three_d", data=data["three_d"], chunks=(4, 5, 4), compression="gzip")
        f.create_dataset("large", data=data["large"], chunks=(4, 1 << 17), compression="gzip", compression_opts=1)
    h5tile.to_file(data["zstd"], path, "/zstd", mode="a", layout="chunked", chunks=(CHUNK_ROWS, COLS),
                   compression="zstd", shuffle=True).wait()
    return data


@pytest.fixture(scope="module")
def quiet_file(tmp_path_factory):
    """One file of every kind, written, then left alone long enough to be kept open."""
    path = tmp_path_factory.mktemp("cache") / "data.h5"
    data = write_datasets(path, 10)
    time.sleep(QUIET_S)
    return path, data


def reader(f, name):
    return f._readers["/" + name]


def test_rows_in_order_equal_h5py(quiet_file):
    """Every row of each dataset in order (h5py's habit), each read of a part of one chunk."""
    path, data = quiet_file
    with h5tile.File(path) as f, h5py.File(path, "r") as ref:
        for name in ("gzip", "plain", "edges", "one_d", "three_d") + (("zstd",) if H5PY_ZSTD else ()):
            ds, expected = f[name], ref[name]
            for i in range(expected.shape[0]):
                assert ds[i].tobytes() == expected[i].tobytes(), (name, i)
            np.testing.assert_array_equal(ds[()], data[name])
        # zstd: h5py reads it only with hdf5plugin; the data written is the reference otherwise
        for i in range(ROWS):
            assert f["zstd"][i].tobytes() == data["zstd"][i].tobytes(), i
        assert reader(f, "gzip").is_open
        assert reader(f, "gzip").cached_chunks > 0, "rows of a gzip dataset are read through decoded chunks"
        assert reader(f, "zstd").cached_chunks > 0
        assert reader(f, "plain").cached_chunks == 0, "unfiltered chunks are read as they are stored"


def test_small_boxes_equal_h5py(quiet_file):
    """Boxes inside one chunk, across chunks, at the edges, with steps; read_into as well."""
    path, _ = quiet_file
    selections = {
        "edges": [np.s_[100], np.s_[96:101, 30:37], np.s_[-1, -1], np.s_[17, 3:9], np.s_[:, 36], np.s_[5:40:7, 2]],
        "one_d": [np.s_[999], np.s_[960:1000], np.s_[3:7], np.s_[60:70], np.s_[::97]],
        "three_d": [np.s_[20], np.s_[20, 12], np.s_[20, 12, 8], np.s_[3, :, 2], np.s_[17:21, 10:13, 8:9],
                    np.s_[..., 4], np.s_[1:3, 1:4, 1:3]],
        "gzip": [np.s_[639, 90:96], np.s_[63:65], np.s_[100:110:3, ::5]],
    }
    with h5tile.File(path) as f, h5py.File(path, "r") as ref:
        for name, sels in selections.items():
            whole = ref[name][()]
            for sel in sels * 2:  # the second time through the chunks kept
                assert f[name][sel].tobytes() == np.ascontiguousarray(whole[sel]).tobytes(), (name, sel)
        r = _h5tile._Reader(str(path), "/edges", -1, 0)
        out = np.empty((3, 5), np.int16)
        for _ in range(2):
            r.read_into(out, "", [97, 31])
            np.testing.assert_array_equal(out, ref["edges"][97:100, 31:36])
        assert r.cached_chunks == 1
        r.close()
        assert r.cached_chunks == 0


@pytest.fixture(scope="module")
def partly_written_file(tmp_path_factory):
    """Datasets of elements of 1 to 16 bytes and fixed-length strings, in 1 to 4 dimensions, with
    edge chunks and a fill value, only part of each written by h5py: the chunks never written
    read as the fill value."""
    path = tmp_path_factory.mktemp("fill") / "data.h5"
    rng = np.random.default_rng(60)
    kinds = [("i1", (101,), (16,), 5), ("u2", (37, 11), (8, 4), 9), ("f8", (9, 7, 5), (4, 3, 2), -1.5),
             ("c16", (23, 17), (5, 6), 1 + 2j), ("S5", (30, 4), (7, 3), b"fill"),
             ("?", (6, 5, 4, 3), (4, 2, 3, 2), True)]
    with h5py.File(path, "w") as f:
        for dtype, shape, chunks, fill in kinds:
            ds = f.create_dataset(dtype.replace("?", "bool"), shape=shape, dtype=dtype, chunks=chunks,
                                  compression="gzip", shuffle=True, fillvalue=fill)
            part = tuple(slice(n // 3, n // 3 + max(n // 3, 1)) for n in shape)  # leaves chunks unwritten
            extent = tuple(len(range(n)[p]) for n, p in zip(shape, part))
            if dtype == "S5":
                values = np.array([b"v%d" % i for i in range(math.prod(extent))], "S5").reshape(extent)
            elif dtype == "?":
                values = rng.integers(0, 2, extent).astype(bool)
            elif dtype == "c16":
                values = rng.standard_normal(extent) + 1j * rng.standard_normal(extent)
            else:
                values = (rng.standard_normal(extent) * 40).astype(dtype)
            ds[part] = values
        strings = np.array([[f"r{i}c{j}" for j in range(6)] for i in range(50)], dtype=object)
        f.create_dataset("vlen", data=strings, dtype=h5py.string_dtype(), chunks=(8, 6), compression="gzip")
    time.sleep(QUIET_S)
    return path


def test_boxes_of_every_element_size_and_of_unwritten_chunks_equal_h5py(partly_written_file):
    """In each chunk (the edge chunks clipped to the dataset), boxes and elements read twice (the
    second time from the kept chunk) equal h5py's, the fill value where no chunk was written."""
    path = partly_written_file
    rng = np.random.default_rng(61)
    with h5tile.File(path) as f, h5py.File(path, "r") as ref:
        for name in (n for n in ref if n != "vlen"):
            expected, chunks = ref[name][()], ref[name].chunks
            assert (expected.flat[0] == ref[name].fillvalue), (name, "the first chunk is never written")
            origins = itertools.product(*(range(0, n, c) for n, c in zip(expected.shape, chunks)))
            selections = []
            for origin in origins:
                ends = [min(o + c, n) for o, c, n in zip(origin, chunks, expected.shape)]
                starts = [int(rng.integers(o, e)) for o, e in zip(origin, ends)]
                selections.append(tuple(slice(a, int(rng.integers(a, e)) + 1) for a, e in zip(starts, ends)))
                selections.append(tuple(e - 1 for e in ends))  # the chunk's last element
            for sel in selections * 2:
                got, want = np.asarray(f[name][sel]), np.asarray(expected[sel])
                assert (got.dtype, got.shape) == (want.dtype, want.shape), (name, sel)
                assert got.tobytes() == want.tobytes(), (name, sel)
            assert reader(f, name).cached_chunks > 0, name


def test_variable_length_strings_are_read_as_ever_and_never_kept(partly_written_file):
    """Rows of a compressed dataset of variable-length strings (read through HDF5 each time, not
    through decoded chunks) equal h5py's."""
    path = partly_written_file
    with h5tile.File(path) as f, h5py.File(path, "r") as ref:
        for i in range(ref["vlen"].shape[0]):
            assert f["vlen"][i].tolist() == ref["vlen"][i].tolist(), i
        assert reader(f, "vlen").cached_chunks == 0


def test_a_dataset_deleted_and_recreated_by_h5py_in_place(tmp_path):
    """h5py deletes the dataset and makes it again under the same name with other values, in the
    file as it is (its free space reused: same inode, same size): the next row of a kept chunk is
    the new dataset's."""
    path = tmp_path / "data.h5"
    rng = np.random.default_rng(70)
    old = rng.integers(0, 2**32, (ROWS, COLS), dtype=np.uint32)
    options = dict(chunks=(CHUNK_ROWS, COLS), compression="gzip", shuffle=True)
    with h5py.File(path, "w", fs_strategy="fsm", fs_persist=True) as w:
        w.create_dataset("x", data=old, **options)
    time.sleep(QUIET_S)
    with h5tile.File(path) as f:
        np.testing.assert_array_equal(f["x"][1], old[1])
        assert reader(f, "x").cached_chunks == 1
        before = path.stat()
        new = rng.integers(0, 2**32, (ROWS, COLS), dtype=np.uint32)
        with h5py.File(path, "r+", locking=False) as w:
            del w["x"]
            w.create_dataset("x", data=new, **options)
        after = path.stat()
        assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size), "made again in place, same size"
        for i in (2, 3, 64):
            np.testing.assert_array_equal(f["x"][i], new[i])


def test_a_file_rewritten_in_place_by_h5py_between_reads_of_one_chunk(tmp_path):
    """h5py writes other values over the dataset in place: same inode, same size (values of full
    entropy: every chunk is stored at the same length, where it was), within 2 s of the write.
    The chunk kept from before must not serve the next row."""
    path = tmp_path / "data.h5"
    rng = np.random.default_rng(50)
    old = rng.integers(0, 2**32, (ROWS, COLS), dtype=np.uint32)
    with h5py.File(path, "w") as w:
        w.create_dataset("gzip", data=old, chunks=(CHUNK_ROWS, COLS), compression="gzip", shuffle=True)
    time.sleep(QUIET_S)
    with h5tile.File(path) as f:
        np.testing.assert_array_equal(f["gzip"][1], old[1])
        assert reader(f, "gzip").cached_chunks == 1
        before = path.stat()
        new = rng.integers(0, 2**32, (ROWS, COLS), dtype=np.uint32)
        # HDF5's file locking is off for this writer: h5tile holds the file open, as h5py would.
        with h5py.File(path, "r+", locking=False) as w:
            w["gzip"][...] = new
        after = path.stat()
        assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size), "rewritten in place, same size"
        for i in (2, 3, 65):  # chunk 0 again, then the next one
            np.testing.assert_array_equal(f["gzip"][i], new[i])
        assert not reader(f, "gzip").is_open, "a file changed in the last 2 s is not kept"
        assert reader(f, "gzip").cached_chunks == 0
        # Left alone, it is kept anew, with chunks of its own.
        time.sleep(QUIET_S)
        for i in range(130):
            assert f["gzip"][i].tobytes() == new[i].tobytes(), i
        assert reader(f, "gzip").is_open and reader(f, "gzip").cached_chunks == 3


def test_a_write_through_the_same_file_then_a_row_of_the_same_chunk(tmp_path):
    path = tmp_path / "data.h5"
    data = write_datasets(path, 30)
    with h5tile.File(path, "a") as f:
        # Opening it for writing (held until close, as h5py's) may touch the file (HDF5 marks a
        # file open for writing): quiet again before a read may keep its dataset.
        time.sleep(QUIET_S)
        np.testing.assert_array_equal(f["gzip"][4], data["gzip"][4])
        np.testing.assert_array_equal(f["three_d"][2, 3], data["three_d"][2, 3])
        old = reader(f, "gzip")
        assert old.cached_chunks == 1
        new = random_array("float32", (ROWS, COLS), 31)
        f["gzip"][...] = new
        f["three_d"][...] = data["three_d"] + 1
        assert old.cached_chunks == 0, "the write let the kept dataset go, its chunks with it"
        np.testing.assert_array_equal(f["gzip"][5], new[5])
        np.testing.assert_array_equal(f["three_d"][2, 3], data["three_d"][2, 3] + 1)
        time.sleep(QUIET_S)
        np.testing.assert_array_equal(f["gzip"][6], new[6])
        assert reader(f, "gzip").cached_chunks == 1
        newer = random_array("float32", (ROWS, COLS), 32)
        f["gzip"][...] = newer  # again, while the dataset is kept with a chunk of the last data
        np.testing.assert_array_equal(f["gzip"][7], newer[7])
    with h5py.File(path, "r") as ref:
        np.testing.assert_array_equal(ref["gzip"][()], newer)


def test_to_file_over_the_path_then_a_row_of_the_same_chunk(tmp_path):
    path = tmp_path / "data.h5"
    data = write_datasets(path, 40)
    time.sleep(QUIET_S)
    with h5tile.File(path) as f:
        np.testing.assert_array_equal(f["one_d"][10], data["one_d"][10])
        assert reader(f, "one_d").cached_chunks == 1
        new = random_array("float64", (1000,), 41)
        # The same layout, a new file renamed over the path, then the same dataset added.
        h5tile.to_file(new, path, "/one_d", layout="chunked", chunks=(64,), compression="gzip", shuffle=True).wait()
        np.testing.assert_array_equal(f["one_d"][11], new[11])
        time.sleep(QUIET_S)
        np.testing.assert_array_equal(f["one_d"][12], new[12])
        assert reader(f, "one_d").cached_chunks == 1
        # In mode "a", into the file as it is (no rename): the kept chunk must go too.
        newer = random_array("float64", (1000,), 42)
        h5tile.to_file(newer, path, "/one_d", mode="a", layout="chunked", chunks=(64,), compression="gzip").wait()
        np.testing.assert_array_equal(f["one_d"][13], newer[13])


def test_many_threads_reading_rows_equal_h5py(quiet_file):
    """Dask's threads read one File's datasets at once: parts of the same chunks, filled at once,
    and of chunks of 2 MiB, four of which fill the cache (the others dropping and filling it)."""
    path, _ = quiet_file
    rng = np.random.default_rng(7)
    with h5py.File(path, "r") as ref:
        refs = {name: ref[name][()] for name in ("gzip", "edges", "three_d", "one_d", "large")}
    names = ("gzip", "edges", "three_d", "one_d") * 3 + ("large",)
    cases = []
    for k in range(1300):
        name = names[k % len(names)]
        shape = refs[name].shape
        i = int(rng.integers(0, shape[0]))
        cases.append((name, np.s_[i] if k % 3 else np.s_[i:min(i + 3, shape[0])]))
    with h5tile.File(path) as f:
        datasets = {name: f[name] for name in refs}

        def check(case):
            name, sel = case
            return datasets[name][sel].tobytes() == np.ascontiguousarray(refs[name][sel]).tobytes()

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(check, cases))
        assert all(results), [cases[i] for i, ok in enumerate(results) if not ok]
        assert all(reader(f, name).is_open for name in refs)
        assert reader(f, "gzip").cached_chunks == ROWS // CHUNK_ROWS
        assert reader(f, "large").cached_chunks == 4, "8 MiB of chunks of 2 MiB"


def test_verify_checksums_reads_are_not_served_from_memory(quiet_file):
    path, data = quiet_file
    with h5tile.File(path, verify_checksums=True) as f:
        for i in range(3):
            np.testing.assert_array_equal(f["gzip"][i], data["gzip"][i])
        assert reader(f, "gzip").is_open
        assert reader(f, "gzip").cached_chunks == 0


def test_rows_read_by_threads_while_the_path_is_written(tmp_path):
    """Threads read rows of the kept chunks while h5tile.to_file writes the path: a read begun after
    the write returned gives the new data, never a chunk kept from before; once the file is quiet
    again the threads read it through new chunks."""
    import threading
    path = tmp_path / "data.h5"
    options = dict(layout="chunked", chunks=(CHUNK_ROWS, COLS), compression="gzip", shuffle=True)

    def version(v):
        return np.full((ROWS, COLS), v, np.float32)

    h5tile.to_file(version(1), path, "/x", **options).wait()
    time.sleep(QUIET_S)
    written = [1]  # the versions whose write has returned, in order
    stop = threading.Event()
    wrong = []
    with h5tile.File(path) as f:
        ds = f["x"]
        np.testing.assert_array_equal(ds[0], version(1)[0])
        assert reader(f, "x").cached_chunks == 1

        def read_rows(seed):
            rng = np.random.default_rng(seed)
            while not stop.is_set():
                at_least = written[-1]
                row = ds[int(rng.integers(0, ROWS))]
                if not (row == row[0]).all() or row[0] < at_least:
                    wrong.append((at_least, row[0]))

        threads = [threading.Thread(target=read_rows, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(0.3)
            h5tile.to_file(version(2), path, "/x", **options).wait()
            written.append(2)
            time.sleep(QUIET_S + 0.3)  # kept again, its chunks read anew by the threads
            assert reader(f, "x").is_open and reader(f, "x").cached_chunks > 0
            h5tile.to_file(version(3), path, "/x", mode="a", **options).wait()
            written.append(3)
            time.sleep(0.3)
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert not wrong, wrong[:5]
        np.testing.assert_array_equal(ds[5], version(3)[5])
