"""The h5tile command through the real binary: outputs (--json), exit codes, messages."""
import json
import os
import resource
import shutil
import subprocess
import sys
import zlib

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile as h5tile_py  # noqa: E402  (h5tile() below runs the command)

H5TILE = BUILD / "cli" / "h5tile"


def h5tile(*args, cwd, env=None):
    return subprocess.run([str(H5TILE), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.fixture()
def files(tool, tmp_path):
    a = random_array("float32", (300, 20), seed=1)
    tool.write(a, tmp_path / "v.h5", ranks=3)
    with h5py.File(tmp_path / "h.h5", "w") as f:
        f.create_dataset("g/chunked", data=a, chunks=(30, 20), compression="gzip")
        f.create_dataset("g/scaleoffset", data=np.arange(100, dtype="i4"), chunks=(10,), scaleoffset=0)
        f["plain"] = np.arange(10)
        f["text"] = np.array(["x"], dtype=h5py.string_dtype())
    return a


def test_info_json_matches_h5py(files, tmp_path):
    out = h5tile("info", "h.h5", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    info = {d["name"]: d for d in json.loads(out.stdout)["datasets"]}
    with h5py.File(tmp_path / "h.h5", "r") as f:
        assert info["/g/chunked"]["shape"] == list(f["g/chunked"].shape)
        assert info["/g/chunked"]["chunk"] == list(f["g/chunked"].chunks)
        assert info["/g/chunked"]["filters"] == ["deflate"]
        assert info["/g/chunked"]["decoder"] == "h5tile" and "decoder_reason" not in info["/g/chunked"]
        assert info["/g/scaleoffset"]["decoder"] == "hdf5"
        assert info["/g/scaleoffset"]["decoder_reason"] == "h5tile does not decode scaleoffset"
        assert "decoder" not in info["/plain"]
        assert info["/plain"]["dtype"] == str(f["plain"].dtype)
    assert info["/text"]["dtype"] == "object" and info["/text"]["charset"] == "utf-8"
    out = json.loads(h5tile("info", "v.h5:/data", "--json", cwd=tmp_path).stdout)["datasets"][0]
    assert out["layout"] == "virtual" and out["virtual_sources"] == 3 and out["shape"] == [300, 20]
    assert out["stored_bytes"] == tile_bytes(tmp_path / "v.h5.tiles")


def tile_bytes(folder):
    return sum(p.stat().st_size for p in folder.rglob("tile-*.h5"))


def test_info_text_and_errors(files, tmp_path):
    out = h5tile("info", "v.h5", cwd=tmp_path)
    assert out.returncode == 0 and "  data  float32 [300, 20]  virtual (3 sources)" in out.stdout
    tree = h5tile("info", "h.h5", cwd=tmp_path).stdout
    assert "  g/\n    chunked  float32 [300, 20]  chunked [30, 20] deflate (decoded by h5tile, in parallel)" in tree, tree
    assert "scaleoffset  int32 [100]  chunked [10] scaleoffset (decoded by HDF5: h5tile does not decode scaleoffset)" in tree
    out = h5tile("info", "missing.h5", cwd=tmp_path)
    assert out.returncode == 1 and "missing.h5" in out.stderr and "does not exist" in out.stderr
    out = h5tile("info", "h.h5:/nope", cwd=tmp_path)
    assert out.returncode == 1 and "'/nope'" in out.stderr
    assert h5tile("info", cwd=tmp_path).returncode == 2
    assert h5tile("frobnicate", cwd=tmp_path).returncode == 2


def test_verify_finds_each_damage(files, tmp_path):
    assert h5tile("verify", "v.h5", "--read", cwd=tmp_path).returncode == 0
    tiles = sorted((tmp_path / "v.h5.tiles").rglob("tile-*.h5"))
    with h5py.File(tiles[2], "w") as f:  # a tile of the wrong shape
        f["tile"] = np.zeros((5, 20), "f4")
    tiles[0].unlink()  # a missing tile
    out = h5tile("verify", "v.h5", "--json", cwd=tmp_path)
    assert out.returncode == 1
    problems = json.loads(out.stdout)["datasets"][0]["problems"]
    assert len(problems) == 2
    assert "tile-00000.h5" in problems[0] and "does not exist" in problems[0]
    assert "tile-00002.h5" in problems[1] and "shape [5, 20]" in problems[1]
    text = h5tile("verify", "v.h5:/data", cwd=tmp_path)
    assert text.returncode == 1 and text.stdout.count("problem:") == 2


def test_consolidate_and_split_round_trip(files, tmp_path):
    a = files
    out = h5tile("consolidate", "v.h5:/data", "one.h5", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "one.h5", "r") as f:
        assert not f["data"].is_virtual and same_bytes(f["data"][...], a)
    assert not (tmp_path / "one.h5.tiles").exists()
    out = h5tile("split", "h.h5:/g/chunked", "tiled.h5", "--tiles", 4, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "tiled.h5", "r") as f:
        assert f["g/chunked"].is_virtual and len(f["g/chunked"].virtual_sources()) == 4
        assert same_bytes(f["g/chunked"][...], a)
    assert h5tile("consolidate", "v.h5", "x.h5", cwd=tmp_path).returncode == 2  # no dataset given
    assert h5tile("consolidate", "v.h5:/data", "v.h5", cwd=tmp_path).returncode == 1  # exists
    assert h5tile("consolidate", "v.h5:/data", "v.h5", "--force", cwd=tmp_path).returncode == 1  # onto itself


@pytest.mark.parametrize("sub", ["demo", "info", "verify", "consolidate", "split"])
def test_every_subcommand_has_help_with_examples(tmp_path, sub):
    out = h5tile(sub, "--help", cwd=tmp_path)
    assert out.returncode == 0 and "Examples:" in out.stdout


@pytest.mark.skipif(shutil.which("script") is None, reason="script(1) is not installed")
def test_progress_bar_clears_its_line_and_ends_it_before_the_result(files, tmp_path):
    env = dict(os.environ, H5TILE_PROGRESS_AFTER="0", COLUMNS="100")
    cmd = f"stty cols 100; {H5TILE} consolidate v.h5:/data bar.h5"
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=tmp_path, env=env, capture_output=True,
                         timeout=120)  # bytes: text mode would turn every '\r' into a newline
    assert tty.returncode == 0, tty.stdout
    screen = tty.stdout.decode().replace("\r\n", "\n")
    draws = screen.split("\r")[1:]
    assert draws and all(d.split("\n")[0].endswith("\x1b[K") for d in draws)  # each redraw clears the rest
    assert all(len(d.split("\n")[0]) <= 99 + 3 for d in draws)  # fits the terminal's 100 columns
    last = draws[-1]
    # The finished bar: 100%, the time taken, then its own newline; the result on a line of its own.
    assert "100%" in last and ", in " in last, last
    assert "\x1b[K\nv.h5:/data -> bar.h5:/data (contiguous)\n" in last, repr(last)


@pytest.mark.skipif(shutil.which("script") is None, reason="script(1) is not installed")
def test_progress_bar_only_on_a_terminal(files, tmp_path):
    env = dict(os.environ, H5TILE_PROGRESS_AFTER="0")
    cmd = f"{H5TILE} consolidate v.h5:/data tty.h5"
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert tty.returncode == 0 and "consolidate [" in tty.stdout and "100%" in tty.stdout, tty.stdout
    piped = h5tile("consolidate", "v.h5:/data", "pipe.h5", cwd=tmp_path, env=env)
    assert piped.returncode == 0 and "[" not in piped.stderr


def test_consolidate_into_chunks(files, tmp_path):
    a = files
    out = h5tile("consolidate", "v.h5:/data", "c.h5", "--layout", "chunked", "--chunk", "64,7", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert f["data"].chunks == (64, 7) and same_bytes(f["data"][...], a)  # edge chunks clipped right
    out = h5tile("consolidate", "v.h5:/data", "d.h5", "--layout", "chunked", cwd=tmp_path)
    assert out.returncode == 0 and "chunked [" in out.stdout
    assert h5tile("consolidate", "v.h5:/data", "e.h5", "--chunk", "4,4", cwd=tmp_path).returncode == 2
    assert h5tile("consolidate", "v.h5:/data", "e.h5", "--layout", "chunked", "--chunk", "4", cwd=tmp_path).returncode == 1


def test_consolidate_and_split_compress(files, tmp_path):
    a = files
    out = h5tile("consolidate", "v.h5:/data", "c.h5", "--layout", "chunked", "--chunk", "64,7", "--compression",
                 "gzip", "--level", 7, "--shuffle", "--fletcher32", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "chunked [64, 7] shuffle + gzip 7 + fletcher32" in out.stdout, out.stdout
    with h5py.File(tmp_path / "c.h5", "r") as f:
        d = f["data"]
        assert (d.chunks, d.compression, d.compression_opts, d.shuffle, d.fletcher32) == ((64, 7), "gzip", 7, True, True)
        assert same_bytes(d[...], a)
    out = h5tile("split", "c.h5:/data", "s.h5", "--tiles", 3, "--compression", "gzip", "--chunk", "50,20", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert same_bytes(f["data"][...], a)
        for source in f["data"].virtual_sources():
            with h5py.File(tmp_path / source.file_name, "r") as tile:
                assert tile["tile"].compression == "gzip" and tile["tile"].chunks == (50, 20)
    assert h5tile("verify", "s.h5", "--read", cwd=tmp_path).returncode == 0
    assert h5tile("verify", "c.h5", "--read", cwd=tmp_path).returncode == 0
    bad = h5tile("consolidate", "v.h5:/data", "d.h5", "--layout", "chunked", "--compression", "lzma", cwd=tmp_path)
    assert bad.returncode == 2 and "'lzma'" in bad.stderr, bad.stderr
    assert "compression must be 'gzip', 'zstd', 'lz4', 'blosc', 'lzf' or 'none'" in bad.stderr, bad.stderr
    bad = h5tile("consolidate", "v.h5:/data", "d.h5", "--compression", "gzip", cwd=tmp_path)
    assert bad.returncode == 2 and "--layout chunked" in bad.stderr, bad.stderr
    bad = h5tile("consolidate", "v.h5:/data", "d.h5", "--layout", "chunked", "--compression", "gzip", "--level", 12,
                 cwd=tmp_path)
    assert bad.returncode == 1 and "gzip level must be 0 to 9" in bad.stderr, bad.stderr
    bad = h5tile("split", "c.h5:/data", "t.h5", "--chunk", "5,5", cwd=tmp_path)
    assert bad.returncode == 2 and "--chunks applies only with --compression" in bad.stderr, bad.stderr
    assert not (tmp_path / "d.h5").exists() and not (tmp_path / "t.h5").exists()


def test_verify_read_finds_a_flipped_byte_and_names_the_tile(files, tmp_path):
    assert h5tile("verify", "v.h5", "--read", cwd=tmp_path).returncode == 0
    with h5py.File(tmp_path / "v.h5", "r") as f:
        table = f["data"].attrs["h5tile_tile_table"]
        sources = [s.file_name for s in f["data"].virtual_sources()]
    assert table.shape == (3, 8)  # offset, file size, XXH64, identity, box (offset and extent per axis) per tile
    tile = tmp_path / sources[1]
    data = bytearray(tile.read_bytes())
    data[int(table[1][0]) + 123] ^= 0x01  # one bit of the raw data
    tile.write_bytes(bytes(data))
    assert h5tile("verify", "v.h5", cwd=tmp_path).returncode == 0  # metadata alone cannot tell
    out = h5tile("verify", "v.h5", "--read", cwd=tmp_path)
    assert out.returncode == 1 and out.stdout.count("problem:") == 1
    assert "checksum mismatch" in out.stdout and "tile-00001.h5" in out.stdout


def test_verify_read_streams_a_dataset_larger_than_its_memory(tmp_path):
    # 1 GiB of logical data (chunked and compressed: 144 of its 256 chunks written, each a
    # constant, the rest the fill value; a file of about 1 MiB) checked by `verify --read` in a
    # process allowed 768 MiB of address space: it must read in blocks, not the whole dataset at
    # once. (A dataset whose allocated chunks hold less than half of it has only those read.)
    chunk = zlib.compress(np.full((1024, 1024), 2.5, dtype="f4").tobytes(), 1)
    with h5py.File(tmp_path / "big.h5", "w") as f:
        d = f.create_dataset("x", shape=(16384, 16384), dtype="f4", chunks=(1024, 1024), fillvalue=1.5,
                             compression="gzip")
        for i in range(144):
            d.id.write_direct_chunk((i // 16 * 1024, i % 16 * 1024), chunk)
    limit = 768 << 20
    proc = subprocess.run([str(BUILD / "cli" / "h5tile"), "verify", "--read", "--json", "big.h5"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, H5TILE_THREADS="2"),
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)["datasets"][0]
    assert result["problems"] == [] and result["read"] == "every byte read"


def test_info_describes_a_virtual_dataset_whose_tile_is_missing(files, tmp_path):
    tile = sorted((tmp_path / "v.h5.tiles").rglob("tile-00001.h5"))[0]
    tile.unlink()
    proc = h5tile("info", "--json", "v.h5", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = json.loads(proc.stdout)
    assert "virtual" in json.dumps(info)
    assert info["datasets"][0]["stored_bytes"] == tile_bytes(tmp_path / "v.h5.tiles")  # the two left
    assert h5tile("verify", "v.h5", cwd=tmp_path).returncode == 1  # the damage is still found


def test_bench_checks_its_read_and_gives_every_group_a_limit(tmp_path):
    out = h5tile("bench", "--size", "8M", "--repeats", "1", "--ranks", "2", "--json", "--dir", "b", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["h5tile_read_equals_source"] is True and result["bytes"] == 8 << 20
    groups = {r["group"] for r in result["results"]}
    assert groups == {"write", "write0", "read", "read-new"}
    for g in groups:
        rows = [r for r in result["results"] if r["group"] == g]
        assert any(r["name"].startswith("limit") for r in rows), g
        assert max(r["ratio_to_best_loop"] for r in rows if r["name"].startswith("limit")) == pytest.approx(1.0)
    assert all(r["gbps"] > 0 for r in result["results"])
    assert any(r["name"].startswith("h5tile from_file") and r["group"] == "read-new" for r in result["results"])
    assert not (tmp_path / "b").exists()  # what it wrote is removed, and the folder it made


def test_bench_removes_only_what_it_wrote_unless_keep(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    out = h5tile("bench", "--size", "1m", "--repeats", "1", "--ranks", "2", "--dir", "mine", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "vs best loop" in out.stdout and "vs limit" not in out.stdout
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    out = h5tile("bench", "--size", "1m", "--repeats", "1", "--ranks", "2", "--dir", "kept", "--keep", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    kept = {p.name for p in (tmp_path / "kept").iterdir()}
    assert {"plain.bin", "hdf5.h5", "contiguous.h5", "chunked.h5", "virtual.h5", "virtual.h5.tiles"} <= kept


def test_python_dash_m_runs_the_command_with_its_arguments_and_exit_status(files, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))

    def python_m(*args):
        return subprocess.run([sys.executable, "-m", "h5tile", *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120, env=env)

    direct, via_python = h5tile("info", "h.h5", "--json", cwd=tmp_path), python_m("info", "h.h5", "--json")
    assert via_python.returncode == 0, via_python.stderr
    assert json.loads(via_python.stdout) == json.loads(direct.stdout)
    out = python_m("info", "missing.h5")
    assert out.returncode == 1 and "missing.h5" in out.stderr and "does not exist" in out.stderr
    out = python_m("--help")
    assert out.returncode == 0 and "Usage: h5tile" in out.stdout, out.stdout  # named h5tile, not a path
    assert python_m("frobnicate").returncode == 2


def test_one_size_syntax_and_clear_usage_errors(tmp_path):
    for args in (["bench", "--size", "12X"], ["demo", "--size", "abc"], ["demo", "--size", "-5G"],
                 ["demo", "--size=-5G"], ["demo", "--size", "0"]):
        out = h5tile(*args, "--path", "d/d.h5", cwd=tmp_path) if args[0] == "demo" else h5tile(*args, cwd=tmp_path)
        assert out.returncode == 2, (args, out.stderr)
        assert "is not a size" in out.stderr and "suffix K, M, G or T" in out.stderr, out.stderr
    assert not (tmp_path / "d").exists()
    out = h5tile("demo", "--size", "1.5m", "--path", "d/d.h5", "--ranks", "2", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "[384, 1024]" in out.stdout  # 1.5 MiB of uint32 in rows of 1024
    out = h5tile("demo", "--size", "1g", "--help", cwd=tmp_path)
    assert out.returncode == 0
    # The environment variables read sizes the same way, and name themselves when wrong.
    out = h5tile("demo", "--size", "64k", "--path", "d/e.h5", cwd=tmp_path, env=dict(os.environ, H5TILE_TASK_SIZE="1.5m"))
    assert out.returncode == 0, out.stderr
    out = h5tile("demo", "--size", "64k", "--path", "d/e.h5", cwd=tmp_path, env=dict(os.environ, H5TILE_TASK_SIZE="12X"))
    assert out.returncode == 1 and "H5TILE_TASK_SIZE: '12X' is not a size" in out.stderr, out.stderr


def test_demo_refuses_a_size_larger_than_memory(tmp_path):
    out = h5tile("demo", "--size", "1000000T", "--path", "d/d.h5", cwd=tmp_path)
    assert out.returncode == 2 and "memory" in out.stderr, out.stderr
    assert not (tmp_path / "d").exists()


def test_verify_skips_datasets_of_unsupported_types(files, tmp_path):
    with h5py.File(tmp_path / "h.h5", "a") as f:
        f["compound"] = np.zeros(3, dtype=[("a", "i4"), ("b", "f8")])
        f.create_dataset("sequences", (2,), dtype=h5py.vlen_dtype("i4"))
    out = h5tile("verify", "h.h5", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "skipped: /sequences: " in out.stdout and "variable-length sequence" in out.stdout
    assert "ok: /compound" in out.stdout and "problem" not in out.stdout  # a compound type h5tile reads
    assert "ok: /plain" in out.stdout and "ok: /g/chunked" in out.stdout and "ok: /text" in out.stdout
    result = json.loads(h5tile("verify", "h.h5", "--json", cwd=tmp_path).stdout)
    assert result["ok"] is True and result["skipped"] == 1
    skipped = {d["name"] for d in result["datasets"] if "skipped" in d}
    assert skipped == {"/sequences"}
    assert h5tile("verify", "h.h5:/sequences", cwd=tmp_path).returncode == 0
    read_all = h5tile("verify", "h.h5:/text", "--read", cwd=tmp_path)  # variable-length strings: HDF5 reads them
    assert read_all.returncode == 0 and "ok: /text" in read_all.stdout, read_all.stdout + read_all.stderr
    (tmp_path / "v.h5.tiles").rename(tmp_path / "elsewhere")
    assert h5tile("verify", "v.h5", cwd=tmp_path).returncode == 1  # real problems still count


def test_info_lists_the_sources_of_a_virtual_dataset(files, tmp_path):
    with h5py.File(tmp_path / "v.h5", "r") as f:
        expected = [(s.file_name, s.dset_name) for s in f["data"].virtual_sources()]
    out = h5tile("info", "v.h5:/data", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = [line.strip() for line in out.stdout.splitlines() if "<-" in line]
    assert lines == [f"[{lo}:{hi}, 0:20] <- {file}:{ds}"
                     for (lo, hi), (file, ds) in zip([(0, 100), (100, 200), (200, 300)], expected)]
    tiles = sorted((tmp_path / "v.h5.tiles").rglob("tile-00001.h5"))
    tiles[0].unlink()
    info = json.loads(h5tile("info", "v.h5:/data", "--json", cwd=tmp_path).stdout)["datasets"][0]
    assert [s["found"] for s in info["sources"]] == [True, False, True]
    assert info["sources"][2]["region"] == {"offset": [200, 0], "extent": [100, 20]}
    assert info["sources"][0]["file"] == expected[0][0] and info["sources"][0]["dataset"] == "/tile"
    assert "(missing)" in h5tile("info", "v.h5:/data", cwd=tmp_path).stdout
    assert "<-" not in h5tile("info", "v.h5", cwd=tmp_path).stdout  # the whole file: one line per dataset


def test_consolidate_leaves_an_existing_file_alone_unless_force_or_append(files, tmp_path):
    a = files
    (tmp_path / "out.h5").write_bytes(b"precious")
    out = h5tile("consolidate", "v.h5:/data", "out.h5", cwd=tmp_path)
    assert out.returncode == 1 and "'out.h5' exists" in out.stderr and "--force" in out.stderr, out.stderr
    assert (tmp_path / "out.h5").read_bytes() == b"precious"
    assert h5tile("consolidate", "v.h5:/data", "out.h5", "--force", cwd=tmp_path).returncode == 0
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert same_bytes(f["data"][...], a)
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["keep"] = np.arange(5)
    assert h5tile("consolidate", "v.h5:/data", "other.h5", "--append", cwd=tmp_path).returncode == 0
    with h5py.File(tmp_path / "other.h5", "r") as f:
        assert list(f["keep"][...]) == list(range(5)) and same_bytes(f["data"][...], a)
    assert h5tile("consolidate", "v.h5:/data", "x.h5", "--force", "--append", cwd=tmp_path).returncode == 2
    out = h5tile("split", "h.h5:/g/chunked", "other.h5", cwd=tmp_path)
    assert out.returncode == 1 and "--force" in out.stderr
    assert h5tile("split", "h.h5:/g/chunked", "other.h5", "--force", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("shape, dtype, chunk", [
    ((2000, 300), "f8", (1000, 300)),   # 4.8 MB: two equal chunks, not 1747 + 253 rows
    ((300, 20), "f4", (300, 20)),       # small: one chunk
    ((10, 1024, 1024), "f4", (1, 1024, 1024)),
    ((3, 3000, 1000), "f8", (1, 500, 1000)),  # one slice is over 4 MiB: cut the next axis evenly
])
def test_consolidate_picks_chunks_that_divide_the_data_evenly(tmp_path, shape, dtype, chunk):
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f.create_dataset("x", shape=shape, dtype=dtype, fillvalue=1)
    out = h5tile("consolidate", "in.h5:/x", "out.h5", "--layout", "chunked", "--no-sync", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert f["x"].chunks == chunk
        assert f["x"].id.get_storage_size() <= 1.01 * np.prod(shape) * np.dtype(dtype).itemsize + 4096


def test_version_is_the_one_cmake_gives(tmp_path):
    import re
    from conftest import ROOT
    cmake = (ROOT / "CMakeLists.txt").read_text()
    version = re.search(r"project\(h5tile VERSION ([0-9.]+)", cmake).group(1)
    assert h5tile("--version", cwd=tmp_path).stdout.strip() == f"h5tile {version}"
    header = (BUILD / "include" / "h5tile" / "version.hpp").read_text()
    assert f'#define H5TILE_VERSION_STRING "{version}"' in header
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^version *=", pyproject, re.M) is None and 'dynamic = ["version"]' in pyproject


def test_demo_script_help_comes_at_once(tmp_path):
    from conftest import ROOT
    env = dict(os.environ, PATH="/usr/bin:/bin", H5TILE_BUILD_DIR=str(tmp_path / "no-build"))
    out = subprocess.run(["bash", str(ROOT / "scripts" / "demo.sh"), "--help"], capture_output=True, text=True,
                         timeout=10, env=env, cwd=tmp_path)
    assert out.returncode == 0 and "Usage: scripts/demo.sh" in out.stdout, out.stdout + out.stderr
    assert not (tmp_path / "no-build").exists()


def test_info_takes_names_without_a_leading_slash_and_lists_groups(files, tmp_path):
    """`info f.h5:g/chunked` as Python takes "g/chunked"; `info f.h5:/g` lists the group's datasets."""
    with_slash = h5tile("info", "h.h5:/g/chunked", "--json", cwd=tmp_path)
    without = h5tile("info", "h.h5:g/chunked", "--json", cwd=tmp_path)
    assert without.returncode == 0, without.stderr
    assert json.loads(without.stdout) == json.loads(with_slash.stdout)
    with h5py.File(tmp_path / "h.h5", "r") as f:
        in_group = sorted("/g/" + k for k in f["g"].keys())
    for spelling in ("h.h5:/g", "h.h5:g", "h.h5:/g/"):
        out = h5tile("info", spelling, "--json", cwd=tmp_path)
        assert out.returncode == 0, (spelling, out.stderr)
        listed = json.loads(out.stdout)
        assert listed["group"] == "/g" and sorted(d["name"] for d in listed["datasets"]) == in_group
    text = h5tile("info", "h.h5:g", cwd=tmp_path)
    assert text.stdout.splitlines()[0] == "h.h5:/g"
    assert {line.split()[0] for line in text.stdout.splitlines()[1:]} == {"chunked", "scaleoffset"}
    # "h.h5:/" is the whole file; a name with ':' that exists as a file stays a file name.
    whole = json.loads(h5tile("info", "h.h5:/", "--json", cwd=tmp_path).stdout)
    assert len(whole["datasets"]) == len(json.loads(h5tile("info", "h.h5", "--json", cwd=tmp_path).stdout)["datasets"])
    shutil.copy(tmp_path / "h.h5", tmp_path / "odd:plain")
    out = h5tile("info", "odd:plain", "--json", cwd=tmp_path)
    assert out.returncode == 0 and json.loads(out.stdout)["file"] == "odd:plain"


def test_the_chunk_shape_is_named_chunks_everywhere(tmp_path):
    """One name for the chunk shape (issue 30, item 10): to_file's chunks=, from_file_batched's
    chunks= and the command's --chunks (--chunk and chunk_size stay accepted)."""
    a = np.arange(60 * 7, dtype=np.int32).reshape(60, 7)
    h5tile_py.to_file(a, tmp_path / "in.h5", "/d", chunks=(10, 7)).wait()
    for option in ("--chunks", "--chunk"):
        out = h5tile("consolidate", "in.h5:/d", f"c{option}.h5", "--layout", "chunked", option, "20,7", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        with h5py.File(tmp_path / f"c{option}.h5", "r") as f:
            assert f["/d"].chunks == (20, 7)
    by_chunks = [(o, b.shape) for b, o in h5tile_py.from_file_batched(tmp_path / "in.h5", "/d", chunks=(25, 7))]
    by_size = [(o, b.shape) for b, o in h5tile_py.from_file_batched(tmp_path / "in.h5", "/d", chunk_size=(25, 7))]
    assert by_chunks == by_size == [((0, 0), (25, 7)), ((25, 0), (25, 7)), ((50, 0), (10, 7))]
    with pytest.raises(h5tile_py.InvalidArgumentError, match="not both"):
        h5tile_py.from_file_batched(tmp_path / "in.h5", "/d", chunks=(5, 7), chunk_size=(5, 7))


def test_info_of_a_group_shows_its_attributes_as_h5py_reads_them(tmp_path):
    """`info f.h5:/grp` lists the group's attributes (issue 30, item 11), text and --json."""
    with h5py.File(tmp_path / "a.h5", "w") as f:
        g = f.create_group("grp")
        g["x"] = np.arange(3)
        g.attrs["units"] = "m/s"
        g.attrs["scale"] = 2.5
        g.attrs["count"] = np.int32(7)
        g.attrs["flags"] = np.array([True, False])
        g.attrs["weights"] = np.arange(20, dtype=np.int16).reshape(4, 5)
        g.attrs["label"] = np.bytes_(b"abc")
        g.attrs["none"] = h5py.Empty("f4")
        g.attrs["z"] = np.complex64(1 - 2j)
        expected = {k: g.attrs[k] for k in g.attrs}
    text = h5tile("info", "a.h5:grp", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "a.h5:/grp"
    shown = [line.strip() for line in lines[1:] if line.strip().startswith("@")]
    assert shown == ["@count = 7", "@flags = [True, False] (shape [2])", '@label = "abc"', "@none = (empty, float32)",
                     "@scale = 2.5", '@units = "m/s"', "@weights = [0, 1, 2, 3, 4, 5, 6, 7, ...] (shape [4, 5])",
                     "@z = (1-2j)"]
    assert any(line.split()[0] == "x" for line in lines[1:])  # the datasets still follow
    listed = json.loads(h5tile("info", "a.h5:/grp", "--json", cwd=tmp_path).stdout)
    attributes = {a["name"]: a for a in listed["attributes"]}
    assert sorted(attributes) == sorted(expected)
    for name in ("count", "scale", "flags", "weights", "z"):
        value = np.asarray(attributes[name]["value"])
        if name == "z":
            value = value[0] + 1j * value[1]
        reference = np.asarray(expected[name])
        assert attributes[name]["dtype"] == str(reference.dtype) and attributes[name]["shape"] == list(reference.shape)
        np.testing.assert_array_equal(value.reshape(reference.shape), reference)
    assert attributes["units"]["value"] == expected["units"] and attributes["label"]["value"] == "abc"
    assert attributes["none"]["empty"] == "float32"
    assert [d["name"] for d in listed["datasets"]] == ["/grp/x"]


def test_info_of_a_group_shows_reference_attributes_as_the_paths_h5py_resolves(tmp_path):
    """An object-reference attribute (netCDF-4's DIMENSION_LIST is a list of them) shows the paths
    of the objects it refers to, as h5py's `f[ref].name` gives them."""
    with h5py.File(tmp_path / "r.h5", "w") as f:
        g = f.create_group("grp")
        g["x"] = np.arange(3)
        g.attrs["target"] = f["grp/x"].ref
        g.attrs["targets"] = np.array([f["grp"].ref, f["grp/x"].ref], dtype=h5py.ref_dtype)
        expected = {"target": f[g.attrs["target"]].name, "targets": [f[r].name for r in g.attrs["targets"]]}
    text = h5tile("info", "r.h5:/grp", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    shown = [line.strip() for line in text.stdout.splitlines() if line.strip().startswith("@")]
    assert shown == [f'@target = "{expected["target"]}"',
                     f'@targets = ["{expected["targets"][0]}", "{expected["targets"][1]}"] (shape [2])'], shown
    listed = {a["name"]: a for a in json.loads(h5tile("info", "r.h5:/grp", "--json", cwd=tmp_path).stdout)["attributes"]}
    assert listed["target"]["dtype"] == "reference" and listed["target"]["value"] == expected["target"]
    assert listed["targets"]["value"] == expected["targets"] and listed["targets"]["shape"] == [2]


def test_json_errors_are_json(files, tmp_path):
    out = h5tile("info", "h.h5:/nope", "--json", cwd=tmp_path)
    assert out.returncode == 1
    error = json.loads(out.stdout)
    assert error["exit_code"] == 1 and "'/nope'" in error["error"] and "h.h5" in error["error"]
    assert "'/nope'" in out.stderr  # and the line on stderr, as without --json
    out = h5tile("verify", "missing.h5", "--json", cwd=tmp_path)
    assert out.returncode == 1 and "missing.h5" in json.loads(out.stdout)["error"]
    assert h5tile("info", "h.h5:/nope", cwd=tmp_path).stdout == ""  # text mode: stdout stays empty


def test_a_mistyped_subcommand_is_named_with_a_suggestion(tmp_path):
    out = h5tile("inof", "x.h5", cwd=tmp_path)
    assert out.returncode == 2 and "'inof' is not a subcommand" in out.stderr and "did you mean 'info'" in out.stderr
    out = h5tile("verfy", cwd=tmp_path)
    assert out.returncode == 2 and "did you mean 'verify'" in out.stderr
    out = h5tile("xyzzy", cwd=tmp_path)
    assert out.returncode == 2 and "did you mean" not in out.stderr
    assert all(name in out.stderr for name in ("info", "verify", "consolidate", "split", "bench", "demo"))


@pytest.mark.parametrize("options, named", [(["--level", "5"], "--level"), (["--shuffle"], "--shuffle"),
                                            (["--chunk", "10"], "--chunks"), (["--chunks", "10"], "--chunks"),
                                            (["--level", "3", "--shuffle"], "--level, --shuffle")])
def test_split_options_that_need_a_compressor_say_so(files, tmp_path, options, named):
    out = h5tile("split", "h.h5:/plain", "s.h5", *options, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert f"{named} appl" in out.stderr and "--compression" in out.stderr
    assert not (tmp_path / "s.h5").exists() and not (tmp_path / "s.h5.tiles").exists()
    out = h5tile("consolidate", "v.h5:/data", "c.h5", "--shuffle", cwd=tmp_path)
    assert out.returncode == 2 and "--shuffle applies only with --compression" in out.stderr


def test_bench_writes_only_does_not_claim_a_read(tmp_path):
    out = h5tile("bench", "--writes-only", "--size", "1M", "--repeats", "1", "--dir", tmp_path / "b", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = [line.split()[0] for line in out.stdout.splitlines() if line.startswith(("write", "read"))]
    assert rows and set(rows) == {"write", "write0"}
    assert "read back untimed" in out.stdout and "yes" in out.stdout.splitlines()[-2]
