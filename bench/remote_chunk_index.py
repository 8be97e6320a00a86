#!/usr/bin/env python3
"""Round trips of a remote read whose chunk index is a version-1 B-tree (h5py's default).

Writes with h5py a gzip+shuffle float32 dataset of --rows x --rows elements in chunks of
--chunk x --chunk (1,024 chunks by default; the index's nodes lie between the chunks, as h5py
writes them), serves it with nginx (bench/common/nginx_folder.py) behind the delaying TCP proxy
(tests/python/servers/latency_proxy.py, --latency-ms per request), and times h5tile reading it
at each --block-sizes (h5tile's remote_block_size): the whole dataset (from_file) and one small
box (read_box), --rounds times each. Prints the median seconds, the requests the proxy counted,
how many of them came one after another ("serial": the longest chain of requests each made after
the answer to the one before had ended) and h5tile's own last_remote_io(). Every read is checked
against h5py's local read.

    python3 bench/remote_chunk_index.py
    python3 bench/remote_chunk_index.py --rows 1024 --chunk 8 --block-sizes 256K   # 16,384 chunks
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from common import ROOT, use_package
from common.nginx_folder import NginxFolder

sys.path.insert(0, str(ROOT / "tests" / "python"))
from servers.latency_proxy import LatencyProxy  # noqa: E402

use_package()
import h5tile  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1024, help="rows and columns of the dataset (default 1024)")
    p.add_argument("--chunk", type=int, default=32, help="rows and columns of a chunk (default 32: 1,024 chunks)")
    p.add_argument("--block-sizes", default="16K,4M", help="h5tile remote_block_size values (default 16K,4M)")
    p.add_argument("--latency-ms", type=float, default=20.0, help="delay per request (default 20)")
    p.add_argument("--rounds", type=int, default=5, help="reads of each kind; the median is shown (default 5)")
    a = p.parse_args()
    print(f"remote_chunk_index: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.node()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print("command: " + " ".join([Path(sys.argv[0]).name] + sys.argv[1:]))
    with tempfile.TemporaryDirectory(prefix="h5tile-chunk-index-") as tmp:
        work = Path(tmp)
        (work / "www").mkdir()
        path = work / "www" / "index.h5"
        data = np.frombuffer(np.random.default_rng(7).bytes(4 * a.rows * a.rows), dtype="f4").reshape(a.rows, a.rows)
        with h5py.File(path, "w") as f:
            d = f.create_dataset("data", data=data, chunks=(a.chunk, a.chunk), compression="gzip", shuffle=True)
            chunks = d.id.get_num_chunks()
        box = (slice(a.rows // 2, a.rows // 2 + a.chunk), slice(a.rows - 10, a.rows))
        print(f"file: {chunks} chunks, {path.stat().st_size / 2**20:.1f} MiB; {a.latency_ms:g} ms a request")
        print(f"  {'block':>6} {'read':<10} {'seconds':>8} {'requests':>8} {'serial':>6}  h5tile: reqs crit MiB")
        with NginxFolder(work / "www", work / "nginx") as web, \
                LatencyProxy("127.0.0.1", web.port, delay=a.latency_ms / 1000) as proxy:
            url = f"http://127.0.0.1:{proxy.port}/index.h5"
            reads = {"from_file": (lambda: h5tile.from_file(url, "/data"), data),
                     "read_box": (lambda: h5tile.read_box(url, "/data", (box[0].start, box[1].start),
                                                          (a.chunk, 10)), data[box])}
            for block in a.block_sizes.split(","):
                h5tile.settings.set_remote_block_size(block)
                for name, (read, expected) in reads.items():
                    seconds = []
                    for _ in range(a.rounds):
                        proxy.reset_counts()
                        t0 = time.perf_counter()
                        got = read()
                        seconds.append(time.perf_counter() - t0)
                        if got.tobytes() != expected.tobytes():
                            sys.exit(f"{name} read wrong bytes")
                    io = h5tile.last_remote_io()
                    print(f"  {block:>6} {name:<10} {statistics.median(seconds):>8.3f} {proxy.requests:>8} "
                          f"{proxy.serial_requests:>6}  {io['requests']} {io['critical_path']} "
                          f"{io['bytes'] / 2**20:.1f}")


if __name__ == "__main__":
    main()
