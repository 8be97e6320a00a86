"""Reads of webhdfs:// URLs from a WebHDFS-speaking test server of our own (servers/faults.py:
WebHdfsServer, a namenode that answers GETFILESTATUS and redirects OPEN to a datanode path on the
same server). Every read compared with h5py reading the same file locally; a body of another length
than asked is an error, never shifted bytes."""
import errno
import json
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, compressible, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"


@pytest.fixture(autouse=True)
def remote_settings():
    with changed_settings(h5tile.settings, remote_block_size=4096, remote_timeout=5, remote_retries=2):
        yield


def _put(server, tmp_path, name, **datasets):
    path = tmp_path / name.strip("/").replace("/", "_")
    with h5py.File(path, "w") as f:
        for key, (data, kwargs) in datasets.items():
            f.create_dataset(key, data=data, **kwargs)
    server.put(name, path.read_bytes())
    return path


def _local(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()]


def test_webhdfs_reads_as_h5py_reads_the_file_locally(webhdfs_server, tmp_path):
    path = _put(webhdfs_server, tmp_path, "/data/run 1/f.h5",
                contiguous=(compressible("float32", (300, 100), seed=1), {}),
                gzip=(compressible("int16", (200, 90), seed=2), dict(chunks=(20, 45), compression="gzip",
                                                                      shuffle=True)),
                c128=(compressible("complex128", (40, 30), seed=3), dict(chunks=(8, 30))))
    url = webhdfs_server.webhdfs_url("/data/run 1/f.h5")
    for name in ("contiguous", "gzip", "c128"):
        assert same_bytes(h5tile.from_file(url, f"/{name}"), _local(path, name)), name
    io = h5tile.last_remote_io()
    assert io["requests"] >= 2 and io["retries"] == 0, io
    ops = [p for (_, p, _, _) in webhdfs_server.log if p.startswith("/webhdfs/v1/")]
    assert any("op=GETFILESTATUS" in p for p in ops) and any("op=OPEN" in p for p in ops)
    assert all("/data/run%201/f.h5" in p for p in ops), ops  # the path percent-encoded
    datanode = [p for (_, p, _, _) in webhdfs_server.log if p.startswith("/datanode/")]
    assert len(datanode) == len([p for p in ops if "op=OPEN" in p]), "every OPEN followed its redirect"
    box = h5tile.read_box(url, "/gzip", (13, 7), (50, 30))
    assert same_bytes(box, _local(path, "gzip")[13:63, 7:37])


def test_a_namenode_that_answers_open_itself_is_read_too(webhdfs_server, tmp_path):
    path = _put(webhdfs_server, tmp_path, "/f.h5", data=(np.arange(20000, dtype="u4"), {}))
    webhdfs_server.plan("no_redirect", times=1000)
    assert same_bytes(h5tile.from_file(webhdfs_server.webhdfs_url("/f.h5"), "/data"), _local(path, "data"))
    assert not any(p.startswith("/datanode/") for (_, p, _, _) in webhdfs_server.log)


@pytest.fixture
def stored(webhdfs_server, tmp_path):
    a = np.random.default_rng(5).standard_normal((128, 128))  # 128 KiB, contiguous
    _put(webhdfs_server, tmp_path, "/f.h5", data=(a, {}))
    return webhdfs_server, webhdfs_server.webhdfs_url("/f.h5"), a


def test_a_short_body_is_retried_to_the_right_bytes(stored):
    server, url, a = stored
    server.plan("short_body", times=1, skip=1)  # the first block at open comes whole
    assert same_bytes(h5tile.from_file(url, "/data", threads=1), a)
    assert h5tile.last_remote_io()["retries"] >= 1


def test_a_lasting_short_body_is_an_io_error(stored):
    server, url, _ = stored
    server.plan("short_body", times=1000, skip=1)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(url, "/data", threads=1)
    assert "gave up after 2 retries" in str(e.value) and url in str(e.value), str(e.value)


@pytest.mark.parametrize("kind,reason", [("long_body", r"answered \d+ bytes \(Content-Length\), not \d+"),
                                         ("long_unframed", "the body is longer than")])
def test_a_longer_body_is_an_error_never_shifted_bytes(stored, kind, reason):
    server, url, _ = stored
    server.plan(kind, times=1000, skip=1)
    with pytest.raises(h5tile.IoError, match=reason) as e:
        h5tile.from_file(url, "/data", threads=1)
    assert e.value.errno == errno.EPROTO and url in str(e.value)


def test_a_redirect_to_another_protocol_is_refused(stored):
    server, url, _ = stored
    server.plan("redirect_ftp", times=1000, skip=1)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(url, "/data", threads=1)
    assert url in str(e.value)


def test_a_missing_file_is_file_not_found(webhdfs_server):
    url = webhdfs_server.webhdfs_url("/no/such.h5")
    with pytest.raises(FileNotFoundError) as e:
        h5tile.from_file(url, "/data")
    assert url in str(e.value) and "404" in str(e.value)
    # The open asked for the status only: no data request for a file that is not there.
    assert [p for (_, p, _, _) in webhdfs_server.log] == ["/webhdfs/v1/no/such.h5?op=GETFILESTATUS"]


def test_a_file_that_disappears_after_the_open_is_file_not_found(stored):
    server, url, _ = stored
    server.plan("status:404", times=1000, skip=3)  # the status and the first block (OPEN, datanode) go through
    with pytest.raises(FileNotFoundError):
        h5tile.from_file(url, "/data", threads=1)


def test_unavailable_is_retried(stored):
    server, url, a = stored
    server.plan("status:503", times=2, skip=1)
    assert same_bytes(h5tile.from_file(url, "/data", threads=1), a)
    assert h5tile.last_remote_io()["retries"] >= 2


def test_the_query_string_goes_with_every_request_and_stays_out_of_messages(stored):
    server, url, a = stored
    assert same_bytes(h5tile.from_file(url + "?user.name=alice", "/data"), a)
    namenode = [p for (_, p, _, _) in server.log if p.startswith("/webhdfs/v1/")]
    assert namenode and all(p.endswith("&user.name=alice") for p in namenode), namenode
    with pytest.raises(FileNotFoundError) as e:
        h5tile.from_file(url.replace("f.h5", "gone.h5") + "?delegation=SECRET", "/data")
    assert "SECRET" not in str(e.value) and url.replace("f.h5", "gone.h5") in str(e.value)


def test_the_command_reads_webhdfs_urls(webhdfs_server, tmp_path):
    a = compressible("float64", (10, 100), seed=8)
    _put(webhdfs_server, tmp_path, "/user/me/c.h5", **{"g/data": (a, dict(chunks=(5, 50), compression="gzip"))})
    url = webhdfs_server.webhdfs_url("/user/me/c.h5")  # host:port, then the dataset after the last ':'
    out = subprocess.run([str(H5TILE), "info", f"{url}:/g/data", "--json"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["datasets"][0]["shape"] == [10, 100]
    out = subprocess.run([str(H5TILE), "verify", "--read", f"{url}:/g/data"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
