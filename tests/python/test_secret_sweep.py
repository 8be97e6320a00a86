"""A secret planted in a URL (a password in its user information, a presigned query signature, a
``#fragment``) appears in no text that h5tile gives back (issue 39, item 4): each failure that the
Python package, xarray, Dask and the command can be driven to is provoked on a file served by
nginx, and every exception (its chain too), warning, repr and str it produced is swept for the
secret. Each case asserts the error it provokes, so that the sweep cannot pass by failing early.
A last test checks the package's source: every message it builds goes through the one redaction
function (``without_secrets``)."""
import ast
import pathlib
import subprocess
import sys
import warnings

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
PACKAGE = ROOT / "python" / "h5tile"

# How each secret is planted in a URL of the server: (URL of name, the secret).
FORMS = {
    "password": (lambda base, name: base.replace("http://", "http://user:PLANTEDPW@") + "/" + name, "PLANTEDPW"),
    "signature": (lambda base, name: f"{base}/{name}?X-Amz-Signature=PLANTEDSIG&X-Amz-Credential=AKIA%2FPLANTEDSIG",
                  "PLANTEDSIG"),
    "fragment": (lambda base, name: f"{base}/{name}#PLANTEDFRAG", "PLANTEDFRAG"),
}


class Sweep:
    """Every text the cases produced: exceptions (with their causes and contexts), warnings,
    reprs and strs; ``check()`` asserts that none holds the secret."""

    def __init__(self, secret: str):
        self.secret = secret
        self.texts: list = []  # (case, text)

    def _exception(self, case: str, error: BaseException) -> None:
        seen = set()
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            self.texts += [(case, str(error)), (case, repr(error))]
            self.texts += [(case, str(a)) for a in error.args]
            error = error.__cause__ or error.__context__

    def _warnings(self, case: str, caught: list) -> None:
        self.texts += [(case, str(w.message)) for w in caught]

    def raises(self, case: str, expected, call, *, shows: str = "") -> BaseException:
        """Runs ``call()``, which must raise ``expected``; keeps what it raised and warned."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(expected) as e:
                call()
        self._exception(case, e.value)
        self._warnings(case, caught)
        assert shows in str(e.value), (case, str(e.value))
        return e.value

    def runs(self, case: str, call, *, warns: str = ""):
        """Runs ``call()``, which must succeed; keeps its warnings and the repr of its result."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
        self._warnings(case, caught)
        self.shown(case, result)
        assert not warns or any(warns in str(w.message) for w in caught), (case, [str(w.message) for w in caught])
        return result

    def shown(self, case: str, *objects) -> None:
        """The repr and str of each object."""
        for obj in objects:
            self.texts += [(case, repr(obj)), (case, str(obj))]

    def output(self, case: str, text: str) -> None:
        self.texts.append((case, text))

    def check(self, cases: int) -> None:
        """No text holds the secret; at least ``cases`` cases gave texts."""
        leaks = [(case, text) for case, text in self.texts if self.secret in text]
        assert not leaks, leaks
        assert len({case for case, _ in self.texts}) >= cases


@pytest.fixture(params=sorted(FORMS))
def served(request, nginx_server):
    """On nginx: f.h5 (/data with an attribute, a group /g, a named datatype /dtype), x.h5 (a
    variable of 16-byte floats, which xarray leaves out), junk.h5 (not HDF5). Yields
    (url(name), Sweep, the data of /data)."""
    a = np.random.default_rng(3).random((64, 32))
    root = nginx_server.root
    with h5py.File(root / "f.h5", "w") as f:
        f["data"] = a
        f["data"].attrs["units"] = "m"
        f.create_group("g")["inner"] = np.arange(3)
        f["dtype"] = np.dtype("float32")  # a named (committed) datatype
    with h5py.File(root / "x.h5", "w") as f:
        f["v"] = np.arange(4.0)
        f["quad"] = np.zeros(4, np.longdouble)
    (root / "junk.h5").write_bytes(b"not an HDF5 file at all\n" * 100)
    make, secret = FORMS[request.param]
    return (lambda name: make(nginx_server.url, name)), Sweep(secret), a


