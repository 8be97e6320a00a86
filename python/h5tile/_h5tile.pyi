"""h5tile's C++ core (use the h5tile package, not this module)"""

from collections.abc import Sequence
import os
from typing import Annotated

from numpy.typing import NDArray

from h5tile import (
    CancelledError as CancelledError,
    DatasetNotFoundError as DatasetNotFoundError,
    Error as Error,
    FileAlreadyExistsError as FileAlreadyExistsError,
    Hdf5Error as Hdf5Error,
    InvalidArgumentError as InvalidArgumentError,
    IoError as IoError,
    IsADirectoryPathError as IsADirectoryPathError,
    NoSuchFileError as NoSuchFileError,
    NotADatasetError as NotADatasetError,
    NotHdf5FileError as NotHdf5FileError,
    OperationError as OperationError,
    UnsupportedTypeError as UnsupportedTypeError,
    VirtualSourceError as VirtualSourceError
)


def consolidate(path_in: str | os.PathLike, dataset: str, path_out: str | os.PathLike, threads: int, sync: bool, keep_previous: bool, progress: object | None = None) -> None: ...

def to_file(array: Annotated[NDArray, dict(writable=False)], path: str | os.PathLike, dataset: str, opaque_size: int, layout: str, mode: str, ranks: int, sync: bool, keep_previous: bool, chunk: Sequence[int], progress: object | None = None) -> _WriteHandle: ...

def write_tile(comm: object, array: Annotated[NDArray, dict(writable=False)], path: str | os.PathLike, dataset: str, opaque_size: int, global_shape: Sequence[int], offset: Sequence[int], layout: str, mode: str, sync: bool, keep_previous: bool, chunk: Sequence[int]) -> None: ...

def read_tile(comm: object, path: str | os.PathLike, dataset: str, device: int, threads: int) -> tuple: ...

def fence() -> None: ...

def from_file(path: str | os.PathLike, dataset: str, device: int, threads: int, progress: object | None = None, allow_external_sources: bool = False, verify_checksums: bool = False) -> object: ...

def read_into(out: NDArray, path: str | os.PathLike, dataset: str, opaque_size: int, offset: Sequence[int], threads: int, progress: object | None = None, allow_external_sources: bool = False, verify_checksums: bool = False) -> None: ...

def read_box(path: str | os.PathLike, dataset: str, offset: Sequence[int], extent: Sequence[int], device: int, threads: int, allow_external_sources: bool = False, verify_checksums: bool = False) -> object: ...

def describe(path: str | os.PathLike, dataset: str) -> dict: ...

def cuda_device_count() -> int: ...

def last_device_io() -> dict: ...
