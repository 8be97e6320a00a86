#!/usr/bin/env python3
"""Compressed reads: h5tile decoding chunks on its own workers (default), h5tile through HDF5
(H5TILE_RAW_IO=0, as before h5tile decoded them; hdf5plugin's plugins for the non-gzip codecs) and
h5py (+ hdf5plugin), on files h5py wrote of the same float32 data (a smooth field plus noise,
bench/compressible.py) in chunks of 1 MiB: gzip 4 + shuffle, zstd 3 + shuffle, lz4 + shuffle and
blosc (lz4, level 5, its own shuffle). Warm page cache. Each h5tile run is a fresh process (the
setting is read once); one warm-up read, then the best of REPEATS timed reads. Prints the ratio
of h5tile's time to h5py's. Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/compressed_read.py [MiB (default 512)] [codec names, comma-separated (default: all)]

--device (issue 19: on one GPU, does a cold compressed file reach device memory faster than the
cold uncompressed file of the same array?): from_file(device=0) of the file h5tile wrote with each
codec (gzip, zstd, lz4, each + shuffle: the ones nvCOMP decodes), with H5TILE_GPU_DECODE=on (only
the compressed bytes cross PCIe) and off (the CPU decodes, then stages), and of the same array
stored contiguous and uncompressed. Cold: the page cache dropped (as root) before each read, each
read in its own process that has already set up CUDA and nvCOMP on a tiny file (so the time is the
read's); warm: the best of REPEATS reads in one process. Needs CuPy, and nvCOMP (the
nvidia-libnvcomp-cu13 wheel, or H5TILE_NVCOMP_LIBRARY).

    sudo python3 bench/compressed_read.py --device [MiB (default 8192)] [codec names] [--rounds N]
"""
import os
import subprocess
import sys

import h5py

from compressible import CHUNK, CODECS, PACKAGE, best_of, field

PATH = "/tmp/h5tile-compressed-read.h5"
REPEATS = 3
TIMED_READ = f"""
import sys
sys.path.insert(0, {PACKAGE!r})
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import h5tile
from compressible import best_of
print(best_of({REPEATS}, lambda: h5tile.from_file({PATH!r}, "/x")))
"""


DEVICE_READ = """
import sys, time
sys.path.insert(0, {package!r})
sys.path.insert(0, {bench!r})
import cupy, h5tile
from compressible import best_of
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
print(t, r["decoder"] or "-", r["path"], (r["decoder_reason"] or "-").replace(" ", "_"), flush=True)
"""


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def device_read(path, tiny, cold, gpu_decode):
    """Seconds of one from_file(device=0) of `path` (cold: after the page cache is dropped) in a new
    process, and how the report says the bytes went."""
    code = DEVICE_READ.format(package=PACKAGE, bench=os.path.dirname(os.path.abspath(__file__)), tiny=str(tiny),
                              path=str(path), cold=cold, repeats=REPEATS)
    env = dict(os.environ, H5TILE_GPU_DECODE=gpu_decode)
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    if cold:
        if child.stdout.readline().strip() != "ready":
            child.kill()
            child.wait()
            raise RuntimeError(f"device read of {path} failed (its error is above)")
        drop_caches()
        child.stdin.write("go\n")
        child.stdin.flush()
    out, _ = child.communicate(timeout=3600)
    if child.returncode != 0:
        raise RuntimeError(f"device read of {path} failed")
    t, decoder, route, reason = out.split()[-4:]
    return float(t), decoder, route, reason.replace("_", " ")


def main_device(argv):
    rounds = 3
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        del argv[i:i + 2]
    mib = int(argv[0]) if argv else 8192
    names = argv[1].split(",") if len(argv) > 1 else [n for n in CODECS if not n.startswith("blosc")]
    sys.path.insert(0, PACKAGE)
    import h5tile
    cold = os.geteuid() == 0
    where = "/tmp/h5tile-compressed-device"
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
        for gpu_decode in (("on", "off") if codec else ("auto",)):
            row = f"{label + f' ({ratio:.2f}x)':36}{'GPU (nvCOMP)' if gpu_decode == 'on' else 'CPU' if codec else '-':18}"
            try:
                c = min((device_read(path, tiny, True, gpu_decode) for _ in range(rounds)), key=lambda r: r[0]) \
                    if cold else None
                w = device_read(path, tiny, False, gpu_decode)
            except RuntimeError as e:
                print(row + f"  {e}")
                continue
            cold_text = f"{c[0]:8.3f}s{a.nbytes / c[0] / 1e9:7.2f}" if c else f"{'-':>9}{'-':>7}"
            how = f"{w[2]}, decoder {w[1]}" + (f" ({w[3]})" if w[3] != "-" else "")
            print(row + cold_text + f"{w[0]:8.3f}s{a.nbytes / w[0] / 1e9:7.2f}  {how}", flush=True)
    os.unlink(f"{where}/data.h5")
    os.unlink(f"{where}/tiny.h5")


def main():
    if "--device" in sys.argv:
        argv = [x for x in sys.argv[1:] if x != "--device"]
        return main_device(argv)
    import hdf5plugin  # h5py's side only (--device needs none: h5tile writes those files)
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(CODECS)
    a = field(mib)
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, chunks {CHUNK} = 1 MiB, {os.cpu_count()} CPUs, "
          f"hdf5plugin {hdf5plugin.version}, warm page cache")
    print(f"{'codec (ratio)':32}{'engine':32}{'time':>9}{'GB/s':>8}{'vs h5py':>9}")
    for name in names:
        with h5py.File(PATH, "w") as f:
            f.create_dataset("x", data=a, chunks=CHUNK, **CODECS[name][1](hdf5plugin))
        ratio = a.nbytes / os.path.getsize(PATH)
        with h5py.File(PATH) as f:
            h5py_s = best_of(REPEATS, lambda: f["x"][...])
        print(f"{name + f' ({ratio:.2f}x)':32}{'h5py':32}{h5py_s:8.3f}s{a.nbytes / h5py_s / 1e9:8.2f}{1:8.2f}x")
        for label, raw in (("h5tile (decodes itself)", "1"), ("h5tile H5TILE_RAW_IO=0 (HDF5)", "0")):
            env = dict(os.environ, H5TILE_RAW_IO=raw, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH)
            s = float(subprocess.run([sys.executable, "-c", TIMED_READ], env=env, check=True, capture_output=True,
                                     text=True).stdout)
            print(f"{'':32}{label:32}{s:8.3f}s{a.nbytes / s / 1e9:8.2f}{h5py_s / s:8.2f}x")
    os.unlink(PATH)


if __name__ == "__main__":
    main()
