"""h5py's ``Dataset`` over h5tile's parallel reads: :class:`Dataset`, a dataset of a
:class:`h5tile.File` (_objects.py), read by the smallest box that covers a selection (or in slabs
where that box would be mostly unread) and written whole."""
from __future__ import annotations

import errno
import math
from typing import TYPE_CHECKING, Any, Iterator, Optional, Tuple

import numpy as np

from . import _arguments as _args
from . import _dims, _dtypes, _h5tile, _via_h5py
from ._functions import to_file
from ._arrays import prepare
from ._attributes import Empty
from ._base import _Object
from ._h5tile import InvalidArgumentError, IoError, UnsupportedTypeError
from ._selection import _Selection

if TYPE_CHECKING:
    from ._objects import File



def _dataset_from_state(file: File, name: str, info: Optional[dict]) -> Dataset:
    if info is not None:
        file._catalog.described[name] = info
    return Dataset(file, name)


# A selection that is not one box is read as several (Dataset._read_by_slabs), each at most this
# many bytes unless one chunk is larger: memory stays at the result and one box.
_COVERING_BOX_BYTES = 64 << 20
# What one more box costs to read (about 10 us for a kept file, a request for a URL), as bytes of
# data read (plain), of chunks decoded, or fetched from a URL: the unneeded part between two
# needed runs is read with them where it costs less than that (_Selection.boxes).
_GAP_BYTES = {"plain": 64 << 10, "decoded": 4 << 10, "url": 1 << 20}
# How many times a selection read in slabs is read again where the file changed meanwhile.
_SLAB_ATTEMPTS = 3

_COMPRESSION_NAMES = {"deflate": "gzip", "lzf": "lzf", "szip": "szip"}


# A write through a boolean mask reads its covering box, changes it and writes it back: one at a time.
_MASK_WRITES = _via_h5py.WRITES  # re-entered: a field write of a masked selection; held by every write


