"""Chunked datasets filtered with deflate (gzip), shuffle and fletcher32, which h5tile decodes on
its own workers: every byte must be the byte h5py (HDF5) reads, through every read function, with
partial edge chunks, unallocated chunks (fill values) and chunks for which HDF5 skipped a filter;
a chunk whose checksum fails is an error. H5TILE_RAW_IO=0 (every byte through HDF5) must agree."""
import sys
import zlib

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import settings  # noqa: E402

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]
# (gzip level or None, shuffle, fletcher32)
PIPELINES = [(1, False, False), (6, True, False), (9, True, True), (6, False, True), (1, True, True),
             (None, True, True)]


@pytest.fixture()
def raw_io_restored():
    before = settings.raw_io()
    yield
    settings.set_raw_io(before)


def smooth(dtype, shape, seed=0):
    """Compressible values (a ramp with some noise) of `dtype`; random bits for bool/complex."""
    a = random_array(dtype, shape, seed)
    if np.dtype(dtype).kind in "iuf":
        ramp = np.arange(int(np.prod(shape))).reshape(shape) % 97
        noise = np.random.default_rng(seed).integers(0, 3, size=shape)
        a = (ramp + noise).astype(dtype)
    return a


def write(path, a, level, shuffle, fletcher32, chunks, **extra):
    with h5py.File(path, "w") as f:
        opts = {"chunks": chunks, "shuffle": shuffle, "fletcher32": fletcher32}
        if level is not None:
            opts.update(compression="gzip", compression_opts=level)
        f.create_dataset("x", data=a, **opts, **extra)


def every_read(path, name, box_offset, box_shape, batch):
    """from_file, read_box and from_file_batched (reassembled) of one dataset."""
    whole = h5tile.from_file(path, name)
    box = h5tile.read_box(path, name, box_offset, box_shape)
    batched = np.empty_like(whole)
    for block, offset in h5tile.from_file_batched(path, name, batch):
        batched[tuple(slice(o, o + s) for o, s in zip(offset, block.shape))] = block
    return whole, box, batched


def flip_bits(path, offset):
    """Damages the byte at `offset` of the file `path` (four of its bits flipped)."""
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x5A]))


def reads_match_hdf5_both_ways(path, box_offset, box_shape, batch, threads=None):
    """from_file, read_box and from_file_batched of "/x" (and from_file on `threads` threads), with
    h5tile's own reads (raw_io on) and through HDF5 (off): each equals h5py's read byte for byte.
    Returns h5py's whole read."""
    box = tuple(slice(o, o + n) for o, n in zip(box_offset, box_shape))
    with h5py.File(path, "r") as f:
        reference = f["x"][...]
        reference_box = f["x"][box]
    results = {}
    for raw in (True, False):
        settings.set_raw_io(raw)
        whole, part, batched = every_read(path, "/x", box_offset, box_shape, batch)
        assert same_bytes(whole, reference)
        assert same_bytes(part, reference_box)
        assert same_bytes(batched, reference)
        if threads:
            assert same_bytes(h5tile.from_file(path, "/x", threads=threads), reference)
        results[raw] = (whole.tobytes(), part.tobytes(), batched.tobytes())
    assert results[True] == results[False]
    return reference


@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: f"gzip{p[0]}-shuffle{int(p[1])}-fletcher{int(p[2])}")
@pytest.mark.parametrize("dtype", DTYPES)
def test_decoded_bytes_are_hdf5s(tmp_path, raw_io_restored, dtype, pipeline):
    a = smooth(dtype, (45, 13), seed=1)
    path = tmp_path / "c.h5"
    write(path, a, *pipeline, chunks=(8, 5))  # partial edge chunks on both axes
    assert same_bytes(reads_match_hdf5_both_ways(path, (3, 2), (37, 10), (7, 6)), a)


