"""``ds.to_netcdf(path, engine="h5tile")`` (h5tile/_xarray_writes.py) against
``engine="h5netcdf"`` writing the same Dataset: both files must read back identical through
h5netcdf and netCDF4-python (the netCDF-C library), hold the same bytes in every HDF5 dataset
(h5py), and look the same to netCDF-C's ``ncdump -h``. Dask-backed variables are written by
threads (blocks not aligned to the file's chunks), with ``compute=False``, and from the worker
processes of a ``dask.distributed.LocalCluster``."""
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402,F401

xr = pytest.importorskip("xarray", reason="xarray is not installed (scripts/install_deps.sh installs it)")
pytest.importorskip("h5netcdf", reason="h5netcdf is not installed (scripts/install_deps.sh installs it)")
netCDF4 = pytest.importorskip("netCDF4", reason="netCDF4 is not installed (scripts/install_deps.sh installs it)")
da = pytest.importorskip("dask.array", reason="dask[array] is not installed (scripts/install_deps.sh installs it)")

import h5tile.xarray  # noqa: E402,F401  (registers engine="h5tile" for to_netcdf)


def sample(chunks=None):
    """A CF Dataset with what netCDF users write: coordinates, times, a packed variable
    (scale_factor/add_offset), fill values, strings, an unlimited dimension, attributes."""
    rng = np.random.default_rng(7)
    t, y, x = 12, 30, 40
    temp = rng.normal(280, 5, (t, y, x)).astype("f4")
    temp[0, 0, :5] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "y", "x"), temp, {"units": "K", "long_name": "temperature"}),
            "count": (("y", "x"), rng.integers(0, 1000, (y, x)).astype("i4")),
            "packed": (("time", "x"), rng.uniform(0, 100, (t, x))),
            "station": (("y",), np.array([f"st{i:03d}" for i in range(y)], dtype=object)),
            "flag": ((), np.int8(3)),
        },
        coords={
            "time": pd.date_range("2026-01-01", periods=t, freq="6h"),
            "y": np.arange(y, dtype="f8") * 0.5,
            "x": np.linspace(-180, 180, x),
        },
        attrs={"title": "h5tile to_netcdf", "version": 3, "levels": np.array([1, 2, 3], dtype="i2")},
    )
    if chunks:
        ds = ds.chunk(chunks)
    encoding = {
        "temp": {"zlib": True, "complevel": 4, "shuffle": True, "chunksizes": (4, 16, 16), "_FillValue": -999.0},
        "count": {"zlib": True, "complevel": 1, "chunksizes": (10, 40)},
        "packed": {"dtype": "i2", "scale_factor": 0.01, "add_offset": 50.0, "_FillValue": -32767},
        "time": {"units": "hours since 2026-01-01", "dtype": "f8"},
    }
    return ds, encoding


def write_both(tmp_path, ds, **kwargs):
    ours, theirs = tmp_path / "h5tile.nc", tmp_path / "h5netcdf.nc"
    ds.to_netcdf(ours, engine="h5tile", **kwargs)
    ds.to_netcdf(theirs, engine="h5netcdf", **kwargs)
    return ours, theirs


def hdf5_contents(path):
    """Every HDF5 dataset's values (references as the names they point to) and its storage."""
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            found[name] = (obj[()], obj.chunks, obj.compression, obj.compression_opts, obj.shuffle, obj.dtype,
                           obj.maxshape)
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return found


def same_value(a, b):
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)) and np.isnan(a) and np.isnan(b):
        return type(a) is type(b)
    return type(a) is type(b) and a == b


def assert_same_files(ours, theirs, **open_kwargs):
    for engine, reference in (("h5netcdf", "h5netcdf"), ("netcdf4", "netcdf4"), ("h5tile", "h5netcdf")):
        with xr.open_dataset(ours, engine=engine, **open_kwargs) as got, \
                xr.open_dataset(theirs, engine=reference, **open_kwargs) as expected:
            xr.testing.assert_identical(got.load(), expected.load())
            for name in expected.variables:
                for key in ("dtype", "chunksizes", "zlib", "complevel", "shuffle", "_FillValue", "scale_factor",
                            "add_offset", "units"):
                    assert same_value(got[name].encoding.get(key), expected[name].encoding.get(key)), (engine, name, key)
    a, b = hdf5_contents(ours), hdf5_contents(theirs)
    assert set(a) == set(b)
    for name in b:
        np.testing.assert_array_equal(a[name][0], b[name][0], err_msg=name)
        assert a[name][1:] == b[name][1:], name


