"""h5tile's C++ core (use the h5tile package, not this module)"""

from collections.abc import Mapping, Sequence
import os
from typing import Annotated

from numpy.typing import NDArray

from h5tile import (
    ArgumentTypeError as ArgumentTypeError,
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
    ProbeFailedError as ProbeFailedError,
    UnsupportedTypeError as UnsupportedTypeError,
    VirtualSourceError as VirtualSourceError
)


def consolidate(path_in: str | os.PathLike, dataset: str, path_out: str | os.PathLike, threads: int, sync: bool, keep_previous: bool, chunk: Sequence[int], compression: str, level: int, shuffle: bool, fletcher32: bool, progress: object | None = None, probe: bool | None = None, mode: str = 'x') -> None: ...

def wait_all(handles: Sequence[_WriteHandle]) -> None: ...

def to_file(array: Annotated[NDArray, dict(writable=False)], path: str | os.PathLike, dataset: str, sized_dtype: str, layout: str, mode: str, ranks: int, sync: bool, keep_previous: bool, chunk: Sequence[int], compression: str, level: int, shuffle: bool, fletcher32: bool, progress: object | None = None) -> _WriteHandle: ...

def write_tile(comm: object, array: Annotated[NDArray, dict(writable=False)], path: str | os.PathLike, dataset: str, sized_dtype: str, global_shape: Sequence[int], offset: Sequence[int], layout: str, mode: str, sync: bool, keep_previous: bool, chunk: Sequence[int], compression: str, level: int, shuffle: bool, fletcher32: bool) -> None: ...

def read_tile(comm: object, path: str | os.PathLike, dataset: str, device: int, threads: int, probe: bool | None = None) -> tuple: ...

def check_dataset_name(dataset: str) -> str: ...

def without_secrets(text: str) -> str: ...

def is_remote(path: str | os.PathLike, writing: bool = False) -> bool:
    """
    Whether h5tile reads `path` as a URL rather than a local path (the core's Location); InvalidArgumentError naming the scheme for a URL of a scheme h5tile does not serve.
    """

def fence() -> None: ...

def from_file(path: str | os.PathLike, dataset: str, device: int, threads: int, progress: object | None = None, allow_external_sources: bool = False, verify_checksums: bool = False, probe: bool | None = None) -> object: ...

def read_into(out: NDArray, path: str | os.PathLike, dataset: str, sized_dtype: str, offset: Sequence[int], threads: int, progress: object | None = None, allow_external_sources: bool = False, verify_checksums: bool = False, probe: bool | None = None) -> None: ...

def read_box(path: str | os.PathLike, dataset: str, offset: Sequence[int], extent: Sequence[int], device: int, threads: int, allow_external_sources: bool = False, verify_checksums: bool = False, probe: bool | None = None) -> object: ...

def describe(path: str | os.PathLike, dataset: str, probe: bool | None = None) -> dict: ...

def describe_each(path: str | os.PathLike, datasets: Sequence[str], probe: bool | None = None) -> list:
    """
    describe() of each dataset, in order, from one open of the file (its size on disk not computed: describe() has none either).
    """

def list_objects(path: str | os.PathLike) -> list:
    """
    [(name, kind)] of every group, dataset and named datatype below the root, depth first.
    """

def list_links(path: str | os.PathLike) -> list:
    """
    [(group path, group id, [(name, kind, object, object id, target, file)])] of every group reached through hard links, root first; kind 'hard', 'soft' or 'external'.
    """

def register_memory_file(name: str, contents: bytes) -> None:
    """Makes `contents` readable as the file `name` (python://<id>/<name>)."""

def register_descriptor_file(name: str, fd: int) -> None:
    """
    Makes the regular file open as `fd` (duplicated) readable as the file `name` (python://<id>/<name>).
    """

def unregister_file(name: str) -> None:
    """Forgets a file registered by name."""

def describe_named_type(path: str | os.PathLike, name: str) -> dict:
    """
    {dtype, numpy_type, charset} of the named datatype `name` (as describe() gives them).
    """

def external_link_target(path: str | os.PathLike, link: str, allow_external: bool) -> tuple:
    """
    (file, object path there) of the external link `link`, under h5tile's rules for external links.
    """

def list_group_links(path: str | os.PathLike, group: str) -> tuple:
    """
    list_links' row of the one group at `group` (soft links followed), without the others.
    """

def read_attributes(path: str | os.PathLike, object: str) -> list:
    """
    [(name, kind, shape, value, string width)] of the object's attributes, in h5py's order (creation order where the object tracks it, else name order).
    """

def read_attributes_of_each(path: str | os.PathLike, objects: Sequence[str]) -> list:
    """read_attributes() of each object, in order, from one open of the file."""

def write_attribute(path: str | os.PathLike, object: str, name: str, value: Annotated[NDArray, dict(writable=False)], sized: str) -> None: ...

def write_into(path: str | os.PathLike, dataset: str, value: Annotated[NDArray, dict(writable=False)], sized: str, offset: Sequence[int], step: Sequence[int], threads: int) -> None:
    """
    h5tile::write_into: `value` (the dataset's dtype, C-contiguous) into the elements at offset + i * step, in place.
    """

