"""scripts/check_tmp_clean.sh, the last stage of scripts/test.sh: it fails when the run left an
entry of h5tile's in /tmp (new since the snapshot) or in the run's own TMPDIR, and never for what
other programs make, nor for what was there before the run."""
import os
import subprocess

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "check_tmp_clean.sh"


def run(tmp_root, *args):
    env = dict(os.environ, H5TILE_CHECK_TMP_ROOT=str(tmp_root))
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env, timeout=60)


def test_only_what_the_run_left_of_h5tiles_fails_the_check(tmp_path):
    root, run_tmp = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    run_tmp.mkdir()
    (root / "h5tile_it_1_before").mkdir()  # there before the run: not the run's
    snapshot = tmp_path / "before"
    taken = run(root, "snapshot")
    assert taken.returncode == 0 and taken.stdout == "h5tile_it_1_before\n", taken.stderr
    snapshot.write_text(taken.stdout)
    # Other programs' files, the tools' own in the run's folder, and another test.sh run's folder.
    (root / "ompi.host.0").mkdir()
    (root / "h5tile-test.abc123").mkdir()
    (run_tmp / "pytest-of-root").mkdir()
    clean = run(root, "check", snapshot, run_tmp)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "pytest-of-root" in clean.stdout
    # What the run leaves: a fuzzer's scratch folder in /tmp, a C++ test's folder in TMPDIR.
    (root / "h5tile-fuzz-4242").mkdir()
    (run_tmp / "h5tile_it_77_Write").mkdir()
    left = run(root, "check", snapshot, run_tmp)
    assert left.returncode == 1, left.stdout + left.stderr
    assert f"{root}/h5tile-fuzz-4242" in left.stdout and f"{run_tmp}/h5tile_it_77_Write" in left.stdout
    assert "h5tile_it_1_before" not in left.stdout and "ompi" not in left.stdout.split("tools' own")[0]
