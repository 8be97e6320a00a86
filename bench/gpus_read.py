"""A dataset read into several GPUs at once: h5tile.dask.from_file(device=0) with one Dask worker
process per GPU (dask-cuda's LocalCUDACluster where installed, else workers that each see their
own GPU first through CUDA_VISIBLE_DEVICES, as dask-cuda places them), 1, 2, 4 ... GPUs, against
linear growth from one GPU, in one run on one file.

The file: --gib of float32 in one contiguous dataset, blocks of --block-mib rows. Each round
persists the whole array in the workers' GPUs (every block read into its worker's own GPU) and
waits: aggregate GB/s = bytes / time. Rows:

- local, warm: the file in the page cache (read once before).
- local, cold (--cold, as root): the page cache dropped before each round (storage-bound).
- remote (--remote): the file from nginx on loopback (bench/common/nginx_folder.py), h5tile
  against KvikIO's RemoteFile with one process (worker) per GPU, each its share of the bytes.
- limits: the page cache read into host memory by h5tile on every core (one process), and with
  --cold `dd iflag=direct` of the file: what bounds the aggregate as GPUs are added.

Prints each row's median of --rounds and its ratio to linear growth from the fewest GPUs run
(aggregate / (GPUs / fewest x the fewest's rate)).
Needs CuPy, dask.distributed and a CUDA build of h5tile; uses the package in $H5TILE_BUILD_DIR/python.

    python3 bench/gpus_read.py [--gib 4] [--gpus 1,2,4,8] [--rounds 3] [--cold] [--remote] [--dir DIR]
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for its common helpers
from common import drop_caches, median_of, use_package  # noqa: E402
from common.cold import timed_dd  # noqa: E402

use_package()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

import h5tile  # noqa: E402


def one_worker_per_gpu(gpus, where):
    """A cluster of one single-threaded worker process per GPU (worker i sees the i-th GPU of this
    process's CUDA_VISIBLE_DEVICES first), none of them spilling blocks to host memory or disk."""
    import distributed
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        pass
    else:  # the first `gpus` of this process's GPUs
        return LocalCUDACluster(n_workers=gpus, threads_per_worker=1, memory_limit=0, device_memory_limit=0,
                                host="127.0.0.1", dashboard_address=None, local_directory=str(where)), "dask-cuda"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if os.environ.get("CUDA_VISIBLE_DEVICES") else None
    mine = visible[:gpus] if visible else [str(i) for i in range(gpus)]
    rotated = [",".join(mine[(i + k) % gpus] for k in range(gpus)) for i in range(gpus)]
    workers = {i: {"cls": distributed.Nanny,
                   "options": {"nthreads": 1, "memory_limit": 0, "local_directory": str(where),
                               "env": {"CUDA_VISIBLE_DEVICES": rotated[i]}}}
               for i in range(gpus)}
    scheduler = {"cls": distributed.Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler), "CUDA_VISIBLE_DEVICES"


def write(path: Path, gib: float) -> tuple:
    cols = 4096
    rows = int(gib * 2**30) // (cols * 4)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", (rows, cols), np.float32)
        step = 4096
        for r in range(0, rows, step):
            n = min(step, rows - r)
            d[r:r + n] = np.arange(r * cols, (r + n) * cols, dtype=np.float32).reshape(n, cols)
        offset = d.id.get_offset()
    return (rows, cols), offset


def kvikio_share(url, offset, first, count, threads):
    """On a worker: bytes [first, first + count) of the dataset read by KvikIO into this worker's GPU,
    on `threads` threads (h5tile's count per block)."""
    import cupy
    try:  # KvikIO's wheels: the library's own package loads libkvikio.so first
        import libkvikio
        libkvikio.load_library()
    except ImportError:
        pass
    import kvikio
    import kvikio.defaults
    if count <= 0:
        return 0
    out = cupy.empty(count, np.uint8)
    with kvikio.defaults.set({"num_threads": threads}):
        rf = kvikio.RemoteFile.open_http(url)
        try:
            got = rf.read(out, count, offset + first)
        finally:
            rf.close()
    if got != count:
        raise RuntimeError(f"KvikIO read {got} of {count} bytes")
    return int(out[-1])  # a byte of it: the read happened, nothing big comes back


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=4.0, help="size of the dataset (GiB)")
    p.add_argument("--gpus", default="", help="GPU counts to run, comma-separated (default: 1, 2, 4 ... up to all)")
    p.add_argument("--block-mib", type=int, default=64, help="size of a Dask block (MiB)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cold", action="store_true", help="also cold reads (drops the page cache: root)")
    p.add_argument("--remote", action="store_true", help="also from nginx on loopback, against KvikIO")
    p.add_argument("--dir", default=None, help="folder for the file (default: $TMPDIR)")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: the finally below stops nginx
    import cupy  # noqa: F401  (fails early, with CuPy's own words, where it is missing)
    import distributed

    import h5tile.dask as h5d

    available = h5tile.cuda_device_count()
    if available == 0:
        sys.exit("gpus_read: no CUDA device visible (or h5tile built without CUDA)")
    counts = sorted({int(n) for n in a.gpus.split(",")} if a.gpus else
                    {n for n in (1, 2, 4, 8, 16) if n <= available} | {available})
    if max(counts) > available:
        sys.exit(f"gpus_read: --gpus asks for {max(counts)} GPUs, {available} visible")
    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="gpus_read-", dir=a.dir))
    web = None
    try:
        path = work / "data.h5"
        shape, offset = write(path, a.gib)
        nbytes = shape[0] * shape[1] * 4
        rows_per_block = max(1, (a.block_mib << 20) // (shape[1] * 4))
        print(f"{nbytes / 2**30:.2f} GiB float32 {shape}, blocks of {rows_per_block} rows "
              f"({rows_per_block * shape[1] * 4 >> 20} MiB), {available} GPU(s) visible, {cores} cores, "
              f"median of {a.rounds}")
        url = None
        if a.remote:
            from common.nginx_folder import NginxFolder
            try:
                web = NginxFolder(work, work / "nginx", workers=max(2, min(cores, 16))).start()
                url = web.url("data.h5")
            except RuntimeError as e:  # no nginx here: the local rows still run
                print(f"remote: not run ({e})")
        results = {}  # row -> {gpus: seconds}
        limits = {}
        limits["page cache -> host, h5tile from_file, one process"] = median_of(
            a.rounds, lambda: h5tile.from_file(path, "/x", threads=cores), warm_up=True)
        if a.cold:
            drop_caches()
            limits["storage -> host, dd iflag=direct"] = timed_dd(path, direct=True)
        for gpus in counts:
            cluster, placed = one_worker_per_gpu(gpus, work)
            with cluster, distributed.Client(cluster) as client:
                client.wait_for_workers(gpus)
                workers = sorted(client.nthreads())  # every worker (scheduler_info() lists at most 5)
                assert len(workers) == gpus, workers
                # h5tile's (and KvikIO's) threads per block read: the cores shared out, within the
                # cores each worker may run on (dask-cuda binds a worker to its GPU's cores).
                usable = min(client.run(lambda: len(os.sched_getaffinity(0))).values())
                threads = max(1, min(cores // gpus, usable))

                def persisted(name, source, cold=False):
                    """The row `name`: each round a new array (a name of its own: no block of an
                    earlier round is found in the workers' memory) persisted in the GPUs."""
                    made = []

                    def before():  # outside the clock
                        if cold:
                            drop_caches()
                        made.append(h5d.from_file(source, "/x", chunks=(rows_per_block, shape[1]), device=0,
                                                  threads=threads, name=f"gpus-read-{uuid.uuid4().hex}"))

                    def run():
                        if not made:  # the untimed warm-up
                            before()
                        y = made.pop().persist()
                        try:
                            distributed.wait(y)  # returns when every block is done, failed blocks too
                            failed = [f for f in distributed.futures_of(y) if f.status == "error"]
                            if failed:
                                failed[0].result()  # raises the block's error: no failed read is timed
                        finally:
                            client.cancel(y)  # the blocks leave the GPUs
                    try:
                        results.setdefault(name, {})[gpus] = median_of(a.rounds, run, warm_up=not cold,
                                                                       before=before)
                    except Exception as e:  # noqa: BLE001  (reported; the other rows still run)
                        print(f"{name}, {gpus} GPU(s): failed ({type(e).__name__}: {str(e)[:300]})")

                persisted("local, warm: h5tile", path)
                if a.cold:
                    persisted("local, cold: h5tile", path, cold=True)
                if url:
                    persisted("remote (nginx): h5tile", url)
                    share = -(-nbytes // gpus)

                    def kvikio_run():
                        futures = [client.submit(kvikio_share, url, offset, i * share, min(share, nbytes - i * share),
                                                 threads, workers=[w], pure=False)
                                   for i, w in enumerate(workers)]
                        client.gather(futures)
                    try:
                        results.setdefault("remote (nginx): KvikIO RemoteFile, one process per GPU", {})[gpus] = \
                            median_of(a.rounds, kvikio_run, warm_up=True)
                    except Exception as e:  # noqa: BLE001  (a peer missing or failing is reported, not fatal)
                        print(f"KvikIO: not run ({type(e).__name__}: {str(e)[:200]})")
            print(f"{gpus} GPU(s): workers placed by {placed}, {threads} h5tile thread(s) per block")
        print(f"\n{'limit':<60} {'GB/s':>8}")
        for name, seconds in limits.items():
            print(f"{name:<60} {nbytes / seconds / 1e9:8.2f}")
        print(f"\n{'row':<60} {'GPUs':>4} {'GB/s':>8} {'per GPU':>8}  of linear from {counts[0]} GPU(s)")
        for name, by_count in results.items():
            one = by_count.get(counts[0])
            for gpus, seconds in by_count.items():
                rate = nbytes / seconds / 1e9
                linear = rate / (gpus / counts[0] * nbytes / one / 1e9) if one else float("nan")
                print(f"{name:<60} {gpus:>4} {rate:8.2f} {rate / gpus:8.2f} {linear:8.2f}x")
    finally:
        if web is not None:
            web.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
