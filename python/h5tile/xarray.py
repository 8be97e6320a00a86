"""An xarray backend, ``engine="h5tile"``: netCDF-4 and plain HDF5 files opened lazily, read
by h5tile in parallel (no HDF5 global lock around the reads).

Installing h5tile registers the engine (an ``xarray.backends`` entry point)::

    ds = xr.open_dataset("data.nc", engine="h5tile", chunks={})   # Dask, the file's chunks
    ds = xr.open_dataset("data.nc", engine="h5tile", group="grp/sub")
    ds = xr.open_mfdataset(["a.nc", "b.nc"], engine="h5tile")
    tree = xr.open_datatree("data.nc", engine="h5tile")           # every group, as a DataTree

The Dataset is the one ``engine="h5netcdf"`` returns: dimensions from the netCDF-4 dimension
scales (``DIMENSION_LIST``, ``_Netcdf4Dimid``, ``_Netcdf4Coordinates``), phony dimensions for
datasets without scales (``phony_dims="access"`` or ``"sort"``, named as h5netcdf names them),
the same attributes (netCDF's hidden ones left out, strings as ``str``), and the same encoding
(chunk sizes, filters, unlimited dimensions). CF decoding is xarray's, as for every engine.

Where it differs from h5netcdf: a variable shorter than its unlimited dimension (netCDF lets
one be, h5netcdf pads it with the fill value) is refused with an error naming it; a variable of a
type h5tile does not read is left out with a warning naming it and why, as is an attribute of such
a type in a URL (in a local file, h5py reads it, as for h5netcdf); variables are listed in name
order (h5netcdf: creation order where the file tracks it), which Datasets compare without.

Nothing is held open once ``open_dataset`` returns: variables hold :class:`h5tile.Dataset`
objects, which pickle as (path, name), so a Dataset opened here travels to Dask workers (threads
or processes). While it opens, a URL is fetched once (the core's KeptOpen) for the catalog and the
index coordinates, which are read then, as xarray reads them at once for its indexes.

``ds.to_netcdf(path, engine="h5tile")`` writes, once this module is imported: see
:mod:`h5tile._xarray_writes`.
"""
from __future__ import annotations

import contextlib
import os
import posixpath
import warnings
from collections import Counter
from typing import Any, Iterable, Iterator, Optional

import numpy as np
import xarray
from xarray.backends.common import AbstractDataStore, BackendArray, BackendEntrypoint, _normalize_path
from xarray.backends.store import StoreBackendEntrypoint
from xarray.core import indexing
from xarray.core.utils import FrozenDict
from xarray.core.variable import Variable

from . import _arguments as _args
from . import _h5tile, _storage_options
from ._attributes import _attribute_value
from ._h5tile import UnsupportedTypeError
from ._objects import Dataset, File

__all__ = ["H5tileBackendEntrypoint", "H5tileStore", "H5tileArray"]

# Attributes netCDF-4 keeps for itself (dimension scales and bookkeeping), hidden as h5netcdf hides them.
_HIDDEN_ATTRIBUTES = frozenset(["REFERENCE_LIST", "CLASS", "DIMENSION_LIST", "NAME", "_Netcdf4Dimid",
                                "_Netcdf4Coordinates", "_nc3_strict", "_NCProperties"])
_NOT_A_VARIABLE = b"This is a netCDF dimension but not a netCDF variable."
_NON_COORD_PREFIX = "_nc4_non_coord_"
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


class H5tileArray(BackendArray):
    """One variable's data, read lazily: each selection xarray makes is read by h5tile in
    parallel (the smallest box covering it, then NumPy picks the rest)."""

    def __init__(self, dataset: Dataset):
        self.dataset = dataset
        self.shape = dataset.shape
        self.dtype = dataset.dtype
        # Variable-length strings read as str, decoded as stored (h5netcdf's decode_vlen_strings).
        self._text_encoding = (dataset._info.get("charset") or "utf-8") if self.dtype.kind == "O" else None

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._getitem)

    def _getitem(self, key: tuple) -> np.ndarray:
        data = np.asarray(self.dataset[key])
        if self._text_encoding is not None:
            texts = [v.decode(self._text_encoding) if isinstance(v, bytes) else v for v in data.ravel().tolist()]
            data = np.array(texts + [None], dtype=object)[:-1].reshape(data.shape)
        return data


