"""h5py's write API for the structure of a file through h5tile.File (issue 41): file modes,
create_group / require_group, del, move, links and datasets made by ``group[name] = ...``, copy
(within a file and between files), create_dataset / require_dataset, resize and write_direct.

Each case runs the same statements through h5py on one copy of a file and through h5tile on
another (the statements see the library as ``m`` and the file as ``f``); h5py then reads both
copies, which must hold the same thing: names in order (creation order where tracked), kinds of
links and where they lead, which names are hard links to one object, every dataset's shape,
maxshape, layout, chunks, filters, fill value, dtype and values, and every attribute. A statement
h5py refuses must be refused by h5tile with an exception of h5py's class (h5tile's own classes
derive from the built-in ones, so ``isinstance``). A disagreement with h5py is marked xfail
(strict), naming the difference."""
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

try:
    import hdf5plugin
except ImportError:  # pragma: no cover - installed by scripts/install_deps.sh
    hdf5plugin = None

# Some cases leave the dtype out on purpose (h5py's default, float32), which h5py 3.16 warns of.
pytestmark = pytest.mark.filterwarnings("ignore:Creating a dataset without passing data or dtype")

LIBRARIES = {"h5py": h5py, "h5tile": h5tile}
NAME = "f.h5"  # the file the statements get as f; other.h5 beside it (external links, copies)


# -- the file every case starts from (made by h5py, copied for each library)
def seed(folder):
    folder.mkdir()
    with h5py.File(folder / "other.h5", "w") as o:
        x = o.create_dataset("x", data=np.arange(24, dtype="i2").reshape(4, 6), chunks=(2, 3), maxshape=(None, 6))
        x.attrs["unit"] = "m"
        o.create_group("og").attrs["k"] = 1
        o["og/y"] = np.linspace(0, 1, 5)
    with h5py.File(folder / NAME, "w") as f:
        f.attrs["title"] = "seed"
        g = f.create_group("g")
        g.attrs["level"] = 1
        a = g.create_dataset("a", data=np.arange(30, dtype="f8").reshape(5, 6), chunks=(2, 3),
                             maxshape=(None, None), compression="gzip", shuffle=True)
        a.attrs["scale"] = 0.5
        g.create_group("sub").create_dataset("leaf", data=[1, 2, 3])
        g["sl"] = h5py.SoftLink("/d")
        g["el"] = h5py.ExternalLink("other.h5", "/x")
        f.create_dataset("d", data=np.arange(12, dtype="f4").reshape(3, 4))  # contiguous
        f["d"].attrs["units"] = "K"
        f["d"].attrs["range"] = [0, 11]
        g.create_dataset("refs", data=[f["d"].ref, g["sub"].ref], dtype=h5py.ref_dtype)
        c = f.create_dataset("c", (10, 8), "f4", chunks=(4, 4), maxshape=(20, None), fillvalue=-1)
        c[:6] = np.arange(48, dtype="f4").reshape(6, 8)
        f["soft"] = h5py.SoftLink("/c")
        f["softg"] = h5py.SoftLink("/g")
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["hard"] = f["d"]
        f["ext"] = h5py.ExternalLink("other.h5", "/x")
        f["extg"] = h5py.ExternalLink("other.h5", "/og")
        t = f.create_group("ordered", track_order=True)
        for name in ("z", "b", "y", "a"):
            t.create_group(name)


def pair(tmp_path):
    """The seeded folders of (h5py, h5tile)."""
    theirs, ours = tmp_path / "h5py", tmp_path / "h5tile"
    seed(theirs)
    shutil.copytree(theirs, ours)
    return theirs, ours


# -- what h5py reads of a file
def plain(value):
    """A value as comparable data (NaN-safe: bytes)."""
    if isinstance(value, (str, bytes)):
        return value
    a = np.asarray(value)
    if a.dtype.kind == "O":
        return repr(a.tolist())
    return a.dtype.str, a.shape, a.tobytes()


def attributes(obj):
    return [(name, plain(obj.attrs[name])) for name in obj.attrs]


def dataset_state(f, ds):
    dcpl = ds.id.get_create_plist()
    filters = [(dcpl.get_filter(i)[0], dcpl.get_filter(i)[2]) for i in range(dcpl.get_nfilters())]
    if h5py.check_ref_dtype(ds.dtype) is not None:
        values = [f[r].name if r else None for r in ds[()].ravel()]
    else:
        values = plain(ds[()])
    return {"shape": ds.shape, "maxshape": ds.maxshape, "layout": dcpl.get_layout(), "chunks": ds.chunks,
            "compression": ds.compression, "compression_opts": ds.compression_opts, "shuffle": ds.shuffle,
            "fletcher32": ds.fletcher32, "filters": filters, "fillvalue": plain(ds.fillvalue),
            "dtype": ds.dtype.str, "strings": h5py.check_string_dtype(ds.dtype), "hdf5_type": ds.id.get_type().encode(), "values": values, "attr_order": dcpl.get_attr_creation_order(),
            "attrs": attributes(ds)}


def file_state(path):
    """Every link of the file in h5py's order: (path, link kind, target or the object's state);
    a name hard-linked to an object seen before says which (f[a].id == f[b].id)."""
    rows, seen = [], []
    with h5py.File(path, "r") as f:
        def walk(group, prefix):
            gcpl = group.id.get_create_plist()
            rows.append((prefix or "/", "group", gcpl.get_link_creation_order(), gcpl.get_attr_creation_order(),
                         attributes(group)))
            for name in group:
                full = f"{prefix}/{name}"
                link = group.get(name, getlink=True)
                if isinstance(link, h5py.SoftLink):
                    rows.append((full, "soft", link.path))
                    continue
                if isinstance(link, h5py.ExternalLink):
                    rows.append((full, "external", link.filename, link.path))
                    continue
                obj = group[name]
                same = [p for p, other in seen if other.id == obj.id]
                if same:
                    rows.append((full, "hard link to", same[0]))
                    continue
                seen.append((full, obj))
                if isinstance(obj, h5py.Group):
                    walk(obj, full)
                elif isinstance(obj, h5py.Dataset):
                    rows.append((full, "dataset", dataset_state(f, obj)))
                else:
                    rows.append((full, type(obj).__name__))
        walk(f["/"], "")
    return rows


