"""``storage_options`` (fsspec's, s3fs's keys) for s3:// URLs: ``h5tile.File(url,
storage_options=...)`` and ``xr.open_dataset(url, engine="h5tile", storage_options=...)`` read
what s3fs (given the same options) and engine="h5netcdf" read, on a real S3 server (SeaweedFS,
signatures checked), whatever the environment's AWS variables say; options h5tile has no meaning
for are refused by name; no message shows a secret."""
import pickle
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import _h5tile  # noqa: E402

AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
       "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_NO_SIGN_REQUEST", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
       "AWS_CONFIG_FILE")
WRONG_SECRET = "not-the-secret-0123456789"


@pytest.fixture(autouse=True)
def settings():
    with changed_settings(h5tile.settings, remote_timeout=5, remote_retries=1):
        yield


@pytest.fixture
def stored(seaweedfs_server, tmp_path, monkeypatch):
    """A netCDF-4 file on the server (private bucket), the environment's AWS variables wrong:
    keys that do not sign, an endpoint where no server listens."""
    for name in AWS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WRONG_SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    bucket = "h5t-storage-options"
    seaweedfs_server.create_bucket(bucket)
    a = np.arange(6000, dtype="f4").reshape(60, 100)
    with h5py.File(tmp_path / "f.nc", "w") as f:
        f["data"] = a
    key = f"f-{tmp_path.name}.nc"
    seaweedfs_server.upload(tmp_path / "f.nc", bucket, key)
    url = f"s3://{bucket}/{key}"
    yield seaweedfs_server, url, a
    _h5tile.set_s3_settings(url, {})  # what a test registered for this URL, forgotten


def options_of(server, **extra):
    return {"key": server.access_key, "secret": server.secret_key,
            "client_kwargs": {"endpoint_url": server.endpoint, "region_name": server.region}, **extra}


def s3fs_read(server, url, storage_options):
    import s3fs
    fs = s3fs.S3FileSystem(use_listings_cache=False, skip_instance_cache=True, **storage_options)
    with fs.open(url, "rb") as raw, h5py.File(raw, "r") as f:
        return f["data"][()]


def test_keys_and_endpoint_of_storage_options_read_what_s3fs_reads(stored):
    server, url, a = stored
    options = options_of(server)
    expected = s3fs_read(server, url, options)
    assert same_bytes(expected, a)
    with h5tile.File(url, storage_options=options) as f:
        assert same_bytes(f["data"][()], expected)
        assert same_bytes(f["data"][10:20, ::3], expected[10:20, ::3])


def test_without_them_the_environment_is_used_and_fails(stored):
    _, url, _ = stored
    with pytest.raises((h5tile.IoError, h5tile.NoSuchFileError)) as raised:
        h5tile.File(url)["data"][()]
    assert WRONG_SECRET not in str(raised.value)


def test_top_level_keys_as_s3fs_takes_them(stored):
    server, url, a = stored
    options = {"key": server.access_key, "secret": server.secret_key, "endpoint_url": server.endpoint}
    with h5tile.File(url, storage_options=options) as f:
        assert same_bytes(f["data"][()], a)


def test_anon_reads_a_public_bucket_without_the_environment_keys(stored):
    server, url, a = stored
    server.make_public(url.split("/")[2])
    options = {"anon": True, "client_kwargs": {"endpoint_url": server.endpoint}}
    assert same_bytes(s3fs_read(server, url, options), a)
    with h5tile.File(url, storage_options=options) as f:
        assert same_bytes(f["data"][()], a)


def test_a_wrong_secret_fails_and_is_not_shown(stored):
    server, url, _ = stored
    options = options_of(server, secret=WRONG_SECRET)
    with pytest.raises(h5tile.IoError) as raised:
        h5tile.File(url, storage_options=options)["data"][()]
    assert WRONG_SECRET not in str(raised.value)
    assert "403" in str(raised.value) or "denied" in str(raised.value).lower()


def test_a_pickled_file_reads_where_the_settings_were_forgotten(stored):
    server, url, a = stored
    f = h5tile.File(url, storage_options=options_of(server))
    data = pickle.dumps(f)
    f.close()
    _h5tile.set_s3_settings(url, {})  # as in a fresh worker process
    with pickle.loads(data) as again:
        assert same_bytes(again["data"][()], a)


