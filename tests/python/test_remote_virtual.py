"""Virtual datasets in remote files: a virtual layout that h5tile wrote, served as a folder of
objects (the main file and its `.tiles/` folder) by nginx, reads back over http:// with its tiles,
compared with h5py reading the same files locally. Sources resolve against the folder of the
file's URL only: a hostile file whose sources name an absolute path, '..', another host or a local
file fails with a clear error, and nothing is fetched from (or opened at) the place it names."""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, changed_settings, compressible, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"


@pytest.fixture(autouse=True)
def remote_settings():
    """Small blocks, so that the mapping and the tile index take requests of their own; short
    timeouts; early reads on (the default) unless a test says otherwise."""
    with changed_settings(h5tile.settings, remote_block_size=4096, remote_timeout=5, remote_retries=2,
                          early_reads=True):
        yield


def local_read(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()]


def tile_requests(server):
    return [line for line in server.requests() if ".tiles/" in line]


@pytest.mark.parametrize("early", [True, False])
@pytest.mark.parametrize("dtype", ["int32", "float64", "complex64", "bool"])
def test_a_virtual_layout_reads_back_over_http_with_its_tiles(nginx_server, dtype, early):
    h5tile.settings.set_early_reads(early)
    a = random_array(dtype, (123, 77), seed=7)
    path = nginx_server.root / "v.h5"
    h5tile.to_file(a, path, "/g/x", ranks=4, layout="virtual").wait()
    with h5py.File(path, "r") as f:
        assert f["g/x"].is_virtual and len(f["g/x"].virtual_sources()) == 4
    url = f"{nginx_server.url}/v.h5"
    expected = local_read(path, "g/x")
    assert same_bytes(expected, a)
    assert same_bytes(h5tile.from_file(url, "/g/x"), expected)
    assert len({line.split('"')[1] for line in tile_requests(nginx_server)}) == 4, "each tile was fetched"
    assert same_bytes(h5tile.read_box(url, "/g/x", [10, 5], [100, 60]), expected[10:110, 5:65])
    out = np.empty_like(a)
    assert h5tile.from_file(url, "/g/x", out=out) is out and same_bytes(out, expected)
    blocks = [(b.copy(), tuple(o)) for b, o in h5tile.from_file_batched(url, "/g/x", [50, 77])]
    assert [o for _, o in blocks] == [(0, 0), (50, 0), (100, 0)]
    assert same_bytes(np.concatenate([b for b, _ in blocks]), expected)
    info = h5tile.describe(url, "/g/x")
    assert list(info["shape"]) == [123, 77] and info["layout"] == "virtual"


def test_a_chunked_compressed_virtual_source_over_http(nginx_server):
    # Sources that h5py wrote (no tile index): opened through HDF5 on h5tile's driver, one object
    # each, and their compressed chunks decoded by h5tile.
    a = compressible("int16", (60, 40), seed=2)
    for i in range(3):
        with h5py.File(nginx_server.root / f"part{i}.h5", "w") as f:
            f.create_dataset("p", data=a[20 * i:20 * (i + 1)], chunks=(5, 40), compression="gzip", shuffle=True)
    layout = h5py.VirtualLayout(shape=a.shape, dtype=a.dtype)
    for i in range(3):
        layout[20 * i:20 * (i + 1)] = h5py.VirtualSource(f"part{i}.h5", "p", shape=(20, 40))
    with h5py.File(nginx_server.root / "m.h5", "w") as f:
        f.create_virtual_dataset("data", layout, fillvalue=-1)
    expected = local_read(nginx_server.root / "m.h5", "data")
    assert same_bytes(expected, a)
    assert same_bytes(h5tile.from_file(f"{nginx_server.url}/m.h5", "/data"), expected)


def test_a_source_in_a_subfolder_and_the_file_itself(nginx_server):
    a = random_array("uint16", (10, 6), seed=4)
    (nginx_server.root / "sub").mkdir()
    with h5py.File(nginx_server.root / "sub" / "s.h5", "w") as f:
        f["d"] = a[:5]
    with h5py.File(nginx_server.root / "m.h5", "w") as f:
        f["own"] = a[5:]
        layout = h5py.VirtualLayout(shape=a.shape, dtype=a.dtype)
        layout[:5] = h5py.VirtualSource("sub/s.h5", "d", shape=(5, 6))
        layout[5:] = h5py.VirtualSource(".", "own", shape=(5, 6))
        f.create_virtual_dataset("data", layout)
    assert same_bytes(h5tile.from_file(f"{nginx_server.url}/m.h5?X-Amz-Signature=SECRET1", "/data"),
                      local_read(nginx_server.root / "m.h5", "data"))
    # The signature of the main file's URL is for that object only: not sent for its sources.
    assert not any("SECRET1" in line and "/sub/s.h5" in line for line in nginx_server.requests())