def folder_state(folder):
    return {p.name: file_state(p) for p in sorted(folder.glob("*.h5"))}


# -- running the statements
def run(library, folder, statements, mode="a"):
    """Runs each statement (exec, names: m the library, f the file, np, folder, other, third) and
    returns what each raised (None where it did not)."""
    m = LIBRARIES[library]
    outcomes = []
    ns = {"m": m, "np": np, "h5py": h5py, "hdf5plugin": hdf5plugin, "folder": str(folder),
          "other": str(folder / "other.h5"), "third": str(folder / "third.h5")}
    ns["f"] = m.File(folder / NAME, mode)
    try:
        for statement in statements:
            try:
                exec(statement, ns)  # noqa: S102 - the test's own statements
                outcomes.append(None)
            except Exception as error:  # noqa: BLE001 - compared with h5py's
                outcomes.append(error)
    finally:
        for value in list(ns.values()):
            if isinstance(value, h5py.File):
                try:
                    value.close()
                except RuntimeError:  # a write h5py refused in mode "r" left metadata HDF5 cannot flush
                    pass
            elif isinstance(value, h5tile.File):
                value.close()
    return outcomes


def assert_same_outcomes(statements, theirs, ours):
    for statement, t, o in zip(statements, theirs, ours):
        if t is None:
            assert o is None, f"{statement}: h5py does it, h5tile raised {type(o).__name__}: {o}"
        else:
            assert isinstance(o, type(t)), (f"{statement}: h5py raised {type(t).__name__}: {t}; h5tile "
                                            f"{'did it' if o is None else f'raised {type(o).__name__}: {o}'}")


def assert_same_files(theirs, ours):
    a, b = folder_state(theirs), folder_state(ours)
    assert list(a) == list(b), "not the same files"
    for name in a:
        names = [row[0] for row in a[name]], [row[0] for row in b[name]]
        assert names[0] == names[1], f"{name}: names in order: h5py {names[0]}, h5tile {names[1]}"
        for row_a, row_b in zip(a[name], b[name]):
            assert row_a == row_b, f"{name}: h5py made {row_a}, h5tile {row_b}"


def check(tmp_path, statements, mode="a"):
    theirs, ours = pair(tmp_path)
    if isinstance(statements, str):
        statements = [statements]
    t = run("h5py", theirs, statements, mode)
    o = run("h5tile", ours, statements, mode)
    assert_same_outcomes(statements, t, o)
    assert_same_files(theirs, ours)


def cases(table, known=None, modes=None):
    """pytest params of {id: statements} (with each of `modes`: "id-mode"); `known` {id: reason}:
    h5tile differs from h5py there (xfail, strict: the day it agrees, the mark must go)."""
    known, params = known or {}, []
    for name, statements in table.items():
        for mode in modes or [None]:
            key, values = (name, [statements]) if mode is None else (f"{name}-{mode}", [statements, mode])
            marks = [pytest.mark.xfail(strict=True, reason=known[key])] if key in known else []
            params.append(pytest.param(*values, id=key, marks=marks))
    assert set(known) <= {p.id for p in params}, set(known) - {p.id for p in params}
    return params


# Exceptions of another class than h5py's (h5tile's classes derive from the built-in ones).
def _raises(call, h5py_class, h5py_message, h5tile_class):
    return f"{call}: h5py raises {h5py_class} ({h5py_message}); h5tile raises {h5tile_class}, not a {h5py_class}"



# -- groups
GROUPS = {
    "new": ["f.create_group('new')", "f.create_group('g/new')", "f['g'].create_group('rel')",
            "f['g'].create_group('/abs')"],
    "intermediate": "f.create_group('x/y/z')",
    "track_order": ["t = f.create_group('t', track_order=True)", "t.create_group('b')", "t.create_group('a')",
                    "t.create_dataset('c', data=[1])", "t['0'] = m.SoftLink('/d')", "t.attrs['z'] = 1",
                    "t.attrs['a'] = 2", "u = f.create_group('u', track_order=False)", "u.create_group('b')",
                    "u.create_group('a')"],
    "in_ordered_group": ["f['ordered'].create_group('c')", "f.create_group('ordered/0')"],
    "through_soft_link": ["f.create_group('softg/n')", "f['softg'].create_group('m')"],
    "through_external_link": "f.create_group('extg/n')",
    "in_external_group": "f['extg'].create_group('n')",
    "trailing_slash": "f.create_group('q/')",
    "dot": "f.create_group('./dot')",
    "dot_dot": "f['g'].create_group('../up')",  # HDF5: a link named '..' in /g
    "existing": ["f.create_group('g')", "f.create_group('g/sub')"],
    "existing_dataset": "f.create_group('d')",
    "existing_soft_link": "f.create_group('soft')",
    "dangling_soft_link": "f.create_group('dangling')",
    "require_existing": ["f.require_group('g')", "f.require_group('g/sub')", "f.require_group('softg')"],
    "require_new": ["f.require_group('r')", "f['g'].require_group('r2').create_group('q')",
                    "f.require_group('r3/deep')"],
    "require_dataset_there": "f.require_group('d')",
    "require_soft_link_to_dataset": "f.require_group('soft')",
    "require_dangling": "f.require_group('dangling')",
    "require_external": "f.require_group('ext')",
    "root": "f.create_group('/')",
}


GROUPS_DIFFER = {
    "dot_dot": "f['g'].create_group('../up'): h5py (HDF5) makes a group named '..' in /g and 'up' in it; h5tile "
               "raises InvalidArgumentError (a path with a '.' or '..' component)",
}


@pytest.mark.parametrize("statements", cases(GROUPS, GROUPS_DIFFER))
def test_groups_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- del
DELETES = {
    "group": "del f['g']",
    "dataset": "del f['c']",
    "hard_link": "del f['hard']",  # /d stays
    "linked_object": "del f['d']",  # /hard stays
    "soft_link": "del f['soft']",  # /c stays
    "dangling": "del f['dangling']",
    "external_link": "del f['ext']",
    "nested": ["del f['g/sub/leaf']", "del f['g']['a']"],
    "through_soft_link": "del f['softg/sub']",
    "in_ordered_group": "del f['ordered/b']",
    "missing": "del f['missing']",
    "missing_parent": "del f['missing/x']",
    "twice": ["del f['g/a']", "del f['g/a']"],
    "root": "del f['/']",
}


