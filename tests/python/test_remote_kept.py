"""A URL's dataset kept open between reads (h5tile.File's datasets, h5tile.dask's blocks), as a
local file's is: kept where every request names the version opened (a strong ETag sent as
If-Match, the object modified 2 s or more before it was opened), so that later reads fetch their
data and nothing else; opened anew when the object has changed since (the server refuses the
If-Match), so that a read gives the new version whole; opened by every read where it cannot be
pinned (WebHDFS has no ETag; an object written a moment ago). Every read compared with h5py
reading the same bytes locally."""
import errno
import os
import sys
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

ROWS, COLS = 256, 4096  # float32: rows of 16 KiB, 4 MiB in all
ROW_BYTES = COLS * 4


@pytest.fixture(autouse=True)
def remote_settings():
    """Blocks of 64 KiB: the data lies past the first block, so reading it takes requests."""
    with changed_settings(h5tile.settings, remote_block_size=64 << 10, remote_timeout=5, remote_retries=2):
        yield


def write(path, seed, age_s=100.0):
    """A contiguous and a gzip dataset of the same values, written by h5py; the file's
    modification time set `age_s` seconds back (a served object last changed that long ago)."""
    a = random_array("float32", (ROWS, COLS), seed)
    with h5py.File(path, "w") as f:
        f.create_dataset("raw", data=a)
        f.create_dataset("gzip", data=a, chunks=(16, COLS), compression="gzip", shuffle=True)
    stamp = time.time() - age_s
    os.utime(path, (stamp, stamp))
    return a


def reader(f, name):
    return f._readers["/" + name]


def served_since(server, before):
    """The requests nginx logged after the first `before`, and the bytes it sent for them."""
    lines = server.requests()[before:]
    return len(lines), sum(int(line.split('"')[2].split()[1]) for line in lines)


def test_rows_of_a_kept_url_cost_their_bytes_and_a_check(nginx_server):
    a = write(nginx_server.root / "f.h5", seed=1)
    with h5tile.File(f"{nginx_server.url}/f.h5") as f:
        ds = f["raw"]
        assert same_bytes(ds[0], a[0])
        assert reader(f, "raw").is_open, "an object with a strong ETag, quiet for 100 s, is kept"
        before = len(nginx_server.requests())
        for i in range(100, 110):
            assert same_bytes(ds[i], a[i])
        # Each row: one byte asking whether the object is still the version opened, and one
        # ranged GET of the row's bytes; no open, no metadata again.
        assert served_since(nginx_server, before) == (20, 10 * ROW_BYTES + 10)


def test_dask_over_a_url_fetches_each_byte_about_once(nginx_server):
    import dask
    import h5tile.dask as h5d
    path = nginx_server.root / "f.h5"
    a = write(path, seed=2)
    for name in ("raw", "gzip"):
        before = len(nginx_server.requests())
        x = h5d.from_file(f"{nginx_server.url}/f.h5", "/" + name, chunks=(16, COLS))
        with dask.config.set(scheduler="threads"):
            got = x.compute()
        assert same_bytes(got, a)
        requests, sent = served_since(nginx_server, before)
        # 16 blocks: each fetched once after a one-byte check, and one open (its first block,
        # metadata). Opened by every block, it was 16 opens of the first 64 KiB and the metadata.
        with h5py.File(path, "r") as f:
            stored = f[name].id.get_storage_size()
        assert requests <= 2 * 16 + 4, (name, requests)
        assert sent <= stored + 5 * (64 << 10) + 16, (name, sent, stored)  # the open's blocks, the checks


