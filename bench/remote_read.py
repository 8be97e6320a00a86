#!/usr/bin/env python3
"""Remote HDF5 reads, every engine side by side in one run on the same files and servers.

Builds the test files once (in --dir, reused while their parameters match):
  contiguous.h5  /data, float32 (rows of 4096), --size bytes, contiguous
  gzip.h5        the same data in chunks of --chunk bytes, gzip level 4 + shuffle
  zstd.h5        the same chunks, zstd level 3 + shuffle (hdf5plugin)
  small.h5       --small-count datasets /g/d0000.. of 256 float32 each
and serves them from two real servers started on 127.0.0.1 (stopped at the end):
  s3    SeaweedFS (tests/python/servers/seaweedfs.py), signed SigV4 requests, path-style
  http  nginx (bench/nginx_folder.py): Range, ETag, keep-alive
Each case reads one whole dataset; the engines alternate within each of --rounds rounds and the
table shows the median: seconds, GB/s (the dataset's decoded bytes / seconds), the requests the
server counted (SeaweedFS's S3 counters, nginx's access log), and the ratio to h5tile's GB/s.
The "small" case opens small.h5 and reads one dataset through a delaying TCP proxy
(tests/python/servers/latency_proxy.py: --latency-ms per request and per new connection, as a
link between regions), counting the requests and connections each engine needs.

Engines:
  h5py+fsspec[cache]  h5py on an fsspec file object: s3fs for s3, fsspec's HTTP filesystem for
                      http; the default cache type, and the best of --caches (one round each on
                      the contiguous case, before the timed rounds)
  h5coro              NASA SlideRule's reader (S3Driver over boto3; HTTPDriver over requests)
  kvikio[N]           KvikIO RemoteFile reading the contiguous dataset's byte range raw into host
                      memory with N threads (--kvikio-threads; the best is the limit to compare with)
  ros3                h5py's ROS3 driver, where the h5py build has it (PyPI's does not)
  h5tile              h5tile.from_file(url, name); a build without URL support is reported and
                      the run goes on
An engine that cannot run a case (not installed, a codec it lacks) is listed with the reason.
Optional engines: scripts/install_bench_deps.sh (h5coro, kvikio-cu13).

    python3 bench/remote_read.py                       # 1 GiB, 3 rounds, both servers
    python3 bench/remote_read.py --size 64M --rounds 1 --dir /path/to/cache
"""
import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests" / "python")]
from compressible import COLS  # noqa: E402
from nginx_folder import NginxFolder  # noqa: E402
from remote_engines import ENGINES, Unavailable  # noqa: E402
from servers.latency_proxy import LatencyProxy  # noqa: E402
from servers.seaweedfs import SeaweedFS  # noqa: E402

BUCKET = "h5tile-bench"
CASES = {"contiguous": ("contiguous.h5", "/data"), "gzip+shuffle": ("gzip.h5", "/data"),
         "zstd+shuffle": ("zstd.h5", "/data"), "small": ("small.h5", None)}  # small: set from --small-count


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("IB").rstrip("B") if text[-1:].upper() == "B" else text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1:] in units else int(text)


def field_rows(r0: int, r1: int, rows: int) -> np.ndarray:
    """Rows r0..r1 of bench/compressible.py's field (a smooth sine product plus noise, 12
    fractional bits), made block by block so that building a large file stays small in memory."""
    y = (np.arange(r0, r1, dtype=np.float64) * (8 * np.pi / max(rows - 1, 1))).astype(np.float32)[:, None]
    x = np.linspace(0, 8 * np.pi, COLS, dtype=np.float32)[None, :]
    noise = np.random.default_rng(r0).normal(0, 0.01, (r1 - r0, COLS)).astype(np.float32)
    q = np.float32(2.0**-12)
    return (np.round((np.sin(y) * np.cos(x) + noise) / q) * q).astype(np.float32)


