#!/usr/bin/env python3
"""Compressed reads of one float32 array (a smooth field plus noise, bench/common/compressible.py) in
chunks of 1 MiB, for gzip 4 + shuffle, zstd 3 + shuffle, lz4 + shuffle, blosc (lz4, level 5,
its own shuffle) and bitshuffle + lz4 (what X-ray detectors write), each engine opening the data
and reading all of it into new memory:
- h5py (+ hdf5plugin), one chunk at a time through HDF5's filter pipeline;
- h5tile decoding the chunks on its own workers (the default), and h5tile through HDF5
  (H5TILE_RAW_IO=0, as before h5tile decoded them; warm only), each in a fresh process (the
  setting is read once), all on the HDF5 file h5py wrote;
- TensorStore (PyPI `tensorstore`, installed by hand: `pip install tensorstore`; skipped where it
  is missing) reading the same array stored as Zarr (v2 driver) with the same chunk shape and the
  same codec as Zarr spells it, with TensorStore's default context (data_copy_concurrency and
  file_io_concurrency "shared", no chunk cache): what a user would pick instead for parallel
  decoding. Zarr v2 has no shuffle filter, so the shuffled codecs are compared with Blosc, whose
  byte shuffle is HDF5's shuffle filter, around the same inner codec (one Blosc buffer per chunk,
  split by Blosc into blocks); the plain codec without shuffle is also read where Zarr has it.
  Blosc 1.x maps its level to the inner codec's: zstd level 2 * clevel - 1 (clevel 2 is zstd 3),
  lz4 acceleration 10 - clevel (clevel 9 is LZ4_compress_default's 1), zlib clevel as it is.
  The blosc-lz4-5 codec is the same on both sides.
Warm: one read, then the best of REPEATS. Cold (as root only): the page cache dropped (sync; echo 3
> /proc/sys/vm/drop_caches) after one untimed read in the reading process, then one timed read;
the median of --cold-rounds such reads. Prints each engine's time against h5py's and h5tile's
speed over TensorStore's (TensorStore's time / h5tile's; above 1: h5tile is faster). Uses the
package in $H5TILE_BUILD_DIR/python (default build/python).

    [sudo] python3 bench/compressed_read.py [MiB (default 512)] [codec names, comma-separated
        (default: all)] [--cold-rounds N (default 1; 0: warm only)]

--device (issue 19: on one GPU, does a cold compressed file reach device memory faster than the
cold uncompressed file of the same array?): from_file(device=0) of the file h5tile wrote with each
codec (gzip, zstd, lz4, each + shuffle: the ones nvCOMP decodes), with H5TILE_GPU_DECODE=on (only
the compressed bytes cross PCIe), off (the CPU decodes, then stages) and auto (the faster of the two
as timed on the first read's first chunks; its measured rates printed), and of the same array
stored contiguous and uncompressed. Cold: the page cache dropped (as root) before each read, each
read in its own process that has already set up CUDA and nvCOMP on a tiny file (so the time is the
read's); warm: the best of REPEATS reads in one process, or with --warm-rounds N the median of N
such processes per decoder, the decoders' order rotated each round (each process's rate printed).
Needs CuPy, and nvCOMP (the
nvidia-libnvcomp-cu13 wheel, or H5TILE_NVCOMP_LIBRARY).

    sudo python3 bench/compressed_read.py --device [MiB (default 8192)] [codec names] [--rounds N]
        [--warm-only] [--warm-rounds N]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import h5py

from common import PACKAGE, drop_caches, use_package
from common.compressible import CHUNK, CODECS, READ_ONLY_CODECS, field

PATH = os.path.join(tempfile.gettempdir(), "h5tile-compressed-read.h5")
REPEATS = 3
ZARR = os.path.join(tempfile.gettempdir(), "h5tile-compressed-read.zarr")
COLD_ROUNDS = 1

# Each engine's read in a process of its own: {setup} defines read() (open and read everything).
# Cold: one untimed read, "ready", the parent drops the page cache, then one timed read.
TIMED_READ = """
import sys, time
sys.path.insert(0, {package!r})
sys.path.insert(0, {bench!r})
from common import best_of
{setup}
if {cold}:
    read()
    print("ready", flush=True)
    sys.stdin.readline()
    t0 = time.perf_counter()
    read()
    print(time.perf_counter() - t0)
else:
    print(best_of({repeats}, read))
