"""The S3 fault proxy (tests/python/servers/s3_faults.py) in front of the real S3 server (SeaweedFS):
requests it is not told to fail pass through unchanged both ways (signatures still verify), each
fault does what it says and is counted, and the server does what the abort tests of multipart
writes will rely on: in-progress uploads are listed and aborting removes them and their parts,
If-None-Match: * refuses to overwrite, and a part sent again is the one a completion with its ETag
takes."""
import http.client
import io
import os
import time

import pytest

from servers.s3_faults import S3FaultProxy, boto3_client, classify, list_keys, list_parts, multipart_uploads

botocore = pytest.importorskip("botocore", reason="boto3 is the client of these tests (pip install boto3)")
from boto3.s3.transfer import TransferConfig  # noqa: E402
from botocore.auth import S3SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402
from botocore.exceptions import ClientError, ConnectionError as BotoConnectionError, HTTPClientError  # noqa: E402

MiB = 1 << 20
PART = 5 * MiB  # S3's smallest part but the last; SeaweedFS enforces it (see the test at the end)
CONNECTION_ERRORS = (BotoConnectionError, HTTPClientError)


@pytest.fixture
def proxy(seaweedfs_server):
    with S3FaultProxy.in_front_of(seaweedfs_server.endpoint) as p:
        yield p
    assert p.threads_alive == 0


def _client(server, proxy, attempts=5):
    """A boto3 client through the proxy that tries each request `attempts` times (1: no retries)."""
    return boto3_client(proxy.endpoint, server.access_key, server.secret_key, server.region, attempts)


@pytest.mark.parametrize("method,target,headers,kind", [
    ("POST", "/b/k/x.h5?uploads", (), "CreateMultipartUpload"),
    ("POST", "/b/k?uploads=&x-id=CreateMultipartUpload", (), "CreateMultipartUpload"),
    ("PUT", "/b/k?partNumber=3&uploadId=U&x-id=UploadPart", (), "UploadPart"),
    ("PUT", "/b/k?partNumber=3&uploadId=U", (("x-amz-copy-source", "/b/o"),), "UploadPartCopy"),
    ("POST", "/b/k?uploadId=U", (), "CompleteMultipartUpload"),
    ("DELETE", "/b/k?uploadId=U&x-id=AbortMultipartUpload", (), "AbortMultipartUpload"),
    ("GET", "/b/k?uploadId=U", (), "ListParts"),
    ("GET", "/b?uploads&prefix=a%2F", (), "ListMultipartUploads"),
    ("PUT", "/b/a/k.h5?x-id=PutObject", (), "PutObject"),
    ("PUT", "/b/k", (("X-Amz-Copy-Source", "/b/o"),), "CopyObject"),
    ("GET", "/b/k?x-id=GetObject", (), "GetObject"),
    ("GET", "/b/k?partNumber=1&versionId=v", (), "GetObject"),
    ("HEAD", "/b/k", (), "HeadObject"),
    ("DELETE", "/b/k?x-id=DeleteObject", (), "DeleteObject"),
    ("POST", "/b?delete", (), "DeleteObjects"),
    ("GET", "/b?list-type=2&prefix=&encoding-type=url", (), "ListObjects"),
    ("GET", "/b/k?tagging", (), "Other"),
    ("PUT", "/b", (), "Other"),
    ("GET", "/", (), "Other"),
])
def test_classify(method, target, headers, kind):
    assert classify(method, target, headers)[0] == kind


def test_classify_names_bucket_key_and_part():
    kind, bucket, key, query = classify("PUT", "/data/dir/a%20b.h5?partNumber=7&uploadId=xyz", ())
    assert (kind, bucket, key, query["partNumber"], query["uploadId"]) == ("UploadPart", "data", "dir/a b.h5",
                                                                          ["7"], ["xyz"])


def test_unknown_kind_and_bad_counts_are_refused(proxy):
    with pytest.raises(ValueError):
        proxy.fail("UploadParts")
    with pytest.raises(ValueError):
        proxy.fail("UploadPart", nth=0)


