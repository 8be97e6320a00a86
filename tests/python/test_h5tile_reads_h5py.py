"""Files h5py writes, in every layout h5tile must read, read by h5tile."""
import h5py
import numpy as np
import pytest

from conftest import DTYPES, random_array, same_bytes

STORAGE = {
    "contiguous": {},
    "chunked": {"chunks": (7, 4)},
    "deflate": {"chunks": (5, 11), "compression": "gzip", "compression_opts": 4},
    "shuffle-fletcher": {"chunks": (16, 3), "shuffle": True, "fletcher32": True},
    "compact": {"compact": True},
}


def h5py_write(path, name, array, storage):
    opts = dict(STORAGE[storage])
    with h5py.File(path, "w") as f:
        if opts.pop("compact", False):
            space = h5py.h5s.create_simple(array.shape)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            tid = h5py.h5t.py_create(array.dtype, logical=True)
            h5py.h5d.create(f.id, name.encode(), tid, space, dcpl=dcpl)
            f[name][...] = array
        else:
            f.create_dataset(name, data=array, **opts)


@pytest.mark.parametrize("storage", list(STORAGE))
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_storage(tool, tmp_path, dtype, storage):
    a = random_array(dtype, (37, 11), seed=3)
    h5py_write(tmp_path / "in.h5", "x", a, storage)
    assert same_bytes(tool.read(tmp_path / "in.h5", "/x"), a)


@pytest.mark.parametrize("dtype", [">i2", ">i4", ">u8", ">f4", ">f8", ">c8", ">c16", ">f2"])
@pytest.mark.parametrize("storage", ["contiguous", "chunked"])
def test_big_endian_is_converted(tool, tmp_path, dtype, storage):
    a = random_array(np.dtype(dtype).newbyteorder("=").name, (23, 5), seed=4)
    with h5py.File(tmp_path / "be.h5", "w") as f:
        f.create_dataset("x", data=a.astype(dtype), **STORAGE[storage])
    assert same_bytes(tool.read(tmp_path / "be.h5", "x"), a)


@pytest.mark.parametrize("storage", ["contiguous", "chunked"])
def test_user_block_offsets(tool, tmp_path, storage):
    # HDF5 before 1.14.4 leaves the user block out of chunk addresses (not out of H5Dget_offset).
    a = random_array("float64", (50, 7))
    with h5py.File(tmp_path / "ub.h5", "w", userblock_size=4096) as f:
        f.create_dataset("x", data=a, **STORAGE[storage])
    assert same_bytes(tool.read(tmp_path / "ub.h5", "x"), a)