DELETES_DIFFER = {
}


@pytest.mark.parametrize("statements", cases(DELETES, DELETES_DIFFER))
def test_del_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- move
MOVES = {
    "group": "f.move('g', 'g2')",
    "dataset_into_group": "f.move('d', 'g/d')",
    "soft_link": "f.move('soft', 'soft2')",  # the link moves, still to /c
    "dangling": "f.move('dangling', 'dangling2')",
    "external_link": "f.move('ext', 'g/ext2')",
    "relative": "f['g'].move('a', 'b')",
    "absolute_from_group": "f['g'].move('/d', '/g/dd')",
    "up": "f.move('g/sub/leaf', 'leaf')",
    "intermediate": "f.move('d', 'new/deeper/d')",
    "in_ordered_group": "f.move('ordered/b', 'ordered/c')",
    "through_soft_link": "f.move('softg/a', 'a')",
    "same_name": "f.move('d', 'd')",
    "onto_existing_link": "f.move('d', 'soft')",
    "missing": "f.move('missing', 'x')",
    "into_itself": "f.move('g', 'g/sub/g')",
    "root": "f.move('/', 'x')",
}


@pytest.mark.parametrize("statements", cases(MOVES))
def test_move_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- group[name] = ...
SETITEMS = {
    "soft_link": ["f['s'] = m.SoftLink('/g/a')", "f['g/s2'] = m.SoftLink('sub')"],
    "soft_link_dangling": "f['s'] = m.SoftLink('/nowhere')",
    "external_link": ["f['e'] = m.ExternalLink('other.h5', '/og')", "f['e2'] = m.ExternalLink('nofile.h5', '/x')"],
    "external_link_pathlike": "import pathlib; f['e'] = m.ExternalLink(pathlib.Path('other.h5'), '/x')",
    "hard_link_group": "f['h'] = f['g']",
    "hard_link_dataset": ["f['h'] = f['c']", "f['g/h'] = f['d']"],
    "hard_link_through_soft": "f['h'] = f['soft']",  # a link to /c
    "hard_link_from_group_object": "g = f['g']; g['h'] = f['ordered']",
    "array": ["f['arr'] = np.arange(12).reshape(3, 4)", "f['g/arr2'] = np.ones((2, 2), 'f4')"],
    "scalar": "f['sc'] = 3.5",
    "list": "f['l'] = [1, 2, 3]",
    "bytes": "f['b'] = np.array([b'ab', b'cde'])",
    "bool": "f['b'] = np.array([True, False])",
    "intermediate": ["f['new/deep/s'] = m.SoftLink('/d')", "f['n2/arr'] = np.arange(3)"],
    "through_soft_link": ["f['softg/s'] = m.SoftLink('/d')", "f['softg/arr'] = np.arange(3)"],
    "in_ordered_group": ["f['ordered/c'] = m.SoftLink('/d')", "f['ordered/0'] = np.arange(2)"],
    "existing_soft": "f['d'] = m.SoftLink('/c')",
    "existing_hard": "f['d'] = f['c']",
    "existing_array": "f['d'] = np.arange(3)",
    "existing_link_name": "f['soft'] = np.arange(3)",
    "existing_dangling": "f['dangling'] = m.SoftLink('/d')",
    "named_datatype": "f['t'] = np.dtype('<f4')",
    "in_external_group": "f['extg/s'] = m.SoftLink('/d')",
    "existing_external": "f['g'] = m.ExternalLink('other.h5', '/x')",
    "dataset_on_the_way": "f['d/x'] = np.arange(3)",
    "hard_link_other_file": ["o = m.File(other, 'r')", "f['h'] = o['x']"],
}


SETITEMS_DIFFER: dict = {}


@pytest.mark.parametrize("statements", cases(SETITEMS, SETITEMS_DIFFER))
def test_setitem_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- copy
COPIES = {
    "group": "f.copy('g', 'gc')",
    "dataset": "f.copy('d', 'dc')",
    "into_group": "f.copy('d', f['g'])",  # named d
    "into_group_named": "f.copy('d', f['g'], name='dd')",
    "source_object": "f.copy(f['g/a'], 'ac')",
    "source_object_through_soft_link": "f.copy(f['soft'], 'sc')",
    "into_group_through_soft_link": "f.copy('d', f['softg'])",
    "to_path_through_soft_link": "f.copy('d', 'softg/d2')",
    "into_external_group": "f.copy('d', f['extg'])",
    "from_group": "f['g'].copy('a', 'ac')",  # relative to g
    "to_absolute": "f['g'].copy('sub', '/subc')",
    "intermediate": "f.copy('d', 'new/deep/dc')",
    "hard_link": "f.copy('hard', 'hc')",
    "through_soft_link": ["f.copy('soft', 'sc')", "f.copy('softg', 'gc')"],
    "through_external_link": "f.copy('ext', 'xc')",
    "ordered_group": "f.copy('ordered', 'oc')",
    "shallow": "f.copy('g', 'gs', shallow=True)",
    "expand_soft": "f.copy('g', 'gx', expand_soft=True)",
    "expand_external": "f.copy('g', 'gx', expand_external=True)",
    "expand_refs": "f.copy('g', 'gx', expand_refs=True)",
    "without_attrs": ["f.copy('d', 'dn', without_attrs=True)", "f.copy('g', 'gn', without_attrs=True)"],
    "all_flags": "f.copy('g', 'gx', shallow=True, expand_soft=True, expand_external=True, without_attrs=True)",
    "missing": "f.copy('missing', 'x')",
    "dangling": "f.copy('dangling', 'x')",
    "dest_dataset": "f.copy('d', f['c'])",
    "from_other_file": ["o = m.File(other, 'r')", "f.copy(o['x'], 'xc')", "f.copy(o['og'], f['g'])",
                        "f.copy(o['/og/y'], f['g'], name='yy', without_attrs=True)"],
    "from_other_file_object_to_path": ["o = m.File(other, 'r')", "f['g'].copy(o['og'], 'ogc')"],
    "to_other_file": ["o = m.File(third, 'a')", "f.copy('g', o)", "f.copy('d', o, name='dd')",
                      "f['g'].copy('sub', o['g'], name='s2')"],
    "root_to_other_file": ["o = m.File(third, 'w')", "f.copy('/', o, name='all')"],
    "to_read_only_file": ["o = m.File(other, 'r')", "f.copy('d', o)"],
    "missing_into_group": "f.copy('missing', f['g'])",
    "onto_existing": "f.copy('d', 'c')",
    "onto_existing_in_group": "f.copy('d', f['g'], name='a')",
    "under_dataset": "f.copy('c', 'd/x')",
    "to_other_file_existing": ["o = m.File(other, 'a')", "f.copy('d', o, name='x')"],
    "other_file_missing_source": ["o = m.File(other, 'r')", "o.copy('missing', f)"],
}


