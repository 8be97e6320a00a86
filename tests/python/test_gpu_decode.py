"""Compressed chunks read into CuPy arrays and decoded on the GPU with nvCOMP (issue 19): gzip,
zstd and lz4 with and without shuffle, edge chunks and sub-regions, equal byte for byte to h5py
(gzip) and to h5tile's CPU decode (all); H5TILE_GPU_DECODE=auto (the default) times both decoders
on the first large read of a codec and keeps the faster (a GPU slowed or failing by
H5TILE_GPU_DECODE_SLOWDOWN loses), "on" decodes all three on the GPU, "off" none; chunks never written and
a missing nvCOMP fall back with a reason, or fail under "on". Files h5py writes with fletcher32
after gzip (hdf5plugin's zstd and lz4 where it is installed), with and without shuffle, have their
checksums checked and are decoded on the GPU; a damaged chunk fails the read with the CPU path's
error; fletcher32 alone is read on the CPU and says why. Runs
on the GPU machine (nvCOMP from H5TILE_NVCOMP_LIBRARY or the nvidia-libnvcomp-cu13 wheel); skipped
where CuPy, a device or nvCOMP is missing."""
import json
import os
import re
import subprocess
import sys
import zlib

import h5py
import numpy as np
import pytest

from conftest import BUILD, compressible, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import settings  # noqa: E402

cp = pytest.importorskip("cupy", reason="CuPy is not installed")
if h5tile.cuda_device_count() == 0:
    pytest.skip("no CUDA device visible (or h5tile built without CUDA)", allow_module_level=True)

CASES = [(c, s) for c in ("gzip", "zstd", "lz4") for s in (True, False)]
SHAPES = [((203, 67, 9), (32, 16, 9), ((5, 3, 1), (150, 50, 7))), ((1001, 333), (64, 100), ((17, 250), (900, 83)))]


@pytest.fixture(autouse=True)
def settings_restored():
    mode, library = settings.gpu_decode(), settings.nvcomp_library()
    yield
    settings.set_gpu_decode(mode)
    settings.set_nvcomp_library(library)


def decoded_on_gpu():
    report = h5tile.last_device_io()
    if report["decoder"] == "cpu" and "nvCOMP" in report["decoder_reason"]:
        pytest.skip(report["decoder_reason"])
    assert report["decoder"] == "nvcomp" and report["path"] == "nvcomp", report
    phases = report["decode_phases"]
    assert phases["chunks"] > 0 and phases["batches"] > 0 and phases["wall"] > 0, phases
    # The core's whole read holds its planning (where auto's timed sample, if it ran, decoded) and
    # the decoder's setup and decode.
    assert report["seconds"] >= max(report["plan_seconds"], phases["setup"] + phases["wall"]) > 0, report
    return report


@pytest.mark.parametrize("dtype", ["float32", "int16", "float64", "uint8"])
@pytest.mark.parametrize("compression,shuffle", CASES, ids=[f"{c}-{'shuffle' if s else 'plain'}" for c, s in CASES])
def test_device_reads_equal_the_cpu_decode_and_h5py(tmp_path, compression, shuffle, dtype):
    if compression not in h5tile.compressors():
        pytest.skip(f"h5tile was built without {compression}")
    for shape, chunks, (offset, extent) in SHAPES:
        a = compressible(dtype, shape, seed=3)
        path = tmp_path / "c.h5"
        h5tile.to_file(a, path, "/x", layout="chunked", chunks=chunks, compression=compression, shuffle=shuffle,
                       ranks=3).wait()
        host = h5tile.from_file(path, "/x")
        assert same_bytes(host, a)
        if compression == "gzip":
            with h5py.File(path, "r") as f:
                assert same_bytes(f["x"][...], a)
        settings.set_gpu_decode("on")
        d = h5tile.from_file(path, "/x", device=0)
        decoded_on_gpu()
        assert isinstance(d, cp.ndarray) and same_bytes(cp.asnumpy(d), host)
        box = h5tile.read_box(path, "/x", offset, extent, device=0)
        decoded_on_gpu()
        assert same_bytes(cp.asnumpy(box), h5tile.read_box(path, "/x", offset, extent))
        settings.set_gpu_decode("auto")
        assert same_bytes(cp.asnumpy(h5tile.from_file(path, "/x", device=0)), host)
        report = h5tile.last_device_io()  # too small to measure: an earlier read's choice, else the CPU
        assert report["decoder_choice"]["how"] in ("small", "cached"), report
        assert report["decoder"] == ("cpu" if report["decoder_choice"]["how"] == "small" else report["decoder"]), report
        settings.set_gpu_decode("off")
        assert same_bytes(cp.asnumpy(h5tile.from_file(path, "/x", device=0)), host)
        report = h5tile.last_device_io()
        assert report["decoder"] == "cpu" and report["decoder_reason"] == "H5TILE_GPU_DECODE=off", report


