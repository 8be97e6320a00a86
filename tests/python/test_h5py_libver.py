"""Files the installed h5py writes at every libver bound (issue 30, item 4): h5tile reads each as
h5py does, or, where its HDF5 is older than the format (HDF5 2.0's libver "latest" chunked
datasets on an h5tile built with 1.x), raises NotHdf5FileError naming both versions; never other
data. `h5tile info` marks such a dataset and lists the others. Runs against whichever HDF5 this
build links (scripts/test_hdf5_current.sh runs it against 1.14 too)."""
import json
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

LIBVERS = ["earliest", "v110", "v112", "v114", "latest"]
DATA = np.arange(20_000, dtype=np.float64).reshape(200, 100) * 0.5
H5PY_HDF5 = tuple(int(p) for p in h5py.version.hdf5_version.split(".")[:2])


def write_with_h5py(path, libver):
    bounds = "earliest" if libver == "earliest" else (libver, libver)
    with h5py.File(path, "w", libver=bounds) as f:
        f.create_dataset("contiguous", data=DATA)
        f.create_dataset("g/chunked", data=DATA, chunks=(50, 25), compression="gzip", compression_opts=4)


def too_new_for_this_build(error: BaseException) -> bool:
    """The error h5tile raises for a format its HDF5 cannot read: both versions named."""
    message = str(error)
    found = re.search(r"needs a newer HDF5 than this h5tile's (\d+)\.(\d+)\.\d+", message)
    return (isinstance(error, h5tile.NotHdf5FileError) and found is not None and int(found.group(1)) < 2
            and "HDF5 2.0 writes such files" in message)


@pytest.mark.parametrize("libver", LIBVERS)
@pytest.mark.parametrize("name", ["/contiguous", "/g/chunked"])
def test_h5py_files_of_every_libver_read_equal_or_say_which_hdf5(tmp_path, libver, name):
    path = tmp_path / f"{libver}.h5"
    write_with_h5py(path, libver)
    with h5py.File(path, "r") as f:
        expected = f[name][...]
    try:
        got = h5tile.from_file(path, name)
    except h5tile.Error as error:
        # Only HDF5 2.0's own format may be refused, and only by a 1.x build, saying so.
        assert libver == "latest" and H5PY_HDF5 >= (2, 0), repr(error)
        assert too_new_for_this_build(error), str(error)
        with pytest.raises(h5tile.NotHdf5FileError):
            h5tile.read_box(path, name, (0, 0), (2, 2))
        return
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(h5tile.read_box(path, name, (10, 20), (30, 40)), expected[10:40, 20:60])
    with h5tile.File(path) as f:
        np.testing.assert_array_equal(f[name][5:9, ::7], expected[5:9, ::7])


def test_info_marks_the_dataset_it_cannot_open_and_lists_the_rest(tmp_path):
    path = tmp_path / "latest.h5"
    write_with_h5py(path, "latest")
    out = subprocess.run([str(BUILD / "cli" / "h5tile"), "info", str(path), "--json"], capture_output=True, text=True,
                         timeout=120)
    listed = {d["name"]: d for d in json.loads(out.stdout)["datasets"]}
    assert set(listed) == {"/contiguous", "/g/chunked"}
    assert listed["/contiguous"]["shape"] == list(DATA.shape)  # listed whatever happens to the other
    chunked = listed["/g/chunked"]
    if "error" in chunked:
        assert out.returncode == 1
        assert "needs a newer HDF5 than this h5tile's 1." in chunked["error"] and "HDF5 2.0" in chunked["error"]
    else:
        assert out.returncode == 0 and chunked["chunk"] == [50, 25] and chunked["filters"] == ["deflate"]