COPIES_DIFFER = {
    "into_group_through_soft_link": "f.copy('d', f['softg']) (softg: a SoftLink to /g): h5py copies /d to /g/d "
                                    "(it copies into the group's id); h5tile raises Hdf5Error ('address undefined "
                                    "(in H5O_protect)': it copies to the path '/softg/d', which H5Ocopy cannot make "
                                    "through a soft link)",
    "root_to_other_file": "f.copy('/', o, name='all') (o: a new file): h5py copies the root group to /all of the "
                          "other file; h5tile raises InvalidArgumentError (dataset name '/' is empty)",
}


@pytest.mark.parametrize("statements", cases(COPIES, COPIES_DIFFER))
def test_copy_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- create_dataset / require_dataset
def plugin(name, **options):
    return f"**hdf5plugin.{name}({', '.join(f'{k}={v!r}' for k, v in options.items())})"


CREATES = {
    "shape_dtype": "f.create_dataset('n', (5, 6), 'i4')",
    "shape_int": "f.create_dataset('n', 7)",  # float32, as h5py
    "data": "f.create_dataset('n', data=np.arange(20.).reshape(4, 5))",
    "data_list": "f.create_dataset('n', data=[[1, 2], [3, 4]])",
    "data_dtype": "f.create_dataset('n', data=[1, 2, 3], dtype='f8')",
    "data_reshaped": "f.create_dataset('n', (20,), data=np.arange(20).reshape(4, 5))",
    "scalar": ["f.create_dataset('n', data=2.5)", "f.create_dataset('n2', ())"],
    "empty": "f.create_dataset('n', (0, 3), 'u2', maxshape=(None, 3))",
    "dtypes": ["f.create_dataset('b', data=np.array([True, False]))",
               "f.create_dataset('c', data=np.array([1 + 2j], 'c8'))",
               "f.create_dataset('h', data=np.arange(4, dtype='f2'))",
               "f.create_dataset('s', data=np.array([b'ab', b'cde']))",
               "f.create_dataset('u', (3,), 'u8', fillvalue=2**63)"],
    "compound": ["t = np.dtype([('a', '<i4'), ('b', '<f8'), ('c', 'S3'), ('d', '<f4', (2, 3))])",
                 "x = np.zeros(10, t); x['a'] = np.arange(10); x['c'] = b'xy'; x['d'] = 7",
                 "n = f.create_dataset('n', data=x, chunks=(4,), compression='gzip')", "n[2] = x[7]",
                 "n[5:7] = np.array([(1, 2.0, b'q', np.ones((2, 3)))] * 2, t)",
                 "f.create_dataset('s', data=x[3])"],
    "compound_nested_padded": ["t = np.dtype({'names': ['a', 'b'], 'formats': ['u1', [('x', '<i2'), ('y', 'f2')]], "
                               "'offsets': [0, 4], 'itemsize': 12})",
                               "f.create_dataset('n', (5,), t, fillvalue=np.array((3, (4, 0.5)), t))",
                               "f['n'][1] = np.array((9, (8, 1.5)), t)"],
    "compound_fields": ["t = np.dtype([('a', 'i4'), ('b', 'f8'), ('c', 'u1', (2,))])",
                        "x = np.zeros(6, t); x['a'] = np.arange(6); x['c'] = 5",
                        "n = f.create_dataset('n', data=x, chunks=(4,))", "n['a'] = 42", "n['b', 1:3] = [1.5, 2.5]",
                        "y = x.copy(); y['a'] = -1; y['c'] = 9", "n['a', 'c'] = y", "n[4, 'c'] = [7, 8]",
                        "n[np.array([True, False] * 3), 'b'] = 9.5"],
    "compound_by_name": ["t = np.dtype([('a', '<i2'), ('b', '<f8')])", "n = f.create_dataset('n', (3,), t)",
                         "n[...] = np.array([(1, 1.5)] * 3, t)",
                         "n[0:2] = np.array([(2.5, 7), (3.5, 8)], [('b', '<f8'), ('a', '<i4')])",
                         "n[2] = np.array((70000, 9.5), [('a', '<i8'), ('b', '<f4')])",
                         "n[1:3] = np.array([(-70000,), (5,)], [('a', '<i8')])"],
    "subarray_clamped": ["n = f.create_dataset('n', (2,), np.dtype('(2,)i2'))",
                         "n[...] = np.array([[70000, 1], [-70000, 3]], 'i8')"],
    "compound_field_unknown": ["n = f.create_dataset('n', (3,), [('a', 'i4')])", "n['z'] = 1"],
    "field_of_numbers": ["n = f.create_dataset('n', (3,), 'i4')", "n['a'] = 1"],
    "like": ["f.create_dataset('a', data=np.arange(600.).reshape(20, 30), chunks=(5, 30), compression='gzip', "
             "shuffle=True, fillvalue=3, maxshape=(None, 30))", "f.create_dataset_like('n', f['a'])",
             "f.create_dataset_like('m', f['a'], shape=(4, 30), compression='lzf')",
             "f.create_dataset_like('k', f['d'])"],
    "named_types": ["f['t'] = np.dtype('<i4')", "f['g/c'] = np.dtype([('a', 'u1'), ('b', '<f8')])",
                    "f['s'] = h5py.string_dtype()", "f['t'].attrs['units'] = 'm'",
                    "n = f.create_dataset('n', (3,), dtype=f['g/c'])", "n[1] = (7, 2.5)",
                    "f.create_dataset('m', data=np.arange(4, dtype='i4'), dtype=f['t'])"],
    "named_type_exists": ["f['t'] = np.dtype('f4')", "f['t'] = np.dtype('f8')"],
    "virtual": ["lay = h5py.VirtualLayout(shape=(8, 6), dtype='i2', maxshape=(None, 6))",
                "lay[0:4] = h5py.VirtualSource('other.h5', 'x', shape=(4, 6))",
                "lay[4:8:2, ::2] = h5py.VirtualSource('other.h5', 'x', shape=(4, 6))[0:2, 0:3]",
                "v = f.create_virtual_dataset('g/v', lay, fillvalue=-5)",
                "assert v[5, 0] == -5 and v[4, 2] == 1 and v[3, 5] == 23"],
    "virtual_same_file": ["lay = h5py.VirtualLayout((2, 3, 4), 'f4')",
                          "lay[1] = h5py.VirtualSource(f.filename, 'd', shape=(3, 4))",
                          "f.create_virtual_dataset('v', lay)", "assert f['v'][1, 2, 3] == 11"],
    "virtual_build": "with f.build_virtual_dataset('w', (4, 5), 'i2', fillvalue=7) as l2:\n"
                     "    l2[1, :] = h5py.VirtualSource('other.h5', 'x', shape=(4, 6))[0, :5]",
    "virtual_exists": ["lay = h5py.VirtualLayout((3, 4), 'f4')", "f.create_virtual_dataset('d', lay)"],
    "subarray": ["n = f.create_dataset('n', (4,), np.dtype('(3,)f8'))", "n[...] = np.arange(12.0).reshape(4, 3)",
                 "n[1] = [9, 9, 9]"],
    "subarray_scalar_refused": ["n = f.create_dataset('n', (4,), np.dtype('(3,)i4'))", "n[...] = 42"],
    "enum": "f.create_dataset('n', data=np.array([0, 1, 42], 'i1'), "
            "dtype=h5py.enum_dtype({'RED': 0, 'GREEN': 1, 'BLUE': 42}, basetype='i1'))",
    "big_endian": "f.create_dataset('n', data=np.arange(6, dtype='>i4').reshape(2, 3), chunks=(1, 3))",
    "utf8_fixed": "f.create_dataset('n', data=np.array([b'ab', b'c'], dtype=h5py.string_dtype('utf-8', 4)))",
    "datetime": ["d = h5py.opaque_dtype(np.dtype('M8[D]'))",
                 "f.create_dataset('n', data=np.array(['2020-01-01', '1999-12-31'], 'M8[D]').astype(d))",
                 "f.create_dataset('m', (2,), dtype=d)", "f['m'][0] = np.datetime64('2001-01-01')"],
    "datetime_unmarked": "f.create_dataset('n', data=np.array(['2020-01-01', '1999-12-31'], 'M8[D]'))",
    "vlen_str": ["f.create_dataset('n', data=['abc', 'Grüße', ''])", "f['n'][1] = 'x'"],
    "vlen_bytes": "f.create_dataset('n', data=[b'x', b'yz'])",
    "vlen_scalar": "f.create_dataset('n', data='hello')",
    "vlen_object_array": "f.create_dataset('n', data=np.array([['a', 'bc'], ['d', '']], dtype=object))",
    "vlen_partial": ["n = f.create_dataset('n', (4, 3), dtype=h5py.string_dtype(), chunks=(2, 2), compression='gzip')",
                     "n[1:3, ::2] = [['a', 'b'], ['c', 'd']]", "n[0] = 'z'", "n[[1, 3], 1] = ['p', 'q']",
                     "n[np.array([[False] * 3] * 3 + [[True, False, True]])] = ['m1', 'm2']"],
    "vlen_ascii": ["n = f.create_dataset('n', (3,), dtype=h5py.string_dtype('ascii'), maxshape=(None,))",
                   "n[...] = [b'a', b'b', b'c']", "n.resize((5,))", "n[3:] = b'e'"],
    "vlen_fillvalue": ["f.create_dataset('n', (4,), dtype=h5py.string_dtype(), fillvalue='bár')",
                       # every chunk written: HDF5 2.0 (h5py's) cannot read an unallocated chunk of a variable-
                       # length fill value from a file open read-only ("no write intent on file")
                       "f.create_dataset('m', (2,), dtype=h5py.string_dtype('ascii'), fillvalue=b'x', chunks=(2,))",
                       "f['m'][0] = b'y'", "assert f['n'].fillvalue == 'bár'.encode() and f['m'][1] == b'x'"],
    "vlen_nul": ["n = f.create_dataset('n', (2,), dtype=h5py.string_dtype())", "n[0] = 'a\\x00b'"],
    "vlen_nul_data": "f.create_dataset('n', data=['x\\x00y'])",
    "vlen_ascii_unicode": ["n = f.create_dataset('n', (2,), dtype=h5py.string_dtype('ascii'))", "n[0] = 'é'"],
    "vlen_surrogate": ["n = f.create_dataset('n', (2,), dtype=h5py.string_dtype())", "n[0] = '\\udcff'"],
    "vlen_fill_arrays": ["f.create_dataset('n', (2,), dtype=h5py.string_dtype(), "
                         "fillvalue=np.array(b'abc', dtype=h5py.string_dtype()))",
                         "f.create_dataset('m', (2,), dtype=h5py.string_dtype(), fillvalue=np.array('uv'))",
                         "assert f['n'][1] == b'abc' and f['m'][0] == b'uv'"],
    "vlen_guess_keeps_encoding": ["f.create_dataset('n', data=np.array([b'a'], dtype=h5py.string_dtype('utf-8')))",
                                  "f.create_dataset('m', data=np.array(['a'], dtype=h5py.string_dtype('ascii')))",
                                  "f.create_dataset('k', data=[np.bytes_(b'ab'), np.bytes_(b'c')])"],
    "vlen_non_string": ["n = f.create_dataset('n', (2,), dtype=h5py.string_dtype())", "n[0] = 5"],
    "fill_time": ["f.create_dataset('n', (10,), 'f4', fillvalue=4.0, fill_time='never')",
                  "f.create_dataset('m', (10,), 'f4', fillvalue=4.0, chunks=(2,), fill_time='alloc')",
                  "f.create_dataset('k', (10,), 'f4', chunks=(2,), fill_time='ifset')", "f['m'][3:5] = 1"],
    "fill_time_bad": "f.create_dataset('n', (10,), 'f4', fill_time='sometimes')",
    "scaleoffset_int": ["f.create_dataset('n', data=np.arange(600).reshape(20, 30), scaleoffset=True)",
                        "f['n'][2:4, 5:9] = 7"],
    "scaleoffset_bits": "f.create_dataset('n', data=np.arange(600, dtype='i4').reshape(20, 30), scaleoffset=12, "
                        "chunks=(5, 30), compression='gzip', shuffle=True)",
    "scaleoffset_float": "f.create_dataset('n', data=np.linspace(0, 1, 600).reshape(20, 30), scaleoffset=3)",
    "scaleoffset_float_true": "f.create_dataset('n', (4,), 'f8', scaleoffset=True)",
    "scaleoffset_bool": "f.create_dataset('n', (4,), bool, scaleoffset=True)",
    "scaleoffset_fletcher32": "f.create_dataset('n', (4,), 'i4', scaleoffset=True, fletcher32=True)",
    "scaleoffset_negative": "f.create_dataset('n', (4,), 'i4', scaleoffset=-1)",
    "external": ["f.create_dataset('n', data=np.arange(600.).reshape(20, 30), external=folder + '/ext.bin')",
                 "f['n'][3:5, 1] = -1", "assert f['n'][4, 1] == -1 and f['n'][19, 29] == 599"],
    "external_parts": ["f.create_dataset('n', (6, 100), 'f4', external=[(folder + '/e1.bin', 0, 1200), "
                       "(folder + '/e2.bin', 16, 1200)])", "f['n'][...] = np.arange(600).reshape(6, 100)"],
    "external_expandable": ["n = f.create_dataset('n', (128, 64), 'f4', maxshape=(None, 64), external=folder + "
                            "'/x.bin')", "n[...] = 1", "assert n.chunks is None and n.maxshape == (None, 64)"],
    "external_not_tuples": "f.create_dataset('n', (6,), 'f4', external=[[folder + '/x.bin', 0, 24]])",
    "external_two_items": "f.create_dataset('n', (6,), 'f4', external=[(folder + '/x.bin', 0)])",
    "empty_dtype": ["e = f.create_dataset('n', dtype='int64')", "assert e.shape is None and e[()] is not None"],
    "empty_object": "f.create_dataset('n', data=m.Empty('f4'))",
    "empty_chunks": "f.create_dataset('n', dtype='f', chunks=True)",
    "unicode_array": "f.create_dataset('n', data=np.array(['a', 'b']))",
    "object_dtype": "f.create_dataset('n', (3,), dtype=object)",
    "chunks": "f.create_dataset('n', data=np.arange(100).reshape(10, 10), chunks=(3, 4))",
    "chunks_bigger_unlimited": "f.create_dataset('n', (2, 3), chunks=(4, 4), maxshape=(None, None))",
    "in_external_group": "f.create_dataset('extg/n', data=np.arange(3))",
    "chunks_true": "f.create_dataset('n', (1000, 300), 'f8', chunks=True)",
    "maxshape": "f.create_dataset('n', (10, 20), 'f4', maxshape=(None, 40))",
    "maxshape_int": "f.create_dataset('n', 10, 'f4', maxshape=None, chunks=(5,))",
    "gzip": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), compression='gzip')",
    "gzip_opts": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), compression='gzip', compression_opts=9)",
    "gzip_level": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), compression=7)",
    "gzip_chunks": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), chunks=(7, 8), compression='gzip')",
    "shuffle": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), shuffle=True)",
    "fletcher32": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), fletcher32=True)",
    "all_filters": "f.create_dataset('n', data=np.arange(600.).reshape(20, 30), compression='gzip', "
                   "compression_opts=2, shuffle=True, fletcher32=True, chunks=(5, 30), maxshape=(None, 30))",
    "zstd": f"f.create_dataset('n', data=np.arange(600).reshape(20, 30), chunks=(8, 8), {plugin('Zstd', clevel=5)})",
    "lz4": f"f.create_dataset('n', data=np.arange(600).reshape(20, 30), chunks=(8, 8), {plugin('LZ4')})",
    "blosc_options": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), chunks=(8, 8), "
                     f"{plugin('Blosc', cname='zstd', clevel=3, shuffle=2)})",
    "blosc_no_shuffle": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), chunks=(8, 8), "
                        f"{plugin('Blosc', clevel=7, shuffle=0)})",
    "zstd_number": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), compression=32015)",
    "lzf": "f.create_dataset('n', data=np.arange(600).reshape(20, 30), compression='lzf')",
    "fillvalue": ["f.create_dataset('n', (4, 5), 'i2', fillvalue=7)",
                  "f.create_dataset('n2', (4, 5), 'f4', fillvalue=np.nan, chunks=(2, 2))",
                  "f.create_dataset('n3', data=np.arange(4), fillvalue=9)"],
    "track_order": ["n = f.create_dataset('n', (3,), track_order=True)", "n.attrs['z'] = 1", "n.attrs['a'] = 2"],
    "in_ordered_group": ["f.create_dataset('ordered/c', (2,))", "f['ordered'].create_dataset('0', (2,))"],
    "intermediate": "f.create_dataset('x/y/n', data=np.arange(3))",
    "through_soft_link": ["f.create_dataset('softg/n', data=np.arange(3))", "f['softg'].create_dataset('m', (2,))"],
    "relative": "f['g'].create_dataset('n', data=np.arange(3))",
    "existing": "f.create_dataset('d', (3, 4), 'f4')",
    "existing_group": "f.create_dataset('g', (3,))",
    "existing_link": "f.create_dataset('soft', (3,))",
    "no_shape": "f.create_dataset('n')",
    "shape_data_mismatch": "f.create_dataset('n', (4,), data=np.arange(5))",
    "maxshape_smaller": "f.create_dataset('n', (10,), maxshape=(5,))",
    "maxshape_rank": "f.create_dataset('n', (10, 3), maxshape=(None,))",
    "chunks_rank": "f.create_dataset('n', (10, 3), chunks=(2,))",
    "chunks_too_big": "f.create_dataset('n', (10, 3), chunks=(20, 3))",
    "chunks_false_gzip": "f.create_dataset('n', (10,), chunks=False, compression='gzip')",
    "scalar_chunks": "f.create_dataset('n', (), chunks=True)",
    "scalar_gzip": "f.create_dataset('n', data=1.0, compression='gzip')",
    "gzip_level_10": "f.create_dataset('n', (10,), compression='gzip', compression_opts=10)",
    "opts_without_compression": "f.create_dataset('n', (10,), compression_opts=4)",
    "unknown_compression": "f.create_dataset('n', (10,), compression='nope')",
    "unknown_keyword": "f.create_dataset('n', (10,), nope=1)",
    "maxshape_same": "f.create_dataset('n', (10, 20), 'f4', maxshape=(10, 20))",
    "blosc": f"f.create_dataset('n', data=np.arange(600).reshape(20, 30), chunks=(8, 8), {plugin('Blosc')})",
    "dataset_on_the_way": "f.create_dataset('d/x', (3,))",
    "negative": "f.create_dataset('n', (-1, 3))",
}


