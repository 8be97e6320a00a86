"""Reads of http:// URLs, against real servers started by the tests on loopback: nginx serving
files that h5py and h5tile wrote (each read compared byte for byte with h5py reading the same file
locally), and a server of our own that misbehaves (servers/faults.py): every fault ends in the
right bytes after retries, or in a clear error; never in wrong bytes."""
import errno
import json
import os
import subprocess
import time
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, compressible, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"

try:
    import hdf5plugin
except ImportError:  # pragma: no cover (install_deps.sh installs it)
    hdf5plugin = None


@pytest.fixture(autouse=True)
def remote_settings():
    """Small blocks, so that even small files need requests after the first; short timeouts."""
    # remote_connections: restored after the tests that change it.
    with changed_settings(h5tile.settings, remote_block_size=4096, remote_timeout=5, remote_retries=3,
                          remote_connections=h5tile.settings.remote_connections()):
        yield


def local_read(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()]


# --- nginx: the matrix of layouts, codecs and dtypes -------------------------------------------

H5PY_CASES = {
    "contiguous": dict(),
    "chunked": dict(chunks=(16, 50)),
    "gzip_shuffle": dict(chunks=(16, 50), compression="gzip", shuffle=True),
    "fletcher32": dict(chunks=(32, 25), compression="gzip", fletcher32=True),
}


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "float32", "float64", "complex64", "bool"])
@pytest.mark.parametrize("case", sorted(H5PY_CASES))
def test_h5py_files_read_over_http_as_h5py_reads_them_locally(nginx_server, dtype, case):
    a = compressible(dtype, (200, 100), seed=3)
    path = nginx_server.root / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("g/data", data=a, **H5PY_CASES[case])
    got = h5tile.from_file(f"{nginx_server.url}/f.h5", "/g/data")
    assert same_bytes(got, local_read(path, "g/data"))


@pytest.mark.skipif(hdf5plugin is None, reason="hdf5plugin is not installed")
def test_zstd_chunks_over_http(nginx_server):
    a = compressible("float32", (300, 64), seed=5)
    path = nginx_server.root / "z.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a, chunks=(20, 64), **hdf5plugin.Zstd(clevel=3))
    got = h5tile.from_file(f"{nginx_server.url}/z.h5", "/data")
    assert same_bytes(got, local_read(path, "data"))


@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_files_h5tile_wrote_read_over_http(nginx_server, layout):
    a = random_array("float64", (123, 77), seed=9)
    path = nginx_server.root / "t.h5"
    h5tile.to_file(a, path, "/x", layout=layout).wait()
    url = f"{nginx_server.url}/t.h5"
    assert same_bytes(h5tile.from_file(url, "/x"), local_read(path, "x"))
    assert same_bytes(h5tile.read_box(url, "/x", [10, 5], [50, 60]), local_read(path, "x")[10:60, 5:65])
    out = np.empty_like(a)
    assert h5tile.from_file(url, "/x", out=out) is out and same_bytes(out, a)
    blocks = [(b.copy(), tuple(o)) for b, o in h5tile.from_file_batched(url, "/x", [40, 77])]
    assert [o for _, o in blocks] == [(0, 0), (40, 0), (80, 0), (120, 0)]
    assert same_bytes(np.concatenate([b for b, _ in blocks]), a)
    info = h5tile.describe(url, "/x")
    assert list(info["shape"]) == [123, 77] and info["dtype"] == "float64" and info["layout"] == layout


def test_consolidate_reads_a_url_into_a_local_file(nginx_server, tmp_path):
    a = compressible("int32", (90, 40), seed=6)
    with h5py.File(nginx_server.root / "in.h5", "w") as f:
        f.create_dataset("data", data=a, chunks=(10, 40), compression="gzip")
    h5tile.consolidate(f"{nginx_server.url}/in.h5", "/data", tmp_path / "out.h5")
    assert same_bytes(local_read(tmp_path / "out.h5", "data"), a)


