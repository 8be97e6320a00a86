#!/usr/bin/env python3
"""Fails when a file in src/ includes from a folder above its own (docs/ARCHITECTURE.md):
calls go api -> layout -> engine | gpu | cuda | comm | hdf5 -> io -> core; or when a file outside
src/hdf5/ calls the HDF5 C API (only the wrappers call HDF5, as the style guide asks). Run by CTest."""
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
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
# An HDF5 C function called (H5Dopen2(, H5Pset_virtual (...); h5tile's own H5TILE_* macros are not.
HDF5_CALL = re.compile(r"\b(?!H5TILE_)H5[A-Z]\w*\s*\(")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def code_of(line):
    """The line without its string literals and // comment (a name in prose is not a call)."""
    return STRING.sub('""', line).split("//", 1)[0]


problems = []
for path in sorted((ROOT / "src").rglob("*.[ch]pp")):
    folder = path.relative_to(ROOT / "src").parts[0]
    if folder not in ALLOWED:
        problems.append(f"{path.relative_to(ROOT)}: folder '{folder}' has no place in the layers (add it here)")
        continue
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = INCLUDE.match(line)
        if m and m.group(1) != folder and m.group(1) not in ALLOWED[folder]:
            problems.append(f"{path.relative_to(ROOT)}:{number}: {folder}/ includes from {m.group(1)}/, a layer above it")
        call = HDF5_CALL.search(code_of(line))
        if call and folder != "hdf5":
            name = call.group(0).rstrip("( \t")
            problems.append(f"{path.relative_to(ROOT)}:{number}: {folder}/ calls {name}: only src/hdf5/ calls HDF5")
for p in problems:
    print(p)
print(f"check_layers: {len(problems)} problem(s) in {len(list((ROOT / 'src').rglob('*.[ch]pp')))} files")
sys.exit(1 if problems else 0)
