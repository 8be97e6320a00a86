"""Writes of HDF5 straight into S3 (to_file to an s3:// URL): one self-contained object uploaded
in parts by the ranks, completed once (the commit), on a real S3 server started by the tests on
loopback (SeaweedFS, signatures checked: servers/seaweedfs.py). Every object written is read back
by h5py from a downloaded copy and by h5tile's own s3:// reads, and compared with the array
written; h5dump reads it. Failures mid-upload (servers/s3_faults.py in front of the server: 5xx,
dropped connections, a failed completion, a writer killed) leave no object and, where the writer
lives to abort, no upload behind."""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, compressible

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from servers.s3_faults import S3FaultProxy, multipart_uploads  # noqa: E402

AWS_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_NO_SIGN_REQUEST",
                 "AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")
MiB = 1 << 20


@pytest.fixture(autouse=True)
def remote_settings():
    """Short timeouts and few retries, so that the failure tests end quickly."""
    with changed_settings(h5tile.settings, remote_timeout=5, remote_retries=2):
        yield


@pytest.fixture
def aws(monkeypatch, seaweedfs_server):
    """The AWS_* variables set to reach `endpoint` (the server's, or a proxy's)."""
    def set_env(endpoint=None):
        for name in AWS_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        env = seaweedfs_server.aws_env()
        if endpoint is not None:
            env["AWS_ENDPOINT_URL"] = endpoint
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return env
    set_env()
    return set_env


@pytest.fixture
def proxy(seaweedfs_server):
    with S3FaultProxy.in_front_of(seaweedfs_server.endpoint) as p:
        yield p


def download(server, bucket, key, folder):
    local = folder / key.replace("/", "_")
    server.client().download_file(bucket, key, str(local))
    return local


def keys(server, bucket):
    listing = server.client().list_objects_v2(Bucket=bucket)
    return sorted(o["Key"] for o in listing.get("Contents", []))


def check_object(server, bucket, key, name, expected, tmp_path, **h5py_checks):
    """The object holds `expected` as dataset `name`: read by h5py from a downloaded copy (with
    the layout details given) and by h5tile from the URL."""
    local = download(server, bucket, key, tmp_path)
    with h5py.File(local, "r") as f:
        got = f[name]
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got[()], expected)
        for attribute, value in h5py_checks.items():
            assert getattr(got, attribute) == value, attribute
    np.testing.assert_array_equal(h5tile.from_file(f"s3://{bucket}/{key}", name), expected)
    return local


