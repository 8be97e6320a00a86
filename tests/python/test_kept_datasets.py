"""Datasets kept open between reads (h5tile.DatasetReader: h5tile.File's datasets, h5tile.dask's
blocks): the reads equal h5py's; a file replaced (renamed over) or rewritten in place between two
reads gives the new data; reads from many threads at once equal numpy; closing lets every
descriptor and HDF5 object go; a child of fork() reads through its own open."""
import gc
import os
import re
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
SHAPE = (64, 48)
LAYOUTS = {"contiguous": {}, "chunked": {"chunks": (8, 16)},
           "gzip": {"chunks": (8, 16), "compression": "gzip", "shuffle": True}}
CHANGED = {"longer": ((SHAPE[0] * 2, SHAPE[1]), "float32"), "other-type": (SHAPE, "float64"),
           "transposed": ((SHAPE[1], SHAPE[0]), "int16")}
TESTS = ["parity", "replaced", *(f"reshaped-{c}" for c in CHANGED), "rewritten", "rewritten_quiet", "threads", "descriptors", "own_writes", "fork", "dask"]


def write_plain(path, seed):
    data = {name: random_array("float32", SHAPE, seed + i) for i, name in enumerate(LAYOUTS)}
    with h5py.File(path, "w") as f:
        for name, options in LAYOUTS.items():
            f.create_dataset(name, data=data[name], **options)
    return data


def remake(f, data):
    """Each dataset of `f` written anew at other addresses: the new ones are made first (so that
    HDF5 cannot put them in the space the old ones leave), then take the old ones' names."""
    for name, options in LAYOUTS.items():
        f.create_dataset(name + "-new", data=data[name], **options)
    for name in LAYOUTS:
        del f[name]
        f.move(name + "-new", name)


@pytest.fixture(scope="module")
def quiet_files(tmp_path_factory):
    """One file of the three layouts and one virtual (tiled) file per test, written at once, then
    left alone long enough to be kept open."""
    folder = tmp_path_factory.mktemp("kept")
    files = {}
    for seed, name in enumerate(TESTS):
        plain = folder / f"{name}.h5"
        data = write_plain(plain, 10 * seed)
        tiled = random_array("int32", SHAPE, 100 + seed)
        h5tile.to_file(tiled, folder / f"{name}-tiled.h5", "/x", layout="virtual", ranks=3).wait()
        files[name] = (plain, data, folder / f"{name}-tiled.h5", tiled)
    files["h5py_vds"] = write_h5py_vds(folder / "vds", 3)
    files["h5py_vds_many"] = write_h5py_vds(folder / "vds-many", 70)
    time.sleep(QUIET_S)
    return files


def write_h5py_vds(folder, sources):
    """A virtual dataset h5py writes: `sources` files of 4 rows each, mapped one after another."""
    folder.mkdir()
    parts = [random_array("int16", (4, 6), 300 + i) for i in range(sources)]
    layout = h5py.VirtualLayout(shape=(4 * sources, 6), dtype="int16")
    for i, part in enumerate(parts):
        with h5py.File(folder / f"s{i}.h5", "w") as f:
            f.create_dataset("d", data=part)
        layout[4 * i:4 * i + 4] = h5py.VirtualSource(f"s{i}.h5", "d", shape=(4, 6))
    with h5py.File(folder / "v.h5", "w") as f:
        f.create_virtual_dataset("v", layout)
    return folder / "v.h5", np.concatenate(parts)


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_reads_through_kept_datasets_equal_h5py(quiet_files):
    plain, _, tiled, _ = quiet_files["parity"]
    selections = [np.s_[5], np.s_[3:9], np.s_[10:40:3, 7:30], np.s_[..., 5], np.s_[-1, ::2], np.s_[:, :]]
    for path, names in ((plain, list(LAYOUTS)), (tiled, ["x"])):
        with h5py.File(path, "r") as ref, h5tile.File(path) as f:
            for name in names:
                whole = ref[name][()]
                for sel in selections:
                    np.testing.assert_array_equal(f[name][sel], whole[sel])  # h5py has no negative steps
                assert f._readers["/" + name].is_open, "a quiet local file is kept open"
    # h5tile.read_box and the reader agree as well
    reader = _h5tile._Reader(str(plain), "/chunked", -1, 0)
    np.testing.assert_array_equal(reader.read_box([2, 3], [5, 7]), h5tile.read_box(plain, "/chunked", [2, 3], [5, 7]))
    out = np.empty((4, SHAPE[1]), np.float32)
    reader.read_into(out, "", [9, 0])
    with h5py.File(plain, "r") as ref:
        np.testing.assert_array_equal(out, ref["chunked"][9:13])
    reader.close()
    assert not reader.is_open


