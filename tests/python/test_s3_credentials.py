"""Where s3:// credentials come from when the AWS_* variables hold no keys, as boto3 looks: a
profile of the shared credentials and config files (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE,
AWS_CONFIG_FILE: static keys, region, endpoint_url), its credential_process, and a container's
credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI with its token, served on loopback by the
test). Each read is compared with boto3's own read of the object through the same profile, on a
real S3 server (SeaweedFS, signatures checked); no message shows a credential."""
import http.server
import json
import os
import sys
import threading

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
       "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_NO_SIGN_REQUEST", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
       "AWS_CONFIG_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
       "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")


@pytest.fixture(autouse=True)
def settings():
    with changed_settings(h5tile.settings, remote_timeout=5, remote_retries=1):
        yield


@pytest.fixture
def stored(seaweedfs_server, tmp_path, monkeypatch):
    """An object on the server, every AWS variable unset, HOME a folder of the test's own."""
    for name in AWS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    bucket = "h5t-credentials"
    seaweedfs_server.create_bucket(bucket)
    a = np.arange(5000, dtype="f4").reshape(50, 100)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["data"] = a
    seaweedfs_server.upload(tmp_path / "f.h5", bucket, "f.h5")
    return seaweedfs_server, f"s3://{bucket}/f.h5", a


def write_profile(folder, server, profile="work", keys=True, extra=""):
    creds = folder / "credentials"
    creds.write_text(f"[{profile}]\naws_access_key_id = {server.access_key}\n"
                     f"aws_secret_access_key = {server.secret_key}\n" if keys else "")
    config = folder / "config"
    section = "default" if profile == "default" else f"profile {profile}"
    config.write_text(f"[{section}]\nregion = {server.region}\nendpoint_url = {server.endpoint}\n{extra}")
    return creds, config


def test_a_named_profile_of_the_default_files_reads_as_boto3_does(stored, tmp_path, monkeypatch):
    server, url, a = stored
    (tmp_path / "home" / ".aws").mkdir()
    write_profile(tmp_path / "home" / ".aws", server)  # ~/.aws/credentials and ~/.aws/config
    monkeypatch.setenv("AWS_PROFILE", "work")
    import boto3
    body = boto3.Session(profile_name="work").client("s3", endpoint_url=server.endpoint).get_object(
        Bucket=url.split("/")[2], Key="f.h5")["Body"].read()
    (tmp_path / "boto3.h5").write_bytes(body)
    with h5py.File(tmp_path / "boto3.h5", "r") as f:
        expected = f["data"][()]
    assert same_bytes(expected, a)
    assert same_bytes(h5tile.from_file(url, "/data"), expected)


def test_the_files_named_by_the_variables_and_the_default_profile(stored, tmp_path, monkeypatch):
    server, url, a = stored
    creds, config = write_profile(tmp_path, server, profile="default")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    assert same_bytes(h5tile.from_file(url, "/data"), a)


def test_a_profile_that_is_not_there_is_named(stored, tmp_path, monkeypatch):
    server, url, _ = stored
    creds, config = write_profile(tmp_path, server)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_PROFILE", "nosuch")
    with pytest.raises(h5tile.InvalidArgumentError, match="'nosuch'"):
        h5tile.from_file(url, "/data")


def test_a_credential_process_gives_the_keys(stored, tmp_path, monkeypatch):
    server, url, a = stored
    script = tmp_path / "creds.sh"
    answer = {"Version": 1, "AccessKeyId": server.access_key, "SecretAccessKey": server.secret_key}
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(answer)}\nEOF\n")
    script.chmod(0o755)
    creds, config = write_profile(tmp_path, server, keys=False, extra=f"credential_process = {script}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_PROFILE", "work")
    assert same_bytes(h5tile.from_file(url, "/data"), a)
    script.write_text("#!/bin/sh\nexit 3\n")
    with pytest.raises(h5tile.IoError, match="credential_process"):
        h5tile.from_file(url, "/data")


class _Credentials(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        if self.headers.get("Authorization") != self.server.token:
            self.send_response(403)
            self.end_headers()
            return
        self.server.asked += 1
        body = json.dumps(self.server.answer).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def endpoint():
    server = http.server.HTTPServer(("127.0.0.1", 0), _Credentials)
    server.asked = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("token_from", ["variable", "file"])
def test_container_credentials_from_a_loopback_endpoint_with_its_token(stored, endpoint, tmp_path, monkeypatch,
                                                                       token_from):
    server, url, a = stored
    endpoint.token = "container-token-value"
    endpoint.answer = {"AccessKeyId": server.access_key, "SecretAccessKey": server.secret_key, "Token": None,
                       "Expiration": "2099-01-01T00:00:00Z"}
    endpoint.answer.pop("Token")
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)
    monkeypatch.setenv("AWS_REGION", server.region)
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://127.0.0.1:{endpoint.server_port}/creds")
    if token_from == "variable":
        monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", endpoint.token)
    else:
        (tmp_path / "token").write_text(endpoint.token + "\n")
        monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", str(tmp_path / "token"))
    assert same_bytes(h5tile.from_file(url, "/data"), a)
    assert endpoint.asked >= 1
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://example.org/creds")  # not loopback: refused
    with pytest.raises(h5tile.InvalidArgumentError, match="loopback"):
        h5tile.from_file(url, "/data")


def test_a_403_with_a_session_token_names_the_token_among_the_causes(stored, tmp_path, monkeypatch):
    server, url, _ = stored
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)
    monkeypatch.setenv("AWS_REGION", server.region)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", server.secret_key)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "expired-session-token-value")
    with pytest.raises(h5tile.IoError) as e:
        h5tile.from_file(url, "/data")
    message = str(e.value)
    if "403" not in message:
        pytest.skip(f"this S3 server did not refuse an unknown session token: {message}")
    assert "AWS_SESSION_TOKEN" in message and "session token" in message, message
    assert "expired-session-token-value" not in message and server.secret_key not in message
