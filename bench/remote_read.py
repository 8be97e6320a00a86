#!/usr/bin/env python3
"""Remote HDF5 reads, every engine side by side in one run on the same files and servers.

Builds the test files once (in --dir, reused while their parameters match):
  contiguous.h5  /data, float32 (rows of 4096), --size bytes, contiguous
  gzip.h5        the same data in chunks of --chunk bytes, gzip level 4 + shuffle
  zstd.h5        the same chunks, zstd level 3 + shuffle (hdf5plugin)
  small.h5       --small-count datasets /g/d0000.. of --small-elements float32 each
and serves them from real servers started on 127.0.0.1 (stopped at the end):
  http  nginx (bench/common/nginx_folder.py): Range, ETag, keep-alive (the default)
  s3    SeaweedFS (tests/python/servers/seaweedfs.py), signed SigV4 requests, path-style (--s3)
Each case reads one whole dataset and checks its bytes against h5py's local read; the engines
alternate within each of --rounds rounds, each round starting one engine later than the last,
and the table shows the medians: seconds, GB/s (the dataset's decoded bytes / seconds), the
requests the server counted (nginx's access log, SeaweedFS's S3 counters), h5tile's own
last_remote_io() (requests, the round trips on its critical path, bytes), and "h5tile x": how
many times faster h5tile was than that engine. The "small" case opens small.h5 and reads one
dataset through a delaying TCP proxy (tests/python/servers/latency_proxy.py: --latency-ms per
request and per new connection, as a link between regions), counting the requests and
connections each engine needs and how many of them came one after another ("serial"); other cases
go through the proxy too where --latency-cases names them. The targets of issue 27 are printed at the end as met or not.

Engines:
  h5py+fsspec[cache]  h5py on an fsspec file object: s3fs for s3, fsspec's HTTP filesystem for
                      http; the default cache type, and the best of --caches (one round each on
                      a --sweep-size slice of the contiguous case, before the timed rounds)
  h5coro              NASA SlideRule's reader (S3Driver over boto3; HTTPDriver over requests);
                      deflate and shuffle only, so not the zstd case
  kvikio raw [N]      KvikIO RemoteFile reading the contiguous dataset's byte range raw into host
                      memory with N threads (--kvikio-threads; the best is the limit to compare
                      with); KvikIO 26.10 needs libcuda even for host memory
  h5py ros3           h5py's ROS3 driver, where the h5py build has it (PyPI's does not)
  h5tile              h5tile.from_file(url, name) (or read_box: --h5tile-call); on S3 a build that
                      reads no s3:// URL reads presigned URLs of the same objects ("h5tile
                      [presigned]"); one that cannot read a URL at all is reported and the run goes on
  h5tile local, h5py local  the same reads of the local file (context: this machine's decode
                      limit; --no-local leaves them out)
An engine that cannot run a case (not installed, a codec it lacks) is listed with the reason.
Optional engines: scripts/install_bench_deps.sh (nginx, h5coro, kvikio-cu13).

    python3 bench/remote_read.py                       # 1 GiB, 3 rounds, nginx
    python3 bench/remote_read.py --s3                  # and SeaweedFS
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

from common import ROOT, remote_engines
from common.compressible import COLS
from common.nginx_folder import NginxFolder
from common.remote_engines import ENGINES, Unavailable

sys.path.insert(0, str(ROOT / "tests" / "python"))
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
    """Rows r0..r1 of bench/common/compressible.py's field (a smooth sine product plus noise, 12
    fractional bits), made block by block so that building a large file stays small in memory."""
    y = (np.arange(r0, r1, dtype=np.float64) * (8 * np.pi / max(rows - 1, 1))).astype(np.float32)[:, None]
    x = np.linspace(0, 8 * np.pi, COLS, dtype=np.float32)[None, :]
    noise = np.random.default_rng(r0).normal(0, 0.01, (r1 - r0, COLS)).astype(np.float32)
    q = np.float32(2.0**-12)
    return (np.round((np.sin(y) * np.cos(x) + noise) / q) * q).astype(np.float32)


def build_files(folder: Path, nbytes: int, chunk_bytes: int, small_count: int, small_elements: int, cases):
    """The large files of `cases` and small.h5, each set rebuilt only when its parameters changed."""
    folder.mkdir(parents=True, exist_ok=True)
    names = sorted(CASES[c][0] for c in cases if c != "small")
    large = {"size": nbytes, "chunk": chunk_bytes, "cols": COLS, "version": 1, "files": names}
    small = {"small": small_count, "small_elements": small_elements, "version": 1}
    for params, manifest, build in ((large, folder / "manifest.json", build_large),
                                    (small, folder / "manifest-small.json", build_small)):
        if manifest.exists() and json.loads(manifest.read_text()) == params:
            print(f"files: reusing {', '.join(build.__doc__.split())} in {folder}")
            continue
        manifest.unlink(missing_ok=True)
        t0 = time.perf_counter()
        build(folder, params)
        manifest.write_text(json.dumps(params))
        sizes = ", ".join(f"{n} {(folder / n).stat().st_size / 2**20:.1f} MiB" for n in build.__doc__.split()
                          if (folder / n).exists())
        print(f"files: built in {time.perf_counter() - t0:.0f} s: {sizes}")


def build_large(folder: Path, params: dict):
    """contiguous.h5 gzip.h5 zstd.h5"""
    rows, chunk_rows = max(params["size"] // (4 * COLS), 1), max(params["chunk"] // (4 * COLS), 1)
    codecs = {"contiguous.h5": None, "gzip.h5": {"compression": "gzip", "compression_opts": 4, "shuffle": True},
              "zstd.h5": "zstd"}
    if "zstd.h5" in params["files"]:
        import hdf5plugin
        codecs["zstd.h5"] = {"shuffle": True, **hdf5plugin.Zstd(clevel=3)}
    files = {name: h5py.File(folder / name, "w") for name in codecs if name in params["files"]}
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


def build_small(folder: Path, params: dict):
    """small.h5"""
    with h5py.File(folder / "small.h5", "w") as f:
        g = f.create_group("g")
        for i in range(params["small"]):
            g.create_dataset(f"d{i:04d}", data=np.arange(params["small_elements"], dtype=np.float32) + i)


class Servers:
    """SeaweedFS and nginx serving the same files, and how each engine reaches them."""

    def __init__(self, files: Path, work: Path, transports, nginx_workers: int = 2):
        self.files, self.work, self.transports = files, work, transports
        self.nginx_workers = nginx_workers
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
            self.web = NginxFolder(self.files, self.work / "nginx", workers=self.nginx_workers).start()
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


def same_bytes(out, check) -> bool:
    """Byte equality of a read with h5py's local read (on the device for device arrays)."""
    if out.shape != check.shape or out.dtype != check.dtype:
        return False
    if remote_engines.DEVICE is None:
        return out.tobytes() == check.tobytes()
    import cupy
    with cupy.cuda.Device(remote_engines.DEVICE):
        ref = cupy.asarray(check.view(np.uint8).reshape(-1))
        return bool(cupy.array_equal(cupy.asarray(out).view(cupy.uint8).reshape(-1), ref))