def test_a_damaged_gzip_chunk_fails_on_the_gpu_as_it_fails_in_h5py(tmp_path):
    # gzip at level 0 stores a chunk's bytes as they are: a changed byte, or a flipped bit of the
    # Adler-32 after them, still inflates to the chunk's size, so only the Adler-32 tells.
    a = np.random.default_rng(5).integers(0, 2**32, 16384, dtype=np.uint32)
    good = tmp_path / "good.h5"
    with h5py.File(good, "w") as f:
        f.create_dataset("x", data=a, chunks=(4096,), compression="gzip", compression_opts=0)
    settings.set_gpu_decode("on")
    assert same_bytes(cp.asnumpy(h5tile.from_file(good, "/x", device=0)), a)
    decoded_on_gpu()
    raw = good.read_bytes()
    chunk = a[4096:8192].tobytes()
    head, tail = raw.find(chunk[:1024]), raw.find(chunk[-1024:])
    assert 0 < head < tail, "chunk [4096:8192] is not stored as it is"
    trailer = raw.find(zlib.adler32(chunk).to_bytes(4, "big"), tail + 1024, tail + 1024 + 16)
    assert trailer > 0
    for offset, mask in ((head + 100, 0x01), (trailer + 3, 0x01)):
        bad = bytearray(raw)
        bad[offset] ^= mask
        (tmp_path / "bad.h5").write_bytes(bad)
        with h5py.File(tmp_path / "bad.h5", "r") as f, pytest.raises(OSError):
            f["x"][...]
        for mode in ("auto", "on", "off"):  # the GPU's Adler-32 disagrees, then the CPU's decoder says why
            settings.set_gpu_decode(mode)
            with pytest.raises(h5tile.Error, match=r"chunk \[4096:8192\] of dataset '/x'.* cannot be decoded: deflate: "
                                                   r"deflate stream of \d+ bytes is corrupt"):
                h5tile.from_file(tmp_path / "bad.h5", "/x", device=0)


def test_a_gzip_chunk_with_bytes_after_its_stream_reads_as_in_h5py(tmp_path):
    # HDF5's inflate stops at the end of the zlib stream; the GPU path takes a chunk's last four
    # bytes as its Adler-32, so they disagree here, and the CPU decodes that chunk again.
    a = np.arange(16384, dtype=np.uint32)
    path = tmp_path / "trailing.h5"
    with h5py.File(path, "w") as f:
        x = f.create_dataset("x", data=a, chunks=(4096,), compression="gzip")
        x.id.write_direct_chunk((4096,), zlib.compress(a[4096:8192].tobytes(), 6) + b"\x00\x01\x02\x03tail")
    with h5py.File(path, "r") as f:
        assert same_bytes(f["x"][...], a)
    for mode in ("auto", "on", "off"):
        settings.set_gpu_decode(mode)
        assert same_bytes(cp.asnumpy(h5tile.from_file(path, "/x", device=0)), a), mode
        if mode == "on":
            decoded_on_gpu()


