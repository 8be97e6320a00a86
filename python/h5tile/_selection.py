"""h5py's selections for :class:`h5tile.Dataset`: which keys ``ds[key]`` takes and what each
refusal raises, as h5py 3 decides (``Dataset.__getitem__``, ``h5py/_hl/selections.py`` and the
Selector of ``h5py/_selector.pyx``), and which boxes of the dataset a selection reads.

h5py is not NumPy, and a drop-in follows h5py where they differ: a step must be >= 1 (h5py has
no negative steps: ValueError); one list or 1-D integer array per key, in increasing order (no
duplicates: TypeError), negative entries counted from the end; a 1-D boolean array on one axis
(on a 1-D dataset only as the whole key); a boolean mask of the dataset's whole shape as the
whole key, giving a 1-D result; no ``np.newaxis`` (TypeError); two ellipses or too many indices
are ValueError (NumPy: IndexError); a Python bool is an integer (``ds[True]`` is ``ds[1]``).

A selection is read as boxes that hold only the chunks it needs (:meth:`_Selection.boxes`), each
placed into the result as it arrives (:meth:`_Selection.place`), so that memory stays at the
result and one box."""
from __future__ import annotations

import math
import operator
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arguments as _args

Box = Tuple[Tuple[int, ...], Tuple[int, ...]]  # (offset, extent)


class _PastTheEndError(IndexError, OSError):
    """A list entry equal to the axis' length. h5py's bound check lets it through (it refuses
    only entries beyond the length) and HDF5 then fails the read with OSError; NumPy says
    IndexError. This is both, so that either ``except`` catches it."""