@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: f"gzip{p[0]}-shuffle{int(p[1])}-fletcher{int(p[2])}")
@pytest.mark.parametrize("dtype", DTYPES)
def test_parts_of_chunks_with_long_rows_are_hdf5s(tmp_path, raw_io_restored, dtype, pipeline):
    """Parts of chunks whose rows are 16 elements or more go row by row straight where they belong
    (shuffle writes them there): boxes cutting chunks on every axis, rows too short for that (the
    last chunk column's 12 elements) beside them, as read_box, h5tile.File and from_file read them."""
    a = smooth(dtype, (40, 9, 150), seed=3)
    path = tmp_path / "c.h5"
    write(path, a, *pipeline, chunks=(16, 4, 64))
    box = (slice(3, 33), slice(1, 8), slice(10, 140))
    with h5py.File(path, "r") as f:
        reference = f["x"][box]
    for raw in (True, False):
        settings.set_raw_io(raw)
        assert same_bytes(h5tile.read_box(path, "/x", (3, 1, 10), (30, 7, 130), threads=3), reference)
        with h5tile.File(path) as f:
            assert same_bytes(f["x"][box], reference)
            assert same_bytes(f["x"][5, :, 20:100], a[5, :, 20:100])
    assert same_bytes(h5tile.from_file(path, "/x", threads=3), a)


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
def test_a_box_of_8_mib_or_more_is_hdf5s(tmp_path, dtype):
    """A read of 8 MiB or more writes the rows of shuffled chunks with streaming stores: the box's
    bytes are h5py's, with its rows starting at 16-byte boundaries of the result and not."""
    a = smooth(dtype, (1100, 2080), seed=4)
    if a.nbytes < 8 << 20:
        a = np.concatenate([a] * (-(-(8 << 20) // a.nbytes) + 1))
    path = tmp_path / "c.h5"
    write(path, a, 4, True, False, chunks=(100, 128))
    rows, cols = a.shape
    boxes = [(slice(0, rows), slice(0, cols)), (slice(7, rows), slice(5, cols - 3))]
    with h5py.File(path, "r") as f:
        references = [f["x"][box] for box in boxes]
    with h5tile.File(path) as f:
        for box, reference in zip(boxes, references):
            assert reference.nbytes >= 8 << 20
            assert same_bytes(f["x"][box], reference)


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128"])
def test_three_axes_and_many_chunks_on_many_threads(tmp_path, dtype):
    a = smooth(dtype, (20, 33, 17), seed=2)
    path = tmp_path / "c.h5"
    write(path, a, 4, True, True, chunks=(6, 8, 5))
    with h5py.File(path, "r") as f:
        reference = f["x"][...]
    assert same_bytes(h5tile.from_file(path, "/x", threads=4), reference)
    assert same_bytes(h5tile.read_box(path, "/x", (5, 7, 3), (9, 20, 11), threads=3), reference[5:14, 7:27, 3:14])


@pytest.mark.parametrize("pipeline", [(6, True, False), (9, True, True)])
def test_unallocated_chunks_read_as_fill_values(tmp_path, raw_io_restored, pipeline):
    path = tmp_path / "sparse.h5"
    level, shuffle, fletcher32 = pipeline
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=(50, 30), dtype="i4", chunks=(8, 8), compression="gzip",
                             compression_opts=level, shuffle=shuffle, fletcher32=fletcher32, fillvalue=-7)
        d[8:16, 0:8] = np.arange(64, dtype="i4").reshape(8, 8)
        d[20:23, 5:29] = 5  # parts of several chunks: the rest of each takes the fill value
        d[48:50, 24:30] = 9  # an edge chunk
    reference = reads_match_hdf5_both_ways(path, (6, 3), (43, 24), (9, 7))
    assert (reference[0:8] == -7).all() and (reference[48:50, 24:30] == 9).all()


def many_small_chunks(path, filters, libver=None):
    """int32 [1203, 37] in 12164 chunks of 48 bytes (3 x 4) with `filters` (h5py's keywords): too
    many to find one by one without H5Dchunk_iter (HDF5 1.10.8). There h5tile lists a version-1
    B-tree (h5py's default index) from the file's bytes, and lets HDF5 read the chunks of other
    indexes (libver "v110": a fixed array), whole boxes or each chunk's stored bytes, decoded by
    h5tile; HDF5 with it (1.10.10, 1.14) lists them in one pass. Rows 900 on are unallocated (fill
    values) but for a few chunks around row 1000."""
    a = smooth("int32", (1203, 37), seed=6)
    with h5py.File(path, "w", libver=libver) as f:
        d = f.create_dataset("x", shape=a.shape, dtype="i4", chunks=(3, 4), fillvalue=-5, **filters)
        d[:900] = a[:900]
        d[1000:1001, 7:20] = 8
    return a


@pytest.mark.parametrize("libver", [None, ("earliest", "v110")], ids=["btree-v1", "fixed-array"])
@pytest.mark.parametrize("filtered", [False, True], ids=["raw-chunks", "gzip-shuffle"])
def test_many_small_chunks_read_as_hdf5_reads_them(tmp_path, raw_io_restored, filtered, libver):
    path = tmp_path / "many.h5"
    a = many_small_chunks(path, {"compression": "gzip", "compression_opts": 1, "shuffle": True} if filtered else {},
                          libver)
    if filtered:  # chunk (0, 0) stored with shuffle skipped: bit 0 of its filter mask
        with h5py.File(path, "a") as f:
            f["x"].id.write_direct_chunk((0, 0), zlib.compress((a[0:3, 0:4] * 3 + 1).astype("i4").tobytes(), 6),
                                         filter_mask=0b01)
    reference = reads_match_hdf5_both_ways(path, (10, 3), (1090, 27), (250, 37), threads=3)
    assert (reference[950] == -5).all() and (reference[1000, 7:20] == 8).all()


def test_a_corrupt_chunk_among_many_small_ones_is_an_error(tmp_path):
    path = tmp_path / "many.h5"
    a = many_small_chunks(path, {"compression": "gzip", "fletcher32": True})
    with h5py.File(path, "r") as f:
        info = f["x"].id.get_chunk_info_by_coord((600, 20))
    flip_bits(path, info.byte_offset + info.size // 2)
    with pytest.raises(RuntimeError, match=r"chunk \[600:603, 20:24\].*(?i:fletcher-?32)"):
        h5tile.from_file(path, "/x")
    assert same_bytes(h5tile.read_box(path, "/x", (0, 0), (600, 37)), a[:600])


def test_a_filter_hdf5_skipped_for_a_chunk_is_not_undone(tmp_path):
    """Bit i of a chunk's filter mask: filter i was not applied (here shuffle, for chunk (0, 0))."""
    a = smooth("int32", (16, 16), seed=3)
    path = tmp_path / "mask.h5"
    write(path, a, 6, True, False, chunks=(8, 8))
    with h5py.File(path, "a") as f:
        new = (a[0:8, 0:8] * 3 + 1).astype("i4")
        f["x"].id.write_direct_chunk((0, 0), zlib.compress(new.tobytes(), 6), filter_mask=0b01)
        reference = f["x"][...]
    assert same_bytes(reference[0:8, 0:8], new)
    assert same_bytes(h5tile.from_file(path, "/x"), reference)


@pytest.mark.parametrize("order", [("fletcher32", "deflate"), ("shuffle", "fletcher32", "deflate"),
                                   ("fletcher32", "shuffle", "deflate")])
def test_fletcher32_ahead_of_deflate_is_decoded(tmp_path, order):
    """A pipeline that checksums before it compresses: the deflate stream holds the chunk and the
    4 bytes of its checksum (HDF5 applies the filters in the order the creation list gives)."""
    a = smooth("int32", (37, 29), seed=5)
    path = tmp_path / "order.h5"
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((8, 8))
        for name in order:
            {"fletcher32": dcpl.set_fletcher32, "shuffle": dcpl.set_shuffle, "deflate": lambda: dcpl.set_deflate(4)}[name]()
        h5py.h5d.create(f.id, b"x", h5py.h5t.STD_I32LE, h5py.h5s.create_simple(a.shape), dcpl=dcpl)
        f["x"][...] = a
        reference = f["x"][...]
    assert same_bytes(reference, a)
    assert h5tile.describe(path, "/x")["decoder"] == "h5tile"
    assert same_bytes(h5tile.from_file(path, "/x"), reference)
    assert same_bytes(h5tile.read_box(path, "/x", (3, 5), (20, 17)), reference[3:23, 5:22])


@pytest.mark.parametrize("raw", [True, False])
def test_a_corrupt_chunk_with_fletcher32_is_an_error(tmp_path, raw_io_restored, raw):
    a = smooth("float32", (64, 64), seed=4)
    path = tmp_path / "corrupt.h5"
    write(path, a, 6, True, True, chunks=(16, 16))
    with h5py.File(path, "r") as f:
        info = f["x"].id.get_chunk_info(5)
    flip_bits(path, info.byte_offset + info.size // 2)
    settings.set_raw_io(raw)
    # h5tile's own decoder names the checksum; through HDF5 the wording is HDF5's own (1.10 names
    # fletcher32, 1.14 only "filter returned failure"): an error either way, never the bytes.
    with pytest.raises(RuntimeError, match=r"(?i)fletcher-?32" if raw else r"(?i)fletcher-?32|filter"):
        h5tile.from_file(path, "/x")
    # A region that does not touch the corrupt chunk still reads.
    assert same_bytes(h5tile.read_box(path, "/x", (0, 0), (16, 16)), a[0:16, 0:16])


def test_filters_h5tile_does_not_decode_are_read_by_hdf5(tmp_path):
    a = smooth("int32", (40, 20), seed=5)
    path = tmp_path / "so.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(8, 8), scaleoffset=0, compression="gzip")
        reference = f["x"][...]
    assert same_bytes(h5tile.from_file(path, "/x"), reference)
    info = h5tile.describe(path, "/x")
    assert "scaleoffset" in info["filters"]
    assert info["decoder"] == "hdf5" and info["decoder_reason"] == "h5tile does not decode scaleoffset"


def low_level_dataset(f, name, data, chunks, setup):
    """A chunked dataset whose creation list `setup(dcpl)` fills (filters h5py's high-level API lacks)."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    setup(dcpl)
    space = h5py.h5s.create_simple(data.shape)
    dataset = h5py.h5d.create(f.id, name.encode(), h5py.h5t.py_create(data.dtype), space, dcpl=dcpl)
    dataset.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))


def hdf5_of_h5tile_has_filter(filter_id: int) -> bool:
    """Whether the HDF5 library that h5tile's extension loaded (not h5py's own copy) has a filter
    (H5Zfilter_avail): the current HDF5 the test command builds has no szip, Debian's 1.10 has."""
    import ctypes
    paths = {line.split()[-1] for line in open("/proc/self/maps") if "libhdf5" in line and ".so" in line}
    # Not the copies wheels bring (h5py.libs/, netCDF4.libs/: auditwheel's folders), nor Legate's.
    ours = [p for p in paths if ".libs/" not in p and "h5py" not in p and "legate" not in p and "_hl" not in p]
    if len(ours) != 1:
        return True  # linked statically, or not found: the read must work
    library = ctypes.CDLL(ours[0])
    library.H5open()
    return library.H5Zfilter_avail(ctypes.c_int(filter_id)) > 0


def test_describe_says_who_decodes_and_why_not_h5tile(tmp_path, raw_io_restored):
    a = smooth("int32", (40, 20), seed=6)
    path = tmp_path / "who.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("gzip", data=a, chunks=(8, 8), compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("plain", data=a, chunks=(8, 8))
        f.create_dataset("szip", data=a, chunks=(8, 8), compression="szip")
        f.create_dataset("big_endian", data=a.astype(">i4"), chunks=(8, 8), compression="gzip")
        low_level_dataset(f, "nbit", a, (8, 8), lambda dcpl: dcpl.set_filter(h5py.h5z.FILTER_NBIT))
        # An optional filter nobody registered: HDF5 skips it when writing (the chunk's filter mask).
        low_level_dataset(f, "unknown", a, (8, 8), lambda dcpl: dcpl.set_filter(32100, h5py.h5z.FLAG_OPTIONAL, ()))
        references = {name: f[name][...].astype(f[name].dtype.newbyteorder("=")) for name in f}  # h5tile reads native
    expected = {
        "gzip": ("h5tile", None),
        "plain": (None, None),
        "szip": ("hdf5", "h5tile does not decode szip"),
        "nbit": ("hdf5", "h5tile does not decode nbit"),
        "unknown": ("hdf5", "h5tile does not decode filter 32100 (unknown to h5tile)"),
        "big_endian": ("hdf5", "the stored type differs from the type read (HDF5 converts it)"),
    }
    for name, (decoder, reason) in expected.items():
        info = h5tile.describe(path, "/" + name)
        assert (info["decoder"], info["decoder_reason"]) == (decoder, reason), name
        if name == "szip" and not hdf5_of_h5tile_has_filter(4):  # H5Z_FILTER_SZIP
            with pytest.raises(h5tile.Hdf5Error):  # HDF5 decodes it, and this one cannot
                h5tile.from_file(path, "/" + name)
            continue
        assert same_bytes(h5tile.from_file(path, "/" + name), references[name]), name
    settings.set_raw_io(False)
    info = h5tile.describe(path, "/gzip")
    assert (info["decoder"], info["decoder_reason"]) == ("hdf5", "raw_io is off")
