#!/usr/bin/env bash
# `pip install .` from this checkout into a scratch folder, then a round trip with the
# installed package (outside the source tree, so nothing is imported from it by accident).
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
python3 -m pip install -q --no-build-isolation --no-deps --target "$target/site" . 2>&1 | grep -v "as the 'root' user" || true
(cd "$target" && PYTHONPATH="$target/site" python3 - <<'PY'
import numpy as np, h5py, h5tile
a = np.arange(60, dtype=np.int32).reshape(6, 10)
h5tile.to_file(a, "p/x.h5", "/x", ranks=2).wait()
with h5py.File("p/x.h5", "r") as f:
    assert (f["x"][...] == a).all()
assert (h5tile.from_file("p/x.h5", "/x") == a).all()
assert h5tile.__file__.startswith(__import__("os").getcwd())
print("check_pip_install: pip install . works; installed package round-trips")
PY
)