def ncdump_header(path):
    out = subprocess.run(["ncdump", "-h", str(path)], check=True, capture_output=True, text=True).stdout
    return out.split("\n", 1)[1]  # the first line names the file


@pytest.mark.parametrize("chunks", [None, {"time": 5, "y": 7, "x": 40}], ids=["numpy", "dask"])
def test_same_file_as_h5netcdf(tmp_path, chunks):
    ds, encoding = sample(chunks)
    ours, theirs = write_both(tmp_path, ds, encoding=encoding, unlimited_dims=["time"])
    assert_same_files(ours, theirs)
    with xr.open_dataset(ours, engine="h5tile") as back:
        assert back.encoding["unlimited_dims"] == {"time"}
        xr.testing.assert_allclose(back.load(), sample()[0], atol=0.005)  # "packed": to 0.01


@pytest.mark.skipif(shutil.which("ncdump") is None, reason="ncdump is not installed (netcdf-bin, scripts/install_deps.sh)")
def test_ncdump_sees_what_it_sees_of_h5netcdf(tmp_path):
    ds, encoding = sample({"time": 4})
    ours, theirs = write_both(tmp_path, ds, encoding=encoding, unlimited_dims=["time"])
    assert ncdump_header(ours) == ncdump_header(theirs)
    data = subprocess.run(["ncdump", "-v", "temp,station", str(ours)], check=True, capture_output=True, text=True)
    reference = subprocess.run(["ncdump", "-v", "temp,station", str(theirs)], check=True, capture_output=True,
                               text=True)
    assert data.stdout.split("\n", 1)[1] == reference.stdout.split("\n", 1)[1]


def test_groups_and_mode_a(tmp_path):
    ds, encoding = sample({"y": 11})
    ours, theirs = tmp_path / "h5tile.nc", tmp_path / "h5netcdf.nc"
    for path, engine in ((ours, "h5tile"), (theirs, "h5netcdf")):
        ds.to_netcdf(path, engine=engine, encoding=encoding)
        ds[["count", "station"]].to_netcdf(path, engine=engine, mode="a", group="inner/deeper")
        extra = xr.Dataset({"more": (("x",), np.arange(40.0) * 3)}, coords={"x": ds.x})
        extra.chunk({"x": 9}).to_netcdf(path, engine=engine, mode="a")
    assert_same_files(ours, theirs)
    assert_same_files(ours, theirs, group="inner/deeper")


def test_compute_false_writes_at_compute(tmp_path):
    ds, encoding = sample({"time": 3, "x": 13})
    path = tmp_path / "later.nc"
    delayed = ds.to_netcdf(path, engine="h5tile", encoding=encoding, compute=False)
    delayed.compute()
    reference = tmp_path / "reference.nc"
    ds.to_netcdf(reference, engine="h5netcdf", encoding=encoding)
    assert_same_files(path, reference)


def test_bytes_in_memory_written_by_h5netcdf(tmp_path):
    ds, encoding = sample()
    data = ds.to_netcdf(engine="h5tile", encoding=encoding)
    path, reference = tmp_path / "bytes.nc", tmp_path / "reference.nc"
    path.write_bytes(bytes(data))
    ds.to_netcdf(reference, engine="h5netcdf", encoding=encoding)
    assert_same_files(path, reference)


def test_refusals_name_what_was_wrong(tmp_path):
    ds, _ = sample()
    with pytest.raises(ValueError, match="writes local files"):
        ds.to_netcdf("s3://bucket/key.nc", engine="h5tile")
    with pytest.raises(ValueError, match="NETCDF3_64BIT"):
        ds.to_netcdf(tmp_path / "classic.nc", engine="h5tile", format="NETCDF3_64BIT")


def test_a_failing_block_raises_and_leaves_the_file_free(tmp_path):
    ds, encoding = sample({"time": 4})

    def broken(block):
        if np.isnan(block).any():  # the first block only
            raise RuntimeError("block failed on purpose")
        return block
    ds["temp"] = ds.temp.copy(data=ds.temp.data.map_blocks(broken, dtype="f4"))
    path = tmp_path / "failed.nc"
    with pytest.raises(RuntimeError, match="on purpose"):
        ds.to_netcdf(path, engine="h5tile", encoding=encoding)
    fine, _ = sample({"time": 6})
    fine.to_netcdf(path, engine="h5tile", mode="w", encoding=encoding)  # not held by the failed write
    reference = tmp_path / "reference.nc"
    fine.to_netcdf(reference, engine="h5netcdf", encoding=encoding)
    assert_same_files(path, reference)


