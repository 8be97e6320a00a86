"""``last_remote_io()`` reports the last call that read a URL, as documented (issue 39, item 15):
a read through an open ``h5tile.File`` (whose dataset stays open between reads), an attribute read
and a listing each start a new report, instead of adding their requests to the previous call's."""
import os
import sys
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


@pytest.fixture()
def url(nginx_server):
    """f.h5 on nginx: /x, 8 MiB in chunks of 256 KiB, with an attribute; modified a minute ago, so
    that a File keeps its dataset open between reads (an object changed in the last 2 s is opened
    by each read)."""
    path = nginx_server.root / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(1 << 20, dtype="f8").reshape(2048, 512), chunks=(64, 512))
        f["x"].attrs["units"] = "m"
    past = time.time() - 60
    os.utime(path, (past, past))
    with changed_settings(h5tile.settings, remote_block_size=64 << 10):
        yield f"{nginx_server.url}/f.h5"


def test_reads_through_an_open_file_each_report_their_own_requests(url):
    with h5tile.File(url) as f:
        ds = f["x"]
        ds[0:64]  # opens the dataset (kept)
        reports = []
        for _ in range(3):  # the same chunk again: each read asks the same of the server
            assert np.array_equal(ds[0:64, :2], np.arange(64 * 512, dtype="f8").reshape(64, 512)[:, :2])
            reports.append(h5tile.last_remote_io())
        assert reports[0]["requests"] >= 1
        assert reports[1] == reports[0] and reports[2] == reports[0], reports
        # A read of other chunks reports its own bytes, not those of the reads before it.
        ds[1024:1088]
        other = h5tile.last_remote_io()
        assert 256 << 10 <= other["bytes"] < 2 * (256 << 10) + (64 << 10) * 4, other


def test_attribute_reads_and_listings_report_their_own_requests(url):
    whole = h5tile.from_file(url, "/x")
    assert whole.shape == (2048, 512)
    read = h5tile.last_remote_io()
    assert read["bytes"] >= whole.nbytes, read
    with h5tile.File(url) as f:  # reads the root's attributes
        opened = h5tile.last_remote_io()
        assert 0 < opened["bytes"] < whole.nbytes // 4, opened
        assert f["x"].attrs["units"] == "m"
        attributes = h5tile.last_remote_io()
        assert 0 < attributes["bytes"] < whole.nbytes // 4, attributes
    h5tile.from_file(url, "/x")
    with h5tile.File(url) as f:
        assert list(f.keys()) == ["x"]  # lists the file's objects
        listed = h5tile.last_remote_io()
        assert 0 < listed["bytes"] < whole.nbytes // 4, listed