CREATES_DIFFER = {
    "blosc_options": "create_dataset(..., **hdf5plugin.Blosc(cname='zstd', clevel=3, shuffle=2)): h5py stores "
                     "cd_values (2, 2, 8, 512, 3, 2, 5) (bitshuffle, zstd); h5tile refuses it (InvalidArgumentError: "
                     "it writes Blosc with lz4 and byte shuffle only), never writing another codec than asked",
    "zstd_number": "create_dataset(..., compression=32015) without compression_opts: h5py stores zstd's cd_values "
                   "() (the plugin's default level); h5tile stores (3,)",
}


@pytest.mark.parametrize("statements", cases(CREATES, CREATES_DIFFER))
def test_create_dataset_as_h5py(tmp_path, statements):
    if "hdf5plugin" in str(statements) and hdf5plugin is None:
        pytest.skip("hdf5plugin is not installed")
    check(tmp_path, statements)


REQUIRES = {
    "existing": ["a = f.require_dataset('d', (3, 4), 'f4')", "assert a.name == '/d'"],
    "existing_exact": "f.require_dataset('d', (3, 4), 'f4', exact=True)",
    "existing_castable": "f.require_dataset('d', (3, 4), 'i2')",
    "existing_through_soft_link": "f.require_dataset('soft', (10, 8), 'f4')",
    "new": ["f.require_dataset('n', (4, 5), 'i2', chunks=(2, 2), fillvalue=3)", "f.require_dataset('n2', 6, 'f8')"],
    "new_intermediate": "f.require_dataset('x/y/n', (2,), 'u1')",
    "other_shape": "f.require_dataset('d', (4, 3), 'f4')",
    "other_rank": "f.require_dataset('d', 12, 'f4')",
    "other_dtype_exact": "f.require_dataset('d', (3, 4), 'f8', exact=True)",
    "uncastable_dtype": "f.require_dataset('d', (3, 4), 'f8')",
    "group_there": "f.require_dataset('g', (3,), 'f4')",
    "dangling": "f.require_dataset('dangling', (3,), 'f4')",
}


