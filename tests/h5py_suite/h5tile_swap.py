"""pytest plugin: h5py's own high-level tests, reading through h5tile (issue 40).

Loaded with ``-p h5tile_swap`` by scripts/h5py_suite.sh, before any test module is imported.
Writes stay h5py's (h5tile writes only part of what h5py writes: modes "w", "w-", "x" are issue
41; H5PY_SUITE_WRITES=h5tile makes them h5tile's, see the end), reads are h5tile's, in two ways:

* *Opened by h5tile*: ``h5py.File`` (and the other high-level names, below) are replaced by
  stand-ins. ``File(name)`` and ``File(name, "r")``, a read-only open, open an
  :class:`h5tile.File` with the arguments exactly as the test gave them (an h5py keyword that
  h5tile does not take fails the test, as it would fail a user's program); every other mode opens
  a real ``h5py.File`` (but see the write side, at the end). A test that writes a file, closes it
  and opens it again to read measures h5tile that way.
* *Read through h5tile*: reads of h5py's own objects (``self.f["x"][0:5]``, ``ds.shape``,
  ``grp.keys()``, ``obj.attrs["a"]``) are answered by h5tile from the flushed file
  (h5tile_bridge.py says how), so that tests which write and read through one h5py File measure
  h5tile's reads too.

Constructors from h5py's low-level identifiers (``h5py.Dataset(dsid)``) and the values tests write
(``SoftLink(...)``, ``Empty(...)``) stay h5py's (``Empty``, and on the write side the links, of
classes both libraries take as theirs). ``isinstance`` and ``issubclass`` with a stand-in accept
h5py's class and h5tile's, and a stand-in equals either (``get(..., getclass=True)`` gives
h5tile's class). Each stand-in subclasses h5py's class, so class attributes and h5py's own checks
(``issubclass(Group, MutableMapping)``) are h5py's.

A test that h5tile answered at least once (an h5tile.File opened, or tried, or a read of an h5py
object answered) is a *read-side* test. The plugin writes every test's outcome, which way it met
h5tile and the first line of its failure to the JSON file named by ``--h5tile-results``;
tests/h5py_suite/report.py makes the report.

*The write side* (issue 41), with ``H5PY_SUITE_WRITES=h5tile`` in the environment: ``File(name,
mode)`` in every mode ("r+", "a", "w", "w-", "x", any other the test gives) on a path is an
:class:`h5tile.File` too, opened with the test's own arguments, so that the test's writes
(``create_group``, ``create_dataset``, ``ds[...] = x``, ``attrs``, ``del``, ``move``, ``copy``,
links, ``resize``...) are h5tile's; a file h5tile does not write by path (a file object, a driver
outside ``_PATH_DRIVERS``, a low-level FileID) stays h5py's, as without it. Such a test met h5tile
("written"). Reads are as above (the reads of the files that stay h5py's still go to h5tile where
h5tile can open them).
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import threading
import traceback

# Two HDF5 libraries in one process (h5py's and h5tile's) would lock each other out of the files
# they both hold open: set before either opens a file (h5py's locking tests skip, saying why).
os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

import h5py  # noqa: E402
import h5tile  # noqa: E402
import pytest  # noqa: E402

import h5tile_bridge  # noqa: E402

# h5py's classes, kept before the names are replaced (writes and low-level constructors use them).
_ORIGINAL = {name: getattr(h5py, name) for name in
             ("File", "Group", "Dataset", "Datatype", "AttributeManager", "HardLink", "SoftLink", "ExternalLink",
              "Empty")}


class _Exercised:
    """How the running test met h5tile (set from any thread the test starts): "opened" (an
    h5tile.File opened or tried by a stand-in File, mode "r"), "written" (the same in another
    mode: H5PY_SUITE_WRITES=h5tile), "read" (a read of an h5py object answered)."""
    lock = threading.Lock()
    ways: set = set()


def _mark_exercised(way: str) -> None:
    with _Exercised.lock:
        _Exercised.ways.add(way)


_IN_SUBCLASSCHECK = threading.local()


def _stand_in_metaclass(h5py_class: type) -> type:
    """A metaclass for the stand-in of ``h5py_class``: derived from h5py's own metaclass (ABCMeta
    for the mapping classes), so that the stand-in can subclass h5py's class."""

    class Either(type(h5py_class)):
        def __instancecheck__(cls, obj):
            return isinstance(obj, cls._either)

        def __subclasscheck__(cls, sub):
            # ABCMeta's check of h5py's class asks each of its subclasses, the stand-in among them:
            # inside that, the stand-in answers for itself only (nothing subclasses it).
            if getattr(_IN_SUBCLASSCHECK, "active", False):
                return sub is cls
            _IN_SUBCLASSCHECK.active = True
            try:
                return sub is cls or issubclass(sub, cls._either)
            finally:
                _IN_SUBCLASSCHECK.active = False

        def __eq__(cls, other):
            return other is cls or any(other is c for c in cls._either)

        def __hash__(cls):
            return id(cls)

    return Either


