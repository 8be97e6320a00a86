"""h5tile.dask on every GPU of the machine: one Dask worker process per GPU (dask-cuda's
LocalCUDACluster where it is installed, else a cluster whose workers each see their own GPU first,
as dask-cuda sets CUDA_VISIBLE_DEVICES), blocks read by from_file(device=0) onto each worker's own
GPU, reduced there and written back from there by to_file; values checked against h5py. Skips
(visibly) without CuPy, a CUDA device and dask.distributed."""
import os
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

cupy = pytest.importorskip("cupy", reason="CuPy is not installed: device blocks are CuPy arrays")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
import dask  # noqa: E402

import h5tile.dask as h5d  # noqa: E402

GPUS = h5tile.cuda_device_count()
pytestmark = pytest.mark.skipif(GPUS == 0, reason="no CUDA device visible (or h5tile built without CUDA)")


def one_worker_per_gpu(where, gpus):
    """A cluster of `gpus` worker processes of one thread each, worker i seeing this process's i-th
    GPU first: dask-cuda's LocalCUDACluster where it is installed, else the same placement through
    each worker's own CUDA_VISIBLE_DEVICES (this process's list rotated). Returns (cluster, which)."""
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        pass
    else:
        return LocalCUDACluster(n_workers=gpus, threads_per_worker=1, memory_limit=0, host="127.0.0.1",
                                dashboard_address=None, local_directory=str(where)), "dask-cuda"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if os.environ.get("CUDA_VISIBLE_DEVICES") else None
    mine = visible[:gpus] if visible else [str(i) for i in range(gpus)]
    rotated = [",".join(mine[(i + k) % gpus] for k in range(gpus)) for i in range(gpus)]
    workers = {i: {"cls": distributed.Nanny,
                   "options": {"nthreads": 1, "memory_limit": 0, "local_directory": str(where),
                               "env": {"CUDA_VISIBLE_DEVICES": rotated[i]}}}
               for i in range(gpus)}
    scheduler = {"cls": distributed.Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler), "CUDA_VISIBLE_DEVICES"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    where = tmp_path_factory.mktemp("dask-gpus")
    with dask.config.set({"temporary-directory": str(where)}):
        cluster, which = one_worker_per_gpu(where, GPUS)
        with cluster, distributed.Client(cluster) as c:
            c.wait_for_workers(GPUS)
            print(f"{GPUS} worker(s), one per GPU, placed by {which}")
            yield c


def bus_of(ordinal):
    """The PCI bus of CUDA device `ordinal` as this process numbers them."""
    props = cupy.cuda.runtime.getDeviceProperties(ordinal)
    return (int(props["pciDomainID"]), int(props["pciBusID"]), int(props["pciDeviceID"]))


def where_it_is(block):
    """On the worker: the PCI bus of the block's GPU, and of this worker's own GPU (its device 0:
    the first of its CUDA_VISIBLE_DEVICES)."""
    return bus_of(block.device.id), bus_of(0)


def assert_on_their_workers_gpus(x, client):
    """Every block of `x` lies on the GPU of the worker that computed it, a GPU of this machine, and
    the blocks lie on more than one GPU where there are several."""
    places = dask.compute(*[dask.delayed(where_it_is)(b) for b in x.to_delayed().ravel()], scheduler=client)
    buses = {bus_of(i) for i in range(GPUS)}  # this process sees every GPU
    for block_bus, own_bus in places:
        assert block_bus == own_bus and own_bus in buses, places
    if GPUS > 1:
        assert len({own for _, own in places}) > 1, places  # the blocks were spread over the GPUs


def h5py_file(path, shape, chunks):
    a = np.random.default_rng(7).random(shape).astype(np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=a, chunks=chunks, compression="gzip", shuffle=True)
    return a


def test_each_block_is_read_onto_its_workers_own_gpu(tmp_path, client):
    a = h5py_file(tmp_path / "g.h5", (8 * GPUS * 256, 64), (256, 64))
    x = h5d.from_file(tmp_path / "g.h5", "d", chunks=(256, 64), device=0)
    assert isinstance(x._meta, cupy.ndarray)
    assert_on_their_workers_gpus(x, client)
    host = x.map_blocks(cupy.asnumpy, meta=np.empty((0, 0), np.float32))
    assert np.array_equal(host.compute(scheduler=client), a)
    total = x.sum(dtype=np.float64).compute(scheduler=client)
    assert float(total) == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-9)


def test_blocks_on_each_gpu_are_written_from_there(tmp_path, client):
    a = h5py_file(tmp_path / "in.h5", (4 * GPUS * 512, 32), (512, 32))
    x = h5d.from_file(tmp_path / "in.h5", "d", chunks=(512, 32), device=0)
    assert_on_their_workers_gpus(x * 2, client)  # the blocks to_file writes: each on its worker's GPU
    h5d.to_file(x * 2, tmp_path / "out.h5", "/y")  # on the cluster: the client is the default scheduler
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert f["y"].is_virtual and len(f["y"].virtual_sources()) == 4 * GPUS
        assert np.array_equal(f["y"][...], a * 2)