@pytest.mark.parametrize("statements", cases(REQUIRES))
def test_require_dataset_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- resize / write_direct
RESIZES = {
    "grow": "f['c'].resize((15, 12))",
    "shrink": "f['c'].resize((3, 5))",
    "axis": ["f['c'].resize(18, axis=0)", "f['c'].resize(2, axis=1)"],
    "to_zero": "f['c'].resize((0, 8))",
    "past_written_then_back": ["f['c'].resize((2, 8))", "f['c'].resize((10, 8))"],  # the cut values are gone
    "unlimited": "f['g/a'].resize((500, 600))",
    "compressed": ["f['g/a'].resize((4, 7))"],
    "same": "f['c'].resize((10, 8))",
    "through_soft_link": "f['soft'].resize((12, 8))",
    "through_soft_link_group": "f['softg/a'].resize((6, 6))",
    "through_external_link": "f['ext'].resize((7, 6))",
    "contiguous": "f['d'].resize((6, 4))",
    "contiguous_same": "f['d'].resize((3, 4))",
    "axis_out_of_range": "f['c'].resize(5, axis=2)",
    "past_maxshape": "f['c'].resize((21, 8))",
    "past_maxshape_axis": "f['c'].resize(30, axis=0)",
    "wrong_rank": "f['c'].resize((10, 8, 2))",
    "negative": "f['c'].resize((-1, 8))",
}


