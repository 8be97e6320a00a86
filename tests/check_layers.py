#!/usr/bin/env python3
"""Fails when a file in src/ (C++ and CUDA) includes from a folder above its own
(docs/ARCHITECTURE.md): calls go api -> layout -> engine | gpu | cuda | comm | hdf5 -> io -> core; a
public header (include/h5tile/) counts as the folder that implements what it declares. Fails too
when a file outside src/hdf5/ calls the HDF5 C API (only the wrappers call HDF5, as the style guide
asks). Run by CTest. With --graph, prints the include graph by folder (Graphviz DOT: every arrow
points down the layers; `dot -Tsvg` draws it) instead of checking.

    python3 tests/check_layers.py [--graph]
"""
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Each folder and the folders it may include from (besides itself).
ALLOWED = {
    "core": set(),
    "io": {"core"},  # where bytes come from: posix/, http/ (S3 and WebHDFS dialects too)
    "hdf5": {"core", "io"},
    "engine": {"core", "io"},
    "comm": {"core"},
    "gpu": {"core", "engine", "io"},
    "cuda": {"core", "engine", "gpu", "io"},
    "layout": {"core", "hdf5", "engine", "gpu", "comm", "io"},
    "api": {"core", "hdf5", "engine", "gpu", "comm", "layout", "io"},
}
# Each public header and the folder that implements what it declares (types only: core).
PUBLIC = {
    "array.hpp": "core", "dtype.hpp": "core", "error.hpp": "core", "settings.hpp": "core",
    "dataset_info.hpp": "core", "object_types.hpp": "core", "version.hpp": "core",
    "read_pattern.hpp": "io", "communicator.hpp": "comm", "options.hpp": "engine", "device.hpp": "gpu",
    "io.hpp": "api", "objects.hpp": "api", "h5tile.hpp": "api", "mpi.hpp": "api",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
PUBLIC_INCLUDE = re.compile(r"^\s*#\s*include\s+<h5tile/([a-z_]+\.hpp)>")
# An HDF5 C function called (H5Dopen2(, H5Pset_virtual (...); h5tile's own H5TILE_* macros are not.
HDF5_CALL = re.compile(r"\b(?!H5TILE_)H5[A-Z]\w*\s*\(")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def code_of(line):
    """The line without its string literals and // comment (a name in prose is not a call)."""
    return STRING.sub('""', line).split("//", 1)[0]


SOURCES = sorted(p for p in (ROOT / "src").rglob("*") if p.suffix in (".cpp", ".hpp", ".cu", ".cuh"))
problems = []
edges = collections.Counter()
for path in SOURCES:
    folder = path.relative_to(ROOT / "src").parts[0]
    if folder not in ALLOWED:
        problems.append(f"{path.relative_to(ROOT)}: folder '{folder}' has no place in the layers (add it here)")
        continue
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = INCLUDE.match(line)
        public = PUBLIC_INCLUDE.match(line)
        if public and public.group(1) not in PUBLIC:
            problems.append(f"{path.relative_to(ROOT)}:{number}: <h5tile/{public.group(1)}> has no layer (add it to PUBLIC)")
        target = m.group(1) if m else PUBLIC.get(public.group(1)) if public else None
        if target and target != folder:
            edges[folder, target] += 1
            if target not in ALLOWED[folder]:
                via = f" (through <h5tile/{public.group(1)}>)" if public else ""
                problems.append(f"{path.relative_to(ROOT)}:{number}: {folder}/ includes from {target}/{via}, a layer above it")
        call = HDF5_CALL.search(code_of(line))
        if call and folder != "hdf5":
            name = call.group(0).rstrip("( \t")
            problems.append(f"{path.relative_to(ROOT)}:{number}: {folder}/ calls {name}: only src/hdf5/ calls HDF5")
if "--graph" in sys.argv[1:]:
    print("digraph layers {")
    for (source, target), count in sorted(edges.items()):
        print(f'  "{source}" -> "{target}" [label={count}{", color=red" if target not in ALLOWED[source] else ""}];')
    print("}")
    sys.exit(0)
for p in problems:
    print(p)
print(f"check_layers: {len(problems)} problem(s) in {len(SOURCES)} files")
sys.exit(1 if problems else 0)