def test_a_file_renamed_over_between_reads_gives_the_new_data(quiet_files):
    plain, data, tiled, tiled_data = quiet_files["replaced"]
    with h5tile.File(plain) as f, h5tile.File(tiled) as g:
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][7], data[name][7])
            assert f._readers["/" + name].is_open
        np.testing.assert_array_equal(g["x"][7], tiled_data[7])
        assert g._readers["/x"].is_open
        # Another file of the same size and layout, other values, renamed over each.
        newer = plain.with_name("replaced-new.h5")
        new_data = write_plain(newer, 999)
        assert newer.stat().st_size == plain.stat().st_size
        os.replace(newer, plain)
        newer_tiled = random_array("int32", SHAPE, 555)
        with h5py.File(tiled.with_name("replaced-other.h5"), "w") as o:
            o.create_dataset("x", data=newer_tiled)
        os.replace(tiled.with_name("replaced-other.h5"), tiled)
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][7], new_data[name][7])
            np.testing.assert_array_equal(f[name][:], new_data[name])
        np.testing.assert_array_equal(g["x"][7], newer_tiled[7])


@pytest.mark.parametrize("change", sorted(CHANGED))
def test_a_dataset_of_another_shape_or_type_after_a_replace_fails_its_reads(tmp_path, quiet_files, change):
    # A File's Dataset and a Dask array were described (shape, dtype) when made; reading the new
    # file's dataset through them would fit the old shape and give a part of it, or values of
    # another type under the old dtype. Every read fails instead, naming both: through the kept
    # open (a quiet file) or an open for one read (a file just written), read before the replace
    # or only after it (the reader's first open finds the change too). A Dask array's blocks find
    # first that the file is not the version the array was made from, and say so.
    dask = pytest.importorskip("dask", reason="h5tile.dask needs dask")
    import h5tile.dask as hd
    shape, dtype = CHANGED[change]
    plain, data, _, _ = quiet_files[f"reshaped-{change}"]
    fresh = tmp_path / "fresh.h5"
    for path, kept in ((plain, True), (fresh, False)):
        if not kept:
            write_plain(fresh, 3)  # just written: not kept for 2 s, each read opens it
        with h5tile.File(path) as f, h5tile.File(path) as g, dask.config.set(scheduler="sync"):
            with h5py.File(path, "r") as h:
                expected = h["chunked"][:]
            np.testing.assert_array_equal(f["chunked"][7], expected[7])
            np.testing.assert_array_equal(f["chunked"][:], expected)
            assert f._readers["/chunked"].is_open == kept, path
            x = hd.from_file(str(path), "/chunked", chunks=(8, 48))
            np.testing.assert_array_equal(x[:8].compute(), expected[:8])
            unread, y = g["chunked"], hd.from_file(str(path), "/chunked", chunks=(8, 48))  # described, not read
            assert unread.shape == SHAPE and unread.dtype == np.float32
            other = tmp_path / "other.h5"
            with h5py.File(other, "w") as o:
                o.create_dataset("chunked", data=np.ones(shape, dtype), chunks=(8, 16))
            os.replace(other, path)
            was = f"[{SHAPE[0]}, {SHAPE[1]}] float32"
            now = f"[{shape[0]}, {shape[1]}] {np.dtype(dtype).name}"
            reads = (lambda: f["chunked"][7], lambda: f["chunked"][:], lambda: unread[7], lambda: f["chunked"][7])
            for read in reads:
                with pytest.raises(h5tile.Error, match=rf"'/chunked' in '.*{path.name}' changed since it was described: "
                                                       rf"it was {re.escape(was)}, it is now {re.escape(now)}"):
                    read()
            for block in (x[:8], y[8:16]):
                with pytest.raises(h5tile.IoError, match=rf"'/chunked' of '.*{path.name}' for this Dask array: the "
                                                         "file changed since the array was made"):
                    block.compute()
        with h5tile.File(path) as f:  # opened again: as it is now
            assert f["chunked"].shape == shape and f["chunked"].dtype == dtype
            np.testing.assert_array_equal(f["chunked"][:], np.ones(shape, dtype))
            np.testing.assert_array_equal(hd.from_file(str(path), "/chunked").compute(scheduler="sync"),
                                          np.ones(shape, dtype))


