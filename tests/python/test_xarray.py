"""h5tile's xarray backend (engine="h5tile", h5tile/xarray.py) against engine="h5netcdf" on the
same files: written by netCDF4-python (the netCDF-C library), by h5netcdf, and by plain h5py
(no dimension scales: phony dimensions). Every Dataset must be identical (values, dimensions,
coordinates, attributes) and carry the same encoding; chunks={} gives the file's chunks."""
import pickle
import sys
import warnings

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

xr = pytest.importorskip("xarray", reason="xarray is not installed (scripts/install_deps.sh installs it)")
pytest.importorskip("h5netcdf", reason="h5netcdf is not installed (scripts/install_deps.sh installs it)")
netCDF4 = pytest.importorskip("netCDF4", reason="netCDF4 is not installed (scripts/install_deps.sh installs it)")
pytest.importorskip("dask.array", reason="dask[array] is not installed (scripts/install_deps.sh installs it)")

from h5tile.xarray import H5tileBackendEntrypoint  # noqa: E402

# xarray finds the engine by its entry point: a wheel's metadata, or the build tree's
# (python/CMakeLists.txt writes h5tile-<version>.dist-info beside the package).
ENGINE = "h5tile"

# Encoding keys both engines set for every variable ("source" is the path each was given).
ENCODING_KEYS = ("dtype", "contiguous", "chunksizes", "preferred_chunks", "zlib", "szip", "bzip2", "blosc", "zstd",
                 "shuffle", "fletcher32", "complevel", "compression", "compression_opts", "original_shape", "source")


def open_both(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # h5netcdf's note on its phony_dims default
        expected = xr.open_dataset(path, engine="h5netcdf", **kwargs)
    got = xr.open_dataset(path, engine=ENGINE, **kwargs)
    return got, expected


def assert_same(path, **kwargs):
    """engine="h5tile" gives what engine="h5netcdf" gives: the decoded Dataset, the raw one
    (decode_cf=False), dimension sizes and the encoding of every variable. Returns the decoded
    Datasets (closed: their variables are loaded)."""
    decoded = None
    for decode in ({}, {"decode_cf": False}):
        got, expected = open_both(path, **kwargs, **decode)
        decoded = decoded or (got, expected)
        with got, expected:
            xr.testing.assert_identical(got, expected)
            assert dict(got.sizes) == dict(expected.sizes)
            assert got.encoding == expected.encoding
            assert set(got.variables) == set(expected.variables)
            for name, var in expected.variables.items():
                assert got[name].dims == var.dims, name
                assert got[name].dtype == var.dtype, name
                for key in ENCODING_KEYS:
                    assert got[name].encoding.get(key) == var.encoding.get(key), (name, key)
                np.testing.assert_array_equal(got[name].values, var.values)
    return decoded


@pytest.fixture()
def netcdf4_file(tmp_path):
    """A netCDF-4 file written by netCDF4-python: an unlimited dimension, compression, fill
    values, coordinates, strings, scalar and array attributes, a dimension without a variable,
    groups with their own and inherited dimensions."""
    path = tmp_path / "nc4.nc"
    rng = np.random.default_rng(3)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.title = "h5tile xarray test"
        nc.institution = "nowhere"
        nc.version = np.int32(3)
        nc.factor = 2.5
        nc.levels = np.array([1, 2, 3], dtype="i2")
        nc.createDimension("time", None)
        nc.createDimension("lat", 4)
        nc.createDimension("lon", 5)
        nc.createDimension("nv", 2)  # a dimension without a coordinate variable
        nc.createDimension("nchar", 3)
        time = nc.createVariable("time", "f8", ("time",))
        time.units = "days since 2000-01-01"
        time.calendar = "standard"
        time[:] = np.arange(6) * 0.5
        lat = nc.createVariable("lat", "f4", ("lat",))
        lat.units = "degrees_north"
        lat.standard_name = "latitude"
        lat[:] = np.linspace(-45, 45, 4)
        lon = nc.createVariable("lon", "f4", ("lon",))
        lon[:] = np.linspace(0, 80, 5)
        temp = nc.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True, complevel=4, shuffle=True,
                                 chunksizes=(2, 4, 5), fill_value=np.float32(-999))
        temp.units = "K"
        temp.long_name = "temperature"
        temp.valid_range = np.array([150, 350], dtype="f4")
        values = rng.normal(280, 10, (6, 4, 5)).astype("f4")
        values[1, 2, 3] = -999  # a fill value, masked by CF decoding
        temp[:] = values
        counts = nc.createVariable("counts", "i4", ("time",), fill_value=np.int32(-1))
        counts[:] = np.arange(6, dtype="i4")
        bounds = nc.createVariable("lat_bounds", "f8", ("lat", "nv"), fletcher32=True)
        bounds[:] = np.arange(8).reshape(4, 2)
        lat.bounds = "lat_bounds"
        scalar = nc.createVariable("scalar", "f8", ())
        scalar.note = "a scalar variable"
        scalar[...] = 7.25
        names = nc.createVariable("station", str, ("lat",))
        names[:] = np.array(["alpha", "beta", "gamma", "δelta"], dtype=object)
        code = nc.createVariable("code", "S1", ("lat", "nchar"))
        code[:] = netCDF4.stringtochar(np.array([b"abc", b"de", b"f", b"ghi"], dtype="S3"))
        mask = nc.createVariable("mask", "u1", ("lat", "lon"), zlib=True, complevel=1, contiguous=False)
        mask[:] = (rng.random((4, 5)) > 0.5).astype("u1")
        # A 2-D coordinate variable (a dimension scale with _Netcdf4Coordinates), and a variable
        # named as a dimension it does not lie along (stored as "_nc4_non_coord_level").
        nc.createDimension("label", 3)
        nc.createDimension("strlen", 4)
        label = nc.createVariable("label", "S1", ("label", "strlen"))
        label[:] = netCDF4.stringtochar(np.array([b"one", b"two", b"tree"], dtype="S4"))
        nc.createDimension("level", 2)
        level = nc.createVariable("level", "i4", ("lat",))
        level[:] = [7, 8, 9, 10]
        by_label = nc.createVariable("by_label", "f8", ("label", "level"))
        by_label[:] = np.arange(6.0).reshape(3, 2)
        grp = nc.createGroup("forecast")
        grp.createDimension("step", 3)
        grp.comment = "a group"
        step = grp.createVariable("step", "i8", ("step",))
        step[:] = [6, 12, 18]
        v = grp.createVariable("skill", "f4", ("time", "step"), zlib=True)
        v.units = "1"
        v[:] = rng.random((6, 3)).astype("f4")
        sub = grp.createGroup("detail")
        w = sub.createVariable("weights", "f8", ("step", "lat"))
        w[:] = rng.random((3, 4))
    return path