def _stand_in(name: str, h5tile_class: type, new) -> type:
    """The stand-in for h5py's class ``name``: a subclass of it (class attributes, ``__mro__``)
    whose instances are h5py's or h5tile's, as ``new(*args, **kwargs)`` decides."""
    h5py_class = _ORIGINAL[name]

    def __new__(cls, *args, **kwargs):
        return new(*args, **kwargs)

    namespace = {"__new__": __new__, "_either": (h5py_class, h5tile_class), "__module__": __name__,
                 "__doc__": f"h5py.{name} or h5tile.{name} (tests/h5py_suite/h5tile_swap.py)"}
    return _stand_in_metaclass(h5py_class)(name, (h5py_class,), namespace)


def _mode(args: tuple, kwargs: dict):
    """The mode the arguments of h5py.File(name, mode=None, ...) give (None is h5py's "r")."""
    return kwargs["mode"] if "mode" in kwargs else args[1] if len(args) > 1 else None


# Drivers of a file that h5tile writes in place at its path (H5PY_SUITE_WRITES=h5tile): the
# default (None) and the drivers that read and write the one file at the path directly. Others
# ("core": a memory image, written back at close if at all; "family", "split", "multi": other
# files; "fileobj", "mpio", "ros3"...) keep the test's writes h5py's.
_PATH_DRIVERS = (None, "sec2", "stdio", "direct")


def _driver(args: tuple, kwargs: dict):
    """The driver the arguments of h5py.File(name, mode=None, driver=None, ...) give."""
    return kwargs["driver"] if "driver" in kwargs else args[2] if len(args) > 2 else None


def _new_file(*args, **kwargs):
    """A read-only open of a file by name or file object: h5tile.File; with H5PY_SUITE_WRITES=h5tile
    an open in any other mode of a path with a driver of _PATH_DRIVERS too; anything else, h5py's."""
    name = args[0] if args else kwargs.get("name")
    low_level = isinstance(name, h5py._objects.ObjectID)  # a FileID: only h5py can wrap it
    if _mode(args, kwargs) in (None, "r") and not low_level:
        _mark_exercised("opened")
        if isinstance(name, (str, bytes, os.PathLike)):
            h5tile_bridge.flush_h5py_handles(os.fsdecode(name))  # what h5py wrote, on disk for h5tile
        return h5tile_bridge.open_for_reading(*args, **kwargs)
    if (h5tile_bridge.WRITES == "h5tile" and isinstance(name, (str, bytes, os.PathLike))
            and _driver(args, kwargs) in _PATH_DRIVERS):
        _mark_exercised("written")
        h5tile_bridge.flush_h5py_handles(os.fsdecode(name))  # a file h5py holds open too
        return h5tile_bridge.open_for_writing(*args, **kwargs)
    return _ORIGINAL["File"](*args, **kwargs)


def _new_attribute_manager(parent, *args, **kwargs):
    """h5tile's attributes for an h5tile object, h5py's for an h5py object."""
    if isinstance(parent, (h5tile.Group, h5tile.Dataset)):
        return h5tile.AttributeManager(parent, *args, **kwargs)
    return _ORIGINAL["AttributeManager"](parent, *args, **kwargs)


def _h5py_new(name: str):
    """Constructors that stay h5py's (from low-level identifiers, and the values tests write)."""
    return lambda *args, **kwargs: _ORIGINAL[name](*args, **kwargs)


class _Empty(_ORIGINAL["Empty"], h5tile.Empty):
    """An empty value both libraries accept as their own: h5py writes it, and it equals h5py's
    or h5tile's Empty of the same dtype (what h5tile reads back)."""

    def __init__(self, dtype):
        _ORIGINAL["Empty"].__init__(self, dtype)

    def __eq__(self, other):
        return isinstance(other, (_ORIGINAL["Empty"], h5tile.Empty)) and self.dtype == other.dtype

    __hash__ = h5tile.Empty.__hash__


class _HardLink(_ORIGINAL["HardLink"], h5tile.HardLink):
    """The write side's HardLink(): one both libraries take as theirs."""


