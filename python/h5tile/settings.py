"""h5tile's process-wide defaults, to read and change at run time.

Each starts from its environment variable (read once, at the first use) or its default, and
applies to every later call that does not override it. Sizes are bytes, or strings in the
syntax of the environment variables ("8M", "1.5G", "4096"; binary suffixes K, M, G, T).

:func:`table` lists every setting (its name, environment variable, the values it takes, its
default and what it sets) from the core's own table, which the core parses the environment and
checks values against; docs/SETTINGS.md shows the same table.

Example::

    import h5tile
    h5tile.settings.set_threads(8)
    h5tile.settings.set_task_size("16M")
    print(h5tile.settings.task_size())   # 16777216

Setters raise :class:`h5tile.InvalidArgumentError` (a ``ValueError``) for a bad value, and
:class:`h5tile.ArgumentTypeError` (a ``TypeError``, and an ``InvalidArgumentError``) naming the
setting for a value of the wrong type: booleans are ``True`` or ``False`` (not ``'no'``, ``2`` or
``None``), counts are whole numbers, sizes are whole numbers or size strings. They are
thread-safe; a change applies to operations that start after it.

The environment variables are checked the same way: a count (``H5TILE_THREADS``) takes no size
suffix ("2K" is an error, not 2048), a flag is 0 or 1; a bad value raises InvalidArgumentError
naming the variable when the setting is first used.
"""
from __future__ import annotations

import os
import sys
from typing import Union

from . import _arguments as _args
from . import _h5tile
from ._h5tile import ArgumentTypeError, InvalidArgumentError

__all__ = [
    "table", "parse_size", "check_environment", "threads", "set_threads", "task_size", "set_task_size", "alignment", "set_alignment",
    "staging_bytes", "set_staging_bytes", "host_pool_bytes", "set_host_pool_bytes", "host_pool_held_bytes", "raw_io",
    "set_raw_io", "early_reads", "set_early_reads", "probe", "set_probe", "probe_timeout", "set_probe_timeout",
    "remote_connections", "set_remote_connections", "remote_block_size", "set_remote_block_size", "remote_timeout",
    "set_remote_timeout", "remote_retries", "set_remote_retries", "lz4_block_size", "set_lz4_block_size",
    "direct_io", "set_direct_io", "cold_reads", "set_cold_reads", "cold_readers", "set_cold_readers",
    "cold_request_size", "set_cold_request_size", "gds", "set_gds", "gpu_decode", "set_gpu_decode", "nvcomp_library",
    "set_nvcomp_library",
]

Size = Union[int, str]


def parse_size(text: str) -> int:
    """Bytes of a size string: "4096", "512M", "1.5g", "2 GiB" (as the environment variables and
    the h5tile command read sizes). Raises InvalidArgumentError for anything else."""
    if not isinstance(text, str):
        raise ArgumentTypeError(_args.without_secrets("parse_size: text must be a size string such as '8M', not "
                                                      f"{_args._shown(text)}"))
    return _h5tile.parse_size(text)


def check_environment() -> None:
    """Read every setting's environment variable now (each is otherwise read at its first use):
    raises InvalidArgumentError naming the first one whose value is wrong."""
    _h5tile.check_environment()


def _bytes(value: Size, what: str) -> int:
    """A size setting's value: a size string, or a whole number of bytes from 1 to 2**64 - 1."""
    if isinstance(value, str):
        try:
            return parse_size(value)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(_args.without_secrets(f"{what}: {e}")) from None
    if not _args.is_integer(value):
        raise ArgumentTypeError(_args.without_secrets(f"{what} must be a positive number of bytes or a size string "
                                                      f"like '8M', not {_args._shown(value)}"))
    if not 0 < value <= _args.UINT64_MAX:
        raise InvalidArgumentError(_args.without_secrets(f"{what} must be a positive number of bytes, at most "
                                                         f"2**64 - 1, or a size string like '8M', not {value!r}"))
    return int(value)


def _flag(value: bool, what: str) -> bool:
    """A boolean setting's value: True or False (NumPy's bool too), nothing merely truthy."""
    if not isinstance(value, (bool, _args.np.bool_)):
        raise ArgumentTypeError(_args.without_secrets(f"{what} must be True or False, not {_args._shown(value)}"))
    return bool(value)