class _StoredDataset:
    """One HDF5 dataset of the group being opened, as far as the netCDF model needs it."""

    def __init__(self, file: File, path: str):
        self.path = path
        self.name = posixpath.basename(path)
        self.dataset = file[path]
        self.raw = self.dataset.attrs._raw()
        info = self.dataset._info
        self.shape = tuple(int(n) for n in info["shape"])
        self.max_shape = tuple(info.get("max_shape") or self.shape)

    def text(self, name: str) -> Optional[bytes]:
        raw = self.raw.get(name)
        if raw is None or raw[0] not in ("fixed_strings", "variable_strings") or not raw[2]:
            return None
        return raw[2][0]

    @property
    def is_scale(self) -> bool:
        return self.text("CLASS") == b"DIMENSION_SCALE"

    @property
    def is_variable(self) -> bool:
        return _NOT_A_VARIABLE not in (self.text("NAME") or b"")

    def numbers(self, name: str) -> Optional[np.ndarray]:
        raw = self.raw.get(name)
        return None if raw is None or raw[0] != "numbers" else np.atleast_1d(raw[2])

    def scales(self) -> Optional[list]:
        """Each axis's attached scales (paths) from DIMENSION_LIST: None where the dataset has
        none attached on any axis ("unlabeled"); a ValueError where only some axes have one."""
        raw = self.raw.get("DIMENSION_LIST")
        if raw is None or raw[0] != "references" or not self.shape:
            return None
        lists = [tuple(paths) for paths in raw[2]]
        counts = {len(paths) for paths in lists}
        if counts == {0}:
            return None
        if 0 in counts:
            raise ValueError(_args.without_secrets(f"malformed variable {self.name} has mixing of labeled and "
                                                   "unlabeled dimensions."))
        return lists


class _Dimension:
    def __init__(self, name: str, size: int, unlimited: bool = False, dimid: Any = None, scale: Optional[str] = None):
        self.name, self.size, self.unlimited, self.dimid, self.scale = name, size, unlimited, dimid, scale


