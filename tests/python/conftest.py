"""Fixtures for the cross-checks between h5tile and h5py/numpy/h5dump."""
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import uuid

import numpy as np
import pytest

# Servers the remote-read tests start on loopback (tests/python/servers/): nginx and the fault
# server; the S3 server, one per session for every test module that asks for it. This folder is
# put on the path for loaders that do not (tests/legate/conftest.py loads this file by name).
if str(pathlib.Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from servers.fixtures import fault_server, nginx_server, webhdfs_server  # noqa: E402,F401 (fixtures)
from servers.seaweedfs import bucket, seaweedfs_server  # noqa: E402,F401

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("H5TILE_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD

# Every dtype h5tile supports, as numpy names it.
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "V7"]


def random_array(dtype: str, shape, seed: int = 0) -> np.ndarray:
    """Random values of any bit pattern (NaNs included: compare bytes, not values)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    return np.frombuffer(rng.bytes(n), dtype=dt).reshape(shape).copy()


def compressible(dtype: str, shape, seed: int = 0, period: int = 91) -> np.ndarray:
    """Values that compress (a ramp modulo `period` plus a little noise) for numbers; random bits
    for the other dtypes."""
    a = random_array(dtype, shape, seed)
    if np.dtype(dtype).kind in "iuf":
        ramp = np.arange(int(np.prod(shape))).reshape(shape) % period
        a = (ramp + np.random.default_rng(seed).integers(0, 4, size=shape)).astype(dtype)
    return a


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def mount_small(kind, where, tmp_path, size="24m"):
    """A small filesystem (24 MiB unless `size` says) at `where` (tmpfs, or ext4 in a loop-mounted
    image); skips visibly when this machine cannot mount (not root, or no loop devices)."""
    where.mkdir()
    if kind == "tmpfs":
        cmd = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]
    else:
        image = tmp_path / f"small-{uuid.uuid4().hex}.img"
        with open(image, "wb") as f:
            f.truncate(int(size.rstrip("m")) << 20)
        made = subprocess.run(["mkfs.ext4", "-q", str(image)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"mkfs.ext4 failed: {made.stderr.strip()}")
        cmd = ["mount", "-o", "loop", str(image), str(where)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small {kind} here: {done.stderr.strip()}")


class Tool:
    """Runs tests/tools/interop.cpp (h5tile_interop)."""

    def __init__(self, path: pathlib.Path):
        self.path = path

    def run(self, *args, cwd=None, check=True):
        proc = subprocess.run([str(self.path), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                              timeout=120)
        out = json.loads(proc.stdout) if proc.stdout.strip() else {}
        if check and proc.returncode != 0:
            raise AssertionError(f"h5tile_interop {args} failed ({proc.returncode}): {proc.stdout} {proc.stderr}")
        return proc.returncode, out

    def write(self, array: np.ndarray, file, dataset="/data", layout="virtual", ranks=3, mode="overwrite",
              cwd=None, check=True):
        raw = pathlib.Path(str(file) + ".in.raw") if cwd is None else pathlib.Path(cwd) / "in.raw"
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_bytes(np.ascontiguousarray(array).tobytes())
        shape = ",".join(str(s) for s in array.shape)
        try:
            return self.run("write", raw, dtype_name(array.dtype), shape, file, dataset, layout, ranks, mode,
                            cwd=cwd, check=check)
        finally:
            raw.unlink()

    def read(self, file, dataset="/data", tmp=None):
        raw = pathlib.Path(tmp or pathlib.Path(str(file)).parent) / "out.raw"
        code, out = self.run("read", file, dataset, raw, check=False)
        if code != 0:
            return out
        return decode(raw, out)

    def box(self, file, dataset, offset, extent, tmp):
        raw = pathlib.Path(tmp) / "box.raw"
        _, out = self.run("box", file, dataset, ",".join(map(str, offset)), ",".join(map(str, extent)), raw)
        return decode(raw, out)

    def batched(self, file, dataset, chunk, tmp, check=True):
        raw = pathlib.Path(tmp) / "batched.raw"
        code, out = self.run("batched", file, dataset, ",".join(map(str, chunk)), raw, check=check)
        if code != 0:
            return out
        return raw.read_bytes(), out["blocks"]


def dtype_name(dt: np.dtype) -> str:
    return f"V{dt.itemsize}" if dt.kind == "V" else dt.name


def decode(raw: pathlib.Path, out: dict) -> np.ndarray:
    dtype = np.dtype(out["dtype"])
    data = np.frombuffer(raw.read_bytes(), dtype=dtype)
    raw.unlink()
    return data.reshape(tuple(out["shape"]))


@pytest.fixture(scope="session")
def tool() -> Tool:
    path = BUILD / "tests" / "h5tile_interop"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (scripts/build.sh)")
    return Tool(path)


@pytest.fixture(scope="session")
def hdf5_version(tool) -> tuple:
    """The HDF5 release that h5tile's build runs with, as (major, minor, release)."""
    _, out = tool.run("hdf5-version")
    return tuple(int(part) for part in out["hdf5"].split("."))


@contextlib.contextmanager
def changed_settings(settings, **values):
    """Sets h5tile settings for the block (name=value: `settings.set_<name>(value)`) and restores
    what they were after it, whatever the tests did to them meanwhile."""
    saved = {name: getattr(settings, name)() for name in values}
    for name, value in values.items():
        getattr(settings, f"set_{name}")(value)
    try:
        yield
    finally:
        for name, value in saved.items():
            getattr(settings, f"set_{name}")(value)


class OneRank:
    """A communicator of one rank, as mpi4py's (write_tile takes any object with these)."""

    def Get_rank(self):  # noqa: N802
        return 0

    def Get_size(self):  # noqa: N802
        return 1

    def allgather(self, part):
        return [part]

    def bcast(self, part, root=0):
        return part
