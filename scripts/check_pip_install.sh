#!/usr/bin/env bash
# `pip install` exactly as a user does it: a fresh virtual environment whose pip installs a clean
# copy of this checkout (its tracked and new files, as in the working tree; nothing ignored, so no
# build folder) with build isolation and dependencies; then, outside the source tree, a round trip
# with the venv's Python checked with h5py and numpy, and the h5tile command (console script and
# `python -m h5tile`). Needs the package index (pip's cache, ~/.cache/pip, keeps the downloads);
# the package itself is compiled from scratch every time (pip caches no wheel built from a folder).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT  # the EXIT trap then runs too
trap 'exit 143' TERM
fail() { echo "check_pip_install: $*" >&2; exit 1; }

src="$work/src"
mkdir "$src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  if [ -e "$f" ]; then cp --parents -P -- "$f" "$src/"; fi
done
(cd "$src" && find . | sort) >"$work/before.txt"

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
python3 -m venv "$work/venv"
venv="$work/venv"
if ! "$venv/bin/pip" install "$src" h5py >"$work/pip.log" 2>&1; then
  tail -n 80 "$work/pip.log" >&2
  fail "pip install of a clean copy into a fresh venv failed (the end of its log is above)"
fi
installed=$SECONDS
(cd "$src" && find . | sort) | diff "$work/before.txt" - >&2 || fail "pip install wrote into the source tree (above)"

mkdir "$work/run"
cd "$work/run"
"$venv/bin/python" - "$venv" <<'PY' || fail "the round trip with the installed package failed"
import pathlib, sys, sysconfig
import h5py, numpy as np, h5tile
assert h5tile.__file__.startswith(sys.argv[1]), f"h5tile imported from {h5tile.__file__}, not the venv"
package = pathlib.Path(h5tile.__file__).parent
assert (package / "_h5tile.pyi").is_file() and (package / "py.typed").is_file(), "the type stubs are not installed"
strays = sorted(p.name for p in pathlib.Path(sysconfig.get_paths()["platlib"]).iterdir() if p.name in ("bin", "_h5tile.pyi"))
assert not strays, f"the wheel put {strays} at the top of site-packages"
a = np.arange(60, dtype=np.int32).reshape(6, 10)
for layout in ("virtual", "contiguous", "chunked"):
    h5tile.to_file(a, f"p/{layout}.h5", "/x", layout=layout, ranks=2).wait()
    with h5py.File(f"p/{layout}.h5", "r") as f:
        assert f["x"].dtype == a.dtype and (f["x"][...] == a).all(), layout
    assert (h5tile.from_file(f"p/{layout}.h5", "/x") == a).all(), layout
# The wheel's extension carries its HDF5 with the symbols hidden (cmake/h5tile_hdf5.cmake), so that
# a process where cuPyNumeric put Legate's HDF5 in the global scope first still works.
assert h5tile._h5tile.hdf5_linkage() == "static", "the wheel's extension links HDF5's shared library (see CMake's warning)"
PY
"$venv/bin/h5tile" --help >"$work/help.txt" || fail "'h5tile --help' (the console script) failed"
grep -q "Usage: h5tile" "$work/help.txt" || fail "'h5tile --help' printed no usage: $(head -c 300 "$work/help.txt")"
info=$("$venv/bin/python" -m h5tile info p/virtual.h5) || fail "'python -m h5tile info p/virtual.h5' failed"
[[ "$info" == *"x  int32 [6, 10]  virtual (2 sources)"* ]] || fail "'python -m h5tile info' printed: $info"
rc=0
"$venv/bin/h5tile" info missing.h5 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "'h5tile info missing.h5' exited with $rc, not 1"
echo "check_pip_install: pip install into a fresh venv ($((installed - start)) s), round trip with h5py, h5tile command: ok ($((SECONDS - start)) s)"
