"""h5py's selections on h5tile.Dataset (issue 40, item 3): every selection h5py takes (lists and
1-D integer arrays, boolean masks of the whole shape or of one axis, h5py's MultiBlockSlice, with
integers, slices and ``...`` on the other axes) reads the same values, dtype and shape from the
same file as h5py; every key h5py refuses, h5tile refuses with the same exception class (or a
subclass), naming the dataset, also where NumPy would take it (negative steps, unsorted or
repeated lists, two lists). A last group checks that a selection reads only the chunks it
needs: the boxes read hold exactly the chunks that hold a picked element, none twice."""
import itertools
import math
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import _dataset  # noqa: E402
from h5tile._selection import _Selection  # noqa: E402

RNG = np.random.default_rng(40)

# name -> (data, create_dataset options): chunked+gzip and contiguous, 1-D to 3-D, an unfiltered
# chunked one, a scalar and zero-size ones.
DATASETS = {
    "z1": (RNG.random(100).astype("float32"), {"chunks": (16,), "compression": "gzip"}),
    "c1": (RNG.integers(-99, 99, 100).astype("int64"), {}),
    "z2": (RNG.integers(0, 1000, (40, 30)).astype("int16"),
           {"chunks": (8, 7), "compression": "gzip", "shuffle": True}),
    "c2": (RNG.random((40, 30)), {}),
    "p2": (RNG.random((40, 30)).astype("float32"), {"chunks": (6, 9)}),
    "z3": (RNG.random((20, 15, 12)).astype("float32"), {"chunks": (4, 5, 6), "compression": "gzip"}),
    "c3": (RNG.integers(0, 255, (20, 15, 12)).astype("uint8"), {}),
    "scalar": (np.float64(2.5), {}),
    "empty": (np.zeros((0, 5), "float32"), {}),
    "empty_z": (np.zeros((0, 6), "int32"), {"chunks": (4, 6), "maxshape": (None, 6), "compression": "gzip"}),
}
BY_NDIM = {n: [name for name, (data, _) in DATASETS.items() if np.ndim(data) == n and np.size(data)]
           for n in (1, 2, 3)}


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    path = tmp_path_factory.mktemp("selections") / "sample.h5"
    with h5py.File(path, "w") as f:
        for name, (data, options) in DATASETS.items():
            f.create_dataset(name, data=data, **options)
    return path


def key_id(key) -> str:
    """A short test id for a key (a mask's repr is long)."""
    text = " ".join(repr(key).split())
    return text if len(text) <= 60 else text[:57] + "..."


def mask(shape, density, seed=0):
    return np.random.default_rng(seed).random(shape) < density


def same(expected, got):
    """The same kind of result (an array, or a NumPy scalar), dtype, shape and values."""
    assert isinstance(expected, (np.ndarray, np.generic)), type(expected)
    assert isinstance(got, np.ndarray) == isinstance(expected, np.ndarray), (type(expected), type(got))
    assert isinstance(got, np.generic) == isinstance(expected, np.generic), (type(expected), type(got))
    assert got.dtype == expected.dtype and got.shape == expected.shape, (expected.shape, got.shape)
    if isinstance(expected, np.ndarray):
        assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, expected)


# -- selections h5py takes