@pytest.fixture()
def h5netcdf_file(tmp_path):
    import h5netcdf
    path = tmp_path / "h5nc.nc"
    rng = np.random.default_rng(5)
    with h5netcdf.File(path, "w") as f:
        f.attrs["conventions"] = "CF-1.8"
        f.attrs["numbers"] = np.arange(4.0)
        f.dimensions = {"x": 6, "y": 4, "t": None}
        f.resize_dimension("t", 3)
        x = f.create_variable("x", ("x",), "f8")
        x[:] = np.arange(6) * 1.5
        x.attrs["units"] = "m"
        y = f.create_variable("y", ("y",), "i4")
        y[:] = np.arange(4)
        t = f.create_variable("t", ("t",), "i8")
        t[:] = [10, 20, 30]
        data = f.create_variable("data", ("t", "y", "x"), "f4", compression="gzip", compression_opts=6,
                                 shuffle=True, chunks=(1, 2, 3), fillvalue=np.float32(np.nan))
        data[:] = rng.random((3, 4, 6)).astype("f4")
        data.attrs["description"] = "random"
        plain = f.create_variable("plain", ("y", "x"), "i2")
        plain[:] = np.arange(24, dtype="i2").reshape(4, 6)
        words = f.create_variable("words", ("y",), h5py.string_dtype())
        words[:] = np.array(["a", "bb", "ccc", "dddd"], dtype=object)
        g = f.create_group("inner")
        g.dimensions = {"z": 2}
        z = g.create_variable("z", ("z",), "f4")
        z[:] = [0.5, 1.5]
        zx = g.create_variable("zx", ("z", "x"), "f8", chunks=(1, 6), compression="gzip")
        zx[:] = rng.random((2, 6))
    return path


