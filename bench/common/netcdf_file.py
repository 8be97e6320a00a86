"""The netCDF-4 file of the xarray and Dask benchmarks (issue 29), made fast at gigabytes.

A float32 variable ``x(row, col)`` (rows of bench/common/compressible.py's COLS = 4096, chunks of 1 MiB,
CHUNK), uncompressed or gzip (deflate) 4 + shuffle, holding bench/common/compressible.py's field (a
smooth field plus noise, rounded to 2^-12) with the noise drawn per chunk (a generator seeded by
the chunk's index), so that any chunk can be made again to check a read.

How it is made: netCDF4-python (the netCDF-C library) creates the file (the dimensions ``row``
and ``col`` as netCDF-4 dimension scales, the variable with its chunking and filters, the
attributes netCDF-C writes) and writes no data; h5py then writes every chunk with
``write_direct_chunk``: the chunks are made and encoded (shuffle, then zlib, the filter order
netCDF-C sets, checked from the file's pipeline) on every core by a thread pool (NumPy's
generators and ufuncs and zlib release the GIL), and one thread writes the encoded chunks in
order. At the end a chunk is read back through h5py and through netCDF4-python and compared
with the chunk made again: the file is a netCDF-4 file both libraries read.
"""
import concurrent.futures
import os
import time
import zlib

import h5py
import numpy as np

from .compressible import CHUNK, COLS

LEVEL = 4


def rows_of(gib):
    """Rows of a variable of about `gib` GiB: a whole number of chunks, at least one."""
    return max(CHUNK[0], int(gib * (1 << 30)) // (4 * COLS) // CHUNK[0] * CHUNK[0])


def chunk(index, rows):
    """Chunk `index` (rows index*CHUNK[0] onward) of the field of `rows` rows."""
    first = index * CHUNK[0]
    n = min(CHUNK[0], rows - first)
    x = np.linspace(0, 8 * np.pi, COLS, dtype=np.float32)[None, :]
    y = (np.arange(first, first + n, dtype=np.float64) * (8 * np.pi / max(rows - 1, 1))).astype(np.float32)[:, None]
    noise = np.random.default_rng(index).normal(0, 0.01, (n, COLS)).astype(np.float32)
    q = np.float32(2.0**-12)
    return (np.round((np.sin(y) * np.cos(x) + noise) / q) * q).astype(np.float32)


def _encoded(index, rows, gzip):
    data = chunk(index, rows)
    if not gzip:
        return data.tobytes()
    shuffled = np.ascontiguousarray(data.view(np.uint8).reshape(-1, 4).T)  # HDF5's shuffle: byte planes
    return zlib.compress(shuffled.tobytes(), LEVEL)


def write(path, gib, gzip, threads=None):
    """Writes the file (see the module's docstring); returns the number of rows."""
    import netCDF4  # imported here: the GPU script runs without it where it is missing

    rows = rows_of(gib)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.createDimension("row", rows)
        nc.createDimension("col", COLS)
        nc.createVariable("x", "f4", ("row", "col"), chunksizes=CHUNK, zlib=gzip, complevel=LEVEL, shuffle=gzip,
                          fill_value=False)
    n_chunks = rows // CHUNK[0]
    with h5py.File(path, "r+") as f:
        d = f["x"]
        plist = d.id.get_create_plist()
        pipeline = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        expected = [h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_DEFLATE] if gzip else []
        assert d.chunks == CHUNK and pipeline == expected, (d.chunks, pipeline)
        batch = 256
        with concurrent.futures.ThreadPoolExecutor(threads or os.cpu_count()) as pool:
            for start in range(0, n_chunks, batch):  # a batch at a time: memory stays at a batch
                indices = range(start, min(start + batch, n_chunks))
                for index, data in zip(indices, pool.map(lambda i: _encoded(i, rows, gzip), indices)):
                    d.id.write_direct_chunk((index * CHUNK[0], 0), data)
    last = n_chunks - 1
    with h5py.File(path, "r") as f:
        assert np.array_equal(f["x"][last * CHUNK[0]:], chunk(last, rows)), "h5py reads another last chunk"
    with netCDF4.Dataset(path, "r") as nc:
        assert nc.dimensions["row"].size == rows and nc.variables["x"].dimensions == ("row", "col")
        assert np.array_equal(np.asarray(nc.variables["x"][:CHUNK[0]]), chunk(0, rows)), "netCDF4 reads another chunk"
    return rows


def describe(path):
    """'2.00 GiB in 2048 chunks, 0.74 GiB on disk' for the file at `path`."""
    with h5py.File(path, "r") as f:
        d = f["x"]
        size = d.size * 4
        return (f"{size / (1 << 30):.2f} GiB in {d.id.get_num_chunks()} chunks of {CHUNK}, "
                f"{os.path.getsize(path) / (1 << 30):.2f} GiB on disk")


def rotated_rounds(labels, rounds, limit):
    """(round, label) for `rounds` rounds of every label, the order rotated by one each round; a
    round that would end past `limit` seconds from the first (out_of_time) is not started, and the
    rounds run are printed when the limit stops them."""
    labels = list(labels)
    started = time.perf_counter()
    for round_ in range(rounds):
        if out_of_time(started, round_, limit):
            print(f"   time limit: {round_} round(s)")
            return
        shift = round_ % len(labels)
        for label in labels[shift:] + labels[:shift]:
            yield round_, label


def out_of_time(started, rounds_done, limit):
    """Whether another round, as long as the average of the `rounds_done` rounds since `started`
    (time.perf_counter()), would end past `limit` seconds (None: no limit; the first round always runs)."""
    if limit is None or rounds_done == 0:
        return False
    elapsed = time.perf_counter() - started
    return elapsed * (rounds_done + 1) / rounds_done > limit