def _mode(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise ArgumentTypeError(_args.without_secrets(f"{what} must be 'auto', 'on' or 'off', not "
                                                      f"{_args._shown(value)}"))
    return value


def _whole(value: int, what: str, low: int, high: int) -> int:
    """A count setting's value: a whole number from ``low`` to ``high`` (not a bool, not 4.0)."""
    if not _args.is_integer(value):
        raise ArgumentTypeError(_args.without_secrets(f"{what} must be a whole number from {low} to {high}, not "
                                                      f"{_args._shown(value)}"))
    if not low <= value <= high:
        raise InvalidArgumentError(_args.without_secrets(f"{what} must be a whole number from {low} to {high}, not "
                                                         f"{value!r}"))
    return int(value)


def _seconds(value: float, what: str) -> float:
    """A time limit's value: a number of seconds (the core checks its range)."""
    if isinstance(value, (bool, _args.np.bool_)) or not isinstance(value, (int, float, _args.np.integer,
                                                                           _args.np.floating)):
        raise ArgumentTypeError(_args.without_secrets(f"{what} must be a number of seconds, not {_args._shown(value)}"))
    try:
        return float(value)
    except OverflowError:
        raise InvalidArgumentError(_args.without_secrets(f"{what} must be above 0 and at most one day, not "
                                                         f"{value!r}")) from None


def table() -> list:
    """Every setting, as the core's table lists it: dicts of ``name`` (this module's getter; its
    setter is ``set_<name>``), ``variable`` (its environment variable), ``kind`` ("count", "size",
    "flag", "mode", "seconds" or "text"), ``least`` and ``most`` (the bounds of a count, size or
    time; a size's ``most`` of 0: no bound), ``values`` (what it takes, in words), ``default`` and
    ``doc`` (what it sets)."""
    return [dict(row) for row in _h5tile.settings_table()]


def _bounds(name: str) -> tuple:
    """The lowest and highest value of the count setting `name`, from the core's table."""
    row = next(row for row in _h5tile.settings_table() if row["name"] == name)
    return int(row["least"]), int(row["most"])


def threads() -> int:
    """Worker threads of every operation (and default ranks of :func:`h5tile.to_file`)."""
    return _h5tile.threads()


def set_threads(n: int) -> None:
    """Set the number of worker threads (at least 1)."""
    low, high = _bounds("threads")
    if not _args.is_integer(n):
        raise ArgumentTypeError(_args.without_secrets(f"threads must be a whole number from {low} to {high}, not "
                                                      f"{_args._shown(n)}"))
    if not low <= n <= high:
        raise InvalidArgumentError(_args.without_secrets(f"threads must be a whole number from {low} to {high} (at "
                                                         f"least {low}), not {n!r}"))
    _h5tile.set_threads(int(n))


def task_size() -> int:
    """Bytes moved by one I/O task; larger transfers are split into tasks of this size."""
    return _h5tile.task_size()


def set_task_size(size: Size) -> None:
    """Set the task size: bytes, or a size string ("8M")."""
    _h5tile.set_task_size(_bytes(size, "task_size"))


def alignment() -> int:
    """File-space alignment of raw data in files h5tile writes."""
    return _h5tile.alignment()


def set_alignment(size: Size) -> None:
    """Set the alignment (a power of two): bytes, or a size string ("4K")."""
    _h5tile.set_alignment(_bytes(size, "alignment"))


def staging_bytes() -> int:
    """Pinned host memory used to stage device reads and writes, per device."""
    return _h5tile.staging_bytes()


def set_staging_bytes(size: Size) -> None:
    """Set the staging memory per device: bytes, or a size string ("256M")."""
    _h5tile.set_staging_bytes(_bytes(size, "staging_bytes"))


def host_pool_bytes() -> int:
    """Most host memory kept for reuse by the arrays reads return: a result of 128 KiB or more
    that the program frees is kept, and the next read of the same size reuses it without the
    page faults of new memory. Kept results of 32 MiB or more are marked MADV_FREE: the kernel
    takes them back when memory is needed elsewhere; smaller ones are kept as they are, at most
    256 MiB of them."""
    return _h5tile.host_pool_bytes()


def set_host_pool_bytes(size: Size) -> None:
    """Set the most host memory kept for reuse: bytes, a size string ("4G"), or 0 for none (a lower
    value frees kept memory down to it at once)."""
    none = isinstance(size, str) and size in ("0", "off") or _args.is_integer(size) and size == 0
    _h5tile.set_host_pool_bytes(0 if none else _bytes(size, "host_pool_bytes"))


def lz4_block_size() -> int:
    """Bytes of each block of the lz4 chunks h5tile writes (0: one block per chunk, hdf5plugin's
    ``LZ4()`` default, and h5tile's). Every LZ4 filter reads any block size: the size is in each
    chunk. Smaller blocks let nvCOMP decode a chunk on many parts of the GPU at once and cost the
    CPU codec some speed."""
    return _h5tile.lz4_block_size()


def set_lz4_block_size(size: Size) -> None:
    """Set the lz4 block size: bytes or a size string ("64K"), 4 KiB to 1 GiB, or 0 for one block
    per chunk."""
    one = isinstance(size, str) and size == "0" or _args.is_integer(size) and size == 0
    _h5tile.set_lz4_block_size(0 if one else _bytes(size, "lz4_block_size"))


def host_pool_held_bytes() -> int:
    """Host memory kept for reuse now (at most :func:`host_pool_bytes`)."""
    return _h5tile.host_pool_held_bytes()


def raw_io() -> bool:
    """Whether bytes move with pread/pwrite where the storage allows (else through HDF5)."""
    return _h5tile.raw_io()


def set_raw_io(on: bool) -> None:
    """Move bytes with pread/pwrite where the storage allows (True), or every byte through HDF5 (False)."""
    _h5tile.set_raw_io(_flag(on, "raw_io"))


def early_reads() -> bool:
    """Whether reads of virtual datasets h5tile wrote start from its tile index at once."""
    return _h5tile.early_reads()


def set_early_reads(on: bool) -> None:
    """Start reads of virtual datasets h5tile wrote from its tile index (True), or wait for HDF5 (False)."""
    _h5tile.set_early_reads(_flag(on, "early_reads"))


def probe() -> bool:
    """Whether reads, ``describe`` and the checks open a file's metadata in a child process first
    (untrusted files): HDF5 crashing or hanging on a damaged file then raises
    :class:`h5tile.ProbeFailedError` instead of ending this process. Each call's ``probe=``
    overrides it. It cannot catch damage in the data itself (chunks that filters decode), a file
    changed between the probe and the read, or HDF5 opens by other calls (``to_file`` in append
    mode); it costs one fork and one more opening of the metadata per call."""
    return _h5tile.probe()


def set_probe(on: bool) -> None:
    """Open files' metadata in a child process first (True), or not (False)."""
    _h5tile.set_probe(_flag(on, "probe"))


def probe_timeout() -> float:
    """Seconds that the child process of a probe may take before it is killed (ProbeFailedError)."""
    return _h5tile.probe_timeout()


def set_probe_timeout(seconds: float) -> None:
    """Set the probe's time limit: seconds, above 0 and at most one day."""
    _h5tile.set_probe_timeout(_seconds(seconds, "probe_timeout"))


def remote_connections() -> int:
    """Connections to a server kept open for reads of a URL and shared by the workers (the
    requests in flight at once)."""
    return _h5tile.remote_connections()


def set_remote_connections(n: int) -> None:
    """Set the connections per remote object: 1 to 1024."""
    _h5tile.set_remote_connections(_whole(n, "remote_connections", *_bounds("remote_connections")))


def remote_block_size() -> int:
    """Bytes of a remote object fetched by its first request, and the unit of HDF5's metadata reads of it."""
    return _h5tile.remote_block_size()


def set_remote_block_size(size: Size) -> None:
    """Set the remote block size: bytes, or a size string ("4M"); 4 KiB to 1 GiB."""
    _h5tile.set_remote_block_size(_bytes(size, "remote_block_size"))


def remote_timeout() -> float:
    """Seconds to connect, and the longest a response may stall; a range is not retried after four times this."""
    return _h5tile.remote_timeout()


def set_remote_timeout(seconds: float) -> None:
    """Set the remote timeout: seconds, above 0 and at most one day."""
    _h5tile.set_remote_timeout(_seconds(seconds, "remote_timeout"))


def remote_retries() -> int:
    """Retries of one range after a failure worth retrying, with exponential backoff and jitter."""
    return _h5tile.remote_retries()


def set_remote_retries(n: int) -> None:
    """Set the retries of one range: 0 to 100."""
    _h5tile.set_remote_retries(_whole(n, "remote_retries", *_bounds("remote_retries")))


def direct_io() -> str:
    """"auto", "on" or "off": O_DIRECT reads of data that is not in the page cache (auto: for files
    of half the machine's memory or more)."""
    return _h5tile.direct_io()


def set_direct_io(mode: str) -> None:
    _h5tile.set_direct_io(_mode(mode, "direct_io"))


def cold_reads() -> str:
    """"auto", "parallel" or "stream": how large reads of local files read data that is not in the
    page cache. "parallel" reads it as warm data is read (one task per worker); "stream" reads it in
    file order by ``cold_readers()`` readers of ``cold_request_size()`` bytes each (a few large
    requests: what reads cold data fastest on the disks where it was measured); "auto" (the default)
    samples the read's pages in the page cache (mincore) and streams reads of 64 MiB or more that
    are mostly not cached. ``h5tile.last_read_pattern()`` says which ran and what the sample found."""
    return _h5tile.cold_reads()


def set_cold_reads(mode: str) -> None:
    if not isinstance(mode, str):
        raise ArgumentTypeError(_args.without_secrets("cold_reads must be 'auto', 'parallel' or 'stream', not "
                                                      f"{_args._shown(mode)}"))
    _h5tile.set_cold_reads(mode)


def cold_readers() -> int:
    """Readers of a streamed cold read (``cold_reads()``)."""
    return _h5tile.cold_readers()


def set_cold_readers(n: int) -> None:
    """Set the readers of a streamed cold read: 1 to 4096."""
    _h5tile.set_cold_readers(_whole(n, "cold_readers", *_bounds("cold_readers")))


def cold_request_size() -> int:
    """Bytes of one request of a streamed cold read."""
    return _h5tile.cold_request_size()


def set_cold_request_size(size: Size) -> None:
    """Set the request size of a streamed cold read: bytes, or a size string ("16M"); 1 MiB to 1 GiB."""
    _h5tile.set_cold_request_size(_bytes(size, "cold_request_size"))


def gds() -> str:
    """"auto", "on" or "off": GPUDirect Storage (cuFile) for device reads."""
    return _h5tile.gds()


def set_gds(mode: str) -> None:
    _h5tile.set_gds(_mode(mode, "gds"))


def gpu_decode() -> str:
    """"auto", "on" or "off": compressed chunks read into device memory decoded on the GPU with
    nvCOMP. "auto" (the default) times the GPU and the CPU on the first chunks of the first read of
    32 MiB or more per device and codec (deflate, zstd, lz4, with or without shuffle) and keeps the
    faster for the process (smaller reads before it: the CPU); deflate's Adler-32 is checked either
    way, zstd and lz4 chunks carry no checksum. "on" decodes deflate, zstd and lz4 on the GPU and
    fails where the GPU cannot decode a compressed dataset; "off" decodes on the CPU.
    ``h5tile.last_device_io()`` says which did and why."""
    return _h5tile.gpu_decode()


def set_gpu_decode(mode: str) -> None:
    _h5tile.set_gpu_decode(_mode(mode, "gpu_decode"))


def nvcomp_library() -> str:
    """The nvCOMP library that GPU decoding loads (dlopen): a path, or "" for dlopen's own search
    for libnvcomp.so.6. Where it is "" when the package is imported, the package sets it to the
    library of the nvidia-libnvcomp-cu13 wheel if that is installed."""
    return _h5tile.nvcomp_library()


def set_nvcomp_library(path: Union[str, "os.PathLike[str]"]) -> None:
    _h5tile.set_nvcomp_library(_args.path("nvcomp_library", path))


def _nvcomp_from_wheel() -> None:
    """Points GPU decoding at the nvidia-libnvcomp-cu13 wheel's library where no library is set
    (H5TILE_NVCOMP_LIBRARY or settings.set_nvcomp_library) and the wheel is installed. Looks for
    the file only: nothing is imported or loaded until a device read decodes."""
    if nvcomp_library():
        return
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "nvidia", "libnvcomp", "lib64", "libnvcomp.so.6")
        if os.path.isfile(candidate):
            set_nvcomp_library(os.path.abspath(candidate))
            return


_nvcomp_from_wheel()