class _SoftLink(_ORIGINAL["SoftLink"], h5tile.SoftLink):
    """The write side's SoftLink(path): a link to write that both libraries take as theirs (each
    checks ``isinstance`` with its own class): ``group[name] = SoftLink(...)`` makes the link in
    an h5tile Group as in an h5py one. h5py's ``__init__``, ``path`` and ``__repr__``."""


class _ExternalLink(_ORIGINAL["ExternalLink"], h5tile.ExternalLink):
    """The write side's ExternalLink(filename, path), as _SoftLink."""


def _link_new(name: str):
    """The constructor of the stand-in link ``name``: h5py's link; on the write side one of the
    classes above, which h5tile takes too (the written values that h5tile reads back stay
    whatever h5tile makes of them)."""
    if h5tile_bridge.WRITES != "h5tile":
        return _h5py_new(name)
    both = {"HardLink": _HardLink, "SoftLink": _SoftLink, "ExternalLink": _ExternalLink}[name]
    return lambda *args, **kwargs: both(*args, **kwargs)


STAND_INS = {
    "File": _stand_in("File", h5tile.File, _new_file),
    "Group": _stand_in("Group", h5tile.Group, _h5py_new("Group")),
    "Dataset": _stand_in("Dataset", h5tile.Dataset, _h5py_new("Dataset")),
    "Datatype": _stand_in("Datatype", h5tile.Datatype, _h5py_new("Datatype")),
    "AttributeManager": _stand_in("AttributeManager", h5tile.AttributeManager, _new_attribute_manager),
    "HardLink": _stand_in("HardLink", h5tile.HardLink, _link_new("HardLink")),
    "SoftLink": _stand_in("SoftLink", h5tile.SoftLink, _link_new("SoftLink")),
    "ExternalLink": _stand_in("ExternalLink", h5tile.ExternalLink, _link_new("ExternalLink")),
    "Empty": _stand_in("Empty", h5tile.Empty, _Empty),
}


def _swap_names(namespace: dict) -> None:
    """Replaces, in a module's namespace, every name bound to one of h5py's classes (``from h5py
    import File``, ``from h5py._hl.base import Empty``) by its stand-in."""
    for attribute, value in list(namespace.items()):
        for name, original in _ORIGINAL.items():
            if value is original:
                namespace[attribute] = STAND_INS[name]


# -- pytest hooks

# Node id -> {"outcome": passed | failed | skipped | xfailed, "h5tile": ["opened", "read"] or
# fewer (how the test met h5tile), "message": the first line of its failure or skip}.
_RESULTS: dict = {}


