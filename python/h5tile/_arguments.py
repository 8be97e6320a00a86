"""The checks that every public function of the package makes on its arguments before they reach
the C++ core, so that a wrong argument is an error that names it and says what it should be (not
nanobind's "incompatible function arguments" with the C++ signature).

A value of the wrong type raises :class:`h5tile.ArgumentTypeError` (a ``TypeError``, and an
``InvalidArgumentError``, as these checks raised before); a value of the right type that is out
of range raises :class:`h5tile.InvalidArgumentError` (a ``ValueError``)."""
from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _h5tile
from ._h5tile import ArgumentTypeError, InvalidArgumentError

UINT64_MAX = 2**64 - 1
INT32_MAX = 2**31 - 1
LAYOUTS = ("auto", "virtual", "contiguous", "chunked")
MODES = ("w", "a", "x", "w-")
COMPRESSORS = (*_h5tile.known_compressors(), "none")  # the core's codec table (built or not)


_URL_SCHEMES = ("http", "https", "s3", "webhdfs", "swebhdfs")  # the core's (src/io/http/url.cpp)


def is_url(text: str) -> bool:
    """Whether the core reads ``text`` as a URL (scheme://..., a scheme it knows), not a path: the
    core's own test (its Location), so that the two never disagree. False for a URL of a scheme the
    core does not serve ("gs://"), which every call refuses by name (:func:`absolute` too)."""
    try:
        return _h5tile.is_remote(text)
    except InvalidArgumentError:
        return False


def check_writable_location(text: str, what: str, objects: bool = False) -> None:
    """Refuses a URL as the target of a write (`what`: the function, for the message), before
    anything is written, and names a scheme h5tile does not serve ("gs://") rather than writing
    it as a local folder "gs:". With `objects` (a writer whose tiles may be objects: layout
    virtual), an s3:// URL passes: the core then checks it (and refuses HTTP(S) and WebHDFS)."""
    if objects and text[:5].lower() == "s3://":
        return
    if _h5tile.is_remote(text, writing=True):
        raise InvalidArgumentError(without_secrets(f"{what} writes local files, not '{redacted(text)}': remote "
                                                   "writes are not supported yet here (write a local file; "
                                                   "h5tile.to_file uploads an s3:// object)"))


def absolute(text: str) -> str:
    """A path made absolute (from the current folder now), for work that runs later or elsewhere
    (Legate tasks, Dask blocks); a URL as it is (abspath would make 'http://h/f' a local path), an
    empty name too, and a final '/' kept (abspath would make them the current folder and a file's
    name), for the core to refuse them by name."""
    if not text or _h5tile.is_remote(text):  # a scheme h5tile does not serve: refused here, by name
        return text
    path = os.path.abspath(text)
    return path + "/" if text.endswith("/") and not path.endswith("/") else path


def without_secrets(text: str) -> str:
    """``text`` without the secrets that a URL in it may carry: the core's one redaction
    (``h5tile::without_secrets``), which removes every URL's user information, query string and
    fragment (an ``s3://`` key that holds '?' or '#' is shown up to them). Every message, repr and
    warning of the package goes through it, as every message of the core does."""
    try:
        text.encode("utf-8")
    except UnicodeError:  # lone surrogates, which the core's UTF-8 text cannot hold: shown escaped
        try:
            data = text.encode("utf-8", "surrogateescape")  # os.fsdecode's undecodable bytes, as \xNN
        except UnicodeError:
            data = text.encode("utf-8", "backslashreplace")
        text = data.decode("utf-8", "backslashreplace")
    return _h5tile.without_secrets(text)


def redacted(path: Any) -> str:
    """How messages show a path or URL that the user gave (the one place the package words one):
    a URL as scheme://host/path, without user information, query string or fragment (presigned URLs
    carry signatures there), as the C++ core shows it; anything else as ``str`` shows it, through
    :func:`without_secrets`."""
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    scheme, sep, rest = text.partition("://")
    if sep and scheme.lower() in _URL_SCHEMES:  # not python:// (a file-like object's name shows whole)
        # The whole text is one URL, spaces included (in running text, a space would end it).
        authority, _, tail = rest.split("#", 1)[0].split("?", 1)[0].partition("/")
        text = f"{scheme.lower()}://{authority.rpartition('@')[2]}/{tail}"
    return without_secrets(text)


