"""What the cold-read benchmarks (cold_read_modes.py, cold_device_phases.py, cold_patterns.py,
cold_threads.py; gpu_tuning.py too) share: their command line, the file of ones they read, and a
timed `dd` of it."""
import argparse
import subprocess
import time
from pathlib import Path

from . import build_dir


def timed_dd(path: Path, direct: bool) -> float:
    """Seconds of `dd bs=16M` reading `path` to /dev/null (direct: iflag=direct, past the page cache)."""
    flags = ["iflag=direct"] if direct else []
    t0 = time.perf_counter()
    subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=16M", *flags], check=True, capture_output=True)
    return time.perf_counter() - t0


def cold_parser(doc: str, gib: float, folder: str) -> argparse.ArgumentParser:
    """The options the cold-read benchmarks share: --gib (the file's size), --rounds, --dir (where
    the file is written) and --build (the h5tile build whose package is read)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=gib)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--dir", default=folder)
    p.add_argument("--build", default=str(build_dir()))
    return p


def ones_file(folder, name: str, gib: float) -> tuple[Path, int]:
    """Writes `gib` GiB of float32 ones (rows of 4096) as the contiguous dataset /x of
    folder/name with h5tile (the build's package, already on sys.path); returns the file's path
    and the dataset's bytes."""
    import numpy as np
    import h5tile
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = int(gib * 2**30) // 4 // 4096
    h5tile.to_file(np.ones((rows, 4096), np.float32), path, "/x", layout="contiguous").wait()
    return path, rows * 4096 * 4
