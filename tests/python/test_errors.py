"""Bad input gives a distinct error type with a message that names the file and dataset."""
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import tempfile

import h5py
import numpy as np
import pytest

from conftest import random_array


def test_missing_file(tool, tmp_path):
    err = tool.read(tmp_path / "nope.h5", "/x")
    assert err["error"] == "FileNotFound" and "nope.h5" in err["message"]


@pytest.mark.parametrize("content", [b"", b"not an hdf5 file at all\n" * 100])
def test_not_hdf5(tool, tmp_path, content):
    (tmp_path / "bad.h5").write_bytes(content)
    err = tool.read(tmp_path / "bad.h5", "/x")
    assert err["error"] == "NotHdf5File" and "bad.h5" in err["message"]


def test_missing_dataset_names_it_and_lists_neighbours(tool, tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["g/a"] = np.zeros(2)
        f["g/b"] = np.zeros(2)
    err = tool.read(tmp_path / "f.h5", "/g/c")
    assert err["error"] == "DatasetNotFound"
    assert "'/g/c'" in err["message"] and "f.h5" in err["message"] and "a, b" in err["message"]
    err = tool.read(tmp_path / "f.h5", "/h/c")
    assert err["error"] == "DatasetNotFound" and "no member 'h'" in err["message"]


def test_group_is_not_a_dataset(tool, tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["g/x"] = np.zeros(2)
        f["g/y"] = np.zeros(3)
        f.create_group("g/sub")
    err = tool.read(tmp_path / "f.h5", "/g")
    assert err["error"] == "NotADataset"
    assert "is a group" in err["message"] and "x, y" in err["message"] and "sub" not in err["message"]


@pytest.mark.parametrize("make,needle", [
    (lambda f: f.create_dataset("x", data=["a", "bc"], dtype=h5py.string_dtype()), "variable-length string"),
    # Compound, enum and array types read (test_types.py) unless a part of them is of a type
    # whose bytes are not the values (variable-length members, references).
    (lambda f: f.create_dataset("x", shape=(2,), dtype=[("p", "i4"), ("q", h5py.vlen_dtype("i4"))]),
     "compound type {p, q}"),
    (lambda f: f.create_dataset("x", shape=(2,), dtype=h5py.vlen_dtype("i4")), "variable-length sequence"),
    (lambda f: f.create_dataset("x", shape=(2,), dtype=h5py.ref_dtype), "reference"),
    (lambda f: f.create_dataset("x", data=np.zeros(2, np.longdouble)), "float of 16 bytes"),
    (lambda f: h5py.h5d.create(f.id, b"x", h5py.h5t.array_create(h5py.h5t.py_create(h5py.string_dtype(), logical=True),
                                                                 (3,)), h5py.h5s.create_simple((2,))), "array type"),
])
def test_unsupported_types_are_named(tool, tmp_path, make, needle):
    with h5py.File(tmp_path / "t.h5", "w") as f:
        make(f)
    err = tool.read(tmp_path / "t.h5", "/x")
    assert err.get("error") == "UnsupportedType", (dtype, err)
    assert needle in err["message"] and "t.h5" in err["message"] and "'/x'" in err["message"]


def test_missing_virtual_source_is_an_error_naming_it(tool, tmp_path):
    a = random_array("int32", (30, 2))
    tool.write(a, tmp_path / "out.h5", ranks=3)
    tile = sorted((tmp_path / "out.h5.tiles").rglob("tile-00001.h5"))[0]
    tile.unlink()
    err = tool.read(tmp_path / "out.h5", "/data")
    assert err["error"] == "VirtualSourceError"
    assert "tile-00001.h5" in err["message"] and "[10:20, 0:2]" in err["message"]


def test_virtual_source_of_the_wrong_shape(tool, tmp_path):
    tool.write(random_array("int32", (30, 2)), tmp_path / "out.h5", ranks=3)
    tile = sorted((tmp_path / "out.h5.tiles").rglob("tile-00002.h5"))[0]
    with h5py.File(tile, "w") as f:
        f["tile"] = np.zeros((3, 2), "i4")
    err = tool.read(tmp_path / "out.h5", "/data")
    assert err["error"] == "VirtualSourceError" and "tile-00002.h5" in err["message"]
    assert "shape [3, 2]" in err["message"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tool, tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["x"] = np.zeros(2)
    os.chmod(tmp_path / "f.h5", 0)
    err = tool.read(tmp_path / "f.h5", "/x")
    assert err["error"] == "Error" and "Permission denied" in err["message"]


def reachable_by_others(path: pathlib.Path) -> bool:
    """Whether a user who is neither the owner nor in the group can reach `path` (search
    permission on every folder above it) and read it: what user nobody can load."""
    path = pathlib.Path(os.path.abspath(path))
    for p in {path, path.resolve()}:
        if not all(os.stat(folder).st_mode & stat.S_IXOTH for folder in p.parents):
            return False
        if not os.stat(p).st_mode & stat.S_IROTH:
            return False
    return True


def copy_for_another_user(binary: pathlib.Path, folder: pathlib.Path) -> dict:
    """Copies `binary` into `folder` with the shared libraries it loads that other users cannot
    reach (the checkout's own, such as the HDF5 1.14 build, where the checkout is in a 0700
    folder), and returns the environment that makes the copy load them."""
    libs = folder / "lib"
    libs.mkdir(parents=True)
    listed = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    for soname, found in re.findall(r"^\s*(\S+) => (/\S+) \(", listed, re.M):
        if not reachable_by_others(pathlib.Path(found)):
            shutil.copy(found, libs / soname)
    shutil.copy(binary, folder / binary.name)
    for p in [folder, libs, folder / binary.name, *libs.iterdir()]:
        os.chmod(p, 0o755)
    return dict(os.environ, LD_LIBRARY_PATH=str(libs))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the reader as another user (test_unreadable_file runs)")
def test_unreadable_file_for_another_user(tool):
    # As root, the reader runs as user nobody (65534) on a file only root may read. Its folder
    # must be one that nobody can enter: the temporary folder where it is (TMPDIR may be private
    # to this run, as scripts/test.sh makes it), else /tmp.
    base = tempfile.gettempdir()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="h5tile-perm-", dir=base if reachable_by_others(base) else "/tmp"))
    try:
        os.chmod(folder, 0o777)
        with h5py.File(folder / "f.h5", "w") as f:
            f["x"] = np.zeros(2)
        os.chmod(folder / "f.h5", 0o600)
        # A copy nobody may run, with the libraries it needs, wherever the checkout is.
        env = copy_for_another_user(tool.path, folder / "reader")
        reader = folder / "reader" / tool.path.name
        as_nobody = dict(capture_output=True, text=True, timeout=60, user=65534, group=65534, extra_groups=[],
                         cwd=folder, env=env)
        # The copy runs as nobody (so that what fails below is the file, not loading the tool).
        loads = subprocess.run([str(reader), "hdf5-version"], **as_nobody)
        assert loads.returncode == 0 and "hdf5" in json.loads(loads.stdout), loads.stdout + loads.stderr
        proc = subprocess.run([str(reader), "read", str(folder / "f.h5"), "/x", str(folder / "out.raw")], **as_nobody)
        err = json.loads(proc.stdout)
        assert proc.returncode == 1 and "Permission denied" in err["message"] and "f.h5" in err["message"], err
        assert not (folder / "out.raw").exists()
    finally:
        shutil.rmtree(folder)


def test_truncated_and_corrupted_files_are_clear_errors(tool, tmp_path):
    a = random_array("float64", (200, 50))
    with h5py.File(tmp_path / "good.h5", "w") as f:
        f["x"] = a
    data = (tmp_path / "good.h5").read_bytes()
    # Truncated inside the raw data: the read fails with the file named (never garbage).
    (tmp_path / "trunc.h5").write_bytes(data[: len(data) - 5000])
    err = tool.read(tmp_path / "trunc.h5", "/x")
    assert isinstance(err, dict) and "trunc.h5" in err["message"], err
    # Truncated inside the metadata, and the superblock overwritten: not readable as HDF5.
    (tmp_path / "head.h5").write_bytes(data[:100])
    err = tool.read(tmp_path / "head.h5", "/x")
    assert isinstance(err, dict) and err["error"] in ("NotHdf5File", "Error") and "head.h5" in err["message"], err
    corrupted = bytearray(data)
    corrupted[8:48] = b"\xff" * 40  # superblock fields after the signature
    (tmp_path / "bad.h5").write_bytes(bytes(corrupted))
    err = tool.read(tmp_path / "bad.h5", "/x")
    assert isinstance(err, dict) and "bad.h5" in err["message"], err


@pytest.mark.parametrize("name", ["with space/out file.h5", "ünïcødé/データ.h5"])
def test_paths_with_spaces_and_non_ascii(tool, tmp_path, name):
    a = random_array("int32", (17, 3))
    tool.write(a, tmp_path / name, ranks=3)
    with h5py.File(tmp_path / name, "r") as f:
        assert np.array_equal(f["data"][...], a)
    assert np.array_equal(tool.read(tmp_path / name, tmp=tmp_path), a)