def _as_hdf5_converts(data: np.ndarray, dtype: Any) -> np.ndarray:
    """`data` converted to `dtype` as HDF5 converts numbers when h5py reads into another dtype
    (``read_direct``, ``astype``, ``np.asarray(ds, dtype)``): a value outside an integer type's
    range becomes its nearest limit (300.7 -> 127 in int8, -1 -> 0 in uint16), where NumPy's
    ``astype`` wraps it (44, 65535); anything else as ``astype``, which converts as C does, as
    HDF5 does (NaN to an integer included), without NumPy's overflow warnings (h5py gives none)."""
    dtype = np.dtype(dtype)
    if dtype.names is not None and data.dtype.names is not None:
        return _by_field_names(data, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype.kind not in "iu" or data.dtype.kind not in "iuf" or np.can_cast(data.dtype, dtype, "safe"):
            return data.astype(dtype, copy=False)
        limits = np.iinfo(dtype)
        if data.dtype.kind == "f":
            out = data.astype(dtype)
            out[data > limits.max] = limits.max  # compared in the float type, as HDF5 compares
            out[data < limits.min] = limits.min
            return out
        source = np.iinfo(data.dtype)
        return np.clip(data, max(limits.min, source.min), min(limits.max, source.max)).astype(dtype)


def _utf8_encoded(value: Any) -> Any:
    """A value for a UTF-8 fixed-length string dataset as h5py converts it: str encoded as UTF-8,
    bytes as they are; a NumPy str array is refused (TypeError), as h5py refuses it."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "U":
        raise TypeError(_args.without_secrets(f"No conversion path for dtype: {value.dtype!r} (a NumPy str array; "
                                              "give str, bytes or an object array of them)"))
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        return value
    items = np.asarray(value, dtype=object)
    return np.vectorize(lambda v: v.encode("utf-8") if isinstance(v, str) else v, otypes=[object])(items)


def _converted(values: Any, dtype: np.dtype) -> np.ndarray:
    """`values` (an array, or anything NumPy makes one of) converted to `dtype` as HDF5 converts:
    numbers clamped, compounds by field name; a sub-array dtype's elements to its base type."""
    base = dtype.subdtype[0] if dtype.subdtype is not None else dtype
    if not isinstance(values, np.ndarray):
        values = np.asarray(values)
        if values.dtype.kind in "OUS" or base.names is not None:  # tuples, strings: as NumPy makes them
            return np.asarray(values, dtype=base) if base.names is None else np.array(values.tolist(), dtype=base)
    return _as_hdf5_converts(values, base)


def _by_field_names(data: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A structured `data` converted to the structured `dtype` as HDF5 converts compounds: field
    by field, matched by NAME (NumPy's astype matches them by position), each converted as
    _as_hdf5_converts converts; a field of `dtype` that `data` lacks is left zero, as in h5py's
    buffers."""
    out = np.zeros(data.shape, dtype)
    for name in dtype.names:
        if name in data.dtype.names:
            out[name] = _as_hdf5_converts(np.asarray(data[name]), dtype.fields[name][0])
    return out


class Dataset(_Object):
    """A dataset of an HDF5 file, as h5py's ``Dataset``: its properties come from its description
    (read once per File), its data from parallel reads of the smallest box that covers the
    selection.

    Selections are h5py's, refusals included (_selection.py): integers (negative from the
    end), slices with a step of 1 or more, ``...``, ``()``, one list or 1-D integer array of
    increasing indices, a 1-D boolean array on one axis, and a boolean mask of the whole shape
    (a 1-D result)::

        ds[10:20, ::2]      # rows 10..19, every other column
        ds[-1]              # the last row
        ds[[2, 7, 30], :]   # rows 2, 7 and 30 (h5py: sorted, no repeats)
        ds[:, keep]         # the columns where `keep`, a 1-D boolean array, is True
        ds[data > 0]        # the elements where a mask of the dataset's shape is True, 1-D
        ds[()]              # everything (a NumPy scalar for a scalar dataset)
        np.asarray(ds)      # everything, as an array

    Where h5py differs from NumPy, h5tile is h5py: a negative step, an unsorted or repeated
    list, two lists, ``np.newaxis`` are refused with h5py's exception class. A selection that
    is not one box reads only the chunks it needs, in parallel. Writes (mode "a"/"r+") replace
    the whole dataset: ``ds[...] = array``.
    """

    # -- description
    @property
    def _info(self) -> dict:
        return self._file._describe(self._name)

    @property
    def _is_empty(self) -> bool:
        """A null dataspace: no shape and no elements (h5py's shape None; reads give Empty)."""
        return bool(self._info.get("null_space"))

    @property
    def shape(self) -> Optional[Tuple[int, ...]]:
        """The dataset's shape (``()`` for a scalar dataset, None for a null dataspace)."""
        return None if self._is_empty else tuple(int(n) for n in self._info["shape"])

    @property
    def maxshape(self) -> Optional[Tuple[Optional[int], ...]]:
        """The largest shape the dataset may be extended to, None on an unlimited axis (h5py's
        ``maxshape``; netCDF-4's unlimited dimensions)."""
        if self._is_empty:
            return None
        return tuple(None if n is None else int(n) for n in self._info.get("max_shape", self._info["shape"]))

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype the data reads as, as h5py gives it: compound types as structured
        dtypes, enums as their integer type with h5py's ``enum`` metadata
        (``h5py.check_enum_dtype``), HDF5 array types as NumPy sub-array dtypes."""
        return _dtypes.numpy_dtype(self._info)

    @property
    def ndim(self) -> int:
        return len(self._info["shape"])

    @property
    def size(self) -> Optional[int]:
        """The number of elements (None for a null dataspace, as h5py)."""
        return None if self._is_empty else math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The size of the data in memory, in bytes."""
        return 0 if self._is_empty else self.size * self.dtype.itemsize

    def fields(self, names: Any) -> "_dtypes.FieldsView":
        """Reads only the fields `names` (one name or a list) of a compound dataset:
        ``ds.fields("x")[0:10]`` (h5py's ``Dataset.fields``)."""
        return _dtypes.FieldsView(self, names)

    @property
    def dims(self) -> "_dims.DimensionManager":
        """The dimension scales of each axis (h5py's ``ds.dims``): ``ds.dims[0].label``,
        ``ds.dims[0][0]`` (the first scale of axis 0, a Dataset), ``ds.dims[0].keys()``."""
        return _dims.DimensionManager(self)

    def make_scale(self, name: str = "") -> None:
        """Makes this dataset a dimension scale named ``name`` (h5py's ``make_scale``), through
        HDF5's dimension scale API (see ``dims``)."""
        _dims.make_scale(self, name)

    @property
    def is_scale(self) -> bool:
        """Whether this dataset is a dimension scale (h5py's ``is_scale``)."""
        return _dims.is_scale(self)

    @property
    def chunks(self) -> Optional[Tuple[int, ...]]:
        """The chunk shape, or None where the dataset is not chunked."""
        chunk = self._info["chunk"]
        return None if chunk is None else tuple(int(n) for n in chunk)

    @property
    def compression(self) -> Optional[str]:
        """"gzip", "lzf" or "szip" as h5py names them; "unknown", as h5py says it, where another
        filter than those and shuffle, fletcher32 and scaleoffset is in the pipeline (nbit,
        a plugin's: see ``filters``); else None."""
        for name in ("deflate", "lzf", "szip"):  # h5py's order
            if name in (self._info["filters"] or ()):
                return _COMPRESSION_NAMES[name]
        if any(i not in self._H5PY_NAMED_FILTERS for i in self.filter_ids):
            return "unknown"
        return None

    @property
    def compression_opts(self) -> Optional[int]:
        """The gzip level (as h5py reports it), else None."""
        for f, values in zip(self._info["filters"] or (), self._info.get("filter_values") or ()):
            if f == "deflate" and values:
                return int(values[0])
        return None

    @property
    def shuffle(self) -> bool:
        """Whether HDF5's shuffle filter is in the pipeline."""
        return "shuffle" in (self._info["filters"] or ())

    @property
    def fletcher32(self) -> bool:
        """Whether the chunks carry Fletcher-32 checksums."""
        return "fletcher32" in (self._info["filters"] or ())

    @property
    def filters(self) -> Tuple[str, ...]:
        """The filter pipeline, by name (h5tile's own view; empty for an unfiltered dataset)."""
        return tuple(self._info["filters"] or ())

    @property
    def layout(self) -> str:
        """"contiguous", "chunked", "compact" or "virtual"."""
        return self._info["layout"]

    def _from_h5py(self, attribute: str) -> Any:
        """A property h5py answers from HDF5's own description (external storage, the filters'
        names as stored, a virtual dataset's mappings as h5py's selection objects), read through
        h5py (local files, where it is installed)."""
        value = _via_h5py.MISSING if self._file._is_url() else \
            _via_h5py.dataset_attribute(self._file._path_text, self._name, attribute)
        if value is _via_h5py.MISSING:
            raise NotImplementedError(_args.without_secrets(f"ds.{attribute} of '{self._name}' in "
                                                            f"'{self._file._shown}': h5tile reads it through h5py, "
                                                            "which needs a local file and h5py installed"))
        return value

    @property
    def external(self) -> Any:
        """The external storage of the dataset, as h5py gives it: [(file, offset, size)], or None."""
        return self._from_h5py("external")

    @property
    def filter_names(self) -> Any:
        """The filters' names as stored in the file (h5py's ``filter_names``)."""
        return self._from_h5py("filter_names")

    def virtual_sources(self) -> Any:
        """A virtual dataset's mappings, as h5py gives them (its VDSmap tuples of h5py selection
        objects); RuntimeError for a dataset that is not virtual, as h5py."""
        if not self.is_virtual:
            raise RuntimeError(_args.without_secrets(f"'{self._name}' is not a virtual dataset"))
        return self._from_h5py("virtual_sources")()

    @property
    def regionref(self) -> Any:
        """h5py's maker of region references (``ds.regionref[2:5]``), made by h5py: HDF5 writes each
        region into the file's global heap, so a File in a write mode lends the file to h5py for it
        (see ``id``); in mode "r" UnsupportedTypeError. They read (``ds[regionref]``) in any mode."""
        if self._file._mode == "r":
            raise UnsupportedTypeError(_args.without_secrets(
                f"cannot make region references of dataset '{self._name}' in '{self._file._shown}': it is open "
                "read-only, and HDF5 writes each region into the file (open it in mode 'a')"))
        return _RegionReferences(self)

    @property
    def is_virtual(self) -> bool:
        """Whether the dataset is a virtual dataset (h5py's ``is_virtual``)."""
        return self._info["layout"] == "virtual"

    @property
    def fillvalue(self) -> Any:
        """The value of elements never written, as h5py gives it: a NumPy scalar of the dtype;
        for variable-length strings the bytes set (``b""`` where none is)."""
        raw = self._info.get("fill_value") or b""
        if not raw or self._info.get("dtype") == "object":
            return bytes(raw)
        value = np.frombuffer(raw, np.dtype(self._info["dtype"])).copy()[0]
        return _dtypes.as_numpy(value, self.dtype) if _dtypes.is_structured(self._info) else value

    def asstr(self, encoding: Optional[str] = None, errors: str = "strict") -> "_AsStr":
        """A view that reads strings as ``str`` (h5py's ``asstr``): ``ds.asstr()[0:10]`` gives an
        object array of ``str``, decoded with `encoding` (default: the dataset's own, ASCII or
        UTF-8). TypeError for a dataset that does not hold strings, as h5py."""
        if self.dtype.kind not in "SO":
            raise TypeError(_args.without_secrets(f"dset.asstr() can only be used on datasets with an HDF5 string "
                                                  f"datatype: '{self._name}' holds {self.dtype}"))
        return _AsStr(self, encoding or self._info.get("charset") or "utf-8", errors)

    def len(self) -> int:
        """The length of the first axis, as h5py's ``Dataset.len()`` (``len(ds)`` is limited to
        ``sys.maxsize``); TypeError for a scalar dataset."""
        shape = self.shape
        if not shape:
            raise TypeError("Attempt to take len() of scalar dataset")
        return shape[0]

    def iter_chunks(self, sel: Any = None) -> Iterator[Tuple[slice, ...]]:
        """The chunks that meet the selection `sel` (a slice or integer per axis; None: the whole
        dataset), each as the tuple of slices of its part in the selection, in C order, as h5py's
        ``iter_chunks``. TypeError where the dataset is not chunked, ValueError for a selection
        of another rank or outside the dataset (checked here, before the first chunk)."""
        chunks = self.chunks
        if not chunks:
            raise TypeError("Chunked dataset required")
        bounds = self._chunk_iteration_bounds(sel)
        return self._chunk_slices(bounds, chunks)

    def _chunk_iteration_bounds(self, sel: Any) -> "list[tuple[int, int]]":
        """(start, stop) per axis of an iter_chunks selection, read as h5py reads it (its
        ChunkIterator): an integer is one index, a slice's step is ignored, a missing or zero
        start is 0 and a missing or zero stop is the axis' length (so an axis of length 0 is
        refused, as h5py refuses it)."""
        shape = self.shape
        if sel is None:
            sel = tuple(slice(0, n) for n in shape)
        keys = [sel] if isinstance(sel, (slice, int)) else list(sel)
        if len(keys) != len(shape):
            raise ValueError("Invalid selection - selection region must have same rank as dataset")
        bounds = []
        for key, n in zip(keys, shape):
            if isinstance(key, int):
                start, stop = key, key + 1
            elif isinstance(key, slice):
                start, stop = key.start or 0, key.stop or n
            else:  # h5py's own failure for anything else (an assertion of its ChunkIterator)
                raise AssertionError(_args.without_secrets(f"{key!r}: Selection object must be a slice or integer"))
            if start < 0 or stop > n or stop <= start:
                raise ValueError("Invalid selection - selection region must be within dataset space")
            bounds.append((start, stop))
        return bounds

    @staticmethod
    def _chunk_slices(bounds: "list[tuple[int, int]]", chunks: Tuple[int, ...]) -> Iterator[Tuple[slice, ...]]:
        """Each chunk that meets the box `bounds`, as the slices of its part of the box, the last
        axis fastest."""
        from itertools import product
        per_axis = [[slice(max(i * c, start), min((i + 1) * c, stop), 1)
                     for i in range(start // c, (stop - 1) // c + 1)]
                    for (start, stop), c in zip(bounds, chunks)]
        return product(*per_axis)

    # HDF5's filter IDs by the names the core gives them (src/core/filter_ids.hpp); an ID it does
    # not know is named "filter <id> (unknown to h5tile)".
    _FILTER_IDS = {"deflate": 1, "shuffle": 2, "fletcher32": 3, "szip": 4, "nbit": 5, "scaleoffset": 6,
                   "lzo": 305, "bzip2": 307, "lzf": 32000, "blosc": 32001, "mafisc": 32002, "snappy": 32003,
                   "lz4": 32004, "bitshuffle": 32008, "zfp": 32013, "fpzip": 32014, "zstd": 32015, "sz": 32017,
                   "fcidecomp": 32018, "jpeg": 32019, "vbz": 32020, "bitgroom": 32022, "granularbr": 32023,
                   "sz3": 32024, "blosc2": 32026}
    # The filters h5py names itself (its filters._COMP_FILTERS): with any other, h5py's
    # ``compression`` is "unknown".
    _H5PY_NAMED_FILTERS = (1, 2, 3, 4, 6, 32000)

    @property
    def filter_ids(self) -> Tuple[int, ...]:
        """The HDF5 IDs of the filters of the pipeline, in order (h5py's ``filter_ids``)."""
        return tuple(self._filter_id(name) for name in self._info["filters"] or ())

    def _filter_id(self, name: str) -> int:
        if name in self._FILTER_IDS:
            return self._FILTER_IDS[name]
        return int(name.split()[1])  # "filter <id> (unknown to h5tile)"

    @property
    def scaleoffset(self) -> Optional[int]:
        """The scale-offset filter's setting, as h5py gives it (its second value as stored: the
        bits kept of an integer, 0 where HDF5 chose them; the decimal digits kept of a float),
        None where the dataset has no such filter."""
        for name, values in zip(self._info["filters"] or (), self._info.get("filter_values") or ()):
            if name == "scaleoffset":
                return int(values[1]) if len(values) > 1 else None
        return None

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a scalar dataset")
        return shape[0]

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        if not self._file._open:
            return "<Closed h5tile Dataset>"
        return _args.without_secrets(f'<h5tile Dataset "{self._name}": shape {self.shape}, type "{self.dtype.str}">')

    def __reduce__(self):
        info = self._file._catalog.described.get(self._name)
        return (_dataset_from_state, (self._file, self._name, info))

    # -- reads
    def _read_box(self, offset: Tuple[int, ...], extent: Tuple[int, ...], out: Optional[np.ndarray] = None,
                  reader: Any = None):
        """The box read in parallel: into ``out`` (C-contiguous, of the box's shape and the dtype)
        where given, else into a new array; through `reader` where given."""
        dtype = self.dtype
        if out is None:
            if 0 in extent:
                return np.empty(extent, dtype)
            return (reader or self._file._reader(self._name)).read_box(list(offset), list(extent))
        if 0 not in extent:
            core, opaque = prepare(out, "out")
            self._file._reader(self._name).read_into(core, opaque, list(offset))
        return out

    def __getitem__(self, key: Any) -> Any:
        """The selection ``key`` as h5py reads it (h5py's rules, its refusals included:
        _selection.py) as a NumPy array (a NumPy scalar where every axis is indexed by an
        integer, and for ``ds[()]`` of a scalar dataset). A box is read as one; any other
        selection as the boxes of the chunks it needs (_read_by_slabs)."""
        self._file._check_open()
        if self._info.get("via_h5py") or _via_h5py.is_region_reference(key):
            return _via_h5py.read(self._file._path_text, self._name, key)  # a type or key only HDF5 reads
        if self._is_empty:  # before field names, as h5py: a null dataspace takes () and ... only
            return self._read_empty(key)
        names, key = _dtypes.split_field_names(key, self.dtype, f"dataset '{self._name}'")
        if names:  # h5py's fields of a compound type, named anywhere in the selection
            return _dtypes.pick_fields(self[key], names)
        if _dtypes.is_structured(self._info) and not isinstance(self, _Bytes):
            # Compound, enum and array types: selected as their stored bytes, then viewed as h5py's dtype.
            return _dtypes.as_numpy(_Bytes(self._file, self._name)[key], self.dtype)
        shape = self.shape
        sel = _Selection(key, shape, f"dataset '{self._name}' in '{self._file._shown}'")
        if not shape:
            data = self._read_box((), ())
            return data[()] if sel.scalar_request else data
        if 0 in sel.picked_shape:  # nothing selected: nothing read, as h5py
            return sel.finish(np.zeros(sel.picked_shape, self.dtype))
        if sel.is_box:
            return sel.finish(self._read_box(sel.offset, sel.extent))
        return self._read_by_slabs(sel)

    def _read_empty(self, key: Any) -> Empty:
        """A null dataspace's only reads, as h5py: ``ds[()]`` and ``ds[...]`` give Empty."""
        if key is Ellipsis or (isinstance(key, tuple) and len(key) <= 1 and all(k is Ellipsis for k in key)):
            return Empty(self.dtype)
        raise ValueError(_args.without_secrets(f"Empty datasets cannot be sliced: '{self._name}' in "
                                               f"'{self._file._shown}' has a null dataspace, read with ds[()]"))

    def _read_by_slabs(self, sel: "_Selection"):
        """A selection that is not one box (steps, a list, a boolean mask), read as the boxes
        that hold only the chunks it needs (_Selection.boxes: runs of needed chunks, merged where
        the gap costs less than one more box, at most _COVERING_BOX_BYTES each, no chunk in two
        boxes), each placed into the result as it arrives. The covering box is neither read
        nor decoded where the selection leaves most of it out, and memory stays at the result
        and one box.

        The boxes are one version of the file: where the reader opened the file again between
        the first box and the last (it was replaced; a kept URL answers some reads from memory,
        as it was when opened), they are read again."""
        reader = self._file._reader(self._name)
        for _ in range(_SLAB_ATTEMPTS):
            out, opens = self._read_slabs_once(sel, reader)
            if reader.opens == opens:
                return sel.finish(out)
        raise IoError(errno.ESTALE, _args.without_secrets(f"cannot read '{self._name}' of '{self._file._shown}': "
                                                          f"it changed while being read, {_SLAB_ATTEMPTS} times"))

    def _read_slabs_once(self, sel: "_Selection", reader: Any):
        """The boxes of _read_by_slabs placed into a new array (of ``sel.picked_shape``), and the
        reader's opens after the first box."""
        decoded = self.chunks if self.filters and self.layout == "chunked" else None
        gap = _GAP_BYTES["url" if self._file._is_url() else "decoded" if decoded else "plain"]
        out = np.empty(sel.picked_shape, self.dtype)
        opens = None
        for offset, extent in sel.boxes(decoded, self.dtype.itemsize, gap, _COVERING_BOX_BYTES):
            block = self._read_box(offset, extent, reader=reader)
            if opens is None:
                opens = reader.opens
            sel.place(out, block, offset)
        return out, reader.opens if opens is None else opens

    def read_direct(self, dest: np.ndarray, source_sel: Any = None, dest_sel: Any = None) -> None:
        """Reads ``self[source_sel]`` into ``dest[dest_sel]`` (h5py's ``read_direct``). Where the
        source is a box (no steps) and the destination is all of a C-contiguous ``dest`` of the
        dataset's dtype, the engine reads straight into ``dest``, without a copy. Numbers are
        converted to ``dest``'s dtype as HDF5 (and so h5py) converts them: out-of-range values
        become the integer type's limits rather than wrap."""
        self._file._check_open()
        if not isinstance(dest, np.ndarray):
            raise TypeError(_args.without_secrets(f"dest must be a numpy.ndarray, not {type(dest).__name__}"))
        if self._is_empty:
            raise TypeError(_args.without_secrets(f"'{self._name}' has a null dataspace: Empty datasets have no "
                                                  "numpy representation"))
        if not dest.flags.c_contiguous:  # h5py (HDF5) writes into dest's memory in C order
            raise TypeError("read_direct: dest must be C-contiguous (np.ascontiguousarray), as h5py requires")
        sel = _Selection(() if source_sel is None else source_sel, self.shape,
                         f"dataset '{self._name}' in '{self._file._shown}'")
        target = dest if dest_sel is None else dest[dest_sel]
        direct = (dest_sel is None and sel.is_box and dest.dtype == self.dtype and dest.flags.c_contiguous
                  and dest.flags.writeable and dest.shape == tuple(sel.extent) and not _dtypes.is_structured(self._info))
        if direct:
            self._read_box(sel.offset, sel.extent, out=dest)
            return
        data = self[() if source_sel is None else source_sel]
        try:
            if np.broadcast_shapes(np.shape(data), target.shape) != target.shape:
                raise ValueError("wider than dest")
        except ValueError:
            raise TypeError(_args.without_secrets(f"read_direct: can't broadcast {np.shape(data)} (read from "
                                                  f"'{self._name}') -> {target.shape} (dest)")) from None
        target[...] = _as_hdf5_converts(data, target.dtype) if isinstance(data, np.ndarray) else data
        if dest_sel is not None and not np.shares_memory(target, dest):
            dest[dest_sel] = target

    def read(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The whole dataset: into ``out`` where given (converted where its dtype differs, as HDF5
        converts; read in place where it is C-contiguous and of the dataset's dtype), else a new
        array."""
        if out is None:
            return self[...]
        self.read_direct(out)
        return out

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        if copy is False:
            raise ValueError("Dataset.__array__ received copy=False but memory allocation cannot be avoided on read "
                             "(reading a dataset always makes a new array)")
        data = self[...]
        return data if dtype is None else _as_hdf5_converts(data, dtype)

    def astype(self, dtype: Any) -> _AsType:
        """A view that reads the dataset converted to ``dtype``: ``ds.astype("f8")[0:10]``, as
        HDF5 converts (out-of-range values become an integer type's limits, as with h5py)."""
        return _AsType(self, np.dtype(dtype))

    # -- writes
    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes ``value`` into the selected elements (mode "a"/"r+"), in place, as h5py does:
        ``ds[...] = a``, ``ds[2:5, ::2] = x``, ``ds[7] = 0``, a list on one axis, a boolean mask.
        ``value`` is converted to the dataset's dtype and broadcast to the selection's shape. The
        object the name leads to is written (through a soft link; its other hard-linked names see
        the change) and keeps its layout, chunks, filters and attributes. A compressed chunked
        dataset's chunks are read, merged and encoded on every core. When the call returns the
        data is in the file and ``value`` may change."""
        self._file._check_writable(f"write dataset '{self._name}'")
        parts = key if isinstance(key, tuple) else (key,)
        if self.dtype.names is None and any(isinstance(p, str) for p in parts):
            raise TypeError(_args.without_secrets(f"Illegal slicing argument (not a compound dataset): dataset "
                                                  f"'{self._name}' in '{self._file._shown}' is of type {self.dtype}"))
        if self.dtype.names is not None:
            names, rest = _dtypes.split_field_names(key, self.dtype, f"dataset '{self._name}'")
            if names:  # some fields of a compound: the others kept as they are, as HDF5 keeps them
                self._write_fields(names, rest, value)
                return
            given = value.dtype.names if isinstance(value, np.ndarray) else None
            if given is not None and not set(self.dtype.names) <= set(given):
                # HDF5 converts compounds by name: the fields the value has are written, the others kept
                common = tuple(n for n in self.dtype.names if n in given)
                if not common:
                    raise TypeError(_args.without_secrets(f"no field of the value ({list(given)}) is a field of "
                                                          f"dataset '{self._name}' ({list(self.dtype.names)})"))
                self._write_fields(common, rest if isinstance(rest, tuple) else (rest,), value)
                return
        info = self._info  # described once for the whole call (a row at a time is a hot loop)
        if info.get("via_h5py"):  # a type only HDF5 writes: through h5py, which h5tile lends the file to
            with self._file._through_h5py(f"write dataset '{self._name}'") as f:
                _via_h5py.object_of(f, self._name)[key] = value
            return
        shape = None if info.get("null_space") else tuple(int(n) for n in info["shape"])
        sel = _Selection(key, shape, f"dataset '{self._name}' in '{self._file._shown}'")
        if info["layout"] != "virtual":
            self._write_selection(sel, value, _dtypes.numpy_dtype(info))  # the core lets go of kept reads
            return
        if not (sel.is_box and tuple(sel.offset) == (0,) * len(shape) and tuple(sel.extent) == shape
                and sel.result_shape == shape):
            raise InvalidArgumentError(
                _args.without_secrets(f"h5tile writes a virtual dataset whole: {_Selection.text(key)} selects part "
                                      f"of '{self._name}' of shape {shape} in '{self._file._shown}'; write its "
                                      "sources, or read it (a = ds[...]), change a[...] and write it back "
                                      "(ds[...] = a)"))
        data = np.array(np.broadcast_to(np.asarray(value, dtype=self.dtype), shape), order="C")
        # h5tile's own attributes (h5tile_*) are made anew by the write; the others come back after it.
        kept = {name: raw for name, raw in self.attrs._raw().items() if not name.startswith("h5tile_")}
        lost = sorted(name for name, raw in kept.items()
                      if raw[0] not in _RESTORABLE or (raw[0] == "empty" and raw[2] is None))
        if lost:
            raise InvalidArgumentError(_args.without_secrets(f"cannot rewrite '{self._name}' in "
                                                             f"'{self._file._shown}': h5tile could not write "
                                                             f"back its attributes {lost} (of a type h5tile does "
                                                             "not read)"))
        to_file(data, self._file.filename, self._name, mode="a", layout="virtual").wait()
        self._file._written()
        # The write replaced the dataset: its attributes come back (those the write made are kept).
        now = set(self.attrs.keys())
        for name, raw in kept.items():
            if name not in now:
                self.attrs._write_raw(name, raw)

    def _write_fields(self, names: tuple, key: Any, value: Any) -> None:
        """``ds["a", key] = value`` (h5py's writes of named fields): the selection read, the fields
        set (from the same fields of a compound value, else from the value itself) and written back,
        with no other such write of this process in between."""
        key = key[0] if len(key) == 1 else (key or ...)
        with _MASK_WRITES:
            current = np.array(self[key])
            compound = isinstance(value, np.ndarray) and value.dtype.names is not None
            for name in names:
                current[name] = _converted(value[name] if compound else value, self.dtype.fields[name][0])
            self[key] = current

    def write_direct(self, source: np.ndarray, source_sel: Any = None, dest_sel: Any = None) -> None:
        """Writes ``source[source_sel]`` into ``self[dest_sel]`` (h5py's ``write_direct``)."""
        if not isinstance(source, np.ndarray):
            raise TypeError(_args.without_secrets(f"source must be a numpy.ndarray, not {type(source).__name__}"))
        self[() if dest_sel is None else dest_sel] = source if source_sel is None else source[source_sel]

    def resize(self, size: Any, axis: Optional[int] = None) -> None:
        """Changes the shape of a chunked dataset within its ``maxshape`` (h5py's ``resize``):
        ``size`` is the new shape, or with ``axis`` the new length of that axis. Elements past
        the old shape read as the fill value; those cut off are gone. TypeError for a dataset that
        is not chunked."""
        self._file._check_writable(f"resize dataset '{self._name}'", RuntimeError)
        shape = tuple(int(n) for n in self._info["shape"])
        if axis is not None:
            if not isinstance(axis, (int, np.integer)) or not 0 <= axis < len(shape):
                raise ValueError(_args.without_secrets(f"Invalid axis (0 to {len(shape) - 1} allowed)"))
            new = list(shape)
            new[axis] = int(size)
        else:
            new = [int(size)] if isinstance(size, (int, np.integer)) else [int(n) for n in size]
        if len(new) != len(shape):
            raise TypeError(_args.without_secrets(f"cannot resize '{self._name}' of shape {shape} to {tuple(new)}: "
                                                  "the rank differs"))
        if any(n < 0 for n in new):
            raise OverflowError(_args.without_secrets(f"cannot resize '{self._name}' to {tuple(new)}: a negative "
                                                      "length"))
        try:
            _h5tile.resize_dataset(self._file._path_text, self._name, new)
        except InvalidArgumentError as e:  # past the maximum shape: h5py's RuntimeError
            raise RuntimeError(_args.without_secrets(str(e))) from None
        self._file._reshaped(self._name, tuple(new))

    def _write_selection(self, sel: _Selection, value: Any, dtype: np.dtype) -> None:
        """``value`` (converted to `dtype`, the dataset's) written into `sel` in place: one write
        of each strided box the selection is made of (an axis picked by a list: one box per run of
        consecutive indices); a boolean mask of the whole shape: its covering box read, changed
        and written back."""
        if dtype.subdtype is not None:  # NumPy turns a sub-array dtype into axes: written as its elements' bytes
            base, sub = dtype.subdtype
            if np.ndim(value) == 0:
                raise TypeError(_args.without_secrets(f"Scalar broadcasting is not supported for array dtypes "
                                                      f"(writing '{self._name}' in '{self._file._shown}')"))
            try:
                axes = np.broadcast_to(_converted(value, base), tuple(sel.result_shape) + sub)
            except ValueError:
                raise TypeError(_args.without_secrets(f"can't broadcast {np.shape(value)} -> {sel.result_shape} "
                                                      f"of {dtype} (writing '{self._name}' in "
                                                      f"'{self._file._shown}')")) from None
            flat = np.ascontiguousarray(axes).reshape(tuple(sel.result_shape) + (-1,))
            value = flat.view(np.dtype(f"V{dtype.itemsize}"))[..., 0]
            dtype = value.dtype
        if dtype.kind == "S" and (dtype.metadata or {}).get("h5py_encoding") == "utf-8":
            value = _utf8_encoded(value)
        if isinstance(value, np.ndarray) and value.dtype != dtype and (dtype.names is None or value.dtype.names):
            data = _as_hdf5_converts(value, dtype)  # numbers clamped as HDF5 does; compounds by field name
        else:
            data = np.asarray(value, dtype=dtype)
        try:
            data = np.broadcast_to(data, sel.result_shape)
        except ValueError:
            raise TypeError(_args.without_secrets(f"can't broadcast {data.shape} -> {sel.result_shape} (writing "
                                                  f"'{self._name}' in '{self._file._shown}')")) from None
        if sel.mask is not None:
            if sel.count == 0:
                return  # an all-False mask: nothing to write (h5py: a no-op)
            with _MASK_WRITES:  # read, changed, written back: no other mask write of this process between
                box = tuple(slice(o, o + e) for o, e in zip(sel.offset, sel.extent))
                covering = self[box]
                covering[sel.mask[box]] = data
                self._write_box(covering, sel.offset, [1] * len(sel.offset))
            return
        picked = data.reshape(tuple(p.count for p in sel.axes))
        if 0 in picked.shape:
            return
        runs = [_runs(p.indices) for p in sel.axes]
        for axis, axis_runs in enumerate(runs):
            if len(axis_runs) > 1:  # a list on this axis: one write per run of it
                taken = 0
                for start, count, step in axis_runs:
                    part = [slice(None)] * picked.ndim
                    part[axis] = slice(taken, taken + count)
                    offset = [r[0][0] for r in runs]
                    offset[axis] = start
                    steps = [r[0][2] for r in runs]
                    steps[axis] = step
                    self._write_box(picked[tuple(part)], offset, steps)
                    taken += count
                return
        self._write_box(picked, [r[0][0] for r in runs], [r[0][2] for r in runs])

    def _write_box(self, data: np.ndarray, offset: "list[int]", step: "list[int]") -> None:
        offset, step = [int(o) for o in offset], [int(s) for s in step]
        path = self._file._path_text
        if self._info["dtype"] == "object":  # variable-length strings: through HDF5, each one's bytes
            ascii_only = self._info.get("charset") != "utf-8"
            values = [_dtypes.string_bytes(v, ascii_only) for v in data.ravel()]
            with _MASK_WRITES:  # not between the read and the write back of a mask or field write
                _h5tile.write_strings(path, self._name, values, list(data.shape), offset, step)
            return
        data = np.ascontiguousarray(data)
        if _dtypes.is_structured(self._info):  # the core writes compounds, enums, sub-arrays as their bytes
            data = data.view(np.dtype(f"V{data.dtype.itemsize}"))
        array, sized = prepare(data, "value")
        with _MASK_WRITES:
            _h5tile.write_into(path, self._name, array, sized, offset, step, self._file._options["threads"])


class _RegionReferences:
    """``ds.regionref``: h5py's region references of a dataset (``ds.regionref[0:10, ::2]``), made
    by h5py through the file h5tile lends it (Dataset.regionref); ``shape`` and ``selection`` of a
    reference as h5py's."""

    def __init__(self, dataset: Dataset):
        self._dataset = dataset

    def __getitem__(self, key: Any) -> Any:
        name = self._dataset._name
        with self._dataset._file._through_h5py(f"make a region reference of dataset '{name}'") as f:
            return _via_h5py.object_of(f, name).regionref[key]

    def _ask(self, what: str, reference: Any) -> Any:
        with _via_h5py._reading(self._dataset._file._path_text) as f:
            return getattr(_via_h5py.object_of(f, self._dataset._name).regionref, what)(reference)

    def shape(self, reference: Any) -> tuple:
        """The shape of the dataset `reference` points into."""
        return self._ask("shape", reference)

    def selection(self, reference: Any) -> tuple:
        """The shape of the selection `reference` makes."""
        return self._ask("selection", reference)


def _runs(indices: Any) -> "list[tuple[int, int, int]]":
    """The picks of one axis as (start, count, step) runs: one for a range (a slice, an integer),
    one per run of consecutive indices for an array (a list)."""
    if isinstance(indices, range):
        return [(indices.start, len(indices), indices.step if len(indices) > 1 else 1)]
    indices = np.asarray(indices, dtype=np.int64)
    breaks = np.flatnonzero(np.diff(indices) != 1) + 1
    return [(int(run[0]), len(run), 1) for run in np.split(indices, breaks)]

class _View:
    """What h5py's views of a dataset (``astype``, ``asstr``) share: the dataset's shape, size and
    length, a dtype of their own, and ``np.asarray(view)`` reading it all."""

    _dataset: Dataset

    @property
    def dtype(self) -> np.dtype:
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        return self._dataset.ndim

    @property
    def shape(self) -> Optional[Tuple[int, ...]]:
        return self._dataset.shape

    @property
    def size(self) -> Optional[int]:
        return self._dataset.size

    def __len__(self) -> int:
        return len(self._dataset)

    def __getitem__(self, key: Any) -> Any:
        raise NotImplementedError

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        """Everything read, as an array (0-d for a scalar dataset) of `dtype` or the view's;
        ValueError for ``copy=False``, as h5py: every read makes a new array."""
        if copy is False:
            raise ValueError(_args.without_secrets(f"{type(self).__name__}.__array__ received copy=False but memory "
                                                   "allocation cannot be avoided on read"))
        return np.asarray(self[()], dtype=self.dtype if dtype is None else dtype)


class _AsStr(_View):
    """A dataset of strings read as ``str`` (``Dataset.asstr``): dtype object, as h5py's."""

    def __init__(self, dataset: Dataset, encoding: str, errors: str):
        self._dataset, self._encoding, self._errors = dataset, encoding, errors

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(object)

    def _decode(self, value: bytes) -> str:
        return value.decode(self._encoding, self._errors)

    def __getitem__(self, key: Any) -> Any:
        data = self._dataset[key]
        if not isinstance(data, np.ndarray):
            return self._decode(data)
        out = np.empty(data.shape, object)
        out.reshape(-1)[:] = [self._decode(v) for v in data.reshape(-1)]
        return out


class _Bytes(Dataset):
    """A dataset of a compound, enum or array type read as its stored bytes (V<n>): selected
    as bytes (copies keep the gaps between fields as stored), then viewed as h5py's dtype (an
    array type's axes appended) by Dataset.__getitem__."""

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f"V{super().dtype.itemsize}")


_RESTORABLE = ("numbers", "fixed_strings", "variable_strings", "empty")


class _AsType(_View):
    """A dataset read as another dtype (``Dataset.astype``)."""

    def __init__(self, dataset: Dataset, dtype: np.dtype):
        self._dataset, self._dtype = dataset, dtype

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def __getitem__(self, key: Any) -> Any:
        """The selection converted; a scalar where the dataset gives one (an element, ``[()]`` of
        a scalar dataset), as h5py."""
        data = self._dataset[key]
        # np.asarray again: NumPy's clip of a 0-d array gives a scalar.
        converted = np.asarray(_as_hdf5_converts(np.asarray(data), self._dtype))
        return converted if isinstance(data, np.ndarray) else converted[()]