def test_an_object_replaced_since_it_was_opened_is_read_anew(nginx_server):
    path = nginx_server.root / "f.h5"
    first = write(path, seed=3, age_s=200)
    with h5tile.File(f"{nginx_server.url}/f.h5") as f:
        raw, gz = f["raw"], f["gzip"]
        assert same_bytes(raw[0], first[0]) and same_bytes(gz[0], first[0])
        assert reader(f, "raw").is_open and reader(f, "gzip").cached_chunks == 1
        # Replaced by another file of the same size, modified at another time: nginx's ETag
        # (modification time and size) changes, and the kept opens' If-Match fails.
        second = write(path.with_name("new.h5"), seed=4, age_s=100)
        assert path.with_name("new.h5").stat().st_size == path.stat().st_size
        os.replace(path.with_name("new.h5"), path)
        assert same_bytes(raw[200], second[200])
        assert same_bytes(gz[200], second[200])  # a chunk not kept: a request, refused, reopened
        # Opened anew, the decoded chunks of the first version are gone with their open.
        assert same_bytes(gz[0], second[0]) and same_bytes(raw[0], second[0])
        assert reader(f, "raw").is_open and reader(f, "gzip").is_open


def test_an_object_written_a_moment_ago_is_opened_by_every_read(nginx_server):
    path = nginx_server.root / "f.h5"
    first = write(path, seed=5, age_s=0)
    with h5tile.File(f"{nginx_server.url}/f.h5") as f:
        ds = f["gzip"]
        assert same_bytes(ds[0], first[0])
        # Its ETag (nginx: modification time in seconds and size) could be the next version's too.
        assert not reader(f, "gzip").is_open and reader(f, "gzip").cached_chunks == 0
        second = write(path.with_name("new.h5"), seed=6, age_s=0)
        os.replace(path.with_name("new.h5"), path)
        assert same_bytes(ds[0], second[0])  # same size, maybe the same second: read anew all the same


def test_webhdfs_has_no_etag_and_is_opened_by_every_read(webhdfs_server, tmp_path):
    path = tmp_path / "f.h5"
    first = write(path, seed=7)
    webhdfs_server.put("/d/f.h5", path.read_bytes())
    with h5tile.File(webhdfs_server.webhdfs_url("/d/f.h5")) as f:
        ds = f["raw"]
        assert same_bytes(ds[3], first[3])
        assert not reader(f, "raw").is_open
        second = write(path, seed=8)
        webhdfs_server.put("/d/f.h5", path.read_bytes())
        assert same_bytes(ds[3], second[3])


def test_an_s3_object_is_kept_once_settled_and_read_anew_when_replaced(seaweedfs_server, monkeypatch, tmp_path):
    for name in ("AWS_SESSION_TOKEN", "AWS_NO_SIGN_REQUEST", "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in seaweedfs_server.aws_env().items():
        monkeypatch.setenv(name, value)
    seaweedfs_server.create_bucket("kept")
    path = tmp_path / "f.h5"
    first = write(path, seed=9)
    seaweedfs_server.put_bytes("kept", "f.h5", path.read_bytes())
    url = seaweedfs_server.s3_url("kept", "f.h5")
    with h5tile.File(url) as f:
        assert same_bytes(f["raw"][1], first[1])
        assert not reader(f, "raw").is_open, "uploaded a moment ago (its Last-Modified)"
    time.sleep(2.1)
    with h5tile.File(url) as f:
        assert same_bytes(f["raw"][1], first[1])
        assert reader(f, "raw").is_open
        second = write(path, seed=10)
        seaweedfs_server.put_bytes("kept", "f.h5", path.read_bytes())  # S3's ETag: the content's MD5
        # Row 2 lies in the first block, fetched at open: the read's check (If-Match) is refused,
        # and it reads the new version.
        assert same_bytes(f["raw"][2], second[2])
        assert same_bytes(f["raw"][200], second[200])
        assert same_bytes(f["gzip"][3], second[3])


def test_reads_from_many_threads_while_the_object_is_replaced_each_give_one_version(nginx_server):
    """Threads read boxes of a kept URL (the first block, data past it, decoded chunks) while
    the object is replaced, over and over, by versions of other values: every read is one
    version's values whole, never rows of two (a refused request reopens; a read whose reopened
    object is replaced again before its request may fail as changed, never return both)."""
    import concurrent.futures
    import threading
    path = nginx_server.root / "f.h5"
    rows = np.arange(ROWS, dtype="float32")[:, None] * np.ones(COLS, dtype="float32")

    def version(k):
        tmp = path.with_name(f"v{k}.h5")
        with h5py.File(tmp, "w") as f:
            f.create_dataset("raw", data=rows + 1000 * k)
            f.create_dataset("gzip", data=rows + 1000 * k, chunks=(16, COLS), compression="gzip")
        stamp = time.time() - 1000 + 10 * k  # settled, each version another second (another ETag)
        os.utime(tmp, (stamp, stamp))
        os.replace(tmp, path)

    version(0)
    stop = threading.Event()
    seen = set()

    def reads(seed):
        rng = np.random.default_rng(seed)
        count = 0
        with h5tile.File(f"{nginx_server.url}/f.h5") as f:
            while not stop.is_set() or count < 5:
                name = ("raw", "gzip")[count % 2]
                start = int(rng.integers(0, ROWS - 8))
                stop_row = start + int(rng.integers(1, 8))
                try:
                    got = f[name][start:stop_row, ::512]
                except h5tile.IoError as e:  # replaced again between its reopen and its request
                    assert e.errno == errno.ESTALE, e
                    continue
                k = (got[0, 0] - start) / 1000
                assert k == int(k), (name, start, got[:, 0])
                assert same_bytes(got, rows[start:stop_row, ::512] + 1000 * k), (name, start, stop_row, k)
                seen.add(int(k))
                count += 1
        return count

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(reads, s) for s in range(6)]
        for k in range(1, 12):
            time.sleep(0.15)
            version(k)
        stop.set()
        counts = [fut.result() for fut in futures]
    assert sum(counts) > 30
    assert len(seen) > 1, "the reads saw more than the first version"