class _Picks:
    """The indices one axis selects, increasing: a ``range`` (a slice, an integer: ``dropped``
    where the axis leaves the result) or an int64 array (a list, a boolean array)."""

    def __init__(self, indices: Union[range, np.ndarray], dropped: bool = False):
        self.indices, self.dropped = indices, dropped
        self.count = len(indices)
        # The covering range [first, last + 1), (0, 0) where nothing is picked.
        self.span = (int(indices[0]), int(indices[-1]) + 1) if self.count else (0, 0)

    def __len__(self) -> int:
        return self.count

    @property
    def contiguous(self) -> bool:
        return self.span[1] - self.span[0] == self.count

    def units(self, unit: int) -> Union[range, np.ndarray]:
        """The indices (sorted, unique) of the units of `unit` indices that hold a pick: a range
        where they are regular (a slice's, so that a long one takes no memory), else an array."""
        lo, hi = self.span
        if isinstance(self.indices, range):
            step = self.indices.step
            if step <= unit:
                return range(lo // unit, (hi - 1) // unit + 1)
            if step % unit == 0:
                return range(lo // unit, (hi - 1) // unit + 1, step // unit)
        along = np.asarray(self.indices, dtype=np.int64) // unit
        return along[np.r_[True, np.diff(along) != 0]]

    def within(self, lo: int, hi: int) -> Tuple[int, int]:
        """The picks in [lo, hi), as the range [k0, k1) of their positions among the picks."""
        if isinstance(self.indices, range):
            r = self.indices
            return tuple(len(range(r.start, max(r.start, min(x, r.stop)), r.step)) for x in (lo, hi))
        return tuple(int(k) for k in np.searchsorted(self.indices, (lo, hi)))

    def at(self, k0: int, k1: int, origin: int) -> Union[slice, np.ndarray]:
        """Where picks k0..k1-1 lie in a box that starts at index `origin`."""
        if not isinstance(self.indices, range):
            return self.indices[k0:k1] - origin
        if k1 == k0:
            return slice(0, 0)
        first, step = self.indices[k0] - origin, self.indices.step
        return slice(first, first + (k1 - k0 - 1) * step + 1, step)


def _multiblock(a: Any) -> bool:
    """h5py's MultiBlockSlice (start, stride, count, block), known by its shape (h5py is not
    imported for it)."""
    return type(a).__name__ == "MultiBlockSlice" and all(hasattr(a, n) for n in ("stride", "block", "indices"))


class _Selection:
    """A key of ``ds[key]`` on a dataset of `shape`, by h5py's rules: the picks of each axis
    (``axes``) or, for a boolean mask of the whole shape, the mask (``mask``); the shape of the
    result, and the box that covers the selection (``offset``, ``extent``; ``is_box`` where
    that box is the selection itself). `what` names the dataset in messages."""

    def __init__(self, key: Any, shape: Tuple[int, ...], what: str = ""):
        self._where = f"{what}: " if what else ""
        args = key if isinstance(key, tuple) else (key,)
        self.scalar_request = args == ()
        self.shape = tuple(shape)
        self.mask: Optional[np.ndarray] = None
        self.axes: List[_Picks] = []
        self._mask_order: Optional[_MaskOrder] = None
        where = self._where
        if any(a is None for a in args):
            raise TypeError(_args.without_secrets(f"{where}indexing with None (np.newaxis) is not supported, "
                                                  "as in h5py"))
        names = [a for a in args if isinstance(a, str)]
        if names:
            raise ValueError(_args.without_secrets(f"{where}field names ({names[0]!r}) select fields of a "
                                                   "compound type only"))
        if not shape:
            if not (args == () or (len(args) == 1 and args[0] is Ellipsis)):
                raise ValueError(_args.without_secrets(f"{where}a scalar dataset takes () or ... as its "
                                                       f"selection, not {key!r}"))
        elif not self._take_mask(args):
            self._take_axes(args)
        self._cover()

    # -- the rules
    def _take_mask(self, args: tuple) -> bool:
        """A boolean array as the whole key (h5py's selections.select): of the dataset's shape a
        mask (1-D result; on a 1-D dataset the picks it holds), of the first axis' length the
        picks of that axis (False: read by _take_axes), of any other shape refused."""
        if len(args) != 1 or not isinstance(args[0], np.ndarray) or args[0].dtype.kind != "b":
            return False
        a = args[0]
        if a.shape == self.shape:
            if len(self.shape) == 1:
                self.axes = [_Picks(np.flatnonzero(a))]
            else:
                self.mask = a
            return True
        if a.shape != self.shape[:1]:
            raise TypeError(_args.without_secrets(f"{self._where}a boolean array of shape {a.shape} selects "
                                                  f"nothing of shape {self.shape}: a mask has the dataset's "
                                                  "shape, or the first axis' length"))
        return False

    def _take_axes(self, args: tuple) -> None:
        """Each argument in turn, as h5py's Selector takes them (its errors in its order)."""
        rank, where = len(self.shape), self._where
        axes: List[Optional[_Picks]] = [None] * rank
        given = ellipsis_at = len(args)
        seen_ellipsis, axis, array_axis = False, -1, None
        for a in args:
            axis += 1
            if a is Ellipsis:
                if seen_ellipsis:
                    raise ValueError(_args.without_secrets(f"{where}only one ellipsis (...) may be used"))
                seen_ellipsis, ellipsis_at, given = True, axis, given - 1
                if given > rank:
                    raise ValueError(_args.without_secrets(f"{where}{given} indices for {rank} dimensions"))
                axis += rank - given - 1
                continue
            if axis >= rank:
                raise ValueError(_args.without_secrets(f"{where}{given} indices for {rank} dimensions"))
            axes[axis] = self._argument(a, axis, array_axis)
            if isinstance(axes[axis].indices, np.ndarray) and not _multiblock(a):
                array_axis = axis
        for axis in range(ellipsis_at, ellipsis_at + rank - given):
            axes[axis] = _Picks(range(self.shape[axis]))
        self.axes = axes
        # HDF5 fails h5py's read of an entry equal to the length, where anything is read at all.
        if array_axis is not None and all(p.count for p in axes) and axes[array_axis].span[1] > self.shape[array_axis]:
            raise _PastTheEndError(_args.without_secrets(f"{where}a list entry equals the length of axis "
                                                         f"{array_axis} ({self.shape[array_axis]}): an index "
                                                         "past its end"))

    def _argument(self, a: Any, axis: int, array_axis: Optional[int]) -> _Picks:
        """One argument's picks on `axis` (`array_axis`: the axis a list or array took already)."""
        n, where = self.shape[axis], self._where
        if isinstance(a, slice):
            try:
                start, stop, step = a.indices(n)
            except (TypeError, ValueError) as e:  # not integers; a step of 0
                raise type(e)(_args.without_secrets(f"{where}slice {a!r} on axis {axis}: {e}")) from None
            if step < 1:
                raise ValueError(_args.without_secrets(f"{where}step {step} on axis {axis}: h5py takes steps "
                                                       ">= 1 only (read forwards, then reverse: a[::-1])"))
            return _Picks(range(start, stop, step) if stop > start else range(0))
        i = _as_index(a)
        if i is not None:
            if not -n <= i < n:
                raise IndexError(_args.without_secrets(f"{where}index {i} is out of range for axis {axis} of "
                                                       f"size {n}"))
            return _Picks(range(i % n, i % n + 1), dropped=True)
        if _multiblock(a):
            try:
                start, stride, count, block = a.indices(n)
            except ValueError as e:  # h5py's own checks
                raise ValueError(_args.without_secrets(f"{where}{a!r} on axis {axis}: {e}")) from None
            starts = np.arange(count, dtype=np.int64)[:, None] * stride + start
            return _Picks((starts + np.arange(block)).ravel())
        indices = self._index_array(a, axis)
        if array_axis is not None:
            raise TypeError(_args.without_secrets(f"{where}lists or arrays index axes {array_axis} and {axis}: "
                                                  "h5py takes one (read with one, then index the array with "
                                                  "the other)"))
        return _Picks(self._in_range(indices, axis))

    def _index_array(self, a: Any, axis: int) -> np.ndarray:
        """A list or 1-D array as an array of integers; a 1-D boolean array of the axis' length
        as the indices of its Trues."""
        n, where = self.shape[axis], self._where
        if isinstance(a, np.ndarray):
            if a.ndim != 1:
                raise TypeError(_args.without_secrets(f"{where}a {a.ndim}-D array indexes axis {axis}: h5py "
                                                      "takes 1-D arrays (or a boolean mask of the dataset's "
                                                      "shape as the whole key)"))
        else:
            array = np.asarray(a)
            if array.ndim != 1:
                raise TypeError(_args.without_secrets(f"{where}cannot select with {a!r}: integers, slices, "
                                                      "..., or one 1-D list or array"))
            a = array if array.size else array.astype(np.intp)
        if a.dtype.kind == "b":
            if len(self.shape) == 1:
                raise TypeError(_args.without_secrets(f"{where}a boolean array selects from a 1-D dataset only "
                                                      "as the whole key (ds[mask], as in h5py)"))
            if a.size != n:
                raise TypeError(_args.without_secrets(f"{where}a boolean array of length {a.size} indexes axis "
                                                      f"{axis} of length {n}"))
            a = np.flatnonzero(a)
        if a.dtype.kind not in "iu":
            raise TypeError(_args.without_secrets(f"{where}an array of {a.dtype} indexes axis {axis}: indices "
                                                  "are integers"))
        return a

    def _in_range(self, a: np.ndarray, axis: int) -> np.ndarray:
        """The indices as int64, negative ones counted from the end; in range and increasing,
        as h5py checks (an entry equal to the length passes its check: see _PastTheEndError)."""
        n, where = self.shape[axis], self._where
        if a.dtype.kind == "u" and a.size and a.max() > n:
            raise IndexError(_args.without_secrets(f"{where}a list entry is out of range for axis {axis} of "
                                                   f"size {n}"))
        a = a.astype(np.int64)
        a = np.where(a < 0, a + n, a)
        if a.size and (a.min() < 0 or a.max() > n):
            raise IndexError(_args.without_secrets(f"{where}a list entry is out of range for axis {axis} of "
                                                   f"size {n}"))
        if np.any(np.diff(a) <= 0):
            raise TypeError(_args.without_secrets(f"{where}the list on axis {axis} is not in increasing "
                                                  "order: h5py takes sorted indices without repeats (read "
                                                  "np.unique(idx), then index the array with its inverse)"))
        return a

    # -- shapes
    def _cover(self) -> None:
        if self.mask is not None:
            self.count = int(np.count_nonzero(self.mask))
            spans = [_true_span(self.mask, axis) for axis in range(self.mask.ndim)]
            self.result_shape: Tuple[int, ...] = (self.count,)
            self.is_box = False
        else:
            spans = [p.span for p in self.axes]
            self.result_shape = tuple(p.count for p in self.axes if not p.dropped)
            self.is_box = all(p.contiguous for p in self.axes)
        self.offset = [lo for lo, _ in spans]
        self.extent = [hi - lo for lo, hi in spans]

    @property
    def picked_shape(self) -> Tuple[int, ...]:
        """The shape of the array the boxes are placed into (dropped axes kept, of length 1)."""
        return self.result_shape if self.mask is not None else tuple(p.count for p in self.axes)

    def finish(self, data: np.ndarray) -> Any:
        """The picked array as h5py gives it: dropped axes gone, a NumPy scalar for no axes."""
        data = data.reshape(self.result_shape)
        return data[()] if data.ndim == 0 else data

    @staticmethod
    def text(key: Any) -> str:
        return repr(key)

    # -- reading
    def boxes(self, chunks: Optional[Sequence[int]], itemsize: int, gap_bytes: int, cap: int) -> Iterator[Box]:
        """The boxes to read, in order. Each holds only units the selection needs (`chunks`,
        where whole chunks are decoded; else single indices, or for a mask whole lines along the
        last axis), runs of them merged where the units between cost less than `gap_bytes` to
        read (about what one more read costs), each tightened to what it picks; a box is one
        slab of at most `cap` bytes along the first axis of several units, unless one unit is
        larger. No chunk is in two boxes: runs end at a unit's edge."""
        if 0 in self.picked_shape:
            return iter(())
        ndim = len(self.shape)
        if self.mask is not None:
            unit = tuple(chunks) if chunks else (1,) * (ndim - 1) + (self.shape[-1],)
            need = _MaskNeed(self.mask, unit)
        else:
            unit = tuple(chunks) if chunks else (1,) * ndim
            need = _PicksNeed(self.axes, unit)
        return _plan(need, unit, self.shape, itemsize, gap_bytes, cap)

    def place(self, out: np.ndarray, block: np.ndarray, offset: Sequence[int]) -> None:
        """Copies what the selection picks of `block` (the box at `offset`) into `out` (of
        ``picked_shape``)."""
        box = tuple(slice(o, o + n) for o, n in zip(offset, block.shape))
        if self.mask is not None:  # np.compress of the flat arrays: 2-D boolean indexing is 3-4x slower
            self._order().place(out, np.compress(self.mask[box].ravel(), block.reshape(-1)), box)
            return
        into, index = [], []
        for picks, o, n in zip(self.axes, offset, block.shape):
            k0, k1 = picks.within(o, o + n)
            into.append(slice(k0, k1))
            index.append(picks.at(k0, k1, o))
        out[tuple(into)] = _take(block, index)

    def _order(self) -> "_MaskOrder":
        if self._mask_order is None:  # made once: the boxes of a read and of its retries share it
            self._mask_order = _MaskOrder(self.mask)
        return self._mask_order


def _as_index(a: Any) -> Optional[int]:
    """`a` as one index where h5py takes it as one (PyNumber_Index: ints, bools, NumPy integers
    and 0-d integer arrays; not NumPy bools), else None."""
    try:
        return operator.index(a)
    except TypeError:
        return None


def _true_span(mask: np.ndarray, axis: int) -> Tuple[int, int]:
    """The range of `axis` that holds the mask's Trues, (0, 0) where it has none."""
    along = np.flatnonzero(mask.any(axis=tuple(i for i in range(mask.ndim) if i != axis)))
    return (int(along[0]), int(along[-1]) + 1) if along.size else (0, 0)


def _take(block: np.ndarray, index: List[Union[slice, np.ndarray]]) -> np.ndarray:
    """``block`` indexed by one slice or array per axis, each axis on its own (NumPy broadcasts
    two arrays together; h5py's MultiBlockSlice can give two)."""
    arrays = [axis for axis, i in enumerate(index) if not isinstance(i, slice)]
    if len(arrays) <= 1:
        return block[tuple(index)]
    view = block[tuple(i if isinstance(i, slice) else slice(None) for i in index)]
    for axis in arrays:
        view = np.take(view, index[axis], axis=axis)
    return view


class _MaskOrder:
    """Where the Trues of a box of a mask go in the 1-D result (the mask's C order), without an
    index per True of the whole mask. A box that holds every True of its rows (axis 0) fills a
    range of the result: the Trues before its first row on. Otherwise each True's place is the
    Trues before its line (along the last axis), those left of the box on that line, and its
    rank in the box's part of the line."""

    def __init__(self, mask: np.ndarray):
        self.mask = mask
        per_row = np.count_nonzero(mask.reshape(mask.shape[0], -1), axis=1)
        self.before_row = np.r_[0, np.cumsum(per_row)]
        self.before_line: Optional[np.ndarray] = None

    def place(self, out: np.ndarray, values: np.ndarray, box: Tuple[slice, ...]) -> None:
        start, stop = self.before_row[box[0].start], self.before_row[box[0].stop]
        if stop - start == len(values):
            out[start:stop] = values
        else:
            out[self.positions(box)] = values

    def positions(self, box: Tuple[slice, ...]) -> np.ndarray:
        mask = self.mask
        if self.before_line is None:
            per_line = np.count_nonzero(mask.reshape(-1, mask.shape[-1]), axis=1)
            self.before_line = np.cumsum(per_line) - per_line
        lines = np.ravel_multi_index(np.ix_(*[np.arange(s.start, s.stop) for s in box[:-1]]),
                                     mask.shape[:-1]).ravel()
        left = np.count_nonzero(mask[box[:-1] + (slice(0, box[-1].start),)].reshape(len(lines), -1), axis=1)
        inside = mask[box].reshape(len(lines), -1)
        line, _ = np.nonzero(inside)
        per_line = np.count_nonzero(inside, axis=1)
        rank = np.arange(len(line)) - (np.cumsum(per_line) - per_line)[line]
        return self.before_line[lines][line] + left[line] + rank


class _PicksNeed:
    """The units a selection of picks per axis needs: on each axis those holding a pick, the
    same whatever the other axes (the needed units are their product)."""

    def __init__(self, axes: List[_Picks], unit: Tuple[int, ...]):
        self.axes = axes
        self.along = [p.units(u) for p, u in zip(axes, unit)]

    def units(self, axis: int, prefix: List[Tuple[int, int]]) -> Union[range, np.ndarray]:
        return self.along[axis]

    def span(self, axis: int, prefix: List[Tuple[int, int]]) -> Tuple[int, int]:
        return self.axes[axis].span

    def whole(self, ranges: List[Tuple[int, int]], slack: int) -> bool:
        """Every unit of a box of runs is needed (a product of needed units per axis)."""
        return True

    def tighten(self, ranges: List[Tuple[int, int]]) -> Optional[List[Tuple[int, int]]]:
        tight = []
        for picks, (lo, hi) in zip(self.axes, ranges):
            k0, k1 = picks.within(lo, hi)
            if k1 == k0:
                return None
            tight.append((int(picks.indices[k0]), int(picks.indices[k1 - 1]) + 1))
        return tight


class _MaskNeed:
    """The units a mask of the whole shape needs: those that hold a True (``grid``, the mask
    reduced by units), within whatever box the outer axes chose."""

    def __init__(self, mask: np.ndarray, unit: Tuple[int, ...]):
        self.mask, self.unit = mask, unit
        self.grid = mask
        for axis in reversed(range(mask.ndim)):  # the last (contiguous) axis first: the others see less
            self.grid = _any_by_unit(self.grid, axis, unit[axis])

    def _part(self, prefix: List[Tuple[int, int]]) -> np.ndarray:
        return self.grid[tuple(slice(lo // u, -(-hi // u)) for (lo, hi), u in zip(prefix, self.unit))]

    def units(self, axis: int, prefix: List[Tuple[int, int]]) -> np.ndarray:
        part = self._part(prefix)
        return np.flatnonzero(part.any(axis=tuple(i for i in range(part.ndim) if i != axis)))

    def span(self, axis: int, prefix: List[Tuple[int, int]]) -> Tuple[int, int]:
        along = self.units(axis, prefix)
        u = self.unit[axis]
        return int(along[0]) * u, min(self.mask.shape[axis], (int(along[-1]) + 1) * u)

    def whole(self, ranges: List[Tuple[int, int]], slack: int) -> bool:
        """Whether the box of `ranges` (the outer axes) and the inner axes' spans there holds at
        most `slack` units without a True."""
        part = self._part(ranges)
        for axis in range(len(ranges), part.ndim):
            along = np.flatnonzero(part.any(axis=tuple(i for i in range(part.ndim) if i != axis)))
            part = part[(slice(None),) * axis + (slice(along[0], along[-1] + 1),)]
        return part.size - np.count_nonzero(part) <= slack

    def tighten(self, ranges: List[Tuple[int, int]]) -> Optional[List[Tuple[int, int]]]:
        inside = self.mask[tuple(slice(lo, hi) for lo, hi in ranges)]
        spans = [_true_span(inside, axis) for axis in range(inside.ndim)]
        if spans[0] == (0, 0):
            return None
        return [(lo + a, lo + b) for (lo, _), (a, b) in zip(ranges, spans)]


def _any_by_unit(a: np.ndarray, axis: int, unit: int) -> np.ndarray:
    """`a` with each `unit` indices along `axis` reduced to whether any is True (a view split in
    two axes, not NumPy's reduceat, which is ten times slower on booleans)."""
    if unit == 1:
        return a
    n = a.shape[axis]
    whole = n // unit * unit
    head = a[(slice(None),) * axis + (slice(0, whole),)]
    parts = [head.reshape(a.shape[:axis] + (n // unit, unit) + a.shape[axis + 1:]).any(axis=axis + 1)]
    if whole < n:
        parts.append(a[(slice(None),) * axis + (slice(whole, n),)].any(axis=axis, keepdims=True))
    return np.concatenate(parts, axis=axis) if len(parts) > 1 else parts[0]


def _runs(units: Union[range, np.ndarray], max_gap: int, per_piece: int) -> Iterator[Tuple[int, int]]:
    """Sorted unit indices as ranges [first, stop) of units: neighbours at most `max_gap`
    units apart share a run, and a run is cut into pieces of at most `per_piece` units, each
    from its first needed unit to its last (a range of units: its pieces, some perhaps between
    needed units, which the boxes' tightening drops)."""
    if isinstance(units, range):
        if units.step - 1 > max_gap:
            return ((u, u + 1) for u in units)
        stop = units[-1] + 1
        return ((a, min(a + per_piece, stop)) for a in range(units[0], stop, per_piece))
    run = np.r_[True, np.diff(units) > max_gap + 1]
    run_start = units[run][np.cumsum(run) - 1]
    piece = (units - run_start) // per_piece
    new = np.flatnonzero(run | np.r_[True, np.diff(piece) != 0])
    last = np.r_[new[1:] - 1, len(units) - 1]
    return ((int(a), int(b) + 1) for a, b in zip(units[new], units[last]))


def _plan(need, unit: Tuple[int, ...], shape: Tuple[int, ...], itemsize: int, gap_bytes: int,
          cap: int) -> Iterator[Box]:
    """The boxes of `need` (_PicksNeed or _MaskNeed), axis by axis: the runs of needed units
    along an axis, then the inner axes within each run. A unit's cross-section (the outer axes'
    run, the inner axes' span) sizes the runs: rounded out to whole units (what a read decodes)
    against `gap_bytes`, and in bytes of the box against `cap` on the slab axis, the first axis
    with more than one unit (memory: the result and one slab). A run whose box would hold
    units not needed (a mask's Trues in a ring, a checkerboard) is split into single units,
    each then split along the inner axes."""
    ndim = len(shape)
    slack = gap_bytes // (itemsize * math.prod(unit))  # units not needed that a box may read

    def split(axis: int, prefix: List[Tuple[int, int]], sliced: bool) -> Iterator[Box]:
        if axis == ndim:
            tight = need.tighten(prefix)
            if tight is not None:
                yield tuple(lo for lo, _ in tight), tuple(hi - lo for lo, hi in tight)
            return
        others = prefix + [need.span(inner, prefix) for inner in range(axis + 1, ndim)]
        box = cost = itemsize * unit[axis]
        for (lo, hi), u in zip(others, unit[:axis] + unit[axis + 1:]):
            box *= hi - lo
            cost *= (-(-hi // u) - lo // u) * u
        units = need.units(axis, prefix)
        per_piece = int(units[-1]) + 1 if sliced else max(1, cap // box)  # the cap cuts the slab axis only
        inner_sliced = sliced or units[-1] > units[0]
        for first, stop in _runs(units, gap_bytes // cost, per_piece):
            run = prefix + [(first * unit[axis], min(shape[axis], stop * unit[axis]))]
            if stop - first == 1 or need.whole(run, slack):
                yield from split(axis + 1, run, inner_sliced)
                continue
            for one in units[(units >= first) & (units < stop)]:
                one_unit = (one * unit[axis], min(shape[axis], (one + 1) * unit[axis]))
                yield from split(axis + 1, prefix + [one_unit], inner_sliced)

    return split(0, [], False)