def test_a_missing_tile_object_is_an_error_never_fill_values(nginx_server):
    a = random_array("int64", (40, 10), seed=5)
    path = nginx_server.root / "v.h5"
    h5tile.to_file(a, path, "/data", ranks=4, layout="virtual").wait()
    with h5py.File(path, "r") as f:
        victim = f["data"].virtual_sources()[2].file_name
    os.remove(nginx_server.root / victim)
    for early in (True, False):
        h5tile.settings.set_early_reads(early)
        with pytest.raises(h5tile.VirtualSourceError, match="404") as e:
            h5tile.from_file(f"{nginx_server.url}/v.h5?sig=SECRET2", "/data")
        assert victim.split("/")[-1] in str(e.value) and "SECRET2" not in str(e.value)


def test_a_replaced_tile_object_is_not_read_by_its_index(nginx_server):
    # Another tile's bytes of the same size in its place: its identity differs, so the tile table
    # does not vouch for it; read through HDF5's view of it instead (what h5py reads too).
    a = random_array("int32", (40, 10), seed=6)
    path = nginx_server.root / "v.h5"
    h5tile.to_file(a, path, "/data", ranks=4, layout="virtual").wait()
    with h5py.File(path, "r") as f:
        names = [s.file_name for s in f["data"].virtual_sources()]
    (nginx_server.root / names[0]).write_bytes((nginx_server.root / names[1]).read_bytes())
    expected = local_read(path, "data")
    assert not same_bytes(expected, a)
    for early in (True, False):
        h5tile.settings.set_early_reads(early)
        assert same_bytes(h5tile.from_file(f"{nginx_server.url}/v.h5", "/data"), expected)


# --- confinement ----------------------------------------------------------------------------------

def hostile(root, source_name, shape=(4, 4)):
    """A main file at root/m.h5 whose virtual dataset maps source `source_name`."""
    layout = h5py.VirtualLayout(shape=shape, dtype="i4")
    layout[:] = h5py.VirtualSource(source_name, "data", shape=shape)
    with h5py.File(root / "m.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=7)


ENCODED = {"encoded_dotdot": "%2e%2e/src.h5", "encoded_slash": "..%2fsrc.h5", "half_encoded": ".%2e/src.h5",
           "upper_case": "%2E%2E%2Fsrc.h5", "deeper": "a/%2e%2e/%2e%2e/src.h5", "backslash": "..%5csrc.h5"}


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "other_host", "local_relative", "file_url", "dot_part",
                                  *ENCODED])
def test_sources_outside_the_folder_of_the_url_are_refused(nginx_server, fault_server, tmp_path, monkeypatch, kind):
    served = nginx_server.root / "inner"
    served.mkdir()
    # The names each hostile file gives exist in every place they could point to: the served
    # folder and its parent, the working directory, and the other server.
    data = np.arange(16, dtype="i4").reshape(4, 4)
    for where in (nginx_server.root, served, tmp_path):
        with h5py.File(where / "src.h5", "w") as f:
            f["data"] = data
    fault_server.put("/src.h5", (served / "src.h5").read_bytes())
    monkeypatch.chdir(tmp_path)
    name = {"absolute": str(tmp_path / "src.h5"), "dotdot": "../src.h5",
            "other_host": f"{fault_server.url}/src.h5", "local_relative": "./src.h5",
            "file_url": f"file://{tmp_path}/src.h5", "dot_part": "a/./src.h5",
            # nginx decodes a path before it resolves '..': these would reach the parent folder.
            **{k: v.replace("%", "%%") for k, v in ENCODED.items()}}[kind]  # '%%': a '%' in HDF5's names
    hostile(served, name)
    before = len(nginx_server.requests())
    for early, allow in ((True, False), (False, False), (True, True)):  # allow_external_sources: still refused
        h5tile.settings.set_early_reads(early)
        with pytest.raises(h5tile.VirtualSourceError, match="outside the folder of the remote file"):
            h5tile.from_file(f"{nginx_server.url}/inner/m.h5", "/v", allow_external_sources=allow)
    assert all("/inner/m.h5 " in line for line in nginx_server.requests()[before:]), "only the main file"
    assert fault_server.log == [], "nothing asked of the other host"


def test_a_source_name_reaches_the_server_as_exactly_that_file(nginx_server):
    # Names with characters a URL must encode ('%', ' ', '+') are sent encoded: nginx, decoding
    # once, serves the file of that name, as HDF5 opens it beside a local file; "a%41" is not "aA".
    root = nginx_server.root
    for name, value in (("a b%41+c.h5", 1), ("a bA+c.h5", 2)):
        with h5py.File(root / name, "w") as f:
            f["data"] = np.full((4, 4), value, dtype="i4")
    hostile(root, "a b%%41+c.h5")
    expected = local_read(root / "m.h5", "v")
    assert (expected == 1).all()
    assert same_bytes(h5tile.from_file(f"{nginx_server.url}/m.h5", "/v"), expected)


