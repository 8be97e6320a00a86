"""Reads of s3:// URLs from a real S3 server started by the tests on loopback (SeaweedFS, with
signature checks on: servers/seaweedfs.py), signed with keys from the AWS_* variables and
anonymous on a public bucket; each read compared byte for byte with h5py reading the same file
locally. Errors name s3://bucket/key and never a credential."""
import errno
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, compressible, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
AWS_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_NO_SIGN_REQUEST",
                 "AWS_CA_BUNDLE")
# A secret no message may show.
SECRET = "Zq9-h5tile-SECRET-value-81f3"

DTYPES = ["int8", "uint16", "int32", "int64", "float32", "float64", "complex64", "bool"]
CASES = {
    "contiguous": dict(),
    "chunked": dict(chunks=(16, 50)),
    "gzip_shuffle": dict(chunks=(16, 50), compression="gzip", shuffle=True),
}


@pytest.fixture(autouse=True)
def remote_settings():
    """Small blocks, so that even small files need requests after the first; short timeouts."""
    with changed_settings(h5tile.settings, remote_block_size=4096, remote_timeout=5, remote_retries=2):
        yield


@pytest.fixture
def aws(monkeypatch, seaweedfs_server):
    """Sets the AWS_* variables (h5tile reads them on each call) to reach the server:
    aws(anonymous=False, **overrides); every other AWS_* variable is unset."""
    def set_env(anonymous=False, **overrides):
        for name in AWS_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        for name, value in dict(seaweedfs_server.aws_env(anonymous=anonymous), **overrides).items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
    set_env()
    return set_env