def build_files(folder: Path, nbytes: int, chunk_bytes: int, small_count: int) -> dict:
    import hdf5plugin
    params = {"size": nbytes, "chunk": chunk_bytes, "small": small_count, "cols": COLS, "version": 1}
    manifest = folder / "manifest.json"
    if manifest.exists() and json.loads(manifest.read_text()) == params:
        print(f"files: reusing {folder}")
        return params
    folder.mkdir(parents=True, exist_ok=True)
    manifest.unlink(missing_ok=True)
    rows, chunk_rows = max(nbytes // (4 * COLS), 1), max(chunk_bytes // (4 * COLS), 1)
    t0 = time.perf_counter()
    codecs = {"contiguous.h5": None, "gzip.h5": {"compression": "gzip", "compression_opts": 4, "shuffle": True},
              "zstd.h5": {"shuffle": True, **hdf5plugin.Zstd(clevel=3)}}
    files = {name: h5py.File(folder / name, "w") for name in codecs}
    try:
        dsets = {name: f.create_dataset("data", (rows, COLS), "float32",
                                        **({} if codecs[name] is None else {"chunks": (chunk_rows, COLS), **codecs[name]}))
                 for name, f in files.items()}
        step = chunk_rows * max(1, (64 << 20) // (chunk_rows * COLS * 4))
        for r0 in range(0, rows, step):
            block = field_rows(r0, min(rows, r0 + step), rows)
            for d in dsets.values():
                d[r0:r0 + len(block)] = block
    finally:
        for f in files.values():
            f.close()
    with h5py.File(folder / "small.h5", "w") as f:
        g = f.create_group("g")
        for i in range(small_count):
            g.create_dataset(f"d{i:04d}", data=np.arange(256, dtype=np.float32) + i)
    manifest.write_text(json.dumps(params))
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 2**20:.0f} MiB" for p in sorted(folder.glob("*.h5")))
    print(f"files: built in {time.perf_counter() - t0:.0f} s: {sizes}")
    return params


class Servers:
    """SeaweedFS and nginx serving the same files, and how each engine reaches them."""

    def __init__(self, files: Path, work: Path, transports):
        self.files, self.work, self.transports = files, work, transports
        self.s3 = self.web = None

    def __enter__(self):
        if "s3" in self.transports:
            self.s3 = SeaweedFS(self.work / "seaweedfs").start()
            print(f"s3: SeaweedFS on {self.s3.endpoint}, started in {self.s3.start_seconds:.1f} s")
            self.s3.create_bucket(BUCKET)
            t0 = time.perf_counter()
            for path in sorted(self.files.glob("*.h5")):
                self.s3.upload(path, BUCKET, path.name)
            print(f"s3: uploaded in {time.perf_counter() - t0:.0f} s")
        if "http" in self.transports:
            self.web = NginxFolder(self.files, self.work / "nginx").start()
            print(f"http: nginx on 127.0.0.1:{self.web.port}")
        return self

    def __exit__(self, *exc):
        if self.web:
            self.web.stop()
        if self.s3:
            self.s3.stop()

    def target(self, transport: str, name: str, proxy: "LatencyProxy | None" = None) -> dict:
        """Where an engine finds `name`: its URL, and for S3 the endpoint and credentials."""
        if transport == "s3":
            endpoint = f"http://127.0.0.1:{proxy.port}" if proxy else self.s3.endpoint
            return {"transport": "s3", "url": f"s3://{BUCKET}/{name}", "bucket": BUCKET, "key": name,
                    "local": self.files / name,
                    "endpoint": endpoint, "region": self.s3.region, "key_id": self.s3.access_key,
                    "secret": self.s3.secret_key}
        port = proxy.port if proxy else self.web.port
        return {"transport": "http", "url": f"http://127.0.0.1:{port}/{name}", "local": self.files / name}

    def upstream(self, transport: str):
        return ("127.0.0.1", self.s3.ports["s3"]) if transport == "s3" else ("127.0.0.1", self.web.port)

    def requests(self, transport: str) -> int:
        return self.s3.s3_requests(BUCKET) if transport == "s3" else self.web.requests()


@contextlib.contextmanager
def aws_env(target: dict):
    """AWS_* variables for engines that read them (h5coro's boto3, h5tile), restored afterwards."""
    if target["transport"] != "s3":
        yield
        return
    new = {"AWS_ENDPOINT_URL": target["endpoint"], "AWS_REGION": target["region"],
           "AWS_DEFAULT_REGION": target["region"], "AWS_ACCESS_KEY_ID": target["key_id"],
           "AWS_SECRET_ACCESS_KEY": target["secret"]}
    old = {k: os.environ.get(k) for k in new}
    os.environ.update(new)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_once(servers, engine, transport, case, proxy=None, check=None):
    """(seconds, requests, connections or None) of one read; raises Unavailable."""
    name, dataset = CASES[case]
    target = servers.target(transport, name, proxy)
    before = servers.requests(transport) if proxy is None else None
    if proxy:
        proxy.reset_counts()
    with aws_env(target):
        t0 = time.perf_counter()
        out = engine.read(target, dataset)
        seconds = time.perf_counter() - t0
    if check is not None and out is not None:
        if out.shape != check.shape or out.tobytes() != check.tobytes():
            raise Unavailable(f"read wrong bytes ({out.shape} {out.dtype})")
    if proxy:
        return seconds, proxy.requests, proxy.connections
    time.sleep(0.05)  # nginx logs a request once its response is out
    return seconds, servers.requests(transport) - before, None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="1G", help="bytes of the float32 dataset (K/M/G suffixes; default 1G)")
    p.add_argument("--chunk", default="1M", help="bytes per chunk of the compressed files (default 1M)")
    p.add_argument("--small-count", type=int, default=1000, help="datasets in small.h5 (default 1000)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds; the table shows medians (default 3)")
    p.add_argument("--latency-ms", type=float, default=20.0, help="delay per request in the small case (default 20)")
    p.add_argument("--transports", default="s3,http", help="servers to read from: s3,http (default both)")
    p.add_argument("--cases", default=",".join(CASES), help=f"cases to run (default all: {','.join(CASES)})")
    p.add_argument("--caches", default="first,blockcache,readahead,bytes",
                   help="fsspec cache types tried for h5py+fsspec; the best one is timed beside the default")
    p.add_argument("--sweep-size", default="128M",
                   help="bytes of the contiguous dataset read to choose the fsspec cache type (default 128M)")
    p.add_argument("--kvikio-threads", default="1,4,8,16", help="KvikIO thread counts swept (default 1,4,8,16)")
    p.add_argument("--dir", help="folder for the test files, kept and reused (default: a temporary folder, removed)")
    p.add_argument("--json", help="also write the results to this file")
    a = p.parse_args()
    CASES["small"] = ("small.h5", f"/g/d{a.small_count // 2:04d}")
    transports = [t for t in a.transports.split(",") if t]
    cases = [c for c in a.cases.split(",") if c]
    print(f"remote_read: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.node()}, {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f}), "
          f"python {platform.python_version()}, h5py {h5py.__version__}")
    print("command: " + " ".join([Path(sys.argv[0]).name] + sys.argv[1:]))
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="h5tile-remote-")))
        files = Path(a.dir) if a.dir else work / "files"
        build_files(files, parse_size(a.size), parse_size(a.chunk), a.small_count)
        servers = stack.enter_context(Servers(files, work, transports))
        rows = bench(servers, files, transports, cases, a)
    report(rows)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


