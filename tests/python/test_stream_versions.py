"""A read sees one version of a file: a from_file_batched iteration over a file that another
writer replaces meanwhile yields only blocks of the version it opened, or stops with an error
that says the file was replaced; it never yields a block of the new version. A whole read
(from_file, read_box) opens the file once and is single-version too."""
import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from conftest import BUILD, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import settings  # noqa: E402

LAYOUTS = ["virtual", "virtual gzip", "contiguous", "chunked"]
REPLACEMENTS = ["to_file keep_previous=False", "to_file keep_previous=True", "h5py and os.replace"]
SHAPE = (60, 40)
BLOCK = (5, 40)  # 12 blocks; 4 tiles of 15 rows each


def versions():
    old = np.arange(SHAPE[0] * SHAPE[1], dtype=np.int32).reshape(SHAPE)
    return old, old + 1_000_000  # no element of one equals an element of the other


def write(array, out, layout, **options):
    """h5tile.to_file of `array` as `layout` ("virtual gzip": compressed tiles, read through HDF5)."""
    kind, _, compression = layout.partition(" ")
    h5tile.to_file(array, out, "/data", layout=kind, compression=compression or None, **options).wait()


def replace(out, new, how, layout):
    """Replaces `out` with a file whose "/data" is `new`."""
    if how.startswith("to_file"):
        write(new, out, layout, ranks=3, keep_previous=how.endswith("True"))
    else:
        temp = out.parent / "rewritten.h5"
        with h5py.File(temp, "w") as f:
            f.create_dataset("data", data=new, chunks=(7, 40) if layout == "chunked" else None)
        os.replace(temp, out)


@pytest.fixture(params=[True, False], ids=["early reads", "reads after the mapping"])
def early_reads(request):
    before = settings.early_reads()
    settings.set_early_reads(request.param)
    yield request.param
    settings.set_early_reads(before)


@pytest.mark.parametrize("how", REPLACEMENTS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_batched_read_yields_only_the_version_it_opened(tmp_path, layout, how, early_reads):
    out = tmp_path / "f.h5"
    old, new = versions()
    write(old, out, layout, ranks=4)
    blocks = h5tile.from_file_batched(out, "/data", BLOCK)
    seen = [next(blocks) for _ in range(2)]  # and more read ahead
    replace(out, new, how, layout)
    assert same_bytes(h5tile.from_file(out, "/data"), new)  # the replacement is in place
    seen += list(blocks)
    assert len(seen) == 12
    for block, (r, c) in seen:
        assert same_bytes(block, old[r:r + block.shape[0], c:c + block.shape[1]]), (r, c)
    # A new iteration reads the new version.
    for block, (r, c) in h5tile.from_file_batched(out, "/data", BLOCK):
        assert same_bytes(block, new[r:r + block.shape[0], c:c + block.shape[1]]), (r, c)


@pytest.mark.parametrize("early", ["1", "0"])
def test_a_batched_read_that_cannot_hold_every_tile_stops_naming_the_replacement(tmp_path, early):
    # With few descriptors (RLIMIT_NOFILE 128), an iteration holds only some of 48 tiles open;
    # once the others are removed (keep_previous=False), it cannot go on with the version it
    # began: it raises, saying so, and yields no block of the new version.
    out = tmp_path / "f.h5"
    rows = 48 * 5
    old = np.arange(rows * 8, dtype=np.int32).reshape(rows, 8)
    h5tile.to_file(old, out, "/data", ranks=48, layout="virtual").wait()
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        sys.path.insert(0, {str(BUILD / "python")!r})
        import h5tile
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        old = np.arange({rows} * 8, dtype=np.int32).reshape({rows}, 8)
        blocks = h5tile.from_file_batched({str(out)!r}, "/data", (5, 8))
        offsets = []
        try:
            for i, (block, (r, c)) in enumerate(blocks):
                if i == 1:
                    h5tile.to_file(old + 1000000, {str(out)!r}, "/data", ranks=3, keep_previous=False, layout="virtual").wait()
                assert np.array_equal(block, old[r:r + 5]), ("a block of another version", r)
                offsets.append(r)
        except h5tile.VirtualSourceError as e:
            print("raised after", len(offsets), "blocks:", e)
        else:
            print("read", len(offsets), "blocks")
        """)], capture_output=True, text=True, timeout=300, env=dict(os.environ, H5TILE_EARLY_READS=early))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "raised after" in done.stdout, done.stdout
    assert "f.h5" in done.stdout and "replaced during the iteration" in done.stdout, done.stdout
    assert not done.stderr, done.stderr


def test_whole_reads_are_single_version_while_another_process_replaces_the_file(tmp_path):
    # Another process replaces the file again and again (keep_previous=False); every whole read
    # here returns one version entirely, or fails with an h5tile error: never a mix.
    out = tmp_path / "f.h5"
    old, new = versions()
    h5tile.to_file(old, out, "/data", ranks=4).wait()
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys
        import numpy as np
        sys.path.insert(0, {str(BUILD / "python")!r})
        import h5tile
        old = np.arange({SHAPE[0] * SHAPE[1]}, dtype=np.int32).reshape({SHAPE})
        i = 0
        while not os.path.exists({str(stop)!r}):
            i += 1
            h5tile.to_file(old + 1000000 * (i % 2), {str(out)!r}, "/data", ranks=2 + i % 3,
                           keep_previous=False).wait()
        """)])
    try:
        whole = box = 0
        for _ in range(60):
            try:
                got = h5tile.from_file(out, "/data")
                assert same_bytes(got, old) or same_bytes(got, new), "a mix of two versions"
                whole += 1
                part = h5tile.read_box(out, "/data", (10, 0), (40, 40))
                assert same_bytes(part, old[10:50]) or same_bytes(part, new[10:50]), "a mix of two versions"
                box += 1
            except (h5tile.VirtualSourceError, h5tile.NoSuchFileError, h5tile.NotHdf5FileError):
                pass  # a tile removed by the next write while this read had its mapping: an error, not a mix
        assert whole > 0 and box > 0
    finally:
        stop.touch()
        writer.wait(timeout=120)
    assert writer.returncode == 0