def test_a_dataset_grown_along_its_unlimited_axis_is_still_read(tmp_path):
    # netCDF's record dimension: rows appended in place (h5py resize). Every box of the shape the
    # File was made with still holds the same elements: it reads on, and a File opened again sees
    # the new rows. Growth along a fixed axis is refused (test above). A Dask array reads the
    # version of the file it was made from only: made again, it reads the new one.
    dask = pytest.importorskip("dask", reason="h5tile.dask needs dask")
    import h5tile.dask as hd
    path = tmp_path / "records.h5"
    first = random_array("float32", SHAPE, 31)
    with h5py.File(path, "w") as h:
        h.create_dataset("t", data=first, maxshape=(None, SHAPE[1]), chunks=(8, 16))
    time.sleep(QUIET_S)
    with h5tile.File(path) as f, dask.config.set(scheduler="sync"):
        x = hd.from_file(str(path), "/t", chunks=(8, 48))
        np.testing.assert_array_equal(f["t"][:], first)
        assert f._readers["/t"].is_open  # kept
        f._readers["/t"].close()  # else HDF5's file lock keeps h5py from appending
        more = random_array("float32", (24, SHAPE[1]), 32)
        with h5py.File(path, "a") as h:
            h["t"].resize(SHAPE[0] + 24, axis=0)
            h["t"][SHAPE[0]:] = more
        for wait in (0, QUIET_S):  # opened by each read (just changed), then kept anew
            time.sleep(wait)
            np.testing.assert_array_equal(f["t"][:], first)
            np.testing.assert_array_equal(f["t"][5], first[5])
            assert f._readers["/t"].is_open == bool(wait)
            with pytest.raises(h5tile.IoError, match="changed since the array was made"):
                x.compute()
        np.testing.assert_array_equal(hd.from_file(str(path), "/t", chunks=(8, 48)).compute(),
                                      np.concatenate([first, more]))
    with h5tile.File(path) as f:
        assert f["t"].shape == (SHAPE[0] + 24, SHAPE[1])
        np.testing.assert_array_equal(f["t"][SHAPE[0]:], more)


def test_a_file_rewritten_in_place_between_reads_gives_the_new_data(quiet_files):
    plain, data, _, _ = quiet_files["rewritten"]
    with h5tile.File(plain) as f:
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][3], data[name][3])
            assert f._readers["/" + name].is_open
        inode = plain.stat().st_ino
        # h5py rewrites the values in place (same inode; the gzip chunks change size, so move).
        # HDF5's file locking is off for this writer: h5tile holds the file open, as h5py would.
        new = {name: random_array("float32", SHAPE, 77 + i) for i, name in enumerate(LAYOUTS)}
        with h5py.File(plain, "r+", locking=False) as w:
            for name in LAYOUTS:
                w[name][...] = new[name]
        assert plain.stat().st_ino == inode
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][3], new[name][3])
            np.testing.assert_array_equal(f[name][:], new[name])
        # Each dataset made again elsewhere in the file: what was learnt of the old file would read
        # the old bytes, which stay where they were.
        newer = {name: random_array("float32", SHAPE, 88 + i) for i, name in enumerate(LAYOUTS)}
        with h5py.File(plain, "r+", locking=False) as w:
            remake(w, newer)
        assert plain.stat().st_ino == inode
        # A call that opens the file itself first lets go of the File's old opens (HDF5 would share
        # their metadata), then so do the File's reads.
        np.testing.assert_array_equal(h5tile.read_box(plain, "/gzip", [0, 0], list(SHAPE)), newer["gzip"])
        assert tuple(h5tile.describe(plain, "/chunked")["shape"]) == SHAPE
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][3], newer[name][3])
            np.testing.assert_array_equal(f[name][:], newer[name])


