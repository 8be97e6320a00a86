"""What the benchmarks share: where the build's h5tile package is, dropping the page cache, and
timers. The benchmarks run as `python3 bench/NAME.py` from the repository root, so bench/ is
first on sys.path and `import common` finds this package. Its modules:

    common                 this file: ROOT, build_dir, PACKAGE, use_package, drop_caches,
                           best_of, median_of (standard library only, so that a benchmark's child
                           processes can import it cheaply)
    common.cold            the cold-read benchmarks' command line, file of ones and timed `dd`
    common.compressible    the compressed benchmarks' data (a smooth field plus noise) and codecs
    common.netcdf_file     the netCDF-4 file of the xarray and Dask benchmarks
    common.nginx_folder    nginx serving one folder over HTTP on loopback
    common.remote_engines  the engines bench/remote_read.py compares
"""
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_dir(build=None) -> Path:
    """The build folder: `build` where given, else $H5TILE_BUILD_DIR, else build/; a relative one
    is taken from the repository root."""
    path = Path(build if build is not None else os.environ.get("H5TILE_BUILD_DIR", "build"))
    return path if path.is_absolute() else ROOT / path


# The build's Python package (the folder that holds h5tile/): $H5TILE_BUILD_DIR/python.
PACKAGE = str(build_dir() / "python")


def use_package(build=None) -> str:
    """Puts the Python package of `build` (default: $H5TILE_BUILD_DIR, else build/) first on
    sys.path, so that `import h5tile` finds it; returns its folder."""
    python = str(build_dir(build) / "python")
    sys.path.insert(0, python)
    return python


def drop_caches(required=True) -> bool:
    """Empties the page cache (sync; echo 3 > /proc/sys/vm/drop_caches), which needs root. Where
    it cannot: raises OSError when `required`, else returns False."""
    subprocess.run(["sync"], check=required)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        if required:
            raise
        return False
    return True


def best_of(repeats, run, warm_up=True):
    """The shortest of `repeats` timed calls of `run` (after one untimed call when `warm_up`)."""
    if warm_up:
        run()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def median_of(repeats, run, warm_up=False, before=None):
    """The median seconds of `repeats` timed calls of `run` (after one untimed call when
    `warm_up`); `before`, where given, is called before each timed call, outside the clock."""
    if warm_up:
        run()
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
