"""Decided: a row of chunks larger than a task is cut between chunk columns (OpenDataset::plan): a gzip box of 8 x 8 chunks read on 16 threads took 7.67 ms as 8 tasks, 4.39 ms as 16.

Times ``ds[1024:3072, 1024:3072]`` through h5tile.File (and ``read_direct`` into an array made
beforehand) on a 4096 x 4096 float32 dataset in 256 x 256 gzip 4 + shuffle chunks, with
H5TILE_THREADS 1, 2, 4, 8 and 16 (each in its own process; median of 15), after h5py's time for the
same box. The file goes to $TMPDIR (removed after). Uses the package in $H5TILE_BUILD_DIR/python.

    python3 bench/probes/box_threads.py
"""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for its common helpers
from common import median_of, use_package  # noqa: E402

use_package()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

BOX = (slice(1024, 3072), slice(1024, 3072))


def write(path: Path) -> None:
    n = 4096
    y = np.linspace(0, 8 * np.pi, n, dtype=np.float32)[:, None]
    x = np.linspace(0, 8 * np.pi, n, dtype=np.float32)[None, :]
    data = np.sin(y) * np.cos(x) + np.random.default_rng(0).normal(0, 0.01, (n, n)).astype(np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=data, chunks=(256, 256), compression="gzip", compression_opts=4, shuffle=True)


def median_ms(read, rounds: int = 15) -> float:
    return median_of(rounds, read, warm_up=True) * 1e3


def one_thread_count(path: Path) -> None:
    import h5tile
    with h5tile.File(path) as f:
        ds = f["x"]
        time.sleep(2.5)  # h5tile keeps a dataset open once its file has been left alone for 2 s
        box = median_ms(lambda: ds[BOX])
        out = np.empty((2048, 2048), np.float32)
        direct = median_ms(lambda: ds.read_direct(out, BOX, np.s_[:, :]))
    print(f"threads {os.environ['H5TILE_THREADS']}: ds[box] {box:.2f} ms, read_direct {direct:.2f} ms")


def main() -> None:
    if len(sys.argv) > 1:
        one_thread_count(Path(sys.argv[1]))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "box_threads.h5"
        write(path)
        with h5py.File(path) as f:
            print(f"h5py {median_ms(lambda: f['x'][BOX], 5):.1f} ms")
        for threads in (1, 2, 4, 8, 16):
            subprocess.run([sys.executable, __file__, str(path)], env=dict(os.environ, H5TILE_THREADS=str(threads)),
                           check=True)


if __name__ == "__main__":
    main()