@pytest.mark.parametrize("statements", cases(RESIZES))
def test_resize_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


WRITE_DIRECTS = {
    "whole": "f['c'].write_direct(np.arange(80, dtype='f4').reshape(10, 8))",
    "converted": "f['c'].write_direct(np.arange(80, dtype='i8').reshape(10, 8))",
    "selections": "f['c'].write_direct(np.arange(80, dtype='f4').reshape(10, 8), np.s_[2:4, 0:3], np.s_[5:7, 1:4])",
    "dest_only": "f['g/a'].write_direct(np.full((2, 6), 7.0), None, np.s_[1:3])",
    "source_only": "f['d'].write_direct(np.arange(24, dtype='f4').reshape(6, 4), np.s_[3:6])",
    "contiguous_through_hard_link": "f['hard'].write_direct(np.ones((3, 4), 'f4'))",
    "through_soft_link": "f['soft'].write_direct(np.ones((10, 8), 'f4'))",
    "scalar": ["s = f.create_dataset('s', data=1.0)", "s.write_direct(np.array(5.0))"],
    "not_an_array": "f['d'].write_direct([[1, 2, 3, 4]] * 3)",
    "wrong_shape": "f['d'].write_direct(np.ones((5, 5), 'f4'))",
    "wrong_rank": "f['d'].write_direct(np.ones((3, 4, 1), 'f4'))",
}


WRITE_DIRECTS_DIFFER = {
    "not_an_array": _raises("f['d'].write_direct([[1, 2, 3, 4]] * 3)", "AttributeError",
                            "'list' object has no attribute 'shape'",
                            "TypeError (source must be a numpy.ndarray, not list)"),
}


@pytest.mark.parametrize("statements", cases(WRITE_DIRECTS, WRITE_DIRECTS_DIFFER))
def test_write_direct_as_h5py(tmp_path, statements):
    check(tmp_path, statements)