"""
SETUP = {
    "h5py": "import h5py, hdf5plugin\ndef read():\n    with h5py.File({path!r}) as f:\n        return f['x'][...]",
    "h5tile": "import h5tile\nread = lambda: h5tile.from_file({path!r}, '/x')",
    "tensorstore": "import tensorstore as ts\nread = lambda: ts.open({spec!r}).result().read().result()",
}

# The Zarr codecs TensorStore reads in place of each HDF5 codec: (label, Zarr v2 compressor).
ZARR_CODECS = {
    "gzip 4 + shuffle": [("blosc zlib 4 + shuffle", {"id": "blosc", "cname": "zlib", "clevel": 4, "shuffle": 1}),
                         ("gzip 4, no shuffle", {"id": "gzip", "level": 4})],
    "zstd 3 + shuffle": [("blosc zstd 2 (= zstd 3) + shuffle",
                          {"id": "blosc", "cname": "zstd", "clevel": 2, "shuffle": 1}),
                         ("zstd 3, no shuffle", {"id": "zstd", "level": 3})],
    "lz4 + shuffle": [("blosc lz4 9 (accel. 1) + shuffle", {"id": "blosc", "cname": "lz4", "clevel": 9, "shuffle": 1})],
    "blosc lz4 5 + shuffle": [("blosc lz4 5 + shuffle", {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})],
}


def zarr_spec(shape, compressor):
    return {"driver": "zarr", "kvstore": {"driver": "file", "path": ZARR},
            "metadata": {"shape": list(shape), "chunks": list(CHUNK), "dtype": "<f4", "order": "C",
                         "compressor": compressor, "fill_value": None}}


def run_read(code, env, cold, what):
    """The output of `code`, a read in a process of its own; cold: the child says "ready" once set
    up, the page cache is dropped, and "go" starts its read."""
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    if cold:
        if child.stdout.readline().strip() != "ready":
            child.kill()
            child.wait()
            raise RuntimeError(f"{what} failed (its error is above)")
        drop_caches()
        child.stdin.write("go\n")
        child.stdin.flush()
    out, _ = child.communicate(timeout=3600)
    if child.returncode != 0:
        raise RuntimeError(f"{what} failed (its error is above)")
    return out


def timed_read(engine, cold, env=None, **where):
    """Seconds of `engine`'s read in a process of its own: cold (one read after the page cache is
    dropped) or warm (the best of REPEATS after one untimed read)."""
    code = TIMED_READ.format(package=PACKAGE, bench=os.path.dirname(os.path.abspath(__file__)),
                             setup=SETUP[engine].format(**where), cold=cold, repeats=REPEATS)
    return float(run_read(code, env, cold, f"{engine} read").split()[-1])


DEVICE_READ = """
import sys, time
sys.path.insert(0, {package!r})
sys.path.insert(0, {bench!r})
import cupy, h5tile
from common import best_of
def read(path):
    a = h5tile.from_file(path, "/x", device=0)
    cupy.cuda.runtime.deviceSynchronize()
    return a
read({tiny!r})  # CUDA, nvCOMP and the buffers set up before the timed read
if {cold}:
    print("ready", flush=True)
    sys.stdin.readline()
    t0 = time.perf_counter()
    read({path!r})
    t = time.perf_counter() - t0
else:
    t = best_of({repeats}, lambda: read({path!r}))
