"""Dimension scales as h5py shows them (``ds.dims``), read from the attributes HDF5's dimension
scale API writes: DIMENSION_LIST (per axis, references to the scale datasets; h5tile reads them
as the paths they lead to), DIMENSION_LABELS (per axis, a label), and on each scale CLASS
("DIMENSION_SCALE") and NAME (its name). Attaching, detaching, labelling and making scales
(writes) go through h5py's own dimension scale calls (HDF5's H5DS API), on the file h5tile lends
to h5py for them (File._through_h5py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, List, Tuple

import numpy as np

from . import _arguments as _args

if TYPE_CHECKING:
    from ._dataset import Dataset


def _text(value: Any) -> str:
    """An attribute's string as str (h5py decodes names and labels as UTF-8)."""
    if value is None:
        return ""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", "surrogateescape")
    return str(value)


def is_scale(dataset: Dataset) -> bool:
    """Whether `dataset` is a dimension scale (its CLASS attribute says so, as H5DSis_scale)."""
    return _text(dataset.attrs.get("CLASS")).rstrip("\0") == "DIMENSION_SCALE"


def scale_name(dataset: Dataset) -> str:
    """A scale's NAME attribute ("" where it has none), as h5py's keys of a dimension."""
    return _text(dataset.attrs.get("NAME")).rstrip("\0")


class DimensionProxy:
    """One axis of a dataset (``ds.dims[i]``): its label and the scales attached to it, as
    h5py's ``DimensionProxy`` (a mapping of scale names to scale datasets, iterated by name)."""

    def __init__(self, dataset: Dataset, dimension: int):
        self._dataset, self._dimension = dataset, dimension

    @property
    def label(self) -> str:
        """The axis' label ("" where it has none)."""
        labels = self._dataset.attrs.get("DIMENSION_LABELS")
        if labels is None:
            return ""
        labels = np.asarray(labels, dtype=object).reshape(-1)
        return _text(labels[self._dimension]) if self._dimension < len(labels) else ""

    @label.setter
    def label(self, value: Any) -> None:
        self._change(f"label axis {self._dimension}",
                     lambda h5ds, dataset, open_: h5ds.set_label(dataset, self._dimension, _encoded(value)))

    def attach_scale(self, scale: Any) -> None:
        """Attaches the dimension scale ``scale`` (a dataset of this file) to this axis."""
        self._change(f"attach a scale to axis {self._dimension}",
                     lambda h5ds, dataset, open_: h5ds.attach_scale(dataset, open_(scale.name), self._dimension))

    def detach_scale(self, scale: Any) -> None:
        """Detaches the dimension scale ``scale`` from this axis."""
        self._change(f"detach a scale from axis {self._dimension}",
                     lambda h5ds, dataset, open_: h5ds.detach_scale(dataset, open_(scale.name), self._dimension))

    def _change(self, what: str, change: Any) -> None:
        change_scales(self._dataset, what, change)

    def _attached(self) -> "List[str] | None":
        """The paths of the scales attached to this axis; None where the dataset has no
        DIMENSION_LIST (no scales on any axis)."""
        lists = self._dataset.attrs.get("DIMENSION_LIST")
        if lists is None:
            return None
        attached = np.asarray(lists, dtype=object).reshape(-1)[self._dimension]
        return [p[0] if isinstance(p, tuple) else p for p in (attached or ())]

    def _paths(self) -> List[str]:
        """The paths of the scales attached to this axis. RuntimeError where it has none (HDF5's
        H5DSiterate_scales fails then, and h5py raises that)."""
        paths = self._attached()
        if paths is None:
            raise RuntimeError(_args.without_secrets(f"dataset '{self._dataset.name}' has no dimension scales "
                                                     "attached (no DIMENSION_LIST attribute)"))
        if not paths:  # H5DSiterate_scales fails for an axis without scales too, and h5py raises that
            raise RuntimeError(_args.without_secrets(f"axis {self._dimension} of dataset '{self._dataset.name}' has "
                                                     "no dimension scales attached"))
        return paths

    def _scales(self) -> List[Dataset]:
        file = self._dataset.file
        return [file[path] for path in self._paths()]

    def __len__(self) -> int:
        return len(self._attached() or ())

    def __getitem__(self, item: Any) -> Dataset:
        """A scale by its place on the axis (``dims[0][0]``) or by name (``dims[0]["x"]``)."""
        if isinstance(item, int):
            return self._scales()[item]
        wanted = _text(item)
        for scale in self._scales():
            if scale_name(scale) == wanted:
                return scale
        raise KeyError(_args.without_secrets(f"no scale named {wanted!r} on axis {self._dimension} of dataset "
                                             f"'{self._dataset.name}'"))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def keys(self) -> List[str]:
        return [scale_name(s) for s in self._scales()] if len(self) else []

    def values(self) -> List[Dataset]:
        return self._scales() if len(self) else []

    def items(self) -> List[Tuple[str, Dataset]]:
        return [(scale_name(s), s) for s in self.values()]

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, DimensionProxy) and other._dataset == self._dataset
                and other._dimension == self._dimension)

    def __hash__(self) -> int:
        return hash((self._dataset, self._dimension))

    def __repr__(self) -> str:
        if not self._dataset.file._open:
            return "<Dimension of closed HDF5 dataset>"
        return _args.without_secrets(f'<"{self.label}" dimension {self._dimension} of HDF5 dataset '
                                     f'"{self._dataset.name}">')