def run_once(servers, engine, transport, case, proxy=None, check=None):
    """One read: {seconds, requests (the server's or the proxy's count), connections (proxy only),
    io (h5tile's last_remote_io)}; raises Unavailable."""
    name, dataset = CASES[case]
    target = servers.target(transport, name, proxy)
    before = servers.requests(transport) if proxy is None else None
    if proxy:
        proxy.reset_counts()
    with aws_env(target):
        cpu0, t0 = time.process_time(), time.perf_counter()
        out = remote_engines.to_destination(engine.read(target, dataset))
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if check is not None and out is not None:
        if not same_bytes(out, check):
            raise Unavailable(f"read wrong bytes ({out.shape} {out.dtype})")
    del out
    result = {"seconds": seconds, "cpu": cpu, "io": getattr(engine, "io", None)}
    if proxy:
        result.update(requests=proxy.requests, connections=proxy.connections, serial=proxy.serial_requests)
    else:
        time.sleep(0.05)  # nginx logs a request once its response is out
        result.update(requests=servers.requests(transport) - before, connections=None)
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="1G", help="bytes of the float32 dataset (K/M/G suffixes; default 1G)")
    p.add_argument("--chunk", default="1M", help="bytes per chunk of the compressed files (default 1M)")
    p.add_argument("--small-count", type=int, default=1000, help="datasets in small.h5 (default 1000)")
    p.add_argument("--small-elements", type=int, default=256,
                   help="float32 elements of each dataset of small.h5 (default 256: a file of about 1 MiB)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds; the table shows medians (default 3)")
    p.add_argument("--latency-ms", type=float, default=20.0, help="delay per request in the small case (default 20)")
    p.add_argument("--latency-cases", default="small",
                   help="cases read through the latency proxy (default small; e.g. small,gzip+shuffle: a compressed "
                        "file's chunk index walked across a link between regions)")
    p.add_argument("--transports", default="http",
                   help="servers to read from: http (nginx), s3 (SeaweedFS) or both, comma-separated (default http)")
    p.add_argument("--s3", action="store_true", help="also read from S3 (SeaweedFS): the same as adding s3 to --transports")
    p.add_argument("--cases", default=",".join(CASES), help=f"cases to run (default all: {','.join(CASES)})")
    p.add_argument("--caches", default="first,blockcache,readahead,bytes",
                   help="fsspec cache types tried for h5py+fsspec; the best one is timed beside the default")
    p.add_argument("--sweep-size", default="128M",
                   help="bytes of the contiguous dataset read to choose the fsspec cache type (default 128M)")
    p.add_argument("--kvikio-threads", default="1,4,8,16,32", help="KvikIO thread counts swept (default 1,4,8,16,32)")
    p.add_argument("--h5tile-call", choices=("from_file", "read_box"), default="from_file",
                   help="how h5tile reads the whole dataset (default from_file)")
    p.add_argument("--no-local", action="store_true",
                   help="leave out the local reads (h5tile and h5py on the served file: this machine's decode limit)")
    p.add_argument("--device", type=int, metavar="N",
                   help="read into the memory of CUDA device N (CuPy): h5tile and KvikIO directly, the host-only "
                        "engines (h5py, h5coro) followed by their copy to the device, inside the timed read")
    p.add_argument("--nginx-workers", type=int, default=2,
                   help="nginx worker processes (default 2; a many-core machine needs more to serve GB/s)")
    p.add_argument("--dir", help="folder for the test files, kept and reused (default: a temporary folder, removed)")
    p.add_argument("--json", help="also write the results to this file")
    a = p.parse_args()
    CASES["small"] = ("small.h5", f"/g/d{a.small_count // 2:04d}")
    transports = [t for t in a.transports.split(",") if t] + (["s3"] if a.s3 and "s3" not in a.transports else [])
    cases = [c for c in a.cases.split(",") if c]
    remote_engines.DEVICE = a.device
    print(f"remote_read: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.node()}, {os.cpu_count()} CPUs, load average {load()}, "
          f"python {platform.python_version()}, h5py {h5py.__version__}"
          + ("" if a.device is None else f", into the memory of CUDA device {a.device}"))
    print("command: " + " ".join([Path(sys.argv[0]).name] + sys.argv[1:]))
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="h5tile-remote-")))
        files = Path(a.dir) if a.dir else work / "files"
        build_files(files, parse_size(a.size), parse_size(a.chunk), a.small_count, a.small_elements, cases)
        servers = stack.enter_context(Servers(files, work, transports, a.nginx_workers))
        rows = bench(servers, files, transports, cases, a)
    report(rows, a)
    print(f"\nfinished in {time.perf_counter() - t0:.0f} s, load average {load()}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


def bench(servers, files, transports, cases, a):
    engines = ENGINES(caches=[c for c in a.caches.split(",") if c],
                      kvikio_threads=[int(n) for n in a.kvikio_threads.split(",") if n],
                      h5tile_call=a.h5tile_call, local=not a.no_local)
    results_rows = []
    for transport in transports:
        rows = max(1, parse_size(a.sweep_size) // (4 * COLS))
        best = engines.pick_cache(lambda eng: run_once(servers, eng, transport, "contiguous")["seconds"],
                                  transport, rows)
        print(f"{transport}: fsspec cache types (seconds to read {a.sweep_size} of the contiguous dataset): "
              + ", ".join(f"{c} {s:.2f}" if s else f"{c} failed" for c, s in engines.sweep[transport].items())
              + f"; best: {best}")
        for case in cases:
            name, dataset = CASES[case]
            with h5py.File(files / name, "r") as f:
                check = f[dataset][...]
            proxy = None
            if case in a.latency_cases.split(","):
                up = servers.upstream(transport)
                proxy = LatencyProxy(*up, delay=a.latency_ms / 1000, connect_delay=a.latency_ms / 1000).start()
            order = engines.for_case(transport, case)
            try:
                results = {}
                for round_ in range(a.rounds):
                    k = round_ % len(order)  # each round starts one engine later: none always goes first
                    for eng in order[k:] + order[:k]:
                        if isinstance(results.get(eng), str):
                            continue
                        try:
                            results.setdefault(eng, []).append(
                                run_once(servers, eng, transport, case, proxy, check))
                        except Unavailable as e:
                            results[eng] = str(e)
                            if eng.name.startswith("h5tile"):
                                print(f"h5tile: {e}")
            finally:
                if proxy:
                    proxy.stop()
            for eng in order:
                res = results.get(eng)  # by engine: h5tile's name may change (presigned URLs)
                if res is None:
                    continue
                row = {"transport": transport, "case": case, "engine": eng.name, "bytes": int(check.nbytes),
                       "local": getattr(eng, "local", False)}
                if isinstance(res, str):
                    row["unavailable"] = res
                else:
                    row["rounds"] = [r["seconds"] for r in res]
                    row["seconds"] = statistics.median(row["rounds"])
                    row["cpu"] = statistics.median(r["cpu"] for r in res)
                    row["requests"] = int(statistics.median(r["requests"] for r in res))
                    if res[0]["connections"] is not None:
                        row["connections"] = int(statistics.median(r["connections"] for r in res))
                    if res[0]["io"]:
                        row["io"] = {k: int(statistics.median(r["io"][k] for r in res)) for k in res[0]["io"]}
                    if proxy:
                        row["latency_ms"] = a.latency_ms
                        row["serial"] = int(statistics.median(r["serial"] for r in res))
                results_rows.append(row)
            print_case([r for r in results_rows if r["transport"] == transport and r["case"] == case])
    return results_rows


def print_case(rows):
    ref = next((r for r in rows if r["engine"].startswith("h5tile") and not r["local"] and "seconds" in r), None)
    head = rows[0]
    small = "latency_ms" in head  # read through the latency proxy
    print(f"\n{head['transport']} / {head['case']} ({head['bytes'] / 2**20:.1f} MiB decoded"
          + (f", {CASES[head['case']][1]} of {CASES[head['case']][0]}, {head.get('latency_ms', 0):g} ms a request"
             if small else "") + ")")
    last = "~RTTs" if small else ""
    print(f"  {'engine':<28} {'seconds':>8} {'GB/s':>7} {'cpu s':>7} {'requests':>8} {'serial':>6} {'conns':>5} "
          f"{'h5tile: reqs crit MiB':>22} {'h5tile x':>8} {last}")
    for i, r in enumerate(rows):
        if "seconds" not in r:
            same = [x["engine"] for x in rows[i:] if x.get("unavailable") == r["unavailable"]]
            if i and rows[i - 1].get("unavailable") == r["unavailable"]:
                continue  # said once, for the first engine of the run that shares the reason
            print(f"  {', '.join(same):<28} unavailable: {r['unavailable']}")
            continue
        gbs = f"{r['bytes'] / r['seconds'] / 1e9:.3f}" if r["bytes"] >= 1 << 20 else "-"  # not for 1 KiB
        ratio = f"{r['seconds'] / ref['seconds']:.2f}" if ref and r is not ref else "-"
        io = r.get("io")
        own = f"{io['requests']} {io['critical_path']} {io['bytes'] / 2**20:.1f}" if io else ""
        requests = "-" if r["local"] else r["requests"]
        rtts = f"{r['seconds'] * 1000 / r['latency_ms']:.1f}" if small else ""
        serial = "-" if r["local"] else r.get("serial", "")
        print(f"  {r['engine']:<28} {r['seconds']:>8.3f} {gbs:>7} {r['cpu']:>7.2f} {requests:>8} {serial:>6} "
              f"{r.get('connections', ''):>5} "
              f"{own:>22} {ratio:>8} {rtts}")


# (case, peer engine prefix, the least h5tile x peer)
TARGETS = [("contiguous", "h5py+fsspec", 5.0), ("contiguous", "kvikio raw", 0.9),
           ("gzip+shuffle", "h5py+fsspec", 5.0), ("gzip+shuffle", "h5coro", 2.0),
           ("zstd+shuffle", "h5py+fsspec", 5.0), ("zstd+shuffle", "h5coro", 2.0),
           ("small", "h5py+fsspec", 3.0)]


def report(rows, a):
    print("\nrequests: counted by the server (nginx's access log, SeaweedFS's S3 counters) or, in the small case, "
          "by the latency proxy; serial (cases read through the latency proxy): the longest chain of those requests each "
          "made after the answer to the one before had ended, the round trips on the critical path as the proxy "
          "saw them; conns: connections the proxy accepted; h5tile: reqs crit MiB: h5tile's own "
          "last_remote_io() (requests, the most requests made one after another: the round trips on the "
          "critical path, MiB of response bodies); cpu s: CPU seconds of this process (all its threads; "
          "not the server's), steadier than seconds on a loaded machine; h5tile x: how many times faster h5tile is than the engine "
          "(the engine's seconds / h5tile's); ~RTTs: seconds / the added latency (connections included)")
    print("\ntargets (h5tile x the peer's best row: its best cache type or thread count; the default cache shown too):")
    for transport in dict.fromkeys(r["transport"] for r in rows):
        for case, peer, least in TARGETS:
            here = [r for r in rows if r["transport"] == transport and r["case"] == case]
            ours = next((r for r in here if r["engine"].startswith("h5tile") and not r["local"]), None)
            if not here:
                continue
            label = f"  {transport} {case}: >= {least:g}x {peer}"
            if ours is None or "seconds" not in ours:
                print(f"{label}: h5tile did not run ({ours.get('unavailable') if ours else 'no row'})")
                continue
            peers = [r for r in here if r["engine"].startswith(peer) and "seconds" in r]
            if not peers:
                why = next((r["unavailable"] for r in here if r["engine"].startswith(peer)), "not run")
                print(f"{label}: not measured ({why})")
                continue
            best = min(peers, key=lambda r: r["seconds"])
            x = best["seconds"] / ours["seconds"]
            extra = ""
            default = next((r for r in peers if r["engine"] == f"{peer}[default]"), None)
            if default is not None and default is not best:
                extra = f"; {default['seconds'] / ours['seconds']:.2f}x {default['engine']}"
            print(f"{label}: {x:.2f}x {best['engine']}{extra}: {'met' if x >= least else 'NOT met'}")
        small = next((r for r in rows if r["transport"] == transport and r["case"] == "small"
                      and r["engine"].startswith("h5tile") and "io" in r), None)
        if small:
            crit = small["io"]["critical_path"]
            print(f"  {transport} small: <= 4 round trips on the critical path: {crit} request(s) one after another "
                  f"(h5tile's count) + {small.get('connections', '?')} connection(s) opened: "
                  f"{'met' if crit <= 4 else 'NOT met'}")


if __name__ == "__main__":
    main()