def test_file_objects_show_no_secret(served):
    url, sweep, a = served
    for mode in ("a", "r+"):
        sweep.raises(f"mode {mode}", ValueError, lambda: h5tile.File(url("f.h5"), mode), shows="127.0.0.1")
    sweep.raises("mode w", ValueError, lambda: h5tile.File(url("f.h5"), "w"))
    sweep.raises("missing file", FileNotFoundError, lambda: h5tile.File(url("missing.h5")), shows="missing.h5")
    sweep.raises("not hdf5", OSError, lambda: h5tile.File(url("junk.h5")), shows="junk.h5")
    sweep.raises("NUL", ValueError, lambda: h5tile.File(url("f\0.h5")), shows="NUL")
    f = sweep.runs("open", lambda: h5tile.File(url("f.h5")))
    ds, group = f["data"], f["g"]
    sweep.shown("objects", f, group, ds, ds.attrs, f.attrs, group["inner"], ds.parent)
    assert np.array_equal(sweep.runs("read", lambda: ds[...]), a)
    sweep.raises("missing key", KeyError, lambda: f["nope"], shows="nope")
    sweep.raises("missing member", KeyError, lambda: group["nope"], shows="nope")
    sweep.raises("missing attribute", KeyError, lambda: ds.attrs["nope"], shows="nope")
    named = sweep.runs("named datatype", lambda: f["dtype"])
    sweep.shown("named datatype", named, named.dtype, named.attrs)
    sweep.raises("past the end", IndexError, lambda: ds[64])
    sweep.raises("write attribute", OSError, lambda: ds.attrs.create("x", 1), shows="read-only")
    sweep.raises("delete attribute", OSError, lambda: ds.attrs.__delitem__("units"), shows="read-only")
    sweep.raises("write dataset", OSError, lambda: ds.__setitem__(Ellipsis, 0), shows="read-only")
    # h5py's class for a new dataset in a file open read-only: ValueError ("no write intent on file")
    sweep.raises("create_dataset", ValueError, lambda: f.create_dataset("new", data=[1, 2]), shows="read-only")
    sweep.raises("create in group", ValueError, lambda: group.create_dataset("new", shape=(2,)), shows="read-only")
    f.close()
    sweep.shown("closed", f, group, ds)
    sweep.raises("closed file", ValueError, lambda: f["data"], shows="closed")
    sweep.raises("closed dataset", ValueError, lambda: ds[0], shows="closed")
    sweep.raises("closed attributes", ValueError, lambda: ds.attrs["units"], shows="closed")
    sweep.check(23)


def test_module_functions_show_no_secret(served):
    url, sweep, a = served
    assert np.array_equal(sweep.runs("from_file", lambda: h5tile.from_file(url("f.h5"), "/data")), a)
    sweep.raises("from_file missing dataset", KeyError, lambda: h5tile.from_file(url("f.h5"), "/nope"))
    sweep.raises("from_file missing file", FileNotFoundError, lambda: h5tile.from_file(url("missing.h5"), "/data"))
    sweep.raises("from_file a group", ValueError, lambda: h5tile.from_file(url("f.h5"), "/g"))
    sweep.raises("from_file out", ValueError,
                 lambda: h5tile.from_file(url("f.h5"), "/data", out=np.empty(a.shape, "int8")), shows="int8")
    sweep.raises("describe", KeyError, lambda: h5tile.describe(url("f.h5"), "/nope"))
    sweep.raises("to_file", ValueError, lambda: h5tile.to_file(a, url("new.h5"), "/data").wait(), shows="remote")
    sweep.raises("read_box", ValueError, lambda: h5tile.read_box(url("f.h5"), "/data", [60, 0], [10, 32]))
    sweep.raises("from_file_batched", ValueError, lambda: h5tile.from_file_batched(url("f.h5"), "/data", [4]),
                 shows="has 1 elements")
    batches = sweep.runs("from_file_batched", lambda: h5tile.from_file_batched(url("f.h5"), "/data", [16, 32]))
    assert sum(block.shape[0] for block, _ in batches) == 64
    sweep.check(9)


def test_an_endpoint_setting_shows_no_secret(served, monkeypatch):
    url, sweep, _ = served
    endpoint = url("").rstrip("/").replace("http://", "ftp://")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example")
    sweep.raises("AWS_ENDPOINT_URL", h5tile.Error, lambda: h5tile.from_file("s3://bucket/f.h5", "/data"))
    sweep.check(1)


def test_xarray_shows_no_secret(served):
    xr = pytest.importorskip("xarray", reason="xarray is not installed")
    url, sweep, _ = served
    sweep.raises("group", OSError, lambda: xr.open_dataset(url("f.h5"), engine="h5tile", group="nosuch"),
                 shows="nosuch")
    ds = sweep.runs("left out", lambda: xr.open_dataset(url("x.h5"), engine="h5tile"), warns="is left out")
    assert "quad" not in ds.variables and np.array_equal(ds["v"].values, np.arange(4.0))
    sweep.check(2)