class _Netcdf:
    """The netCDF-4 view of one group of a file, as h5netcdf builds it: its dimensions (its own
    and its ancestors'), its variables and their dimensions."""

    def __init__(self, file: File, group: str, phony_dims: str):
        self.file = file
        self.phony_dims = phony_dims
        self.phony_count = 0
        self.real_count = 0  # real dimensions seen so far (h5netcdf's _max_dim_id + 1)
        self.links = file._links()
        self.objects: dict = {}  # group path -> [_StoredDataset] of its datasets
        self.left_out: dict = {}  # group path -> [(dataset path, why)] of the datasets h5tile does not read
        self.dimensions: dict = {}  # group path -> {name: _Dimension}, in h5netcdf's order
        self.chain: list = []
        self.group = "/"
        if phony_dims == "sort":  # every group, depth first, before the one asked for
            for path in self._groups_depth_first("/"):
                self._initialise(path)
        self.focus(group)

    def focus(self, group: str, warn: bool = True) -> None:
        """Makes `group` the one this view shows (the groups on the way to it read first where
        they were not: h5netcdf's "access" order, numbering phony dimensions as it goes), warning
        (`warn`) of the datasets of `group` itself that are left out."""
        chain = ["/"]
        for part in [p for p in group.split("/") if p]:
            chain.append(posixpath.join(chain[-1], part))
        for path in chain:
            if path not in self.objects:
                self._initialise(path)
        self.chain = chain
        self.group = chain[-1]
        for path, why in self.left_out.get(self.group, []) if warn else ():
            warnings.warn(_args.without_secrets(f"'{path}' in '{self.file._shown}' is left out: {why}"), stacklevel=6)

    def enum_name(self, variable: str, dtype: np.dtype) -> Optional[str]:
        """The name of the enum type (a named datatype of the variable's group or of a group
        above it, nearest first) that the enum variable `variable` has, as h5netcdf finds it
        (the same base type and members); None where none is."""
        members = (dtype.metadata or {}).get("enum")
        group = posixpath.dirname(variable)
        while True:
            for path in self._members(group, "datatype"):
                named = self.file[path].dtype
                if named == dtype and (named.metadata or {}).get("enum") == members:
                    return posixpath.basename(path)
            if group == "/":
                return None
            group = posixpath.dirname(group)

    def subgroups(self, group: str) -> list:
        """`group` and every group below it, depth first, in h5netcdf's order (each group once)."""
        return self._groups_depth_first(group)

    def _members(self, group: str, kind: str) -> list:
        """The members of ``group`` of ``kind`` under every name its links give (hard links to one
        object under each, soft links followed), in h5py's order, as h5netcdf sees them."""
        found, group_id = self.links.resolve(group)
        if found != "group":
            return []
        paths = [posixpath.join(group, name) for name in self.links.names(group_id)]
        return [p for p in paths if self.links.resolve(p)[0] == kind]

    def _groups_depth_first(self, group: str, seen: Optional[set] = None) -> list:
        seen = set() if seen is None else seen
        seen.add(self.links.resolve(group)[1])
        out = [group]
        for sub in self._members(group, "group"):
            if self.links.resolve(sub)[1] not in seen:  # a group linked from below itself: once
                out += self._groups_depth_first(sub, seen)
        return out

    def _initialise(self, group: str) -> None:
        objects = []
        for path in self._members(group, "dataset"):
            try:
                objects.append(_StoredDataset(self.file, path))
            except UnsupportedTypeError as e:  # compound, enum...: the other variables still open
                self.left_out.setdefault(group, []).append((path, str(e)))  # warned of by focus
        self.objects[group] = objects
        dims: dict = {}
        phony: Counter = Counter()
        for obj in objects:
            if obj.is_scale:
                length = obj.shape[0] if obj.shape else 0
                dimid = obj.numbers("_Netcdf4Dimid")
                dims[obj.name] = _Dimension(obj.name, length, bool(obj.max_shape) and obj.max_shape[0] is None,
                                            int(dimid[0]) if dimid is not None else self.real_count, obj.path)
                self.real_count += 1
            elif obj.shape and obj.scales() is None:
                phony |= Counter(obj.shape)
        # An unlimited dimension is as long as the longest variable along it (netCDF's rule).
        for obj in objects:
            for axis, paths in enumerate(obj.scales() or ()):
                for dim in dims.values():
                    if dim.unlimited and dim.scale == paths[-1]:
                        dim.size = max(dim.size, obj.shape[axis])
        labeled = Counter(None if d.unlimited else d.size for d in dims.values())
        for size, count in phony.items():
            for _ in range(labeled[size], count):
                number = self.phony_count + (self.real_count if self.phony_dims == "sort" else 0)
                name = f"phony_dim_{number}"
                dims[name] = _Dimension(name, size)
                self.phony_count += 1
        self.dimensions[group] = dims

    def visible_dimensions(self) -> dict:
        """The dimensions seen from the group: its own, then its ancestors' (nearest first)."""
        out: dict = {}
        for group in reversed(self.chain):
            for name, dim in self.dimensions[group].items():
                out.setdefault(name, dim)
        return out

    def variables(self) -> list:
        return [obj for obj in self.objects[self.group] if obj.is_variable]

    def dimensions_of(self, obj: _StoredDataset) -> tuple:
        visible = self.visible_dimensions()
        if "_Netcdf4Coordinates" in obj.raw and obj.is_scale:
            by_id = {dim.dimid: name for name, dim in self._chain_items()}
            return tuple(by_id[int(i)] for i in obj.numbers("_Netcdf4Coordinates"))
        scales = obj.scales()
        if scales is not None:
            return tuple(posixpath.basename(paths[-1]) for paths in scales)
        if obj.name in visible:
            return (obj.name,)
        if not obj.shape:
            return ()
        own = list(self.dimensions[self.group].values())
        used: Counter = Counter()
        names = []
        for size in obj.shape:
            candidates = [d.name for d in own if d.size == size]
            names.append(candidates[used[size]])
            used[size] += 1
        return tuple(names)

    def _chain_items(self) -> list:
        # h5netcdf's ChainMap order: the root's dimensions first, a nearer group's win.
        items: dict = {}
        for group in self.chain:
            items.update(self.dimensions[group])
        return list(items.items())