def test_a_selection_read_in_slabs_is_one_version_whole(nginx_server, monkeypatch):
    """A stepped selection read as several boxes (Dataset._read_by_slabs) is one version of a
    kept URL whole: where the object was replaced since the open, a first slab answered without
    a request (in the first block, fetched at open) must not be the old version while a later
    slab, refused and reopened, is the new one."""
    import h5tile._dataset as dataset_module
    monkeypatch.setattr(dataset_module, "_COVERING_BOX_BYTES", ROW_BYTES)  # each row a slab of its own
    path = nginx_server.root / "f.h5"
    first = write(path, seed=11, age_s=200)
    with h5tile.File(f"{nginx_server.url}/f.h5") as f:
        raw = f["raw"]
        assert same_bytes(raw[0], first[0]) and reader(f, "raw").is_open
        second = write(path.with_name("new.h5"), seed=12, age_s=100)
        os.replace(path.with_name("new.h5"), path)
        got = raw[::100]  # rows 0 (in the first block), 100 and 200 (requests)
        assert same_bytes(got, second[::100]), "rows of two versions in one result"


def test_a_dask_compute_after_the_object_was_replaced_is_of_the_new_version_whole(nginx_server):
    """Blocks answered from memory (the first block, decoded chunks) and blocks read with
    requests are one version: the new one, once the object was replaced after an earlier
    compute kept it open."""
    import dask
    import h5tile.dask as h5d
    path = nginx_server.root / "f.h5"
    first = write(path, seed=13, age_s=200)
    arrays = {name: h5d.from_file(f"{nginx_server.url}/f.h5", "/" + name, chunks=(16, COLS))
              for name in ("raw", "gzip")}  # each keeps its reader (and its open) between computes
    for x in arrays.values():
        with dask.config.set(scheduler="threads"):
            assert same_bytes(x.compute(), first)
            assert same_bytes(x[:16].compute(), first[:16])  # a block in the first block / kept chunk
    second = write(path.with_name("new.h5"), seed=14, age_s=100)
    os.replace(path.with_name("new.h5"), path)
    for name, x in arrays.items():
        with dask.config.set(scheduler="sync"):  # the first blocks first: those memory answers
            got = x.compute()
        assert same_bytes(got, second), name
