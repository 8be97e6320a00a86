"""The README's command transcripts (blocks of `$ h5tile ...` lines and their output) are run and
their output compared with the README's, line by line, in shape: numbers, sizes and tile-folder
ids may differ, the words and the lines may not. A README sample that no longer matches what the
command prints fails here."""
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def transcripts():
    """The README's fenced blocks whose first line is a `$ ` command: [(commands, lines)], each
    command with the output lines the README shows after it."""
    blocks = re.findall(r"^```\n(\$ .*?)^```", (ROOT / "README.md").read_text(), flags=re.M | re.S)
    result = []
    for block in blocks:
        steps = []
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        result.append(steps)
    return result


def shape(line: str) -> list:
    """A line's words with ids and numbers replaced: what must stay as the README shows it."""
    line = re.sub(r"\b[0-9a-f]{8,}(-[0-9a-f]+)*\b", "ID", line)
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    return line.split()


def make_files(folder):
    """The files the README's transcripts use."""
    a = np.arange(16384 * 1024, dtype=np.uint32).reshape(16384, 1024)
    h5tile.to_file(a, folder / "run.h5", "/data", ranks=4, layout="virtual").wait()
    with h5py.File(folder / "other.h5", "w") as f:
        f.create_dataset("fields/u", data=np.zeros((1000, 250)), chunks=(100, 250), compression="gzip")
        f["fields"].attrs["units"] = "m/s"
        f["fields"].attrs["step"] = 40
        ragged = f.create_dataset("ragged", (3,), dtype=h5py.vlen_dtype(np.int32))
        ragged[0] = [1, 2]
    with h5py.File(folder / "sparse.h5", "w") as f:
        y = f.create_dataset("y", shape=(2**63 - 1,), dtype="i1", chunks=(1024,))
        for k in range(4):
            y[k * 10**15:k * 10**15 + 1024] = 1
    h5tile.to_file(a, folder / "one.h5", "/data", layout="contiguous").wait()


# The bench transcript at a size a test can afford (the README shows 256 MiB).
SMALLER = {"--size 256M --repeats 3": "--size 4M --repeats 1"}


@pytest.mark.parametrize("steps", transcripts(), ids=lambda steps: steps[0][0].split()[1])
def test_readme_transcript(steps, tmp_path):
    make_files(tmp_path)
    env = dict(os.environ, PATH=f"{BUILD / 'cli'}{os.pathsep}{os.environ['PATH']}", H5TILE_PROGRESS_AFTER="1000")
    for command, expected in steps:
        for big, small in SMALLER.items():
            command = command.replace(big, small)
        run = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        # What a reader sees: stdout, then the command's own error lines (bench's per-run timings on
        # stderr are not part of the sample).
        got = run.stdout.splitlines() + [line for line in run.stderr.splitlines() if line.startswith("h5tile:")]
        assert [shape(line) for line in got] == [shape(line) for line in expected], (
            f"README: $ {command}\n" + "\n".join(expected) + "\n--- the command printed:\n" + "\n".join(got))