def write_string_attribute(path: str | os.PathLike, object: str, name: str, strings: Sequence[bytes], shape: Sequence[int], fixed_width: int) -> None: ...

def write_empty_attribute(path: str | os.PathLike, object: str, name: str, dtype: str) -> None: ...

def delete_attribute(path: str | os.PathLike, object: str, name: str) -> None: ...

def hold_for_writing(path: str | os.PathLike) -> None: ...

def flush_writes(path: str | os.PathLike) -> None: ...

def hdf5_library_version() -> list[int]:
    """
    (major, minor, release) of the HDF5 library h5tile reads and writes files with.
    """

def lend_for_writing(path: str | os.PathLike) -> None:
    """Lends the held file to h5py's HDF5 (h5tile::lend_for_writing)."""

def take_back_for_writing(path: str | os.PathLike) -> None:
    """Ends lend_for_writing (h5tile::take_back_for_writing)."""

def release_for_writing(path: str | os.PathLike) -> None: ...

def create_file(path: str | os.PathLike, exclusive: bool, track_order: bool = False, userblock_size: int = 0) -> None: ...

def create_group(path: str | os.PathLike, name: str, track_order: bool = False) -> None: ...

def delete_link(path: str | os.PathLike, name: str) -> None: ...

def move_link(path: str | os.PathLike, source: str, dest: str) -> None: ...

def create_link(path: str | os.PathLike, name: str, kind: str, target: str, file: str = '') -> None:
    """
    A link `name`: soft (to the path `target`), external (`target` in `file`), hard (to the object at `target`).
    """

def copy_object(source: str | os.PathLike, source_name: str, destination: str | os.PathLike, dest_name: str, shallow: bool = False, expand_soft: bool = False, expand_external: bool = False, expand_refs: bool = False, without_attrs: bool = False) -> None: ...

def resize_dataset(path: str | os.PathLike, name: str, shape: Sequence[int]) -> None: ...

def create_virtual_dataset(path: str | os.PathLike, name: str, dtype: str, numpy_type: str, charset: str, named_type: str, shape: Sequence[int], max_shape: Sequence[int | None], fill_value: bytes, mappings: Sequence[tuple[bytes, str, str, bytes]]) -> None:
    """
    A virtual dataset (h5tile::create_virtual_dataset); mappings: (selection, file, dataset, source selection), selections as H5Sencode writes them.
    """

def held_for_writing(path: str | os.PathLike) -> bool:
    """
    Whether this process holds `path` open for writing (h5tile::held_for_writing).
    """

def commit_datatype(path: str | os.PathLike, name: str, dtype: str, numpy_type: str = '', charset: str = '') -> None:
    """
    A named datatype (h5tile::commit_datatype): `dtype` the core's name, `numpy_type` as create_dataset's.
    """

def write_strings(path: str | os.PathLike, dataset: str, values: Sequence[bytes], shape: Sequence[int], offset: Sequence[int], step: Sequence[int]) -> None:
    """
    Variable-length strings (each one's bytes) written into a part of a dataset (h5tile::write_strings).
    """

def create_dataset(path: str | os.PathLike, name: str, dtype: str, shape: Sequence[int], max_shape: Sequence[int | None], chunk: Sequence[int], compressor: str = '', level: int = -1, shuffle: bool = False, fletcher32: bool = False, compact: bool = False, fill_value: bytes = ..., track_order: bool = False, numpy_type: str = '', charset: str = '', fill_time: str = 'ifset', scale_offset: int | None = None, external: Sequence[tuple[str, int, int | None]] = [], null_space: bool = False, named_type: str = '', track_times: bool = False) -> None:
    """
    An empty dataset (h5tile::create_dataset); `max_shape`: None for an unlimited axis, empty for `shape`; `numpy_type`: a structured type in DatasetInfo::numpy_type's JSON form (`dtype` then V<n>).
    """

def open_hdf5_objects() -> int:
    """
    How many HDF5 objects the HDF5 inside this module has open (0 between h5tile's calls): for leak checks.
    """

def hdf5_linkage() -> str:
    """
    "static": HDF5 is inside this module with its symbols hidden, so that another HDF5 in the process (Legate's, which cuPyNumeric puts in the global symbol scope) cannot take its calls; "shared": it links HDF5's shared library (where no usable static one was found when it was built).
    """

def parse_size(text: str) -> int: ...

def check_environment() -> None: ...

def host_pool_held_bytes() -> int: ...

def get_setting(name: str) -> int | float | str: ...

def set_setting(name: str, value: int | float | str) -> None: ...

def settings_table() -> list:
    """
    Every setting as the core's table lists it (settings.table() in h5tile.settings).
    """

def cuda_device_count() -> int: ...

def compressors() -> list[str]: ...

def known_compressors() -> list[str]:
    """
    Every compressor h5tile writes, built or not (the codec table's), in the order compressors() lists them.
    """

def last_remote_io() -> dict: ...

def set_s3_settings(prefix: str, settings: Mapping[str, str]) -> None:
    """
    h5tile::set_s3_settings: AWS variables for the s3:// URLs under `prefix`, laid over the environment's (an empty value unsets one; an empty dict forgets the prefix).
    """

def last_read_pattern() -> dict: ...

def last_device_io() -> dict: ...
