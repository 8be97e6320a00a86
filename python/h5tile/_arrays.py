"""How the arrays users pass reach the core: NumPy, CuPy (or anything with DLPack or the CUDA
array interface), Legate stores and cuPyNumeric arrays, checked for a dtype h5tile writes, with a
CuPy array's queued work done first."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import _arguments as _args
from ._h5tile import UnsupportedTypeError

SUPPORTED_KINDS = {"b", "i", "u", "f", "c", "V", "S"}


def as_array(array: Any) -> Any:
    """The object as something nanobind takes without a copy: DLPack or the buffer protocol.
    Objects with only ``__cuda_array_interface__`` go through CuPy (zero-copy); objects with
    only ``__array_interface__`` or ``__array__`` (cuPyNumeric) through NumPy."""
    if isinstance(array, np.ndarray) or hasattr(array, "__dlpack__"):
        return array
    # Legate before CUDA: a Legate store's __cuda_array_interface__ aborts the process (an
    # uncaught C++ exception) on a machine without GPUs, so it must not even be looked up.
    if hasattr(array, "__legate_data_interface__") and not hasattr(array, "__array__"):
        return from_legate(array)
    if hasattr(array, "__cuda_array_interface__"):
        import cupy
        return cupy.asarray(array)
    return np.asarray(array)


def is_legate(obj: Any) -> bool:
    """A Legate array or store, or a cuPyNumeric array, in a program that runs Legate."""
    return "legate.core" in sys.modules and hasattr(obj, "__legate_data_interface__")


def from_legate(obj: Any) -> Any:
    """A Legate array or store through its data interface (version 1): the one field's store,
    mapped into this process (``get_physical_store``, which waits for the tasks writing it), as
    NumPy (host memory) or CuPy (GPU framebuffer memory), without a copy."""
    interface = obj.__legate_data_interface__
    if interface.get("version") != 1:
        raise UnsupportedTypeError(_args.without_secrets("Legate data interface version "
                                                         f"{interface.get('version')}: h5tile reads version 1"))
    fields = list(interface["data"].values())
    if len(fields) != 1:
        raise UnsupportedTypeError(_args.without_secrets(f"a Legate array with {len(fields)} fields: h5tile writes "
                                                         "arrays of one field"))
    array = fields[0]
    if getattr(array, "nullable", False):
        raise UnsupportedTypeError("a nullable Legate array: h5tile has no place for its null mask")
    physical = array.data.get_physical_store()
    allocation = physical.get_inline_allocation()
    if "FBMEM" in str(allocation.target) or "ZCMEM" in str(allocation.target):
        import cupy
        return cupy.asarray(_Mapped(physical, "__cuda_array_interface__", allocation.__cuda_array_interface__))
    return np.asarray(_Mapped(physical, "__array_interface__", allocation.__array_interface__))


class _Mapped:
    """Exports a mapped Legate store's array interface and keeps the mapping alive as long as
    the NumPy or CuPy view made from it (which holds this object as its base)."""

    def __init__(self, physical: Any, name: str, interface: dict):
        self._physical = physical
        setattr(self, name, interface)


def queued_work_done(array: Any) -> None:
    """Work queued on CuPy's current stream of ``array``'s device, which may still make or read
    it, done: h5tile copies device memory on streams of its own, and the core waits only for the
    device's default stream (``with cupy.cuda.Stream():`` blocks queue elsewhere)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(array, cupy.ndarray):
        with array.device:
            cupy.cuda.get_current_stream().synchronize()


def prepare(array: Any, name: str = "array") -> "tuple[Any, str]":
    """(array for the core, the NumPy name of a sized dtype (V<n>, S<n>) passed as uint8 bytes, or
    ""); errors name the argument ``name``. A CuPy array's queued work is done first."""
    array = as_array(array)
    queued_work_done(array)
    dtype = np.dtype(getattr(array, "dtype", None)) if getattr(array, "dtype", None) is not None else None
    if dtype is not None:
        if dtype.kind in ("U", "O"):
            what = "read into" if name == "out" else "write"
            raise UnsupportedTypeError(_args.without_secrets(f"{name}: unsupported dtype {dtype}: h5tile does not "
                                                             f"{what} str or object arrays; it reads and writes "
                                                             "fixed-length byte strings (NumPy S<n>: encode str "
                                                             "arrays with np.char.encode(a, 'utf-8')) and reads "
                                                             "variable-length strings as object arrays "
                                                             "(from_file, read_box)"))
        if dtype.kind not in SUPPORTED_KINDS or (dtype.kind == "V" and dtype.fields is not None):
            raise UnsupportedTypeError(_args.without_secrets(f"{name}: unsupported dtype {dtype}: expected bool, "
                                                             "int8..int64, uint8..uint64, float16, float32, "
                                                             "float64, complex64, complex128, V<n> or S<n>"))
        if (dtype.kind == "f" and dtype.itemsize not in (2, 4, 8)) or (dtype.kind == "c" and dtype.itemsize not in (8, 16)):
            raise UnsupportedTypeError(_args.without_secrets(f"{name}: unsupported dtype {dtype} "
                                                             f"({dtype.itemsize * 8}-bit): h5tile writes float16, "
                                                             "float32, float64, complex64 and complex128"))
        if dtype.byteorder == ">":
            raise UnsupportedTypeError(_args.without_secrets(f"{name}: big-endian dtype {dtype}: convert with "
                                                             "array.astype(array.dtype.newbyteorder('='))"))
        if dtype.kind in ("V", "S"):
            if not isinstance(array, np.ndarray):
                raise UnsupportedTypeError(_args.without_secrets(f"{name}: {dtype.kind}<n> arrays must be NumPy "
                                                                 "arrays"))
            size = dtype.itemsize
            return np.ascontiguousarray(array).view(np.uint8).reshape(array.shape + (size,)), f"{dtype.kind}{size}"
    return array, ""
