"""h5tile.settings (the process-wide defaults from Python), and options that used to be ignored."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import settings  # noqa: E402


@pytest.fixture()
def restore():
    """Puts every setting back after the test."""
    names = ["threads", "task_size", "alignment", "staging_bytes", "host_pool_bytes", "raw_io", "early_reads", "probe",
             "probe_timeout", "direct_io", "gds", "cold_reads", "cold_readers", "cold_request_size"]
    before = {n: getattr(settings, n)() for n in names}
    yield
    for n, v in before.items():
        getattr(settings, "set_" + n)(v)


def test_every_setting_reads_back_what_was_set(restore):
    settings.set_threads(3)
    assert settings.threads() == 3
    settings.set_task_size(1 << 20)
    assert settings.task_size() == 1 << 20
    settings.set_task_size("16M")
    assert settings.task_size() == 16 << 20
    settings.set_alignment("8k")
    assert settings.alignment() == 8192
    settings.set_staging_bytes("1.5G")
    assert settings.staging_bytes() == 3 << 29
    settings.set_host_pool_bytes("3G")
    assert settings.host_pool_bytes() == 3 << 30
    for off in (0, "0", "off"):
        settings.set_host_pool_bytes(off)
        assert settings.host_pool_bytes() == 0
    settings.set_probe_timeout(0.25)
    assert settings.probe_timeout() == 0.25
    for flag in ("raw_io", "early_reads", "probe"):
        getattr(settings, "set_" + flag)(False)
        assert getattr(settings, flag)() is False
        getattr(settings, "set_" + flag)(True)
        assert getattr(settings, flag)() is True
    for mode in ("on", "off", "auto"):
        settings.set_direct_io(mode)
        assert settings.direct_io() == mode
        settings.set_gds(mode)
        assert settings.gds() == mode
    assert settings.parse_size("2 GiB") == 2 << 30


def test_bad_values_are_value_errors_that_say_what_is_wrong(restore):
    with pytest.raises(h5tile.InvalidArgumentError, match="at least 1"):
        settings.set_threads(0)
    with pytest.raises(ValueError, match="'12X' is not a size"):
        settings.set_task_size("12X")
    with pytest.raises(ValueError, match="positive number of bytes"):
        settings.set_staging_bytes(-1)
    with pytest.raises(ValueError, match="power of two"):
        settings.set_alignment(3000)
    with pytest.raises(ValueError, match="'auto', 'on' or 'off'"):
        settings.set_gds("maybe")
    assert settings.threads() >= 1


def test_settings_change_what_later_calls_do(tmp_path, restore):
    a = random_array("float32", (64, 10), seed=1)
    settings.set_threads(2)
    h5tile.to_file(a, tmp_path / "a.h5", "/x", layout="virtual").wait()  # ranks 0: the threads setting
    with h5py.File(tmp_path / "a.h5", "r") as f:
        assert len(f["x"].virtual_sources()) == 2
    settings.set_raw_io(False)
    assert same_bytes(h5tile.from_file(tmp_path / "a.h5", "/x"), a)


def test_repeated_reads_reuse_freed_results_and_never_show_their_old_bytes(tmp_path, restore):
    """The host pool hands a freed result's memory to the next read of the same size: that read
    must still write every byte, fill values of unwritten chunks and unmapped regions included."""
    shape = (2048, 4096)  # 32 MiB of float32: the smallest size the pool keeps
    data = random_array("float32", shape, seed=2)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f.create_dataset("full", data=data)
        sparse = f.create_dataset("sparse", shape=shape, dtype="float32", chunks=(256, 4096), fillvalue=7.5)
        sparse[256:512] = data[256:512]  # the other chunks are never written: HDF5 returns 7.5
        layout = h5py.VirtualLayout(shape=shape, dtype="float32")
        layout[:1024] = h5py.VirtualSource(".", "full", shape=shape)[:1024]  # the rest maps nothing
        f.create_virtual_dataset("gappy", layout, fillvalue=-3.0)
    settings.set_host_pool_bytes("1G")
    first = h5tile.from_file(tmp_path / "f.h5", "full")
    assert same_bytes(first, data)
    address = first.__array_interface__["data"][0]
    del first
    assert settings.host_pool_held_bytes() == data.nbytes  # kept
    with h5py.File(tmp_path / "f.h5", "r") as f:
        for name in ["sparse", "gappy", "full"]:
            again = h5tile.from_file(tmp_path / "f.h5", name)
            assert settings.host_pool_held_bytes() == 0, name  # taken for this read
            assert again.__array_interface__["data"][0] == address, name
            assert same_bytes(again, f[name][()]), name
            del again
    settings.set_host_pool_bytes(0)
    assert settings.host_pool_held_bytes() == 0  # a lower limit frees at once


def test_settings_start_from_the_environment_in_the_same_syntax(tmp_path):
    code = ("from h5tile import settings as s; print(s.task_size(), s.staging_bytes(), s.threads(), s.gds(), "
            "s.gpu_decode(), s.nvcomp_library())")
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), H5TILE_TASK_SIZE="1.5m", H5TILE_STAGING_BYTES="1g",
               H5TILE_THREADS="3", H5TILE_GDS="off", H5TILE_GPU_DECODE="on", H5TILE_NVCOMP_LIBRARY="/x/libnvcomp.so.6")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.split() == [str(3 << 19), str(1 << 30), "3", "off", "on", "/x/libnvcomp.so.6"], out.stderr
    env["H5TILE_TASK_SIZE"] = "-5G"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode != 0 and "H5TILE_TASK_SIZE: '-5G' is not a size" in out.stderr


def test_package_version_is_the_cmake_project_version():
    import re
    version = re.search(r"project\(h5tile VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert h5tile.__version__ == version


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_chunks_with_a_layout_that_has_none_is_an_error(tmp_path, layout):
    a = np.zeros((100, 10), np.float32)
    with pytest.raises(h5tile.InvalidArgumentError, match=f"chunk shape \\(\\[10, 10\\]\\) is for layout 'chunked' "
                                                          f"\\(or 'virtual' with compression\\), not '{layout}'"):
        h5tile.to_file(a, tmp_path / "a.h5", "/x", layout=layout, chunks=(10, 10))
    assert not (tmp_path / "a.h5").exists()
    h5tile.to_file(a, tmp_path / "a.h5", "/x", layout="chunked", chunks=(10, 10)).wait()
    with h5py.File(tmp_path / "a.h5", "r") as f:
        assert f["x"].chunks == (10, 10)


def test_batched_reports_progress_per_block_and_can_cancel(tmp_path):
    a = random_array("int16", (50, 8), seed=5)
    h5tile.to_file(a, tmp_path / "a.h5", "/x", ranks=3).wait()
    calls = []
    blocks = list(h5tile.from_file_batched(tmp_path / "a.h5", "/x", (20, 8), progress=lambda d, t: calls.append((d, t))))
    assert [b.shape[0] for b, _ in blocks] == [20, 20, 10]
    assert calls == [(320, 800), (640, 800), (800, 800)]
    assert same_bytes(np.concatenate([b for b, _ in blocks]), a)
    reader = h5tile.from_file_batched(tmp_path / "a.h5", "/x", (20, 8), progress=lambda d, t: d < 600)
    assert len(reader) == 3
    next(reader)
    with pytest.raises(h5tile.CancelledError):
        next(reader)
    with pytest.raises(h5tile.InvalidArgumentError, match="callable"):
        h5tile.from_file_batched(tmp_path / "a.h5", "/x", (20, 8), progress=5)


def test_gpu_decoding_is_auto_unless_set_otherwise():
    # Unset or empty means auto: deflate decoded on the GPU, its Adler-32 checked there (nvCOMP does
    # not), zstd and lz4 on the CPU (test_gpu_decode.py checks which decoder ran, on a GPU).
    code = "from h5tile import settings as s; print(s.gpu_decode())"
    env = {k: v for k, v in os.environ.items() if k != "H5TILE_GPU_DECODE"}
    env["PYTHONPATH"] = str(BUILD / "python")
    for value, expected in ((None, "auto"), ("", "auto"), ("auto", "auto"), ("on", "on"), ("off", "off")):
        if value is not None:
            env["H5TILE_GPU_DECODE"] = value
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert out.stdout.split() == [expected], (value, out.stderr)


# Each environment variable with values it must refuse, and a piece of the message that says why.
BAD_ENVIRONMENT = [
    ("H5TILE_THREADS", "2K", "no size suffix"),  # a count: once read as 2048
    ("H5TILE_THREADS", "2k", "no size suffix"),
    ("H5TILE_THREADS", "1.5", "no size suffix"),
    ("H5TILE_THREADS", "-1", "no size suffix"),
    ("H5TILE_THREADS", " 2", "no size suffix"),
    ("H5TILE_THREADS", "0", "zero"),
    ("H5TILE_THREADS", "100000", "4096"),
    ("H5TILE_THREADS", "99999999999999999999999", "4096"),
    ("H5TILE_TASK_SIZE", "12X", "is not a size"),
    ("H5TILE_TASK_SIZE", "0", "H5TILE_TASK_SIZE"),
    ("H5TILE_ALIGNMENT", "3000", "power of two"),
    ("H5TILE_STAGING_BYTES", "-5G", "is not a size"),
    ("H5TILE_HOST_POOL", "lots", "is not a size"),
    ("H5TILE_RAW_IO", "yes", "must be 0 or 1"),
    ("H5TILE_RAW_IO", "2", "must be 0 or 1"),
    ("H5TILE_EARLY_READS", "no", "must be 0 or 1"),
    ("H5TILE_PROBE", "true", "must be 0 or 1"),
    ("H5TILE_PROBE_TIMEOUT", "ten", "seconds"),
    ("H5TILE_DIRECT_IO", "maybe", "auto, on or off"),
    ("H5TILE_GDS", "1", "auto, on or off"),
    ("H5TILE_COLD_READS", "fast", "auto, parallel or stream"),
    ("H5TILE_COLD_READS", "on", "auto, parallel or stream"),
    ("H5TILE_COLD_READERS", "0", "zero"),
    ("H5TILE_COLD_READERS", "2K", "no size suffix"),
    ("H5TILE_COLD_REQUEST", "512K", "1 MiB to 1 GiB"),
    ("H5TILE_COLD_REQUEST", "2G", "1 MiB to 1 GiB"),
    ("H5TILE_COLD_REQUEST", "lots", "is not a size"),
    ("H5TILE_GPU_DECODE", "maybe", "auto, on or off"),
    ("H5TILE_REMOTE_CONNECTIONS", "2K", "no size suffix"),
    ("H5TILE_REMOTE_CONNECTIONS", "0", "zero"),
    ("H5TILE_REMOTE_CONNECTIONS", "5000", "1024"),
    ("H5TILE_REMOTE_BLOCK_SIZE", "lots", "is not a size"),
    ("H5TILE_REMOTE_BLOCK_SIZE", "100", "4 KiB to 1 GiB"),
    ("H5TILE_REMOTE_TIMEOUT", "soon", "seconds"),
    ("H5TILE_REMOTE_RETRIES", "-1", "no size suffix"),
    ("H5TILE_REMOTE_RETRIES", "101", "100"),
    ("H5TILE_LZ4_BLOCK_SIZE", "100", "4 KiB to 1 GiB, or 0"),
    ("H5TILE_LZ4_BLOCK_SIZE", "big", "is not a size"),
]


GETTERS = {"H5TILE_THREADS": ("threads", "7", 7), "H5TILE_TASK_SIZE": ("task_size", "2K", 2048),
           "H5TILE_ALIGNMENT": ("alignment", "8K", 8192), "H5TILE_STAGING_BYTES": ("staging_bytes", "1m", 1 << 20),
           "H5TILE_HOST_POOL": ("host_pool_bytes", "off", 0), "H5TILE_RAW_IO": ("raw_io", "0", False),
           "H5TILE_EARLY_READS": ("early_reads", "0", False), "H5TILE_PROBE": ("probe", "1", True),
           "H5TILE_PROBE_TIMEOUT": ("probe_timeout", "2.5", 2.5), "H5TILE_DIRECT_IO": ("direct_io", "on", "on"),
           "H5TILE_GDS": ("gds", "off", "off"),
           "H5TILE_COLD_READS": ("cold_reads", "stream", "stream"), "H5TILE_COLD_READERS": ("cold_readers", "2", 2),
           "H5TILE_COLD_REQUEST": ("cold_request_size", "32M", 32 << 20), "H5TILE_GPU_DECODE": ("gpu_decode", "on", "on"),
           "H5TILE_REMOTE_CONNECTIONS": ("remote_connections", "8", 8),
           "H5TILE_REMOTE_BLOCK_SIZE": ("remote_block_size", "64K", 65536),
           "H5TILE_REMOTE_TIMEOUT": ("remote_timeout", "2.5", 2.5), "H5TILE_REMOTE_RETRIES": ("remote_retries", "0", 0),
           "H5TILE_LZ4_BLOCK_SIZE": ("lz4_block_size", "64K", 65536)}


@pytest.mark.parametrize("variable", sorted(GETTERS))
def test_every_environment_variable_is_checked_when_first_read(variable):
    """In a process of its own: the variable set to each bad value before its setting's first
    use; the getter and check_environment() raise InvalidArgumentError naming the variable, the
    value and why (a failed first read is tried again at the next use); then a good value reads."""
    getter, good, expected = GETTERS[variable]
    cases = [(value, why) for v, value, why in BAD_ENVIRONMENT if v == variable]
    code = f"""
