"""Named datatypes (HDF5's committed types) as h5py's ``Datatype``: ``f["t"].dtype``."""
from __future__ import annotations

import numpy as np

from . import _arguments as _args
from . import _dtypes
from . import _h5tile
from ._base import _Object


class Datatype(_Object):
    """A named datatype of an HDF5 file (h5py's ``Datatype``): its NumPy dtype as h5py gives it,
    its name and attributes."""

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the type, as h5py gives it (described once per File)."""
        key = ("datatype", self._name)
        info = self._file._catalog.described.get(key)
        if info is None:
            self._file._check_open()
            info = _h5tile.describe_named_type(self._file._path_text, self._name)
            self._file._catalog.described[key] = info
        return _dtypes.numpy_dtype(info)

    def __repr__(self) -> str:
        if not self._file._open:
            return "<Closed HDF5 named type>"
        return _args.without_secrets(f'<HDF5 named type "{self._name.rsplit("/", 1)[-1]}" (dtype {self.dtype.str})>')
