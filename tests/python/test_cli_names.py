"""The h5tile command on files whose names are hostile: link names with newlines, terminal
escape sequences, tabs, bytes that are not UTF-8, names that look like the command's own
'problem:' lines, and '..' (which HDF5 allows and h5tile's dataset paths cannot spell). Text
output escapes every name, so that each line is the command's own; --json gives the exact names.
The listings are compared with h5py's visititems, and the escaping with escaped() below, an
independent statement of the rule that `h5tile info --help` documents."""
import json
import re
import struct
import subprocess

import h5py
import numpy as np
import pytest

from test_cli import H5TILE

# Link names (bytes, as HDF5 stores them) of datasets at the root.
HOSTILE = [
    b"ok",
    b"x\nproblem: fake injected line",
    b"problem: /ok: a name that looks like a report line",
    b"cr\rproblem: carriage return",
    b"esc\x1b[2J\x1b[31mred\x1b[0m",
    b"title\x1b]0;owned\x07",
    b"tab\there",
    b"bad\xff\xfe utf-8",
    b"cut \xe2\x82",
    b"surrogate \xed\xa0\x80",
    b"c1 \xc2\x85 next line",
    b"bidi \xe2\x80\xae reversed",
    b"del\x7f",
    b"back\\x0aslash",  # a literal backslash: must not print as the escape of a newline
    b"back\nslash",
    "ünïcødé データ".encode(),
]
# Groups with hostile names, and datasets in them.
IN_GROUPS = [b"g\nproblem: group/d", b"g\nproblem: group/e\x1b[1m", b"sub/z"]
# '..' links: at the root and in a group (made with the low-level API; h5py reaches them).
DOTDOT = [b"..", b"sub/.."]

BIDI = "\u200e\u200f\u2028\u2029" + "".join(map(chr, range(0x202A, 0x202F))) + "".join(map(chr, range(0x2066, 0x206A)))


