"""h5tile.File over Python file-like objects, as h5py takes them (issue 40, item 5): io.BytesIO
(its bytes held by the core), an open file (read by pread on its descriptor, in parallel), and
any object that only reads, seeks and tells; compared with h5py over the same objects."""
import io
import pickle
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


class OnlyReads:
    """A file-like object with read, seek and tell and nothing else (no buffer, no descriptor)."""

    def __init__(self, data: bytes):
        self._inner = io.BytesIO(data)

    def read(self, size=-1):
        return self._inner.read(size)

    def seek(self, offset, whence=0):
        return self._inner.seek(offset, whence)

    def tell(self):
        return self._inner.tell()


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "objects.h5"
    rng = np.random.default_rng(5)
    with h5py.File(p, "w") as f:
        f.create_dataset("gz", data=rng.random((300, 200)), chunks=(32, 64), compression="gzip", shuffle=True)
        f["plain"] = np.arange(1000, dtype="i4").reshape(10, 100)
        f["g/text"] = np.array([b"ab", b"cde"])
        f["g"].attrs["units"] = "m"
        f["ext"] = h5py.ExternalLink("other.h5", "/x")
    return p


@pytest.mark.parametrize("kind", ["bytesio", "open file", "only reads"])
def test_a_file_object_reads_as_h5py_reads_it(path, kind):
    def opened():
        if kind == "bytesio":
            return io.BytesIO(path.read_bytes())
        if kind == "open file":
            return open(path, "rb")  # noqa: SIM115 (closed below)
        return OnlyReads(path.read_bytes())

    theirs, mine = opened(), opened()
    try:
        with h5py.File(theirs, "r") as ref, h5tile.File(mine) as t:
            assert list(t.keys()) == list(ref.keys())
            for name, key in (("gz", np.s_[...]), ("gz", np.s_[10:250:3, 5]), ("plain", np.s_[[1, 4], 3:9]),
                              ("g/text", np.s_[...])):
                np.testing.assert_array_equal(t[name][key], ref[name][key])
            assert t["g"].attrs["units"] == ref["g"].attrs["units"]
            with pytest.raises(h5tile.VirtualSourceError):
                t["ext"]  # a file object's external links lead nowhere h5tile may go
        assert mine.tell() == 0 or kind == "open file"
        with pytest.raises(ValueError, match="closed"):
            t["gz"][0]
    finally:
        for obj in (theirs, mine):
            if hasattr(obj, "close"):
                obj.close()


def test_a_file_object_opens_read_only_and_does_not_pickle(path):
    with pytest.raises(ValueError, match="mode 'r' only"):
        h5tile.File(io.BytesIO(path.read_bytes()), "a")
    with h5tile.File(io.BytesIO(path.read_bytes())) as t:
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(t)


def test_a_text_mode_object_and_junk_are_refused(path, tmp_path):
    with pytest.raises(TypeError, match="binary mode"):
        h5tile.File(io.StringIO("not bytes"))
    with pytest.raises(OSError):
        h5tile.File(io.BytesIO(b"not an HDF5 file at all" * 10))