@pytest.fixture()
def h5py_file(tmp_path):
    """A plain HDF5 file (no dimension scales): its axes become phony dimensions, shared by size."""
    path = tmp_path / "plain.h5"
    rng = np.random.default_rng(7)
    with h5py.File(path, "w") as f:
        f.attrs["source"] = "h5py"
        f.attrs["fixed"] = np.bytes_("fixed-width text")
        f.attrs["flag"] = np.int8(1)
        f.create_dataset("a", data=rng.random((4, 5)), chunks=(2, 5), compression="gzip")
        f.create_dataset("b", data=rng.random((5, 4)).astype("f4"))
        f.create_dataset("c", data=np.arange(16).reshape(4, 4))
        f.create_dataset("d", data=np.arange(3, dtype="u2"))
        f.create_dataset("s", data=3.5)
        f["a"].attrs["units"] = "m"
        f["a"].attrs["list"] = [1, 2, 3]
        f["a"].attrs["one"] = [4.5]
        g = f.create_group("g")
        g.create_dataset("e", data=rng.random((3, 4)))
        g.create_dataset("f", data=np.arange(7, dtype="i1"), compression="lzf")
        g.attrs["inner"] = "yes"
    return path


def test_netcdf4_python_file_root(netcdf4_file):
    got, _ = assert_same(netcdf4_file)
    assert got.encoding["unlimited_dims"] == {"time"}
    assert got["temp"].encoding["zlib"] and got["temp"].encoding["complevel"] == 4
    assert got["temp"].encoding["chunksizes"] == (2, 4, 5)
    assert np.isnan(got["temp"].values[1, 2, 3])  # the _FillValue, decoded by xarray
    assert list(got["station"].values) == ["alpha", "beta", "gamma", "δelta"]
    assert list(got["code"].values) == [b"abc", b"de", b"f", b"ghi"]
    assert got.attrs["title"] == "h5tile xarray test"
    assert "_NCProperties" not in got.attrs and "DIMENSION_LIST" not in got["temp"].attrs
    assert "nv" in got["lat_bounds"].dims and "nv" not in got.variables
    assert got["label"].dims == ("label",) and list(got["label"].values) == [b"one", b"two", b"tree"]
    assert got["level"].dims == ("lat",) and got["by_label"].dims == ("label", "level")


@pytest.mark.parametrize("group", ["forecast", "/forecast", "forecast/detail"])
def test_netcdf4_python_groups_see_their_parents_dimensions(netcdf4_file, group):
    got, _ = assert_same(netcdf4_file, group=group)
    if group.endswith("detail"):
        assert got["weights"].dims == ("step", "lat")
    else:
        assert got["skill"].dims == ("time", "step")
        assert got.attrs["comment"] == "a group"


def test_h5netcdf_file(h5netcdf_file):
    got, _ = assert_same(h5netcdf_file)
    assert got.encoding["unlimited_dims"] == {"t"}
    assert got["data"].encoding["preferred_chunks"] == {"t": 1, "y": 2, "x": 3}
    assert_same(h5netcdf_file, group="inner")


@pytest.mark.parametrize("phony_dims", ["access", "sort"])
@pytest.mark.parametrize("group", [None, "g"])
def test_plain_h5py_file_has_phony_dimensions_named_as_h5netcdf_names_them(h5py_file, phony_dims, group):
    got, _ = assert_same(h5py_file, phony_dims=phony_dims, group=group)
    assert all(d.startswith("phony_dim_") for d in got.dims)
    if group is None:
        assert got["c"].dims[0] != got["c"].dims[1]  # two axes of one size: two dimensions
        assert got["a"].dims[0] == got["c"].dims[0]  # size 4, first of its dataset: shared


def test_chunks_are_the_files_chunks(netcdf4_file, h5netcdf_file):
    got, expected = open_both(netcdf4_file, chunks={})
    with got, expected:
        assert got["temp"].chunks == expected["temp"].chunks == ((2, 2, 2), (4,), (5,))
        xr.testing.assert_identical(got.compute(), expected.compute())
    got, expected = open_both(h5netcdf_file, chunks={})
    with got, expected:
        assert got["data"].chunks == expected["data"].chunks == ((1, 1, 1), (2, 2), (3, 3))
        assert float(got["data"].mean().compute()) == pytest.approx(float(expected["data"].mean().compute()))