def _netcdf_attribute(kind: str, shape: tuple, value: Any, width: int) -> Any:
    """An attribute's value as h5netcdf returns it (before xarray decodes bytes to str)."""
    if kind == "empty":
        return b"" if value is None else np.array([], dtype=value.dtype)
    out = _attribute_value(kind, shape, value, width)
    if kind == "fixed_strings" and width > 1:
        out = out.decode("utf-8", "surrogateescape") if np.isscalar(out) else \
            [b.decode("utf-8", "surrogateescape") for b in out.flat]
    elif kind in ("fixed_strings", "variable_strings") and not np.isscalar(out):
        out = out.tolist()
    if not np.isscalar(out) and len(out) == 1:
        return out[0]
    return out


def _attributes(raw: dict, where: str, manager: Any) -> dict:
    """The netCDF attributes of `raw` (the core's read of an object's attributes), as h5netcdf
    gives them; those of a type the core does not read (an enum ``_FillValue``: h5netcdf gives its
    integer) read through `manager` (the object's AttributeManager: h5py, for a local file)."""
    attrs = {}
    for name, (kind, shape, value, width) in raw.items():
        if name in _HIDDEN_ATTRIBUTES:
            continue
        if kind == "unsupported" and not manager._obj._file._is_url():
            try:
                attrs[name] = manager[name]
                continue
            except Exception:  # noqa: BLE001 - h5py missing or failing too: left out below, warned of
                pass
        if kind in ("unsupported", "references"):
            what = value if kind == "unsupported" else "object references"
            warnings.warn(_args.without_secrets(f"attribute '{name}' of {where} is left out: h5tile does not read its "
                                                f"type ({what})"), stacklevel=4)
            continue
        v = _netcdf_attribute(kind, shape, value, width)
        if name not in ("_FillValue", "missing_value") and isinstance(v, bytes):
            try:
                v = v.decode("utf-8")
            except UnicodeDecodeError:
                warnings.warn(_args.without_secrets(f"'utf-8' codec can't decode bytes for attribute {name!r} of "
                                                    f"{where}, returning bytes undecoded."), UnicodeWarning,
                              stacklevel=4)
        attrs[name] = v
    return attrs


# h5tile's filter names -> the key h5netcdf's Variable.filters() sets for them. h5netcdf maps
# HDF5 filter ids: 307 bzip2, 32015 zstd and 32004 (which is LZ4's id) "blosc"; Blosc's own
# 32001 sets nothing. Kept as h5netcdf has it, so that the encodings are equal.
_FILTER_KEYS = {"szip": "szip", "bzip2": "bzip2", "lz4": "blosc", "zstd": "zstd"}


def _filters(dataset: Dataset) -> dict:
    """The filter keys of the encoding, as h5netcdf's Variable.filters() gives them."""
    info = dataset._info
    names = list(info["filters"] or ())
    values = list(info.get("filter_values") or ())
    out: dict = {"zlib": False, "szip": False, "bzip2": False, "blosc": False, "zstd": False,
                 "shuffle": "shuffle" in names, "fletcher32": "fletcher32" in names}
    for name, opts in zip(names, values + [()] * (len(names) - len(values))):
        key = _FILTER_KEYS.get(name)
        if key is not None:
            out[key] = True
            if opts and key != "szip":  # h5py gives szip's options as names; h5tile as numbers
                out["complevel"] = int(opts[0])
    if dataset.compression == "gzip":
        out["zlib"] = True
        out["complevel"] = dataset.compression_opts
    elif dataset.compression is not None:
        out["compression"] = dataset.compression
        out["compression_opts"] = dataset.compression_opts
    return out