def bench(servers, files, transports, cases, a):
    engines = ENGINES(caches=[c for c in a.caches.split(",") if c],
                      kvikio_threads=[int(n) for n in a.kvikio_threads.split(",") if n])
    results_rows = []
    for transport in transports:
        rows = max(1, parse_size(a.sweep_size) // (4 * COLS))
        best = engines.pick_cache(lambda eng: run_once(servers, eng, transport, "contiguous")[0], transport, rows)
        print(f"{transport}: fsspec cache types (seconds to read {a.sweep_size} of the contiguous dataset): "
              + ", ".join(f"{c} {s:.2f}" if s else f"{c} failed" for c, s in engines.sweep[transport].items())
              + f"; best: {best}")
        for case in cases:
            name, dataset = CASES[case]
            with h5py.File(files / name, "r") as f:
                check = f[dataset][...]
            proxy = None
            if case == "small":
                up = servers.upstream(transport)
                proxy = LatencyProxy(*up, delay=a.latency_ms / 1000, connect_delay=a.latency_ms / 1000).start()
            try:
                results = {}
                for _ in range(a.rounds):
                    for eng in engines.for_case(transport, case):
                        if eng.name in results and isinstance(results[eng.name], str):
                            continue
                        try:
                            results.setdefault(eng.name, []).append(
                                run_once(servers, eng, transport, case, proxy, check))
                        except Unavailable as e:
                            results[eng.name] = str(e)
                            if eng.name == "h5tile":
                                print(f"h5tile: {e}")
            finally:
                if proxy:
                    proxy.stop()
            for engine, res in results.items():
                row = {"transport": transport, "case": case, "engine": engine, "bytes": int(check.nbytes)}
                if isinstance(res, str):
                    row["unavailable"] = res
                else:
                    row["seconds"] = statistics.median(r[0] for r in res)
                    row["requests"] = int(statistics.median(r[1] for r in res))
                    if res[0][2] is not None:
                        row["connections"] = int(statistics.median(r[2] for r in res))
                results_rows.append(row)
            print_case([r for r in results_rows if r["transport"] == transport and r["case"] == case])
    return results_rows


def print_case(rows):
    ref = next((r for r in rows if r["engine"] == "h5tile" and "seconds" in r), None)
    head = rows[0]
    print(f"\n{head['transport']} / {head['case']} ({head['bytes'] / 2**20:.1f} MiB decoded"
          + (f", {CASES[head['case']][1]} of {CASES[head['case']][0]}" if head["case"] == "small" else "") + ")")
    print(f"  {'engine':<28} {'seconds':>9} {'GB/s':>7} {'requests':>9} {'conns':>6} {'x h5tile':>9}")
    for i, r in enumerate(rows):
        if "seconds" not in r:
            same = [x["engine"] for x in rows[i:] if x.get("unavailable") == r["unavailable"]]
            if i and rows[i - 1].get("unavailable") == r["unavailable"]:
                continue  # said once, for the first engine of the run that shares the reason
            print(f"  {', '.join(same):<28} unavailable: {r['unavailable']}")
            continue
        gbs = f"{r['bytes'] / r['seconds'] / 1e9:.3f}" if r["bytes"] >= 1 << 20 else "-"  # not for 1 KiB
        ratio = f"{ref['seconds'] / r['seconds']:.2f}" if ref else "-"
        print(f"  {r['engine']:<28} {r['seconds']:>9.3f} {gbs:>7} {r['requests']:>9} "
              f"{r.get('connections', ''):>6} {ratio:>9}")


def report(rows):
    print("\nx h5tile: the engine's speed relative to h5tile's (h5tile seconds / engine seconds; '-' where "
          "h5tile did not run)")


if __name__ == "__main__":
    main()
