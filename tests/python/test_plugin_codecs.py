"""hdf5plugin's zstd (32015), lz4 (32004) and Blosc (32001) filters: files h5py writes with
hdf5plugin, decoded by h5tile's own workers byte for byte as h5py reads them; files h5tile writes
with them, read by h5py with hdf5plugin (and h5dump with hdf5plugin's plugins), with the client
data hdf5plugin itself stores."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, compressible, same_bytes

hdf5plugin = pytest.importorskip("hdf5plugin")

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


_MISSING = sorted({"zstd", "lz4", "blosc"} - set(h5tile.compressors()))
if _MISSING:
    pytest.skip(f"h5tile was built without {', '.join(_MISSING)}", allow_module_level=True)

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64", "complex128", "V7"]
# How h5py + hdf5plugin write: (id, the keyword arguments of create_dataset).
PLUGIN_FILTERS = {
    "zstd": hdf5plugin.Zstd(),
    "zstd-1": hdf5plugin.Zstd(clevel=1),
    "zstd-negative": hdf5plugin.Zstd(clevel=-5),
    "zstd-19": hdf5plugin.Zstd(clevel=19),
    "lz4": hdf5plugin.LZ4(),
    "lz4-blocks-of-64": hdf5plugin.LZ4(nbytes=64),
    "blosc": hdf5plugin.Blosc(),
    "blosc-zstd-bitshuffle": hdf5plugin.Blosc(cname="zstd", clevel=7, shuffle=hdf5plugin.Blosc.BITSHUFFLE),
    "blosc-blosclz-noshuffle": hdf5plugin.Blosc(cname="blosclz", clevel=3, shuffle=hdf5plugin.Blosc.NOSHUFFLE),
    "blosc-zlib": hdf5plugin.Blosc(cname="zlib", clevel=9),
    "blosc-lz4hc": hdf5plugin.Blosc(cname="lz4hc", clevel=1),
    "blosc-level-0": hdf5plugin.Blosc(clevel=0),
    "bitshuffle-lz4": hdf5plugin.Bitshuffle(cname="lz4"),
    "bitshuffle-none": hdf5plugin.Bitshuffle(cname="none"),
    "bitshuffle-zstd": hdf5plugin.Bitshuffle(cname="zstd", clevel=5),
    "bitshuffle-blocks-of-16": hdf5plugin.Bitshuffle(nelems=16, cname="lz4"),
}


def every_read(path, name, shape):
    whole = h5tile.from_file(path, name)
    box = h5tile.read_box(path, name, (3, 2), (shape[0] - 5, shape[1] - 3))
    batched = np.empty_like(whole)
    for block, offset in h5tile.from_file_batched(path, name, (7, 6)):
        batched[tuple(slice(o, o + s) for o, s in zip(offset, block.shape))] = block
    return whole, box, batched


@pytest.mark.parametrize("shuffle,fletcher32", [(False, False), (True, True)], ids=["plain", "shuffle-fletcher32"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", PLUGIN_FILTERS)
def test_h5tile_decodes_what_hdf5plugin_wrote(tmp_path, name, dtype, shuffle, fletcher32):
    a = compressible(dtype, (45, 13), seed=1)
    path = tmp_path / "p.h5"
    with h5py.File(path, "w") as f:
        # Partial edge chunks on both axes; HDF5's shuffle and fletcher32 around the plugin filter.
        f.create_dataset("x", data=a, chunks=(8, 5), shuffle=shuffle, fletcher32=fletcher32, **PLUGIN_FILTERS[name])
        reference = f["x"][...]
    info = h5tile.describe(path, "/x")
    assert info["decoder"] == "h5tile", info
    whole, box, batched = every_read(path, "/x", a.shape)
    assert same_bytes(whole, reference)
    assert same_bytes(box, reference[3:43, 2:12])
    assert same_bytes(batched, reference)


@pytest.mark.parametrize("chunks", [(3, 7), (64, 33), (1, 1)], ids=["21-elements", "2112-elements", "one"])
@pytest.mark.parametrize("nelems", [0, 16, 256])
@pytest.mark.parametrize("cname", ["lz4", "none", "zstd"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int32", "float64", "complex128"])
def test_bitshuffle_blocks_partial_blocks_and_trailing_elements(tmp_path, chunks, nelems, cname, dtype):
    # Issue 39 item 14: what detectors write (bitshuffle + LZ4), decoded by h5tile's own workers,
    # equal to h5py + hdf5plugin: chunks of whole blocks, a last block cut to 8 elements, and
    # the trailing elements (21 = 16 + 5) stored as they are.
    a = compressible(dtype, (130, 70), seed=3)
    path = tmp_path / "b.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=chunks, **hdf5plugin.Bitshuffle(nelems=nelems, cname=cname))
        reference = f["x"][...]
    assert same_bytes(reference, a)
    assert h5tile.describe(path, "/x")["decoder"] == "h5tile"
    assert same_bytes(h5tile.from_file(path, "/x"), reference)
    assert same_bytes(h5tile.read_box(path, "/x", (5, 3), (100, 60)), reference[5:105, 3:63])


def test_a_damaged_bitshuffle_chunk_is_an_error_naming_the_filter(tmp_path):
    a = compressible("uint16", (64, 64), seed=4)
    path = tmp_path / "b.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(32, 64), **hdf5plugin.Bitshuffle(cname="lz4"))
        info = f["x"].id.get_chunk_info(1)
    with open(path, "r+b") as f:
        f.seek(info.byte_offset + 16)
        f.write(b"\xff" * 8)
    with pytest.raises(h5tile.Error, match="bitshuffle"):
        h5tile.from_file(path, "/x")


def plugin_filter(path):
    """(id, cd_values) of the last filter of /x in `path` (the compressor, or fletcher32's before it)."""
    with h5py.File(path, "r") as f:
        dcpl = f["x"].id.get_create_plist()
        return [dcpl.get_filter(i)[:3:2] for i in range(dcpl.get_nfilters())]


@pytest.mark.parametrize("layout", ["chunked", "virtual"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("compression,level,shuffle", [("zstd", None, False), ("zstd", -3, True), ("zstd", 12, False),
                                                       ("lz4", None, True), ("blosc", None, True), ("blosc", 9, False)])
def test_hdf5plugin_reads_what_h5tile_wrote(tmp_path, compression, level, shuffle, dtype, layout):
    a = compressible(dtype, (37, 11), seed=2)
    path = tmp_path / "c.h5"
    h5tile.to_file(a, path, "/x", layout=layout, ranks=3, chunks=(4, 5), compression=compression, level=level,
                   shuffle=shuffle, fletcher32=True).wait()
    with h5py.File(path, "r") as f:
        assert same_bytes(f["x"][...], a)
    assert same_bytes(h5tile.from_file(path, "/x"), a)


# Chunks of whole rows (spanning the trailing axes) are decoded straight into the memory read
# into, and encoded straight from the array written, where they lie whole in the region or tile;
# edge chunks, chunks cut by the region and strided memory go through a chunk buffer. Both ways
# must give h5py's bytes.
ROWS_OF = {"gzip": {"compression": "gzip", "compression_opts": 4}, "zstd": hdf5plugin.Zstd(clevel=3),
           "lz4": hdf5plugin.LZ4(), "blosc": hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)}


@pytest.mark.parametrize("shape,chunks", [((203, 40), (16, 40)), ((37, 6, 5), (4, 6, 5)), ((50, 6, 5), (1, 3, 5))],
                         ids=["rows", "slabs", "half-rows"])
@pytest.mark.parametrize("shuffle,fletcher32", [(False, False), (True, False), (True, True)],
                         ids=["plain", "shuffle", "shuffle-fletcher32"])
@pytest.mark.parametrize("dtype", ["uint16", "float32", "complex128"])
@pytest.mark.parametrize("name", ROWS_OF)
def test_chunks_of_whole_rows_read_and_write_in_place(tmp_path, name, dtype, shuffle, fletcher32, shape, chunks):
    a = compressible(dtype, shape, seed=8)
    path = tmp_path / "rows.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=chunks, shuffle=shuffle, fletcher32=fletcher32, **ROWS_OF[name])
    assert same_bytes(h5tile.from_file(path, "/x", threads=3), a)
    # Whole chunks inside the box, cut ones at its ends, and a box cut along the last axis.
    lo, hi = 5, shape[0] - 3
    assert same_bytes(h5tile.read_box(path, "/x", (lo,) + (0,) * (a.ndim - 1), (hi - lo,) + a.shape[1:]), a[lo:hi])
    assert same_bytes(h5tile.read_box(path, "/x", (0,) * a.ndim, a.shape[:-1] + (a.shape[-1] - 1,)), a[..., :-1])
    for block, offset in h5tile.from_file_batched(path, "/x", (2 * chunks[0],) + a.shape[1:]):
        assert same_bytes(block, a[offset[0]:offset[0] + block.shape[0]])
    # Writes: tiles of whole chunks (each rank's rows) and a strided array (chunks packed first).
    for layout in ("chunked", "virtual"):
        for source in (a, np.asfortranarray(a)):
            out = tmp_path / f"h5tile-{layout}.h5"
            h5tile.to_file(source, out, "/x", layout=layout, ranks=3, chunks=chunks, compression=name,
                           shuffle=shuffle, fletcher32=fletcher32,
                           **({"level": 4} if name == "gzip" else {})).wait()
            with h5py.File(out, "r") as f:
                assert same_bytes(f["x"][...], a), (layout, source.flags.c_contiguous)


@pytest.mark.parametrize("compression,level,shuffle,plugin", [
    ("zstd", None, False, hdf5plugin.Zstd()),
    ("zstd", -7, False, hdf5plugin.Zstd(clevel=-7)),
    ("zstd", 19, True, hdf5plugin.Zstd(clevel=19)),
    ("lz4", None, False, hdf5plugin.LZ4()),
    ("blosc", None, True, hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)),
    ("blosc", 2, False, hdf5plugin.Blosc(cname="lz4", clevel=2, shuffle=hdf5plugin.Blosc.NOSHUFFLE)),
], ids=["zstd", "zstd-negative", "zstd-shuffle", "lz4", "blosc", "blosc-noshuffle"])
def test_client_data_are_what_hdf5plugin_stores(tmp_path, compression, level, shuffle, plugin):
    """The filters h5tile writes are the ones h5py + hdf5plugin write for the same options:
    same IDs, same cd_values (Blosc's as its set_local completes them)."""
    a = compressible("float32", (40, 30), seed=3)
    h5tile.to_file(a, tmp_path / "h5tile.h5", "/x", layout="chunked", chunks=(10, 30), compression=compression,
                   level=level, shuffle=shuffle).wait()
    hdf5_shuffle = shuffle and compression != "blosc"  # Blosc shuffles itself
    with h5py.File(tmp_path / "h5py.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(10, 30), shuffle=hdf5_shuffle, **plugin)
    assert plugin_filter(tmp_path / "h5tile.h5") == plugin_filter(tmp_path / "h5py.h5")


@pytest.mark.parametrize("block,blocks_per_chunk", [(64 << 10, 4), (4 << 10, 64), (0, 1)])
def test_lz4_chunks_are_cut_into_blocks_of_the_setting(tmp_path, block, blocks_per_chunk):
    """Each lz4 chunk h5tile writes holds blocks of lz4_block_size() (the size the LZ4 filter's
    header states, 0: one block per chunk as hdf5plugin's LZ4() writes), the filter's client data
    say so as hdf5plugin's LZ4(nbytes=) does, and h5py + hdf5plugin read the chunks back."""
    a = compressible("float32", (256, 1024), seed=5)  # 4 chunks of 128 x 512 float32: 256 KiB
    previous = h5tile.settings.lz4_block_size()
    h5tile.settings.set_lz4_block_size(block)
    try:
        h5tile.to_file(a, tmp_path / "b.h5", "/x", layout="chunked", chunks=(128, 512), compression="lz4",
                       shuffle=True).wait()
    finally:
        h5tile.settings.set_lz4_block_size(previous)
    with h5py.File(tmp_path / "h5py.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(128, 512), shuffle=True, **hdf5plugin.LZ4(nbytes=block))
    assert plugin_filter(tmp_path / "b.h5") == plugin_filter(tmp_path / "h5py.h5")
    with h5py.File(tmp_path / "b.h5", "r") as f:
        assert same_bytes(f["x"][...], a)
        ds = f["x"].id
        assert ds.get_num_chunks() == 4
        for i in range(ds.get_num_chunks()):
            _, stored = ds.read_direct_chunk(ds.get_chunk_info(i).chunk_offset)
            size, stated = int.from_bytes(stored[:8], "big"), int.from_bytes(stored[8:12], "big")
            assert size == 128 * 512 * 4
            assert -(-size // stated) == blocks_per_chunk, (stated, blocks_per_chunk)
    assert same_bytes(h5tile.from_file(tmp_path / "b.h5", "/x"), a)


@pytest.mark.parametrize("bad", [100, (1 << 30) + 1, -1, "2K"])
def test_lz4_block_size_is_checked(bad):
    with pytest.raises(h5tile.InvalidArgumentError, match="lz4_block_size"):
        h5tile.settings.set_lz4_block_size(bad)


@pytest.mark.parametrize("compression", ["zstd", "lz4", "blosc"])
@pytest.mark.parametrize("layout", ["chunked", "virtual"])
def test_h5dump_reads_them_with_hdf5plugins_plugins(tmp_path, compression, layout):
    a = np.arange(45 * 7, dtype=np.int32).reshape(45, 7)
    h5tile.to_file(a, tmp_path / "out.h5", "/x", layout=layout, ranks=2, chunks=(10, 7), compression=compression,
                   shuffle=True).wait()
    env = dict(os.environ, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH)
    out = subprocess.run(["h5dump", "-d", "/x", "-b", "LE", "-o", "x.bin", "out.h5"], capture_output=True, text=True,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "x.bin").read_bytes() == a.tobytes()


@pytest.mark.parametrize("name,match", [("zstd", "zstd"), ("lz4", "lz4"), ("blosc", "blosc")])
def test_a_corrupt_chunk_is_an_error_naming_the_codec(tmp_path, name, match):
    a = compressible("float64", (64, 64), seed=4)
    path = tmp_path / "corrupt.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 16), **PLUGIN_FILTERS[name])
        info = f["x"].id.get_chunk_info(5)
    with open(path, "r+b") as f:  # garble the second half of one chunk
        f.seek(info.byte_offset + info.size // 2)
        f.write(bytes(info.size - info.size // 2))
    with pytest.raises(RuntimeError, match=match):
        h5tile.from_file(path, "/x")
    assert same_bytes(h5tile.read_box(path, "/x", (0, 0), (16, 16)), a[0:16, 0:16])


@pytest.mark.parametrize("kwargs,message", [
    ({"compression": "zstd", "level": 23}, "zstd level must be -131072 to 22"),
    ({"compression": "lz4", "level": 1}, "lz4 has no level"),
    ({"compression": "blosc", "level": 10}, "blosc level must be 0 to 9"),
    ({"compression": "zstd", "layout": "contiguous"}, "compression (zstd) needs layout 'chunked' or 'virtual'"),
])
def test_bad_levels_name_the_compressor(tmp_path, kwargs, message):
    kwargs.setdefault("layout", "chunked")
    with pytest.raises(ValueError) as error:
        h5tile.to_file(np.zeros((8, 8), "f4"), tmp_path / "bad.h5", "/x", **kwargs).wait()
    assert message in str(error.value), str(error.value)


def test_compressors_lists_what_this_build_writes():
    assert h5tile.compressors()[0] == "gzip" and set(h5tile.compressors()) <= {"gzip", "zstd", "lz4", "blosc", "lzf"}


@pytest.mark.parametrize("compression", ["zstd", "lz4", "blosc"])
def test_consolidate_and_the_cli_write_them(tmp_path, compression):
    a = compressible("float32", (90, 33), seed=5)
    h5tile.to_file(a, tmp_path / "v.h5", "/x", ranks=3).wait()
    h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "c.h5", chunks=(20, 16), compression=compression,
                       shuffle=True)
    assert plugin_filter(tmp_path / "c.h5")[-1][0] == {"zstd": 32015, "lz4": 32004, "blosc": 32001}[compression]
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert same_bytes(f["x"][...], a)
    cli = BUILD / "cli" / "h5tile"
    out = subprocess.run([str(cli), "split", "c.h5:/x", "s.h5", "--tiles", "2", "--compression", compression],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert same_bytes(f["x"][...], a)


@pytest.mark.parametrize("codec", ["blosc", "zstd", "lz4"])
def test_a_plugin_path_of_another_hdf5_does_not_break_writes(tmp_path, codec):
    """netCDF4-python sets HDF5_PLUGIN_PATH to its own filter plugins (built against its own HDF5)
    when imported. The HDF5 inside h5tile's module must not load them: their callbacks failed every
    write naming such a filter ("error during user callback"), whether the module holds its own
    HDF5 or links a shared one. In a fresh process, the variable set before h5tile's HDF5 starts;
    the file then read by h5py + hdf5plugin."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    try:
        import netCDF4
        found = os.path.join(os.path.dirname(netCDF4.__file__), "plugins")
        if os.path.isdir(found):
            plugins = found
    except ImportError:
        pass
    if not any(n.endswith(".so") for n in os.listdir(plugins)):
        pytest.skip("netCDF4-python with its filter plugins is not installed")
    a = compressible("float32", (64, 40), seed=3)
    np.save(tmp_path / "a.npy", a)
    code = (f"import sys; sys.path.insert(0, {str(BUILD / 'python')!r}); import numpy as np, h5tile; "
            f"a = np.load({str(tmp_path / 'a.npy')!r}); "
            f"h5tile.to_file(a, {str(tmp_path / 'c.h5')!r}, '/x', chunks=(16, 8), compression={codec!r}).wait()")
    env = dict(os.environ, HDF5_PLUGIN_PATH=str(plugins))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert same_bytes(f["x"][...], a)


def test_a_bitshuffle_header_claiming_huge_blocks_costs_no_more_than_the_chunk(tmp_path):
    # A review's case: 8-element chunks whose header says blocks of 4 GiB. The block buffer is sized
    # by the chunk, so the read is as quick and small as any: it raises or equals h5py.
    path = tmp_path / "b.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(48, dtype="u1"), chunks=(8,), **hdf5plugin.Bitshuffle(cname="lz4"))
        offsets = [f["x"].id.get_chunk_info(i).byte_offset for i in range(6)]
    with open(path, "r+b") as f:
        for offset in offsets:
            f.seek(offset + 8)
            f.write(bytes.fromhex("ffffffe0"))
    code = f"""
import resource, h5tile
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    print("read", h5tile.from_file({str(path)!r}, "/x").tolist())
except h5tile.Error as e:
    print("raised", type(e).__name__)
print("grown_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert "raised" in lines or lines.get("read") == str(list(range(48))), out.stdout + out.stderr
    # The peak resident size grows by less than 256 MiB (it grew by 4 GiB: one zeroed block per chunk).
    assert int(lines["grown_kib"]) < 256 << 10, out.stdout


def test_a_plugin_filter_from_python_says_how_to_read_it(tmp_path):
    # Issue 39 item 14: with HDF5_PLUGIN_PATH at hdf5plugin's filters, the command reads a bzip2
    # dataset (its HDF5 loads the plugin); the Python module, whose HDF5 loads none, says so and
    # how to read it, rather than only HDF5's "filter plugins disabled".
    a = np.arange(1000, dtype="f8")
    path = tmp_path / "bz.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(100,), **hdf5plugin.BZip2())
    env = dict(os.environ, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH, PYTHONPATH=str(BUILD / "python"))
    out = subprocess.run([str(BUILD / "cli" / "h5tile"), "verify", "--read", f"{path}:/x"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    code = f"""
import h5tile
try:
    h5tile.from_file({str(path)!r}, "/x")
    print("read")
except h5tile.Error as e:
    print(type(e).__name__, e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    said = out.stdout
    assert "bzip2" in said and "hdf5plugin" in said and "h5tile command" in said, said + out.stderr
