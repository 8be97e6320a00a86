"""Issue 31, item 17: chunks that HDF5 decodes for h5tile (H5TILE_RAW_IO=0, a filter h5tile does
not decode) may crash HDF5 1.10 (a fletcher32 chunk shorter than its 4-byte checksum: SIGSEGV).
`h5tile verify --read` and `h5tile consolidate` read such datasets in a child process first: a
crash there is a problem of that dataset (exit 1, naming it and the signal), never a crash of
the command, and verify goes on with the other datasets."""
import os
import signal
import subprocess
import sys
import zlib

import h5py
import numpy as np
import pytest

from conftest import BUILD

H5TILE = BUILD / "cli" / "h5tile"
LIMIT = 120


def run(argv, **env):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **env), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{argv} did not end within {LIMIT} s:\n{out}\n{err}")
    return proc.returncode, out + err


@pytest.fixture
def forged(tmp_path):
    """/good (fletcher32, whole), /f32 (fletcher32, a first chunk of 2 bytes), /unk (scaleoffset, a
    filter h5tile does not decode, then fletcher32, on a chunk of 2 bytes: HDF5 decodes it) and /gz
    (a gzip chunk that inflates to half a chunk)."""
    path = tmp_path / "forged.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("good", data=np.arange(8, dtype=np.int32), chunks=(4,), fletcher32=True)
        d = f.create_dataset("f32", shape=(8,), dtype=np.int32, chunks=(4,), fletcher32=True)
        d.id.write_direct_chunk((0,), b"\x01\x02", 0)
        # scaleoffset: a filter h5tile leaves to HDF5, so HDF5 decodes the whole pipeline.
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4,))
        dcpl.set_scaleoffset(h5py.h5z.SO_INT, h5py.h5z.SO_INT_MINBITS_DEFAULT)
        dcpl.set_fletcher32()
        unk = h5py.h5d.create(f.id, b"unk", h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((8,)), dcpl=dcpl)
        unk.write_direct_chunk((0,), b"\x01\x02", 0)
        d = f.create_dataset("gz", shape=(16,), dtype=np.int32, chunks=(8,), compression="gzip")
        d.id.write_direct_chunk((0,), zlib.compress(np.arange(4, dtype=np.int32).tobytes()), 0)
    return path


@pytest.mark.parametrize("raw_io", ["1", "0"])
def test_verify_reports_a_crash_of_hdf5s_decoders_as_a_problem_and_goes_on(forged, raw_io):
    code, said = run([str(H5TILE), "verify", str(forged), "--read"], H5TILE_RAW_IO=raw_io)
    assert code == 1, (code, said)  # not -11: the command itself did not crash
    lines = said.splitlines()
    assert any(line.startswith("ok: /good") for line in lines), said
    # /gz inflates short: h5tile's decoder refuses it; HDF5 1.10 (raw I/O off) does not notice
    # (a limitation left open: the bytes it returns past the inflated part are its own buffer's).
    for name in ("/f32", "/unk", "/gz") if raw_io == "1" else ("/f32", "/unk"):
        assert any(line.startswith(f"problem: {name}:") for line in lines), (name, said)
    # What HDF5 decodes itself crashed in the child, named with its signal; what h5tile decodes
    # (raw I/O on: /f32, /gz) is refused by h5tile's own decoders without a crash.
    crashed = [line for line in lines if "crashed with SIGSEGV" in line]
    expected = ["/f32", "/unk"] if raw_io == "0" else ["/unk"]
    assert sorted(line.split(":")[1].strip() for line in crashed) == expected, said
    if raw_io == "0":
        assert "ok: /good (every byte read; its stored bytes were checked only by HDF5's decoders: raw_io is off" \
            in said, said


def test_verify_says_when_only_hdf5_checked_a_datasets_bytes(tmp_path):
    path = tmp_path / "ok.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.arange(100, dtype=np.int16), chunks=(10,), fletcher32=True)
    code, said = run([str(H5TILE), "verify", str(path), "--read"])
    assert code == 0 and "ok: /a (every byte read)" in said, said
    code, said = run([str(H5TILE), "verify", str(path), "--read", "--json"], H5TILE_RAW_IO="0")
    assert code == 0 and '"checked_only_by_hdf5": "raw_io is off' in said, said


@pytest.mark.parametrize("name, raw_io", [("/unk", "1"), ("/f32", "0")])
def test_consolidate_of_a_chunk_that_crashes_hdf5_is_an_error_not_a_crash(forged, tmp_path, name, raw_io):
    out = tmp_path / "c.h5"
    code, said = run([str(H5TILE), "consolidate", f"{forged}:{name}", str(out)], H5TILE_RAW_IO=raw_io)
    assert code == 1 and "crashed with SIGSEGV" in said and name in said, (code, said)
    assert not out.exists()
    # The undamaged dataset of the same file is copied as h5py reads it.
    code, said = run([str(H5TILE), "consolidate", f"{forged}:/good", str(out)], H5TILE_RAW_IO=raw_io)
    assert code == 0, said
    with h5py.File(out, "r") as f, h5py.File(forged, "r") as g:
        assert np.array_equal(f["good"][...], g["good"][...])