# Lists (sorted, negative entries, empty, as arrays of any integer type, as tuples and ranges),
# boolean arrays, integers (a Python bool is one to h5py), slices, and what h5py alone takes.
KEYS_1D = [
    [3, 7, 20], [-1], [0, -1], [-100, 50, -1], [], np.array([], dtype=np.int64), np.array([2, 5], "u8"),
    np.array([1, 4, 99], "i1"), ((1, 2),), range(3), [99], [True, 2], mask(100, 0.2), mask(100, 0.0),
    mask(100, 1.0), (mask(100, 0.5),), True, False, np.int64(5), np.array(5), slice(2, 90, 7), (slice(None),),
    Ellipsis, (), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 30, 31, 32, 33, 34, 50, 51, 60, 99],
]
KEYS_2D = [
    ([1, 5, 9],), ([1, 5, 9], slice(None)), (slice(None), [0, 7, 29]), (3, [0, 7]), ([2, 30], 4),
    ([0, 39], slice(2, 20, 5)), (slice(None, None, 3), [1, 2, 3]), (Ellipsis, [4, -1]), ([-40, -1], Ellipsis),
    ([5],), ([], 3), (slice(None), []), ([], slice(0, 0)), (mask(40, 0.3),), (mask(40, 0.3), slice(3, 20)),
    (slice(None), mask(30, 0.5)), (2, mask(30, 0.2)), (mask(40, 0.0), 2), ([True, False] * 20,),
    (mask((40, 30), 0.1),), mask((40, 30), 0.5), mask((40, 30), 0.0), mask((40, 30), 1.0),
    mask((40, 30), 0.01, seed=3), (np.int32(7), [3, 4, 5]), ((0, 10, 39), slice(None, None, 4)),
    (h5py.MultiBlockSlice(0, 3, 4, 2), [1, 3]), (slice(None), h5py.MultiBlockSlice(1, 7, 3, 3)),
    (h5py.MultiBlockSlice(2, 10, 3, 4), h5py.MultiBlockSlice(0, 10, 3, 2)), (True, True), (slice(38, 2), [1, 2]),
]
KEYS_3D = [
    ([1, 7], slice(None), 3), (slice(2, 18, 4), [0, 14], slice(None)), (Ellipsis, [0, 5, 11]), (0, 0, [2, 3, 4]),
    (1, slice(None), mask(12, 0.5)), (mask(20, 0.4),), (mask(20, 0.4), 3, slice(None, None, 5)),
    mask((20, 15, 12), 0.05), mask((20, 15, 12), 0.7), (slice(None), mask(15, 0.3), Ellipsis), ([19], 3, Ellipsis),
    (-1, -1, [-1]), (list(range(0, 20, 3)), slice(1, 15, 2), slice(None, 6)),
]


@pytest.mark.parametrize("key", KEYS_1D, ids=key_id)
@pytest.mark.parametrize("name", BY_NDIM[1])
def test_1d_selections_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        same(ref[name][key], f[name][key])


@pytest.mark.parametrize("key", KEYS_2D, ids=key_id)
@pytest.mark.parametrize("name", BY_NDIM[2])
def test_2d_selections_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        same(ref[name][key], f[name][key])


@pytest.mark.parametrize("key", KEYS_3D, ids=key_id)
@pytest.mark.parametrize("name", BY_NDIM[3])
def test_3d_selections_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        same(ref[name][key], f[name][key])


