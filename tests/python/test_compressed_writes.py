"""Compressed writes: to_file with compression (layouts chunked and virtual), write_tile's options,
consolidate into compressed chunks. Each rank compresses its own chunks on its workers (to_file: one
rank, whose workers compress while one thread writes, in chunk order); h5py and
h5dump (independent readers) must read back every byte, h5tile too, with partial edge chunks,
every dtype and 1 to 3 axes. Bad combinations are errors that name what is wrong."""
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, DTYPES, compressible, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def h5py_read(path):
    with h5py.File(path, "r") as f:
        return f["x"][()]


def tile_datasets(path):
    """The datasets in the tile files of the virtual dataset /x in `path`."""
    with h5py.File(path, "r") as f:
        names = [s.file_name for s in f["x"].virtual_sources()]
    return [h5py.File(path.parent / n, "r")["tile"] for n in names]


@pytest.mark.parametrize("layout", ["chunked", "virtual"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(tmp_path, dtype, layout):
    a = compressible(dtype, (37, 11), seed=1)
    path = tmp_path / "c.h5"
    # Chunks of 4 x 5: partial edge chunks on both axes (and, virtual, in every tile).
    h5tile.to_file(a, path, "/x", layout=layout, ranks=3, chunks=(4, 5), compression="gzip", shuffle=True,
                   fletcher32=True).wait()
    assert same_bytes(h5py_read(path), a)
    assert same_bytes(h5tile.from_file(path, "/x"), a)
    if layout == "chunked":
        with h5py.File(path, "r") as f:
            d = f["x"]
            assert (d.chunks, d.compression, d.compression_opts, d.shuffle, d.fletcher32) == ((4, 5), "gzip", 4, True,
                                                                                              True)
        assert h5tile.describe(path, "/x")["decoder"] == "h5tile"
    else:
        for tile in tile_datasets(path):
            assert tile.compression == "gzip" and tile.shuffle and tile.fletcher32 and tile.chunks[1] == 5


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("layout", ["chunked", "virtual"])
@pytest.mark.parametrize("shape,chunks", [((101,), (8,)), ((37, 11), (5, 4)), ((9, 7, 5), (2, 3, 4))],
                         ids=["1d", "2d", "3d"])
def test_one_to_three_axes_and_ranks(tmp_path, shape, chunks, layout, ranks):
    a = compressible("float32", shape, seed=2)
    path = tmp_path / "c.h5"
    h5tile.to_file(a, path, "/x", layout=layout, ranks=ranks, chunks=chunks, compression="gzip", level=6).wait()
    assert same_bytes(h5py_read(path), a)
    assert same_bytes(h5tile.from_file(path, "/x"), a)
    box = tuple(slice(1, s - 1) for s in shape)
    assert same_bytes(h5tile.read_box(path, "/x", [1] * len(shape), [s - 2 for s in shape]), a[box])
    batched = np.empty_like(a)
    for block, offset in h5tile.from_file_batched(path, "/x", [3] * len(shape)):
        batched[tuple(slice(o, o + n) for o, n in zip(offset, block.shape))] = block
    assert same_bytes(batched, a)


@pytest.mark.parametrize("level,shuffle,fletcher32", [(0, False, False), (1, True, False), (None, False, True),
                                                      (9, True, True), (None, True, False)])
def test_pipelines_are_what_h5py_sees(tmp_path, level, shuffle, fletcher32):
    a = compressible("int32", (64, 48), seed=3)
    path = tmp_path / "c.h5"
    h5tile.to_file(a, path, "/x", layout="chunked", ranks=2, chunks=(16, 48), compression="gzip", level=level,
                   shuffle=shuffle, fletcher32=fletcher32).wait()
    with h5py.File(path, "r") as f:
        d = f["x"]
        assert (d.compression, d.compression_opts, d.shuffle, d.fletcher32) == ("gzip", 4 if level is None else level,
                                                                                shuffle, fletcher32)
        assert same_bytes(d[...], a)
        if level != 0:
            assert d.id.get_storage_size() < a.nbytes / 2  # compressed, not stored raw
    names = h5tile.describe(path, "/x")["filters"]
    assert names == ["shuffle"] * shuffle + ["deflate"] + ["fletcher32"] * fletcher32


def test_shuffle_or_fletcher32_alone(tmp_path):
    a = compressible("float64", (30, 20), seed=4)
    for options in ({"shuffle": True}, {"fletcher32": True}):
        path = tmp_path / f"{'-'.join(options)}.h5"
        h5tile.to_file(a, path, "/x", layout="chunked", chunks=(10, 20), **options).wait()
        with h5py.File(path, "r") as f:
            assert f["x"].compression is None and f["x"].shuffle == ("shuffle" in options)
            assert f["x"].fletcher32 == ("fletcher32" in options)
        assert same_bytes(h5py_read(path), a)


def chunk_places(path):
    """(offset in the dataset, byte offset in the file, stored size) of every chunk of /x."""
    with h5py.File(path, "r") as f:
        d = f["x"].id
        return [(i.chunk_offset, i.byte_offset, i.size) for i in map(d.get_chunk_info, range(d.get_num_chunks()))]


def test_one_file_of_many_chunks_is_written_in_chunk_order(tmp_path):
    """to_file compresses on `ranks` workers while one thread writes the chunks through HDF5 in
    chunk order, a few ahead at most (a window of twice the workers): each chunk lies after the
    one before it in the file, and the file's chunks lie where they lie with one worker."""
    a = compressible("float32", (203, 2048), seed=5)  # 203 chunks of one 8 KiB row
    places = {}
    for ranks in (1, 3):
        path = tmp_path / f"c{ranks}.h5"
        h5tile.to_file(a, path, "/x", layout="chunked", ranks=ranks, chunks=(1, 2048), compression="gzip",
                       shuffle=True).wait()
        assert same_bytes(h5py_read(path), a)
        places[ranks] = chunk_places(path)
        assert [p[0] for p in places[ranks]] == [(i, 0) for i in range(203)]
        offsets = [p[1] for p in places[ranks]]
        assert offsets == sorted(offsets) and all(p[2] < 8192 for p in places[ranks])
    assert places[1] == places[3]


def test_a_cancelled_compressed_write_keeps_the_previous_file(tmp_path):
    """Progress is counted as each chunk is written: a callback that says stop after the first
    chunks cancels the write (the workers stop compressing) and the old file stays."""
    a = compressible("float32", (400, 2048), seed=7)
    path = tmp_path / "c.h5"
    h5tile.to_file(a, path, "/x", layout="chunked", chunks=(4, 2048), compression="gzip").wait()
    seen = []
    with pytest.raises(h5tile.CancelledError):
        h5tile.to_file(a + 1, path, "/x", layout="chunked", ranks=2, chunks=(4, 2048), compression="gzip",
                       progress=lambda done, total: seen.append(done) or len(seen) < 5).wait()
    assert len(seen) == 5 and seen == sorted(seen) and seen[-1] == 5 * 4 * 2048 * 4  # chunk by chunk
    assert same_bytes(h5py_read(path), a)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.h5"]


def test_default_chunks_when_compressed(tmp_path):
    a = compressible("float32", (1000, 600), seed=6)  # 2.4 MB
    for layout in ("chunked", "virtual"):
        path = tmp_path / f"{layout}.h5"
        h5tile.to_file(a, path, "/x", layout=layout, ranks=2, compression="gzip").wait()
        assert same_bytes(h5py_read(path), a)
        chunks = [h5py.File(path, "r")["x"].chunks] if layout == "chunked" else [t.chunks for t in tile_datasets(path)]
        for c in chunks:
            assert c is not None and 4 * np.prod(c) <= 1 << 20, c


@pytest.mark.parametrize("layout", ["chunked", "virtual"])
def test_h5dump_reads_compressed_files(tmp_path, layout):
    a = np.arange(45 * 7, dtype=np.int32).reshape(45, 7)
    h5tile.to_file(a, tmp_path / "out.h5", "/x", layout=layout, ranks=2, chunks=(10, 7), compression="gzip",
                   shuffle=True, fletcher32=True).wait()
    out = subprocess.run(["h5dump", "-d", "/x", "-b", "LE", "-o", "x.bin", "out.h5"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "x.bin").read_bytes() == a.tobytes()
    if layout == "chunked":
        header = subprocess.run(["h5dump", "-p", "-H", "-d", "/x", "out.h5"], capture_output=True, text=True,
                                cwd=tmp_path).stdout
        assert "DEFLATE" in header and "SHUFFLE" in header and "CHECKSUM FLETCHER32" in header, header


def test_append_keeps_other_datasets(tmp_path):
    a = compressible("uint16", (50, 50), seed=7)
    path = tmp_path / "c.h5"
    h5tile.to_file(np.arange(5), path, "/other", layout="contiguous").wait()
    h5tile.to_file(a, path, "/x", layout="chunked", mode="a", chunks=(10, 10), compression="gzip").wait()
    with h5py.File(path, "r") as f:
        assert same_bytes(f["x"][...], a) and list(f["other"][...]) == list(range(5))


def test_scalar_and_empty_arrays_are_stored_unfiltered(tmp_path):
    for shape in [(), (0, 4)]:
        a = np.zeros(shape, dtype="f8")
        path = tmp_path / "e.h5"
        h5tile.to_file(a, path, "/x", layout="chunked", compression="gzip").wait()
        assert same_bytes(h5py_read(path), a)


def test_consolidate_into_compressed_chunks(tmp_path):
    a = compressible("float32", (90, 33), seed=8)
    h5tile.to_file(a, tmp_path / "v.h5", "/x", ranks=3).wait()
    h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "c.h5", chunks=(20, 16), compression="gzip", level=7,
                       shuffle=True, fletcher32=True)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        d = f["x"]
        assert (d.chunks, d.compression, d.compression_opts, d.shuffle, d.fletcher32) == ((20, 16), "gzip", 7, True,
                                                                                          True)
        assert same_bytes(d[...], a)
    # And back out of compressed chunks: what h5tile decodes, consolidate copies.
    h5tile.consolidate(tmp_path / "c.h5", "/x", tmp_path / "plain.h5")
    assert same_bytes(h5py_read(tmp_path / "plain.h5"), a)


@pytest.mark.parametrize("kwargs,message", [
    ({"layout": "contiguous", "compression": "gzip"}, "compression (gzip) needs layout 'chunked' or 'virtual'"),
    ({"layout": "contiguous", "shuffle": True}, "compression (shuffle) needs layout 'chunked' or 'virtual'"),
    ({"layout": "chunked", "compression": "gzip", "level": 10}, "gzip level must be 0 to 9"),
    ({"layout": "chunked", "compression": "gzip", "level": -2}, "gzip level must be 0 to 9"),
    ({"layout": "chunked", "compression": "lzma"}, "compression must be"),
    ({"layout": "chunked", "level": 3}, "a compression level (3) needs a compressor"),
    ({"layout": "virtual", "chunks": (4, 4)}, "a chunk shape ([4, 4]) is for layout 'chunked'"),
    ({"layout": "chunked", "compression": 7}, "compression must be a name"),
    ({"layout": "chunked", "compression": "gzip", "level": 2.5}, "level must be a whole number"),
    ({"layout": "chunked", "compression": "gzip", "shuffle": "yes"}, "shuffle must be True or False"),
])
def test_bad_combinations_name_what_is_wrong(tmp_path, kwargs, message):
    with pytest.raises(ValueError) as error:
        h5tile.to_file(np.zeros((8, 8), "f4"), tmp_path / "bad.h5", "/x", **kwargs).wait()
    assert message in str(error.value), str(error.value)
    assert not (tmp_path / "bad.h5").exists()


def test_consolidate_compression_needs_chunks(tmp_path):
    h5tile.to_file(np.zeros((8, 8), "f4"), tmp_path / "v.h5", "/x").wait()
    with pytest.raises(ValueError, match=r"compression \(gzip\) needs a chunk shape"):
        h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "c.h5", compression="gzip")
    with pytest.raises(ValueError, match="gzip level must be 0 to 9"):
        h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "c.h5", chunks=(4, 4), compression="gzip", level=11)
    assert not (tmp_path / "c.h5").exists()


def test_split_into_compressed_tiles(tmp_path):
    a = compressible("int16", (60, 40), seed=9)
    h5tile.to_file(a, tmp_path / "one.h5", "/x", layout="contiguous").wait()
    h5tile.split(tmp_path / "one.h5", "/x", tmp_path / "t.h5", tiles=3, chunks=(8, 40), compression="gzip",
                 shuffle=True)
    assert same_bytes(h5py_read(tmp_path / "t.h5"), a)
    tiles = tile_datasets(tmp_path / "t.h5")
    assert len(tiles) == 3 and all(t.compression == "gzip" and t.shuffle and t.chunks == (8, 40) for t in tiles)
    with pytest.raises(h5tile.FileAlreadyExistsError):
        h5tile.split(tmp_path / "one.h5", "/x", tmp_path / "t.h5")
    h5tile.split(tmp_path / "one.h5", "/x", tmp_path / "t.h5", mode="w", tiles=2)
    assert len(tile_datasets(tmp_path / "t.h5")) == 2
