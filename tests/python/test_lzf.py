"""h5py's own LZF filter (32000, `compression="lzf"`): files h5py writes, decoded by h5tile's
workers (liblzf) byte for byte as h5py reads them: several dtypes and shapes, partial edge chunks,
shuffle and fletcher32 around it, and incompressible chunks, which h5py's filter refuses so that
HDF5 stores them unfiltered with the filter's bit set in the chunk's filter mask."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, compressible, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def lzf_file(path, a, chunks, **kwargs):
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=chunks, compression="lzf", **kwargs)
        return f["x"][...]


def decoded_by_h5tile(path):
    info = h5tile.describe(path, "/x")
    if "built without" in (info["decoder_reason"] or ""):
        pytest.skip(f"h5tile was built without liblzf: {info['decoder_reason']}")
    assert info["decoder"] == "h5tile", info
    return info


def every_read(path, shape):
    whole = h5tile.from_file(path, "/x")
    offset = tuple(min(1, s) for s in shape)
    extent = tuple(max(0, s - 2 * o) for s, o in zip(shape, offset))
    box = h5tile.read_box(path, "/x", offset, extent)
    block = tuple(max(1, s // 3) for s in shape)
    batched = np.empty_like(whole)
    for part, at in h5tile.from_file_batched(path, "/x", block):
        batched[tuple(slice(o, o + n) for o, n in zip(at, part.shape))] = part
    return whole, box, batched, tuple(slice(o, o + e) for o, e in zip(offset, extent))


@pytest.mark.parametrize("shuffle,fletcher32", [(False, False), (True, False), (True, True)],
                         ids=["lzf", "shuffle-lzf", "shuffle-lzf-fletcher32"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float32", "float64", "complex128", "V7"])
@pytest.mark.parametrize("shape,chunks", [((1000,), (64,)), ((45, 13), (8, 5)), ((7, 9, 11), (3, 4, 5))],
                         ids=["1d", "2d", "3d"])
def test_h5tile_decodes_what_h5py_wrote(tmp_path, dtype, shape, chunks, shuffle, fletcher32):
    a = compressible(dtype, shape, seed=3)
    path = tmp_path / "lzf.h5"
    reference = lzf_file(path, a, chunks, shuffle=shuffle, fletcher32=fletcher32)
    info = decoded_by_h5tile(path)
    expected = (["shuffle"] if shuffle else []) + ["lzf"] + (["fletcher32"] if fletcher32 else [])
    assert info["filters"] == expected
    whole, box, batched, region = every_read(path, shape)
    assert same_bytes(whole, reference)
    assert same_bytes(box, reference[region])
    assert same_bytes(batched, reference)


def test_incompressible_chunks_stored_unfiltered(tmp_path):
    # Random bytes do not shrink: h5py's filter fails, and HDF5 (the filter is optional) stores
    # such chunks as they are, with bit 0 of their filter mask set; a ramp beside them compresses.
    a = random_array("uint8", (64, 256), seed=5)
    a[32:] = np.arange(32 * 256).reshape(32, 256) % 7
    path = tmp_path / "mixed.h5"
    reference = lzf_file(path, a, (16, 256))
    with h5py.File(path) as f:
        masks = [f["x"].id.get_chunk_info(i).filter_mask for i in range(f["x"].id.get_num_chunks())]
    assert masks[:2] == [1, 1] and masks[2:] == [0, 0], masks
    decoded_by_h5tile(path)
    whole, box, batched, region = every_read(path, a.shape)
    assert same_bytes(whole, reference) and same_bytes(whole, a)
    assert same_bytes(box, reference[region])
    assert same_bytes(batched, reference)


def test_damaged_lzf_chunk_is_an_error(tmp_path):
    a = compressible("int32", (4096,), seed=1)
    path = tmp_path / "damaged.h5"
    lzf_file(path, a, (1024,))
    with h5py.File(path) as f:
        chunk = f["x"].id.get_chunk_info(1)
    with open(path, "r+b") as f:  # a back reference that points before the start of the output
        f.seek(chunk.byte_offset)
        f.write(bytes([0xE0, 0xFF, 0xFF]))
    decoded_by_h5tile(path)
    with pytest.raises(h5tile.Error, match=r"lzf"):
        h5tile.from_file(path, "/x")


def test_filters_named_in_describe(tmp_path):
    path = tmp_path / "named.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(100, dtype="int16"), chunks=(10,), compression="lzf", shuffle=True)
        f.create_dataset("s", data=np.arange(100, dtype="int16"), chunks=(10,), scaleoffset=0)
    assert h5tile.describe(path, "/x")["filters"] == ["shuffle", "lzf"]
    info = h5tile.describe(path, "/s")
    assert info["filters"] == ["scaleoffset"] and info["decoder"] == "hdf5"
    assert "scaleoffset" in info["decoder_reason"], info
    assert same_bytes(h5tile.from_file(path, "/s"), np.arange(100, dtype="int16"))


def test_filter_neither_h5tile_nor_hdf5_decodes_is_named(tmp_path):
    # A chunk stored as filtered with bzip2 (307), for which the HDF5 that h5tile uses has no
    # plugin: HDF5's own error names only its plugin folder; h5tile's names the filter.
    path = tmp_path / "bzip2.h5"
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4,))
        dcpl.set_filter(307, h5py.h5z.FLAG_OPTIONAL, ())
        ds = h5py.h5d.create(f.id, b"x", h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((4,)), dcpl=dcpl)
        ds.write_direct_chunk((0,), b"BZh9 not really", filter_mask=0)
    info = h5tile.describe(path, "/x")
    assert info["filters"] == ["bzip2"] and info["decoder_reason"] == "h5tile does not decode bzip2", info
    with pytest.raises(h5tile.Hdf5Error, match=r"'/x' in '.*bzip2\.h5': h5tile does not decode bzip2, and HDF5 could "
                                               r"not decode it either: "):
        h5tile.from_file(path, "/x")


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("dtype", ["int16", "float64", "uint8"])
def test_h5tile_writes_lzf_as_h5py_does(tmp_path, dtype, shuffle):
    # The same array through h5py, to_file and h5tile.File's create_dataset: h5py reads each, the
    # filter's client data is h5py's own (version, LZF version, chunk bytes), an incompressible
    # chunk is stored too.
    if "lzf" not in h5tile.compressors():
        pytest.skip("h5tile was built without liblzf")
    a = compressible(dtype, (301, 47), 3)
    a[:40] = random_array(dtype, (40, 47), 4)  # incompressible chunks
    chunks = (40, 47)
    reference = lzf_file(tmp_path / "h5py.h5", a, chunks, shuffle=shuffle)
    h5tile.to_file(a, tmp_path / "to_file.h5", "/x", layout="chunked", chunks=chunks, compression="lzf",
                   shuffle=shuffle).wait()
    with h5tile.File(tmp_path / "file.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=chunks, compression="lzf", shuffle=shuffle)
    with h5py.File(tmp_path / "h5py.h5", "r") as ref:
        expected = ref["x"].id.get_create_plist()
        expected = [expected.get_filter(i)[:3] for i in range(expected.get_nfilters())]
    for name in ("to_file", "file"):
        with h5py.File(tmp_path / f"{name}.h5", "r") as f:
            assert same_bytes(f["x"][...], reference), name
            plist = f["x"].id.get_create_plist()
            assert [plist.get_filter(i)[:3] for i in range(plist.get_nfilters())] == expected, name
