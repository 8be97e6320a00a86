"""xarray's own backend tests (the sdist's xarray/tests/test_backends.py) with engine="h5tile".

* ``TestH5tileData``: every test of xarray's ``NetCDF4Base`` (the tests xarray runs for both
  netCDF-4 engines), reading with ``open_dataset(..., engine="h5tile")``, writing with
  ``to_netcdf(..., engine="h5tile")`` and, for the store tests, ``H5tileWriteStore``.
* ``TestH5tileH5NetCDFData``: the tests xarray's ``TestH5NetCDFData`` adds or overrides that go
  through ``self.engine`` (h5tile's writer is h5netcdf's layout, so its h5netcdf-specific
  expectations apply); those that name engine="h5netcdf" themselves (they would not measure
  h5tile) are left out, and a test it overrides runs in that form only (not in TestH5tileData).
* ``TestH5tileViaDaskData``, ``TestH5tileH5NetCDFViaDaskData``: the two above as xarray's
  ``TestH5NetCDFViaDaskData`` runs them: every roundtrip read back with ``chunks=-1`` (Dask), and
  its own two tests (Dask blocks written through ``to_netcdf``, caching skipped).

With ``XARRAY_SUITE_ENGINE=h5netcdf`` (the self-check) the same classes run with engine="h5netcdf"
and xarray's H5NetCDFStore: what xarray's own TestH5NetCDFData runs, through this harness.
"""
from __future__ import annotations

import contextlib
import os

import pytest
from xarray import backends

import xarray.tests.test_backends as _xarray_backends  # a module: pytest collects no class from it
from xarray.tests.test_backends import NetCDF4Base, create_tmp_file

ENGINE = os.environ.get("XARRAY_SUITE_ENGINE", "h5tile")
if ENGINE not in ("h5tile", "h5netcdf"):
    raise pytest.UsageError(f"XARRAY_SUITE_ENGINE must be h5tile or h5netcdf, not {ENGINE!r}")
if ENGINE == "h5tile":
    import h5tile.xarray  # noqa: F401 - registers to_netcdf(engine="h5tile")
    from h5tile._xarray_writes import H5tileWriteStore as _WriteStore
else:
    _WriteStore = backends.H5NetCDFStore

_H5NETCDF = _xarray_backends.TestH5NetCDFData
_VIA_DASK = _xarray_backends.TestH5NetCDFViaDaskData
# The tests TestH5NetCDFData defines that write and read through self.engine; the others it
# defines name engine="h5netcdf" (or netCDF4/h5py and then engine="h5netcdf") in their code.
_THROUGH_SELF_ENGINE = ("test_numpy_bool_", "test_compression_encoding_h5py", "test_dump_encodings_h5py",
                        "test_byte_attrs", "test_roundtrip_complex")
_HARD_CODED = ("test_cross_engine_read_write_netcdf4", "test_read_byte_attrs_as_unicode",
               "test_compression_check_encoding_h5py", "test_decode_utf8_warning", "test_phony_dims_warning")
_OWN = sorted(n for n in vars(_H5NETCDF) if n.startswith("test_"))
if sorted(_THROUGH_SELF_ENGINE + _HARD_CODED) != _OWN:
    raise pytest.UsageError(f"xarray's TestH5NetCDFData defines {_OWN}: sort them into _THROUGH_SELF_ENGINE or "
                            "_HARD_CODED (tests/xarray_suite/test_h5tile_backend.py)")


class TestH5tileData(NetCDF4Base):
    engine = ENGINE

    @contextlib.contextmanager
    def create_store(self):
        with create_tmp_file() as tmp_file:
            yield _WriteStore.open(tmp_file, mode="w")


class TestH5tileH5NetCDFData(_H5NETCDF):
    engine = ENGINE

    create_store = TestH5tileData.create_store


@pytest.mark.filterwarnings("ignore:deallocating CachingFileManager")  # as xarray's TestH5NetCDFViaDaskData
class TestH5tileViaDaskData(TestH5tileData):
    roundtrip = _VIA_DASK.roundtrip
    test_dataset_caching = _VIA_DASK.test_dataset_caching
    test_write_inconsistent_chunks = _VIA_DASK.test_write_inconsistent_chunks


@pytest.mark.filterwarnings("ignore:deallocating CachingFileManager")
class TestH5tileH5NetCDFViaDaskData(TestH5tileH5NetCDFData):
    roundtrip = _VIA_DASK.roundtrip


if sorted(n for n in vars(_VIA_DASK) if n.startswith("test_")) != ["test_dataset_caching",
                                                                    "test_write_inconsistent_chunks"]:
    raise pytest.UsageError("xarray's TestH5NetCDFViaDaskData has other tests now: add them to "
                            "TestH5tileViaDaskData (tests/xarray_suite/test_h5tile_backend.py)")

# A test TestH5NetCDFData overrides runs in its h5netcdf form only; TestH5tileH5NetCDFData keeps
# only the tests of _THROUGH_SELF_ENGINE (None hides a test from pytest).
for _name in _THROUGH_SELF_ENGINE:
    if hasattr(NetCDF4Base, _name):
        setattr(TestH5tileData, _name, None)
for _name in dir(_H5NETCDF):
    if _name.startswith("test_") and _name not in _THROUGH_SELF_ENGINE:
        setattr(TestH5tileH5NetCDFData, _name, None)
