"""NumPy basic indexing for :class:`h5tile.Dataset`: a selection as the box that covers it (read
in parallel) and the steps and dropped axes applied to what was read."""
from __future__ import annotations

import operator
from typing import Any, Tuple

import numpy as np

from . import _arguments as _args


class _Selection:
    """NumPy basic indexing of a shape, as a box to read and what to do to the box's array."""

    def __init__(self, key: Any, shape: Tuple[int, ...]):
        if not isinstance(key, tuple):
            key = (key,)
        self.scalar_request = key == ()
        if not shape and key not in ((), (Ellipsis,)):
            raise ValueError(_args.without_secrets(f"a scalar dataset takes () or ... as its selection, not {key!r}"))
        if any(k is None for k in key):
            raise TypeError("np.newaxis (None) is not supported in dataset selections")
        ellipses = sum(1 for k in key if k is Ellipsis)
        if ellipses > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if ellipses:
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = key[:at] + (slice(None),) * (len(shape) - len(key) + 1) + key[at + 1:]
        if len(key) > len(shape):
            raise IndexError(_args.without_secrets(f"too many indices for a dataset of {len(shape)} dimensions: "
                                                   f"{len(key)} given"))
        key = key + (slice(None),) * (len(shape) - len(key))
        self.offset, self.extent, self.post, result = [], [], [], []
        self.is_box = True
        for axis, (k, n) in enumerate(zip(key, shape)):
            if isinstance(k, slice):
                start, stop, step = k.indices(n)  # ValueError for a step of 0, as NumPy
                count = len(range(start, stop, step))
                if count == 0:
                    lo, hi = 0, 0
                elif step > 0:
                    lo, hi = start, start + (count - 1) * step + 1
                else:
                    lo, hi = start + (count - 1) * step, start + 1
                self.offset.append(lo)
                self.extent.append(hi - lo)
                self.post.append(slice(None) if step == 1 or count == 0 else slice(None, None, step) if step > 0
                                 else slice(None, None, step))
                if step != 1 and count > 1:
                    self.is_box = False
                result.append(count)
                continue
            if isinstance(k, (bool, np.bool_)) or isinstance(k, (list, np.ndarray)) or not hasattr(k, "__index__"):
                raise TypeError(_args.without_secrets("h5tile datasets take basic selections (integers, slices, "
                                                      f"...), not {k!r}: read a box and index the NumPy array"))
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(_args.without_secrets(f"index {i} is out of range for axis {axis} of size {n}"))
            i += n if i < 0 else 0
            self.offset.append(i)
            self.extent.append(1)
            self.post.append(0)
        self.result_shape = tuple(result)

    def finish(self, data: np.ndarray):
        if all(p == slice(None) for p in self.post):
            return data
        out = data[tuple(self.post)]
        return np.ascontiguousarray(out) if isinstance(out, np.ndarray) else out

    @staticmethod
    def text(key: Any) -> str:
        return repr(key)