import os, h5tile
from h5tile import settings
for value, why in {cases!r}:
    os.environ[{variable!r}] = value
    for check in (settings.{getter}, settings.check_environment):
        try:
            check()
            print("accepted", repr(value))
        except h5tile.InvalidArgumentError as e:
            if {variable!r} not in str(e) or value.strip() not in str(e) or why not in str(e):
                print("unclear", repr(value), str(e))
os.environ[{variable!r}] = {good!r}
settings.check_environment()
print(repr(settings.{getter}()))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("H5TILE_")}
    env["PYTHONPATH"] = str(BUILD / "python")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [repr(expected)], out.stdout


SUBCOMMANDS = [["info", "f.h5"], ["verify", "f.h5"], ["consolidate", "f.h5:/d", "c.h5"], ["split", "f.h5:/d", "s.h5"],
               ["demo", "--size", "64k", "--path", "d.h5"], ["bench", "--size", "64k", "--repeats", "1"]]


@pytest.mark.parametrize("variable,value,why", BAD_ENVIRONMENT + [("H5TILE_PROGRESS_AFTER", "soon", "seconds")])
def test_the_command_checks_the_environment_the_same_way_in_every_subcommand(tmp_path, variable, value, why):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["d"] = np.arange(10)
    before = sorted(os.listdir(tmp_path))
    env = {k: v for k, v in os.environ.items() if not k.startswith("H5TILE_")}
    env[variable] = value
    results = set()
    for args in SUBCOMMANDS:
        out = subprocess.run([str(BUILD / "cli" / "h5tile"), *args], cwd=tmp_path, capture_output=True, text=True,
                             env=env, timeout=60)
        results.add((out.returncode, out.stderr))
        assert out.returncode == 1 and f"h5tile: error: environment variable {variable}" in out.stderr, (args, out)
        assert why in out.stderr, (args, out.stderr)
    assert len(results) == 1, results  # the same exit code and message from every subcommand
    assert sorted(os.listdir(tmp_path)) == before  # nothing ran


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "0x1000", "1G ", "12 apples"])
def test_a_bad_setting_read_late_fails_the_call_never_the_exit(tmp_path, value):
    """H5TILE_HOST_POOL is first read when a read allocates its result, and again when the result
    is freed (at exit, in a destructor): the read raises InvalidArgumentError naming the variable,
    and the process ends normally, never with 'terminate called'."""
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["d"] = np.arange(1 << 16, dtype="f8")
    code = f"""
import h5tile
try:
    a = h5tile.from_file({str(tmp_path / 'f.h5')!r}, "/d")
    print("read", a.sum())
except h5tile.InvalidArgumentError as e:
    print("refused", "H5TILE_HOST_POOL" in str(e))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("H5TILE_")}
    env.update(PYTHONPATH=str(BUILD / "python"), H5TILE_HOST_POOL=value)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "terminate" not in out.stderr, out.stderr
    assert out.stdout.split() == ["refused", "True"], out.stdout + out.stderr


def test_the_settings_page_shows_the_core_table():
    """docs/SETTINGS.md's table is what scripts/settings_table.py prints from settings.table(): the
    page names every setting the core parses, with the values and defaults it checks."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import settings_table
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    table = settings.table()
    assert [row["variable"] for row in table] and all(row["variable"].startswith("H5TILE_") for row in table)
    assert settings_table.markdown(table) in (ROOT / "docs" / "SETTINGS.md").read_text()
    # The type stub names every function the module makes from the table, with its kind's types.
    assert settings_table.stub(table) == (ROOT / "python" / "h5tile" / "settings.pyi").read_text()
    # Every setting has its getter and setter here, and the environment test above covers each.
    assert all(callable(getattr(settings, row["name"])) and callable(getattr(settings, "set_" + row["name"]))
               for row in table)
    assert {row["variable"] for row in table if row["kind"] != "text"} == set(GETTERS)