def test_open_mfdataset_over_two_files(tmp_path):
    paths = []
    for i in range(2):
        path = tmp_path / f"part{i}.nc"
        with netCDF4.Dataset(path, "w") as nc:
            nc.createDimension("time", None)
            nc.createDimension("x", 3)
            t = nc.createVariable("time", "f8", ("time",))
            t.units = "hours since 2020-01-01"
            t[:] = np.arange(4) + 4 * i
            v = nc.createVariable("v", "f4", ("time", "x"), zlib=True, chunksizes=(2, 3))
            v[:] = np.arange(12, dtype="f4").reshape(4, 3) + 100 * i
        paths.append(path)
    got = xr.open_mfdataset(paths, engine=ENGINE, combine="by_coords")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = xr.open_mfdataset(paths, engine="h5netcdf", combine="by_coords")
    with got, expected:
        assert got["v"].chunks == expected["v"].chunks
        xr.testing.assert_identical(got.compute(), expected.compute())
        assert got.sizes["time"] == 8


def test_lazy_selections_read_only_what_they_select(netcdf4_file):
    with xr.open_dataset(netcdf4_file, engine=ENGINE) as got, \
            xr.open_dataset(netcdf4_file, engine="h5netcdf") as expected:
        for sel in ({"time": 3}, {"time": slice(1, 5, 2), "lon": [0, 3, 4]}, {"lat": slice(None, None, -1)},
                    {"lat": [3, 0], "lon": 2}):
            xr.testing.assert_identical(got["temp"].isel(sel), expected["temp"].isel(sel))
        points = {"lat": xr.DataArray([0, 2, 3], dims="p"), "lon": xr.DataArray([4, 1, 0], dims="p")}
        xr.testing.assert_identical(got["temp"].isel(points), expected["temp"].isel(points))


def test_datasets_pickle_and_read_where_unpickled(netcdf4_file):
    with xr.open_dataset(netcdf4_file, engine=ENGINE, chunks={}) as ds:
        again = pickle.loads(pickle.dumps(ds))
        xr.testing.assert_identical(again.compute(), ds.compute())


def test_dask_cluster_of_worker_processes_reads(netcdf4_file, tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    import dask
    with dask.config.set({"temporary-directory": str(tmp_path)}):
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None, local_directory=str(tmp_path)) as cluster, \
                distributed.Client(cluster) as client:
            with xr.open_dataset(netcdf4_file, engine=ENGINE, chunks={}) as ds:
                mean = ds["temp"].mean(dim="time").compute()
                where = client.run(lambda: "h5tile" in sys.modules)
            with xr.open_dataset(netcdf4_file, engine="h5netcdf") as expected:
                xr.testing.assert_allclose(mean, expected["temp"].mean(dim="time"))
    assert all(where.values())  # the reads ran in the worker processes


def test_url_over_http(nginx_server, netcdf4_file):
    (nginx_server.root / "f.nc").write_bytes(netcdf4_file.read_bytes())
    url = f"{nginx_server.url}/f.nc"
    with xr.open_dataset(url, engine=ENGINE, chunks={}) as got, \
            xr.open_dataset(netcdf4_file, engine="h5netcdf") as expected:
        assert got["temp"].encoding["source"] == url
        xr.testing.assert_identical(got.compute(), expected)


def test_a_url_opens_once_for_the_catalog_and_the_index_coordinates(nginx_server, netcdf4_file):
    """xr.open_dataset of a URL: the File's check, its listing, descriptions, attributes and the
    index coordinates xarray loads come from one fetch of the object's first block (the core's
    KeptOpen), not one each; a later open fetches it again (nothing is kept past the open)."""
    (nginx_server.root / "f.nc").write_bytes(netcdf4_file.read_bytes())
    url = f"{nginx_server.url}/f.nc"

    def opens(lines):
        return sum(1 for line in lines if line.endswith('"bytes=0-4194303"'))
    for round_ in range(2):
        before = len(nginx_server.requests())
        with xr.open_dataset(url, engine=ENGINE) as got:
            sent = nginx_server.requests()[before:]
            assert opens(sent) == 1, sent
            assert len(sent) == 1, sent  # the file is smaller than one block: its metadata comes with it
            with xr.open_dataset(netcdf4_file, engine="h5netcdf") as expected:
                xr.testing.assert_identical(got.load(), expected)