def test_distributed_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed", reason="distributed is not installed (scripts/install_deps.sh)")
    ds, encoding = sample({"time": 3, "y": 10})
    path = tmp_path / "cluster.nc"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  local_directory=str(tmp_path / "dask")) as cluster, distributed.Client(cluster):
        ds.to_netcdf(path, engine="h5tile", encoding=encoding)
    reference = tmp_path / "reference.nc"
    ds.to_netcdf(reference, engine="h5netcdf", encoding=encoding)
    assert_same_files(path, reference)


def test_no_number_goes_through_h5netcdf(tmp_path, monkeypatch):
    """h5netcdf lays the file out; every numeric variable's values are h5tile's writes (strings are
    h5netcdf's, written as it writes them)."""
    import h5netcdf
    written = h5netcdf.Variable.__setitem__

    def refused(self, key, value):
        if self.dtype.kind not in "SUO":
            raise AssertionError(f"a value of {self.name} written through h5netcdf")
        written(self, key, value)
    monkeypatch.setattr(h5netcdf.Variable, "__setitem__", refused)
    ds, encoding = sample({"time": 5})
    path = tmp_path / "ours.nc"
    ds.to_netcdf(path, engine="h5tile", encoding=encoding, unlimited_dims=["time"])
    monkeypatch.undo()
    reference = tmp_path / "reference.nc"
    ds.to_netcdf(reference, engine="h5netcdf", encoding=encoding, unlimited_dims=["time"])
    assert_same_files(path, reference)


@pytest.mark.parametrize("chunks", [None, {"y": 7}], ids=["numpy", "dask"])
def test_classic_format_strings_and_characters_as_h5netcdf(tmp_path, chunks):
    """NETCDF4_CLASSIC lays characters out as NULLTERM fixed strings, which h5netcdf writes with the
    file's own type: written otherwise, a conversion would cut each to nothing."""
    ds, _ = sample(chunks)
    ds = ds.drop_vars("station").assign(
        name=("y", np.array([f"n{i:02d}" for i in range(ds.sizes["y"])], dtype="S3")),
        chars=(("y", "n3"), np.array([list(f"c{i:02d}") for i in range(ds.sizes["y"])], dtype="S1")))
    if chunks:
        ds = ds.chunk(chunks)
    ours, theirs = write_both(tmp_path, ds, format="NETCDF4_CLASSIC")
    assert_same_files(ours, theirs)
    with xr.open_dataset(ours, engine="netcdf4") as back:
        assert back["name"].values.tolist()[:2] == [b"n00", b"n01"]  # not cut by a conversion


def test_a_block_still_running_after_another_failed_writes_nothing(tmp_path):
    """Dask's threaded scheduler raises at the first failure while blocks already running go on;
    xarray then closes the store. A block that ends later must not reopen the file (it would hold
    it, and its close would write over the next write's metadata): its write is refused, and the
    path is free. Made deterministic: the store closed, then a Dask block's write."""
    from xarray.backends.common import ArrayWriter

    from h5tile._xarray_writes import H5tileWriteStore
    ds, encoding = sample({"time": 3})
    path = tmp_path / "late.nc"
    store = H5tileWriteStore.open(str(path), mode="w")
    writer = ArrayWriter()
    xr.backends.writers.dump_to_store(ds, store, writer, encoding=encoding)
    late = writer.targets[writer.sources.index(next(s for s in writer.sources if s.ndim == 3))]
    store.close()  # as xarray closes it when a block failed
    with pytest.raises(RuntimeError, match="is over"):
        late[0:3] = np.zeros((3, 30, 40), "f4")
    assert not h5tile._h5tile.held_for_writing(str(path))
    fine, _ = sample({"time": 6})
    fine.to_netcdf(path, engine="h5tile", mode="w", encoding=encoding)
    reference = tmp_path / "reference.nc"
    fine.to_netcdf(reference, engine="h5netcdf", encoding=encoding)
    assert_same_files(path, reference)
