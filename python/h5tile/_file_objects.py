"""h5tile.File over a Python file-like object (h5py takes io.BytesIO, open files, fsspec files):
the object's bytes become a file the core reads by a name of its own ("python://<id>/<name>"),
through the byte-source seam, as it reads a URL (read-only; no external links, no virtual
sources beside it).

- An object with a file descriptor of a regular file (``open(path, "rb")``, fsspec's local
  files): read by ``pread`` on a duplicate of that descriptor, in parallel, without the GIL.
- Any other (io.BytesIO, fsspec's remote files): its bytes are read once, serially, from start to
  end, into memory that the engine then reads in parallel. A remote object of many gigabytes is
  better opened by its URL (http(s)://, s3://), which reads only what is asked for.
"""
from __future__ import annotations

import io
import itertools
import os
import stat
import threading
import weakref
from typing import Any

from . import _arguments as _args
from . import _h5tile

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def is_file_object(value: Any) -> bool:
    """Whether `value` is a file-like object (not a path): it reads, seeks and tells."""
    return not isinstance(value, (str, bytes, os.PathLike)) and all(
        callable(getattr(value, m, None)) for m in ("read", "seek", "tell"))


def _descriptor(obj: Any) -> "int | None":
    """The object's file descriptor where it has one of a regular file, else None."""
    try:
        fd = obj.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation, ValueError):
        return None
    try:
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None


def _contents(obj: Any) -> bytes:
    """Every byte of the object, read from its start; its position is put back."""
    getbuffer = getattr(obj, "getbuffer", None)
    if callable(getbuffer):  # io.BytesIO: its buffer, without moving
        return bytes(getbuffer())
    position = obj.tell()
    try:
        obj.seek(0)
        data = obj.read()
    finally:
        obj.seek(position)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _args.ArgumentTypeError(_args.without_secrets(f"the file object's read() gave {type(data).__name__}, "
                                                            "not bytes: open it in binary mode ('rb')"))
    return bytes(data)


def register(obj: Any, owner: Any) -> str:
    """Registers `obj` with the core and returns the name to read it by; the name is forgotten
    when `owner` (the File) closes or is collected."""
    shown = getattr(obj, "name", None)
    base = os.path.basename(shown) if isinstance(shown, str) and shown else "file"
    with _ids_lock:
        name = f"python://{os.getpid()}.{next(_ids)}/{base}"
    fd = _descriptor(obj)
    if fd is not None:
        _h5tile.register_descriptor_file(name, fd)
    else:
        _h5tile.register_memory_file(name, _contents(obj))
    weakref.finalize(owner, _h5tile.unregister_file, name)
    return name


def unregister(name: str) -> None:
    _h5tile.unregister_file(name)