def test_entry_point_is_declared_and_guess_can_open(netcdf4_file, h5py_file, tmp_path):
    import importlib.metadata
    pyproject = (ROOT / "pyproject.toml").read_text()
    section = pyproject.split('[project.entry-points."xarray.backends"]\n', 1)[1].split("\n[", 1)[0]
    assert 'h5tile = "h5tile.xarray:H5tileBackendEntrypoint"' in section.splitlines()
    entry = H5tileBackendEntrypoint()
    assert entry.guess_can_open(netcdf4_file) and entry.guess_can_open(str(h5py_file))
    (tmp_path / "text.nc").write_text("not HDF5")
    assert not entry.guess_can_open(tmp_path / "text.nc")
    found = [e for e in importlib.metadata.entry_points(group="xarray.backends") if e.name == "h5tile"]
    assert found and all(e.value == "h5tile.xarray:H5tileBackendEntrypoint" for e in found)
    assert isinstance(xr.backends.list_engines()["h5tile"], H5tileBackendEntrypoint)


def test_compound_enum_and_array_variables_read_as_h5netcdf_reads_them(h5py_file):
    with h5py.File(h5py_file, "a") as f:
        f["compound"] = np.arange(12, dtype="i4").view([("a", "i4"), ("b", "i2"), ("c", "i2"), ("d", "f4")])
        f["colour"] = np.arange(4, dtype=h5py.enum_dtype({"R": 0, "G": 1, "B": 2, "K": 3}, "u1"))
        f.create_dataset("pairs", (4,), dtype=np.dtype(("<f4", (2,))))[...] = np.arange(8, dtype="f4").reshape(4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = xr.open_dataset(h5py_file, engine=ENGINE)
        expected = xr.open_dataset(h5py_file, engine="h5netcdf")
    xr.testing.assert_identical(got, expected)
    assert got["compound"].dtype.names == ("a", "b", "c", "d") and got["pairs"].shape == (4, 2)


def test_a_variable_of_a_type_h5tile_does_not_read_is_left_out_with_a_warning(h5py_file, monkeypatch):
    with h5py.File(h5py_file, "a") as f:
        f["quad"] = np.arange(4, dtype=np.longdouble)  # 16-byte floats: the core refuses them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with_h5py = xr.open_dataset(h5py_file, engine=ENGINE)  # read through h5py (HDF5), as h5netcdf reads it
        xr.testing.assert_identical(with_h5py.load(), xr.open_dataset(h5py_file, engine="h5netcdf").load())
    from h5tile import _via_h5py
    monkeypatch.setattr(_via_h5py, "_h5py_file", lambda: None)  # as where h5py is not installed
    with pytest.warns(UserWarning, match="'/quad' in .* is left out"):
        got = xr.open_dataset(h5py_file, engine=ENGINE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = xr.open_dataset(h5py_file, engine="h5netcdf", drop_variables=["quad"])
        assert "quad" in xr.open_dataset(h5py_file, engine="h5netcdf").variables  # h5netcdf reads it
    xr.testing.assert_identical(got, expected)


def test_missing_group_and_bad_arguments_are_named(netcdf4_file):
    with pytest.raises(OSError, match="group '/nothing' not found"):
        xr.open_dataset(netcdf4_file, engine=ENGINE, group="nothing")
    with pytest.raises(ValueError, match="phony_dims"):
        xr.open_dataset(netcdf4_file, engine=ENGINE, phony_dims="guess")
    with pytest.raises(FileNotFoundError):
        xr.open_dataset(netcdf4_file.parent / "absent.nc", engine=ENGINE)


def test_h5tile_attrs_read_dimension_lists_as_paths(netcdf4_file):
    with h5tile.File(netcdf4_file) as f:
        assert [tuple(p) for p in f["temp"].attrs["DIMENSION_LIST"]] == [("/time",), ("/lat",), ("/lon",)]
        assert f["forecast/skill"].attrs["DIMENSION_LIST"][0] == ("/time",)
        assert f["forecast/step"].attrs["CLASS"] == b"DIMENSION_SCALE"
    with h5py.File(netcdf4_file) as f:
        assert [f[r[0]].name for r in f["temp"].attrs["DIMENSION_LIST"]] == ["/time", "/lat", "/lon"]


def test_opening_a_url_opens_it_a_few_times_not_once_an_object(nginx_server, netcdf4_file):
    """open_dataset describes every variable and reads every attribute: from a handful of opens
    of the file (each a request for a URL's first block and metadata), not one open each."""
    (nginx_server.root / "f.nc").write_bytes(netcdf4_file.read_bytes())
    url = f"{nginx_server.url}/f.nc"
    with h5py.File(netcdf4_file, "r") as f:
        objects = []
        f.visit(objects.append)
    assert len(objects) > 10
    with xr.open_dataset(netcdf4_file, engine="h5netcdf") as whole:
        # What xarray reads as it opens (coordinates, strings) is left out: no data is read.
        eager = [name for name, v in whole.variables.items() if name in whole.coords or v.dtype.kind in "OUS"]
    assert eager
    with xr.open_dataset(url, engine=ENGINE, drop_variables=eager) as got, \
            xr.open_dataset(netcdf4_file, engine="h5netcdf", drop_variables=eager) as expected:
        # The file is smaller than a block: one request an open. Four for the catalog (its check,
        # the listing, the descriptions, the attributes); one open an object would be over 20.
        opens = len(nginx_server.requests())
        xr.testing.assert_identical(got.load(), expected)
    assert opens <= 4, f"{opens} opens of the URL for {len(objects)} objects"


def test_describe_and_attributes_of_each_equal_one_at_a_time(netcdf4_file, h5py_file):
    from h5tile import _h5tile
    for path in (netcdf4_file, h5py_file):
        kinds = dict(_h5tile.list_objects(path))
        datasets = [n for n, k in kinds.items() if k == "dataset"]
        objects = ["/"] + [n for n, k in kinds.items() if k in ("group", "dataset")]
        described = []
        for name in datasets:
            try:
                described.append(_h5tile.describe(path, name))
            except h5tile.UnsupportedTypeError:
                described = None  # one not described: describe_each fails as describe does
                with pytest.raises(h5tile.UnsupportedTypeError):
                    _h5tile.describe_each(path, datasets)
                break
        if described is not None:
            assert _h5tile.describe_each(path, datasets) == described
        each = _h5tile.read_attributes_of_each(path, objects)
        for name, attributes in zip(objects, each):
            one = _h5tile.read_attributes(path, name)
            assert [a[:3] + (a[4],) for a in attributes] == [a[:3] + (a[4],) for a in one], name
            for a, b in zip(attributes, one):
                assert type(a[3]) is type(b[3]) and repr(a[3]) == repr(b[3]), (name, a[0])
        with pytest.raises(h5tile.DatasetNotFoundError, match="nothing"):
            _h5tile.describe_each(path, datasets[:1] + ["/nothing"])
        with pytest.raises(h5tile.DatasetNotFoundError, match="nothing"):
            _h5tile.read_attributes_of_each(path, ["/", "/nothing"])


def test_preloaded_attributes_are_read_afresh_by_each_access(tmp_path):
    """The attributes a store preloads (File._preload, mode r) are the file's at every access:
    an array changed in place by its reader (a user, xarray's decoding) is not what the next
    access gets, as with h5py, where each access reads the attribute anew."""
    from h5tile.xarray import H5tileStore
    path = tmp_path / "attrs.h5"
    with h5py.File(path, "w") as f:
        f.attrs["levels"] = np.array([1, 2, 3], dtype="i4")
        f.create_dataset("x", data=np.arange(4.0)).attrs["valid_range"] = np.array([0.0, 10.0])
    store = H5tileStore(h5tile.File(path))
    try:
        got = store.get_attrs()["levels"]
        got += 5
        store.file["x"].attrs["valid_range"][0] = 99.0
        with h5py.File(path, "r") as f:
            assert np.array_equal(store.get_attrs()["levels"], f.attrs["levels"])
            assert np.array_equal(store.file.attrs["levels"], f.attrs["levels"])
            assert np.array_equal(store.file["x"].attrs["valid_range"], f["x"].attrs["valid_range"])
            assert np.array_equal(dict(store.file["x"].attrs)["valid_range"], f["x"].attrs["valid_range"])
    finally:
        store.file.close()


def open_trees(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # h5netcdf's note on its phony_dims default
        expected = xr.open_datatree(path, engine="h5netcdf", **kwargs)
        expected_groups = xr.open_groups(path, engine="h5netcdf", **kwargs)
    return xr.open_datatree(path, engine=ENGINE, **kwargs), expected, xr.open_groups(path, engine=ENGINE, **kwargs), \
        expected_groups


@pytest.mark.parametrize("kwargs", [{}, {"group": "forecast"}, {"decode_cf": False}])
def test_open_datatree_and_open_groups_as_h5netcdf(netcdf4_file, kwargs):
    tree, expected, groups, expected_groups = open_trees(netcdf4_file, **kwargs)
    xr.testing.assert_identical(tree, expected)
    assert list(groups) == list(expected_groups) and len(groups) >= 2
    for name, ds in expected_groups.items():
        xr.testing.assert_identical(groups[name], ds)
        assert groups[name].encoding == ds.encoding


@pytest.mark.parametrize("phony_dims", ["access", "sort"])
def test_open_datatree_numbers_phony_dimensions_across_groups_as_h5netcdf(h5py_file, phony_dims):
    tree, expected, groups, expected_groups = open_trees(h5py_file, phony_dims=phony_dims)
    xr.testing.assert_identical(tree, expected)
    assert list(groups) == ["/", "/g"] == list(expected_groups)
    assert all(d.startswith("phony_dim_") for d in tree["g"].dims)


def test_h5netcdf_keywords_are_taken_or_refused_by_name(netcdf4_file):
    plain = xr.open_dataset(netcdf4_file, engine=ENGINE)
    same = xr.open_dataset(netcdf4_file, engine=ENGINE, format="NETCDF4", lock=False, invalid_netcdf=None,
                           decode_vlen_strings=True, driver="sec2", driver_kwds={})
    xr.testing.assert_identical(same, plain)
    with pytest.raises(ValueError, match="storage_options \\['anon'\\] given for .*: h5tile takes them for s3://"):
        xr.open_dataset(netcdf4_file, engine=ENGINE, storage_options={"anon": True})  # a local path
    with pytest.raises(ValueError, match="format='NETCDF3_64BIT'"):
        xr.open_dataset(netcdf4_file, engine=ENGINE, format="NETCDF3_64BIT")
    with pytest.raises(ValueError, match="decode_vlen_strings=False"):
        xr.open_dataset(netcdf4_file, engine=ENGINE, decode_vlen_strings=False)
    with pytest.raises(TypeError, match="'colour'"):
        xr.open_dataset(netcdf4_file, engine=ENGINE, colour="red")


def test_a_group_is_not_warned_of_what_its_parents_leave_out(h5py_file, monkeypatch):
    with h5py.File(h5py_file, "a") as f:
        f["quad"] = np.arange(4, dtype=np.longdouble)  # in the root group
    from h5tile import _via_h5py
    monkeypatch.setattr(_via_h5py, "_h5py_file", lambda: None)  # the core alone does not read it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails
        xr.open_dataset(h5py_file, engine=ENGINE, group="g")
    with pytest.warns(UserWarning, match="'/quad' in .* is left out"):
        xr.open_dataset(h5py_file, engine=ENGINE)


def test_an_enum_variable_names_its_type_as_h5netcdf(tmp_path):
    """An enum variable's encoding carries the enum type's name (h5netcdf's ``enum_name``), so a
    Dataset read and written again keeps the type's name; an enum _FillValue masks as h5netcdf's."""
    path = tmp_path / "enum.nc"
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", 3)
        kind = nc.createEnumType(np.uint8, "cloud_type", {"clear": 0, "cloudy": 1, "missing": 255})
        v = nc.createVariable("clouds", kind, "time", fill_value=255)
        v[:] = np.array([0, 1, 255], dtype="u1")
        inner = nc.createGroup("inner")
        inner.createVariable("more", kind, "time", fill_value=255)[:] = np.array([1, 1, 0], dtype="u1")
    for group in (None, "inner"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            expected = xr.open_dataset(path, engine="h5netcdf", group=group)
        got = xr.open_dataset(path, engine=ENGINE, group=group)
        with got, expected:
            xr.testing.assert_identical(got.load(), expected.load())
            for name in expected.data_vars:
                assert got[name].encoding["dtype"].metadata == expected[name].encoding["dtype"].metadata
                assert got[name].encoding["dtype"].metadata["enum_name"] == "cloud_type"