class H5tileStore(AbstractDataStore):
    """xarray's view of one group of a file read through h5tile (what ``open_dataset`` builds
    the Dataset from)."""

    def __init__(self, file: File, group: Optional[str] = None, phony_dims: str = "access",
                 netcdf: Optional[_Netcdf] = None):
        """`netcdf`: the view of the file another store of it built (open_groups_as_dict: one view
        for all the groups, its phony dimensions numbered across them as h5netcdf numbers them)."""
        if phony_dims not in ("sort", "access"):
            raise ValueError(_args.without_secrets(f"unknown value {phony_dims!r} for phony_dims: use 'sort' "
                                                   "(netCDF-C's naming) or 'access' (h5netcdf's default)"))
        self.file = file
        group = "/" + (group or "").strip("/")
        if netcdf is None:
            file._preload()  # every dataset and attribute read below, from two opens of the file in all
        kind, _ = file._links().resolve(group)
        if kind != "group":
            what = f" (it is a {kind})" if kind not in ("missing", "dangling") else ""
            raise OSError(_args.without_secrets(f"group '{group}' not found in '{file._shown}'{what}"))
        self.group = group
        if netcdf is None:
            netcdf = _Netcdf(file, group, phony_dims)
        else:
            netcdf.focus(group)
        self.netcdf = netcdf

    def get_variables(self) -> FrozenDict:
        variables = {}
        self.netcdf.focus(self.group, warn=False)  # a view shared with the stores of other groups
        for obj in self.netcdf.variables():
            dims = self.netcdf.dimensions_of(obj)
            visible = self.netcdf.visible_dimensions()
            for axis, name in enumerate(dims):
                size = visible[name].size if name in visible else obj.shape[axis]
                if size != obj.shape[axis]:
                    raise NotImplementedError(
                        _args.without_secrets(f"'{obj.path}' in '{self.file._shown}' has {obj.shape[axis]} "
                                              f"elements along dimension '{name}' of size {size}: h5tile does not "
                                              "pad a variable shorter than its unlimited dimension (use "
                                              "engine='h5netcdf' for this file)"))
            name = obj.name.replace(_NON_COORD_PREFIX, "")
            variables[name] = self._variable(obj, dims)
        return FrozenDict(variables)

    def _variable(self, obj: _StoredDataset, dims: tuple) -> Variable:
        dataset = obj.dataset
        if dims and obj.name == dims[0] and (len(dims) == 1 or (len(dims) == 2 and dataset.dtype == "S1")):
            # A dimension coordinate (of characters too: xarray joins them into strings), which
            # xarray reads whole for its index as soon as the open returns: read here, from the
            # open the catalog came from (one fetch of a URL).
            data = H5tileArray(dataset)._getitem(())  # as a lazy read gives it (strings as str)
        else:
            data = indexing.LazilyIndexedArray(H5tileArray(dataset))
        encoding: dict = {}
        dtype = dataset.dtype
        encoding["dtype"] = str if dtype.kind == "O" else dtype
        if dtype.metadata and "enum" in dtype.metadata:
            name = self.netcdf.enum_name(obj.path, dtype)
            if name is not None:  # as h5netcdf's: the type's name travels to the next write
                encoding["dtype"] = np.dtype(dtype, metadata={"enum": dtype.metadata["enum"], "enum_name": name})
        chunks = dataset.chunks if obj.shape else None
        if chunks:
            encoding["contiguous"] = False
            encoding["chunksizes"] = chunks
            encoding["preferred_chunks"] = dict(zip(dims, chunks))
        else:
            encoding["contiguous"] = True
            encoding["chunksizes"] = None
        encoding.update(_filters(dataset))
        encoding["source"] = self.file.filename
        encoding["original_shape"] = obj.shape
        return Variable(dims, data, _attributes(obj.raw, f"'{obj.path}'", dataset.attrs), encoding)

    def get_attrs(self) -> FrozenDict:
        group = self.file[self.group] if self.group != "/" else self.file
        return FrozenDict(_attributes(group.attrs._raw(), f"group '{self.group}'", group.attrs))

    def get_dimensions(self) -> FrozenDict:
        return FrozenDict((name, dim.size) for name, dim in self.netcdf.dimensions[self.group].items())

    def get_encoding(self) -> dict:
        return {"unlimited_dims": {name for name, dim in self.netcdf.dimensions[self.group].items() if dim.unlimited}}

    def close(self, **kwargs: Any) -> None:
        """Nothing to close: no file is held open between reads. As with engine="h5netcdf" (whose
        file manager reopens the file), the Dataset's lazy variables still read after it."""


def _path_of(filename_or_obj: Any) -> Optional[str]:
    """A local path made absolute (as engine="h5netcdf" reports it in encoding["source"]), a URL
    as given; None for anything else (file objects, bytes)."""
    if isinstance(filename_or_obj, (str, os.PathLike)):
        return _normalize_path(filename_or_obj)
    return None


