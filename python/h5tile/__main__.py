"""``python -m h5tile`` and the ``h5tile`` console script: the h5tile command.

The command is a C++ program installed inside this package (``h5tile/_bin/h5tile``); this runs
it with the same arguments, so that its exit status, signals (Ctrl-C) and terminal output are
the program's own.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys


def executable() -> pathlib.Path:
    """The path of the h5tile command that this package carries."""
    return pathlib.Path(__file__).resolve().parent / "_bin" / ("h5tile.exe" if os.name == "nt" else "h5tile")


def main() -> int:
    """Run the h5tile command with this process's arguments; return its exit status."""
    program = executable()
    if not program.is_file():
        sys.stderr.write(f"h5tile: error: the h5tile command is not installed with this package (no {program}); "
                         "it is built where CLI11 and nlohmann-json are found (H5TILE_BUILD_CLI=ON)\n")
        return 1
    argv = ["h5tile", *sys.argv[1:]]
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(program, argv)  # replaces this process; does not return
    return subprocess.call(argv, executable=program)


if __name__ == "__main__":
    sys.exit(main())