def _shown(value: Any) -> str:
    """The value and its type, as messages show a wrong one (a path or URL as :func:`redacted`
    shows it)."""
    text = repr(redacted(value)) if isinstance(value, (str, bytes, os.PathLike)) else without_secrets(repr(value))
    if len(text) > 80:  # cut after the redaction: a URL cut first could show a part of its secret
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def is_integer(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def path(name: str, value: Any) -> str:
    """A file path: a str, bytes or os.PathLike, as a str; never with a NUL (the system would cut
    the name there)."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(without_secrets(f"{name} must be a path (str or os.PathLike), not {_shown(value)}"))
    text = os.fsdecode(os.fspath(value))
    if "\0" in text:
        raise InvalidArgumentError(without_secrets(f"{name} {redacted(text)!r} holds a NUL character"))
    return text


def dataset_name(value: Any, name: str = "dataset_name") -> str:
    """A dataset name: a str (the core checks its components)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(without_secrets(f"{name} must be a str naming a dataset, such as '/data', not "
                                                f"{_shown(value)}"))
    try:
        value.encode("utf-8")
    except UnicodeError:
        raise InvalidArgumentError(without_secrets(f"{name} {value!r} is not valid text (a lone surrogate)")) from None
    return value


def flag(name: str, value: Any) -> bool:
    """True or False (NumPy's bool too); nothing else is taken for either."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(without_secrets(f"{name} must be True or False, not {_shown(value)}"))
    return bool(value)


def whole(name: str, value: Any, limit: int = 2**32 - 1) -> int:
    """A whole number in [0, limit], as an int."""
    if not is_integer(value):
        raise ArgumentTypeError(without_secrets(f"{name} must be a whole number from 0 to {limit}, not "
                                                f"{_shown(value)}"))
    if not 0 <= value <= limit:
        raise InvalidArgumentError(without_secrets(f"{name} must be a whole number from 0 to {limit}, not {value!r}"))
    return int(value)


def wholes(name: str, values: Any) -> "list[int]":
    """A sequence of whole numbers >= 0 (offsets, shapes), as ints."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ArgumentTypeError(without_secrets(f"{name} must be a sequence of whole numbers >= 0, not "
                                                f"{_shown(values)}"))
    items = list(values)
    for i, v in enumerate(items):
        if not is_integer(v):
            raise ArgumentTypeError(without_secrets(f"{name} {tuple(items)}: element {i} is {_shown(v)}, not a whole "
                                                    "number >= 0"))
        if not 0 <= v <= UINT64_MAX:
            raise InvalidArgumentError(without_secrets(f"{name} {tuple(items)}: element {i} is {v!r}, not a whole "
                                                       "number from 0 to 2**64 - 1"))
    return [int(v) for v in items]


def chunk_list(chunks: Optional[Sequence[int]], name: str = "chunks") -> "list[int]":
    """None (no chunk shape: []) or a sequence of positive lengths."""
    if chunks is None:
        return []
    lengths = wholes(name, chunks)
    if any(c == 0 for c in lengths):
        raise InvalidArgumentError(without_secrets(f"{name} must be positive lengths, not {tuple(lengths)}"))
    return lengths


