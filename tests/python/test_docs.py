"""Every fenced code block of README.md and docs/*.md is run here, or accounted for.

The blocks of one page run in order, in one fresh folder, so that a block may read what an
earlier block of its page wrote:

- ```python: run by `python3` with the build's package on PYTHONPATH;
- ```sh and ```bash: run by bash with the built `h5tile` command first on PATH;
- ```console: a transcript: each `$ ` line is run as above and what it prints is compared with
  the lines the page shows after it, line by line, in shape (numbers, sizes and tile-folder ids
  may differ; the words and the lines may not);
- ```cpp: a whole program, compiled against the build tree (include/, the build's libh5tile.a and
  the libraries the `h5tile` command links, as build.ninja names them) and run;
- ```text: output or a file layout shown, not run.

A block that cannot run here carries a marker on the line before its fence, which this test
reports (never as passed):

    <!-- docs-test: skip reason="why" -->         reported as skipped, with the reason
    <!-- docs-test: legate -->                    a ```python block run under Legate on CPUs
                                                  (the settings of test_legate.py); skipped where
                                                  legate is not installed
    <!-- docs-test: mpi=N -->                     a ```python block run by `mpirun -n N` (as
                                                  test_package.py runs MPI programs); skipped where
                                                  mpirun or mpi4py is missing
    <!-- docs-test: same-as=PATH -->              every line of the block is a line of PATH (a file
                                                  of the repository that the build or a test uses),
                                                  in the same order

A fence of any other language, or none, fails. Relative links in these pages and BENCHMARKS.md
must name files (and headings) that exist."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from conftest import BUILD, ROOT

PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
RUN_LANGUAGES = {"python", "sh", "bash", "console", "cpp"}
# The bench transcript at a size a test can afford (the page shows 256 MiB).
SMALLER = {"--size 256M --repeats 3": "--size 4M --repeats 1"}
MARKER = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: pathlib.Path
    line: int          # 1-based line of the opening fence
    language: str
    text: str
    marker: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}:{self.language or 'none'}"


def marker_of(text: str) -> dict:
    """`skip reason="why"`, `legate`, `same-as=PATH` -> {"skip": None, "reason": "why"}, ..."""
    result = {}
    for m in re.finditer(r'([\w-]+)(?:=(?:"([^"]*)"|(\S+)))?', text):
        result[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
    return result


def blocks_of(page: pathlib.Path) -> list:
    lines = page.read_text().splitlines()
    result, i = [], 0
    while i < len(lines):
        opener = re.match(r"^```(.*)$", lines[i])
        if not opener:
            i += 1
            continue
        language = opener.group(1).strip()
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{page}:{start + 1}: a fence that is never closed"
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        found = MARKER.match(before)
        result.append(Block(page, start + 1, language, "\n".join(body) + "\n",
                            marker_of(found.group(1)) if found else {}))
        i += 1
    return result


BLOCKS = [block for page in PAGES for block in blocks_of(page)]
FOLDERS: dict = {}


@pytest.fixture
def page_folder(block, tmp_path_factory):
    """One folder per page, shared by its blocks (which run in the page's order)."""
    if block.page not in FOLDERS:
        FOLDERS[block.page] = tmp_path_factory.mktemp(block.page.stem.lower())
    return FOLDERS[block.page]


def environment() -> dict:
    return dict(os.environ, PYTHONPATH=str(BUILD / "python"),
                PATH=f"{BUILD / 'cli'}{os.pathsep}{os.environ['PATH']}", H5TILE_PROGRESS_AFTER="1000")


def run_python(block: Block, folder: pathlib.Path, env: dict) -> None:
    out = subprocess.run([sys.executable, "-c", block.text], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, f"{block.id} failed:\n{block.text}\n--- stdout\n{out.stdout}\n--- stderr\n{out.stderr}"


def shape(line: str) -> list:
    """A line's words with ids and numbers replaced: what must stay as the page shows it."""
    line = re.sub(r"\b[0-9a-f]{8,}(-[0-9a-f]+)*\b", "ID", line)
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    return line.split()


def run_transcript(block: Block, folder: pathlib.Path) -> None:
    steps = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"{block.id}: a transcript starts with a `$ ` line"
            steps[-1][1].append(line)
    for command, expected in steps:
        for big, small in SMALLER.items():
            command = command.replace(big, small)
        run = subprocess.run(["bash", "-c", command], cwd=folder, env=environment(), capture_output=True,
                             text=True, timeout=300)
        # What a reader sees: stdout, then the command's own error lines (bench's per-run timings on
        # stderr are not part of the sample).
        got = run.stdout.splitlines() + [line for line in run.stderr.splitlines() if line.startswith("h5tile:")]
        assert [shape(line) for line in got] == [shape(line) for line in expected], (
            f"{block.id}: $ {command}\n" + "\n".join(expected) + "\n--- the command printed:\n" + "\n".join(got))


def link_command() -> list:
    """The compiler's include and link arguments for a program using the build tree, from the
    build's own rules for the `h5tile` command; skips where the build has none."""
    ninja = BUILD / "build.ninja"
    if not ninja.exists():
        pytest.skip(f"{ninja} is missing: C++ blocks compile against a Ninja build tree")
    rules = ninja.read_text()
    link = re.search(r"^build cli/h5tile: .*?\n((?:  .*\n)+)", rules, flags=re.M)
    compile_ = re.search(r"^build cli/CMakeFiles/h5tile_cli\.dir/main\.cpp\.o: .*?\n((?:  .*\n)+)", rules, flags=re.M)
    if not link or not compile_:
        pytest.skip("build.ninja has no rule for cli/h5tile: C++ blocks compile with that rule's flags")

    def variable(text, name):
        m = re.search(rf"^  {name} = (.*)$", text, flags=re.M)
        return shlex.split(m.group(1)) if m else []

    libraries = [str(BUILD / arg) if arg == "libh5tile.a" else arg for arg in variable(link.group(1), "LINK_LIBRARIES")]
    return (variable(compile_.group(1), "DEFINES") + variable(compile_.group(1), "INCLUDES") + ["-std=gnu++20"],
            libraries + variable(link.group(1), "LINK_PATH"))


def run_cpp(block: Block, folder: pathlib.Path) -> None:
    compiler = shutil.which(os.environ.get("CXX", "c++"))
    if compiler is None:
        pytest.skip("no C++ compiler")
    flags, libraries = link_command()
    source = folder / f"block_{block.line}.cpp"
    source.write_text(block.text)
    program = folder / f"block_{block.line}"
    built = subprocess.run([compiler, *flags, str(source), "-o", str(program), *libraries], capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, f"{block.id} does not compile:\n{built.stderr[-5000:]}"
    run = subprocess.run([str(program)], cwd=folder, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"{block.id} exited with {run.returncode}:\n{run.stdout}\n{run.stderr}"


def legate_environment() -> dict:
    from test_legate import DRIVER, legate_environment as settings
    import importlib.util
    if importlib.util.find_spec("legate") is None:
        pytest.skip("legate is not installed (scripts/install_legate.sh installs it)")
    if not DRIVER.exists():
        pytest.fail(f"{DRIVER} is missing: build first (scripts/build.sh)")
    return settings() | {"PYTHONPATH": str(BUILD / "python")}


def run_mpi(block: Block, folder: pathlib.Path, ranks: int) -> None:
    if shutil.which("mpirun") is None:
        pytest.skip(f"{block.id}: an MPI program, and mpirun is not installed")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip(f"{block.id}: an MPI program, and mpi4py is not installed")
    script = folder / f"block_{block.line}.py"
    script.write_text(block.text)
    env = environment() | {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    out = subprocess.run(["mpirun", "--oversubscribe", "-n", str(ranks), sys.executable, script.name], cwd=folder,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"{block.id} failed under mpirun -n {ranks}:\n{out.stdout}\n{out.stderr[-5000:]}"


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.id)
def test_block(block, page_folder):
    if "skip" in block.marker:
        assert block.marker.get("reason"), f"{block.id}: a skip marker gives its reason"
        pytest.skip(f"{block.id}: {block.marker['reason']}")
    if "same-as" in block.marker:
        target = ROOT / block.marker["same-as"]
        lines = [line.strip() for line in target.read_text().splitlines()]
        position = 0
        for line in (line.strip() for line in block.text.splitlines() if line.strip()):
            assert line in lines[position:], f"{block.id}: `{line}` is not (in this order) in {target}"
            position = lines.index(line, position) + 1
        return
    if block.language == "text":
        return  # shown, not run
    assert block.language in RUN_LANGUAGES, (
        f"{block.id}: a ```{block.language} block is neither run nor marked: fence output as ```text, "
        "or give it a `<!-- docs-test: ... -->` marker")
    if block.language == "python" and "mpi" in block.marker:
        run_mpi(block, page_folder, int(block.marker["mpi"]))
    elif block.language == "python":
        env = legate_environment() if "legate" in block.marker else environment()
        run_python(block, page_folder, env)
    elif block.language in ("sh", "bash"):
        out = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=page_folder, env=environment(),
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"{block.id} failed:\n{block.text}\n{out.stdout}\n{out.stderr}"
    elif block.language == "console":
        run_transcript(block, page_folder)
    elif block.language == "cpp":
        run_cpp(block, page_folder)


def test_every_page_is_found():
    assert (ROOT / "docs" / "README.md") in PAGES and len(PAGES) >= 10
    assert any(block.language == "python" for block in BLOCKS)


def test_the_readme_starts_with_the_two_commands_that_ci_runs():
    """README.md opens with its two commands; the second is what CI runs (.ci/run)."""
    first = blocks_of(ROOT / "README.md")[0]
    commands = [line.split("#")[0].strip() for line in first.text.splitlines() if not line.startswith(" ")]
    assert commands == ["scripts/demo.sh", "scripts/test.sh"], commands
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert ci == ["scripts/test.sh"], ci


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: pathlib.Path) -> set:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, flags=re.M)}


@pytest.mark.parametrize("page", PAGES + [ROOT / "BENCHMARKS.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s):, mailto:
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(target)
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(target)
    assert not broken, f"{page}: links to nothing: {broken}"


def test_the_include_graph_that_architecture_shows_runs_down_the_layers():
    """docs/ARCHITECTURE.md's drawing command: a DOT graph of the folders of src/, no arrow up."""
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "check_layers.py"), "--graph"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    edges = re.findall(r'"(\w+)" -> "(\w+)"(.*);', out)
    assert out.startswith("digraph layers {") and ("api", "layout") in [edge[:2] for edge in edges]
    assert ("core", "api") not in [edge[:2] for edge in edges]
    assert [edge for edge in edges if "red" in edge[2]] == []
