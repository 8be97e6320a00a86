#!/usr/bin/env python3
"""Prints docs/SETTINGS.md's table of settings from the core's own table (h5tile.settings.table()),
so that the page says what the code parses and checks; tests/python/test_settings.py fails where
the page's table differs. After a change to src/core/settings.cpp's table, rebuild and paste:

    python3 scripts/settings_table.py

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


def main() -> None:
    build = Path(os.environ.get("H5TILE_BUILD_DIR", ROOT / "build"))
    sys.path.insert(0, str((build if build.is_absolute() else ROOT / build) / "python"))
    import h5tile.settings
    sys.stdout.write(markdown(h5tile.settings.table()))


if __name__ == "__main__":
    main()