@pytest.mark.parametrize("options, named", [
    ({"use_ssl": False}, "'use_ssl'"),
    ({"client_kwargs": {"verify": False}}, "'client_kwargs.verify'"),
    ({"key": "AKIA"}, "'key' and 'secret' go together"),
    ({"anon": True, "key": "a", "secret": "b"}, "anon=True"),
    ({"anon": "yes"}, "True or False"),
    ({"key": "a", "secret": "b", "profile": "p"}, "give one"),
    ({"endpoint_url": 8333}, "non-empty str"),
])
def test_what_h5tile_does_not_take_is_refused_by_name(options, named):
    with pytest.raises(h5tile.InvalidArgumentError, match=named):
        h5tile.File("s3://bucket/object.nc", storage_options=options)


def test_options_for_a_local_path_or_an_http_url_are_refused(tmp_path):
    path = tmp_path / "local.h5"
    with h5py.File(path, "w") as f:
        f["x"] = 1
    with pytest.raises(h5tile.InvalidArgumentError, match="s3:// URLs"):
        h5tile.File(path, storage_options={"anon": True})
    with pytest.raises(h5tile.InvalidArgumentError, match="presigned"):
        h5tile.File("http://127.0.0.1:9/x.h5?X-Amz-Signature=s3cr3t", storage_options={"anon": True})
    with h5tile.File(path, storage_options={}) as f:  # none given: nothing to refuse
        assert f["x"][()] == 1


def test_xarray_open_dataset_with_storage_options_as_h5netcdf(stored):
    xr = pytest.importorskip("xarray", reason="xarray is not installed (scripts/install_deps.sh installs it)")
    pytest.importorskip("h5netcdf", reason="h5netcdf is not installed (scripts/install_deps.sh installs it)")
    from h5tile.xarray import H5tileBackendEntrypoint
    server, url, _ = stored
    options = options_of(server)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # h5netcdf's note on phony_dims
        with xr.open_dataset(url, engine="h5netcdf", storage_options=options) as expected, \
                xr.open_dataset(url, engine=H5tileBackendEntrypoint, storage_options=options) as got:
            xr.testing.assert_identical(got.load(), expected.load())
        with xr.open_dataset(url, engine=H5tileBackendEntrypoint, storage_options=options, chunks={}) as lazy:
            data = pickle.dumps(lazy)
            _h5tile.set_s3_settings(url, {})  # as in a fresh worker process
            restored = pickle.loads(data)  # as a Dask worker gets it
            xr.testing.assert_identical(restored.load(), expected.load())


def test_other_options_for_a_url_an_open_file_reads_are_refused(stored):
    server, url, a = stored
    first = h5tile.File(url, storage_options=options_of(server))
    other = options_of(server, client_kwargs={"endpoint_url": "http://127.0.0.1:9", "region_name": server.region})
    with pytest.raises(h5tile.InvalidArgumentError, match="other storage_options"):
        h5tile.File(url, storage_options=other)
    assert same_bytes(first["data"][()], a)  # still read where its own options say
    with h5tile.File(url, storage_options=options_of(server)) as same:  # the same options: taken
        assert same_bytes(same["data"][()], a)
    first.close()
    with pytest.raises((h5tile.IoError, h5tile.NoSuchFileError)):  # no File reads with the first ones now
        h5tile.File(url, storage_options=other)["data"][()]


def test_a_key_with_a_hash_is_its_own_object(stored, seaweedfs_server, tmp_path):
    server, url, a = stored
    hashed = url[:-3] + "#v2.nc"
    with h5py.File(tmp_path / "h.h5", "w") as f:
        f["data"] = a * 2
    server.upload(tmp_path / "h.h5", hashed.split("/")[2], hashed.split("/", 3)[3])
    try:
        with h5tile.File(hashed, storage_options=options_of(server)) as f:
            assert same_bytes(f["data"][()], a * 2)
        with pytest.raises((h5tile.IoError, h5tile.NoSuchFileError)):  # the options were the hashed key's only
            h5tile.File(url[:-3])["data"][()]
    finally:
        _h5tile.set_s3_settings(hashed, {})