class H5tileBackendEntrypoint(BackendEntrypoint):
    """Opens netCDF-4 and HDF5 files with h5tile: ``xr.open_dataset(path, engine="h5tile")``.

    Arguments besides xarray's own: ``group`` (a path, "/" by default), ``phony_dims`` ("access",
    the default, or "sort": how dimensions of datasets without dimension scales are named, as
    h5netcdf's argument), ``threads`` (worker threads of each read; 0: h5tile's setting), and
    h5netcdf's keywords as _open_file takes them. Paths and URLs are what :class:`h5tile.File`
    opens (local files, http(s)://, s3://). ``open_datatree`` and ``open_groups_as_dict`` open every
    group below ``group`` at once.
    """

    description = "Open netCDF-4 and HDF5 files with h5tile (parallel reads, no HDF5 global lock) in xarray"
    url = "https://github.com/h5tile/h5tile#xarray"
    open_dataset_parameters = ("filename_or_obj", "mask_and_scale", "decode_times", "concat_characters",
                               "decode_coords", "drop_variables", "use_cftime", "decode_timedelta", "group",
                               "phony_dims", "threads", "format", "lock", "invalid_netcdf", "decode_vlen_strings",
                               "driver", "driver_kwds", "storage_options")

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        path = _path_of(filename_or_obj)
        if path is None:
            return False
        if "://" in path:
            return posixpath.splitext(path.split("?")[0])[1] in (".nc", ".nc4", ".h5", ".hdf5")
        try:
            with open(path, "rb") as f:
                return f.read(8) == _HDF5_SIGNATURE
        except OSError:
            return False

    def open_dataset(self, filename_or_obj: Any, *, mask_and_scale: bool = True, decode_times: bool = True,
                     concat_characters: bool = True, decode_coords: bool = True,
                     drop_variables: Optional[Iterable[str]] = None, use_cftime: Any = None,
                     decode_timedelta: Any = None, group: Optional[str] = None, phony_dims: Optional[str] = None,
                     threads: int = 0, **h5netcdf_keywords: Any) -> "xarray.Dataset":
        """The group `group` of the file as a Dataset (see the class). h5netcdf's keywords are
        taken as _open_file says."""
        with _opened(filename_or_obj, threads, h5netcdf_keywords) as file:
            store = H5tileStore(file, group=group, phony_dims=phony_dims or "access")
            return StoreBackendEntrypoint().open_dataset(
                store, mask_and_scale=mask_and_scale, decode_times=decode_times, concat_characters=concat_characters,
                decode_coords=decode_coords, drop_variables=drop_variables, use_cftime=use_cftime,
                decode_timedelta=decode_timedelta)

    def open_groups_as_dict(self, filename_or_obj: Any, *, mask_and_scale: bool = True, decode_times: bool = True,
                            concat_characters: bool = True, decode_coords: bool = True,
                            drop_variables: Optional[Iterable[str]] = None, use_cftime: Any = None,
                            decode_timedelta: Any = None, group: Optional[str] = None,
                            phony_dims: Optional[str] = None, threads: int = 0,
                            **h5netcdf_keywords: Any) -> "dict[str, xarray.Dataset]":
        """Every group of the file below `group` (the root by default), the group itself first,
        each as open_dataset opens it, by its path (relative to `group` where one is given, "."
        for `group` itself, as xarray names them):
        what ``xr.open_groups(path, engine="h5tile")`` returns, as engine="h5netcdf" gives it. One
        open of the file and one netCDF view serve all the groups (phony dimensions numbered
        across them as h5netcdf numbers them)."""
        from xarray.core.treenode import NodePath
        with _opened(filename_or_obj, threads, h5netcdf_keywords) as file:
            parent = "/" + (group or "").strip("/")
            first = H5tileStore(file, group=parent, phony_dims=phony_dims or "access")
            groups = {}
            for path in first.netcdf.subgroups(parent):
                store = first if path == parent else H5tileStore(file, group=path, phony_dims=phony_dims or "access",
                                                                 netcdf=first.netcdf)
                name = str(NodePath(path).relative_to(NodePath(parent))) if group else path
                groups[name] = StoreBackendEntrypoint().open_dataset(
                    store, mask_and_scale=mask_and_scale, decode_times=decode_times,
                    concat_characters=concat_characters, decode_coords=decode_coords, drop_variables=drop_variables,
                    use_cftime=use_cftime, decode_timedelta=decode_timedelta)
            return groups

    def open_datatree(self, filename_or_obj: Any, **kwargs: Any) -> Any:
        """The file's groups as an ``xarray.DataTree`` (``xr.open_datatree(path, engine="h5tile")``),
        from open_groups_as_dict (the same keywords)."""
        from xarray.backends.common import datatree_from_dict_with_io_cleanup
        return datatree_from_dict_with_io_cleanup(self.open_groups_as_dict(filename_or_obj, **kwargs))