def test_requests_pass_through_unchanged_on_one_connection(seaweedfs_server, proxy, bucket):
    data = os.urandom(3 * MiB + 17)
    c = _client(seaweedfs_server, proxy)
    etag = c.put_object(Bucket=bucket, Key="a/file.bin", Body=data)["ETag"]
    assert c.get_object(Bucket=bucket, Key="a/file.bin")["Body"].read() == data
    ranged = c.get_object(Bucket=bucket, Key="a/file.bin", Range="bytes=1000-2000999")
    assert ranged["Body"].read() == data[1000:2001000]
    assert ranged["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert c.head_object(Bucket=bucket, Key="a/file.bin")["ContentLength"] == len(data)
    assert list_keys(c, bucket) == ["a/file.bin"]
    # What the server stored, asked directly: the same bytes, the same ETag.
    direct = seaweedfs_server.client()
    assert direct.get_object(Bucket=bucket, Key="a/file.bin")["Body"].read() == data
    assert direct.head_object(Bucket=bucket, Key="a/file.bin")["ETag"] == etag
    # A missing key: the server's 404 comes back as it was sent (its XML body parsed by boto3).
    with pytest.raises(ClientError) as e:
        c.get_object(Bucket=bucket, Key="a/missing")
    assert e.value.response["Error"]["Code"] == "NoSuchKey"
    assert [(r.kind, r.status, r.fault) for r in proxy.requests()] == [
        ("PutObject", 200, None), ("GetObject", 200, None), ("GetObject", 206, None), ("HeadObject", 200, None),
        ("ListObjects", 200, None), ("GetObject", 404, None)]
    assert proxy.requests("PutObject")[0].body_bytes >= len(data)
    assert proxy.count() == 6 and proxy.count(faulted=True) == 0
    assert proxy.connections == 1  # keep-alive: every request on the client's one connection


def test_a_chunked_request_body_passes_through(seaweedfs_server, proxy, bucket):
    """A PUT whose body is sent in HTTP chunks (no Content-Length), signed for the proxy's Host."""
    data = os.urandom(300_000)
    url = f"{proxy.endpoint}/{bucket}/chunked.bin"
    req = AWSRequest(method="PUT", url=url, data=data)
    S3SigV4Auth(Credentials(seaweedfs_server.access_key, seaweedfs_server.secret_key), "s3",
                seaweedfs_server.region).add_auth(req)
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    try:
        conn.request("PUT", f"/{bucket}/chunked.bin", body=(data[i:i + 65536] for i in range(0, len(data), 65536)),
                     headers=dict(req.headers.items()), encode_chunked=True)
        resp = conn.getresponse()
        body = resp.read()
    finally:
        conn.close()
    assert resp.status == 200, body
    put = proxy.requests("PutObject")[0]
    assert put.header("Transfer-Encoding") == "chunked" and put.header("Content-Length") is None
    assert put.body_bytes > len(data)  # the chunk framing counted too
    assert seaweedfs_server.client().get_object(Bucket=bucket, Key="chunked.bin")["Body"].read() == data


def test_multipart_upload_survives_a_503_on_part_2(seaweedfs_server, proxy, bucket):
    """boto3's managed upload (4 parts, 3 at a time) retries the 503 and completes."""
    data = os.urandom(3 * PART + 123)
    rule = proxy.fail("UploadPart", part=2, status=503)
    c = _client(seaweedfs_server, proxy)
    c.upload_fileobj(io.BytesIO(data), bucket, "big.bin",
                     Config=TransferConfig(multipart_threshold=PART, multipart_chunksize=PART, max_concurrency=3))
    assert rule.fired == 1
    assert seaweedfs_server.client().get_object(Bucket=bucket, Key="big.bin")["Body"].read() == data
    assert proxy.count("UploadPart") == 5 and proxy.count("UploadPart", faulted=True) == 1
    part2 = [(r.fault, r.status) for r in proxy.requests("UploadPart") if r.part == 2]
    assert part2 == [("fail:503", 503), (None, 200)]
    assert proxy.requests("UploadPart")[0].body_bytes >= PART  # a failed part's body is read whole
    assert proxy.count("CreateMultipartUpload") == proxy.count("CompleteMultipartUpload") == 1
    assert proxy.count("AbortMultipartUpload") == 0
    assert multipart_uploads(c, bucket) == []


def test_failures_from_the_nth_on_reach_the_client_as_s3_errors(seaweedfs_server, proxy, bucket):
    c = _client(seaweedfs_server, proxy, attempts=3)
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    proxy.fail("UploadPart", nth=2, times=None)  # 500 InternalError, every one from the 2nd on
    c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=os.urandom(PART))
    for number in (2, 3):
        with pytest.raises(ClientError) as e:
            c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=number, Body=os.urandom(1000))
        assert e.value.response["Error"]["Code"] == "InternalError"
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
        assert e.value.response["ResponseMetadata"]["RequestId"].startswith("H5TFAULT")
    assert proxy.count("UploadPart") == 1 + 3 + 3  # boto3 tried each failing part 3 times
    assert [p["PartNumber"] for p in list_parts(c, bucket, "k", upload)] == [1]
    c.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
    assert proxy.count("AbortMultipartUpload", faulted=False) == 1
    assert multipart_uploads(c, bucket) == [] and list_keys(c, bucket) == []
    proxy.clear()
    with pytest.raises(ClientError) as e:  # no rule any more: the server's own answer
        c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=2, Body=b"x")
    assert e.value.response["Error"]["Code"] == "NoSuchUpload"