def text(what: str, value: Any, names: Sequence[str]) -> str:
    """A str (one of ``names``; the core checks which, in its own words)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(without_secrets(f"{what} must be one of {', '.join(repr(n) for n in names)}, not "
                                                f"{_shown(value)}"))
    return value


def name_in(what: str, value: Any, names: Sequence[str]) -> str:
    """One of ``names``."""
    if not isinstance(value, str):
        raise ArgumentTypeError(without_secrets(f"{what} must be one of {', '.join(repr(n) for n in names)}, not "
                                                f"{_shown(value)}"))
    if value not in names:
        raise InvalidArgumentError(without_secrets(f"{what} must be one of {', '.join(repr(n) for n in names)}, not "
                                                   f"{_shown(value)}"))
    return value


def compression(compression: Optional[str], level: Optional[int], shuffle: Any, fletcher32: Any) -> tuple:
    """The compression arguments as the core takes them: (name, level or -1, shuffle, fletcher32)."""
    if compression is not None and not isinstance(compression, str):
        raise ArgumentTypeError(without_secrets(f"compression must be a name such as 'gzip', or None, not "
                                                f"{_shown(compression)}"))
    if level is not None and not is_integer(level):
        raise ArgumentTypeError(without_secrets(f"level must be a whole number or None, not {_shown(level)}"))
    if level is not None and not -2**31 < level < 2**31:
        raise InvalidArgumentError(without_secrets(f"level must be a whole number from -2**31 + 1 to 2**31 - 1 or "
                                                   f"None, not {level!r}"))
    return (name_in("compression", compression or "none", COMPRESSORS), -1 if level is None else int(level),
            flag("shuffle", shuffle), flag("fletcher32", fletcher32))


def level_or_opts(level: Optional[int], compression_opts: Optional[int]) -> Optional[int]:
    """The compressor's level, given as ``level`` or under h5py's name ``compression_opts`` (one of
    them, or both equal)."""
    if compression_opts is None:
        return level
    if not is_integer(compression_opts):
        raise ArgumentTypeError(without_secrets(f"compression_opts (h5py's name for level) must be a whole number or "
                                                f"None, not {_shown(compression_opts)}"))
    if not -2**31 < compression_opts < 2**31:
        raise InvalidArgumentError(without_secrets(f"compression_opts (h5py's name for level) must be a whole number "
                                                   f"from -2**31 + 1 to 2**31 - 1 or None, not {compression_opts!r}"))
    if level is not None and level != compression_opts:
        raise InvalidArgumentError(without_secrets(f"level={level!r} and compression_opts={compression_opts!r} "
                                                   "disagree: compression_opts is h5py's name for the level; pass one "
                                                   "of them"))
    return compression_opts


def automatic_chunks(chunks: Any, layout: str) -> tuple:
    """(chunks, layout) with h5py's ``chunks=True`` (a chunk shape chosen for you) as h5tile says
    it: no chunk shape, layout "chunked" (where the layout is "auto")."""
    if chunks is not True:
        return chunks, layout
    if layout == "contiguous":
        raise InvalidArgumentError("chunks=True asks for a chunked dataset, which layout='contiguous' is not: "
                                   "pass layout='chunked' (or 'auto')")
    return None, "chunked" if layout == "auto" else layout


def array_like(name: str, value: Any) -> Any:
    """An array to read into: anything with DLPack or an array interface."""
    if not any(hasattr(value, a) for a in ("__dlpack__", "__array_interface__", "__cuda_array_interface__")):
        raise ArgumentTypeError(without_secrets(f"{name} must be an array (NumPy, CuPy, or anything with DLPack), not "
                                                f"{_shown(value)}"))
    return value


def device(value: Any) -> int:
    """None (host memory: -1) or a CUDA device ordinal."""
    if value is None:
        return -1
    if not is_integer(value):
        raise ArgumentTypeError(without_secrets(f"device must be None (host) or a CUDA device ordinal >= 0, not "
                                                f"{_shown(value)}"))
    if not 0 <= value <= INT32_MAX:
        raise InvalidArgumentError(without_secrets(f"device must be None (host) or a CUDA device ordinal >= 0, not "
                                                   f"{value!r}"))
    return int(value)


def probe(value: Any) -> Optional[bool]:
    """True, False or None (the setting)."""
    if value is not None and not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(without_secrets(f"probe must be True, False or None (the setting), not "
                                                f"{_shown(value)}"))
    return None if value is None else bool(value)


def progress(value: Any) -> Optional[Callable[[int, int], Optional[bool]]]:
    """None or a callable taking (bytes_done, bytes_total)."""
    if value is not None and not callable(value):
        raise ArgumentTypeError(without_secrets(f"progress must be callable as progress(bytes_done, bytes_total), or "
                                                f"None, not {_shown(value)}"))
    return value


def communicator(value: Any) -> Any:
    """An mpi4py communicator (anything with its Get_rank, Get_size and allgather)."""
    if not all(callable(getattr(value, m, None)) for m in ("Get_rank", "Get_size", "allgather")):
        raise ArgumentTypeError(without_secrets(f"comm must be an mpi4py communicator (with Get_rank, Get_size and "
                                                f"allgather), not {_shown(value)}"))
    return value
