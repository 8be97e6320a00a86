"""What h5tile's groups and datasets share: :class:`_Object`, a name in a file, its attributes and
its parent (:class:`File` and :class:`Group` are in _objects.py, :class:`Dataset` in _dataset.py)."""
from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from ._attributes import AttributeManager

if TYPE_CHECKING:
    from ._objects import File, Group



class _Object:
    """What groups and datasets share: a name in a file, attributes, a parent."""

    def __init__(self, file: File, name: str):
        self._file = file
        self._name = name

    @property
    def name(self) -> str:
        """The full path of the object in its file ("/", "/grp/temp")."""
        return self._name

    @property
    def file(self) -> File:
        """The :class:`File` this object belongs to."""
        return self._file

    @property
    def parent(self) -> Group:
        """The group holding this object (the root group's parent is the root group)."""
        return self._file[posixpath.dirname(self._name) or "/"]

    @property
    def attrs(self) -> AttributeManager:
        """The object's attributes, as a mapping (read; write in mode "a" or "r+")."""
        return AttributeManager(self)

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and (self._file.filename, self._name) == (other._file.filename, other._name)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._file.filename, self._name))

    def __bool__(self) -> bool:
        return self._file._open