def test_chunks_never_written_fall_back_with_a_reason(tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        x = f.create_dataset("x", shape=(300, 300), dtype="f4", chunks=(64, 64), compression="gzip", shuffle=True,
                             fillvalue=7.5)
        x[:100, :100] = np.arange(10000, dtype="f4").reshape(100, 100)
        expected = x[...]
    d = h5tile.from_file(tmp_path / "f.h5", "/x", device=0)
    assert same_bytes(cp.asnumpy(d), expected)
    report = h5tile.last_device_io()
    assert report["decoder"] == "cpu" and "never written" in report["decoder_reason"], report
    # The written corner alone is all in allocated chunks: decoded on the GPU.
    settings.set_gpu_decode("on")
    box = h5tile.read_box(tmp_path / "f.h5", "/x", (0, 0), (64, 64), device=0)
    decoded_on_gpu()
    assert same_bytes(cp.asnumpy(box), expected[:64, :64])


def test_without_nvcomp_auto_decodes_on_the_cpu_and_on_fails(tmp_path):
    a = compressible("float32", (500, 200))
    h5tile.to_file(a, tmp_path / "g.h5", "/x", layout="chunked", chunks=(64, 64), compression="gzip",
                   shuffle=True).wait()
    settings.set_nvcomp_library(tmp_path / "absent" / "libnvcomp.so.6")
    settings.set_gpu_decode("auto")
    assert same_bytes(cp.asnumpy(h5tile.from_file(tmp_path / "g.h5", "/x", device=0)), a)
    report = h5tile.last_device_io()
    assert report["decoder"] == "cpu" and "libnvcomp.so.6') failed" in report["decoder_reason"], report
    settings.set_gpu_decode("on")
    with pytest.raises(h5tile.Error, match="H5TILE_GPU_DECODE=on but the GPU cannot decode dataset '/x'"):
        h5tile.from_file(tmp_path / "g.h5", "/x", device=0)


def test_the_environment_variables_choose(tmp_path):
    a = compressible("float32", (500, 200))
    h5tile.to_file(a, tmp_path / "g.h5", "/x", layout="chunked", chunks=(64, 64), compression="zstd").wait()
    h5tile.to_file(a, tmp_path / "d.h5", "/x", layout="chunked", chunks=(64, 64), compression="gzip").wait()
    code = (f"import sys; sys.path.insert(0, {str(BUILD / 'python')!r}); import h5tile\n"
            f"h5tile.from_file({str(tmp_path / 'g.h5')!r}, '/x', device=0)\n"
            "print(h5tile.settings.gpu_decode(), h5tile.last_device_io()['decoder'])\n"
            f"h5tile.from_file({str(tmp_path / 'd.h5')!r}, '/x', device=0)\n"
            "print(h5tile.last_device_io()['decoder'], h5tile.last_device_io()['decoder_reason'])")
    # Unset: auto; reads this small are not timed and decode on the CPU.
    env = {k: v for k, v in os.environ.items() if k != "H5TILE_GPU_DECODE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["auto", "cpu"], out.stderr
    assert lines[1].startswith("cpu ") and ("too small" in lines[1] or "nvCOMP" in lines[1]), out.stdout
    env = dict(os.environ, H5TILE_GPU_DECODE="off")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["off", "cpu", "cpu", "H5TILE_GPU_DECODE=off"], out.stderr
    env = dict(os.environ, H5TILE_GPU_DECODE="on", H5TILE_NVCOMP_LIBRARY=str(tmp_path / "libnvcomp.so.6"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0 and "H5TILE_GPU_DECODE=on" in out.stderr and "libnvcomp.so.6" in out.stderr


AUTO = """
import json, sys
sys.path.insert(0, {package!r})
import cupy as cp, h5tile
from h5tile import settings
out = {{}}
for codec in ("gzip", "zstd", "lz4"):
    path = {where!r} + "/" + codec + ".h5"
    settings.set_gpu_decode("off")
    cpu = cp.asnumpy(h5tile.from_file(path, "/x", device=0))
    settings.set_gpu_decode("auto")
    first = cp.asnumpy(h5tile.from_file(path, "/x", device=0))
    r1 = h5tile.last_device_io()
    second = cp.asnumpy(h5tile.from_file(path, "/x", device=0))
    r2 = h5tile.last_device_io()
    out[codec] = dict(equal=cpu.tobytes() == first.tobytes() == second.tobytes(), first=r1, second=r2)
print(json.dumps(out))
"""


@pytest.mark.parametrize("slowdown", ["", "1000", "fail"])
def test_auto_times_both_decoders_keeps_the_faster_and_reuses_the_choice(tmp_path, slowdown):
    # 40 MiB per codec (above the 32 MiB a read needs to be timed), each in a fresh process (the
    # choice is kept per process): the first auto read measures, the second reuses; H5TILE_GPU_DECODE_SLOWDOWN
    # simulates a machine whose GPU is slower than its CPUs (1000) or fails (fail).
    a = compressible("float32", (2560, 4096), seed=9)
    for codec in ("gzip", "zstd", "lz4"):
        if codec not in h5tile.compressors():
            pytest.skip(f"h5tile was built without {codec}")
        h5tile.to_file(a, tmp_path / f"{codec}.h5", "/x", layout="chunked", chunks=(64, 4096), compression=codec,
                       shuffle=True).wait()
    env = dict(os.environ, H5TILE_GPU_DECODE_SLOWDOWN=slowdown)
    out = subprocess.run([sys.executable, "-c", AUTO.format(package=str(BUILD / "python"), where=str(tmp_path))],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    for codec, r in json.loads(out.stdout.splitlines()[-1]).items():
        first, second = r["first"], r["second"]
        if first["decoder"] == "cpu" and "nvCOMP" in first["decoder_reason"]:
            pytest.skip(first["decoder_reason"])
        assert r["equal"], codec
        c1, c2 = first["decoder_choice"], second["decoder_choice"]
        assert c1["how"] == "measured" and c2["how"] == "cached", (codec, c1, c2)
        assert c1["codec"] == {"gzip": "deflate"}.get(codec, codec) and c1["cpu_rate"] > 0, c1
        assert c1["sample_chunks"] == 40 and c1["sample_bytes"] == 40 * 2**20, c1
        assert 0 < c1["cpu_sample_bytes"] <= 40 * 2**20, c1  # the last pieces, after a few untimed
        gpu_wins = c1["gpu_rate"] > 1.05 * c1["cpu_rate"]
        assert first["decoder"] == second["decoder"] == ("nvcomp" if gpu_wins else "cpu"), (codec, first)
        if slowdown == "fail":
            assert c1["gpu_rate"] == 0 and c1["gpu_failure"] == "H5TILE_GPU_DECODE_SLOWDOWN=fail", c1
        if slowdown:
            assert first["decoder"] == "cpu" and first["decoder_reason"].startswith("H5TILE_GPU_DECODE=auto"), first
        if gpu_wins:
            assert first["decode_phases"]["chunks"] == 40 and first["decoder_reason"] == "", first


def h5py_compression(codec):
    """create_dataset's keyword arguments for `codec` as h5py writes it (zstd and lz4 through
    hdf5plugin, skipped where it is not installed)."""
    if codec == "gzip":
        return {"compression": "gzip", "compression_opts": 4}
    if codec not in h5tile.compressors():
        pytest.skip(f"h5tile was built without {codec}")
    hdf5plugin = pytest.importorskip("hdf5plugin", reason=f"hdf5plugin (h5py's {codec}) is not installed")
    return dict(hdf5plugin.Zstd() if codec == "zstd" else hdf5plugin.LZ4())


FLETCHER32 = [(c, s) for c in ("gzip", "zstd", "lz4") for s in (True, False)]


@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8"])
@pytest.mark.parametrize("codec,shuffle", FLETCHER32, ids=[f"{c}-{'shuffle' if s else 'plain'}" for c, s in FLETCHER32])
def test_h5py_fletcher32_after_the_compressor_is_checked_and_decoded_on_the_gpu(tmp_path, codec, shuffle, dtype):
    # h5py applies shuffle, the compressor, then fletcher32: its checksum covers the stored bytes.
    kwargs = h5py_compression(codec)
    for shape, chunks, (offset, extent) in SHAPES:
        a = compressible(dtype, shape, seed=4)
        path = tmp_path / "f.h5"
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=a, chunks=chunks, shuffle=shuffle, fletcher32=True, **kwargs)
        with h5py.File(path, "r") as f:
            expected = f["x"][...]
            assert f["x"].fletcher32 and list(f["x"]._filters)[-1] == "fletcher32", f["x"]._filters
        assert same_bytes(expected, a)
        settings.set_gpu_decode("on")
        d = h5tile.from_file(path, "/x", device=0)
        decoded_on_gpu()
        assert isinstance(d, cp.ndarray) and same_bytes(cp.asnumpy(d), expected)
        box = h5tile.read_box(path, "/x", offset, extent, device=0)
        decoded_on_gpu()
        region = tuple(slice(o, o + e) for o, e in zip(offset, extent))
        assert same_bytes(cp.asnumpy(box), expected[region])
        settings.set_gpu_decode("off")
        assert same_bytes(cp.asnumpy(h5tile.from_file(path, "/x", device=0)), expected)
        assert h5tile.last_device_io()["decoder"] == "cpu"


@pytest.mark.parametrize("codec", ["gzip", "zstd", "lz4"])
def test_a_damaged_fletcher32_chunk_fails_on_the_gpu_with_the_cpu_paths_error(tmp_path, codec):
    # One byte flipped in chunk [4096:8192]'s stored bytes (found with h5py's get_chunk_info), in
    # the middle, the first (gzip's zlib header, lz4's size: the GPU path cannot split the chunk
    # for nvCOMP, and still reports the checksum first, as the CPU path does) or in the stored
    # Fletcher-32 itself (the compressed stream is whole: nvCOMP decodes it and deflate's Adler-32
    # agrees, so only the GPU's Fletcher-32 check can fail the read): h5py refuses it, and every
    # h5tile read says what the CPU path says of it.
    kwargs = h5py_compression(codec)
    a = compressible("float32", (16384,), seed=6)
    good = tmp_path / "good.h5"
    with h5py.File(good, "w") as f:
        f.create_dataset("x", data=a, chunks=(4096,), shuffle=True, fletcher32=True, **kwargs)
    settings.set_gpu_decode("on")
    assert same_bytes(cp.asnumpy(h5tile.from_file(good, "/x", device=0)), a)
    decoded_on_gpu()
    with h5py.File(good, "r") as f:
        info = f["x"].id.get_chunk_info_by_coord((4096,))
    assert info.filter_mask == 0 and info.size > 16, info
    bad = tmp_path / "bad.h5"
    for flipped in (info.byte_offset + info.size // 2, info.byte_offset, info.byte_offset + info.size - 3):
        raw = bytearray(good.read_bytes())
        raw[flipped] ^= 0x10
        bad.write_bytes(raw)
        with h5py.File(bad, "r") as f, pytest.raises(OSError):
            f["x"][...]
        with pytest.raises(h5tile.Error) as host:
            h5tile.from_file(bad, "/x")
        cpu_error = str(host.value)
        assert re.search(rf"chunk \[4096:8192\] of dataset '/x' in '.*bad\.h5' \(at byte {info.byte_offset} of "
                         r"'.*bad\.h5'\) cannot be decoded: fletcher32: Fletcher-32 checksum mismatch \(stored 0x",
                         cpu_error), cpu_error
        for mode in ("on", "auto", "off"):
            settings.set_gpu_decode(mode)
            with pytest.raises(h5tile.Error) as device:
                h5tile.from_file(bad, "/x", device=0)
            assert str(device.value) == cpu_error, (mode, flipped - info.byte_offset)
            if mode == "on":  # the GPU's check failed the read, not a silent fall back to the CPU
                report = h5tile.last_device_io()
                assert report["decoder"] == "nvcomp", report
        # The other chunks of the damaged file still read on the GPU.
        settings.set_gpu_decode("on")
        assert same_bytes(cp.asnumpy(h5tile.read_box(bad, "/x", (8192,), (8192,), device=0)), a[8192:])
        decoded_on_gpu()


@pytest.mark.parametrize("shuffle", [True, False])
def test_h5py_fletcher32_with_no_compressor_is_read_on_the_cpu_and_says_why(tmp_path, shuffle):
    a = compressible("float32", (500, 200), seed=8)
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(64, 64), shuffle=shuffle, fletcher32=True)
    for mode in ("auto", "off"):
        settings.set_gpu_decode(mode)
        assert same_bytes(cp.asnumpy(h5tile.from_file(path, "/x", device=0)), a)
        report = h5tile.last_device_io()
        reason = ("H5TILE_GPU_DECODE=off" if mode == "off"
                  else "fletcher32 with no compression filter is checked on the CPU")
        assert report["decoder"] == "cpu" and report["decoder_reason"] == reason, report
    settings.set_gpu_decode("on")
    with pytest.raises(h5tile.Error, match="H5TILE_GPU_DECODE=on but the GPU cannot decode dataset '/x'.*fletcher32"):
        h5tile.from_file(path, "/x", device=0)