@contextlib.contextmanager
def _opened(filename_or_obj: Any, threads: int, keywords: dict) -> Iterator[File]:
    """The h5tile.File of `filename_or_obj` (_open_file), inside one open of it where it is a URL:
    the File's own check, its catalog (listing, descriptions, attributes) and the index
    coordinates xarray reads at open come from one fetch of the object, as from h5netcdf's one
    open. The File reads as every File does once the open is over."""
    path = _path_of(filename_or_obj)
    kept = None
    if path is not None and "://" in path and _args.is_url(path):
        # The object's S3 settings first (File applies them again), then the one open.
        _storage_options.apply(_storage_options.s3_settings(keywords.get("storage_options"), path), path)
        kept = _h5tile._KeptOpen(path)
    try:
        yield _open_file(filename_or_obj, threads, keywords)
    finally:
        del kept


def _open_file(filename_or_obj: Any, threads: int, keywords: dict) -> File:
    """The h5tile.File of a path or URL, with h5netcdf's keywords taken where they mean something
    to h5tile and refused, naming them, where they do not: ``format`` ("NETCDF4" only),
    ``driver``/``driver_kwds`` (h5py's drivers of one file, as h5tile.File takes them), ``lock``
    (taken, unused: h5tile reads without HDF5's global lock), ``invalid_netcdf`` (a writer's),
    ``decode_vlen_strings`` (True: strings read as str), ``storage_options`` (fsspec's keys for
    an s3:// URL, as :class:`h5tile.File` takes them: credentials, endpoint, region)."""
    path = _path_of(filename_or_obj)
    if path is None:
        raise TypeError(_args.without_secrets("engine='h5tile' opens a path or URL, not "
                                              f"{type(filename_or_obj).__name__}"))
    keywords = dict(keywords)
    fmt = keywords.pop("format", None)
    if fmt not in (None, "NETCDF4"):
        raise ValueError(_args.without_secrets(f"format={fmt!r}: engine='h5tile' reads netCDF-4 (HDF5) files, "
                                               "format='NETCDF4'"))
    keywords.pop("lock", None)  # h5tile's reads take no global lock
    keywords.pop("invalid_netcdf", None)  # what a writer may make; a reader reads what is there
    if keywords.pop("decode_vlen_strings", True) is not True:
        raise ValueError("decode_vlen_strings=False: engine='h5tile' reads variable-length strings as str "
                         "(h5netcdf's default); decode them with .str.encode() where bytes are wanted")
    options = dict(keywords.pop("driver_kwds", None) or {})
    storage = keywords.pop("storage_options", None)
    if storage:
        options["storage_options"] = storage
    driver = keywords.pop("driver", None)
    if driver is not None:
        options["driver"] = driver
    if keywords:
        raise TypeError(_args.without_secrets(f"open_dataset() got an unexpected keyword argument "
                                              f"{next(iter(keywords))!r} for engine='h5tile'"))
    return File(path, threads=threads, **options)


def _register_writer() -> None:
    """``to_netcdf(engine="h5tile")``: xarray keeps its netCDF writers in a table of its own
    (``xarray.backends.writers.WRITEABLE_STORES``, not an entry point); importing this module, as
    any ``open_dataset(..., engine="h5tile")`` does, adds h5tile's (h5tile._xarray_writes)."""
    try:
        from xarray.backends import writers
    except ImportError:  # pragma: no cover - an xarray before its writers module: no engine="h5tile" writes
        return
    from ._xarray_writes import H5tileWriteStore
    writers.WRITEABLE_STORES.setdefault("h5tile", H5tileWriteStore.open)


_register_writer()
