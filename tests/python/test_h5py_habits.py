"""Small things h5py users trip on (issue 30, item 10): ``out=`` of another dtype, ``chunks=True``,
``compression_opts``, ``help(h5tile)`` opening with the functions, return types on every public
function. Each is compared with what h5py does where h5py has the same call."""
import ast
import pathlib
import pydoc
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


@pytest.fixture
def int16_file(tmp_path):
    data = (np.arange(120, dtype=np.int16) - 60).reshape(10, 12)
    with h5py.File(tmp_path / "i.h5", "w") as f:
        f["/a"] = data
    return tmp_path / "i.h5", data


@pytest.mark.parametrize("wanted", ["int32", "int64", "float32", "float64"])
def test_out_of_a_wider_dtype_is_filled_as_h5py_converts(int16_file, wanted):
    path, data = int16_file
    out = np.full(data.shape, 7, dtype=wanted)
    assert h5tile.from_file(path, "/a", out=out) is out
    reference = np.empty(data.shape, dtype=wanted)
    with h5py.File(path, "r") as f:
        f["/a"].read_direct(reference)
    np.testing.assert_array_equal(out, reference)
    assert out.dtype == np.dtype(wanted)


@pytest.mark.parametrize("wanted", ["int8", "uint16", "float16"])
def test_out_of_a_dtype_that_could_change_values_says_what_to_pass(int16_file, wanted):
    path, data = int16_file
    out = np.zeros(data.shape, dtype=wanted)
    with pytest.raises(h5tile.InvalidArgumentError, match=f"out has dtype {wanted} but the dataset holds int16.*"
                                                          "pass out of dtype int16"):
        h5tile.from_file(path, "/a", out=out)
    assert not out.any()  # nothing was written into it


def test_out_of_another_shape_still_names_the_shape(int16_file):
    path, _ = int16_file
    with pytest.raises(h5tile.InvalidArgumentError, match="shape"):
        h5tile.from_file(path, "/a", out=np.zeros((3, 3), dtype=np.int64))


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_chunks_true_chunks_as_h5py_does(tmp_path, compression):
    data = np.arange(50_000, dtype=np.float64).reshape(250, 200)
    h5tile.to_file(data, tmp_path / "t.h5", "/a", chunks=True, compression=compression).wait()
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert f["/a"].chunks is not None  # chunked, as h5py's chunks=True gives
        assert f["/a"].compression == compression
        np.testing.assert_array_equal(f["/a"][...], data)
    h5py.File(tmp_path / "g.h5", "w").close()
    with h5tile.File(tmp_path / "g.h5", "a") as f:
        f.create_dataset("b", data=data, chunks=True)
    with h5py.File(tmp_path / "g.h5", "r") as f:
        assert f["/b"].chunks is not None
        np.testing.assert_array_equal(f["/b"][...], data)


def test_chunks_true_with_a_contiguous_layout_says_why_not(tmp_path):
    with pytest.raises(h5tile.InvalidArgumentError, match="chunks=True asks for a chunked dataset"):
        h5tile.to_file(np.ones(4), tmp_path / "c.h5", "/a", chunks=True, layout="contiguous")


def test_compression_opts_is_the_level(tmp_path):
    data = np.arange(100_000, dtype=np.int32) % 97
    h5tile.to_file(data, tmp_path / "o.h5", "/a", compression="gzip", compression_opts=7).wait()
    with h5py.File(tmp_path / "o.h5", "r") as f:
        assert (f["/a"].compression, f["/a"].compression_opts) == ("gzip", 7)
        np.testing.assert_array_equal(f["/a"][...], data)
    h5tile.to_file(data, tmp_path / "p.h5", "/a", compression="gzip", level=7, compression_opts=7).wait()
    with pytest.raises(h5tile.InvalidArgumentError, match="level=3 and compression_opts=7 disagree"):
        h5tile.to_file(data, tmp_path / "q.h5", "/a", compression="gzip", level=3, compression_opts=7)


def test_help_opens_with_the_functions():
    text = pydoc.render_doc(h5tile, renderer=pydoc.plaintext)
    before_classes = text.split("\nCLASSES\n")[0]
    functions = [n for n in h5tile.__all__ if callable(getattr(h5tile, n)) and not isinstance(getattr(h5tile, n), type)]
    missing = [n for n in functions if n not in before_classes]
    assert not missing, f"help(h5tile) names these only after pages of classes: {missing}"
    assert before_classes.count("\n") < 80
    first = "\n".join(text.splitlines()[:30])
    for name in ("to_file", "from_file", "from_file_batched", "File"):
        assert name in first


def _public_functions_without_return_types():
    missing = []
    dunders = {"__getitem__", "__iter__", "__next__", "__enter__", "__len__", "__array__", "__contains__", "__repr__"}
    for path in sorted((ROOT / "python" / "h5tile").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and node.returns is None:
                missing.append(f"{path.name}: {node.name}")
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for f in node.body:
                    public = not f.name.startswith("_") or f.name in dunders if isinstance(f, ast.FunctionDef) else False
                    if public and f.returns is None:
                        missing.append(f"{path.name}: {node.name}.{f.name}")
    return missing


def test_every_public_function_has_a_return_type():
    assert _public_functions_without_return_types() == []