def test_unwritten_dataset_reads_its_fill_value(tool, tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f.create_dataset("c", shape=(6, 2), dtype="i4", fillvalue=3)
        f.create_dataset("k", shape=(6, 2), dtype="i4", fillvalue=-2, chunks=(2, 2))
    assert same_bytes(tool.read(tmp_path / "f.h5", "c"), np.full((6, 2), 3, "i4"))
    assert same_bytes(tool.read(tmp_path / "f.h5", "k"), np.full((6, 2), -2, "i4"))


@pytest.mark.parametrize("shape", [(), (0,), (3, 0)])
def test_scalar_and_empty(tool, tmp_path, shape):
    a = random_array("int32", shape)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        f["x"] = a
    got = tool.read(tmp_path / "s.h5", "x")
    assert got.shape == shape and same_bytes(got, a)


def test_virtual_dataset_in_same_file(tool, tmp_path):
    a = random_array("float32", (10, 6))
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f["src0"] = a[:4]
        f["src1"] = a[4:]
        layout = h5py.VirtualLayout(shape=a.shape, dtype=a.dtype)
        layout[:4] = h5py.VirtualSource(".", "src0", shape=(4, 6))
        layout[4:] = h5py.VirtualSource(".", "src1", shape=(6, 6))
        f.create_virtual_dataset("v", layout)
    with h5py.File(tmp_path / "v.h5", "r") as f:
        assert f["v"].virtual_sources()[0].file_name == "."
    assert same_bytes(tool.read(tmp_path / "v.h5", "v"), a)


def test_virtual_dataset_of_other_files_with_gaps_and_strides(tool, tmp_path):
    a = random_array("int16", (8, 5), seed=1)
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f["a"] = a
        f["row"] = a[0]
    with h5py.File(tmp_path / "v.h5", "w") as f:
        # A box mapped from part of a source, a gap (fill value), and a strided mapping.
        layout = h5py.VirtualLayout(shape=(12, 5), dtype="i2")
        layout[0:3] = h5py.VirtualSource(str(tmp_path / "src.h5"), "a", shape=(8, 5))[2:5]
        f.create_virtual_dataset("boxes", layout, fillvalue=-7)
        strided = h5py.VirtualLayout(shape=(2, 5), dtype="i2")
        strided[0] = h5py.VirtualSource("src.h5", "row", shape=(5,))
        strided[1, ::2] = h5py.VirtualSource("src.h5", "row", shape=(5,))[0:3]
        f.create_virtual_dataset("strided", strided, fillvalue=9)
    with h5py.File(tmp_path / "v.h5", "r") as f:
        expect_boxes = f["boxes"][...]
        expect_strided = f["strided"][...]
    assert (expect_boxes[3:] == -7).all()
    assert same_bytes(tool.read(tmp_path / "v.h5", "boxes"), expect_boxes)
    assert same_bytes(tool.read(tmp_path / "v.h5", "strided"), expect_strided)


def test_virtual_dataset_with_overlapping_mappings(tool, tmp_path):
    # HDF5 reads the mappings in order: the last one that maps an element gives its value. What
    # none maps is the fill value, even where the overlaps add up to as many elements as the
    # dataset has (HDF5 itself then leaves those elements as the buffer had them).
    s = [np.arange(40, dtype="i4").reshape(4, 10) + 1000 * (k + 1) for k in range(3)]
    with h5py.File(tmp_path / "src.h5", "w") as f:
        for k in range(3):
            f[f"s{k}"] = s[k]
    with h5py.File(tmp_path / "v.h5", "w", libver=("v110", "v110")) as f:
        layout = h5py.VirtualLayout(shape=(10, 10), dtype="i4")
        layout[0:4] = h5py.VirtualSource("src.h5", "s0", shape=(4, 10))
        layout[0:4] = h5py.VirtualSource("src.h5", "s1", shape=(4, 10))  # the same box again: s1 stands
        layout[2:6, 3:8] = h5py.VirtualSource("src.h5", "s2", shape=(4, 10))[0:4, 0:5]  # over s1's corner
        f.create_virtual_dataset("v", layout, fillvalue=-7)  # 40 + 40 + 20 elements mapped: 100
    expect = np.full((10, 10), -7, "i4")
    expect[0:4] = s[1]
    expect[2:6, 3:8] = s[2][0:4, 0:5]
    mapped = np.zeros((10, 10), bool)
    mapped[0:4] = mapped[2:6, 3:8] = True
    with h5py.File(tmp_path / "v.h5", "r") as f:
        assert (f["v"][...][mapped] == expect[mapped]).all()  # as HDF5 reads it
    assert same_bytes(tool.read(tmp_path / "v.h5", "v"), expect)
    for offset, extent in [((1, 2), (8, 7)), ((2, 3), (2, 5)), ((3, 0), (7, 10))]:
        got = tool.box(tmp_path / "v.h5", "v", offset, extent, tmp_path)
        assert same_bytes(got, expect[offset[0]:offset[0] + extent[0], offset[1]:offset[1] + extent[1]])
    raw, _ = tool.batched(tmp_path / "v.h5", "v", (3, 10), tmp_path)
    assert np.frombuffer(raw, "i4").tolist() == expect.ravel().tolist()


H5PY_HDF5 = tuple(int(part) for part in h5py.version.hdf5_version.split(".")[:3])


@pytest.fixture
def latest_format_vds(tmp_path):
    """A virtual dataset that h5py writes with libver="latest": with h5py's HDF5 >= 1.12 (h5py 3.16
    bundles 2.0) its selections are encoded in version 3, which HDF5 1.10 cannot decode."""
    a = random_array("float64", (9, 4), seed=5)
    with h5py.File(tmp_path / "src.h5", "w", libver="latest") as f:
        f["a"] = a
    with h5py.File(tmp_path / "v.h5", "w", libver="latest") as f:
        layout = h5py.VirtualLayout(shape=a.shape, dtype=a.dtype)
        layout[:5] = h5py.VirtualSource("src.h5", "a", shape=a.shape)[:5]
        layout[5:] = h5py.VirtualSource("src.h5", "a", shape=a.shape)[5:]
        f.create_virtual_dataset("vds", layout)
    return tmp_path / "v.h5", a


def too_old_for_h5py_latest(hdf5_version) -> bool:
    return H5PY_HDF5 >= (1, 12, 0) and hdf5_version < (1, 12, 0)


def test_virtual_dataset_in_the_latest_format(tool, hdf5_version, latest_format_vds):
    if too_old_for_h5py_latest(hdf5_version):
        pytest.skip(f"HDF5 {'.'.join(map(str, hdf5_version))} cannot decode the version 3 selections of h5py's "
                    f"HDF5 {h5py.version.hdf5_version} (test_newer_format_error_says_so checks the error)")
    path, a = latest_format_vds
    assert same_bytes(tool.read(path, "vds"), a)


def test_newer_format_error_says_so(tool, hdf5_version, latest_format_vds):
    if not too_old_for_h5py_latest(hdf5_version):
        pytest.skip(f"HDF5 {'.'.join(map(str, hdf5_version))} reads what h5py's HDF5 {h5py.version.hdf5_version} "
                    "writes (test_virtual_dataset_in_the_latest_format)")
    path, _ = latest_format_vds
    err = tool.read(path, "vds")
    assert isinstance(err, dict), "HDF5 1.10 read version 3 selections"
    # The dataset exists: the error says that a newer HDF5 is needed, not that the name is missing.
    assert err["error"] != "DatasetNotFound", err
    assert "needs a newer HDF5" in err["message"] and "v.h5" in err["message"] and "/vds" in err["message"], err


def test_read_box_matches_numpy_slicing(tool, tmp_path):
    a = random_array("uint16", (31, 17, 5), seed=2)
    with h5py.File(tmp_path / "b.h5", "w") as f:
        f.create_dataset("contiguous", data=a)
        f.create_dataset("chunked", data=a, chunks=(4, 4, 5), compression="gzip")
    for name in ["contiguous", "chunked"]:
        got = tool.box(tmp_path / "b.h5", name, (3, 2, 1), (20, 9, 3), tmp_path)
        assert same_bytes(got, a[3:23, 2:11, 1:4])


@pytest.mark.parametrize("chunk", [(2,), (5,), (7,)])
def test_batched_clips_the_last_block(tool, tmp_path, chunk):
    a = np.arange(5, dtype="i8")
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f["x"] = a
    raw, blocks = tool.batched(tmp_path / "v.h5", "x", chunk, tmp_path)
    lengths = [b["shape"][0] for b in blocks]
    assert lengths == {(2,): [2, 2, 1], (5,): [5], (7,): [5]}[chunk]
    assert [b["offset"] for b in blocks] == [[o] for o in range(0, 5, chunk[0])]
    assert np.frombuffer(raw, "i8").tolist() == a.tolist()


def test_batched_blocks_assemble_into_the_array(tool, tmp_path):
    a = random_array("float64", (23, 19), seed=8)
    tool.write(a, tmp_path / "v.h5", ranks=3)
    raw, blocks = tool.batched(tmp_path / "v.h5", "data", (6, 8), tmp_path)
    offsets = [tuple(b["offset"]) for b in blocks]
    assert offsets == sorted(offsets)  # row-major order
    assembled = np.empty_like(a)
    pos = 0
    for b in blocks:
        (r, c), (h, w) = b["offset"], b["shape"]
        assert h == min(6, 23 - r) and w == min(8, 19 - c)
        assembled[r:r + h, c:c + w] = np.frombuffer(raw[pos:pos + h * w * 8], "f8").reshape(h, w)
        pos += h * w * 8
    assert pos == len(raw) and same_bytes(assembled, a)


@pytest.mark.parametrize("chunk,needle", [((0, 4), "element 0 equal to 0"), ((4,), "has 1 elements"),
                                          ((1, 2, 3), "has 3 elements")])
def test_batched_rejects_bad_chunk_size(tool, tmp_path, chunk, needle):
    tool.write(random_array("int8", (4, 4)), tmp_path / "v.h5")
    err = tool.batched(tmp_path / "v.h5", "data", chunk, tmp_path, check=False)
    assert err["error"] == "InvalidArgument" and needle in err["message"], err


@pytest.mark.parametrize("dtype", ["int16", "float64", "complex64", "bool", "V3"])
@pytest.mark.parametrize("storage", ["contiguous", "chunked", "deflate", "compact"])
def test_raw_and_hdf5_paths_give_identical_bytes(tool, tmp_path, monkeypatch, dtype, storage):
    """The same files read with pread (H5TILE_RAW_IO=1) and through HDF5 (=0)."""
    a = random_array(dtype, (37, 11), seed=5)
    h5py_write(tmp_path / "f.h5", "x", a, storage)
    with h5py.File(tmp_path / "f.h5", "a") as f:  # partly unallocated chunks: fill values
        f.create_dataset("sparse", shape=(40, 9), dtype="i4", chunks=(8, 4), fillvalue=-3)
        f["sparse"][8:16, 0:4] = 7
    results = {}
    for raw in ("1", "0"):
        monkeypatch.setenv("H5TILE_RAW_IO", raw)
        whole = tool.read(tmp_path / "f.h5", "/x", tmp=tmp_path)
        box = tool.box(tmp_path / "f.h5", "/x", (3, 2), (30, 7), tmp_path)
        sparse = tool.read(tmp_path / "f.h5", "/sparse", tmp=tmp_path)
        results[raw] = (whole.tobytes(), box.tobytes(), sparse.tobytes())
        assert same_bytes(whole, a) and same_bytes(box, a[3:33, 2:9])
    assert results["1"] == results["0"]