def test_a_file_rewritten_in_place_and_left_alone_is_kept_anew(quiet_files):
    """Other datasets of the file still keep it open when one reopens it: HDF5 would share their
    open's cached metadata (the gzip dataset's old chunk index) unless they let go first."""
    plain, data, _, _ = quiet_files["rewritten_quiet"]
    with h5tile.File(plain) as f:
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][3], data[name][3])
            assert f._readers["/" + name].is_open
        new = {name: random_array("float32", SHAPE, 177 + i) for i, name in enumerate(LAYOUTS)}
        with h5py.File(plain, "r+", locking=False) as w:
            remake(w, new)
        time.sleep(QUIET_S)  # quiet again: the first read opens the file anew and keeps it
        for name in reversed(list(LAYOUTS)):  # gzip first
            np.testing.assert_array_equal(f[name][:], new[name])
            assert f._readers["/" + name].is_open


def test_a_source_of_a_virtual_dataset_renamed_over_gives_the_new_data(quiet_files):
    path, data = quiet_files["h5py_vds"]
    with h5tile.File(path) as f:
        np.testing.assert_array_equal(f["v"][5], data[5])
        assert f._readers["/v"].is_open, "its sources are stat'ed before each read"
        new = random_array("int16", (4, 6), 999)
        with h5py.File(path.with_name("s1-new.h5"), "w") as o:
            o.create_dataset("d", data=new)
        os.replace(path.with_name("s1-new.h5"), path.with_name("s1.h5"))
        np.testing.assert_array_equal(f["v"][5], new[1])
        np.testing.assert_array_equal(f["v"][:4], data[:4])
    many, many_data = quiet_files["h5py_vds_many"]
    with h5tile.File(many) as f:
        np.testing.assert_array_equal(f["v"][100:180], many_data[100:180])
        assert not f._readers["/v"].is_open, "70 source files are more than a dataset is kept with"


def test_many_threads_reading_boxes_equal_numpy(quiet_files):
    plain, data, tiled, tiled_data = quiet_files["threads"]
    rng = np.random.default_rng(4)
    boxes = [(int(r), int(c), int(h), int(w)) for r, c, h, w in
             zip(rng.integers(0, 60, 400), rng.integers(0, 40, 400), rng.integers(1, 5, 400), rng.integers(1, 9, 400))]
    with h5tile.File(plain) as f, h5tile.File(tiled) as g:
        sets = [(f[name], data[name]) for name in LAYOUTS] + [(g["x"], tiled_data)]

        def check(i):
            ds, ref = sets[i % len(sets)]
            r, c, h, w = boxes[i]
            got = ds[r:r + h, c:c + w]
            return got.tobytes() == np.ascontiguousarray(ref[r:r + h, c:c + w]).tobytes()  # NaNs too

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(check, range(len(boxes))))
        assert all(results), [i for i, ok in enumerate(results) if not ok]
        assert all(f._readers["/" + name].is_open for name in LAYOUTS)


