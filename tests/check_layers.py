#!/usr/bin/env python3
"""Fails when a file in src/ includes from a folder above its own (docs/ARCHITECTURE.md):
calls go api -> layout -> engine | gpu | cuda | comm | hdf5 -> core. Run by CTest."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Each folder and the folders it may include from (besides itself).
ALLOWED = {
    "core": set(),
    "hdf5": {"core"},
    "engine": {"core"},
    "comm": {"core"},
    "gpu": {"core", "engine"},
    "cuda": {"core", "engine", "gpu"},
    "layout": {"core", "hdf5", "engine", "gpu", "comm"},
    "api": {"core", "hdf5", "engine", "gpu", "comm", "layout"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')

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
for p in problems:
    print(p)
print(f"check_layers: {len(problems)} problem(s) in {len(list((ROOT / 'src').rglob('*.[ch]pp')))} files")
sys.exit(1 if problems else 0)