@pytest.mark.parametrize("after_bytes", [0, 65536, None])
def test_drop_is_a_connection_error_and_reaches_no_server(seaweedfs_server, proxy, bucket, after_bytes):
    c = _client(seaweedfs_server, proxy, attempts=1)
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    rule = proxy.drop("UploadPart", after_bytes=after_bytes)
    with pytest.raises(CONNECTION_ERRORS):
        c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=os.urandom(MiB))
    dropped = proxy.requests("UploadPart")[-1]
    assert (rule.fired, dropped.fault, dropped.status) == (1, "drop", None)
    if after_bytes is None:
        assert dropped.body_bytes == MiB
    else:
        assert dropped.body_bytes == after_bytes
    assert list_parts(c, bucket, "k", upload) == []  # the server never saw the part
    # The rule is spent: the same part sent again goes through.
    c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=os.urandom(MiB))
    assert [(p["PartNumber"], p["Size"]) for p in list_parts(c, bucket, "k", upload)] == [(1, MiB)]
    assert proxy.connections >= 2  # the drop closed the first
    c.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
    assert multipart_uploads(c, bucket) == [] and list_keys(c, bucket) == []


def test_a_lost_completion_answer_leaves_the_object_made(seaweedfs_server, proxy, bucket):
    """The server completes, the client hears nothing: the object exists and the upload is gone;
    sending the completion again is answered 200 by SeaweedFS (the same ETag)."""
    c = _client(seaweedfs_server, proxy, attempts=1)
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etag = c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"payload")["ETag"]
    proxy.lose_response("CompleteMultipartUpload")
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    with pytest.raises(CONNECTION_ERRORS):
        c.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload=parts)
    lost = proxy.requests("CompleteMultipartUpload")[0]
    assert (lost.fault, lost.status) == ("lose_response", None)
    assert list_keys(c, bucket) == ["k"] and multipart_uploads(c, bucket) == []
    assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"payload"
    again = c.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload=parts)
    assert again["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"payload"


def test_complete_answered_200_with_an_error_body(seaweedfs_server, proxy, bucket):
    """S3 may answer CompleteMultipartUpload 200 OK with an <Error> body: botocore retries it
    (and with no retries raises InternalError); the upload was never completed by the fault."""
    c = _client(seaweedfs_server, proxy, attempts=1)
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etag = c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"payload")["ETag"]
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    proxy.fail("CompleteMultipartUpload", status=200)
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload=parts)
    assert e.value.response["Error"]["Code"] == "InternalError"
    assert list_keys(c, bucket) == [] and len(multipart_uploads(c, bucket)) == 1
    proxy.fail("CompleteMultipartUpload", status=200)
    retrying = _client(seaweedfs_server, proxy, attempts=3)
    retrying.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload=parts)
    assert [(r.fault, r.status) for r in proxy.requests("CompleteMultipartUpload")] == [
        ("fail:200", 200), ("fail:200", 200), (None, 200)]
    assert list_keys(c, bucket) == ["k"] and multipart_uploads(c, bucket) == []


def test_fail_before_the_body_answers_expect_100_continue(seaweedfs_server, proxy, bucket):
    """A file-like body makes botocore send Expect: 100-continue; the 503 comes instead of the
    100 Continue, no body is read, and botocore's retry (on a new connection) succeeds."""
    data = os.urandom(2 * MiB)
    proxy.fail("PutObject", status=503, before_body=True)
    c = _client(seaweedfs_server, proxy)
    c.put_object(Bucket=bucket, Key="k", Body=io.BytesIO(data))
    puts = proxy.requests("PutObject")
    assert [(r.fault, r.status, r.body_bytes) for r in puts] == [("fail:503", 503, 0), (None, 200, len(data))]
    assert all(r.header("Expect") == "100-continue" for r in puts)
    assert seaweedfs_server.client().get_object(Bucket=bucket, Key="k")["Body"].read() == data