def test_virtual_layout_over_http_reads_its_tiles(nginx_server):
    # More in test_remote_virtual.py.
    a = random_array("int32", (40, 10), seed=2)
    h5tile.to_file(a, nginx_server.root / "v.h5", "/data", layout="virtual", ranks=2).wait()
    url = f"{nginx_server.url}/v.h5"
    assert same_bytes(h5tile.from_file(url, "/data"), a)
    assert h5tile.describe(url, "/data")["layout"] == "virtual"


def test_an_external_link_in_a_remote_file_is_not_followed(nginx_server, tmp_path, monkeypatch):
    # Its target exists on the server and in the working directory: neither is opened.
    for where in (nginx_server.root, tmp_path):
        with h5py.File(where / "other.h5", "w") as f:
            f["data"] = np.arange(10)
    with h5py.File(nginx_server.root / "main.h5", "w") as f:
        f["ext"] = h5py.ExternalLink("other.h5", "/data")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(h5tile.Error, match="external"):
        h5tile.from_file(f"{nginx_server.url}/main.h5", "/ext")
    assert all("main.h5" in line for line in nginx_server.requests())


def test_a_chunk_record_past_the_end_of_a_remote_file_is_an_error(nginx_server):
    # No descriptor to fstat: the records are checked against the object's size, before a read.
    from test_sizes_and_chunk_records import forge_chunk_size

    path = nginx_server.root / "lying.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(64 * 8, dtype="<i4").reshape(64, 8), chunks=(16, 8), compression="gzip")
    forge_chunk_size(path, "x", (16, 0), 0xFFFFFFFF)
    with pytest.raises(h5tile.Error, match=r"chunk \[16:32, 0:8\] is recorded at byte \d+ with 4294967295 bytes, "
                                           r"past the end of the file"):
        h5tile.from_file(f"{nginx_server.url}/lying.h5", "/x")


def test_writes_to_a_url_fail_at_once_and_write_nothing(nginx_server):
    before = sorted(p.name for p in nginx_server.root.iterdir())
    with pytest.raises(h5tile.InvalidArgumentError, match="s3:// URLs only"):
        h5tile.to_file(np.arange(10), f"{nginx_server.url}/new.h5?sig=SECRET", "/data").wait()
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        h5tile.to_file(np.arange(10), f"{nginx_server.url}/new.h5?sig=SECRET", "/data").wait()
    assert "SECRET" not in str(e.value)
    assert sorted(p.name for p in nginx_server.root.iterdir()) == before
    assert not any(" PUT " in line or " POST " in line for line in nginx_server.requests())


def test_a_missing_object_is_file_not_found_naming_the_url_without_its_query(nginx_server):
    url = f"{nginx_server.url}/missing.h5?X-Amz-Signature=SECRET"
    with pytest.raises(FileNotFoundError) as e:
        h5tile.from_file(url, "/data")
    assert f"{nginx_server.url}/missing.h5" in str(e.value) and "SECRET" not in str(e.value)
    assert "404" in str(e.value)


def test_opening_a_small_file_and_reading_one_dataset_costs_few_requests(nginx_server):
    path = nginx_server.root / "small.h5"
    with h5py.File(path, "w") as f:
        for i in range(20):
            f[f"d{i}"] = np.arange(100, dtype="f4") + i
    h5tile.settings.set_remote_block_size("4M")
    got = h5tile.from_file(f"{nginx_server.url}/small.h5", "/d7")
    assert same_bytes(got, np.arange(100, dtype="f4") + 7)
    io = h5tile.last_remote_io()
    print("small file, one dataset:", io)
    # The first request fetches the first block, which holds the whole small file.
    assert io["requests"] == 1 and io["critical_path"] == 1 and io["retries"] == 0
    assert io["bytes"] == path.stat().st_size
    assert len(nginx_server.requests()) == 1


