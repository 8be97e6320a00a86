"""Writes in the background: the handle users get, and what the module keeps of each write until
its outcome has been seen (so that no failure is lost silently, at collection or at exit)."""
from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Optional

from . import _arguments as _args
from . import _h5tile
from ._h5tile import InvalidArgumentError

_pending_lock = threading.Lock()
_pending: list = []  # _Write records: arrays stay alive and errors are reported until settled


class _Write:
    """What this module keeps of a write started by :func:`to_file` until it is done and its
    outcome seen: the native handle, the array (kept alive), where it goes, and whether an error
    has been seen by someone (a ``wait()``, :func:`fence`, a warning or the report at exit)."""

    __slots__ = ("handle", "array", "path", "dataset", "observed")

    def __init__(self, handle, array, path: str, dataset: str):
        self.handle, self.array, self.path, self.dataset, self.observed = handle, array, path, dataset, False

    def failure(self) -> Optional[BaseException]:
        """The write's error once it is done (None: it succeeded or is still running); never blocks."""
        if not self.handle.done():
            return None
        try:
            self.handle.wait()
        except BaseException as error:  # noqa: BLE001 - returned, not handled
            return error
        return None

    def settled(self) -> bool:
        """Done, and nothing about it is left to report."""
        return self.handle.done() and (self.observed or self.failure() is None)

    def describe(self) -> str:
        return _args.without_secrets(f"the write of {self.dataset!r} to {_args.redacted(self.path)!r}")


class WriteHandle:
    """A write in progress. ``wait()`` (or ``result()``, or leaving a ``with`` block) blocks until
    the file is complete and visible to other programs and raises the write's error; ``done()``
    never blocks. The array passed to :func:`to_file` is kept alive until then, and written from
    where it is, not copied: changes made to it before then may or may not reach the file.

    A failed write is never lost silently: a handle collected before anyone saw its error
    (through ``wait()``, ``result()``, ``with`` or :func:`fence`) warns (``RuntimeWarning``), and
    writes still pending when the interpreter exits are waited for; a failure among them is printed
    on stderr and makes the exit status 1 (except in a Legate program, whose runtime must shut
    down normally: there it is printed only)."""

    def __init__(self, handle, array, path: str = "", dataset: str = ""):
        self._write = _Write(handle, array, path, dataset)

    def wait(self) -> None:
        """Block until the write is complete; raise its error (the previous file is then intact).
        Ctrl-C (KeyboardInterrupt) cancels the write within a moment and raises: the previous
        file, if any, is left as it was."""
        try:
            self._write.handle.wait()
        finally:
            self._write.observed = True
            self._write.array = None

    def result(self, timeout: None = None) -> None:
        """``wait()``, under the name ``concurrent.futures.Future`` users know; no timeout."""
        if timeout is not None:
            raise InvalidArgumentError("WriteHandle.result takes no timeout: poll with done()")
        self.wait()

    def done(self) -> bool:
        return self._write.handle.done()

    def __enter__(self) -> "WriteHandle":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.wait()
            return
        try:  # the block's own error wins; the write is still waited for (its array stays valid)
            self.wait()
        except Exception:  # noqa: BLE001 - the block's error is the one raised
            pass

    def __repr__(self) -> str:
        w = self._write
        state = "pending" if not w.handle.done() else ("failed" if w.failure() is not None else "done")
        return _args.without_secrets(f"<h5tile.WriteHandle {_args.redacted(w.path)!r}:{w.dataset} {state}>")

    def __del__(self) -> None:
        w = self._write
        if w.observed or not w.path:
            return
        try:
            error = w.failure()
        except BaseException:  # noqa: BLE001 - the interpreter is shutting down
            return
        if error is not None:
            w.observed = True
            import warnings
            warnings.warn(_args.without_secrets(f"h5tile: {w.describe()} failed and nobody waited for it: "
                                                f"{type(error).__name__}: {error}"), RuntimeWarning, stacklevel=2)


def _report_pending_at_exit() -> None:
    """Waits for the writes still pending at exit; reports a failure on stderr and exits with 1."""
    with _pending_lock:
        pending = list(_pending)
        _pending.clear()
    failed = False
    for write in pending:
        try:
            write.handle.wait()
        except BaseException as error:  # noqa: BLE001 - reported below
            if not write.observed:
                failed = True
                print(_args.without_secrets(f"h5tile: {write.describe()} failed: {type(error).__name__}: {error}"),
                      file=sys.stderr)
    if failed and "legate" not in sys.modules:
        # An atexit handler changes the exit status only by ending the process here. This one was
        # registered when h5tile was imported, so the handlers registered after it have run.
        if "logging" in sys.modules:
            sys.modules["logging"].shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream
                pass
        os._exit(1)


atexit.register(_report_pending_at_exit)


def tracked(handle: WriteHandle) -> WriteHandle:
    """Keeps `handle`'s write until it is done and its outcome seen; forgets settled ones."""
    with _pending_lock:
        _pending[:] = [w for w in _pending if not w.settled()]
        _pending.append(handle._write)
    return handle


class CompletedWrite:
    """The handle of a write that has already completed."""

    def wait(self) -> None:
        pass

    def done(self) -> bool:
        return True


def fence() -> None:
    """Wait for every write started by :func:`to_file`; raise the first error among them (the
    errors of every pending write count as seen: none of them warns or is reported at exit).
    Ctrl-C (KeyboardInterrupt) cancels the pending writes, as ``WriteHandle.wait()`` does."""
    with _pending_lock:
        pending = list(_pending)
    try:
        _h5tile.wait_all([w.handle for w in pending if isinstance(w.handle, _h5tile._WriteHandle)])
        _h5tile.fence()
    finally:
        for write in pending:
            write.observed = True
        with _pending_lock:
            _pending[:] = [p for p in _pending if p not in pending]