def _encoded(text: Any) -> bytes:
    """A name or label as HDF5's dimension scale calls take it (str as UTF-8, as h5py)."""
    return text if isinstance(text, bytes) else str(text).encode("utf-8")


def change_scales(dataset: Dataset, what: str, change: Any) -> None:
    """``change(h5py.h5ds, the dataset's h5py DatasetID, open)`` (``open(name)``: the h5py
    DatasetID of another dataset of the file), made with HDF5's dimension scale calls through h5py
    on the file h5tile lends it (File._through_h5py). Low-level identifiers, not h5py's high-level
    objects, whose methods a program (or a test harness) may have rebound."""
    from h5py import h5d, h5ds
    with dataset.file._through_h5py(f"{what} of dataset '{dataset.name}'") as f:
        def open_(name: str) -> Any:
            return h5d.open(f.id, _encoded(name))
        change(h5ds, open_(dataset.name), open_)


def make_scale(dataset: Dataset, name: Any) -> None:
    """Makes `dataset` a dimension scale named `name` (h5py's ``make_scale``)."""
    change_scales(dataset, "make a dimension scale", lambda h5ds, ds, open_: h5ds.set_scale(ds, _encoded(name)))


class DimensionManager:
    """``ds.dims``: one :class:`DimensionProxy` per axis, as h5py's ``DimensionManager``."""

    def __init__(self, dataset: Dataset):
        self._dataset = dataset

    def __len__(self) -> int:
        return self._dataset.ndim

    def __getitem__(self, index: int) -> DimensionProxy:
        if not -len(self) <= index < len(self):
            raise IndexError(_args.without_secrets(f"Index out of range: dataset '{self._dataset.name}' has "
                                                   f"{len(self)} dimensions, not {index + 1}"))
        return DimensionProxy(self._dataset, index % len(self))

    def __iter__(self) -> Iterator[DimensionProxy]:
        return (self[i] for i in range(len(self)))

    def create_scale(self, dataset: Any, name: str = "") -> None:
        """Makes ``dataset`` a dimension scale named ``name`` (h5py's deprecated ``create_scale``;
        ``dataset.make_scale(name)`` is the same)."""
        make_scale(dataset, name)

    def __repr__(self) -> str:
        if not self._dataset.file._open:
            return "<Dimensions of closed HDF5 dataset>"
        return _args.without_secrets(f'<Dimensions of HDF5 object "{self._dataset.name}">')