def test_delay_holds_the_request_back(seaweedfs_server, proxy, bucket):
    c = _client(seaweedfs_server, proxy)
    c.put_object(Bucket=bucket, Key="k", Body=b"x")
    proxy.delay("HeadObject", 0.5, nth=2)
    c.head_object(Bucket=bucket, Key="k")
    t0 = time.monotonic()
    c.head_object(Bucket=bucket, Key="k")
    assert time.monotonic() - t0 >= 0.5  # (a lower bound only: a busy machine is slow, never fast)
    assert [r.fault for r in proxy.requests("HeadObject")] == [None, "delay"]


# ---- what SeaweedFS does, that the abort tests of multipart writes rely on --------------------------
def test_seaweedfs_lists_and_aborts_multipart_uploads(seaweedfs_server, proxy, bucket):
    c = _client(seaweedfs_server, proxy, attempts=1)
    upload = c.create_multipart_upload(Bucket=bucket, Key="dir/k.h5")["UploadId"]
    c.upload_part(Bucket=bucket, Key="dir/k.h5", UploadId=upload, PartNumber=1, Body=os.urandom(1000))
    assert [(u["Key"], u["UploadId"]) for u in multipart_uploads(c, bucket)] == [("dir/k.h5", upload)]
    assert len(multipart_uploads(c, bucket, prefix="dir/")) == 1 and multipart_uploads(c, bucket, "other/") == []
    assert [(p["PartNumber"], p["Size"]) for p in list_parts(c, bucket, "dir/k.h5", upload)] == [(1, 1000)]
    assert list_keys(c, bucket) == []  # an upload in progress is no object
    c.abort_multipart_upload(Bucket=bucket, Key="dir/k.h5", UploadId=upload)
    assert multipart_uploads(c, bucket) == [] and list_keys(c, bucket) == []
    with pytest.raises(ClientError) as e:
        list_parts(c, bucket, "dir/k.h5", upload)
    assert e.value.response["Error"]["Code"] == "NoSuchUpload"
    assert proxy.count("ListMultipartUploads") == 4 and proxy.count("AbortMultipartUpload") == 1


def test_seaweedfs_if_none_match_refuses_to_overwrite(seaweedfs_server, proxy, bucket):
    c = _client(seaweedfs_server, proxy, attempts=1)
    c.put_object(Bucket=bucket, Key="k", Body=b"old")
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=bucket, Key="k", Body=b"new", IfNoneMatch="*")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert proxy.requests("PutObject")[-1].header("If-None-Match") == "*"  # passed through as sent
    c.put_object(Bucket=bucket, Key="fresh", Body=b"new", IfNoneMatch="*")
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etag = c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"new")["ETag"]
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, IfNoneMatch="*",
                                    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"old"
    assert [u["UploadId"] for u in multipart_uploads(c, bucket)] == [upload]  # refused, not aborted
    c.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
    assert list_keys(c, bucket) == ["fresh", "k"] and multipart_uploads(c, bucket) == []


def test_seaweedfs_part_sent_again_is_taken_by_its_etag(seaweedfs_server, proxy, bucket):
    """A completion naming the second sending's ETag gets the second sending's bytes. (Unlike AWS,
    SeaweedFS keeps both: ListParts lists the part twice, and the first ETag completes too.)"""
    c = _client(seaweedfs_server, proxy, attempts=1)
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"A" * PART)
    second = c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"B" * PART)["ETag"]
    last = c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=2, Body=b"C" * 10)["ETag"]
    c.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": second}, {"PartNumber": 2, "ETag": last}]})
    assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"B" * PART + b"C" * 10


def test_seaweedfs_refuses_parts_under_5_mib(seaweedfs_server, proxy, bucket):
    """EntityTooSmall at completion where a part but the last is under 5 MiB; the upload stays."""
    c = _client(seaweedfs_server, proxy, attempts=1)
    upload = c.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etags = [c.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=n, Body=os.urandom(PART - 1))["ETag"]
             for n in (1, 2)]
    with pytest.raises(ClientError) as e:
        c.complete_multipart_upload(Bucket=bucket, Key="k", UploadId=upload, MultipartUpload={
            "Parts": [{"PartNumber": n, "ETag": t} for n, t in zip((1, 2), etags)]})
    assert e.value.response["Error"]["Code"] == "EntityTooSmall"
    assert [u["UploadId"] for u in multipart_uploads(c, bucket)] == [upload] and list_keys(c, bucket) == []
    c.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
    assert multipart_uploads(c, bucket) == []
