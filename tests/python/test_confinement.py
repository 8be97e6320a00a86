"""What a write may create, through every Python entry point and the command: nothing outside the
folder of its file and the file's `.tiles` folder, whatever the dataset name (write_tile once
created tile folders wherever a name of '..' components led: one in the root of /tmp). And paths
that are symbolic-link loops: reported as loops (ELOOP), never as missing files. The MPI and
Legate entry points are tested in test_mpi.py and tests/legate/."""
import errno
import os
import subprocess
import sys
import uuid

import h5py
import numpy as np
import pytest

from conftest import BUILD, OneRank

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
# The file is written three folders down: each escape lands inside the test's folder, where the
# listing sees it; the long chain would land at the root, checked by its unique name.
# ('a/../../x' once became '/../../x', a folder at the root of the file system.)
ROOT_ESCAPE = f"h5tile-escaped-{uuid.uuid4().hex}"
ESCAPES = [f"/a/../../../{ROOT_ESCAPE}", f"/../{ROOT_ESCAPE}", f"a/../../{ROOT_ESCAPE}", "/a/./b", "/a//b", "/..",
           "/a/..", "/.", "", "/" + "../" * 40 + ROOT_ESCAPE]
PYTHON_ONLY = [f"/a\0/../../{ROOT_ESCAPE}"]  # a NUL, which no command line can carry


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture()
def place(tmp_path):
    """(target, a check that nothing appeared)."""
    target = tmp_path / "p" / "q" / "r" / "out.h5"
    target.parent.mkdir(parents=True)
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f["d"] = np.arange(12, dtype=np.int32)
    before = tree(tmp_path)

    def nothing_created(name):
        assert tree(tmp_path) == before, f"dataset name {name!r}"
        assert not os.path.exists(os.path.join("/", ROOT_ESCAPE))

    yield target, nothing_created


def refused(call, name):
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        call()
    message = str(e.value)
    assert "component" in message or "empty" in message or "NUL" in message, message
    return message


@pytest.mark.parametrize("name", ESCAPES + PYTHON_ONLY)
def test_write_tile_refuses_names_that_leave_the_tile_folder(place, name):
    target, nothing_created = place
    a = np.arange(12, dtype=np.int32)
    message = refused(lambda: h5tile.write_tile(a, target, name, comm=OneRank(), offset=(0,), global_shape=(12,)),
                      name)
    assert "out.h5" in message  # names the file
    nothing_created(name)


@pytest.mark.parametrize("name", ESCAPES + PYTHON_ONLY)
def test_to_file_consolidate_and_split_refuse_them_too(place, name):
    target, nothing_created = place
    a = np.arange(12, dtype=np.int32)
    refused(lambda: h5tile.to_file(a, target, name, ranks=2), name)
    h5tile.fence()
    refused(lambda: h5tile.consolidate(target.parents[3] / "in.h5", name, target), name)
    refused(lambda: h5tile.split(target.parents[3] / "in.h5", name, target, tiles=2), name)
    nothing_created(name)


@pytest.mark.parametrize("command", ["consolidate", "split"])
@pytest.mark.parametrize("name", [n for n in ESCAPES if n.startswith("/")])
def test_the_command_refuses_them(place, command, name):
    target, nothing_created = place
    out = subprocess.run([str(H5TILE), command, f"in.h5:{name}", os.path.relpath(target, target.parents[3])],
                         cwd=target.parents[3], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert "h5tile: error:" in out.stderr and "component" in out.stderr, out.stderr
    nothing_created(name)


@pytest.fixture()
def loop(tmp_path):
    """a.h5 -> b.h5 -> a.h5."""
    os.symlink("b.h5", tmp_path / "a.h5")
    os.symlink("a.h5", tmp_path / "b.h5")
    return tmp_path / "a.h5"


def is_loop_error(e, name="a.h5"):
    assert isinstance(e, h5tile.IoError) and isinstance(e, OSError), repr(e)
    assert e.errno == errno.ELOOP, (e.errno, str(e))
    assert "symbolic-link loop" in str(e) and name in str(e), str(e)


@pytest.mark.parametrize("call", ["from_file", "describe", "from_file_batched", "read_box", "consolidate"])
def test_reads_of_a_link_loop_say_it_is_a_loop(loop, tmp_path, call):
    calls = {
        "from_file": lambda: h5tile.from_file(loop, "/d"),
        "describe": lambda: h5tile.describe(loop, "/d"),
        "from_file_batched": lambda: h5tile.from_file_batched(loop, "/d", (2,)),
        "read_box": lambda: h5tile.read_box(loop, "/d", (0,), (1,)),
        "consolidate": lambda: h5tile.consolidate(loop, "/d", tmp_path / "c.h5"),
    }
    with pytest.raises(OSError) as e:
        calls[call]()
    is_loop_error(e.value)
    with pytest.raises(OSError) as e:  # a loop on the way to the file
        h5tile.from_file(loop / "x.h5", "/d")
    is_loop_error(e.value, "x.h5")


@pytest.mark.parametrize("mode", ["w", "a", "x"])
def test_writes_to_a_link_loop_say_it_is_a_loop_and_leave_the_links(loop, tmp_path, mode):
    with pytest.raises(OSError) as e:
        h5tile.to_file(np.arange(4), loop, "/d", mode=mode)
    is_loop_error(e.value)
    h5tile.fence()
    assert os.path.islink(tmp_path / "a.h5") and os.path.islink(tmp_path / "b.h5")
    assert sorted(os.listdir(tmp_path)) == ["a.h5", "b.h5"]


@pytest.mark.parametrize("args", [["info", "a.h5"], ["info", "a.h5", "--json"], ["verify", "a.h5"],
                                  ["consolidate", "a.h5:/d", "c.h5"], ["split", "a.h5:/d", "s.h5"]])
def test_the_command_says_it_is_a_loop(loop, tmp_path, args):
    out = subprocess.run([str(H5TILE), *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    assert "symbolic-link loop" in out.stderr + out.stdout and "a.h5" in out.stderr + out.stdout, out
    assert "does not exist" not in out.stderr + out.stdout, out
