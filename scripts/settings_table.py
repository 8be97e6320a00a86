#!/usr/bin/env python3
"""Prints docs/SETTINGS.md's table of settings from the core's own table (h5tile.settings.table()),
so that the page says what the code parses and checks, or (--stub) the type stub of the Python
module, python/h5tile/settings.pyi, whose getters and setters h5tile/settings.py makes from the same
table at import; tests/python/test_settings.py fails where either differs. After a change to
src/core/settings.cpp's table, rebuild, paste the table and write the stub:

    python3 scripts/settings_table.py
    python3 scripts/settings_table.py --stub > python/h5tile/settings.pyi

Uses the package in $H5TILE_BUILD_DIR/python (default build/python).
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def markdown(rows: list) -> str:
    """The table as docs/SETTINGS.md shows it, one row per setting in the core's order."""
    lines = ["| setting | environment variable | values | default | getter / setter |",
             "| --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row['doc']} | `{row['variable']}` | {row['values']} | {row['default']} | "
                     f"`settings::{row['name']}()` / `set_{row['name']}` |")
    return "\n".join(lines) + "\n"


# What each kind of setting is in Python: (the getter's type, the setter's).
STUB_TYPES = {"count": ("int", "int"), "size": ("int", "Size"), "flag": ("bool", "bool"),
              "seconds": ("float", "float"), "mode": ("str", "str"), "text": ("str", "Union[str, PathLike[str]]")}


def stub(rows: list) -> str:
    """python/h5tile/settings.pyi: the module's fixed functions and a getter and setter per row."""
    lines = ["# Made by scripts/settings_table.py --stub from the core's table of settings (a test compares).",
             "from os import PathLike", "from typing import Union", "", "Size = Union[int, str]", "",
             "def table() -> list[dict]: ...", "def parse_size(text: str) -> int: ...",
             "def check_environment() -> None: ...", "def host_pool_held_bytes() -> int: ..."]
    for row in rows:
        given, taken = STUB_TYPES[row["kind"]]
        lines.append(f"def {row['name']}() -> {given}: ...")
        lines.append(f"def set_{row['name']}(value: {taken}) -> None: ...")
    return "\n".join(lines) + "\n"


def main() -> None:
    build = Path(os.environ.get("H5TILE_BUILD_DIR", ROOT / "build"))
    sys.path.insert(0, str((build if build.is_absolute() else ROOT / build) / "python"))
    import h5tile.settings
    rows = h5tile.settings.table()
    sys.stdout.write(stub(rows) if sys.argv[1:] == ["--stub"] else markdown(rows))


if __name__ == "__main__":
    main()
