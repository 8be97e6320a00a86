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

__all__ = ["table", "parse_size", "check_environment", "host_pool_held_bytes"]  # and each setting's pair, below

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


def host_pool_held_bytes() -> int:
    """Host memory kept for reuse now (at most :func:`host_pool_bytes`)."""
    return _h5tile.host_pool_held_bytes()


def _size(value: Size, row: dict) -> int:
    """A size setting's value; 0 (or "0", or "off" where the setting takes it) is passed on for the
    core to take (``host_pool_bytes``, ``lz4_block_size``) or refuse."""
    if isinstance(value, str) and (value == "0" or value == "off" and "`off`" in row["values"]):
        return 0
    if _args.is_integer(value) and value == 0:
        return 0
    return _bytes(value, row["name"])


def _count(value: int, row: dict) -> int:
    low, high = int(row["least"]), int(row["most"])
    if not _args.is_integer(value):
        raise ArgumentTypeError(_args.without_secrets(f"{row['name']} must be a whole number from {low} to {high}, "
                                                      f"not {_args._shown(value)}"))
    if not low <= value <= high:
        bound = f"at least {low}" if value < low else f"at most {high}"
        raise InvalidArgumentError(_args.without_secrets(f"{row['name']} must be a whole number from {low} to {high}, "
                                                         f"not {value!r} (it must be {bound})"))
    return int(value)


def _word(value: str, row: dict) -> str:
    """A mode's word (the core checks which words it takes)."""
    if not isinstance(value, str):
        words = row["values"].replace("`", "")
        raise ArgumentTypeError(_args.without_secrets(f"{row['name']} must be one of its words ({words}), not "
                                                      f"{_args._shown(value)}"))
    return value


# What each kind of setting takes from Python, as the core's value: (check, what the getter gives back).
_KINDS = {
    "count": (_count, int),
    "size": (_size, int),
    "flag": (lambda value, row: int(_flag(value, row["name"])), bool),
    "seconds": (lambda value, row: _seconds(value, row["name"]), float),
    "mode": (_word, str),
    "text": (lambda value, row: _args.path(row["name"], value), str),
}


def _define(row: dict) -> None:
    """Makes the getter ``<name>()`` and the setter ``set_<name>(value)`` of one row of the core's table."""
    name, (check, given) = row["name"], _KINDS[row["kind"]]

    def getter():
        return given(_h5tile.get_setting(name))

    def setter(value):
        _h5tile.set_setting(name, check(value, row))

    doc = row["doc"][:1].upper() + row["doc"][1:]
    takes = "True or False" if row["kind"] == "flag" else row["values"]
    getter.__doc__ = (f"{doc}.\n\nTakes {takes}; default {row['default']}; environment variable "
                      f"``{row['variable']}``; changed with :func:`set_{name}`.")
    setter.__doc__ = f"Set {name} ({takes}): {row['doc']}."
    for function, function_name in ((getter, name), (setter, "set_" + name)):
        function.__name__ = function.__qualname__ = function_name
        function.__module__ = __name__
        globals()[function_name] = function
        __all__.append(function_name)


for _row in _h5tile.settings_table():
    _define(dict(_row))
del _row


def _nvcomp_from_wheel() -> None:
    """Points GPU decoding at the nvidia-libnvcomp-cu13 wheel's library where no library is set
    (H5TILE_NVCOMP_LIBRARY or settings.set_nvcomp_library) and the wheel is installed. Looks for
    the file only: nothing is imported or loaded until a device read decodes."""
    if _h5tile.get_setting("nvcomp_library"):
        return
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "nvidia", "libnvcomp", "lib64", "libnvcomp.so.6")
        if os.path.isfile(candidate):
            _h5tile.set_setting("nvcomp_library", os.path.abspath(candidate))
            return


_nvcomp_from_wheel()