def test_a_local_source_is_never_opened_by_hdf5_either(nginx_server, tmp_path, monkeypatch):
    # A mapping HDF5 reads itself (an irregular selection): h5tile refuses it for a remote file,
    # since HDF5 would open the source itself (the driver refuses, HDF5 would give fill values).
    served = nginx_server.root
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f["data"] = np.arange(16, dtype="i4")
    (served / "src.h5").write_bytes((tmp_path / "src.h5").read_bytes())
    layout = h5py.VirtualLayout(shape=(8,), dtype="i4")
    layout[:] = h5py.VirtualSource("src.h5", "data", shape=(16,))[::2]  # strided: not a box
    with h5py.File(served / "m.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=7)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(h5tile.VirtualSourceError, match="not box to box"):
        h5tile.from_file(f"{nginx_server.url}/m.h5", "/v")
    assert not any("src.h5" in line for line in nginx_server.requests())


def test_a_nested_virtual_source_is_refused(nginx_server):
    # A source that is itself virtual would have HDF5 open its sources itself.
    with h5py.File(nginx_server.root / "leaf.h5", "w") as f:
        f["data"] = np.arange(16, dtype="i4").reshape(4, 4)
    hostile(nginx_server.root, "leaf.h5")
    (nginx_server.root / "m.h5").rename(nginx_server.root / "mid.h5")
    layout = h5py.VirtualLayout(shape=(4, 4), dtype="i4")
    layout[:] = h5py.VirtualSource("mid.h5", "v", shape=(4, 4))
    with h5py.File(nginx_server.root / "top.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=7)
    with pytest.raises(h5tile.VirtualSourceError, match="virtual dataset itself"):
        h5tile.from_file(f"{nginx_server.url}/top.h5", "/v")


def test_a_source_mapped_in_another_shape_is_refused_by_name(nginx_server):
    # h5py's own example: 1-D sources stacked into a 2-D layout. Locally HDF5 reads it; over HTTP
    # HDF5 would open the sources itself, which its driver refuses: a clear error, not fill values.
    for i in range(2):
        with h5py.File(nginx_server.root / f"row{i}.h5", "w") as f:
            f["data"] = np.arange(4, dtype="i4") + 10 * i
    layout = h5py.VirtualLayout(shape=(2, 4), dtype="i4")
    for i in range(2):
        layout[i] = h5py.VirtualSource(f"row{i}.h5", "data", shape=(4,))
    with h5py.File(nginx_server.root / "stacked.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=-1)
    assert local_read(nginx_server.root / "stacked.h5", "v").tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]
    with pytest.raises(h5tile.VirtualSourceError, match="row0.h5.*in another shape.*local files only"):
        h5tile.from_file(f"{nginx_server.url}/stacked.h5", "/v")


def test_the_command_reads_a_remote_virtual_layout(nginx_server, tmp_path):
    a = random_array("float32", (30, 20), seed=8)
    h5tile.to_file(a, nginx_server.root / "v.h5", "/data", ranks=3, layout="virtual").wait()
    url = f"{nginx_server.url}/v.h5?X-Amz-Signature=SECRET3"
    target = f"{nginx_server.url}/v.h5:/data?X-Amz-Signature=SECRET3"  # the dataset before the query
    out = subprocess.run([str(H5TILE), "verify", "--read", target], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SECRET3" not in out.stdout + out.stderr
    h5tile.consolidate(url, "/data", tmp_path / "one.h5")
    assert same_bytes(local_read(tmp_path / "one.h5", "data"), a)


@pytest.mark.parametrize("forged", ["../outside.h5", "other_host"])
def test_a_tile_index_that_names_a_place_outside_is_not_followed(nginx_server, fault_server, forged):
    # The index (h5tile's attributes beside the mapping) is what an early read starts from: a name
    # in it outside the folder makes it unusable, and the read follows the mapping, fetching nothing
    # from the place the index names.
    a = random_array("int16", (40, 12), seed=9)
    path = nginx_server.root / "v.h5"
    h5tile.to_file(a, path, "/data", ranks=2, layout="virtual").wait()
    with h5py.File(path, "r") as f:
        files = f["data"].attrs["h5tile_tile_files"]
        first = f["data"].virtual_sources()[0].file_name
    fault_server.put("/t.h5", (nginx_server.root / first).read_bytes())
    name = f"{fault_server.url}/t.h5" if forged == "other_host" else forged
    assert len(name) <= files.dtype.itemsize
    forged_files = files.copy()
    forged_files[0] = name.encode()
    with h5py.File(path, "r+") as f:
        f["data"].attrs.modify("h5tile_tile_files", forged_files)
    before = len(nginx_server.requests())
    assert same_bytes(h5tile.from_file(f"{nginx_server.url}/v.h5", "/data"), a)
    assert not any("outside" in line for line in nginx_server.requests()[before:])
    assert fault_server.log == []


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (scripts/install_deps.sh installs it)")
@pytest.mark.parametrize("irregular", [False, True])
def test_no_local_source_file_is_opened(nginx_server, tmp_path, irregular):
    # Sources naming local files (absolute, and relative ones that exist in the working directory):
    # neither h5tile nor HDF5 opens any of them, in a read, in describe or in the command's verify.
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f["data"] = np.arange(16, dtype="i4").reshape(4, 4)
    names = [str(tmp_path / "src.h5"), "src.h5"] if irregular else [str(tmp_path / "src.h5"), "../src.h5"]
    rows = 2 if irregular else 4  # irregular: every other row of each source (HDF5 reads it itself)
    layout = h5py.VirtualLayout(shape=(2 * rows, 4), dtype="i4")
    for i, name in enumerate(names):
        source = h5py.VirtualSource(name, "data", shape=(4, 4))
        layout[rows * i:rows * (i + 1)] = source[::2] if irregular else source
    with h5py.File(nginx_server.root / "m.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=7)
    url = f"{nginx_server.url}/m.h5"
    code = (f"import sys; sys.path.insert(0, {str(BUILD / 'python')!r}); import h5tile\n"
            f"for f in (lambda: h5tile.from_file({url!r}, '/v'), lambda: h5tile.describe({url!r}, '/v')):\n"
            "    try: f()\n"
            "    except h5tile.Error as e: print('refused:', e)\n")
    log = tmp_path / "strace.log"
    for command in ([sys.executable, "-c", code], [str(H5TILE), "verify", "--read", "--no-probe", f"{url}:/v"]):
        out = subprocess.run(["strace", "-f", "-e", "trace=open,openat,openat2,stat,newfstatat,statx", "-o", str(log),
                              *command], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        if "Operation not permitted" in out.stderr and "ptrace" in out.stderr:
            pytest.skip("strace is not permitted here (ptrace)")
        opened = [line for line in log.read_text().splitlines() if "src.h5" in line]
        assert opened == [], opened
        assert "refused" in out.stdout or "problem" in out.stdout, out.stdout + out.stderr


def test_verify_checksums_checks_remote_tiles(nginx_server):
    a = random_array("float32", (40, 16), seed=12)
    path = nginx_server.root / "v.h5"
    h5tile.to_file(a, path, "/data", ranks=4, layout="virtual").wait()
    url = f"{nginx_server.url}/v.h5"
    assert same_bytes(h5tile.from_file(url, "/data", verify_checksums=True), a)
    with h5py.File(path, "r") as f:
        tile = nginx_server.root / f["data"].virtual_sources()[3].file_name
    with h5py.File(tile, "r") as f:
        offset = f["tile"].id.get_offset()
    data = bytearray(tile.read_bytes())
    data[offset] ^= 0xFF  # a byte of its data: its metadata (identity) is unchanged
    tile.write_bytes(bytes(data))
    with pytest.raises(h5tile.VirtualSourceError, match="fails its checksum"):
        h5tile.from_file(url, "/data", verify_checksums=True)
    out = subprocess.run([str(H5TILE), "verify", "--read", f"{url}:/data"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 1 and "checksum" in out.stdout, out.stdout + out.stderr


def test_many_remote_tile_objects_share_a_bounded_set_of_connections(nginx_server):
    """A remote virtual dataset of 200 tile objects, all held open by a batched read: the
    connections come from one cache for the process (bounded), not a few descriptors per object
    (600 more descriptors before; 10,000 tiles would have run out of them)."""
    a = random_array("int16", (400, 64), seed=9)
    path = nginx_server.root / "many.h5"
    h5tile.to_file(a, path, "/data", ranks=200, layout="virtual").wait()
    url = f"{nginx_server.url}/many.h5"
    before = len(os.listdir("/proc/self/fd"))
    most = before
    whole = np.empty_like(a)
    for block, (row, col) in h5tile.from_file_batched(url, "/data", (8, 64)):
        whole[row:row + block.shape[0], col:col + block.shape[1]] = block
        most = max(most, len(os.listdir("/proc/self/fd")))
    assert same_bytes(whole, a)
    # Bounded by the shared cache (32 connections) and the idle handles (32, two descriptors each),
    # whatever the number of tiles: 418 more with the handles kept per object, ~600 before sharing.
    assert most - before <= 110, f"{most - before} more descriptors while 200 tile objects were open"
