"""A write replaces only regular files: a character or block device, a FIFO, a socket or a folder
named as the output is refused by every writer (to_file in every layout and mode, h5tile.dask,
the command's consolidate and split, --force or not) and left exactly as it was. The devices are
made by the test in its own folder (mknod, as root); the machine's /dev is never touched."""
import os
import socket
import stat
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
NULL = os.makedev(1, 3)  # the numbers of /dev/null: writing to this node would discard the data


def make_node(kind, path):
    if kind in ("character", "block"):
        if os.geteuid() != 0:
            pytest.skip("mknod of a device needs root")
        mode = stat.S_IFCHR if kind == "character" else stat.S_IFBLK
        os.mknod(path, 0o666 | mode, NULL if kind == "character" else os.makedev(7, 250))
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        # Bound by a name relative to its folder: a socket's path is limited to 108 bytes, and a
        # test folder under a long TMPDIR (CI's) is longer.
        s = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            s.bind(path.name)
        finally:
            os.chdir(here)
            s.close()
    return os.lstat(path)


def unchanged(path, before):
    after = os.lstat(path)
    return (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)


KINDS = ["character", "block", "fifo", "socket"]


@pytest.mark.parametrize("layout", ["contiguous", "chunked", "virtual"])
@pytest.mark.parametrize("mode", ["w", "a", "x"])
@pytest.mark.parametrize("kind", KINDS)
def test_to_file_refuses_a_device_fifo_or_socket_and_leaves_it(tmp_path, kind, mode, layout):
    target = tmp_path / "node"
    before = make_node(kind, target)
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        h5tile.to_file(np.arange(10, dtype="i4"), target, "/x", layout=layout, mode=mode).wait()
    assert str(target) in str(e.value) and ("device" in str(e.value) or kind.upper() in str(e.value).upper())
    assert unchanged(target, before)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node"], "nothing left beside it"


@pytest.mark.parametrize("kind", KINDS)
def test_a_symbolic_link_to_a_device_is_refused_too(tmp_path, kind):
    target = tmp_path / "node"
    before = make_node(kind, target)
    (tmp_path / "link.h5").symlink_to(target)
    with pytest.raises(h5tile.InvalidArgumentError):
        h5tile.to_file(np.arange(10, dtype="i4"), tmp_path / "link.h5", "/x").wait()
    assert unchanged(target, before) and (tmp_path / "link.h5").is_symlink()


def test_dask_to_file_refuses_a_device(tmp_path):
    da = pytest.importorskip("dask.array")
    import h5tile.dask
    target = tmp_path / "node"
    before = make_node("character", target)
    with pytest.raises(h5tile.InvalidArgumentError, match="replaces only regular files"):
        h5tile.dask.to_file(da.arange(100, chunks=10), target, "/x")
    assert unchanged(target, before)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node"], "no tiles left beside it"


@pytest.mark.parametrize("command", ["consolidate", "split"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_command_refuses_a_device_with_force(tmp_path, kind, command):
    src = tmp_path / "in.h5"
    with h5py.File(src, "w") as f:
        f["data"] = np.arange(100, dtype="f4").reshape(10, 10)
    target = tmp_path / "node"
    before = make_node(kind, target)
    out = subprocess.run([str(H5TILE), command, f"{src}:/data", str(target), "--force"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode != 0 and "replaces only regular files" in out.stderr, out.stderr
    assert unchanged(target, before)


def test_an_output_name_ending_in_a_slash_or_empty_is_a_clear_error(tmp_path):
    a = np.arange(10, dtype="i4")
    with pytest.raises(h5tile.IsADirectoryPathError, match="ending in '/'"):
        h5tile.to_file(a, f"{tmp_path}/out.h5/", "/x").wait()
    with pytest.raises(h5tile.InvalidArgumentError, match="empty"):
        h5tile.to_file(a, "", "/x").wait()
    assert list(tmp_path.iterdir()) == []


def test_a_rewrite_of_a_virtual_layout_never_removes_special_files_in_its_tiles_folder(tmp_path):
    # The clean-up of OUT.tiles/ removes the generations it replaced (regular files, links,
    # folders), never a device, FIFO or socket that someone put there.
    out = tmp_path / "out.h5"
    h5tile.to_file(np.arange(100, dtype="i4"), out, "/x", ranks=2, layout="virtual", keep_previous=False).wait()
    tiles = tmp_path / "out.h5.tiles"
    nodes = {}
    for kind in KINDS:
        for folder in (tiles, tiles / "x"):
            path = folder / f"{kind}-node"
            try:
                nodes[path] = make_node(kind, path)
            except pytest.skip.Exception:
                pass
    for _ in range(2):
        h5tile.to_file(np.arange(100, 200, dtype="i4"), out, "/x", ranks=3, layout="virtual",
                       keep_previous=False).wait()
    assert all(path.exists() or path.is_socket() for path in nodes) and all(unchanged(p, s) for p, s in nodes.items())
    with h5py.File(out, "r") as f:
        assert (f["x"][...] == np.arange(100, 200)).all()