def pytest_addoption(parser):
    parser.addoption("--h5tile-results", default=None,
                     help="write each test's outcome and whether it read through h5tile to this JSON file")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before h5py's tests/conftest.py is loaded: ``h5py.tests`` becomes the sdist's tests folder
    that the paths given are in (the installed wheel may carry tests of its own; every other
    submodule of h5py stays the wheel's), and h5py's names are swapped (the test modules import
    them ``from h5py``)."""
    tests = _sdist_tests(args)
    h5py.__path__.insert(0, str(tests.parent))
    if h5tile_bridge.READER != "off":
        _swap_names(vars(h5py))
        h5tile_bridge.on_h5tile_read = lambda: _mark_exercised("read")
        h5tile_bridge.install()


def _sdist_tests(args) -> pathlib.Path:
    """The h5py/tests folder that holds the test paths among ``args``."""
    for arg in args:
        path = pathlib.Path(arg.split("::")[0]).resolve()
        for folder in (path, *path.parents):
            if folder.name == "tests" and folder.parent.name == "h5py" and (folder / "__init__.py").is_file():
                return folder
    raise pytest.UsageError("h5tile_swap: give the paths of h5py's tests (h5py-VERSION/h5py/tests/...)")


def pytest_collection_modifyitems(session, config, items):
    """Swaps the names the test modules took from h5py's submodules (h5py._hl.*) at import, and
    skips the MPI tests as pytest-mpi does when not run under MPI."""
    mpi = pytest.mark.skip(reason="MPI test: pytest-mpi runs it under mpirun, not this harness")
    for item in items:
        if "mpi" in item.keywords:
            item.add_marker(mpi)
    if h5tile_bridge.READER == "off":
        return
    done = set()
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__ not in done:
            done.add(module.__name__)
            _swap_names(vars(module))
    for name, module in list(sys.modules.items()):  # common.py and the packages' __init__
        if name.startswith("h5py.tests") and name not in done:
            _swap_names(vars(module))
    if h5tile_bridge.WRITES == "h5tile":
        _skip_fast_reader_of_h5tile(sys.modules.get("h5py.tests.common"))


def _skip_fast_reader_of_h5tile(common) -> None:
    """The write side: the tests' helper ``assertNumpyBehavior(dset, arr, s)`` (common.py) checks
    ``dset[s]`` against numpy and then h5py's private reader ``dset._fast_reader`` too, which an
    h5tile Dataset has not (it is no API). For an h5tile Dataset the helper skips the second check,
    as it does where a test passes ``skip_fast_reader=True``; the first one, h5tile's, stays."""
    test_case = getattr(common, "TestCase", None)
    original = getattr(test_case, "assertNumpyBehavior", None)
    if original is None or getattr(original, "_h5tile_swap", False):
        return

    def assertNumpyBehavior(self, dset, arr, s, skip_fast_reader=False):  # noqa: N802 (h5py's name)
        return original(self, dset, arr, s, skip_fast_reader=skip_fast_reader or isinstance(dset, h5tile.Dataset))

    assertNumpyBehavior._h5tile_swap = True
    test_case.assertNumpyBehavior = assertNumpyBehavior


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    with _Exercised.lock:
        _Exercised.ways = set()
    yield
    with _Exercised.lock:
        _RESULTS.setdefault(item.nodeid, _new_entry())["h5tile"] = sorted(_Exercised.ways)


def _new_entry() -> dict:
    return {"outcome": "passed", "h5tile": [], "message": ""}


def _first_line(report) -> str:
    """The first line of what a failure or skip says (the exception, or the skip's reason)."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (file, line, reason)
        text = str(longrepr[2])
    elif hasattr(longrepr, "reprcrash") and longrepr.reprcrash is not None:
        text = longrepr.reprcrash.message
    else:
        text = str(longrepr)
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The write side: for a failure, the line of the test's code that raised it (``at``: where
    the test called into h5tile, h5py or the harness), and, where the failure was raised while
    the test handled another error (a ``finally`` or ``except`` of the test's own code, a
    ``pytest.raises`` that did not match), the first error of that chain (``first_error``; its
    ``at``). report.py categorises by them (write_categories.txt)."""
    outcome = yield
    if h5tile_bridge.WRITES != "h5tile" or call.excinfo is None or not outcome.get_result().failed:
        return
    entry = _RESULTS.setdefault(item.nodeid, _new_entry())
    if "at" in entry:  # a failure of an earlier phase is the first
        return
    error = call.excinfo.value
    first = _first_error(error)
    if first is not error:
        lines = [line for line in "".join(traceback.format_exception_only(type(first), first)).splitlines()
                 if line.strip()]
        entry["first_error"] = lines[0][:300] if lines else type(first).__name__
    entry["at"] = _test_line(first)


def _first_error(error: BaseException) -> BaseException:
    """The first error of ``error``'s implicit chain (``__context__``, not an explicit ``raise
    ... from``), followed while the later error was not raised by h5tile's code."""
    first = error
    while (first.__context__ is not None and first.__cause__ is None and not first.__suppress_context__
           and not _raised_by_h5tile(first)):
        first = first.__context__
    return first


def _innermost_module(error: BaseException) -> str:
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""


def _raised_by_h5tile(error: BaseException) -> bool:
    module = _innermost_module(error)
    return module == "h5tile" or module.startswith("h5tile.")


def _test_line(error: BaseException) -> str:
    """``file.py:line: source`` of the innermost frame of h5py's tests in ``error``'s traceback."""
    at = ""
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("h5py.tests"):
            summary = traceback.extract_tb(tb, limit=1)[0]
            path = summary.filename.replace(os.sep, "/")
            at = f"{path.split('/h5py/tests/')[-1]}:{summary.lineno}: {(summary.line or '').strip()}"
        tb = tb.tb_next
    return at[:300]


def pytest_runtest_logreport(report):
    """One outcome per test over its phases: a failure anywhere (setup, call or teardown) fails
    it; otherwise a skip (or an expected failure) skips it."""
    entry = _RESULTS.setdefault(report.nodeid, _new_entry())
    if report.failed:
        if entry["outcome"] != "failed":
            entry["outcome"], entry["message"] = "failed", _first_line(report)
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        entry["message"] = str(getattr(report, "wasxfail", "")) or _first_line(report)


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--h5tile-results")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"exitstatus": int(exitstatus), "tests": _RESULTS}, out, indent=1,
                      sort_keys=True)
