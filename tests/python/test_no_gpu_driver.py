"""The no-GPU CUDA driver stand-in (tests/tools/no_gpu_libcuda.c) behaves as Legate needs:
loaded by path with ctypes, each entry point checked against what a real driver on a machine
with no GPU answers."""
import ctypes

import pytest

from conftest import BUILD

DRIVER = BUILD / "no_gpu_driver" / "libcuda.so.1"
CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NO_DEVICE = 0, 1, 3, 100


@pytest.fixture(scope="module")
def driver():
    if not DRIVER.exists():
        pytest.fail(f"{DRIVER} is missing: build first (scripts/build.sh)")
    return ctypes.CDLL(str(DRIVER))


def proc_address(driver, name: str):
    get = driver.cuGetProcAddress
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                    ctypes.POINTER(ctypes.c_int)]
    pfn, status = ctypes.c_void_p(), ctypes.c_int(-1)
    assert get(name.encode(), ctypes.byref(pfn), 13000, 0, ctypes.byref(status)) == CUDA_SUCCESS
    assert status.value == 0 and pfn.value
    return pfn.value


def test_init_reports_no_device(driver):
    assert driver.cuInit(0) == CUDA_ERROR_NO_DEVICE


def test_version_and_device_count(driver):
    version, count = ctypes.c_int(0), ctypes.c_int(-1)
    assert driver.cuDriverGetVersion(ctypes.byref(version)) == CUDA_SUCCESS and version.value == 13000
    assert driver.cuDeviceGetCount(ctypes.byref(count)) == CUDA_SUCCESS and count.value == 0


@pytest.mark.parametrize("code,name,text", [(100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"),
                                            (3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"),
                                            (0, "CUDA_SUCCESS", "no error")])
def test_error_strings_are_real(driver, code, name, text):
    out = ctypes.c_char_p()
    assert driver.cuGetErrorName(code, ctypes.byref(out)) == CUDA_SUCCESS and out.value == name.encode()
    assert driver.cuGetErrorString(code, ctypes.byref(out)) == CUDA_SUCCESS and out.value == text.encode()


def test_unknown_error_code_is_invalid_value(driver):
    out = ctypes.c_char_p(b"untouched")
    assert driver.cuGetErrorName(123456, ctypes.byref(out)) == CUDA_ERROR_INVALID_VALUE and out.value is None


def test_every_name_resolves_and_the_known_ones_to_themselves(driver):
    init = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint)(proc_address(driver, "cuInit"))
    assert init(0) == CUDA_ERROR_NO_DEVICE
    count = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))(proc_address(driver, "cuDeviceGetCount"))
    n = ctypes.c_int(-1)
    assert count(ctypes.byref(n)) == CUDA_SUCCESS and n.value == 0
    name = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))(
        proc_address(driver, "cuGetErrorName"))
    out = ctypes.c_char_p()
    assert name(100, ctypes.byref(out)) == CUDA_SUCCESS and out.value == b"CUDA_ERROR_NO_DEVICE"
    for other in ("cuCtxCreate", "cuMemAlloc", "cuStreamCreate", "cuNoSuchFunctionAtAll"):
        f = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)(proc_address(driver, other))
        assert f(None, 0) == CUDA_ERROR_NOT_INITIALIZED


def test_directly_imported_symbols_exist(driver):
    # The symbols Legate's libraries import by name (the rest go through cuGetProcAddress).
    for name in ("cuGetErrorName", "cuGetErrorString", "cuMemFreeHost", "cuMemFree_v2", "cuGetProcAddress_v2"):
        assert hasattr(driver, name), name
    assert driver.cuMemFreeHost(None) == CUDA_ERROR_NOT_INITIALIZED