def test_dask_shows_no_secret(served):
    da = pytest.importorskip("dask.array", reason="dask[array] is not installed")
    import h5tile.dask as h5d
    url, sweep, a = served
    sweep.raises("dask from_file", KeyError, lambda: h5d.from_file(url("f.h5"), "/nope"))
    x = sweep.runs("dask array", lambda: h5d.from_file(url("f.h5"), "/data", chunks=(16, 32)))
    sweep.shown("dask graph", dict(x.__dask_graph__()))
    assert np.array_equal(sweep.runs("dask compute", lambda: x.compute(scheduler="threads")), a)
    sweep.raises("dask to_file", ValueError, lambda: h5d.to_file(da.ones((4, 2), chunks=2), url("new.h5"), "/d"),
                 shows="remote")
    sweep.check(5)


def test_the_command_shows_no_secret(served, tmp_path):
    url, sweep, _ = served
    runs = [(["info", url("f.h5")], 0), (["info", url("f.h5:/data"), "--json"], 0),
            (["info", url("f.h5:/nope")], 1), (["info", url("missing.h5")], 1), (["info", url("junk.h5")], 1),
            (["verify", url("f.h5:/data")], 0), (["verify", "--read", url("f.h5:/data"), "--json"], 0)]
    for args, failed in runs:
        out = subprocess.run([str(H5TILE), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        sweep.output(" ".join(args), out.stdout + out.stderr)
        assert (out.returncode != 0) == bool(failed), (args, out.stdout, out.stderr)
        if args[0] == "info" or failed:  # it names the file (verify's "ok: /data" does not)
            assert "127.0.0.1" in out.stdout + out.stderr, (args, out.stdout, out.stderr)
    sweep.check(len(runs))


# -- every message the package builds goes through the redaction


def _message_argument(call: ast.Call):
    """The argument of a raise's exception, a warning or a print that holds its text."""
    if len(call.args) >= 2 and ast.unparse(call.args[0]).startswith("errno."):
        return call.args[1]
    return call.args[0] if call.args else None


def _redacted(node) -> bool:
    """Whether a message is a constant, re-raised arguments, or the redaction's result."""
    if node is None or isinstance(node, (ast.Constant, ast.Starred)):
        return True
    return isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "without_secrets"


def test_every_message_of_the_package_goes_through_the_redaction():
    unredacted = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                call = node.exc
                if isinstance(call.func, ast.Name) and call.func.id.lstrip("_")[0].islower():
                    continue  # a helper that builds the exception (its own message is checked)
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("warnings.warn", "print"):
                call = node
            elif isinstance(node, ast.FunctionDef) and node.name in ("__repr__", "__str__"):
                for ret in (n for n in ast.walk(node) if isinstance(n, ast.Return)):
                    if not _redacted(ret.value):
                        unredacted.append(f"{path.name}:{ret.lineno}: {ast.unparse(ret)[:100]}")
                continue
            else:
                continue
            if not _redacted(_message_argument(call)):
                unredacted.append(f"{path.name}:{call.lineno}: {ast.unparse(call)[:100]}")
    assert not unredacted, "\n".join(unredacted)


def test_the_python_redaction_is_the_cores():
    from h5tile import _arguments
    for text, shown in [("http://u:pw@h:8/a/b.h5?sig=S#frag", "http://h:8/a/b.h5"), ("HTTPS://h", "https://h/"),
                        ("http://h/a b.h5?sig=S", "http://h/a b.h5"), ("s3://b/q?x=1.h5", "s3://b/q"),
                        ("s3://AK:SK@b/k#f.h5", "s3://b/k"), ("ftp://u:PASS@h/f", "ftp://h/f"),
                        ("/data/a?b#c.h5", "/data/a?b#c.h5"), (pathlib.Path("/data/f.h5"), "/data/f.h5")]:
        assert _arguments.redacted(text) == shown, text
    text = "see http://u:pw@h/x?s=1 and 'https://a:b@c/d#e' and s3://k:s@b/q?x"
    assert _arguments.without_secrets(text) == h5tile._h5tile.without_secrets(text) == \
        "see http://h/x and 'https://c/d' and s3://b/q"
    assert _arguments.without_secrets("\udcff http://u:p@h/x?s") == "\\xff http://h/x"  # an undecodable byte
    assert _arguments.without_secrets("\ud800 http://u:p@h/x?s") == "\\ud800 http://h/x"  # any lone surrogate