@pytest.mark.parametrize("name", BY_NDIM[1] + BY_NDIM[2] + BY_NDIM[3])
def test_a_list_on_each_axis_as_h5py(sample, name):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        shape = ref[name].shape
        for axis, n in enumerate(shape):
            for picks in ([0], [n - 1], sorted({0, n // 3, n // 2, n - 1}), list(range(1, n, 2))):
                key = tuple(picks if i == axis else slice(None) for i in range(len(shape)))
                same(ref[name][key], f[name][key])
                key = tuple(picks if i == axis else i % 2 for i in range(len(shape)))  # integers elsewhere
                same(ref[name][key], f[name][key])


@pytest.mark.parametrize("name", BY_NDIM[2] + BY_NDIM[3])
@pytest.mark.parametrize("cap, gap", [(0, 0), (200, 0), (4000, 1000)])
def test_selections_read_in_many_boxes_as_h5py(sample, monkeypatch, name, cap, gap):
    """Small boxes (one chunk, or a few rows, each) and no merging of runs: the same values."""
    monkeypatch.setattr(_dataset, "_COVERING_BOX_BYTES", cap)
    monkeypatch.setattr(_dataset, "_GAP_BYTES", dict.fromkeys(_dataset._GAP_BYTES, gap))
    rng = np.random.default_rng(cap + gap)
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        shape = ref[name].shape
        for density in (0.003, 0.05, 0.5, 1.0):
            m = rng.random(shape) < density
            same(ref[name][m], f[name][m])
        for axis, n in enumerate(shape):
            picks = sorted(rng.choice(n, size=max(1, n // 4), replace=False).tolist())
            key = tuple(picks if i == axis else slice(1, None, 2) for i in range(len(shape)))
            same(ref[name][key], f[name][key])


@pytest.mark.parametrize("key", [(), Ellipsis], ids=key_id)
def test_scalar_dataset_as_h5py(sample, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        same(ref["scalar"][key], f["scalar"][key])


@pytest.mark.parametrize("name", ["empty", "empty_z"])
@pytest.mark.parametrize("key", [(), Ellipsis, slice(None), [], (slice(None), [0, 2]), (Ellipsis, [1]),
                                 np.zeros((0, 5), bool), (slice(None), np.array([True, False, True, False, True]))],
                         ids=key_id)
def test_zero_size_datasets_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        if isinstance(key, np.ndarray):
            key = np.zeros(ref[name].shape, bool)
        elif isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], np.ndarray):
            key = (slice(None), np.arange(ref[name].shape[1]) % 2 == 0)
        same(ref[name][key], f[name][key])


def test_read_direct_with_lists_as_h5py(sample):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        for source in (np.s_[[1, 5, 9], 2:12], np.s_[:, [0, 29]]):
            expected, got = np.zeros((40, 30), "float64"), np.zeros((40, 30), "float64")
            shape = ref["z2"][source].shape
            dest = tuple(slice(0, n) for n in shape)
            ref["z2"].read_direct(expected, source, dest)
            f["z2"].read_direct(got, source, dest)
            same(expected, got)


# -- keys h5py refuses

def refused_alike(ref_ds, ds, key):
    """h5py refuses `key` with class C; h5tile raises C or a subclass, naming the dataset."""
    with pytest.raises(Exception) as expected:
        ref_ds[key]
    with pytest.raises(type(expected.value)) as got:
        ds[key]
    assert ds.name in str(got.value), str(got.value)
    return expected.value, got.value


BAD_ANY = [
    (None,), (0, None), (Ellipsis, Ellipsis), slice(None, None, -1), slice(5, 1, -2), slice(None, None, 0), 1.0,
    [1.0, 2.0], np.array([], dtype=float), [3, 1], [1, 1], [-1, 0], [1000], [-1000], np.array([[0, 1]]), [[0, 1]],
    np.True_, 1000, -1000, np.float64(2), slice(0.5, 3), b"x", np.array(True), np.array([2**63 + 5], "u8"),
    ["a", "b"], [0, None], h5py.MultiBlockSlice(0, 50, 100, 1), (slice(None), 1.5), "x", (0, "x"),
]
BAD_ND = [
    ([0, 1], [0, 1]), (mask(40, 0.5), [0, 1]), ([3, 1], 1000), (1000, [3, 1]), ([3, 1], [0, 1]),
    ([0, 1], [3, 1]), ([1000], [0, 1]), (Ellipsis, 0, 0, 0, 0), (0, 0, 0, 0, [3, 1]), ([3, 1], Ellipsis, Ellipsis),
    np.ones((2, 2), bool), np.ones(7, bool), (np.ones(7, bool), 0), (slice(None), np.ones(7, bool)),
    [True, False], ([True] * 40, [True] * 30), (Ellipsis, slice(None, None, -1)), ([0, 2], slice(None, None, -3)),
]


@pytest.mark.parametrize("key", BAD_ANY, ids=key_id)
@pytest.mark.parametrize("name", BY_NDIM[1] + BY_NDIM[2] + BY_NDIM[3])
def test_refusals_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        refused_alike(ref[name], f[name], key)


@pytest.mark.parametrize("key", BAD_ND, ids=key_id)
@pytest.mark.parametrize("name", BY_NDIM[2] + BY_NDIM[3])
def test_refusals_of_several_axes_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], np.ndarray) and len(key[0]) == 40:
            key = (np.ones(ref[name].shape[0], bool), key[1])
        refused_alike(ref[name], f[name], key)


@pytest.mark.parametrize("name", BY_NDIM[2] + BY_NDIM[3])
def test_a_whole_mask_is_the_whole_key_as_h5py(sample, name):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        m = mask(ref[name].shape, 0.5)
        for key in ((m, Ellipsis), (Ellipsis, m), (m, 0), m.astype(int), m.tolist()):
            refused_alike(ref[name], f[name], key)


@pytest.mark.parametrize("name", BY_NDIM[1])
def test_a_boolean_array_on_a_1d_dataset_is_the_whole_key_as_h5py(sample, name):
    """h5py takes a 1-D boolean array alone (as a mask), not beside ``...`` and not as a list."""
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        m = mask(100, 0.5)
        for key in ((m, Ellipsis), (Ellipsis, m), m.tolist(), m[:50], np.ones((100, 1), bool)):
            refused_alike(ref[name], f[name], key)


@pytest.mark.parametrize("key", [0, -1, [0], slice(None), (Ellipsis, Ellipsis), np.array(True), (0, 0), None,
                                 [], mask((), 1.0)], ids=key_id)
def test_scalar_dataset_refusals_as_h5py(sample, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        refused_alike(ref["scalar"], f["scalar"], key)


@pytest.mark.parametrize("name", ["empty", "empty_z"])
@pytest.mark.parametrize("key", [0, -1, [0], (slice(None), [7]), (Ellipsis, Ellipsis), slice(None, None, -1)],
                         ids=key_id)
def test_zero_size_refusals_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        refused_alike(ref[name], f[name], key)


def test_an_entry_equal_to_the_length_is_both_errors(sample):
    """h5py's bound check lets an entry equal to the length through and HDF5 fails the read
    (OSError); NumPy says IndexError: h5tile's error is both. Where nothing is selected (an
    empty axis beside it), h5py reads nothing and fails nothing: neither does h5tile."""
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        expected, got = refused_alike(ref["z2"], f["z2"], [39, 40])
        assert isinstance(expected, OSError) and isinstance(got, OSError) and isinstance(got, IndexError)
        same(ref["z2"][[40], 0:0], f["z2"][[40], 0:0])


def test_a_long_list_beside_an_empty_slice_is_empty(sample):
    """h5py 3.16 fails a list of 16 entries or more beside an empty slice (ValueError, from its
    merge of the list's hyperslabs: docs/H5PY.md lists it); h5tile gives the empty result, as
    h5py gives it for a shorter list."""
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        same(ref["z2"][list(range(15)), 0:0], f["z2"][list(range(15)), 0:0])
        same(np.zeros((20, 0), "int16"), f["z2"][list(range(20)), 0:0])


def test_negative_steps_are_refused_as_h5py(sample):
    """h5tile followed NumPy (a reversed box); h5py refuses a step below 1, so h5tile does,
    saying how to get the reversed array."""
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        for key in (np.s_[::-1], np.s_[30:2:-3, ::-2], np.s_[-1:-5:-1, 2]):
            _, got = refused_alike(ref["z2"], f["z2"], key)
            assert isinstance(got, ValueError) and "[::-1]" in str(got)


# -- reading only what a selection needs

def chunks_of(offset, extent, chunk):
    """The chunk indices a box touches."""
    ranges = [range(o // c, (o + n - 1) // c + 1) for o, n, c in zip(offset, extent, chunk)]
    return set(itertools.product(*ranges))


def check_boxes(boxes, chunk, needed):
    """The boxes touch exactly the chunks in `needed`, none twice, and hold every pick."""
    seen = []
    for offset, extent in boxes:
        seen += chunks_of(offset, extent, chunk)
    assert len(seen) == len(set(seen)), "a chunk in two boxes"
    assert set(seen) == needed


@pytest.mark.parametrize("cap", [64 << 20, 0, 3 * 64 * 4])
def test_the_planned_boxes_hold_exactly_the_chunks_a_list_needs(cap):
    shape, chunk = (512, 384), (64, 48)
    for key in (np.s_[[3, 70, 71, 200, 201, 450], :], np.s_[:, [0, 47, 48, 300]], np.s_[[5, 500], 10:100],
                np.s_[::100, [7, 383]], np.s_[3, [1, 200]], np.s_[::130, ::50]):
        sel = _Selection(key, shape)
        boxes = list(sel.boxes(chunk, 4, 4096, cap))
        rows, cols = (np.arange(n)[k] for n, k in zip(shape, key))
        needed = {(int(r) // chunk[0], int(c) // chunk[1]) for r in np.atleast_1d(rows) for c in np.atleast_1d(cols)}
        check_boxes(boxes, chunk, needed)
        assert sum(math.prod(e) for _, e in boxes) < math.prod(sel.extent)  # less than the covering box
        if cap < math.prod(chunk) * 4:  # the slab axis (the first of several chunks) cut chunk by chunk
            axis = next(a for a in range(2) if len({c[a] for c in needed}) > 1)
            assert all(len({c[axis] for c in chunks_of(o, e, chunk)}) == 1 for o, e in boxes)


@pytest.mark.parametrize("cap", [64 << 20, 0])
def test_the_planned_boxes_hold_exactly_the_chunks_a_mask_needs(cap):
    shape, chunk = (300, 200, 10), (32, 25, 10)
    rng = np.random.default_rng(7)
    for density in (1e-4, 1e-3, 0.02):
        m = rng.random(shape) < density
        sel = _Selection(m, shape)
        boxes = list(sel.boxes(chunk, 8, 4096, cap))
        needed = {tuple(int(i) // c for i, c in zip(point, chunk)) for point in np.argwhere(m)}
        check_boxes(boxes, chunk, needed)


def test_a_list_over_a_large_chunked_dataset_reads_only_its_chunks(tmp_path, monkeypatch):
    """ds[rows, :] and ds[:, cols] over a gzip dataset read the chunk rows (columns) that hold
    a pick, as few boxes of whole chunk rows each (read in parallel), not the covering box; a
    mask reads the chunks that hold a True."""
    data = (np.arange(1024 * 768) % 1013).astype("float32").reshape(1024, 768)
    chunk = (128, 96)
    with h5py.File(tmp_path / "big.h5", "w") as f:
        f.create_dataset("d", data=data, chunks=chunk, compression="gzip")
    reads = []
    original = _dataset.Dataset._read_box
    monkeypatch.setattr(_dataset.Dataset, "_read_box", lambda self, o, e, out=None, reader=None:
                        reads.append((tuple(o), tuple(e))) or original(self, o, e, out, reader))
    rows, cols = [5, 9, 130, 700, 701, 1000], [0, 95, 500]
    m = np.zeros(data.shape, bool)
    m[[3, 600, 601], [700, 10, 200]] = True
    with h5tile.File(tmp_path / "big.h5") as f:
        for key, needed in (((rows, slice(None)), {(r // 128, c) for r in rows for c in range(8)}),
                            ((slice(None), cols), {(r, c // 96) for r in range(8) for c in cols}),
                            (m, {(0, 7), (4, 0), (4, 2)})):
            reads.clear()
            np.testing.assert_array_equal(f["d"][key], data[key])
            check_boxes(reads, chunk, needed)
            covering = _Selection(key, data.shape)
            assert sum(math.prod(e) for _, e in reads) < math.prod(covering.extent) / 2
        reads.clear()
        f["d"][rows, :]
        assert len(reads) == 3 and all(e[1] == 768 for _, e in reads)  # runs of chunk rows, all columns