def escaped(name: bytes) -> str:
    """How the command prints a name: C-style escapes for control characters, \\uXXXX for C1
    controls, separators and bidirectional controls, \\xNN for bytes that are not UTF-8, and \\\\."""
    out = []
    for ch in name.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in "\\\n\r\t":
            out.append({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or ch in BIDI:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def make_hostile(path):
    with h5py.File(path, "w") as f:
        for i, name in enumerate(HOSTILE + IN_GROUPS):
            parent, _, leaf = name.rpartition(b"/")
            group = f.require_group(parent) if parent else f
            h5py.h5d.create(group.id, leaf, h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((3,)))
            group[leaf][...] = np.arange(3) + i
        for name in DOTDOT:
            parent, _, leaf = name.rpartition(b"/")
            group = f.require_group(parent) if parent else f
            h5py.h5d.create(group.id, leaf, h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((2,)))


def h5py_datasets(path):
    """Full names of the file's datasets, as bytes, from h5py's visititems (the reference)."""
    names = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: names.append(n if isinstance(n, bytes) else n.encode())
                     if isinstance(o, h5py.Dataset) else None)
    return sorted(b"/" + n for n in names)


def h5py_links(path):
    """The same from h5py's link iteration and H5Gget_objinfo, which open no dataset: where one
    is damaged, visititems fails on the whole file (h5tile's listing must not)."""
    def walk(group, prefix):
        for name in group:
            kind = h5py.h5g.get_objinfo(group, name).type
            if kind == h5py.h5g.GROUP:
                yield from walk(h5py.h5g.open(group, name), prefix + b"/" + name)
            elif kind == h5py.h5g.DATASET:
                yield prefix + b"/" + name
    with h5py.File(path, "r") as f:
        return sorted(walk(h5py.h5g.open(f.id, b"/"), b""))


def run(*args, cwd):
    """Runs the command; its output as text (bytes that are not UTF-8 would fail here)."""
    proc = subprocess.run([str(H5TILE), *args], cwd=cwd, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


# No control character but the newline ending each line, nothing that reorders a line.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f" + BIDI + "]")


@pytest.fixture()
def hostile(tmp_path):
    make_hostile(tmp_path / "names.h5")
    names = h5py_datasets(tmp_path / "names.h5")
    assert len(names) == len(HOSTILE) + len(IN_GROUPS) + len(DOTDOT) and h5py_links(tmp_path / "names.h5") == names
    return names


@pytest.mark.parametrize("read", [False, True])
def test_verify_text_lines_are_the_commands_own(hostile, tmp_path, read):
    code, out, err = run("verify", "names.h5", *(["--read"] if read else []), cwd=tmp_path)
    assert code == 0, out + err
    assert not UNSAFE.search(out), out
    lines = out.splitlines()
    assert len(lines) == len(hostile), out  # one line per dataset, no more
    assert not [line for line in lines if line.startswith("problem:")], out
    expected = []
    for name in hostile:
        if name.split(b"/")[-1] == b"..":
            expected.append(f"skipped: {escaped(name)}: unreachable by path: ")
        else:
            expected.append(f"ok: {escaped(name)}{' (every byte read)' if read else ''}")
    for line, want in zip(lines, expected):
        assert line.startswith(want) if want.startswith("skipped") else line == want, (line, want)
    # Escaping is one to one: the two names that differ only by a backslash print differently.
    suffix = " (every byte read)" if read else ""
    assert f"ok: /back\\\\x0aslash{suffix}" in lines and f"ok: /back\\nslash{suffix}" in lines


def test_info_lists_every_dataset_escaped_and_goes_on_past_dotdot(hostile, tmp_path):
    code, out, err = run("info", "names.h5", cwd=tmp_path)
    assert code == 0, out + err
    assert not UNSAFE.search(out), out
    lines = out.splitlines()
    assert lines[0] == "names.h5"
    # The tree: each group once (escaped, with a slash), then each dataset by its last name.
    groups = sorted({name.rsplit(b"/", 1)[0] for name in hostile if name.count(b"/") > 1})
    assert len(lines) == 1 + len(groups) + len(hostile), out
    for group in groups:
        assert f"  {escaped(group.rsplit(b'/', 1)[1])}/" in lines, (group, out)
    listed = [line.strip() for line in lines[1:] if not line.endswith("/")]
    assert len(listed) == len(hostile)
    for name, line in zip(hostile, listed):
        leaf = escaped(name.rsplit(b"/", 1)[1])
        if name.endswith(b"/.."):
            assert line.startswith(f"{leaf}  unreachable: dataset name"), line
        else:
            assert line.startswith(f"{leaf}  int32 [3]  contiguous"), line


def exact(entry):
    return bytes.fromhex(entry["name_hex"]) if "name_hex" in entry else entry["name"].encode()


def is_utf8(name: bytes) -> bool:
    try:
        name.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@pytest.mark.parametrize("command", ["info", "verify"])
def test_json_gives_the_exact_names_that_h5py_lists(hostile, tmp_path, command):
    code, out, err = run(command, "names.h5", "--json", cwd=tmp_path)
    assert code == 0, out + err
    doc = json.loads(out)
    assert [exact(d) for d in doc["datasets"]] == hostile
    for d in doc["datasets"]:
        # name_hex only where the name is not UTF-8; there "name" shows the bad bytes as U+FFFD.
        assert ("name_hex" in d) == (not is_utf8(exact(d))), d
        if exact(d).endswith(b"/.."):
            assert "dataset name" in (d["unreachable"] if command == "info" else d["skipped"]), d
        elif command == "info":
            assert d["shape"] == [3] and d["dtype"] == "int32", d
        else:
            assert d["ok"] and d["problems"] == [] and "skipped" not in d, d
    if command == "verify":
        assert doc["ok"] and doc["skipped"] == len(DOTDOT)
    else:
        assert doc["errors"] == 0


def test_errors_and_other_commands_escape_names(hostile, tmp_path):
    # An error naming a dataset the user typed: one line on stderr, the name escaped.
    code, out, err = run("info", "names.h5:/nope\nproblem: forged", cwd=tmp_path)
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("h5tile: error: ") and "/nope\\nproblem: forged" in err
    # A file whose own name holds a newline and an escape sequence.
    weird = "a\nproblem: b\x1b[0m.h5"
    (tmp_path / "names.h5").rename(tmp_path / weird)
    code, out, err = run("info", weird, cwd=tmp_path)
    assert code == 0 and out.splitlines()[0] == escaped(weird.encode()), out + err
    code, out, err = run("verify", weird + ":/tab\there", cwd=tmp_path)
    assert code == 0 and out == "ok: /tab\\there\n", out + err
    code, out, err = run("consolidate", weird + ":/esc\x1b[2J\x1b[31mred\x1b[0m", "out\n.h5", cwd=tmp_path)
    assert code == 0 and len(out.splitlines()) == 1 and not UNSAFE.search(out), out + err
    assert out.startswith(escaped(weird.encode()) + ":/esc\\x1b[2J") and " -> out\\n.h5:/esc" in out
    with h5py.File(tmp_path / "out\n.h5", "r") as f:
        assert list(f["esc\x1b[2J\x1b[31mred\x1b[0m"][...]) == [4, 5, 6]
    code, out, err = run("split", weird + ":/ok", "tiles\t.h5", "--tiles", "2", cwd=tmp_path)
    assert code == 0 and len(out.splitlines()) == 1 and " -> tiles\\t.h5:/ok (2 tiles" in out, out + err


def damage_dataspace(path, extent):
    """Makes the rank in the dataspace message of the one dataset of shape (extent,) 40 (HDF5's
    limit is 32), so that HDF5 fails to open that dataset alone: the file lists, and its other
    datasets open. The message (version 1: version, rank, flags, 5 reserved bytes, then the
    extents) is found by its 8-byte extent, which is unique in the file."""
    data = bytearray(path.read_bytes())
    found = [m.start() for m in re.finditer(re.escape(bytes([1, 1, 1, 0, 0, 0, 0, 0]) + struct.pack("<Q", extent)),
                                            data)]
    assert len(found) == 1, found
    data[found[0] + 1] = 40
    path.write_bytes(bytes(data))


def test_one_damaged_dataset_is_marked_and_the_rest_listed(tmp_path):
    path = tmp_path / "damaged.h5"
    with h5py.File(path, "w") as f:
        f["a"] = np.arange(10)
        f["b_damaged"] = np.zeros(123457, "u1")
        f["c\nproblem: forged"] = np.arange(5)
        f.create_group("z")["d"] = np.arange(3)
    damage_dataspace(path, 123457)
    names = h5py_links(path)
    assert len(names) == 4
    with pytest.raises(KeyError, match="dimensionality is too large"):
        h5py_datasets(path)  # h5py's visititems stops at the damaged dataset
    code, out, err = run("info", "damaged.h5", cwd=tmp_path)
    assert code == 1, out + err  # listed, with the damaged dataset marked
    lines = out.splitlines()
    assert len(lines) == 1 + 1 + len(names), out  # the file, group z, one line per dataset
    assert lines[1].startswith("  a  int64 [10]") and lines[-1].startswith("    d  int64 [3]"), out
    assert lines[2].startswith("  b_damaged  error: ") and "damaged.h5" in lines[2], out
    assert lines[3].startswith("  c\\nproblem: forged  int64 [5]"), out
    code, out, err = run("info", "damaged.h5", "--json", cwd=tmp_path)
    doc = json.loads(out)
    assert code == 1 and [exact(d) for d in doc["datasets"]] == names and doc["errors"] == 1, out + err
    assert "error" in doc["datasets"][1] and "shape" not in doc["datasets"][1]
    code, out, err = run("verify", "damaged.h5", cwd=tmp_path)
    lines = out.splitlines()
    assert code == 1, out + err
    assert lines[0] == "ok: /a" and lines[-2] == "ok: /c\\nproblem: forged" and lines[-1] == "ok: /z/d", out
    assert all(line.startswith("problem: /b_damaged: ") for line in lines[1:-2]) and len(lines) > 3, out