def _outside(row: dict) -> list:
    """Values just outside the bounds the table gives `row`, as the environment would hold them."""
    kind, least, most = row["kind"], row["least"], row["most"]
    if kind == "flag":
        return ["2"]
    if kind == "mode":
        return ["sometimes"]
    if kind == "seconds":
        return [str(least), str(most + 1)]
    values = [str(most + 1)] if most else []
    if least > 1:
        values.append(str(least - 1))
    return values


def test_the_environment_and_the_setters_refuse_values_outside_the_table():
    """The core's table drives both checks: each value just outside a setting's bounds (or an
    unknown word) is refused from the environment, naming the variable, and a count beyond its
    bounds by the Python setter."""
    cases = [(row["variable"], value) for row in settings.table() for value in _outside(row)]
    assert len(cases) >= 15
    code = """
import sys, h5tile
from h5tile import settings
try:
    settings.check_environment()
    print("accepted")
except h5tile.InvalidArgumentError as e:
    print("refused" if sys.argv[1] in str(e) else "unclear: " + str(e))
"""
    for variable, value in cases:  # a process each: a variable is read once, at its first use
        env = {k: v for k, v in os.environ.items() if not k.startswith("H5TILE_")}
        env.update(PYTHONPATH=str(BUILD / "python"), **{variable: value})
        out = subprocess.run([sys.executable, "-c", code, variable], capture_output=True, text=True, env=env,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "refused", (variable, value, out.stdout)
    for row in settings.table():
        if row["kind"] == "count":
            with pytest.raises(h5tile.InvalidArgumentError, match=str(row["most"])):
                getattr(settings, "set_" + row["name"])(row["most"] + 1)