CASES = {
    "contiguous": dict(layout="contiguous"),
    "auto": dict(),
    "chunked": dict(chunks=(64, 100)),
    "gzip_shuffle": dict(chunks=(64, 100), compression="gzip", shuffle=True),
    "lzf_fletcher32": dict(chunks=(128, 100), compression="lzf", fletcher32=True),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("ranks", [1, 3])
def test_objects_written_read_back_equal_by_h5py_and_h5tile(seaweedfs_server, aws, bucket, tmp_path, case, ranks):
    """Larger than one part (8 MiB): several parts, sent by several senders; uneven rank tiles."""
    data = compressible("float32", (5000, 700), seed=ranks)  # 14 MB
    options = CASES[case]
    h5tile.to_file(data, f"s3://{bucket}/f.h5", "/group/data", ranks=ranks, **options).wait()
    checks = {}
    if "compression" in options:
        checks["compression"] = options["compression"]
        checks["chunks"] = options["chunks"]
    elif "chunks" in options:
        checks["chunks"] = options["chunks"]
    else:
        checks["chunks"] = None
    check_object(seaweedfs_server, bucket, "f.h5", "/group/data", data, tmp_path, **checks)
    assert keys(seaweedfs_server, bucket) == ["f.h5"]
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float64", "complex64", "bool"])
def test_dtypes_and_small_objects_of_one_part(seaweedfs_server, aws, bucket, tmp_path, dtype):
    data = (np.arange(3 * 5 * 7).reshape(3, 5, 7) % 7).astype(dtype)
    h5tile.to_file(data, f"s3://{bucket}/small.h5", "x", layout="contiguous").wait()
    check_object(seaweedfs_server, bucket, "small.h5", "/x", data, tmp_path)


def test_scalar_and_empty_datasets(seaweedfs_server, aws, bucket, tmp_path):
    h5tile.to_file(np.float64(2.5), f"s3://{bucket}/scalar.h5", "s").wait()
    check_object(seaweedfs_server, bucket, "scalar.h5", "/s", np.array(2.5), tmp_path)
    empty = np.zeros((0, 4), "int32")
    h5tile.to_file(empty, f"s3://{bucket}/empty.h5", "e").wait()
    check_object(seaweedfs_server, bucket, "empty.h5", "/e", empty, tmp_path)


def test_h5dump_reads_an_uploaded_object(seaweedfs_server, aws, bucket, tmp_path):
    if shutil.which("h5dump") is None:
        pytest.skip("h5dump is not installed (Debian hdf5-tools)")
    data = np.arange(24, dtype="int32").reshape(4, 6)
    h5tile.to_file(data, f"s3://{bucket}/d.h5", "d", chunks=(2, 3), compression="gzip").wait()
    local = download(seaweedfs_server, bucket, "d.h5", tmp_path)
    out = subprocess.run(["h5dump", "-d", "/d", str(local)], capture_output=True, text=True, check=True).stdout
    values = [int(v) for line in out.split("DATA {")[1].split("}")[0].splitlines()
              for v in line.split(":")[-1].replace(",", " ").split() if v.strip().lstrip("-").isdigit()]
    assert values == data.ravel().tolist()


def test_mode_w_replaces_the_object_only_at_the_commit(seaweedfs_server, aws, bucket, tmp_path, proxy):
    old = np.full((2000, 1000), 7, "int32")  # 8 MB: two parts
    h5tile.to_file(old, f"s3://{bucket}/r.h5", "d").wait()
    new = np.arange(2000 * 1000, dtype="int32").reshape(2000, 1000)
    aws(proxy.endpoint)
    # A write that fails at its commit leaves the old object whole.
    proxy.fail("CompleteMultipartUpload", nth=1, status=500, times=None)
    with pytest.raises(OSError, match="r.h5"):
        h5tile.to_file(new, f"s3://{bucket}/r.h5", "d").wait()
    proxy.clear()
    check_object(seaweedfs_server, bucket, "r.h5", "/d", old, tmp_path)
    h5tile.to_file(new, f"s3://{bucket}/r.h5", "d").wait()
    check_object(seaweedfs_server, bucket, "r.h5", "/d", new, tmp_path)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@pytest.mark.parametrize("mode", ["x", "w-"])
def test_exclusive_modes_never_replace_an_object(seaweedfs_server, aws, bucket, tmp_path, mode):
    first = np.ones((10, 10), "float32")
    h5tile.to_file(first, f"s3://{bucket}/e.h5", "d", mode=mode).wait()
    with pytest.raises(FileExistsError, match="e.h5"):
        h5tile.to_file(np.zeros((10, 10), "float32"), f"s3://{bucket}/e.h5", "d", mode=mode).wait()
    check_object(seaweedfs_server, bucket, "e.h5", "/d", first, tmp_path)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_what_an_object_cannot_take_is_refused_by_name(seaweedfs_server, aws, bucket):
    data = np.ones((8, 8), "float32")
    with pytest.raises(ValueError, match="mode 'a'"):
        h5tile.to_file(data, f"s3://{bucket}/a.h5", "d", mode="a").wait()
    for url in ("http://127.0.0.1:9/x.h5", "https://example.invalid/x.h5", "webhdfs://127.0.0.1:9/x.h5"):
        with pytest.raises(ValueError, match="s3:// URLs only"):
            h5tile.to_file(data, url, "d").wait()
    assert keys(seaweedfs_server, bucket) == []
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_a_part_that_fails_once_is_sent_again(seaweedfs_server, aws, bucket, tmp_path, proxy):
    data = compressible("float32", (5000, 1000), seed=4)  # 20 MB: parts 1 and 2 whole, 3 the rest
    aws(proxy.endpoint)
    proxy.fail("UploadPart", nth=2, status=503)
    proxy.drop("UploadPart", nth=3, after_bytes=65536)
    h5tile.to_file(data, f"s3://{bucket}/retried.h5", "d").wait()
    assert proxy.count("UploadPart") >= 5  # 3 parts (or more), and the two tries again
    check_object(seaweedfs_server, bucket, "retried.h5", "/d", data, tmp_path)


@pytest.mark.parametrize("fault", ["status", "drop", "complete", "complete_200_error"])
def test_a_failed_upload_is_aborted_and_leaves_nothing(seaweedfs_server, aws, bucket, proxy, fault):
    data = compressible("float32", (4000, 1000), seed=5)
    aws(proxy.endpoint)
    if fault == "status":
        proxy.fail("UploadPart", nth=2, status=500, times=None)
    elif fault == "drop":
        proxy.drop("UploadPart", nth=2, after_bytes=4096, times=None)
    elif fault == "complete":
        proxy.fail("CompleteMultipartUpload", nth=1, status=503, times=None)
    else:
        proxy.fail("CompleteMultipartUpload", nth=1, status=200, times=None)
    with pytest.raises(OSError) as raised:
        h5tile.to_file(data, f"s3://{bucket}/failed.h5", "d").wait()
    assert f"s3://{bucket}/failed.h5" in str(raised.value)
    assert seaweedfs_server.aws_env()["AWS_SECRET_ACCESS_KEY"] not in str(raised.value)
    assert proxy.count("AbortMultipartUpload") >= 1
    assert keys(seaweedfs_server, bucket) == []
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_a_writer_killed_mid_upload_leaves_no_object(seaweedfs_server, aws, bucket, proxy, tmp_path):
    """kill -9 leaves no process to abort: the object never appears; the upload's parts stay
    listed until the bucket's lifecycle rule (AbortIncompleteMultipartUpload) or a user aborts it
    (docs/REMOTE.md), which this test then does."""
    env = dict(os.environ, **aws(proxy.endpoint), PYTHONPATH=str(BUILD / "python"))
    proxy.delay("UploadPart", 3, times=None)  # the writer is mid-upload for a while
    script = textwrap.dedent(f"""
        import numpy as np, h5tile
        h5tile.settings.remote_connections = 1
        data = np.ones((16 << 20) // 4, "float32")
        print("writing", flush=True)
        h5tile.to_file(data, "s3://{bucket}/killed.h5", "d").wait()
        print("done", flush=True)
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while proxy.count("UploadPart") < 1 and time.monotonic() < deadline and writer.poll() is None:
            time.sleep(0.01)
        assert writer.poll() is None, "the writer ended before it could be killed"
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert keys(seaweedfs_server, bucket) == []
    left = multipart_uploads(seaweedfs_server.client(), bucket)
    assert [u["Key"] for u in left] == ["killed.h5"]
    # `h5tile uploads` finds it, keeps it while younger than --older-than, and aborts it.
    cli = BUILD / "cli" / "h5tile"
    env = dict(os.environ, **aws())

    def uploads(*args):
        proc = subprocess.run([str(cli), "uploads", f"s3://{bucket}/", *args], env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout
    listed = json.loads(uploads("--json"))
    assert [(u["url"], u["upload_id"], u["aborted"]) for u in listed] == \
        [(f"s3://{bucket}/killed.h5", left[0]["UploadId"], False)]
    assert "1 unfinished upload under" in uploads()
    assert "1 younger than 1d kept" in uploads("--abort", "--older-than", "1d")
    assert len(multipart_uploads(seaweedfs_server.client(), bucket)) == 1
    assert f"aborted s3://{bucket}/killed.h5" in uploads("--abort")
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []
    assert "0 unfinished uploads under" in uploads()


MPI_TOOL = BUILD / "tests" / "h5tile_mpi_tool"


def mpi_env(endpoint_env):
    return dict(os.environ, **endpoint_env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_rmaps_base_oversubscribe="1")


needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None or not MPI_TOOL.exists(),
                               reason="MPI not installed (mpirun or the MPI test tool missing)")


@needs_mpi
@pytest.mark.parametrize("case", ["contiguous", "chunked", "gzip"])
def test_mpi_ranks_write_one_object(seaweedfs_server, aws, bucket, tmp_path, proxy, case):
    """One self-contained object from MPI ranks (separate processes), 6.4 MB of rows each: one
    upload, every rank sending the parts of its own bytes (contiguous, unfiltered chunks; gzip chunks
    go through rank 0, which alone can write into HDF5's file in memory), rank 0 completing it; read
    back whole by h5py (a local copy) and by the ranks from the URL."""
    env = mpi_env(aws(proxy.endpoint))
    url = f"s3://{bucket}/mpi/one.h5"
    layout, extra = {"contiguous": ("contiguous", []), "chunked": ("chunked", ["--chunk-rows", "100"]),
                     "gzip": ("chunked", ["--gzip", "4", "--chunk-rows", "100"])}[case]
    written = mpi_tool(["write", url, layout, "9600", "500", *extra], env, tmp_path, 3)
    assert written.returncode == 0, (written.stdout, written.stderr)
    assert keys(seaweedfs_server, bucket) == ["mpi/one.h5"]
    # The data (19.2 MB; the pattern barely compresses) after at most 5 MiB of head: no padding
    # between compressed chunks (only the parts divided by rank start the data at 5 MiB).
    size = seaweedfs_server.client().head_object(Bucket=bucket, Key="mpi/one.h5")["ContentLength"]
    assert size <= 9600 * 500 * 4 * 1.02 + (5 << 20), size
    parts = proxy.requests("UploadPart")
    assert len({r.upload_id for r in parts}) == 1 and proxy.count("CreateMultipartUpload") == 1
    numbers = sorted(r.part for r in parts)
    assert numbers == list(range(1, len(numbers) + 1)), numbers  # each part once, none missing
    if case != "gzip":
        # Each rank's 6.4 MB one part, rank 0's with the head (HDF5's metadata, padded to 5 MiB).
        assert len(numbers) == 3, numbers
    read = mpi_tool(["read", url], env, tmp_path, 2)
    assert read.returncode == 0 and read.stdout.count(": ok tile") == 2, (read.stdout, read.stderr)
    local = mirror(seaweedfs_server, bucket, "mpi/", tmp_path / "copy")
    with h5py.File(local / "mpi" / "one.h5", "r") as f:
        assert (f["data"].chunks is None) == (case == "contiguous")
        assert (f["data"].compression == "gzip") == (case == "gzip")
        np.testing.assert_array_equal(f["data"][()], mpi_pattern(9600, 500))
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="MPI not installed (no mpirun)")
@pytest.mark.parametrize("memory", ["host", "device", "host gzip"])
def test_mpi4py_ranks_write_one_object(seaweedfs_server, aws, bucket, tmp_path, proxy, memory):
    """The same from Python: write_tile(comm=) of mpi4py ranks into one object, each rank's
    7.2 MB of rows sent by its own process, from host or (CuPy) device memory, or compressed (the
    chunks gathered to rank 0 through mpi4py's gather); h5tile and h5py (a local copy) read it back."""
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    if memory == "device":
        pytest.importorskip("cupy", reason="CuPy is not installed")
        if h5tile.cuda_device_count() == 0:
            pytest.skip("no CUDA device visible (or h5tile built without CUDA)")
    url = f"s3://{bucket}/py/one.h5"
    (tmp_path / "job.py").write_text(f"import sys\nsys.path.insert(0, {str(BUILD / 'python')!r})\n" + textwrap.dedent("""
        import numpy as np, h5tile
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        data = np.arange(1800 * 1000, dtype=np.float64).reshape(1800, 1000)
        mine = data[rank * 900:(rank + 1) * 900]
        if sys.argv[2] == "device":
            import cupy
            mine = cupy.asarray(mine)
        kw = {"layout": "contiguous"} if sys.argv[2] != "host gzip" else {
            "layout": "chunked", "chunks": (100, 1000), "compression": "gzip"}
        h5tile.write_tile(mine, sys.argv[1], "/d", comm=comm, offset=(rank * 900, 0), global_shape=data.shape, **kw)
        print(f"rank {rank}: written", flush=True)
    """))
    proc = subprocess.run(["mpirun", "--oversubscribe", "-n", "2", sys.executable, "job.py", url, memory],
                          cwd=tmp_path, env=mpi_env(aws(proxy.endpoint)), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0 and proc.stdout.count("written") == 2, (proc.stdout, proc.stderr)
    assert len({r.upload_id for r in proxy.requests("UploadPart")}) == 1
    assert proxy.count("UploadPart") == (2 if memory != "host gzip" else 1)  # (gzip: 1.3 MB, one part)
    expected = np.arange(1800 * 1000, dtype=np.float64).reshape(1800, 1000)
    np.testing.assert_array_equal(h5tile.from_file(url, "/d"), expected)
    local = mirror(seaweedfs_server, bucket, "py/", tmp_path / "copy")
    with h5py.File(local / "py" / "one.h5", "r") as f:
        assert (f["d"].compression == "gzip") == (memory == "host gzip")
        np.testing.assert_array_equal(f["d"][()], expected)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@needs_mpi
@pytest.mark.parametrize("layout", ["contiguous", "chunked", "chunks shared"])
def test_mpi_ranks_with_few_bytes_give_them_to_rank_0(seaweedfs_server, aws, bucket, tmp_path, proxy, layout):
    """Ranks whose bytes are too few for parts of their own (S3's smallest is 5 MiB), or that
    share chunks (tiles not on chunk boundaries), hand them to rank 0 in the write's gather, and
    rank 0 uploads the object alone: one upload, read back whole."""
    url = f"s3://{bucket}/small.h5"
    extra = {"contiguous": [], "chunked": ["--chunk-rows", "10"],
             "chunks shared": ["--chunk-rows", "10", "--unaligned"]}[layout]
    layout = "contiguous" if layout == "contiguous" else "chunked"
    proc = mpi_tool(["write", url, layout, "64", "8", *extra], mpi_env(aws(proxy.endpoint)), tmp_path, 3)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert proxy.count("CreateMultipartUpload") == 1 and proxy.count("UploadPart") == 1
    local = mirror(seaweedfs_server, bucket, "small.h5", tmp_path / "copy")
    with h5py.File(local / "small.h5", "r") as f:
        np.testing.assert_array_equal(f["data"][()], mpi_pattern(64, 8))
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="MPI not installed (no mpirun)")
def test_mpi_ranks_with_short_runs_and_many_bytes_all_fail_and_leave_nothing(seaweedfs_server, aws, bucket, tmp_path):
    """Tiles of columns: every rank's bytes are runs of one row's share, far shorter than a part,
    and more than the 64 MiB that rank 0 takes from the others: refused, every rank with the same
    error naming the rank and its bytes, quickly (not one rank waiting forever), and the upload
    rank 0 began is aborted."""
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    (tmp_path / "job.py").write_text(f"import sys\nsys.path.insert(0, {str(BUILD / 'python')!r})\n" + textwrap.dedent("""
        import numpy as np, h5tile
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        rank, size = comm.Get_rank(), comm.Get_size()
        cols = [0, 1734, 3467, 5200]
        mine = np.ones((5200, cols[rank + 1] - cols[rank]), np.float32)
        try:
            h5tile.write_tile(mine, sys.argv[1], "/d", comm=comm, offset=(0, cols[rank]), global_shape=(5200, 5200),
                              layout="contiguous")
            said = f"rank {rank}: written"
        except ValueError as e:
            said = f"rank {rank}: error {e}"
        # A file per rank: mpirun may splice one rank's long line into another's on stdout.
        with open(f"rank-{rank}.txt", "w") as out:
            out.write(said)
    """))
    proc = subprocess.run(["mpirun", "--oversubscribe", "-n", "3", sys.executable, "job.py", f"s3://{bucket}/cols.h5"],
                          cwd=tmp_path, env=mpi_env(aws()), capture_output=True, text=True, timeout=180)
    said = sorted(tmp_path.glob("rank-*.txt"))
    assert len(said) == 3, (proc.stdout, proc.stderr)
    lines = [p.read_text() for p in said]
    assert all("rank 1 writes bytes" in line and "fewer than S3's smallest part" in line for line in lines), lines
    assert keys(seaweedfs_server, bucket) == []
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@needs_mpi
@pytest.mark.parametrize("fault", ["part of another process", "completion", "gzip part"])
def test_a_failed_mpi_write_of_one_object_leaves_nothing(seaweedfs_server, aws, bucket, tmp_path, proxy, fault):
    """A part that another process sends fails for good, rank 0's completion does, or a part of
    compressed chunks that rank 0 writes while the ranks encode the next round: every rank fails, no
    object appears, and the upload is aborted (no parts left behind)."""
    layout, rows = ["contiguous"], "9600"
    if fault == "completion":
        proxy.fail("CompleteMultipartUpload", status=500, times=None)
    elif fault == "gzip part":
        proxy.fail("UploadPart", part=2, status=500, times=None)  # sent while the chunks are written
        layout, rows = ["chunked", "--gzip", "1", "--chunk-rows", "100"], "48000"  # parts of compressed chunks
    else:
        proxy.fail("UploadPart", part=3, status=500, times=None)  # the last rank's part
    proc = mpi_tool(["write", f"s3://{bucket}/bad.h5", layout[0], rows, "500", *layout[1:]],
                    mpi_env(aws(proxy.endpoint)), tmp_path, 3)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("rank ")]
    assert proc.returncode != 0 and len(lines) == 3 and all(": error" in line for line in lines), proc.stdout
    assert proxy.count("AbortMultipartUpload") >= 1
    assert keys(seaweedfs_server, bucket) == []
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


# ---- consolidate into an object ---------------------------------------------------------------------
@pytest.mark.parametrize("case", ["contiguous", "chunked", "gzip"])
def test_consolidate_uploads_one_object(seaweedfs_server, aws, bucket, tmp_path, case):
    """consolidate (a virtual dataset of tiles here) into an s3:// object: contiguous in blocks
    written by the threads, or chunks (compressed or not) through HDF5; read back by h5py and h5tile."""
    data = compressible("float32", (3000, 900), seed=7)  # 10.8 MB: several parts
    h5tile.to_file(data, tmp_path / "tiled.h5", "/u", layout="virtual", ranks=3).wait()
    options = {"contiguous": {}, "chunked": {"chunks": (250, 300)},
               "gzip": {"chunks": (256, 900), "compression": "gzip", "shuffle": True}}[case]
    h5tile.consolidate(tmp_path / "tiled.h5", "/u", f"s3://{bucket}/u.h5", threads=2, **options)
    checks = {"chunks": options.get("chunks")}
    if "compression" in options:
        checks.update(compression="gzip", shuffle=True)
    check_object(seaweedfs_server, bucket, "u.h5", "/u", data, tmp_path, **checks)
    assert keys(seaweedfs_server, bucket) == ["u.h5"]
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiled.h5", "tiled.h5.tiles", "u.h5"]  # u.h5: the check's


def test_consolidate_to_an_object_keeps_the_modes(seaweedfs_server, aws, bucket, tmp_path, proxy):
    first = np.arange(600 * 500, dtype="int32").reshape(600, 500)
    second = first[::-1].copy()
    h5tile.to_file(first, tmp_path / "a.h5", "d", layout="contiguous").wait()
    h5tile.to_file(second, tmp_path / "b.h5", "d", layout="contiguous").wait()
    url = f"s3://{bucket}/c.h5"
    h5tile.consolidate(tmp_path / "a.h5", "d", url)
    with pytest.raises(FileExistsError, match="c.h5"):
        h5tile.consolidate(tmp_path / "b.h5", "d", url)  # mode "x", the default
    with pytest.raises(ValueError, match="mode 'a'"):
        h5tile.consolidate(tmp_path / "b.h5", "d", url, mode="a")
    aws(proxy.endpoint)
    proxy.fail("CompleteMultipartUpload", nth=1, status=500, times=None)
    with pytest.raises(OSError, match="c.h5"):
        h5tile.consolidate(tmp_path / "b.h5", "d", url, mode="w")
    proxy.clear()
    check_object(seaweedfs_server, bucket, "c.h5", "/d", first, tmp_path)  # the failed write changed nothing
    h5tile.consolidate(tmp_path / "b.h5", "d", url, mode="w")
    check_object(seaweedfs_server, bucket, "c.h5", "/d", second, tmp_path)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_consolidate_command_uploads_and_names_the_object(seaweedfs_server, aws, bucket, tmp_path):
    data = compressible("float64", (700, 300), seed=8)
    h5tile.to_file(data, tmp_path / "in.h5", "/g/v", layout="virtual", ranks=2).wait()
    cli = BUILD / "cli" / "h5tile"
    url = f"s3://{bucket}/out.h5"
    proc = subprocess.run([str(cli), "consolidate", f"{tmp_path / 'in.h5'}:/g/v", url, "--layout", "chunked",
                           "--compression", "gzip"], env=dict(os.environ), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"-> {url}:/g/v" in proc.stdout
    check_object(seaweedfs_server, bucket, "out.h5", "/g/v", data, tmp_path, compression="gzip")
    again = subprocess.run([str(cli), "consolidate", f"{tmp_path / 'in.h5'}:/g/v", url], env=dict(os.environ),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "out.h5" in again.stderr and "--force" in again.stderr, again.stderr
    refused = subprocess.run([str(cli), "consolidate", f"{tmp_path / 'in.h5'}:/g/v", url, "--append"],
                             env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "mode 'a'" in refused.stderr, refused.stderr
    for other in ("http://127.0.0.1:9/x.h5", "webhdfs://127.0.0.1:9/x.h5"):
        proc = subprocess.run([str(cli), "consolidate", f"{tmp_path / 'in.h5'}:/g/v", other], env=dict(os.environ),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0 and "s3:// URLs only" in proc.stderr, proc.stderr
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


# ---- layout virtual: tile objects, then the virtual dataset's object -----------------------------------
def mirror(server, bucket, prefix, folder):
    """Every object under `prefix`, downloaded into `folder` at its key's path (a local copy of
    the objects as the virtual dataset names them)."""
    for key in keys(server, bucket):
        if key.startswith(prefix):
            local = folder / key
            local.parent.mkdir(parents=True, exist_ok=True)
            server.client().download_file(bucket, key, str(local))
    return folder


@pytest.mark.parametrize("case", ["raw", "gzip"])
def test_virtual_layout_uploads_tile_objects_then_the_main_one(seaweedfs_server, aws, bucket, tmp_path, proxy, case):
    data = compressible("float32", (3000, 700), seed=9)  # 8.4 MB: tiles of one part or two
    options = {"chunks": (100, 700), "compression": "gzip"} if case == "gzip" else {}
    aws(proxy.endpoint)
    h5tile.to_file(data, f"s3://{bucket}/run/v.h5", "/g/d", layout="virtual", ranks=3, **options).wait()
    stored = keys(seaweedfs_server, bucket)
    assert stored[0] == "run/v.h5" and len(stored) == 4, stored
    assert all(k.startswith("run/v.h5.tiles/g/d/") and k.endswith(".h5") for k in stored[1:]), stored
    # The virtual dataset's object completes last: no reader finds it before its tiles.
    completions = [r.key for r in proxy.requests("CompleteMultipartUpload")]
    assert len(completions) == 4 and completions[-1] == "run/v.h5", completions
    np.testing.assert_array_equal(h5tile.from_file(f"s3://{bucket}/run/v.h5", "/g/d"), data)
    local = mirror(seaweedfs_server, bucket, "run/", tmp_path / "copy")
    with h5py.File(local / "run" / "v.h5", "r") as f:
        assert f["/g/d"].is_virtual
        np.testing.assert_array_equal(f["/g/d"][()], data)
        # Raw tiles are indexed (their bytes read at known offsets, no HDF5 open of each tile):
        # the checksums and identities taken before the uploads finished hold for the objects.
        assert ("h5tile_tile_table" in f["/g/d"].attrs) == (case == "raw")
        table = f["/g/d"].attrs.get("h5tile_tile_table")
        names = f["/g/d"].attrs.get("h5tile_tile_files")

    def verify():
        return subprocess.run([str(BUILD / "cli" / "h5tile"), "verify", str(local / "run" / "v.h5"), "--read"],
                              capture_output=True, text=True, timeout=120)

    assert verify().returncode == 0, verify().stdout
    if case == "raw":  # a byte of a tile's data changed: its recorded checksum no longer holds
        tile = local / "run" / (names[1].decode() if isinstance(names[1], bytes) else str(names[1]))
        raw = bytearray(tile.read_bytes())
        raw[int(table[1][0]) + 5] ^= 0xFF
        tile.write_bytes(bytes(raw))
        damaged = verify()
        assert damaged.returncode == 1 and "checksum" in damaged.stdout, damaged.stdout
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_a_completion_whose_answer_is_lost_keeps_the_tiles(seaweedfs_server, aws, bucket, proxy):
    """The server makes the virtual dataset's object but every answer to its completion is lost:
    the write fails, and the tiles the (visible) object maps stay, so that it reads whole."""
    data = compressible("float32", (3000, 700), seed=14)
    aws(proxy.endpoint)
    proxy.lose_response("CompleteMultipartUpload", key="lost.h5", times=None)
    with pytest.raises(OSError, match="lost.h5"):
        h5tile.to_file(data, f"s3://{bucket}/lost.h5", "d", layout="virtual", ranks=3).wait()
    proxy.clear()
    assert len(keys(seaweedfs_server, bucket)) == 4
    np.testing.assert_array_equal(h5tile.from_file(f"s3://{bucket}/lost.h5", "d"), data)


def test_names_readers_could_not_find_again_are_refused_for_virtual_objects(seaweedfs_server, aws, bucket):
    data = np.ones((20, 4), "float32")
    for url, name in ((f"s3://{bucket}/a#b.h5", "d"), (f"s3://{bucket}/ok.h5", "/p?q"), (f"s3://{bucket}/ok.h5", "r#s")):
        with pytest.raises(ValueError, match="'[?]' or '#'"):
            h5tile.to_file(data, url, name, layout="virtual", ranks=2).wait()
    assert keys(seaweedfs_server, bucket) == []
    h5tile.to_file(data, f"s3://{bucket}/a b%41é.h5", "/g h%é", layout="virtual", ranks=2).wait()
    np.testing.assert_array_equal(h5tile.from_file(f"s3://{bucket}/a b%41é.h5", "/g h%é"), data)
    # Small tiles make small objects (HDF5's metadata blocks sized for them, not 1 MiB each).
    sizes = seaweedfs_server.client().list_objects_v2(Bucket=bucket)["Contents"]
    assert all(o["Size"] < 200_000 for o in sizes), [(o["Key"], o["Size"]) for o in sizes]


@pytest.mark.parametrize("fault", ["tile_part", "main_completion"])
def test_a_failed_virtual_write_leaves_no_object(seaweedfs_server, aws, bucket, proxy, fault):
    data = compressible("float32", (3000, 700), seed=10)
    aws(proxy.endpoint)
    if fault == "tile_part":
        proxy.fail("UploadPart", nth=2, status=500, times=None)
    else:  # the tiles complete first; the main object's completion fails
        proxy.fail("CompleteMultipartUpload", nth=4, status=500, times=None)
    with pytest.raises(OSError, match="v.h5"):
        h5tile.to_file(data, f"s3://{bucket}/v.h5", "d", layout="virtual", ranks=3).wait()
    assert keys(seaweedfs_server, bucket) == []  # the tiles made were deleted
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_virtual_object_modes(seaweedfs_server, aws, bucket, tmp_path):
    first = np.arange(400 * 30, dtype="int64").reshape(400, 30)
    url = f"s3://{bucket}/m.h5"
    h5tile.to_file(first, url, "d", layout="virtual", ranks=2, mode="x").wait()
    with pytest.raises(FileExistsError, match="m.h5"):
        h5tile.to_file(first + 1, url, "d", layout="virtual", ranks=2, mode="x").wait()
    assert len(keys(seaweedfs_server, bucket)) == 3  # nothing of the refused write
    h5tile.to_file(first + 2, url, "d", layout="virtual", ranks=2, mode="w").wait()
    np.testing.assert_array_equal(h5tile.from_file(url, "d"), first + 2)
    # The replaced write's tiles stay for readers of the old object (docs/REMOTE.md).
    assert len(keys(seaweedfs_server, bucket)) == 5
    with pytest.raises(ValueError, match="mode 'a'"):
        h5tile.to_file(first, url, "e", layout="virtual", mode="a").wait()


def test_split_command_into_an_object_prefix(seaweedfs_server, aws, bucket, tmp_path):
    data = compressible("float32", (900, 400), seed=11)
    h5tile.to_file(data, tmp_path / "one.h5", "/u", layout="contiguous").wait()
    url = f"s3://{bucket}/tiled.h5"
    proc = subprocess.run([str(BUILD / "cli" / "h5tile"), "split", f"{tmp_path / 'one.h5'}:/u", url, "--tiles", "3"],
                          env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"-> {url}:/u (3 tiles" in proc.stdout, proc.stdout
    assert len(keys(seaweedfs_server, bucket)) == 4
    np.testing.assert_array_equal(h5tile.from_file(url, "/u"), data)


def mpi_tool(args, env, cwd, ranks):
    return subprocess.run(["mpirun", "--oversubscribe", "-n", str(ranks), str(MPI_TOOL), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)


def mpi_pattern(rows, cols):
    """The array mpi_tool writes: element i is (i * 2654435761 + 12345) mod 2^32."""
    i = np.arange(rows * cols, dtype=np.uint64)
    return ((i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(1 << 32)).astype(np.uint32).reshape(rows, cols)


@pytest.mark.skipif(shutil.which("mpirun") is None or not MPI_TOOL.exists(),
                    reason="MPI not installed (mpirun or the MPI test tool missing)")
@pytest.mark.parametrize("gzip", [False, True])
def test_mpi_ranks_write_a_virtual_dataset_into_a_prefix(seaweedfs_server, aws, bucket, tmp_path, gzip):
    """Layout virtual from MPI ranks (separate processes): each rank uploads its own tile object,
    rank 0 the virtual dataset's object last; every rank reads its tile and the whole array back
    from the URL, and h5py reads a copy of the prefix."""
    env = dict(os.environ, **aws(), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    url = f"s3://{bucket}/mpi/v.h5"
    extra = ["--gzip", "4", "--chunk-rows", "100"] if gzip else []
    written = mpi_tool(["write", url, "virtual", "3000", "500", *extra], env, tmp_path, 3)
    assert written.returncode == 0, (written.stdout, written.stderr)
    stored = keys(seaweedfs_server, bucket)
    assert len(stored) == 4 and stored[0] == "mpi/v.h5", stored
    read = mpi_tool(["read", url], env, tmp_path, 2)
    assert read.returncode == 0 and read.stdout.count(": ok tile") == 2, (read.stdout, read.stderr)
    local = mirror(seaweedfs_server, bucket, "mpi/", tmp_path / "copy")
    with h5py.File(local / "mpi" / "v.h5", "r") as f:
        np.testing.assert_array_equal(f["data"][()], mpi_pattern(3000, 500))
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]  # no local path made of the URL


@pytest.mark.skipif(shutil.which("mpirun") is None or not MPI_TOOL.exists(),
                    reason="MPI not installed (mpirun or the MPI test tool missing)")
def test_a_failed_mpi_virtual_write_leaves_no_object(seaweedfs_server, aws, bucket, tmp_path, proxy):
    """One rank's tile fails: every rank fails, and rank 0 deletes the tile objects the other
    processes made (found by listing the write's prefix) and aborts the rest."""
    env = dict(os.environ, **aws(proxy.endpoint), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    # Objects of other writes beside it, one under the same '.tiles' prefix: never touched.
    bystanders = ["keep.h5", "bad.h5.tiles/data/0000000000000000-1-00000000/tile-00000.h5", "bad.h5.tiles/x"]
    for key in bystanders:
        seaweedfs_server.put_bytes(bucket, key, b"other")
    # Every tile completes (rank 0's and two of other processes); the main object's completion fails.
    proxy.fail("CompleteMultipartUpload", key="bad.h5", status=500, times=None)
    proc = mpi_tool(["write", f"s3://{bucket}/bad.h5", "virtual", "3000", "500"], env, tmp_path, 3)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("rank ")]
    assert proc.returncode != 0 and len(lines) == 3 and all(": error" in line for line in lines), proc.stdout
    assert proxy.count("ListObjects") >= 1  # what other processes made, found
    assert proxy.count("DeleteObject") == 3
    assert keys(seaweedfs_server, bucket) == sorted(bystanders)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


@pytest.mark.parametrize("where", ["threads", "worker processes"])
def test_dask_blocks_write_a_virtual_dataset_into_a_prefix(seaweedfs_server, aws, bucket, tmp_path, where):
    """h5tile.dask.to_file into s3://: every block its own tile object (uploaded by the thread or
    the worker process that computed it), the client's virtual dataset object last."""
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    import h5tile.dask as h5d
    data = compressible("float32", (2000, 300), seed=12)
    x = da.from_array(data, chunks=(500, 300))
    url = f"s3://{bucket}/dask/d.h5"
    if where == "threads":
        h5d.to_file(x, url, "/d")
    else:
        on_dask(where, tmp_path, lambda: h5d.to_file(x, url, "/d", chunks=(100, 300), compression="gzip"))
    stored = [k for k in keys(seaweedfs_server, bucket) if k.startswith("dask/")]
    assert stored[0] == "dask/d.h5" and len(stored) == 5, stored
    np.testing.assert_array_equal(h5tile.from_file(url, "/d"), data)
    local = mirror(seaweedfs_server, bucket, "dask/", tmp_path / "copy")
    with h5py.File(local / "dask" / "d.h5", "r") as f:
        np.testing.assert_array_equal(f["d"][()], data)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def on_dask(where, tmp_path, write):
    """Runs `write()` on Dask's threads, or ("worker processes") with a LocalCluster of two worker
    processes as the default scheduler."""
    if where == "threads":
        write()
        return
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    import dask
    with dask.config.set({"temporary-directory": str(tmp_path)}), \
            distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                     dashboard_address=None, local_directory=str(tmp_path)) as cluster, \
            distributed.Client(cluster):
        write()


@pytest.mark.parametrize("where", ["threads", "worker processes"])
@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_dask_blocks_write_one_object(seaweedfs_server, aws, bucket, tmp_path, proxy, where, layout):
    """h5tile.dask.to_file of a contiguous or chunked object into s3://: one upload that the client
    starts and completes, each block's 6 MB of rows sent as parts by the thread or worker process
    that computed it. Blocks of columns, whose rows (or chunks) are runs shorter than a part, give
    their bytes to the client instead, which uploads that object alone."""
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    import h5tile.dask as h5d
    aws(proxy.endpoint)
    data = compressible("float32", (4000, 1500), seed=13)  # 24 MB: 4 blocks of 1000 rows (6 MB)
    x = da.from_array(data, chunks=(1000, 1500))
    url = f"s3://{bucket}/dask/one.h5"
    chunks = (500, 1500) if layout == "chunked" else None

    def write():
        h5d.to_file(x, url, "/d", layout=layout, chunks=chunks)
        h5d.to_file(da.from_array(data, chunks=(4000, 500)), f"s3://{bucket}/columns.h5", "/d", layout=layout,
                    chunks=(1000, 500) if layout == "chunked" else None)

    on_dask(where, tmp_path, write)
    assert keys(seaweedfs_server, bucket) == ["columns.h5", "dask/one.h5"]
    np.testing.assert_array_equal(h5tile.from_file(f"s3://{bucket}/columns.h5", "/d"), data)
    uploads = {r.upload_id for r in proxy.requests("UploadPart") if r.key == "dask/one.h5"}
    assert len(uploads) == 1
    # The client's head part (HDF5's metadata, 5 MiB) and one part of each block.
    assert len([r for r in proxy.requests("UploadPart") if r.key == "dask/one.h5"]) == 5
    np.testing.assert_array_equal(h5tile.from_file(url, "/d"), data)
    local = mirror(seaweedfs_server, bucket, "dask/", tmp_path / "copy")
    with h5py.File(local / "dask" / "one.h5", "r") as f:
        assert f["d"].chunks == chunks
        np.testing.assert_array_equal(f["d"][()], data)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def failing_block(block, block_info=None):
    if block_info[None]["chunk-location"] == (2, 0):
        raise ValueError("block (2, 0) cannot be computed")
    return block


@pytest.mark.parametrize("where", ["threads", "worker processes"])
def test_a_failing_dask_block_leaves_the_object_as_it_was(seaweedfs_server, aws, bucket, tmp_path, where):
    """One block of a contiguous object fails while the others upload their parts: the client
    aborts the upload; the object written before stays as it was, and no parts are left."""
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    import h5tile.dask as h5d
    url = f"s3://{bucket}/kept.h5"
    old = compressible("float32", (4000, 1500), seed=15)
    h5tile.to_file(old, url, "/d", layout="contiguous").wait()
    x = da.from_array(compressible("float32", (4000, 1500), seed=16), chunks=(1000, 1500))

    def write():
        with pytest.raises(ValueError, match=r"block \(2, 0\)"):
            h5d.to_file(x.map_blocks(failing_block, dtype="float32"), url, "/d", layout="contiguous")

    on_dask(where, tmp_path, write)
    assert keys(seaweedfs_server, bucket) == ["kept.h5"]
    np.testing.assert_array_equal(h5tile.from_file(url, "/d"), old)
    assert multipart_uploads(seaweedfs_server.client(), bucket) == []


def test_dask_refuses_compressed_chunks_of_one_object(seaweedfs_server, aws, bucket):
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    import h5tile.dask as h5d
    x = da.zeros((100, 10), chunks=(50, 10), dtype="f4")
    # Blocks of columns whose rows are runs shorter than a part, more than rank 0 gathers: refused,
    # the message saying which block the rank it names is.
    big = da.zeros((6000, 6000), chunks=(6000, 2000), dtype="f4")
    with pytest.raises(ValueError, match=r"rank 1 writes bytes .* rank 1 is the block at \(0, 0\)"):
        h5d.to_file(big, f"s3://{bucket}/cols.h5", "/d", layout="contiguous")
    with pytest.raises(ValueError, match="compressed chunks of one chunked object cannot be written by worker"):
        h5d.to_file(x, f"s3://{bucket}/z.h5", "/d", layout="chunked", compression="gzip")
    with pytest.raises(ValueError, match="layout 'virtual'"):
        h5d.to_file(x, "local.h5", "/d", layout="contiguous")
    assert keys(seaweedfs_server, bucket) == []


def test_uploads_command_lists_and_aborts_more_than_a_thousand(seaweedfs_server, aws, bucket):
    """More unfinished uploads than AWS puts in one ListMultipartUploads page (1000; SeaweedFS
    answers them in one): every one under the prefix is listed, and --abort discards them all."""
    client = seaweedfs_server.client()
    made = {client.create_multipart_upload(Bucket=bucket, Key=f"many/k{i:04d}.h5")["UploadId"] for i in range(1010)}
    client.create_multipart_upload(Bucket=bucket, Key="other/x.h5")  # outside the prefix
    cli = BUILD / "cli" / "h5tile"
    env = dict(os.environ, **aws())
    proc = subprocess.run([str(cli), "uploads", f"s3://{bucket}/many/", "--json"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert {u["upload_id"] for u in json.loads(proc.stdout)} == made
    proc = subprocess.run([str(cli), "uploads", f"s3://{bucket}/many/", "--abort"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and "1010 unfinished uploads" in proc.stdout, proc.stderr
    assert [u["Key"] for u in multipart_uploads(client, bucket)] == ["other/x.h5"]


@pytest.mark.parametrize("layout", ["contiguous", "virtual"])
def test_device_arrays_upload_as_host_arrays_do(seaweedfs_server, aws, bucket, tmp_path, layout):
    """GPU machine (skipped elsewhere): to_file of a CuPy array into s3:// writes the bytes the
    same write of the host array does (the datasets equal byte for byte, read by h5py)."""
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    if h5tile.cuda_device_count() == 0:
        pytest.skip("no CUDA device visible (or h5tile built without CUDA)")
    data = compressible("float32", (3000, 1000), seed=13)  # 12 MB: parts of 8 MiB
    h5tile.to_file(data, f"s3://{bucket}/host.h5", "d", layout=layout, ranks=3).wait()
    h5tile.to_file(cp.asarray(data), f"s3://{bucket}/device.h5", "d", layout=layout, ranks=3).wait()
    copies = mirror(seaweedfs_server, bucket, "", tmp_path / "copy")
    with h5py.File(copies / "host.h5", "r") as h, h5py.File(copies / "device.h5", "r") as d:
        assert h["d"][()].tobytes() == d["d"][()].tobytes() == data.tobytes()
    assert cp.asnumpy(h5tile.from_file(f"s3://{bucket}/device.h5", "d", device=0)).tobytes() == data.tobytes()


def test_uploads_command_refuses_other_urls_as_a_usage_error():
    for prefix in ("http://127.0.0.1:9/x?token=SECRET", "webhdfs://127.0.0.1:9/x", "bucket/"):
        proc = subprocess.run([str(BUILD / "cli" / "h5tile"), "uploads", prefix], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and "is not an s3:// URL" in proc.stderr, proc.stderr
        assert "SECRET" not in proc.stderr