def test_chunk_requests_are_coalesced(nginx_server):
    a = compressible("int16", (64, 4096), seed=1)
    path = nginx_server.root / "c.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a, chunks=(1, 4096), compression="gzip")  # 64 small chunks
    h5tile.settings.set_remote_block_size("4M")  # the whole file at open: nothing more to fetch
    assert same_bytes(h5tile.from_file(f"{nginx_server.url}/c.h5", "/data"), a)
    assert h5tile.last_remote_io()["requests"] == 1
    assert path.stat().st_size > 3 * 65536
    h5tile.settings.set_remote_block_size("64K")  # the chunks now come in far fewer requests than 64
    assert same_bytes(h5tile.from_file(f"{nginx_server.url}/c.h5", "/data", threads=1), a)
    io = h5tile.last_remote_io()
    print(f"64 gzip chunks in {path.stat().st_size} bytes, 64 KiB blocks:", io)
    assert io["requests"] <= 8 and io["critical_path"] == io["requests"]


def test_the_command_reads_urls(nginx_server, tmp_path):
    a = random_array("float32", (50, 8), seed=4)
    with h5py.File(nginx_server.root / "c.h5", "w") as f:
        f.create_dataset("g/data", data=a, chunks=(10, 8), compression="gzip")
    url = f"{nginx_server.url}/c.h5"
    out = subprocess.run([str(H5TILE), "info", url, "--json"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    info = {d["name"]: d for d in json.loads(out.stdout)["datasets"]}
    assert info["/g/data"]["shape"] == [50, 8]
    out = subprocess.run([str(H5TILE), "info", f"{url}:/g/data", "--json"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([str(H5TILE), "verify", "--read", f"{url}:/g/data"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    with h5py.File(nginx_server.root / "c.h5", "a") as f:  # a byte of a chunk broken: verify --read says so
        offset = f["g/data"].id.get_chunk_info(0).byte_offset
    with open(nginx_server.root / "c.h5", "r+b") as f:
        f.seek(offset + 3)
        f.write(b"\xff\xff\xff\xff")
    out = subprocess.run([str(H5TILE), "verify", "--read", f"{url}:/g/data"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr


# --- the fault server ---------------------------------------------------------------------------

@pytest.fixture()
def faulty(fault_server, tmp_path):
    """A contiguous float64 dataset of 256 KiB on the fault server, and its bytes."""
    a = random_array("float64", (256, 128), seed=11)
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f["data"] = a
    fault_server.put("/f.h5", path.read_bytes())
    return fault_server, f"{fault_server.url}/f.h5?token=SECRET", a


@pytest.mark.parametrize("kind", ["status:503", "status:429", "status:500", "drop", "short_body", "delay:3"])
def test_passing_faults_are_retried_to_the_right_bytes(faulty, kind):
    server, url, a = faulty
    h5tile.settings.set_remote_timeout(1)  # a first byte 3 s late: a stall past the timeout, retried
    server.plan(kind, times=1 if kind.startswith("delay") else 2, skip=1)  # the open goes through
    got = h5tile.from_file(url, "/data", threads=1)
    assert same_bytes(got, a)
    io = h5tile.last_remote_io()
    assert io["retries"] >= 1, io


@pytest.mark.parametrize("kind", ["status:503", "drop", "short_body"])
def test_lasting_faults_end_in_an_io_error_naming_the_url(faulty, kind):
    server, url, _ = faulty
    server.plan(kind, times=1000, skip=1)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(url, "/data", threads=1)
    message = str(e.value)
    assert "gave up after 3 retries" in message and server.url + "/f.h5" in message, message
    assert "SECRET" not in message


@pytest.mark.parametrize("kind,reason", [("ignore_range", "ignored the Range header"),
                                         ("wrong_range", "does not match the bytes asked for"),
                                         ("short_length", "the body ended after")])
def test_broken_answers_are_errors_never_wrong_bytes(faulty, kind, reason):
    server, url, _ = faulty
    server.plan(kind, times=1000, skip=1)
    with pytest.raises(h5tile.IoError, match=reason) as e:
        h5tile.from_file(url, "/data", threads=1)
    assert "SECRET" not in str(e.value)


def test_a_server_that_ignores_range_at_open_is_refused(faulty):
    server, url, _ = faulty
    server.plan("ignore_range", times=1000)
    with pytest.raises(h5tile.IoError, match="ignored the Range header"):
        h5tile.from_file(url, "/data")


@pytest.mark.parametrize("honour_if_match", [True, False])
def test_an_object_replaced_during_a_read_is_an_error(faulty, honour_if_match):
    server, url, _ = faulty
    server.honour_if_match = honour_if_match  # False: only the new ETag tells
    server.plan("replace", times=1, skip=1)  # replaced just before the first request after the open
    with pytest.raises(h5tile.IoError, match="changed") as e:
        h5tile.from_file(url, "/data", threads=1)
    assert e.value.errno == errno.ESTALE
    assert all(r[3] is not None for r in server.log[1:]), "every request after the open carries If-Match"


def test_forbidden_is_a_permission_error_without_the_query(faulty):
    server, url, _ = faulty
    server.plan("status:403", times=1000)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(url, "/data")
    assert e.value.errno == errno.EACCES and "403" in str(e.value)
    assert server.url + "/f.h5" in str(e.value) and "SECRET" not in str(e.value)


def test_a_server_that_never_answers_times_out_within_the_budget(faulty):
    server, url, _ = faulty
    h5tile.settings.set_remote_timeout(1)
    h5tile.settings.set_remote_retries(1)
    server.plan("delay:3", times=1000)
    with pytest.raises(h5tile.IoError, match="gave up after"):
        h5tile.from_file(url, "/data")


def test_remote_settings_are_validated():
    with pytest.raises(h5tile.InvalidArgumentError):
        h5tile.settings.set_remote_connections(0)
    with pytest.raises(h5tile.InvalidArgumentError):
        h5tile.settings.set_remote_block_size(100)
    with pytest.raises(h5tile.InvalidArgumentError):
        h5tile.settings.set_remote_timeout(0)
    with pytest.raises(h5tile.InvalidArgumentError):
        h5tile.settings.set_remote_retries(101)
    env = dict(os.environ, H5TILE_REMOTE_CONNECTIONS="zero")
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(BUILD / 'python')!r}); "
                          "import h5tile; h5tile.settings.remote_connections()"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0 and "H5TILE_REMOTE_CONNECTIONS" in out.stderr


@pytest.mark.parametrize("rate", [3, 20])
def test_a_server_that_trickles_is_given_up_within_four_timeouts(faulty, rate):
    # Every data request after the open answered at a few bytes a second: each attempt is given up
    # at the minimum rate, and the range within 4 x remote_timeout, its retries included.
    server, url, _ = faulty
    h5tile.settings.set_remote_timeout(1)
    h5tile.settings.set_remote_retries(100)
    server.plan(f"trickle:{rate}", times=1000, skip=1)
    start = time.monotonic()
    with pytest.raises(h5tile.IoError, match="gave up after") as e:
        h5tile.from_file(url, "/data", threads=1)
    assert time.monotonic() - start < 4 * 1 + 2, "bounded by the range's budget"
    assert "SECRET" not in str(e.value)


def test_a_slow_first_byte_and_a_slow_body_are_bounded_on_the_command_too(faulty, tmp_path):
    server, url, _ = faulty
    server.plan("trickle:3", times=1000, skip=1)
    start = time.monotonic()
    out = subprocess.run([str(H5TILE), "verify", "--read", f"{url.split('?')[0]}:/data"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env={**os.environ, "H5TILE_REMOTE_TIMEOUT": "1"})
    assert out.returncode != 0 and "gave up after" in out.stdout + out.stderr, out.stdout + out.stderr
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("validators", ["none", "weak", "first_only"])
def test_without_a_strong_validator_a_replaced_object_is_an_error_never_mixed(faulty, validators):
    # A server that gives no strong ETag (none, a weak one that never changes, or one on the first
    # answer only) cannot tie a later answer to the version opened: the object is replaced by one
    # of the same size after the open, and the read must fail, never return old and new bytes.
    server, url, a = faulty
    server.validators = validators
    server.plan("replace", times=1, skip=1)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(url, "/data", threads=1)
    assert e.value.errno == errno.ESTALE, e.value
    assert "SECRET" not in str(e.value)


@pytest.mark.parametrize("validators", ["none", "weak"])
def test_without_a_strong_validator_an_object_in_one_response_reads(fault_server, tmp_path, validators):
    a = random_array("int16", (64, 32), seed=12)
    path = tmp_path / "small.h5"
    with h5py.File(path, "w") as f:
        f["data"] = a
    fault_server.put("/small.h5", path.read_bytes())
    fault_server.validators = validators
    h5tile.settings.set_remote_block_size(1 << 20)  # the whole file in the first response
    assert same_bytes(h5tile.from_file(f"{fault_server.url}/small.h5", "/data"), a)
    assert same_bytes(h5tile.from_file(f"{fault_server.url}/small.h5", "/data"), a), "and again"


@pytest.mark.parametrize("query", ["se=2026-01-01T00:00:00Z&sp=r&sig=S1", "next=https://x/y&sig=S2",
                                   "sig=S3#frag", "tok=abc:/def", "a=1&path=x:/y"])
@pytest.mark.parametrize("where", ["none", "before", "root"])
def test_the_command_never_splits_a_query_string(nginx_server, tmp_path, query, where):
    # The dataset goes before the query, which is sent whole: a presigned URL's ':' and ':/' are
    # its own, even where what follows the last ':/' looks like a dataset ("tok=abc:/def").
    a = random_array("int32", (20, 10), seed=5)
    with h5py.File(nginx_server.root / "q.h5", "w") as f:
        f["g/data"] = a
    url = f"{nginx_server.url}/q.h5"
    fragmentless = query.split("#")[0]
    target = {"none": f"{url}?{query}", "before": f"{url}:/g/data?{query}", "root": f"{url}:/?{query}"}[where]
    before = len(nginx_server.requests())
    if where == "none" and ":/" in query.replace("://", ""):
        # URL?tok=abc:/def could be the whole file or '/def' written after the query: refused.
        out = subprocess.run([str(H5TILE), "info", target], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == 2 and "before the query" in out.stderr and "tok=" not in out.stderr, out.stderr
        assert nginx_server.requests()[before:] == []
        return
    for args in (["info", target, "--json"], ["verify", "--read", target]):
        out = subprocess.run([str(H5TILE), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "sig=" not in out.stdout + out.stderr and "tok=" not in out.stdout + out.stderr
        if where == "before" and args[0] == "info":
            assert json.loads(out.stdout)["datasets"][0]["name"] == "/g/data", out.stdout
    sent = nginx_server.requests()[before:]
    assert sent and all(f"/q.h5?{fragmentless} " in line for line in sent), sent


@pytest.mark.parametrize("url", ["gs://b/x.h5", "az://c/x.h5", "s3a://b/x.h5", "ftp://h/x.h5", "file:///x.h5",
                                 "simplecache::s3://b/x.h5"])
def test_schemes_h5tile_does_not_read_are_named_with_those_it_does(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        h5tile.from_file(url, "/data")
    message = str(e.value)
    assert f"does not read '{url.split('://')[0]}://'" in message and "s3://" in message, message
    with pytest.raises(h5tile.InvalidArgumentError, match="does not write"):
        h5tile.to_file(np.arange(4), url, "/data").wait()
    assert list(tmp_path.iterdir()) == [], "no local folder made of the URL"