r = h5tile.last_device_io()
import json
print("phases", json.dumps(r.get("decode_phases", {{}}), separators=(",", ":")))
print("choice", json.dumps(r.get("decoder_choice", {{}}), separators=(",", ":")))
print(t, r["decoder"] or "-", r["path"], (r["decoder_reason"] or "-").replace(" ", "_"), flush=True)
"""


def device_read(path, tiny, cold, gpu_decode):
    """Seconds of one from_file(device=0) of `path` (cold: after the page cache is dropped) in a new
    process, and how the report says the bytes went."""
    code = DEVICE_READ.format(package=PACKAGE, bench=os.path.dirname(os.path.abspath(__file__)), tiny=str(tiny),
                              path=str(path), cold=cold, repeats=REPEATS)
    env = dict(os.environ, H5TILE_GPU_DECODE=gpu_decode)
    out = run_read(code, env, cold, f"device read of {path}")
    t, decoder, route, reason = out.split()[-4:]
    phases = [json.loads(line.split(None, 1)[1]) for line in out.splitlines() if line.startswith("phases ")]
    choice = [json.loads(line.split(None, 1)[1]) for line in out.splitlines() if line.startswith("choice ")]
    return float(t), decoder, route, reason.replace("_", " "), phases[-1] if phases else {}, \
        choice[-1] if choice else {}


def phase_line(phases, nbytes):
    """Where a GPU decode's time went (last_device_io()["decode_phases"]): seconds summed over the
    batches (they overlap), and the wall time of the decode."""
    if not phases or not phases.get("batches"):
        return ""
    parts = " ".join(f"{k} {phases[k] * 1e3:.1f}" for k in ("read", "h2d", "decode", "check", "unshuffle",
                                                           "scatter", "wait", "wall"))
    rate = nbytes / phases["decode"] / 1e9 if phases["decode"] else 0
    return (f"{'':36}phases ms (summed over {phases['batches']} batches of {phases['chunks']} chunks): {parts}; "
            f"decode alone {rate:.1f} GB/s")


def main_device(args):
    rounds = args.rounds
    mib = args.mib or 8192
    names = args.codecs.split(",") if args.codecs else [n for n in CODECS if not n.startswith("blosc")]
    use_package()
    import h5tile
    cold = os.geteuid() == 0 and not args.warm_only
    where = os.path.join(tempfile.gettempdir(), "h5tile-compressed-device")
    os.makedirs(where, exist_ok=True)
    a = field(mib)
    small = field(4)
    print(f"{a.nbytes / 2**30:.1f} GiB float32 {a.shape}, chunks {CHUNK} = 1 MiB, {os.cpu_count()} CPUs, "
          f"from_file(device=0), {'cold: page cache dropped before each read, best of ' + str(rounds) if cold else 'not root: warm only'}")
    files = {"uncompressed (contiguous)": ({"layout": "contiguous"}, None)}
    for name in names:
        files[name] = ({"layout": "chunked", "chunks": CHUNK, **CODECS[name][0]}, name)
    print(f"{'file (ratio)':36}{'decode':18}{'cold':>9}{'GB/s':>7}{'warm':>9}{'GB/s':>7}  how (last_device_io)")
    for label, (opts, codec) in files.items():
        path, tiny = f"{where}/data.h5", f"{where}/tiny.h5"
        h5tile.to_file(a, path, "/x", **opts).wait()
        h5tile.to_file(small, tiny, "/x", **opts).wait()
        ratio = a.nbytes / os.path.getsize(path)
        decoders = ("on", "off", "auto") if codec else ("auto",)
        # Warm: --warm-rounds processes per decoder, the decoders' order rotated each round, so that
        # a slow moment of the machine does not land on one decoder only; the median process counts.
        warm, failed = {d: [] for d in decoders}, {}
        for r in range(args.warm_rounds):
            for gpu_decode in decoders[r % len(decoders):] + decoders[:r % len(decoders)]:
                if gpu_decode in failed:
                    continue
                try:
                    warm[gpu_decode].append(device_read(path, tiny, False, gpu_decode))
                except RuntimeError as e:
                    failed[gpu_decode] = e
        for gpu_decode in decoders:
            kind = {"on": "GPU (nvCOMP)", "off": "CPU", "auto": "auto"}[gpu_decode] if codec else "-"
            row = f"{label + f' ({ratio:.2f}x)':36}{kind:18}"
            try:
                if gpu_decode in failed:
                    raise failed[gpu_decode]
                c = min((device_read(path, tiny, True, gpu_decode) for _ in range(rounds)), key=lambda r: r[0]) \
                    if cold else None
            except RuntimeError as e:
                print(row + f"  {e}")
                continue
            times = sorted(warm[gpu_decode], key=lambda r: r[0])
            w = times[(len(times) - 1) // 2]  # the median process (the lower one of an even count)
            cold_text = f"{c[0]:8.3f}s{a.nbytes / c[0] / 1e9:7.2f}" if c else f"{'-':>9}{'-':>7}"
            how = f"{w[2]}, decoder {w[1]}" + (f" ({w[3]})" if w[3] != "-" else "")
            print(row + cold_text + f"{w[0]:8.3f}s{a.nbytes / w[0] / 1e9:7.2f}  {how}", flush=True)
            if len(times) > 1:
                print(f"{'':36}warm GB/s of each process: "
                      + ", ".join(f"{a.nbytes / t[0] / 1e9:.2f}" for t in warm[gpu_decode]), flush=True)
            if codec and gpu_decode == "auto" and w[5].get("how"):
                ch = w[5]
                print(f"{'':36}auto's choice ({ch['how']}, {ch['sample_chunks']} chunks): GPU "
                      f"{ch['gpu_rate'] / 1e9:.2f} GB/s, CPU {ch['cpu_rate'] / 1e9:.2f} GB/s"
                      + (f"; GPU failed: {ch['gpu_failure']}" if ch["gpu_failure"] else ""), flush=True)
            if phase_line(w[4], a.nbytes):
                print(phase_line(w[4], a.nbytes), flush=True)
    os.unlink(f"{where}/data.h5")
    os.unlink(f"{where}/tiny.h5")


def h5tile_decoder(path, env):
    """Who decodes the chunks of `path` as h5tile reads it ("h5tile", or "HDF5: <why>"), asked in
    a child process (as the reads are made) that has HDF5_PLUGIN_PATH."""
    code = (f"import sys; sys.path.insert(0, {PACKAGE!r}); import h5tile; d = h5tile.describe({path!r}, 'x'); "
            "print(d['decoder'] if d['decoder'] == 'h5tile' else f\"{d['decoder']}: {d['decoder_reason']}\")")
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mib", nargs="?", type=int, default=0, help="size of the array (default 512; --device 8192)")
    parser.add_argument("codecs", nargs="?", default="", help="codec names, comma-separated (default: all)")
    parser.add_argument("--cold-rounds", type=int, default=COLD_ROUNDS, help="cold reads per engine (0: warm only)")
    parser.add_argument("--device", action="store_true", help="reads into device memory (issue 19), see above")
    parser.add_argument("--rounds", type=int, default=3, help="with --device: rounds of cold reads")
    parser.add_argument("--warm-only", action="store_true", help="with --device: no cold reads")
    parser.add_argument("--warm-rounds", type=int, default=1,
                        help="with --device: warm processes per decoder, decoders rotated; the median counts")
    args = parser.parse_args()
    if args.device:
        return main_device(args)
    import hdf5plugin  # h5py's side only (--device needs none: h5tile writes those files)
    try:
        import tensorstore as ts
        from importlib.metadata import version
        ts_version = version("tensorstore")
    except ImportError:
        ts, ts_version = None, "(not installed)"
    cold_rounds = args.cold_rounds if os.geteuid() == 0 else 0
    mib = args.mib or 512
    codecs = {**CODECS, **READ_ONLY_CODECS}  # h5py writes the files here
    names = args.codecs.split(",") if args.codecs else list(codecs)
    a = field(mib)
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, chunks {CHUNK} = 1 MiB, {os.cpu_count()} CPUs, "
          f"hdf5plugin {hdf5plugin.version}, "
          f"TensorStore {ts_version}, "
          f"warm: best of {REPEATS}, " + (f"cold: median of {cold_rounds}" if cold_rounds else
                                             "cold: not run (not root, or --cold-rounds 0)"))
    print(f"{'codec':24}{'engine (file ratio)':56}{'warm':>9}{'GB/s':>7}{'vs h5py':>8}{'cold':>9}{'GB/s':>7}{'vs h5py':>8}")
    plugin_env = dict(os.environ, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH)

    def row(name, label, warm, cold, base):
        text = f"{name:24}{label:56}{warm:8.3f}s{a.nbytes / warm / 1e9:7.2f}{base[0] / warm:7.2f}x"
        if cold is not None:
            text += f"{cold:8.3f}s{a.nbytes / cold / 1e9:7.2f}{base[1] / cold:7.2f}x"
        print(text, flush=True)

    def measure(engine, env=None, **where):
        warm = timed_read(engine, False, env, **where)
        cold = (statistics.median([timed_read(engine, True, env, **where) for _ in range(cold_rounds)])
                if cold_rounds else None)
        return warm, cold

    for name in names:
        with h5py.File(PATH, "w") as f:
            f.create_dataset("x", data=a, chunks=CHUNK, **codecs[name][1](hdf5plugin))
        ratio = f"({a.nbytes / os.path.getsize(PATH):.2f}x)"
        base = measure("h5py", plugin_env, path=PATH)
        row(name, f"h5py {ratio}", *base, base)
        ours = measure("h5tile", dict(plugin_env, H5TILE_RAW_IO="1"), path=PATH)
        who = h5tile_decoder(PATH, plugin_env)  # an h5tile built without a codec lets HDF5 decode it
        row("", "h5tile (decodes itself)" if who == "h5tile" else f"h5tile ({who})", *ours, base)
        try:
            through = timed_read("h5tile", False, dict(plugin_env, H5TILE_RAW_IO="0"), path=PATH)
            row("", "h5tile H5TILE_RAW_IO=0 (HDF5)", through, None, base)
        except RuntimeError:  # a filter only a plugin decodes: the module's HDF5 loads none
            print(f"{'':24}h5tile H5TILE_RAW_IO=0 (HDF5): not readable (the module's HDF5 loads no plugin)")
        if ts is None:
            continue
        for label, compressor in ZARR_CODECS.get(name, []):
            spec = zarr_spec(a.shape, compressor)
            ts.open(spec, create=True, delete_existing=True).result().write(a).result()
            stored = sum(os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(ZARR) for n in files)
            assert (ts.open(spec).result().read().result() == a).all(), label
            theirs = measure("tensorstore", spec=spec)
            row("", f"TensorStore zarr {label} ({a.nbytes / stored:.2f}x)", *theirs, base)
            speed = f"{theirs[0] / ours[0]:.2f}x warm" + (f", {theirs[1] / ours[1]:.2f}x cold" if ours[1] else "")
            print(f"{'':24}  h5tile / TensorStore ({label}): {speed}", flush=True)
        if os.path.exists(ZARR):  # none where the codec has no Zarr counterpart
            shutil.rmtree(ZARR)
    os.unlink(PATH)


if __name__ == "__main__":
    main()
