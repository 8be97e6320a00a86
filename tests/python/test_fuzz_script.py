"""scripts/fuzz.sh, driven by stand-in fuzzers (H5TILE_FUZZER): replaying the regression inputs
and the seed corpus is the gate; during the timed fuzzing, a failure of the sanitizers' own
machinery is reported and never fails the script, while a finding in h5tile still does. A run
leaves no temporary files, even when it is stopped by a signal."""
import os
import pathlib
import signal
import subprocess
import time

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "fuzz.sh"

# What a run ends with when LeakSanitizer cannot stop the process to look for leaks at exit:
# libFuzzer's final statistics, then the fatal error, no stack, and no input written.
LSAN_FATAL = ("stat::number_of_executed_units: 812\\n==4242==LeakSanitizer has encountered a fatal error.\\n"
              "==4242==HINT: For debugging, try setting ASAN_OPTIONS=verbosity=1")

FINDING = """==7==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011
    #0 0x55d0 in h5tile::detail::OpenDataset::read(h5tile::Box const&) /build/h5tile/src/layout/open_dataset.cpp:321:7
    #1 0x55d1 in LLVMFuzzerTestOneInput /build/h5tile/tests/fuzz/open_fuzzer.cpp:40:3
SUMMARY: AddressSanitizer: heap-buffer-overflow
artifact_prefix='x'; Test unit written to {dir}/crash-1234"""


def run(fuzzer, *args):
    env = dict(os.environ, H5TILE_FUZZER=str(fuzzer), H5TILE_FUZZ_BUILD_DIR=str(fuzzer.parent / "build-fuzz"))
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def test_a_sanitizer_failing_on_its_own_while_fuzzing_is_reported_not_fatal(tmp_path):
    fuzzer = tmp_path / "fake_fuzzer"
    fuzzer.write_text(f"""#!/usr/bin/env bash
case "$1" in
  -*) printf '%b\\n' "{LSAN_FATAL}"; exit 1 ;;
  *) exit 0 ;;
esac
""")
    fuzzer.chmod(0o755)
    done = run(fuzzer, "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replay:" in done.stdout and "no failure" in done.stdout
    assert "infrastructure error" in done.stdout and "LeakSanitizer has encountered a fatal error" in done.stdout
    assert "infrastructure errors: " in done.stdout


def test_a_run_that_leaves_no_input_and_no_stack_is_reported_not_fatal(tmp_path):
    fuzzer = tmp_path / "fake_fuzzer"
    fuzzer.write_text("""#!/usr/bin/env bash
case "$1" in
  -*) echo "killed"; exit 137 ;;
  *) exit 0 ;;
esac
""")
    fuzzer.chmod(0o755)
    done = run(fuzzer, "fuzz", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "infrastructure error (exit 137" in done.stdout


def test_a_finding_in_h5tile_fails_the_fuzzing(tmp_path):
    fuzzer = tmp_path / "fake_fuzzer"
    fuzzer.write_text(f"""#!/usr/bin/env bash
case "$1" in
  -*) cat <<'END' | sed "s#{{dir}}#{tmp_path}#"
{FINDING}
END
      touch {tmp_path}/crash-1234; exit 1 ;;
  *) exit 0 ;;
esac
""")
    fuzzer.chmod(0o755)
    done = run(fuzzer, "fuzz", "3")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "h5tile finding" in done.stdout and "open_dataset.cpp:321" in done.stdout


def test_a_failing_regression_input_fails_the_replay_and_is_named(tmp_path):
    fuzzer = tmp_path / "fake_fuzzer"
    fuzzer.write_text("""#!/usr/bin/env bash
case "$1" in
  *leaked-type-handle*) echo "==1==ERROR: AddressSanitizer: SEGV"; exit 1 ;;
  *) exit 0 ;;
esac
""")
    fuzzer.chmod(0o755)
    done = run(fuzzer, "replay")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "leaked-type-handle-strided-vds.h5 fails" in done.stdout


# A stand-in for the fuzzer that, as the real one, makes its scratch folder where TMPDIR says,
# and records where that was.
SCRATCH = """mkdir -p "$TMPDIR/h5tile-fuzz-$$" && echo "$$ $TMPDIR" >> {record}"""


def test_a_run_leaves_nothing_in_the_temporary_folder(tmp_path):
    fuzzer = tmp_path / "fake_fuzzer"
    fuzzer.write_text(f"#!/usr/bin/env bash\n{SCRATCH.format(record=tmp_path / 'record')}\nexit 0\n")
    fuzzer.chmod(0o755)
    outer = tmp_path / "tmp"
    outer.mkdir()
    env = dict(os.environ, TMPDIR=str(outer), H5TILE_FUZZER=str(fuzzer),
               H5TILE_FUZZ_BUILD_DIR=str(tmp_path / "build-fuzz"))
    done = subprocess.run([str(SCRIPT), "2"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    used = {line.split()[1] for line in (tmp_path / "record").read_text().splitlines()}
    # Every fuzzer process (replays and fuzzing) wrote into the run's own folder in build-fuzz,
    # which is gone; nothing was written to the TMPDIR the script was given.
    assert len(used) == 1 and pathlib.Path(next(iter(used))).parent == tmp_path / "build-fuzz", used
    assert not pathlib.Path(next(iter(used))).exists()
    assert list(outer.iterdir()) == []


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_run_stopped_by_a_signal_stops_the_fuzzer_and_removes_its_temporary_files(tmp_path, sig):
    record = tmp_path / "record"
    fuzzer = tmp_path / "fake_fuzzer"
    fuzzer.write_text(f"""#!/usr/bin/env bash
case "$1" in
  -*) {SCRATCH.format(record=record)}; exec sleep 100 ;;
  *) exit 0 ;;
esac
""")
    fuzzer.chmod(0o755)
    outer = tmp_path / "tmp"
    outer.mkdir()
    env = dict(os.environ, TMPDIR=str(outer), H5TILE_FUZZER=str(fuzzer),
               H5TILE_FUZZ_BUILD_DIR=str(tmp_path / "build-fuzz"))
    # The script gets SIGINT's default disposition, as from a terminal: a shell started with SIGINT
    # ignored (the tests run by `cmd &` from a script, or nohup) can neither trap nor reset it.
    script = subprocess.Popen([str(SCRIPT), "fuzz", "100"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              cwd=ROOT, env=env, preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 60
        while not (record.exists() and record.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert record.exists(), "the fuzzer never started"
        pid, used = record.read_text().split()
        assert pathlib.Path(used, f"h5tile-fuzz-{pid}").is_dir()
        script.send_signal(sig)
        code = script.wait(timeout=30)  # at once, not when the fuzzing run would end
    finally:
        if script.poll() is None:
            script.kill()
            script.wait()
    assert code == 128 + sig, script.stdout.read()
    assert not pathlib.Path(used).exists() and list(outer.iterdir()) == []
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)