# -- every write in mode "r"; also in mode "r+" (an existing file: as in "a")
WRITES = {
    "create_group": "f.create_group('new')",
    "require_group_new": "f.require_group('new')",
    "require_group_existing": "f.require_group('g')",
    "del": "del f['g']",
    "move": "f.move('d', 'd2')",
    "soft_link": "f['s'] = m.SoftLink('/d')",
    "external_link": "f['e'] = m.ExternalLink('other.h5', '/x')",
    "hard_link": "f['h'] = f['g']",
    "array": "f['n'] = np.arange(3)",
    "copy": "f.copy('d', 'dc')",
    "copy_from_it": ["o = m.File(third, 'w')", "f.copy('d', o)"],
    "create_dataset": "f.create_dataset('n', (3,))",
    "require_dataset_new": "f.require_dataset('n', (3,), 'f4')",
    "require_dataset_existing": "f.require_dataset('d', (3, 4), 'f4')",
    "resize": "f['c'].resize((12, 8))",
    "write_direct": "f['d'].write_direct(np.ones((3, 4), 'f4'))",
    "attrs": "f['d'].attrs['new'] = 1",
}


_NO_WRITE_INTENT = "no write intent on file"
WRITES_DIFFER = {
}


@pytest.mark.parametrize("statements,mode", cases(WRITES, WRITES_DIFFER, modes=["r", "r+"]))
def test_writes_by_mode_as_h5py(tmp_path, statements, mode):
    check(tmp_path, statements, mode)


# -- modes
def open_and_write(library, path, mode, **options):
    """What opening `path` in `mode` and making a group raise (None where they did not), and
    the File's mode."""
    m = LIBRARIES[library]
    try:
        f = m.File(path, mode, **options)
    except Exception as error:  # noqa: BLE001 - compared with h5py's
        return [error]
    outcomes = [None, f.mode]
    try:
        for name in ("zz", "aa"):
            try:
                f.create_group(name)
                outcomes.append(None)
            except Exception as error:  # noqa: BLE001 - compared with h5py's
                outcomes.append(error)
    finally:
        f.close()
    return outcomes


@pytest.mark.parametrize("track_order", [None, True])
@pytest.mark.parametrize("exists", [True, False], ids=["existing", "missing"])
@pytest.mark.parametrize("mode", ["w", "w-", "x", "a", "r+", "r"])
def test_modes_as_h5py(tmp_path, mode, exists, track_order):
    theirs, ours = tmp_path / "h5py", tmp_path / "h5tile"
    if exists:
        seed(theirs)
        shutil.copytree(theirs, ours)
    else:
        theirs.mkdir()
        ours.mkdir()
    options = {} if track_order is None else {"track_order": track_order}
    t = open_and_write("h5py", theirs / NAME, mode, **options)
    o = open_and_write("h5tile", ours / NAME, mode, **options)
    steps = ["open", "mode", "create_group('zz')", "create_group('aa')"]
    assert len(t) == len(o), f"h5py: {t}, h5tile: {o}"
    assert t[1:2] == o[1:2], f"File.mode: h5py {t[1:2]}, h5tile {o[1:2]}"
    assert_same_outcomes(steps[:1] + steps[2:], t[:1] + t[2:], o[:1] + o[2:])
    assert (theirs / NAME).exists() == (ours / NAME).exists()
    if mode == "a" and not exists:
        assert (ours / NAME).exists(), "mode 'a' made no file"
    assert_same_files(theirs, ours)


# -- h5dump reads what h5tile makes in mode "w"
def make_structure(m, path):
    with m.File(path, "w") as f:
        g = f.create_group("grp", track_order=True)
        g.attrs["about"] = 3
        g.create_dataset("zeta", data=np.arange(60, dtype="i4").reshape(6, 10), chunks=(3, 5), compression="gzip",
                         shuffle=True, maxshape=(None, 10))
        g["zeta"].resize((8, 10))
        g.create_dataset("alpha", (4,), "f8", fillvalue=1.5)
        f.create_group("a/b/c")
        f["top"] = np.arange(5, dtype="u1")
        f["softy"] = m.SoftLink("/grp/zeta")
        f["exty"] = m.ExternalLink("elsewhere.h5", "/v")
        f["hardy"] = f["grp/alpha"]
        f.copy("grp", "grpcopy")
        f.move("top", "a/top")
        del f["a/b/c"]


def test_h5dump_reads_a_file_h5tile_made(tmp_path):
    theirs, ours = tmp_path / "h5py", tmp_path / "h5tile"
    theirs.mkdir()
    ours.mkdir()
    make_structure(h5py, theirs / NAME)
    make_structure(h5tile, ours / NAME)
    assert_same_files(theirs, ours)
    dumped = subprocess.run(["h5dump", str(ours / NAME)], capture_output=True, text=True, timeout=60)
    assert dumped.returncode == 0, dumped.stderr
    for word in ('GROUP "grp"', 'DATASET "zeta"', 'DATASET "alpha"', 'GROUP "grpcopy"', 'GROUP "b"',
                 'DATASET "top"', 'SOFTLINK "softy"', 'LINKTARGET "/grp/zeta"', 'EXTERNAL_LINK "exty"',
                 'TARGETFILE "elsewhere.h5"', 'DATASET "hardy"', 'HARDLINK "/grp/alpha"', 'ATTRIBUTE "about"'):
        assert word in dumped.stdout, word
    assert 'GROUP "c"' not in dumped.stdout
    reference = subprocess.run(["h5dump", str(theirs / NAME)], capture_output=True, text=True, timeout=60)
    assert dumped.stdout.replace(str(ours), "") == reference.stdout.replace(str(theirs), "")


def test_data_with_a_sub_array_dtype_is_refused_and_nothing_made(tmp_path):
    """h5py makes the dataset and then fails to write the data (OSError: no conversion path);
    h5tile refuses before it makes anything (NumPy would spread each element over new axes)."""
    with h5tile.File(tmp_path / "f.h5", "w") as f:
        with pytest.raises(ValueError, match="sub-array dtype"):
            f.create_dataset("n", data=np.ones((4, 2), "i2"), dtype=np.dtype("(2,)i2"))
        assert "n" not in f


def test_a_relative_external_file_with_efile_prefix_is_refused_not_written_elsewhere(tmp_path, monkeypatch):
    """h5py finds a relative external file in efile_prefix's folder; h5tile, which does not take
    that prefix yet, refuses rather than write the data into the process's folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    with h5tile.File(tmp_path / "f.h5", "w") as f:
        with pytest.raises(h5tile.InvalidArgumentError, match="efile_prefix"):
            f.create_dataset("n", data=np.arange(6.0), external=[("ext.bin", 0, 48)],
                             efile_prefix=str(tmp_path / "data"))
        assert "n" not in f
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "f.h5"]

