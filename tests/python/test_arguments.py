"""Every public function with a wrong argument: an h5tile error that names the argument (the
setting, for the setters) and says what it should be, never nanobind's "incompatible function
arguments" with the C++ signature. Values of the wrong type are ArgumentTypeError (a TypeError,
and an InvalidArgumentError); booleans are True or False, nothing merely truthy."""
import inspect
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, OneRank

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import settings  # noqa: E402

# What a message must not show: nanobind's dump of the call and the C++ types behind it.
LEAKS = ["incompatible function arguments", "Invoked with", "std::", "h5tile::", "nanobind", "ndarray<"]
# Parameters whose str values are of the right type (any str is a path or a name).
STRINGS = {"path", "path_in", "path_out", "dataset_name"}


@pytest.fixture()
def calls(tmp_path):
    """Each public function of the package with arguments that work."""
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["d"] = np.arange(24, dtype=np.int32).reshape(6, 4)
    a = np.ones((6, 4), np.float32)
    f, out = tmp_path / "f.h5", tmp_path / "out.h5"
    return {
        "to_file": (h5tile.to_file, dict(array=a, path=out, dataset_name="/d")),
        "from_file": (h5tile.from_file, dict(path=f, dataset_name="/d")),
        "from_file_batched": (h5tile.from_file_batched, dict(path=f, dataset_name="/d", chunk_size=(2, 4))),
        "read_box": (h5tile.read_box, dict(path=f, dataset_name="/d", offset=(0, 0), shape=(2, 2))),
        "describe": (h5tile.describe, dict(path=f, dataset_name="/d")),
        "consolidate": (h5tile.consolidate, dict(path_in=f, dataset_name="/d", path_out=out, mode="w")),
        "split": (h5tile.split, dict(path_in=f, dataset_name="/d", path_out=out, mode="w")),
        "write_tile": (h5tile.write_tile, dict(array=a, path=out, dataset_name="/d", comm=OneRank(), offset=(0, 0),
                                               global_shape=(6, 4))),
        "read_tile": (h5tile.read_tile, dict(path=f, dataset_name="/d", comm=OneRank())),
    }


def wrong_values(parameter):
    """Values of the wrong type (or past every range) for a parameter."""
    values = [object(), 2**64, 1.5]
    if parameter.name not in STRINGS:
        values.append("no")
    if parameter.default is inspect.Parameter.empty or parameter.default is not None:
        values.append(None)
    if parameter.name == "array":  # NumPy takes numbers as 0-d arrays: a number is an array
        values = [object(), "no", None]
    return values


def cases():
    names = ["to_file", "from_file", "from_file_batched", "read_box", "describe", "consolidate", "split",
             "write_tile", "read_tile"]
    functions = {n: getattr(h5tile, n) for n in names}
    for name, function in functions.items():
        for parameter in inspect.signature(function).parameters.values():
            for i, value in enumerate(wrong_values(parameter)):
                yield pytest.param(name, parameter.name, value, id=f"{name}-{parameter.name}-{i}")


def check_message(error, name):
    message = str(error)
    assert isinstance(error, h5tile.Error), repr(error)
    assert not any(leak in message for leak in LEAKS), message
    assert name in message, message


@pytest.mark.parametrize("function,parameter,value", list(cases()))
def test_a_wrong_argument_is_named(calls, function, parameter, value):
    call, arguments = calls[function]
    arguments = dict(arguments, **{parameter: value})
    with pytest.raises(Exception) as e:
        result = call(**arguments)
        if hasattr(result, "wait"):
            result.wait()
        elif hasattr(result, "__next__"):
            next(result)
    check_message(e.value, parameter)
    h5tile.fence()


def test_every_public_function_is_walked():
    """A public function added later gets a row here (or a reason why it takes no arguments)."""
    walked = {"to_file", "from_file", "from_file_batched", "read_box", "describe", "consolidate", "split",
              "write_tile", "read_tile"}
    no_arguments = {"fence", "compressors", "cuda_device_count", "last_device_io", "last_read_pattern",
                    "last_remote_io"}
    functions = {n for n in h5tile.__all__ if inspect.isfunction(getattr(h5tile, n))
                 or type(getattr(h5tile, n)).__name__ == "nb_func"}
    assert functions == walked | no_arguments


SETTERS = {
    "threads": [object(), "4", 4.0, None, True, 2**64],
    "task_size": [object(), 1.5, None, True, b"8M", 2**64, 0],
    "alignment": [object(), 1.5, None, False, 2**64],
    "staging_bytes": [object(), 1.5, None, 2**64, -1],
    "host_pool_bytes": [object(), 1.5, None, False, 2**64],
    "raw_io": ["no", "yes", 2, 1, 0, None, 1.0, object()],
    "early_reads": ["no", 2, 1, 0, None, object()],
    "probe": ["yes", 2, 1, 0, None, object()],
    "probe_timeout": ["1", None, True, object(), 10**400],
    "direct_io": [1, None, True, object()],
    "gds": [1, None, True, object()],
    "cold_reads": [1, None, True, object()],
    "cold_readers": [object(), "4", 4.0, None, True, 0, 5000],
    "cold_request_size": [object(), 1.5, None, True, 2**64, 100],
    "gpu_decode": [1, None, True, object()],
    "nvcomp_library": [1, None, object()],
    "remote_connections": [object(), "4", 4.0, None, True, 0, 2**64],
    "remote_block_size": [object(), 1.5, None, True, 2**64, 100],
    "remote_timeout": ["1", None, True, object(), 10**400],
    "remote_retries": [object(), "3", 3.0, None, False, 101],
    "lz4_block_size": [object(), 1.5, None, True, 2**64, 100, -1, (1 << 30) + 1],
}


@pytest.fixture()
def restore():
    before = {n: getattr(settings, n)() for n in SETTERS}
    yield
    for n, v in before.items():
        getattr(settings, "set_" + n)(v)


@pytest.mark.parametrize("setting,value", [(s, v) for s, vs in SETTERS.items() for v in vs],
                         ids=[f"{s}-{i}" for s, vs in SETTERS.items() for i in range(len(vs))])
def test_a_setter_refuses_a_wrong_value_naming_the_setting(restore, setting, value):
    before = getattr(settings, setting)()
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        getattr(settings, "set_" + setting)(value)
    check_message(e.value, setting)
    right_type = isinstance(value, int) and not isinstance(value, bool) and setting not in (
        "raw_io", "early_reads", "probe", "direct_io", "gds", "gpu_decode", "nvcomp_library", "cold_reads")
    # A wrong type is a TypeError; a value of the right type out of range a ValueError only.
    assert isinstance(e.value, TypeError) == (not right_type), repr(e.value)
    assert isinstance(e.value, h5tile.ArgumentTypeError) == (not right_type)
    assert getattr(settings, setting)() == before  # unchanged


def test_booleans_are_set_by_booleans_only(restore):
    for flag in ("raw_io", "early_reads", "probe"):
        for value in (False, np.bool_(True), True, np.bool_(False)):
            getattr(settings, "set_" + flag)(value)
            assert getattr(settings, flag)() is bool(value)


def test_parse_size_names_a_wrong_type():
    with pytest.raises(TypeError) as e:
        settings.parse_size(5)
    check_message(e.value, "parse_size")
    assert settings.parse_size("2K") == 2048