def test_closing_lets_every_descriptor_and_object_go(quiet_files):
    plain, data, tiled, tiled_data = quiet_files["descriptors"]
    gc.collect()
    before = open_fds()
    assert _h5tile.open_hdf5_objects() == 0
    for _ in range(3):
        f = h5tile.File(plain)
        g = h5tile.File(tiled)
        for name in LAYOUTS:
            np.testing.assert_array_equal(f[name][1:3], data[name][1:3])
        np.testing.assert_array_equal(g["x"][4], tiled_data[4])
        assert open_fds() > before, "the datasets are kept open while the File is"
        assert _h5tile.open_hdf5_objects() > 0
        f.close()
        g.close()
        assert open_fds() == before
        assert _h5tile.open_hdf5_objects() == 0
    # A reader dropped without close() lets go too.
    reader = _h5tile._Reader(str(plain), "/contiguous", -1, 0)
    reader.read_box([0, 0], [1, 1])
    assert reader.is_open
    del reader
    gc.collect()
    assert open_fds() == before
    assert _h5tile.open_hdf5_objects() == 0


def test_h5tile_writes_of_the_path_let_the_kept_file_go(quiet_files):
    plain, data, tiled, _ = quiet_files["own_writes"]
    with h5tile.File(plain) as f:
        np.testing.assert_array_equal(f["chunked"][2], data["chunked"][2])
        assert f._readers["/chunked"].is_open
        # HDF5 refuses to open for writing a file it holds open read-only: the write lets it go.
        with h5tile.File(plain, "a") as w:
            w["chunked"].attrs["units"] = "m"
        assert not f._readers["/chunked"].is_open
        np.testing.assert_array_equal(f["chunked"][2], data["chunked"][2])
        with h5py.File(plain, "r") as ref:
            assert ref["chunked"].attrs["units"] == "m"
        # to_file over the path: the new data
        new = random_array("float32", SHAPE, 31)
        h5tile.to_file(new, plain, "/chunked", layout="chunked").wait()
        np.testing.assert_array_equal(f["chunked"][5], new[5])


def test_a_child_of_fork_reads_through_its_own_open(quiet_files):
    plain, data, _, _ = quiet_files["fork"]
    with h5tile.File(plain) as f:
        np.testing.assert_array_equal(f["gzip"][6], data["gzip"][6])
        assert f._readers["/gzip"].is_open
        pid = os.fork()
        if pid == 0:  # the child: its reads are its own, and right
            ok = False
            try:
                assert not f._readers["/gzip"].is_open, "the parent's open is not the child's"
                ok = f["gzip"][6:9].tobytes() == data["gzip"][6:9].tobytes()
            except BaseException as e:  # noqa: BLE001 - reported to the parent through the exit status
                print("child:", repr(e), file=sys.stderr)
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert f._readers["/gzip"].is_open
        np.testing.assert_array_equal(f["gzip"][8], data["gzip"][8])


def test_dask_blocks_read_through_one_kept_dataset(quiet_files):
    dask = pytest.importorskip("dask", reason="h5tile.dask needs dask")
    import h5tile.dask as hd
    plain, data, tiled, tiled_data = quiet_files["dask"]
    gc.collect()
    before = open_fds()
    array = hd.from_file(plain, "/chunked", chunks=(8, 16))
    np.testing.assert_array_equal(array.compute(scheduler="threads"), data["chunked"])
    virtual = hd.from_file(tiled, "/x", chunks=(5, 7))
    np.testing.assert_array_equal(virtual.compute(scheduler="threads"), tiled_data)
    # The same blocks again after the file was renamed over: an error (one compute reads one version
    # of the file); an array made again reads the new data.
    newer = plain.with_name("dask-new.h5")
    new_data = write_plain(newer, 4242)
    os.replace(newer, plain)
    with pytest.raises(h5tile.IoError, match="changed since the array was made"):
        array.compute(scheduler="threads")
    array = hd.from_file(plain, "/chunked", chunks=(8, 16))
    np.testing.assert_array_equal(array.compute(scheduler="threads"), new_data["chunked"])
    del array, virtual
    gc.collect()
    assert open_fds() == before
    assert dask.__name__ == "dask"