def _local_read(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_h5py_files_read_over_s3_as_h5py_reads_them_locally(seaweedfs_server, aws, bucket, tmp_path, case):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        for i, dtype in enumerate(DTYPES):
            f.create_dataset(f"g/{dtype}", data=compressible(dtype, (200, 100), seed=i), **CASES[case])
    seaweedfs_server.upload(path, bucket, "dir/f.h5")
    url = f"s3://{bucket}/dir/f.h5"
    for dtype in DTYPES:
        got = h5tile.from_file(url, f"/g/{dtype}")
        assert same_bytes(got, _local_read(path, f"g/{dtype}")), dtype
    io = h5tile.last_remote_io()
    assert io["requests"] >= 2 and io["retries"] == 0, io  # 4 KiB blocks: more than the first request
    with h5py.File(path, "r") as f:
        want = f["g/float32"][17:43, 20:90]
    box = h5tile.read_box(url, "/g/float32", (17, 20), (26, 70))
    assert same_bytes(box, want)
    info = h5tile.describe(url, "/g/int64")
    assert tuple(info["shape"]) == (200, 100) and np.dtype(info["dtype"]) == np.dtype("int64"), info


def test_a_large_contiguous_dataset_read_with_many_connections(seaweedfs_server, aws, bucket, tmp_path):
    a = np.random.default_rng(3).standard_normal((1024, 2048)).astype("float32")  # 8 MiB
    path = tmp_path / "big.h5"
    with h5py.File(path, "w") as f:
        f["data"] = a
    seaweedfs_server.upload(path, bucket, "big.h5")
    h5tile.settings.set_remote_block_size("1M")
    got = h5tile.from_file(f"s3://{bucket}/big.h5", "/data")
    assert same_bytes(got, a)
    io = h5tile.last_remote_io()
    assert io["bytes"] >= a.nbytes and io["requests"] >= 2, io


def test_anonymous_reads_of_a_public_bucket(seaweedfs_server, aws, bucket, tmp_path):
    a = compressible("uint16", (120, 77), seed=9)
    path = tmp_path / "pub.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a, chunks=(20, 77), compression="gzip", shuffle=True)
    seaweedfs_server.upload(path, bucket, "pub.h5")
    aws(anonymous=True)  # no keys at all
    assert "AWS_ACCESS_KEY_ID" not in os.environ
    with pytest.raises(h5tile.IoError) as e:  # private still: refused
        h5tile.from_file(f"s3://{bucket}/pub.h5", "/data")
    assert e.value.errno == errno.EACCES and f"s3://{bucket}/pub.h5" in str(e.value)
    seaweedfs_server.make_public(bucket)
    assert same_bytes(h5tile.from_file(f"s3://{bucket}/pub.h5", "/data"), _local_read(path, "data"))
    # AWS_NO_SIGN_REQUEST wins over keys that are set (as in the AWS CLI).
    aws(anonymous=True, AWS_ACCESS_KEY_ID="not-a-key", AWS_SECRET_ACCESS_KEY=SECRET)
    assert same_bytes(h5tile.from_file(f"s3://{bucket}/pub.h5", "/data"), a)


@pytest.mark.parametrize("key,shorter", [("hash#frag.h5", "hash"), ("q?x=1.h5", "q"), ("d/a b+%41.h5", "d/a b+A.h5")])
def test_keys_holding_hashes_question_marks_and_percents_read_that_key(seaweedfs_server, aws, bucket, tmp_path,
                                                                       key, shorter):
    # boto3 reads the key as written; so must h5tile, never the object a URL parser would cut it to.
    for name, value in ((key, 1), (shorter, 2)):
        path = tmp_path / f"{value}.h5"
        with h5py.File(path, "w") as f:
            f["data"] = np.full(10, value, dtype="i4")
        seaweedfs_server.upload(path, bucket, name)
    body = seaweedfs_server.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    (tmp_path / "boto3.h5").write_bytes(body)
    expected = _local_read(tmp_path / "boto3.h5", "data")
    assert (expected == 1).all()
    assert same_bytes(h5tile.from_file(f"s3://{bucket}/{key}", "/data"), expected)


def _assert_no_secret(message, *secrets):
    for s in (SECRET,) + secrets:
        assert s not in message, message


@pytest.fixture
def small_object(seaweedfs_server, bucket, tmp_path):
    path = tmp_path / "s.h5"
    with h5py.File(path, "w") as f:
        f["data"] = np.arange(1000, dtype="f8")
    seaweedfs_server.upload(path, bucket, "s.h5")
    return f"s3://{bucket}/s.h5"


def test_a_wrong_secret_is_a_permission_error_naming_the_object_not_the_secret(seaweedfs_server, aws, small_object):
    aws(AWS_SECRET_ACCESS_KEY=SECRET, AWS_SESSION_TOKEN=SECRET + "-token")
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(small_object, "/data")
    message = str(e.value)
    assert e.value.errno == errno.EACCES and "403" in message and small_object in message, message
    assert "AWS_SECRET_ACCESS_KEY" in message, message  # the variable is named, never its value
    _assert_no_secret(message, SECRET + "-token", seaweedfs_server.access_key)
    with pytest.raises(h5tile.IoError) as e:  # describe goes through the same source
        h5tile.describe(small_object, "/data")
    _assert_no_secret(str(e.value))


def test_a_missing_key_is_file_not_found(seaweedfs_server, aws, bucket):
    aws(AWS_SECRET_ACCESS_KEY=seaweedfs_server.secret_key)
    url = f"s3://{bucket}/no/such.h5"
    with pytest.raises(FileNotFoundError) as e:
        h5tile.from_file(url, "/data")
    assert url in str(e.value) and "404" in str(e.value)
    _assert_no_secret(str(e.value), seaweedfs_server.secret_key)


def test_a_bad_endpoint_is_an_io_error_without_the_secret(aws, small_object):
    aws(AWS_SECRET_ACCESS_KEY=SECRET, AWS_ENDPOINT_URL="http://127.0.0.1:9")  # nothing listens on port 9
    h5tile.settings.set_remote_retries(0)
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(small_object, "/data")
    assert small_object in str(e.value)
    _assert_no_secret(str(e.value))


@pytest.mark.parametrize("env,variable", [
    (dict(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None), "AWS_ACCESS_KEY_ID"),
    (dict(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=SECRET), "AWS_ACCESS_KEY_ID"),
    (dict(AWS_REGION="Not A Region", AWS_SECRET_ACCESS_KEY=SECRET), "AWS_REGION"),
    (dict(AWS_ENDPOINT_URL="ftp://127.0.0.1", AWS_SECRET_ACCESS_KEY=SECRET), "AWS_ENDPOINT_URL"),
    (dict(AWS_NO_SIGN_REQUEST="maybe", AWS_SECRET_ACCESS_KEY=SECRET), "AWS_NO_SIGN_REQUEST"),
])
def test_bad_aws_settings_are_invalid_arguments_naming_the_variable(aws, small_object, env, variable):
    aws(**env)
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        h5tile.from_file(small_object, "/data")
    assert variable in str(e.value) and small_object in str(e.value), str(e.value)
    _assert_no_secret(str(e.value))


def test_the_custom_endpoint_of_aws_endpoint_url_s3_wins(seaweedfs_server, aws, small_object):
    aws(AWS_ENDPOINT_URL="http://127.0.0.1:9", AWS_ENDPOINT_URL_S3=seaweedfs_server.endpoint)
    assert same_bytes(h5tile.from_file(small_object, "/data"), np.arange(1000, dtype="f8"))


def test_an_object_replaced_during_a_read_is_an_error_never_mixed_data(seaweedfs_server, aws, bucket, tmp_path):
    a = np.arange(1 << 17, dtype="f8")  # 1 MiB, contiguous: read in blocks of 64 Ki values
    path = tmp_path / "r.h5"
    with h5py.File(path, "w") as f:
        f["data"] = a
    seaweedfs_server.upload(path, bucket, "r.h5")
    blocks = []
    with pytest.raises(h5tile.IoError) as e:
        for i, (block, offsets) in enumerate(h5tile.from_file_batched(f"s3://{bucket}/r.h5", "/data", [8192])):
            blocks.append((block.copy(), offsets))
            if i == 0:  # S3 answers 412 to the If-Match of every later request
                with h5py.File(path, "w") as f:
                    f["data"] = -a
                seaweedfs_server.upload(path, bucket, "r.h5")
    assert e.value.errno == errno.ESTALE and "changed" in str(e.value), str(e.value)
    assert 1 <= len(blocks) < len(a) // 8192
    for block, (start,) in blocks:  # what was yielded is the object opened, never the new one
        assert same_bytes(block, a[start:start + len(block)]), start


def test_presigned_https_style_urls_keep_working_over_http(seaweedfs_server, aws, small_object):
    bucket, key = small_object[len("s3://"):].split("/", 1)
    url = seaweedfs_server.client().generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key},
                                                           ExpiresIn=600)
    assert url.startswith("http://127.0.0.1") and "Signature" in url
    aws(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)  # the URL carries its own signature
    assert same_bytes(h5tile.from_file(url, "/data"), np.arange(1000, dtype="f8"))
    signature = url.split("Signature=", 1)[1].split("&", 1)[0]
    with pytest.raises((FileNotFoundError, h5tile.IoError)) as e:
        h5tile.from_file(url.replace(key, "gone.h5"), "/data")  # its signature no longer fits: 403 or 404
    message = str(e.value)
    assert f"{seaweedfs_server.endpoint}/{bucket}/gone.h5" in message, message
    assert signature not in message and "Amz" not in message and "AWSAccessKeyId" not in message, message


def test_the_command_reads_s3_urls(seaweedfs_server, bucket, tmp_path):
    a = compressible("int32", (60, 40), seed=2)
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("g/data", data=a, chunks=(10, 40), compression="gzip", shuffle=True)
    seaweedfs_server.upload(path, bucket, "c.h5")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(seaweedfs_server.aws_env())
    url = f"s3://{bucket}/c.h5"
    out = subprocess.run([str(H5TILE), "info", url, "--json"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    info = {d["name"]: d for d in json.loads(out.stdout)["datasets"]}
    assert info["/g/data"]["shape"] == [60, 40]
    out = subprocess.run([str(H5TILE), "verify", "--read", f"{url}:/g/data"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    env["AWS_SECRET_ACCESS_KEY"] = SECRET
    out = subprocess.run([str(H5TILE), "info", url], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=env)
    assert out.returncode != 0 and url in out.stderr, out.stderr
    _assert_no_secret(out.stdout + out.stderr)
